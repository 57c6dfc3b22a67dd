"""A compiled C function bound to numpy arrays by name (docs/backends/c.md).

The library is loaded with cffi's ABI mode (``ffi.dlopen``); arrays are bound with
``ffi.from_buffer`` (a fraction of a microsecond each). Every call checks dtypes, ranks,
shapes, contiguity and writeability; ``check=True`` (the default) also checks the declared UF
facts (domain length, range, monotonicity) and that no written array overlaps another, so a
bad index array is an :class:`~spf.errors.ArgumentError`, not a segfault.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, SupportsIndex

import cffi
import numpy as np

from spf.codegen import arg_checks, faults
from spf.codegen.each_call import FAULT_EACH
from spf.codegen.injective_marks import FAULT_NO_MARKS
from spf.codegen.unit import TranslationUnit
from spf.errors import ArgumentError, CompileError, ToolchainError, VerifyError
from spf.progress import LOGGER
from spf.runtime.binding import Binder
from spf.runtime.build import BuildResult, build
from spf.runtime.checks import FACT_IN_LOOP
from spf.runtime.known import KnownContents, VerifiedHashes
from spf.runtime.threads import GOVERNOR, openmp_library

if TYPE_CHECKING:
    import os

    from spf.analysis.preconditions import Precondition
    from spf.codegen.signature import Arg, Signature
    from spf.runtime.binding import Slot
    from spf.runtime.fact_check import CheckCost
    from spf.runtime.prepared import PreparedCall


_LOADED: dict[tuple[str, str], tuple[cffi.FFI, Any]] = {}
"""Libraries stay loaded for the life of the process: unloading a library whose OpenMP
region has run can pull libgomp from under its still-spinning worker threads (a crash seen
here), and reloading the same path is then free."""

LOOK = (0,)
"""The key of a look's own trials (``Slot.trials``: one look, one key) of the hashed way
against the checked loops (:meth:`Kernel._hashed_call`)."""


def _load(path: Path, prototype: str, command: str, extra: str = "") -> tuple[cffi.FFI, Any]:
    key = (str(path), prototype + extra)
    if "-fopenmp" in command:
        openmp_library()  # before the kernel's own dependency loads it (wait policy)
    if key not in _LOADED:
        ffi = cffi.FFI()
        try:
            ffi.cdef(prototype + ";" + extra)
        except cffi.CDefError as err:
            raise ToolchainError(f"cannot declare {prototype!r} to cffi: {err}") from None
        try:
            lib = ffi.dlopen(str(path))
        except OSError as err:
            raise CompileError(f"cannot load {path}: {err}", command=command) from None
        _LOADED[key] = (ffi, lib)
    return _LOADED[key]


def unit_of(source: str | TranslationUnit) -> TranslationUnit:
    """``source`` as a record: a text spf did not print is a hand-written unit (nothing
    known of its structure: :meth:`~spf.codegen.unit.TranslationUnit.hand_written`)."""
    return source if isinstance(source, TranslationUnit) else TranslationUnit.hand_written(source)


class AllocationError(MemoryError):
    """A kernel could not allocate one of its own arrays (``calloc`` failed): which one
    (``array``), and its ``elements`` of ``itemsize`` bytes, for callers that say what the
    array is for (an einsum's row workspaces, :mod:`spf.index_notation.workspaces`)."""

    def __init__(self, message: str, array: str, elements: int, itemsize: int) -> None:
        super().__init__(message)
        self.array = array
        self.elements = elements
        self.itemsize = itemsize


class Kernel:
    """A compiled function: ``kernel(y=y, A=A, x=x, N=n, M=m, check=True)``.

    Attributes: ``name`` (the C function), ``signature`` (its C prototype), ``source``,
    ``unit`` (the source's :class:`~spf.codegen.unit.TranslationUnit` record),
    ``path`` (the shared library), ``command`` (the compiler command line), ``arguments``
    (the :class:`~spf.codegen.signature.Arg` list), ``compiler_output`` (warnings),
    ``preconditions`` (the parameter conditions keeping accesses in bounds, each a
    :class:`~spf.analysis.preconditions.Precondition`, checked by calls with ``check=True``),
    :attr:`last_threads` (the OpenMP threads its last call ran on). ``validated=True``: the
    kernel was built before (loaded from a warm entry), so the bounds of its fact checks,
    found then, are not derived again.
    """

    def __init__(
        self,
        signature: Signature,
        source: str | TranslationUnit,
        path: str | os.PathLike[str],
        command: str,
        *,
        compiler_output: str = "",
        validated: bool = False,
    ) -> None:
        self.unit = unit_of(source)
        self.source = self.unit.source
        self._signature = signature
        self._reads: Any = None
        """The range pass's fallback function (spf.runtime.reads_fallback), built when a
        call first needs it."""
        self.signature = signature.c_prototype()
        self.name = signature.function
        self.path = Path(path)
        self.command = command
        self.compiler_output = compiler_output
        self.arguments: tuple[Arg, ...] = signature.args
        self.preconditions: tuple[Precondition, ...] = signature.preconditions
        extra = "".join(  # declared always; the library says which it defines
            f"{p};"
            for p in (
                faults.prototype(signature, restrict=False),
                faults.names_prototype(self.name),
                arg_checks.checked_prototype_of(signature, restrict=False),
                arg_checks.facts_prototype(self.name),
            )
        )
        plain = signature.c_prototype(restrict=False)
        self._ffi, self._lib = ffi, lib = _load(self.path, plain, command, extra)
        has_fault = hasattr(lib, self.name + faults.FAULTS_SUFFIX)
        has_checked = hasattr(lib, self.name + arg_checks.CHECKED_SUFFIX)
        self._records = threading.local()
        """Each thread's fault record (:meth:`_record`)."""
        self._fault: Any = None
        """The function with the per-call fault record (spf.codegen.faults), if built."""
        self._fault_names: tuple[list[str], list[str]] = ([], [])
        if has_fault:
            self._fault = getattr(lib, self.name + faults.FAULTS_SUFFIX)
            text = ffi.string(getattr(lib, self.name + faults.NAMES_SUFFIX)()).decode()
            index, _, heap = text.partition(";")
            self._fault_names = (index.split(","), heap.split(","))
        self._checked: Any = None
        """The function with in-loop argument checks (spf.codegen.arg_checks), if built."""
        in_loop: frozenset[str] | None = None
        zero_based: frozenset[str] = frozenset()
        in_loop_facts: frozenset[int] = frozenset()
        before_loops: frozenset[int] = frozenset()
        implied: dict[int, tuple[int, ...]] | None = None
        overlap = hashed = False
        if has_checked:
            self._checked = getattr(lib, self.name + arg_checks.CHECKED_SUFFIX)
            facts = getattr(lib, self.name + arg_checks.FACTS_SUFFIX)()
            fields: list[str] = [*ffi.string(facts).decode().split(";"), "", "", "", "", ""]
            ordered, zero, numbers = fields[0], fields[1], fields[2]
            overlap = fields[3] == "overlap"
            in_loop = frozenset(filter(None, ordered.split(",")))
            zero_based = frozenset(filter(None, zero.split(",")))
            in_loop_facts = frozenset(int(n) for n in numbers.split(",") if n)
            before_loops = frozenset(int(n) for n in fields[4].split(",") if n)
            implied = arg_checks.parse_implied(fields[5])
            hashed = fields[6] == "hash"
        try:
            self._fn = getattr(lib, self.name)
        except AttributeError as err:
            raise CompileError(
                f"cannot load {self.name!r} from {self.path}: {err}", command=command
            ) from None
        self._from_buffer = ffi._backend.from_buffer  # ffi.from_buffer minus one Python frame
        for a in signature.args:
            if a.name == "check":
                raise VerifyError(
                    "an argument named 'check' clashes with kernel(check=...); rename it"
                )
        self._binder = binder = Binder(
            signature,
            in_loop=in_loop,
            zero_based=zero_based,
            in_loop_facts=in_loop_facts,
            before_loops=before_loops,
            implied=implied,
            overlap_in_loop=overlap,
            validated=validated,
        )
        self._bind = binder.bind
        self._fast = binder._fast.bind_slot  # (values, arrays, slot): one path for both
        self._checked_bind = binder._checked.bind_slot
        self._contents: bool | None = None
        """Whether a fast checked call runs checks in Python (facts, overlap) first; None
        until the first such call decides."""
        self._uf_checks = tuple(d.uf_check for d in binder.data if d.is_uf)
        self._bounds: dict[tuple[Any, ...], Any] = {}
        """The in-loop checks' bounds (an int64_t array) per tuple of parameter values."""
        self._known_bounds: dict[tuple[Any, ...], Any] = {}
        """The same with the word that runs the unchecked loops set (known contents)."""
        self._ctypes = tuple(ffi.typeof(f"{d.arg.ctype}[]") for d in binder.data)
        self._no_require = (False,) * len(self._ctypes)  # from_buffer's require_writable
        self._param_order = binder.param_order
        kinds = [a.kind == "param" for a in signature.args]
        self._params_first = kinds == sorted(kinds, reverse=True)
        self._openmp = "-fopenmp" in command and self.unit.parallel
        """OpenMP calls run with no more threads than cores are free (spf.runtime.threads);
        a kernel without a parallel region (``simd`` pragmas only, say) skips that step."""
        self._last_threads: int | None = None
        self._direct = not self._openmp and self._fault is None
        """A fast-bound ``check=False`` call runs the C function with nothing around it."""
        self._fast_checked = self._params_first and self._checked is not None
        """A ``check=True`` call may take :meth:`_call_checked`."""
        self._overlap_only = self._params_first and self._checked is None and binder.overlap_only
        """A ``check=True`` call checks only that no written array overlaps another (no
        index array, fact, precondition or blocked data space: a dense kernel): after the
        binding of an unchecked call, that test in Python, then the same call."""
        self._clock = time.perf_counter if self._openmp else time.thread_time
        """The clock of the trials of known contents (spf.runtime.known): the calling
        thread's CPU time for a call on one thread (time other processes take on a shared
        machine is not counted), wall time for one that runs an OpenMP region."""
        self._known: KnownContents | None = None
        """The index-array contents checked calls verified (spf.runtime.known): a checked
        call on one of them runs the unchecked function."""
        if self._checked is not None and self._fault is None:
            self._known = KnownContents.of(binder)
        binder.remember_contents(self._known is not None)
        self._hash_uf = tuple(n for n, d in enumerate(binder.data) if d.is_uf)
        """The index arrays (positions among the arrays) the checked function hashes."""
        self._hashed = (
            hashed
            and self._checked is not None
            and self._fault is None
            and bool(self._hash_uf)
            and all(binder.data[n].arg.const for n in self._hash_uf)
            and binder.overlap_in_loop
            and self._direct
        )
        """The checked function hashes the index arrays itself (spf.runtime.known, "In C"):
        where its look's trials keep hashing (:meth:`_hashed_call`), a fast-bound checked
        call is one C call, which runs the unchecked loops on the contents its look verified
        last and returns their hash otherwise (:meth:`_new_contents`)."""
        self._hash_word = arg_checks.BOUNDS_PER_UF * len(self._uf_checks) + 1
        """The word of a hashing look's bounds that holds the contents it verified last."""
        self._verified = VerifiedHashes()
        """The (parameter values, hash) of the contents checked calls verified (:attr:`_hashed`)."""

    @classmethod
    def build(
        cls,
        signature: Signature,
        source: str | TranslationUnit,
        *,
        openmp: bool = True,
        cflags: Sequence[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        compiler: str | None = None,
        language: str = "c",
    ) -> Kernel:
        """Compile ``source``, a generated unit or a hand-written C text (cached, see
        :func:`~spf.runtime.build.build_c`), and load it (a cached library that fails to
        load is compiled again once: :meth:`_load_built`)."""
        options: dict[str, Any] = {
            "name": signature.function,
            "openmp": openmp,
            "cflags": cflags,
            "cache_dir": cache_dir,
            "compiler": compiler,
            "language": language,
        }
        return cls._load_built([(signature, source)], unit_of(source).source, options)[0]

    @classmethod
    def build_many(
        cls,
        kernels: Sequence[tuple[Signature, str | TranslationUnit]],
        source: str,
        name: str,
        *,
        openmp: bool = True,
        cflags: Sequence[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> list[Kernel]:
        """Compile ``source``, one translation unit defining the function of each
        ``(signature, own source)`` of ``kernels`` (:func:`spf.runtime.combine.combine`), to
        one shared library named after ``name`` (one compiler run, cached like
        :meth:`build`), and load each kernel from it; each keeps its own ``source``."""
        options: dict[str, Any] = {
            "name": name,
            "openmp": openmp,
            "cflags": cflags,
            "cache_dir": cache_dir,
        }
        return cls._load_built(kernels, source, options)

    @classmethod
    def _load_built(
        cls,
        kernels: Sequence[tuple[Signature, str | TranslationUnit]],
        source: str,
        options: dict[str, Any],
    ) -> list[Kernel]:
        """Build ``source`` with ``options`` (:func:`~spf.runtime.build.build`) and load each
        ``(signature, own source)`` of ``kernels`` from the library. A cached library that
        fails to load (damaged after its digest was recorded) is compiled again once; only a
        freshly built library's load failure is an error."""

        def load(result: BuildResult) -> list[Kernel]:
            out = result.path, result.command
            return [cls(sig, own, *out, compiler_output=result.stderr) for sig, own in kernels]

        result = build(source, **options)
        try:
            return load(result)
        except CompileError:
            if not result.cached:
                raise
        return load(build(source, rebuild=True, **options))

    def __repr__(self) -> str:
        # read from the instance: a wavefront kernel's executor, compiled when first run,
        # is not compiled by printing it
        path = self.__dict__.get("path", "its executor, compiled when first run")
        return f"<Kernel {self.signature} from {path}>"

    @property
    def last_threads(self) -> int | None:
        """The number of OpenMP threads the last call ran on: OpenMP's count
        (``OMP_NUM_THREADS``, ``omp_set_num_threads``) as spf lowered it to the cores other
        processes left free at that call (:mod:`spf.runtime.threads`); 1 for a kernel with no
        parallel region (or built with ``openmp=False``); ``None`` before the first call."""
        return self._last_threads

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        """A loaded library cannot travel to another process (``pickle``, a
        ``multiprocessing`` argument) nor be copied deeply: refused with what to do."""
        raise ArgumentError(
            f"kernel {self.name!r} cannot be pickled or deep-copied: it is a shared library "
            "loaded in this process; pickle the computation or its IR (comp.ir) instead and "
            "compile it in the other process (a compile of a state compiled before loads its "
            "cached library without analysis), or use copy.copy for a kernel sharing this one"
        )

    def __copy__(self) -> Kernel:
        """A kernel sharing this one's library and remembered checks (``copy.copy``)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __call__(self, *positional: object, check: bool = True, **args: object) -> None:
        """Run the function on arrays bound by name; outputs are written in place.

        ``check=True`` runs the checked function where it was built (index values tested
        where the loops read them; an :class:`~spf.errors.ArgumentError` raised after the
        call then means the outputs hold no valid result)."""
        if check is False and self._params_first and not positional:
            fast = self._fast(args)
            if fast is not None and self._direct:
                # the cheapest call: arguments that look like accepted ones, nothing to check
                self._last_threads = 1
                self._fn(*fast[0], *map(self._from_buffer, self._ctypes, fast[1]))
                return
        elif check is True and self._fast_checked and not positional:
            checked = self._checked_bind(args)
            if checked is not None:
                values, arrays, slot = checked
                bounds, known = slot.bounds, slot.known
                if bounds is None or (known is not None and not known.seen(slot, values, arrays)):
                    self._checked_call(values, arrays, slot)
                    return
                # one C call, nothing else in Python (_settle): the checked function, or
                # on contents verified before its overlap test and the unchecked loops
                try:
                    fault = self._records.record
                except AttributeError:
                    fault = self._record()
                self._last_threads = 1
                self._checked(*values, *map(self._from_buffer, self._ctypes, arrays), bounds, fault)
                if fault[0]:
                    self._fault_or_new(fault, values, arrays, slot)
                return
            fast = None
        elif check is True and self._overlap_only and not positional:
            fast = self._fast(args)
            if fast is not None:  # the one check such a call makes; the call below
                self._binder.no_overlap(fast[1])
        else:
            fast = None
        if positional:
            raise self._binder.positional(len(positional))
        if fast is None:
            self._bound_call(args, check)
            return
        self._unchecked_call(fast[0], fast[1])

    def _unchecked_call(self, values: tuple[Any, ...], arrays: tuple[Any, ...]) -> None:
        """The unchecked function (with its fault record where it has one) on arguments the
        fast binding accepted, through :meth:`_run` (threads, faults)."""
        fn, cargs = self._fn, [*values, *map(self._from_buffer, self._ctypes, arrays)]
        fault = None
        if self._fault is not None:
            fn, fault = self._fault, self._record()
            cargs.append(fault)
        self._run(fn, cargs, fault, arrays, {})

    def prepare(self, free: Sequence[str], *, check: bool = True, **bound: object) -> PreparedCall:
        """Bind every argument but the data spaces named in ``free`` once:
        ``call = kernel.prepare(["y", "x"], A=A, col=col, rowptr=rowptr)``, then
        ``call(y, x)`` is one C call (:mod:`spf.runtime.prepared`). ``check=True`` verifies
        the bound arrays first with one checked run on zero-filled free arrays."""
        from spf.runtime.prepared import PreparedCall

        return PreparedCall(self, free, bound, check)

    def _bound_call(self, args: dict[str, object], check: bool) -> None:
        """A call bound in full (:meth:`Binder.bind`: any argument it refuses is refused
        with its error). A checked call on index arrays whose contents a checked call
        verified runs the unchecked function (spf.runtime.known)."""
        known, key = self._known if check is True else None, None
        params, arrays = self._bind(args, check if known is None else False)
        if known is not None:
            key = known.key(tuple(params[n] for n in self._param_order), arrays)
            if key is not None and key in known:  # contents verified before
                if self._params_first:
                    self._known_call(tuple(params[n] for n in self._param_order), arrays)
                    return
                self._binder.no_overlap(arrays)
                bound = list(map(self._from_buffer, self._ctypes, arrays))
                self._run(self._fn, self._cargs(params, bound), None, arrays, params)
                return
            self._binder.check(arrays, params)
        bound = list(map(self._from_buffer, self._ctypes, arrays))
        fn, fault = self._fn, None
        if check and self._checked is not None:
            fn, fault = self._checked, self._record()
            bound += (self._bounds_of(params), fault)
        elif self._fault is not None:
            fn, fault = self._fault, self._record()
            bound.append(fault)
        self._run(fn, self._cargs(params, bound), fault, arrays, params)
        if key is not None and known is not None:
            known.add(key)  # reached only when every check passed

    def _checked_call(self, values: tuple[Any, ...], arrays: tuple[Any, ...], slot: Slot) -> None:
        """A ``check=True`` call whose arguments look like accepted ones (UF lengths
        included): ``values`` and ``arrays`` as the binding gave them, ``slot`` their look's
        (:meth:`_settle`)."""
        known = self._known
        if self._hashed:
            self._hashed_call(values, arrays, slot)
            return
        if known is not None:
            clock = None if known.settled else self._clock  # a trial may be timed
            start = clock() if clock is not None else 0.0
            key = known.key(values, arrays)
            if key is not None:
                if key not in known:
                    self._checked_once(values, arrays)
                    known.add(key)  # reached only when every check passed
                elif clock is None or known.decided(key):  # nothing to time
                    if known.route(key):
                        self._known_call(values, arrays)
                    else:
                        self._checked_once(values, arrays)
                elif known.route(key):  # contents verified before: the unchecked loops
                    self._known_call(values, arrays)
                    known.timed(key, True, clock() - start)
                else:  # a trial: the checked call on the same contents
                    start = clock()
                    self._checked_once(values, arrays)
                    known.timed(key, False, clock() - start)
                self._settle(values, slot)
                return
        self._checked_once(values, arrays)
        self._settle(values, slot)

    def _hashed_call(self, values: tuple[Any, ...], arrays: tuple[Any, ...], slot: Slot) -> None:
        """A checked call of a look not settled, for a kernel whose checked function hashes
        the index arrays itself (:attr:`_hashed`): the first calls of each look time the
        hashed way (the hash, then the unchecked loops on contents verified before) against
        the checked loops, as the trials of spf.runtime.known do (the contents verified
        first: that call is not timed), and the faster way is kept for that look
        (:meth:`_settle`). Per look, not per size class: index arrays of one size favour
        either way by their matrix (SELL(8, 1)'s checked loops cost about the hashed
        way on ``arrow`` and 1.15x it on a 10k dense row of the same size class, whose
        calls took the way ``arrow``'s trials kept)."""
        if slot.hashed is None:
            params = dict(zip(self._param_order, values, strict=True))
            uf = [arrays[u].nbytes for u in self._hash_uf]
            slot.hashed = self._bounds_of(params, hashed=uf)
        trials, size = slot.trials, LOOK
        if trials is None:
            trials = slot.trials = KnownContents(self._hash_uf)
        decided = trials.decided(size)
        if trials.route(size):
            start = self._clock()
            fault = self._record()
            self._last_threads = 1
            self._checked(
                *values, *map(self._from_buffer, self._ctypes, arrays), slot.hashed, fault
            )
            if fault[0]:
                self._fault_or_new(fault, values, arrays, slot)  # not timed: it checked
            elif not decided:
                trials.timed(size, True, self._clock() - start)
        else:
            start = self._clock()
            self._checked_once(values, arrays)
            if not decided:
                trials.timed(size, False, self._clock() - start)
        if trials.decided(size):
            self._settle(values, slot)

    def _fault_or_new(
        self, fault: Any, values: tuple[Any, ...], arrays: tuple[Any, ...], slot: Slot
    ) -> None:
        """After a call of ``slot``'s look that recorded something: contents the checked
        function hashed and found new (:meth:`_new_contents`), or a fault to raise."""
        if fault[0] != arg_checks.FAULT_NEW_CONTENTS or slot.hashed is None:
            self._raise_fault(fault, arrays, values)
            return
        digest = int(fault[faults.FAULT_WORDS - 1])
        fault[0 : faults.FAULT_WORDS] = [0] * faults.FAULT_WORDS
        self._new_contents(values, arrays, slot, digest)

    def _new_contents(
        self, values: tuple[Any, ...], arrays: tuple[Any, ...], slot: Slot, digest: int
    ) -> None:
        """A call whose index arrays the checked function hashed to ``digest``, not the
        contents its look verified last (nothing ran; the overlap test passed): contents
        verified before (with these parameter values) run the unchecked function, others
        are checked in full and remembered once they passed; either way ``slot``'s bounds
        then hold ``digest``, so that the next call on them is one C call again."""
        key = (values, digest)
        if key in self._verified:
            self._last_threads = 1
            self._fn(*values, *map(self._from_buffer, self._ctypes, arrays))
        else:
            self._checked_once(values, arrays)  # raises on a broken fact: not remembered
            self._verified.add(key)
        slot.hashed[self._hash_word] = digest

    def _settle(self, values: tuple[Any, ...], slot: Slot) -> None:
        """After a checked call of ``slot``'s look: give the look its ``bounds`` (its later
        calls then take one C call straight from :meth:`__call__`) once the way of such a
        call is settled for good and needs nothing else in Python: one thread, and either
        no remembered contents for index arrays of its size (a kernel without facts over
        them, or a size that checks every call: spf.runtime.known) and no check in Python
        (decided on the first call) or only checks of the parameter values, which this call
        passed (a look is one tuple of values: Binder.settles_per_values): the checked
        function; or a size whose calls on
        contents verified before run the unchecked loops, tested for overlaps in C: the
        checked function with the known-contents word set, on those contents (``known``:
        the others take :meth:`_checked_call`)."""
        known = self._known
        if slot.bounds is not None or self._openmp:
            return
        if self._hashed and slot.trials is not None and slot.trials.route(LOOK):
            slot.bounds = slot.hashed
            return
        if self._hashed:
            known = None  # its size checks every call
        params = dict(zip(self._param_order, values, strict=True))
        if known is None or known.checks(slot.size):
            if self._contents is False or self._binder.settles_per_values:
                slot.bounds = self._bounds_of(params)
        elif known.hashes(slot.size) and self._binder.overlap_in_loop and self._direct:
            slot.known = known
            slot.bounds = self._bounds_of(params, known=True)

    def _known_call(self, values: tuple[Any, ...], arrays: Sequence[Any]) -> None:
        """A checked call on index arrays whose contents a checked call verified
        (spf.runtime.known): only that no written array overlaps another, then the
        unchecked function: both in the checked function's one C call where it tests the
        overlap itself (its known-contents word set), else the test in Python."""
        if self._binder.overlap_in_loop:
            bounds = self._known_bounds.get(values)
            if bounds is None:
                params = dict(zip(self._param_order, values, strict=True))
                bounds = self._bounds_of(params, known=True)
            fault = self._record()
            if self._direct:  # one thread, no fault record of its own: nothing around it
                self._last_threads = 1
                self._checked(*values, *map(self._from_buffer, self._ctypes, arrays), bounds, fault)
                if fault[0]:
                    self._raise_fault(fault, arrays, values)
                return
            cargs = [*values, *map(self._from_buffer, self._ctypes, arrays), bounds, fault]
            self._run(self._checked, cargs, fault, arrays, values)
            return
        cargs = [*values, *map(self._from_buffer, self._ctypes, arrays)]
        self._binder.no_overlap(arrays)
        if self._direct:
            self._last_threads = 1
            self._fn(*cargs)
        else:
            self._run(self._fn, cargs, None, arrays, values)

    def _checked_once(self, values: tuple[Any, ...], arrays: tuple[Any, ...]) -> None:
        """The checked function on arguments the fast binding accepted, with the checks
        left to Python first where there are any."""
        if self._contents is None or self._contents:
            self._call_checked(values, arrays)
            return
        # only the checked function's own checks: nothing else to run or time
        bounds = self._bounds.get(values)
        if bounds is None:
            bounds = self._bounds_of(dict(zip(self._param_order, values, strict=True)))
        fault = self._record()
        if self._openmp:
            cargs = [*values, *map(self._from_buffer, self._ctypes, arrays), bounds, fault]
            self._run(self._checked, cargs, fault, arrays, values)
        else:
            self._last_threads = 1
            self._checked(*values, *map(self._from_buffer, self._ctypes, arrays), bounds, fault)
            if fault[0]:
                self._raise_fault(fault, arrays, values)

    def call_checked_raw(self, values: tuple[Any, ...], arrays: Sequence[Any]) -> None:
        """Run the checked function on parameter ``values`` (in :attr:`signature` order) and
        ``arrays`` (UFs and data spaces, in order) that a binding has accepted before (same
        dtypes, shapes and flags): no Python check at all, the function's own still run.
        For spf's own check kernels (spf.runtime.fact_check)."""
        bounds = self._bounds.get(values)
        if bounds is None:
            bounds = self._bounds_of(dict(zip(self._param_order, values, strict=True)))
        fault = self._record()
        self._checked(*values, *map(self._from_buffer, self._ctypes, arrays), bounds, fault)
        if fault[0]:
            self._raise_fault(fault, arrays, values)

    def _call_checked(self, values: tuple[Any, ...], arrays: tuple[Any, ...]) -> None:
        """A ``check=True`` call whose arguments look like accepted ones (UF lengths
        included): the facts left to this call, then the checked function."""
        if self._contents is None:  # decided on the first such call (plans the facts)
            self._contents = self._binder.needs_contents
        self._binder.check_contents(values, arrays)
        bounds = self._bounds.get(values)
        if bounds is None:
            bounds = self._bounds_of(dict(zip(self._param_order, values, strict=True)))
        fault = self._record()
        cargs = [*values, *map(self._from_buffer, self._ctypes, arrays), bounds, fault]
        self._run(self._checked, cargs, fault, arrays, values)

    def _run(
        self,
        fn: Any,
        cargs: Sequence[Any],
        fault: Any,
        arrays: Sequence[Any],
        params: dict[str, Any] | tuple[Any, ...],
    ) -> None:
        """Call ``fn``; raise what the fault record holds after it. A call whose facts
        were timed (the first calls) is timed too, for the warning of a check slower than
        the kernel."""
        timed = self._binder.timed_facts
        start = time.perf_counter() if timed else 0.0
        previous, self._last_threads = GOVERNOR.enter() if self._openmp else (0, 1)
        try:
            fn(*cargs)
        finally:
            if previous:
                GOVERNOR.restore(previous)
        if timed:
            self._warn_slow(time.perf_counter() - start)
        if fault is not None and fault[0]:
            self._raise_fault(fault, arrays, params)

    def _raise_fault(
        self, fault: Any, arrays: Sequence[Any], params: dict[str, Any] | tuple[Any, ...]
    ) -> None:
        """Raise the error for what the fault record holds, and clean the record. A
        checked function whose range pass found a value out of range (its loops not run)
        hands the call to its fallback instead, which raises what that finds (or returns:
        an entry the loops never read is no error)."""
        from spf.codegen.range_pass import FAULT_READS

        if isinstance(params, tuple):
            params = dict(zip(self._param_order, params, strict=True))
        if fault[0] == FAULT_READS:
            fault[0 : faults.FAULT_WORDS] = [0] * faults.FAULT_WORDS
            self._checked_reads(arrays, params)
            return
        try:
            error = self._run_fault(fault, arrays, params)
        finally:  # the thread's record, clean for its next call
            fault[0 : faults.FAULT_WORDS] = [0] * faults.FAULT_WORDS
        raise error

    def _checked_reads(self, arrays: Sequence[Any], params: dict[str, Any]) -> None:
        """The checked call again on the fallback, every index read checked
        (spf.codegen.range_pass), built and loaded on the first call that needs it."""
        if self._reads is None:
            from spf.codegen.range_pass import READS_SUFFIX
            from spf.runtime.reads_fallback import build_fallback

            built = build_fallback(self.name, self.source, self.command, self.path)
            proto = arg_checks.checked_prototype_of(self._signature, READS_SUFFIX, restrict=False)
            lib = _load(built.path, proto, built.command)[1]
            self._reads = getattr(lib, self.name + READS_SUFFIX)
        fault = self._record()
        bound = [*map(self._from_buffer, self._ctypes, arrays), self._bounds_of(params), fault]
        self._run(self._reads, self._cargs(params, bound), fault, arrays, params)

    def _warn_slow(self, kernel_s: float) -> None:
        for fact, spent in self._binder.slow_facts(kernel_s):
            LOGGER.warning(
                "kernel %s: checking %r took %.3g s, %s the kernel itself (%.3g s): a "
                "checked call costs more than 1.2 unchecked ones; call with check=False once "
                "the arrays are known to be right, or state the fact so that it is checked "
                "in the loops or on neighbouring pairs (kernel.check_cost)",
                self.name,
                fact,
                spent,
                "longer than" if spent > kernel_s else f"{spent / kernel_s:.0%} of",
                kernel_s,
            )

    @property
    def check_cost(self) -> CheckCost:
        """How a ``check=True`` call verifies each fact (assumptions, then bounds
        obligations): a tuple of :class:`~spf.runtime.fact_check.FactCost` whose ``how`` is
        ``"parameters"``, ``"in loop"``, ``"each call"`` or ``"remembered"``
        (docs/backends/c.md); ``check_cost.remembered`` lists the facts verified once per
        content of the arrays they read."""
        return self._binder.check_cost

    def _record(self) -> Any:
        """The calling thread's fault record (zero between calls): a call runs on one thread,
        so no two calls running at once share a record."""
        try:
            return self._records.record
        except AttributeError:
            record = self._records.record = self._ffi.new("int64_t[]", faults.FAULT_WORDS)
            return record

    def _run_fault(
        self, fault: Any, arrays: Sequence[Any], params: dict[str, Any]
    ) -> ArgumentError | MemoryError:
        """The error for what the call recorded in its fault record."""
        kind, number, at, value = (int(fault[k]) for k in range(faults.FAULT_WORDS))
        if kind == faults.FAULT_ALLOC:
            array = self._fault_names[1][number]
            return AllocationError(
                f"kernel {self.name}: cannot allocate its array {array!r} "
                f"of {at} elements of {value} bytes ({at * value} bytes) for these parameters "
                "(calloc failed; the kernel skipped the work that needed it and the outputs "
                "hold no valid result): check the parameter values its size is computed from",
                array,
                at,
                value,
            )
        if kind == faults.FAULT_INDEX:
            return self._index_fault(number, at, value)
        if kind == faults.FAULT_INDEX_ORDER:
            return self._order_fault(number, at, value)
        if kind == arg_checks.FAULT_FACT:
            return self._binder.fact_error(number, list(arrays), params, FACT_IN_LOOP)
        if kind == FAULT_EACH:  # at = -1: an injectivity fact's marks not allocated
            unallocated = value if at == FAULT_NO_MARKS else 0
            return self._binder.each_error(number, list(arrays), params, unallocated)
        if kind == arg_checks.FAULT_OVERLAP:
            return self._binder.overlap_error(list(arrays), number, at)
        return self._loop_fault(fault, list(arrays), params)

    def _order_fault(self, number: int, at: int, value: int) -> ArgumentError:
        """A run-time index array out of the order its UF declares, seen when the loops
        were done (spf.codegen.faults.order_check)."""
        name = self._fault_names[0][number]
        return ArgumentError(
            f"kernel {self.name}: run-time index array {name} is not in the order its UF "
            f"declares (monotonic): {name}[{at}] = {value} breaks it against {name}[{at - 1}]; "
            "the analysis relied on the order (the reads stayed in their range, but the "
            f"outputs are not valid): check the arguments {name} is computed from"
        )

    def _index_fault(self, number: int, at: int, value: int) -> ArgumentError:
        """A run-time index array (``index=True``) read outside its UF's declared range."""
        name = self._fault_names[0][number]
        where = (
            f"{name}[{at}] = {value} is outside the range"
            if at >= 0
            else f"{name} held a value outside the range (the entry has changed since)"
        )
        return ArgumentError(
            f"kernel {self.name}: run-time index array {where} its UF declares (or, with "
            "none declared, the range the accesses its values index need) when a "
            "statement read it (the read used the lowest value instead, so nothing was "
            "accessed out of bounds, but the outputs are not valid): check the arguments "
            f"{name} is computed from"
        )

    def _bounds_of(
        self, params: dict[str, Any], known: bool = False, hashed: list[int] | None = None
    ) -> Any:
        """The ``spf_bounds`` argument of the checked function for these parameters; with
        ``known``, for index arrays whose contents a checked call verified (its last word
        set: the function runs the unchecked loops, spf.codegen.arg_checks.known_lines);
        with ``hashed`` (the bytes of each index array), a new array for one look whose
        calls the function hashes (no contents verified yet: :meth:`_new_contents`)."""
        key = tuple(params[name] for name in self._param_order)  # the fast path's values
        cache = self._known_bounds if known else self._bounds
        bounds = None if hashed is not None else cache.get(key)
        if bounds is None:
            words: list[int] = []
            for c in self._uf_checks:
                words.extend((-(2**63), 2**63 - 1, 0, -1) if c is None else c.loop_bounds(params))
            if hashed is not None:
                return self._ffi.new("int64_t[]", [*words, arg_checks.KNOWN_HASHED, 0, *hashed])
            if len(cache) > 64:
                cache.clear()
            bounds = cache[key] = self._ffi.new("int64_t[]", [*words, int(known)])
        return bounds

    def _loop_fault(self, fault: Any, arrays: list[Any], params: dict[str, Any]) -> ArgumentError:
        """The error for what the in-loop checks recorded (``[kind, UF, index, value]``)."""
        kind, uf, at, value = (int(fault[k]) for k in range(arg_checks.FAULT_WORDS))
        ufs = [(d, arr) for d, arr in zip(self._binder.data, arrays, strict=True) if d.is_uf]
        d, arr = ufs[uf]
        check = d.uf_check
        if check is None:  # not reached: a UF without declaration has the widest bounds
            return ArgumentError(f"{d.label}: index {at} holds {value}, an invalid index")
        if not 0 <= at < arr.size:  # a UF without a declared domain: no length check before
            return _past_the_end(self.name, d.label, d.name, at, arr.size, params)
        in_loop = kind in (arg_checks.FAULT_RANGE, arg_checks.FAULT_ORDER)
        if kind in (arg_checks.FAULT_ORDER, arg_checks.FAULT_ORDER_BEFORE):
            return check.order_error(arr, at, params, in_loop=in_loop)
        index = tuple(int(i) for i in np.unravel_index(at, arr.shape))
        return check.range_error(index, value, params, in_loop=in_loop)

    def _cargs(self, params: dict[str, Any], bound: list[Any]) -> list[Any]:
        """The C arguments: parameters and arrays in signature order, then any extra ones."""
        if self._params_first:
            return [*[params[n] for n in self._param_order], *bound]
        it, cargs = iter(bound), []
        for a in self.arguments:
            cargs.append(params[a.name] if a.kind == "param" else next(it))
        return [*cargs, *it]


def _past_the_end(
    kernel: str, label: str, uf: str, at: int, size: int, params: dict[str, Any]
) -> ArgumentError:
    """The error for an in-loop check that read entry ``at`` of an index array of ``size``
    entries (the array is shorter than what the loops read: nothing checked its length)."""
    from spf.runtime.checks import with_params

    return ArgumentError(
        f"kernel {kernel}: {label}: the loops read entry {at} of index array {uf!r}, but the "
        f"array has only {size} entries{with_params(params)}: it is too short for the call's "
        "parameters and the read went past its end (the outputs hold no valid result); pass "
        f"an array of at least {at + 1} entries, or declare the UF's domain "
        f"(declare_uf({uf!r}, domain=...)) so that a checked call compares the array's "
        "length with it before running"
    )

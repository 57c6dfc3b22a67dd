"""Binding keyword arguments to a :class:`~spf.codegen.signature.Signature` (docs/backends/c.md).

:class:`Binder` checks what a call passes by name: parameters are ints that fit their C type
(or follow from the arrays' declared shapes), arrays are numpy arrays of the right dtype, rank
and shape, C-contiguous, aligned and writeable where written; ``check=True`` also checks the
declared UF facts (:mod:`spf.runtime.checks`), the preconditions on the parameters
(:mod:`spf.runtime.preconditions`) and that no written array overlaps another.
:class:`~spf.runtime.kernel.Kernel` binds every call with it, and so does the reference
interpreter (``Computation.interpret``), so both refuse the same arguments.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeGuard, cast

import numpy as np
import numpy.typing as npt

from spf.errors import ArgumentError, CodegenError, VerifyError
from spf.runtime.checks import Array, UFCheck, real_constant
from spf.runtime.device_arrays import has_interface
from spf.sets.expr import Evaluator, compile_expr

if TYPE_CHECKING:
    from spf.codegen.signature import Arg, Signature
    from spf.runtime.fact_check import CheckCost, FactChecker
    from spf.runtime.preconditions import PreconditionCheck

_MISSING: Any = object()


def _wraps(value: npt.NDArray[Any], dtype: np.dtype[Any]) -> str | None:
    """The first entry of the integer array ``value`` that the integer ``dtype`` cannot
    hold (``value.astype(dtype)`` would wrap it), as text; None where there is none or
    either type is no integer type."""
    if dtype.kind not in "iu" or value.dtype.kind not in "iu" or value.size == 0:
        return None
    info = np.iinfo(dtype)
    flat = value.reshape(-1)
    # the bounds compared as Python ints: a uint64 against a signed one must not go via float
    if int(flat.min()) >= info.min and int(flat.max()) <= info.max:
        return None
    k = int(np.flatnonzero((flat < info.min) | (flat > info.max))[0])
    where = f" at index {k}" if value.ndim == 1 else f" at flat index {k}"
    return f"{int(flat[k])}{where}"


class _Data:
    """How one array argument (data space or UF) is checked."""

    def __init__(self, arg: Arg, params: frozenset[str], context: str | None) -> None:
        self.name = arg.name
        self.arg = arg
        self.is_uf = arg.kind == "uf"
        # the subject of a message: the bare name for a kernel, quoted after a context
        self.label = arg.name if context is None else f"argument {arg.name!r}"
        self.writer = "the kernel" if context is None else "the computation"
        try:
            self.dtype = np.dtype(arg.dtype)
        except KeyError:
            raise CodegenError(f"argument {arg.name!r}: unsupported C type {arg.ctype!r}") from None
        self.writes = not self.is_uf and not arg.const
        self.shape_text: tuple[str, ...] | None = None
        self.shape_of: Callable[[dict[str, int]], tuple[int, ...]] | None = None
        rank = arg.uf.array_uf().arity if self.is_uf and arg.uf is not None else arg.rank
        if not self.is_uf and arg.shape is not None:
            self.shape_text = tuple(str(e) for e in arg.shape)
            self.shape_of = _shape_fn(arg.name, arg.shape, params)
            rank = len(arg.shape) if rank is None else rank
        self.rank = rank
        self.blocked = (
            self.shape_text is not None
            and len(self.shape_text) > 1
            and all(t.strip().isdigit() for t in self.shape_text[1:])
        )
        """A data space of fixed-size blocks (``A[NNZB, 2, 3]``): it may also be passed flat,
        the same row-major elements in one 1-d array (``spf.sparse.bcsr_args``)."""
        # a multi-argument UF is linearized with its trailing extents: they must match
        self.inner_of = _shape_fn(arg.name, arg.inner, params) if arg.inner else None
        self.uf_check = (
            UFCheck(arg.uf, params, label=self.label) if self.is_uf and arg.uf is not None else None
        )

    def ok(self, value: object, params: dict[str, int]) -> TypeGuard[Array]:
        """Whether ``value`` is acceptable (fast path; :meth:`explain` says why not)."""
        # the object's own type: a proxy (weakref.proxy) reports ndarray as its __class__
        # but has no buffer to bind
        if not (isinstance(value, np.ndarray) and issubclass(type(value), np.ndarray)):
            return False
        if value.dtype != self.dtype:
            return False
        flags = value.flags
        if not (flags.c_contiguous and flags.aligned and (flags.writeable or not self.writes)):
            return False
        if self.shape_of is not None:
            want = self.shape_of(params)
            return value.shape == want or (not want and value.shape == (1,))
        rank = self.rank
        if self.inner_of is not None:
            return value.ndim == rank and value.shape[1:] == self.inner_of(params)
        return rank is None or value.ndim == rank or (rank == 0 and value.shape == (1,))

    def unflatten(self, value: object, params: dict[str, int]) -> object:
        """``value`` read in the declared shape when it is the flat form of a blocked data
        space (a C-contiguous 1-d array of as many elements: a view, the same memory);
        otherwise ``value`` unchanged."""
        if not (self.blocked and isinstance(value, np.ndarray) and value.ndim == 1):
            return value
        assert self.shape_of is not None
        want = self.shape_of(params)
        if not value.flags.c_contiguous or value.size != _size(want):
            return value
        return value.reshape(want)

    def _shape_error(self, value: npt.NDArray[Any], params: dict[str, int]) -> ArgumentError | None:
        """The error for an array whose shape is not the declared one (None: it is)."""
        assert self.shape_of is not None
        want = self.shape_of(params)
        if value.shape == want or (not want and value.shape == (1,)):
            return None
        decl = ", ".join(self.shape_text or ())
        used = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
        if any(e < 0 for e in want):
            return ArgumentError(
                f"{self.label}: the declared shape [{decl}] is {want} with {used}: a negative "
                "extent; pass sizes that are not negative"
            )
        return ArgumentError(
            f"{self.label}: expected shape {want} (declared [{decl}] with {used}), "
            f"got {value.shape}; pass an array of shape {want} or fix the parameters"
        )

    def explain(self, value: object, params: dict[str, int]) -> ArgumentError:
        """The error for a ``value`` that :meth:`ok` rejected."""
        name, label, dtype = self.name, self.label, self.dtype
        if not (isinstance(value, np.ndarray) and issubclass(type(value), np.ndarray)):
            what = "index array (UF)" if self.is_uf else "data space"
            if has_interface(value):
                runs = "this kernel runs" if self.writer == "the kernel" else "this runs"
                return ArgumentError(
                    f"{label}: a device array ({type(value).__name__}, with "
                    f"__cuda_array_interface__) for {what} {name!r}, but {runs} on the host; "
                    f"pass a numpy array (e.g. cupy.asnumpy({name}), {name}.cpu().numpy()), "
                    "or compile with target='cuda', whose kernels take device arrays"
                )
            return ArgumentError(
                f"{label}: expected a numpy array of dtype {dtype} for {what} {name!r}, got "
                f"{type(value).__name__}; pass np.asarray({name}, dtype=np.{dtype})"
            )
        if value.dtype != dtype:
            if (wrap := _wraps(value, dtype)) is not None:
                wider = (
                    "declare the index arrays int64 (index_dtype='int64' for spf.einsum, "
                    "spf.kernels and spf.formats.convert; dtype='int64' for a UF of your own)"
                    if self.is_uf
                    else f"declare data space {name!r} with a wider type"
                )
                return ArgumentError(
                    f"{label}: expected dtype {dtype} ({self.arg.ctype}), got {value.dtype} "
                    f"holding {wrap}, outside {dtype}'s range: {name}.astype(np.{dtype}) would "
                    f"wrap it (wrong results, silently); {wider}"
                )
            hint = (
                " (the UF's declared dtype; index arrays are never converted silently)"
                if self.is_uf
                else " (outputs are written in place, so keep the converted array)"
            )
            return ArgumentError(
                f"{label}: expected dtype {dtype} ({self.arg.ctype}), got {value.dtype}; "
                f"convert it with {name}.astype(np.{dtype}){hint}"
            )
        rank = self.rank
        if self.blocked and self.shape_of is not None and value.ndim == 1:
            want_shape = self.shape_of(params)
            if value.size != int(np.prod(want_shape)):
                return ArgumentError(
                    f"{label}: expected shape {want_shape} or the same blocks flat (1-d, "
                    f"{int(np.prod(want_shape))} elements), got {value.size} elements; "
                    "pass the blocks of every stored block or fix the parameters"
                )
        if rank is not None and value.ndim != rank and not (rank == 0 and value.shape == (1,)):
            want = "a 0-d array (np.zeros(())) or shape (1,)" if rank == 0 else f"{rank}-d"
            return ArgumentError(
                f"{label}: expected {want}, got a {value.ndim}-d array of shape {value.shape}; "
                f"reshape it"
            )
        if self.inner_of is not None and value.shape[1:] != self.inner_of(params):
            want = ", ".join(map(str, self.inner_of(params)))
            decl = ", ".join(self.arg.inner)
            return ArgumentError(
                f"{label}: UF {name!r} is read as a row-major array of shape (any, {want}) "
                f"(extents [{decl}] from its declared domain), got shape {value.shape}; pass "
                "an array with those trailing extents or fix the parameters"
            )
        if self.shape_of is not None and (err := self._shape_error(value, params)) is not None:
            return err
        if not value.flags.c_contiguous:
            copy = " and read the result from the copy" if self.writes else ""
            return ArgumentError(
                f"{label}: the array is not C-contiguous (strides {value.strides}); "
                f"use np.ascontiguousarray({name}){copy}"
            )
        if not value.flags.aligned:
            return ArgumentError(f"{label}: the array is not aligned for {self.arg.ctype}; copy it")
        return ArgumentError(
            f"{label}: the array is read-only but {self.writer} writes data space {name!r}; "
            f"pass a writeable array (e.g. {name}.copy())"
        )


def _shape_fn(
    name: str, shape: tuple[int | str, ...], params: frozenset[str]
) -> Callable[[dict[str, int]], tuple[int, ...]]:
    """A fast ``params -> shape`` (plain names become dict look-ups)."""
    texts = [e.strip() if isinstance(e, str) else e for e in shape]
    if texts and all(isinstance(t, str) and t in params for t in texts):
        getter = operator.itemgetter(*texts)
        if len(texts) > 1:
            return cast("Callable[[dict[str, int]], tuple[int, ...]]", getter)
        return lambda env: (getter(env),)
    evals = tuple(_extent(name, e, params) for e in shape)
    return lambda env: tuple(ev(env) for ev in evals)


def _extent(name: str, extent: int | str, params: frozenset[str]) -> Evaluator:
    if isinstance(extent, int):
        value = extent
        return lambda env: value
    fn, names = compile_expr(extent)
    unknown = names - params
    if unknown:
        raise VerifyError(
            f"data space {name!r}: extent {extent!r} uses {', '.join(sorted(unknown))}, "
            f"which are not parameters of the kernel ({', '.join(sorted(params)) or 'none'})"
        )
    return fn


class Binder:
    """Checks the keyword arguments of one call against ``signature``.

    :meth:`bind` returns the parameter values and the arrays (UFs and data spaces, in
    signature order) or raises :class:`~spf.errors.ArgumentError`. Without ``context`` the
    messages are a kernel's (``y: expected shape (4,) ... of void f(...)``); with one (e.g.
    ``"interpret(spmv)"``) every message starts with it and names the argument quoted.
    """

    def __init__(
        self,
        signature: Signature,
        *,
        context: str | None = None,
        in_loop: frozenset[str] | None = None,
        zero_based: frozenset[str] = frozenset(),
        in_loop_facts: frozenset[int] = frozenset(),
        before_loops: frozenset[int] = frozenset(),
        implied: Mapping[int, tuple[int, ...]] | None = None,
        overlap_in_loop: bool = False,
        validated: bool = False,
    ) -> None:
        self.signature = signature
        self.context = context
        self.in_loop = in_loop
        """None: ``check=True`` checks every UF fact here. Otherwise the kernel's loops check
        each index value's range and the monotonicity of the UFs named here
        (:mod:`spf.codegen.arg_checks`); :meth:`bind` checks the rest. The loops test the
        UFs named in ``zero_based`` against ``[0, hi]``: a call whose lowest declared value
        is above 0 has their range checked here. ``in_loop_facts``: the numbers of the
        facts (``signature.facts``) the kernel's loops check (spf.runtime.fact_check);
        ``before_loops``: those of its each-call facts it tests before its loops
        (spf.codegen.each_call); ``implied``: the facts the kernel does not check because
        the others imply them (each with the facts it follows from; None: decided here);
        ``overlap_in_loop``: the kernel tests that no written array overlaps another itself
        (:meth:`check_contents` then leaves it out); ``validated``: the facts' checks were
        found bounded when the kernel was built (a kernel loaded from a warm entry)."""
        self.overlap_in_loop = overlap_in_loop
        self.params: tuple[Arg, ...] = tuple(a for a in signature.args if a.kind == "param")
        for a in self.params:
            if np.dtype(a.dtype).kind not in "iuf":
                raise CodegenError(
                    f"parameter {a.name!r} must have a numeric C type, not {a.ctype}"
                )
        ints = [a for a in self.params if np.dtype(a.dtype).kind in "iu"]
        self._limits = tuple(
            (a.name, int(np.iinfo(a.dtype).min), int(np.iinfo(a.dtype).max)) for a in ints
        )
        self._floats = tuple(a.name for a in self.params if np.dtype(a.dtype).kind == "f")
        """Constants of a floating type (``add_constant(name, "double")``): plain numbers."""
        names = frozenset(a.name for a in self.params)
        self.data = tuple(_Data(a, names, context) for a in signature.args if a.kind != "param")
        """The array arguments (UFs and data spaces) in signature order."""
        for d in self.data:
            if d.uf_check is not None and d.name in zero_based:
                d.uf_check.zero_based = True
        self.param_order = tuple(a.name for a in self.params)
        self._names = frozenset(a.name for a in signature.args)
        self._array_names = frozenset(d.name for d in self.data)
        if context is None:
            self._of = f" of {signature.c_prototype()}"
            self._for = f" for {signature.function}"
            self._restrict = "the C arguments are restrict"
        else:
            self._of = self._for = ""
            self._restrict = "a kernel's arguments are restrict"
        # parameters that follow from shapes: (array, axis, rank) where the extent is the name
        infer: dict[str, list[tuple[str, int, int]]] = {}
        for d in self.data:
            texts = d.shape_text or ()
            for axis, text in enumerate(texts):
                if text.strip() in names:
                    infer.setdefault(text.strip(), []).append((d.name, axis, len(texts)))
        self._infer = infer
        self._facts: FactChecker | None = None
        self._steady = False
        """Whether :meth:`check_contents` first tries the facts positionally (the only
        checks it makes; set by :attr:`needs_contents`)."""
        if signature.facts:
            from spf.runtime.fact_check import FactChecker

            ufs = {a.name: a.uf for a in signature.args if a.kind == "uf" and a.uf is not None}
            labels = signature.fact_labels or None
            self._facts = FactChecker(
                signature.facts,
                ufs,
                labels,
                in_loop=in_loop_facts,
                before_loops=before_loops,
                implied=implied,
                validated=validated,
            )
        self._preconditions: PreconditionCheck | None = None
        if signature.preconditions:
            from spf.runtime.preconditions import PreconditionCheck

            where = f"kernel {signature.function}: " if context is None else ""
            self._preconditions = PreconditionCheck(signature.preconditions, where)
        self._fast = _FastPlan(self)
        self._checked = _CheckedPlan(self)
        self._written = tuple(i for i, d in enumerate(self.data) if d.writes)
        self._blocked = tuple(i for i, d in enumerate(self.data) if d.blocked)

    def fast(self, args: Mapping[str, object]) -> tuple[tuple[Any, ...], tuple[Array, ...]] | None:
        """``(parameter values in :attr:`param_order`, arrays)`` for the common call that
        passes every argument by name with exact types (int parameters, base-class numpy
        arrays of the exact dtype, contiguous, aligned, of the declared shapes), checked
        without any fact; None for any other call (:meth:`bind` then says what is wrong)."""
        return self._fast.bind(args)

    def checked_fast(
        self, args: Mapping[str, object]
    ) -> tuple[tuple[Any, ...], tuple[Array, ...]] | None:
        """:meth:`fast` for a call with ``check=True``: also None unless the checks that
        depend only on the parameters and the arrays' shapes pass (UF lengths) and the
        kernel's loops check every UF value (:class:`_CheckedPlan`); the call must then
        still pass :meth:`check_contents`."""
        return self._checked.bind(args)

    def check_contents(self, values: tuple[Any, ...], arrays: Sequence[Array]) -> None:
        """What :meth:`checked_fast` leaves to every call: the preconditions, the facts not
        checked in the loops, and that no written array overlaps another."""
        facts = self._facts
        if self._steady and facts is not None and facts.holds(values, arrays):
            return  # the facts on the call's own tuples: nothing else to check
        if self._preconditions is not None:
            self._preconditions.check(dict(zip(self.param_order, values, strict=True)))
        if facts is not None and not facts.quiet:
            params = dict(zip(self.param_order, values, strict=True))
            ufs = {d.name: arr for d, arr in zip(self.data, arrays, strict=True) if d.is_uf}
            facts.check(params, ufs)
        if not self.overlap_in_loop:
            self._no_overlap(arrays)

    @property
    def settles_per_values(self) -> bool:
        """Whether :meth:`check_contents` tests the parameter values alone (parameter facts,
        preconditions; every other fact in the kernel's loops and the overlap test in C): a
        checked call that passed settles its look, which is per tuple of values, for good
        (``spgemm_csr``'s ``M >= 0`` had every checked call build dictionaries and run the
        facts' Python, about 10 us on a 34-row matrix)."""
        facts = self._facts
        return self.overlap_in_loop and (facts is None or facts.per_values)

    @property
    def needs_contents(self) -> bool:
        """Whether :meth:`check_contents` has anything to do (plans the facts; a call
        whose only checks are facts then takes them positionally, see
        :meth:`FactChecker.holds`)."""
        facts = self._facts
        if facts is not None and self._preconditions is None and self.overlap_in_loop:
            facts.place(self.param_order, [d.name for d in self.data])
            self._steady = True
        return (
            not self.overlap_in_loop
            or self._preconditions is not None
            or (self._facts is not None and not self._facts.quiet)
        )

    def overlap_error(self, arrays: Sequence[Array], written: int, other: int) -> ArgumentError:
        """The error for arrays ``written`` and ``other`` (positions in :attr:`data`) that
        the kernel found sharing memory."""
        try:
            self._no_overlap(arrays)
        except ArgumentError as err:
            return err
        d, o = self.data[written], self.data[other]
        return ArgumentError(
            f"{d.label} and {o.name} share memory, but {d.name} is written and "
            f"{self._restrict}; pass a copy of one"
        )

    @property
    def overlap_only(self) -> bool:
        """Whether a ``check=True`` call checks nothing but that no written array overlaps
        another (no index array, fact, precondition, or blocked data space to read in its
        declared shape)."""
        return (
            self._preconditions is None
            and self._facts is None
            and not self._blocked
            and not self.overlap_in_loop
            and all(d.uf_check is None and not d.is_uf for d in self.data)
        )

    @property
    def has_array_facts(self) -> bool:
        """Whether a checked call verifies facts over index arrays (assumptions or bounds
        obligations that are not over parameters only)."""
        facts = self._facts
        return facts is not None and any(not f.is_parameter_fact for f in facts.facts)

    def remember_contents(self, remembers: bool) -> None:
        """Whether the kernel remembers the index-array contents its checked calls
        verified (spf.runtime.known): :attr:`check_cost` then says ``"remembered"`` for
        every fact over index arrays."""
        if self._facts is not None:
            self._facts.by_content = remembers

    def check(
        self,
        arrays: list[Array],
        params: dict[str, int],
        skip_overlap: frozenset[int] = frozenset(),
    ) -> None:
        """What a ``check=True`` call checks in Python before the checked function, on
        arguments :meth:`bind` accepted with ``check=False``; ``skip_overlap``: positions
        (in :attr:`data`) the overlap test leaves out (device arrays, whose stand-ins hold
        no memory: spf.runtime.cuda compares their addresses itself)."""
        try:
            self._check(arrays, params, skip_overlap)
        except ArgumentError as err:
            raise self._in_context(err) from None

    def no_overlap(self, arrays: Sequence[Array]) -> None:
        """No written array shares memory with another (ArgumentError naming both)."""
        try:
            self._no_overlap(arrays)
        except ArgumentError as err:
            raise self._in_context(err) from None

    @property
    def check_cost(self) -> CheckCost:
        """How a ``check=True`` call verifies each fact (spf.runtime.fact_check)."""
        from spf.runtime.fact_check import CheckCost

        return self._facts.cost if self._facts is not None else CheckCost()

    def fact_error(
        self, number: int, arrays: Sequence[Array], params: Mapping[str, Any], note: str
    ) -> ArgumentError:
        """The error for fact ``number`` when the kernel's loops found it broken."""
        assert self._facts is not None
        ufs = {d.name: arr for d, arr in zip(self.data, arrays, strict=True) if d.is_uf}
        return self._in_context(self._facts.loop_error(number, params, ufs, note))

    def each_error(
        self,
        number: int,
        arrays: Sequence[Array],
        params: Mapping[str, Any],
        unallocated: int = 0,
    ) -> ArgumentError:
        """The error for each-call fact ``number``, found broken before the kernel's loops
        (``unallocated``: see :meth:`~spf.runtime.fact_check.FactChecker.each_error`)."""
        assert self._facts is not None
        ufs = {d.name: arr for d, arr in zip(self.data, arrays, strict=True) if d.is_uf}
        return self._in_context(self._facts.each_error(number, params, ufs, unallocated))

    @property
    def timed_facts(self) -> bool:
        """The last check timed some fact checks (:meth:`slow_facts` compares them)."""
        return self._facts is not None and bool(self._facts.timings)

    def slow_facts(self, kernel_s: float) -> list[tuple[str, float]]:
        """``(fact, seconds)`` of the facts whose check, timed by the last checked call,
        took too long next to the kernel's ``kernel_s`` seconds (each named once;
        :meth:`FactChecker.slow`)."""
        return [] if self._facts is None else self._facts.slow(kernel_s)

    def bind(
        self, args: Mapping[str, object], check: bool = True
    ) -> tuple[dict[str, Any], list[Array]]:
        """``(params, arrays)`` for a call with keyword arguments ``args``.

        ``params`` maps every parameter to its value (given or inferred from a declared
        shape); ``arrays`` are the array arguments, unchanged, in the order of :attr:`data`.
        """
        fast = self._fast.bind(args) if check is True or check is False else None
        if fast is not None:
            return self._bind_fast(fast[0], list(fast[1]), check)
        return self._bind_slow(args, check)

    def _bind_slow(
        self, args: Mapping[str, object], check: bool
    ) -> tuple[dict[str, Any], list[Array]]:
        """:meth:`bind` for any call, with the error for a wrong one."""
        try:
            if not self._names.issuperset(args):
                raise self._unknown(args)
            params: dict[str, Any] = {}
            for name, lo, hi in self._limits:
                v = args.get(name, _MISSING)
                if v is not _MISSING:
                    if type(v) is not int or not lo <= v <= hi:
                        v = self._param(name, v)
                    params[name] = v
            if len(params) != len(self._limits) or self._floats:
                self._complete_params(args, params)
            if tuple(params) != self.param_order:  # caches key on the values in this order
                params = {name: params[name] for name in self.param_order}
            arrays: list[Array] = []
            for d in self.data:
                v = args.get(d.name, _MISSING)
                if not d.ok(v, params) and not d.ok(v := d.unflatten(v, params), params):
                    raise self._arg_error(d, args.get(d.name, _MISSING), params, args)
                arrays.append(v)
            if check is not False:
                if check is not True:
                    raise ArgumentError(f"check must be True or False, got {check!r}")
                self._check(arrays, params)
        except ArgumentError as err:
            raise self._in_context(err) from None
        return params, arrays

    def _bind_fast(
        self, values: tuple[Any, ...], arrays: list[Array], check: bool
    ) -> tuple[dict[str, Any], list[Array]]:
        params = dict(zip(self.param_order, values, strict=True))
        for i in self._blocked:  # blocks passed flat, read in their declared shape
            arrays[i] = cast("Array", self.data[i].unflatten(arrays[i], params))
        if check:
            try:
                self._check(arrays, params)
            except ArgumentError as err:
                raise self._in_context(err) from None
        return params, arrays

    def _in_context(self, err: ArgumentError) -> ArgumentError:
        """``err`` with the binder's context in front (unchanged without one)."""
        return err if self.context is None else ArgumentError(f"{self.context}: {err}")

    def positional(self, count: int) -> ArgumentError:
        """The error for a call that passed ``count`` arguments by position."""
        return ArgumentError.positional(
            self.context or f"kernel {self.signature.function}",
            count,
            self.signature.function,
            [a.name for a in self.signature.args],
            " (parameters that follow from array shapes may be left out)",
        )

    def _unknown(self, args: Mapping[str, object]) -> ArgumentError:
        unknown = ", ".join(sorted(set(args) - self._names))
        expected = ", ".join(a.name for a in self.signature.args) or "none"
        return ArgumentError(f"unknown argument(s) {unknown}{self._for}; expected: {expected}")

    def _param(self, name: str, value: object) -> int:
        arg = next(a for a in self.params if a.name == name)
        info = np.iinfo(arg.dtype)
        label = name if self.context is None else f"argument {name!r}"
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
            raise ArgumentError(
                f"{label}: parameter {name!r} must be an integer ({arg.ctype}), got "
                f"{type(value).__name__} {value!r}; pass {name}=int(...)"
            )
        if not info.min <= int(value) <= info.max:
            raise ArgumentError(
                f"{label}: {value} does not fit {arg.ctype} ({info.min}..{info.max})"
            )
        return int(value)

    def _complete_params(self, args: Mapping[str, object], params: dict[str, Any]) -> None:
        """Integer parameters inferred from shapes, and the floating constants."""
        if len(params) != len(self._limits):
            self._infer_params(args, params)
        for name in self._floats:
            params[name] = self._float(name, args.get(name, _MISSING))

    def _float(self, name: str, value: object) -> float:
        label = name if self.context is None else f"argument {name!r}"
        if value is _MISSING:
            raise ArgumentError(f"missing parameter {name}{self._of}; pass {name}=<number>")
        return real_constant(label, name, value)

    def _missing_arrays(self, args: Mapping[str, object]) -> ArgumentError:
        show = str if self.context is None else repr
        missing = ", ".join(show(d.name) for d in self.data if d.name not in args)
        return ArgumentError(f"missing array argument(s) {missing}{self._of}")

    def _origin(self, p: str, args: Mapping[str, object]) -> tuple[str, int, int] | None:
        """The array, axis and extent parameter ``p`` follows from (None: none does)."""
        for array, axis, rank in self._infer.get(p, ()):
            arr = args.get(array)
            if isinstance(arr, np.ndarray) and arr.ndim == rank:
                return array, axis, int(arr.shape[axis])
        return None

    def _infer_params(self, args: Mapping[str, object], params: dict[str, int]) -> None:
        """Fill the parameters not given from the arrays' declared shapes."""
        for p in self._infer:
            if p not in params and (origin := self._origin(p, args)) is not None:
                params[p] = origin[2]
        if len(params) != len(self._limits):
            if not self._array_names <= args.keys():
                raise self._missing_arrays(args)
            missing = [n for n, _, _ in self._limits if n not in params]
            for p in missing:  # an array that would give it is not an array of its rank
                for array, _, _ in self._infer.get(p, ()):
                    d = next(d for d in self.data if d.name == array)
                    raise d.explain(args[array], params)
            raise ArgumentError(
                f"missing parameter(s) {', '.join(missing)}{self._of}; they do not follow "
                f"from any array's declared shape, so pass them, e.g. {missing[0]}=..."
            )

    def _arg_error(
        self, d: _Data, value: object, params: dict[str, int], args: Mapping[str, object]
    ) -> ArgumentError:
        if value is _MISSING:
            return self._missing_arrays(args)
        err = d.explain(value, params)
        notes = [
            f"{p}={params[p]} was taken from {origin[0]}.shape[{origin[1]}]"
            for p in sorted(params)
            if p not in args and (origin := self._origin(p, args)) is not None
        ]
        if notes and "expected shape" in str(err):
            return ArgumentError(
                f"{err} ({'; '.join(notes)}; pass the parameters explicitly "
                f"or make the shapes agree)"
            )
        return err

    def _check(
        self,
        arrays: list[Array],
        params: dict[str, int],
        skip_overlap: frozenset[int] = frozenset(),
    ) -> None:
        """The preconditions, the UF facts, and that no written array overlaps another
        (arguments are restrict; those at ``skip_overlap`` are left out)."""
        if self._preconditions is not None:
            self._preconditions.check(params)
        data, in_loop = self.data, self.in_loop
        key = tuple(params[name] for name in self.param_order)  # the fast path's values
        for d, arr in zip(data, arrays, strict=True):
            c = d.uf_check
            if c is None:
                continue
            if in_loop is None:
                c.check(arr, params)
            elif d.name not in in_loop and c.uf.monotonic is not None:
                c.check(arr, params, values=False)
            else:  # only the length is checked here: compare the shape with the cached need
                need = c.min_shape(params, key)
                if need is None:  # the values are checked here too
                    c.check(arr, params, order=False)
                elif any(map(operator.lt, arr.shape, need)):
                    c.check(arr, params, values=False, order=False)
        if self._facts is not None and not self._facts.quiet:
            ufs = {d.name: arr for d, arr in zip(data, arrays, strict=True) if d.is_uf}
            self._facts.check(params, ufs)
        if not self.overlap_in_loop:  # else the kernel's checked function tests it
            self._no_overlap(arrays, skip_overlap)

    def _no_overlap(self, arrays: Sequence[Array], skip: frozenset[int] = frozenset()) -> None:
        """No written array shares memory with another. Two different arrays that both own
        their memory (``base`` None: numpy allocated each) cannot; others are asked.
        Positions in ``skip`` are left out."""
        bases = list(map(_BASE, arrays))
        data = self.data
        for i in self._written:
            mine = arrays[i]
            if mine.size == 0 or i in skip:
                continue
            for j, other in enumerate(arrays):
                if j == i or j in skip:
                    continue
                if other is not mine and bases[i] is None and bases[j] is None:
                    continue
                if np.may_share_memory(mine, other):
                    other_name = data[j].name if self.context is None else repr(data[j].name)
                    d = data[i]
                    raise ArgumentError(
                        f"{d.label} and {other_name} share memory, but {d.name} is "
                        f"written and {self._restrict}; pass a copy of one"
                    )


def _size(shape: tuple[int, ...]) -> int:
    """The number of elements of an array of ``shape``."""
    count = 1
    for extent in shape:
        count *= extent
    return count


_BASE = operator.attrgetter("base")
_C_CONTIGUOUS, _ALIGNED, _WRITEABLE = 0x1, 0x100, 0x400
"""numpy's ``flags.num`` bits."""


class _FastPlan:
    """:meth:`Binder.fast`: a call whose arguments look exactly like an accepted earlier one.

    The look of the arrays is one ``(class, dtype, shape, flags)`` tuple each, read with one
    ``attrgetter`` over all of them; the looks already accepted are remembered per tuple of
    parameter values (they decide acceptance: the flags hold contiguity, alignment and
    writeability). A new look is checked in full once (:meth:`valid`)."""

    def __init__(self, binder: Binder) -> None:
        data = binder.data
        self.count = len(binder.signature.args)
        self.usable = not binder._floats
        self.order = binder.param_order
        self.limits = binder._limits
        self.split = len(self.order)
        self.all = _getter((*self.order, *(d.name for d in data)))
        self.types = (int,) * self.split + (np.ndarray,) * len(data)
        """Exact types: ``bool`` and ndarray subclasses take the slow path."""
        self.look = operator.attrgetter("dtype", "shape", "flags.num")
        self.data = data
        self.masks = [_C_CONTIGUOUS | _ALIGNED | (_WRITEABLE if d.writes else 0) for d in data]
        self.accepted: dict[tuple[Any, ...], list[list[tuple[Any, ...]]]] = {}
        ints = {name for name, _, _ in binder._limits}
        self.infer = tuple((p, tuple(o)) for p, o in binder._infer.items() if p in ints)
        """The integer parameters that follow from shapes, each with its arrays (axis,
        rank): :meth:`complete`."""
        self.slots: dict[tuple[Any, ...], list[Slot]] = {}
        """The :class:`Slot` of each look accepted, in the order of ``accepted[values]``."""
        self.uf = tuple(n for n, d in enumerate(data) if d.is_uf)

    def valid(self, values: tuple[Any, ...], looks: list[tuple[Any, ...]]) -> bool:
        """Whether arrays that look like ``looks`` are right for parameter values ``values``
        (exact ints) in every respect :meth:`_Data.ok` checks."""
        params = dict(zip(self.order, values, strict=True))
        for name, lo, hi in self.limits:
            if not lo <= params[name] <= hi:
                return False
        for d, (dtype, shape, flags), mask in zip(self.data, looks, self.masks, strict=True):
            if dtype is not d.dtype or flags & mask != mask:
                return False
            if d.shape_of is not None:
                want = d.shape_of(params)
                if shape != want and not (d.blocked and shape == (_size(want),)):
                    return False  # a 0-d data space passed as shape (1,) takes the slow path
            elif d.rank is not None and len(shape) != d.rank:
                return False
            elif d.inner_of is not None and shape[1:] != d.inner_of(params):
                return False  # a multi-argument UF: its trailing extents are declared
        return True

    def bind(self, args: Mapping[str, object]) -> tuple[tuple[Any, ...], tuple[Array, ...]] | None:
        got = self.bind_slot(args)
        return None if got is None else (got[0], got[1])

    def bind_slot(
        self, args: Mapping[str, object]
    ) -> tuple[tuple[Any, ...], tuple[Array, ...], Slot] | None:
        """:meth:`bind` with the look's :class:`Slot` (the kernel's calls, checked and
        unchecked, bind through this one path)."""
        if not self.usable:
            return None
        if len(args) != self.count:
            full = self.complete(args)
            if full is None:
                return None
            args = full
        try:
            given = self.all(args)
        except KeyError:
            return None
        if tuple(map(type, given)) != self.types:
            return None
        split = self.split
        values, arrays = given[:split], given[split:]
        looks = list(map(self.look, arrays))
        try:  # a look accepted before (the common call): its slot
            return values, arrays, self.slots[values][self.accepted[values].index(looks)]
        except (KeyError, ValueError, IndexError):  # IndexError: another thread's change
            pass
        if not self.valid(values, looks):
            return None
        slot = Slot(sum(_size(looks[n][1]) * looks[n][0].itemsize for n in self.uf))
        if len(self.accepted) > 64:
            self.accepted.clear()
            self.slots.clear()
        known = self.accepted.setdefault(values, [])
        slots = self.slots.setdefault(values, [])
        if len(known) >= 8 or len(slots) != len(known):  # at most 8 looks per tuple of values
            known.clear()
            slots.clear()
        known.append(looks)
        slots.append(slot)
        return values, arrays, slot

    def complete(self, args: Mapping[str, object]) -> Mapping[str, object] | None:
        """``args`` with the integer parameters left out that follow from an array's
        declared shape (the first array of the rank that declares it, as
        :meth:`Binder.bind` takes it; the arrays' shapes are then checked against it as
        usual), or None when some other argument is missing or extra."""
        full = dict(args)
        for p, origins in self.infer:
            if p in full:
                continue
            for array, axis, rank in origins:
                arr = full.get(array)
                if type(arr) is np.ndarray and arr.ndim == rank:
                    full[p] = int(arr.shape[axis])
                    break
        return full if len(full) == self.count else None


class Slot:
    """What a kernel keeps of one accepted look of its calls (parameter values and
    the arrays' dtypes, shapes and flags: :class:`_FastPlan`), so that a checked call of that
    look needs no Python step but the binding and one C call (spf.runtime.kernel sets them
    once its first calls of the look settled the way): ``bounds``, the checked function's
    ``spf_bounds`` for the values (None: not settled); ``known``, the
    :class:`~spf.runtime.known.KnownContents` whose verified contents the call must hold
    for ``bounds`` (which then ask for the unchecked loops) to apply, or None; ``size``, the
    bytes of the index arrays (what :mod:`spf.runtime.known` sorts contents by); ``key_of``,
    the key of a call of that look (:func:`spf.runtime.known.key_function`, set by its first
    look-up), or None; ``hashed``, the ``spf_bounds`` with which the checked function hashes
    the look's index arrays itself (spf.runtime.kernel, ``Kernel._hashed_call``), or None;
    ``trials``, the :class:`~spf.runtime.known.KnownContents` that times that hashed way
    against the checked loops for this look alone (its trials, keyed
    ``spf.runtime.kernel.LOOK``), or None
    before its first such call."""

    __slots__ = ("bounds", "hashed", "key_of", "known", "size", "trials")

    def __init__(self, size: int) -> None:
        self.bounds: Any = None
        self.hashed: Any = None
        self.known: Any = None
        self.key_of: Any = None
        self.trials: Any = None
        self.size = size


class _CheckedPlan(_FastPlan):
    """:meth:`Binder.checked_fast`: the looks accepted are also those whose UF lengths fit
    the call's parameters; usable when the kernel's loops check every UF value (a UF whose
    values or order are checked before the call, with numpy, takes the full path)."""

    def __init__(self, binder: Binder) -> None:
        super().__init__(binder)
        in_loop = binder.in_loop
        self.usable = self.usable and in_loop is not None
        for d in binder.data:
            c = d.uf_check
            if c is not None and c.uf.monotonic is not None and d.name not in (in_loop or ()):
                self.usable = False

    def valid(self, values: tuple[Any, ...], looks: list[tuple[Any, ...]]) -> bool:
        if not super().valid(values, looks):
            return False
        params = dict(zip(self.order, values, strict=True))
        for d, (_, shape, _) in zip(self.data, looks, strict=True):
            c = d.uf_check
            if c is None:
                continue
            need = c.min_shape(params, values)
            if need is None or any(map(operator.lt, shape, need)):
                return False
        return True


def _getter(names: tuple[str, ...]) -> Callable[[Mapping[str, object]], tuple[Any, ...]]:
    """``args -> tuple(args[n] for n in names)`` in one C call where possible."""
    if len(names) > 1:
        return cast(
            "Callable[[Mapping[str, object]], tuple[Any, ...]]", operator.itemgetter(*names)
        )
    if names:
        name = names[0]
        return lambda args: (args[name],)
    return lambda args: ()

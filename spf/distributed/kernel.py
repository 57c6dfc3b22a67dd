"""The kernel of a row-distributed computation (API.md §19): ``comp.compile(target="mpi")``.

Every rank calls ``k(comm=comm, owner=owner, **local_args)`` with its rows. A call

1. checks this rank's arguments (a call with the same arrays and numbers as the rank's last
   one reuses that call's checks and C arguments) and agrees with the other ranks before
   any result is kept (a status and hashes of the computation, the global extents and the
   owner array, :mod:`spf.distributed.arguments`): a bad argument on one rank, a different
   computation or different global sizes raise :class:`~spf.errors.ArgumentError` on
   *every* rank instead of a deadlock. The first call on a communicator agrees with a
   blocking ``MPI_Allreduce``; once a call returned on every rank the communicator is armed
   and the agreement travels with the exchange, without a blocking collective
   (:mod:`spf.distributed.protocol`);
2. when any rank's index arrays changed (an XXH3 checksum with ``check=True``; sizes and
   addresses with ``check=False``), runs the inspector on every rank and builds the exchange
   plans (:mod:`spf.distributed.plan`), once per index-array content;
3. runs the generated executor (:mod:`spf.distributed.executor`).
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cffi
import numpy as np

from spf.codegen.program import c_function_name, signature
from spf.distributed import prefix, protocol, remembered
from spf.distributed.analysis import analyse
from spf.distributed.arguments import (
    AGREEMENT,
    agree,
    agreed,
    array,
    crc,
    flags,
    no_overlap,
    nonempty,
    owner_crc,
    scalar,
)
from spf.distributed.derived import (
    HALO,
    far_name,
    inspector_computation,
    local_computation,
    mark_name,
    near_name,
)
from spf.distributed.executor import executor_args, executor_source, keep_size, prototype
from spf.distributed.plan import ExchangePlan, exchange_plan, runs
from spf.distributed.remembered import Generated
from spf.distributed.window import Window, shifted, window
from spf.errors import ArgumentError, CodegenError, SpfError
from spf.mpi import Partition

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

    from spf.codegen.signature import Arg
    from spf.codegen.unit import TranslationUnit
    from spf.distributed.analysis import Layout
    from spf.distributed.distribution import Distribution
    from spf.ir import ComputationIR


@dataclass
class _Plan:
    key: tuple[Any, ...]
    rows: int
    plans: dict[str, ExchangePlan]
    renumbered: dict[str, np.ndarray]
    buffers: dict[str, tuple[np.ndarray, np.ndarray]]
    """Per exchanged vector: (compact buffer: own entries then ghosts, send buffer)."""
    inner: np.ndarray
    outer: np.ndarray
    near: dict[str, np.ndarray]
    """Per ghost-read vector: ``[lo, hi)`` pairs of local indices covering the rank's entries
    that rows with ghosts touch, the only ones copied into its compact buffer
    (:meth:`ExchangePlan.near`)."""
    split: np.ndarray | None = None
    """Per row: its first iteration that reads a ghost (:mod:`spf.distributed.prefix`)."""
    template: list[Any] | None = None
    keep: list[np.ndarray] = field(default_factory=list)
    """The arrays the template's pointers point into (kept alive with the plan)."""
    windows: dict[str, Window] = field(default_factory=dict)
    """Per vector read at the loop variable plus an index array (:mod:`.window`)."""
    params: dict[str, int] = field(default_factory=dict)
    """Parameters the local function gets other values of (a window's extent)."""


class DistributedKernel:
    """A compiled row-distributed computation (module docstring).

    ``comp`` is the computation's IR (``comp.ir``). ``source`` is the executor's C + MPI
    translation unit, ``inspector`` the generated inspector (a
    :class:`~spf.ir.ComputationIR`; ``spf.Computation.from_ir`` makes it a computation),
    ``layout`` what the analysis found (ghost reads, remote writes, reductions).
    ``build=False`` stops after printing the source (``comp.codegen("mpi")``: no ``mpicc``,
    no mpi4py).
    """

    def __init__(
        self,
        comp: ComputationIR,
        dist: Distribution,
        name: str | None = None,
        check: bool = True,
        *,
        openmp: bool = True,
        cflags: Sequence[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        build: bool = True,
    ) -> None:
        self.distribution = dist
        self.name = c_function_name(name or comp.name)
        self._cflags, self._cache_dir, self._openmp = cflags, cache_dir, openmp
        self._entry: str | None = None
        """The key of its remembered entry (:mod:`spf.distributed.remembered`), None when
        not remembered (``build=False``, or no MPI compiler)."""
        # a rank making an entry another is making waits for it, then loads it (_recall)
        with contextlib.ExitStack() as making:
            self._construct(comp, check, build, making)

    def _construct(
        self,
        comp: ComputationIR,
        check: bool,
        build: bool,
        making: contextlib.ExitStack[Any],
    ) -> None:
        """The construction ``__init__`` runs, ``making`` holding the remembered entry's
        lock when this process makes the entry (:meth:`_recall`)."""
        dist = self.distribution
        recalled = self._recall(comp, check, making) if build else None
        generated = (
            recalled.generated if recalled is not None else _generate(comp, dist, self.name, check)
        )
        self._generated = generated
        self._library_key = None if recalled is None else recalled.library_key
        self.layout: Layout = generated.layout
        self.local = generated.local
        self.inspector = generated.inspector
        self._local_sig = generated.local_sig
        self._split: prefix.Lowered | None = generated.split
        self.source = generated.source
        self._args = list(generated.args)
        self._written = frozenset(
            a.name for a in self._local_sig.args if a.kind == "data" and not a.const
        )
        """The arrays the computation writes (the executor's own compact buffers of the
        exchanged vectors are not the caller's: a vector only read, ``x``, may be read-only)."""
        self._fn: Any = None
        self._cast: Any = None
        self._ffi: cffi.FFI | None = None
        self.path: Path = Path()
        self.command = ""
        self.compiler_output = ""
        self.arguments: tuple[Arg, ...] = tuple(self._args)
        self._ran = False
        self._inspector_kernel: Any = None
        self._plan: _Plan | None = None
        self._last: dict[str, int] = {}
        self._last_call: _Call | None = None
        self._top = np.zeros(AGREEMENT + 1, dtype=np.int64)
        """The agreement's verdict, then each rank's integers, then the OpenMP team of the
        call (:attr:`last_threads`; the executor's ``spf_top``: ``(P + 1) x AGREEMENT + 1``,
        ``(P + 1) x AGREEMENT``, made for the communicator's size at a call)."""
        self._top_ptr: Any = None
        self._keep = np.zeros(max(8, keep_size(self._local_sig, self.layout)), dtype=np.uint8)
        """The accumulators a call saves at the verdict point (the executor's ``spf_keep``)."""
        self._keep_ptr: Any = None
        self._parallel = self._openmp and generated.parallel  # the executor adds none
        self._hash = hashlib.sha256(self.source.encode()).hexdigest()[:16]
        if build:  # codegen("mpi") only prints: no mpicc, no mpi4py
            self._load()
            if self.layout.accesses:
                # built with the executor, not at the first call: a program whose rank 0
                # compiles before the others (which then load both from the cache) or that
                # compiles before timing its first call finds no compiler run in the call
                self._inspector()

    def __repr__(self) -> str:
        return f"<DistributedKernel {self.name} over loop {self.layout.loop}>"

    @property
    def signature(self) -> str:
        return prototype(self.name, self._local_sig, self.layout, split=self._split)

    @property
    def last_threads(self) -> int | None:
        """The OpenMP threads the last call ran on (1 without a parallel region; None
        before the first call that returned). The executor reads the team
        (``omp_get_max_threads``) into its scratch array, which costs nothing; asking OpenMP
        from Python after a large product cost 13-17 us with the interpreter's caches cold."""
        if not self._ran:
            return None
        return int(self._top[-1]) if self._parallel else 1

    def exchange_stats(self) -> dict[str, int]:
        """This rank's communication in the last call: ``messages_sent``, ``entries_sent``,
        ``messages_received``, ``entries_received`` (point to point), ``allreduces`` (the
        sums of accumulated scalars) and ``blocking_agreement`` (1 when the call agreed with
        the other ranks through a blocking collective, a first call; 0 when the agreement
        travelled with the exchange, :mod:`spf.distributed.protocol`)."""
        if not self._last:
            # generic: a call out of order, not a bad argument; no class of API.md §1 names it
            raise SpfError(f"{self.name}: exchange_stats() before the first call")
        return dict(self._last)

    # ------------------------------------------------------------------ loading

    def _build_command(self) -> tuple[list[str], list[str]]:
        """The MPI compiler and the flags the executor is built with."""
        from spf.runtime.build import compile_flags, compiler_argv
        from spf.runtime.mpi import MPICC

        return compiler_argv(MPICC, "c"), compile_flags(openmp=self._openmp, cflags=self._cflags)

    def _recall(
        self, comp: ComputationIR, check: bool, making: contextlib.ExitStack[Any]
    ) -> remembered.Remembered | None:
        """The remembered construction of this state, if any (keyed in :attr:`_entry`).
        On a miss it takes the entry's lock into ``making`` (held until the construction is
        stored) and looks again: the ranks of a job compiling one kernel at once make it
        once, the others loading what the first stored instead of generating it too."""
        from spf.runtime.cache import file_lock
        from spf.runtime.warm import entry_path

        argv, flags = self._build_command()
        self._entry = remembered.key(comp, self.distribution, self.name, check, argv=argv,
                                     flags=flags)  # fmt: skip
        if self._entry is None:
            return None
        found = remembered.load(self._entry, self._cache_dir)
        if found is None:
            lock = entry_path(self._entry, self._cache_dir).with_suffix(".lock")
            making.enter_context(file_lock(lock))
            found = remembered.load(self._entry, self._cache_dir)
        return found

    def _load(self) -> None:
        from spf.runtime.build import build
        from spf.runtime.mpi import MPICC, comm_ctype
        from spf.runtime.warm import cached_build, library_key

        argv, flags = self._build_command()
        built = None
        if self._library_key is not None:  # remembered: the library it names, no mpicc run
            built = cached_build(self.name, self.source, self._library_key, argv=argv,
                                 flags=flags, cache_dir=self._cache_dir)  # fmt: skip
        if built is None:
            built = build(
                self.source,
                name=self.name,
                openmp=self._openmp,
                cflags=self._cflags,
                cache_dir=self._cache_dir,
                compiler=MPICC,
            )
            if self._entry is not None:
                made = library_key(self.source, argv=argv, flags=flags)
                remembered.store(self._entry, self._generated, made, self._cache_dir)
        ffi = cffi.FFI()
        decl = prototype(
            self.name, self._local_sig, self.layout, comm_ctype(), restrict=False, split=self._split
        )
        ffi.cdef(decl + ";")
        lib = ffi.dlopen(str(built.path))
        self._ffi, self._fn, self._cast = ffi, getattr(lib, self.name), ffi.cast
        self._keep_ptr = ffi.cast("void *", self._keep.ctypes.data)
        self.path, self.command, self.compiler_output = built.path, built.command, built.stderr

    def _inspector(self) -> Any:
        """The compiled inspector (a :class:`spf.runtime.Kernel`, built with the executor)."""
        if self._inspector_kernel is None:
            from spf.runtime.compile import compile_kernel

            self._inspector_kernel = compile_kernel(
                self.inspector, cache_dir=None if self._cache_dir is None else str(self._cache_dir)
            )
        return self._inspector_kernel

    # ------------------------------------------------------------------ calling

    def __call__(
        self,
        *positional: object,
        comm: Any = None,
        owner: Any = None,
        check: bool = True,
        **args: Any,
    ) -> None:
        """Run on this rank's arrays (collective: every rank of ``comm`` calls it)."""
        last = self._last_call
        if (
            last is not None
            and comm is last.comm
            and owner is None
            and not positional
            and check == last.check
            and last.plan is self._plan
            and last.epoch == protocol.epoch()
            and last.handleof(comm) == last.handle
            and not last.life.freed
            and last.repeats(args)
        ):
            # the rank's last call again, on a communicator still armed with this kernel
            # and plan (no rank of this process armed or disarmed any since): its checks
            # hold; the agreement travels with the exchange (mode 1), so the call has no
            # blocking collective of its own
            now = self._plan_key(last.bound, None, True, last.handle) if check else last.key
            if now == last.key:
                self._last["blocking_agreement"] = 0
                if self._fn(*last.fast) == 0:
                    return
                repeat: tuple[Any, ...] = (None, self._hash, last.extents, None, False)
                self._settle(comm, last.handle, repeat, last.bound, now, self._top, True, last.same)
                return
        self._call(positional, comm, owner, check, args)

    def _call(
        self, positional: tuple[object, ...], comm: Any, owner: Any, check: bool, args: Any
    ) -> None:
        """A call that is not a plain repeat of the last one (:meth:`__call__`)."""
        from spf.runtime.mpi import comm_handle

        if check is not True and check is not False:  # as a serial kernel refuses it
            raise ArgumentError(f"{self.name}: check must be True or False, got {check!r}")

        handle = comm_handle(comm, self.name)
        armed = protocol.armed(comm)
        last = self._last_call
        if last is not None and (
            positional
            or owner is not None
            or check != last.check
            or comm is not last.comm
            or last.handle != handle
            or not last.repeats(args)
        ):
            last = self._last_call = None
        same = self._call_key(args, owner, check, comm)
        problem: str | None = None
        bound: tuple[dict[str, int], dict[str, np.ndarray], dict[str, Partition]] | None = None
        key: tuple[Any, ...] | None = None
        extents = None
        if last is not None:
            bound, extents = last.bound, last.extents  # the same arrays and values: checked then
            key = self._plan_key(bound, owner, check, handle) if check else last.key
        elif positional:  # refused on every rank through the agreement, as a bad argument is
            problem = (
                f"{self.name}: pass arguments by name (comm=..., y=..., ...), not positionally"
            )
        else:
            try:
                bound = self._bind(args, owner, comm.Get_rank(), comm.Get_size())
            except SpfError as err:
                problem = str(err)
            if bound is not None:
                key, extents = self._plan_key(bound, owner, check, handle), self._globals(bound[0])
        stale = self._plan is None or self._plan.key != key
        crc = None if bound is None else owner_crc(owner)
        mine = (problem, self._hash, extents, crc, stale)
        top: np.ndarray | None = None
        resumed = False
        if armed is not None:
            if armed.kernel is self and armed.plan is self._plan and bound and not stale:
                agreement = flags(mine)
                rc, cargs = self._run(handle, bound, 1, agreement)
                if rc == 0:
                    self._last["blocking_agreement"] = 0
                    self._remember(same, bound, handle, cargs, key, extents)
                    self._ran = True
                    return
                top, resumed = self._top, True
            else:  # another kernel, a bad argument or a stale plan: match the armed exchange
                top = protocol.drain(comm, armed, flags(mine, drained=True))
        self._settle(comm, handle, mine, bound, key, top, resumed, same)

    def _settle(
        self,
        comm: Any,
        handle: int,
        mine: tuple[Any, ...],
        bound: tuple[dict[str, int], dict[str, np.ndarray], dict[str, Partition]] | None,
        key: tuple[Any, ...] | None,
        top: np.ndarray | None,
        resumed: bool,
        same: _Same | None,
    ) -> None:
        """A first call (``top`` None: the blocking agreement), or one whose verdict said
        that some rank's call differs: the same error on every rank, or a new plan on every
        rank when any is stale; then the run (``resumed``: this rank ran its rows without
        ghosts before the verdict, so the executor resumes after them)."""
        try:
            stale = agreed(comm, mine, self.name, top)
            assert bound is not None
            assert key is not None
            params, arrays, parts = bound
            if stale:
                carry = self._plan if resumed else None
                self._plan = None
                self._plan = self._make_plan(comm, params, arrays, parts, key, carry)
        except SpfError:
            protocol.disarm(comm)
            self._last_call = None
            raise
        _, cargs = self._run(handle, bound, 2 if resumed else 0)
        self._last["blocking_agreement"] = int(top is None)
        assert self._plan is not None
        protocol.arm(comm, self, self._plan)
        self._remember(same, bound, handle, cargs, key, mine[2])
        self._ran = True

    def _remember(
        self,
        same: _Same | None,
        bound: tuple[dict[str, int], dict[str, np.ndarray], dict[str, Partition]],
        handle: int,
        cargs: list[Any],
        key: tuple[Any, ...] | None,
        extents: tuple[tuple[str, int], ...] | None,
    ) -> None:
        """Keep a call that returned on a communicator armed with this kernel and its plan,
        so that a repeat of it (mode 1) skips the checks."""
        from mpi4py import MPI

        from spf.runtime.mpi import comm_life

        if same is None or extents is None or key is None or self._plan is None:
            self._last_call = None
            return
        ints = flags((None, self._hash, extents, None, False))
        fast = [cargs[0], 1, self._cast("void *", ints.ctypes.data), *cargs[3:]]
        self._last_call = _Call(
            same.entries, same.check, same.comm, bound, self._plan, handle, fast, ints, key,
            extents, protocol.epoch(), MPI._handleof, comm_life(same.comm),
        )  # fmt: skip

    def _call_key(self, args: dict[str, Any], owner: Any, check: bool, comm: Any) -> _Same | None:
        """What makes a call the same as the last checked one (:meth:`_Call.repeats`):
        ``check``, the communicator object, each argument object and, for an array, its
        shape, strides, dtype and, when the kernel writes it, its writeability (numbers by
        type and value). None with an owner array (its content partitions the rows). The
        last call keeps its arrays alive, so the same object is the same array, and numpy
        moves no living array's buffer while another reference holds it (``resize`` refuses;
        ``data`` cannot be assigned); ``__array_interface__`` would cost ~6 us an array."""
        if owner is not None:
            return None
        out: list[_Entry] = []
        for name, value in args.items():
            if isinstance(value, np.ndarray):
                written = name in self._written
                out.append((name, value, value.shape, value.strides, value.dtype, written))
            elif isinstance(value, int | float | np.number):
                out.append((name, value, None, None, type(value), False))
            else:
                return None
        return _Same(tuple(out), check, comm)

    def _bind(
        self, args: dict[str, Any], owner: Any, rank: int, size: int
    ) -> tuple[dict[str, int], dict[str, np.ndarray], dict[str, Partition]]:
        """This rank's parameters and arrays, checked; the partition of each extent."""
        known = {a.name: a for a in self._args}
        unknown = sorted(set(args) - set(known))
        if unknown:
            raise ArgumentError(
                f"{self.name}: unknown argument(s) {', '.join(unknown)}; it takes comm, owner, "
                f"check and {', '.join(known)}"
            )
        arrays: dict[str, np.ndarray] = {}
        for a in self._args:
            if a.kind == "param":
                continue
            if a.name not in args:
                raise ArgumentError(f"{self.name}: missing argument {a.name} (this rank's array)")
            arrays[a.name] = array(self.name, a, args[a.name], a.name in self._written)
        no_overlap(self.name, arrays, self._written)
        params = self._params(args, arrays)
        parts = self._partitions(params, owner, size)
        for name, extent in self.layout.extent.items():
            want = parts[extent].count(rank) * self.layout.block.get(name, 1)
            have = arrays[name].shape[0]
            if have != want:
                raise ArgumentError(
                    f"{self.name}: this rank (rank {rank}) owns {want} of the {params[extent]} "
                    f"entries of {name} ({extent} = {params[extent]}, "
                    f"{'owner array' if owner is not None else 'blocks'} over {size} ranks) but "
                    f"its {name} has {have}; pass its own entries (spf.mpi.scatter_csr)"
                )
        rows = self._rows(params, parts, rank)
        self._check_local_shapes(arrays, self._local_params(params, rows))
        return params, arrays, parts

    def _check_local_shapes(self, arrays: dict[str, np.ndarray], local: dict[str, Any]) -> None:
        """Rank-local arrays (``A`` of the rank's ``NNZ``) and constant-shaped ones have the
        declared extents, with this rank's counts for the loop's parameters."""
        for a in self._args:
            if a.kind != "data" or a.name in self.layout.extent or not a.shape:
                continue
            for d, extent in enumerate(a.shape):
                want = local.get(extent) if isinstance(extent, str) else extent
                have = arrays[a.name].shape[d]
                if isinstance(want, int) and have != want:
                    raise ArgumentError(
                        f"{self.name}: {a.name} has {have} entries in dimension {d} but "
                        f"{extent} = {want} on this rank; pass this rank's part (as "
                        "spf.mpi.scatter_csr gives it)"
                    )

    def _params(self, args: dict[str, Any], arrays: dict[str, np.ndarray]) -> dict[str, Any]:
        params: dict[str, Any] = {}
        for a in self._args:
            if a.kind != "param":
                continue
            if a.name in args:
                params[a.name] = scalar(self.name, a, args[a.name])
            else:
                params[a.name] = self._derive(a.name, arrays)
        return params

    def _derive(self, param: str, arrays: dict[str, np.ndarray]) -> int:
        """A parameter left out: the extent of a rank-local array declared with it."""
        distributed = set(self.layout.extent)
        for a in self._args:
            if a.kind == "param" or a.name in distributed or not a.shape:
                continue
            if a.shape[0] == param and a.name in arrays:
                return int(arrays[a.name].shape[0])
        raise ArgumentError(
            f"{self.name}: missing parameter {param}; pass it (the global extent of a "
            "distributed vector, or this rank's count)"
        )

    def _partitions(self, params: dict[str, int], owner: Any, size: int) -> dict[str, Partition]:
        extents = sorted({*self.layout.extent.values(), *self._row_extent()})
        if owner is None:
            if self.distribution.owner == "array":
                raise ArgumentError(
                    f"{self.name}: distribute_rows(owner='array') needs owner=... at each call "
                    "(the rank of each row)"
                )
            return {e: Partition(params[e], size) for e in extents}
        own = np.asarray(owner)
        if own.ndim != 1 or own.dtype.kind not in "iu":
            raise ArgumentError(
                f"{self.name}: owner must be a 1-D integer array (the rank of each row), got "
                f"{own.dtype} with shape {own.shape}"
            )
        for e in extents:
            if own.shape[0] != params[e]:
                raise ArgumentError(
                    f"{self.name}: owner has {own.shape[0]} entries but {e} = {params[e]}; an "
                    "owner array partitions every distributed extent, so they must all equal "
                    "its length"
                )
        if own.size and (int(own.min()) < 0 or int(own.max()) >= size):
            bad = int(np.flatnonzero((own < 0) | (own >= size))[0])
            raise ArgumentError(
                f"{self.name}: owner is not a partition over {size} ranks: owner[{bad}] = "
                f"{int(own[bad])} is not a rank in 0..{size - 1}"
            )
        own64 = np.ascontiguousarray(own, dtype=np.int64)
        return {e: Partition(params[e], size, own64) for e in extents}

    def _row_extent(self) -> tuple[str, ...]:
        """The global extent the loop's iterations are split by: its bound, or the extent
        of a vector it indexes directly; none for a loop whose bound is no distributed
        vector's extent (COO's entries ``k < NNZ``): each rank runs the iterations it holds
        (its own ``NNZ``), and what they write into other ranks' entries goes to those."""
        bound = self.layout.bound
        if bound is not None:
            return (bound,) if bound in self.layout.extent.values() else ()
        return tuple(self.layout.extent[n] for n in self.layout.owned[:1])

    def _rows(self, params: dict[str, int], parts: dict[str, Partition], rank: int) -> int:
        """This rank's iterations of the distributed loop."""
        found = self._row_extent()
        if found:
            return parts[found[0]].count(rank)
        assert self.layout.bound is not None
        return int(params[self.layout.bound])

    def _globals(self, params: dict[str, int]) -> tuple[tuple[str, int], ...]:
        names = sorted({*self.layout.extent.values(), *self._row_extent()})
        return tuple((n, params[n]) for n in names)

    def _plan_key(self, bound: Any, owner: Any, check: bool, handle: int) -> tuple[Any, ...]:
        """What a plan is made of: the communicator (a plan made on another one numbers
        other ranks), the parameters, the index arrays (content or address) and the owner
        array."""
        params, arrays, _ = bound
        ufs = [a.name for a in self._args if a.kind == "uf"]
        if check:
            content = tuple(crc(arrays[u]) for u in ufs)
        else:
            content = tuple(arrays[u].__array_interface__["data"][0] for u in ufs)
        shapes = tuple(arrays[u].shape for u in ufs)
        return (handle, tuple(sorted(params.items())), shapes, content, owner_crc(owner))

    # ------------------------------------------------------------------ plan

    def _make_plan(
        self,
        comm: Any,
        params: dict[str, int],
        arrays: dict[str, np.ndarray],
        parts: dict[str, Partition],
        key: tuple[Any, ...],
        carry: _Plan | None = None,
    ) -> _Plan:
        """The plan (collective). ``carry``: the plan of a call that resumes after the
        verdict point; its remote-write buffers hold the sums its rows made before it (the
        rank's own index arrays are unchanged, so the new buffers have the same layout)."""
        lay = self.layout
        rank = comm.Get_rank()
        rows = self._rows(params, parts, rank)
        local = self._local_params(params, rows)
        problem = None
        insp: dict[str, np.ndarray] = {}
        try:
            insp = self._inspect(local, arrays, parts, rank, rows)
        except SpfError as err:
            problem = str(err)
        agree([(p, None, None, None, None) for p in comm.allgather(problem)], self.name)
        plans = {
            name: exchange_plan(comm, parts[lay.extent[name]], insp[mark_name(name)])
            for name in (*lay.ghost_reads, *lay.remote_writes)
        }
        renumbered: dict[str, np.ndarray] = {}
        windows = {
            x: window(plans[x], parts[lay.extent[x]], rank, arrays[x].dtype) for x in lay.shifted
        }
        for g in lay.accesses:
            if g.uf in renumbered:
                continue
            if g.shift:
                renumbered[g.uf] = shifted(arrays[g.uf], -windows[g.data].base)
                continue
            values = plans[g.data].renumber(parts[lay.extent[g.data]], rank, arrays[g.uf])
            renumbered[g.uf] = values.astype(arrays[g.uf].dtype)
        # a vector of blocks is renumbered by block (above), moved by entry
        plans = {x: ep.blocked(lay.block.get(x, 1)) for x, ep in plans.items()}
        buffers = {}
        for name, plan in plans.items():
            dtype = arrays[name].dtype
            size = plan.nown + plan.ghosts.size
            ext = np.zeros(max(size, windows[name].size if name in windows else 0), dtype=dtype)
            buffers[name] = (ext, np.zeros(max(1, int(plan.scnt.sum())), dtype=dtype))
            if carry is not None and name in lay.remote_writes:
                ext[:] = carry.buffers[name][0]
        halo = insp.get(HALO)
        if halo is not None and self._in_order():
            halo = np.ones_like(halo)  # every iteration after the wait, in loop order
            for x in lay.ghost_reads:
                insp[near_name(x)] = insp[mark_name(x)]
        inner, outer = runs(halo, rows)
        halo_rows = np.flatnonzero(halo[:rows]) if halo is not None else None  # outer rows
        near = {
            x: plans[x].near(
                parts[lay.extent[x]],
                rank,
                insp[near_name(x)],
                halo_rows if x in lay.rowwise else None,
            )
            * lay.block.get(x, 1)
            for x in lay.ghost_reads
        }
        split = None
        if self._split is not None:
            cut = self._split.split
            nown = plans[cut.data].nown // lay.block.get(cut.data, 1)  # renumbered by block
            split = prefix.split_points(arrays[cut.bound], renumbered[cut.uf], nown, outer, rows)
            if not prefix.worth(comm, arrays[cut.bound], split, outer):
                split = np.asarray(arrays[cut.bound][:rows]).copy()  # empty prefixes
        moved = {lay.extent[x]: params[lay.extent[x]] - w.base for x, w in windows.items()}
        made = _Plan(
            key, rows, plans, renumbered, buffers, inner, outer, near, split,
            windows=windows, params=moved,
        )  # fmt: skip
        # a plan keyed by the index arrays' addresses (check=False) keeps them alive: freed,
        # a new array could take the same address and find this plan (a wrong result)
        made.keep.extend(arrays[a.name] for a in self._args if a.kind == "uf")
        return made

    def _in_order(self) -> bool:
        """Whether a statement that reads ghosts also accumulates through an index array
        (COO's ``y(row(k)) += A(k) * x(col(k))``): then every iteration runs after the wait,
        in loop order, since running those without ghosts first would reorder the sums into
        one entry (a row's entries in CSR are one iteration of the row loop: never split)."""
        lay = self.layout
        reading = {g.stmt for g in lay.accesses if not g.write}
        return any(g.write and g.stmt in reading for g in lay.accesses)

    def _local_params(self, params: dict[str, int], rows: int) -> dict[str, int]:
        return {k: (rows if k in self.layout.row_params else v) for k, v in params.items()}

    def _inspect(
        self,
        params: dict[str, int],
        arrays: dict[str, np.ndarray],
        parts: dict[str, Partition],
        rank: int,
        rows: int,
    ) -> dict[str, np.ndarray]:
        lay = self.layout
        out: dict[str, np.ndarray] = {}
        if not lay.accesses:
            return out  # nothing read or written through an index array: no exchange
        kernel = self._inspector()
        for name in (*lay.ghost_reads, *lay.remote_writes):
            out[mark_name(name)] = np.zeros(params[lay.extent[name]], dtype=np.int8)
        for name in lay.ghost_reads:
            out[far_name(name)] = parts[lay.extent[name]].far(rank)
        for name in lay.ghost_reads:
            out[near_name(name)] = np.zeros(params[lay.extent[name]], dtype=np.int8)
        if lay.ghost_reads:
            out[HALO] = np.zeros(rows, dtype=np.int8)
        given = {a.name for a in self.inspector_args()}
        call = {k: v for k, v in {**params, **arrays}.items() if k in given}
        kernel(**call, **out)
        return out

    def inspector_args(self) -> tuple[Arg, ...]:
        return signature(self.inspector, self.inspector.name).args

    # ------------------------------------------------------------------ executor

    def _run(
        self,
        handle: int,
        bound: tuple[dict[str, int], dict[str, np.ndarray], dict[str, Partition]],
        mode: int,
        agreement: np.ndarray | None = None,
    ) -> tuple[int, list[Any]]:
        """Call the executor in ``mode`` (0: agreed before; 1: agree on ``agreement``
        during the call; 2: resume) on this call's arrays; its return value and the C
        arguments it was given."""
        plan = self._plan
        assert plan is not None
        params, arrays, parts = bound
        if plan.template is None:
            plan.template, stats = self._template(plan)
            self._last.update(stats)
        local = {**self._local_params(params, plan.rows), **plan.params}
        cast = self._cast
        assert self._ffi is not None
        agree = self._ffi.NULL if agreement is None else cast("void *", agreement.ctypes.data)
        size = next(iter(parts.values())).ranks
        if self._top.size != (size + 1) * AGREEMENT + 1:
            self._top = np.zeros((size + 1) * AGREEMENT + 1, dtype=np.int64)
            self._top_ptr = cast("void *", self._top.ctypes.data)
        cargs: list[Any] = [handle, mode, agree, self._top_ptr, self._keep_ptr, size]
        for item in plan.template:
            if isinstance(item, _UserArray):
                cargs.append(cast("void *", arrays[item.name].__array_interface__["data"][0]))
            elif isinstance(item, _Param):
                cargs.append(local[item.name])
            else:
                cargs.append(item)
        return int(self._fn(*cargs)), cargs

    def _template(self, plan: _Plan) -> tuple[list[Any], dict[str, int]]:
        """The executor's arguments after the communicator and ``spf_P``: the plan's
        pointers (made once), and placeholders for this call's arrays and parameters; and
        what one call exchanges."""
        ffi = self._ffi
        assert ffi is not None
        lay = self.layout
        keep = plan.keep

        def ptr(arr: np.ndarray) -> Any:
            keep.append(arr)
            return ffi.cast("void *", arr.ctypes.data)

        out: list[Any] = []
        sent = [0, 0, 0, 0]
        for name in (*lay.ghost_reads, *lay.remote_writes):
            ep = plan.plans[name]
            sbuf = plan.buffers[name][1]
            out += [ptr(ep.scnt), ptr(ep.sdsp), ptr(nonempty(ep.sidx))]
            out += [ptr(ep.rcnt), ptr(ep.rdsp), ep.nown, ptr(sbuf), _UserArray(name)]
            if name in lay.ghost_reads:
                out += [plan.near[name].size // 2, ptr(nonempty(plan.near[name]))]
                found = ep.send_runs()
                srun = np.zeros(0, dtype=np.int64) if found is None else found
                out += [-1 if found is None else srun.size // 2, ptr(nonempty(srun))]
            if name in plan.windows:
                w = plan.windows[name]
                out += [ptr(nonempty(w.gpos)), ptr(w.stage), w.own.size // 3, ptr(nonempty(w.own))]
            counts = ep.stats()
            if name in lay.remote_writes:  # the reverse exchange: ghosts go to their owners
                counts = (counts[2], counts[3], counts[0], counts[1])
            sent = [s + c for s, c in zip(sent, counts, strict=True)]
        for pairs in (plan.inner, plan.outer):
            out += [pairs.size // 2, ptr(nonempty(pairs))]
        if plan.split is not None:
            out.append(ptr(nonempty(plan.split)))
        for a in self._args:
            if a.kind == "param":
                out.append(_Param(a.name))
            elif a.name in plan.buffers:
                out.append(ptr(plan.buffers[a.name][0]))
            elif a.name in plan.renumbered:
                out.append(ptr(plan.renumbered[a.name]))
            else:
                out.append(_UserArray(a.name))
        stats = {
            "messages_sent": sent[0],
            "entries_sent": sent[1],
            "messages_received": sent[2],
            "entries_received": sent[3],
            "allreduces": len(lay.reductions),
        }
        return out, stats


_Entry = tuple[str, Any, Any, Any, Any, bool]
"""One argument of a call: its name, the object, and for an array its shape, strides,
dtype and whether the kernel writes it (a number: ``None, None``, its type, ``False``)."""


@dataclass(frozen=True)
class _Same:
    """What a call was made with (:meth:`DistributedKernel._call_key`)."""

    entries: tuple[_Entry, ...]
    check: bool
    comm: Any


@dataclass(frozen=True)
class _Call:
    """The last call that returned: what made it (``entries``, ``check``, ``comm``), its
    binding, the plan it ran with and the executor's arguments for a repeat. It keeps that
    call's arrays alive, so the same object is the same array."""

    entries: tuple[_Entry, ...]
    check: bool
    comm: Any
    bound: tuple[dict[str, int], dict[str, np.ndarray], dict[str, Partition]]
    plan: _Plan
    handle: int
    fast: list[Any]
    """The executor's arguments in mode 1, with this call's agreement integers."""
    agreement: np.ndarray
    """Those integers (:func:`spf.distributed.arguments.flags`; ``fast`` points into them)."""
    key: tuple[Any, ...]
    extents: tuple[tuple[str, int], ...]
    epoch: int
    """:func:`spf.distributed.protocol.epoch` after the call: while it is unchanged, no
    communicator of this process was armed or disarmed since, so ``comm`` (when it still has
    ``handle``: not freed) is still armed with this kernel and ``plan``."""
    handleof: Any
    """mpi4py's ``MPI._handleof``."""
    life: Any
    """The communicator's :class:`spf.runtime.mpi.CommLife` (freed through another
    reference: its handle is unchanged but dangling)."""

    @property
    def same(self) -> _Same:
        return _Same(self.entries, self.check, self.comm)

    def repeats(self, args: dict[str, Any]) -> bool:
        """Whether ``args`` are this call's: the same objects, arrays with the same shape,
        strides and dtype, still writeable where the kernel writes them; numbers of the
        same type and value. A loop over the few arguments, no tuple built: a repeated call
        of a large product runs with the interpreter's caches cold."""
        if len(args) != len(self.entries):
            return False
        for name, value, shape, strides, dtype, written in self.entries:
            now = args.get(name)
            if now is value:
                if shape is not None and (
                    now.shape != shape
                    or now.strides != strides
                    or now.dtype is not dtype
                    or (written and not now.flags.writeable)
                ):
                    return False
            elif shape is not None or type(now) is not dtype or now != value:
                return False
        return True


@dataclass(frozen=True)
class _UserArray:
    name: str


@dataclass(frozen=True)
class _Param:
    name: str


def _generate(comp: ComputationIR, dist: Distribution, name: str, check: bool) -> Generated:
    """Analyse ``comp`` distributed by ``dist`` and print the executor of C function
    ``name``: its rank-local function, the prefix split of rows with ghosts, the inspector."""
    layout = analyse(comp, dist)
    local = local_computation(comp, layout)
    local_sig = signature(local, f"{name}_local")
    for r in layout.reductions:
        shape = local_sig.arg(r).shape or ()
        if not all(isinstance(e, int) for e in shape):
            raise CodegenError(
                f"distribute_rows: {r} is accumulated over the distributed loop and summed "
                f"over the ranks, so its shape must be constant, got {shape}"
            )
    units = [_c_unit(local, f"{name}_local", check)]
    split: prefix.Lowered | None = None
    found = prefix.find(comp, layout)
    if found is not None:  # rows with ghosts run up to their first ghost before the wait
        split_comp = prefix.computation(comp, layout, found)
        fn = f"{name}_split"
        units.append(_c_unit(split_comp, fn, check))
        split = prefix.Lowered(found, signature(split_comp, fn), units[-1].source)
    source = executor_source(name, units[0].source, local_sig, layout, split)
    return Generated(
        layout=layout,
        local=local,
        inspector=inspector_computation(comp, layout),
        local_sig=local_sig,
        split=split,
        source=source,
        args=tuple(executor_args(local_sig, layout)),
        parallel=any(u.openmp for u in units),
    )


def _c_unit(ir: ComputationIR, name: str, check: bool) -> TranslationUnit:
    """``comp.codegen("c", name, check)`` with its record (:mod:`spf.codegen.unit`): the
    text of the executor's wavefront computation where ``ir`` has wavefront loops (their
    legality checked here, on the computation as scheduled)."""
    from spf.codegen import codegen_unit

    tagged = (t for s in ir.stmts for _, tags in s.tags for t in tags)
    if any(t.startswith("wavefront(") for t in tagged):
        from spf.analysis.executor import build_executor
        from spf.analysis.legality import check as check_legality

        if check:
            check_legality(ir)
        return codegen_unit(build_executor(ir, "c").ir, "c", name, check)
    return codegen_unit(ir, "c", name, check)


def compile_distributed(
    comp: ComputationIR,
    dist: Distribution,
    name: str | None = None,
    check: bool = True,
    **options: Any,
) -> DistributedKernel:
    """``comp.compile(target="mpi")`` of a computation with ``distribute_rows``."""
    allowed = {"openmp", "cflags", "cache_dir"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ArgumentError(
            f"compile(target='mpi'): unknown option(s) {', '.join(unknown)} for a "
            "row-distributed computation; it takes openmp, cflags and cache_dir"
        )
    return DistributedKernel(comp, dist, name, check, **options)


__all__ = ["DistributedKernel", "compile_distributed"]

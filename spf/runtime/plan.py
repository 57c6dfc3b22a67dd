"""Run-time inspection plans and the kernel of a computation with a wavefront loop.

``comp.compile()`` on a computation with a wavefront loop returns a
:class:`WavefrontKernel`: the compiled executor (:mod:`spf.analysis.executor`) plus the
compiled inspector stages (:mod:`spf.analysis.inspector`: levels, then the counting sort):
the inspector's pass with its counting sorts (shared by every later wavefront over the same
nodes) as one translation unit, and the executor, generated with them and compiled as
another when a call first runs it (:func:`compile_wavefront`).
``kernel.inspect(**index_arrays)`` runs the inspector and returns a :class:`Plan`, reusable
for every call with the same index arrays; ``kernel(..., plan=plan)`` runs the executor on
it, and without ``plan`` the kernel inspects inside the call. A plan records the sizes and an
XXH3 checksum of every array and parameter it inspected, and a call whose index arrays
differ from them raises ``ArgumentError`` instead of running in a wrong order.

A plan also records its ``strategy``: ``"wavefront"`` (the executor runs the levels) or
``"serial"`` (the loop runs in its original order on one thread, from a kernel compiled when
a call first runs a serial plan). ``inspect(strategy="auto")``, the default, takes
``"serial"`` when the levels are too narrow to pay for their barriers and scattered rows:
fewer than
:data:`MIN_ROWS_PER_LEVEL` iterations per level on average (2-D Poisson's ~500 rows per level
run ~2x slower by levels than in order on one thread, and a level's barrier costs as much as
a few hundred rows); ``strategy="wavefront"`` or ``"serial"`` forces one.

The levels executor runs *groups* (``plan.groupptr``): a level of at least
:data:`MIN_PARALLEL_ROWS` iterations is a group of its own, run in parallel; a maximal run of
consecutive narrower levels is one group that one thread runs in level order
(``plan.one_thread``), so the run costs one barrier instead of one per level.

A kernel of ``method="coarse"`` or ``"auto"`` (:mod:`spf.runtime.coarse`) plans *coarse
levels*: ``plan.coarse_levels`` of them, coarse level ``c`` running the parts
``coarse_ptr[c]:coarse_ptr[c+1]`` in parallel (one per thread), part ``p`` the rows
``coarse_order[part_ptr[p]:part_ptr[p+1]]`` in increasing order on one thread (in the
order listed, each row after its sources, when ``plan.interleaved``:
:mod:`spf.runtime.interleave`, :mod:`spf.runtime.chains`). Its ``strategy`` is
``"coarse"``, ``"levels"`` (the same executor on each level split into contiguous chunks)
or ``"serial"``;
``inspect(strategy="auto")`` (the default of an ``auto`` kernel; a ``coarse`` kernel plans
``"coarse"``) takes the one whose estimated time (:func:`spf.runtime.coarse.estimate`) is
least. A coarse plan that its kernel's inspector did
not build is checked against the dependences once, on its first call (a generated pass over
them, O(iterations + dependences)): every dependence must lie inside one part or go to a
later coarse level, otherwise ``ArgumentError``.

Whatever its strategy, a call whose OpenMP team is one thread (``OMP_NUM_THREADS=1``, or
the busy-machine cap of :mod:`spf.runtime.threads`) runs the serial kernel: on one thread the
executor only pays for its order (scattered rows) and barriers. The results are the same bits.

Like the other argument checks, the checksum (it reads every index, a few ms per 10M entries)
is taken with ``check=True`` only: ``check=False`` still compares sizes, dtypes and parameters.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import weakref
import zlib
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from spf.analysis.chain_pass import (
    CHAIN_HI,
    CHAIN_LEVEL,
    CHAIN_LO,
    CHAIN_NEED,
    CHAIN_NEED_LOW,
    CHAIN_PART,
    CHAIN_PARTS,
    CHAIN_SLOT,
)
from spf.analysis.coarse_inspector import (
    AFTER,
    BAD,
    BLOCK,
    BLOCK_FIXED,
    BLOCK_WIDE,
    CLEV,
    CLEV_FIXED,
    CLEV_WIDE,
    CLEVELS_N,
    CLEVPTR,
    CORDER,
    COUNT_WAYS,
    CSLOT,
    FIXED_NAMES,
    KHIST,
    KSTART,
    LAST_KEY,
    LAST_POS,
    LEVEL_OF,
    LEVELS_N,
    MAX_NODES,
    NCLEV,
    NCLEV_FIXED,
    NCLEV_WIDE,
    PART_OF,
    POS_OF,
    REACH_FIRST,
    REACH_GOT,
    REACH_LEN,
    REACH_N,
    REACH_SHARE,
    RUN_AT,
    RUN_FIRST,
    RUN_HI,
    RUN_LEN,
    RUN_LO,
    RUN_TOP,
    RUN_WORK,
    RUNS_N,
    SINK_KEY,
    SINK_POS,
    SORT_HI,
    SORT_LO,
    WIDE_NAMES,
    WORK,
    WSUM,
    count_entries,
)
from spf.analysis.inspector import LEVEL, NLEVELS, build_level_sort
from spf.errors import ArgumentError, CodegenError
from spf.runtime import chains, coarse, pipeline
from spf.runtime.binding import Binder
from spf.runtime.chain_scan import ChainScan, build_chain_scan, in_halves
from spf.runtime.checksum import (
    PREFETCH_BYTES,
    checksums,
    digest,
    prefetch,
    record_checksum,
    shared,
    submit,
    xxh3,
)
from spf.runtime.coarse_runs import Runs, find_runs, likely_runs, split_runs
from spf.runtime.copies import Copies, hash_work, pays, row_lengths
from spf.runtime.interleave import interleave, sink_inputs
from spf.runtime.kernel import Kernel
from spf.runtime.level_parts import level_parts
from spf.runtime.plan_call import ONE, ORDER, PARALLEL, SERIAL, TEAM, Quick, fired, remember
from spf.runtime.plan_levels import LEVELS_SEAL, NarrowLevels, seal, seal_of, widen
from spf.runtime.plan_look import HOT_CALL, LOOK_SAME
from spf.runtime.plan_method import install
from spf.runtime.plan_narrow import fits, narrowed
from spf.runtime.run_scan import RunScan, build_run_scan
from spf.runtime.threads import GOVERNOR, default_team, openmp_threads
from spf.sets.expr import compile_expr

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spf.analysis.executor import Executor, WavefrontNames
    from spf.analysis.inspector import WavefrontAnalysis
    from spf.analysis.local_copies import CopySpec
    from spf.ir import ComputationIR
    from spf.runtime.compile import DeferredUnit, UnitParts
    from spf.runtime.plan_prepared import PreparedPlanCall

_Made = TypeVar("_Made")
"""What :meth:`WavefrontKernel._once` makes: a kernel, or a kernel and its fixed C loops."""

MIN_ROWS_PER_LEVEL = 4096
"""``inspect(strategy="auto")`` runs the loop serially when the levels hold fewer iterations
than this on average."""

MIN_PARALLEL_ROWS = 64
"""Levels with fewer iterations are narrow: a run of them is one group that one thread runs.
A barrier of 2 threads costs ~0.25 us, tens of SpTRSV rows; on 2-D Poisson (forced to the
wavefront, 2 threads) 64 ran the executor ~11% faster than no groups, 256 ~9%."""

HALVES_WHEN_LATE = True
"""Whether the worker of a pass on two threads (:meth:`WavefrontKernel._split_pass`) leaves
the count of wide levels to both threads, in halves, when the caller's pass ended before
its own: the caller would otherwise wait for the worker's count on one thread. False (the
tests) makes the worker count them whenever they are wide. Either way the same starts and
slots."""

SPLIT_PASS = True
"""Whether a pass on two threads (:data:`SPLIT_NODES`) runs as two passes at once
(:meth:`WavefrontKernel._split_pass`: the levels and the work on a worker, the coarse levels
on the caller) rather than as the one joint pass on the caller, the stages after it in
halves either way. Each of the two reads one array at the far end of a dependence where
the joint pass reads two. Off from issue 31's seventh round, when the joint pass had lost
its store-forwarding stall (:func:`spf.analysis.coarse_inspector._crossing`) and the whole
inspection on two threads took 1.08-1.12 serial solves against 1.32-1.34 split on Poisson
1M, 2.68-2.77 against 3.30-3.50 on the 12-level triangle (load ~5); on again since the
chain join's pass got cheaper (2026-12-03, 2-core host idle, one process, the two modes
and a serial solve shuffled each round, 21-25 rounds, three runs): 1.84-1.94 solves split
against 2.43-2.59 joint on the 12-level triangle, 3.30-3.60 against 3.34-3.96 on Poisson
(docs/inspection.md). The same plans either way."""

SPLIT_NODES = 1 << 17
"""An unchecked coarse inspection of at least this many nodes on a team of two or more
threads (OpenMP's count now, lowered on a busy machine as a kernel call's is:
:meth:`spf.runtime.threads.ThreadGovernor.team`) runs its sort's stages in halves, one
on a worker thread, after its pass (the joint pass on the caller, or two passes at once with
:data:`SPLIT_PASS`: :meth:`WavefrontKernel._split_pass`); a smaller one stays on the
caller's thread, where
each of the ~6 hand-offs to a worker (tens of microseconds on a busy machine) would cost
more than the half of a stage it moves (~1-2 ns a node). A coarse inspection of at least
this many nodes (checked or not, any team) also sorts a one-kernel loop's run blocks by
their runs (:mod:`spf.runtime.coarse_runs`), whose stages are compiled with the split pass's
on first use; a smaller loop keeps the row sort compiled with the kernel (no further
compile, and no numpy call's fixed cost)."""
STRATEGIES = ("auto", "wavefront", "serial")
COARSE_STRATEGIES = ("auto", "coarse", "levels", "serial", "wavefront")
"""The strategies of a kernel of ``method="coarse"`` or ``"auto"`` (``"wavefront"``: the
executor, coarse or levels, whichever is estimated faster, never serial)."""

INSPECTOR = "<inspector>"
"""The entry of :attr:`Plan.inspected` that names the inspector which built the plan (a
checksum of its generated code): a plan of another computation's wavefront, even over the
same index arrays, orders by other dependences and is refused."""

Fingerprint = tuple[tuple[str, str, tuple[int, ...], int | None], ...]

"""(name, dtype, shape, checksum) of each inspected argument (a parameter: its value)."""


@dataclass(frozen=True, eq=False)
class Plan:
    """What the inspector found for one set of index arrays: ``levels`` (how many),
    ``level_of[i]`` (the level of iteration ``i``), ``levelptr`` (level ``l`` runs the
    iterations ``order[levelptr[l]:levelptr[l+1]]``) and ``order``; ``strategy`` is how the
    kernel runs with it: ``"wavefront"`` (by levels, in parallel) or ``"serial"`` (the loop in
    its original order, chosen when the levels are too narrow). The levels executor runs the
    groups ``order[groupptr[g]:groupptr[g+1]]`` for ``g < groups``, group ``g`` on one thread
    when ``one_thread[g]`` (a run of narrow levels), else in parallel (one wide level)."""

    loop: str
    levels: int
    level_of: np.ndarray
    levelptr: np.ndarray
    order: np.ndarray
    strategy: str
    groups: int
    groupptr: np.ndarray
    one_thread: np.ndarray
    inspected: Fingerprint = field(repr=False)
    coarse_levels: int = 0
    coarse_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    part_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    coarse_order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    copies: tuple[str, ...] = ()
    """The arrays whose rows the plan runs on part-ordered copies of
    (:mod:`spf.runtime.copies`; ``()``: it reads them where they lie)."""
    interleaved: bool = False
    """The parts run a free kernel's rows among the others' (:mod:`spf.runtime.interleave`),
    or a thread slot's parts of several coarse levels one after the other
    (:mod:`spf.runtime.chains`), so a part's rows need not increase: each runs after its
    sources in the part."""

    def __post_init__(self) -> None:
        """Hold the arrays read-only (editing ``plan.order`` would otherwise run a solve in a
        wrong order, silently) and check, in O(iterations), that they describe
        levels the executor can run: ``order`` a permutation, ``levelptr`` the level
        boundaries, each level's iterations at that level, each group a run of whole
        levels (one level unless run on one thread). A :class:`Plan` built from arrays
        (``dataclasses.replace(plan, order=...)``) gets the same checks."""
        for name in ("levels", "groups", "coarse_levels"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ArgumentError(f"Plan: {name} must be an int, got {value!r}")
            object.__setattr__(self, name, int(value))
        if not isinstance(self.interleaved, bool):
            raise ArgumentError(f"Plan: interleaved must be a bool, got {self.interleaved!r}")
        if not isinstance(self.copies, tuple) or not all(isinstance(c, str) for c in self.copies):
            raise ArgumentError(f"Plan: copies must be a tuple of names, got {self.copies!r}")
        for name in (
            "level_of",
            "levelptr",
            "order",
            "groupptr",
            "one_thread",
            "coarse_ptr",
            "part_ptr",
            "coarse_order",
        ):
            object.__setattr__(self, name, _frozen(name, getattr(self, name)))
        if not getattr(_INSPECTOR_OUTPUT, "active", False):
            _check_plan_arrays(self)

    @property
    def parts(self) -> int:
        """How many parts the coarse levels hold in all (0 without coarse levels)."""
        return int(self.coarse_ptr[self.coarse_levels]) if self.coarse_levels else 0

    @property
    def level_sizes(self) -> np.ndarray:
        """How many iterations each level runs."""
        return np.diff(self.levelptr[: self.levels + 1])

    @classmethod
    def _levels_later(
        cls,
        sort: Callable[[], LevelOrder],
        narrow: NarrowLevels | None = None,
        order32: np.ndarray | None = None,
        **fields: Any,
    ) -> Plan:
        """A plan of the inspector's arrays ``fields`` without the level order (``levelptr``,
        ``order``, ``groups``, ``groupptr``, ``one_thread``): ``sort()`` computes them when
        one of them is first read. A coarse plan runs on its parts alone, so its inspector
        skips the level sort (O(iterations) passes and ~5 arrays of them) unless someone
        asks for it. With ``narrow`` (the coarse pass's 32-bit levels) ``level_of`` is left
        out too, widened when first read; with ``order32`` (the fill's 32-bit order of the
        parts, read-only) ``coarse_order`` is, widened when first read (the executor reads
        ``order32`` itself: :data:`NARROW_ORDER`)."""
        plan = cls.__new__(cls)
        later = LEVEL_ORDER if order32 is None else (*LEVEL_ORDER, "coarse_order")
        for name, default in _defaults(cls):
            if name in fields:
                object.__setattr__(plan, name, fields[name])
            elif name not in later and default is not None:
                object.__setattr__(plan, name, default())
        object.__setattr__(plan, "_sort_levels", sort)
        if narrow is not None:
            object.__setattr__(plan, NARROW, narrow)
        if order32 is not None:
            object.__setattr__(plan, NARROW_ORDER, order32)
        return plan

    if not TYPE_CHECKING:  # hidden from mypy, which would take any attribute name as Any

        def __getattr__(self, name: str) -> Any:
            """The level order of a plan built without it (:meth:`_levels_later`), sorted
            on first use, and its ``level_of`` widened on first use; only called for
            attributes that are not set."""
            if name == "level_of" and NARROW in self.__dict__:
                with _SORT_LOCK:
                    if name not in self.__dict__:
                        object.__setattr__(self, name, self.__dict__[NARROW].wide())
                return self.__dict__[name]
            if name == "coarse_order" and NARROW_ORDER in self.__dict__:
                with _ORDER_LOCK:  # not _SORT_LOCK, which a call may hold
                    if name not in self.__dict__:
                        wide = self.__dict__[NARROW_ORDER].astype(np.int64)
                        wide.setflags(write=False)
                        object.__setattr__(self, name, wide)
                return self.__dict__[name]
            sort = self.__dict__.get("_sort_levels") if name in LEVEL_ORDER else None
            if sort is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            with _SORT_LOCK:
                if name not in self.__dict__:
                    for field_name, value in zip(LEVEL_ORDER, sort(), strict=True):
                        object.__setattr__(self, field_name, value)
                    self.__dict__.pop("_sort_levels", None)  # the kernel it held is let go
            return self.__dict__[name]

    def __getstate__(self) -> dict[str, Any]:
        """The fields for pickle and copy, the level order sorted and the levels and the
        order of the parts widened first if they were left."""
        for name in ("level_of", *LEVEL_ORDER, "coarse_order"):
            getattr(self, name)
        hidden = (NARROW, NARROW_ORDER, IN_ORDER)
        return {k: v for k, v in self.__dict__.items() if k not in hidden}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A plan read back by pickle or copied by ``copy``: its arrays held read-only and
        checked as a plan built from arrays is (:meth:`__post_init__`). Without it a plan
        read back held writeable arrays that no check had seen: one edited (an order entry
        out of range) crashed an unchecked levels call and hung a checked p2p one."""
        self.__dict__.update(state)
        self.__post_init__()

    def __repr__(self) -> str:
        return (
            f"Plan(loop={self.loop!r}, levels={self.levels}, iterations={len(self.level_of)}, "
            f"largest level={int(self.level_sizes.max()) if self.levels else 0}, "
            f"groups={self.groups}, coarse_levels={self.coarse_levels}, "
            f"strategy={self.strategy!r}"
            + (f", part-ordered copies of {', '.join(self.copies)})" if self.copies else ")")
        )


_DEFAULTS: dict[type[Plan], tuple[tuple[str, Callable[[], Any] | None], ...]] = {}


def _defaults(cls: type[Plan]) -> tuple[tuple[str, Callable[[], Any] | None], ...]:
    """Each field of ``cls`` with its default factory (None without one): what
    :meth:`Plan._levels_later` sets (looked up once per class, not on each inspection)."""
    if cls not in _DEFAULTS:
        _DEFAULTS[cls] = tuple(
            (spec.name, spec.default_factory if callable(spec.default_factory) else None)
            for spec in dataclasses.fields(cls)
        )
    return _DEFAULTS[cls]


LEVEL_ORDER = ("levelptr", "order", "groups", "groupptr", "one_thread")
"""The fields of a :class:`Plan` that an inspector may leave to be sorted on first use."""
NARROW = "_narrow_levels"
"""The attribute of a plan holding its 32-bit levels (:class:`NarrowLevels`) until
``level_of`` is first read."""
NARROW_ORDER = "_narrow_order"
"""The attribute of a plan of parts sorted by their runs holding the 32-bit order of the
parts that the generated fill wrote (read-only): what the executor reads (its plan arrays
are 32-bit: :mod:`spf.runtime.plan_narrow`, which passes it as it is) and the copies are
built from; ``coarse_order``, the plan's public 64-bit field, is widened from it only when
a caller reads it (the executor never does). On Poisson 1M the fill writes 4 MB fewer and
the plan's first call copies nothing to narrow it."""
IN_ORDER = "_in_order"
"""The attribute of a plan of kernels fused into one loop (of at least
:data:`spf.runtime.coarse.IN_ORDER_NODES` nodes) holding the order one thread runs its
nodes in (a :class:`spf.runtime.coarse.Later`, sorted on first use by each node's
:data:`~spf.analysis.coarse_inspector.AFTER`: every first-kernel row followed by the later
kernels' rows it completes), set by its inspector: what a ``"serial"`` plan runs, and any
other on a team of one thread. Not pickled (a plan read back runs the serial kernels)."""
LevelOrder = tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]
_SORT_LOCK = threading.Lock()
_ORDER_LOCK = threading.Lock()
"""Held while a plan's ``coarse_order`` is widened from :data:`NARROW_ORDER`."""

_INSPECTOR_OUTPUT = threading.local()
"""``active`` while :meth:`WavefrontKernel.inspect` builds a :class:`Plan` from what its
generated stages computed: consistent by construction (the tests check that they are), so
the O(iterations) checks run only on plans built from other arrays."""


def _frozen(name: str, value: object) -> np.ndarray:
    """``value``, a 1-d integer array, as a read-only int64 array: itself when it already is
    one (the inspector's own arrays, or another plan's), else a copy that no one else can
    write (``ArgumentError`` for anything but a 1-d integer array)."""
    arr = np.asarray(value)
    if arr.ndim != 1 or not (arr.dtype.kind in "iu" or arr.size == 0):
        raise ArgumentError(
            f"Plan: {name} must be a 1-d integer array, got {arr.dtype} of shape {arr.shape}"
        )
    if arr.dtype == np.int64 and arr.flags.c_contiguous and not arr.flags.writeable:
        return arr
    out = arr.astype(np.int64, copy=True).view()
    out.setflags(write=False)
    return out


def _read_only(*arrays: np.ndarray) -> None:
    """Make the inspector's fresh arrays read-only (a :class:`Plan` then holds them as
    they are, without copies)."""
    for a in arrays:
        a.setflags(write=False)


def _check_plan_arrays(plan: Plan) -> None:
    """``ArgumentError`` unless ``plan``'s arrays are consistent (O(iterations))."""
    n, levels = len(plan.order), plan.levels

    def bad(what: str) -> ArgumentError:
        return ArgumentError(
            f"Plan for loop {plan.loop!r}: {what}; build plans with kernel.inspect(...)"
        )

    if plan.strategy not in (*STRATEGIES[1:], *COARSE_STRATEGIES[1:]):
        raise bad(
            f"strategy must be 'wavefront', 'coarse', 'levels' or 'serial', got {plan.strategy!r}"
        )
    if len(plan.level_of) != n:
        raise bad(f"level_of has {len(plan.level_of)} entries, not {n}")
    if not (0 < levels <= n or levels == n == 0):
        raise bad(f"levels = {levels!r} is not between 1 and the {n} iterations")
    _check_lengths(bad, (("levelptr", plan.levelptr, levels + 1),))
    if n and (plan.order.min() < 0 or plan.order.max() >= n):
        raise bad(f"order holds a value outside 0 .. {n - 1}")
    seen = np.zeros(n, dtype=np.bool_)
    seen[plan.order] = True  # n values in 0 .. n - 1: all seen iff none repeats
    if not seen.all():
        raise bad("order is not a permutation (an iteration appears twice)")
    ptr = plan.levelptr[: levels + 1]
    if ptr[0] != 0 or ptr[-1] != n or (levels and np.diff(ptr).min() < 1):
        raise bad(f"levelptr[:levels + 1] must rise from 0 to {n}, each level non-empty")
    sizes = np.diff(ptr)
    if n and not np.array_equal(plan.level_of[plan.order], np.repeat(np.arange(levels), sizes)):
        raise bad("order lists an iteration outside its level (level_of disagrees)")
    _check_groups(plan, ptr, bad)
    if plan.strategy in ("coarse", "levels") or plan.coarse_levels:
        _check_coarse(plan, bad)


def _check_coarse(plan: Plan, bad: Callable[[str], ArgumentError]) -> None:
    """The coarse levels' arrays describe non-empty parts of a permutation, each part's rows
    increasing unless the plan is ``interleaved`` (O(iterations)); the dependences are
    checked by the kernel's call."""
    n, levels, order = len(plan.order), plan.coarse_levels, plan.coarse_order
    if len(order) != n:
        raise bad(f"coarse_order has {len(order)} entries, not {n}")
    if not (0 < levels <= n or levels == n == 0):
        raise bad(f"coarse_levels = {levels!r} is not between 1 and the {n} iterations")
    _check_lengths(bad, (("coarse_ptr", plan.coarse_ptr, levels + 1),))
    if n and (order.min() < 0 or order.max() >= n):
        raise bad(f"coarse_order holds a value outside 0 .. {n - 1}")
    seen = np.zeros(n, dtype=np.bool_)
    seen[order] = True
    if not seen.all():
        raise bad("coarse_order is not a permutation (an iteration appears twice)")
    cptr = plan.coarse_ptr[: levels + 1]
    if levels and (cptr[0] != 0 or np.diff(cptr).min() < 1 or cptr[-1] > n):
        raise bad("coarse_ptr[:coarse_levels + 1] must rise from 0, each coarse level non-empty")
    parts = int(cptr[-1]) if levels else 0
    _check_lengths(bad, (("part_ptr", plan.part_ptr, parts + 1),))
    pptr = plan.part_ptr[: parts + 1]
    if parts and (pptr[0] != 0 or pptr[-1] != n or np.diff(pptr).min() < 0):
        # a part may be empty (a pipeline's part with no row ready yet): it runs nothing
        raise bad(f"part_ptr[:parts + 1] must rise from 0 to {n} (never fall)")
    if plan.interleaved:
        return
    rising = np.ones(n, dtype=np.bool_)
    rising[1:] = order[1:] > order[:-1]
    rising[pptr[:-1]] = True  # a part may start anywhere
    if not rising.all():
        raise bad("a part lists its rows out of increasing order (coarse_order)")


def _check_lengths(
    bad: Callable[[str], ArgumentError], arrays: tuple[tuple[str, np.ndarray, int], ...]
) -> None:
    """Each pointer or flag array holds at least the entries the executor reads (its
    levels', groups' or parts' count, + 1 for pointers); longer ones are read no further."""
    for name, array, least in arrays:
        if len(array) < least:
            raise bad(
                f"{name} has {len(array)} entries, fewer than the {least} the executor reads; "
                "size it by the levels (or parts) it describes"
            )


def _check_groups(plan: Plan, levelptr: np.ndarray, bad: Callable[[str], ArgumentError]) -> None:
    """Each group runs whole levels, in order; a group run in parallel holds one level."""
    n, groups = len(plan.order), plan.groups
    if not 0 <= groups <= plan.levels:
        raise bad(f"groups = {groups!r} is not between 0 and the {plan.levels} levels")
    _check_lengths(
        bad, (("groupptr", plan.groupptr, groups + 1), ("one_thread", plan.one_thread, groups))
    )
    gptr = plan.groupptr[: groups + 1]
    if groups and (gptr[0] != 0 or gptr[-1] != n or np.diff(gptr).min() < 1):
        raise bad(f"groupptr[:groups + 1] must rise from 0 to {n}")
    at = np.searchsorted(levelptr, gptr)
    if groups and not np.array_equal(levelptr[np.minimum(at, len(levelptr) - 1)], gptr):
        raise bad("a group boundary (groupptr) splits a level")
    flags = plan.one_thread[:groups]
    if groups and not np.isin(flags, (0, 1)).all():
        raise bad("one_thread holds a value other than 0 and 1")
    if groups and (np.diff(at)[flags == 0] > 1).any():
        raise bad("a group run in parallel (one_thread 0) holds more than one level")
    if plan.strategy == "wavefront" and plan.levels and not groups:
        raise bad("a wavefront plan needs groups (groups = 0)")


def fingerprint(
    args: Mapping[str, object], names: tuple[str, ...], *, contents: bool = True
) -> Fingerprint:
    """Sizes and checksums of the arguments ``names`` (those present); arrays get no checksum
    (None) without ``contents``."""
    given = [(name, args[name]) for name in names if name in args]
    arrays = [v for _, v in given if isinstance(v, np.ndarray)]
    crcs = iter(checksums(arrays) if contents else [None] * len(arrays))  # in parallel
    out: list[tuple[str, str, tuple[int, ...], int | None]] = []
    for name, value in given:
        if isinstance(value, np.ndarray):
            out.append((name, _dtype_name(value.dtype), tuple(value.shape), next(crcs)))
        else:
            out.append((name, "value", (), value_checksum(value)))
    return tuple(out)


@functools.lru_cache(maxsize=256)
def _extent_expr(text: str) -> tuple[Callable[[Mapping[str, int]], int], frozenset[str]]:
    """:func:`spf.sets.expr.compile_expr` of a wavefront loop's extent, remembered: parsing
    it cost ~0.5 ms of every ``inspect``."""
    return compile_expr(text)


@functools.cache
def _dtype_name(dtype: np.dtype[Any]) -> str:
    """``str(dtype)``, remembered: numpy builds the name in Python (~2-6 us), and every
    call with a plan fingerprints its index arrays; on a matrix of a few thousand rows that
    was a third of a fused solve and SpMV's call."""
    return str(dtype)


def coarse_order(plan: Plan) -> np.ndarray:
    """The order of ``plan``'s parts as the executor reads it: the fill's 32-bit order where
    the plan holds it and the 32-bit executor runs it (:data:`NARROW_ORDER`;
    ``plan.coarse_order`` is not widened), else ``plan.coarse_order``."""
    order: np.ndarray | None = plan.__dict__.get(NARROW_ORDER)
    return order if order is not None and fits(len(order)) else plan.coarse_order


def plan_parts(plan: Plan) -> coarse.Parts:
    """The coarse levels and parts a coarse ``plan`` holds, as :class:`coarse.Parts` (no
    level works: what :func:`coarse.row_parts` reads)."""
    return coarse.Parts(
        plan.coarse_levels,
        plan.coarse_ptr,
        plan.part_ptr,
        plan.coarse_order,
        plan.parts,
        np.zeros(0, dtype=np.int64),
    )


class WavefrontKernel(Kernel):
    """The executor kernel with its inspector: ``inspect(**index_arrays)`` -> :class:`Plan`,
    ``kernel(..., plan=plan)`` (the other attributes are the executor's)."""

    _stages: tuple[Kernel, ...]
    """The inspector stages compiled with the kernel: the pass over the dependences, then a
    levels kernel's level sort (``levelptr``, ``order``) or a coarse kernel's counting sort
    by coarse level (:attr:`_pair`)."""
    _make_level_sort: Callable[[], tuple[Kernel, Kernel]] | None
    _make_split: Callable[[], Split] | None
    """What compiles a coarse kernel's pass as two passes run at once (levels and work;
    coarse levels: :func:`spf.analysis.coarse_inspector.build_split_passes`) and the stages
    that sort in halves or by runs, on the first inspection with two threads or by runs
    (None: its pass has no such split)."""
    _split_kernels: Split | None
    """What compiles a coarse kernel's level sort, which only a plan whose level order is
    read runs (None: a levels kernel's, in :attr:`_stages`)."""
    _level_sort_kernels: tuple[Kernel, Kernel] | None
    _make_serial: Callable[[], Kernel]
    _serial_kernel: Kernel | None
    _serial_lock: threading.Lock
    _check_kernel: Callable[[], Kernel] | None
    _make_sinks: Callable[[], Kernel] | None
    """What compiles the pass over the edges into a free kernel's nodes that
    :func:`spf.runtime.interleave.interleave` reads (kernels fused into one loop, one free)."""
    _sink_kernel: Kernel | None
    _make_chains: Callable[[], tuple[Kernel, ChainScan]] | None
    """What compiles the pass over every dependence that :func:`spf.runtime.chains.join`
    reads and builds its fixed C loops (:mod:`spf.runtime.chain_scan`): kernels fused into
    one loop, one free (the plans :attr:`_make_sinks` serves), and a coarse loop of one
    kernel."""
    _chain_kernel: tuple[Kernel, ChainScan] | None
    _names: WavefrontNames
    _plan_names: frozenset[str]
    """The executor's arguments that come from the plan (a call may not pass them)."""
    _extent: str
    _inputs: tuple[str, ...]
    _made_by: tuple[str, str, tuple[int, ...], int | None]
    _free: tuple[bool, ...]
    _zeroed: bool
    """The coarse pass starts every node's levels at 0 (no zeroed arrays needed)."""
    _runs: bool
    """The coarse pass grows its blocks as runs of rows (:attr:`coarse.Blocks.runs`), at
    most ``2**coarse.RUN_SHIFT`` rows each."""
    _after: bool
    """The coarse pass writes each node's :data:`~spf.analysis.coarse_inspector.AFTER` (kernels
    fused into one loop): the inspector sorts the nodes by it into the order one thread runs
    (:data:`IN_ORDER`)."""
    _pair: tuple[Kernel, Kernel, Kernel] | None
    """A coarse kernel's counting sort by coarse level (the level sizes counted in its
    pass), its order, and the prefix sums of the work in that order."""
    _copy_spec: CopySpec | None
    """The row segments a coarse plan may run on part-ordered copies of (None: none)."""
    _make_copy: Callable[[bool], Kernel] | None
    _copy_kernels: dict[bool, Kernel]
    """The executors of copies compiled so far, by whether they read 32-bit plan arrays."""
    _make_wide: Callable[[], Kernel]
    _wide_kernel: Kernel | None
    """The executor of 64-bit plan arrays (a plan of more positions than 32 bits hold),
    compiled on first use."""
    _quick: dict[int, Quick]
    """Per plan (by id; the record holds the plan weakly), the look and replays of its last
    validated unchecked call (:mod:`spf.runtime.plan_call`)."""

    @classmethod
    def wrap(
        cls,
        executor: Kernel | DeferredUnit,
        stages: tuple[Kernel, ...],
        names: WavefrontNames,
        extent: str,
        serial: Callable[[], Kernel],
        check_kernel: Callable[[], Kernel] | None = None,
        free: tuple[bool, ...] = (False,),
        copies: tuple[CopySpec, Callable[[bool], Kernel]] | None = None,
        zeroed: bool = False,
        level_sort: Callable[[], tuple[Kernel, Kernel]] | None = None,
        runs: bool = False,
        split: Callable[[], Split] | None = None,
        *,
        wide: Callable[[], Kernel],
        sinks: Callable[[], Kernel] | None = None,
        chains: Callable[[], tuple[Kernel, ChainScan]] | None = None,
    ) -> WavefrontKernel:
        """The executor kernel ``executor`` with its inspector stages and ``serial``, which
        compiles the loop in its original order (a plan's ``"serial"`` strategy) when a
        call first runs one; ``free``: per kernel fused into the loop, whether its
        iterations are independent (:func:`spf.analysis.coarse_inspector.free_kernels`);
        ``copies``: the segments a plan may copy and what compiles the executor that reads
        the copies (on the first call that runs one; its argument: 32-bit plan arrays, see
        :attr:`spf.runtime.copies.Copies.narrow`); ``zeroed``: the coarse pass sets
        every node's levels to 0 itself
        (:func:`spf.analysis.coarse_inspector.zeroes_in_pass`); ``level_sort``: what
        compiles the level sort when a plan's level order is first read (None: ``stages``
        holds it, after the pass); ``runs``: the coarse pass grows its blocks as runs of rows
        (:func:`spf.analysis.coarse_inspector.uses_run_blocks`); ``split``: what compiles
        the pass as two that two threads run at once (:attr:`_make_split`); ``wide``: what
        compiles the executor of 64-bit plan arrays (``executor`` reads them in 32 bits,
        :data:`spf.analysis.executor.PLAN_DTYPE`); ``sinks``: what compiles the pass that
        interleaves a free kernel's nodes (:attr:`_make_sinks`); ``chains``: what compiles
        the pass that joins the parts' coarse levels along chains (:attr:`_make_chains`).
        ``executor`` may be a
        unit generated but not yet compiled: the kernel then knows its arguments and
        preconditions and compiles and loads the executor when it first needs more of it
        (:meth:`__getattr__`; a plan that runs serial never does)."""
        out = cls.__new__(cls)
        if isinstance(executor, Kernel):
            out.__dict__.update(executor.__dict__)
        else:
            sig = executor.signatures[0]
            out.__dict__.update(_executor_later=executor, _signature=sig, name=sig.function)
            out.signature, out.arguments = sig.c_prototype(), sig.args
            out.preconditions, out._last_threads = sig.preconditions, None
        out._stages = stages
        out._make_level_sort = level_sort
        out._level_sort_kernels = None
        out._make_split = split
        out._split_kernels = None
        out._make_serial = serial
        out._serial_kernel = None
        out._serial_lock = threading.Lock()
        out._check_kernel = check_kernel
        out._make_sinks, out._sink_kernel = sinks, None
        out._make_chains, out._chain_kernel = chains, None
        out._free = free
        out._zeroed = zeroed
        out._runs = runs
        out._pair = None
        out._names = names
        out._copy_spec, out._make_copy = copies or (None, None)
        out._copy_kernels = {}
        out._make_wide = wide
        out._wide_kernel = None
        out._quick = {}
        out._plan_names = frozenset(
            {names.levelptr, names.order, names.nlevels, names.done, names.single}
            | {names.partptr, names.nparts}
            | set(out._copy_spec.copies if out._copy_spec else ())
        )
        out._extent = extent
        code = "".join(st.source for st in stages).encode()
        out._made_by = (INSPECTOR, names.loop, (), zlib.crc32(code))
        own = {LEVEL, NLEVELS, "levelptr", "slot", "fill", "order", CLEV, NCLEV, WORK, BLOCK}
        own |= {CLEVPTR, CSLOT, CORDER, WSUM, LEVELS_N, CLEVELS_N, *WIDE_NAMES, *FIXED_NAMES}
        own.add(AFTER)
        out._after = bool(stages) and any(a.name == AFTER for a in stages[0].arguments)
        inputs = {a.name for st in stages for a in st.arguments if a.name not in own}
        out._inputs = tuple(sorted(inputs))
        return out

    if not TYPE_CHECKING:  # mypy checks every other attribute as declared

        def __getattr__(self, name: str) -> Any:
            """An executor attribute of a kernel whose executor is not loaded yet
            (:meth:`wrap`): the executor is compiled (cached like any build) and loaded, its
            attributes joined to the kernel's (the kernel's own kept), then ``name`` read. A
            name no kernel has (one an inspector stage, loaded, lacks) compiles nothing, nor
            do ``source`` and ``unit``, which the generated executor already has."""
            later = self.__dict__.get("_executor_later")
            stages = self.__dict__.get("_stages")
            if later is None or not stages or name not in stages[0].__dict__:
                raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")
            if name in ("source", "unit"):  # generated already: printed without gcc
                (unit,) = later.units
                return unit.source if name == "source" else unit
            (executor,) = later.kernels()
            for key, value in executor.__dict__.items():
                self.__dict__.setdefault(key, value)
            self.__dict__["_executor_later"] = None
            return object.__getattribute__(self, name)

    @property
    def _serial(self) -> Kernel:
        """The kernel of the loop in its original order, compiled on first use (a compile
        that fails raises here, and the next call tries again)."""
        return self._once("_serial_kernel", self._make_serial)

    def _once(self, attr: str, make: Callable[[], _Made]) -> _Made:
        """The kernel held in ``attr``, compiled by ``make`` on first use (one compile
        when calls race; a compile that fails raises, and the next use tries again)."""
        kernel: _Made | None = getattr(self, attr)
        if kernel is None:
            with self._serial_lock:
                kernel = getattr(self, attr)
                if kernel is None:
                    kernel = make()
                    setattr(self, attr, kernel)
        return kernel

    def _level_sort(self) -> tuple[Kernel, Kernel]:
        """The level sort (``levelptr``, ``order``): a levels kernel's stages, a coarse
        kernel's compiled on first use (a compile that fails raises here, and the next use
        tries again)."""
        if self._make_level_sort is None:
            return self._stages[1], self._stages[2]
        kernels = self._level_sort_kernels
        if kernels is None:
            with self._serial_lock:  # the lock of the kernels compiled on first use
                kernels = self._level_sort_kernels
                if kernels is None:
                    kernels = self._level_sort_kernels = self._make_level_sort()
        return kernels

    def _split(self) -> Split:
        """The pass as two (levels and work; coarse levels) and the stages that sort in
        halves or by runs (:data:`Split`), compiled on first use."""
        kernels = self._split_kernels
        if kernels is None:
            if self._make_split is None:
                raise CodegenError(f"spf bug: {self.name} has no split pass")
            with self._serial_lock:  # the lock of the kernels compiled on first use
                kernels = self._split_kernels
                if kernels is None:
                    kernels = self._split_kernels = self._make_split()
        return kernels

    @property
    def inspected_arguments(self) -> tuple[str, ...]:
        """The arguments the inspector reads (index arrays and parameters)."""
        return self._inputs

    @property
    def _coarse(self) -> bool:
        return self._names.method in ("coarse", "auto")

    def inspect(
        self,
        *positional: object,
        check: bool = True,
        strategy: str = "auto",
        threads: int | None = None,
        copies: bool | None = None,
        **args: object,
    ) -> Plan:
        """Run the inspector on the index arrays (and parameters) it reads; the other
        arguments of the kernel may be given too and are ignored. ``strategy``: ``"auto"``
        (serial when the levels average fewer than :data:`MIN_ROWS_PER_LEVEL` iterations),
        ``"wavefront"`` or ``"serial"``; for a kernel of ``method="coarse"`` or ``"auto"``,
        ``"auto"`` (the least estimated time; a ``coarse`` kernel: ``"coarse"``),
        ``"coarse"``, ``"levels"``, ``"serial"`` or ``"wavefront"`` (coarse or levels,
        whichever is estimated faster), its parts planned for ``threads`` threads (default:
        OpenMP's count now). ``copies`` (``method="auto"``/``"coarse"``): whether a plan that
        runs parts runs them on part-ordered copies of the rows' segments
        (:mod:`spf.runtime.copies`; ``plan.copies`` names them): None (the default) copies
        when the loop's rows can be copied and the parts' rows are scattered enough for the
        copies to pay (:func:`spf.runtime.copies.pays`), ``True`` insists (``ArgumentError``
        when they cannot), ``False`` reads the arrays where they lie."""
        allowed = COARSE_STRATEGIES if self._coarse else STRATEGIES
        if strategy not in allowed:
            raise ArgumentError(
                f"{self.name}.inspect: strategy must be one of {', '.join(map(repr, allowed))}"
                f", got {strategy!r}"
            )
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1
        ):
            raise ArgumentError(
                f"{self.name}.inspect: threads must be an int >= 1, got {threads!r}"
            )
        if copies is not None and not isinstance(copies, bool):
            raise ArgumentError(f"{self.name}.inspect: copies must be True, False or None")
        if copies and not self._coarse:
            raise ArgumentError(
                f"{self.name}.inspect: copies=True needs a coarse executor; compile with "
                f"wavefront({self._names.loop!r}, method='auto') or method='coarse'"
            )
        if positional:
            raise ArgumentError.positional(
                f"{self.name}.inspect", len(positional), "inspect", self._inputs
            )
        known = {a.name for a in self.arguments} | set(self._inputs)
        unknown = sorted(set(args) - known)
        if unknown:
            raise ArgumentError(
                f"{self.name}.inspect: unknown argument(s) {', '.join(unknown)}; the inspector "
                f"reads {', '.join(self._inputs)}"
            )
        given = self._inspected(args)
        n = self._count(given)
        missing = [a for a in self._inputs if a not in given]
        if missing:  # else the inspector's binder names its own C prototype
            raise ArgumentError(
                f"{self.name}.inspect: missing argument(s) {', '.join(missing)}; the inspector "
                f"reads {', '.join(self._inputs)}: pass them by name, as to the kernel"
            )
        try:
            with shared():  # the stages' fact checks and the plan's fingerprint
                if self._coarse:
                    return self._inspect_coarse(given, n, check, strategy, threads, copies)
                return self._inspect_levels(given, n, check, strategy)
        except MemoryError:  # numpy's, allocating the plan's arrays: a parameter too large
            params = {k: v for k, v in given.items() if not isinstance(v, np.ndarray)}
            team = (
                f" cut for threads={threads} (parts of every level for each thread: plan for "
                "the threads that will run it)"
                if threads is not None and self._coarse
                else ""
            )
            raise ArgumentError(
                f"{self.name}.inspect: loop {self._names.loop!r} runs {n:,} iterations "
                f"(0 <= {self._names.loop} < {self._extent} with {params}), and the plan's "
                f"arrays for them{team} do not fit in memory; check the parameters against "
                "the index arrays"
            ) from None

    def _inspect_levels(
        self, given: Mapping[str, object], n: int, check: bool, strategy: str
    ) -> Plan:
        """:meth:`inspect` of a kernel of ``method="levels"`` or ``"p2p"``."""
        levels_k, count_k, order_k = self._stages
        level = np.zeros(n, dtype=np.int64)
        nlev = np.zeros((), dtype=np.int64)
        levels_k(level=level, nlevels=nlev, check=check, **_pick(levels_k, given))
        params = _pick(count_k, given)
        levelptr = np.zeros(n + 1, dtype=np.int64)
        slot = np.empty(n, dtype=np.int64)
        fill = np.zeros(n, dtype=np.int64)
        count_k(level=level, levelptr=levelptr, slot=slot, fill=fill, check=False, **params)
        order = np.empty(n, dtype=np.int64)
        order_k(slot=slot, order=order, check=False, **_pick(order_k, given))
        if strategy == "auto":
            narrow = n < MIN_ROWS_PER_LEVEL * max(int(nlev), 1)
            strategy = "serial" if narrow else "wavefront"
        return self._plan(given, level, int(nlev), strategy, (levelptr, order))

    def _plan(
        self,
        given: Mapping[str, object],
        level: np.ndarray,
        levels: int,
        strategy: str,
        by_level: tuple[np.ndarray, np.ndarray] | None,
        parts: coarse.Parts | None = None,
        copies: tuple[str, ...] = (),
        one: coarse.Later | None = None,
        interleaved: bool = False,
    ) -> Plan:
        """The :class:`Plan` of what the inspector stages computed (its arrays made
        read-only, not copied; the groups of the levels executor added). ``by_level``: the
        level sort (``levelptr``, ``order``), or None when the plan runs without it (a
        coarse or serial plan of a coarse kernel): then the plan sorts ``level`` when its
        level order is first read. ``level``: 64-bit, or the coarse pass's 32-bit levels,
        sealed as they are and widened when the plan's ``level_of`` is first read
        (:mod:`spf.runtime.plan_levels`)."""
        n = len(level)
        _read_only(level)
        with shared():  # the seal and the index arrays' checksums in one parallel batch
            _warm(level, given)
            inspected = (self._made_by, seal(level), *fingerprint(given, self._inputs))
        narrow = NarrowLevels(level) if level.dtype == np.int32 else None
        fields: dict[str, Any] = {
            "loop": self._names.loop,
            "levels": levels,
            "strategy": strategy,
            "inspected": inspected,
            "copies": copies,
            "interleaved": interleaved,
        }
        order32 = None  # the fill's 32-bit order, widened when a caller reads coarse_order
        if parts is not None:
            _read_only(parts.ptr, parts.partptr, parts.order)
            fields.update(coarse_levels=parts.levels, coarse_ptr=parts.ptr, part_ptr=parts.partptr)
            if parts.order.dtype == np.int32 and by_level is None:
                order32 = parts.order
            else:
                fields["coarse_order"] = parts.order
        params = {k: v for k, v in given.items() if not (isinstance(v, np.ndarray) and v.ndim)}

        def sort() -> LevelOrder:
            wide = level if narrow is None else narrow.wide()
            levelptr, order = by_level or self._sort(wide, n, params)
            levelptr = levelptr[: levels + 1]  # the executor's extent, whatever the sort's
            groups, groupptr, one_thread = _groups(levelptr, levels)
            _read_only(levelptr, order, groupptr, one_thread)
            return levelptr, order, groups, groupptr, one_thread

        if narrow is not None:  # built without the 64-bit levels (a coarse kernel's plan)
            plan = Plan._levels_later(sort, narrow, order32, **fields)
        elif by_level is None:
            plan = Plan._levels_later(sort, None, order32, level_of=level, **fields)
        else:
            fields["level_of"] = level
            levelptr, order, groups, groupptr, one_thread = sort()
            _INSPECTOR_OUTPUT.active = True
            try:
                plan = Plan(
                    levelptr=levelptr,
                    order=order,
                    groups=groups,
                    groupptr=groupptr,
                    one_thread=one_thread,
                    **fields,
                )
            finally:
                _INSPECTOR_OUTPUT.active = False
        if parts is not None:
            _CHECKED[plan] = self._made_by
        if one is not None:
            object.__setattr__(plan, IN_ORDER, one)
        return plan

    def _sort(
        self, key: np.ndarray, n: int, given: Mapping[str, object]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The counting sort of the iterations by ``key`` (stable): (its prefix sums, the
        order), by the generated sort stages (unchecked: they read spf's own levels)."""
        count_k, order_k = self._level_sort()
        ptr = np.zeros(n + 1, dtype=np.int64)
        slot = np.empty(n, dtype=np.int64)
        fill = np.zeros(n, dtype=np.int64)
        count_k(level=key, levelptr=ptr, slot=slot, fill=fill, check=False, **_pick(count_k, given))
        order = np.empty(n, dtype=np.int64)
        order_k(slot=slot, order=order, check=False, **_pick(order_k, given))
        return ptr, order

    def _inspect_coarse(
        self,
        given: Mapping[str, object],
        n: int,
        check: bool,
        strategy: str,
        threads: int | None,
        copies: bool | None = None,
    ) -> Plan:
        """:meth:`inspect` of a kernel of ``method="coarse"`` or ``"auto"``: one generated
        pass over the dependences (levels, coarse levels and work; their counts), the
        counting sort by coarse level, the parts. Kernels fused into the loop get further
        candidates from the same pass: coarse levels of fixed blocks
        (:data:`spf.runtime.coarse.BLOCK_SHIFT`) beside the run blocks and, one kernel free
        (:func:`spf.analysis.coarse_inspector.free_kernels`), of
        :data:`spf.runtime.coarse.PIPELINE_SHIFT` blocks; their work weighed by kind
        (:func:`spf.runtime.coarse.weigh`), the one estimated fastest is taken (never the
        levels). The sort by level runs only for a
        ``"levels"`` plan; the others sort the levels when their level order is first
        read. When blocks merge no levels (as many coarse levels as levels, one kernel), the
        coarse plan would be the levels plan cut at block boundaries only: ``"auto"`` and
        ``"wavefront"`` then plan the levels alone (one sort instead of two)."""
        team = int(threads) if threads is not None else default_team()
        if strategy == "auto" and self._names.method == "coarse":
            strategy = "coarse"
        auto = strategy == "auto"
        # the plan's checksums (index arrays, then the level seal) hashed beside the pass
        # and the sort, whose C releases the GIL; a checked stage hashes its arrays itself
        # (the pass's choice of one thread or two made first: GOVERNOR.team() calls into
        # libgomp, which lets go of the GIL, and the hashing thread would hold it to the
        # end of an array's hash before the pass could start)
        two = not check and n >= SPLIT_NODES and GOVERNOR.team() > 1
        arrays = [v for v in given.values() if isinstance(v, np.ndarray)]
        joins: list[Callable[[], object]] = [] if check else [prefetch(arrays)]
        passed = self._coarse_pass(given, n, check, two, strategy != "levels")
        level, nlev, work, candidates, after, ahead, runs, sealed = passed
        if not check:  # the levels' checksum for the plan's seal
            seal_join = sealed or (ahead.seal if ahead is not None else None)
            joins += [seal_join or prefetch([level])]
        blocks = n // len(self._free)
        unit = coarse.weigh(work, blocks, self._free)
        total = 0  # all the work: the last prefix sum of a sort (no pass of its own)
        parts: coarse.Parts | None = None
        interleaved = False
        mixed: Future[tuple[coarse.Parts, float]] | None = None
        level_sizes: Callable[[], np.ndarray] | None = None  # what the levels' estimate reads
        gain = 0.0
        if strategy in ("auto", "wavefront") and len(candidates) == 1 and candidates[0][1] == nlev:
            strategy = "levels" if strategy == "wavefront" else "auto-levels"
        coarse_candidates = [] if strategy in ("levels", "auto-levels") else candidates
        fused = len(self._free) > 1
        for k, (clev, nclev, shift) in enumerate(coarse_candidates):
            found, total, sizes = self._candidate(
                given, k, level, nlev, (clev, nclev, shift), work, team, ahead, runs
            )
            level_sizes = sizes if k == 0 else level_sizes
            found = coarse.with_stretches(found) if len(self._free) > 1 else found
            found_gain = coarse.estimate(found, total, unit)
            found, found_gain = self._or_longer_runs(  # the first's runs up to twice as long
                (found, found_gain), given, check, (level, nlev, work), team, total, unit,
                k == 0 and ahead is None and runs is None,
            )  # fmt: skip
            if k == 0 and self._runs and self._make_chains is not None and team > 1:
                # the run blocks' parts, a free kernel's rows interleaved: on a worker
                # thread, beside the other candidates' sorts (generated C, GIL released)
                mixed = submit(
                    functools.partial(
                        self._interleaved, given, found, found_gain, work, total, unit, team
                    )
                )
            if parts is None or found_gain > gain:
                parts, gain = found, found_gain
        if parts is not None:  # the fused loop's interleaved parts, or a solve's joined
            parts, gain, interleaved = self._mixed_or_joined(
                mixed, given, parts, gain, (work, total, unit, team)
            )
        one = None  # the order one thread runs a fused loop in, when large enough to pay
        if after is not None and n >= coarse.IN_ORDER_NODES:  # sorted on first use
            params = {k: v for k, v in given.items() if not isinstance(v, np.ndarray)}
            one = coarse.Later(functools.partial(self._in_order, params, level, nlev, after))
        if strategy in ("auto", "wavefront") and level_sizes is not None:
            rival = _level_rival(fused, gain, level_sizes, n, nlev, total, team, unit)
            gain, best = max((gain, "coarse"), (rival, "levels"))
            gain = self._against_kernels(gain, best, parts, total, n, unit)
            chosen = self._or_pipeline(
                strategy, (parts, gain, best, interleaved), total, after, work, team
            )
            parts, gain, strategy, interleaved = chosen
        if strategy not in ("levels", "auto-levels") and parts is not None:
            names = self._copied(strategy, copies, given, parts.order, total, None, parts.breaks)
            strategy, names = self._with_hash(auto, strategy, gain, total, names, given, n)
            _wait(joins if ahead is None else [*joins, ahead.join])  # none left running
            return self._plan(given, level, nlev, strategy, None, parts, names, one, interleaved)
        lengths = self._lengths_beside(ahead, copies, given, n)
        joins += [] if lengths is None else [lengths.result]
        ptr, _, order, wsum = self._sorted(given, level, nlev, level, nlev, work, ahead)
        total = int(wsum[-1])
        if strategy == "auto-levels":  # as many coarse levels as levels: no coarse candidate
            gain = coarse.level_estimate(ptr, nlev, total, team, unit)
            strategy = "serial" if coarse.expected(gain, total) < coarse.MIN_GAIN else "levels"
        parts = level_parts(order, ptr, nlev, work, team, wsum)  # chunks dealt round robin
        names = self._copied(strategy, copies, given, order, total, lengths)
        strategy, names = self._with_hash(auto, strategy, gain, total, names, given, n)
        _wait(joins if ahead is None else [*joins, ahead.join])
        return self._plan(given, level, nlev, strategy, (ptr, order), parts, names, one)

    def _tries_longer_runs(self, n: int, team: int) -> bool:
        """Whether :meth:`_inspect_coarse` also plans the run blocks of a fused loop of ``n``
        nodes with a free kernel up to twice as long
        (:data:`spf.runtime.coarse.LONG_RUN_SHIFT`): for a ``team`` of two or more and at
        least :data:`spf.runtime.coarse.IN_ORDER_NODES` nodes."""
        fused_free = len(self._free) > 1 and any(self._free) and not all(self._free)
        return self._runs and fused_free and team > 1 and n >= coarse.IN_ORDER_NODES

    def _or_pipeline(
        self,
        strategy: str,
        best: tuple[coarse.Parts | None, float, str, bool],
        total: int,
        after: np.ndarray | None,
        work: np.ndarray,
        team: int,
    ) -> tuple[coarse.Parts | None, float, str, bool]:
        """The parts, estimate, strategy and interleaving of the ``best`` plan (its parts,
        its estimate over ``total`` work, ``"coarse"`` or ``"levels"``, interleaved), or
        ``"serial"`` for ``auto`` when it is not expected to gain
        :data:`spf.runtime.coarse.MIN_GAIN`, unless the pipeline parts are
        (:meth:`_pipeline`: then theirs, ``"coarse"``)."""
        parts, gain, name, interleaved = best
        if strategy != "auto" or coarse.expected(gain, total) >= coarse.MIN_GAIN:
            return parts, gain, name, interleaved
        piped = self._pipeline(after, work, team)
        if piped is None:
            return parts, gain, "serial", interleaved
        return piped[0], piped[1], "coarse", False

    def _pipeline(
        self, after: np.ndarray | None, work: np.ndarray, team: int
    ) -> tuple[coarse.Parts, float] | None:
        """For ``auto`` where every other plan was estimated no faster than the serial
        kernels by :data:`spf.runtime.coarse.MIN_GAIN` (where the pass set each node's
        ``after``): the pipeline parts
        (:mod:`spf.runtime.pipeline`) of a solve fused with a free kernel into a loop of
        fewer than :data:`spf.runtime.coarse.IN_ORDER_NODES` nodes, for a ``team`` of two
        or more, of the :data:`spf.runtime.pipeline.BLOCKS` estimated fastest against the
        serial kernels (:func:`spf.runtime.coarse.over_kernels`, on the parts balanced by
        units), with that estimate, where it reaches :data:`spf.runtime.pipeline.MIN_GAIN`,
        its second parts then taking :data:`spf.runtime.pipeline.SHARE`; else None. The
        nodes' ``work`` comes weighed (:func:`spf.runtime.coarse.weigh`); the pipeline
        weighs the solve's rows by :data:`spf.runtime.pipeline.CHAIN_WEIGHT` instead."""
        if after is None or len(after) >= coarse.IN_ORDER_NODES:
            return None
        if not pipeline.applies(tuple(self._free), team):
            return None
        nodes = len(after)
        plain = pipeline.reweigh(work)
        total = int(plain.sum())
        best: tuple[int, float] | None = None
        for blocks in pipeline.BLOCKS:  # the block count and the gate: balanced by units
            found = pipeline.pipeline(after, plain, blocks, 1.0)
            if found is None:
                continue
            found_gain = coarse.over_kernels(found, total, nodes)
            if best is None or found_gain > best[1]:
                best = blocks, found_gain
        if best is None or coarse.expected(best[1], total) < pipeline.MIN_GAIN:
            return None
        parts = pipeline.pipeline(after, plain, best[0])  # the rows balanced by time
        return None if parts is None else (parts, best[1])

    def _lengths_beside(
        self, ahead: LevelCount | None, copies: bool | None, given: Mapping[str, object], n: int
    ) -> Future[str | None] | None:
        """:func:`row_lengths` on a worker thread beside the sort by level that a pass on two
        threads (``ahead``) leads to, for a plan that may run on copies; else None (a plan
        of parts sorted otherwise looks at the rows' lengths only when the copies pay:
        Poisson's coarse plan never does, and a check left running on a worker held it from
        the halves of the sort's stages and outlived the inspection)."""
        spec = self._copy_spec
        if ahead is None or copies is False or spec is None:
            return None
        return submit(lambda: row_lengths(spec, given, n))

    def _against_kernels(
        self, gain: float, best: str, parts: coarse.Parts | None, total: int, n: int, unit: float
    ) -> float:
        """``gain``, the estimate of the ``best`` plan against the loop in order, or for a
        coarse plan of kernels fused into a loop of fewer than
        :data:`spf.runtime.coarse.IN_ORDER_NODES` nodes, whose serial plan runs the serial
        kernels one after the other from cache, the least of it and its estimate against
        them (:func:`spf.runtime.coarse.over_kernels`; docs/inspection.md)."""
        if len(self._free) < 2 or n >= coarse.IN_ORDER_NODES or parts is None or best != "coarse":
            return gain
        return min(gain, coarse.over_kernels(parts, total, n, unit))

    def _interleaved(
        self,
        given: Mapping[str, object],
        parts: coarse.Parts,
        gain: float,
        work: np.ndarray,
        total: int,
        unit: float,
        team: int,
    ) -> tuple[coarse.Parts, float]:
        """``parts`` of kernels fused into one loop with each free kernel's node run right
        after the source that completes its inputs (:func:`spf.runtime.interleave.interleave`),
        and its estimate, when estimated faster than ``parts`` (``gain``); else ``parts``
        and ``gain``. One generated pass over the edges into the free nodes (none where no
        edge enters them: no node can move)."""
        if self._make_sinks is None:
            return self._joined(given, parts, gain, work, total, unit)
        sinks = self._once("_sink_kernel", self._make_sinks)
        pos_of, key_of = sink_inputs(parts)
        n = len(pos_of)
        last_pos = np.full(n, -1, dtype=np.int64)
        last_key = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
        arrays = {SINK_POS: pos_of, SINK_KEY: key_of, LAST_POS: last_pos, LAST_KEY: last_key}
        sinks(check=False, **arrays, **_pick(sinks, given))
        free = np.repeat(np.asarray(self._free), n // len(self._free))
        got = interleave(parts, pos_of, (last_pos, last_key), free, work, team, self._scan_for(n))
        if len(got.moved):
            found = coarse.estimate(got.parts, total, unit)
            parts, gain = (got.parts, found) if found > gain else (parts, gain)
        return self._joined(given, parts, gain, work, total, unit)

    def _mixed_or_joined(
        self,
        mixed: Future[tuple[coarse.Parts, float]] | None,
        given: Mapping[str, object],
        parts: coarse.Parts,
        gain: float,
        weights: tuple[np.ndarray, int, float, int],
    ) -> tuple[coarse.Parts, float, bool]:
        """The best coarse ``parts`` (estimated at ``gain``), their estimate and whether
        their rows are interleaved: the parts of :meth:`_interleaved` (``mixed``) when
        estimated faster; for a loop of one kernel planned for 2+ threads, ``parts``
        joined along chains (:meth:`_joined`) when estimated faster (a joined part's rows
        no longer increase: the plan is ``interleaved``); else ``parts``. ``weights``: the
        nodes' work, all the work, the barrier's unit and the team."""
        work, total, unit, team = weights
        if mixed is not None:
            got = mixed.result()
            return (got[0], got[1], True) if got[1] > gain else (parts, gain, False)
        if len(self._free) > 1 or team < 2:
            return parts, gain, False
        joined, found = self._joined(given, parts, gain, work, total, unit)
        return joined, found, joined is not parts

    def _joined(
        self,
        given: Mapping[str, object],
        parts: coarse.Parts,
        gain: float,
        work: np.ndarray,
        total: int,
        unit: float,
    ) -> tuple[coarse.Parts, float]:
        """``parts`` (estimated at ``gain``) with consecutive coarse levels joined along
        chains of parts (:func:`spf.runtime.chains.join`) and its estimate, when estimated
        faster; else ``parts`` and ``gain``. A loop of fewer than
        :data:`spf.runtime.chains.JOIN_NODES` nodes keeps its parts. One generated pass over
        the dependences (:mod:`spf.analysis.chain_pass`)."""
        n = len(parts.order)
        if n < chains.JOIN_NODES or self._make_chains is None or parts.levels < 2:
            return parts, gain
        if parts.parts > chains.MAX_PARTS:
            return parts, gain
        pass_k, scan = self._once("_chain_kernel", self._make_chains)
        level, slot = chains.part_tables(parts)
        reads: dict[str, object] = {
            CHAIN_PART: chains.chain_parts(parts, n, scan),
            CHAIN_LEVEL: level,
            CHAIN_SLOT: slot,
            CHAIN_PARTS: parts.parts,
            **_pick(pass_k, given),
        }
        halves: list[np.ndarray] = []

        def half(lo: int, hi: int) -> None:  # each half raises needs of its own
            need = np.zeros((2, parts.parts), dtype=np.int32)
            pass_k(check=False, **reads, **{CHAIN_NEED: need[0], CHAIN_NEED_LOW: need[1]},
                   **_chain_span(lo, hi))  # fmt: skip
            halves.append(need)

        in_halves(half, n // 2, n)
        need = np.maximum.reduce(halves)
        got = chains.join(parts, (need[0], need[1]), work, total, unit, gain, scan)
        return got.parts, got.gain

    def _in_order(
        self, params: Mapping[str, object], level: np.ndarray, levels: int, after: np.ndarray
    ) -> coarse.Parts:
        """The nodes of kernels fused into one loop sorted by ``after`` (the generated
        counting sort, stable), as one part of one coarse level: what one thread runs
        (:data:`IN_ORDER`); the work is not summed (zeros)."""
        keys = len(after) // max(len(self._free), 1)
        work = np.zeros(len(after), dtype=np.int64)
        _, _, order, _ = self._sorted(params, level, levels, after, keys, work)
        return coarse.in_order(order)

    def _with_hash(
        self,
        auto: bool,
        strategy: str,
        gain: float,
        work: int,
        names: tuple[str, ...],
        given: Mapping[str, object],
        n: int,
    ) -> tuple[str, tuple[str, ...]]:
        """``auto``'s choice (``strategy``, estimated ``gain`` over ``work`` units, on the
        copies ``names``) with the values' hash that each call on copies pays counted
        (:func:`spf.runtime.copies.hash_work`): serial, without copies, when the hash leaves
        the plan expected (:func:`spf.runtime.coarse.expected`) less than
        :data:`spf.runtime.coarse.MIN_GAIN` faster than the loop in order."""
        spec = self._copy_spec
        if not auto or not names or spec is None or gain <= 0.0:
            return strategy, names
        hashed = work / (work / coarse.expected(gain, work) + hash_work(spec, given, n))
        return ("serial", ()) if hashed < coarse.MIN_GAIN else (strategy, names)

    def _copied(
        self,
        strategy: str,
        copies: bool | None,
        given: Mapping[str, object],
        order: np.ndarray,
        work: int,
        lengths: Future[str | None] | None = None,
        breaks: np.ndarray | None = None,
    ) -> tuple[str, ...]:
        """The arrays a plan of ``strategy`` whose parts run the rows ``order`` (``work``
        in all) copies (:meth:`inspect`'s ``copies``; None: when
        :func:`spf.runtime.copies.pays`, which reads ``breaks`` when given:
        :attr:`spf.runtime.coarse.Parts.breaks`); ``lengths``: :func:`row_lengths` under
        way on a worker thread."""
        spec = self._copy_spec
        if copies is False or (spec is not None and strategy not in ("coarse", "levels")):
            return ()  # a serial plan runs no parts
        split = self._split_kernels  # the breaks of runs come with it
        sampled = split[8].sampled if breaks is not None and split is not None else None
        if copies is None and (spec is None or not pays(order, work, breaks, sampled)):
            return ()
        why: str | None = "its rows read no segment that copies keep"
        if spec is not None:
            why = row_lengths(spec, given, len(order)) if lengths is None else lengths.result()
        if why is not None and copies:
            raise ArgumentError(
                f"{self.name}.inspect: copies=True, but loop {self._names.loop!r} cannot run "
                f"on copies: {why}; leave copies to the plan (None) or pass copies=False"
            )
        return spec.names if spec is not None and why is None else ()

    def _pass_buffers(self, n: int, shift: int) -> dict[str, Any]:
        """The arrays the generated coarse pass of ``n`` nodes writes, its first candidate's
        blocks of ``shift`` (the levels and the first candidate's coarse levels in one
        buffer: the plan's level_of later, ``_wide``)."""
        levels = np.empty if self._zeroed else np.zeros  # the pass starts each node at 0
        both = levels(2 * n, dtype=np.int32)
        out: dict[str, Any] = {
            LEVEL: both[:n],
            NLEVELS: np.zeros((), dtype=np.int64),
            CLEV: both[n:],
            NCLEV: np.zeros((), dtype=np.int64),
            WORK: np.empty(n, dtype=np.int64),  # every node's set before its edges add to it
            BLOCK: shift,
        }
        if any(self._free):
            out |= {
                CLEV_WIDE: levels(n, dtype=np.int32),
                NCLEV_WIDE: np.zeros((), dtype=np.int64),
                BLOCK_WIDE: coarse.PIPELINE_SHIFT,
            }
        if self._runs and len(self._free) > 1:
            out |= {
                CLEV_FIXED: levels(n, dtype=np.int32),
                NCLEV_FIXED: np.zeros((), dtype=np.int64),
                BLOCK_FIXED: coarse.BLOCK_SHIFT,
            }
        if self._after:  # every node's set by the pass
            out[AFTER] = np.empty(n, dtype=np.int32)
        return out

    def _or_longer_runs(
        self,
        first: tuple[coarse.Parts, float],
        given: Mapping[str, object],
        check: bool,
        passed: tuple[np.ndarray, int, np.ndarray],
        team: int,
        total: int,
        unit: float,
        by_rows: bool,
    ) -> tuple[coarse.Parts, float]:
        """The ``first`` candidate's parts and estimate, or those of the run blocks of at
        most ``2**coarse.LONG_RUN_SHIFT`` rows where :meth:`_tries_longer_runs` and they are
        estimated faster (:func:`spf.runtime.coarse.estimate`): the generated pass run again
        with the longer blocks, its other outputs dropped (the levels, work and order after
        in ``passed`` do not depend on the blocks), sorted and cut as the first candidate
        (``by_rows``: ``first`` is that candidate, sorted by rows: no runs sorted, no pass
        on two; the faster of the two is the one interleaved)."""
        level, levels, work = passed
        n = len(level)
        if not (by_rows and self._tries_longer_runs(n, team)):
            return first
        out = self._pass_buffers(n, coarse.LONG_RUN_SHIFT)
        self._stages[0](check=check, **out, **_pick(self._stages[0], given))
        longer = (out[CLEV], _count_of(out[CLEV]), coarse.LONG_RUN_SHIFT)
        parts, _, _ = self._candidate(given, 0, level, levels, longer, work, team, None)
        parts = coarse.with_stretches(parts)
        gain = coarse.estimate(parts, total, unit)
        return (parts, gain) if gain > first[1] else first

    def _coarse_pass(
        self,
        given: Mapping[str, object],
        n: int,
        check: bool,
        two: bool = False,
        sorted_by_runs: bool = True,
    ) -> tuple[
        np.ndarray,
        int,
        np.ndarray,
        list[tuple[np.ndarray, int, int]],
        np.ndarray | None,
        LevelCount | None,
        Runs | None,
        Callable[[], None] | None,
    ]:
        """The generated pass over the dependences: (level, levels, work, per candidate
        block size its coarse levels, their count and the block shift, each node's
        :data:`~spf.analysis.coarse_inspector.AFTER` when the pass writes it, the count of
        the levels under way on a worker thread or None, the runs of the first candidate's
        coarse levels when :meth:`_by_runs` sorts them, else None, what records the
        levels' checksum a worker took beside the runs (:func:`_sealed_beside`), else
        None); the levels and coarse levels are 32-bit. ``two``: an unchecked inspection of
        at least :data:`SPLIT_NODES` nodes on a team of two or more, whose pass runs as two
        at once where the loop has them. The count of coarse levels of runs comes from the
        runs (no pass over the coarse levels of its own); ``sorted_by_runs``: whether a plan
        may be (not one forced to the levels)."""
        if n > MAX_NODES:
            raise ArgumentError(
                f"{self.name}.inspect: loop {self._names.loop!r} has {n:,} nodes; the coarse "
                f"inspector levels at most {MAX_NODES:,} (32-bit levels); compile the "
                f"wavefront with method='levels' or 'p2p'"
            )
        stage = self._stages[0]
        out = self._pass_buffers(n, coarse.RUN_SHIFT if self._runs else coarse.BLOCK_SHIFT)
        candidates = self._pass_candidates(out[BLOCK])
        counted = [(LEVEL, NLEVELS, 0), *candidates]
        ahead: LevelCount | None = None
        found: list[Runs | None] = [None]
        beside: list[Future[tuple[int, int]] | None] = [None]
        on_two = two and self._make_split is not None and not self._after
        # the levels are final after the joint pass (not while a split pass's worker runs)
        seal_beside = self._sorts_runs(n) and not check and not (on_two and SPLIT_PASS)

        def coarse_levels() -> None:  # what reads the first candidate's coarse levels alone
            if sorted_by_runs and self._sorts_runs(n) and likely_runs(out[CLEV]):
                if seal_beside:  # a worker seals and counts the levels meanwhile
                    beside[0] = _sealed_beside(out[LEVEL])
                found[0] = find_runs(out[CLEV], scan=self._split()[8])
            if self._runs:  # the run-block pass leaves the counts to the caller
                runs = found[0]
                out[NCLEV] = len(runs.levelruns) - 1 if runs is not None else _count_of(out[CLEV])

        if on_two:
            out[NLEVELS], ahead = self._pass_on_two(out, given, coarse_levels, beside)
            counted = candidates
        else:
            stage(check=check, **out, **_pick(stage, given))
            coarse_levels()
        runs, job = found[0], beside[0]
        if self._runs:
            for key, count, _ in counted:
                if key == LEVEL and job is not None:
                    out[count] = job.result()[1]
                elif key != CLEV:
                    out[count] = _count_of(out[key])
        got = [(out[key], int(out[count]), shift) for key, count, shift in candidates]
        sealed = None if job is None else functools.partial(_remember_sealed, out[LEVEL], job)
        return out[LEVEL], int(out[NLEVELS]), out[WORK], got, out.get(AFTER), ahead, runs, sealed

    def _pass_candidates(self, shift: int) -> list[tuple[str, str, int]]:
        """The coarse candidates of the generated pass (the first one's blocks of ``shift``):
        the names of its coarse levels, of their count, and its block shift."""
        candidates = [(CLEV, NCLEV, shift)]
        if any(self._free):
            candidates.append((CLEV_WIDE, NCLEV_WIDE, coarse.PIPELINE_SHIFT))
        if self._runs and len(self._free) > 1:  # fused kernels' run pass keeps fixed blocks
            candidates.append((CLEV_FIXED, NCLEV_FIXED, coarse.BLOCK_SHIFT))
        return candidates

    def _sorts_runs(self, n: int) -> bool:
        """Whether a loop of ``n`` nodes sorts its coarse levels by their runs where it
        has them (:meth:`_by_runs`): one kernel's run blocks, its stages compiled with the
        split pass's, at least :data:`SPLIT_NODES` nodes."""
        single = self._runs and len(self._free) == 1
        return single and self._make_split is not None and n >= SPLIT_NODES

    def _split_pass(
        self, out: dict[str, Any], given: Mapping[str, object], meanwhile: Callable[[], None]
    ) -> tuple[int, LevelCount]:
        """The pass as two at once (:attr:`_make_split`): the levels and the work on a
        worker thread, the coarse levels on this one (the generated C releases the GIL); writes
        ``out``'s arrays as the joint pass does. Returns the number of levels and their
        count (:class:`LevelCount`): the worker goes on to count levels that average at
        least :data:`MIN_ROWS_PER_LEVEL` nodes (wide levels, whose plan is often the levels,
        which sorts by them: the 12-level triangle's) while this thread is still in its
        pass, on one thread; once this thread is done it waits for the worker's pass, and
        the levels are counted when first asked for, on both threads (one half of the nodes
        each: :class:`LevelCount`), as narrower levels always are (a plan sorted by its runs
        whose estimate settles without the level sizes, Poisson's, never counts them).
        The same starts and slots either way. ``meanwhile``: what reads this thread's
        coarse levels alone (their runs, their count), run right after its pass, before it
        waits for the worker's (the 12-level triangle's worker finishes last). Unchecked
        calls only: a checked inspection checks the index arrays in the one pass that reads
        them."""
        stages = self._split()
        levels_k, blocks_k = stages[:2]
        level, work = out[LEVEL], out[WORK]
        passed: Future[tuple[int, bool]] = Future()  # the levels' count; whether first
        sealed: Future[int] = Future()  # the levels' checksum, when the worker was first
        mine_done = threading.Event()  # this thread's pass is over: the count is the halves'

        def levels() -> Counted | None:
            try:
                levels_k(check=False, **{LEVEL: level, WORK: work}, **_pick(levels_k, given))
                nlev = int(level.max()) + 1
            except BaseException as err:
                passed.set_exception(err)
                raise
            first = not mine_done.is_set()
            passed.set_result((nlev, first))
            if first:  # idle until this thread's pass ends: the levels' hash, in cache
                try:
                    sealed.set_result(digest(level))
                except BaseException as err:
                    sealed.set_exception(err)
                    raise
            if len(level) < MIN_ROWS_PER_LEVEL * nlev or (HALVES_WHEN_LATE and mine_done.is_set()):
                return None
            return self._key_count_whole(level, nlev, given)

        job = submit(levels)
        try:
            mine = {k: out[k] for k in (CLEV, BLOCK)}
            blocks_k(check=False, **mine, **_pick(blocks_k, given))
            mine_done.set()
            meanwhile()
        finally:
            mine_done.set()
            nlev, first = passed.result()
        counted = functools.partial(self._key_count_halves, level, nlev, given)
        sizes = functools.partial(_level_sizes, stages[4], level, nlev, given)
        seal = functools.partial(_remember, level, sealed) if first else None
        return nlev, LevelCount(counted, sizes, job, seal)

    def _pass_on_two(
        self,
        out: dict[str, Any],
        given: Mapping[str, object],
        meanwhile: Callable[[], None],
        beside: Sequence[Future[tuple[int, int]] | None] = (None,),
    ) -> tuple[int, LevelCount]:
        """The pass of an unchecked inspection on two threads, writing ``out``'s arrays:
        with :data:`SPLIT_PASS`, :meth:`_split_pass`; else the joint pass on this thread,
        ``meanwhile`` after it, and the count of the levels made when first asked for, as
        after a split pass whose worker left them uncounted (both threads one half of the
        nodes each, :meth:`LevelCount.result`, or one histogram for the sizes alone,
        :meth:`LevelCount.sizes`). Returns the number of levels (the one a worker took
        beside ``meanwhile`` when it started one: ``beside[0]``, :func:`_sealed_beside`)
        and their count."""
        if SPLIT_PASS:
            return self._split_pass(out, given, meanwhile)
        stage, hist_k = self._stages[0], self._split()[4]
        stage(check=False, **out, **_pick(stage, given))
        meanwhile()
        level = out[LEVEL]
        job = beside[0]
        levels = _count_of(level) if job is None else job.result()[1]
        none: Future[Counted | None] = Future()
        none.set_result(None)
        counted = functools.partial(self._key_count_halves, level, levels, given)
        sizes = functools.partial(_level_sizes, hist_k, level, levels, given)
        return levels, LevelCount(counted, sizes, none)

    def _key_count_whole(self, key: np.ndarray, keys: int, given: Mapping[str, object]) -> Counted:
        """:meth:`_key_count_halves` on one thread: the histogram and the slots stages over
        every node."""
        hist_k, slots_k = self._split()[4:6]
        ptr = _level_sizes(hist_k, key, keys, given)
        slot = np.empty(len(key), dtype=np.int32)
        args = {CLEV: key, CSLOT: slot, KSTART: ptr[:keys].copy(), **_pick(slots_k, given)}
        slots_k(check=False, **args, **{SORT_LO: 0, SORT_HI: len(key)})
        return ptr, slot

    def _candidate(
        self,
        given: Mapping[str, object],
        k: int,
        level: np.ndarray,
        levels: int,
        candidate: tuple[np.ndarray, int, int],
        work: np.ndarray,
        team: int,
        ahead: LevelCount | None,
        runs: Runs | None = None,
    ) -> tuple[coarse.Parts, int, Callable[[], np.ndarray]]:
        """The parts of the ``k``-th coarse candidate (its coarse levels, their count, its
        block shift), all the work, and what gives the level sizes' prefix sums (the first
        candidate's sort counts them on one thread; after a pass on two, ``ahead`` counts
        them when first asked for, as :meth:`_by_runs` leaves them: an estimate that settles
        without them never counts them). A large loop's first candidate is sorted by its
        ``runs`` where the pass found them (:meth:`_by_runs`, whose stages are compiled
        with the split pass's), the others by rows."""
        clev, keys, shift = candidate
        n = len(clev)
        if k == 0 and runs is not None:  # one kernel's run blocks: the runs sorted
            counted, found, total = self._by_runs(given, level, levels, runs, work, team, ahead)
            return found, total, counted
        sizes: Callable[[], np.ndarray]
        if k == 0 and ahead is not None:  # the level sizes counted when first asked for
            cptr, cslot = self._key_count_halves(clev, keys, given)
            corder, wsum = self._ordered_halves(given, cslot, work)
            sizes = ahead.sizes
        else:
            by = (level, levels) if k == 0 else (clev, keys)
            ptr, cptr, corder, wsum = self._sorted(given, *by, clev, keys, work)
            sizes = functools.partial(_given, ptr)
        blocks = coarse.Blocks(shift, n // len(self._free), self._free, runs=self._runs and k == 0)
        scan = self._scan_for(n) if blocks.by_rows else None  # its C loops cut by rows
        found = coarse.split(corder, cptr, keys, work, blocks, team, wsum, scan)
        return found, int(wsum[-1]), sizes

    def _scan_for(self, n: int) -> ChainScan | None:
        """The fixed C loops of :mod:`spf.runtime.chain_scan` for a loop of ``n`` nodes large
        enough to be joined along chains (:data:`spf.runtime.chains.JOIN_NODES`), whose join
        compiles them anyway, else None (numpy: no compile for a small loop)."""
        if n < chains.JOIN_NODES or self._make_chains is None:
            return None
        return self._once("_chain_kernel", self._make_chains)[1]

    def _by_runs(
        self,
        given: Mapping[str, object],
        level: np.ndarray,
        levels: int,
        found: Runs,
        work: np.ndarray,
        team: int,
        ahead: LevelCount | None,
    ) -> tuple[Callable[[], np.ndarray], coarse.Parts, int]:
        """The sort by coarse level and the parts from the runs ``found`` of the coarse
        levels (:mod:`spf.runtime.coarse_runs`; one kernel's run blocks,
        :meth:`_sorts_runs`): (what gives the level sizes' prefix sums, the parts, all the
        work). The order and the runs' work come from the generated fill, in two halves of
        the runs when the pass ran on two threads; the level sizes from the worker's count
        (``ahead``), else from a histogram stage run when they are asked for (a plan whose
        estimate settles without them never counts them)."""
        stages = self._split()
        fill_k, reach_k = stages[6:8]
        runs = len(found.first)
        order = np.empty(len(work), dtype=np.int32)  # the executor's width (NARROW_ORDER)
        run_work = np.empty(runs, dtype=np.int64)  # in node order
        run_top = np.empty(runs, dtype=np.int64)
        args = {CORDER: order, RUN_WORK: run_work, RUN_TOP: run_top, WORK: work, RUNS_N: runs}
        args |= {RUN_FIRST: found.start, RUN_LEN: found.size, RUN_AT: found.at}
        args |= _pick(fill_k, given)
        if ahead is None:
            fill_k(check=False, **args, **{RUN_LO: 0, RUN_HI: runs})
        else:  # the worker counts the levels meanwhile
            _in_halves(fill_k, args, runs // 2, runs, lo=RUN_LO, hi=RUN_HI)
        wsum = np.zeros(runs + 1, dtype=np.int64)
        np.cumsum(run_work[found.perm], out=wsum[1:])

        def level_sizes() -> np.ndarray:
            if ahead is not None:
                return ahead.sizes()
            return _level_sizes(stages[4], level, levels, given)

        reach = functools.partial(_reach, reach_k, work, _pick(reach_k, given))
        parts = split_runs(found, wsum, order, team, reach, run_top, stages[8])
        return level_sizes, parts, int(wsum[-1])

    def _sorted(
        self,
        given: Mapping[str, object],
        level: np.ndarray,
        levels: int,
        key: np.ndarray,
        keys: int,
        work: np.ndarray,
        ahead: LevelCount | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The generated sort stages: the prefix sums of the sizes of ``level``'s
        ``levels`` values and of ``key``'s ``keys`` values (O(levels) entries each, no
        O(rows) memset), the stable counting sort of the nodes by ``key`` and the prefix
        sums of ``work`` in that order: (levelptr, keyptr, order, wsum). ``ahead``: the
        count of the levels a worker thread takes (:meth:`_split_pass`), which gives the
        level sizes and the slots (then ``key`` is ``level``; a coarse key after a pass on
        two threads is sorted by :meth:`_candidate`)."""
        if self._pair is None:
            raise CodegenError(f"spf bug: {self.name} has no coarse-level sort")
        count_k = self._pair[0]
        n = len(key)
        if ahead is not None:
            if key is not level:
                raise CodegenError(f"spf bug: {self.name} sorts a coarse key by the level count")
            levelptr, cslot = ahead.result()
            return (levelptr, levelptr, *self._ordered_halves(given, cslot, work))
        levelptr = np.zeros(count_entries(levels), dtype=np.int64)  # the histograms' copies
        keyptr = np.zeros(count_entries(keys), dtype=np.int64)
        cslot = np.empty(n, dtype=np.int32)
        count_k(
            level=level,
            clev=key,
            levelptr=levelptr,
            clevptr=keyptr,
            cslot=cslot,
            check=False,
            **{LEVELS_N: levels, CLEVELS_N: keys},
            **_pick(count_k, given),
        )
        levelptr = levelptr[: levels + 1]
        return (levelptr, _started(keyptr, keys), *self._ordered(given, cslot, work))

    def _ordered(
        self, given: Mapping[str, object], cslot: np.ndarray, work: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The order of the nodes by their slots ``cslot`` and the prefix sums of ``work``
        in that order, by the generated sort stages."""
        assert self._pair is not None
        _, order_k, sums_k = self._pair
        n = len(cslot)
        order, wsum = np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64)
        wsum[0] = 0
        order_k(cslot=cslot, corder=order, check=False, **_pick(order_k, given))
        sums_k(corder=order, work=work, wsum=wsum, check=False, **_pick(sums_k, given))
        return order, wsum

    def _key_count_halves(
        self,
        key: np.ndarray,
        keys: int,
        given: Mapping[str, object],
        starts: np.ndarray | None = None,
    ) -> Counted:
        """The count of ``key``'s ``keys`` values on two threads, each over one half of the nodes
        (:func:`spf.analysis.coarse_inspector.build_ranged_count`, the halves split at a
        multiple of its four nodes an iteration): both halves' histograms (each the sum of
        its four copies), the starts (the second half's a key's start plus the first half's
        count of it), both halves' slots. ``starts``: the starts of the keys over every node
        when already counted (:meth:`LevelCount.sizes`): then only the first half's
        histogram is taken, on this thread (the second half's start of a key is its start
        plus the first half's count of it), and the starts are ``starts``."""
        hist_k, slots_k = self._split()[4:6]
        n = len(key)
        half = n // 2 // COUNT_WAYS * COUNT_WAYS  # a range's iterations take whole groups
        args = {CLEV: key, CLEVELS_N: keys, **_pick(hist_k, given)}
        if starts is None:
            copies = np.zeros((2, COUNT_WAYS, keys), dtype=np.int64)  # each half's histograms
            flat = copies.reshape(2, -1)
            _in_halves(hist_k, {**args, KHIST: flat[0]}, half, n, {KHIST: flat[1]})
            first, second = copies.sum(axis=1)
            ptr = np.empty(keys + 1, dtype=np.int64)
            ptr[0] = 0
            np.cumsum(first + second, out=ptr[1:])
        else:  # the first half's histogram alone
            first = _histogram(hist_k, key, keys, given, half)
            ptr = starts
        slot = np.empty(n, dtype=np.int32)
        args = {CLEV: key, CSLOT: slot, **_pick(slots_k, given)}
        _in_halves(
            slots_k, {**args, KSTART: ptr[:keys].copy()}, half, n, {KSTART: ptr[:keys] + first}
        )
        return ptr, slot

    def _ordered_halves(
        self, given: Mapping[str, object], cslot: np.ndarray, work: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_ordered` on two threads, each stage over one half of the positions
        (:func:`spf.analysis.coarse_inspector.build_ranged_sort`); the second half's sums
        start from 0 and get the first half's total added once both are done (integer
        sums: the same values)."""
        order_k, sums_k = self._split()[2:4]
        n = len(cslot)
        half = n // 2
        order, wsum = np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64)
        wsum[0] = 0
        _in_halves(order_k, {CSLOT: cslot, CORDER: order, **_pick(order_k, given)}, half, n)
        _in_halves(sums_k, {CORDER: order, WORK: work, WSUM: wsum, **_pick(sums_k, given)}, half, n)
        wsum[half + 1 :] += wsum[half]
        return order, wsum

    @functools.cached_property
    def _loop_arrays(self) -> tuple[tuple[str, ...], frozenset[str], frozenset[str]]:
        """The arrays a call passes (the executor's but the plan's), in order and as a set,
        and every argument it may pass (those and the parameters but the plan's)."""
        mine = [a for a in self._signature.args if a.name not in self._plan_names]
        arrays = tuple(a.name for a in mine if a.kind != "param")
        return arrays, frozenset(arrays), frozenset(a.name for a in mine)

    def _no_missing_arrays(self, args: Mapping[str, object]) -> None:
        """Refuse a call that leaves out one of the loop's arrays, before the plan's checks
        (which took a missing index array for another one), or passes an unknown argument,
        naming the loop's arguments only (not the executor's, which come from the plan)."""
        arrays, every, known = self._loop_arrays
        if every <= args.keys() <= known:
            return
        missing = [name for name in arrays if name not in args]
        if missing:
            raise ArgumentError(
                f"{self.name}: missing array argument(s) {', '.join(missing)}; pass every "
                f"array of the loop by name ({', '.join(arrays)}); the plan's come from plan="
            )
        allowed = [a.name for a in self._signature.args if a.name in known]
        raise ArgumentError(
            f"{self.name}: unknown argument(s) {', '.join(sorted(args.keys() - known))}; "
            f"expected: {', '.join(allowed)} (and plan=, check=)"
        )

    def _check_parts(self, plan: Plan, args: Mapping[str, object], checked: bool) -> None:
        """A coarse plan this kernel's inspector did not build: its parts checked against the
        dependences of these index arrays (once per plan), ``ArgumentError`` when one joins
        two parts of a coarse level or goes back to an earlier one. Only a ``check=True``
        call, whose index arrays match the plan's fingerprint, records the plan as checked
        for every later call; an unchecked call's arrays (trusted, not compared with the
        fingerprint) record it for unchecked calls only."""
        if _CHECKED.get(plan) == self._made_by:
            return
        if not checked and _CHECKED_UNCHECKED.get(plan) == self._made_by:
            return
        if self._check_kernel is None:
            raise CodegenError(f"spf bug: {self.name} has no plan check")
        check_k = self._check_kernel()
        part_of, level_of = coarse.row_parts(plan_parts(plan))
        pos_of = np.empty(len(plan.coarse_order), dtype=np.int64)
        pos_of[plan.coarse_order] = np.arange(len(plan.coarse_order), dtype=np.int64)
        bad = np.zeros((), dtype=np.int64)
        given: dict[str, Any] = {PART_OF: part_of, LEVEL_OF: level_of, POS_OF: pos_of, BAD: bad}
        check_k(**given, **_pick(check_k, args))
        if int(bad):
            raise ArgumentError(
                f"{self.name}: plan= runs {int(bad)} dependence(s) of loop {plan.loop!r} in two "
                "parts of one coarse level or against the coarse-level order (a race), or "
                "before its source within a part; build plans with kernel.inspect(...)"
            )
        (_CHECKED if checked else _CHECKED_UNCHECKED)[plan] = self._made_by

    def _inspected(self, args: Mapping[str, object]) -> dict[str, Any]:
        """The arguments of ``args`` the inspector reads, with the sizes not given taken from
        the arrays' declared shapes as any call takes them (``N`` from ``y.shape[0]``)."""
        given = {k: v for k, v in args.items() if k in self._inputs}
        binder = self.__dict__.get("_binder") or self._sizes_binder
        for p in binder._infer:
            if p not in args and (origin := binder._origin(p, args)) is not None:
                given[p] = origin[2]
        return given

    @functools.cached_property
    def _sizes_binder(self) -> Binder:
        """Before the executor is loaded (:meth:`wrap`), a binder of its signature: the
        sizes that follow from the arrays' shapes follow from the signature alone."""
        return Binder(self._signature)

    def _count(self, given: Mapping[str, object]) -> int:
        fn, names = _extent_expr(self._extent)
        missing = sorted(names - set(given))
        if missing:
            raise ArgumentError(
                f"{self.name}.inspect: give {', '.join(missing)} (the wavefront loop "
                f"{self._names.loop!r} runs 0 <= {self._names.loop} < {self._extent})"
            )
        values = {k: given[k] for k in names}
        if not all(isinstance(v, (int, np.integer)) for v in values.values()):
            raise ArgumentError(
                f"{self.name}.inspect: {', '.join(sorted(names))} must be ints, got {values!r}"
            )
        ints = {k: int(v) for k, v in values.items()}  # type: ignore[call-overload]
        extent = int(fn(ints))
        negative = sorted(k for k, v in ints.items() if v < 0)
        if extent < 0 and negative:  # N = -3: not an empty loop, a wrong size
            raise ArgumentError(
                f"{self.name}.inspect: {', '.join(f'{k}={ints[k]}' for k in negative)} is "
                f"negative, and the wavefront loop {self._names.loop!r} runs 0 <= "
                f"{self._names.loop} < {self._extent}; pass the sizes of the index arrays"
            )
        return max(extent, 0)

    def __call__(
        self, *positional: object, check: bool = True, plan: object = None, **args: object
    ) -> None:
        """Run the executor in the order of ``plan`` (inspected here when not given); each
        array's checksum is taken once (:func:`spf.runtime.checksum.shared`). An unchecked
        call whose arguments look like the plan's last validated call's replays its C call
        (:mod:`spf.runtime.plan_call`). Once a hot call's record is made, the look helper's
        method stands for this function as the class's ``__call__`` and runs such calls
        itself, in C; every other call still comes here (:mod:`spf.runtime.plan_method`)."""
        if check is False and plan is not None and not positional:
            quick = self._quick.get(id(plan))
            if quick is not None and quick.plan() is plan:
                # the last call's very arguments, unchanged: its C call (inline, as in
                # plan_prepared.PreparedPlanCall.__call__: a helper's call costs per call)
                hot = quick.hot
                if hot is not None:
                    fire = hot[5]
                    if fire:
                        if HOT_CALL[0](args, True, fire):
                            self._last_threads = hot[3]._last_threads = 1
                            return
                    elif LOOK_SAME[0](id(args), 1, hot[0]):
                        self._last_threads = hot[3]._last_threads = 1
                        hot[1](*hot[2])
                        if fire is None:
                            quick.hot = fired(hot)
                            if quick.hot[5]:  # later hot calls: from the dict, in C
                                install(WavefrontKernel)
                        return
                if quick.run(self, args):
                    return
        with shared():
            self._call(positional, check, plan, args)

    def _call(
        self, positional: tuple[object, ...], check: bool, plan: object, args: dict[str, object]
    ) -> None:
        nm = self._names
        quick: Quick | None = None
        if not self._plan_names.isdisjoint(args):
            clash = self._plan_names & set(args)
            raise ArgumentError(
                f"{self.name}: {', '.join(sorted(clash))} come from the inspection plan; pass "
                "plan=kernel.inspect(...) instead"
            )
        if positional:
            Kernel.__call__(self, *positional, check=check, **args)  # the binder's error
        self._no_missing_arrays(args)
        if plan is None:
            plan = self.inspect(check=check, **self._inspected(args))
        elif not isinstance(plan, Plan):
            raise ArgumentError(
                f"{self.name}: plan must be a Plan from kernel.inspect(...), got "
                f"{type(plan).__name__}"
            )
        else:
            self._check_plan(plan, args, contents=check)
            quick = None if check else self._remember(plan, args)
        if plan.strategy == "serial":
            self._run_in_order(plan, check, args, quick=quick)
            return
        if self._coarse != (plan.strategy in ("coarse", "levels")):
            raise ArgumentError(
                f"{self.name}: a plan of strategy {plan.strategy!r} does not run on this kernel "
                f"(wavefront method {nm.method!r}); build plans with this kernel's "
                "kernel.inspect(...)"
            )
        if self._coarse:
            self._check_parts(plan, args, check)
        team = GOVERNOR.team()
        if team == 1:  # one thread: the loop in order beats the executor's order
            self._run_in_order(plan, check, args, team, quick)
            return
        extra: dict[str, object]
        if self._coarse:  # the parts alone (the plan's level order is not read)
            extra = {
                nm.levelptr: plan.coarse_ptr,
                nm.partptr: plan.part_ptr,
                nm.order: coarse_order(plan),
                nm.nlevels: plan.coarse_levels,
                nm.nparts: plan.parts,
            }
            if plan.copies:
                self._run_copies(plan, check, args, extra)
                return
        elif nm.method == "p2p":  # one flag per iteration, set when it is done
            extra = self._p2p_arrays(plan, args, check)
            quick = None  # never replayed: each call needs its flags zeroed again
        else:  # by groups: a run of narrow levels costs one barrier
            extra = {nm.levelptr: plan.groupptr, nm.order: plan.order, nm.nlevels: plan.groups}
            extra[nm.single] = plan.one_thread
        self._run_executor(plan, check, args, extra, quick, PARALLEL)

    def _remember(self, plan: Plan, args: Mapping[str, object]) -> Quick | None:
        """The record of ``plan``'s unchecked calls on arguments that look like ``args``
        (:func:`~spf.runtime.plan_call.remember`). Where the C helper recorded their look,
        its method stands for the class's ``__call__`` from then on: a later keyword call
        on these very arguments, unchanged, is read in C (:mod:`spf.runtime.plan_method`)."""
        quick = remember(self._quick, plan, args, plan.strategy == "serial")
        if quick is not None and quick.last[3]:
            install(WavefrontKernel)
        return quick

    def _p2p_arrays(self, plan: Plan, args: Mapping[str, object], check: bool) -> dict[str, object]:
        """The p2p executor's plan arrays and zeroed flags for a call on ``args``. An
        unchecked call compares the index arrays' contents with the plan's too (a checked
        one did): a row spins until its sources are done, and on a plan of other contents
        one may wait on a row its own thread runs later, a call that never returns."""
        if not check:
            self._check_plan(plan, args, contents=True)
        nm = self._names
        extra: dict[str, object] = {
            nm.levelptr: plan.levelptr,
            nm.order: plan.order,
            nm.nlevels: plan.levels,
        }
        extra[nm.done] = np.zeros(len(plan.order), dtype=np.int32)
        return extra

    def prepare(
        self, free: Sequence[str], *, plan: object = None, check: bool = True, **bound: object
    ) -> PreparedPlanCall:
        """Bind ``plan`` and every argument but the data spaces named in ``free`` once:
        ``call = kernel.prepare(["x", "y", "b"], plan=plan, **index_and_values)``, then
        ``call(x, y, b)`` (:mod:`spf.runtime.plan_prepared`). ``check=True`` runs the kernel
        once, checked, on zero-filled free arrays first."""
        from spf.runtime.plan_prepared import PreparedPlanCall

        if not isinstance(plan, Plan):
            raise ArgumentError(
                f"{self.name}.prepare: give plan=kernel.inspect(...) (the plan the prepared "
                f"calls run), got {type(plan).__name__}"
            )
        return PreparedPlanCall(self, free, plan, bound, check)

    def _run_executor(
        self,
        plan: Plan,
        check: bool,
        args: Mapping[str, object],
        extra: dict[str, object],
        quick: Quick | None = None,
        way: str = ORDER,
    ) -> None:
        """The executor on the plan's arrays in 32 bits (:mod:`spf.runtime.plan_narrow`);
        a plan of more positions than they hold on the executor of 64-bit plan arrays,
        compiled on first use. ``quick``: the record that keeps this call's replay as the
        way ``way`` (:data:`ORDER`: the fused loop in order on one thread)."""
        nm = self._names
        order = extra[nm.order]
        kernel: Kernel = self
        if isinstance(order, np.ndarray) and fits(len(order)):
            plan_arrays = (nm.levelptr, nm.partptr, nm.order, nm.single)
            merged = {**args, **narrowed(plan, extra, plan_arrays)}
            Kernel.__call__(self, check=check, **merged)
        else:
            kernel = self._once("_wide_kernel", self._make_wide)
            merged = {**args, **extra}
            try:
                Kernel.__call__(kernel, check=check, **merged)
            finally:
                self._last_threads = kernel.last_threads
        if quick is not None:
            quick.keep(way, kernel, merged, args, ONE if way == ORDER else TEAM)

    def _run_copies(
        self, plan: Plan, check: bool, args: Mapping[str, object], extra: Mapping[str, object]
    ) -> None:
        """The executor that reads the plan's part-ordered copies, built on the plan's first
        call from this call's arrays; the values gathered again when they changed."""
        spec = self._copy_spec
        if spec is None or spec.names != plan.copies:
            raise ArgumentError(
                f"{self.name}: plan= runs on copies of {', '.join(plan.copies)}, which this "
                "kernel does not copy; build plans with this kernel's kernel.inspect(...)"
            )
        with _SORT_LOCK:
            made = _COPIES.get(plan)
            if made is None:
                at = {k: v for k, v in extra.items() if isinstance(v, np.ndarray)}
                made = Copies.build(spec, coarse_order(plan), args, at)
                # kept only when built from the plan's own index arrays: an unchecked call on
                # other arrays of its sizes (its result is wrong, as any unchecked call's of
                # a plan over other arrays) must leave no stale copies to later calls
                if check or self._inspected_these(plan, args):
                    _COPIES[plan] = made
        kernel = self._copy_kernels.get(made.narrow)
        if kernel is None:
            with self._serial_lock:
                kernel = self._copy_kernels.get(made.narrow)
                if kernel is None and self._make_copy is not None:
                    kernel = self._copy_kernels[made.narrow] = self._make_copy(made.narrow)
        if kernel is None:
            raise CodegenError(f"spf bug: {self.name} has no executor of copies")
        with made.lock:  # one call at a time refreshes and reads the value copies
            values = made.refresh(args)
            arrays = {**extra, **made.arrays}  # the plan's arrays in the copies' width
            try:
                Kernel.__call__(kernel, check=check, **args, **arrays, **values)
            finally:
                self._last_threads = kernel.last_threads

    def _inspected_these(self, plan: Plan, args: Mapping[str, object]) -> bool:
        """Whether ``plan`` was inspected on the contents of these index arrays (its
        fingerprint: one hash of each, as a checked call takes)."""
        try:
            self._check_plan(plan, args, contents=True)
        except ArgumentError:
            return False
        return True

    def _run_in_order(
        self,
        plan: Plan,
        check: bool,
        args: Mapping[str, object],
        team: int | None = None,
        quick: Quick | None = None,
    ) -> None:
        """The loop on one thread: a plan of fused kernels by the order its inspector left
        (:data:`IN_ORDER`: the executor on one part), any other by the serial kernel.
        ``team``: :meth:`~spf.runtime.threads.ThreadGovernor.team` when the caller has
        it; ``quick``: the record that keeps the call's replay."""
        later = plan.__dict__.get(IN_ORDER)
        if not isinstance(later, coarse.Later):
            self._run_serial(check, args, quick)
            return
        one, nm = later.get(), self._names
        extra = {
            nm.levelptr: one.ptr,
            nm.partptr: one.partptr,
            nm.order: one.order,
            nm.nlevels: one.levels,
            nm.nparts: one.parts,
        }
        if (GOVERNOR.team() if team is None else team) == 1:
            self._run_executor(plan, check, args, extra, quick)
            return
        with openmp_threads(1):  # a part per level: a second thread would only wait
            self._run_executor(plan, check, args, extra, quick)

    def _run_serial(self, check: bool, args: Mapping[str, object], quick: Quick | None) -> None:
        """The loop in its original order on one thread (the serial kernel); ``quick``: the
        record that keeps the call's replay."""
        serial = self._serial
        try:
            Kernel.__call__(serial, check=check, **args)
        finally:
            self._last_threads = serial.last_threads  # 1: the loop in its order
        if quick is not None and not serial._openmp:
            quick.keep(ORDER, serial, args, args, SERIAL)

    def _check_plan(self, plan: Plan, args: Mapping[str, object], *, contents: bool) -> None:
        """The plan inspected these index arrays: sizes, dtypes and parameter values always,
        the contents (a checksum, which reads every index) only with ``check=True``. What
        does not change between calls (the plan's expected fingerprint, its seal) is worked
        out once per plan: a call pays for hashing its index arrays, not for Python."""
        if plan.loop != self._names.loop:
            raise ArgumentError(
                f"{self.name}: the plan is for loop {plan.loop!r}, this kernel's wavefront "
                f"loop is {self._names.loop!r}"
            )
        if self._made_by not in plan.inspected:
            raise ArgumentError(
                f"{self.name}: plan= was built by the inspector of another computation (its "
                f"levels order other dependences); build a plan with this kernel's "
                "kernel.inspect(...)"
            )
        if contents and not _sealed(plan):
            raise ArgumentError(
                f"{self.name}: plan= holds levels (level_of) other than those its inspector "
                "computed; build a plan with kernel.inspect(...)"
            )
        name = _differing_args(_expected(plan), args, contents)
        if name is not None and name not in args:  # a size left to the arrays' shapes
            name = _differing_args(_expected(plan), self._inspected(args), contents)
        if name is not None:
            raise ArgumentError(
                f"{self.name}: plan= was built from other index arrays: {name!r} differs from "
                f"the {name!r} the plan inspected (size or contents); build a plan for these "
                "arrays with kernel.inspect(...)"
            )


_CHECKED: weakref.WeakKeyDictionary[Plan, tuple[str, str, tuple[int, ...], int | None]] = (
    weakref.WeakKeyDictionary()
)
"""The coarse plans each kernel (its inspector's ``_made_by``) built, or checked on a
``check=True`` call."""
_CHECKED_UNCHECKED: weakref.WeakKeyDictionary[
    Plan, tuple[str, str, tuple[int, ...], int | None]
] = weakref.WeakKeyDictionary()
"""The coarse plans checked on an unchecked call only (good for unchecked calls)."""
_COPIES: weakref.WeakKeyDictionary[Plan, Copies] = weakref.WeakKeyDictionary()
"""Each plan's part-ordered copies (:mod:`spf.runtime.copies`), built on its first call
whose index arrays are the plan's (a checked call's, or an unchecked call's that match its
fingerprint)."""


Split = tuple[Kernel, Kernel, Kernel, Kernel, Kernel, Kernel, Kernel, Kernel, RunScan]
"""The pass as two (levels and work; coarse levels), the order and sums stages over a range
of positions, the count's histogram and slots over one, the sort by runs' fill and
reach (:meth:`WavefrontKernel._by_runs`), and the scan for the runs' starts
(:mod:`spf.runtime.run_scan`, fixed C: the same library for every wavefront)."""
Counted = tuple[np.ndarray, np.ndarray]
"""The prefix sums of a key's value sizes (``keys + 1`` entries) and each node's slot."""


class LevelCount:
    """The count of the levels of a pass run on two threads
    (:meth:`WavefrontKernel._split_pass`): the worker's (``ahead``, which gives None when it
    left them uncounted), else made when first asked for, by the thread that inspects:
    :meth:`result` (the starts and the slots, a levels plan's sort: both threads count one
    half of the nodes each) or :meth:`sizes` (the starts alone, what an estimate reads: one
    histogram). The worker used to count every loop's levels right after its pass, also
    for a plan sorted by its runs whose estimate never reads them (Poisson's: ~0.25-0.3
    serial solves of the worker's CPU time, docs/inspection.md)."""

    def __init__(
        self,
        counted: Callable[[np.ndarray | None], Counted],
        sizes: Callable[[], np.ndarray],
        ahead: Future[Counted | None],
        seal: Callable[[], None] | None = None,
    ) -> None:
        self.seal = seal
        """What waits for the checksum of the levels that the worker took right after its
        pass, when it finished first, and records it in the caller's scope (for the plan's
        seal); None when it did not."""
        self._counted = counted
        self._sizes = sizes
        self._ahead = ahead
        self._got: Counted | None = None
        self._starts: np.ndarray | None = None

    def join(self) -> None:
        """Wait for the worker (nothing of the inspection left running)."""
        self._ahead.result()

    def result(self) -> Counted:
        """The starts of the levels and each node's slot (the slots alone counted when
        :meth:`sizes` counted the starts: a histogram of the first half of the nodes, not
        of both again)."""
        if self._got is None:
            self._got = self._ahead.result() or self._counted(self._starts)
        return self._got

    def sizes(self) -> np.ndarray:
        """The starts of the levels (``levels + 1`` entries)."""
        if self._got is None:
            self._got = self._ahead.result()
        if self._got is not None:
            return self._got[0]
        if self._starts is None:
            self._starts = self._sizes()
        return self._starts


def _in_halves(
    stage: Kernel,
    args: dict[str, Any],
    half: int,
    n: int,
    second: dict[str, Any] | None = None,
    *,
    lo: str = SORT_LO,
    hi: str = SORT_HI,
) -> None:
    """The ranged ``stage`` over ``[half, n)`` on a worker thread (``args`` updated by
    ``second``) and ``[0, half)`` on this one, unchecked, the range passed as the
    parameters ``lo`` and ``hi``; returns when both are done. When no worker has taken the
    second half by the time this thread is done with the first (both busy with the
    inspection's other jobs: the checksums, the count of the levels), this thread runs it
    too rather than wait (the same ranges, so the same values)."""

    def run(first: int, last: int, more: dict[str, Any]) -> None:
        stage(check=False, **{**args, **more, lo: first, hi: last})

    job = submit(functools.partial(run, half, n, second or {}))
    try:
        run(0, half, {})
    finally:
        queued = job.cancel()  # still queued: never started (else wait for it)
        if not queued:
            job.result()
    if queued:  # only after the first half ran without an error
        run(half, n, second or {})


def _remember(level: np.ndarray, sealed: Future[int]) -> None:
    """The checksum of ``level`` a worker took, recorded in this thread's scope."""
    record_checksum(level, sealed.result())


def _sealed_beside(level: np.ndarray) -> Future[tuple[int, int]] | None:
    """The checksum of the pass's 32-bit ``level`` (the plan's seal) and the number of
    levels, taken on a worker thread (:func:`spf.runtime.checksum.submit`) while the caller
    finds the runs of the coarse levels (numpy that lets go of the GIL; a loop without
    likely runs, the 12-level triangle's, has nothing to do meanwhile and counts them on
    the caller as before): both read ``level``, the count in the worker's cache after the
    hash, and neither is left for the stages after the runs, whose halves the worker then
    runs alone. None for levels under :data:`spf.runtime.checksum.PREFETCH_BYTES` (the
    hash and the count cost less than a hand-off) or without ``xxhash``: then the caller
    counts them, and the seal is prefetched as before."""
    if xxh3 is None or level.nbytes < PREFETCH_BYTES:
        return None
    return submit(lambda: (digest(level), _count_of(level)))


def _remember_sealed(level: np.ndarray, job: Future[tuple[int, int]]) -> None:
    """The checksum of ``level`` that :func:`_sealed_beside` took, recorded in this
    thread's scope."""
    record_checksum(level, job.result()[0])


def _count_of(key: np.ndarray) -> int:
    """How many values a pass's key array (levels or coarse levels from 0) takes: its
    largest plus one, 0 for no node."""
    return int(key.max()) + 1 if len(key) else 0


def _given(value: np.ndarray) -> np.ndarray:
    """``value`` (what a sort that counted the level sizes gives for them)."""
    return value


def _level_sizes(
    hist_k: Kernel,
    level: np.ndarray,
    levels: int,
    given: Mapping[str, object],
) -> np.ndarray:
    """The prefix sums of the level sizes (``levels + 1`` entries) by the histogram
    stage of :func:`spf.analysis.coarse_inspector.build_ranged_count` over every node
    (its :data:`COUNT_WAYS` copies added)."""
    ptr = np.zeros(levels + 1, dtype=np.int64)
    np.cumsum(_histogram(hist_k, level, levels, given, len(level)), out=ptr[1:])
    return ptr


def _histogram(
    hist_k: Kernel, key: np.ndarray, keys: int, given: Mapping[str, object], end: int
) -> np.ndarray:
    """The count of each of ``key``'s ``keys`` values among its first ``end`` nodes (the
    histogram stage's :data:`COUNT_WAYS` copies added)."""
    copies = np.zeros(COUNT_WAYS * keys, dtype=np.int64)
    args = {CLEV: key, CLEVELS_N: keys, KHIST: copies, **_pick(hist_k, given)}
    hist_k(check=False, **args, **{SORT_LO: 0, SORT_HI: end})
    counts: np.ndarray = copies.reshape(COUNT_WAYS, keys).sum(axis=0)
    return counts


def _level_rival(
    fused: bool,
    gain: float,
    sizes: Callable[[], np.ndarray],
    n: int,
    levels: int,
    total: int,
    team: int,
    unit: float,
) -> float:
    """The levels' estimate (:func:`spf.runtime.coarse.level_estimate` of the level sizes
    ``sizes`` gives), or 0.0 for kernels ``fused`` into one loop (a level holds every
    kernel's rows far apart: its plan ran at 2-3x the CPU time of either coarse plan,
    docs/inspection.md) and when the coarse plan's ``gain`` beats the most any level sizes
    could give (:func:`spf.runtime.coarse.level_bound`): the sizes are then not counted."""
    if fused or gain > coarse.level_bound(n, levels, total, team, unit):
        return 0.0
    return coarse.level_estimate(sizes(), levels, total, team, unit)


def _reach(
    reach_k: Kernel,
    work: np.ndarray,
    params: Mapping[str, object],
    first: np.ndarray,
    size: np.ndarray,
    share: np.ndarray,
) -> np.ndarray:
    """:data:`spf.runtime.coarse_runs.Reach` by the generated stage
    :func:`spf.analysis.coarse_inspector.build_run_reach` (``work``: each node's)."""
    got = np.empty(len(first), dtype=np.int64)  # the stage writes every run's entry
    share = np.ascontiguousarray(share, dtype=np.int64)
    arrays = {REACH_FIRST: first, REACH_LEN: size, REACH_SHARE: share, REACH_GOT: got}
    reach_k(check=False, **arrays, **{WORK: work, REACH_N: len(first)}, **params)
    return got


def _started(ptr: np.ndarray, keys: int) -> np.ndarray:
    """A count stage's pointers, each entry advanced to the next start, as the starts
    (``keys + 1`` entries, a view of ``ptr``)."""
    out = ptr[: keys + 1]
    out[1:] = out[:keys].copy()
    out[0] = 0
    return out


def _wait(joins: Sequence[Callable[[], object]]) -> None:
    """The checksums :func:`spf.runtime.checksum.prefetch` started, recorded in the scope
    (and any other job the inspection left running, by what waits for it)."""
    for join in joins:
        join()


_wide = widen
"""The coarse pass's 32-bit levels widened in place (:func:`spf.runtime.plan_levels.widen`)."""


def _warm(level_of: np.ndarray, args: Mapping[str, object]) -> None:
    """Inside :func:`spf.runtime.checksum.shared`: the checksums of ``level_of`` and of
    the arrays of ``args``, taken together (in parallel) for the seal and fingerprint that
    follow."""
    checksums([level_of, *(v for v in args.values() if isinstance(v, np.ndarray))])


_SEALED: weakref.WeakKeyDictionary[Plan, bool] = weakref.WeakKeyDictionary()
"""Per plan, whether its ``level_of`` is the one its inspector sealed. A plan's arrays are
read-only and a plan rebuilt from other arrays is another object, so one look per plan
holds for all its calls."""

_EXPECTED: weakref.WeakKeyDictionary[Plan, Expected] = weakref.WeakKeyDictionary()
"""Per plan, the fingerprint of the arguments it inspected (its ``inspected`` without the
inspector's and the seal's entries)."""


def _sealed(plan: Plan) -> bool:
    got = _SEALED.get(plan)
    if got is None:
        got = _SEALED[plan] = _seal_holds(plan)
    return got


def _seal_holds(plan: Plan) -> bool:
    """Whether ``plan``'s levels have the seal its inspector recorded (its 32-bit levels
    hashed as they are while the plan still holds them narrow)."""
    entry = next((e for e in plan.inspected if e[0] == LEVELS_SEAL), None)
    if entry is None or entry[3] is None:
        return False
    sealed = (entry[0], entry[1], entry[2], entry[3])
    narrow = plan.__dict__.get(NARROW)
    if isinstance(narrow, NarrowLevels) and "level_of" not in plan.__dict__:
        return narrow.sealed(sealed)
    return seal_of(plan.level_of, sealed) == sealed


Expected = tuple[tuple[str, "np.dtype[Any] | None", tuple[int, ...], int | None], ...]
"""A plan's fingerprint as a call compares it: each array's dtype as a dtype (None: a
parameter's value)."""


def _expected(plan: Plan) -> Expected:
    got = _EXPECTED.get(plan)
    if got is None:
        skip = (INSPECTOR, LEVELS_SEAL)
        got = _EXPECTED[plan] = tuple(
            (name, None if dtype == "value" else np.dtype(dtype), shape, crc)
            for name, dtype, shape, crc in plan.inspected
            if name not in skip
        )
    return got


def value_checksum(value: object) -> int:
    """What a fingerprint records of a parameter's value: an integer (every symbolic
    constant) itself, anything else the CRC-32 of its text. Not an integer's CRC-32: values
    whose texts share it (51924 and 14797705) would let a plan pass for other parameters."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    return zlib.crc32(str(value).encode())


@functools.lru_cache(maxsize=1024, typed=True)
def _value_crc(value: object) -> int:
    """:func:`value_checksum`, remembered by value: a call with a plan compares its
    parameters' (``N``, ``NNZ``) at every call, which cost a few microseconds of a small
    matrix's call."""
    return value_checksum(value)


def _differing_args(expected: Expected, args: Mapping[str, object], contents: bool) -> str | None:
    """The first argument of ``expected`` that ``args`` gives otherwise (missing, another
    dtype, shape or value, or with ``contents`` other bytes), None when all agree: what
    :func:`differing` says of :func:`fingerprint`'s, with the arrays hashed in one batch."""
    hashed: list[tuple[str, np.ndarray, int | None]] = []
    for name, dtype, shape, crc in expected:
        value = args.get(name)
        if isinstance(value, np.ndarray):
            if dtype is None or value.dtype != dtype or value.shape != shape:
                return name
            if contents:
                hashed.append((name, value, crc))
        elif value is None or dtype is not None:
            return name
        else:
            try:
                now = _value_crc(value)
            except TypeError:  # unhashable: checksummed as it is
                now = value_checksum(value)
            if now != crc:
                return name
    if hashed:
        got = checksums([a for _, a, _ in hashed])
        for (name, _, crc), now in zip(hashed, got, strict=True):
            if now != crc:
                return name
    return None


def differing(inspected: Fingerprint, now: Fingerprint) -> str | None:
    """The first argument whose fingerprint in ``now`` differs from ``inspected`` (None when
    all agree); an array of ``now`` without a checksum (None) is compared by size and dtype."""
    given = {e[0]: e for e in now}
    for entry in inspected:
        got = given.get(entry[0])
        if got is not None and got[3] is None:  # an array taken without its contents
            got = (*got[:3], entry[3])
        if got != entry:
            return entry[0]
    return None


def _groups(levelptr: np.ndarray, levels: int) -> tuple[int, np.ndarray, np.ndarray]:
    """(groups, groupptr, one_thread) of the levels ``levelptr[:levels + 1]`` (O(levels)): a
    level of MIN_PARALLEL_ROWS or more iterations is a group; a maximal run of narrower ones
    is one group, flagged to run on one thread. The arrays have the executor's UF extents
    (groups + 1 and groups entries)."""
    narrow = np.diff(levelptr[: levels + 1]) < MIN_PARALLEL_ROWS
    starts = np.flatnonzero(~(narrow[1:] & narrow[:-1])) + 1
    starts = np.concatenate([[0], starts]) if levels else starts[:0]
    groups = len(starts)
    groupptr = np.empty(groups + 1, dtype=np.int64)
    groupptr[:groups] = levelptr[starts]
    groupptr[groups] = levelptr[levels]
    one_thread = narrow[starts].astype(np.int64)
    return groups, groupptr, one_thread


def _pick(kernel: Kernel, given: Mapping[str, object]) -> dict[str, Any]:
    """The entries of ``given`` that ``kernel`` takes (its argument names kept per kernel:
    an inspection picks for ~5 stage calls)."""
    names = _ARG_NAMES.get(kernel)
    if names is None:
        names = _ARG_NAMES[kernel] = frozenset(a.name for a in kernel.arguments)
    return {k: v for k, v in given.items() if k in names}


_ARG_NAMES: weakref.WeakKeyDictionary[Kernel, frozenset[str]] = weakref.WeakKeyDictionary()
"""Per stage kernel, the names of its arguments (:func:`_pick`)."""


def compile_wavefront(
    ir: ComputationIR, executor: Executor, name: str | None, check: bool, **options: Any
) -> WavefrontKernel:
    """Generate the executor of ``ir`` (one wavefront loop) and its inspector's pass over
    the dependences with the counting sorts after it, and compile the pass and the sorts as
    one library, at :func:`~spf.runtime.build.light_opt_flags` unless ``cflags`` are given
    (:func:`spf.runtime.compile.compile_units_deferring`: the executor is generated while
    that compiler runs). The executor, one library of its own, is compiled and loaded when
    a call first runs it (:meth:`WavefrontKernel.__getattr__`): a call whose plan runs the
    loop serial (small matrices, one thread) runs the serial kernel instead, so a first such
    call never compiles it; its analysis, warnings and errors stay here. The sorts, which
    read only the levels the pass wrote, are built and called unchecked (:func:`_light_unit`).
    The sorts are
    shared by every wavefront over the same nodes
    (:func:`spf.analysis.inspector.sort_stage_name`): one built with an earlier wavefront's
    pass (in this process or into this cache directory) is remembered and loaded from that
    library, so only the pass is compiled. One compiler run for the pass and the sorts
    saves a run's fixed cost on a cold compile (73.6M instructions: gcc's driver, start,
    assembler and linker; ``docs/inspection.md``); the
    serial kernel (a plan's ``"serial"`` strategy), a coarse kernel's level sort (its plans
    run on their parts, sorted by coarse level: the level order is sorted only when it is
    read, ``plan.order``, ``plan.levelptr``) and a coarse plan's check are generated and
    compiled when a call first needs them."""
    from spf.analysis.coarse_inspector import (
        build_coarse_inspector,
        build_pair_sort,
        build_part_check,
        build_ranged_count,
        build_ranged_sort,
        build_run_fill,
        build_run_reach,
        build_sink_pass,
        build_split_passes,
        can_split_passes,
        feeds_free,
        free_kernels,
        uses_run_blocks,
        zeroes_in_pass,
    )
    from spf.analysis.executor import COARSE_METHODS, plan_arrays_as, serial_computation
    from spf.analysis.inspector import build_inspector, sort_stage_name
    from spf.analysis.local_copies import plan_copies
    from spf.codegen.program import c_function_name
    from spf.runtime.build import light_opt_flags
    from spf.runtime.compile import (
        UnitParts,
        compile_kernel,
        compile_units,
        compile_units_deferring,
        optimisation_flags,
    )

    if len(executor.loops) != 1:
        loops = ", ".join(names.loop for _, names in executor.loops)
        raise CodegenError(
            f"{ir.name} runs the loops {loops} as wavefronts; spf compiles one wavefront "
            "loop per computation: keep the wavefront on one of them"
        )
    ((analysis, names),) = executor.loops
    is_coarse = names.method in COARSE_METHODS
    free = free_kernels(analysis)
    first = (
        build_coarse_inspector(ir, analysis, any(free))
        if is_coarse
        else build_inspector(ir, analysis)
    )
    sort_name = sort_stage_name(analysis)
    # a coarse kernel counts the level sizes in its sort by coarse level (both counting
    # sorts in one pass each); it sorts by level only for a plan whose level order is read
    if is_coarse:
        sorts: tuple[ComputationIR, ...] = build_pair_sort(analysis, sort_name)
    else:
        sorts = build_level_sort(analysis, sort_name)
    library = f"{c_function_name(name or ir.name)}_wavefront"
    ((pass_k, *sorted_k),), (later,) = compile_units_deferring(
        [_light_unit([first, *sorts], f"{library}_light", checked=1)],
        [UnitParts([(executor.ir, name or ir.name, check)], library)],
        light_flags=light_opt_flags(),
        **options,
    )
    run = later if later.compiles else later.kernels()[0]
    run_name = later.signatures[0].function

    def level_sort() -> tuple[Kernel, Kernel]:  # a coarse kernel's, on first use
        unit = _light_unit(build_level_sort(analysis, sort_name), f"{sort_name}_levels")
        ((count, order),) = compile_units([unit], light_flags=light_opt_flags(), **options)
        return count, order

    splits = is_coarse and uses_run_blocks(first) and can_split_passes(ir, analysis)

    def split() -> Split:  # built and compiled on the first 2-thread inspection
        passes = build_split_passes(ir, analysis)
        assert passes is not None
        stages = (
            *passes,
            *build_ranged_sort(analysis, f"{library}_ranged"),
            *build_ranged_count(analysis, f"{library}_ranged"),
            build_run_fill(analysis, f"{library}_runs"),
            build_run_reach(analysis, f"{library}_reach"),
        )
        unit = _light_unit(stages, f"{library}_split")
        flags = optimisation_flags(options.get("cflags"), "light", light_opt_flags())
        # the runs' fixed C (one library for every wavefront) compiled beside the unit
        with ThreadPoolExecutor(max_workers=1) as pool:
            scan = pool.submit(build_run_scan, flags, options.get("cache_dir"))
            kernels = compile_units([unit], light_flags=light_opt_flags(), **options)[0]
            return cast("Split", (*kernels, scan.result()))

    def serial() -> Kernel:
        return compile_kernel(serial_computation(ir), "c", f"{run_name}_serial", check, **options)

    def wide() -> Kernel:  # a plan of more positions than 32-bit plan arrays hold
        wide_ir = plan_arrays_as(executor.ir, names, "int64")
        return compile_kernel(wide_ir, "c", f"{run_name}_wide", check, **options)

    made: list[Kernel] = []

    def check_kernel() -> Kernel:  # compiled on the first plan that needs it
        if not made:
            made.append(compile_kernel(build_part_check(ir, analysis), "c", None, True, **options))
        return made[0]

    def sink_kernel() -> Kernel:  # on the first plan of fused kernels for 2+ threads
        return compile_kernel(build_sink_pass(ir, analysis, free), "c", None, True, **options)

    # the chain pass compiled on the first such plan of at least chains.JOIN_NODES nodes
    chain_kernel = functools.partial(_chain_pass, ir, analysis, options)
    # no sink pass where no edge enters a free kernel: none of its nodes can move
    sinks = sink_kernel if feeds_free(analysis, free) else None
    mixed = (sinks, chain_kernel) if is_coarse and 0 < sum(free) < len(free) else (None, None)
    mixed = (None, chain_kernel) if is_coarse and len(free) == 1 else mixed
    where = (ir, executor.ir, analysis.loop, analysis.groups, names, analysis.nodes)
    found = plan_copies(*where, index_dtype="int32")
    copies: tuple[CopySpec, Callable[[bool], Kernel]] | None = None
    if is_coarse and found is not None:
        spec, narrow_ir = found

        def copy_kernel(narrow: bool) -> Kernel:  # compiled on the first call that runs it
            wide = None if narrow else plan_copies(*where, index_dtype="int64")
            copy_ir = narrow_ir if wide is None else wide[1]
            name = f"{run_name}_copies{'' if narrow else '_wide'}"
            return compile_kernel(copy_ir, "c", name, check, **options)

        copies = (spec, copy_kernel)
    out = WavefrontKernel.wrap(
        run,
        (pass_k, *sorted_k),
        names,
        analysis.nodes,
        serial,
        check_kernel if is_coarse else None,
        free,
        copies,
        is_coarse and zeroes_in_pass(analysis),
        level_sort if is_coarse else None,
        runs=is_coarse and uses_run_blocks(first),
        wide=wide,
        split=split if splits else None,
        sinks=mixed[0],
        chains=mixed[1],
    )
    out._pair = (sorted_k[0], sorted_k[1], sorted_k[2]) if is_coarse else None
    return out


def _chain_span(lo: int, hi: int) -> dict[str, int]:
    """The chain pass's range of sinks ``[lo, hi)`` as its parameters."""
    return {CHAIN_LO: lo, CHAIN_HI: hi}


def _chain_pass(
    ir: ComputationIR, analysis: WavefrontAnalysis, options: Mapping[str, Any]
) -> tuple[Kernel, ChainScan]:
    """The compiled pass of :mod:`spf.analysis.chain_pass` over ``analysis``' dependences,
    and the join's fixed C loops (:mod:`spf.runtime.chain_scan`, built beside it)."""
    from spf.analysis.chain_pass import build_chain_pass
    from spf.runtime.build import light_opt_flags
    from spf.runtime.compile import compile_kernel, optimisation_flags

    flags = optimisation_flags(options.get("cflags"), "light", light_opt_flags())
    with ThreadPoolExecutor(max_workers=1) as pool:
        scan = pool.submit(build_chain_scan, flags, options.get("cache_dir"))
        kernel = compile_kernel(build_chain_pass(ir, analysis), "c", None, True, **options)
        return kernel, scan.result()


def _light_unit(stages: Sequence[ComputationIR], library: str, checked: int = 0) -> UnitParts:
    """A light unit (:class:`~spf.runtime.compile.UnitParts`) of a wavefront's inspector
    ``stages``, the first ``checked`` of them (the pass, which reads the index arrays: a
    checked inspection checks them there) built checked and the rest unchecked: no legality
    or bounds proof, fact plan or checked function for them (a third of a cold compile's C
    and of its analysis), and their calls are unchecked. They read only arrays an earlier
    stage wrote (the sorts read the pass's levels and slots), or run in unchecked
    inspections only (the split passes); their function is the same C as one built checked
    (``tests/unit/runtime/test_wavefront_build.py`` proves their schedules and accesses)."""
    from spf.runtime.compile import UnitParts

    parts = [(st, None, k < checked) for k, st in enumerate(stages)]
    rest = frozenset(range(checked, len(stages)))
    return UnitParts(parts, library, light=True, unchecked=rest)

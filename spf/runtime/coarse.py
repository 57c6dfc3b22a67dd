"""The parts of a coarse wavefront plan (``method="coarse"``/``"auto"``), from the coarse
levels the inspector computed (:mod:`spf.analysis.coarse_inspector`), in O(iterations).

Each coarse level's rows, sorted by index (a counting sort by coarse level, stable), are cut
into at most ``threads`` contiguous *parts* of about equal work: a cut may fall only where
the block ``row / B`` changes (rows of one block at one coarse level may depend on each
other, so one thread runs them in order), at the first block boundary after each
``k / threads`` of the level's work. The same cut with one row per block makes a plan of
the ``levels`` strategy (each level's rows in ``threads`` contiguous chunks). Kernels fused
into one loop, some free, with run blocks are cut by row across the kernels instead
(:func:`_split_by_rows`), their work weighed by kind (:func:`weigh`).

:func:`estimate` says what a plan's parts cost against the loop in order (the work of the
largest part of each coarse level, a barrier per coarse level and the start of the parallel
region), which
``inspect(strategy="auto")`` picks by.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.runtime.chain_scan import ChainScan

BLOCK_SHIFT = 6
"""Rows per block ``B = 2**BLOCK_SHIFT`` (64). A 2-D grid in natural order has coarse levels
``y + x / B``: about ``width + width / B`` of them, each with about ``width`` rows in pieces
of ``B`` contiguous rows; ``B`` only has to stay well under ``width / threads``."""

RUN_SHIFT = 7
"""The most rows per block ``2**RUN_SHIFT`` (128) of a pass that grows its blocks as runs
(:attr:`Blocks.runs`): the blocks start where a row has no edge from the row before (a 2-D
grid row's first row), so they lie aligned inside the grid rows and a coarse level's parts
run stretches of up to 128 consecutive rows. On 2-D Poisson 1000 x 1000 (one thread,
executor forced, CPU time against the serial solve, loaded machine): fixed 64-row blocks
1.51x, runs of at most 64 rows 1.29x, 128 1.05x, 256 1.13x; a grid row needs at least 3
blocks for 2 threads (with 2 the pieces of one coarse level are neighbours in memory and
the parts cannot tell them apart), so a longer block would leave narrower grids serial."""

LONG_RUN_SHIFT = RUN_SHIFT + 1
"""The most rows per block ``2**LONG_RUN_SHIFT`` (256) of the second plan of run blocks that
``inspect`` makes for kernels fused into one loop, one of them free (a solve, then an SpMV
with its solution), of at least :data:`IN_ORDER_NODES` nodes, for a team of two or more: the
generated pass run again with the longer blocks, the one of the two estimated faster
(:func:`estimate`) interleaved and weighed against the other candidates. A part of a coarse
level of a 2-D grid runs one stretch of rows per block, a new stream of ``A``, ``x`` and
``y`` each: on 2-D Poisson 1M planned for 2 threads (4 blocks a grid row instead of 8) the
fused call took 0.94-0.96x the time of the 128-row plan (medians of 15-25 interleaved calls,
2 threads, machine shared; runs of 64 rows 1.10x), which the estimate ranks first by its
fewer stretches and coarse levels. On narrow grids (300, 400 rows wide) the longer blocks
leave two pieces of a grid row at a coarse level, neighbours in memory, which no part can
tell apart (:attr:`Blocks.runs`): the estimate keeps the 128-row plan there."""

PIPELINE_SHIFT = 12
"""Rows per block of the second candidate plan of kernels fused into one loop, one of them
free (no edge between its own iterations: an SpMV after a solve): blocks of 4096 rows keep
each run of the other kernel's rows whole (a 2-D grid's rows up to 4096 wide), and the free
kernel's rows, which may be cut anywhere, balance the parts. On the solve and SpMV of 2-D
Poisson (1M rows, one thread, executor forced) 64-row blocks ran at 0.8x the two serial
kernels, 1024-row ones at 1.1x, 4096-row ones at 1.2x: the product reads the rows of ``A``
the solve just read."""

BARRIER_WORK = 128
"""A barrier of 2 threads, in units of work (a row's dependence): ~0.25-0.5 us."""

REGION_WORK = 4096
"""Starting the executor's parallel region and ending it (its team woken, the closing
barrier), in units of work: ~5-10 us with 2 threads, at the ~1.2-2 ns a unit of SpTRSV or
SpMV work takes. spf sets ``GOMP_SPINCOUNT`` low (:mod:`spf.runtime.threads`), so between
calls the workers sleep and each call pays a wake-up. A documented constant, not a
measurement: on the 2-core machine shared by several processes the same 2-thread call
measured 4 us over serial with the workers spinning, 23 us after 1 ms idle and up to
0.5 ms under load (``spf.runtime.threads`` caps the team on a busy machine at each call
instead), so a calibration would make plans depend on the load at the moment it ran; a
constant keeps the plan of an input the same on every run. Inputs of fewer than about
``REGION_WORK * MIN_GAIN / (MIN_GAIN - 1)`` (~20k) units of work stay serial whatever
their shape."""

STRETCH_WORK = 18
"""A part's step to a row that is not the next one (a new stream of the rows of ``A`` and of
the vectors), in units of work, as :func:`estimate` charges it for kernels fused into one
loop, whose candidates run stretches of very different lengths: on the fused solve and
product of 2-D Poisson planned for 2 threads (CPU time of the busier thread, machine
loaded), fixed 64-row blocks (stretches of ~9 rows) against run blocks (~120 rows) took
2.88 against 2.28 ms on 400 x 400 and 16.1 against 10.9 ms on 1000 x 1000, at balances
the work counts alike: 13 and 18 units of work per extra stretch; the larger is taken, the
one of the benchmark's grid."""

MIN_GAIN = 1.25
"""``strategy="auto"`` runs the loop in order unless the parts are expected this much faster
(:func:`expected`)."""

PARALLEL_EFFICIENCY = 0.87
"""The speed-up a plan of a loop of :data:`MEMORY_WORK` units of work or more measured on an
idle host over the one its estimate (:func:`estimate`, :func:`level_estimate`) gives: the
estimate counts each thread's work, the barriers and the region's start as if two threads
ran twice as fast, but rows whose arrays stream from memory share it between the cores and
get less (the hand-written level solve of ``spf bench --only sptrsv`` ran at 1.31-1.60x on a
plan of near-equal halves). Refitted 2026-11-30 (seventeenth session) after the executor of
copies lost its per-entry compare (``DIAGONAL_LAST``): the lead's two idle ``spf bench
--only sptrsv`` runs (2 threads, medians of interleaved rounds), against today's estimates:
2-D Poisson 1M's coarse plan, estimated 1.80x, ran at 1.56x and 1.60x (0.87, 0.89); the
12-level random triangle's levels plan on copies, estimated 1.54x with its values' hash, at
1.75x and 1.56x (1.14, 1.01); the smallest ratio is taken. (Sessions 9-15, with the
compare: 0.72, from Poisson's 0.84-1.49x and the triangle's 0.85-1.23x.)
:func:`expected` weighs an estimate by it where ``auto`` decides between a plan and the
loop in order (:data:`MIN_GAIN`); it does not rank the plans (it scales them alike)."""


MEMORY_WORK = 1 << 20
"""The fewest units of work (~12 MB of values and 32-bit indices at a row dependence's 12
bytes: beyond this machine's two 4 MiB L2 caches) of a loop whose estimate
:func:`expected` weighs by :data:`PARALLEL_EFFICIENCY`. Both measured plans were 2-3M
units; smaller loops, which stay in the cores' caches between calls, keep the estimate as
it is (their plans were chosen and tested on it: 2-D Poisson 300 x 300's coarse plan, the
fused SuiteSparse loops weighed against their serial kernels, :func:`over_kernels`)."""


def expected(gain: float, work: int) -> float:
    """The speed-up over the loop in order that a plan estimated at ``gain`` over ``work``
    units of work is expected to reach (:data:`PARALLEL_EFFICIENCY` from
    :data:`MEMORY_WORK` units): what ``strategy="auto"`` weighs against :data:`MIN_GAIN`."""
    return gain * PARALLEL_EFFICIENCY if work >= MEMORY_WORK else gain


CHAIN_WEIGHT = 3
"""What a unit of work (a row, or one of its dependences) of a kernel whose rows depend on
each other (a solve, a sweep) weighs against one of a *free* kernel fused into the same
loop (an SpMV, a residual: no edge between its own rows), when the parts of a fused loop are
cut (:func:`weigh`). A solve's row waits on the row it reads (a chain of loads, multiplies
and a division), a free kernel's rows overlap, and in the fused loop the product reads the
rows of ``A`` the solve has just read. On 2-D Poisson 1M (CPU time, machine loaded): the
serial solve took 8.65 ms for 3 units a row (2.9 ns a unit), the serial SpMV 6.98 ms for 6
(1.2 ns), 2.5x a unit; in the fused plan of 4096-row blocks, the thread running the solve's
rows took 11.3-13.1 ms, the one running the product's 4.0-5.8 ms, 4-5x a unit. Counted
alike, the part holding the solve's rows also took a quarter of the product's rows. A
constant of the kernels' kinds, not a measurement at inspection, so a plan of an input is
the same on every run (:data:`REGION_WORK`); loops whose kernels are all chains or all free
keep the plain counts."""


def weigh(work: np.ndarray, extent: int, free: tuple[bool, ...]) -> float:
    """Scale in place the work of the nodes of kernels fused into one loop (``extent``
    nodes each, kernel ``g`` the nodes ``g * extent ...``) that are not ``free`` by
    :data:`CHAIN_WEIGHT`, when some kernels are free and some are not (O(nodes), nothing
    otherwise). Returns what a unit of work weighs now on average (the work after over the
    work before, 1.0 when nothing was scaled): what :data:`BARRIER_WORK` and
    :data:`REGION_WORK`, counted in units of the plain work, are scaled by in
    :func:`estimate` and :func:`level_estimate`, so that weighing the kernels does not make
    barriers cheaper against the rows."""
    if all(free) or not any(free):
        return 1.0
    plain = int(work.sum())
    chained = 0
    for g, alone in enumerate(free):
        if not alone:
            mine = work[g * extent : (g + 1) * extent]
            chained += int(mine.sum())
            mine *= CHAIN_WEIGHT
    return (plain + (CHAIN_WEIGHT - 1) * chained) / max(plain, 1)


@dataclass(frozen=True)
class Parts:
    """``levels`` coarse levels; level ``c`` runs the parts ``ptr[c]:ptr[c+1]``, part ``p``
    the rows ``order[partptr[p]:partptr[p+1]]`` in that order (``ptr`` has ``levels + 1``
    entries, ``partptr`` ``parts + 1``: the executor's extents)."""

    levels: int
    ptr: np.ndarray
    partptr: np.ndarray
    order: np.ndarray
    parts: int
    largest: np.ndarray
    """The work of the largest part of each coarse level."""
    stretches: int = 0
    """How many times a part's next row is not the row after the one before (counted for
    kernels fused into one loop, 0 otherwise): what :func:`estimate` charges
    :data:`STRETCH_WORK` each."""
    breaks: np.ndarray | None = None
    """The positions ``p`` (sorted) where ``order[p + 1]`` is not ``order[p] + 1``, when the
    parts came from runs of consecutive rows (:func:`spf.runtime.coarse_runs.breaks`), None
    otherwise: what :func:`spf.runtime.copies.pays` reads instead of ``order``."""
    work: np.ndarray | None = None
    """Each part's work, as :attr:`largest` counts it, where the cut kept it (None
    otherwise): what :func:`spf.runtime.chains.join` sums along a chain."""


def with_stretches(parts: Parts) -> Parts:
    """``parts`` with its :attr:`Parts.stretches` counted (O(nodes))."""
    breaks = int(np.count_nonzero(np.diff(parts.order) != 1)) if len(parts.order) else 0
    return replace(parts, stretches=breaks)


@dataclass(frozen=True)
class Blocks:
    """The blocks a part may not cut: with ``kernels`` fused into the loop (``extent``
    iterations each, node ``g * extent + i``), iteration ``i`` of kernel ``g`` lies in block
    ``(g, i >> shift)``, or in a block of its own when ``free[g]`` (no edge joins two
    iterations of that kernel). One kernel: ``node >> shift``."""

    shift: int
    extent: int = 0
    free: tuple[bool, ...] = (False,)
    runs: bool = False
    """The blocks are runs: the pass grew each block one row at a time, a row joining the
    block of the row before only through an edge from that row
    (:func:`spf.analysis.coarse_inspector.build_coarse_inspector`'s ``runs``), so a block's
    rows at one coarse level are consecutive rows, and a part may cut wherever two
    neighbouring positions of a level hold rows that are not (a conservative test that
    needs no block array)."""

    @property
    def by_rows(self) -> bool:
        """Whether :func:`split` cuts the levels by row (:func:`_split_by_rows`): run blocks
        of kernels fused into one loop, some free and some not."""
        return self.runs and 0 < sum(self.free) < len(self.free)

    def key_at(self, order: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The block of the node at each of ``positions`` of ``order`` as a number,
        nondecreasing along a level (whose nodes increase): with :attr:`runs`, the node less
        its position (equal along a run of consecutive rows)."""
        if self.runs:
            out: np.ndarray = order[positions] - positions
            return out
        return self.key(order[positions])

    def key(self, nodes: np.ndarray) -> np.ndarray:
        """Each node's block as a number, nondecreasing in the node."""
        if len(self.free) == 1 and not self.free[0]:
            alone: np.ndarray = nodes >> self.shift
            return alone
        extent = max(self.extent, 1)
        group = nodes // extent
        shifts = np.where(
            np.asarray(self.free)[np.minimum(group, len(self.free) - 1)], 0, self.shift
        )
        out: np.ndarray = group * (extent + 1) + ((nodes - group * extent) >> shifts)
        return out


def split(
    order: np.ndarray,
    levelptr: np.ndarray,
    levels: int,
    work: np.ndarray,
    blocks: Blocks | None,
    threads: int,
    wsum: np.ndarray | None = None,
    scan: ChainScan | None = None,
) -> Parts:
    """The parts of the levels ``levelptr[:levels + 1]`` of ``order`` (each level's rows
    increasing), at most ``threads`` per level, cut only between ``blocks`` (anywhere when
    None), each cut at the block boundary nearest ``k / threads`` of its level's work.
    ``wsum``: the prefix sums of ``work[order]`` (``n + 1`` entries from 0) when the caller
    has them. The pointers are sized by the levels and parts (O(levels + parts) entries
    written, none padded to the rows). ``scan``: fixed C for the cut by rows of kernels
    fused into one loop (:func:`_split_by_rows`), where given."""
    n = len(order)
    if n and levels and blocks is not None and blocks.by_rows:
        return _split_by_rows(order, levelptr, levels, work, blocks, threads, wsum, scan)
    if n == 0 or levels == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Parts(0, np.zeros(1, dtype=np.int64), np.full(1, n, np.int64), order, 0, empty)
    if wsum is None:
        wsum = np.empty(n + 1, dtype=np.int64)
        wsum[0] = 0
        np.cumsum(work[order], out=wsum[1:])
    lp = levelptr[: levels + 1]
    start, end = lp[:-1], lp[1:]
    share = np.arange(1, threads, dtype=np.int64)
    targets = wsum[start][:, None] + (wsum[end] - wsum[start])[:, None] * share // threads
    cut = np.searchsorted(wsum, targets, side="left")  # within the level (work >= 1 per row)
    cut = np.minimum(np.maximum(cut, start[:, None]), end[:, None])
    if blocks is not None and blocks.shift > 0 and not all(blocks.free):
        cut = _nearest_boundary(order, wsum, cut, start[:, None], end[:, None], blocks)
    return cut_parts(order, start[:, None], cut, end[:, None], wsum)


def cut_parts(
    order: np.ndarray,
    start: np.ndarray,
    cut: np.ndarray,
    end: np.ndarray,
    wsum: np.ndarray,
    drop_empty: bool = False,
) -> Parts:
    """The parts of ``order`` whose levels ``[start, end)`` (one row each) are cut at the
    positions ``cut`` (a row of at most ``threads - 1`` per level), the empty parts dropped,
    and with ``drop_empty`` the levels left without a part (else such a level keeps its
    place, with no part); ``wsum``: the prefix sums of the work in ``order`` (the largest
    part's work of each level, rounded up)."""
    # one row per boundary (start, the cuts, end), one column per level: each step below
    # runs over a contiguous row of all the levels, where the levels' short rows of
    # boundaries (a level each, 2 to threads + 1 entries) cost numpy a loop per level
    # (~0.06 ms of Poisson 1M's 1,007 levels at 2 threads, of the inspection's ~6.5 ms)
    rows = np.concatenate([start.T, cut.T, end.T])
    edges = np.maximum.accumulate(rows, axis=0)
    lo, hi = edges[:-1], edges[1:]
    keep = hi > lo
    counts = np.count_nonzero(keep, axis=0)
    parts = int(counts.sum())
    partptr = np.empty(parts + 1, dtype=np.int64)
    partptr[:parts] = lo.T[keep.T]  # level by level, as the levels' rows hold them
    partptr[parts] = len(order)
    each = np.where(keep, wsum[hi] - wsum[lo], 0)
    largest = each.max(axis=0)
    if drop_empty:
        largest, counts = largest[counts > 0], counts[counts > 0]
    if largest.dtype.kind == "f":
        largest = np.ceil(largest).astype(np.int64)
    ptr = np.empty(len(counts) + 1, dtype=np.int64)
    ptr[0] = 0
    np.cumsum(counts, out=ptr[1:])
    return Parts(len(counts), ptr, partptr, order, parts, largest, work=each.T[keep.T])


def _split_by_rows(
    order: np.ndarray,
    levelptr: np.ndarray,
    levels: int,
    work: np.ndarray,
    blocks: Blocks,
    threads: int,
    wsum: np.ndarray | None,
    scan: ChainScan | None = None,
) -> Parts:
    """:func:`split` of kernels fused into one loop, some free and some not, whose blocks are
    runs (:attr:`Blocks.runs`): each coarse level is cut by *row* rather than by node, so a
    part holds every kernel's nodes over one range of rows, in increasing order. Part ``k``
    of a level runs the nodes whose key lies in ``[R_k, R_{k+1})``, the key of a free
    kernel's node its row, of another kernel's node the first row of its run (consecutive
    nodes of one kernel at the level: a block's piece, never cut), each ``R_k`` the row at
    which the level's work below it comes nearest ``k / threads`` of the level's. Within a
    coarse level a free kernel's row reads no row of it (an edge between kernels raises the
    coarse level), so the kernels' rows need no order between them. On 2-D Poisson the
    coarse levels of run blocks are anti-diagonals of the grid's blocks: every level gives
    each thread the same columns of the grid, solve and product alike, where cut by node
    the solve's rows and the product's went to different threads. Binary searches of all
    levels at once (O(levels x threads x kernels x log(rows)) and one gather of the nodes
    into their parts (O(nodes)). With ``scan`` (:mod:`spf.runtime.chain_scan`), the same
    searches and gather in one C loop over the levels (the same parts:
    ``tests/unit/runtime/test_split_rows.py``; on 2-D Poisson 1M fused with its product the
    numpy's ~40 searches of ~1,000-entry arrays took ~75 ms a call)."""
    n = len(order)
    if wsum is None:
        wsum = np.empty(n + 1, dtype=np.int64)
        wsum[0] = 0
        np.cumsum(work[order], out=wsum[1:])
    groups, extent = len(blocks.free), max(blocks.extent, 1)
    if scan is not None and wsum.dtype == np.int64 and order.dtype in (np.int32, np.int64):
        ordered = np.ascontiguousarray(order)
        got = scan.split_rows(
            ordered, levelptr, levels, np.ascontiguousarray(wsum), blocks.free, extent, threads
        )
        ptr, partptr, final, parts, largest, each = got
        return Parts(levels, ptr, partptr, final, parts, largest, work=each)
    lp = levelptr[: levels + 1]
    lo, hi = lp[:-1, None], lp[1:, None]
    # each level's first position of each kernel's nodes (and its end): (levels, groups + 1)
    bounds = _first(lambda p: order[p], lo, hi, np.arange(groups + 1)[None, :] * extent)
    first, last = bounds[:, None, :-1], bounds[:, None, 1:]  # (levels, 1, groups)
    chained = ~np.asarray(blocks.free)[None, None, :]
    base = np.arange(groups)[None, None, :] * extent

    def at(rows: np.ndarray) -> np.ndarray:
        """Per level, cut and kernel: the first position whose key is at least ``rows``."""
        q = _first(lambda p: order[p], first, last, base + rows[..., None])
        prev = np.maximum(q - 1, 0)
        inside = (
            chained & (q > first) & (q < last) & (order[np.minimum(q, n - 1)] == order[prev] + 1)
        )
        if not inside.any():
            return q
        run = order[prev] - prev + 1  # the run's node less position is constant along it
        end = _first(lambda p: order[p] - p, np.where(inside, q, last), last, run)
        return np.where(inside, end, q)

    def below(q: np.ndarray) -> np.ndarray:
        got: np.ndarray = (wsum[q] - wsum[first]).sum(axis=-1)
        return got

    total = wsum[lp[1:]] - wsum[lp[:-1]]
    share = total[:, None] * np.arange(1, threads, dtype=np.int64)[None, :] // threads
    low = np.zeros_like(share)
    high = np.full_like(share, extent)
    while (open_ := low < high).any():  # the least row whose work below reaches the share
        mid = (low + high) // 2
        reached = below(at(mid)) >= share
        high = np.where(open_ & reached, mid, high)
        low = np.where(open_ & ~reached, mid + 1, low)
    after, before = at(low), at(np.maximum(low - 1, 0))
    nearer = share - below(before) < below(after) - share
    cuts = np.where(nearer[..., None], before, after)
    pos = np.concatenate([first, cuts, last], axis=1)  # (levels, threads + 1, groups)
    pos = np.maximum.accumulate(pos, axis=1)
    starts, sizes = pos[:, :-1, :], pos[:, 1:, :] - pos[:, :-1, :]
    per_part = sizes.sum(axis=2)
    flat = sizes.reshape(-1)
    offsets = np.cumsum(flat) - flat
    final = order[np.repeat(starts.reshape(-1) - offsets, flat) + np.arange(n, dtype=np.int64)]
    keep = per_part > 0
    counts = keep.sum(axis=1)
    parts = int(counts.sum())
    partptr = np.empty(parts + 1, dtype=np.int64)
    partptr[0] = 0
    np.cumsum(per_part[keep], out=partptr[1:])
    part_work = (wsum[pos[:, 1:, :]] - wsum[pos[:, :-1, :]]).sum(axis=2)
    ptr = np.empty(levels + 1, dtype=np.int64)
    ptr[0] = 0
    np.cumsum(counts, out=ptr[1:])
    return Parts(levels, ptr, partptr, final, parts, part_work.max(axis=1), work=part_work[keep])


def _first(
    value: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray, target: np.ndarray
) -> np.ndarray:
    """Per entry of the broadcast ``lo``, ``hi`` and ``target``, the first position
    ``lo <= p < hi`` with ``value(p) >= target`` (``hi`` when none); ``value`` nondecreasing
    over each ``[lo, hi)``. Binary searches of all entries at once."""
    lo, hi, target = (np.array(a) for a in np.broadcast_arrays(lo, hi, target))
    while (open_ := lo < hi).any():
        mid = (lo + hi) // 2
        reached = value(np.where(open_, mid, 0)) >= target
        hi = np.where(open_ & reached, mid, hi)
        lo = np.where(open_ & ~reached, mid + 1, lo)
    return lo


def _nearest_boundary(
    order: np.ndarray,
    wsum: np.ndarray,
    cut: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    blocks: Blocks,
) -> np.ndarray:
    """Each ``cut`` (``start <= cut <= end`` of its level, whose nodes ``order[start:end]``
    increase) moved to the block boundary nearest it by work (``wsum``): the first position
    of the block of the node before the cut, or the first position of a later block. Binary
    searches of all cuts at once in their levels' increasing nodes (O(cuts x log(rows per
    level)), none of the O(iterations) passes over ``order``)."""
    inside = (cut > start) & (cut < end)
    full = np.broadcast_to(end, cut.shape)
    kb = blocks.key_at(order, np.where(inside, cut - 1, 0))  # the block before the cut
    after = _first_position(order, np.where(inside, cut, full), full.copy(), kb, blocks, True)
    low = np.broadcast_to(start, cut.shape).copy()
    before = _first_position(order, np.where(inside, low, cut), cut.copy(), kb, blocks, False)
    nearer = wsum[cut] - wsum[before] < wsum[after] - wsum[cut]
    return np.where(inside, np.where(nearer, before, after), cut)


def _first_position(
    order: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    key: np.ndarray,
    blocks: Blocks,
    past: bool,
) -> np.ndarray:
    """The first position ``lo <= p < hi`` whose node's block is after ``key`` (``past``)
    or at or after it (else), ``hi`` when none."""
    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        got = blocks.key_at(order, np.where(open_, mid, 0))
        later = got > key if past else got >= key
        hi = np.where(open_ & later, mid, hi)
        lo = np.where(open_ & ~later, mid + 1, lo)


def level_estimate(
    levelptr: np.ndarray, levels: int, work: int, threads: int, unit: float = 1.0
) -> float:
    """:func:`estimate` of the levels strategy without building its parts, from the level
    sizes ``levelptr[:levels + 1]`` and the total ``work``: each level's rows shared evenly
    by the threads, each row of the mean work (O(levels))."""
    if levels == 0:
        return 0.0
    rows = np.diff(levelptr[: levels + 1])
    mean = work / max(int(levelptr[levels]), 1)
    overhead = unit * (BARRIER_WORK * levels + REGION_WORK)
    cost = float(np.ceil(rows / threads).sum()) * mean + overhead
    return float(work) / cost


def level_bound(rows: int, levels: int, work: int, threads: int, unit: float = 1.0) -> float:
    """An upper bound of :func:`level_estimate` from the number of ``rows`` and ``levels``
    alone (every level's rows shared evenly, none rounded up), a little above it against
    rounding: a plan estimated faster than this beats the levels whatever their sizes."""
    if levels == 0:
        return 0.0
    overhead = unit * (BARRIER_WORK * levels + REGION_WORK)
    cost = rows / threads * (work / max(rows, 1)) + overhead
    return float(work) / cost * (1.0 + 1e-9)


KERNELS_NODE_WORK = 1
"""What the executor pays per node (reading it from the order, testing its kernel) that
the serial kernels of a small fused loop, run one after the other, do not; in units of
work (:func:`over_kernels`)."""

KERNELS_STRETCH_WORK = 45
"""What the executor pays per stretch (:attr:`Parts.stretches`) against the serial kernels
of a small fused loop, in units of work (:func:`over_kernels`). The serial kernels stream
each array once; the executor's parts jump between the kernels' rows. Fitted to the CPU
time of the coarse plans' executor on one thread over the two serial kernels (the fused
solve and product, the benchmark's SuiteSparse triangles, medians of 9 interleaved rounds,
machine loaded): pushpull 1.40x (8,000 nodes, 3,169 stretches), bayer10 1.62x (26,872,
4,685), bcsstk13 1.13x (4,006, 398), jagmesh7 1.42x (2,276, 199), arrow 1.23x (93,000,
3), 2-D Poisson 300 x 300 1.12x (180,000, 1,798): ~1 unit a node, 30-60 a stretch."""

IN_CACHE = 3
"""How many times more units of work a barrier and the parallel region's start
(:data:`BARRIER_WORK`, :data:`REGION_WORK`: times, counted in units of ~1.2-2 ns) are
worth in a small fused loop, whose arrays stay in the core's cache between calls: there
a unit of work took 0.36-0.47 ns (the serial kernels' CPU time over the weighted work of
the five SuiteSparse triangles above and 2-D Poisson 300 x 300, loaded machine), against
~1 ns on 2-D Poisson 1M (:data:`CHAIN_WEIGHT`'s measurements)."""


def over_kernels(parts: Parts, total_work: int, nodes: int, unit: float = 1.0) -> float:
    """:func:`estimate` of the parts of a fused loop of fewer than :data:`IN_ORDER_NODES`
    nodes against what its ``"serial"`` plan runs: the serial kernels one after the other,
    from cache. The parts also pay the executor's costs per node and per stretch
    (:data:`KERNELS_NODE_WORK`, :data:`KERNELS_STRETCH_WORK`, shared by a level's parts),
    and the barriers and the region's start are worth :data:`IN_CACHE` times their units."""
    if parts.levels == 0:
        return 0.0
    team = max(parts.parts / parts.levels, 1.0)
    own = (KERNELS_NODE_WORK * nodes + KERNELS_STRETCH_WORK * parts.stretches) / team
    fixed = IN_CACHE * unit * (BARRIER_WORK * parts.levels + REGION_WORK)
    return float(total_work) / (float(parts.largest.sum()) + own + fixed)


def estimate(parts: Parts, total_work: int, unit: float = 1.0) -> float:
    """The estimated speed-up of running ``parts`` over the loop in order: the work of the
    largest part of each coarse level plus a barrier each, plus starting the parallel region
    (:data:`REGION_WORK`; both scaled by ``unit``, :func:`weigh`), plus the stretches a
    thread starts (:attr:`Parts.stretches` shared by the parts of a level), against all
    the work."""
    if parts.levels == 0:
        return 0.0
    per_part = STRETCH_WORK * parts.stretches * parts.levels / max(parts.parts, 1)
    cost = float(parts.largest.sum()) + unit * (BARRIER_WORK * parts.levels + REGION_WORK)
    cost += per_part
    return float(total_work) / cost


IN_ORDER_NODES = 1 << 17
"""The fewest nodes of kernels fused into one loop for which the inspector sorts the order one
thread runs them in (:func:`in_order`); a smaller loop runs its kernels one after the other
on one thread. The executor pays per node for the order and the test of the node's kernel,
which the kernels one after the other do not, and the interleaved rows gain by filling the
solve chain's stalls and by reading the rows of the matrix while they are in cache. One
thread, CPU time of the executor in order over the serial kernels (medians of 21
interleaved calls, machine loaded): 2-D Poisson 50 x 50 1.24, 100 x 100 1.04, 150 x 150
0.89, 300 x 300 0.72, 1000 x 1000 0.72; the SuiteSparse lower triangles of the benchmark
(2,000-46,500 rows, 8,000-93,000 nodes) 1.13-1.63 (arrow, 93,000 nodes: 1.13-1.18). A
constant of the loop's size, not a timing, so an input's plan is the same on every run."""


def in_order(order: np.ndarray) -> Parts:
    """``order`` as one coarse level of one part: what one thread runs, in that order, with
    no barrier (O(1)); no level when there is no node. Its work is not counted (0)."""
    n = len(order)
    none = np.zeros(1, dtype=np.int64)
    if n == 0:
        return Parts(0, none, none.copy(), order, 0, none[:0])
    one = np.array([0, 1], dtype=np.int64)
    return Parts(1, one, np.array([0, n], dtype=np.int64), order, 1, none)


class Later:
    """Parts made on first use (:meth:`get`, once, under a lock): the order a fused loop runs
    in on one thread, which a plan whose calls get two threads never sorts."""

    def __init__(self, make: Callable[[], Parts]) -> None:
        self._make: Callable[[], Parts] | None = make
        self._parts: Parts | None = None
        self._lock = threading.Lock()

    def get(self) -> Parts:
        """The parts, made by the first call (which lets go of what made them)."""
        parts = self._parts
        if parts is None:
            with self._lock:
                if self._parts is None and self._make is not None:
                    self._parts, self._make = self._make(), None
                parts = self._parts
        if parts is None:
            raise CodegenError("spf bug: coarse.Later made no parts")
        return parts


def row_parts(parts: Parts) -> tuple[np.ndarray, np.ndarray]:
    """Each row's part and coarse level (what the plan check reads), O(iterations)."""
    n = len(parts.order)
    sizes = np.diff(np.append(parts.partptr[: parts.parts], n))
    per_level = np.diff(parts.ptr[: parts.levels + 1])
    part_level = np.repeat(np.arange(parts.levels, dtype=np.int64), per_level)
    part_of = np.empty(n, dtype=np.int64)
    level_of = np.empty(n, dtype=np.int64)
    part_of[parts.order] = np.repeat(np.arange(parts.parts, dtype=np.int64), sizes)
    level_of[parts.order] = np.repeat(part_level, sizes)
    return part_of, level_of

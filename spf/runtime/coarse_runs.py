"""A coarse plan's sort and parts from the *runs* of its coarse levels, without sorting rows.

On a loop whose pass grows run blocks (:attr:`spf.runtime.coarse.Blocks.runs`), a coarse
level's rows are stretches of consecutive rows: a *run* here is a maximal stretch of
consecutive nodes with one coarse level. Sorted stably by coarse level, the nodes are the
runs in that order, each run's nodes consecutive, and two runs never meet (consecutive
nodes of one coarse level are one run). So the counting sort by coarse level and the
prefix sums of the work in that order are a sort of the *runs* (on 2-D Poisson 1000 x 1000,
~8,000 runs for 1M rows), and the parts of :func:`spf.runtime.coarse.split` (cut only where
the node after a position is not the next row: at a run boundary) are found from the runs'
work, the rows' own work read only inside the run where a cut's share of the work falls,
and only when the run's half lies within its largest work of a row of the share
(:func:`spf.analysis.coarse_inspector.build_run_reach`). The order, each run's work and its
largest work of a row are written run by run by a generated stage
(:func:`spf.analysis.coarse_inspector.build_run_fill`), the runs taken in node order
(:attr:`Runs.start`: the work read in sequence).

The plan is the one the row sort gives, array for array: the same stable order, the same
cuts (the first position whose prefix sum reaches each share, moved to the nearer run
boundary by work, a tie to the later one) and the same largest parts
(``tests/unit/runtime/test_coarse_runs.py``, ``tests/e2e/test_wavefront_coarse_runs.py``
compare both). A loop whose runs are short
(scattered coarse levels: :data:`MIN_RUN`) keeps the row sort, whose generated stages cost
less per node than numpy per run. Where the split unit is loaded (every inspection that
sorts by runs), the runs' starts and sort and the cuts around the reach stage run in fixed
C (:mod:`spf.runtime.run_scan`, :class:`Scan`), the same values as the numpy here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from spf.runtime.coarse import Parts, cut_parts

MIN_RUN = 16
"""The fewest nodes per run, on average, for which the runs replace the row sort: ``n /
MIN_RUN`` runs at most (Poisson's run blocks average ~125)."""


Reach = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""Per run (its first node, its nodes) and share of work (more than 0, less than the run's
work), the least prefix sum of the work along the run that reaches the share: the generated
stage :func:`spf.analysis.coarse_inspector.build_run_reach`."""


@dataclass(frozen=True)
class Runs:
    """The runs of a loop's coarse levels in coarse-level order: run ``r`` holds the nodes
    ``first[r] ... first[r] + pos[r + 1] - pos[r] - 1`` at the positions ``pos[r] ...
    pos[r + 1] - 1`` of the order; coarse level ``c`` the runs ``levelruns[c]:levelruns[c +
    1]``. The same runs in node order: run ``perm[r]`` of node order is run ``r`` above,
    beginning at node ``start[q]`` (increasing in ``q``) with ``size[q]`` nodes, at the
    position ``at[q]`` of the order (what the fill reads: the work in sequence)."""

    first: np.ndarray
    pos: np.ndarray
    levelruns: np.ndarray
    start: np.ndarray
    size: np.ndarray
    at: np.ndarray
    perm: np.ndarray


class Scan(Protocol):
    """What finds the runs in C (:class:`spf.runtime.run_scan.RunScan`): their starts and
    keys in one read of the keys, and their sort by key."""

    def starts(self, clev: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The first node of each run of the C-contiguous ``int32`` keys ``clev`` (at least
        one), as ``int64``, and the run's key; None past ``cap`` runs."""

    def sorted(self, keys: np.ndarray, start: np.ndarray, n: int, levels: int) -> Runs | None:
        """The runs beginning at ``start`` (``n`` nodes in all) of keys ``keys``, sorted as
        :func:`find_runs` sorts them; None when a key is not in ``[0, levels)``."""

    def cuts(
        self, runs: Runs, ws: np.ndarray, threads: int, top: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:func:`split_runs`' cuts (``threads - 1`` per coarse level, in runs), each one
        that the rows of its run settle set to the cut before that run, and for those their
        places among the cuts, their runs and their shares in them."""

    def parts(
        self, runs: Runs, ws: np.ndarray, threads: int, cut: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The parts cut at ``cut`` in positions, as :func:`split_runs` gives them: (ptr,
        partptr, largest, :func:`breaks`, each part's work)."""


def find_runs(clev: np.ndarray, levels: int | None = None, scan: Scan | None = None) -> Runs | None:
    """The runs of ``clev`` (each node's coarse level, ``levels`` of them, or as many as
    its largest key says when None) sorted by coarse level, stable; None when there are
    more than ``n / MIN_RUN`` runs, or no node. One pass over the nodes for the boundaries
    (``scan``'s, one read of a C-contiguous ``int32`` array, which gives up past ``n /
    MIN_RUN`` runs; else numpy's compare and ``flatnonzero``), O(runs) after it: the count
    of the coarse levels, when not given, comes from the runs' keys (a coarse level is
    constant along a run), not from a pass of its own."""
    n = len(clev)
    if n == 0 or levels == 0:
        return None
    cap = max(n // MIN_RUN, 1)
    if scan is not None and clev.dtype == np.int32 and clev.flags.c_contiguous:
        found = scan.starts(clev, cap)
        if found is None:
            return None
        starts, key = found
        if levels is None:
            levels = int(key.max()) + 1
        got = scan.sorted(key, starts, n, levels)
        if got is not None:
            return got
        runs = len(starts)  # a key below 0 or of a level not counted: numpy's way
    else:
        step = np.flatnonzero(clev[1:] != clev[:-1])
        runs = len(step) + 1
        if runs > cap:
            return None
        starts = np.empty(runs, dtype=np.int64)
        starts[0] = 0
        np.add(step, 1, out=starts[1:])
        key = clev[starts]
        if levels is None:
            levels = int(key.max()) + 1
    perm = np.argsort(key, kind="stable")
    size = np.diff(starts, append=n)
    pos = np.zeros(runs + 1, dtype=np.int64)
    np.cumsum(size[perm], out=pos[1:])
    at = np.empty(runs, dtype=np.int64)
    at[perm] = pos[:-1]
    levelruns = np.zeros(levels + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=levels), out=levelruns[1:])
    return Runs(starts[perm], pos, levelruns, starts, size, at, perm)


SAMPLED_PAIRS = 1 << 10
"""How many neighbouring pairs of nodes :func:`likely_runs` compares, in
:data:`SAMPLED_WINDOWS` windows of consecutive pairs (every pair of a loop whose windows
would meet: fewer than ``SAMPLED_PAIRS + SAMPLED_WINDOWS`` nodes). The guess needs only
a count of changes well below ``MIN_RUN / 2`` of them (Poisson's runs of ~125 nodes change at
~8 of 1,024 pairs)."""

SAMPLED_WINDOWS = 16
"""The evenly spaced windows of consecutive pairs (``SAMPLED_PAIRS / SAMPLED_WINDOWS`` each,
64: four or five cache lines of 32-bit keys) that :func:`likely_runs` reads. The keys were
written by the pass just before and have left the core's caches: 1,024 pairs spaced evenly
over the loop were 1,024 cache lines and pages to fetch (on Poisson 1M, ~0.02 serial solves
of the inspection's wall time, 4,096 pairs ~0.02-0.03), sixteen windows are ~80 lines in
sixteen pages. Consecutive pairs also count a window's changes exactly, where a stride
could fall on every break of runs of that length (runs of 244 nodes from node 1 on a
1M-node loop)."""


def likely_runs(clev: np.ndarray) -> bool:
    """Whether ``clev`` probably has runs long enough for :func:`find_runs` (at most one
    change of key in ``MIN_RUN / 2`` of the :data:`SAMPLED_PAIRS` neighbouring pairs it
    compares, in :data:`SAMPLED_WINDOWS` evenly spaced windows): a guess in O(1) that spares
    a loop of scattered coarse levels (the 12-level random triangle changes key at ~all of
    its rows) the pass over every node that :func:`find_runs` would make to refuse it. The
    plan does not depend on it: the runs give the plan the row sort gives
    (:func:`split_runs`)."""
    n = len(clev)
    if n < 2:
        return False
    width = SAMPLED_PAIRS // SAMPLED_WINDOWS
    gap = n // SAMPLED_WINDOWS
    if gap <= width:  # a loop of about SAMPLED_PAIRS pairs or fewer: every pair
        pairs = n - 1
        changes = int(np.count_nonzero(clev[1:] != clev[:-1]))
    else:  # window w: the pairs (w * gap + t, w * gap + t + 1), 0 <= t < width
        rows = np.ascontiguousarray(clev)[: SAMPLED_WINDOWS * gap].reshape(SAMPLED_WINDOWS, gap)
        windows = rows[:, : width + 1]
        pairs = SAMPLED_WINDOWS * width
        changes = int(np.count_nonzero(windows[:, 1:] != windows[:, :-1]))
    return changes * MIN_RUN <= 2 * pairs


def breaks(runs: Runs) -> np.ndarray:
    """The positions ``p`` of the order of ``runs`` (sorted) whose next node is not the node
    after ``order[p]``: the last position of a run followed by a run that does not begin
    where it ends (O(runs))."""
    size = np.diff(runs.pos)
    gap = runs.first[1:] != runs.first[:-1] + size[:-1]
    out: np.ndarray = runs.pos[1:-1][gap] - 1
    return out


def _int64s(*arrays: np.ndarray | None) -> bool:
    """Whether each of ``arrays`` that is given is a C-contiguous ``int64`` array (what
    :class:`Scan`'s C reads)."""
    return all(a is None or (a.dtype == np.int64 and a.flags.c_contiguous) for a in arrays)


def split_runs(
    runs: Runs,
    wsum: np.ndarray,
    order: np.ndarray,
    threads: int,
    reach: Reach,
    top: np.ndarray | None = None,
    scan: Scan | None = None,
) -> Parts:
    """:func:`spf.runtime.coarse.split` of the coarse levels of ``runs`` whose nodes in
    coarse-level order are ``order`` (``wsum``: the work before each run, ``runs + 1``
    entries from 0): at most ``threads`` parts per coarse level, each cut at the run
    boundary nearest ``k / threads`` of its level's work. O(levels x threads) on the runs,
    and ``reach`` over the runs a share falls inside, in their first half of work, and
    when ``top`` (each run's largest work of a node, in node order: :attr:`Runs.start`'s)
    is given only those whose half lies within that largest work of the share. With
    ``scan``, the same in C around the reach stage (:class:`Scan`: on Poisson's 1,007
    coarse levels and 8,000 runs, ~35 numpy calls on arrays the fill left in memory)."""
    if scan is not None and _int64s(wsum, top, runs.first, runs.pos, runs.levelruns, runs.perm):
        cut, unsure, run, share_in = scan.cuts(runs, wsum, threads, top)
        if len(unsure):
            reached = reach(runs.first[run], runs.pos[run + 1] - runs.pos[run], share_in)
            cut[unsure] = np.where(2 * reached < wsum[run + 1] - wsum[run], run, run + 1)
        ptr, partptr, largest, cuts, work = scan.parts(runs, wsum, threads, cut)
        levels = len(runs.levelruns) - 1
        return Parts(levels, ptr, partptr, order, len(partptr) - 1, largest, breaks=cuts, work=work)
    ws, pos = wsum, runs.pos
    lr = runs.levelruns
    start, end = lr[:-1, None], lr[1:, None]
    share = np.arange(1, threads, dtype=np.int64)[None, :]
    targets = ws[start] + (ws[end] - ws[start]) * share // threads
    q = np.searchsorted(ws, targets, side="left")  # the first run boundary reaching it
    inside = ws[np.minimum(q, len(ws) - 1)] > targets  # the share falls inside run q - 1
    cut = q.copy()
    if inside.any():
        run = q[inside] - 1
        # the first position reaching the share moves to the nearer boundary of its run
        # (a tie: the later one), as coarse._nearest_boundary moves it: before the run when
        # the least prefix sum along it that reaches the share is below half its work,
        # never when the share itself is not (the prefix sums reaching it are no less), so
        # only the runs whose share lies in their first half are read (about half of them)
        share_in, run_work = targets[inside] - ws[run], ws[run + 1] - ws[run]
        before = 2 * share_in < run_work
        unsure = before
        if top is not None:
            # the least prefix sum reaching the share is the one before it (below the share)
            # plus one node's work: at most share + top - 1, so a run whose half lies past
            # that is cut before it unread (on Poisson all but a few of those read before)
            unsure = before & (run_work <= 2 * (share_in + top[runs.perm[run]] - 1))
        near = np.flatnonzero(unsure)
        if len(near):
            read = run[near]
            reached = reach(runs.first[read], pos[read + 1] - pos[read], share_in[near])
            before[near] = 2 * reached < run_work[near]
        cut[inside] = np.where(before, run, run + 1)
    got = cut_parts(order[: len(ws) - 1], start, cut, end, ws)  # in runs, not positions
    partptr = pos[got.partptr]  # the last entry pos[runs]: every node
    return replace(got, partptr=partptr, order=order, breaks=breaks(runs))

"""The parts of a ``"levels"`` plan: each level cut into chunks of balanced work, a large
level into several chunks per thread, which the executor deals out round robin.

The coarse executor runs the parts of a level with ``#pragma omp for schedule(static, 1)``:
part ``r`` of a level goes to thread ``r % team``. One contiguous chunk per thread
(``schedule(static)`` on rows, as a hand-written level loop does, or one part per thread
balanced by work) leaves a level's cost as unbalanced as its rows are uneven: on the
12-level random triangle of ``spf bench --only sptrsv`` the first level's rows are dense
at its start and sparse at its end (each later row touches fresh cache lines of ``f`` and
``u``), and the second half of the next level reads ``u`` over a wider range; with the
same rows or the same work each, one thread's half took 1.2-1.8x the other's CPU time
(docs/inspection.md). Cut into :data:`INTERLEAVE` chunks per thread and dealt out round
robin, each thread gets a share of every stretch of the level, whatever makes it costly.
A level of less work than :data:`CHUNK_WORK` per chunk gets fewer chunks (at least one
per thread), so small levels keep one part per thread and a plan for one thread one part
per level.
"""

from __future__ import annotations

import numpy as np

from spf.runtime import coarse

INTERLEAVE = 16
"""The most chunks per thread of one level. On the 12-level random triangle (1M rows, 2
threads, each thread's CPU time per level summed over the levels' busier thread, loaded
machine): one part per thread 7.24 ms, 2 chunks per thread 6.85, 4: 6.93, 8: 6.71, 16:
6.57 (the hand-written level loop with ``schedule(static)`` 7.51)."""

CHUNK_WORK = 8192
"""The least work (units: a row's dependence) of a chunk: ~30 µs of a solve, against a few
nanoseconds for taking the next chunk of a ``static, 1`` loop."""


def level_parts(
    order: np.ndarray,
    levelptr: np.ndarray,
    levels: int,
    work: np.ndarray,
    team: int,
    wsum: np.ndarray,
) -> coarse.Parts:
    """The parts of the levels ``levelptr[:levels + 1]`` of ``order`` for ``team`` threads:
    each level cut at equal shares of its work (``wsum``: the prefix sums of
    ``work[order]``, ``n + 1`` entries) into ``team`` chunks, or into up to
    ``team * INTERLEAVE`` when its work allows chunks of :data:`CHUNK_WORK` (O(levels +
    parts) besides :func:`spf.runtime.coarse.split`). ``largest`` is each level's work of
    its busiest thread under the round-robin deal."""
    base = coarse.split(order, levelptr, levels, work, None, team, wsum)
    if team <= 1 or levels == 0:
        return base
    lp = levelptr[: levels + 1].astype(np.int64, copy=False)
    start, end = lp[:-1], lp[1:]
    level_work = wsum[end] - wsum[start]
    per = np.clip(level_work // (team * CHUNK_WORK), 1, INTERLEAVE)
    wide = np.flatnonzero(per > 1)
    if not len(wide):
        return base
    q = team * per[wide]  # the chunks of each wide level
    share = np.arange(1, int(q.max()), dtype=np.int64)
    s, e = start[wide][:, None], end[wide][:, None]
    targets = wsum[start[wide]][:, None] + level_work[wide][:, None] * share // q[:, None]
    cut = np.searchsorted(wsum, targets, side="left")
    cut = np.where(share < q[:, None], np.minimum(np.maximum(cut, s), e), e)
    edges = np.maximum.accumulate(np.concatenate([s, cut, e], axis=1), axis=1)
    lo, hi = edges[:, :-1], edges[:, 1:]
    wide_starts = lo[hi > lo]
    # the base parts of the other levels, with the wide levels' chunks in their place
    level_of_part = np.repeat(np.arange(levels), np.diff(base.ptr))
    narrow = ~np.isin(level_of_part, wide)
    starts = np.sort(np.concatenate([base.partptr[: base.parts][narrow], wide_starts]))
    parts = len(starts)
    partptr = np.empty(parts + 1, dtype=np.int64)
    partptr[:parts] = starts
    partptr[parts] = len(order)
    level = np.searchsorted(lp, starts, side="right") - 1  # each part's level
    counts = np.bincount(level, minlength=levels)
    ptr = np.zeros(levels + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    thread = (np.arange(parts) - ptr[level]) % team
    load = np.zeros(levels * team, dtype=np.int64)
    np.add.at(load, level * team + thread, wsum[partptr[1:]] - wsum[partptr[:-1]])
    largest = load.reshape(levels, team).max(axis=1)
    return coarse.Parts(levels, ptr, partptr, order, parts, largest)

"""The parts of a coarse wavefront plan (``method="coarse"``/``"auto"``), from the coarse
levels the inspector computed (:mod:`spf.analysis.coarse_inspector`), in O(iterations).

Each coarse level's rows, sorted by index (a counting sort by coarse level, stable), are cut
into at most ``threads`` contiguous *parts* of about equal work: a cut may fall only where
the block ``row / B`` changes (rows of one block at one coarse level may depend on each
other, so one thread runs them in order), at the first block boundary after each
``k / threads`` of the level's work. The same cut with one row per block makes a plan of
the ``levels`` strategy (each level's rows in ``threads`` contiguous chunks).

:func:`estimate` says what a plan's parts cost against the loop in order (the work of the
largest part of each coarse level plus a barrier per coarse level), which
``inspect(strategy="auto")`` picks by.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BLOCK_SHIFT = 6
"""Rows per block ``B = 2**BLOCK_SHIFT`` (64). A 2-D grid in natural order has coarse levels
``y + x / B``: about ``width + width / B`` of them, each with about ``width`` rows in pieces
of ``B`` contiguous rows; ``B`` only has to stay well under ``width / threads``."""

BARRIER_WORK = 128
"""A barrier of 2 threads, in units of work (a row's dependence): ~0.25-0.5 us."""

MIN_GAIN = 1.25
"""``strategy="auto"`` runs the loop in order unless the parts are estimated this much faster."""


@dataclass(frozen=True)
class Parts:
    """``levels`` coarse levels; level ``c`` runs the parts ``ptr[c]:ptr[c+1]``, part ``p``
    the rows ``order[partptr[p]:partptr[p+1]]`` in that order (arrays padded to the
    executor's extents: ``n + 1`` entries)."""

    levels: int
    ptr: np.ndarray
    partptr: np.ndarray
    order: np.ndarray
    parts: int
    largest: np.ndarray
    """The work of the largest part of each coarse level."""


def split(
    order: np.ndarray,
    levelptr: np.ndarray,
    levels: int,
    work: np.ndarray,
    shift: int,
    threads: int,
) -> Parts:
    """The parts of the levels ``levelptr[:levels + 1]`` of ``order`` (each level's rows
    increasing), at most ``threads`` per level, cut only between blocks of ``2**shift``
    rows."""
    n = len(order)
    ptr = np.zeros(n + 1, dtype=np.int64)
    partptr = np.full(n + 1, n, dtype=np.int64)
    if n == 0 or levels == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Parts(0, ptr, partptr, order, 0, empty)
    wsum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(work[order], out=wsum[1:])
    lp = levelptr[: levels + 1]
    start, end = lp[:-1], lp[1:]
    share = np.arange(1, threads, dtype=np.int64)
    targets = wsum[start][:, None] + (wsum[end] - wsum[start])[:, None] * share // threads
    cut = np.searchsorted(wsum, targets, side="left")  # within the level (work >= 1 per row)
    cut = np.minimum(np.maximum(cut, start[:, None]), end[:, None])
    if shift:
        cut = _block_start(order, cut, start[:, None], end[:, None], shift)
    edges = np.maximum.accumulate(np.concatenate([start[:, None], cut, end[:, None]], axis=1), 1)
    lo, hi = edges[:, :-1], edges[:, 1:]
    keep = hi > lo
    counts = keep.sum(axis=1)
    parts = int(counts.sum())
    ptr[1 : levels + 1] = np.cumsum(counts)
    ptr[levels + 1 :] = parts
    partptr[:parts] = lo[keep]
    largest = np.where(keep, wsum[hi] - wsum[lo], 0).max(axis=1)
    return Parts(levels, ptr, partptr, order, parts, largest)


def _block_start(
    order: np.ndarray, cut: np.ndarray, start: np.ndarray, end: np.ndarray, shift: int
) -> np.ndarray:
    """Each ``cut`` (``start <= cut <= end`` of its level, whose rows ``order[start:end]``
    increase) moved to the first block boundary at or after it: the level's start or end,
    or the first position whose row lies in a later block of ``2**shift`` rows than the row
    before the cut. A binary search of all cuts at once in their levels' increasing rows
    (O(cuts x log(rows per level)), none of the O(iterations) passes over ``order``)."""
    inside = (cut > start) & (cut < end)
    lo = np.where(inside, cut, end)
    hi = end.copy() if end.shape == cut.shape else np.broadcast_to(end, cut.shape).copy()
    before = order[np.where(inside, cut - 1, 0)] if len(order) else np.zeros_like(cut)
    first = ((before >> shift) + 1) << shift  # the first row of the next block
    while True:
        open_ = lo < hi
        if not open_.any():
            break
        mid = (lo + hi) // 2
        later = order[np.where(open_, mid, 0)] >= first
        hi = np.where(open_ & later, mid, hi)
        lo = np.where(open_ & ~later, mid + 1, lo)
    return np.where(inside, lo, cut)


def level_estimate(levelptr: np.ndarray, levels: int, work: int, threads: int) -> float:
    """:func:`estimate` of the levels strategy without building its parts, from the level
    sizes ``levelptr[:levels + 1]`` and the total ``work``: each level's rows shared evenly
    by the threads, each row of the mean work (O(levels))."""
    if levels == 0:
        return 0.0
    rows = np.diff(levelptr[: levels + 1])
    mean = work / max(int(levelptr[levels]), 1)
    cost = float(np.ceil(rows / threads).sum()) * mean + BARRIER_WORK * levels
    return float(work) / cost


def estimate(parts: Parts, total_work: int) -> float:
    """The estimated speed-up of running ``parts`` over the loop in order: the work of the
    largest part of each coarse level plus a barrier each, against all the work."""
    if parts.levels == 0:
        return 0.0
    cost = float(parts.largest.sum()) + BARRIER_WORK * parts.levels
    return float(total_work) / cost


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

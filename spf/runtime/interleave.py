"""Kernels fused into one loop, one of them free, run interleaved in a coarse plan's parts.

A free kernel's node (a row of the SpMV after a solve: no edge joins two of its rows) waits
in a coarse plan for the coarse level after its last source's
(:mod:`spf.analysis.coarse_inspector`: an edge between kernels always raises the level), and
then runs in its part after the part's other rows. :func:`interleave` moves it into its last
source's coarse level, right after that source, when every source at that level precedes it
there, and cuts each coarse level into parts again (:func:`_cut`): a thread then runs each
product row right after the solve row that completes it, in the same stretch of rows, so
the product's loads and multiplies fill the stalls of the solve's chain (each solve row waits
on the division of the row before) and read the rows of ``A`` the solve has just read, as
the loop in order on one thread does (:func:`spf.runtime.coarse.in_order`). Where the
sources sit comes from a generated pass over the edges into the free nodes
(:func:`spf.analysis.coarse_inspector.build_sink_pass`), whose inputs :func:`sink_inputs`
makes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from spf.runtime.coarse import Parts, cut_parts

if TYPE_CHECKING:
    from spf.runtime.chain_scan import ChainScan

INTERLEAVED_WEIGHT = 0.5
"""What a unit of work of a free kernel's node weighs once :func:`interleave` runs it right
after the source that completes its inputs, against the same node run after its part's other
rows (what the parts are cut by and :func:`spf.runtime.coarse.estimate` reads). On 2-D
Poisson 1M (solve then product, the run-block plan for 2 threads run on one thread, CPU
time, machine loaded) the parts took 14.3 ms, the same parts interleaved 11.5 ms: the
product's ~6 ms of rows cost about half. A constant of the kernels' kinds, as
:data:`spf.runtime.coarse.CHAIN_WEIGHT`, so an input's plan is the same on every run."""


@dataclass(frozen=True)
class Interleaved:
    """:func:`interleave`'s result: the parts and the nodes it moved."""

    parts: Parts
    moved: np.ndarray


def sink_inputs(parts: Parts) -> tuple[np.ndarray, np.ndarray]:
    """Per node, its position in ``parts.order`` and its key for the sink pass: coarse
    level times ``nodes + 1`` less the position (O(nodes))."""
    n = len(parts.order)
    positions = np.arange(n, dtype=np.int64)
    levelpos = parts.partptr[parts.ptr[: parts.levels + 1]]
    key = np.repeat(np.arange(parts.levels, dtype=np.int64) * (n + 1), np.diff(levelpos))
    key -= positions
    pos_of = np.empty(n, dtype=np.int64)
    pos_of[parts.order] = positions
    key_of = np.empty(n, dtype=np.int64)
    key_of[parts.order] = key
    return pos_of, key_of


def interleave(
    parts: Parts,
    pos_of: np.ndarray,
    last: tuple[np.ndarray, np.ndarray],
    free: np.ndarray,
    work: np.ndarray,
    threads: int,
    scan: ChainScan | None = None,
) -> Interleaved:
    """``parts`` (of run blocks: :attr:`spf.runtime.coarse.Blocks.runs`; ``pos_of``: each
    node's position in its order) with each node of a free kernel (``free``: per node)
    moved right after its last source when every source at that source's coarse level lies
    in one run of consecutive rows of its part and that level is before the node's own
    (``last``: per node the greatest position of its sources, -1 for none, and the greatest
    coarse level times ``nodes + 1`` less position: :func:`sink_inputs`); then each coarse
    level cut again into at most ``threads`` parts of about equal work (a moved node's
    weighed :data:`INTERLEAVED_WEIGHT`), never between a moved node and a source at its
    level, nor inside a run of consecutive rows of a kernel that is not free (a block).
    Every source of a moved node still runs before it (an earlier coarse level, or earlier
    in its part), and a node only moves earlier, so its own sinks keep their order.
    O(nodes), and a stable sort of the moved nodes by their last source (near sorted). With
    ``scan`` (:mod:`spf.runtime.chain_scan`) the node-wide steps are one C loop each (the
    same parts: ``tests/unit/runtime/test_interleave.py``; on 2-D Poisson 1M fused with its
    product, 2M nodes, numpy's ~30 whole-array steps took ~230 ms)."""
    n = len(parts.order)
    none = np.zeros(0, dtype=np.int64)
    if n == 0 or parts.levels == 0:
        return Interleaved(parts, none)
    if scan is not None:
        got = scan.interleave(parts, pos_of, last, free, work, INTERLEAVED_WEIGHT)
        if got is None:
            return Interleaved(parts, none)
        order, moved, wsum, allowed, bound = got
        search = functools.partial(scan.search_allowed, wsum, allowed)
        cut = _cut(order, bound, allowed, wsum, threads, search)
        return Interleaved(replace(cut, stretches=parts.stretches), moved)
    partptr = parts.partptr[: parts.parts + 1]
    levelpos = partptr[parts.ptr[: parts.levels + 1]]  # each level's first position
    cand = np.flatnonzero(free & (last[0] >= 0))
    sort = np.argsort(last[0][cand], kind="stable")  # by their last source (near sorted)
    cand = cand[sort]
    lp = last[0][cand]
    part = np.searchsorted(partptr, lp, side="right") - 1  # sorted keys: fast
    level = np.searchsorted(levelpos, lp, side="right") - 1
    first = level * (n + 1) - last[1][cand]  # the first position of a source at that level
    # every source at that level in one run of consecutive rows of a kernel that is not
    # free (a block, never cut) of its part, the node itself at a later level
    low = parts.order[np.maximum(first, 0)].astype(np.int64)
    high = parts.order[lp].astype(np.int64)
    frees = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(free, out=frees[1:])
    ok = (first >= partptr[part]) & (high - low == lp - first) & (frees[high + 1] == frees[low])
    ok &= pos_of[cand] >= levelpos[level + 1]
    moved, lp, first = cand[ok], lp[ok], first[ok]
    if len(moved) == 0:
        return Interleaved(parts, none)
    stays = np.ones(n, dtype=bool)
    stays[pos_of[moved]] = False
    # position s of the new order runs its node if it stays, then the nodes moved after it
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(stays + np.bincount(lp, minlength=n), out=start[1:])
    order = np.empty(n, dtype=parts.order.dtype)
    kept = np.flatnonzero(stays)
    order[start[kept]] = parts.order[kept]
    index = np.arange(len(moved), dtype=np.int64)
    tie = np.concatenate([[False], lp[1:] == lp[:-1]])
    at = start[lp] + stays[lp] + index - np.maximum.accumulate(np.where(tie, 0, index))
    order[at] = moved
    weights = work[order].astype(np.float64)
    weights[at] *= INTERLEAVED_WEIGHT
    wsum = np.zeros(n + 1, dtype=np.float64)
    np.cumsum(weights, out=wsum[1:])
    # a cut may fall before a node of a kernel that is not free unless it continues the
    # run of consecutive rows of the one before it (a block), and before a free node that
    # stayed; never before a moved node (its sources at its level lie in the run of its
    # last source, right before it)
    open_ = np.ones(n + 1, dtype=bool)
    open_[at] = False
    chain = np.flatnonzero(~free[order])
    open_[chain[1:][order[chain[1:]] == order[chain[:-1]] + 1]] = False
    cut = _cut(order, start[levelpos], np.flatnonzero(open_), wsum, threads)
    return Interleaved(replace(cut, stretches=parts.stretches), moved)


def _cut(
    order: np.ndarray,
    bound: np.ndarray,
    allowed: np.ndarray,
    wsum: np.ndarray,
    threads: int,
    search: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Parts:
    """The levels ``bound`` (positions of ``order``, ``levels + 1``) cut into at most
    ``threads`` parts each, each cut at the position of ``allowed`` (increasing, the last
    every node's end) whose work below (``wsum``) is nearest ``k / threads`` of its
    level's; ``search``: the first index of ``allowed`` reaching each target, clipped to
    ``[1, len(allowed) - 1]`` (default: numpy's search over ``wsum[allowed]``)."""
    s, e = bound[:-1, None], bound[1:, None]
    share = np.arange(1, threads, dtype=np.float64)[None, :] / threads
    target = wsum[s] + (wsum[e] - wsum[s]) * share
    if search is None:
        j = np.clip(np.searchsorted(wsum[allowed], target), 1, len(allowed) - 1)
    else:
        j = search(target)
    below, above = allowed[j - 1], allowed[j]
    cut = np.where(target - wsum[below] <= wsum[above] - target, below, above)
    return cut_parts(order, s, np.minimum(np.maximum(cut, s), e), e, wsum, drop_empty=True)

"""A coarse plan's consecutive coarse levels joined along *chains* of parts, so that fewer
barriers separate them.

Part ``k`` of each coarse level lies on chain ``k`` (the ``k``-th thread slot of its level).
A chain's parts at consecutive coarse levels that read no row of another chain at those
levels may run one after the other on one thread with no barrier between them: :func:`join`
gives each part a new level ``L`` (the group of its chain it joins), in coarse-level order,

- at least its chain's last part's ``L``, and one more once that group holds ``cap`` parts
  (the *cap*: what a group may hold, so the chains keep a lag of at most a group between
  them);
- one more than the ``L`` of the last part, in each later chain, at or before the latest
  coarse level holding a source of the part in a later chain, and the same for the earlier
  chains (one generated pass over the dependences, :mod:`spf.analysis.chain_pass`).

New level ``L`` runs, per chain, that chain's parts of level ``L`` one after the other in
their coarse-level order, as one part. Every dependence then still holds: a source in another
chain lies at an earlier new level; one in the same chain at an earlier coarse level in an
earlier new level or earlier in the same part (a chain's ``L`` never falls along it); one in
the same part before it, as before. A part's rows do not increase any more (a plan of
``interleaved`` parts: each row after its sources in its part), and the generated check of
a plan built from arrays (:func:`spf.analysis.coarse_inspector.build_part_check`) checks
positions inside a part.

On 2-D Poisson (a fused solve and product, run blocks of 256 rows, 2 threads) each coarse
level is an anti-diagonal of the grid's blocks; the thread that runs the left columns of the
grid reads only its own rows, and the other reads the left's rows of the level before: the
left chain runs ``cap`` coarse levels a group, the right one the same ``cap`` coarse levels
one group later (a pipeline: a barrier per ``cap`` grid rows instead of one per grid row).
The same holds for a solve alone (a coarse loop of one kernel): its plan is joined too,
when estimated faster. The loops over the nodes and the parts run in fixed C where the
caller gives :mod:`spf.runtime.chain_scan`'s loops (the plans spf makes); the numpy and
Python here are their reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from spf.runtime.coarse import IN_ORDER_NODES, Parts, estimate

if TYPE_CHECKING:
    from spf.runtime.chain_scan import ChainScan

CAPS = (2, 4, 8, 16, 32)
"""The caps :func:`join` tries (parts of a chain per group); :func:`spf.runtime.coarse.estimate`
picks among them and the plan as it was. A larger cap saves more barriers but makes the
chains wait longer for each other at the start and the end (the pipeline's fill and drain:
about a group's work). On 2-D Poisson 1M (2 threads, hand-built plans of half grid rows,
docs/inspection.md) 4 and 16 grid rows a group took 0.86-0.87x and 0.84-0.85x the time of
a barrier per grid row."""

JOIN_NODES = IN_ORDER_NODES
"""The fewest nodes of a loop (fused, or a solve alone) whose coarse plan :func:`join` tries
to join: smaller loops keep their plans (a fused one's estimate against the serial kernels
is :func:`spf.runtime.coarse.over_kernels`', and the pass and the joins cost a few ms)."""

MAX_PARTS = 1 << 16
"""The most parts of a plan that :func:`join` joins: the groups are found by a Python loop
over the parts (~0.3 us a part and cap)."""


@dataclass(frozen=True)
class Joined:
    """:func:`join`'s result: the parts, their estimate and the cap (0: not joined)."""

    parts: Parts
    gain: float
    cap: int


def chain_parts(parts: Parts, nodes: int, scan: ChainScan | None = None) -> np.ndarray:
    """Each node's part (``int32``) for the chain pass (O(nodes); one loop of ``scan``'s
    where given)."""
    if scan is not None:
        order = np.ascontiguousarray(parts.order)
        return scan.parts(_i64(parts.partptr), parts.parts, order, nodes)
    sizes = np.diff(parts.partptr[: parts.parts + 1])
    part = np.empty(nodes, dtype=np.int32)
    part[parts.order] = np.repeat(np.arange(parts.parts, dtype=np.int32), sizes)
    return part


def part_tables(parts: Parts) -> tuple[np.ndarray, np.ndarray]:
    """Per part, its coarse level plus one and its chain (its place in its coarse level),
    as the chain pass reads them (``int32``, O(parts))."""
    per_level = np.diff(parts.ptr[: parts.levels + 1])
    level = np.repeat(np.arange(parts.levels, dtype=np.int64), per_level)
    chain = np.arange(parts.parts, dtype=np.int64) - parts.ptr[level]
    return (level + 1).astype(np.int32), chain.astype(np.int32)


def _i64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def part_work(parts: Parts, work: np.ndarray) -> np.ndarray:
    """Each part's work: :attr:`Parts.work` where the cut kept it, else summed from the nodes'
    ``work`` (O(nodes))."""
    if parts.work is not None:
        return np.asarray(parts.work, dtype=np.float64)
    starts = parts.partptr[: parts.parts]
    got: np.ndarray = np.add.reduceat(work[parts.order].astype(np.float64), starts)
    return got


def groups(
    ptr: list[int], need: list[int], cap: int, need_low: list[int] | None = None
) -> list[int]:
    """Each part's new level under ``cap`` (the rules of the module's docstring): ``ptr``
    the parts of each coarse level, ``need`` each part's latest coarse level plus one holding
    a source in a later chain and ``need_low`` in an earlier one (0: none; None: all 0).
    O(parts x chains)."""
    levels = len(ptr) - 1
    chains = max((ptr[c + 1] - ptr[c] for c in range(levels)), default=0)
    cur = [-1] * chains
    held = [0] * chains
    last = [[-1] * chains]  # last[c][t]: chain t's new level of its last part before level c
    new = [0] * ptr[-1]
    row = last[0]
    for c in range(levels):
        row = row[:]
        s = ptr[c]
        for p in range(s, ptr[c + 1]):
            t = p - s
            lo = cur[t]
            if held[t] >= cap or lo < 0:
                lo += 1
            if need[p]:
                before = last[need[p]]
                for u in range(t + 1, chains):
                    if before[u] >= lo:
                        lo = before[u] + 1
            if need_low is not None and need_low[p]:
                before = last[need_low[p]]
                for u in range(t):
                    if before[u] >= lo:
                        lo = before[u] + 1
            if lo == cur[t]:
                held[t] += 1
            else:
                cur[t], held[t] = lo, 1
            new[p] = lo
            row[t] = lo
        last.append(row)
    return new


def _shape(
    parts: Parts, new: np.ndarray, works: np.ndarray
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The joined plan's levels, its parts per level (``ptr``), the old parts in the new
    parts' order, each new part's first old part, and each new level's largest part's work."""
    per_level = np.diff(parts.ptr[: parts.levels + 1])
    level = np.repeat(np.arange(parts.levels, dtype=np.int64), per_level)
    chain = np.arange(parts.parts, dtype=np.int64) - parts.ptr[level]
    width = int(chain.max()) + 1
    key = new * width + chain
    perm = np.argsort(key, kind="stable")  # by new level, chain, then coarse level
    sorted_key = key[perm]
    first = np.flatnonzero(np.concatenate([[True], sorted_key[1:] != sorted_key[:-1]]))
    levels = int(new.max()) + 1
    new_level = sorted_key[first] // width
    ptr = np.zeros(levels + 1, dtype=np.int64)
    np.cumsum(np.bincount(new_level, minlength=levels), out=ptr[1:])
    largest = np.zeros(levels, dtype=np.float64)
    np.maximum.at(largest, new_level, np.add.reduceat(works[perm], first))
    return levels, ptr, perm, first, np.ceil(largest).astype(np.int64)


def _new_levels(
    parts: Parts, scan: ChainScan | None
) -> Callable[[np.ndarray, np.ndarray, int], np.ndarray | None]:
    """What gives each part's new level from the parts' needs under a cap: :func:`groups`,
    or ``scan``'s loop (None where its table would be too large)."""
    ptr = _i64(parts.ptr[: parts.levels + 1])
    if scan is not None:
        return lambda high, low, cap: scan.groups(ptr, parts.levels, high, low, cap)
    ptr_list = ptr.tolist()

    def by_python(high: np.ndarray, low: np.ndarray, cap: int) -> np.ndarray:
        return np.asarray(groups(ptr_list, high.tolist(), cap, low.tolist()), dtype=np.int64)

    return by_python


def join(
    parts: Parts,
    need: tuple[np.ndarray, np.ndarray],
    work: np.ndarray,
    total: int,
    unit: float,
    gain: float,
    scan: ChainScan | None = None,
) -> Joined:
    """``parts`` joined along chains (module docstring) under the cap of :data:`CAPS` that
    :func:`spf.runtime.coarse.estimate` ranks fastest, when faster than ``gain`` (``parts``'
    estimate; ``total`` and ``unit`` as it reads them); else ``parts`` (cap 0). ``need``:
    per part, the greatest coarse level plus one of its nodes' sources in a later chain and
    in an earlier one (the chain pass); ``work``: per node (read only when the parts do not
    carry theirs). The parts' stretches are kept (each new part's junctions of old parts
    replace the old parts' starts). O(nodes) for the one gather of the order (and the
    parts' work where they do not carry it), O(parts x caps) in Python; with ``scan``
    (:mod:`spf.runtime.chain_scan`) the groups and the gather are its loops (the same
    values)."""
    if parts.levels < 2 or parts.parts > MAX_PARTS:
        return Joined(parts, gain, 0)
    if parts.parts and int(np.diff(parts.partptr[: parts.parts + 1]).min()) < 1:
        return Joined(parts, gain, 0)  # an empty part: reduceat would read the next one's
    starts = parts.partptr[: parts.parts]
    new_levels = _new_levels(parts, scan)
    high, low = (_i64(x) for x in need)
    works = part_work(parts, work)
    best: tuple[float, int, tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] | None
    best = None
    for cap in CAPS:
        new = new_levels(high, low, cap)
        if new is None:
            return Joined(parts, gain, 0)
        shape = _shape(parts, new, works)
        levels, ptr, _, first, largest = shape
        trial = Parts(levels, ptr, np.zeros(1), parts.order, len(first), largest, parts.stretches)
        found = estimate(trial, total, unit)
        if found > gain and (best is None or found > best[0]):
            best = (found, cap, shape)
    if best is None:
        return Joined(parts, gain, 0)
    found, cap, (levels, ptr, perm, first, largest) = best
    sizes = np.diff(parts.partptr[: parts.parts + 1])[perm]
    offsets = np.cumsum(sizes) - sizes
    n = len(parts.order)
    if scan is not None:
        order = scan.gather(np.ascontiguousarray(parts.order), _i64(starts[perm]), sizes, n)
    else:
        gathered = np.repeat(starts[perm] - offsets, sizes) + np.arange(n, dtype=np.int64)
        order = parts.order[gathered]
    partptr = np.empty(len(first) + 1, dtype=np.int64)
    partptr[:-1] = offsets[first]
    partptr[-1] = n
    works_new = np.add.reduceat(works[perm], first)
    joined = Parts(
        levels, ptr, partptr, order, len(first), largest, parts.stretches, None, works_new
    )
    return Joined(joined, found, cap)

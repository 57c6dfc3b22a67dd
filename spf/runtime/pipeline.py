"""Pipeline parts of kernels fused into one loop: one thread runs the first kernel's rows in
order while the others run a later, free kernel's rows as their inputs complete
(docs/inspection.md "Fused kernels in a pipeline").

A solve fused with an SpMV of its solution has coarse levels only as wide as the solve's
rows that do not depend on each other; on a matrix of long rows (the benchmark's pushpull:
~50 entries a row) there are hundreds of narrow ones, whose barriers cost more than their
rows, so ``auto`` ran the loop serially. Yet the solve, run in order, is one chain, and the
product's rows (no edge between them) need only the solve rows they read. These parts cut
the solve's rows in order into ``K`` blocks of about equal work: coarse level ``L < K`` runs
block ``L`` as its first part (one thread, in order) and, as its second, free rows whose
every source lies in a block before ``L`` (ready), as many as balance the block's time
(:data:`SHARE` of its work); the
last level runs the free rows left over, in two halves of about equal work. Every source of
a row lies in an earlier level or earlier in its part, so the parts respect the dependences
as any coarse plan must (and the plan check proves it). The rows' operations are those of
the serial loop: the same bits.
"""

from __future__ import annotations

import numpy as np

from spf.runtime import coarse
from spf.runtime.coarse import Parts, with_stretches

BLOCKS = (2, 4, 8)
"""The numbers of solve blocks ``K`` tried (each estimated against the serial kernels,
:func:`spf.runtime.coarse.over_kernels`): more blocks let the free rows start earlier, each
costs a barrier, and on a machine shared with other processes every barrier a thread waits
at long risks its sleep and wake-up. pushpull, bcsstk13 and bayer10 (2 threads, idle host,
medians of 100-200 interleaved calls) ran alike at 2, 4 and 8 blocks (pushpull 109-111 us,
and 129 us at one block)."""


MIN_GAIN = coarse.MIN_GAIN
"""The least estimate against the serial kernels (:func:`spf.runtime.coarse.over_kernels`)
at which ``auto`` takes the pipeline instead of ``"serial"``: the gate of every other plan
(:data:`spf.runtime.coarse.MIN_GAIN`, 1.25). It was 1.4 (the pipeline's second thread
waits on the solve's chain more than the estimate counts), which kept bayer10 (estimated
1.31x) serial on bench runs that could not tell the two apart (1.23-1.39x against
1.23-1.29x over the separate kernels). Timed in one process instead (2026-12-01, the
benchmark's rotation of the nine SuiteSparse loops and MKL's pairs, each call alone,
2 threads, cap off, medians of 100-300 rounds, four runs): bayer10's pipeline took
72.6-87.9 us against 81.1-89.7 us for its serial plan (1.02-1.13x, 1.12x in the longest
run), while the loops estimated below 1.25 stayed slower on it (cryg2500, estimated
0.77x: 23.2 against 19.2 us)."""

CHAIN_WEIGHT = 1
"""What a unit of work of the solve's rows weighs against one of the free kernel's in the
pipeline's parts and estimate (the coarse candidates weigh it
:data:`spf.runtime.coarse.CHAIN_WEIGHT`, 3, from 2-D Poisson 1M, whose arrays stream from
memory and whose rows wait on the row before). On the SuiteSparse triangles whose loops
the pipeline can pay on, in cache, long rows, the serial solve's time per unit over the
serial SpMV's (hand-written C, medians of 400 interleaved calls, 2026-11-30): pushpull
1.37, bcsstk13 1.05, bayer10 1.16, arrow 1.30. Rows of two or three entries cost the solve
more (cryg2500 3.5, olm1000 5.7: a division each, and the row before to wait on), but such
loops hold too little work to pay for a parallel region (:data:`spf.runtime.coarse.REGION_WORK`)."""


SHARE = 1.4
"""How much free work (the product's units) a level's second part takes beside its solve
block, per unit of the block's work: the second thread's rows balance the block in time,
not in units. A unit of the serial solve took 1.37 times one of the serial SpMV on
pushpull and 1.30 on arrow (:data:`CHAIN_WEIGHT`'s measurements), so with the rows
balanced by units (1.0) the second thread idled through the end of each block. In one
process at real-time priority (the benchmark's rotation of these loops and MKL's pairs,
2 threads, cap off, the plan's block count kept, 60 alternating repetitions of 40 rounds,
two runs; 2026-12-01): pushpull 92.2 and 94.9 us a call at 1.0, 87.7 and 91.0 at 1.4;
bcsstk13 46.0 and 48.8 against 43.3 and 46.1; bayer10 62.6 and 66.0 against 61.1 and 64.4;
at 1.7 within the runs' spread of 1.4, at 2.0 slower again (pushpull 99.0 and 100.8
against 98.0 and 98.1 at 1.4 in two more runs). ``auto`` picks the block count and weighs
the pipeline against its gate on the parts of ``share=1.0`` (whose estimate it was fitted
with: estimated on these parts, a 7-diagonal band of 8,000 rows fell under the gate, and
bayer10 took 8 blocks, which ran 72.5 against 59.6 us), then runs the parts of this share
with that block count."""


def reweigh(work: np.ndarray) -> np.ndarray:
    """A copy of the ``work`` of a loop of two kernels fused, the first (a chain) weighed
    by :data:`spf.runtime.coarse.CHAIN_WEIGHT` (:func:`spf.runtime.coarse.weigh`), with
    the chain's nodes weighed by :data:`CHAIN_WEIGHT` instead."""
    out = work.astype(np.int64)
    half = len(out) // 2
    out[:half] = out[:half] // coarse.CHAIN_WEIGHT * CHAIN_WEIGHT
    return out


def applies(free: tuple[bool, ...], team: int) -> bool:
    """Whether :func:`pipeline` plans a loop of kernels ``free`` (one flag per kernel: no
    edge between its own rows) for ``team`` threads: two kernels, the first a chain and the
    second free, and two threads or more."""
    return team >= 2 and free == (False, True)


def pipeline(
    after: np.ndarray, work: np.ndarray, blocks: int, share: float = SHARE
) -> Parts | None:
    """The pipeline parts of a loop of two kernels fused (nodes ``0 .. n-1`` the first
    kernel's rows, a chain run in order; ``n .. 2n-1`` the second's, free) in ``blocks``
    solve blocks, from ``after`` (each free node's highest source among the first kernel's
    rows, as the coarse pass sets it; the first kernel's nodes hold their own row) and each
    node's ``work``, a level's second part taking up to ``share`` times its block's work
    (:data:`SHARE`; ``1.0``: the parts the plan's block count and gate are estimated on,
    :meth:`spf.runtime.plan.WavefrontKernel._pipeline`). Each level's
    :attr:`Parts.largest` is the larger part's work in units. None when there is no free
    node or no more rows than blocks: the ``2 * (blocks + 1)`` parts, some of them empty,
    would outnumber the ``2 * n`` nodes, which the executor's checked call refuses
    (``nparts <= 2 * N``)."""
    nodes = len(after)
    n = nodes // 2
    if n <= blocks or blocks < 1 or nodes != 2 * n:
        return None
    chain_work = work[:n].astype(np.int64)
    free_work = work[n:].astype(np.int64)
    cs = np.cumsum(chain_work)
    total = int(cs[-1])
    cuts = np.searchsorted(cs, (total * np.arange(1, blocks)) // blocks, side="right")
    cuts = np.unique(np.concatenate(([0], cuts, [n]))).astype(np.int64)
    k = len(cuts) - 1
    ready = np.searchsorted(cuts, after[n:].astype(np.int64), side="right") - 1
    np.clip(ready, 0, k - 1, out=ready)  # the block whose last row completes the node
    queue = np.argsort(ready, kind="stable")  # free rows by the block they wait on
    qcs = np.concatenate(([0], np.cumsum(free_work[queue])))
    avail = np.searchsorted(ready[queue], np.arange(k), side="left")  # ready before level L
    order = np.empty(nodes, dtype=np.int64)
    partptr = np.zeros(2 * (k + 1) + 1, dtype=np.int64)
    largest = np.zeros(k + 1, dtype=np.int64)
    at = taken = part = 0
    for lev in range(k):
        lo, hi = int(cuts[lev]), int(cuts[lev + 1])
        order[at : at + hi - lo] = np.arange(lo, hi)
        at += hi - lo
        part += 1
        partptr[part] = at
        block = int(cs[hi - 1] - (cs[lo - 1] if lo else 0))
        stop = int(np.searchsorted(qcs, qcs[taken] + block * share, side="right")) - 1
        stop = max(taken, min(stop, int(avail[lev])))
        rows = np.sort(queue[taken:stop]) + n
        order[at : at + len(rows)] = rows
        at += len(rows)
        part += 1
        partptr[part] = at
        largest[lev] = max(block, int(qcs[stop] - qcs[taken]))
        taken = stop
    rest = np.sort(queue[taken:])
    rest_cs = np.cumsum(free_work[rest])
    half = int(np.searchsorted(rest_cs, rest_cs[-1] / 2)) + 1 if len(rest) else 0
    for rows in (rest[:half], rest[half:]):
        order[at : at + len(rows)] = rows + n
        at += len(rows)
        part += 1
        partptr[part] = at
    if len(rest):
        first = int(rest_cs[half - 1]) if half else 0
        largest[k] = max(first, int(rest_cs[-1]) - first)
    ptr = np.arange(0, 2 * (k + 1) + 1, 2, dtype=np.int64)
    return with_stretches(Parts(k + 1, ptr, partptr, order, 2 * (k + 1), largest))

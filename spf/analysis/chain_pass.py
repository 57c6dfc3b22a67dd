"""The pass that says which chains of parts a coarse plan's rows read from
(:mod:`spf.runtime.chains`).

A coarse plan's parts are numbered within their coarse level (the *chain* of a part: its
place in its level, the thread slot that runs it); :func:`spf.runtime.chains.join` merges
consecutive coarse levels along the chains wherever no row reads a row of another chain
that the merge would put in the same new level. What it needs per node is the latest coarse
level holding a source of the node in *another* chain: one generated pass over all the
dependences, reading each source's key (its coarse level plus one, shifted left by
:data:`CHAIN_BITS`, or'ed with its chain) and writing per sink the greatest coarse level
plus one of its sources in later chains, and in earlier ones (0 for none). O(iterations +
dependences).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.analysis.coarse_inspector import (
    _declare,
    _Edge,
    _edges,
    _fresh_names,
    _locals_of,
    _private_local,
    _schedule,
    zeroes_in_pass,
)
from spf.analysis.inspector import with_constraint
from spf.ir import build

if TYPE_CHECKING:
    from spf.analysis.inspector import WavefrontAnalysis
    from spf.ir import ComputationIR

CHAIN_KEY = "coarse_chain_key"
CHAIN_NEED = "coarse_chain_need"
CHAIN_NEED_LOW = "coarse_chain_need_low"
"""The arrays of :func:`build_chain_pass`: each node's key (read at the source and the sink
of each edge), and per sink the greatest coarse level plus one of its sources in a later
chain (``CHAIN_NEED``) and in an earlier one (``CHAIN_NEED_LOW``), both zeroed by the
caller."""

CHAIN_LO = "coarse_chain_lo"
CHAIN_HI = "coarse_chain_hi"
"""The parameters of :func:`build_chain_pass`: the sinks ``[lo, hi)`` one call covers, so
that two threads run one half of the nodes each (each writes only its own sinks' needs)."""

NEED_TYPE = "int32_t"
"""The C type of the needs: a coarse level plus one, at most the number of nodes
(:data:`spf.analysis.coarse_inspector.MAX_NODES`). The pass is bound by its memory traffic
(docs/inspection.md): 32-bit needs write half the bytes of 64-bit ones."""

CHAIN_BITS = 16
"""The low bits of a key holding the chain (at most ``2**16`` parts per coarse level); the
coarse level plus one sits above them (levels are below ``2**31``: the key fits 64 bits)."""


def build_chain_pass(ir: ComputationIR, analysis: WavefrontAnalysis) -> ComputationIR:
    """The pass ``<name>_coarse_chains_<loop>`` over every dependence ``src -> snk``:
    ``need(snk) = max(need(snk), (key(src) >> 16) & -((key(src) & 0xffff) > (key(snk) &
    0xffff)))``, and ``need_low`` the same for ``<``: masks, as the coarse pass's crossing
    test (0 for a source in the sink's own chain or on the other side, whose coarse level
    plus one is at least 1 otherwise). The keys 64-bit, the needs 32-bit (:data:`NEED_TYPE`).
    Two maxima, not one over every other chain: on a pipeline of chains (each reading the
    next one's rows, 2-D Poisson's grid cut into more than two pieces a level) the later
    chains lead and the earlier ones lag, and one bound over all of them would make each
    chain wait for the lagging ones. Only the edges whose sink lies in ``[coarse_chain_lo,
    coarse_chain_hi)`` (:data:`CHAIN_LO`, :data:`CHAIN_HI`): two calls on disjoint ranges
    of sinks write disjoint entries and read only the keys, so they run at once.

    Where every edge is a pull edge (the sink is the enumerated node, as in a solve) and
    each kernel's edges enumerate one iterator, the two maxima run in locals private to the
    node's loop, stored once after its edges (:func:`_needs_in_locals`): the same values;
    in memory each edge's ``max`` is a load and a store the C compiler may not keep in a
    register, since the update is conditional (2-D Poisson 1M: the pass on one thread took
    1.7 serial solves). Either way the caller zeroes the needs."""
    names = (CHAIN_KEY, CHAIN_NEED, CHAIN_NEED_LOW)
    _fresh_names(ir, analysis, (*names, CHAIN_LO, CHAIN_HI))
    arrays = ((CHAIN_KEY, "int64_t"), (CHAIN_NEED, NEED_TYPE), (CHAIN_NEED_LOW, NEED_TYPE))
    stage = _declare(ir, analysis, "chains", arrays)
    edges = _edges(analysis)
    if _needs_in_locals(stage, analysis, edges):
        return _chain_pass_in_locals(stage, analysis, edges)
    for k, e in enumerate(edges):
        place = "0" if analysis.groups == 1 else f"0, {e.group}"
        prefix = _schedule(e.its, e.var, place, k)
        text = with_constraint(e.text, f"{CHAIN_LO} <= {e.snk} < {CHAIN_HI}")
        for j, need in enumerate((CHAIN_NEED, CHAIN_NEED_LOW)):
            body = f"${need}$({e.snk}) = max(${need}$({e.snk}), {_crossing(e, j)});"
            stage = build.add_stmt(stage, body, text, f"{{{prefix}, {j}]}}")
    return stage


def _crossing(e: _Edge, j: int) -> str:
    """The value edge ``e`` offers its sink's need (``j`` 0: a source in a later chain; 1:
    in an earlier one): the source's coarse level plus one where its chain lies on that
    side of the sink's, else 0. In 32 bits (:data:`NEED_TYPE`): the chains' difference
    (each below ``2**16``) shifted right by 31 is the mask, all ones where it is negative,
    and a coarse level plus one fits (at most the nodes); 64-bit masks made of a compare
    took 1.5x its time on 2-D Poisson 1M (two extensions and a negation an edge)."""
    low = (1 << CHAIN_BITS) - 1
    src, snk = (f"(int32_t)(${CHAIN_KEY}$({x}) & {low})" for x in (e.src, e.snk))
    later, earlier = (snk, src) if j == 0 else (src, snk)
    level = f"(int32_t)(${CHAIN_KEY}$({e.src}) >> {CHAIN_BITS})"
    return f"{level} & (({later} - {earlier}) >> 31)"


def _needs_in_locals(insp: ComputationIR, analysis: WavefrontAnalysis, edges: list[_Edge]) -> bool:
    """Whether :func:`_chain_pass_in_locals` applies: no push edge (every edge's sink is
    the node its loop enumerates), each kernel's edges enumerate one iterator (the locals'
    loop), and the locals' names are free."""
    if not zeroes_in_pass(analysis):
        return False
    taken = {d.name for d in insp.data_spaces} | set(insp.params) | {u.name for u in insp.ufs}
    for g in range(analysis.groups):
        if len({e.var for e in edges if e.group == g}) > 1:
            return False
        if taken & set(_locals_of(analysis, (CHAIN_NEED, CHAIN_NEED_LOW), g)):
            return False
    return True


def _chain_pass_in_locals(
    insp: ComputationIR, analysis: WavefrontAnalysis, edges: list[_Edge]
) -> ComputationIR:
    """The pass with each node's two needs in locals private to its kernel's loop (a fresh
    0 per node), raised by its edges and stored once after them, for the nodes in
    ``[coarse_chain_lo, coarse_chain_hi)``: a node without edges stores 0, what the zeroed
    arrays held."""
    for g in range(analysis.groups):
        mine = [(k, e) for k, e in enumerate(edges) if e.group == g]
        loop = mine[0][1].var if mine else analysis.var
        runs = _locals_of(analysis, (CHAIN_NEED, CHAIN_NEED_LOW), g)
        for run in runs:
            insp = _private_local(insp, run, NEED_TYPE, loop)
        place = "0" if analysis.groups == 1 else f"0, {g}"
        for k, e in mine:
            prefix = _schedule(e.its, e.var, place, k)
            text = with_constraint(e.text, f"{CHAIN_LO} <= {e.snk} < {CHAIN_HI}")
            for j, run in enumerate(runs):
                body = f"${run}$ = max(${run}$, {_crossing(e, j)});"
                insp = build.add_stmt(insp, body, text, f"{{{prefix}, {j}]}}")
        node = analysis.node(loop, g)
        domain = (
            f"{{[{loop}]: 0 <= {loop} < {analysis.extent} && {CHAIN_LO} <= {node} < {CHAIN_HI}}}"
        )
        for j, (need, run) in enumerate(zip((CHAIN_NEED, CHAIN_NEED_LOW), runs, strict=True)):
            insp = build.add_stmt(
                insp,
                f"${need}$({node}) = ${run}$;",
                domain,
                f"{{[{loop}] -> [{place}, {loop}, {len(edges)}, {j}]}}",
            )
    return insp

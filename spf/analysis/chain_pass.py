"""The pass that says which chains of parts a coarse plan's rows read from
(:mod:`spf.runtime.chains`).

A coarse plan's parts are numbered within their coarse level (the *chain* of a part: its
place in its level, the thread slot that runs it); :func:`spf.runtime.chains.join` merges
consecutive coarse levels along the chains wherever no row reads a row of another chain
that the merge would put in the same new level. What it needs per part is the latest
coarse level holding a source of one of its nodes in *another* chain: one generated pass
over all the dependences, reading each node's part (a UF), each part's coarse level plus
one and its chain (two small tables, in cache), and writing per part the greatest coarse
level plus one of its nodes' sources in later chains, and in earlier ones (0 for none).
O(iterations + dependences), and O(parts) written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.analysis.coarse_inspector import (
    _Edge,
    _edges,
    _fresh_names,
    _locals_of,
    _private_local,
    _schedule,
    node_uf,
    pulled_into_locals,
)
from spf.analysis.inspector import _copy_declarations, with_constraint
from spf.ir import build

if TYPE_CHECKING:
    from spf.analysis.inspector import WavefrontAnalysis
    from spf.ir import ComputationIR

CHAIN_PART = "coarse_chain_part"
"""The UF of :func:`build_chain_pass`: each node's part (read at the source and the sink of
each edge)."""
CHAIN_LEVEL = "coarse_chain_level"
CHAIN_SLOT = "coarse_chain_slot"
"""Per part: its coarse level plus one, and its chain (its place in its coarse level)."""
CHAIN_NEED = "coarse_chain_need"
CHAIN_NEED_LOW = "coarse_chain_need_low"
"""Per part, the greatest coarse level plus one of its nodes' sources in a later chain
(``CHAIN_NEED``) and in an earlier one (``CHAIN_NEED_LOW``), both zeroed by the caller:
a call raises them (two calls at once write two pairs of arrays, which the caller joins by
their maxima)."""
CHAIN_PARTS = "coarse_chain_parts"
"""The parameter of :func:`build_chain_pass` holding the number of parts."""

CHAIN_LO = "coarse_chain_lo"
CHAIN_HI = "coarse_chain_hi"
"""The parameters of :func:`build_chain_pass`: the sinks ``[lo, hi)`` one call covers, so
that two threads run one half of the nodes each (each into its own needs)."""

NEED_TYPE = "int32_t"
"""The C type of the needs, the tables and the parts: a coarse level plus one, at most the
number of nodes (:data:`spf.analysis.coarse_inspector.MAX_NODES`)."""


def build_chain_pass(ir: ComputationIR, analysis: WavefrontAnalysis) -> ComputationIR:
    """The pass ``<name>_coarse_chains_<loop>`` over every dependence ``src -> snk`` (``p``
    the part of a node, ``L`` a part's coarse level plus one, ``c`` its chain):
    ``need(p(snk)) = max(need(p(snk)), L(p(src)) & ((c(p(snk)) - c(p(src))) >> 31))``, and
    ``need_low`` the mirror, ``c(p(src)) - c(p(snk))``: in 32 bits, the chains' difference
    (each below ``2**16``) shifted right by 31 is the mask, all ones where the source's chain
    lies on that side of the sink's (a compare made into a 64-bit mask took 1.5x the time
    on 2-D Poisson 1M: two extensions and a negation an edge). Two maxima, not one over
    every other chain: on a pipeline of chains (each reading the next one's rows, 2-D
    Poisson's grid cut into more than two pieces a level) the later chains lead and the
    earlier ones lag, and one bound over all of them would make each chain wait for the
    lagging ones. Only the edges whose sink lies in ``[coarse_chain_lo, coarse_chain_hi)``
    (:data:`CHAIN_LO`, :data:`CHAIN_HI`): two calls on disjoint ranges of sinks, each into
    its own needs, run at once.

    Where every edge is pulled into its row (the sink is the enumerated node, as in a solve)
    and each kernel's edges enumerate one iterator, a row's two maxima run in locals private
    to the node's loop and raise its part's needs once after its edges
    (:func:`spf.analysis.coarse_inspector.pulled_into_locals`): in memory each edge's
    ``max`` is a load and a store the C compiler may not keep in a register, the update
    being conditional. The needs per part, not per node: no array of the nodes' needs to
    zero, write and gather by parts again (docs/inspection.md, "The chain pass in 32-bit
    masks")."""
    names = (CHAIN_PART, CHAIN_LEVEL, CHAIN_SLOT, CHAIN_NEED, CHAIN_NEED_LOW)
    _fresh_names(ir, analysis, (*names, CHAIN_PARTS, CHAIN_LO, CHAIN_HI))
    stage = build.computation(f"{ir.name}_coarse_chains_{analysis.loop}")
    stage = _copy_declarations(ir, stage)
    stage = node_uf(stage, CHAIN_PART, analysis.nodes, CHAIN_PARTS, "int32")
    for name in (CHAIN_LEVEL, CHAIN_SLOT, CHAIN_NEED, CHAIN_NEED_LOW):
        stage = build.add_data_space(stage, name, NEED_TYPE, (CHAIN_PARTS,))
    edges = _edges(analysis)
    if pulled_into_locals(stage, analysis, edges, (CHAIN_NEED, CHAIN_NEED_LOW)):
        return _chain_pass_in_locals(stage, analysis, edges)
    for k, e in enumerate(edges):
        place = "0" if analysis.groups == 1 else f"0, {e.group}"
        prefix = _schedule(e.its, e.var, place, k)
        text = with_constraint(e.text, f"{CHAIN_LO} <= {e.snk} < {CHAIN_HI}")
        for j, need in enumerate((CHAIN_NEED, CHAIN_NEED_LOW)):
            into = f"${need}$({CHAIN_PART}({e.snk}))"
            body = f"{into} = max({into}, {_crossing(e, j)});"
            stage = build.add_stmt(stage, body, text, f"{{{prefix}, {j}]}}")
    return stage


def _crossing(e: _Edge, j: int) -> str:
    """The value edge ``e`` offers its sink's part's need (``j`` 0: a source in a later
    chain; 1: in an earlier one): the source's part's coarse level plus one where its chain
    lies on that side of the sink's, else 0."""
    src, snk = (f"${CHAIN_SLOT}$({CHAIN_PART}({x}))" for x in (e.src, e.snk))
    later, earlier = (snk, src) if j == 0 else (src, snk)
    return f"${CHAIN_LEVEL}$({CHAIN_PART}({e.src})) & (({later} - {earlier}) >> 31)"


def _chain_pass_in_locals(
    insp: ComputationIR, analysis: WavefrontAnalysis, edges: list[_Edge]
) -> ComputationIR:
    """The pass with each node's two maxima in locals private to its kernel's loop (a fresh
    0 per node), raised by its edges, then raising its part's needs, for the nodes in
    ``[coarse_chain_lo, coarse_chain_hi)``."""
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
            into = f"${need}$({CHAIN_PART}({node}))"
            insp = build.add_stmt(
                insp,
                f"{into} = max({into}, ${run}$);",
                domain,
                f"{{[{loop}] -> [{place}, {loop}, {len(edges)}, {j}]}}",
            )
    return insp

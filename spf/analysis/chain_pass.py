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

from spf.analysis.coarse_inspector import _declare, _edges, _fresh_names, _schedule
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
    of sinks write disjoint entries and read only the keys, so they run at once."""
    names = (CHAIN_KEY, CHAIN_NEED, CHAIN_NEED_LOW)
    _fresh_names(ir, analysis, (*names, CHAIN_LO, CHAIN_HI))
    arrays = ((CHAIN_KEY, "int64_t"), (CHAIN_NEED, NEED_TYPE), (CHAIN_NEED_LOW, NEED_TYPE))
    stage = _declare(ir, analysis, "chains", arrays)
    low = (1 << CHAIN_BITS) - 1
    for k, e in enumerate(_edges(analysis)):
        place = "0" if analysis.groups == 1 else f"0, {e.group}"
        prefix = _schedule(e.its, e.var, place, k)
        text = with_constraint(e.text, f"{CHAIN_LO} <= {e.snk} < {CHAIN_HI}")
        for j, (need, side) in enumerate(((CHAIN_NEED, ">"), (CHAIN_NEED_LOW, "<"))):
            other = f"((${CHAIN_KEY}$({e.src}) & {low}) {side} (${CHAIN_KEY}$({e.snk}) & {low}))"
            body = (
                f"${need}$({e.snk}) = max(${need}$({e.snk}), "
                f"(${CHAIN_KEY}$({e.src}) >> {CHAIN_BITS}) & -{other});"
            )
            stage = build.add_stmt(stage, body, text, f"{{{prefix}, {j}]}}")
    return stage

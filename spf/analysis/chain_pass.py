"""The pass that says which chains of parts a coarse plan's rows read from
(:mod:`spf.runtime.chains`).

A coarse plan's parts are numbered within their coarse level (the *chain* of a part: its
place in its level, the thread slot that runs it); :func:`spf.runtime.chains.join` merges
consecutive coarse levels along the chains wherever no row reads a row of another chain
that the merge would put in the same new level. What it needs per node is the latest coarse
level holding a source of the node in *another* chain: one generated pass over all the
dependences, reading each source's key (its coarse level plus one, shifted left by
:data:`CHAIN_BITS`, or'ed with its chain) and writing per sink the greatest coarse level
plus one of its sources in other chains (0 for none). O(iterations + dependences).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.analysis.coarse_inspector import _declare, _edges, _fresh_names, _schedule
from spf.ir import build

if TYPE_CHECKING:
    from spf.analysis.inspector import WavefrontAnalysis
    from spf.ir import ComputationIR

CHAIN_KEY = "coarse_chain_key"
CHAIN_NEED = "coarse_chain_need"
"""The arrays of :func:`build_chain_pass`: each node's key (read at the source and the sink
of each edge), and per sink the greatest coarse level plus one of its sources in another
chain (zeroed by the caller)."""

CHAIN_BITS = 16
"""The low bits of a key holding the chain (at most ``2**16`` parts per coarse level); the
coarse level plus one sits above them (levels are below ``2**31``: the key fits 64 bits)."""


def build_chain_pass(ir: ComputationIR, analysis: WavefrontAnalysis) -> ComputationIR:
    """The pass ``<name>_coarse_chains_<loop>`` over every dependence ``src -> snk``:
    ``need(snk) = max(need(snk), (key(src) >> 16) & -((key(src) & 0xffff) != (key(snk) &
    0xffff)))``: a mask, as the coarse pass's crossing test (0 for a source in the sink's
    own chain, whose coarse level plus one is at least 1 otherwise). Both arrays 64-bit."""
    _fresh_names(ir, analysis, (CHAIN_KEY, CHAIN_NEED))
    stage = _declare(ir, analysis, "chains", ((CHAIN_KEY, "int64_t"), (CHAIN_NEED, "int64_t")))
    low = (1 << CHAIN_BITS) - 1
    for k, e in enumerate(_edges(analysis)):
        other = f"((${CHAIN_KEY}$({e.src}) & {low}) != (${CHAIN_KEY}$({e.snk}) & {low}))"
        body = (
            f"${CHAIN_NEED}$({e.snk}) = max(${CHAIN_NEED}$({e.snk}), "
            f"(${CHAIN_KEY}$({e.src}) >> {CHAIN_BITS}) & -{other});"
        )
        place = "0" if analysis.groups == 1 else f"0, {e.group}"
        stage = build.add_stmt(stage, body, e.text, f"{{{_schedule(e.its, e.var, place, k)}]}}")
    return stage

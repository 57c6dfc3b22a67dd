"""Run-time inspection in the PDFG: the inspector of each wavefront loop.

A computation with a wavefront loop (``comp.wavefront("i")``) is run by an executor that
reads arrays an inspector computed at run time. The PDFG shows that inspector beside the
computation: its statements (named ``<inspector>.<stmt>``, e.g. ``sptrsv_csr_inspector_i.s1``),
the ``level`` array they write, and a ``schedule`` edge from ``level`` to every statement of
the wavefront (the order in which the executor runs them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

    from spf.computation.computation import Computation


def add_inspection(g: nx.DiGraph[str], comp: Computation) -> None:
    """Add the inspectors of ``comp``'s wavefront loops to its PDFG ``g`` (nothing without
    a wavefront loop)."""
    from spf.analysis.executor import wavefront_loops, wavefront_stmts
    from spf.analysis.inspector import analyze_wavefront, build_inspector

    for loop in sorted(wavefront_loops(comp)):
        stmts = wavefront_stmts(comp, loop)
        insp = build_inspector(comp, analyze_wavefront(comp, stmts, loop))
        level = f"{insp.name}.level"
        for name, space in insp.data_spaces.items():
            node = f"{insp.name}.{name}"
            g.add_node(node, kind="data", name=name, type=space.type_text + space.shape_text())
        for s in insp.stmts:
            node = f"{insp.name}.{s.name}"
            g.add_node(
                node,
                kind="stmt",
                domain=str(s.domain),
                loops=s.loops,
                source=s.source.strip(),
                schedule=str(s.schedule),
                inspector=insp.name,
            )
            for ds, rel in s.reads:
                g.add_edge(f"{insp.name}.{ds}", node, kind="read", access=str(rel))
            for ds, rel in s.writes:
                g.add_edge(node, f"{insp.name}.{ds}", kind="write", access=str(rel))
        for s in stmts:
            g.add_edge(level, s.name, kind="schedule", access=f"{loop} in level order")

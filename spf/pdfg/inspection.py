"""Run-time inspection in the PDFG: the inspector of each wavefront loop.

A computation with a wavefront loop (``comp.wavefront("i")``) is run by an executor that
reads arrays an inspector computed at run time. The PDFG shows that inspector beside the
computation: its statements (named ``<inspector>.<stmt>``, e.g. ``sptrsv_csr_inspector_i.s1``)
in their loops, first (the inspector runs before the executor), the ``level`` array they
write (its data spaces carry ``shape`` and ``ctype``, so that parameter values give their
bytes), and a ``schedule`` edge from ``level`` to every statement of the wavefront (the order
in which the executor runs them; ``level`` has ``orders``, the wavefront loop).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from spf.pdfg.loops import Nest, loop_tree, statements_in

if TYPE_CHECKING:
    import networkx as nx

    from spf.ir import ComputationIR


def add_inspection(g: nx.DiGraph[str], ir: ComputationIR) -> None:
    """Add the inspectors of the wavefront loops of computation ``ir`` to its PDFG ``g``
    (nothing without a wavefront loop). An inspector is read as the IR value the analysis
    builds (:func:`spf.analysis.inspector.build_inspector`)."""
    from spf.analysis.executor import wavefront_loops, wavefront_stmts
    from spf.analysis.inspector import analyze_wavefront, build_inspector

    first: list[str | Nest] = []
    for loop in sorted(wavefront_loops(ir)):
        stmts = wavefront_stmts(ir, loop)
        analysis = analyze_wavefront(ir, [s.name for s in stmts], loop)
        insp = build_inspector(ir, analysis)
        level = f"{insp.name}.level"
        for space in insp.data_spaces:
            node = f"{insp.name}.{space.name}"
            shape = "" if space.shape is None else "".join(f"[{d}]" for d in space.shape)
            g.add_node(node, kind="data", name=space.name, type=space.type + shape)
            g.nodes[node].update(shape=space.shape, ctype=space.ctype)  # priced with params
        for s in insp.parsed_stmts:
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
        for member in stmts:
            g.add_edge(level, member.name, kind="schedule", access=f"{loop} in level order")
        g.nodes[level]["orders"] = loop
        first.extend(_prefixed(item, insp.name) for item in loop_tree(insp))
    if first:
        g.graph["nests"] = (*first, *g.graph.get("nests", ()))
        order = [name for item in g.graph["nests"] for name in statements_in(item)]
        g.graph["order"] = tuple(order)
        for k, name in enumerate(order):
            g.nodes[name]["order"] = k


def _prefixed(item: str | Nest, prefix: str) -> str | Nest:
    """``item`` of the inspector's loop tree with its statements named as in the PDFG."""
    if isinstance(item, str):
        return f"{prefix}.{item}"
    return replace(item, items=tuple(_prefixed(i, prefix) for i in item.items))

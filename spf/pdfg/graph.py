"""Computation -> ``networkx.DiGraph`` (docs/pdfg.md); pure, no printing.

Nodes: statements (``kind="stmt"``, with ``domain``, ``loops``, ``source`` and ``order``, the
position in execution order) and data spaces (``kind="data"``; id ``data:<name>`` when a
statement has the same name, for buffers as for data spaces; with parameter values,
``removable_by`` lists the operations that would remove a temporary, see
:mod:`spf.computation.temporaries`). Edges: ``read`` (data space -> statement), ``write``
(statement -> data space), each with ``access`` (the relation, as text), and ``dependence``
(source -> sink statement) with ``access``, ``carried_by``, ``dep_kind``, ``data_space`` and
``data_spaces``; several dependences between the same two statements are merged into one edge
(``dep_kind`` joined with ``,``). The loops of the current schedule, in execution order, are
kept in ``graph.graph["nests"]`` (:mod:`spf.pdfg.loops`) and the statements in that order in
``graph.graph["order"]``. A data space placed in a buffer (``store_in``, ``storage_fold``) has
``stored_in``, the buffer's name. With parameter values, sizes are added
(:mod:`spf.pdfg.annotate`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import networkx as nx

from spf.ir.reading import is_constant, placement_of
from spf.pdfg.annotate import annotate
from spf.pdfg.inspection import add_inspection
from spf.pdfg.loops import Nest, loop_tree, statements_in

if TYPE_CHECKING:
    from spf.pdfg.subject import GraphSubject

__all__ = ["Nest", "build_graph", "data_id", "price"]


def data_id(comp: GraphSubject, name: str) -> str:
    """Node id of data space ``name``."""
    return f"data:{name}" if any(s.name == name for s in comp.stmts) else name


def build_graph(comp: GraphSubject, params: Mapping[str, int] | None = None) -> nx.DiGraph[str]:
    """The PDFG of ``comp``; with ``params``, annotated with sizes for those values."""
    g: nx.DiGraph[str] = nx.DiGraph()
    _add_nodes(g, comp)
    for s in comp.stmts:
        for ds, rel in s.reads:
            g.add_edge(data_id(comp, ds), s.name, kind="read", access=str(rel))
        for ds, rel in s.writes:
            g.add_edge(s.name, data_id(comp, ds), kind="write", access=str(rel))
    carried = _add_dependences(g, comp)
    g.graph["name"] = comp.name
    nests = loop_tree(comp.ir, carried)
    g.graph["nests"] = nests
    order = [name for item in nests for name in statements_in(item)]
    g.graph["order"] = tuple(order)
    for k, name in enumerate(order):
        g.nodes[name]["order"] = k
    add_inspection(g, comp.ir)
    if params is not None:
        price(g, comp, params)
    return g


def price(g: nx.DiGraph[str], comp: GraphSubject, params: Mapping[str, int]) -> None:
    """Sizes for ``params`` (:mod:`spf.pdfg.annotate`) and the temporaries an operation
    would remove (:mod:`spf.computation.temporaries`), added to ``comp``'s graph ``g``."""
    annotate(g, comp.ir, params)
    for name, ops in comp._removable_temporaries().items():
        g.nodes[data_id(comp, name)]["removable_by"] = ops


def _add_nodes(g: nx.DiGraph[str], comp: GraphSubject) -> None:
    for s in comp.stmts:
        g.add_node(
            s.name,
            kind="stmt",
            domain=str(s.domain),
            loops=s.loops,
            source=s.source.strip(),
            schedule=str(s.schedule),
        )
    ir = comp.ir
    for name, space in comp.data_spaces.items():
        g.add_node(
            data_id(comp, name), kind="data", name=name, type=space.type_text + space.shape_text()
        )
        if space.private is not None:  # one copy per iteration of the loop (add_local)
            g.nodes[data_id(comp, name)]["private"] = space.private
        placed = placement_of(ir, name)
        if placed is not None:  # store_in, storage_fold: its elements live in a buffer
            g.nodes[data_id(comp, name)]["stored_in"] = placed.buffer
    for name, b in comp.buffers.items():
        node = data_id(comp, name)  # a buffer named like a statement: data:<name>
        if node not in g:
            shape = "".join(f"[{d}]" for d in b.shape)
            g.add_node(node, kind="data", name=name, type=f"{b.dtype}{shape} ({b.scope} buffer)")


def _add_dependences(g: nx.DiGraph[str], comp: GraphSubject) -> dict[tuple[str, int], list[str]]:
    """Dependence edges (merged per statement pair); returns what each loop carries, by
    ``(source statement, schedule position)``."""
    from spf.analysis.dependences import padded

    width = comp.schedule_width()
    carried: dict[tuple[str, int], list[str]] = {}
    for dep in comp.dependences():
        outs = padded(comp.stmt(dep.source), width).out_vars
        for level in dep.levels:
            if level < len(outs) and not is_constant(outs[level]):
                found = carried.setdefault((dep.source, level), [])
                if f"{dep.source}→{dep.sink}" not in found:
                    found.append(f"{dep.source}→{dep.sink}")
        if not g.has_edge(dep.source, dep.sink):
            g.add_edge(
                dep.source,
                dep.sink,
                kind="dependence",
                access=str(dep.relation),
                carried_by=dep.carried_by,
                dep_kind=dep.kind,
                data_space=dep.data_space,
                data_spaces=(dep.data_space,),
            )
            continue
        e = g.edges[dep.source, dep.sink]
        e["dep_kind"] = ",".join(sorted(set(e["dep_kind"].split(",")) | {dep.kind}))
        e["carried_by"] = tuple(sorted(set(e["carried_by"]) | set(dep.carried_by)))
        if dep.data_space not in e["data_spaces"]:
            e["data_spaces"] = (*e["data_spaces"], dep.data_space)
    return carried

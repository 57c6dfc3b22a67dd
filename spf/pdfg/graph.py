"""Computation -> ``networkx.DiGraph`` (docs/pdfg.md); pure, no printing.

Nodes: statements (``kind="stmt"``, with ``domain``, ``loops``, ``source``) and data spaces
(``kind="data"``; id ``data:<name>`` when a statement has the same name). Edges: ``read``
(data space -> statement), ``write`` (statement -> data space), each with ``access`` (the
relation, as text), and ``dependence`` (source -> sink statement) with ``access``,
``carried_by``, ``dep_kind`` and ``data_space``; several dependence kinds between the same
two statements are merged into one edge (``dep_kind`` joined with ``,``). The loop nests,
as the scanner will execute them, are kept in ``graph.graph["nests"]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import networkx as nx

from spf.pdfg.inspection import add_inspection

if TYPE_CHECKING:
    from spf.computation.computation import Computation


@dataclass(frozen=True)
class Nest:
    """A loop of the generated code: its name, ``label`` (the domain of the first statement
    it holds), its items (statement names and inner nests, in execution order) and tags."""

    loop: str
    label: str
    items: tuple[str | Nest, ...]
    tags: tuple[str, ...] = ()


def data_id(comp: Computation, name: str) -> str:
    """Node id of data space ``name``."""
    return f"data:{name}" if any(s.name == name for s in comp.stmts) else name


def build_graph(comp: Computation) -> nx.DiGraph[str]:
    g: nx.DiGraph[str] = nx.DiGraph()
    for s in comp.stmts:
        g.add_node(
            s.name,
            kind="stmt",
            domain=str(s.domain),
            loops=s.loops,
            source=s.source.strip(),
            schedule=str(s.schedule),
        )
    for name, space in comp.data_spaces.items():
        g.add_node(
            data_id(comp, name), kind="data", name=name, type=space.type_text + space.shape_text()
        )
    for name, b in comp.buffers.items():
        if name not in g:
            shape = "".join(f"[{d}]" for d in b.shape)
            g.add_node(name, kind="data", name=name, type=f"{b.dtype}{shape} ({b.scope} buffer)")
    for s in comp.stmts:
        for ds, rel in s.reads:
            g.add_edge(data_id(comp, ds), s.name, kind="read", access=str(rel))
        for ds, rel in s.writes:
            g.add_edge(s.name, data_id(comp, ds), kind="write", access=str(rel))
    for dep in comp.dependences():
        if g.has_edge(dep.source, dep.sink):
            e = g.edges[dep.source, dep.sink]
            kinds = set(e["dep_kind"].split(",")) | {dep.kind}
            e["dep_kind"] = ",".join(sorted(kinds))
            e["carried_by"] = tuple(sorted(set(e["carried_by"]) | set(dep.carried_by)))
            continue
        g.add_edge(
            dep.source,
            dep.sink,
            kind="dependence",
            access=str(dep.relation),
            carried_by=dep.carried_by,
            dep_kind=dep.kind,
            data_space=dep.data_space,
        )
    g.graph["name"] = comp.name
    g.graph["nests"] = loop_nests(comp)
    add_inspection(g, comp)
    return g


def loop_nests(comp: Computation) -> tuple[str | Nest, ...]:
    """The loop tree the scanner produces, with each loop labelled by what it scans."""
    from spf.codegen.loop_ast import Bind, Block, Call, For, If, Node
    from spf.codegen.scan import Scanner

    if not comp.stmts:
        return ()
    domains = {s.name: s.domain for s in comp.stmts}

    def visit(n: Node) -> list[str | Nest]:
        if isinstance(n, Block):
            return [x for item in n.items for x in visit(item)]
        if isinstance(n, (Bind,)):
            return visit(n.body)
        if isinstance(n, If):
            return visit(n.then) + (visit(n.orelse) if n.orelse is not None else [])
        if isinstance(n, Call):
            return [n.stmt]
        assert isinstance(n, For)
        items = tuple(visit(n.body))
        return [Nest(n.var, _label(n.var, items, domains), items, n.tags)]

    return tuple(visit(Scanner(comp).scan()))


def _label(loop: str, items: tuple[str | Nest, ...], domains: dict[str, Any]) -> str:
    """The bounds of ``loop`` as the first statement inside it states them."""
    for item in items:
        name = item if isinstance(item, str) else _first_stmt(item)
        if name is not None:
            return str(domains[name])
    return ""


def _first_stmt(nest: Nest) -> str | None:
    for item in nest.items:
        if isinstance(item, str):
            return item
        found = _first_stmt(item)
        if found is not None:
            return found
    return None

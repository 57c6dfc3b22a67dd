"""Deterministic Graphviz DOT text of a PDFG (same graph, same bytes).

Statements are rounded boxes, data spaces transparent (dashed) boxes, each loop a shaded
``cluster`` labelled with the loop and the domain it scans, nested for imperfect nests;
dependence edges are red and dashed, bold and labelled with their loops when loop-carried.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx

    from spf.pdfg.graph import Nest

_SHADES = ("#e8eef7", "#d6e2f2", "#c4d6ec", "#b2cae6")


def quote(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(g: nx.DiGraph[str]) -> str:
    name = str(g.graph.get("name", "pdfg"))
    lines = [
        f"digraph {quote(name)} {{",
        "  rankdir=TB;",
        '  node [fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    placed: set[str] = set()
    for k, item in enumerate(g.graph.get("nests", ())):
        _item(g, item, f"{k}", 1, lines, placed)
    for node in sorted(g.nodes):
        attrs = g.nodes[node]
        if attrs["kind"] == "stmt" and node not in placed:
            lines.append("  " + _stmt_node(node, attrs))
    for node in sorted(g.nodes):
        attrs = g.nodes[node]
        if attrs["kind"] == "data":
            label = f"{attrs['name']}\n{attrs['type']}"
            lines.append(
                f'  {quote(node)} [shape=box, style=dashed, color="#555555", label={quote(label)}];'
            )
    for src, dst in sorted(g.edges):
        lines.append("  " + _edge(src, dst, g.edges[src, dst]))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _item(
    g: nx.DiGraph[str], item: str | Nest, path: str, depth: int, lines: list[str], placed: set[str]
) -> None:
    pad = "  " * depth
    if isinstance(item, str):
        placed.add(item)
        lines.append(pad + _stmt_node(item, g.nodes[item]))
        return
    shade = _SHADES[min(depth - 1, len(_SHADES) - 1)]
    tags = f" [{', '.join(item.tags)}]" if item.tags else ""
    lines.append(f"{pad}subgraph {quote('cluster_' + path + '_' + item.loop)} {{")
    title = f"for {item.loop}{tags}" + (f": {item.label}" if item.label else "")
    lines.append(f"{pad}  label={quote(title)};")
    lines.append(f'{pad}  style="filled,rounded"; fillcolor="{shade}"; color="#7f93b3";')
    lines.append(f'{pad}  labeljust=l; fontname="Helvetica"; fontsize=10;')
    for k, inner in enumerate(item.items):
        _item(g, inner, f"{path}_{k}", depth + 1, lines, placed)
    lines.append(f"{pad}}}")


def _stmt_node(name: str, attrs: dict[str, Any]) -> str:
    label = f"{name}\n{str(attrs['source']).replace('$', '')}"
    return (
        f'{quote(name)} [shape=box, style="rounded,filled", fillcolor=white, label={quote(label)}];'
    )


def _edge(src: str, dst: str, attrs: dict[str, Any]) -> str:
    kind = attrs["kind"]
    if kind != "dependence":
        color = "#2f6f2f" if kind == "write" else "#444444"
        return f'{quote(src)} -> {quote(dst)} [color="{color}", label={quote(kind)}];'
    carried = attrs["carried_by"]
    label = f"{attrs['dep_kind']} on {attrs['data_space']}"
    if carried:
        label += f"\ncarried by {', '.join(carried)}"
    width = "penwidth=2.0, " if carried else ""
    return (
        f'{quote(src)} -> {quote(dst)} [color="#c0392b", fontcolor="#c0392b", style=dashed, '
        f"{width}constraint=false, label={quote(label)}];"
    )

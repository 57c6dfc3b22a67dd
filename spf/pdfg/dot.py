"""Deterministic Graphviz DOT text of a PDFG (same graph, same bytes).

Layout (docs/pdfg.md): statements are rounded boxes, written in execution order and held in
that order from top to bottom by invisible edges (the graph's rank order); each loop of the
current schedule is a shaded ``cluster`` whose label starts with the loop's name and gives
its bounds (``i0 ∈ [0, ⌈N/64⌉)``), its tags, and the dependences it carries (a loop that
carries one has a red border); the statements' domains are the cluster's SVG tooltip. Data
spaces are dashed boxes, each kept on the rank of the first statement that touches it; a
buffer holding a data space (``store_in``) sits below it, joined by a dotted line. Two
nodes are joined by at most one edge: a statement that reads and writes a data space, and
dependences in both directions, are one edge with ``dir=both`` and one label. Dependence
edges are red and dashed, bold and labelled with the loops that carry them. With parameter
values the labels give sizes: bytes of data spaces, footprints of the accesses that touch
part of a data space (edge labels, which Graphviz makes room for), instances of statements.
Temporaries that inlining or fusion would remove are filled yellow. The text is sized to stay
readable at the docs' width (``size``: 7.3 inches, 700 pixels): a long statement (after
inlining, say) is shown in short form, cut after two lines, its whole text in the node's
tooltip (:mod:`spf.pdfg.labels`).
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Any

from spf.pdfg.annotate import human_bytes
from spf.pdfg.labels import statement_text
from spf.pdfg.loops import Nest, tags_text

if TYPE_CHECKING:
    import networkx as nx

_SHADES = ("#e8eef7", "#d6e2f2", "#c4d6ec", "#b2cae6")
_CARRY = "#c0392b"
_ORDER = "#1f5fa8"


def quote(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def quote_left(text: str) -> str:
    """A DOT string whose lines are left-justified (each ends in ``\\l``)."""
    return quote(text)[:-1].replace("\\n", "\\l") + '\\l"'


def to_dot(g: nx.DiGraph[str]) -> str:
    name = str(g.graph.get("name", "pdfg"))
    lines = [
        f"digraph {quote(name)} {{",
        '  graph [rankdir=TB, newrank=true, size="7.3,40", nodesep=0.35, ranksep=0.45, '
        'fontname="Helvetica", fontsize=13];',
        '  node [fontname="Helvetica", fontsize=13, margin="0.08,0.04"];',
        '  edge [fontname="Helvetica", fontsize=13, arrowsize=0.7];',
    ]
    placed: list[str] = []
    for k, item in enumerate(g.graph.get("nests", ())):
        _item(g, item, f"{k}", 1, lines, placed)
    for node in sorted(g.nodes):
        attrs = g.nodes[node]
        if attrs["kind"] == "stmt" and node not in placed:
            placed.append(node)
            lines.append("  " + _stmt_node(node, attrs))
    for node in sorted(g.nodes):
        if g.nodes[node]["kind"] == "data":
            lines.append("  " + _data_node(node, g.nodes[node]))
    order = {name: k for k, name in enumerate(placed)}
    edges = _merged_edges(g, order)
    joined = {(a, b) for a, b, _ in edges}
    for a, b in pairwise(placed):  # execution order, top to bottom
        if (a, b) not in joined:
            lines.append(f"  {quote(a)} -> {quote(b)} [style=invis, weight=4];")
    anchors = _anchors(g, placed)
    chain = set(pairwise(placed))
    for src, dst, attrs in edges:
        lines.append("  " + _edge(g, src, dst, attrs, anchors, (src, dst) in chain))
    for node in sorted(g.nodes):  # a buffer just below the data space stored in it
        buffer = g.nodes[node].get("stored_in")
        if buffer is not None and f"data:{buffer}" in g:  # named like a statement
            buffer = f"data:{buffer}"
        if buffer is not None and buffer in g:
            lines.append(
                f"  {quote(node)} -> {quote(buffer)} "
                '[class="storage", style=dotted, arrowhead=none, color="#555555"];'
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _item(
    g: nx.DiGraph[str],
    item: str | Nest,
    path: str,
    depth: int,
    lines: list[str],
    placed: list[str],
) -> None:
    pad = "  " * depth
    if isinstance(item, str):
        placed.append(item)
        lines.append(pad + _stmt_node(item, g.nodes[item]))
        return
    shade = _SHADES[min(depth - 1, len(_SHADES) - 1)]
    title = item.label + tags_text(item.tags)
    if item.carries:
        title += "\ncarries " + ", ".join(item.carries)
    border = f'color="{_CARRY}"; penwidth=2' if item.carries else 'color="#7f93b3"'
    lines.append(f"{pad}subgraph {quote('cluster_' + path + '_' + item.loop)} {{")
    lines.append(f"{pad}  label={quote_left(title)}; tooltip={quote(item.domain)};")
    lines.append(f'{pad}  style="filled,rounded"; fillcolor="{shade}"; {border};')
    lines.append(f'{pad}  labeljust=l; fontname="Helvetica"; fontsize=13;')
    for k, inner in enumerate(item.items):
        _item(g, inner, f"{path}_{k}", depth + 1, lines, placed)
    lines.append(f"{pad}}}")


def _stmt_node(name: str, attrs: dict[str, Any]) -> str:
    text, full = statement_text(str(attrs["source"]))
    label = f"{name}\n{text}"
    if "instances" in attrs:
        label += f"\n{attrs['instances']:,} instances"
    tooltip = f"{name}: {attrs['domain']}" if text == full else f"{name}: {full}\n{attrs['domain']}"
    return (
        f'{quote(name)} [shape=box, style="rounded,filled", fillcolor=white, '
        f"label={quote(label)}, tooltip={quote(tooltip)}];"
    )


def _data_node(node: str, attrs: dict[str, Any]) -> str:
    kind = str(attrs["type"]).replace(" (", "\n(")  # "(local buffer)" on a line of its own
    label = f"{attrs['name']}\n{kind}"
    if "private" in attrs:  # one copy per iteration of that loop
        label += f"\nprivate to loop {attrs['private']}"
    if "stored_in" in attrs:  # its bytes are the buffer's
        label += f"\nstored in {attrs['stored_in']}"
    elif "bytes" in attrs:
        label += f"\n{human_bytes(attrs['bytes'])}"
    style = 'style=dashed, color="#555555"'
    if "orders" in attrs:  # an inspector's level array: its schedule edges are blue
        label += f"\norders loop {attrs['orders']} (blue)"
    removable = attrs.get("removable_by")
    if removable:
        label += "\ntemporary, removed by\n" + "\nor ".join(removable)
        style = 'style="dashed,filled", fillcolor="#fff1b8", color="#b7791f", penwidth=1.5'
    return f"{quote(node)} [shape=box, {style}, label={quote(label)}];"


def _anchors(g: nx.DiGraph[str], order: list[str]) -> dict[str, str]:
    """Each data space's first statement in execution order (the one it sits beside)."""
    out: dict[str, str] = {}
    for stmt in order:
        near = [*g.predecessors(stmt), *g.successors(stmt)]
        for node in sorted(near):
            if g.nodes[node]["kind"] == "data" and node not in out:
                out[node] = stmt
    return out


def _merged_edges(
    g: nx.DiGraph[str], order: dict[str, int]
) -> list[tuple[str, str, dict[str, Any]]]:
    """One entry per unordered node pair: an edge, or the two opposite edges merged into
    one with ``dir=both`` (``attrs["back"]`` holds the reverse edge's attributes). Edges
    between statements are written from the earlier statement in execution order
    (``attrs["reverse"]``: the dependence runs the other way, drawn with ``dir=back``)."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for src, dst in sorted(g.edges):
        attrs = g.edges[src, dst]
        if not g.has_edge(dst, src) and src in order and dst in order and order[dst] < order[src]:
            out.append((dst, src, {**attrs, "reverse": True}))
            continue
        if src != dst and g.has_edge(dst, src):
            back = g.edges[dst, src]
            first = order.get(src, len(order)), order.get(dst, len(order))
            if (attrs["kind"], first[0], src) > (back["kind"], first[1], dst):
                continue  # written once, from the other direction (the later statement)
            if attrs["kind"] == "read":  # read + write: drawn from the statement
                out.append((dst, src, {**back, "back": attrs}))
                continue
            out.append((src, dst, {**attrs, "back": back}))
            continue
        out.append((src, dst, dict(attrs)))
    return sorted(out, key=lambda e: (e[0], e[1]))


def _edge(
    g: nx.DiGraph[str],
    src: str,
    dst: str,
    attrs: dict[str, Any],
    anchors: dict[str, str],
    chain: bool,
) -> str:
    back = attrs.get("back")
    kinds = " ".join(sorted({attrs["kind"], back["kind"] if back else attrs["kind"]}))
    both = ", dir=both" if back is not None else ", dir=back" if attrs.get("reverse") else ""
    head = f"{quote(src)} -> {quote(dst)} [class={quote(kinds)}{both}, "
    if attrs["kind"] == "dependence":
        # an edge between consecutive statements also holds them in execution order, two
        # ranks apart: room for its label below the label of a loop box it enters
        place = "weight=4, minlen=2" if chain else "constraint=false"
        return head + _dependence_style(src, dst, attrs, back) + f", {place}];"
    if attrs["kind"] == "schedule":  # level -> a statement of the wavefront it orders
        return head + f'color="{_ORDER}", penwidth=1.5, constraint=false, arrowhead=vee];'
    data = dst if attrs["kind"] == "write" else src
    stmt = src if attrs["kind"] == "write" else dst
    # the edge to a data space's first statement keeps it on that statement's rank
    place = "minlen=0, weight=2" if anchors.get(data) == stmt else "constraint=false"
    label = _footprints(attrs, back, g.nodes[data].get("bytes"))
    color = "#2f6f2f" if "write" in kinds else "#666666"
    # a label of its own (not a head or tail label): Graphviz makes room for it, so it
    # neither covers the nodes at the edge's ends nor the labels of other edges
    text = f", label={quote(label)}" if label else ""
    return head + f'color="{color}", fontcolor="{color}", {place}{text}];'


def _footprints(attrs: dict[str, Any], back: dict[str, Any] | None, whole: int | None) -> str:
    """The bytes an access touches, where that is not all of the data space (``whole``
    bytes, in its node's label): an unlabelled access touches all of it."""
    parts = []
    for e in (attrs, back):
        if e is not None and "footprint" in e and e["footprint"] != whole:
            parts.append(f"{e['kind']} {human_bytes(e['footprint'])}")
    return "\n".join(parts)


def _dependence_style(
    src: str, dst: str, attrs: dict[str, Any], back: dict[str, Any] | None
) -> str:
    if attrs.get("reverse"):
        label = f"{dst}→{src}: {_dependence_text(attrs)}"
    elif back is None:  # a self-loop's label in two lines: narrow beside its statement
        label = _dependence_text(attrs, "\n" if src == dst else ", ")
    else:
        label = f"{src}→{dst}: {_dependence_text(attrs)}\n{dst}→{src}: {_dependence_text(back)}"
    carried = attrs["carried_by"] or (back is not None and back["carried_by"])
    width = "penwidth=2.0, " if carried else ""
    return f'color="{_CARRY}", fontcolor="{_CARRY}", style=dashed, {width}label={quote(label)}'


def _dependence_text(attrs: dict[str, Any], carried_sep: str = ", ") -> str:
    kinds = ", ".join(attrs["dep_kind"].split(","))
    spaces = ", ".join(attrs.get("data_spaces", (attrs["data_space"],)))
    text = f"{kinds} on {spaces}"
    if attrs["carried_by"]:
        text += f"{carried_sep}carried by {', '.join(attrs['carried_by'])}"
    return text

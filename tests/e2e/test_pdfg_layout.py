"""Every PolyBench kernel's PDFG, plain and priced, reads as API §14 says: statements in
execution order, one box per loop of each statement, one edge per node pair."""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

import pydot
import pytest

from spf.bench.polybench import KERNELS

if TYPE_CHECKING:
    import spf

STMT_NODE = re.compile(r'^\s*"([^"]+)" \[shape=box, style="rounded', re.MULTILINE)


def _boxes(graph: pydot.Dot) -> dict[str, int]:
    """Statement -> number of loop boxes around it (``graph``: the parsed DOT text)."""
    out: dict[str, int] = {}

    def walk(sub: pydot.Graph, depth: int) -> None:
        for node in sub.get_nodes():
            if "rounded" in str(node.get("style")):
                out[node.get_name().strip('"')] = depth
        for inner in sub.get_subgraphs():
            walk(inner, depth + 1)

    walk(graph, 0)
    return out


def schedule_order(comp: spf.Computation) -> list[str]:
    """The statements sorted by the constants of their schedules (a loop sorts before
    constants at its position: statements sharing a prefix share that loop)."""
    width = comp.schedule_width()

    def key(s: spf.Stmt) -> tuple[int, ...]:
        outs = s.schedule.pad_outputs(width).out_vars
        return tuple(int(v) if v.lstrip("-").isdigit() else -1 for v in outs)

    return [s.name for s in sorted(comp.stmts, key=key)]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_polybench_pictures(name: str) -> None:
    comp = KERNELS[name].build()
    text = comp.to_dot()
    assert STMT_NODE.findall(text) == schedule_order(comp)
    (graph,) = pydot.graph_from_dot_data(text)  # pydot's parser: most of the test's time
    boxes = _boxes(graph)
    assert {s.name: len(s.loops) for s in comp.stmts} == boxes
    pairs = Counter(frozenset((e.get_source(), e.get_destination())) for e in graph.get_edges())
    assert max(pairs.values()) == 1
    if name in ("jacobi-2d", "gemm", "atax"):  # priced: every shaped array has a size
        priced = comp.pdfg(params=dict.fromkeys(comp.params, 30))
        sizes = [a.get("bytes") for _, a in priced.graph.nodes(data=True) if a["kind"] == "data"]
        assert all(isinstance(b, int) and b > 0 for b in sizes)
        assert all("instances" in priced.graph.nodes[s.name] for s in comp.stmts)

"""The PDFG picture checked as a person would (API §14): statements in execution order, one
box per loop of the current schedule named by the loop, one edge per node pair, opposite
dependences merged, tags and carrying loops visible, sizes for given parameter values."""

from __future__ import annotations

import functools
import re
import shutil
from collections import Counter

import pydot
import pytest

import spf
from spf import kernels

STMT_NODE = re.compile(r'^\s*"([^"]+)" \[shape=box, style="rounded', re.MULTILINE)


def forward_solve() -> spf.Computation:
    """The sparse lower-triangular solve (CSR, diagonal last in each row)."""
    return kernels.sptrsv_csr()


def jacobi_pair() -> spf.Computation:
    """One Jacobi time step as two sweeps (A -> B, then B -> A)."""
    comp = spf.Computation("jacobi")
    for name in ("A", "B"):
        comp.add_data_space(name, "double", shape=("N", "N"))
    dom = "{[i, j]: 1 <= i < N - 1 && 1 <= j < N - 1}"
    comp.add_stmt(
        spf.Stmt("$B$(i, j) = 0.25 * ($A$(i-1, j) + $A$(i+1, j) + $A$(i, j-1) + $A$(i, j+1));", dom)
    )
    comp.add_stmt(spf.Stmt("$A$(i, j) = $B$(i, j);", dom))
    return comp


def tiled_jacobi() -> spf.Computation:
    comp = jacobi_pair()
    for s in comp.stmts:
        s.tile("i", "j", 32, 32, "i0", "j0", "i1", "j1")
    return comp


def producer_consumer(
    produce: str = "$a$(i) = 2 * $x$(i);", consume: str = "$b$(i) = $a$(i) + 1;", n: str = "N"
) -> spf.Computation:
    """``a`` produced in one loop and read in a second one (``n``: the second's extent)."""
    comp = spf.Computation("pc")
    for name in ("a", "b", "x"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(spf.Stmt(produce, "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt(consume, f"{{[i]: 0 <= i < {n}}}"))
    return comp


def execution_order(comp: spf.Computation) -> list[str]:
    """The statements in the order the generated code first runs them."""
    seen: list[str] = []
    for line in comp.loop_structure().splitlines():
        name = line.strip()
        if not name.startswith("for ") and name not in seen:
            seen.append(name)
    return seen


@functools.lru_cache(maxsize=4)
def parsed(text: str) -> pydot.Dot:
    """The DOT text parsed by pydot, once per text (its parser is most of these tests' time;
    the graph is only read)."""
    (graph,) = pydot.graph_from_dot_data(text)
    return graph


def clusters_around(text: str) -> dict[str, list[str]]:
    """Statement -> labels of the clusters around it, outermost first."""
    graph = parsed(text)
    out: dict[str, list[str]] = {}

    def walk(sub: pydot.Graph, labels: list[str]) -> None:
        for node in sub.get_nodes():
            name = node.get_name().strip('"')
            if "rounded" in str(node.get("style")):
                out[name] = labels
        for inner in sub.get_subgraphs():
            assert inner.get_name().strip('"').startswith("cluster_")
            label = str(inner.get("label")).strip('"').replace("\\l", "\n").strip()
            walk(inner, [*labels, label])

    walk(graph, [])
    return out


def visible_edges(text: str) -> list[tuple[str, str, dict[str, str]]]:
    graph = parsed(text)
    out = []
    for e in graph.get_edges():
        attrs = {k: str(v).strip('"') for k, v in e.get_attributes().items()}
        out.append((e.get_source().strip('"'), e.get_destination().strip('"'), attrs))
    return out


def check_picture(comp: spf.Computation) -> str:
    """What every picture must satisfy; returns its DOT text."""
    text = comp.to_dot()
    assert STMT_NODE.findall(text) == execution_order(comp)
    around = clusters_around(text)
    for s in comp.stmts:
        if not comp.stmt(s.name).domain.is_empty():
            assert len(around[s.name]) == len(s.loops), (s.name, around[s.name], s.loops)
    pairs = Counter(frozenset((a, b)) for a, b, _ in visible_edges(text))
    assert max(pairs.values()) == 1, [p for p, n in pairs.items() if n > 1]
    return text


# ----------------------------------------------------------------------------- layout
def test_forward_solve_reads_in_execution_order_with_short_bounds() -> None:
    comp = forward_solve()
    text = check_picture(comp)
    assert STMT_NODE.findall(text) == ["s0", "s1", "s2"]
    around = clusters_around(text)
    assert around["s0"] == ["i ∈ [0, N)\ncarries s0→s1, s1→s1, s2→s1"]
    assert around["s1"] == [
        "i ∈ [0, N)\ncarries s0→s1, s1→s1, s2→s1",
        "k ∈ [rowptr(i), rowptr(i + 1) - 1)\ncarries s1→s1",
        "j = col(k)",  # a loop of one value is a loop of the schedule too
    ]
    assert around["s2"][1] == "k = rowptr(i + 1) - 1"
    assert "{[i, k, j] :" in text  # the full domain is the tooltip
    assert 'color="#c0392b"; penwidth=2' in text  # carrying loops have a red border


def test_opposite_dependences_are_one_edge_with_both_arrows() -> None:
    edges = visible_edges(forward_solve().to_dot())
    (merged,) = [(a, b, e) for a, b, e in edges if {a, b} == {"s1", "s2"}]
    a, b, attrs = merged
    assert (a, b) == ("s1", "s2")
    assert attrs["dir"] == "both"
    assert attrs["class"] == "dependence"
    assert attrs["label"] == ("s1→s2: anti, flow, output on u\\ns2→s1: flow on u, carried by i")
    # a statement reading and writing u is one edge too
    (rw,) = [e for a, b, e in edges if (a, b) == ("s2", "u")]
    assert (rw["dir"], rw["class"]) == ("both", "read write")


def test_backward_dependence_is_drawn_in_execution_order() -> None:
    comp = spf.Computation("back")
    for name in ("a", "b"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = $b$(i - 1);", "{[i]: 1 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(spf.Stmt("$b$(i) = 1;", "{[i]: 1 <= i < N}", "{[i]->[0,i,1]}"))
    text = check_picture(comp)
    (dep,) = [(a, b, e) for a, b, e in visible_edges(text) if e.get("class") == "dependence"]
    assert dep[:2] == ("s0", "s1")  # s0 above s1 ...
    assert dep[2]["dir"] == "back"  # ... the arrow points from s1 to s0
    assert dep[2]["label"] == "s1→s0: flow on b, carried by i"
    assert comp.pdfg().graph.edges["s1", "s0"]["carried_by"] == ("i",)


def test_tiled_jacobi_has_every_loop_of_both_statements() -> None:
    comp = tiled_jacobi()
    text = check_picture(comp)
    around = clusters_around(text)
    for name in ("s0", "s1"):
        assert [lab.split()[0] for lab in around[name]] == ["i0", "j0", "i1", "j1"]
    assert around["s0"][0] == "i0 ∈ [0, ⌈(N - 1)/32⌉)"
    assert around["s0"][2] == "i1 ∈ [max(0, 1 - 32*i0), min(32, N - 32*i0 - 1))"


def test_tile_split_fuse_each_loop_has_a_cluster() -> None:
    comp = producer_consumer()
    comp.stmt("s0").split("i", 64, "i0", "i1")
    text = check_picture(comp)
    around = clusters_around(text)
    assert around["s0"] == ["i0 ∈ [0, ⌈N/64⌉)", "i1 ∈ [0, min(64, N - 64*i0))"]
    assert around["s1"] == ["i ∈ [0, N)"]
    gemm = kernels.gemm()
    gemm.stmt(0).tile("i", "j", 16, 16, "i0", "j0", "i1", "j1")
    around = clusters_around(check_picture(gemm))
    assert [lab.split()[0] for lab in around["s0"]] == ["i0", "j0", "i1", "j1", "k"]


def test_fused_statements_share_one_cluster() -> None:
    comp = producer_consumer()
    assert check_picture(comp).count("subgraph") == 2
    comp.fuse("s0", "s1", "i")
    text = check_picture(comp)
    assert text.count("subgraph") == 1
    assert clusters_around(text) == {"s0": ["i ∈ [0, N)"], "s1": ["i ∈ [0, N)"]}


@pytest.mark.parametrize(
    ("command", "tag"),
    [
        (lambda s: s.parallelize("i"), "[parallel]"),
        (lambda s: s.vectorize("j", 8), "[vector(8)]"),
        (lambda s: s.unroll("k", 2), "[unroll(2)]"),
        (lambda s: s.gpu("i", "j"), "[gpu_block(0)]"),
    ],
)
def test_tags_on_cluster_labels(command: object, tag: str) -> None:
    comp = kernels.gemm()
    command(comp.stmt(0))  # type: ignore[operator]
    labels = [lab for labs in clusters_around(check_picture(comp)).values() for lab in labs]
    assert any(tag in lab.split("\n")[0] for lab in labels), labels


def test_wavefront_tag_is_visible() -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    text = comp.to_dot()
    assert "[wavefront" in text
    inspector = [f"sptrsv_csr_inspector_i.s{k}" for k in range(3)]
    # the inspector runs first, in its own loops; then the solve by levels
    assert STMT_NODE.findall(text) == [*inspector, *execution_order(comp)]
    around = clusters_around(text)
    assert [lab.split()[0] for lab in around[inspector[1]]] == ["ip", "k", "j"]
    assert around["s0"][0].startswith("i ∈ [0, N) [wavefront(auto)]")


@pytest.mark.parametrize(
    "make",
    [kernels.blur2d, forward_solve, tiled_jacobi, kernels.gemm, kernels.spmv_csr],
)
def test_kernels_pictures(make: object) -> None:
    check_picture(make())  # type: ignore[operator]


# ----------------------------------------------------------------------------- annotations
def test_spmv_sizes() -> None:
    g = kernels.spmv_csr().pdfg(params={"N": 100, "M": 80, "NNZ": 500})
    nodes = g.graph.nodes
    assert (nodes["y"]["bytes"], nodes["x"]["bytes"], nodes["A"]["bytes"]) == (800, 640, 4000)
    assert "instances" not in nodes["s0"]  # the rows are UF bounds: not countable
    assert "footprint" not in g.graph.edges["A", "s0"]
    assert g.graph.graph["params"] == {"N": 100, "M": 80, "NNZ": 500}
    assert "\\n800 B" in g.to_dot()


def test_sizes_named_like_sympy_objects_without_values_are_unknown() -> None:
    # N, S, E, I, O, Q are sympy objects; a size without a value is unknown, not a crash
    g = kernels.spmv_csr().pdfg(params={})
    assert "bytes" not in g.graph.nodes["y"]
    g = kernels.spmv_csr().pdfg(params={"M": 80})
    assert g.graph.nodes["x"]["bytes"] == 640
    assert "bytes" not in g.graph.nodes["y"]


def test_dense_sizes_footprints_and_instances() -> None:
    g = kernels.dense_mv().pdfg(params={"N": 10, "M": 20})
    assert g.graph.nodes["s0"]["instances"] == 200
    assert g.graph.nodes["A"]["bytes"] == 8 * 200
    assert g.graph.edges["A", "s0"]["footprint"] == 8 * 200
    assert g.graph.edges["x", "s0"]["footprint"] == 8 * 20
    assert g.graph.edges["s0", "y"]["footprint"] == 8 * 10
    text = g.to_dot()
    assert "200 instances" in text
    assert "1.6 KiB" in text
    assert "instances" not in kernels.dense_mv().to_dot()  # no values, no sizes
    huge = kernels.dense_mv().pdfg(params={"N": 10**30, "M": 3}).graph.nodes
    assert huge["s0"]["instances"] == 3 * 10**30  # a box: counted, not enumerated
    assert huge["A"]["bytes"] == 24 * 10**30


def test_counts_of_triangles_and_partial_reads() -> None:
    comp = spf.Computation("tri")
    comp.add_data_space("L", "float", shape=("N", "N"))
    comp.add_data_space("y", "float", shape=("N",))
    comp.add_stmt(spf.Stmt("$y$(i) += $L$(i, j);", "{[i, j]: 0 <= j < i < N}"))
    comp.add_stmt(spf.Stmt("$y$(i) += $L$(i, 0);", "{[i]: 1 <= i < N && i % 2 = 0}"))
    g = comp.pdfg(params={"N": 1000})
    assert g.graph.nodes["s0"]["instances"] == 1000 * 999 // 2
    assert g.graph.edges["L", "s0"]["footprint"] == 4 * (1000 * 999 // 2)
    assert g.graph.nodes["s1"]["instances"] == 499
    assert g.graph.edges["L", "s1"]["footprint"] == 4 * 499
    assert g.graph.nodes["L"]["bytes"] == 4 * 10**6
    big = comp.pdfg(params={"N": 10**7}).graph  # too many rows to count: left out
    assert "instances" not in big.nodes["s0"]
    assert big.nodes["s1"]["instances"] == (10**7 - 1) // 2


def test_temporaries_inlining_or_fusion_removes_are_highlighted() -> None:
    blur = kernels.blur2d().pdfg(params={"N": 10, "M": 12})
    assert blur.graph.nodes["bx"]["removable_by"] == ("inline('bx')",)
    assert "removable_by" not in blur.graph.nodes["img"]
    assert "temporary, removed by\\ninline('bx')" in blur.to_dot()
    pc = producer_consumer(consume="$b$(i) = $a$(i + 1) + 1;", n="N - 1")
    before = (pc.to_json(), len(pc.trace))
    ops = pc.pdfg(params={"N": 8}).graph.nodes["a"]["removable_by"]
    assert ops == ("inline('a')",)  # fusing would read a(i + 1) before it is written
    assert (pc.to_json(), len(pc.trace)) == before  # the trials changed nothing
    pc2 = producer_consumer(produce="double t = $x$(i); $a$(i) = t;")  # not inlinable
    assert pc2.pdfg(params={"N": 8}).graph.nodes["a"]["removable_by"] == ("fuse('s0', 's1', 1)",)


def test_bad_params_are_refused() -> None:
    comp = kernels.dense_mv()
    with pytest.raises(spf.UndeclaredError, match=r"unknown parameter 'K'.*'M', 'N'"):
        comp.pdfg(params={"K": 3})
    with pytest.raises(spf.ArgumentError, match=r"'N' must be an integer, got 2\.5"):
        comp.pdfg(params={"N": 2.5})
    with pytest.raises(spf.ArgumentError, match="takes a dict"):
        comp.pdfg(params=[("N", 3)])  # type: ignore[arg-type]


def test_rebuilt_after_an_operation_keeps_the_params() -> None:
    comp = producer_consumer()
    g = comp.pdfg(params={"N": 5})
    g.fuse("s0", "s1", 1)
    assert g.graph.nodes["a"]["bytes"] == 40
    assert STMT_NODE.findall(g.to_dot()) == ["s0", "s1"]


# ----------------------------------------------------------------------------- readable
def _font_px_at(svg: str, page_px: float) -> float:
    """The smallest text height, in pixels, of ``svg`` shown ``page_px`` wide (at most its
    own width: a narrower picture is not enlarged)."""
    width_pt = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))  # type: ignore[union-attr]
    scale = float(re.search(r'transform="scale\(([\d.]+)', svg).group(1))  # type: ignore[union-attr]
    sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', svg)]
    shown = min(1.0, page_px / (width_pt * 4 / 3))
    return min(sizes) * scale * 4 / 3 * shown


@pytest.mark.requires_graphviz
def test_forward_solve_labels_are_readable_at_the_docs_width() -> None:
    assert shutil.which("dot")
    for comp in (forward_solve(), kernels.blur2d(), tiled_jacobi()):
        svg = comp.pdfg()._repr_svg_()
        assert _font_px_at(svg, 700) >= 10, comp.name
    annotated = kernels.blur2d().pdfg(params={"N": 100, "M": 100})._repr_svg_()
    assert _font_px_at(annotated, 700) >= 10


def blur_fused_and_folded() -> spf.Computation:
    """examples/pdfg_steps.py's blur: fused, ``bx`` folded into ``bx_buf``, vectorized."""
    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2)
    comp.stmt("s1").after("s0", "i")
    comp.stmt("s0").storage_fold("i", 3)
    comp.stmt("s0").vectorize("j", 8)
    return comp


@pytest.mark.requires_graphviz
def test_every_priced_step_of_the_docs_figures_is_readable_at_the_docs_width() -> None:
    solve = forward_solve()
    solve.wavefront("i")
    histories = [
        blur_fused_and_folded().pdfg_history(params={"N": 1080, "M": 1920}),
        solve.pdfg_history(params={"N": 1000, "NNZ": 5000}),
    ]
    for history in histories:
        for text, graph in history:
            assert _font_px_at(graph._repr_svg_(), 700) >= 10, text


def test_access_labels_are_edge_labels_only_where_part_of_a_data_space_is_touched() -> None:
    text = kernels.dense_mv().pdfg(params={"N": 10, "M": 20}).to_dot()
    assert "headlabel" not in text  # head and tail labels covered the nodes beside them
    assert "taillabel" not in text
    labels = {(a, b): e.get("label") for a, b, e in visible_edges(text)}
    assert labels["A", "s0"] is None  # reads all of A: its size is in A's node
    blur = kernels.blur2d().pdfg(params={"N": 10, "M": 12})
    assert all(e.get("label") is None for a, _, e in visible_edges(blur.to_dot()) if a != "s0")
    tri = spf.Computation("tri")
    tri.add_data_space("L", "float", shape=("N", "N"))
    tri.add_data_space("y", "float", shape=("N",))
    tri.add_stmt(spf.Stmt("$y$(i) += $L$(i, j);", "{[i, j]: 0 <= j < i < N}"))
    edges = {(a, b): e for a, b, e in visible_edges(tri.pdfg(params={"N": 1000}).to_dot())}
    assert edges["L", "s0"]["label"] == "read 1.9 MiB"  # the lower half of L (3.8 MiB)


def test_a_data_space_stored_in_a_buffer_shows_the_buffer_below_it() -> None:
    graph = blur_fused_and_folded().pdfg(params={"N": 1080, "M": 1920})
    assert graph.graph.nodes["bx"]["stored_in"] == "bx_buf"
    assert graph.graph.nodes["bx_buf"]["bytes"] == 3 * 1918 * 8
    text = graph.to_dot()
    assert "stored in bx_buf" in text
    edges = {(a, b): e for a, b, e in visible_edges(text)}
    assert edges["bx", "bx_buf"]["style"] == "dotted"
    assert "stored_in" not in kernels.blur2d().pdfg().graph.nodes["bx"]


def test_the_inspector_level_array_is_priced_and_its_schedule_edges_are_blue() -> None:
    solve = forward_solve()
    solve.wavefront("i")
    graph = solve.pdfg(params={"N": 1000, "NNZ": 5000})
    level = next(n for n in graph.graph if n.endswith(".level"))
    assert graph.graph.nodes[level]["bytes"] == 8 * 1000
    text = graph.to_dot()
    schedule = [(b, e) for a, b, e in visible_edges(text) if e.get("class") == "schedule"]
    assert sorted(b for b, _ in schedule) == ["s0", "s1", "s2"]
    assert all(e["color"] == "#1f5fa8" for _, e in schedule)
    assert "orders loop i (blue)" in text

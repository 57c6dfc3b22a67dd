"""The PDFG view: nodes, edges, clusters, determinism, DOT validity, rendering."""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import numpy as np
import pydot
import pytest

import spf
from spf import kernels
from spf.pdfg.graph import Nest

if TYPE_CHECKING:
    from pathlib import Path


def forward_solve() -> spf.Computation:
    comp = spf.Computation("fs")
    for d in ("u", "f", "l", "diag"):
        comp.add_data_space(d, "double*")
    comp.add_stmt(spf.Stmt("$u$(i) = $f$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0,0,0]}"))
    comp.add_stmt(
        spf.Stmt(
            "$u$(i) -= $l$(k) * $u$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && j < i}",
            "{[i,k,j]->[0,i,1,k,0]}",
        )
    )
    comp.add_stmt(spf.Stmt("$u$(i) /= $diag$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,2,0,0]}"))
    return comp


def edges(g: spf.pdfg.PDFG, kind: str) -> set[tuple[str, str]]:
    return {(a, b) for a, b, k in g.graph.edges(data="kind") if k == kind}


def test_dense_mv_nodes_and_edges() -> None:
    g = kernels.dense_mv().pdfg()
    assert dict(g.graph.nodes(data="kind")) == {"s0": "stmt", "y": "data", "A": "data", "x": "data"}
    assert edges(g, "read") == {("y", "s0"), ("A", "s0"), ("x", "s0")}
    assert edges(g, "write") == {("s0", "y")}
    assert edges(g, "dependence") == {("s0", "s0")}
    assert g.graph.edges["s0", "s0"]["carried_by"] == ("j",)
    assert g.graph.edges["A", "s0"]["access"] == "{[i, j] -> [i, j]}"
    assert g.graph.nodes["s0"]["loops"] == ("i", "j")


def test_spmv_csr_reduction_is_carried_by_k_only() -> None:
    g = kernels.spmv_csr().pdfg()
    assert g.graph.edges["s0", "s0"]["carried_by"] == ("k",)
    assert set(g.graph.edges["s0", "s0"]["dep_kind"].split(",")) == {"flow", "anti", "output"}
    assert g.graph.nodes["s0"]["domain"].startswith("{[i, k, j] :")


def test_forward_solve_graph_and_nests() -> None:
    g = forward_solve().pdfg()
    kinds = dict(g.graph.nodes(data="kind"))
    assert kinds == {
        "s0": "stmt",
        "s1": "stmt",
        "s2": "stmt",
        "u": "data",
        "f": "data",
        "l": "data",
        "diag": "data",
    }
    assert g.graph.edges["s2", "s1"]["carried_by"] == ("i",)  # loop-carried on u
    assert g.graph.edges["s2", "s1"]["data_space"] == "u"
    (nest,) = g.graph.graph["nests"]
    assert isinstance(nest, Nest)
    assert nest.loop == "i"
    assert nest.items[0] == "s0"
    inner = nest.items[1]
    assert isinstance(inner, Nest)
    assert (inner.loop, inner.items) == ("k", ("s1",))
    assert nest.items[2] == "s2"


def test_dot_is_deterministic_and_parses() -> None:
    texts = {forward_solve().to_dot() for _ in range(3)}
    assert len(texts) == 1
    text = texts.pop()
    (parsed,) = pydot.graph_from_dot_data(text)
    names = [s.get_name().strip('"') for s in parsed.get_subgraphs()]
    assert names == ["cluster_0_i"]
    inner = [s.get_name().strip('"') for s in parsed.get_subgraphs()[0].get_subgraphs()]
    assert inner == ["cluster_0_1_k"]
    assert "shape=box" in text
    assert "rounded" in text
    assert "dashed" in text
    assert "carried by i" in text


@pytest.mark.parametrize(
    "make",
    [
        kernels.dense_mv,
        kernels.gemm,
        kernels.spmv_csr,
        kernels.sptrsv_csr,
        kernels.blur2d,
        kernels.jacobi2d,
    ],
)
def test_every_kernel_dot_parses(make: object) -> None:
    comp = make()  # type: ignore[operator]
    (parsed,) = pydot.graph_from_dot_data(comp.to_dot())
    assert parsed.get_name().strip('"') == comp.name


def test_tags_appear_in_cluster_labels() -> None:
    comp = kernels.spmv_csr()
    comp.stmt(0).parallelize("i")
    assert 'label="i ∈ [0, N) [parallel]\\l"' in comp.to_dot()  # API §14: starts with the name


def test_data_space_named_like_a_statement_gets_prefixed_id() -> None:
    comp = spf.Computation("clash")
    comp.add_data_space("s0", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$s0$(i) = 1;", "{[i]: 0 <= i < N}", name="s0"))
    g = comp.pdfg()
    assert g.graph.nodes["data:s0"]["kind"] == "data"
    assert ("s0", "data:s0") in edges(g, "write")


def test_buffer_named_like_a_statement_gets_prefixed_id() -> None:
    comp = spf.Computation("clash")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_local("t", "double", ("N",))
    comp.add_buffer("s0", ("N",), "double", scope="stack")
    comp.add_stmt(spf.Stmt("$t$(i) = $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(spf.Stmt("$x$(i) = $t$(i) + 1;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    comp.stmt("s0").store_in("s0", ["i"])
    g = comp.pdfg(params={"N": 4})
    # the buffer was left out (its name was taken) and t's storage line went to statement s0
    assert g.graph.nodes["data:s0"]["type"] == "double[N] (stack buffer)"
    assert g.graph.nodes["data:s0"]["bytes"] == 32
    assert '"t" -> "data:s0" [class="storage"' in g.to_dot()


@pytest.mark.requires_graphviz
@pytest.mark.parametrize("suffix", [".svg", ".png", ".pdf"])
def test_render(tmp_path: Path, suffix: str) -> None:
    out = forward_solve().pdfg().render(tmp_path / f"fs{suffix}")
    data = out.read_bytes()
    assert len(data) > 500
    if suffix == ".svg":
        assert b"<svg" in data
        assert b"cluster" in data
    svg = forward_solve().pdfg()._repr_svg_()
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg


def test_render_rejects_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(spf.SpfError, match="unsupported format"):
        kernels.dense_mv().pdfg().render(tmp_path / "x.gif")


def test_write_and_write_dot(tmp_path: Path) -> None:
    comp = kernels.dense_mv()
    comp.write_dot(str(tmp_path / "a.dot"))
    assert (tmp_path / "a.dot").read_text() == comp.to_dot()


@pytest.mark.requires_graphviz
def test_cli_dot(tmp_path: Path) -> None:
    out = tmp_path / "spmv.svg"
    done = subprocess.run(
        [sys.executable, "-m", "spf.cli", "dot", "spf.kernels:spmv_csr", "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().startswith(b"<?xml") or b"<svg" in out.read_bytes()
    bad = subprocess.run(
        [sys.executable, "-m", "spf.cli", "dot", "no_such_module:f"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1
    assert "cannot import" in bad.stderr
    assert shutil.which("dot")


def _producer_consumer(shift: int = 0) -> spf.Computation:
    comp = spf.Computation("pc")
    for name in ("a", "b", "x"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt(f"$b$(i) = $a$(i + {shift}) + 1;", f"{{[i]: 0 <= i < N - {shift}}}"))
    return comp


def test_fuse_becomes_a_schedule_relation_and_runs(tmp_path: Path) -> None:
    comp = _producer_consumer()
    changed = comp.pdfg().fuse("s0", "s1", "i")
    assert [str(r) for r in changed] == ["{[i] -> [0, i, 1]}"]
    assert comp.loop_structure() == "for i:\n  s0\n  s1"
    a, b, x = np.zeros(6), np.zeros(6), np.arange(6.0)
    comp.compile(cache_dir=str(tmp_path))(a=a, b=b, x=x)
    assert np.allclose(b, 2 * x + 1)


def test_illegal_fuse_is_refused_and_changes_nothing() -> None:
    comp = _producer_consumer(shift=1)  # b(i) reads a(i+1): fusing would read it too early
    before = (comp.to_json(), comp.loop_structure(), len(comp.trace))
    with pytest.raises(spf.IllegalScheduleError, match="flow dependence on 'a'"):
        comp.fuse("s0", "s1", "i")
    assert (comp.to_json(), comp.loop_structure(), len(comp.trace)) == before


def test_reschedule_both_directions() -> None:
    comp = spf.Computation("indep")
    for name in ("a", "b"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = 1;", "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt("$b$(i) = 2;", "{[i]: 0 <= i < N}"))
    comp.reschedule("s1", "s0")  # later statement moves earlier
    assert [s.name for s in sorted(comp.stmts, key=lambda s: str(s.schedule))] == ["s1", "s0"]
    assert comp.loop_structure() == "for i:\n  s1\nfor i:\n  s0"
    comp.reschedule("s0", "s1")  # and back
    assert comp.loop_structure() == "for i:\n  s0\nfor i:\n  s1"


def test_reschedule_against_a_dependence_is_refused() -> None:
    comp = _producer_consumer()
    with pytest.raises(spf.IllegalScheduleError):
        comp.pdfg().reschedule("s1", "s0")
    assert comp.loop_structure() == "for i:\n  s0\nfor i:\n  s1"


def test_inline_temporary_of_blur(tmp_path: Path) -> None:
    comp = kernels.blur2d()
    assert comp.pdfg().inline("bx") == ["s1"]
    assert "bx" not in comp.data_spaces
    assert [s.name for s in comp.stmts] == ["s1"]
    assert comp.loop_structure() == "for i:\n  for j:\n    s1"
    img = np.random.default_rng(0).random((7, 9))
    out = np.zeros((5, 7))
    comp.compile(cache_dir=str(tmp_path))(out=out, img=img)
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    assert np.allclose(out, (bx[:-2] + bx[1:-1] + bx[2:]) / 3)


def test_inline_refusals_change_nothing() -> None:
    comp = _producer_consumer(shift=1)
    comp.add_stmt(spf.Stmt("$x$(i) = 0;", "{[i]: 0 <= i < N}"))  # the producer's input changes
    before = comp.to_json()
    with pytest.raises(spf.IllegalScheduleError, match="writes \\['x'\\]"):
        comp.pdfg().inline("a")
    assert comp.to_json() == before
    red = kernels.spmv_csr()
    with pytest.raises(spf.SpfError, match="reads what it writes"):
        red.pdfg().inline("y")  # y is a reduction
    scaled = spf.Computation("acc")
    for name in ("t", "b"):
        scaled.add_data_space(name, "double", shape=("N",))
    scaled.add_stmt(spf.Stmt("double v = i; $t$(i) = v;", "{[i]: 0 <= i < N}"))
    scaled.add_stmt(spf.Stmt("$b$(i) = $t$(i);", "{[i]: 0 <= i < N}"))
    with pytest.raises(spf.SpfError, match="plain assignment"):
        scaled.pdfg().inline("t")
    with pytest.raises(spf.UndeclaredError):
        red.pdfg().inline("nope")


def test_inline_reading_outside_what_is_produced_is_refused() -> None:
    comp = spf.Computation("outside")
    for name in ("t", "b"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$t$(i) = i;", "{[i]: 0 <= i < N - 1}"))
    comp.add_stmt(spf.Stmt("$b$(i) = $t$(i);", "{[i]: 0 <= i < N}"))
    with pytest.raises(spf.IllegalScheduleError, match="does not write"):
        comp.pdfg().inline("t")
    assert len(comp.stmts) == 2

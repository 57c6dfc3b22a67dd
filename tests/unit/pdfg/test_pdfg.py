"""The PDFG view: nodes, edges, clusters, determinism, DOT validity, rendering."""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

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
    assert "for i [parallel]" in comp.to_dot()


def test_data_space_named_like_a_statement_gets_prefixed_id() -> None:
    comp = spf.Computation("clash")
    comp.add_data_space("s0", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$s0$(i) = 1;", "{[i]: 0 <= i < N}"))
    g = comp.pdfg()
    assert g.graph.nodes["data:s0"]["kind"] == "data"
    assert ("s0", "data:s0") in edges(g, "write")


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

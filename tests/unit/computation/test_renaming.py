"""Renaming a data space everywhere and cloning a computation (IEGenLib's
replaceDataSpaceName and getUniquelyNamedClone; spf.computation.renaming)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import SpfError, UndeclaredError, kernels


def _csr(n: int, m: int, seed: int) -> sp.csr_array:
    return sp.csr_array(sp.random(n, m, density=0.2, format="csr", random_state=seed))


def test_replace_data_space_name_renames_sources_accesses_and_arguments() -> None:
    comp = kernels.spmv_csr()
    s = comp.stmts[0]
    comp.replace_data_space_name("x", "xv")
    assert s is comp.stmts[0]
    assert s.computation is comp
    assert s.source == "$y$(i) += $A$(k) * $xv$(j);"
    assert [d for d, _ in s.reads] == ["y", "A", "xv"]
    assert list(comp.data_spaces) == ["y", "A", "xv"]
    m, x = _csr(9, 7, 1), np.random.default_rng(1).random(7)
    args = spf.sparse.csr_args(m)
    y = np.zeros(9)
    comp.compile()(y=y, xv=x, **{k: v for k, v in args.items() if k not in ("x", "y")})
    np.testing.assert_allclose(y, m @ x)
    back = spf.Computation.from_json(comp.to_json())
    assert back.stmts[0].source == s.source


def test_replace_data_space_name_keeps_the_text_and_renames_undelimited_uses() -> None:
    c = spf.Computation("u")
    c.add_data_space("x", "double", shape=("N",))
    c.add_data_space("xx", "double", shape=("N",))
    c.add_stmt(spf.Stmt("xx(i) = x(i) * 2.0 + sqrt(x(i));", "{[i]: 0 <= i < N}"))
    c.replace_data_space_name("x", "w")
    assert c.stmts[0].source == "xx(i) = w(i) * 2.0 + sqrt(w(i));"
    out = np.zeros(3)
    c.compile()(w=np.array([1.0, 4.0, 9.0]), xx=out)
    assert out.tolist() == [3.0, 10.0, 21.0]


def test_renaming_a_run_time_index_array_renames_its_uf() -> None:
    c = spf.Computation("rowsum")
    for name, ctype, extent in (("p", "int32_t", "N+1"), ("A", "double", "NNZ")):
        c.add_data_space(name, ctype, shape=(extent,))
    bounds = {"range": "{[v]: 0 <= v <= NNZ}", "monotonic": "nondecreasing"}
    c.add_data_space("rowptr", "int32_t", shape=("N+1",), index=True, **bounds)
    c.add_data_space("y", "double", shape=("N",))
    rows = "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}"
    for source, domain in (("$rowptr$(i) = $p$(i);", "{[i]: 0 <= i <= N}"),
                           ("$y$(i) += $A$(k);", rows)):  # fmt: skip
        c.add_stmt(spf.Stmt(source, domain))
    c.replace_data_space_name("rowptr", "rp")
    assert "rowptr" not in c.ufs
    assert c.ufs["rp"].monotonic == "nondecreasing"
    assert set(c.stmts[1].domain.uf_calls) == {"rp(i)", "rp(i + 1)"}
    assert c.stmts[0].source == "$rp$(i) = $p$(i);"
    y = np.zeros(3)
    c.compile()(p=np.array([0, 2, 2, 5], np.int32), rp=np.zeros(4, np.int32), A=np.ones(5), y=y)
    assert y.tolist() == [2.0, 0.0, 3.0]


def _packed_gemm() -> spf.Computation:
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.split("k", 4, "k0", "k1")
    comp.cache_read("B", at=(s, "k0"))
    return comp


def test_renaming_a_packed_operand_renames_the_copy_its_placement_and_the_trace() -> None:
    comp = _packed_gemm()
    copy = comp.stmt("B_pack_copy")
    comp.replace_data_space_name("B", "Bm")
    assert copy.source == "$B_pack$(k1) = $Bm$(4*k0 + k1, j);"
    assert comp.trace[-1].command.data_space == "Bm"  # type: ignore[attr-defined]
    assert comp.storage_of("B_pack") == ("B_pack_buf", ("t0",))
    rng = np.random.default_rng(2)
    a, b = rng.random((5, 9)), rng.random((9, 6))
    c = np.zeros((5, 6))
    comp.compile()(C=c, A=a, Bm=b)
    np.testing.assert_allclose(c, a @ b)
    assert [step for step, _ in comp.pdfg_history()][-1].startswith('comp.stmt("s0").cache_read(')
    comp.stmt(0).parallelize("i")  # the user's Stmt objects still schedule the computation
    assert comp.stmt(0).tags["i"] == ("parallel",)


def test_renaming_an_mpi_halo_renames_the_operations() -> None:
    path = Path(__file__).resolve().parents[2] / "e2e" / "mpi_progs" / "mpi_rows.py"
    spec = importlib.util.spec_from_file_location("mpi_rows", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    comp: spf.Computation = module.rows()
    comp.replace_data_space_name("a", "img")
    send = comp.stmts[0]
    assert isinstance(send, spf.OperationStmt)
    assert send.target == "img"
    assert send.reads[0][0] == "img"
    src = comp.codegen("mpi")
    assert '"send s0", &img(2, 0), (int64_t) (2 * W)' in src


def test_renaming_a_buffer_stored_data_space_keeps_its_placement() -> None:
    comp = kernels.blur2d()
    bx, out = comp.stmts
    out.shift("i", 2).after(bx, "j")
    ring = comp.add_buffer("ring", (3, "M - 2"), "double", scope="stack")
    bx.store_in(ring, ["i % 3", "j"])
    comp.replace_data_space_name("bx", "rows")
    assert comp.buffer("ring") is ring
    assert ring.data_spaces() == ("rows",)
    img = np.random.default_rng(3).random((12, 10))
    got = np.zeros((10, 8))
    comp.compile()(out=got, img=img, N=12, M=10)
    rows = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    np.testing.assert_allclose(got, (rows[:-2] + rows[1:-1] + rows[2:]) / 3)


@pytest.mark.parametrize(
    ("old", "new", "error", "match"),
    [
        ("z", "q", UndeclaredError, r"unknown data space 'z'; known data spaces: 'A', 'x', 'y'"),
        ("A", "rowptr", SpfError, "'rowptr' of data space 'A' is already a UF"),
        ("A", "N", SpfError, "already a symbolic constant"),
        ("A", "k", SpfError, "already a loop or iterator of statement s0"),
        ("A", "y", SpfError, "already a data space"),
        ("A", "s0", SpfError, "already a statement"),
        ("A", "2a", SpfError, "not a C identifier"),
        ("A", "int", SpfError, "int"),
    ],
)
def test_replace_data_space_name_refuses_unknown_and_taken_names(
    old: str, new: str, error: type[Exception], match: str
) -> None:
    comp = kernels.spmv_csr()
    before = comp.to_json()
    with pytest.raises(error, match=match):
        comp.replace_data_space_name(old, new)
    assert comp.to_json() == before


def test_clone_is_an_equal_independent_copy() -> None:
    comp = _packed_gemm()
    twin = comp.clone()
    assert twin.to_json() == comp.to_json()
    assert twin.stmts[0] is not comp.stmts[0]
    twin.stmt(0).parallelize("i")
    assert "i" not in comp.stmt(0).tags
    assert comp.clone().codegen() == comp.codegen()


def test_clone_with_a_prefix_renames_everything_and_computes_the_same() -> None:
    comp = _packed_gemm()
    twin = comp.clone("g_")
    assert list(twin.data_spaces) == ["g_C", "g_A", "g_B", "g_B_pack"]
    assert [s.name for s in twin.stmts] == ["g_s0", "g_B_pack_copy"]
    assert list(twin.buffers) == ["g_B_pack_buf"]
    assert twin.params == comp.params
    assert [e.stmt for e in twin.trace] == ["g_s0", "g_s0"]
    assert twin.name == comp.name
    rng = np.random.default_rng(4)
    a, b = rng.random((6, 10)), rng.random((10, 3))
    c1, c2 = np.zeros((6, 3)), np.zeros((6, 3))
    comp.compile()(C=c1, A=a, B=b)
    twin.compile()(g_C=c2, g_A=a, g_B=b)
    np.testing.assert_array_equal(c1, c2)
    assert len(twin.pdfg_history()) == len(comp.pdfg_history())


def test_clone_refuses_a_prefix_that_is_not_an_identifier_start_or_clashes() -> None:
    comp = kernels.spmv_csr()
    with pytest.raises(SpfError, match="prefix must start a C identifier"):
        comp.clone("1_")
    comp.declare_uf("p_y", domain="{[i]: 0 <= i < N}")
    with pytest.raises(SpfError, match="'p_y' of data space 'y' is already a UF"):
        comp.clone("p_")


def test_uniquely_named_clones_share_no_name_with_the_original_or_each_other() -> None:
    comp = kernels.spmv_csr()
    one, two = comp.uniquely_named_clone(), comp.uniquely_named_clone()
    names = [{*c.data_spaces, *(s.name for s in c.stmts)} for c in (comp, one, two)]
    assert not names[0] & names[1]
    assert not names[0] & names[2]
    assert not names[1] & names[2]
    assert set(one.ufs) == set(comp.ufs)
    m, x = _csr(8, 5, 5), np.random.default_rng(5).random(5)
    args = spf.sparse.csr_args(m)
    prefix = next(iter(one.data_spaces)).removesuffix("y")
    y = np.zeros(8)
    one.compile()(
        **{prefix + "y": y, prefix + "x": x, prefix + "A": args["A"]},
        **{k: v for k, v in args.items() if k not in ("A", "x", "y")},
    )
    np.testing.assert_allclose(y, m @ x)

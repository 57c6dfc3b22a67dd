"""Buffers on the C stack (spf.codegen.c.on_heap, STACK_BUFFER_BYTES): a ``stack`` buffer
of constant size above 1 MiB is refused at code generation, one sized by parameters (a
``cache_read`` tile over a whole dimension) lives on the heap, and large locals
(``add_local``, PolyBench-sized) keep working."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf import CodegenError, kernels
from spf.codegen.c import STACK_BUFFER_BYTES


def _blis_packed_b(nc: int, kc: int, scope: str) -> spf.Computation:
    """GEMM with B's kc x nc panel packed at k0 (slivers of 8 columns)."""
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.split("j", nc, "j0", "jj").split("jj", 8, "j2", "j3")
    s.split("k", kc, "k0", "k1")
    for pos, name in enumerate(("j0", "k0", "i", "j2", "k1", "j3")):
        if s.loops[pos] != name:
            s.interchange(s.loops[pos], name)
    comp.cache_read("B", at=(s, "k0"), layout=["j2", "k1", "j3"], scope=scope)
    return comp


def test_a_constant_stack_tile_above_one_mib_is_refused_at_codegen() -> None:
    comp = _blis_packed_b(512, 512, "stack")  # 64 x 512 x 8 doubles: 2 MiB
    with pytest.raises(CodegenError, match=r"buffer 'B_pack_buf' \(stack, 64 x 512 x 8 double\)"):
        comp.codegen()
    with pytest.raises(CodegenError, match="scope='local'"):
        comp.codegen("mpi")
    heap = _blis_packed_b(512, 512, "local").codegen()
    assert "B_pack_buf_raw = (char *)malloc" in heap


def test_a_constant_stack_tile_below_the_limit_stays_a_c_array() -> None:
    comp = _blis_packed_b(16, 64, "stack")  # 2 x 64 x 8 doubles: 8 KiB
    assert STACK_BUFFER_BYTES >= 2 * 64 * 8 * 8
    code = comp.codegen()
    assert "double B_pack_buf[1024];" in code
    rng = np.random.default_rng(0)
    a, b = rng.random((13, 150)), rng.random((150, 37))
    c = np.zeros((13, 37))
    comp.compile()(C=c, A=a, B=b)
    np.testing.assert_allclose(c, a @ b)


def test_a_stack_tile_sized_by_parameters_lives_on_the_heap() -> None:
    comp = spf.Computation("rowcopy")
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("B", "double", shape=("N", "M"))
    s = comp.add_stmt(spf.Stmt("$B$(i, j) = 2.0 * $A$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    comp.cache_read("A", at=(s, "i"), scope="stack")  # one row of M doubles per i
    assert comp.buffers["A_pack_buf"].shape == ("M",)
    code = comp.codegen()
    assert "A_pack_buf_raw = (char *)malloc((size_t)((M)) * sizeof(double) + 64)" in code
    assert "double A_pack_buf[" not in code  # no variable-length array on the stack
    m = 3_000_000  # 24 MB: a stack array this long overflows an 8 MiB stack
    a = np.arange(2.0 * m).reshape(2, m)
    b = np.zeros((2, m))
    comp.compile()(A=a, B=b)
    np.testing.assert_array_equal(b, 2.0 * a)


def test_a_stack_buffer_sized_by_parameters_lives_on_the_heap_inside_a_loop() -> None:
    comp = spf.Computation("rows")
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("t", "double", shape=("N", "M"))
    comp.add_data_space("B", "double", shape=("N", "M"))
    s0 = comp.add_stmt(
        spf.Stmt("$t$(i, j) = $A$(i, j) + 1.0;", "{[i,j]: 0 <= i < N && 0 <= j < M}",
                 "{[i,j] -> [0,i,0,j,0]}")
    )  # fmt: skip
    comp.add_stmt(
        spf.Stmt("$B$(i, j) = 2.0 * $t$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M}",
                 "{[i,j] -> [0,i,1,j,0]}")
    )  # fmt: skip
    row = comp.add_buffer("row", ("M",), "double", scope="stack")
    s0.store_in(row, ["j"])
    row.allocate_at(s0, "i")
    code = comp.codegen()
    assert "row_raw = (char *)calloc" in code
    assert "if (row_raw)" in code  # a failed allocation skips the row (and is reported)
    a = np.arange(12.0).reshape(3, 4)
    b = np.zeros((3, 4))
    comp.compile()(A=a, B=b)
    np.testing.assert_array_equal(b, 2.0 * (a + 1.0))


def test_polybench_sized_locals_live_on_the_heap() -> None:
    comp = spf.Computation("big_local")
    comp.add_local("w", "double", shape=(1200, 1200))  # 11.5 MB, PolyBench LARGE-like
    comp.add_data_space("y", "double", shape=(1200,))
    comp.add_stmt(spf.Stmt("$w$(i, j) = i + j;", "{[i,j]: 0 <= i < 1200 && 0 <= j < 1200}"))
    comp.add_stmt(spf.Stmt("$y$(i) += $w$(i, j);", "{[i,j]: 0 <= i < 1200 && 0 <= j < 1200}"))
    code = comp.codegen()
    assert "calloc((size_t)((1200) * (1200)), sizeof(double))" in code
    y = np.zeros(1200)
    comp.compile()(y=y)
    i = np.arange(1200.0)
    np.testing.assert_array_equal(y, 1200 * i + i.sum())


def test_a_private_local_above_one_mib_is_refused_at_codegen() -> None:
    comp = spf.Computation("priv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_local("w", "double", shape=(200000,), private="i")  # 1.6 MB per iteration
    dom = "{[i,j]: 0 <= i < N && 0 <= j < 200000}"
    comp.add_stmt(spf.Stmt("$w$(j) = j;", dom, "{[i,j]->[0,i,0,j,0]}"))
    comp.add_stmt(spf.Stmt("$y$(i) += $w$(j);", dom, "{[i,j]->[0,i,1,j,0]}"))
    with pytest.raises(CodegenError, match=r"local 'w' private to a loop .*drop private="):
        comp.codegen()

"""``cache_read`` (packing, Layer III): what it builds and every refusal, through the public
API (the e2e tests run the packed code)."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf import Computation, IllegalScheduleError, SpfError, Stmt, UndeclaredError, kernels


def tiled_gemm() -> tuple[Computation, Stmt]:
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")  # i0 j0 i1 j1 k
    s.split("k", 16, "k0", "k1")  # i0 j0 i1 j1 k0 k1
    s.interchange("i1", "k0")  # i0 j0 k0 j1 i1 k1
    s.interchange("j1", "i1")  # i0 j0 k0 i1 j1 k1
    return comp, s


def test_copy_statement_buffer_and_rewritten_read() -> None:
    comp, s = tiled_gemm()
    copy = s.cache_read("B", "k0", layout=["j1", "k1"])
    assert copy.name == "B_pack_copy"
    assert copy.source == "$B_pack$(j1, k1) = $B$(16*k0 + k1, 8*j0 + j1);"
    assert copy.loops == ("i0", "j0", "k0", "j1", "k1")
    assert "$B_pack$(j1_, k1_)" in s.source
    assert "$B$" not in s.source
    assert s.loops == ("i0", "j0", "k0", "i1", "j1", "k1")  # loop names are kept
    buf = comp.buffer("B_pack_buf")
    assert (buf.shape, buf.scope, buf.dtype) == ((8, 16), "local", "double")
    assert comp.storage_of("B_pack") == ("B_pack_buf", ("t0", "t1"))
    text = comp.loop_structure()
    assert text.index("B_pack_copy") < text.index("s0")
    assert 'cache_read("B", "k0", layout=(\'j1\', \'k1\'), scope="local")' in comp.trace.as_python()
    comp.check_legality()


def test_kernel_arguments_do_not_change() -> None:
    comp, s = tiled_gemm()

    def prototype(text: str) -> str:
        return next(line for line in text.splitlines() if line.startswith("void gemm("))

    before = prototype(comp.codegen())
    s.cache_read("A", "k0")
    assert prototype(comp.codegen()) == before


def test_named_pack_in_a_stack_buffer() -> None:
    comp, _s = tiled_gemm()
    copy = comp.cache_read("A", at=("s0", "k0"), name="Ablk", scope="stack")
    assert copy.name == "Ablk_copy"
    assert comp.buffer("Ablk_buf").shape == (4, 16)
    assert "double Ablk_buf[64];" in comp.codegen()


def test_unknown_or_unread_data_space() -> None:
    _comp, s = tiled_gemm()
    with pytest.raises(UndeclaredError, match="'Z'"):
        s.cache_read("Z", "k0")
    with pytest.raises(IllegalScheduleError, match="statement s0 writes 'C' inside loop 'k0'"):
        s.cache_read("C", "k0")  # the accumulator: read and written
    with pytest.raises(SpfError, match="s0 does not read 'B'"):
        kernels.jacobi2d().stmt(0).cache_read("B", 0)


def test_statement_writing_the_packed_space_is_refused() -> None:
    comp = Computation("inplace")
    comp.add_data_space("x", "double", shape=("N",))
    s = comp.add_stmt(Stmt("$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}"))
    s.split("i", 4, "i0", "i1")
    with pytest.raises(IllegalScheduleError, match="statement s0 writes 'x' inside loop 'i0'"):
        s.cache_read("x", "i0")


def test_writer_fused_inside_the_loop_is_refused() -> None:
    comp = Computation("fused")
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("y", "double", shape=("N",))
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    comp.add_stmt(Stmt("$x$(j) = $x$(j) + $A$(i, j);", dom, "{[i,j] -> [0,i,0,j,0]}"))
    s1 = comp.add_stmt(Stmt("$y$(i) += $x$(j);", dom, "{[i,j] -> [0,i,0,j,1]}"))
    with pytest.raises(IllegalScheduleError, match="statement s0 writes 'x' inside loop 'i'"):
        s1.cache_read("x", "i")
    assert [s.name for s in comp.stmts] == ["s0", "s1"]  # nothing changed


def test_stencil_reads_are_refused() -> None:
    comp = kernels.jacobi2d()
    with pytest.raises(SpfError, match="reads 'A' at several elements"):
        comp.stmt(0).cache_read("A", 0)


def test_layout_must_name_inner_loops_the_element_needs() -> None:
    comp, s = tiled_gemm()
    with pytest.raises(SpfError, match="layout names 'j0', which is not a loop of s0 inside"):
        s.cache_read("B", "k0", layout=["j0", "k1"])
    with pytest.raises(SpfError, match="not a function of the loops"):
        s.cache_read("B", "k0", layout=["k1"])
    with pytest.raises(SpfError, match="layout must be a list of loop names"):
        s.cache_read("B", "k0", layout="k1")  # type: ignore[arg-type]
    with pytest.raises(SpfError, match="scope must be one of local, stack"):
        s.cache_read("B", "k0", scope="global")
    with pytest.raises(SpfError, match="at must be"):
        comp.cache_read("B", at="s0")  # type: ignore[arg-type]
    assert len(comp.stmts) == 1
    assert "B_pack" not in comp.data_spaces
    assert "$B$(k, j)" in s.source


def test_tile_without_a_fixed_size_is_refused() -> None:
    comp = Computation("shifted")
    comp.add_data_space("x", "double", shape=("N + M",))
    comp.add_data_space("y", "double", shape=("N",))
    s = comp.add_stmt(Stmt("$y$(i) += $x$(i + j);", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    with pytest.raises(SpfError, match="loop 'j' has no constant trip count inside 'i'"):
        s.cache_read("x", "i")
    s.split("j", 8, "j0", "j1")
    with pytest.raises(SpfError, match="loop 'j0' has no constant trip count"):
        s.cache_read("x", "i")
    s.cache_read("x", "j0")  # x(i + 8*j0 + j1): 8 elements per j0
    assert comp.buffer("x_pack_buf").shape == (8,)


def test_later_commands_are_checked_against_the_copy() -> None:
    comp, s = tiled_gemm()
    s.cache_read("B", "k0", layout=["j1", "k1"])
    s.parallelize("i1")  # the copy is outside i1; i1 carries nothing
    comp.check_legality()
    s.parallelize("j0")  # one buffer for all j0: the copies of two j0 would collide
    with pytest.raises(IllegalScheduleError, match="j0"):
        comp.check_legality()


def test_consumer_moved_before_its_copy_is_illegal() -> None:
    comp, s = tiled_gemm()
    s.cache_read("B", "k0", layout=["j1", "k1"])
    s.interchange("j0", "k0")
    with pytest.raises(IllegalScheduleError, match="B_pack"):
        comp.check_legality()


def test_illegal_schedule_before_packing_is_refused() -> None:
    comp = kernels.jacobi2d()
    comp.add_data_space("D", "double", shape=("N", "N"))
    s1 = comp.add_stmt(Stmt("$D$(i, j) = $B$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < N}"))
    s1.before(comp.stmt(0), spf.ROOT)  # reads B before it is written
    with pytest.raises(IllegalScheduleError, match="already illegal"):
        s1.cache_read("B", "i")


def test_pack_buffer_is_aligned_and_not_zero_filled() -> None:
    comp, s = tiled_gemm()
    s.cache_read("B", "k0", layout=["j1", "k1"])
    zeroed = comp.add_buffer("scratch", (8,), "double", scope="local")
    assert not comp.buffer("B_pack_buf").zeroed
    assert zeroed.zeroed
    src = comp.codegen()
    assert (
        "char *B_pack_buf_raw = (char *)malloc((size_t)((8) * (16)) * sizeof(double) + 64);" in src
    )
    assert "B_pack_buf_raw + ((64 - (uintptr_t)B_pack_buf_raw % 64) % 64)" in src
    assert "free(B_pack_buf_raw);" in src
    again = Computation.from_json(comp.to_json())
    assert not again.buffer("B_pack_buf").zeroed


def test_sparse_loops_and_taken_names_are_refused() -> None:
    comp = kernels.spmv_csr()
    with pytest.raises(SpfError, match="uses UFs"):
        comp.stmts[-1].cache_read("x", "i")
    comp, s = tiled_gemm()
    with pytest.raises(SpfError, match=r"name 'A' .* is already taken"):
        s.cache_read("B", "k0", name="A")
    with pytest.raises(UndeclaredError, match="unknown loop 'zz'"):
        s.cache_read("B", "zz")
    with pytest.raises(SpfError, match="loop must be a loop name or depth"):
        s.cache_read("B", spf.ROOT)
    assert len(comp.stmts) == 1


def test_parallel_loop_outside_the_copy_names_the_shared_buffer_and_the_fix() -> None:
    """The buffer is one array per call (the docstring said each iteration of ``loop`` had
    its own, so the loops outside stayed parallelizable): the refusal names the buffer and
    the allocate_at that makes the loop parallel, and following it is legal and right."""
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.split("i", 4, "i0", "i1").split("k", 4, "k0", "k1").interchange("i1", "k0")
    comp.cache_read("A", at=(s, "k0"))
    s.parallelize("i0")
    with pytest.raises(IllegalScheduleError, match="cannot run in parallel") as err:
        comp.check_legality()
    assert (
        "'A_pack' is stored in buffer 'A_pack_buf', one array allocated once per call and "
        "shared by every iteration of loop 'i0': give each iteration its own with "
        "comp.buffer('A_pack_buf').allocate_at('s0', 'i0')"
    ) in str(err.value)
    comp.buffer("A_pack_buf").allocate_at("s0", "i0")
    comp.check_legality()
    rng = np.random.default_rng(5)
    a, b = rng.random((13, 11)), rng.random((11, 17))
    c = np.zeros((13, 17))
    comp.compile()(C=c, A=a, B=b)
    np.testing.assert_allclose(c, a @ b)

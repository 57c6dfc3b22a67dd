"""Tag combinations gcc rejects are refused by spf first: at the command when one statement's
own loops show it, at codegen when statements sharing a loop bring conflicting tags."""

from __future__ import annotations

import pytest

from spf import CodegenError, Computation, SpfError, Stmt


def one() -> tuple[Computation, Stmt]:
    comp = Computation("one")
    comp.add_data_space("A", "double", shape=("N", "M"))
    s = comp.add_stmt(Stmt("$A$(i,j) = 1.0;", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    return comp, s


def two() -> tuple[Computation, Stmt, Stmt]:
    comp = Computation("two")
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("B", "double", shape=("N", "M"))
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    s0 = comp.add_stmt(Stmt("$A$(i,j) = 1.0;", dom, "{[i,j]->[0,i,0,j,0]}"))
    s1 = comp.add_stmt(Stmt("$B$(i,j) = 2.0;", dom, "{[i,j]->[0,i,0,j,1]}"))
    return comp, s0, s1


def test_parallel_inside_a_vector_loop_is_refused_at_the_command() -> None:
    _comp, s = one()
    s.vectorize("i", 4)
    with pytest.raises(SpfError, match=r"loop 'j' of statement s0 is parallel.*vector loop 'i1'"):
        s.parallelize("j")
    assert s.tags == {"i1": ("vector(4)",)}


def test_vectorizing_around_a_parallel_loop_is_refused() -> None:
    _comp, s = one()
    s.parallelize("j")
    with pytest.raises(SpfError, match="no parallel loop inside a simd loop"):
        s.vectorize("i", 4)
    assert s.loops == ("i", "j")


def test_interchange_that_puts_a_parallel_loop_inside_a_vector_loop_is_refused() -> None:
    _comp, s = one()
    s.vectorize("j", 4).parallelize("i")
    with pytest.raises(SpfError, match="is parallel but lies inside the vector loop 'j1'"):
        s.interchange("i", "j1")


def test_parallel_outside_vector_and_nested_vectors_are_accepted() -> None:
    comp, s = one()
    s.parallelize("i").vectorize("j", 4)
    code = comp.codegen()
    assert code.index("#pragma omp parallel for") < code.index("#pragma omp simd")
    comp2, s2 = one()
    s2.vectorize("i", 4).vectorize("j", 4)  # gcc accepts simd inside simd
    assert comp2.codegen(check=False).count("#pragma omp simd simdlen(4)") >= 2


def test_parallel_loop_of_one_statement_inside_the_vector_loop_of_another() -> None:
    comp, s0, s1 = two()
    s0.vectorize("i", 4, "i0", "i1")
    s1.split("i", 4, "i0", "i1").parallelize("j")
    with pytest.raises(CodegenError, match=r"loop j \(statements s0, s1\) is parallel.*i1"):
        comp.codegen(check=False)


def test_two_unroll_factors_on_a_shared_loop_are_refused_at_codegen() -> None:
    comp, s0, s1 = two()
    s0.unroll("i", 4)
    s1.unroll("i", 8)
    with pytest.raises(
        CodegenError, match="loop i shared by statements s0, s1 is unrolled by 4 and 8"
    ):
        comp.codegen()
    s1.unroll("i", 4)  # unrolling again replaces the factor
    assert comp.codegen().count("#pragma GCC unroll 4") == 1


@pytest.mark.parametrize("factor", [0, -2, 1025, 100000])
def test_unroll_factor_out_of_range(factor: int) -> None:
    _comp, s = one()
    with pytest.raises(SpfError, match="unroll: factor"):
        s.unroll("i", factor)
    assert s.tags == {}


def test_unroll_factor_at_the_bound_compiles() -> None:
    comp, s = one()
    s.unroll("j", 1024)
    assert "#pragma GCC unroll 1024" in comp.codegen()

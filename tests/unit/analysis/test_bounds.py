"""Bounds proofs at codegen (API.md section 10): every access of every statement instance
lies inside its data space's shape; proved accesses cost nothing, accesses proved out of
bounds wherever they run raise ``CodegenError`` naming the statement, the access and an
offending instance, accesses out of bounds for some parameter values only give a
precondition (tests/e2e/test_preconditions.py), and accesses that depend on unbounded UF
values become obligations in ``assume`` syntax.
"""

from __future__ import annotations

import pytest

import spf
from spf import CodegenError, Computation, Stmt, kernels
from spf.analysis import check_bounds
from spf.codegen import lower_checked
from spf.sets.parse import parse_document


def shift(offset: str, *, shape: str = "N", domain: str = "{[i]: 0 <= i < N}") -> Computation:
    comp = Computation("shift")
    comp.add_data_space("A", "double", shape=(shape,))
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_stmt(Stmt(f"$B$(i) = $A$({offset});", domain))
    return comp


def sparse_gather(col_range: str | None) -> Computation:
    comp = Computation("gather")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )
    if col_range is None:
        comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}")
    else:
        comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range=col_range)
    comp.add_stmt(
        Stmt(
            "$y$(i) += $A$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0,i,0,k,0,j,0]}",
        )
    )
    return comp


# ----------------------------------------------------------------------------- violations
def test_off_by_one_stencil_raises_naming_statement_access_and_instance() -> None:
    comp = shift("i+1")
    with pytest.raises(CodegenError, match=r"s0 reads A\(i \+ 1\)") as err:
        comp.codegen()
    msg = str(err.value)
    assert "data space 'A' of shape (N)" in msg
    assert "i = 9 with N = 10" in msg


def test_lower_side_violation_names_the_first_instance() -> None:
    with pytest.raises(CodegenError, match=r"A\(i - 1\).*below 0.*i = 0 with N = 10"):
        shift("i-1").codegen()


def test_write_out_of_bounds_is_a_write() -> None:
    comp = Computation("w")
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_stmt(Stmt("$B$(i) = 0.0;", "{[i]: 0 <= i <= N}"))
    with pytest.raises(CodegenError, match=r"s0 writes B\(i\).*i = 10 with N = 10"):
        comp.codegen()


def test_correct_stencil_passes() -> None:
    comp = shift("i+1", domain="{[i]: 0 <= i < N - 1}")
    report = check_bounds(comp)
    assert len(report.proved) == 2
    assert report.obligations == ()
    assert "void shift(" in comp.codegen()


def test_check_false_skips_the_bounds_check() -> None:
    assert "void shift(" in shift("i+1").codegen(check=False)


def test_two_dimensional_violation_in_the_second_dimension() -> None:
    comp = Computation("t2")
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("B", "double", shape=("N", "M"))
    comp.add_stmt(Stmt("$B$(i, j) = $A$(i, j + 1);", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    with pytest.raises(CodegenError, match=r"A\(i, j \+ 1\).*index 1.*i = 0, j = 9 with M = 10"):
        comp.codegen()


def test_out_of_bounds_for_some_parameter_values_only_is_a_precondition() -> None:
    """A constant extent 5 with a loop up to N: out of bounds whenever N > 5, in bounds
    otherwise: not a violation but the precondition ``N <= 5``."""
    comp = shift("i", shape="5")
    report = check_bounds(comp)
    assert report.violations == ()
    (p,) = report.preconditions
    assert (p.stmt, p.access, p.data_space, p.kind) == ("s0", "A(i)", "A", "read")
    assert p.condition == "N <= 5"
    assert p.example == "i = 5 with N = 10 (index (5))"
    (acc,) = [a for a in report.accesses if a.access == "A(i)"]
    assert (0, "upper", "precondition") in acc.outcomes


def test_degenerate_parameters_give_a_precondition_where_the_statement_runs() -> None:
    """``A(i, M - 1)`` is outside an ``N x M`` array exactly when ``M = 0`` and the loop
    runs (``N >= 1``): the precondition says so and no call with ``N = 0`` is refused."""
    comp = Computation("last")
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_stmt(Stmt("$B$(i) = $A$(i, M - 1);", "{[i]: 0 <= i < N}"))
    (p,) = check_bounds(comp).preconditions
    assert p.condition == "N >= 1 => M >= 1"
    assert p.text == "N >= 1 => M >= 1 (for A(i, M - 1) in statement s0)"


def test_reduction_target_out_of_bounds() -> None:
    comp = Computation("red")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_stmt(Stmt("$y$(i + 1) += $A$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    with pytest.raises(CodegenError, match=r"s0 reads y\(i \+ 1\)"):
        comp.codegen()
    comp2 = Computation("red2")
    comp2.add_data_space("y", "double", shape=("N",))
    comp2.add_data_space("A", "double", shape=("N", "M"))
    comp2.add_stmt(Stmt("$y$(j) += $A$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    (p,) = check_bounds(comp2).preconditions
    assert (p.access, p.condition) == ("y(j)", "N >= 1 => N >= M")


def test_cuda_and_hls_targets_check_too() -> None:
    for target in ("cuda", "hls"):
        with pytest.raises(CodegenError, match=r"A\(i \+ 1\)"):
            shift("i+1").codegen(target)


# ----------------------------------------------------------------------------- proofs
@pytest.mark.parametrize(
    "make",
    [
        kernels.dense_mv,
        kernels.gemm,
        kernels.spmv_csr,
        kernels.spmv_coo,
        kernels.spmv_csc,
        kernels.spmm_csr,
        kernels.blur2d,
        kernels.jacobi2d,
        lambda: kernels.spmv_bcsr(2, 3),
    ],
)
def test_ready_made_kernels_are_proved_in_bounds(make: object) -> None:
    assert callable(make)
    report = check_bounds(make())
    assert report.violations == ()
    assert report.obligations == ()
    assert report.proved == report.accesses


def test_sptrsv_leaves_only_the_diagonal_obligation() -> None:
    """``k = rowptr(i+1) - 1`` is negative for an empty first row: a run-time obligation."""
    (o,) = check_bounds(kernels.sptrsv_csr()).obligations
    assert (o.stmt, o.access, o.data_space) == ("s2", "L(k)", "L")
    assert o.text == "forall i, k: 0 <= i && i < N && k = rowptr(i + 1) - 1 => 0 <= k"


def test_sparse_kernel_with_declared_col_range_is_proved() -> None:
    report = check_bounds(sparse_gather("{[v]: 0 <= v < M}"))
    assert report.obligations == ()
    assert report.proved == report.accesses


def test_sparse_kernel_without_col_range_gives_an_obligation() -> None:
    comp = sparse_gather(None)
    (o,) = check_bounds(comp).obligations
    assert (o.stmt, o.access, o.data_space) == ("s0", "x(j)", "x")
    assert o.vars == ("i", "k", "j")
    assert o.conclusion == "0 <= j < M"
    assert o.text.startswith("forall i, k, j: ")
    assert "j = col(k)" in o.premise
    assert "rowptr(i) <= k" in o.premise
    assert "void gather(" in comp.codegen()  # an obligation is not an error


def test_obligations_reach_the_lowered_program() -> None:
    prog = lower_checked(sparse_gather(None).ir)
    assert [o.access for o in prog.obligations] == ["x(j)"]
    assert lower_checked(sparse_gather(None).ir, check=False).obligations == ()


def test_obligation_premise_and_conclusion_parse_as_constraints() -> None:
    """The facts parser reads premise and conclusion with the set grammar."""
    comp = Computation("g")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("M", "M"))
    comp.add_stmt(Stmt("$y$(i) += $x$(col(i), max(p(i), 0));", "{[i]: 0 <= i < N}"))
    report = check_bounds(comp)
    assert report.obligations
    for o in report.obligations:
        parse_document(f"{{[{', '.join(o.vars)}] : {o.premise}}}")
        parse_document(f"{{[{', '.join(o.vars)}] : {o.conclusion}}}")


def test_uf_in_the_index_gives_an_obligation_on_the_call() -> None:
    comp = Computation("perm")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$y$(i) = $x$(p(i));", "{[i]: 0 <= i < N}"))
    (o,) = check_bounds(comp).obligations
    assert o.text == "forall i: 0 <= i && i < N => 0 <= p(i) < N"
    comp2 = Computation("perm2")
    comp2.add_data_space("y", "double", shape=("N",))
    comp2.add_data_space("x", "double", shape=("N",))
    comp2.declare_uf("p", range="{[v]: 0 <= v < N}")
    comp2.add_stmt(Stmt("$y$(i) = $x$(p(i));", "{[i]: 0 <= i < N}"))
    assert check_bounds(comp2).obligations == ()


def test_clamped_stencil_with_min_max_is_proved() -> None:
    comp = shift("min(max(i - 1, 0), N - 1)")
    report = check_bounds(comp)
    assert report.proved == report.accesses
    assert report.accesses[0].access == "A(min(max(i - 1, 0), N - 1))"


def test_floor_and_mod_indices() -> None:
    ok = shift("floor(i/2)", shape="N")
    assert check_bounds(ok).proved == check_bounds(ok).accesses
    comp = Computation("m")
    comp.add_data_space("A", "double", shape=(4,))
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_stmt(Stmt("$B$(i) = $A$(i % 4);", "{[i]: 0 <= i < N}"))
    assert not check_bounds(comp).violations
    (p,) = check_bounds(shift("i % 5", shape="4")).preconditions  # i % 5 = 4 needs N >= 5
    assert (p.access, p.condition) == ("A(i % 5)", "N <= 4")
    with pytest.raises(CodegenError, match=r"A\(i % 5 \+ 4\)"):
        shift("i % 5 + 4", shape="4").codegen()


def test_shape_smaller_than_parameter_interior_is_fine_for_every_n() -> None:
    """Extent ``N-2`` with domain ``0 <= i < N-2``: no instance exists for small N."""
    comp = Computation("interior")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N-2",))
    comp.add_stmt(Stmt("$B$(i) = $A$(i + 2);", "{[i]: 0 <= i < N - 2}"))
    report = check_bounds(comp)
    assert report.proved == report.accesses


def test_pointer_data_spaces_are_not_checked() -> None:
    """A ``double*`` data space has no shape: nothing to check against."""
    comp = Computation("p")
    comp.add_data_space("A", "double*")
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_stmt(Stmt("$B$(i) = $A$(i + 1);", "{[i]: 0 <= i < N}"))
    report = check_bounds(comp)
    assert [a.data_space for a in report.accesses] == ["B"]
    assert report.unchecked == ()
    assert report.violations == ()


def test_scalar_and_zero_d_statements() -> None:
    comp = Computation("s")
    comp.add_data_space("t", "double")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$ = 0.0;", "{[]}"))
    comp.add_stmt(Stmt("$t$ += $A$(3);", "{[i]: 0 <= i < N}"))
    (p,) = check_bounds(comp).preconditions
    assert (p.access, p.condition) == ("A(3)", "N >= 1 => N >= 4")
    assert p.example.startswith("i = 0 with N = ")
    comp.add_stmt(Stmt("$t$ += $A$(N);", "{[]}"))
    with pytest.raises(CodegenError, match=r"s2 reads A\(N\).*its only instance with N = 10"):
        check_bounds(comp)


def test_schedules_and_buffers_do_not_cause_false_positives() -> None:
    comp = kernels.blur2d()
    bx, out = comp.stmts
    bx.compute_at(out, "i")
    comp.add_buffer("bx_buf", (3, "M - 2"), "double", scope="stack")
    bx.store_in("bx_buf", ["i % 3", "j"])
    assert check_bounds(comp).violations == ()
    gemm = kernels.gemm()
    gemm.stmts[0].tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    assert check_bounds(gemm).proved == check_bounds(gemm).accesses


def test_api_section_10_spmv_example() -> None:
    """API.md section 3/10: the paper SpMV with declared rowptr/col proves every access."""
    comp = spf.Computation("spmv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    comp.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0,i,0,k,0,j,0]}",
        )
    )
    report = check_bounds(comp)
    assert [a.access for a in report.proved] == ["y(i)", "A(k)", "x(j)"]
    assert report.obligations == ()


def test_access_guarded_in_the_body_is_not_refused() -> None:
    """``(i + 1 < N) ? A(i + 1) : 0.0``: the condition keeps it in bounds; the proof cannot
    see it, so the access is left unchecked (neither an error nor a run-time obligation)."""
    comp = Computation("guarded")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_stmt(Stmt("$B$(i) = (i + 1 < N) ? $A$(i+1) : 0.0;", "{[i]: 0 <= i < N}"))
    comp.add_stmt(Stmt("if (i > 0) { $B$(i) += $A$(i-1); }", "{[i]: 0 <= i < N}"))
    comp.add_stmt(Stmt("$B$(i) += (i > 1 && $A$(i-2) > 0.0) ? 1.0 : 0.0;", "{[i]: 0 <= i < N}"))
    report = check_bounds(comp)
    assert report.violations == ()
    assert report.obligations == ()
    assert sorted(a.access for a in report.unchecked) == ["A(i + 1)", "A(i - 1)", "A(i - 2)"]
    assert all("condition" in a.reason for a in report.unchecked)
    assert "void guarded(" in comp.codegen()


def test_unguarded_use_of_the_same_access_is_still_checked() -> None:
    comp = Computation("both")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_stmt(Stmt("$B$(i) = $A$(i+1) + ((i > 0) ? $A$(i+1) : 0.0);", "{[i]: 0 <= i < N}"))
    with pytest.raises(CodegenError, match=r"A\(i \+ 1\)"):
        comp.codegen()


def test_negative_extents_are_not_parameter_values() -> None:
    """No array has a negative extent: ``out`` of shape ``(NL, W)`` means ``NL >= 0``, so
    ``a(NL + 1, j)`` in an ``(NL + 2, W)`` array is in bounds (the MPI halo pattern)."""
    comp = Computation("halo")
    comp.add_data_space("a", "double", shape=("NL + 2", "W"))
    comp.add_data_space("out", "double", shape=("NL", "W"))
    comp.add_stmt(
        Stmt("$out$(i, j) = $a$(NL + 1, j) + $a$(1, j);", "{[i,j]: 0 <= i < NL && 0 <= j < W}")
    )
    comp.add_stmt(Stmt("$a$(NL + 1, j) = 0.0;", "{[j]: 0 <= j < W}"))
    report = check_bounds(comp)
    assert report.proved == report.accesses


def test_layer_iv_operations_are_checked_and_named() -> None:
    comp = Computation("ops")
    comp.add_data_space("a", "double", shape=("NL + 2", "W"))
    comp.add_data_space("out", "double", shape=("NL", "W"))
    comp.add_stmt(Stmt("$out$(i, j) = $a$(i + 1, j);", "{[i,j]: 0 <= i < NL && 0 <= j < W}"))
    comp.send("{[q]: 1 <= q < P}", "a", ["NL + 2", "0"], "W", "q - 1")
    with pytest.raises(CodegenError, match=r"a in send\(a\(NL \+ 2, 0\)"):
        check_bounds(comp)

"""Which facts may be tested inside the loops (spf.analysis.in_loop_safety) and the sides a
bounds proof made with the assumptions (spf.analysis.bounds.unproved_without)."""

from __future__ import annotations

import spf
from spf.analysis.bounds import analyze_bounds, unproved_without
from spf.analysis.in_loop_safety import safe_in_loop
from spf.codegen import lower_checked
from spf.codegen.arg_checks import plan_fact_checks

SORTED = "forall i, k1, k2: {m}_rowptr(i) <= k1 < k2 < {m}_rowptr(i+1) => {m}_col(k1) < {m}_col(k2)"


def rows(write: str, *, sorted_b: bool = False) -> spf.Computation:
    """A loop over A's rows writing ``write``; A's rows are assumed sorted, and with
    ``sorted_b`` those of a B no access reads."""
    comp = spf.Computation("rows")
    comp.add_data_space("w", "double", shape=("M",))
    comp.add_data_space("A", "double", shape=("A_NNZ",))
    for m in "AB" if sorted_b else "A":
        comp.declare_uf(f"{m}_rowptr", domain="{[i]: 0 <= i <= N}",
                        range=f"{{[v]: 0 <= v <= {m}_NNZ}}", monotonic="nondecreasing")  # fmt: skip
        comp.declare_uf(f"{m}_col", domain=f"{{[k]: 0 <= k < {m}_NNZ}}", range="{[v]: 0 <= v < M}")
        comp.assume(SORTED.format(m=m))
    row = "{[i,p]: 0 <= i < N && A_rowptr(i) <= p < A_rowptr(i+1)}"
    comp.add_stmt(spf.Stmt(write, row, "{[i,p] -> [i,p]}"))
    return comp


OFFSET = "$w$(A_col(p) - A_col(A_rowptr(i))) += $A$(p);"


def test_a_side_proved_with_a_fact_is_unproved_without_it() -> None:
    ir = rows(OFFSET).ir
    report = analyze_bounds(ir)
    (w,) = [a for a in report.accesses if a.data_space == "w"]  # read and written
    assert w.proved
    assert w.by_facts == ((0, "lower"),)  # the upper side: col's declared range
    assert unproved_without(ir, report, ir.facts) == ()
    (ufs,) = unproved_without(ir, report, [])
    assert ufs == {"A_col", "A_rowptr"}


def test_an_access_proved_by_declared_ranges_uses_no_fact() -> None:
    ir = rows("$w$(A_col(p)) += $A$(p);").ir
    report = analyze_bounds(ir)
    assert all(not a.by_facts for a in report.accesses)
    assert unproved_without(ir, report, []) == ()


def test_only_the_facts_of_a_failing_side_leave_the_loops() -> None:
    ir = rows(OFFSET, sorted_b=True).ir
    report = analyze_bounds(ir)
    assert safe_in_loop(ir, report, frozenset({0, 1}), {}, ()) == {1}  # B's order stays
    # a fact implied by one in the loops is not tested at all: it cannot prove anything
    assert safe_in_loop(ir, report, frozenset({1}), {0: (1,)}, ()) == frozenset()


def test_obligations_are_never_tested_in_the_loops() -> None:
    comp = rows("$w$(A_col(p) + 1) += $A$(p);")
    program = plan_fact_checks(comp.ir, lower_checked(comp.ir))
    assert len(program.obligations) == 1
    assert program.in_loop_facts == {0}  # the order, which no proof uses
    assert {c.fact for c in program.fact_checks} == {0}


def test_without_a_bounds_proof_every_fact_is_tested_before_the_loops() -> None:
    comp = spf.kernels.spmv(spf.formats.CSR)
    program = plan_fact_checks(comp.ir, lower_checked(comp.ir))
    assert program.in_loop_facts == {0}
    unproved = plan_fact_checks(comp.ir, lower_checked(comp.ir, check=False), proved=False)
    assert unproved.in_loop_facts == frozenset()
    assert unproved.fact_checks == ()
    kernel = comp.compile(check=False)
    assert [c.first for c in kernel.check_cost] == ["before loops"], str(kernel.check_cost)


def test_a_range_derived_for_a_run_time_index_array_keeps_every_fact_before_the_loops() -> None:
    # x(perm(i)) is in bounds by the range derived for perm's values (checked where they
    # are read), proved with every assumption at hand: that proof is not made again, so
    # no assumption is tested in the loops
    comp = spf.Computation("settled")
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.declare_uf("col", domain="{[k]: 0 <= k < N}", range="{[v]: 0 <= v < M}")
    comp.add_local("perm", "int32_t", ("N",), index=True)
    comp.declare_uf("perm", domain="{[k]: 0 <= k < N}")
    comp.assume("forall i: 0 <= i < N => col(i) <= i + M")
    comp.add_stmt(spf.Stmt("$perm$(i) = col(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i]}"))
    comp.add_stmt(spf.Stmt("$y$(i) += $x$(perm(i));", "{[i]: 0 <= i < N}", "{[i] -> [1,i]}"))
    report = analyze_bounds(comp.ir)
    assert len(report.obligations) == 1  # settled: the kernel checks none
    assert safe_in_loop(comp.ir, report, frozenset({0}), {}, report.obligations) == {0}
    assert safe_in_loop(comp.ir, report, frozenset({0}), {}, ()) == frozenset()
    program = plan_fact_checks(comp.ir, lower_checked(comp.ir))
    assert program.obligations == ()
    assert program.in_loop_facts == frozenset()

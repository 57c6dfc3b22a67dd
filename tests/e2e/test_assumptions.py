"""End to end: assumptions checked by compiled kernels (API.md section 10), constants and locals.

A kernel called with ``check=True`` runs a generated C loop over each assumption's premise and
raises ``ArgumentError`` naming the assumption and the first violating index; ``check=False``
skips it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import ArgumentError, CodegenError, Computation, Stmt
from spf.runtime.fact_check import FactChecker
from spf.sets.facts import Fact

TRIANGULAR = "forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i"
SORTED = "forall k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) => col(k1) < col(k2)"


def _lower(n: int, seed: int = 0) -> sps.csr_matrix:
    rng = np.random.default_rng(seed)
    a = np.tril(rng.random((n, n)) < 0.4, -1) * rng.random((n, n)) + np.eye(n) * 4
    return sps.csr_matrix(a)


def _args(m: sps.csr_matrix) -> dict[str, Any]:
    n = m.shape[0]
    return {
        "u": np.zeros(n),
        "L": m.data.copy(),
        "f": np.arange(1.0, n + 1),
        "rowptr": m.indptr.astype(np.int32),
        "col": m.indices.astype(np.int32),
        "N": n,
        "NNZ": m.nnz,
    }


@pytest.fixture(scope="module")
def sptrsv() -> spf.Kernel:
    comp = spf.kernels.sptrsv_csr()
    comp.assume(TRIANGULAR)
    comp.assume(SORTED)
    comp.assume("N >= 1")
    return comp.compile()


def test_valid_arguments_pass_and_compute(sptrsv: spf.Kernel) -> None:
    m = _lower(9)
    args = _args(m)
    sptrsv(**args)
    np.testing.assert_allclose(m @ args["u"], args["f"])


def test_violated_assumption_names_it_and_the_first_index(sptrsv: spf.Kernel) -> None:
    m = _lower(6, seed=3)
    args = _args(m)
    col = args["col"].copy()
    row = 3
    k = int(m.indptr[row])  # first entry of row 3 points above the diagonal
    col[k] = 5
    args["col"] = col
    with pytest.raises(ArgumentError, match=r"forall i, k: .*col\(k\) <=? i") as err:
        sptrsv(**args)
    assert f"fails first at i = {row}, k = {k}" in str(err.value)
    sptrsv(check=False, **args)  # skipped: runs (computing something meaningless)


def test_unsorted_row_violates_the_sorted_assumption(sptrsv: spf.Kernel) -> None:
    m = sps.csr_matrix(np.array([[1.0, 0, 0], [2, 3, 0], [4, 5, 6]]))
    args = _args(m)
    col = args["col"].copy()
    col[3], col[4] = col[4], col[3]  # row 2: columns 1, 0, 2
    args["col"] = col
    with pytest.raises(ArgumentError, match=r"col\(k1\) < col\(k2\).* i = 2, k1 = 3, k2 = 4"):
        sptrsv(**args)


def test_parameter_assumption_is_checked(sptrsv: spf.Kernel) -> None:
    args = _args(sps.csr_matrix((0, 0)))
    with pytest.raises(ArgumentError, match=r"'N >= 1' does not hold \(with N=0\)"):
        sptrsv(**args)
    sptrsv(check=False, **args)


def test_kernel_without_assumptions_or_obligations_has_no_checker() -> None:
    k = spf.kernels.spmv_csr().compile()  # every access proved in bounds statically
    assert k._binder._facts is None


def test_bounds_obligation_is_checked_at_run_time() -> None:
    # The solve reads the diagonal at L(rowptr(i+1) - 1): in bounds only when no row is
    # empty, which no static proof knows; the kernel checks it on its arguments
    # (triangular=False: without the assumptions that would imply it, DIAGONAL_STORED among them)
    k = spf.kernels.sptrsv_csr(triangular=False).compile()
    f = np.ones(2)
    good = {
        "rowptr": np.array([0, 1, 3], dtype=np.int32),
        "col": np.array([0, 0, 1], dtype=np.int32),
    }
    u = np.zeros(2)
    k(u=u, L=np.array([2.0, 1.0, 4.0]), f=f, N=2, NNZ=3, **good)
    assert np.allclose(u, [0.5, 0.125])
    empty_row = {
        "rowptr": np.array([0, 0, 2], dtype=np.int32),
        "col": np.array([0, 1], dtype=np.int32),
    }
    with pytest.raises(
        ArgumentError, match=r"bounds of L\(k\) in statement s2.*fails first at i = 0"
    ):
        k(u=u, L=np.array([1.0, 4.0]), f=f, N=2, NNZ=2, **empty_row)


def test_general_checker_takes_any_obligation() -> None:
    # col without a declared range: the obligation is then what bounds it (a declared range
    # is checked first, where the check loop reads col: tests/unit/runtime/test_arg_checks.py)
    ufs = {**spf.kernels.spmv_csr().ufs, "col": spf.UF("col", domain="{[k]: 0 <= k < NNZ}")}
    bound = Fact.parse(
        "forall i, k, j: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) => j < M"
    )
    checker = FactChecker([bound], ufs)
    rowptr = np.array([0, 2, 3], dtype=np.int32)
    col = np.array([0, 3, 1], dtype=np.int32)
    checker.check({"N": 2, "M": 4, "NNZ": 3}, {"rowptr": rowptr, "col": col})
    with pytest.raises(ArgumentError, match="fails first at i = 0, k = 1, j = 3"):
        checker.check({"N": 2, "M": 3, "NNZ": 3}, {"rowptr": rowptr, "col": col})


def test_unbounded_assumption_cannot_be_checked() -> None:
    comp = Computation("c")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$x$(i) = 1;", "{[i]: 0 <= i < N}"))
    comp.assume("forall i: 0 <= i => p(i) >= 0")
    with pytest.raises(CodegenError, match="variable 'i' is unbounded"):
        comp.compile()


def test_double_constant_and_locals_run() -> None:
    comp = Computation("scaled")
    comp.add_constant("TSTEPS")
    comp.add_constant("SCALE", "double")
    comp.add_data_space("DT", "double")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_local("t", "double")
    comp.add_local("w", "double", shape=("N",))
    comp.add_stmt(Stmt("$DT$ = SCALE / (double)TSTEPS;", "{[]}"))
    comp.add_stmt(Stmt("$w$(i) = $x$(i) * $DT$;", "{[i]: 0 <= i < N}"))
    comp.add_stmt(Stmt("$t$ = $w$(i); $x$(i) = $t$ + 1;", "{[i]: 0 <= i < N}"))
    k = comp.compile()
    dt, x = np.zeros(()), np.ones(5)
    k(DT=dt, x=x, TSTEPS=4, SCALE=2)
    assert float(dt) == 0.5
    np.testing.assert_allclose(x, 1.5)
    with pytest.raises(ArgumentError, match="constant 'SCALE' must be a number"):
        k(DT=dt, x=x, TSTEPS=4, SCALE="2")
    k(DT=dt, x=x, TSTEPS=4, SCALE=np.array(4.0))  # a 0-d array holds a by-value scalar
    assert float(dt) == 1.0
    with pytest.raises(ArgumentError, match="constant 'SCALE' must be a number"):
        k(DT=dt, x=x, TSTEPS=4, SCALE=np.array([4.0]))
    with pytest.raises(ArgumentError, match="missing parameter SCALE"):
        k(DT=dt, x=x, TSTEPS=4)


def test_interpreter_checks_assumptions_and_takes_floating_constants() -> None:
    comp = spf.kernels.sptrsv_csr()
    comp.assume(TRIANGULAR)
    args = {
        "u": np.zeros(2),
        "L": np.array([2.0, 1.0, 4.0]),
        "f": np.array([2.0, 9.0]),
        "rowptr": np.array([0, 1, 3]),
        "NNZ": 3,
    }
    comp.interpret(col=np.array([0, 0, 1]), **args)
    np.testing.assert_allclose(args["u"], [1.0, 2.0])
    with pytest.raises(
        ArgumentError, match=r"interpret\(sptrsv_csr\): the assumption .* i = 0, k = 0"
    ):
        comp.interpret(col=np.array([1, 0, 1]), **args)
    scale = Computation("scale")
    scale.add_constant("ALPHA", "double")
    scale.add_data_space("x", "double", shape=("N",))
    scale.add_stmt(Stmt("$x$(i) = ALPHA * $x$(i);", "{[i]: 0 <= i < N}"))
    x = np.ones(3)
    scale.interpret(x=x, ALPHA=0.25)
    np.testing.assert_allclose(x, 0.25)


def test_checker_labels_name_other_obligations() -> None:
    ufs = {**spf.kernels.spmv_csr().ufs, "col": spf.UF("col", domain="{[k]: 0 <= k < NNZ}")}
    bound = Fact.parse("forall i: 0 <= i && i < N => 0 <= col(i) && col(i) < M", ufs)
    checker = FactChecker([bound], ufs, labels=["the bounds of access x(col(k)) in s0"])
    col = np.array([0, 1, 2], dtype=np.int32)
    rowptr = np.array([0, 1, 2, 3], dtype=np.int32)
    with pytest.raises(ArgumentError, match=r"^the bounds of access x\(col\(k\)\) in s0 .* i = 2"):
        checker.check({"N": 3, "M": 2, "NNZ": 3}, {"col": col, "rowptr": rowptr})


def test_uf_fact_without_variables() -> None:
    comp = spf.kernels.spmv_csr()
    comp.assume("rowptr(N) = NNZ")
    # N is a parameter (a UF argument, but not quantified: no forall, and N is a constant)
    assert comp.assumptions[0].vars == ()
    k = comp.compile()
    rowptr, col = np.array([0, 1, 2], dtype=np.int32), np.array([0, 1, 1], dtype=np.int32)
    args = {"y": np.zeros(2), "x": np.ones(2), "rowptr": rowptr, "N": 2, "M": 2}
    k(A=np.ones(2), col=col[:2], NNZ=2, **args)
    with pytest.raises(ArgumentError, match=r"'rowptr\(N\) = NNZ' does not hold .*fails first at"):
        k(A=np.ones(3), col=col, NNZ=3, **args)


def _gather_past_the_rows(extra: int) -> Any:
    """``y(i) = x(f(i))`` for ``i < N`` with ``f`` declared on ``0 .. N + extra`` and the
    assumption ``f(i) + 2 >= i`` on all of it: the loops visit every point but ``extra + 1``."""
    comp = Computation("gather_past_the_rows")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.declare_uf("f", domain=f"{{[i]: 0 <= i <= N + {extra}}}", range="{[v]: 0 <= v < N}",
                    dtype="int32")  # fmt: skip
    comp.assume("forall i: f(i) + 2 >= i")
    comp.add_stmt(Stmt("$y$(i) = $x$(j);", "{[i, j]: 0 <= i < N && j = f(i)}",
                       "{[i, j] -> [0, i, 0, j, 0]}"))  # fmt: skip
    return comp.compile()


@pytest.mark.parametrize(("extra", "first"), [(0, "in loop"), (1, "before loops")])
def test_a_fact_the_loops_visit_but_at_one_point_is_tested_there_and_that_point_first(
    extra: int, first: str
) -> None:
    """The loops test a fact they visit everywhere but at one point (every variable fixed:
    here ``i = N``), and that point is tested before them; two points left (``extra=1``):
    the fact is tested whole before the loops, as any fact the loops miss."""
    k = _gather_past_the_rows(extra)
    assert [c.first for c in k.check_cost] == [first]
    x, y = np.arange(1.0, 5.0), np.zeros(4)
    f = np.array([0, 0, 1, 2, 3, 4][: 5 + extra], np.int32)  # f(N) = 3, f(N + 1) = 4 unread
    f[4:] = 3
    k(y=y, x=x, f=f, N=4)
    assert list(y) == [1.0, 1.0, 2.0, 3.0]
    f[4] = 0  # breaks the fact at i = N = 4, which no statement instance visits
    y[:] = 7.0
    with pytest.raises(ArgumentError, match=r"f\(i\) \+ 2 >= i' does not hold.*at i = 4 "):
        k(y=y, x=x, f=f, N=4)
    assert list(y) == [7.0] * 4  # refused before the loops ran


def test_sptrsv_tests_its_diagonal_in_the_loops_and_the_point_before_row_0_first() -> None:
    """:data:`spf.kernels.DIAGONAL_STORED` (``k = rowptr(i+1) - 1 => col(k) = i``) is tested
    where the division reads a row's last entry, not in a pass over every row before the
    loops; its one point no row visits (``i = -1``, through ``rowptr(0)``) is tested before
    them: a first row that starts past an entry is refused, as before, with nothing written
    (spf.analysis.fact_plan.in_loop_cover)."""
    solve = spf.kernels.sptrsv_csr().compile()
    how = {c.fact: c.first for c in solve.check_cost}
    assert how[spf.kernels.DIAGONAL_STORED] == "in loop"
    l_ = np.array([9.0, 2.0, 1.0, 4.0])
    rowptr = np.array([1, 2, 4], dtype=np.int32)  # entry 0 belongs to no row
    u = np.full(2, 7.0)
    with pytest.raises(ArgumentError, match=r"col\(k\) = i' does not hold.*i = -1, k = 0"):
        solve(u=u, f=np.ones(2), L=l_, rowptr=rowptr, col=np.array([0, 0, 0, 1], np.int32), NNZ=4)
    assert (u == 7.0).all()  # refused before the loops
    # row 1 ends in column 0, then in column 2: the loops find the row's last entry off its
    # diagonal; the error names the first fact broken, the lower fact (implied, not tested)
    # where it fails too, as when the rows were tested before the loops
    args = {"f": np.ones(3), "L": l_, "rowptr": np.array([0, 1, 3, 4], np.int32), "NNZ": 4}
    for last, fact in ((0, r"col\(k\) = i' does not hold"), (2, r"col\(k\) <= i' does not hold")):
        col = np.array([0, 0, last, 2], np.int32)
        with pytest.raises(ArgumentError, match=fact + r".*i = 1, k = 2.*inside the kernel"):
            solve(u=np.zeros(3), col=col, **args)
    u = np.zeros(3)
    solve(u=u, col=np.array([0, 0, 1, 2], np.int32), **args)
    assert np.allclose(u, [1 / 9, (1 - 2 / 9) / 1, 1 / 4])


def test_sptrsv_refuses_an_entry_on_the_diagonal_before_the_last() -> None:
    """``sptrsv_csr`` requires the diagonal last in each row (API.md); its fact
    :data:`spf.kernels.DIAGONAL_LAST` says so, a checked call refuses a row with an entry in
    its own column before its last one, and the generated row loop reads ``u(col(k))``
    without comparing ``col(k)`` with the row."""
    comp = spf.kernels.sptrsv_csr()
    assert spf.kernels.DIAGONAL_LAST in [f.text for f in comp.assumptions]
    assert "__builtin_expect(col_k == i" not in comp.codegen()
    solve = comp.compile()
    rowptr = np.array([0, 1, 4], dtype=np.int32)
    col = np.array([0, 1, 0, 1], dtype=np.int32)  # row 1: (1, 1) before (1, 0), (1, 1)
    vals = np.array([2.0, 1.0, 1.0, 4.0])
    with pytest.raises(ArgumentError, match="col\\(k\\) < i"):
        solve(u=np.zeros(2), f=np.ones(2), L=vals, rowptr=rowptr, col=col, N=2, NNZ=4)


def test_contradicting_parameter_assumptions_are_refused() -> None:
    """``N >= 10`` then ``N <= 5`` was accepted: every legality proof then held vacuously (a
    parallel tag on a loop carrying a dependence passed check_legality), every call refused."""
    comp = spf.Computation("prefix")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$x$(i) = $x$(i-1) + 1;", "{[i]: 1 <= i < N}"))
    comp.assume("N >= 10")
    with pytest.raises(spf.ArgumentError, match=r"assume\('N <= 5'\) contradicts .*'N >= 10'"):
        comp.assume("N <= 5")
    assert [f.text for f in comp.assumptions] == ["N >= 10"]  # nothing added
    with pytest.raises(spf.ArgumentError, match="holds for no parameter values"):
        spf.Computation("empty").assume("N < 0 && N > 0")

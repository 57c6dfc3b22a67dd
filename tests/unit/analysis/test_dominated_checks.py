"""In-loop fact checks made redundant by a stronger one at the same statement
(spf.analysis.dominated_checks)."""

from __future__ import annotations

from spf.analysis.dominated_checks import dominates, drop_dominated
from spf.analysis.fact_plan import InLoopCheck
from spf.sets.affine import Aff, call, sym

ROW, K = sym("i"), sym("k")
COL_K = call("col", [K])
START = call("rowptr", [ROW])


def _check(stmt: str, fact: int, conclusion: Aff, guard: tuple[Aff, ...] = (), eq: bool = False):
    return InLoopCheck(stmt, fact, tuple((False, g) for g in guard), ((eq, conclusion),), (ROW, K))


def test_stronger_bound_at_the_same_statement_dominates() -> None:
    weak = _check("s1", 0, ROW - COL_K)  # col(k) <= i
    strong = _check("s1", 1, ROW - COL_K - 1)  # col(k) < i
    assert dominates(strong, weak)
    assert not dominates(weak, strong)
    assert drop_dominated([weak, strong]) == (strong,)


def test_another_statement_or_a_wider_guard_does_not_dominate() -> None:
    weak = _check("s2", 0, ROW - COL_K, guard=(K - START,))
    assert not dominates(_check("s1", 1, ROW - COL_K - 1), weak)  # another statement
    guarded = _check("s2", 1, ROW - COL_K - 1, guard=(K - START - 1,))  # tests fewer instances
    assert not dominates(guarded, weak)
    inside = _check("s2", 1, ROW - COL_K - 1, guard=(K - START,))  # the same guard
    assert dominates(inside, weak)


def test_weaker_or_unrelated_conclusions_do_not_dominate() -> None:
    weak = _check("s1", 0, ROW - COL_K)
    assert not dominates(_check("s1", 1, ROW - COL_K + 1), weak)  # col(k) <= i + 1
    assert not dominates(_check("s1", 1, 2 * ROW - COL_K), weak)  # not a constant apart
    assert not dominates(
        _check("s1", 1, ROW - COL_K, eq=False), _check("s1", 0, ROW - COL_K, eq=True)
    )
    assert dominates(_check("s1", 1, COL_K - ROW, eq=True), _check("s1", 0, ROW - COL_K, eq=True))
    assert dominates(_check("s1", 1, ROW - COL_K, eq=True), weak)  # col(k) = i


def test_equal_checks_keep_the_lower_fact_and_same_fact_is_kept() -> None:
    a, b = _check("s1", 0, ROW - COL_K), _check("s1", 3, ROW - COL_K)
    assert drop_dominated([b, a]) == (a,)
    again = _check("s1", 0, ROW - COL_K - 1)
    assert drop_dominated([a, again]) == (a, again)  # one fact's own checks stay

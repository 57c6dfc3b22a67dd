"""``spf.sets.pointeval``: the vectorised evaluation the emptiness search uses at sample points
agrees with the exact Python evaluation and with isl, and the verdicts under facts are shared
by equal sets (issue 28)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import islpy as isl
from hypothesis import given
from hypothesis import strategies as st

from spf import UF, Set
from spf.sets import emptiness
from spf.sets.facts import Fact, is_empty_under
from spf.sets.pointeval import Layout, LinearSet, PairCheck, Substitution, coordinate, linear_set

if TYPE_CHECKING:
    import pytest

ROWPTR = UF("rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
            monotonic="nondecreasing")  # fmt: skip
DIAG = UF("diag", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < NNZ}", monotonic="increasing")
COL = UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}")
CALLS = Set(
    "{[i, ip, k, kp] : 0 <= i < N && 0 <= ip < N && rowptr(i) <= k < rowptr(i + 1)"
    " && rowptr(ip) <= kp < diag(ip) && col(k) = col(kp) + 0 * i && diag(col(k)) >= 0}",
    ufs=[ROWPTR, DIAG, COL],
)


def _points(body: object, values: list[int]) -> isl.Point:
    """A point of ``body``'s space with its dims and parameters taken from ``values``."""
    space = body.iset.get_space()  # type: ignore[attr-defined]
    pt = isl.Point.zero(space)
    n_param, n_set = space.dim(isl.dim_type.param), space.dim(isl.dim_type.set)
    for k in range(n_param):
        pt = pt.set_coordinate_val(isl.dim_type.param, k, values[k % len(values)] % 7)
    for k in range(n_set):
        pt = pt.set_coordinate_val(isl.dim_type.set, k, values[(n_param + k) % len(values)])
    return pt


@given(st.lists(st.integers(-6, 6), min_size=1, max_size=40))
def test_the_pair_check_finds_a_violated_pair_exactly_when_python_does(values: list[int]) -> None:
    body = CALLS._body
    ufs = CALLS.ufs
    pairs = emptiness._pairs(body)
    check = PairCheck(Layout(body), body, pairs, ufs)
    assert check.compiled
    pt = _points(body, values)
    found = check.violated_pair(check.layout.point(pt))
    exact = emptiness.violated_pair(body, pt, pairs, ufs)
    assert (found is None) == (exact is None)
    if found is not None:  # the pair found is one the point violates
        assert emptiness.violated_pair(body, pt, [found], ufs) == found


@given(st.lists(st.integers(0, 4), min_size=2, max_size=6), st.booleans())
def test_a_linear_set_contains_a_point_exactly_when_isl_does(fix: list[int], up: bool) -> None:
    """Points isl samples inside the set (some dims fixed), and their neighbours."""
    body = CALLS._body
    lin = linear_set(body)
    assert lin is not None
    layout = Layout(body)
    identity = Substitution(layout, [s.aff() for s in body.dim_syms()])
    dims = [s.name for s in body.dim_syms()]
    cons = " and ".join(f"{dims[k]} = {v}" for k, v in enumerate(fix[1:]))
    inside = body.iset.intersect(body.space_set(f"N = {fix[0] + 3} and NNZ = 9 and {cons}"))
    pt = inside.sample_point()
    if pt.is_void():
        return
    assert identity.holds(lin, layout.point(pt)) is True
    k = len(fix) % len(dims)
    moved = pt.add_ui(isl.dim_type.set, k, 1) if up else pt.sub_ui(isl.dim_type.set, k, 1)
    expected = bool(isl.Set.from_point(moved).is_subset(body.iset))
    assert identity.holds(lin, layout.point(moved)) is expected


def test_existential_variables_are_left_to_isl() -> None:
    s = isl.Set("[N] -> { [i] : exists (e : i = 2e) and 0 <= i < N }")
    assert not LinearSet(s).compiled


def test_a_parameter_the_point_does_not_give_makes_the_test_unknown() -> None:
    body = Set("{[i] : 0 <= i < N}")._body
    layout = Layout(body)
    pt = isl.Point.zero(isl.Set("{ [__t0] }").get_space())  # no N in the point's space
    point = layout.point(pt)
    assert (
        Substitution(layout, [s.aff() for s in body.dim_syms()]).holds(linear_set(body), point)
        is None
    )  # type: ignore[arg-type]


def test_verdicts_under_facts_are_shared_by_equal_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    from spf.sets import facts

    tri = Fact.parse("forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i")
    text = "{[i, k] : 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && col(k) > i + 17}"
    assert is_empty_under(Set(text, ufs=[ROWPTR, COL]), [tri])
    calls: list[object] = []
    real = facts._is_empty_under
    monkeypatch.setattr(facts, "_is_empty_under", lambda *a: calls.append(a) or real(*a))
    assert is_empty_under(Set(text, ufs=[ROWPTR, COL]), [tri])  # built again: remembered
    assert not calls
    assert not is_empty_under(Set(text, ufs=[ROWPTR, COL]), [])  # other facts: searched
    assert len(calls) == 1


def test_coordinates_are_read_exactly_small_and_huge() -> None:
    """Points are read as machine integers where they fit, from their text otherwise."""
    big = 2**70
    pt = isl.Set(
        f"[N] -> {{ [a, b, c, d, e] : a = {big} and b = -{big} and c = -7 and d = 0 "
        f"and e = {2**31} and N = {2**40} }}"
    ).sample_point()
    dims = [coordinate(pt, isl.dim_type.set, k) for k in range(5)]
    assert dims == [big, -big, -7, 0, 2**31]
    assert coordinate(pt, isl.dim_type.param, 0) == 2**40

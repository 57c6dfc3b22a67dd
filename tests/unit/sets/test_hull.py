"""``hull()``: one conjunction containing a union, isl's convex hull of the set with its UF
values as dimensions; a superset for every interpretation of the UFs."""

from __future__ import annotations

import islpy as isl
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spf import Relation, Set

SOME = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_hull_of_a_union_of_intervals() -> None:
    assert Set("{[i]: 0 <= i < 3; [i]: 5 <= i < 7}").hull() == Set("{[i]: 0 <= i <= 6}")


def test_hull_keeps_divisions_every_part_has() -> None:
    s = Set("{[i]: exists a: i = 2a && 0 <= a < 5} union {[i]: exists a: i = 2a && 10 <= a < 15}")
    assert s.hull() == Set("{[i]: i % 2 = 0 && 0 <= i <= 28}")


def test_hull_constrains_a_call_only_where_every_part_does() -> None:
    """A part that does not call f leaves f's value free: the hull does not call f (a call
    out of its array would wrongly drop the point i = 20)."""
    s = Set("{[i]: f(i) > 0 && 0 <= i < 10} union {[i]: i = 20}")
    h = s.hull()
    assert h == Set("{[i]: 0 <= i <= 20}")
    assert h.contains((20,), {}, {"f": np.ones(10, dtype=np.int32)})
    both = Set("{[i, k]: 0 <= i < N && (k = col(i) || k = col(i) + 2)}").hull()
    assert both == Set("{[i, k]: 0 <= i < N && col(i) <= k <= col(i) + 2}")


def test_hull_of_relations_zero_tuples_and_empty_sets() -> None:
    text = "{[i] -> [j]: j = i and 0 <= i < 4; [i] -> [j]: j = i + 1 and 4 <= i < 8}"
    r = Relation(text)
    assert r.hull() == Relation(str(isl.Map(text).convex_hull()))
    assert r.is_subset(r.hull())
    assert "union" not in str(r.hull())
    assert Set("{[]: N > 0; []: N < -3}").hull() == Set("{[]}")
    assert Set("{[i]: false}").hull().is_empty()
    once = Set("{[i]: 0 <= i < N && f(i) > 0}")
    assert once.hull() == once


coeffs = st.integers(-2, 2)


@st.composite
def affine_unions(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        conds = [f"{draw(coeffs)}i + {draw(coeffs)}j + {draw(st.integers(-5, 5))} >= 0"]
        conds.append(f"{draw(st.integers(-4, 0))} <= i <= {draw(st.integers(0, 4))}")
        conds.append(f"{draw(st.integers(-4, 0))} <= j <= {draw(st.integers(0, 4))}")
        parts.append("(" + " and ".join(conds) + ")")
    return "{[i, j]: " + " or ".join(parts) + "}"


@SOME
@given(affine_unions())
def test_hull_without_ufs_is_isls_convex_hull(text: str) -> None:
    want = Set(str(isl.Set(text).convex_hull()))
    assert Set(text).hull() == want


ATOMS = [
    "f(i) <= j",
    "f(i) > j",
    "f(j) = i",
    "g(i, j) >= 1",
    "i < j",
    "i + j = 3",
    "f(f(i)) != j",
    "g(j, i) < f(i)",
]


@SOME
@given(
    st.lists(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=3), min_size=1, max_size=3),
    st.integers(0, 2**32 - 1),
)
def test_hull_is_a_superset_for_any_uf_values(parts: list[list[str]], seed: int) -> None:
    box = "0 <= i < 5 && 0 <= j < 5"
    s = Set(" union ".join("{[i, j]: " + " && ".join([box, *p]) + "}" for p in parts))
    h = s.hull()
    assert Set(str(h)) == h
    assert s.is_subset(h)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        ufs = {"f": rng.integers(-1, 6, size=6), "g": rng.integers(-1, 3, size=(5, 5))}
        assert set(s.points({}, ufs)) <= set(h.points({}, ufs))

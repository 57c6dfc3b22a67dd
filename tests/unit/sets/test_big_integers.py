"""Integers outside int64 in set text are exact (isl integers are unbounded): coefficients,
constants, tuple constants, ``floor(e/c)``, ``e % c`` and UF arguments."""

from __future__ import annotations

import pytest

from spf import Relation, Set

BIG = 2**64 + 5  # wrapped to 5 before the fix
INT64 = 2**63


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        (f"{{[i]: i <= {BIG}}}", f"{{[i] : i <= {BIG}}}"),
        (f"{{[i]: i >= -{BIG}}}", f"{{[i] : -{BIG} <= i}}"),
        (f"{{[i]: {BIG}*i <= N}}", f"{{[i] : {BIG}*i <= N}}"),
        (f"{{[{BIG}, i]: i < 3}}", f"{{[{BIG}, i] : i <= 2}}"),
        (f"{{[i]: i = {INT64}}}", f"{{[i] : i = {INT64}}}"),
        (f"{{[i]: i = -{INT64 + 1}}}", f"{{[i] : i = -{INT64 + 1}}}"),
        (f"{{[i]: f(i + {BIG}) > 0}}", f"{{[i] : 1 <= f(i + {BIG})}}"),
        (
            f"{{[i]: i = floor(N/{BIG})}}",
            f"{{[i] : {BIG}*i <= N && N <= {BIG}*i + {BIG - 1}}}",
        ),
    ],
)
def test_big_integers_are_exact_and_round_trip(text: str, printed: str) -> None:
    s = Set(text)
    assert str(s) == printed
    assert Set(str(s)) == s


def test_big_modulo_round_trips() -> None:
    s = Set(f"{{[i]: 0 <= i < 4 && i = N % {BIG}}}")
    assert Set(str(s)) == s
    assert s.points({"N": BIG + 2}) == [(2,)]
    assert s.points({"N": 3 * BIG - 1}) == []


def test_big_relation_coefficient() -> None:
    r = Relation(f"{{[i] -> [{BIG}*i]}}")
    assert str(r) == f"{{[i] -> [{BIG}*i]}}"
    assert Relation(str(r)) == r
    assert r.apply("{[i]: 0 <= i <= 1}").points() == [(0,), (BIG,)]


def test_points_and_bounds_beyond_int64() -> None:
    assert Set(f"{{[i]: i = {INT64}}}").points() == [(INT64,)]
    lo = 2**70
    assert Set(f"{{[i]: {lo} <= i <= {lo} + 2}}").points() == [(lo,), (lo + 1,), (lo + 2,)]
    assert Set(f"{{[i]: 0 <= i <= {lo}}}").bounds() == [(0, lo)]
    assert Set("{[i]: 0 <= i < N}").contains((BIG - 1,), {"N": BIG})
    assert not Set("{[i]: 0 <= i < N}").contains((BIG,), {"N": BIG})


def test_big_and_small_constants_differ() -> None:
    assert Set(f"{{[i]: i <= {BIG}}}") != Set("{[i]: i <= 5}")
    assert Set("{[i]: 0 <= i <= 5}").is_subset(f"{{[i]: i <= {BIG}}}")
    assert not Set(f"{{[i]: 0 <= i <= {BIG}}}").is_subset("{[i]: i <= 5}")

"""Sets of zero-tuples (``{[]: N > 0}``, ``{[]}``) and relations to or from them, through
every operation: parse, print, intersect, union, is_empty, is_subset, contains, points."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spf import ArityError, Relation, Set, SpfError

POSITIVE = Set("{[]: N > 0}")
UNIVERSE = Set("{[]}")
NOTHING = Set("{[]: false}")


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("{[]: N > 0}", "{[] : 1 <= N}"),
        ("{[]}", "{[]}"),
        ("{[]: false}", "{[] : false}"),
        ("[N] -> { : N > 0 }", "{[] : 1 <= N}"),
        ("{[]: N > 0; []: N < -2}", "{[] : N <= -3} union {[] : 1 <= N}"),
        ("{[]: exists a: f(a) > N && 0 <= a < N}", "{[] : exists a : 0 <= a && N < f(a) && a < N}"),
        ("{[] -> [i]: 0 <= i < N}", "{[] -> [i] : 0 <= i && i < N}"),
        ("{[i] -> []: f(i) > 0}", "{[i] -> [] : 1 <= f(i)}"),
    ],
)
def test_parse_print_and_read_back(text: str, printed: str) -> None:
    kind = Relation if "->" in text.split("{", 1)[1] else Set
    s = kind(text)
    assert str(s) == printed
    assert kind(str(s)) == s
    assert hash(kind(str(s))) == hash(s)


def test_algebra_of_zero_tuples() -> None:
    assert POSITIVE.intersect("{[]: N < 2}") == Set("{[]: N = 1}")
    assert POSITIVE.union("{[]: N <= 0}").is_equal(UNIVERSE)
    assert POSITIVE.union("{[]: M > 0}").params == {"N", "M"}
    assert POSITIVE.is_subset(UNIVERSE)
    assert not UNIVERSE.is_subset(POSITIVE)
    assert NOTHING.is_subset(POSITIVE)
    assert POSITIVE.is_equal(Set("{[]: N >= 1}"))
    with pytest.raises(ArityError):
        POSITIVE.intersect("{[i]}")


def test_emptiness_uses_parameters_and_uf_axioms() -> None:
    assert not POSITIVE.is_empty()
    assert not UNIVERSE.is_empty()
    assert NOTHING.is_empty()
    assert POSITIVE.intersect("{[]: N < 1}").is_empty()
    assert Set("{[]: f(N) > 0 && f(M) < 0 && N = M}").is_empty()
    assert not Set("{[]: f(N) > 0 && f(M) < 0}").is_empty()


def test_membership_and_points() -> None:
    assert POSITIVE.contains((), {"N": 1})
    assert not POSITIVE.contains([], {"N": 0})
    assert UNIVERSE.points() == [()]
    assert NOTHING.points() == []
    assert POSITIVE.points({"N": 0}) == []
    calls = Set("{[]: f(N) > 0}")
    assert calls.points({"N": 1}, {"f": np.array([0, 5])}) == [()]
    assert calls.points({"N": 7}, {"f": np.array([0, 5])}) == []  # f(7) is not a value
    assert POSITIVE.bounds({"N": 3}) == []
    assert POSITIVE.bounds({"N": 0}) is None
    with pytest.raises(ArityError):
        POSITIVE.contains((0,), {"N": 1})
    with pytest.raises(SpfError, match="no value given"):
        POSITIVE.points()


def test_relations_to_and_from_zero_tuples() -> None:
    gen = Relation("{[] -> [i]: 0 <= i < N}")
    assert gen.apply(POSITIVE) == Set("{[i]: 0 <= i < N}")
    assert gen.points({"N": 2}) == [((), (0,)), ((), (1,))]
    assert gen.contains(((), (1,)), {"N": 2})
    sink = Relation("{[i] -> []: f(i) > 0}")
    assert sink.inverse() == Relation("{[] -> [i]: f(i) > 0}")
    assert sink.range() == Set("{[]: exists i: f(i) > 0}")  # empty where f <= 0
    image = sink.apply(Set("{[i]: 0 <= i < N}"))
    assert image == Set("{[]: exists i: 0 <= i < N && f(i) > 0}")
    assert image.points({"N": 3}, {"f": np.array([0, 0, 1])}) == [()]
    assert image.points({"N": 2}, {"f": np.array([0, 0, 1])}) == []
    assert Relation("{[i] -> []}").compose(gen) == Relation("{[] -> []: N >= 1}")
    assert Set("{[i]: 0 <= i < N}").as_relation(0) == gen
    assert POSITIVE.product("{[i]: i = N}") == Set("{[i]: i = N && N >= 1}")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(-2, 2), st.integers(-3, 3), st.sampled_from(["<=", "=", "!="])),
        min_size=1,
        max_size=3,
    ),
    st.booleans(),
    st.lists(st.integers(-2, 2), min_size=6, max_size=6),
)
def test_membership_matches_brute_force(
    conds: list[tuple[int, int, str]], use_f: bool, values: list[int]
) -> None:
    """A zero-tuple set is a condition on the parameters (and UF values): ``points`` is
    ``[()]`` exactly where a plain evaluation of the condition holds."""
    parts = [f"{a}N {op} {b}" for a, b, op in conds]
    if use_f:
        parts.append("f(N) >= 0")
    s = Set("{[]: " + " && ".join(parts) + "}")
    assert Set(str(s)) == s
    ops = {"<=": lambda x, y: x <= y, "=": lambda x, y: x == y, "!=": lambda x, y: x != y}
    arr = np.array(values)
    for n in range(-1, 7):
        want = all(ops[op](a * n, b) for a, b, op in conds)
        if use_f:
            want = want and 0 <= n < len(arr) and arr[n] >= 0
        assert s.points({"N": n}, {"f": arr}) == ([()] if want else [])
        assert s.contains((), {"N": n}, {"f": arr}) == want
    if s.is_empty():
        assert all(not s.contains((), {"N": n}, {"f": arr}) for n in range(-1, 7))

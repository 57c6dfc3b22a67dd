"""spf's own quasi-affine expressions agree with sympy: the same normal form, the same
value at random points and the same printed text (the set printer's output depends on it)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from spf.sets import affine
from spf.sets.affine import Aff, Call, Sym, from_sympy, to_sympy

NAMES = ("i", "j", "N", "_t0", "__t1", "k2", "B")
UFS = ("col", "rowptr", "A", "tau[]")

coeffs = st.fractions(min_value=-7, max_value=7, max_denominator=4)


def _exprs(depth: int) -> st.SearchStrategy[Aff]:
    atoms: st.SearchStrategy[Aff] = st.sampled_from(NAMES).map(affine.sym)
    if depth > 0:
        # a call's arguments use a symbol (sympy treats symbol-free calls as numbers)
        inner = _exprs(depth - 1).filter(lambda e: bool(e.free_names()))
        calls = st.builds(
            lambda name, args, c: (
                affine.call(name, [*args, affine.const(c)])
                if name.endswith("[]")
                else affine.call(name, args)
            ),
            st.sampled_from(UFS),
            st.lists(inner, min_size=1, max_size=2),
            st.integers(0, 2),
        )
        floors = inner.map(lambda e: affine.floor(e / 2))
        atoms = st.one_of(atoms, calls, floors)
    terms = st.lists(st.tuples(coeffs, atoms), max_size=4)
    return st.builds(
        lambda ts, c: affine.total([e * k for k, e in ts]) + c,
        terms,
        coeffs,
    )


exprs = _exprs(2)


@settings(max_examples=60, deadline=None)
@given(exprs)
def test_text_and_normal_form_match_sympy(e: Aff) -> None:
    s = to_sympy(e)
    assert str(e) == str(sp.expand(s))
    assert from_sympy(s) == e
    assert hash(from_sympy(s)) == hash(e)


@settings(max_examples=40, deadline=None)
@given(exprs, exprs)
def test_sums_and_floors_match_sympy(a: Aff, b: Aff) -> None:
    assert str(a - 3 * b) == str(sp.expand(to_sympy(a) - 3 * to_sympy(b)))
    f = affine.floor(a / 3 + b)
    assert str(f) == str(sp.expand(sp.floor(to_sympy(a) / 3 + to_sympy(b))))
    assert from_sympy(sp.floor(to_sympy(a) / 3 + to_sympy(b))) == f


def _value(env: dict[str, int]) -> object:
    def value(a: object) -> int:
        if isinstance(a, Sym):
            return env[a.name]
        assert isinstance(a, Call)
        args = tuple(int(x.evaluate(value)) if x.denominator() == 1 else 0 for x in a.args)
        return hash((a.name, args)) % 11 - 5

    return value


@settings(max_examples=40, deadline=None)
@given(exprs, st.lists(st.integers(-20, 20), min_size=len(NAMES), max_size=len(NAMES)))
def test_values_match_sympy(e: Aff, point: list[int]) -> None:
    env = dict(zip(NAMES, point, strict=True))
    calls = sorted(e.calls(), key=lambda c: len(str(c)))
    value = _value(env)
    got = e.evaluate(value)  # type: ignore[arg-type]
    s = to_sympy(e)
    sub = {sp.Symbol(n, integer=True): v for n, v in env.items()}
    for c in calls:  # innermost first: replace each call by its value
        sub[to_sympy(Aff.atom(c)).xreplace(sub)] = value(c)
    want = s.xreplace(sub)
    for _ in range(4):
        want = want.xreplace(sub)
    assert Fraction(str(want)) == got


@settings(max_examples=40, deadline=None)
@given(exprs, exprs)
def test_substitution_matches_sympy_xreplace(e: Aff, value: Aff) -> None:
    got = e.xreplace({Sym("i"): value})
    want = sp.expand(to_sympy(e).xreplace({sp.Symbol("i", integer=True): to_sympy(value)}))
    assert str(got) == str(want)
    assert got == from_sympy(want)


@pytest.mark.parametrize(
    ("e", "text"),
    [
        (1 - affine.sym("i"), "1 - i"),
        (
            -affine.sym("N") + affine.call("col", [affine.sym("i")]) * Fraction(3, 2),
            "-N + 3*col(i)/2",
        ),
        (affine.floor(affine.sym("i") / 2 + Fraction(1, 2)), "floor(i/2 + 1/2)"),
        (affine.floor(affine.sym("i") + Fraction(3, 2)), "i + 1"),
        (affine.call("tau[]", [affine.sym("k"), affine.const(1)]), "tau(k)[1]"),
        (affine.const(Fraction(-1, 2)), "-1/2"),
        (affine.ZERO, "0"),
    ],
)
def test_known_texts(e: Aff, text: str) -> None:
    assert str(e) == text


def test_floor_value_is_mathematical_floor() -> None:
    e = affine.floor(affine.sym("i") / 3 - Fraction(1, 2))
    for v in range(-7, 8):
        assert e.evaluate(lambda a, v=v: v) == math.floor(Fraction(v, 3) - Fraction(1, 2))


@settings(max_examples=40, deadline=None)
@given(exprs)
def test_term_list_is_sympys_add_args(e: Aff) -> None:
    s = to_sympy(e)
    want = list(s.args) if isinstance(s, sp.Add) else [s]
    assert [str(t) for t in affine.term_list(e)] == [str(t) for t in want]


def test_an_atom_equals_its_one_term_expression_with_the_same_hash() -> None:
    i = Sym("i")
    assert i.aff() == i
    assert i == i.aff()
    assert hash(i.aff()) == hash(i)
    c = Call("col", [i.aff()])
    assert c.aff() == c
    assert c == c.aff()
    assert hash(c.aff()) == hash(c)
    assert (2 * i) != i
    assert i.aff() + 1 != i
    assert {i: 1}[i.aff()] == 1


@pytest.mark.parametrize("k", [1, -1, Fraction(1), Fraction(-1), 2, Fraction(-3, 2)])
def test_division_is_multiplication_by_the_reciprocal_types_included(k: int | Fraction) -> None:
    """Dividing by 1 or -1 skips Fraction arithmetic (solving for a unit coefficient is
    frequent): the result is the same, down to which coefficients are int or Fraction."""
    x, y = Sym("x"), Sym("y")
    for e in (
        Aff({x: 2, y: -3}, 5),
        Aff({x: Fraction(1, 2), y: Fraction(4, 1)}, Fraction(-7, 3)),
        Aff({x: Fraction(6, 1)}, Fraction(2, 1)),
        Aff({}, 0),
    ):
        got, want = e / k, e * (Fraction(1) / k)
        assert got == want
        assert str(got) == str(want)
        assert [type(c) for c in got.coeffs.values()] == [type(c) for c in want.coeffs.values()]
        assert type(got.const) is type(want.const)


@pytest.mark.parametrize(
    "text",
    [
        "floor((j % 2)/2)",
        "floor((j - 2*floor(j/2))/2)",
        "(j % 2) % 2 - j % 2",
        "(j % 3) % 3 - j % 3",
    ],
)
def test_a_floor_whose_integer_part_holds_the_same_floor_adds_them(text: str) -> None:
    """``floor(j/2 - floor(j/2))`` is 0: the floor pulled out and the one left inside are the
    same atom, whose coefficients add up (before, the inner one overwrote the outer one and
    ``floor((j % 2)/2)`` read as ``floor(j/2)``)."""
    from spf import Set

    s = Set(f"{{[j]: -4 <= j <= 5 && {text} = 0}}")
    assert s.points() == [(j,) for j in range(-4, 6)]
    j = affine.sym("j")
    assert affine.floor(j / 2 - affine.floor(j / 2)) == affine.ZERO

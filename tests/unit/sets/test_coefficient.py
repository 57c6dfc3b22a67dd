"""The fast coefficient read of a quasi-affine expression is sympy's ``coeff``."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from spf.sets.linear import coefficient, sym, tsym, usym

SYMS = [tsym(0), tsym(1), usym(0), sym("N")]


@st.composite
def affine(draw: st.DrawFn) -> sp.Expr:
    """An expanded integer combination of symbols, floors and UF calls of such and a
    constant, or a product of two symbols (not affine: left to sympy)."""
    e: sp.Expr = sp.Integer(draw(st.integers(-5, 5)))
    for s in SYMS:
        e += draw(st.integers(-3, 3)) * s
    if draw(st.booleans()):
        inner = draw(st.sampled_from(SYMS)) + draw(st.integers(-2, 2))
        e += draw(st.integers(-2, 2)) * sp.floor(inner / draw(st.integers(2, 4)))
    if draw(st.booleans()):
        e += draw(st.integers(-2, 2)) * sp.Function("col")(draw(st.sampled_from(SYMS)) + 1)
    if draw(st.booleans()):
        e += draw(st.sampled_from(SYMS)) * draw(st.sampled_from(SYMS))
    return sp.expand(e)


@settings(max_examples=50, deadline=None)
@given(affine(), st.sampled_from(SYMS))
def test_coefficient_is_sympys_coeff(e: sp.Expr, s: sp.Symbol) -> None:
    assert coefficient(e, s) == e.coeff(s)


def test_coefficient_of_a_lone_symbol_and_of_a_constant() -> None:
    assert coefficient(tsym(0), tsym(0)) == 1
    assert coefficient(-tsym(0), tsym(0)) == -1
    assert coefficient(sp.Integer(3), tsym(0)) == 0

"""The coefficient read of a quasi-affine expression is sympy's ``coeff``."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from spf.sets.affine import from_sympy
from spf.sets.linear import coefficient, sym, tsym, usym

SYMS = [tsym(0), tsym(1), usym(0), sym("N")]
SP_SYMS = [sp.Symbol(s.name, integer=True) for s in SYMS]


@st.composite
def affine(draw: st.DrawFn) -> sp.Expr:
    """An expanded integer combination of symbols, floors and UF calls of such and a
    constant (a product of two symbols is not affine: spf's expressions cannot hold one)."""
    e: sp.Expr = sp.Integer(draw(st.integers(-5, 5)))
    for s in SP_SYMS:
        e += draw(st.integers(-3, 3)) * s
    if draw(st.booleans()):
        inner = draw(st.sampled_from(SP_SYMS)) + draw(st.integers(-2, 2))
        e += draw(st.integers(-2, 2)) * sp.floor(inner / draw(st.integers(2, 4)))
    if draw(st.booleans()):
        e += draw(st.integers(-2, 2)) * sp.Function("col")(draw(st.sampled_from(SP_SYMS)) + 1)
    return sp.expand(e)


@settings(max_examples=50, deadline=None)
@given(affine(), st.sampled_from(range(len(SYMS))))
def test_coefficient_is_sympys_coeff(e: sp.Expr, k: int) -> None:
    assert coefficient(from_sympy(e), SYMS[k]) == e.coeff(SP_SYMS[k])


def test_coefficient_of_a_lone_symbol_and_of_a_constant() -> None:
    assert coefficient(tsym(0).aff(), tsym(0)) == 1
    assert coefficient(-tsym(0), tsym(0)) == -1
    assert coefficient(from_sympy(sp.Integer(3)), tsym(0)) == 0

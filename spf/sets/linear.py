"""Quasi-affine expressions: sympy <-> isl text and isl constraints -> sympy.

The only module of ``spf.sets`` that reads isl constraints coefficient by coefficient. Symbols
are sympy ``Symbol(name, integer=True)``; quasi-affine means sums of integer multiples of
symbols and of ``floor(e / c)`` terms.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING, TypeAlias

import islpy as isl

from spf.sets.memo import Table, memo

if TYPE_CHECKING:
    import sympy as sp
else:
    from spf._lazy import sympy as sp

DT = isl.dim_type


@cache
def sym(name: str) -> sp.Symbol:
    """The integer symbol ``name`` (cached: symbols are compared by name and assumptions)."""
    return sp.Symbol(name, integer=True)


@cache
def tsym(k: int) -> sp.Symbol:
    """Internal symbol of tuple position ``k``."""
    return sym(f"__t{k}")


@cache
def esym(k: int) -> sp.Symbol:
    """Internal symbol of hidden (existential) variable ``k``."""
    return sym(f"__e{k}")


@cache
def usym(k: int) -> sp.Symbol:
    """Internal symbol of the value of UF call term ``k``."""
    return sym(f"__u{k}")


def internal_kind(s: sp.Symbol) -> tuple[str, int] | None:
    """``('t', 3)`` for ``__t3`` and so on; None for a parameter."""
    name = s.name
    if name.startswith("__") and len(name) > 3 and name[2] in "teu" and name[3:].isdigit():
        return name[2], int(name[3:])
    return None


def param_names(obj: isl.Set | isl.Space | isl.Aff) -> list[str]:
    """Names of the parameters of an isl object, in isl's order."""
    return [str(obj.get_dim_name(DT.param, k)) for k in range(obj.dim(DT.param))]


# ----------------------------------------------------------------------------- sympy -> isl
def to_isl(expr: sp.Expr) -> str:
    """Quasi-affine sympy expression -> isl syntax (``floor((2*i + 1)/4)`` etc.)."""
    expr = sp.expand(expr)
    if expr.is_Integer:
        return str(int(expr))
    if isinstance(expr, sp.Symbol):
        return str(expr.name)
    if isinstance(expr, sp.floor):
        num, den = integral(expr.args[0])
        return f"floor(({to_isl(num)})/{den})"
    if isinstance(expr, sp.Add):
        return "(" + " + ".join(to_isl(t) for t in expr.args) + ")"
    if isinstance(expr, sp.Mul):
        coeff, rest = expr.as_coeff_Mul()
        if coeff.is_Integer and not rest.is_Number:
            return f"{int(coeff)}*{to_isl(rest)}"
        if coeff.is_Rational:  # a rational multiple: only meaningful under floor
            num, den = integral(expr)
            return f"({to_isl(num)})/{den}"
    raise ValueError(f"not a quasi-affine expression: {expr}")


def integral(expr: sp.Expr) -> tuple[sp.Expr, int]:
    """``expr = num / den`` with ``num`` having integer coefficients."""
    expr = sp.expand(expr)
    den = 1
    for term in sp.Add.make_args(expr):
        coeff = term.as_coeff_Mul()[0]
        if coeff.is_Rational:
            den = math.lcm(den, int(sp.Rational(coeff).q))
    return sp.expand(expr * den), den


def coefficient(expr: sp.Expr, s: sp.Symbol) -> sp.Expr:
    """``expr.coeff(s)`` for an expanded quasi-affine ``expr`` (UF calls and floors count
    as atoms): the sum of the numeric factors of its terms ``c*s`` (sympy's general
    ``coeff`` is slow, and canonicalising asks it for every unnamed position of every
    constraint). Any other shape of term is left to sympy."""
    total: sp.Expr = sp.Integer(0)
    for term in sp.Add.make_args(expr):
        if term == s:
            total += 1
        elif term.is_Mul:
            c, rest = term.as_coeff_Mul()
            if not c.is_Number or rest.is_Mul:
                return expr.coeff(s)
            if rest == s:
                total += c
        elif not (term.is_Number or term.is_Symbol or term.is_Function):
            return expr.coeff(s)
    return total


def is_quasi_affine(expr: sp.Expr) -> bool:
    """True when ``expr`` is built from integers, symbols, + and integer-scaled floor terms."""
    try:
        to_isl(expr)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- isl -> sympy
def _frac(v: isl.Val) -> Fraction:
    """The exact value of a rational isl value (isl integers are unbounded; ``get_num_si``
    would wrap values outside int64)."""
    return Fraction(v.to_str())


def val(n: int) -> isl.Val:
    """An exact isl value of the Python integer ``n`` (islpy's ``Val(int)`` takes only a
    C long, so values outside int64 go through their decimal text)."""
    return isl.Val(str(int(n)))


def _rat(v: Fraction) -> sp.Rational:
    return sp.Rational(v.numerator, v.denominator)


def _coeff(v: isl.Val) -> sp.Rational:
    """A rational isl value as sympy (integers, the usual case, without a text round trip)."""
    if v.is_int():
        return sp.Integer(v.to_python())
    return _rat(_frac(v))


def aff_to_sympy(aff: isl.Aff, names: Sequence[sp.Symbol]) -> sp.Expr:
    """An isl affine expression over set dims named by ``names`` -> sympy (divs as floor)."""
    terms: list[sp.Expr] = [_coeff(aff.get_constant_val())]
    for k in range(aff.dim(DT.in_)):
        c = aff.get_coefficient_val(DT.in_, k)
        if not c.is_zero():
            terms.append(_coeff(c) * names[k])
    for k in range(aff.dim(DT.param)):
        c = aff.get_coefficient_val(DT.param, k)
        if not c.is_zero():
            terms.append(_coeff(c) * sym(str(aff.get_dim_name(DT.param, k))))
    for d in range(aff.dim(DT.div)):
        c = aff.get_coefficient_val(DT.div, d)
        if not c.is_zero():
            terms.append(_coeff(c) * sp.floor(aff_to_sympy(aff.get_div(d), names)))
    return sp.expand(sp.Add(*terms))


def constraint_to_sympy(con: isl.Constraint, names: Sequence[sp.Symbol]) -> sp.Expr:
    """The expression ``e`` of an isl constraint ``e = 0`` / ``e >= 0``."""
    return aff_to_sympy(con.get_aff(), names)


Conjunction: TypeAlias = "tuple[tuple[bool, sp.Expr], ...]"
_CONSTRAINTS: Table[tuple[str, tuple[sp.Symbol, ...]], Conjunction] = Table(8192)


def basic_constraints(bset: isl.BasicSet, names: Sequence[sp.Symbol]) -> list[tuple[bool, sp.Expr]]:
    """``[(is_equality, e)]`` of a basic set without redundant constraints.

    Memoized by the basic set's text and ``names``: canonicalising and printing read the
    same basic sets again and again, and the sympy conversion is the expensive part.
    """
    key = (str(bset), tuple(names))
    got = _CONSTRAINTS.get(key)
    if got is None:
        bset = bset.remove_redundancies()
        got = tuple(
            (c.is_equality(), constraint_to_sympy(c, names)) for c in bset.get_constraints()
        )
        _CONSTRAINTS.put(key, got)
    return list(got)


def with_known_divs(iset: isl.Set) -> isl.Set:
    """``iset`` coalesced, with every existential expressed as a floor division; when
    coalescing brings back an existential isl cannot name, the uncoalesced pieces."""
    computed = iset.compute_divs()
    merged = computed.coalesce()
    try:
        for bset in merged.get_basic_sets():
            for con in bset.get_constraints():
                con.get_aff()
    except isl.Error:
        return computed
    return merged


def dnf(iset: isl.Set, names: Sequence[sp.Symbol]) -> list[list[tuple[bool, sp.Expr]]]:
    """A set as a list of conjunctions (one per basic set) of constraints."""
    return [basic_constraints(b, names) for b in with_known_divs(iset).get_basic_sets()]


# ----------------------------------------------------------------------------- evaluation
def evaluate(expr: sp.Expr, env: Mapping[sp.Symbol, int]) -> int:
    """Exact integer value of a quasi-affine expression under ``env``."""
    return int(_eval(_expanded(expr), env))


@memo(16384)
def _expanded(expr: sp.Expr) -> sp.Expr:
    """``sp.expand(expr)``, memoized (the same UF arguments are evaluated at many points)."""
    return sp.expand(expr)


def _eval(expr: sp.Basic, env: Mapping[sp.Symbol, int]) -> Fraction:
    if isinstance(expr, sp.Symbol):
        return Fraction(env[expr])
    if expr.is_Rational:
        r = sp.Rational(expr)
        return Fraction(int(r.p), int(r.q))
    if isinstance(expr, sp.floor):
        return Fraction(math.floor(_eval(expr.args[0], env)))
    if isinstance(expr, sp.Add):
        return sum((_eval(a, env) for a in expr.args), Fraction(0))
    if isinstance(expr, sp.Mul):
        out = Fraction(1)
        for a in expr.args:
            out *= _eval(a, env)
        return out
    raise ValueError(f"cannot evaluate {expr}")


def free_names(exprs: Iterable[sp.Expr]) -> set[str]:
    """Names of the symbols used by ``exprs``."""
    out: set[str] = set()
    for e in exprs:
        out |= _names(e)
    return out


@memo(16384)
def _names(e: sp.Expr) -> frozenset[str]:
    """Names of the symbols of one expression (memoized: sympy recomputes
    ``free_symbols`` by walking the tree on every access)."""
    return frozenset(s.name for s in e.free_symbols if isinstance(s, sp.Symbol))

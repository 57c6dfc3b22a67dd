"""Quasi-affine expressions: :class:`~spf.sets.affine.Aff` <-> isl text and isl constraints.

The only module of ``spf.sets`` that reads isl constraints coefficient by coefficient. Symbols
are :class:`~spf.sets.affine.Sym` (integers); quasi-affine means sums of rational multiples of
symbols, UF calls and ``floor(e)`` terms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from functools import cache
from typing import TypeAlias

import islpy as isl

from spf.sets import affine
from spf.sets.affine import Aff, Atom, Floor, Num, Sym
from spf.sets.memo import Table

DT = isl.dim_type


@cache
def sym(name: str) -> Sym:
    """The integer symbol ``name`` (cached)."""
    return Sym(name)


@cache
def tsym(k: int) -> Sym:
    """Internal symbol of tuple position ``k``."""
    return sym(f"__t{k}")


@cache
def esym(k: int) -> Sym:
    """Internal symbol of hidden (existential) variable ``k``."""
    return sym(f"__e{k}")


@cache
def usym(k: int) -> Sym:
    """Internal symbol of the value of UF call term ``k``."""
    return sym(f"__u{k}")


def internal_kind(s: Sym) -> tuple[str, int] | None:
    """``('t', 3)`` for ``__t3`` and so on; None for a parameter."""
    name = s.name
    if name.startswith("__") and len(name) > 3 and name[2] in "teu" and name[3:].isdigit():
        return name[2], int(name[3:])
    return None


def param_names(obj: isl.Set | isl.Space | isl.Aff) -> list[str]:
    """Names of the parameters of an isl object, in isl's order."""
    return [str(obj.get_dim_name(DT.param, k)) for k in range(obj.dim(DT.param))]


# ----------------------------------------------------------------------------- Aff -> isl
def to_isl(expr: Aff) -> str:
    """Quasi-affine expression -> isl syntax (``floor((2*i + 1)/4)`` etc.); ``ValueError``
    for a UF call (isl has none) or a rational multiple outside a floor."""
    num, den = integral(expr)
    if den != 1:
        return f"({_isl_integral(num)})/{den}"
    return _isl_integral(num)


def _isl_integral(expr: Aff) -> str:
    if not expr.coeffs:
        return str(int(expr.const))
    parts = [_isl_term(a, int(c)) for a, c in expr.ordered()]
    if expr.const:
        parts.append(str(int(expr.const)))
    return parts[0] if len(parts) == 1 else "(" + " + ".join(parts) + ")"


def _isl_term(a: Atom, c: int) -> str:
    if isinstance(a, Sym):
        text = a.name
    elif isinstance(a, Floor):
        num, den = integral(a.arg)
        text = f"floor(({_isl_integral(num)})/{den})"
    else:
        raise ValueError(f"not a quasi-affine expression: {a}")
    return text if c == 1 else f"{c}*{text}"


def integral(expr: Aff) -> tuple[Aff, int]:
    """``expr = num / den`` with ``num`` having integer coefficients."""
    den = expr.denominator()
    return (expr * den if den != 1 else expr), den


def coefficient(expr: Aff, s: Atom) -> Num:
    """The coefficient of ``s`` in ``expr`` (UF calls and floors count as atoms)."""
    return expr.coeff(s)


def is_quasi_affine(expr: Aff) -> bool:
    """True when ``expr`` is built from integers, symbols, + and integer-scaled floor terms."""
    try:
        to_isl(expr)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- isl -> Aff
def _frac(v: isl.Val) -> Fraction:
    """The exact value of a rational isl value (isl integers are unbounded; ``get_num_si``
    would wrap values outside int64)."""
    return Fraction(v.to_str())


def val(n: int) -> isl.Val:
    """An exact isl value of the Python integer ``n`` (islpy's ``Val(int)`` takes only a
    C long, so values outside int64 go through their decimal text)."""
    return isl.Val(str(int(n)))


def _coeff(v: isl.Val) -> Num:
    """A rational isl value exactly (integers, the usual case, as ``int`` without a text
    round trip)."""
    if v.is_int():
        return int(v.to_python())
    return _frac(v)


def aff_to_expr(aff: isl.Aff, names: Sequence[Sym]) -> Aff:
    """An isl affine expression over set dims named by ``names`` (divs as floor)."""
    out: dict[Atom, Num] = {}
    for k in range(aff.dim(DT.in_)):
        c = aff.get_coefficient_val(DT.in_, k)
        if not c.is_zero():
            out[names[k]] = _coeff(c)
    for k in range(aff.dim(DT.param)):
        c = aff.get_coefficient_val(DT.param, k)
        if not c.is_zero():
            out[sym(str(aff.get_dim_name(DT.param, k)))] = _coeff(c)
    expr = Aff(out, _coeff(aff.get_constant_val()))
    for d in range(aff.dim(DT.div)):
        c = aff.get_coefficient_val(DT.div, d)
        if not c.is_zero():
            expr = expr + affine.floor(aff_to_expr(aff.get_div(d), names)) * _coeff(c)
    return expr


def constraint_to_expr(con: isl.Constraint, names: Sequence[Sym]) -> Aff:
    """The expression ``e`` of an isl constraint ``e = 0`` / ``e >= 0``."""
    return aff_to_expr(con.get_aff(), names)


Conjunction: TypeAlias = "tuple[tuple[bool, Aff], ...]"
_CONSTRAINTS: Table[tuple[str, tuple[Sym, ...]], Conjunction] = Table(8192)


def basic_constraints(bset: isl.BasicSet, names: Sequence[Sym]) -> list[tuple[bool, Aff]]:
    """``[(is_equality, e)]`` of a basic set without redundant constraints.

    Memoized by the basic set's text and ``names``: canonicalising and printing read the
    same basic sets again and again, and the conversion is the expensive part.
    """
    key = (bset.to_str(), tuple(names))
    got = _CONSTRAINTS.get(key)
    if got is None:
        bset = bset.remove_redundancies()
        got = tuple((c.is_equality(), constraint_to_expr(c, names)) for c in bset.get_constraints())
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


def dnf(iset: isl.Set, names: Sequence[Sym]) -> list[list[tuple[bool, Aff]]]:
    """A set as a list of conjunctions (one per basic set) of constraints."""
    return [basic_constraints(b, names) for b in with_known_divs(iset).get_basic_sets()]


# ----------------------------------------------------------------------------- evaluation
def evaluate(expr: Aff, env: Mapping[Atom, int]) -> int:
    """Exact integer value of a quasi-affine expression under ``env`` (symbols and UF
    calls to values)."""
    return int(expr.evaluate(env.__getitem__))


def free_names(exprs: Iterable[Aff]) -> set[str]:
    """Names of the symbols used by ``exprs``."""
    out: set[str] = set()
    for e in exprs:
        out |= e.free_names()
    return out

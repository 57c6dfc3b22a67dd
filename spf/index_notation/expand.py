"""A formula's right-hand side as a sum of monomials, each with its summed indices.

An index on the right that is not on the left is summed over the smallest subexpression
holding all its occurrences (as TACO places reductions): in ``y(i) = A(i,j)*x(j) + z(i)``
the sum over ``j`` covers ``A(i,j)*x(j)`` only, in ``s = x(i) + y(i)`` it covers both terms.
A sum's terms are one subexpression however they are grouped, and the sum over an index
covers only those of its terms that hold it: ``y(i) = A(i,j) + B(i,j) + w(i)`` adds ``w(i)``
once, as ``(A(i,j) + B(i,j)) + w(i)`` does; a product's factors all take it
(``s = (x(i) + 1) * (z(i) + 1)`` sums its ``1`` over ``i``).
Products distribute over sums, so the right-hand side becomes a list of :class:`Monomial`
(a coefficient, a product of tensor accesses, the summed indices in its scope); equal
monomials are merged and monomials whose coefficient is zero are dropped.

>>> from spf.index_notation.parse import parse
>>> [str(m) for m in expand(parse("y(i) = A(i,j)*x(j) + 2*z(i)"))]
['A(i,j)*x(j) summed over j', '2*z(i)']
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spf.errors import ArgumentError
from spf.index_notation.parse import Access, Add, Assignment, Const, Expr, Mul, Neg

__all__ = ["MAX_TERMS", "Monomial", "children", "expand"]

MAX_TERMS = 64
"""A formula whose right-hand side distributes into more monomials is refused."""


@dataclass(frozen=True)
class Monomial:
    """``coef * factors[0] * factors[1] * ...``, summed over ``sums``."""

    coef: float
    factors: tuple[Access, ...]
    sums: frozenset[str]

    def indices(self) -> set[str]:
        """Every index of the factors."""
        return {v for f in self.factors for v in f.indices}

    def __str__(self) -> str:
        parts = [f"{f.name}({','.join(f.indices)})" if f.indices else f.name for f in self.factors]
        if self.coef != 1 or not parts:
            parts.insert(0, f"{self.coef:g}")
        text = "*".join(parts)
        return f"{text} summed over {','.join(sorted(self.sums))}" if self.sums else text


def _occurs(node: Expr) -> set[str]:
    if isinstance(node, Access):
        return set(node.indices)
    if isinstance(node, Const):
        return set()
    if isinstance(node, Neg):
        return _occurs(node.operand)
    kids = node.terms if isinstance(node, Add) else node.factors
    return set().union(*(_occurs(k) for k in kids))


def children(node: Expr) -> tuple[Expr, ...]:
    """The operands of ``node`` (none for an access or a constant)."""
    if isinstance(node, Neg):
        return (node.operand,)
    if isinstance(node, Add):
        return node.terms
    if isinstance(node, Mul):
        return node.factors
    return ()


def _scopes(rhs: Expr, summed: set[str]) -> dict[int, set[str]]:
    """For each node (by id) the summed indices whose sum it is the scope of."""
    scopes: dict[int, set[str]] = {}
    for v in summed:
        todo = [rhs]
        while todo:
            node = todo.pop()
            holding = [k for k in children(node) if v in _occurs(k)]
            if len(holding) == 1:
                todo.append(holding[0])
            elif isinstance(node, Add) and holding:
                # A sum's terms are one subexpression however they are grouped: the sum
                # over v covers each term that holds v, not the others ('A(i,j) + B(i,j) +
                # w(i)' adds w(i) once, as '(A(i,j) + B(i,j)) + w(i)' does).
                todo.extend(holding)
            else:
                scopes.setdefault(id(node), set()).add(v)
    return scopes


_Raw = tuple[float, tuple[Access, ...], frozenset[str]]


def _expand(node: Expr, scopes: dict[int, set[str]]) -> list[_Raw]:
    out: list[_Raw]
    if isinstance(node, Access):
        out = [(1.0, (node,), frozenset())]
    elif isinstance(node, Const):
        out = [(node.value, (), frozenset())]
    elif isinstance(node, Neg):
        out = [(-c, f, s) for c, f, s in _expand(node.operand, scopes)]
    elif isinstance(node, Add):
        out = []
        for term, sign in zip(node.terms, node.signs, strict=True):
            out += [(sign * c, f, s) for c, f, s in _expand(term, scopes)]
    else:
        out = [(1.0, (), frozenset())]
        for factor in node.factors:
            right = _expand(factor, scopes)
            out = [(c1 * c2, f1 + f2, s1 | s2) for c1, f1, s1 in out for c2, f2, s2 in right]
            if len(out) > MAX_TERMS:
                break
    if len(out) > MAX_TERMS:
        raise ArgumentError(
            f"einsum: the right-hand side distributes into more than {MAX_TERMS} products; "
            "split the formula into several einsum calls"
        )
    here = frozenset(scopes.get(id(node), ()))
    return [(c, f, s | here) for c, f, s in out] if here else out


def _key(m: _Raw) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], frozenset[str]]:
    return tuple(sorted((f.name, f.indices) for f in m[1])), m[2]


def expand(assignment: Assignment) -> list[Monomial]:
    """The monomials of ``assignment``'s right-hand side (see the module docstring)."""
    summed = _occurs(assignment.rhs) - set(assignment.output.indices)
    merged: dict[object, _Raw] = {}
    for raw in _expand(assignment.rhs, _scopes(assignment.rhs, summed)):
        _finite(raw, assignment)
        key = _key(raw)
        if key in merged:
            old = merged[key]
            merged[key] = (old[0] + raw[0], old[1], old[2])
            _finite(merged[key], assignment)
        else:
            merged[key] = raw
    return [Monomial(c, f, s) for c, f, s in merged.values() if c != 0.0]


def _finite(raw: _Raw, assignment: Assignment) -> None:
    """Refuse a product whose constants multiply or add up to inf or nan: the statement
    would print it as a name ('inf * x(i)'), an error about an unknown parameter."""
    if not math.isfinite(raw[0]):
        product = Monomial(1.0, raw[1], raw[2])
        raise ArgumentError(
            f"einsum {assignment.text!r}: the constants of the product {product} combine to "
            f"{raw[0]}, beyond a double; scale them (or the operands) down"
        )

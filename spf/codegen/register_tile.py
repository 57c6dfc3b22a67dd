"""The cells of a register tile that keeps the source's order of floating-point operations.

The C printer keeps the accumulation targets of one iteration of a loop ``n`` in a small
local array (``spf_tile``) across ``n`` when ``n`` encloses a perfect nest of constant-trip
loops around one ``+=``/``-=``/``*=`` whose target does not change across ``n``:
unroll-and-jam's scalar replacement. Each cell starts from its target's current value,
takes that target's updates in the source's order and is stored back after ``n``, so every
element sees the operations the source performs, in the source's order (API §15: no default
schedule reassociates a floating-point reduction; a zero-filled tile added at the end
would). That needs exactly one cell per target element: the cells are indexed by the tile
loops the target's indices use, and the map from those loops to the element must be one to
one, which :func:`tile_cells` checks for affine indices (cell by cell: a tile has at most a
few hundred); anything else gets no tile (the updates stay in memory).

Pure Python over the loop AST and spf's set syntax: no isl here (a printer uses it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TypeAlias

from spf.codegen.loop_ast import Expr, Int, Op, Var, expr_vars
from spf.sets import syntax as ast

Linear: TypeAlias = dict[str, Fraction]
"""Coefficients of an affine expression by variable name (the constant term left out)."""

IndexForm: TypeAlias = tuple[tuple[tuple[str, int], ...] | None, frozenset[str]]
"""One target index: its integer coefficients by name (None: not affine) and the names it
uses."""


def _scaled(a: Linear, k: Fraction) -> Linear:
    return {n: c * k for n, c in a.items()}


def _plus(a: Linear, b: Linear) -> Linear:
    out = dict(a)
    for n, c in b.items():
        out[n] = out.get(n, Fraction(0)) + c
    return {n: c for n, c in out.items() if c}


def _product(a: tuple[Linear, Fraction | None], b: tuple[Linear, Fraction | None]) -> Linear | None:
    """``a * b`` when one side is a constant (its value given), else None."""
    (la, ka), (lb, kb) = a, b
    if ka is not None and not la:
        return _scaled(lb, ka)
    if kb is not None and not lb:
        return _scaled(la, kb)
    return None


def loop_affine(e: Expr) -> tuple[Linear, Fraction | None] | None:
    """``e`` (loop AST) as ``(coefficients, constant)``: the constant is None when some
    name is only known at run time; None when ``e`` is not affine."""
    if isinstance(e, Int):
        return {}, Fraction(e.value)
    if isinstance(e, Var):
        return {e.name: Fraction(1)}, Fraction(0)
    if not isinstance(e, Op) or len(e.args) != (1 if e.op == "neg" else 2):
        return None
    if e.op not in ("+", "-", "*", "neg"):
        return None
    parts = [loop_affine(a) for a in e.args]
    if any(p is None for p in parts):
        return None
    ps = [p for p in parts if p is not None]
    if e.op == "neg":
        lin, k = ps[0]
        return _scaled(lin, Fraction(-1)), None if k is None else -k
    if e.op == "*":
        lin2 = _product(ps[0], ps[1])
        return None if lin2 is None else (lin2, None)
    sign = Fraction(-1) if e.op == "-" else Fraction(1)
    return _plus(ps[0][0], _scaled(ps[1][0], sign)), None


def _syntax_affine(e: ast.Expr) -> tuple[Linear, Fraction | None] | None:
    if isinstance(e, ast.Num):
        return {}, Fraction(e.value)
    if isinstance(e, ast.Name):
        return {e.name: Fraction(1)}, Fraction(0)
    if isinstance(e, ast.Neg):
        inner = _syntax_affine(e.operand)
        if inner is None:
            return None
        return _scaled(inner[0], Fraction(-1)), None if inner[1] is None else -inner[1]
    if not isinstance(e, ast.BinOp) or e.op not in ("+", "-", "*"):
        return None
    left, right = _syntax_affine(e.left), _syntax_affine(e.right)
    if left is None or right is None:
        return None
    if e.op == "*":
        lin = _product(left, right)
        return None if lin is None else (lin, None)
    sign = Fraction(-1) if e.op == "-" else Fraction(1)
    return _plus(left[0], _scaled(right[0], sign)), None


def index_form(e: ast.Expr) -> IndexForm:
    """One target index expression (parsed set syntax) as an :data:`IndexForm`."""
    names = frozenset(_names(e))
    got = _syntax_affine(e)
    if got is None or any(c.denominator != 1 for c in got[0].values()):
        return None, names
    return tuple(sorted((n, int(c)) for n, c in got[0].items())), names


def _names(e: ast.Expr) -> list[str]:
    if isinstance(e, ast.Name):
        return [e.name]
    if isinstance(e, ast.Neg):
        return _names(e.operand)
    if isinstance(e, ast.BinOp):
        return _names(e.left) + _names(e.right)
    if isinstance(e, ast.Floor):
        return _names(e.operand)
    if isinstance(e, ast.Call):
        return [n for a in e.args for n in _names(a)]
    return []


def tile_cells(
    forms: Sequence[IndexForm],
    args: Mapping[str, Expr],
    loops: Sequence[tuple[str, int]],
) -> list[tuple[str, int]] | None:
    """The tile loops (``(var, trip)``, outer first) that index the cells: those the
    target's indices use, when they determine the element one to one; None otherwise.

    ``forms`` are the target's indices over the statement's iterators, ``args`` the loop
    AST value of each iterator at the call, ``loops`` the constant-trip loops of the tile.
    """
    tile = {v for v, _ in loops}
    rows: list[Linear] = []
    seen: set[str] = set()  # tile loops the printed target mentions
    for coeffs, names in forms:
        moving = [n for n in names if n in args and tile & set(expr_vars(args[n]))]
        if not moving:
            continue
        seen |= {v for n in moving for v in expr_vars(args[n]) if v in tile}
        if coeffs is None:
            return None
        row: Linear = {}
        for name, c in coeffs:
            if name not in moving:
                continue
            arg = loop_affine(args[name])
            if arg is None:
                return None
            row = _plus(row, _scaled({v: k for v, k in arg[0].items() if v in tile}, Fraction(c)))
        rows.append(row)
    used = [(v, trip) for v, trip in loops if any(r.get(v) for r in rows)]
    if seen != {v for v, _ in used} or not _one_to_one(rows, used):
        return None
    return used


def _one_to_one(rows: list[Linear], used: list[tuple[str, int]]) -> bool:
    """Whether the cells (every value ``0 .. trip - 1`` of each used loop; at most a few
    hundred) reach pairwise different elements under the affine ``rows``."""
    seen: set[tuple[Fraction, ...]] = set()
    for point in itertools.product(*(range(trip) for _, trip in used)):
        at = dict(zip((v for v, _ in used), point, strict=True))
        seen.add(tuple(sum((c * at[v] for v, c in r.items()), Fraction(0)) for r in rows))
    return len(seen) == math.prod(trip for _, trip in used)


__all__ = ["IndexForm", "index_form", "loop_affine", "tile_cells"]

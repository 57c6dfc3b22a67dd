"""The elements a send or receive moves: ``count`` consecutive elements of a row-major
array from ``index`` on (MPI's buffer of ``count`` elements at ``&buffer(index)``).

The region is an access relation ``{[iterators] -> [e0, ..., e(r-1)] : ...}`` that the
dependence analysis and the bounds proofs use like any other access, so it must hold every
element the run covers (a smaller region would hide dependences) and no other one (a larger
region would be refused as out of bounds). Three exact forms, tried in order:

* **whole rows** (or whole trailing blocks): the index is 0 on the dimensions ``m ..`` and
  ``count`` is ``q`` times their extents' product (``2*M`` from ``(i, 0)`` of an
  ``N x M`` array: ``q = 2`` rows), for symbolic extents too: ``i <= e0 < i + q``, the
  other dimensions whole;
* **constant trailing extents**: the flat (row-major) position lies in ``[start, start +
  count)``, an affine constraint because every stride is a constant;
* **one row**: ``count`` elements along the last dimension (the run stays within one row;
  the bounds proof refuses it when it may not).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sympy as sp
else:
    from spf._lazy import sympy as sp

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def region_constraints(
    index: Sequence[str],
    count: str,
    shape: Sequence[int | str] | None,
    outs: Sequence[str],
) -> list[str]:
    """Constraints over ``outs`` (one name per dimension) that describe the run of ``count``
    elements from ``index`` in an array of ``shape`` (None: unknown; then along the last
    dimension), as set-text conjuncts (see the module docstring)."""
    rank = len(index)
    if shape is not None and len(shape) == rank and rank > 1:
        found = _whole_rows(index, count, shape, outs)
        if found is None and all(isinstance(d, int) for d in shape[1:]):
            found = _flat(index, count, shape, outs)
        if found is not None:
            return found
    conds = [f"{outs[k]} = {index[k]}" for k in range(rank - 1)]
    last = index[-1]
    conds.append(f"{last} <= {outs[-1]} < {last} + ({count})")
    return conds


def _whole_rows(
    index: Sequence[str], count: str, shape: Sequence[int | str], outs: Sequence[str]
) -> list[str] | None:
    """The whole-trailing-block form, taking the most trailing dimensions it can."""
    rank = len(index)
    for m in range(1, rank):
        if not all(_is_zero(index[k]) for k in range(m, rank)):
            continue
        q = _quotient(count, [str(d) for d in shape[m:]])
        if q is None:
            continue
        conds = [f"{outs[k]} = {index[k]}" for k in range(m - 1)]
        first = index[m - 1]
        conds.append(f"{first} <= {outs[m - 1]} < {first} + ({q})")
        conds += [f"0 <= {outs[k]} < {shape[k]}" for k in range(m, rank)]
        return conds
    return None


def _flat(
    index: Sequence[str], count: str, shape: Sequence[int | str], outs: Sequence[str]
) -> list[str]:
    """The flat form: every stride is a constant (``shape[1:]`` are ints)."""
    strides = [1] * len(index)
    for k in range(len(index) - 2, -1, -1):
        extent = shape[k + 1]
        assert isinstance(extent, int)
        strides[k] = strides[k + 1] * extent
    flat = " + ".join(f"{s}*{o}" for s, o in zip(strides, outs, strict=True))
    start = " + ".join(f"{s}*({e})" for s, e in zip(strides, index, strict=True))
    conds = [f"0 <= {outs[k]} < {shape[k]}" for k in range(1, len(index))]
    conds.append(f"{start} <= {flat} < {start} + ({count})")
    return conds


def _symbols(*texts: str) -> dict[str, sp.Symbol]:
    names = {n for t in texts for n in _NAME.findall(t)}
    return {n: sp.Symbol(n, integer=True) for n in names}


def _parse(text: str, names: dict[str, sp.Symbol]) -> sp.Expr | None:
    try:
        return sp.parse_expr(text, local_dict=names)
    except (SyntaxError, TypeError, ValueError, sp.SympifyError):
        return None


def _is_zero(text: str) -> bool:
    value = _parse(text, _symbols(text))
    return value is not None and bool(sp.simplify(value) == 0)


def _quotient(count: str, extents: Sequence[str]) -> str | None:
    """``count / (extent product)`` as text when it is a polynomial with integer
    coefficients (``"2*M"`` by ``["M"]``: ``"2"``), else None."""
    names = _symbols(count, *extents)
    num = _parse(count, names)
    den = sp.Integer(1)
    for e in extents:
        factor = _parse(e, names)
        if factor is None:
            return None
        den *= factor
    if num is None or den == 0:
        return None
    q = sp.cancel(num / den)
    top, bottom = sp.fraction(sp.together(q))
    gens = list(names.values())
    if bottom != 1 or not q.is_polynomial(*gens):
        return None
    coeffs = sp.Poly(top, *gens).coeffs() if gens else [top]
    if not all(c.is_integer for c in coeffs):
        return None
    return str(sp.expand(q))

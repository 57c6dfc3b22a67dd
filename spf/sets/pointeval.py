"""A body's UF arguments and linear conditions evaluated at isl sample points, vectorised.

The emptiness search (:mod:`spf.sets.emptiness`) takes isl's sample point of a piece and asks
which pair of UF calls the point violates (equal arguments with different values, or values
out of the order a monotonic UF needs), and the facts' oracle (:mod:`spf.sets.facts`) asks
which instances of the facts the point violates. Evaluating expressions term by term
and testing isl sets one by one at every point was most of the search's time. Here each
affine expression over the body's dims and parameters is compiled once into a row of
integer coefficients (:class:`Layout`), so one matrix-vector product evaluates all of a
body's UF arguments at a point and the pairs are compared as arrays (:class:`PairCheck`),
and an isl set without existential variables becomes a matrix of constraint rows tested
the same way (:class:`LinearTest`). Coordinates are numpy ``int64`` while no product can
overflow, exact Python integers (``object`` arrays) otherwise. What cannot be compiled (an
argument with ``floor``, a set with existential variables, a parameter the point does not
give) is reported as such, and the callers take the exact slow path.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from spf.sets.affine import Sym
from spf.sets.linear import DT, param_names
from spf.sets.memo import memo

if TYPE_CHECKING:
    import islpy as isl

    from spf.sets.affine import Aff
    from spf.sets.body import Body
    from spf.sets.uf import UF

Pair = tuple[int, int]

_SMALL = 1 << 24
"""Coordinates and coefficients below this in magnitude evaluate in ``int64`` (a row has
far fewer than 2**14 entries, so no sum of products overflows)."""

_MONOTONIC = {None: 0, "nondecreasing": 1, "increasing": 2}


@dataclass(frozen=True)
class Point:
    """A sample point's coordinates in :class:`Layout` order: the body's dims, its
    parameters, then 1 (the constant column)."""

    values: np.ndarray
    missing: frozenset[int]
    """Columns of parameters the point does not give (their value is 0: a parameter only
    UF arguments use takes any value in a witness)."""


def _small(values: np.ndarray) -> bool:
    return bool(np.all(np.abs(values) < _SMALL)) if values.size else True


class Layout:
    """The columns of one body's points: its dims (tuple, hidden, UF values), its
    parameters (sorted), then the constant 1."""

    def __init__(self, body: Body) -> None:
        syms = body.dim_syms()
        self.n_dims = len(syms)
        self.params = sorted(body.params())
        self.columns = {s.name: k for k, s in enumerate(syms)}
        self.columns.update({p: self.n_dims + k for k, p in enumerate(self.params)})
        self.width = self.n_dims + len(self.params) + 1

    def row(self, expr: Aff) -> np.ndarray | None:
        """The coefficients of the affine ``expr`` by column (an ``object`` array); None
        when it is not integer-affine in the body's dims and parameters."""
        terms = _coefficients(expr)
        if terms is None:
            return None
        row = np.zeros(self.width, dtype=object)
        for name, coeff in terms:
            if name is None:
                row[-1] += coeff
            elif name in self.columns:
                row[self.columns[name]] += coeff
            else:
                return None
        return row

    def point(self, pt: isl.Point) -> Point:
        """The coordinates of ``pt`` (a point of the body's space, any parameters)."""
        coords = [coordinate(pt, DT.set, k) for k in range(self.n_dims)]
        given = {
            name: coordinate(pt, DT.param, k) for k, name in enumerate(param_names(pt.get_space()))
        }
        coords += [given.get(p, 0) for p in self.params]
        coords.append(1)
        missing = frozenset(self.n_dims + k for k, p in enumerate(self.params) if p not in given)
        small = all(-_SMALL < c < _SMALL for c in coords)
        return Point(np.array(coords, dtype=np.int64 if small else object), missing)


def coordinate(pt: isl.Point, kind: isl.dim_type, k: int) -> int:
    """Coordinate ``k`` of kind ``kind`` of the (integer) point ``pt``, exactly: read as a
    machine integer when it fits in 32 bits, else from its decimal text (which islpy's
    ``Val.to_python`` always prints: ten times the cost, for the dims of every point the
    emptiness search samples)."""
    v = pt.get_coordinate_val(kind, k)
    return int(v.get_num_si()) if v.n_abs_num_chunks(4) <= 1 else int(v.to_str())


@memo(16384)
def _coefficients(expr: Aff) -> tuple[tuple[str | None, int], ...] | None:
    """``expr`` as ``(symbol name, coefficient)`` terms (None names the constant); None
    when it is not a sum of integer multiples of symbols (remembered: facts instantiate
    the same arguments over and over)."""
    out: list[tuple[str | None, int]] = []
    if expr.const.denominator != 1:
        return None
    out.append((None, int(expr.const)))
    for term, coeff in expr.coeffs.items():
        if coeff.denominator != 1 or not isinstance(term, Sym):
            return None
        out.append((term.name, int(coeff)))
    return tuple(out)


def _product(matrix: np.ndarray, small: bool, point: Point) -> np.ndarray:
    """``matrix @ point``, in ``int64`` when both are small, else exactly."""
    x = point.values
    if small and x.dtype == np.int64:
        return np.asarray(matrix @ x)
    return np.asarray(matrix.astype(object) @ x.astype(object))


class PairCheck:
    """The same-UF call pairs of one body, compiled: which pair a point violates."""

    def __init__(
        self, layout: Layout, body: Body, pairs: Sequence[Pair], ufs: Mapping[str, UF]
    ) -> None:
        self.compiled = False
        self.layout = layout
        self.first_value = body.n_tuple + len(body.hidden)
        self.arity = max((len(args) for _, args in body.terms), default=0)
        rows = np.zeros((len(body.terms) * self.arity, layout.width), dtype=object)
        for k, (_, args) in enumerate(body.terms):
            for j, a in enumerate(args):
                row = layout.row(a)
                if row is None:
                    return
                rows[k * self.arity + j] = row
        self.small = _small(rows)
        self.rows = rows.astype(np.int64) if self.small else rows
        self.pairs = list(pairs)
        self.a = np.array([a for a, _ in pairs], dtype=np.int64)
        self.b = np.array([b for _, b in pairs], dtype=np.int64)
        decls = [ufs.get(body.terms[a][0]) for a, _ in pairs]
        self.mono = np.array(
            [_MONOTONIC[d.monotonic if d is not None else None] for d in decls], dtype=np.int64
        )
        self.any_mono = bool(self.mono.any())
        # a monotonic UF of several arguments is compared on its first one only: not here
        self.compiled = not any(
            m and len(body.terms[a][1]) != 1 for (a, _), m in zip(pairs, self.mono, strict=True)
        )

    def violated_pair(self, point: Point) -> Pair | None:
        """A pair whose axiom ``point`` violates, if any: the first (in the order given)
        whose values are out of their monotonic order, else the first with equal arguments
        and different values (splitting on the order first took 13% fewer isl samples on
        ILU(0)'s dependences)."""
        if not self.pairs:
            return None
        args = _product(self.rows, self.small, point).reshape(-1, self.arity)
        vals = point.values[self.first_value : self.layout.n_dims]
        ga, gb = args[self.a], args[self.b]
        same = (ga == gb).all(axis=1)
        va, vb = vals[self.a], vals[self.b]
        bad = same & (va != vb)
        if self.any_mono:
            a0, b0 = ga[:, 0], gb[:, 0]
            below = a0 < b0
            lo, hi = np.where(below, va, vb), np.where(below, vb, va)
            gap = np.abs(a0 - b0)
            out_of_order = (lo > hi) | ((self.mono == 2) & (hi - lo < gap))
            bad |= ~same & (self.mono > 0) & out_of_order
        found = np.flatnonzero(bad)
        if not found.size:
            return None
        if self.any_mono:
            order = np.flatnonzero(bad & ~same)
            if order.size:
                return self.pairs[int(order[0])]
        return self.pairs[int(found[0])]


class LinearSet:
    """An isl set without existential variables as rows of integer constraints over its set
    dims and parameters (one block of rows per basic set), tested at given dim values."""

    def __init__(self, iset: isl.Set) -> None:
        n = iset.dim(DT.set)
        self.params = tuple(param_names(iset.get_space()))
        dims: list[list[int]] = []
        params: list[list[int]] = []
        const: list[int] = []
        equality: list[bool] = []
        starts: list[int] = []
        self.compiled = True
        for bset in iset.get_basic_sets():
            if bset.dim(DT.div):
                self.compiled = False  # existential variables: isl decides
                return
            bset = bset.align_params(iset.get_space())
            starts.append(len(const))
            for c in bset.get_constraints():
                dims.append([_int(c.get_coefficient_val(DT.set, k)) for k in range(n)])
                params.append(
                    [_int(c.get_coefficient_val(DT.param, k)) for k in range(len(self.params))]
                )
                const.append(_int(c.get_constant_val()))
                equality.append(bool(c.is_equality()))
        m = len(const)
        self.universe = bool(starts) and (
            starts[-1] == m or any(a == b for a, b in itertools.pairwise(starts))
        )
        """A basic set without constraints: true everywhere."""
        self.empty = not starts
        self.dims = np.array(dims, dtype=object).reshape(m, n)
        self.pmat = np.array(params, dtype=object).reshape(m, len(self.params))
        self.const = np.array(const, dtype=object)
        self.equality = np.array(equality, dtype=bool)
        self.starts = np.array(starts, dtype=np.int64)
        self.used = tuple(p for k, p in enumerate(self.params) if np.any(self.pmat[:, k] != 0))
        """The parameters some constraint uses."""

    def holds(self, dims: np.ndarray, params: np.ndarray) -> bool:
        """Whether the point with set dims ``dims`` and parameters ``params`` (in the order
        of :attr:`params`) lies in the set."""
        if self.universe:
            return True
        if self.empty:
            return False
        v = self.dims @ dims.astype(object) + self.pmat @ params.astype(object) + self.const
        ok = np.where(self.equality, v == 0, v >= 0)
        return bool(np.logical_and.reduceat(ok, self.starts).any())


def linear_set(body: Body) -> LinearSet | None:
    """:class:`LinearSet` of ``body.iset`` (built once per body); None with existential
    variables."""
    got: LinearSet | None = body.memo.get("linear_set")
    if got is None:
        got = body.memo["linear_set"] = LinearSet(body.iset)
    return got if got.compiled else None


def _int(v: isl.Val) -> int:
    return int(v.to_python())


class Substitution:
    """Values of another space's dims as affine rows over a :class:`Layout`'s columns (a
    fact's variables and UF values as expressions of the body's), and the layout columns of
    that space's parameters."""

    def __init__(self, layout: Layout, exprs: Sequence[Aff]) -> None:
        self.layout = layout
        rows = [layout.row(e) for e in exprs]
        self.compiled = all(r is not None for r in rows)
        if self.compiled:
            self.matrix = np.array(rows, dtype=object).reshape(len(rows), layout.width)

    def dims(self, point: Point) -> np.ndarray:
        """The other space's dim values at ``point``."""
        return np.asarray(self.matrix @ point.values.astype(object))

    def params(self, s: LinearSet, point: Point) -> np.ndarray | None:
        """The values of ``s``'s parameters at ``point`` (0 for those no constraint uses);
        None when one it uses is not a parameter of the layout or not given by the point."""
        out = []
        for name in s.params:
            col = self.layout.columns.get(name)
            if col is None or col < self.layout.n_dims or col in point.missing:
                if name in s.used:
                    return None
                out.append(0)
            else:
                out.append(point.values[col])
        return np.array(out, dtype=object)

    def holds(self, s: LinearSet, point: Point) -> bool | None:
        """Whether ``point`` mapped by this substitution lies in ``s`` (None: unknown)."""
        params = self.params(s, point)
        if params is None:
            return None
        return s.holds(self.dims(point), params)

"""Concrete evaluation: membership and enumeration with given parameters and UF values.

The oracle side of the set layer (brute-force tests, the interpreter). Points are scanned one
dimension at a time with isl, binding each UF value as soon as its arguments are known, the
way generated code does; so a CSR domain costs time proportional to its points, not to a
bounding box.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import islpy as isl
import numpy as np

from spf.errors import ArgumentError, ArityError
from spf.sets.body import canonical
from spf.sets.calls import base_name, is_component
from spf.sets.linear import DT, evaluate, free_names, param_names, sym, val

if TYPE_CHECKING:
    from spf.sets.affine import Atom
    from spf.sets.body import Body

UFValues = Mapping[str, Any]  # numpy arrays, sequences or callables


class _Scanner:
    """Enumerates the points of one conjunction of a body.

    Parameters are fixed up front; a UF value is fixed as soon as its arguments are (so
    later dimensions get concrete bounds, as in generated code); a call outside its array
    prunes the branch (not a member). The next dimension scanned is the first one that is
    bounded given what is fixed, so ``{[k, i]: 0 <= i < 2 && k = f(i)}`` scans ``i`` first.
    """

    def __init__(self, body: Body, params: Mapping[str, int], ufs: UFValues) -> None:
        self.body = body
        self.env: dict[Atom, int] = {sym(p): int(v) for p, v in params.items()}
        self.ufs = {n: _lookup(n, ufs[base_name(n)], len(args)) for n, args in body.terms}
        self.n_scan = body.n_tuple + len(body.hidden)
        self.syms = body.dim_syms()
        self.needs = [
            {self.syms.index(sym(n)) for n in free_names(args) if n.startswith("__")}
            for _, args in body.terms
        ]
        iset = body.iset
        for k, name in enumerate(param_names(iset)):
            iset = iset.fix_val(DT.param, k, val(params[name]))
        for k, (name, _) in enumerate(body.terms):  # a value lies within its array's values
            bounds = _value_bounds(ufs[base_name(name)])
            if bounds is not None:
                pos = self.n_scan + k
                iset = iset.lower_bound_val(DT.set, pos, val(bounds[0]))
                iset = iset.upper_bound_val(DT.set, pos, val(bounds[1]))
        self.root = iset

    def scan(self, prefix: Sequence[int], found: set[tuple[int, ...]]) -> None:
        env = dict(self.env)
        fixed: set[int] = set()
        cur: isl.Set | None = self.root
        for depth, v in enumerate(prefix):
            assert cur is not None
            cur = self._fix(cur, env, fixed, depth, int(v))
            if cur is None:
                return
        if cur is not None:
            cur = self._fix_terms(cur, env, fixed)
        self._walk(cur, env, fixed, found)

    def _fix(
        self, iset: isl.Set, env: dict[Atom, int], fixed: set[int], dim: int, value: int
    ) -> isl.Set | None:
        env[self.syms[dim]] = value
        fixed.add(dim)
        return self._fix_terms(iset.fix_val(DT.set, dim, val(value)), env, fixed)

    def _fix_terms(
        self, iset: isl.Set | None, env: dict[Atom, int], fixed: set[int]
    ) -> isl.Set | None:
        base = self.n_scan
        progress = True
        while progress and iset is not None:
            progress = False
            for k, (name, args) in enumerate(self.body.terms):
                if base + k in fixed or not self.needs[k] <= fixed:
                    continue
                value = self.ufs[name](*(evaluate(a, env) for a in args))
                if value is None:
                    return None
                env[self.syms[base + k]] = value
                fixed.add(base + k)
                iset = iset.fix_val(DT.set, base + k, val(value))
                progress = True
        return iset

    def _next_dim(self, iset: isl.Set, fixed: set[int]) -> tuple[int, isl.Set]:
        n = iset.dim(DT.set)
        for dim in range(self.n_scan):
            if dim in fixed:
                continue
            line = iset.project_out(DT.set, dim + 1, n - dim - 1).project_out(DT.set, 0, dim)
            bounded = _bounded(line)
            if bounded is not None:
                return dim, bounded
        names = [self._label(d) for d in range(self.n_scan) if d not in fixed]
        raise ArgumentError(
            f"cannot enumerate: {', '.join(names)} unbounded; bound every variable (and give "
            "UF values as arrays)"
        )

    def _label(self, dim: int) -> str:
        if dim < self.body.n_tuple:
            return self.body.names[dim] or f"tuple entry {dim}"
        return self.body.hidden[dim - self.body.n_tuple]

    def _walk(
        self,
        iset: isl.Set | None,
        env: dict[Atom, int],
        fixed: set[int],
        found: set[tuple[int, ...]],
    ) -> None:
        if iset is None or iset.is_empty():
            return
        if all(d in fixed for d in range(self.n_scan)):
            found.add(tuple(env[s] for s in self.syms[: self.body.n_tuple]))
            return
        dim, line = self._next_dim(iset, fixed)
        for (v,) in _points_of(line):
            child_env, child_fixed = dict(env), set(fixed)
            child = self._fix(iset, child_env, child_fixed, dim, v)
            self._walk(child, child_env, child_fixed, found)


def _bounded(line: isl.Set) -> isl.Set | None:
    """``line`` when it is bounded (intersected with its rational hull), else None.

    isl's ``is_bounded`` also asks the existentials a projection leaves to be bounded (the
    floor of a free UF value), so it refuses ``{[i]: exists e: i <= 4 && 9*floor(e/3) >=
    14 - 5i + 3e + ...}``, whose ``i`` is at least 3: the rational hull, a superset
    without existentials, shows such bounds."""
    if line.is_bounded():
        return line
    if any(b.dim(DT.div) for b in line.get_basic_sets()):
        hull = line.polyhedral_hull()
        if hull.is_bounded():
            return line.intersect(isl.Set.from_basic_set(hull))
    return None


def _value_bounds(values: Any) -> tuple[int, int] | None:
    if callable(values):
        return None
    arr = np.asarray(values)
    if arr.size == 0:
        return (0, -1)  # no call can be evaluated
    if arr.dtype.kind not in "iub":
        return None  # _lookup reports the dtype
    return int(arr.min()), int(arr.max())


def _lookup(term: str, values: Any, arity: int) -> Callable[..., int | None]:
    """The values of the UF a term calls as a function of the term's arguments (those of a
    tuple-valued UF's component end with the component: ``values[i][c]``)."""
    name = base_name(term)
    if callable(values):
        if is_component(term):  # a callable returns the whole tuple
            return lambda *idx: int(values(*idx[:-1])[idx[-1]])
        return lambda *idx: int(values(*idx))
    arr = np.asarray(values)
    if arr.ndim != arity:
        what = f"{arity - 1} argument(s) and returns a tuple" if is_component(term) else None
        raise ArityError(
            f"UF {name!r} takes {what or f'{arity} argument(s)'} but its values have "
            f"{arr.ndim} dimension(s)"
            + (" (the last one for the tuple's components)" if what else "")
        )
    if arr.dtype.kind not in "iub":
        raise ArgumentError(f"values of UF {name!r} must be integers, got dtype {arr.dtype}")

    def get(*idx: int) -> int | None:
        if any(i < 0 or i >= n for i, n in zip(idx, arr.shape, strict=True)):
            return None
        return int(arr[idx])

    return get


def _points_of(iset: isl.Set) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    n = iset.dim(DT.set)

    def add(p: isl.Point) -> None:
        out.append(tuple(int(p.get_coordinate_val(DT.set, k).to_python()) for k in range(n)))

    iset.foreach_point(add)
    return sorted(out)


def points(
    body: Body, params: Mapping[str, int], ufs: UFValues, fixed: Sequence[int] | None = None
) -> list[tuple[int, ...]]:
    """Tuple points of ``body`` in lexicographic order (those extending ``fixed`` if given).

    Each disjunct is scanned on its own with only the calls it uses, so a call that is out
    of its array's bounds excludes a point from the disjuncts that use it, not from others.
    """
    missing = sorted(p for p in body.params() if p not in params)
    if missing:
        raise ArgumentError(f"no value given for the symbolic constant(s) {', '.join(missing)}")
    names = sorted({base_name(n) for n, _ in body.terms} - set(ufs))
    if names:
        raise ArgumentError(f"no values given for the UF(s) {', '.join(names)}")
    found: set[tuple[int, ...]] = set()
    for bset in body.iset.get_basic_sets():
        piece = canonical(body.with_iset(isl.Set.from_basic_set(bset)))
        _Scanner(piece, params, ufs).scan(fixed or (), found)
    return sorted(found)


def bounds(body: Body, params: Mapping[str, int]) -> list[tuple[int, int]] | None:
    """Per tuple entry ``(min, max)`` with parameters fixed; None when empty."""
    missing = sorted(p for p in param_names(body.iset) if p not in params)
    if missing:
        raise ArgumentError(f"no value given for the symbolic constant(s) {', '.join(missing)}")
    iset = body.iset
    for k, name in enumerate(param_names(iset)):
        iset = iset.fix_val(DT.param, k, val(params[name]))
    n = iset.dim(DT.set)
    iset = iset.project_out(DT.set, body.n_tuple, n - body.n_tuple)
    if iset.is_empty():
        return None
    out = []
    for k in range(body.n_tuple):
        line = iset.project_out(DT.set, k + 1, body.n_tuple - k - 1).project_out(DT.set, 0, k)
        bounded = _bounded(line)
        if bounded is None:
            raise ArgumentError(f"entry {k} ({body.names[k] or k}) of the set is unbounded")
        line = bounded
        lo = line.lexmin().sample_point().get_coordinate_val(DT.set, 0).to_python()
        hi = line.lexmax().sample_point().get_coordinate_val(DT.set, 0).to_python()
        out.append((int(lo), int(hi)))
    return out

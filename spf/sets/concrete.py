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

from spf.errors import ArityError, SpfError
from spf.sets.linear import DT, evaluate, free_names, param_names, sym

if TYPE_CHECKING:
    import sympy as sp

    from spf.sets.body import Body

UFValues = Mapping[str, Any]  # numpy arrays, sequences or callables


class _Scanner:
    """Enumerates the points of one body, one dimension at a time.

    Parameters are fixed up front; a UF value is fixed as soon as its arguments are (so the
    next dimension's bounds are concrete, as in generated code); a call outside its array
    prunes the branch (not a member).
    """

    def __init__(self, body: Body, params: Mapping[str, int], ufs: UFValues) -> None:
        self.body = body
        missing = sorted(p for p in body.params() if p not in params)
        if missing:
            raise SpfError(f"no value given for the symbolic constant(s) {', '.join(missing)}")
        names = sorted({n for n, _ in body.terms} - set(ufs))
        if names:
            raise SpfError(f"no values given for the UF(s) {', '.join(names)}")
        self.env: dict[sp.Symbol, int] = {sym(p): int(v) for p, v in params.items()}
        self.ufs = {n: _lookup(n, ufs[n], len(args)) for n, args in body.terms}
        self.n_scan = body.n_tuple + len(body.hidden)
        self.syms = body.dim_syms()
        # the scan depth after which each term's arguments are known
        self.ready: dict[int, list[int]] = {}
        level: dict[int, int] = {}
        for k, (_, args) in enumerate(body.terms):
            deps = [0]
            for name in free_names(args):
                kind = name[2:3] if name.startswith("__") else ""
                idx = int(name[3:]) if kind else -1
                if kind == "t":
                    deps.append(idx + 1)
                elif kind == "e":
                    deps.append(body.n_tuple + idx + 1)
                elif kind == "u":
                    deps.append(level[idx])
            level[k] = max(deps)
            self.ready.setdefault(level[k], []).append(k)
        iset = body.iset
        for k, name in enumerate(param_names(iset)):
            iset = iset.fix_val(DT.param, k, isl.Val(int(params[name])))
        self.root = iset

    def scan(self, prefix: Sequence[int]) -> list[tuple[int, ...]]:
        found: set[tuple[int, ...]] = set()
        env = dict(self.env)
        cur: isl.Set | None = self._fix_terms(self.root, env, 0)
        for depth, v in enumerate(prefix):
            if cur is None:
                return []
            cur = self._bind(cur.fix_val(DT.set, depth, isl.Val(int(v))), env, depth, int(v))
        self._walk(cur, env, len(prefix), found)
        return sorted(found)

    def _bind(
        self, iset: isl.Set | None, env: dict[sp.Symbol, int], depth: int, value: int
    ) -> isl.Set | None:
        env[self.syms[depth]] = value
        return self._fix_terms(iset, env, depth + 1)

    def _fix_terms(
        self, iset: isl.Set | None, env: dict[sp.Symbol, int], depth: int
    ) -> isl.Set | None:
        base = self.n_scan
        for k in self.ready.get(depth, ()):
            if iset is None:
                return None
            name, args = self.body.terms[k]
            value = self.ufs[name](*(evaluate(a, env) for a in args))
            if value is None:
                return None
            env[self.syms[base + k]] = value
            iset = iset.fix_val(DT.set, base + k, isl.Val(value))
        return iset

    def _walk(
        self,
        iset: isl.Set | None,
        env: dict[sp.Symbol, int],
        depth: int,
        found: set[tuple[int, ...]],
    ) -> None:
        if iset is None or iset.is_empty():
            return
        if depth == self.n_scan:
            found.add(tuple(env[s] for s in self.syms[: self.body.n_tuple]))
            return
        n = iset.dim(DT.set)
        line = iset.project_out(DT.set, depth + 1, n - depth - 1).project_out(DT.set, 0, depth)
        if not line.is_bounded():
            what = self.body.names[depth] if depth < self.body.n_tuple else "a hidden variable"
            raise SpfError(
                f"cannot enumerate: {what} is unbounded; bound every variable (and give UF "
                "values as arrays or declare their ranges)"
            )
        for (v,) in _points_of(line):
            child_env = dict(env)
            child_env[self.syms[depth]] = v
            sub = self._fix_terms(iset.fix_val(DT.set, depth, isl.Val(v)), child_env, depth + 1)
            self._walk(sub, child_env, depth + 1, found)


def _lookup(name: str, values: Any, arity: int) -> Callable[..., int | None]:
    if callable(values):
        return lambda *idx: int(values(*idx))
    arr = np.asarray(values)
    if arr.ndim != arity:
        raise ArityError(
            f"UF {name!r} takes {arity} argument(s) but its values have {arr.ndim} dimension(s)"
        )
    if arr.dtype.kind not in "iub":
        raise SpfError(f"values of UF {name!r} must be integers, got dtype {arr.dtype}")

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
    """Tuple points of ``body`` in lexicographic order (those extending ``fixed`` if given)."""
    return _Scanner(body, params, ufs).scan(fixed or ())

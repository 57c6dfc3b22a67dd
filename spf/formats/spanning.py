"""A compressed source (CSR, CSC: ``ptr(o) <= k < ptr(o+1)``) read over the positions its
pointer array covers.

The relation stores row ``o``'s entries at ``ptr(o) .. ptr(o+1) - 1``, so the positions
before ``ptr(0)`` and from ``ptr(n)`` on (``n`` the outer extent) hold no entry: a pointer
array may start above 0, end below ``NNZ`` (``scipy.sparse`` allows ``indptr[-1] <
len(indices)``), or hold more rows than ``n``. SpMV reads such a matrix right; the
conversions are synthesized for positions ``0 .. NNZ - 1`` all in use (a destination
indexed by the source position, COO, keeps one entry per position). :func:`spanning`
gives them the same matrix over exactly the positions in use: the pointers shifted down by
``ptr(0)`` (a copy of ``n + 1`` entries) and views of the index and value arrays, ``NNZ``
the entries covered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np

__all__ = ["fibers_spanning", "spanning"]


def _size(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def spanning(
    args: Mapping[str, Any], ptr: str, idx: str, value: str, outer: str
) -> tuple[Mapping[str, Any], int | None]:
    """``(args over the positions the pointers cover, ptr(0))``, or ``(args, None)`` when
    they already span ``0 .. NNZ - 1`` or anything about them is off (a wrong type, size,
    length or order: the kernel then reports it on the caller's own arrays). ``ptr``,
    ``idx``, ``value``: the source's pointer, index and value arrays; ``outer``: the size
    the pointers run over (``N`` for CSR)."""
    p, n, nnz = args.get(ptr), args.get(outer), args.get("NNZ")
    if (
        type(p) is np.ndarray
        and type(n) is int
        and type(nnz) is int
        and 0 <= n < p.size
        and p.ndim == 1
        and p[0] == 0
        and p[n] == nnz
    ):  # the common call: O(1), the caller's own arguments
        return args, None
    out = dict(args)
    cols, vals = args.get(idx), args.get(value)
    n, nnz = _size(n), _size(nnz)
    if n is None or nnz is None or n < 0 or nnz < 0:
        return out, None
    arrays = (p, cols, vals)
    if not all(isinstance(a, np.ndarray) and a.ndim == 1 for a in arrays):
        return out, None
    p, cols, vals = (cast("np.ndarray[Any, Any]", a) for a in arrays)
    if p.dtype.kind not in "iu" or p.size <= n or cols.size != nnz or vals.size != nnz:
        return out, None
    lo, hi = int(p[0]), int(p[n])
    if (lo, hi) == (0, nnz) or not 0 <= lo <= hi <= nnz:
        return out, None
    head = p[: n + 1]
    if n and bool(np.any(head[1:] < head[:-1])):
        return out, None
    out[ptr] = np.ascontiguousarray(head - p.dtype.type(lo), dtype=p.dtype)
    out[idx] = cols[lo:hi]
    out[value] = vals[lo:hi]
    out["NNZ"] = hi - lo
    return out, lo


def fibers_spanning(
    args: Mapping[str, Any], order: int, value: str
) -> tuple[dict[str, Any], int | None]:
    """:func:`spanning` for a ``CSF(order)`` source (``pos<l>``, ``crd<l>``, sizes
    ``NNZ<l>`` and ``NNZ``): level by level, the entries the root's pointers reach, each
    level's pointers shifted down to them; ``(args, None)`` when every level already spans
    its entries or anything is off, else the lowest first entry of any level."""
    if _fibers_span_all(args, order, value):  # the common call: O(levels)
        return dict(args), None
    out = dict(args)
    lo, hi, changed, first = 0, 1, False, 0
    for lv in range(1, order + 1):
        size_name = "NNZ" if lv == order else f"NNZ{lv}"
        p, crd, size = args.get(f"pos{lv}"), args.get(f"crd{lv}"), _size(args.get(size_name))
        if not (isinstance(p, np.ndarray) and isinstance(crd, np.ndarray) and size is not None):
            return dict(args), None
        if p.ndim != 1 or crd.ndim != 1 or p.dtype.kind not in "iu" or p.size <= hi:
            return dict(args), None
        if crd.size != size or size < 0:
            return dict(args), None
        head = p[lo : hi + 1]
        a, b = int(head[0]), int(head[-1])
        if not 0 <= a <= b <= size or bool(np.any(head[1:] < head[:-1])):
            return dict(args), None
        if (lo, hi) != (0, p.size - 1) or (a, b) != (0, size):
            changed = True
        first = max(first, a)
        out[f"pos{lv}"] = np.ascontiguousarray(head - p.dtype.type(a), dtype=p.dtype)
        out[f"crd{lv}"] = crd[a:b]
        out[size_name] = b - a
        lo, hi = a, b
    vals = args.get(value)
    if not isinstance(vals, np.ndarray) or vals.ndim != 1 or vals.size != _size(args.get("NNZ")):
        return dict(args), None
    if not changed:
        return dict(args), None
    out[value] = vals[lo:hi]
    return out, first


def _fibers_span_all(args: Mapping[str, Any], order: int, value: str) -> bool:
    """Whether every level's pointers run from 0 to its size over all of them (what
    :func:`fibers_spanning` would leave alone), read at their ends only."""
    hi = 1
    for lv in range(1, order + 1):
        p, crd = args.get(f"pos{lv}"), args.get(f"crd{lv}")
        size = _size(args.get("NNZ" if lv == order else f"NNZ{lv}"))
        if not (type(p) is np.ndarray and type(crd) is np.ndarray and size is not None):
            return False
        if p.ndim != 1 or p.dtype.kind not in "iu" or p.size != hi + 1 or crd.size != size:
            return False
        if p[0] != 0 or p[-1] != size:
            return False
        hi = size
    vals = args.get(value)
    return type(vals) is np.ndarray and vals.ndim == 1 and vals.size == _size(args.get("NNZ"))

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

__all__ = ["spanning"]


def _size(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def spanning(
    args: Mapping[str, Any], ptr: str, idx: str, value: str, outer: str
) -> tuple[dict[str, Any], int | None]:
    """``(args over the positions the pointers cover, ptr(0))``, or ``(args, None)`` when
    they already span ``0 .. NNZ - 1`` or anything about them is off (a wrong type, size,
    length or order: the kernel then reports it on the caller's own arrays). ``ptr``,
    ``idx``, ``value``: the source's pointer, index and value arrays; ``outer``: the size
    the pointers run over (``N`` for CSR)."""
    out = dict(args)
    p, cols, vals = args.get(ptr), args.get(idx), args.get(value)
    n, nnz = _size(args.get(outer)), _size(args.get("NNZ"))
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

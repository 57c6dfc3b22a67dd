"""Run-time index arrays: data spaces declared ``index=True`` that statements write and
later statements read as UFs (docs/formats.md, "Run-time index arrays").

The array and the UF share one name and one storage: the UF's domain is the array's shape,
its values are whatever the statements wrote. Every statement that calls the UF (in its
domain, bounds or subscripts) reads the whole array, so the dependence analysis orders it
after every statement that writes the array (flow dependences legality respects).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf.errors import ArityError, SpfError
from spf.sets import UF, Relation

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from spf.computation.data_space import DataSpace

_DTYPES = {"int32_t": "int32", "int64_t": "int64"}


def shape_domain(ds: DataSpace) -> str:
    """The set of valid indices of ``ds`` (``{[a0]: 0 <= a0 < N + 1}``)."""
    dims = [f"a{k}" for k in range(len(ds.shape or ()))]
    conds = [f"0 <= {a} < {e}" for a, e in zip(dims, ds.shape or (), strict=True)]
    return f"{{[{', '.join(dims)}]: {' && '.join(conds)}}}"


def index_uf(ds: DataSpace, fields: Mapping[str, Any]) -> UF:
    """The UF a run-time index array defines: ``fields`` (those of :class:`spf.UF`) with
    the arity, domain and element type taken from ``ds`` unless given (and then they must
    agree)."""
    rank = len(ds.shape or ())
    dtype = _DTYPES[ds.ctype]
    args = dict(fields)
    if args.setdefault("arity", rank) != rank:
        raise ArityError(
            f"UF {ds.name!r}: the index array has rank {rank}; declare the UF with arity {rank}"
        )
    if args.setdefault("dtype", dtype) not in (dtype, ds.ctype):
        raise SpfError(
            f"UF {ds.name!r}: the index array holds {ds.ctype}; declare the UF with "
            f"dtype={dtype!r} (or leave dtype out)"
        )
    args["dtype"] = dtype
    if args.get("domain") is None:
        args["domain"] = shape_domain(ds)
    try:
        return UF(ds.name, **args)
    except TypeError as err:
        raise SpfError(f"declare_uf({ds.name!r}): {err}") from err


def index_reads(
    data: Mapping[str, DataSpace],
    domain_ufs: Iterable[str],
    source_ufs: Iterable[str],
    iterators: list[str],
    ufs: Mapping[str, UF],
) -> tuple[tuple[str, Relation], ...]:
    """The implicit reads of a statement: the whole of each run-time index array whose UF
    it calls in its domain (``domain_ufs``) or source (``source_ufs``)."""
    used = sorted({u for u in (*domain_ufs, *source_ufs) if u in data and data[u].index})
    out = []
    for name in used:
        ds = data[name]
        outs = [f"{name}_ix{k}" for k in range(len(ds.shape or ()))]
        conds = [f"0 <= {a} < {e}" for a, e in zip(outs, ds.shape or (), strict=True)]
        text = f"{{[{', '.join(iterators)}] -> [{', '.join(outs)}]: {' && '.join(conds)}}}"
        rel = Relation(text, ufs=dict(ufs))
        out.append((name, rel))
    return tuple(out)

"""Run-time index arrays: data spaces declared ``index=True`` that statements write and
later statements read as UFs (docs/formats.md, "Run-time index arrays").

The array and the UF share one name and one storage: the UF's domain is the array's shape,
its values are whatever the statements wrote. Every call of the UF (in a statement's
domain, bounds or subscripts) is a read of the element it calls, so the dependence
analysis orders it after the statements that write that element (flow dependences
legality respects).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf.computation.access import access_relation, iterator_names
from spf.errors import ArityError, SpfError, VerifyError
from spf.sets import UF, Relation, Set

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from spf.computation.computation import Computation
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
        raise VerifyError(
            f"UF {ds.name!r}: the index array holds {ds.ctype}; declare the UF with "
            f"dtype={dtype!r} (or leave dtype out)"
        )
    args["dtype"] = dtype
    if args.get("domain") is None:
        args["domain"] = shape_domain(ds)
    try:
        return UF(ds.name, **args)
    except SpfError:  # the UF's own checks name the field
        raise
    except TypeError as err:
        raise VerifyError(f"declare_uf({ds.name!r}): {err}") from err


def check_redeclared(comp: Computation, uf: UF) -> None:
    """``SpfError`` when statements already hold another declaration of the run-time index
    array ``uf`` describes (their domains and relations keep the one they were added with,
    so a later change of its range or order would leave the two disagreeing)."""
    for stmt in comp.stmts:
        held = stmt.domain.ufs.get(uf.name)
        if held is not None and held != uf:
            raise VerifyError(
                f"run-time index array {uf.name!r}: statement {stmt.name} was added with the "
                f"declaration {held}; declare its range and order before adding statements, "
                f"e.g. add_data_space({uf.name!r}, ..., index=True, range=..., monotonic=...)"
            )


def index_reads(
    data: Mapping[str, DataSpace],
    domain: Set,
    source_calls: Iterable[tuple[str, tuple[str, ...]]],
    ufs: Mapping[str, UF],
    where: str,
) -> tuple[tuple[str, Relation], ...]:
    """The implicit reads of a statement: for each call of a run-time index array's UF in
    its domain or its source (``source_calls``: ``(name, argument texts)``), a read of the
    element it calls (``rowptr(i + 1)`` reads ``rowptr[i + 1]``); a call whose element is
    not an access relation spf can build reads the whole array (sound)."""
    calls = [_split_call(text) for text in domain.uf_calls]
    calls += [(n, tuple(a)) for n, a in source_calls]
    out: list[tuple[str, Relation]] = []
    seen: set[tuple[str, str]] = set()
    for name, args in calls:
        ds = data.get(name)
        if ds is None or not ds.index:
            continue
        try:
            rel = access_relation(domain, list(args), ufs, where)
        except SpfError:
            rel = _whole(ds, domain, ufs)
        if (name, str(rel)) not in seen:
            seen.add((name, str(rel)))
            out.append((name, rel))
    return tuple(out)


def _whole(ds: DataSpace, domain: Set, ufs: Mapping[str, UF]) -> Relation:
    """Every element of ``ds``, from every instance of ``domain``."""
    outs = [f"{ds.name}_ix{k}" for k in range(len(ds.shape or ()))]
    conds = [f"0 <= {a} < {e}" for a, e in zip(outs, ds.shape or (), strict=True)]
    its = ", ".join(iterator_names(domain))
    return Relation(f"{{[{its}] -> [{', '.join(outs)}]: {' && '.join(conds)}}}", ufs=dict(ufs))


def _split_call(text: str) -> tuple[str, tuple[str, ...]]:
    """``"g(i + 1, f(j, k))"`` -> ``("g", ("i + 1", "f(j, k)"))``."""
    name, _, rest = text.partition("(")
    body = rest[: rest.rfind(")")]
    args: list[str] = []
    depth, start = 0, 0
    for k, ch in enumerate(body):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            args.append(body[start:k].strip())
            start = k + 1
    args.append(body[start:].strip())
    return name.strip(), tuple(args)

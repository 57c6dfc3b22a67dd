"""The IR and the JSON-ready form of a computation (``spf.computation.serialize``).

:func:`from_data` freezes the dictionary ``serialize.to_data`` writes into a
:class:`ComputationIR`; :func:`to_data` writes it back, so a computation is rebuilt from
its IR by the same code that reads its JSON (``Computation.from_ir``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spf.errors import SpfError, VerifyError
from spf.ir.model import (
    UFIR,
    Accesses,
    BufferIR,
    ComputationIR,
    DataSpaceIR,
    OperationIR,
    PlacementIR,
    StmtIR,
    Tags,
    WorkspaceIR,
)
from spf.schedule.trace import TraceEntry

FORMAT = "spf.computation/1"
"""The ``format`` of the JSON form (``spf.computation.serialize.FORMAT``)."""


def from_data(
    data: Mapping[str, Any],
    trace: Sequence[TraceEntry] | None = None,
    params: Iterable[str] = (),
) -> ComputationIR:
    """The IR of the JSON-ready form ``data``; ``trace``: its entries as objects (read from
    ``data["trace"]`` when None); ``params``: the computation's symbolic constants."""
    try:
        return _from_data(data, trace, params)
    except SpfError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise VerifyError(
            f"spf.ir.from_data: malformed computation ({FORMAT!r}, as spf.ir.to_data writes "
            f"it): {err!r}"
        ) from err


def _from_data(
    data: Mapping[str, Any], trace: Sequence[TraceEntry] | None, params: Iterable[str]
) -> ComputationIR:
    if trace is None:
        trace = [TraceEntry.from_data(e) for e in data.get("trace", [])]
    return ComputationIR(
        name=data["name"],
        data_spaces=tuple(_data_space(d) for d in data["data_spaces"]),
        ufs=tuple(_uf(u) for u in data["ufs"]),
        return_values=tuple(data["return_values"]),
        constants=tuple((str(n), str(t)) for n, t in data.get("constants", [])),
        assumptions=tuple(data.get("assumptions", [])),
        params=tuple(sorted(params)),
        stmts=tuple(_stmt(s) for s in data["stmts"]),
        operations=tuple(_operation(o) for o in data.get("operations", [])),
        buffers=tuple(_buffer(b) for b in data.get("buffers", [])),
        placements=tuple(_placement(p) for p in data.get("placements", [])),
        workspaces=tuple(
            WorkspaceIR(name=n, stmt=s, loop=loop, fill=fill)
            for n, s, loop, fill in data.get("workspaces", [])
        ),
        trace=tuple(trace),
    )


def to_data(ir: ComputationIR) -> dict[str, Any]:
    """The JSON-ready form of ``ir`` (what ``serialize.from_data`` reads)."""
    return {
        "format": FORMAT,
        "name": ir.name,
        "data_spaces": [_data_space_data(d) for d in ir.data_spaces],
        "ufs": [uf_fields(u) for u in ir.ufs],
        "return_values": list(ir.return_values),
        "constants": [[n, t] for n, t in ir.constants],
        "assumptions": list(ir.assumptions),
        "stmts": [_stmt_data(s) for s in ir.stmts],
        "trace": [e.to_data() for e in ir.trace],
        "buffers": [_buffer_data(b) for b in ir.buffers],
        "workspaces": [[w.name, w.stmt, w.loop, w.fill] for w in ir.workspaces],
        "placements": [
            {
                "data_space": p.data_space,
                "buffer": p.buffer,
                "stmt": p.stmt,
                "index": p.index if isinstance(p.index, str) else list(p.index),
                "exprs": list(p.exprs),
            }
            for p in ir.placements
        ],
        "operations": [_operation_data(o) for o in ir.operations],
    }


# ----------------------------------------------------------------------------- to the IR
def _shape(value: Sequence[int | str] | None) -> tuple[int | str, ...] | None:
    return None if value is None else tuple(value)


def _tags(tags: Mapping[str, Sequence[str]]) -> Tags:
    for loop, t in tags.items():
        if isinstance(t, str) or not all(isinstance(x, str) for x in t):
            raise VerifyError(f"tags of loop {loop!r} must be a list of strings, got {t!r}")
    return tuple((loop, tuple(t)) for loop, t in sorted(tags.items()))


def _accesses(pairs: Sequence[Sequence[str]]) -> Accesses:
    return tuple((str(d), str(r)) for d, r in pairs)


def _data_space(d: Mapping[str, Any]) -> DataSpaceIR:
    return DataSpaceIR(
        name=d["name"],
        type=d["type"],
        shape=_shape(d["shape"]),
        rank=d["rank"],
        role=d["role"],
        index=bool(d.get("index", False)),
        private=d.get("private"),
        trusted=d.get("trusted") is True,
    )


def _uf(u: Mapping[str, Any]) -> UFIR:
    return UFIR(
        name=u["name"],
        arity=u["arity"],
        domain=u["domain"],
        range=u["range"],
        monotonic=u["monotonic"],
        dtype=u["dtype"],
        out_arity=u.get("out_arity", 1),
        inverse=u.get("inverse"),
    )


def _stmt(s: Mapping[str, Any]) -> StmtIR:
    return StmtIR(
        name=s["name"],
        source=s["source"],
        domain=s["domain"],
        schedule=s["schedule"],
        current_schedule=s["current_schedule"],
        reads=_accesses(s["reads"]),
        writes=_accesses(s["writes"]),
        tags=_tags(s.get("tags", {})),
    )


def _operation(o: Mapping[str, Any]) -> OperationIR:
    where = o.get("placement")
    placement = None
    if where is not None:
        placement = (int(where["seq"]), tuple(sorted(where["schedules"].items())))
    return OperationIR(
        position=int(o["position"]),
        name=o["name"],
        kind=o["kind"],
        domain=o["domain"],
        target=o["target"],
        index=tuple(o["index"]),
        count=str(o["count"]),
        peer=o["peer"],
        schedule=o["schedule"],
        current_schedule=o["current_schedule"],
        tags=_tags(o.get("tags", {})),
        placed=bool(o.get("placed", False)),
        placement=placement,
        reads=_accesses(o.get("reads", [])),
        writes=_accesses(o.get("writes", [])),
    )


def _buffer(b: Mapping[str, Any]) -> BufferIR:
    allocation = b.get("allocation")
    return BufferIR(
        name=b["name"],
        shape=tuple(b["shape"]),
        dtype=b["dtype"],
        scope=b["scope"],
        partitions=tuple((int(d), int(f), str(k)) for d, f, k in b.get("partitions", [])),
        implicit=bool(b.get("implicit", False)),
        zeroed=bool(b.get("zeroed", True)),
        allocation=None if allocation is None else (str(allocation[0]), allocation[1]),
    )


def _placement(p: Mapping[str, Any]) -> PlacementIR:
    index = p["index"]
    return PlacementIR(
        data_space=p["data_space"],
        buffer=p["buffer"],
        stmt=p["stmt"],
        index=index if isinstance(index, str) else tuple(index),
        exprs=tuple(p["exprs"]),
    )


# ----------------------------------------------------------------------------- back
def _data_space_data(d: DataSpaceIR) -> dict[str, Any]:
    return {
        "name": d.name,
        "type": d.type,
        "shape": None if d.shape is None else list(d.shape),
        "rank": d.rank,
        "role": d.role,
        **({"index": True} if d.index else {}),
        **({"private": d.private} if d.private is not None else {}),
        **({"trusted": True} if d.trusted else {}),
    }


def uf_fields(u: UFIR) -> dict[str, Any]:
    """``u`` as the keyword arguments of :class:`spf.UF` (and JSON-ready)."""
    return {
        "name": u.name,
        "arity": u.arity,
        "domain": u.domain,
        "range": u.range,
        "monotonic": u.monotonic,
        "dtype": u.dtype,
        **({"out_arity": u.out_arity} if u.out_arity != 1 else {}),
        **({"inverse": u.inverse} if u.inverse is not None else {}),
    }


def _stmt_data(s: StmtIR) -> dict[str, Any]:
    return {
        "name": s.name,
        "source": s.source,
        "domain": s.domain,
        "schedule": s.schedule,
        "current_schedule": s.current_schedule,
        "reads": [[d, r] for d, r in s.reads],
        "writes": [[d, r] for d, r in s.writes],
        "tags": {loop: list(t) for loop, t in s.tags},
    }


def _operation_data(o: OperationIR) -> dict[str, Any]:
    return {
        "position": o.position,
        "name": o.name,
        "kind": o.kind,
        "domain": o.domain,
        "target": o.target,
        "index": list(o.index),
        "count": o.count,
        "peer": o.peer,
        "schedule": o.schedule,
        "current_schedule": o.current_schedule,
        "tags": {loop: list(t) for loop, t in o.tags},
        "placed": o.placed,
        "placement": None
        if o.placement is None
        else {"seq": o.placement[0], "schedules": dict(o.placement[1])},
        "reads": [[d, r] for d, r in o.reads],
        "writes": [[d, r] for d, r in o.writes],
    }


def _buffer_data(b: BufferIR) -> dict[str, Any]:
    return {
        "name": b.name,
        "shape": list(b.shape),
        "dtype": b.dtype,
        "scope": b.scope,
        "partitions": [list(p) for p in b.partitions],
        "implicit": b.implicit,
        **({} if b.zeroed else {"zeroed": False}),
        "allocation": None if b.allocation is None else list(b.allocation),
    }

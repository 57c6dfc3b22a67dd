"""Lossless JSON of a Computation: declarations, statements, current schedules and tags, and
the trace of scheduling commands (restored as recorded, not replayed)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from spf.computation.access import access_relation
from spf.computation.data_space import make_data_space
from spf.errors import ArgumentError, ParseError, SpfError, UndeclaredError, VerifyError
from spf.schedule.commands import ROOT
from spf.schedule.trace import Trace, set_trace, trace_of
from spf.sets import Relation

if TYPE_CHECKING:
    from spf.computation.computation import Computation

FORMAT = "spf.computation/1"


def to_json(comp: Computation) -> str:
    return json.dumps(to_data(comp), indent=1)


def to_data(comp: Computation) -> dict[str, Any]:
    """The JSON-ready form of ``comp`` (what :func:`to_json` writes)."""
    data: dict[str, Any] = {
        "format": FORMAT,
        "name": comp.name,
        "data_spaces": [
            {
                "name": ds.name,
                "type": ds.type_text,
                "shape": list(ds.shape) if ds.shape is not None else None,
                "rank": ds.rank,
                "role": ds.role,
                **({"index": True} if ds.index else {}),
                **({"private": ds.private} if ds.private is not None else {}),
                **({"trusted": True} if ds.trusted else {}),
            }
            for ds in comp.data_spaces.values()
        ],
        "ufs": [
            {
                "name": uf.name,
                "arity": uf.arity,
                "domain": None if uf.domain is None else str(uf.domain),
                "range": None if uf.range is None else str(uf.range),
                "monotonic": uf.monotonic,
                "dtype": uf.dtype,
                **({"out_arity": uf.out_arity} if uf.out_arity != 1 else {}),
                **({"inverse": uf.inverse} if uf.inverse is not None else {}),
            }
            for uf in comp.ufs.values()
        ],
        "return_values": list(comp.return_values),
        "constants": [[n, t] for n, t in comp.constants.items()],
        "assumptions": [f.text for f in comp.assumptions],
        "stmts": [
            {
                "name": s.name,
                "source": s.source,
                "domain": str(s.domain),
                "schedule": str(s.original_schedule),
                "current_schedule": str(s.schedule),
                "reads": [[ds, str(r)] for ds, r in s.reads],
                "writes": [[ds, str(r)] for ds, r in s.writes],
                "tags": {loop: list(tags) for loop, tags in sorted(s.tags.items())},
            }
            for s in comp.stmts
        ],
        "trace": trace_of(comp).to_data(),
    }
    _layers_to_data(comp, data)
    return data


def from_json(text: str) -> Computation:
    if not isinstance(text, (str, bytes)):
        raise ArgumentError(f"from_json expects JSON text, got {type(text).__name__}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParseError(f"from_json: not JSON: {err}") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise VerifyError(f"from_json: not an spf computation (expected format {FORMAT!r})")
    return from_data(data)


def from_data(data: dict[str, Any]) -> Computation:
    """The computation :func:`to_data` described (``SpfError`` for malformed data)."""
    try:
        return _build(data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        if isinstance(err, SpfError):
            raise
        raise VerifyError(f"from_json: malformed computation: {err!r}") from err


def _build(data: dict[str, Any]) -> Computation:
    from spf.computation.computation import Computation

    comp = Computation(data["name"])
    for ds in data["data_spaces"]:
        if ds["role"] == "parameter":
            comp.add_parameter(ds["name"], ds["type"])
        elif ds["role"] == "local" and ds.get("index"):
            trusted = ds.get("trusted") is True
            comp.add_local(ds["name"], ds["type"], tuple(ds["shape"]), index=True, trusted=trusted)
        elif ds["role"] == "local":
            shape = tuple(ds["shape"]) if ds["shape"] is not None else None
            local = make_data_space(ds["name"], ds["type"], shape, private=ds.get("private"))
            if ds["rank"] is not None:
                local = local.with_rank(int(ds["rank"]))
            comp._add_local(ds["name"], local)
        else:
            shape = tuple(ds["shape"]) if ds["shape"] is not None else None
            comp.add_data_space(ds["name"], ds["type"], shape, index=bool(ds.get("index")))
    for name, ctype in data.get("constants", []):
        comp.add_constant(name, ctype)
    for uf in data["ufs"]:
        comp.declare_uf(**uf)
    for text in data.get("assumptions", []):
        comp.assume(text)
    for name in data["return_values"]:
        comp.add_return_value(name)
    for s in data["stmts"]:
        _add_stmt(comp, s)
    _layers_from_data(comp, data)
    set_trace(comp, Trace.from_data(data.get("trace", [])))
    order = [uf["name"] for uf in data["ufs"]]  # a run-time index array's UF came first
    comp._ufs = {**{n: comp._ufs[n] for n in order if n in comp._ufs}, **comp._ufs}
    return comp


def _add_stmt(comp: Computation, s: dict[str, Any]) -> None:
    from spf.computation.statement import Stmt

    stmt = comp.add_stmt(
        Stmt(
            s["source"],
            s["domain"],
            s["schedule"],
            reads=[(d, r) for d, r in s["reads"]],
            writes=[(d, r) for d, r in s["writes"]],
            name=s["name"],
        )
    )
    current = Relation(s["current_schedule"], ufs=comp.ufs)
    if current.in_arity != stmt.domain.arity:
        raise VerifyError(
            f"from_json: the current schedule {current} of {stmt.name} does not take "
            f"{stmt.domain.arity}-tuples like its domain {stmt.domain}"
        )
    stmt._schedule = current
    tags = s.get("tags", {})
    for loop, loop_tags in tags.items():
        if loop not in stmt.loops:
            raise UndeclaredError("loop", loop, stmt.loops, hint=f"tagged in {stmt.name}")
        if not isinstance(loop_tags, list) or not all(isinstance(t, str) for t in loop_tags):
            raise VerifyError(f"from_json: tags of loop {loop!r} must be a list of strings")
    stmt._tags = {loop: tuple(loop_tags) for loop, loop_tags in tags.items()}


# ----------------------------------------------------------------------------- Layers III/IV
def _layers_to_data(comp: Computation, data: dict[str, Any]) -> None:
    """Buffers, placements (``store_in``) and Layer IV operations; operation statements
    leave the ``stmts`` list (they have no C source) for ``operations``."""
    from spf.computation.layout import layout_of
    from spf.computation.operations import OperationStmt

    layout = layout_of(comp)
    data["buffers"] = [
        {
            "name": b.name,
            "shape": list(b.shape),
            "dtype": b.dtype,
            "scope": b.scope,
            "partitions": [[p.dim, p.factor, p.kind] for p in b.partitions],
            "implicit": b.implicit,
            **({} if b.zeroed else {"zeroed": False}),
            "allocation": None
            if b.allocation is None
            else [b.allocation[0], None if b.allocation[1] is ROOT else b.allocation[1]],
        }
        for b in layout.buffers.values()
    ]
    data["workspaces"] = [[n, st, loop, fill] for n, (st, loop, fill) in layout.workspaces.items()]
    data["placements"] = [
        {
            "data_space": p.data_space,
            "buffer": p.buffer,
            "stmt": p.stmt,
            "index": p.index if isinstance(p.index, str) else list(p.index),
            "exprs": list(p.exprs),
        }
        for p in layout.placements.values()
    ]
    ops = [(k, s) for k, s in enumerate(comp.stmts) if isinstance(s, OperationStmt)]
    data["operations"] = [{"position": k, **s.to_data()} for k, s in ops]
    names = {s.name for _, s in ops}
    data["stmts"] = [s for s in data["stmts"] if s["name"] not in names]


def _layers_from_data(comp: Computation, data: dict[str, Any]) -> None:
    from spf.computation.layout import (
        PartitionSpec,
        StoreIn,
        layout_of,
        make_buffer,
        restore_placement,
    )

    layout = layout_of(comp)
    for b in data.get("buffers", []):
        buffer = make_buffer(comp, b["name"], tuple(b["shape"]), b["dtype"], b["scope"])
        buffer.partitions = tuple(
            PartitionSpec(int(d), int(f), str(k)) for d, f, k in b["partitions"]
        )
        buffer.implicit = bool(b.get("implicit", False))
        buffer.zeroed = bool(b.get("zeroed", True))
        if b["allocation"] is not None:
            stmt, level = b["allocation"]
            buffer.allocation = (str(stmt), ROOT if level is None else level)
        layout.buffers[buffer.name] = buffer
    for name, stmt_name, loop, fill in data.get("workspaces", []):
        layout.workspaces[str(name)] = (str(stmt_name), loop, fill)
    for op in sorted(data.get("operations", []), key=lambda o: o["position"]):
        _add_operation(comp, op)
    for p in data.get("placements", []):
        placement = restore_placement(
            comp,
            data_space=p["data_space"],
            buffer=p["buffer"],
            exprs=tuple(p["exprs"]),
            stmt=p["stmt"],
            index=StoreIn(buffer=p["buffer"], index=p["index"]).index,
        )
        layout.placements[placement.data_space] = placement


def _add_operation(comp: Computation, op: dict[str, Any]) -> None:
    from spf.computation.operations import (
        OperationStmt,
        load_placement,
        make_copy,
        make_transfer,
    )
    from spf.sets import Set

    kind = op["kind"]
    if kind in ("send", "receive"):
        new = make_transfer(
            comp, kind, op["domain"], op["target"], op["index"], op["count"], op["peer"]
        )
    elif kind in ("host_to_device", "device_to_host"):
        new = make_copy(comp, kind, op["target"])
    elif kind == "barrier":
        new = OperationStmt("barrier", Set(op["domain"], ufs=comp.ufs))
    elif kind in ("wait", "post"):  # a wavefront executor's flags (spf.analysis.executor)
        dom = Set(op["domain"], ufs=comp.ufs)
        count = str(op.get("count", "1"))  # a wait's count: 1, or a counter's target value
        new = OperationStmt(kind, dom, target=op["target"], index=tuple(op["index"]), count=count)
        flag = ((op["target"], access_relation(dom, new.index, comp.ufs, kind)),)
        new._given_reads, new._given_writes = (flag, ()) if kind == "wait" else ((), flag)
    else:
        raise VerifyError(f"from_json: unknown operation kind {kind!r}")
    new._name = op["name"]
    comp._add_operation(new, op["schedule"], position=int(op["position"]))
    new._schedule = Relation(op["current_schedule"], ufs=comp.ufs)
    load_placement(comp, new, op)
    tags = op.get("tags", {})
    for loop in tags:
        if loop not in new.loops:
            raise UndeclaredError("loop", loop, new.loops, hint=f"tagged in {new.name}")
    new._tags = {loop: tuple(t) for loop, t in tags.items()}

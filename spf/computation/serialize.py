"""Lossless JSON of a Computation: declarations, statements, current schedules and tags, and
the trace of scheduling commands (restored as recorded, not replayed)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from spf.errors import SpfError, UndeclaredError
from spf.schedule.trace import Trace, set_trace, trace_of
from spf.sets import Relation

if TYPE_CHECKING:
    from spf.computation.computation import Computation

FORMAT = "spf.computation/1"


def to_json(comp: Computation) -> str:
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
            }
            for uf in comp.ufs.values()
        ],
        "return_values": list(comp.return_values),
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
    return json.dumps(data, indent=1)


def from_json(text: str) -> Computation:
    if not isinstance(text, (str, bytes)):
        raise SpfError(f"from_json expects JSON text, got {type(text).__name__}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SpfError(f"from_json: not JSON: {err}") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SpfError(f"from_json: not an spf computation (expected format {FORMAT!r})")
    try:
        return _build(data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        if isinstance(err, SpfError):
            raise
        raise SpfError(f"from_json: malformed computation: {err!r}") from err


def _build(data: dict[str, Any]) -> Computation:
    from spf.computation.computation import Computation

    comp = Computation(data["name"])
    for ds in data["data_spaces"]:
        if ds["role"] == "parameter":
            comp.add_parameter(ds["name"], ds["type"])
        else:
            shape = tuple(ds["shape"]) if ds["shape"] is not None else None
            comp.add_data_space(ds["name"], ds["type"], shape)
    for uf in data["ufs"]:
        comp.declare_uf(**uf)
    for name in data["return_values"]:
        comp.add_return_value(name)
    for s in data["stmts"]:
        _add_stmt(comp, s)
    set_trace(comp, Trace.from_data(data.get("trace", [])))
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
        raise SpfError(
            f"from_json: the current schedule {current} of {stmt.name} does not take "
            f"{stmt.domain.arity}-tuples like its domain {stmt.domain}"
        )
    stmt._schedule = current
    tags = s.get("tags", {})
    for loop, loop_tags in tags.items():
        if loop not in stmt.loops:
            raise UndeclaredError("loop", loop, stmt.loops, hint=f"tagged in {stmt.name}")
        if not isinstance(loop_tags, list) or not all(isinstance(t, str) for t in loop_tags):
            raise SpfError(f"from_json: tags of loop {loop!r} must be a list of strings")
    stmt._tags = {loop: tuple(loop_tags) for loop, loop_tags in tags.items()}

"""A computation and its frozen IR (:mod:`spf.ir`), and cheap copies of a computation.

:func:`snapshot` is ``comp.ir``: the JSON-ready form of the computation
(:func:`spf.computation.serialize.to_data`) frozen into a
:class:`~spf.ir.ComputationIR`; :func:`build` is ``Computation.from_ir``, the same reader as
``from_json``. :func:`copy_of` copies a computation by sharing what cannot change (sets,
relations, parsed sources, data-space and UF declarations are immutable values) and copying
the containers a command may change (the statement objects, their tags, the buffers and the
layout's tables, the trace): ``comp.clone()`` without a prefix, in well under a
millisecond per statement, where a JSON round trip parses every set again.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, TypeVar

from spf.computation.fingerprint import Memo
from spf.computation.layout import Buffer, Layout
from spf.ir import ComputationIR, from_data, set_runner, to_data
from spf.ir.check import check_fields
from spf.ir.parsed import seed, seed_facts, seed_sources
from spf.schedule.commands import Wavefront
from spf.schedule.trace import Trace, set_trace, trace_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt
    from spf.schedule.commands import Command
    from spf.sets import Relation, Set

_S = TypeVar("_S", bound="Stmt")

__all__ = ["build", "copy_of", "private_copy", "run", "snapshot"]

_BUILT: OrderedDict[str, Computation] = OrderedDict()
"""Computations built from IRs (:func:`private_copy`), by fingerprint, least recent first."""
_BUILT_SIZE = 32
_SOURCE = "_source"
"""The attribute of an IR value that holds a weak reference to the computation it was taken
from (beside the frozen fields, as ``cached_property`` values are; not pickled)."""


def snapshot(comp: Computation) -> ComputationIR:
    """The IR of ``comp`` as it is now (``comp.ir`` remembers it until ``comp`` changes)."""
    from spf.computation.serialize import to_data as comp_data

    ir = from_data(comp_data(comp), trace=trace_of(comp).entries, params=comp.params)
    ir.__dict__[_SOURCE] = weakref.ref(comp)
    seed(ir, _parsed_values(comp))
    seed_sources(ir, {s.name: s.parsed for s in comp.stmts if s.source})
    seed_facts(ir, comp.assumptions)
    return ir


def _parsed_values(comp: Computation) -> Iterator[Set | Relation]:
    """The sets and relations of ``comp``'s statements, whose texts its IR holds."""
    for s in comp.stmts:
        yield s.domain
        yield s.schedule
        yield s.original_schedule
        for _, rel in (*s.reads, *s.writes):
            yield rel


def build(ir: ComputationIR) -> Computation:
    """A new computation equal to ``ir`` (``Computation.from_ir``)."""
    from spf.computation.serialize import from_data as comp_from_data

    if not isinstance(ir, ComputationIR):
        raise _not_ir(ir)
    check_fields(ir)  # an IR built by hand: a field of another type is named, not a raw error
    return comp_from_data(to_data(ir))


def private_copy(ir: ComputationIR) -> Computation:
    """A computation equal to ``ir`` that the caller may change: a copy of one built per
    IR value (the last few are kept), so repeated use of one IR pays for one build."""
    key = ir.fingerprint
    built = _BUILT.get(key)
    if built is None:
        built = build(ir)
        _keep(key, built)
    else:
        _BUILT.move_to_end(key)
    return copy_of(built)


def run(ir: ComputationIR, stmt: str, command: Command) -> ComputationIR:
    """``spf.ir.apply``: ``command`` applied to statement ``stmt`` of a private copy of
    ``ir``; the copy is kept as the computation of the result (a next command starts
    from it without a build)."""
    comp = private_copy(ir)
    target = comp.stmt(stmt)
    if isinstance(command, Wavefront):  # checked against the dependences, as the method is
        target.wavefront(command.loop, command.how)
    else:
        target._run(command)
    result = comp.ir
    _keep(result.fingerprint, comp)
    return result


def _keep(key: str, comp: Computation) -> None:
    _BUILT[key] = comp
    _BUILT.move_to_end(key)
    while len(_BUILT) > _BUILT_SIZE:
        _BUILT.popitem(last=False)


def copy_of(comp: Computation) -> Computation:
    """A copy of ``comp`` that shares its immutable parts (``comp.clone()``)."""
    from spf.computation.checkpoints import copy_log
    from spf.computation.computation import Computation

    new = Computation.__new__(Computation)
    for key, value in vars(comp).items():
        if isinstance(value, dict):
            value = dict(value)
        elif isinstance(value, list):
            value = list(value)
        new.__dict__[key] = value
    new._memo = Memo()
    new._stmts = [_stmt_copy(s, new) for s in comp._stmts]
    new._layout = _layout_copy(comp._layout, new)
    set_trace(new, Trace(trace_of(comp).entries))
    copy_log(comp, new, _same)
    return new


def _stmt_copy(stmt: _S, comp: Computation) -> _S:
    new = object.__new__(type(stmt))
    state = dict(vars(stmt))
    state["_tags"] = dict(state["_tags"])
    state["_comp"] = comp
    new.__dict__.update(state)
    return new


def _layout_copy(layout: Layout, comp: Computation) -> Layout:
    buffers: dict[str, Buffer] = {}
    for name, b in layout.buffers.items():
        copy = object.__new__(Buffer)
        copy.__dict__.update(vars(b))
        copy._comp = comp
        buffers[name] = copy
    return Layout(
        buffers=buffers, placements=dict(layout.placements), workspaces=dict(layout.workspaces)
    )


def _same(text: str) -> str:
    return text


def _not_ir(value: object) -> Exception:
    from spf.errors import SpfError

    return SpfError(
        f"Computation.from_ir expects a spf.ir.ComputationIR (comp.ir), got {type(value).__name__}"
    )


set_runner(run)

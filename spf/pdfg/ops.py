"""Graph operations that become schedule relations (API.md section 5).

``fuse(s1, s2, level)``: ``s2`` joins ``s1``'s loop nest, sharing the outer ``level`` loops,
right after ``s1``. ``reschedule(s1, s2)``: ``s1`` moves to just before ``s2`` (inside the
loops the two share), in either direction of the program order, unlike IEGenLib's. Both are
legality-checked; an illegal operation raises ``IllegalScheduleError`` and changes nothing
(schedules, tags and trace are restored). They return the schedules they changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from spf.computation.dependences import padded
from spf.computation.statement import is_constant
from spf.schedule import ROOT
from spf.schedule.trace import Trace, set_trace, trace_of

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt
    from spf.schedule.commands import Level
    from spf.sets import Relation


@contextmanager
def transaction(comp: Computation) -> Iterator[None]:
    """Undo every schedule, tag and trace change if the block raises."""
    saved = {s.name: (s._schedule, dict(s._tags)) for s in comp.stmts}
    entries = trace_of(comp).entries
    try:
        yield
    except BaseException:
        for s in comp.stmts:
            s._schedule, s._tags = saved[s.name][0], dict(saved[s.name][1])
        set_trace(comp, Trace(entries))
        raise


def _changed(comp: Computation, before: dict[str, str]) -> list[Relation]:
    return [s.schedule for s in comp.stmts if str(s.schedule) != before[s.name]]


def fuse(comp: Computation, s1: str | Stmt, s2: str | Stmt, level: Level) -> list[Relation]:
    """``s2`` runs right after ``s1`` inside their shared loops up to ``level``."""
    first, second = comp.stmt(s1), comp.stmt(s2)
    before = {s.name: str(s.schedule) for s in comp.stmts}
    with transaction(comp):
        second.after(first, level)
        comp.check_legality()
    return _changed(comp, before)


def reschedule(comp: Computation, s1: str | Stmt, s2: str | Stmt) -> list[Relation]:
    """``s1`` moves to just before ``s2``, inside the loops the two share."""
    mover, anchor = comp.stmt(s1), comp.stmt(s2)
    before = {s.name: str(s.schedule) for s in comp.stmts}
    with transaction(comp):
        mover.before(anchor, shared_level(comp, mover, anchor))
        comp.check_legality()
    return _changed(comp, before)


def shared_level(comp: Computation, a: Stmt, b: Stmt) -> Level:
    """The innermost loop ``a`` and ``b`` both sit in (same constants and loop names before
    it), or ``spf.ROOT``."""
    width = comp.schedule_width()
    oa, ob = padded(a, width).out_vars, padded(b, width).out_vars
    level: Level = ROOT
    for k in range(width):
        if oa[k] != ob[k]:
            break
        if not is_constant(oa[k]):
            level = oa[k]
    return level

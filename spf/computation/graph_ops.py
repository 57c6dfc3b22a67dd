"""Graph operations that become schedule relations (docs/pdfg.md, docs/assumptions.md).

``fuse(s1, s2, level)``: ``s2`` joins ``s1``'s loop nest right after ``s1``, sharing the
outer ``level`` loops: ``level`` COUNTS the shared loops (``1``: the outermost, ``2``: the two
outermost; ``0`` or ``spf.ROOT``: none, ``s2`` runs right after ``s1``'s whole nest). A loop
name shares the loops up to and including that one. ``reschedule(s1, s2)``: ``s1`` moves to
just before ``s2`` (inside the loops the two share), in either direction of the program order,
unlike IEGenLib's; ``s2`` and the statements around it keep their order. Both are
legality-checked; an illegal operation raises ``IllegalScheduleError`` and changes nothing
(schedules, tags, operation placements and trace are restored), except a ``fuse`` that breaks
only dependences between sparse kernels fused into one loop (or between statements of one
such kernel, half fused): it is kept for ``comp.wavefront`` on that loop, whose inspector
orders them at run time; ``compile`` refuses it until then, naming the dependence.
They return the schedules they
changed. ``fuse`` is recorded in the trace as ``s2.after(s1, level)``, or, when it moves ``s2``
away from an earlier predecessor (fusing a statement again, deeper or elsewhere, as IEGenLib
allows), as a :class:`~spf.schedule.commands.Fuse` that ends that order and prints as the
``comp.fuse`` call; ``reschedule`` as itself
(``comp.reschedule("s2", "s0")``, a :class:`~spf.schedule.commands.Reschedule` of ``s1``), so
replaying the trace on a fresh copy rebuilds the same schedules. ``spf.pdfg.PDFG``'s
operations call these through its computation (``comp.fuse``, ``comp.reschedule``,
``comp._inline_temporary``; :class:`spf.pdfg.subject.GraphSubject`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from spf.analysis.dependences import padded
from spf.computation.checkpoints import after_command, before_command
from spf.computation.operations import placements, restore_placements
from spf.computation.statement import is_constant
from spf.errors import ArgumentError, IllegalScheduleError, ScheduleError, SpfError, UndeclaredError
from spf.schedule import ROOT
from spf.schedule.commands import After, Fuse, Reschedule
from spf.schedule.order import (
    fused_with,
    holds,
    latest_orders,
    place_after,
    place_rescheduled,
    shared_loops,
)
from spf.schedule.trace import Trace, set_trace, trace_of

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.dependence import Dependence
    from spf.computation.statement import Stmt
    from spf.schedule.commands import Level
    from spf.schedule.relations import State
    from spf.sets import Relation


@contextmanager
def transaction(comp: Computation) -> Iterator[None]:
    """Undo every schedule, tag, placement and trace change if the block raises (and tell
    :mod:`spf.computation.checkpoints`, which keeps the history's snapshots, around it)."""
    before_command(comp)
    saved = {s.name: (s._schedule, dict(s._tags)) for s in comp.stmts}
    placed = placements(comp)
    entries = trace_of(comp).entries
    try:
        yield
    except BaseException:
        for s in comp.stmts:
            s._schedule, s._tags = saved[s.name][0], dict(saved[s.name][1])
        restore_placements(comp, placed)
        set_trace(comp, Trace(entries))
        raise
    after_command(comp)


def inline(comp: Computation, data_space: str) -> list[str]:
    """Producer-consumer inlining of ``data_space``
    (:func:`spf.computation.inlining.inline_data_space`), recorded in the trace as
    ``inline()`` of its producer, so it prints and replays like ``stmt.inline()``; returns
    the rewritten consumers."""
    from spf.computation.effects import Inline
    from spf.computation.inlining import inline_data_space

    writers = [s.name for s in comp.stmts if any(ds == data_space for ds, _ in s.writes)]
    before_command(comp)
    out = inline_data_space(comp, data_space)  # refused unless ``writers`` is one statement
    trace_of(comp).record(writers[0], Inline())
    after_command(comp)
    return out


def _changed(comp: Computation, before: dict[str, str]) -> list[Relation]:
    return [s.schedule for s in comp.stmts if str(s.schedule) != before[s.name]]


def fuse_level(first: Stmt, second: Stmt, level: object) -> Level:
    """The ``after`` level that shares ``level`` loops (a count) or the loops up to and
    including loop ``level`` (a name) of ``first`` and ``second``."""
    if level is ROOT:
        return ROOT
    if isinstance(level, str):
        if level not in (*first.loops, *second.loops):
            raise UndeclaredError(
                "loop",
                level,
                first.loops,
                hint=f"fuse: not a loop of {first.name} nor of {second.name} (loops of "
                f"{second.name}: {', '.join(second.loops) or 'none'})",
            )
        return level
    if isinstance(level, bool) or not isinstance(level, int) or level < 0:
        raise ArgumentError(
            f"fuse: level counts the loops {first.name} and {second.name} share (0, 1, 2, "
            f"...) or names the innermost shared loop; got {level!r}"
        )
    most = min(len(first.loops), len(second.loops))
    if level > most:
        raise UndeclaredError(
            "loop",
            str(level),
            first.loops,
            hint=f"fuse: level counts shared loops; {first.name} has {len(first.loops)} "
            f"loop(s) and {second.name} {len(second.loops)}, so at most {most} can be shared",
        )
    return ROOT if level == 0 else level - 1


def fuse(comp: Computation, s1: str | Stmt, s2: str | Stmt, level: object) -> list[Relation]:
    """``s2`` runs right after ``s1`` inside their outer ``level`` loops (a count, or the
    name of the innermost shared loop)."""
    first, second = comp.stmt(s1), comp.stmt(s2)
    if first is second:
        raise ScheduleError(f"fuse: {first.name} cannot be fused with itself")
    after = fuse_level(first, second, level)
    before = {s.name: str(s.schedule) for s in comp.stmts}
    with transaction(comp):
        second._run(_fuse_command(comp, first, second, after, level))
        try:
            comp.check_legality()
        except IllegalScheduleError:
            if not _wavefront_pending(comp):
                raise
    return _changed(comp, before)


def _wavefront_pending(comp: Computation) -> bool:
    """Whether the schedule breaks only dependences between sparse kernels fused into one
    loop (or between statements of one such kernel whose fusion is half done): a wavefront
    on the loop (``comp.wavefront``) orders them at run time, and until then ``compile``
    refuses it, naming the first one (docs/inspection.md)."""
    from spf.analysis.dependences import check_legality, splits_kernel, wavefront_could_order
    from spf.analysis.reductions import check_reduction_loops

    def waived(dep: Dependence) -> bool:
        ir = comp.ir
        return wavefront_could_order(ir, dep) is not None or splits_kernel(ir, dep)

    try:
        ir = comp.ir
        check_reduction_loops(ir)
        check_legality(ir, waive=waived)
    except IllegalScheduleError:
        return False
    return True


def _fuse_command(
    comp: Computation, first: Stmt, second: Stmt, after: Level, level: object
) -> After | Fuse:
    """``second.after(first, after)``, or a :class:`Fuse` when that moves ``second`` away
    from an earlier predecessor (outside the nest that moves with it): IEGenLib's ``fuse``
    moves a statement fused before, and the earlier order gives way."""
    from spf.computation.scheduling import context_of

    cmd = After(other=first.name, level=after)
    ctx = context_of(comp)
    name = second.name
    group = fused_with(name, shared_loops(name, cmd, ctx.states), ctx.states, ctx.orders)
    preds = {
        o.other: o
        for succ, o in latest_orders(ctx.orders)
        if succ == name and o.other not in group and o.other != first.name
    }
    if not preds:
        return cmd
    kept = [o for o in ctx.orders if o[0] != name or o[1].other not in preds]
    new = {**ctx.states, **place_after(name, cmd, ctx.states, kept)}
    gone = tuple(sorted(p for p, o in preds.items() if not _holds(name, o, new)))
    if not gone:
        return cmd
    shared = 0 if level is ROOT else level
    assert isinstance(shared, (int, str))  # checked by fuse_level
    return Fuse(other=first.name, level=after, shared=shared, replaces=gone)


def _holds(succ: str, order: After, states: dict[str, State]) -> bool:
    try:
        return holds(states[succ], states[order.other], shared_loops(succ, order, states))
    except SpfError:
        return False  # its loop is gone


def reschedule(comp: Computation, s1: str | Stmt, s2: str | Stmt) -> list[Relation]:
    """``s1`` moves to just before ``s2``, inside the loops the two share; ``s2`` and the
    statements around it keep their order. Recorded as one :class:`Reschedule` of ``s1``
    (it prints as this call and replays to the same schedules)."""
    mover, anchor = comp.stmt(s1), comp.stmt(s2)
    if mover is anchor:
        raise ScheduleError(f"reschedule: {mover.name} cannot move before itself")
    before = {s.name: str(s.schedule) for s in comp.stmts}
    with transaction(comp):
        mover._run(_rescheduled(comp, mover, anchor))
        comp.check_legality()
    return _changed(comp, before)


def _rescheduled(comp: Computation, mover: Stmt, anchor: Stmt) -> Reschedule:
    """The command that puts ``mover`` (and the nest fused into it) in ``anchor``'s slot
    inside their shared loops, ``anchor`` and what follows it one slot later, with the
    orders the move reverses (:func:`spf.schedule.order.place_rescheduled`)."""
    from spf.computation.scheduling import context_of

    cmd = Reschedule(other=anchor.name, level=shared_level(comp, mover, anchor))
    ctx = context_of(comp)
    try:
        _, follows = place_rescheduled(mover.name, cmd, ctx.states, ctx.orders)
    except SpfError as err:
        err.add_note(f"During: reschedule({mover.name!r}, {anchor.name!r})")
        raise
    return Reschedule(other=cmd.other, level=cmd.level, follows=follows)


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

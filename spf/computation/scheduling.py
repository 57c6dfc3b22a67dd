"""Scheduling a statement of a computation: a command applied and recorded.

:func:`run` is what every ``Stmt`` scheduling method calls: a pure command goes through
:func:`spf.schedule.apply.apply_command` on the computation's :func:`context_of` and the new
schedules and tags are stored; an :class:`~spf.schedule.commands.Effect` command changes the
computation itself (:mod:`spf.computation.effects`, :mod:`spf.computation.layout`). Either
way the command is recorded in the computation's trace; on error nothing changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.computation.checkpoints import after_command, before_command
from spf.computation.operations import note_order
from spf.errors import ScheduleError, SpfError, add_context
from spf.schedule.apply import Context, apply_command
from spf.schedule.commands import After, Command, Effect, Fuse, Reschedule
from spf.schedule.relations import State
from spf.schedule.trace import trace_of

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt

__all__ = ["context_of", "run"]


def context_of(comp: Computation) -> Context:
    """The :class:`Context` of a computation (its statements, reserved names, orders)."""
    names = {s.name for s in comp.stmts}
    # an order with a statement that is gone (a producer PDFG ``inline`` removed) orders nothing
    orders = tuple(o for o in trace_of(comp).orders() if o[0] in names and o[1].other in names)
    return Context(
        states={s.name: State(s.schedule, s.tags) for s in comp.stmts},
        domain_arity={s.name: s.domain.arity for s in comp.stmts},
        reserved=frozenset(comp.params)
        | frozenset(comp.data_spaces)
        | frozenset(comp.ufs)
        | frozenset(s.name for s in comp.stmts),
        ufs=comp.ufs,
        orders=orders,
    )


def run(stmt: Stmt, cmd: Command) -> None:
    """Apply ``cmd`` to ``stmt`` and record it in its computation's trace; on error the
    computation is unchanged."""
    comp = stmt.computation
    if comp is None:
        raise ScheduleError(
            f"statement {stmt.name}: add it to a Computation before scheduling it "
            f"({cmd.call_text()})"
        )
    before_command(comp)  # the history's snapshot (spf.computation.checkpoints)
    if isinstance(cmd, Effect):
        try:
            cmd.perform(stmt)
        except SpfError as err:
            add_context(err, f"During: applying {cmd.call_text()} to statement {stmt.name}")
            raise
        trace_of(comp).record(stmt.name, cmd)
        after_command(comp)
        return
    try:
        updates = apply_command(cmd, stmt.name, context_of(comp))
    except SpfError as err:
        add_context(err, f"During: applying {cmd.call_text()} to statement {stmt.name}")
        raise
    for name, state in updates.items():
        target = comp.stmt(name)
        target._schedule = state.schedule
        target._tags = dict(state.tags)
    trace_of(comp).record(stmt.name, cmd)
    if isinstance(cmd, After):  # Layer IV operations get their program order from orders
        note_order(comp, stmt.name, cmd)
    elif isinstance(cmd, Fuse):
        note_order(comp, stmt.name, After(other=cmd.other, level=cmd.level))
    elif isinstance(cmd, Reschedule):
        note_order(comp, cmd.other, After(other=stmt.name, level=cmd.level))
    after_command(comp)

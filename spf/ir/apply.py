"""``apply(command, ir) -> ir``: one scheduling command on a frozen computation.

The command runs where every command runs, on a :class:`spf.Computation`: the computation
layer registers (:func:`set_runner`, when ``spf.computation`` is imported) how. It runs the
command on a cheap copy of a computation equal to the IR, one built per IR value and kept
with the result's value too (``spf.computation.snapshot``), so a search that applies many
commands from one IR, or a chain of commands, pays for one build. The command is checked
and recorded as on the computation (a bad one raises ``ScheduleError`` or ``SpfError``),
and the result is the computation's new snapshot.
"""

from __future__ import annotations

from collections.abc import Callable

from spf.errors import ArgumentError
from spf.ir.model import ComputationIR
from spf.schedule.commands import Command
from spf.schedule.trace import TraceEntry

Runner = Callable[[ComputationIR, str, Command], ComputationIR]
"""``run(ir, stmt, command)``: the IR of a computation equal to ``ir`` after ``command``."""

_RUNNER: list[Runner] = []


def set_runner(run: Runner) -> None:
    """Register how commands run (``spf.computation`` does, on import)."""
    _RUNNER[:] = [run]


def apply(
    command: TraceEntry | Command, ir: ComputationIR, stmt: str | None = None
) -> ComputationIR:
    """``ir`` with ``command`` applied: a :class:`~spf.schedule.trace.TraceEntry` (statement
    and command), or a command and ``stmt``, the statement's name.

    >>> import spf
    >>> from spf.schedule.commands import Interchange
    >>> ir = spf.kernels.gemm().ir
    >>> new = spf.ir.apply(Interchange(i="j", j="k"), ir, stmt="s0")
    >>> new.stmts[0].current_schedule, len(ir.trace), len(new.trace)
    ('{[i, j, k] -> [0, i, 0, k, 0, j, 0]}', 0, 1)
    """
    if not isinstance(ir, ComputationIR):
        raise ArgumentError(f"apply: expected a ComputationIR (comp.ir), got {type(ir).__name__}")
    if isinstance(command, TraceEntry):
        if stmt is not None and stmt != command.stmt:
            raise ArgumentError(
                f"apply: the entry applies to statement {command.stmt!r}, not {stmt!r}"
            )
        stmt, command = command.stmt, command.command
    if not isinstance(command, Command):
        raise ArgumentError(
            f"apply: expected a scheduling command (spf.schedule.commands) or a TraceEntry, "
            f"got {command!r}"
        )
    if stmt is None:
        raise ArgumentError(
            f"apply({command.call_text()}): name the statement it applies to (stmt='s0')"
        )
    assert _RUNNER, "importing spf.ir imports spf, whose computation layer registers it"
    return _RUNNER[0](ir, stmt, command)

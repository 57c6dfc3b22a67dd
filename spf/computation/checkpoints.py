"""Snapshots of a computation between its commands, for ``comp.pdfg_history()``.

The trace (:mod:`spf.schedule.trace`) records the commands applied to a computation, not the
computation they were applied to. To rebuild the computation as it was after each command,
spf keeps, per computation, the JSON of the computation just before its first command, and
again before a later command when something other than a command changed it since the
previous one (a statement, a buffer or a send declared in between). Replaying the trace from
the nearest snapshot rebuilds every step (:mod:`spf.computation.history`).

Every path that records commands calls :func:`before_command` before changing anything and
:func:`after_command` once the command is recorded: :func:`spf.computation.scheduling.run`
(every ``Stmt`` command) and the PDFG operations (:mod:`spf.computation.graph_ops`). A
snapshot costs one ``to_json``; the check between commands compares ``comp.version`` (a
fingerprint).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spf.errors import SpfError
from spf.schedule.trace import trace_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from spf.computation.computation import Computation

__all__ = [
    "after_command",
    "before_command",
    "copy_log",
    "keep",
    "restore_log",
    "rewrite",
    "saved_log",
    "snapshots",
]


@dataclass
class _Log:
    """The snapshots of one computation and what it looked like after its last command."""

    snapshots: dict[int, str | SpfError] = field(default_factory=dict)
    """JSON of the computation just before the command at this trace index (the error
    ``to_json`` raised where it could not be written: the history says so, the command
    itself goes ahead)."""
    seen: tuple[int, int] | None = None
    """``(trace length, version)`` right after the last command (None before any)."""


_LOGS: weakref.WeakKeyDictionary[Computation, _Log] = weakref.WeakKeyDictionary()


def before_command(comp: Computation) -> None:
    """Snapshot ``comp`` before a command when the trace cannot tell how it got here: no
    command yet, or something other than a command changed it since the last one."""
    log = _LOGS.get(comp)
    if log is None:
        log = _LOGS[comp] = _Log()
    index = len(trace_of(comp))
    state = (index, comp.version)
    if log.seen == state and any(k <= index for k in log.snapshots):
        return
    log.snapshots = {k: v for k, v in log.snapshots.items() if k < index}
    try:
        log.snapshots[index] = comp.to_json()
    except SpfError as err:
        log.snapshots[index] = err
    log.seen = state


def after_command(comp: Computation) -> None:
    """Note how ``comp`` looks right after a command was recorded."""
    log = _LOGS.get(comp)
    if log is None:
        log = _LOGS[comp] = _Log()
    log.seen = (len(trace_of(comp)), comp.version)


def keep(comp: Computation, since: int) -> None:
    """Snapshot ``comp`` as it is now for every step of the trace after index ``since``:
    the commands an operation recorded there are one step of the history
    (``comp.wavefront`` tags every statement together)."""
    after_command(comp)
    log = _LOGS[comp]
    size = len(trace_of(comp))
    try:
        text: str | SpfError = comp.to_json()
    except SpfError as err:
        text = err
    for k in range(since + 1, size + 1):
        log.snapshots[k] = text


def snapshots(comp: Computation) -> dict[int, str | SpfError]:
    """The snapshots of ``comp`` by trace index, after taking one of its current state if
    something other than a command changed it since its last command (so the last step of a
    history is the computation as it is now)."""
    before_command(comp)
    log = _LOGS[comp]
    size = len(trace_of(comp))
    return {k: v for k, v in sorted(log.snapshots.items()) if k <= size}


def rewrite(comp: Computation, transform: Callable[[str], str]) -> None:
    """Apply ``transform`` to every snapshot of ``comp`` (a rename of the computation:
    :mod:`spf.computation.renaming`); a snapshot it cannot transform becomes its error."""
    log = _LOGS.get(comp)
    if log is None:
        return
    log.snapshots = {k: _transformed(v, transform) for k, v in log.snapshots.items()}
    log.seen = None


def copy_log(source: Computation, target: Computation, transform: Callable[[str], str]) -> None:
    """Give ``target`` (a clone of ``source``) the snapshots of ``source``, transformed."""
    log = _LOGS.get(source)
    if log is None:
        return
    _LOGS[target] = _Log({k: _transformed(v, transform) for k, v in log.snapshots.items()})


def saved_log(comp: Computation) -> dict[int, str | SpfError]:
    """The snapshots kept for ``comp`` (empty when none), for a pickled or copied
    computation's state (``Computation.__getstate__``)."""
    log = _LOGS.get(comp)
    return {} if log is None else dict(log.snapshots)


def restore_log(comp: Computation, snapshots: dict[int, str | SpfError]) -> None:
    """Give ``comp`` (an unpickled or copied computation) the snapshots :func:`saved_log`
    took of the one it was made from."""
    if snapshots:
        _LOGS[comp] = _Log(dict(snapshots))


def _transformed(text: str | SpfError, transform: Callable[[str], str]) -> str | SpfError:
    if isinstance(text, SpfError):
        return text
    try:
        return transform(text)
    except SpfError as err:
        return err

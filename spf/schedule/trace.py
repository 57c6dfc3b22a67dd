"""The trace: every scheduling command applied to a computation, in order (TVM's trace).

A trace prints as Python that rebuilds the schedule, replays onto another computation with
the same statements (a fresh kernel), and converts to and from JSON data.

>>> from spf import kernels
>>> comp = kernels.gemm()
>>> _ = comp.stmt("s0").interchange("j", "k").parallelize("i")
>>> print(trace_of(comp).as_python())
comp.stmt("s0").interchange("j", "k")
comp.stmt("s0").parallelize("i")
>>> fresh = trace_of(comp).replay(kernels.gemm())
>>> fresh.stmt("s0").loops, fresh.stmt("s0").tags
(('i', 'k', 'j'), {'i': ('parallel',)})
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol, TypeVar

from spf.errors import ScheduleError, SpfError, add_context
from spf.schedule.commands import COMMANDS, ROOT, After, Command, Fuse, Reschedule, Wavefront


class _Scheduled(Protocol):
    """A statement (``spf.Stmt``): applies a command and records it."""

    def _run(self, command: Command) -> object: ...


class _Statements(Protocol):
    """A computation (``spf.Computation``): its statements by name."""

    def stmt(self, name: str, /) -> _Scheduled: ...


_C = TypeVar("_C", bound=_Statements)


@dataclass(frozen=True, kw_only=True)
class TraceEntry:
    """One command applied to one statement (by name)."""

    stmt: str
    command: Command

    def as_python(self, var: str = "comp") -> str:
        """``comp.stmt("s0").tile("i", "j", 2, 2, "i0", "j0", "i1", "j1")`` (a PDFG
        reschedule: ``comp.reschedule("s2", "s0")``)."""
        return self.command.trace_text(self.stmt, var)

    def to_data(self) -> dict[str, Any]:
        """JSON-ready: ``{"stmt": ..., "command": "Tile", "args": {...}}`` (``ROOT``: null)."""
        args = {f.name: _plain(getattr(self.command, f.name)) for f in fields(self.command)}
        return {"stmt": self.stmt, "command": type(self.command).__name__, "args": args}

    @classmethod
    def from_data(cls, data: object) -> TraceEntry:
        """The entry :meth:`to_data` wrote (``SpfError`` for anything else)."""
        if not isinstance(data, dict) or not isinstance(data.get("stmt"), str):
            raise ScheduleError(
                f"trace entry: expected {{'stmt', 'command', 'args'}}, got {data!r}"
            )
        kind = COMMANDS.get(str(data.get("command")))
        args = data.get("args")
        if kind is None or not isinstance(args, dict):
            raise ScheduleError(
                f"trace entry: unknown command {data.get('command')!r}; known: "
                f"{', '.join(sorted(COMMANDS))}"
            )
        if kind in (After, Reschedule, Fuse) and args.get("level", ROOT) is None:
            args = {**args, "level": ROOT}
        try:
            command = kind(**args)
        except TypeError as err:
            raise ScheduleError(f"trace entry {data!r}: {err}") from err
        return cls(stmt=data["stmt"], command=command)


def _same_call(command: Command, first: Wavefront) -> bool:
    """Whether ``command`` was recorded by the ``comp.wavefront`` call that recorded
    ``first`` (the same loop named, the same method)."""
    return (
        isinstance(command, Wavefront) and command.whole == first.whole and command.how == first.how
    )


class Trace:
    """The scheduling commands applied to one computation, oldest first."""

    def __init__(self, entries: Sequence[TraceEntry] = ()) -> None:
        self._entries: list[TraceEntry] = list(entries)

    @property
    def entries(self) -> tuple[TraceEntry, ...]:
        return tuple(self._entries)

    def record(self, stmt: str, command: Command) -> None:
        """Append ``command`` applied to statement ``stmt``."""
        self._entries.append(TraceEntry(stmt=stmt, command=command))

    def as_python(self, var: str = "comp") -> str:
        """Python that rebuilds the schedule on a computation bound to ``var`` (with ``import
        spf`` first when a command uses ``spf.ROOT``). A run of entries of one wavefront (one
        ``comp.wavefront(loop)``, recorded on each statement of the loop) prints as that
        call: ``stmt.wavefront`` on one of them alone is refused (the others share its loop)."""
        lines: list[str] = []
        entries = self._entries
        k = 0
        while k < len(entries):
            command = entries[k].command
            end = k + 1
            if isinstance(command, Wavefront) and command.whole is not None:
                while end < len(entries) and _same_call(entries[end].command, command):
                    end += 1
                call = Wavefront(loop=command.whole, how=command.how)
                lines.append(f"{var}.{call.call_text()}")
            else:
                lines.append(entries[k].as_python(var))
            k = end
        if any("spf.ROOT" in line for line in lines):
            lines.insert(0, "import spf")
        return "\n".join(lines)

    def orders(self) -> tuple[tuple[str, After], ...]:
        """The program orders the commands put in force, oldest first, as ``(statement,
        After)``: each ``after``, and each reschedule's (its anchor after the statement that
        moved, then the orders the move reversed); a later order of a pair replaces an
        earlier one (:func:`spf.schedule.order.latest_orders`), and a PDFG ``fuse`` that
        moves a statement away from a predecessor ends their earlier orders."""
        out: list[tuple[str, After]] = []
        for e in self._entries:
            ended = e.command.replaced(e.stmt)
            if ended:
                out = [o for o in out if frozenset((o[0], o[1].other)) not in ended]
            out += e.command.orders(e.stmt)
        return tuple(out)

    def replay(self, comp: _C) -> _C:
        """Apply every command, in order, to the statements of the same names of ``comp``
        (typically a fresh copy of the computation this trace was recorded on); returns
        ``comp``, whose own trace records the commands too."""
        entries = list(self._entries)
        for k, e in enumerate(entries):
            try:
                comp.stmt(e.stmt)._run(e.command)
            except SpfError as err:
                add_context(
                    err, f"During: replaying entry {k + 1} of {len(entries)}: {e.as_python()}"
                )
                raise
        return comp

    def to_data(self) -> list[dict[str, Any]]:
        return [e.to_data() for e in self._entries]

    @classmethod
    def from_data(cls, data: object) -> Trace:
        if not isinstance(data, list):
            raise ScheduleError(f"trace: expected a list of entries, got {data!r}")
        return cls([TraceEntry.from_data(d) for d in data])

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(list(self._entries))

    def __getitem__(self, k: int) -> TraceEntry:
        return self._entries[k]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trace):
            return NotImplemented
        return self._entries == other._entries

    def __str__(self) -> str:
        return self.as_python()

    def __repr__(self) -> str:
        return f"Trace(entries={len(self._entries)})"


def _plain(value: object) -> object:
    """A command's field value as JSON data: ``ROOT`` as None, also inside tuples."""
    if value is ROOT:
        return None
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


_TRACES: weakref.WeakKeyDictionary[Any, Trace] = weakref.WeakKeyDictionary()


def trace_of(comp: object) -> Trace:
    """The trace of ``comp`` (created empty on first use); ``Computation.trace``."""
    found = _TRACES.get(comp)
    if found is None:
        found = _TRACES[comp] = Trace()
    return found


def set_trace(comp: object, trace: Trace) -> None:
    """Replace the trace of ``comp`` (``from_json`` restores a recorded one)."""
    _TRACES[comp] = trace


def _mentions(entry: TraceEntry, loop: str) -> bool:
    """Whether the command names ``loop`` (as a loop it reads or a loop it creates)."""
    cmd = entry.command
    values: list[object] = []
    for f in fields(cmd):
        v = getattr(cmd, f.name)
        values += list(v) if isinstance(v, tuple) else [v]
    if loop in values:
        return True
    split_default = getattr(cmd, "inner", "") is None and isinstance(getattr(cmd, "loop", 0), str)
    return split_default and loop in (f"{cmd.loop}0", f"{cmd.loop}1")  # type: ignore[attr-defined]


def culprit(comp: object, stmts: Sequence[str], loop: str | None = None) -> TraceEntry | None:
    """The latest command of the trace that touched ``stmts`` (as the statement it was
    applied to, or the one it was ordered against), preferring one that names ``loop``;
    None when no command touched them (the schedule they were added with)."""
    return culprit_in(trace_of(comp).entries, stmts, loop)


def culprit_in(
    entries: Sequence[TraceEntry], stmts: Sequence[str], loop: str | None = None
) -> TraceEntry | None:
    """:func:`culprit` among ``entries`` (a trace's, e.g. ``ComputationIR.trace``)."""
    names = set(stmts)
    touched = [
        e
        for e in entries
        if e.stmt in names
        or getattr(e.command, "other", None) in names
        or getattr(e.command, "consumer", None) in names
    ]
    if loop is not None:
        for e in reversed(touched):
            if _mentions(e, loop):
                return e
    return touched[-1] if touched else None


def blame(comp: object, stmts: Sequence[str], loop: str | None = None) -> str:
    """``"; caused by comp.stmt("s0").tile(...)"`` for an ``IllegalScheduleError``
    message (empty when no command is to blame)."""
    return blame_in(trace_of(comp).entries, stmts, loop)


def blame_in(entries: Sequence[TraceEntry], stmts: Sequence[str], loop: str | None = None) -> str:
    """:func:`blame` from the trace ``entries`` (``ComputationIR.trace``)."""
    entry = culprit_in(entries, stmts, loop)
    if entry is None:
        return ""
    return f"; caused by {entry.as_python()} (check=False generates it anyway)"

"""``comp.pdfg_history()``: the computation's states, rebuilt by replaying its trace on
copies from the snapshots :mod:`spf.computation.checkpoints` keeps, and a graph of each,
gathered in a :class:`spf.pdfg.history.PDFGHistory` (whose docstring tells the steps).
"""

from __future__ import annotations

from collections.abc import Mapping

from spf.computation.computation import Computation
from spf.computation.operations import OperationStmt
from spf.errors import ScheduleError, SpfError, VerifyError
from spf.pdfg import PDFG, PDFGHistory
from spf.pdfg.annotate import check_params
from spf.pdfg.history import INITIAL
from spf.schedule.commands import Effect
from spf.schedule.trace import Trace, TraceEntry, set_trace

__all__ = ["pdfg_history"]


def pdfg_history(comp: Computation, params: Mapping[str, int] | None = None) -> PDFGHistory:
    """The graph before any command of ``comp.trace``, then after each
    (``comp.pdfg_history(params=...)``); with ``params``, every step's graph is priced with
    the values of the parameters it has (a parameter none of the steps has is an error)."""
    from spf.computation.checkpoints import snapshots

    entries = comp.trace.entries
    snaps = snapshots(comp)
    work = _initial(comp, snaps)
    states = [(INITIAL, INITIAL, work)]
    for k, entry in enumerate(entries, start=1):
        work = _load(comp, snaps[k], k) if k in snaps else _replayed(comp, work, entry, k)
        states.append((entry.as_python(), entry.command.method, work))
    if len(entries) not in snaps and work.to_json() != comp.to_json():
        raise ScheduleError(
            f"pdfg_history: replaying the trace of {comp.name} on its initial state does not "
            "give its current schedule; this is an spf bug (please report it with "
            "comp.trace.as_python())"
        )
    values = None if params is None else _checked(comp, [w for _, _, w in states], params)
    return PDFGHistory(
        (text, method, _graph(w, k, text, values)) for k, (text, method, w) in enumerate(states)
    )


def _checked(
    comp: Computation, states: list[Computation], params: Mapping[str, int]
) -> dict[str, int]:
    """``params`` checked against the parameters of all the steps (one may declare a
    parameter the others lack: a statement added between two commands)."""
    known = frozenset(comp.params).union(*(w.params for w in states))
    return check_params(known, params, "pdfg_history(params=...)")


def _graph(comp: Computation, step: int, text: str, params: Mapping[str, int] | None) -> PDFG:
    """The PDFG of ``comp`` at ``step``, priced with those of ``params`` it has; an error
    building it says which step it was."""
    try:
        if params is None:
            return PDFG(comp)
        return PDFG(comp, {name: v for name, v in params.items() if name in comp.params})
    except SpfError as err:
        err.add_note(f"During: pdfg_history, the graph of step {step} ({text})")
        raise


def _load(comp: Computation, snapshot: str | SpfError, step: int) -> Computation:
    if isinstance(snapshot, SpfError):
        raise VerifyError(
            f"pdfg_history: {comp.name} could not be kept as it was before step {step + 1} "
            f"(to_json failed: {snapshot})"
        )
    return Computation.from_json(snapshot)


def _replayed(comp: Computation, before: Computation, entry: TraceEntry, step: int) -> Computation:
    """A copy of ``before`` with ``entry`` applied."""
    work = Computation.from_json(before.to_json())
    try:
        Trace([entry]).replay(work)
    except SpfError as err:
        raise ScheduleError(
            f"pdfg_history: replaying step {step}, {entry.as_python()}, on a copy of "
            f"{comp.name} failed ({err}); this is an spf bug (please report it with "
            "comp.trace.as_python())"
        ) from err
    return work


def _initial(comp: Computation, snaps: dict[int, str | SpfError]) -> Computation:
    """``comp`` before its first command: the snapshot taken then, or, for a computation
    loaded with a trace (``from_json``), the earliest snapshot with every schedule set back
    to the one its statement was added with, and the commands before it replayed."""
    if 0 in snaps:
        return _load(comp, snaps[0], 0)
    first = min(snaps)
    entries = comp.trace.entries[:first]
    done = [e for e in entries if isinstance(e.command, Effect)]
    start = _load(comp, snaps[first], first)
    operations = [s.name for s in start.stmts if isinstance(s, OperationStmt)]
    if done or operations:
        what = done[0].as_python() if done else f"the operations {operations}"
        raise ScheduleError(
            f"pdfg_history: {comp.name} came with a trace (from_json) and {what} changes more "
            "than schedules, so its state before the commands is not known; apply the "
            "commands to a freshly built computation to see the graph at every step"
        )
    for s in start.stmts:
        s._schedule, s._tags = s.original_schedule, {}
    set_trace(start, Trace())
    return start

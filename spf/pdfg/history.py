"""The PDFG at every step: ``comp.pdfg_history()`` and ``spf dot --steps`` (docs/pdfg.md).

The history is the graph before any command, then after each command of ``comp.trace``
(refused commands are not in the trace, so not in the history). Each state is rebuilt on a
copy: the computation as it was before its first command (a snapshot kept by
:mod:`spf.computation.checkpoints`) with the trace replayed one command at a time; where
something other than a command changed the computation between two commands (a statement, a
buffer or a send declared in between), the replay restarts from the snapshot taken then, so
a step also shows what was declared after its command, and the last step is the computation
as it is now.

>>> from spf import kernels
>>> comp = kernels.blur2d()
>>> _ = comp.stmt("s1").shift("i", 2).after("s0", "i")
>>> history = comp.pdfg_history()
>>> [text for text, _ in history]
['initial', 'comp.stmt("s1").shift("i", 2)', 'comp.stmt("s1").after("s0", "i")']
>>> history.file_names()
['00-initial.svg', '01-shift.svg', '02-after.svg']
>>> history[-1][1].to_dot() == comp.pdfg().to_dot()
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from spf.computation.operations import OperationStmt
from spf.errors import ArgumentError, ScheduleError, SpfError
from spf.pdfg.annotate import check_params
from spf.pdfg.pdfg import PDFG
from spf.schedule.commands import Effect
from spf.schedule.trace import Trace, TraceEntry, set_trace

if TYPE_CHECKING:
    from spf.computation.computation import Computation

__all__ = ["INITIAL", "PDFGHistory", "pdfg_history"]

INITIAL = "initial"
"""The command text of the first step (the graph before any command)."""

_ROW = (
    "display:flex; flex-wrap:nowrap; overflow-x:auto; gap:24px; align-items:flex-start; "
    "padding-bottom:8px"
)
_CELL = "flex:0 0 auto; margin:0"
_CAPTION = (
    "font-family:monospace; font-size:12px; margin-top:4px; white-space:pre-wrap; max-width:48em"
)


class PDFGHistory(list[tuple[str, PDFG]]):
    """``[(command_text, PDFG), ...]``: the graph before any command (text ``"initial"``),
    then after each command (its Python, ``comp.stmt("s0").tile(...)``). In a notebook it
    displays the graphs side by side in a row that scrolls sideways, each command under its
    graph; :meth:`render` writes one SVG per step and an ``index.html``."""

    def __init__(self, steps: Iterable[tuple[str, str, PDFG]] = ()) -> None:
        items = list(steps)
        super().__init__((text, graph) for text, _, graph in items)
        self.methods: tuple[str, ...] = tuple(method for _, method, _ in items)
        """The command name of each step (``"initial"``, ``"tile"``, ``"after"``, ...)."""

    def file_names(self) -> list[str]:
        """``00-initial.svg``, ``01-tile.svg``, ...: the step number (two digits, more
        beyond 99 steps) and the command's name."""
        width = max(2, len(str(len(self) - 1)))
        return [f"{k:0{width}d}-{method}.svg" for k, method in enumerate(self.methods)]

    def render(self, directory: str | Path) -> list[Path]:
        """Write one SVG per step (:meth:`file_names`) and ``index.html``, which shows them
        in order with the command under each, into ``directory`` (created if missing);
        returns the paths written, ``index.html`` last. Needs Graphviz's ``dot``."""
        if not isinstance(directory, (str, Path)) or not str(directory):
            raise ArgumentError(f"render: expected a directory path, got {directory!r}")
        folder = Path(directory)
        if folder.exists() and not folder.is_dir():
            raise ArgumentError(
                f"render: {str(folder)!r} is a file; give a directory for the steps"
            )
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise SpfError(f"render: cannot create {str(folder)!r}: {err.strerror}") from None
        written = [
            graph.render(folder / name)
            for (_, graph), name in zip(self, self.file_names(), strict=True)
        ]
        index = folder / "index.html"
        try:
            index.write_text(self._page(), encoding="utf-8")
        except OSError as err:
            raise SpfError(f"render: cannot write {str(index)!r}: {err.strerror}") from None
        return [*written, index]

    def _page(self) -> str:
        """``index.html`` for the SVG files :meth:`render` writes."""
        name = self._name()
        pictures = [
            f'<img src="{escape(file)}" alt="PDFG of {escape(name)}, step {k}">'
            for k, file in enumerate(self.file_names())
        ]
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{escape(name)}: the PDFG step by step</title>\n</head>\n<body>\n"
            f"<h1>{escape(name)}: the PDFG step by step</h1>\n"
            f"{self._row(pictures)}\n</body>\n</html>\n"
        )

    def _repr_html_(self) -> str:
        """The graphs side by side, each command under its graph (a notebook's display);
        without Graphviz's ``dot``, a message saying so and the commands."""
        try:
            pictures = [_inline(graph._repr_svg_()) for _, graph in self]
        except SpfError as err:
            steps = "".join(f"<li><code>{escape(text)}</code></li>" for text, _ in self)
            return (
                f"<p><b>spf:</b> the PDFG history of {escape(self._name())} cannot be drawn: "
                f"{escape(str(err))}</p>\n<ol start=0>{steps}</ol>"
            )
        return self._row(pictures)

    def _row(self, pictures: list[str]) -> str:
        cells = [
            f'<figure style="{_CELL}">{picture}'
            f'<figcaption style="{_CAPTION}">{k}. {escape(text)}</figcaption></figure>'
            for k, ((text, _), picture) in enumerate(zip(self, pictures, strict=True))
        ]
        return f'<div style="{_ROW}">\n' + "\n".join(cells) + "\n</div>"

    def _name(self) -> str:
        return str(self[0][1].graph.graph.get("name", "pdfg")) if self else "pdfg"

    def __repr__(self) -> str:
        return f"PDFGHistory({self._name()!r}, steps={len(self)})"


def _inline(svg: str) -> str:
    """An SVG document as an element that can sit inside HTML (no XML prolog or DOCTYPE)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


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
    from spf.computation.computation import Computation

    if isinstance(snapshot, SpfError):
        raise SpfError(
            f"pdfg_history: {comp.name} could not be kept as it was before step {step + 1} "
            f"(to_json failed: {snapshot})"
        )
    return Computation.from_json(snapshot)


def _replayed(comp: Computation, before: Computation, entry: TraceEntry, step: int) -> Computation:
    """A copy of ``before`` with ``entry`` applied."""
    from spf.computation.computation import Computation

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
        raise SpfError(
            f"pdfg_history: {comp.name} came with a trace (from_json) and {what} changes more "
            "than schedules, so its state before the commands is not known; apply the "
            "commands to a freshly built computation to see the graph at every step"
        )
    for s in start.stmts:
        s._schedule, s._tags = s.original_schedule, {}
    set_trace(start, Trace())
    return start

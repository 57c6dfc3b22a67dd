"""The PDFG at every step: ``comp.pdfg_history()`` and ``spf dot --steps`` (docs/pdfg.md).

The history is the graph before any command, then after each command of ``comp.trace``
(refused commands are not in the trace, so not in the history). Each state is rebuilt on a
copy: the computation as it was before its first command (a snapshot kept by
:mod:`spf.computation.checkpoints`) with the trace replayed one command at a time; where
something other than a command changed the computation between two commands (a statement, a
buffer or a send declared in between), the replay restarts from the snapshot taken then, so
a step also shows what was declared after its command, and the last step is the computation
as it is now. :func:`spf.computation.history.pdfg_history` rebuilds the states;
here is the list of their graphs.

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

import re
from collections.abc import Iterable
from html import escape, unescape
from pathlib import Path

from spf.errors import ArgumentError, SpfError
from spf.pdfg.pdfg import PDFG

__all__ = ["INITIAL", "PDFGHistory"]

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
            raise ArgumentError(f"render: cannot create {str(folder)!r}: {err.strerror}") from None
        index = folder / "index.html"
        previous = _previous_steps(index)
        written = [
            graph.render(folder / name)
            for (_, graph), name in zip(self, self.file_names(), strict=True)
        ]
        try:
            index.write_text(self._page(), encoding="utf-8")
        except OSError as err:
            raise ArgumentError(f"render: cannot write {str(index)!r}: {err.strerror}") from None
        for name in previous - set(self.file_names()):  # a previous render's other steps
            (folder / name).unlink(missing_ok=True)
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


def _previous_steps(index: Path) -> set[str]:
    """The SVG files that the ``index.html`` of an earlier :meth:`PDFGHistory.render` into
    the same folder shows (none when there is no such page): the steps a new render removes
    unless it writes them again."""
    try:
        page = index.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    if "the PDFG step by step</title>" not in page:
        return set()
    return {
        unescape(name)
        for name in re.findall(r'<img src="([^"/\\]+\.svg)"', page)
        if unescape(name) == Path(unescape(name)).name
    }

"""The ``PDFG`` object: graph, DOT text, rendering through Graphviz."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from spf.errors import ArgumentError, ToolchainError
from spf.pdfg.annotate import check_params
from spf.pdfg.dot import to_dot
from spf.pdfg.graph import build_graph, price

if TYPE_CHECKING:
    from collections.abc import Mapping

    import networkx as nx

    from spf.pdfg.subject import GraphSubject
    from spf.sets import Relation

_FORMATS = ("svg", "png", "pdf")


class PDFG:
    """Polyhedral dataflow graph of a computation (a snapshot: rebuild after changes).

    ``graph`` is the ``networkx.DiGraph``; ``to_dot()`` is deterministic; ``write`` writes
    ``.dot``; ``render`` writes ``.svg``/``.png``/``.pdf`` through Graphviz's ``dot``.
    ``params`` (``{"N": 1000}``) annotates it with sizes for those parameter values.
    """

    def __init__(self, comp: GraphSubject, params: Mapping[str, int] | None = None) -> None:
        self.computation = comp
        self.params: dict[str, int] | None = None
        if params is not None:
            self.params = check_params(frozenset(comp.params), params)
        self.graph = build_graph(comp, self.params)

    @property
    def graph(self) -> nx.DiGraph[str]:
        """The ``networkx.DiGraph`` (docs/pdfg.md)."""
        return self._graph

    @graph.setter
    def graph(self, g: nx.DiGraph[str]) -> None:
        """A graph rebuilt after an operation is priced with this PDFG's ``params``."""
        if self.params is not None and "params" not in g.graph:
            price(g, self.computation, self.params)
        self._graph = g

    def fuse(self, s1: str, s2: str, level: str | int | object) -> list[Relation]:
        """``s2`` joins ``s1``'s nest right after ``s1``, sharing ``level`` loops (a count:
        ``1`` the outermost; or the name of the innermost shared loop); the schedule
        relations changed are returned and the graph is rebuilt."""
        out = self.computation.fuse(s1, s2, level)
        self.graph = build_graph(self.computation)
        return out

    def reschedule(self, s1: str, s2: str) -> list[Relation]:
        """``s1`` moves to just before ``s2`` (either direction); returns changed schedules."""
        out = self.computation.reschedule(s1, s2)
        self.graph = build_graph(self.computation)
        return out

    def inline(self, data_space: str) -> list[str]:
        """Producer-consumer inlining of temporary ``data_space``: its producer's value is
        substituted into the consumers and the producer and the data space disappear;
        returns the rewritten consumers (recorded in the trace as the producer's
        ``inline()``)."""
        out = self.computation._inline_temporary(data_space)
        self.graph = build_graph(self.computation)
        return out

    def to_dot(self) -> str:
        return to_dot(self.graph)

    def write(self, path: str | Path) -> Path:
        """Write the DOT text to ``path``."""
        out = _target("write", path)
        _save("write", out, self.to_dot().encode())
        return out

    def render(self, path: str | Path) -> Path:
        """Render through Graphviz; the format follows the suffix (svg, png, pdf)."""
        out = _target("render", path)
        fmt = out.suffix.lstrip(".").lower()
        if fmt not in _FORMATS:
            raise ArgumentError(
                f"render: unsupported format {fmt!r} of {str(out)!r}; end the file name in one "
                f"of .{', .'.join(_FORMATS)}"
            )
        _save("render", out, _run_dot(self.to_dot(), fmt))
        return out

    def _repr_svg_(self) -> str:
        return _run_dot(self.to_dot(), "svg").decode()

    def __repr__(self) -> str:
        g = self.graph
        name = g.graph.get("name")
        return f"PDFG({name!r}, nodes={g.number_of_nodes()}, edges={g.number_of_edges()})"


def _run_dot(text: str, fmt: str) -> bytes:
    exe = shutil.which("dot")
    if exe is None:
        raise ToolchainError(
            "Graphviz's 'dot' is not installed; `make demo`/`make test` install it "
            "(apt-get install graphviz)"
        )
    done = subprocess.run([exe, f"-T{fmt}"], input=text.encode(), capture_output=True, check=False)
    if done.returncode != 0:
        raise ToolchainError(f"dot failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def _target(cmd: str, path: object) -> Path:
    """``path`` as a file path that can be written, or an ``SpfError`` naming it."""
    if not isinstance(path, (str, Path)) or not str(path):
        raise ArgumentError(f"{cmd}: expected a file path (str or pathlib.Path), got {path!r}")
    out = Path(path)
    if out.is_dir():
        raise ArgumentError(f"{cmd}: {str(out)!r} is a directory; give a file path inside it")
    if not out.parent.is_dir():
        raise ArgumentError(
            f"{cmd}: the directory {str(out.parent)!r} of {str(out)!r} does not exist; "
            "create it first"
        )
    return out


def _save(cmd: str, out: Path, data: bytes) -> None:
    try:
        out.write_bytes(data)
    except OSError as err:
        raise ArgumentError(f"{cmd}: cannot write {str(out)!r}: {err.strerror or err}") from None

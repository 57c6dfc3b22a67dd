"""Indented text output for printers, with notes of what the text defines.

Besides the lines, an :class:`Emitter` keeps what the printer says it printed: the
functions and macros at file scope, the OpenMP pragmas, the CUDA kernels. :meth:`unit`
makes the :class:`~spf.codegen.unit.TranslationUnit` record of them, so that no later stage
reads the text back.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from contextlib import contextmanager

from spf.codegen.unit import Chunk, Function, TranslationUnit


class Emitter:
    """Collects lines at the current indentation (two spaces per level)."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._depth = 0
        self._scopes: list[dict[str, Hashable]] = [{}]  # per indentation level: name -> value
        self._functions: dict[str, Function] = {}
        self._macros: dict[str, None] = {}
        self._openmp = False
        self._parallel = False

    def line(self, text: str) -> None:
        self._lines.append(("  " * self._depth + text) if text else "")

    def raw(self, text: str) -> None:
        self._lines.extend(text.rstrip("\n").split("\n"))

    @contextmanager
    def indented(self) -> Iterator[None]:
        self._depth += 1
        self._scopes.append({})
        try:
            yield
        finally:
            self._scopes.pop()
            self._depth -= 1

    @contextmanager
    def braces(self) -> Iterator[None]:
        self.line("{")
        with self.indented():
            yield
        self.line("}")

    def bind(self, name: str, value: Hashable) -> None:
        """Record that the current block binds ``name`` to ``value`` (a printer's ``const``
        local, as the expression tree it holds), for :meth:`bound`."""
        self._scopes[-1][name] = value

    def bound(self, name: str) -> Hashable | None:
        """The value the current block (not an enclosing one) bound ``name`` to, if any."""
        return self._scopes[-1].get(name)

    # ------------------------------------------------------------------ notes
    def function(self, name: str, prototype: str, *, static: bool = False) -> None:
        """Note that the text defines function ``name`` at file scope (``prototype``: as
        printed, without ``static``)."""
        self._functions.setdefault(name, Function(name, prototype, static))

    def macros(self, names: Iterable[str]) -> None:
        """Note that the text defines the macros ``names`` (left defined)."""
        self._macros.update(dict.fromkeys(names))

    def omp(self, pragma: str, *, parallel: bool) -> None:
        """Print the OpenMP ``pragma`` line and note it (``parallel``: it opens a parallel
        region)."""
        self.line(pragma)
        self._openmp = True
        self._parallel = self._parallel or parallel

    @property
    def parallel(self) -> bool:
        """An OpenMP parallel region was printed so far (:meth:`omp`)."""
        return self._parallel

    def chunk(self, chunk: Chunk) -> None:
        """Print ``chunk``'s lines as they are and note what it defines."""
        self._lines.extend(chunk.lines)
        for f in chunk.functions:
            self.function(f.name, f.prototype, static=f.static)
        self.macros(chunk.macros)

    def take_notes(self, other: Emitter) -> None:
        """Add the notes of ``other``, whose lines this text holds (a sub-printer's)."""
        for f in other._functions.values():
            self.function(f.name, f.prototype, static=f.static)
        self.macros(other._macros)
        self._openmp = self._openmp or other._openmp
        self._parallel = self._parallel or other._parallel

    def unit(
        self, target: str, *, shareable: bool = False, kernels: Iterable[str] = ()
    ) -> TranslationUnit:
        """The record of the text so far (``shareable``: its file scope holds only the
        noted functions and macros)."""
        return TranslationUnit(
            source=self.text(),
            target=target,
            functions=tuple(self._functions.values()),
            macros=tuple(self._macros),
            shareable=shareable,
            openmp=self._openmp,
            parallel=self._parallel,
            kernels=tuple(kernels),
        )

    def lines(self) -> list[str]:
        """The lines so far."""
        return list(self._lines)

    def count(self) -> int:
        """How many lines were printed so far (a mark for :meth:`since`)."""
        return len(self._lines)

    def since(self, mark: int) -> list[str]:
        """The lines printed after ``mark`` (:meth:`count`)."""
        return self._lines[mark:]

    def replace_since(self, mark: int, lines: Iterable[str]) -> None:
        """Print ``lines`` (as they are) instead of those printed after ``mark``; what those
        defined stays noted."""
        self._lines[mark:] = lines

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"

"""Indented text output for printers."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import contextmanager


class Emitter:
    """Collects lines at the current indentation (two spaces per level)."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._depth = 0
        self._scopes: list[dict[str, Hashable]] = [{}]  # per indentation level: name -> value

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

    def lines(self) -> list[str]:
        """The lines so far."""
        return list(self._lines)

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"

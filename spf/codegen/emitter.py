"""Indented text output for printers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class Emitter:
    """Collects lines at the current indentation (two spaces per level)."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._depth = 0

    def line(self, text: str) -> None:
        self._lines.append(("  " * self._depth + text) if text else "")

    def raw(self, text: str) -> None:
        self._lines.extend(text.rstrip("\n").split("\n"))

    @contextmanager
    def indented(self) -> Iterator[None]:
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    @contextmanager
    def braces(self) -> Iterator[None]:
        self.line("{")
        with self.indented():
            yield
        self.line("}")

    def in_scope(self) -> list[str]:
        """The lines printed so far in the current brace block at the current depth (its
        own statements and declarations, not those of nested blocks)."""
        pad = "  " * self._depth
        out = []
        for text in reversed(self._lines):
            if text and not text.startswith(pad):
                break  # the line that opened this block
            if text.startswith(pad) and not text.startswith(pad + " "):
                out.append(text[len(pad) :])
        return out[::-1]

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"

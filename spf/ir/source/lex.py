"""The lexical pass that runs before pycparser: ``$name$`` data-space delimiters become reserved
identifiers, comments are blanked, quoted literals are skipped and brackets are checked, while
an origin table records where each character of the C text came from; plus the position helpers
that map pycparser (line, column) coordinates and node extents back to spans of the original
source text for error messages and accesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pycparser import c_ast  # type: ignore[import-untyped]

from spf.errors import ParseError
from spf.ir.source.vocab import _DELIMITED, _DS_PREFIX, _IDENT, _RESERVED, _where


@dataclass(frozen=True)
class _Lexed:
    c_text: str
    origin: tuple[int, ...]  # origin[k]: offset in the original text of c_text[k] (len + 1)


def _lex(text: str, stmt: str) -> _Lexed:
    """Map ``$name$`` to reserved identifiers, blank comments, check brackets."""
    out: list[str] = []
    origin: list[int] = []
    stack: list[tuple[str, int]] = []
    where = _where(stmt)
    pos = 0

    def emit(chunk: str, at: int, same: bool = False) -> None:
        out.append(chunk)
        origin.extend(at if same else at + k for k in range(len(chunk)))

    while pos < len(text):
        ch = text[pos]
        if ch == "$":
            match = _DELIMITED.match(text, pos)
            if match is None:
                end = text.find("$", pos + 1)
                if end < 0:
                    raise ParseError(
                        f"{where}: unmatched '$'; data spaces are written $name$",
                        text=text,
                        span=(pos, pos + 1),
                    )
                raise ParseError(
                    f"{where}: expected a data-space name between '$' delimiters, got "
                    f"{text[pos + 1 : end]!r}",
                    text=text,
                    span=(pos, end + 1),
                )
            emit(_DS_PREFIX + match.group(1), pos, same=True)
            pos = match.end()
            continue
        skip = _skipped(text, pos, where)
        if skip is not None:
            emit(skip, pos)
            pos += len(skip)
            continue
        ident = _IDENT.match(text, pos)
        if ident is not None and (pos == 0 or not (text[pos - 1].isalnum())):
            if ident.group().startswith(_RESERVED):
                raise ParseError(
                    f"{where}: names starting with {_RESERVED!r} are reserved",
                    text=text,
                    span=ident.span(),
                )
            emit(ident.group(), pos)
            pos = ident.end()
            continue
        _bracket(ch, pos, stack, text, where)
        emit(ch, pos)
        pos += 1
    if stack:
        opener, at = stack[-1]
        raise ParseError(f"{where}: {opener!r} is never closed", text=text, span=(at, at + 1))
    origin.append(len(text))
    return _Lexed("".join(out), tuple(origin))


def _skipped(text: str, pos: int, where: str) -> str | None:
    """Comment (blanked) or quoted literal (kept) starting at ``pos``, else None."""
    if text.startswith("/*", pos):
        end = text.find("*/", pos + 2)
        if end < 0:
            raise ParseError(f"{where}: unterminated comment", text=text, span=(pos, pos + 2))
        return re.sub(r"[^\n]", " ", text[pos : end + 2])
    if text.startswith("//", pos):
        end = text.find("\n", pos)
        return " " * ((len(text) if end < 0 else end) - pos)
    if text[pos] in "'\"":
        quote, k = text[pos], pos + 1
        while k < len(text) and text[k] != quote and text[k] != "\n":
            k += 2 if text[k] == "\\" else 1
        return text[pos : min(k + 1, len(text))]
    return None


def _bracket(ch: str, pos: int, stack: list[tuple[str, int]], text: str, where: str) -> None:
    pairs = {")": "(", "]": "[", "}": "{"}
    if ch in "([{":
        stack.append((ch, pos))
    elif ch in pairs:
        if not stack or stack[-1][0] != pairs[ch]:
            expected = f"; expected the match of {stack[-1][0]!r}" if stack else ""
            raise ParseError(f"{where}: unmatched {ch!r}{expected}", text=text, span=(pos, pos + 1))
        stack.pop()


def _line_col_offset(c_text: str, line: int, column: int | None) -> int | None:
    """Offset in ``c_text`` of 1-based (line, column) of the user part, or None."""
    if line < 1:
        return None
    starts = [0] + [m.end() for m in re.finditer("\n", c_text)]
    if line > len(starts):
        return None
    return min(starts[line - 1] + max(0, (column or 1) - 1), len(c_text))


def _orig_span(lexed: _Lexed, start: int | None, end: int | None) -> tuple[int, int]:
    n = len(lexed.origin) - 1
    s = lexed.origin[min(start, n)] if start is not None else lexed.origin[n]
    e = lexed.origin[min(end, n)] if end is not None else s + 1
    return s, max(e, s)


def _leaf_len(node: Any) -> int:
    if isinstance(node, c_ast.ID):
        return len(node.name)
    if isinstance(node, c_ast.Constant):
        return len(node.value)
    return 0

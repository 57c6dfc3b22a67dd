"""Statement text for PDFG node labels: long statements shortened, the full text kept.

A statement whose text (``$`` marks removed) is longer than :data:`WIDTH` characters, as
inlining makes them (every read of a temporary replaced by the producer's parenthesised
expression), is shown in short form: the C statement reprinted by pycparser with only the
parentheses C's precedence needs (``((img((i), (j))) + ...)`` -> ``img(i, j) + ...``), wrapped
at spaces into at most :data:`LINES` lines of :data:`LINE` characters, the last ending in an
ellipsis when text is left out (the inlined blur's graph is then 576 points wide instead of
1900, which the docs' 7.3-inch size would shrink to a third). The node's tooltip holds the
whole short form (the text itself when pycparser cannot read it, which is then only cut).
Shorter statements are shown as written.
"""

from __future__ import annotations

import textwrap

WIDTH = 60
"""A statement's text up to this many characters is shown as written, on one line."""

LINE = 44
"""Characters per line of a longer statement's short form in its node's label."""

LINES = 3
"""Lines of a longer statement's short form in its node's label at most."""

_INT_TYPES = ("int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
              "uint64_t", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t")  # fmt: skip
_TYPES = "".join(f"typedef int {t}; " for t in _INT_TYPES)
"""Typedefs of the integer types a statement may cast to (pycparser reads a cast to a type
name only when the name is declared)."""


def statement_text(source: str) -> tuple[str, str]:
    """``(label, full)``: the text of a statement's node label (one or more lines) and the
    full text for its tooltip."""
    text = " ".join(source.replace("$", "").split())
    if len(text) <= WIDTH:
        return text, text
    full = short_form(text) or text
    lines = textwrap.wrap(full, LINE, break_long_words=True, break_on_hyphens=False)
    if len(lines) <= LINES:
        return "\n".join(lines), full
    kept = lines[:LINES]
    last = kept[-1]
    if len(last) + 2 > LINE:  # room for " …": drop the last word, or cut a word too long
        last = last.rsplit(" ", 1)[0] if " " in last else last[: LINE - 2]
    kept[-1] = last + " …"
    return "\n".join(kept), full


def short_form(text: str) -> str | None:
    """``text`` (C statements) reprinted with the parentheses C's precedence needs only, or
    None when pycparser cannot read it."""
    from pycparser import c_generator, c_parser  # type: ignore[import-untyped]

    try:
        unit = c_parser.CParser().parse(f"{_TYPES}void spf_label(void) {{ {text} }}")
    except Exception:  # pycparser's ParseError and the errors of its lexer
        return None
    body = unit.ext[-1].body.block_items or []
    printer = c_generator.CGenerator(reduce_parentheses=True)
    parts = []
    for stmt in body:
        printed = " ".join(str(printer.visit(stmt)).split())
        parts.append(printed if printed.endswith(("}", ";")) else printed + ";")
    return " ".join(parts) or None

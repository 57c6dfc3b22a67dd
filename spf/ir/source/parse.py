"""The entry point :func:`parse_source`: it runs the lexical pass, parses the result with
pycparser inside the typedef prelude, turns pycparser's errors (and sources that are function
definitions) into :class:`~spf.errors.ParseError` with spans in the original text, and hands the
C syntax tree to the converter that builds the :class:`ParsedSource`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pycparser import c_ast, c_parser  # type: ignore[import-untyped]

from spf.errors import ArgumentError, ParseError
from spf.ir.source.convert import _Converter
from spf.ir.source.lex import _lex, _Lexed, _line_col_offset, _orig_span
from spf.ir.source.vocab import _ERR_POS, _PRELUDE, _PRELUDE_LINES, _TYPEDEFS, _where
from spf.sets.memo import Table

if TYPE_CHECKING:
    from spf.ir.source.model import ParsedSource

_PARSED: Table[object, ParsedSource] = Table(2048)
"""Parsed sources by their arguments (a :class:`ParsedSource` is immutable): a statement the
IR builder (:mod:`spf.ir.build`) adds is parsed again when ``Computation.from_ir`` reads it,
and every build of one kernel parses the same statements."""


def parse_source(
    text: str,
    *,
    data_spaces: Mapping[str, int | None],
    ufs: Mapping[str, int],
    stmt: str = "",
) -> ParsedSource:
    """Parse a statement's C block.

    ``data_spaces`` maps names to ranks (``0`` for scalars; ``None``: rank not yet known,
    taken from the first use), ``ufs`` maps declared UF names to arities (calls of other
    unknown names with affine arguments are read as UF calls too), ``stmt`` names the
    statement in messages.

    >>> p = parse_source("$t$ = max($t$, $a$(i));", data_spaces={"t": 0, "a": 1}, ufs={})
    >>> [a.data_space for a in p.reductions], sorted(p.names)
    (['t'], ['i'])
    """
    if not isinstance(text, str):
        raise ArgumentError(f"{_where(stmt)}: source must be C text, got {type(text).__name__}")
    key = (text, tuple(sorted(data_spaces.items())), tuple(sorted(ufs.items())), stmt)
    found = _PARSED.get(key)
    if found is None:
        found = _PARSED.put(key, _parse(text, data_spaces, ufs, stmt))
    return found


def _parse(
    text: str, data_spaces: Mapping[str, int | None], ufs: Mapping[str, int], stmt: str
) -> ParsedSource:
    lexed = _lex(text, stmt)
    body = _parse_c(text, lexed, stmt)
    conv = _Converter(text, lexed, dict(data_spaces), dict(ufs), stmt)
    tree = conv.block(body)
    return conv.result(tree)


def _prelude(c_text: str) -> tuple[str, int]:
    """:data:`_PRELUDE` with only the typedefs whose names ``c_text`` contains (each other
    one an empty line, so that every line keeps its number: :data:`_PRELUDE_LINES`), and how
    many it declares. A name the text does not contain cannot change its syntax tree, and
    pycparser takes several times longer on the whole prelude than on a statement's block."""
    used = [(n, c) for n, c in _TYPEDEFS.items() if n in c_text]
    if len(used) == len(_TYPEDEFS):
        return _PRELUDE, len(used)
    lines = "".join(f"typedef {c} {n};\n" if n in c_text else "\n" for n, c in _TYPEDEFS.items())
    return lines + _PRELUDE.rsplit("\n", 2)[-2] + "\n", len(used)


def _parse_c(text: str, lexed: _Lexed, stmt: str) -> Any:
    parser = c_parser.CParser()
    prelude, typedefs = _prelude(lexed.c_text)
    try:
        ast = parser.parse(prelude + lexed.c_text + "\n}\n", "<stmt>")
    except c_parser.ParseError as err:
        _function_definition_check(text, lexed, stmt)
        raise _c_error(str(err), parser, text, lexed, stmt) from None
    funcs = [e for e in ast.ext if isinstance(e, c_ast.FuncDef)]
    if len(funcs) != 1 or len(ast.ext) != typedefs + 1:  # pragma: no cover - brackets
        raise ParseError(f"{_where(stmt)}: expected one block of C statements", text=text)
    return funcs[0].body


def _function_definition_check(text: str, lexed: _Lexed, stmt: str) -> None:
    """A source that is a function definition gets the basic-block message."""
    prelude = "".join(f"typedef {c} {n};\n" for n, c in _TYPEDEFS.items())
    try:
        ast = c_parser.CParser().parse(prelude + lexed.c_text + "\n", "<stmt>")
    except c_parser.ParseError:
        return
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef):
            coord = ext.coord
            line: int = coord.line - len(_TYPEDEFS) if coord is not None else 1
            start = _line_col_offset(lexed.c_text, line, coord.column if coord else 1)
            raise ParseError(
                f"{_where(stmt)}: a statement is one basic block: no loops/returns or "
                "function definitions",
                text=text,
                span=_orig_span(lexed, start, None if start is None else start + 1),
            )


def _c_error(message: str, parser: Any, text: str, lexed: _Lexed, stmt: str) -> ParseError:
    """pycparser's message with its position mapped back to the original text."""
    line: int | None = None
    column: int | None = None
    found = _ERR_POS.match(message)
    if found is not None:
        line, column, message = int(found.group(1)), int(found.group(2)), found.group(3)
    else:
        message = message.split(": ", 1)[-1]
        line, column = _current_token(parser)
    message = message[:1].lower() + message[1:]
    start = None if line is None else _line_col_offset(lexed.c_text, line - _PRELUDE_LINES, column)
    if message.startswith("before: "):
        tok = message[len("before: ") :]
        message = f"unexpected {tok!r}" if start is not None else "unexpected end of statement"
    elif message == "at end of input":
        message = "unexpected end of statement"
    span = _orig_span(lexed, start, None if start is None else start + 1)
    hint = " (a missing ';'?)" if start is None else ""
    return ParseError(f"{_where(stmt)}: malformed C: {message}{hint}", text=text, span=span)


def _current_token(parser: Any) -> tuple[int | None, int | None]:
    """Position of the token pycparser stopped at (its internals; best effort)."""
    try:
        stream = parser._tokens
        tok = stream._buffer[min(stream._index, len(stream._buffer) - 1)]
        return int(tok.lineno), int(tok.column)
    except (AttributeError, IndexError, TypeError):
        return None, None

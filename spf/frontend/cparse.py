"""pycparser behind spf's errors: parse the preprocessed text, pick the function, and turn a
node's (line, column) into a :class:`~spf.errors.ParseError` with a caret in the user's text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pycparser import c_ast, c_parser  # type: ignore[import-untyped]

from spf.errors import ParseError
from spf.frontend.c_ints import c_integer
from spf.frontend.preprocess import Preprocessed, preprocess
from spf.ir.source.vocab import C_TYPEDEFS

_TYPEDEFS = C_TYPEDEFS  # the fixed-width and size types statement sources know too
_PRELUDE = "".join(f"typedef {c} {n};" for n, c in _TYPEDEFS.items()) + "\n#line 1\n"
_COORD = re.compile(r":(\d+):(\d+)")


@dataclass(frozen=True)
class Source:
    """The user's C text, preprocessed, and its syntax tree."""

    text: str
    pre: Preprocessed
    ast: Any  # c_ast.FileAST

    def where(self, node: Any) -> tuple[int, int] | None:
        """``(line, column)`` of ``node`` in the user's text, when pycparser knows it."""
        coord = getattr(node, "coord", None)
        if coord is None or not coord.line:
            return None
        at = self.pre.offset(coord.line, coord.column or 1)
        line = self.text.count("\n", 0, at) + 1
        return line, at - (self.text.rfind("\n", 0, at) + 1) + 1

    def error(self, node: Any, message: str, hint: str = "") -> ParseError:
        """A ParseError at ``node``: ``line L, column C: message; hint`` plus a caret."""
        return error_at(self, self._offset(node), message, hint)

    def _offset(self, node: Any) -> int | None:
        coord = getattr(node, "coord", None)
        if coord is None or not coord.line:
            return None
        return self.pre.offset(coord.line, coord.column or 1)


def error_at(src: Source | str, at: int | None, message: str, hint: str = "") -> ParseError:
    """A ParseError at offset ``at`` of the user's text (no position when ``at`` is None)."""
    text = src.text if isinstance(src, Source) else src
    if at is None:
        return ParseError(f"from_c: {message}" + (f"; {hint}" if hint else ""), text="")
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    full = f"from_c: line {line}, column {col}: {message}" + (f"; {hint}" if hint else "")
    return ParseError(full, text=text, span=(at, at + 1))


def parse(text: str, keep: frozenset[str]) -> Source:
    """Preprocess and parse ``text`` (every failure is a ParseError with a position)."""
    if not isinstance(text, str):
        raise ParseError(f"from_c: expected C source text (str), got {type(text).__name__}")
    if "\x00" in text:
        raise error_at(text, text.index("\x00"), "NUL character in the source")
    pre = preprocess(text, keep)
    parser = c_parser.CParser()
    try:
        tree = parser.parse(_PRELUDE + pre.text, filename="<c>")
    except c_parser.ParseError as err:
        msg = str(err)
        m = _COORD.search(msg)
        detail = msg[m.end() :] if m else msg.split(": ", 1)[-1]
        detail = detail.lstrip(": ")
        place = (int(m.group(1)), int(m.group(2))) if m else _next_token(parser)
        at = pre.offset(*place) if place else None
        if at is None and "end of input" in detail:
            at = len(text)
        unknown = _unknown_type(pre.text, place) if place else None
        if unknown is not None:
            raise error_at(
                text,
                at,
                f"C syntax error: {detail}: {unknown!r} is not a type spf knows (it reads no "
                "system header beyond the fixed-width and size types)",
                f"declare it in the source ('typedef <its C type> {unknown};'), or use a C type",
            ) from None
        raise error_at(
            text, at, f"C syntax error: {detail}", "spf reads C99 function definitions"
        ) from None
    except (RecursionError, AssertionError, IndexError, AttributeError, TypeError) as err:
        raise error_at(text, None, f"C syntax error ({type(err).__name__}: {err})") from None
    src = Source(text, pre, tree)
    for d in tree.ext:
        if isinstance(d, c_ast.FuncDef) and (d.param_decls or _names_only(d.decl.type)):
            raise src.error(
                d.decl,
                f"function {d.decl.name!r} is an old-style (K&R) definition, its parameters' "
                "types declared after the parameter list",
                f"write them in the list, e.g. void {d.decl.name}(int n, double *x)",
            )
    return src


_C_WORDS = frozenset((
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex",
))  # fmt: skip
_LEADS = frozenset(("const", "static", "extern", "volatile", "register", "inline", "restrict"))
_DECLARATION = re.compile(
    r"\b(?=([A-Za-z_]\w*)\s*(?:\*\s*|const\s+|restrict\s+)*([A-Za-z_]\w*))"
)  # a lookahead: the matches overlap (const real_t x: 'const real_t', then 'real_t x')


def _unknown_type(text: str, place: tuple[int, int]) -> str | None:
    """The name that stands as a type where the parser failed (``ssize_t k``, ``FILE *f``)
    when no typedef declares it, else None."""
    lines = text.split("\n")
    if not 0 < place[0] <= len(lines):
        return None
    line, col = lines[place[0] - 1], place[1] - 1
    for m in _DECLARATION.finditer(line):
        word, name = m.group(1), m.group(2)
        before = line[: m.start(1)].rstrip()
        lead = not before or before[-1] in "{};(," or before.split()[-1] in _LEADS
        if lead and m.start(1) <= col <= m.start(2) and not {word, name} & _C_WORDS:
            declared = re.search(rf"\btypedef\b[^;]*\b{word}\s*;", text)
            return word if word not in _TYPEDEFS and declared is None else None
    return None


def _names_only(fn_type: Any) -> bool:
    """Whether a function declarator lists bare names, ``f(n, x)`` (K&R), not declarations."""
    args = getattr(fn_type, "args", None)
    return args is not None and any(isinstance(p, c_ast.ID) for p in args.params)


def _next_token(parser: Any) -> tuple[int, int] | None:
    """(line, column) of the token pycparser stopped at, when its error has no position."""
    try:
        tok = parser._tokens.peek(1)
        return (int(tok.lineno), int(tok.column)) if tok is not None else None
    except Exception:
        return None


def function(src: Source, name: str | None) -> Any:
    """The ``FuncDef`` named ``name`` (when None: the only one, else the only one that no
    other function of the source calls, else the only such one not ``static``; ``main``, a
    program's driver, is never picked and its calls do not count)."""
    defs = [n for n in src.ast.ext if isinstance(n, c_ast.FuncDef)]
    names = [d.decl.name for d in defs]
    if name is None:
        kernels = [d for d in defs if d.decl.name != "main"]
        called = {
            n.name.name
            for d in kernels
            for n in nodes(d.body)
            if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)
        }
        roots = [d for d in kernels if d.decl.name not in called]
        public = [d for d in roots if "static" not in (d.decl.storage or [])]
        for pick in (defs, roots, public):  # the one function no other one calls (not static)
            if len(pick) == 1:
                return pick[0]
        if not defs:
            raise error_at(
                src,
                None,
                "no function definition in the source",
                "write the loops inside a C function",
            )
        raise error_at(
            src,
            None,
            f"the source defines {len(defs)} functions ({', '.join(names)})",
            "pass function=<name>",
        )
    for d in defs:
        if d.decl.name == name:
            return d
    raise error_at(
        src,
        None,
        f"no function {name!r} in the source; its functions: {', '.join(names) or 'none'}",
    )


def nodes(node: Any) -> list[Any]:
    """``node`` and every node below it (pycparser's children, depth first)."""
    out: list[Any] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        out.append(n)
        stack.extend(child for _, child in n.children())
    return out


__all__ = ["Source", "c_ast", "c_integer", "error_at", "function", "nodes", "parse"]


INT_LITERALS = frozenset(
    ("int", "unsigned int", "long int", "unsigned long int", "long long int",
     "unsigned long long int", "long", "unsigned long")
)  # fmt: skip
"""The types pycparser gives integer literals (``8``, ``8u``, ``8L``, ``8UL``, ``8LL``...)."""

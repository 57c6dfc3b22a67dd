"""The small C preprocessor in front of pycparser (docs/import_c.md).

Comments are blanked; ``#include``, ``#pragma`` and ``#line`` lines are dropped; ``#define``
and ``#undef`` are honoured (object-like and function-like macros, expanded recursively);
``#ifdef``/``#ifndef``/``#if <integer>``/``#else``/``#endif`` select lines; GCC's
``__restrict__``, ``__inline__`` and ``__attribute__((...))`` become C99 (or nothing). A
function-like macro whose body picks the smaller (larger) of its two arguments with ``?:``
expands to a ``min(a, b)`` (``max(a, b)``) call, so that bounds such as ``j < MIN(i + 32, n)``
stay affine.
An object-like macro named in ``keep`` is not expanded: it stays a symbolic constant.

Every character of the output remembers the offset of the original character it came from
(an expansion maps to its macro name), so errors point into the user's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spf.errors import ParseError
from spf.frontend.std_constants import STANDARD_CONSTANTS

_IDENT = re.compile(r"[A-Za-z_]\w*")
_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(\w*)(.*)")
_MAX_DEPTH = 64


@dataclass(frozen=True)
class Macro:
    """``#define name(params) body`` (``params`` is ``None`` for an object-like macro)."""

    name: str
    params: tuple[str, ...] | None
    body: str
    written: str | None = None  # the body as written, where ``body`` is a min/max rewrite


_BUILTIN = {
    **{n: Macro(n, None, "restrict") for n in ("__restrict", "__restrict__")},
    **{n: Macro(n, None, "inline") for n in ("__inline", "__inline__")},
    "__const": Macro("__const", None, "const"),
    "__attribute__": Macro("__attribute__", ("x",), ""),
    **{n: Macro(n, None, v) for n, v in STANDARD_CONSTANTS.items()},
}
"""GCC spellings pycparser does not know, mapped to C99 (``__attribute__((...))`` dropped),
and the constants of ``<math.h>``, ``<float.h>``, ``<limits.h>``
(:mod:`spf.frontend.std_constants`)."""
BUILTIN_MACROS = frozenset(_BUILTIN)


@dataclass(frozen=True)
class Preprocessed:
    """The C text pycparser reads and, per character, its offset in the original source."""

    text: str
    origin: tuple[int, ...]
    macros: dict[str, Macro]
    kept: frozenset[str] = frozenset()  # the names of ``keep`` some ``#define`` defines

    def offset(self, line: int, column: int) -> int:
        """Offset in the original source of (1-based) ``line``, ``column`` of :attr:`text`."""
        starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        line = max(1, min(line, len(starts)))
        at = starts[line - 1] + max(0, column - 1)
        return self.origin[min(at, len(self.origin) - 1)]


def _blank_comments(text: str) -> str:
    """Comments become spaces (newlines kept); string and char literals are left alone."""
    out = list(text)
    k, n = 0, len(text)
    while k < n:
        ch = text[k]
        if ch in "\"'":
            end = k + 1
            while end < n and text[end] != ch and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            k = end + 1
        elif text.startswith("//", k):
            while k < n and text[k] != "\n":
                out[k] = " "
                k += 1
        elif text.startswith("/*", k):
            end = text.find("*/", k + 2)
            end = n if end < 0 else end + 2
            for j in range(k, end):
                if text[j] != "\n":
                    out[j] = " "
            k = end
        else:
            k += 1
    return "".join(out)


def _min_max(params: tuple[str, ...], body: str) -> str | None:
    """``"min"``/``"max"`` when ``body`` is ``a < b ? a : b`` (any comparison, any order)."""
    if len(params) != 2:
        return None
    flat = re.sub(r"[\s()]", "", body)
    p, q = params
    for op in ("<=", ">=", "<", ">"):
        for x, y in ((p, q), (q, p)):
            for r1, r2 in ((p, q), (q, p)):
                if flat == f"{x}{op}{y}?{r1}:{r2}":
                    smaller = (op in ("<", "<=")) == (r1 == x)
                    return "min" if smaller else "max"
    return None


def _joins(left: str, right: str) -> bool:
    """Whether the characters ``left`` and ``right``, put side by side, may read as one token
    (``-`` then ``-1`` as ``--1``, ``1`` then ``2``): cpp keeps an expansion's tokens apart
    from its neighbours'."""

    def word(ch: str) -> bool:
        return ch.isalnum() or ch in "_."

    def op(ch: str) -> bool:
        return ch in "+-*/%<>=!&|^:#"

    if not left or not right:
        return False
    return (word(left) and word(right)) or (op(left) and op(right))


def _binds_tighter(arg: str) -> bool:
    """Whether ``arg`` (a macro argument) means the same as a whole call argument, ``min(a,
    b)``, wherever a min/max macro's body places it: no ``++``/``--`` and, outside brackets,
    only operators that bind tighter than a comparison (``+``, ``*``, ...)."""
    if "++" in arg or "--" in arg:
        return False
    depth = 0
    for ch in arg:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in "<>=!&|^?:,":
            return False
    return True


class _Expander:
    def __init__(self, source: str, keep: frozenset[str]) -> None:
        self.source = source
        self.keep = keep
        self.macros: dict[str, Macro] = dict(_BUILTIN)
        self.kept: set[str] = set()

    def fail(self, message: str, at: int) -> ParseError:
        """Located as the parser's errors are (``from_c: line 2, column 1: ...``)."""
        line = self.source.count("\n", 0, at) + 1
        col = at - (self.source.rfind("\n", 0, at) + 1) + 1
        where = f"from_c: line {line}, column {col}: {message}"
        return ParseError(where, text=self.source, span=(at, at + 1))

    def define(self, rest: str, at: int) -> None:
        m = re.match(r"[ \t]*([A-Za-z_]\w*)(\(([^)]*)\))?(.*)", rest, re.S)
        if m is None:
            raise self.fail("#define needs a macro name, e.g. '#define N 100'", at)
        name, body = m.group(1), m.group(4).strip()
        if m.group(2) is None:
            if name in self.keep:
                self.kept.add(name)
            else:
                self.macros[name] = Macro(name, None, body)
            return
        params = tuple(p.strip() for p in m.group(3).split(",") if p.strip())
        if any(not _IDENT.fullmatch(p) for p in params):
            raise self.fail(f"#define {name}: macro parameters must be names", at)
        picked = _min_max(params, body)
        if picked is not None:
            self.macros[name] = Macro(name, params, f"{picked}({params[0]}, {params[1]})", body)
            return
        self.macros[name] = Macro(name, params, body)

    def expand(
        self, text: str, origin: list[int], depth: int, active: frozenset[str]
    ) -> tuple[str, list[int]]:
        """Expand the macros in ``text`` (whose characters come from ``origin``)."""
        if depth > _MAX_DEPTH:
            raise self.fail("macro expansion nests too deeply (a recursive #define?)", origin[0])
        out: list[str] = []
        org: list[int] = []
        k = 0
        while k < len(text):
            m = _IDENT.match(text, k)
            if m is None or (k > 0 and (text[k - 1].isalnum() or text[k - 1] in "_.")):
                if m is not None:
                    out.append(m.group())
                    org.extend(origin[k : m.end()])
                    k = m.end()
                    continue
                out.append(text[k])
                org.append(origin[k])
                k += 1
                continue
            name = m.group()
            macro = self.macros.get(name)
            if macro is None or name in active:
                out.append(name)
                org.extend(origin[k : m.end()])
                k = m.end()
                continue
            at = origin[k]
            end = m.end()
            body = macro.body
            if macro.params is not None:
                j = end
                while j < len(text) and text[j] in " \t\n":
                    j += 1
                if j >= len(text) or text[j] != "(":
                    out.append(name)
                    org.extend(origin[k:end])
                    k = end
                    continue
                args, end = self.arguments(text, j, at)
                if len(args) != len(macro.params) and not (macro.params == () and args == [""]):
                    raise self.fail(
                        f"macro {name} takes {len(macro.params)} argument(s), got {len(args)}",
                        at,
                    )
                # as C does: each argument is macro-expanded on its own first (so ADD(ADD(a,
                # b), c) expands the inner ADD), then substituted and the result rescanned
                args = [self.expand(a, [at] * len(a), depth + 1, active)[0] for a in args]
                body = self.substitute(macro, args)
            sub, sub_org = self.expand(body, [at] * len(body), depth + 1, active | {name})
            # spaces around the expansion, as cpp keeps tokens apart: i-OFF with OFF -1 is
            # i - -1, not i--1
            before = out[-1][-1:] if out else text[k - 1 : k]
            lead = " " if _joins(before, sub[:1]) else ""
            trail = " " if _joins(sub[-1:], text[end : end + 1]) else ""
            out.append(f"{lead}{sub}{trail}")
            org.extend([at] * len(lead) + sub_org + [at] * len(trail))
            k = end
        return "".join(out), org

    def arguments(self, text: str, start: int, at: int) -> tuple[list[str], int]:
        """The comma-separated arguments of the call whose ``(`` is at ``start``."""
        depth = 0
        args: list[str] = []
        cur: list[str] = []
        for j in range(start, len(text)):
            ch = text[j]
            if ch == "(":
                depth += 1
                if depth == 1:
                    continue
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    args.append("".join(cur).strip())
                    return args, j + 1
            elif ch == "," and depth == 1:
                args.append("".join(cur).strip())
                cur = []
                continue
            cur.append(ch)
        raise self.fail("unclosed '(' in a macro call", at)

    @staticmethod
    def substitute(macro: Macro, args: list[str]) -> str:
        """The body with each parameter replaced by its argument's text, unparenthesized as C
        does (SQ(a + 1) of 'x * x' is a + 1 * a + 1)."""
        table = dict(zip(macro.params or (), args, strict=False))

        def one(m: re.Match[str]) -> str:
            word = m.group()
            if word not in table:
                return word
            arg = table[word]
            start, stop = m.start(), m.end()
            lead = " " if _joins(m.string[start - 1 : start], arg[:1]) else ""
            trail = " " if _joins(arg[-1:], m.string[stop : stop + 1]) else ""
            return f"{lead}{arg}{trail}"

        if macro.written is not None and not all(map(_binds_tighter, args)):
            # MIN(k++, 3) may increment k twice, as in C; an argument with a comparison,
            # logical, bitwise or ?: operator may group otherwise in the body as written
            return _IDENT.sub(one, macro.written)
        return _IDENT.sub(one, macro.body)


def _directive(exp: _Expander, word: str, rest: str, at: int, live: list[bool]) -> None:
    """Run one directive ``#word rest`` at offset ``at``; ``live`` is the stack of open
    conditionals (is each one's text kept?)."""
    if word in ("ifdef", "ifndef"):
        name = rest.strip()
        live.append((name in exp.macros or name in exp.keep) == (word == "ifdef"))
    elif word == "if":
        value = rest.strip()
        if not re.fullmatch(r"\d+", value):
            raise exp.fail(
                "#if supports only an integer constant (0 or 1); use #ifdef, or remove the "
                "condition",
                at,
            )
        live.append(int(value) != 0)
    elif word in ("else", "endif"):
        if not live:
            raise exp.fail(f"#{word} without #if", at)
        if word == "else":
            live[-1] = not live[-1]
        else:
            live.pop()
    elif not all(live) or word in ("include", "pragma", "line", ""):
        pass
    elif word == "define":
        exp.define(rest, at)
    elif word == "undef":
        exp.macros.pop(rest.strip(), None)
    else:
        raise exp.fail(
            f"unsupported preprocessor directive '#{word}' (spf handles #define, #undef, "
            "#include, #pragma and #ifdef/#ifndef/#if 0/1)",
            at,
        )


def preprocess(source: str, keep: frozenset[str] = frozenset()) -> Preprocessed:
    """Run the directives of ``source`` and expand its macros (see the module docstring)."""
    text = _blank_comments(source)
    exp = _Expander(source, keep)
    out: list[str] = []
    org: list[int] = []
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    live: list[bool] = []
    k = 0
    while k < len(lines):
        line, first = lines[k], k
        while line.endswith("\\") and k + 1 < len(lines):  # continuation lines
            k += 1
            line = line[:-1] + " " + lines[k]
        d = _DIRECTIVE.match(line)
        if d is not None:
            _directive(exp, d.group(1), d.group(2), starts[first] + line.index("#"), live)
        elif all(live):
            at = starts[first]
            body, body_org = exp.expand(line, list(range(at, at + len(line))), 0, frozenset())
            out.append(body)
            org.extend(body_org)
        end = starts[k] + len(lines[k])
        breaks = k - first + (1 if k < len(lines) - 1 else 0)  # the newlines this row ended
        out.append("\n" * breaks)
        org.extend([end] * breaks)
        k += 1
    if live:
        raise exp.fail("#if/#ifdef without #endif", len(source))
    return Preprocessed("".join(out), (*org, len(source)), dict(exp.macros), frozenset(exp.kept))

"""The small C preprocessor in front of pycparser (docs/import_c.md).

Comments are blanked; ``#include``, ``#pragma`` and ``#line`` lines are dropped; ``#define``
and ``#undef`` are honoured (object-like, function-like and variadic macros, ``#`` and ``##``,
expanded recursively as cpp does);
``#ifdef``/``#ifndef``/``#if``/``#elif``/``#else``/``#endif`` select lines (the first group
whose condition, an integer constant expression with ``defined``, holds; conditions in
skipped text are not read); GCC's
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
from spf.frontend.pp_if import NotConstantError, if_value
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
    variadic: bool = (
        False  # the last parameter (``__VA_ARGS__`` or GNU's ``args...``) takes the rest
    )


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
        variadic = bool(params) and params[-1].endswith("...")
        if variadic:  # LOG(...) names the rest __VA_ARGS__; GNU's LOG(args...) names it args
            params = (*params[:-1], params[-1][:-3].strip() or "__VA_ARGS__")
        if any(not _IDENT.fullmatch(p) for p in params):
            raise self.fail(
                f"#define {name}: macro parameters must be names (or a final '...')", at
            )
        picked = None if variadic else _min_max(params, body)
        if picked is not None:
            self.macros[name] = Macro(name, params, f"{picked}({params[0]}, {params[1]})", body)
            return
        if re.match(r"\s*##", body) or re.search(r"##\s*$", body):
            raise self.fail(f"#define {name}: '##' cannot be at either end of a macro body", at)
        toks = [t for t in _TOKEN.findall(body) if not t.isspace()]
        for k, tok in enumerate(toks):
            if tok == "#" and (k + 1 == len(toks) or toks[k + 1] not in params):
                raise self.fail(
                    f"#define {name}: '#' must be followed by a parameter of the macro", at
                )
        self.macros[name] = Macro(name, params, body, variadic=variadic)

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
            if text[k] in "\"'":  # a string or character literal: no macro inside
                close = _TOKEN.match(text, k)
                stop = close.end() if close is not None else k + 1
                out.append(text[k:stop])
                org.extend(origin[k:stop])
                k = stop
                continue
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
                args = self.arity(macro, args, at)
                # as C does: each argument is macro-expanded on its own first (so ADD(ADD(a,
                # b), c) expands the inner ADD), except where # or ## takes it as written;
                # then substituted and the result rescanned
                expanded = [self.expand(a, [at] * len(a), depth + 1, active)[0] for a in args]
                if "#" in body:
                    body = self.substitute_tokens(macro, expanded, args)
                else:
                    body = self.substitute(macro, expanded)
            elif "##" in body:
                body = self.substitute_tokens(macro, [], [])
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

    def arity(self, macro: Macro, args: list[str], at: int) -> list[str]:
        """``args`` as many as ``macro`` has parameters: a variadic macro's extra ones joined
        as its last (``LOG("%d", i)`` of ``LOG(...)``: ``__VA_ARGS__`` is ``"%d", i``)."""
        params = macro.params or ()
        if params == () and args == [""]:
            return []
        if macro.variadic:
            named = len(params) - 1
            if len(args) >= named:
                return [*args[:named], ", ".join(args[named:])]
        elif len(args) == len(params):
            return args
        least = f"at least {len(params) - 1}" if macro.variadic else str(len(params))
        raise self.fail(f"macro {macro.name} takes {least} argument(s), got {len(args)}", at)

    def arguments(self, text: str, start: int, at: int) -> tuple[list[str], int]:
        """The comma-separated arguments of the call whose ``(`` is at ``start`` (a comma
        inside brackets or a string or character literal separates none)."""
        depth = 0
        args: list[str] = []
        cur: list[str] = []
        quote = ""
        for j in range(start, len(text)):
            ch = text[j]
            if quote:
                if ch == quote and text[j - 1] != "\\":
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch == "(":
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

    def substitute_tokens(self, macro: Macro, expanded: list[str], raw: list[str]) -> str:
        """The body of a macro with ``#`` or ``##``, as cpp substitutes it: ``#p`` is the
        argument as written in a string literal, ``a ## b`` pastes the two tokens into one
        (an argument next to ``##`` as written, not expanded), GNU's ``, ## __VA_ARGS__``
        drops the comma when there are no variable arguments."""
        params = macro.params or ()
        table = dict(zip(params, expanded, strict=False))
        written = dict(zip(params, raw, strict=False))
        toks = _TOKEN.findall(macro.body)
        solid = [k for k, t in enumerate(toks) if not t.isspace()]

        def near(k: int, step: int) -> str:
            at = solid.index(k) + step
            return toks[solid[at]] if 0 <= at < len(solid) else ""

        out: list[str] = []
        paste = False
        skip = -1
        for k, tok in enumerate(toks):
            if k <= skip or (tok.isspace() and (paste or near_paste(toks, k))):
                continue
            if tok == "##":
                while out and out[-1].isspace():
                    out.pop()
                paste = True
                continue
            if tok == "#" and macro.params is not None and near(k, 1) in table:
                name = near(k, 1)
                skip = solid[solid.index(k) + 1]
                text = " ".join(written[name].split())
                piece = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
            elif tok in table:
                pasted = "##" in (near(k, -1), near(k, 1))
                piece = written[tok] if pasted else table[tok]
                gnu_comma = paste and out and out[-1] == ","
                if pasted and macro.variadic and tok == params[-1] and not piece and gnu_comma:
                    out.pop()  # GNU: , ## __VA_ARGS__ with no variable arguments
                    paste = False
                    continue
            else:
                piece = tok
            if paste and out:
                out[-1] += piece
            else:
                if out and piece and _joins(out[-1][-1:], piece[:1]) and not tok.isspace():
                    out.append(" ")
                out.append(piece)
            paste = False
        return "".join(out)

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


_TOKEN = re.compile(
    r"""##|#|[A-Za-z_]\w*|\.?\d(?:[eEpP][+-]|[\w.])*|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|\s+|."""
)
"""The preprocessing tokens of a macro body (pp-numbers, string and character literals)."""


def near_paste(toks: list[str], k: int) -> bool:
    """Whether whitespace token ``k`` stands next to a ``##`` (pasting drops it)."""
    return (k > 0 and toks[k - 1] == "##") or (k + 1 < len(toks) and toks[k + 1] == "##")


_DEFINED = re.compile(r"\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))")


def _if_value(exp: _Expander, word: str, rest: str, at: int) -> bool:
    """The condition of ``#if``/``#elif`` as cpp reads it: ``defined NAME`` first, then the
    macros expanded, then an integer constant expression (:mod:`spf.frontend.pp_if`)."""
    shown = " ".join(rest.split())

    def defined(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return "1" if name in exp.macros or name in exp.kept else "0"

    text = _DEFINED.sub(defined, rest)
    text, _ = exp.expand(text, [at] * len(text), 0, frozenset())
    symbolic = sorted(set(_IDENT.findall(text)) & exp.keep)
    if symbolic:
        raise exp.fail(
            f"#{word} {shown}: reads {symbolic[0]!r}, which params= keeps symbolic, so its "
            "value is not known when the source is read; test it in the code, or do not "
            "name it in params=",
            at,
        )
    try:
        return if_value(text) != 0
    except NotConstantError as err:
        raise exp.fail(
            f"#{word} {shown}: {err}; #if takes an integer constant expression (integer "
            "literals, macros, defined(NAME), C's operators)",
            at,
        ) from None


def _directive(
    exp: _Expander, word: str, rest: str, at: int, live: list[bool], done: list[bool]
) -> None:
    """Run one directive ``#word rest`` at offset ``at``; ``live`` is the stack of open
    conditionals (is each one's text kept?), ``done`` whether a group of each one was kept
    already (or its enclosing text is skipped), so that no later ``#elif``/``#else`` group
    is. As cpp does, the conditions in skipped text are not evaluated."""
    if word in ("ifdef", "ifndef", "if"):
        outer = all(live)
        if not outer:
            keep = False
        elif word == "if":
            keep = _if_value(exp, word, rest, at)
        else:
            name = rest.strip()
            keep = (name in exp.macros or name in exp.kept) == (word == "ifdef")
        live.append(keep)
        done.append(keep or not outer)
    elif word in ("elif", "else", "endif"):
        if not live:
            raise exp.fail(f"#{word} without #if", at)
        if word == "endif":
            live.pop()
            done.pop()
        elif done[-1]:
            live[-1] = False
        else:
            live[-1] = word == "else" or _if_value(exp, word, rest, at)
            done[-1] = live[-1]
    elif not all(live) or word in ("include", "pragma", "line", ""):
        pass
    elif word == "define":
        exp.define(rest, at)
    elif word == "undef":
        exp.macros.pop(rest.strip(), None)
    else:
        raise exp.fail(
            f"unsupported preprocessor directive '#{word}' (spf handles #define, #undef, "
            "#include, #pragma and #if/#ifdef/#ifndef/#elif/#else/#endif)",
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
    done: list[bool] = []
    k = 0
    while k < len(lines):
        line, first = lines[k], k
        while line.endswith("\\") and k + 1 < len(lines):  # continuation lines
            k += 1
            line = line[:-1] + " " + lines[k]
        d = _DIRECTIVE.match(line)
        if d is not None:
            _directive(exp, d.group(1), d.group(2), starts[first] + line.index("#"), live, done)
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

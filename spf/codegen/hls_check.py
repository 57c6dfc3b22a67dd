"""A placement checker for Vitis HLS pragmas in C/C++ source (no Vitis needed).

:func:`scan` reads a translation unit with a small lexer (comments, strings and preprocessor
lines handled; ``#define`` bodies skipped) and a brace-level parser of functions, blocks,
``for``/``while``/``if`` statements, declarations and ``#pragma HLS`` lines, and reports:

* every function with its parameters and its INTERFACE pragmas;
* every loop with its variable, its enclosing loops and the HLS pragmas that open its body;
* the problems found (:attr:`Report.problems`), where Vitis HLS expects otherwise:

  - ``PIPELINE``, ``UNROLL``, ``LOOP_TRIPCOUNT``, ``LOOP_FLATTEN`` must be among the first
    statements of the body of the loop they apply to (only other pragmas before them;
    ``PIPELINE`` may also open a function body); options are checked (``II``, ``factor``
    positive integers; ``LOOP_TRIPCOUNT`` with ``min <= max``);
  - ``INTERFACE`` pragmas open the body of the function, name one of its parameters or
    ``return`` in ``port=``, use ``m_axi`` only for pointer or array parameters and
    ``s_axilite`` for scalars and ``return``; a function with INTERFACE pragmas must give one
    to every parameter and to ``return``;
  - ``ARRAY_PARTITION`` names (``variable=``) a local array declared earlier in the same or an
    enclosing block, with ``type`` in cyclic/block/complete, ``factor`` for cyclic and block,
    and ``dim`` within the array's rank (not an m_axi argument: Vitis cannot partition those);
  - no unknown HLS directive, no OpenMP pragma, no dynamic allocation (``malloc``, ``calloc``,
    ``realloc``, ``free``, ``new``, ``delete``) and no recursion.

:func:`check` raises :class:`~spf.errors.CodegenError` listing the problems.

>>> src = 'extern "C" void f(int n, double *x) {\\n#pragma HLS INTERFACE m_axi port=x\\n'
>>> src += '#pragma HLS INTERFACE s_axilite port=n\\n#pragma HLS INTERFACE s_axilite port=return\\n'
>>> src += 'for (int i = 0; i < n; i++) {\\n#pragma HLS PIPELINE II=1\\nx[i] = 0;\\n}\\n}\\n'
>>> report = scan(src)
>>> [(loop.var, [p.directive for p in loop.pragmas]) for loop in report.loops], report.problems
([('i', ['PIPELINE'])], ())
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from spf.errors import CodegenError

LOOP_DIRECTIVES = frozenset({"PIPELINE", "UNROLL", "LOOP_TRIPCOUNT", "LOOP_FLATTEN"})
KNOWN_DIRECTIVES = LOOP_DIRECTIVES | frozenset(
    {
        "INTERFACE",
        "ARRAY_PARTITION",
        "ARRAY_RESHAPE",
        "DATAFLOW",
        "INLINE",
        "LOOP_MERGE",
        "DEPENDENCE",
        "BIND_STORAGE",
        "BIND_OP",
        "STREAM",
        "LATENCY",
        "ALLOCATION",
        "EXPRESSION_BALANCE",
        "AGGREGATE",
        "DISAGGREGATE",
        "STABLE",
        "RESET",
        "PERFORMANCE",
        "FUNCTION_INSTANTIATE",
        "OCCURRENCE",
        "PROTOCOL",
        "TOP",
    }
)
ALLOCATION_WORDS = frozenset({"malloc", "calloc", "realloc", "free", "new", "delete"})


@dataclass(frozen=True)
class Pragma:
    """One ``#pragma HLS`` line."""

    line: int
    """1-based line number in the source."""
    directive: str
    """Upper case (``PIPELINE``)."""
    options: tuple[tuple[str, str], ...]
    """``key=value`` options with lower-case keys (``(("ii", "2"),)``)."""
    flags: tuple[str, ...]
    """Bare words (the INTERFACE mode ``m_axi``)."""
    text: str

    def get(self, key: str) -> str | None:
        for k, v in self.options:
            if k == key.lower():
                return v
        return None


@dataclass(frozen=True)
class Loop:
    var: str
    """The loop variable (``""`` for a ``while`` loop)."""
    line: int
    parents: tuple[str, ...]
    """Variables of the enclosing loops, outermost first."""
    pragmas: tuple[Pragma, ...]
    """The HLS pragmas that open the loop body (before its first statement)."""


@dataclass(frozen=True)
class Function:
    name: str
    extern_c: bool
    params: tuple[str, ...]
    pointers: frozenset[str]
    """Parameters that are pointers or arrays."""
    interfaces: tuple[Pragma, ...]


@dataclass(frozen=True)
class Report:
    functions: tuple[Function, ...]
    loops: tuple[Loop, ...]
    pragmas: tuple[Pragma, ...]
    problems: tuple[str, ...]

    def loops_of(self, var: str) -> list[Loop]:
        """The loops whose variable is ``var`` (in source order)."""
        return [loop for loop in self.loops if loop.var == var]


# ----------------------------------------------------------------------------- lexing
@dataclass(frozen=True)
class _Tok:
    text: str
    line: int
    pragma: Pragma | None = None


_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_]\w*|\d[\w.]*|::|\S')


def _strip_comments(source: str) -> str:
    """``source`` with comments replaced by spaces (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c in "\"'":
            j = i + 1
            while j < n and source[j] != c:
                j += 2 if source[j] == "\\" else 1
            out.append(source[i : j + 1])
            i = j + 1
        elif source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in source[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _parse_pragma(text: str, line: int) -> Pragma | None:
    words = text.split()
    if len(words) < 3 or words[0] != "#pragma" or words[1].upper() != "HLS":
        return None
    options: list[tuple[str, str]] = []
    flags: list[str] = []
    for w in words[3:]:
        key, eq, value = w.partition("=")
        if eq:
            options.append((key.lower(), value))
        else:
            flags.append(w.lower())
    return Pragma(line, words[2].upper(), tuple(options), tuple(flags), " ".join(words))


def _tokens(source: str, problems: list[str]) -> list[_Tok]:
    lines = _strip_comments(source).split("\n")
    toks: list[_Tok] = []
    k = 0
    while k < len(lines):
        start = k
        text = lines[k]
        while text.endswith("\\") and k + 1 < len(lines):  # continuation lines
            k += 1
            text = text[:-1] + " " + lines[k]
        k += 1
        stripped = text.strip()
        if stripped.startswith("#"):
            directive = stripped[1:].split()
            if directive[:1] == ["pragma"] and len(directive) > 1:
                if directive[1].lower() == "omp":
                    problems.append(f"line {start + 1}: OpenMP pragma in HLS code: {stripped}")
                pragma = _parse_pragma("#pragma " + " ".join(directive[1:]), start + 1)
                if pragma is not None:
                    toks.append(_Tok("#pragma", start + 1, pragma))
            continue
        toks.extend(_Tok(m.group(), start + 1) for m in _TOKEN.finditer(text))
    return toks


# ----------------------------------------------------------------------------- parsing
@dataclass
class _Ctx:
    kind: str  # "function", "loop", "block"
    function: Function
    loops: tuple[str, ...]
    arrays: dict[str, int] = field(default_factory=dict)
    """Arrays declared so far in this block, with their ranks."""
    parent: _Ctx | None = None

    def array_rank(self, name: str) -> int | None:
        ctx: _Ctx | None = self
        while ctx is not None:
            if name in ctx.arrays:
                return ctx.arrays[name]
            ctx = ctx.parent
        return None


class _Parser:
    def __init__(self, source: str) -> None:
        self.problems: list[str] = []
        self.toks = _tokens(source, self.problems)
        self.pos = 0
        self.functions: list[Function] = []
        self.loops: list[Loop] = []
        self.pragmas: list[Pragma] = []

    def peek(self, offset: int = 0) -> str:
        k = self.pos + offset
        return self.toks[k].text if k < len(self.toks) else ""

    def matching(self, k: int) -> int:
        """Index of the bracket closing the one at ``k``."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        opener, closer, depth = self.toks[k].text, pairs[self.toks[k].text], 0
        for j in range(k, len(self.toks)):
            t = self.toks[j].text
            depth += (t == opener) - (t == closer)
            if depth == 0:
                return j
        raise CodegenError(f"unbalanced {opener!r} opened on line {self.toks[k].line}")

    # --- top level
    def top(self) -> None:
        decl_start = 0
        while self.pos < len(self.toks):
            t = self.toks[self.pos]
            if t.pragma is not None:
                self.pragmas.append(t.pragma)
                self.problems.append(
                    f"line {t.line}: HLS pragma outside any function: {t.pragma.text}"
                )
                self.pos += 1
            elif t.text in (";", "}"):
                self.pos += 1
                decl_start = self.pos
            elif t.text == "(" and self.pos > 0 and self._is_definition():
                self._function(decl_start)
                decl_start = self.pos
            elif t.text in ("(", "[", "{"):
                self.pos = self.matching(self.pos) + 1
            else:
                self.pos += 1

    def _is_definition(self) -> bool:
        close = self.matching(self.pos)
        return close + 1 < len(self.toks) and self.toks[close + 1].text == "{"

    def _function(self, decl_start: int) -> None:
        name = self.toks[self.pos - 1].text
        close = self.matching(self.pos)
        head = [t.text for t in self.toks[decl_start : self.pos]]
        extern_c = "extern" in head and '"C"' in head
        params, pointers = _params([t.text for t in self.toks[self.pos + 1 : close]])
        fn = Function(name, extern_c, params, pointers, ())
        self.pos = close + 1
        ctx = _Ctx("function", fn, ())
        interfaces = self.block(ctx)
        fn = Function(name, extern_c, params, pointers, tuple(interfaces))
        self.functions.append(fn)
        self._check_interfaces(fn)

    # --- statements
    def block(self, ctx: _Ctx) -> list[Pragma]:
        """Parse ``{ ... }`` at ``pos``; return the pragmas that open it."""
        end = self.matching(self.pos)
        self.pos += 1
        leading: list[Pragma] = []
        first = True
        while self.pos < end:
            t = self.toks[self.pos]
            if t.pragma is not None:
                self.pos += 1
                self.pragmas.append(t.pragma)
                self._place(t.pragma, ctx, first)
                if first:
                    leading.append(t.pragma)
                continue
            first = False
            self.statement(ctx)
        self.pos = end + 1
        return leading

    def statement(self, ctx: _Ctx) -> None:
        t = self.peek()
        if t == "{":
            self.block(_Ctx("block", ctx.function, ctx.loops, parent=ctx))
        elif t in ("for", "while"):
            self._loop(ctx)
        elif t == "if":
            self.pos += 1
            self.pos = self.matching(self.pos) + 1
            self.statement(ctx)
            if self.peek() == "else":
                self.pos += 1
                self.statement(ctx)
        elif t == "do":
            self.pos += 1
            self.statement(ctx)
            while self.pos < len(self.toks) and self.peek() != ";":
                self.pos += 1
            self.pos += 1
        else:
            self._simple(ctx)

    def _loop(self, ctx: _Ctx) -> None:
        line = self.toks[self.pos].line
        keyword = self.peek()
        self.pos += 1
        close = self.matching(self.pos)
        header = [t.text for t in self.toks[self.pos + 1 : close]]
        var = ""
        if keyword == "for" and "=" in header:
            var = header[header.index("=") - 1]
        self.pos = close + 1
        inner = _Ctx("loop", ctx.function, (*ctx.loops, var), parent=ctx)
        pragmas: list[Pragma] = []
        if self.peek() == "{":
            pragmas = self.block(inner)
        else:
            self.statement(inner)
        self.loops.append(Loop(var, line, ctx.loops, tuple(pragmas)))

    def _simple(self, ctx: _Ctx) -> None:
        start = self.pos
        while self.pos < len(self.toks) and self.peek() != ";":
            if self.peek() in ("(", "[", "{"):
                self.pos = self.matching(self.pos)
            self.pos += 1
        words = self.toks[start : self.pos]
        self.pos += 1
        texts = [w.text for w in words]
        for k, w in enumerate(words):
            if w.text in ALLOCATION_WORDS:
                self.problems.append(f"line {w.line}: dynamic allocation ({w.text}) in HLS code")
            if w.text == ctx.function.name and texts[k + 1 : k + 2] == ["("]:
                self.problems.append(f"line {w.line}: recursive call of {w.text}")
        decl = _array_decl(texts)
        if decl is not None:
            ctx.arrays[decl[0]] = decl[1]

    # --- rules
    def _place(self, p: Pragma, ctx: _Ctx, first: bool) -> None:
        where = f"line {p.line}: {p.text}"
        if p.directive not in KNOWN_DIRECTIVES:
            self.problems.append(f"{where}: unknown HLS directive {p.directive}")
        elif p.directive in LOOP_DIRECTIVES:
            at_function = p.directive == "PIPELINE" and ctx.kind == "function"
            if not first or (ctx.kind != "loop" and not at_function):
                self.problems.append(
                    f"{where}: {p.directive} must be the first statement of a loop body"
                )
            self._loop_options(p, where)
        elif p.directive == "INTERFACE":
            if ctx.kind != "function" or not first:
                self.problems.append(f"{where}: INTERFACE must open the function body")
        elif p.directive == "ARRAY_PARTITION":
            self._partition(p, ctx, where)

    def _loop_options(self, p: Pragma, where: str) -> None:
        for key in ("ii", "factor", "min", "max"):
            value = p.get(key)
            if value is not None and not value.isdigit():
                self.problems.append(f"{where}: {key}={value} is not a non-negative integer")
        if p.directive == "LOOP_TRIPCOUNT":
            lo, hi = p.get("min"), p.get("max")
            if hi is None:
                self.problems.append(f"{where}: LOOP_TRIPCOUNT needs max=")
            elif lo is not None and lo.isdigit() and hi.isdigit() and int(lo) > int(hi):
                self.problems.append(f"{where}: min > max")
        for key in ("ii", "factor"):
            value = p.get(key)
            if value is not None and value.isdigit() and int(value) < 1:
                self.problems.append(f"{where}: {key} must be at least 1")

    def _partition(self, p: Pragma, ctx: _Ctx, where: str) -> None:
        name = p.get("variable")
        kind = p.get("type") or next(
            (f for f in p.flags if f in ("cyclic", "block", "complete")), "complete"
        )
        rank = None if name is None else ctx.array_rank(name)
        if name is not None and name in ctx.function.pointers:
            self.problems.append(f"{where}: {name} is an argument; Vitis cannot partition it")
            return
        if rank is None:
            self.problems.append(f"{where}: no local array {name} declared before the pragma")
            return
        if kind not in ("cyclic", "block", "complete"):
            self.problems.append(f"{where}: partition type {kind} is not cyclic/block/complete")
        factor = p.get("factor")
        if kind != "complete" and (factor is None or not factor.isdigit() or int(factor) < 1):
            self.problems.append(f"{where}: {kind} partitioning needs factor=<positive int>")
        dim = p.get("dim") or "1"
        if not dim.isdigit() or int(dim) > rank:
            self.problems.append(f"{where}: dim={dim} is not within the rank {rank} of {name}")

    def _check_interfaces(self, fn: Function) -> None:
        if not fn.interfaces:
            return
        ports: dict[str, Pragma] = {}
        for p in fn.interfaces:
            port = p.get("port")
            where = f"line {p.line}: {p.text}"
            mode = p.get("mode") or (p.flags[0] if p.flags else "")
            if port is None or (port not in fn.params and port != "return"):
                self.problems.append(f"{where}: port={port} is not a parameter of {fn.name}")
                continue
            if mode == "m_axi" and port not in fn.pointers:
                self.problems.append(f"{where}: m_axi needs a pointer or array parameter")
            if mode == "s_axilite" and port in fn.pointers:
                self.problems.append(f"{where}: an array parameter on s_axilite only")
            ports[port] = p
        for name in (*fn.params, "return"):
            if name not in ports:
                self.problems.append(f"function {fn.name}: no INTERFACE pragma for port {name}")


def _params(tokens: list[str]) -> tuple[tuple[str, ...], frozenset[str]]:
    parts: list[list[str]] = [[]]
    depth = 0
    for t in tokens:
        depth += (t in "([") - (t in ")]")
        if t == "," and depth == 0:
            parts.append([])
        else:
            parts[-1].append(t)
    names: list[str] = []
    pointers: set[str] = set()
    for part in parts:
        idents = [t for t in part if t.isidentifier()]
        if not idents or part == ["void"]:
            continue
        name = idents[-1] if "[" not in part else part[part.index("[") - 1]
        names.append(name)
        if "*" in part or "[" in part:
            pointers.add(name)
    return tuple(names), frozenset(pointers)


_QUALIFIERS = frozenset({"const", "static", "volatile", "unsigned", "signed", "long", "short"})


def _array_decl(texts: list[str]) -> tuple[str, int] | None:
    """``(name, rank)`` when ``texts`` declares an array (``double b[4][8] = {}``)."""
    k = 0
    while k < len(texts) and texts[k] in _QUALIFIERS:
        k += 1
    if k + 2 >= len(texts) or not texts[k].isidentifier() or not texts[k + 1].isidentifier():
        return None
    if texts[k + 2] != "[":
        return None
    rank = 0
    j = k + 2
    while j < len(texts) and texts[j] == "[":
        rank += 1
        while j < len(texts) and texts[j] != "]":
            j += 1
        j += 1
    return texts[k + 1], rank


def scan(source: str) -> Report:
    """Parse ``source`` and report its loops, pragmas and placement problems."""
    parser = _Parser(source)
    parser.top()
    return Report(
        tuple(parser.functions),
        tuple(sorted(parser.loops, key=lambda loop: loop.line)),
        tuple(sorted(parser.pragmas, key=lambda p: p.line)),
        tuple(parser.problems),
    )


def check(source: str) -> Report:
    """:func:`scan` ``source``; raise :class:`~spf.errors.CodegenError` listing the problems."""
    report = scan(source)
    if report.problems:
        raise CodegenError("HLS pragma problems:\n  " + "\n  ".join(report.problems))
    return report


__all__ = ["Function", "Loop", "Pragma", "Report", "check", "scan"]

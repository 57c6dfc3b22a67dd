"""C expressions and statements as frozen trees, and the one printer of them.

Code generation builds a statement's body, an access macro's element and a loop bound as a
tree (reads and writes are :class:`Access` nodes: the data space and its index
expressions) and prints it with :func:`to_c`, which emits only the parentheses C's
precedence (:data:`spf.clang.C_PREC`) needs, plus those gcc's ``-Wparentheses`` asks for.
A :class:`Param` is a macro parameter: its argument may be any expression, so it is
parenthesised wherever an operator binds it (``(i) + 1``) and bare where it stands alone
(``y(i)``, ``A[t0]``).

>>> to_c(Binary("*", Binary("+", Name("a"), Num("1")), Access("x", (Param("i"),))))
'(a + 1) * x(i)'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from spf.clang import C_ATOM, C_COND, C_PREC, C_UNARY

_ARG = 2
"""The precedence a macro's argument is at least (any expression but a comma one)."""
_BITWISE = frozenset({"|", "^", "&", "<<", ">>"})
_COMPARE = frozenset({"==", "!=", "<", "<=", ">", ">="})


@dataclass(frozen=True, slots=True)
class Num:
    """A literal, as spelled (``"2"``, ``"0.5"``, ``"-3"``)."""

    text: str


@dataclass(frozen=True, slots=True)
class Name:
    """A variable, parameter or named constant."""

    name: str


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter of the macro being defined (its argument is any expression)."""

    name: str


@dataclass(frozen=True, slots=True)
class Access:
    """A read or write of data space ``space`` at ``indices``, printed as a call of its
    access macro (``macro``, the data space's name when empty)."""

    space: str
    indices: tuple[Expr, ...]
    macro: str = ""


@dataclass(frozen=True, slots=True)
class Call:
    """A call of a function or macro (a UF read ``col(k)``, ``sqrt(x)``, ``spf_min(a, b)``)."""

    func: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Index:
    """An array element ``base[index]`` (``base`` an array name or another element)."""

    base: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class Unary:
    op: str
    """``-``, ``+``, ``!`` or ``~``."""
    operand: Expr


@dataclass(frozen=True, slots=True)
class Binary:
    op: str
    """A key of :data:`spf.clang.C_PREC`."""
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Ternary:
    cond: Expr
    then: Expr
    other: Expr


@dataclass(frozen=True, slots=True)
class Cast:
    ctype: str
    operand: Expr


@dataclass(frozen=True, slots=True)
class Text:
    """An expression given as C text by the caller (a packed tile's index in set syntax):
    printed as it is, in parentheses wherever an operator binds it (as a :class:`Param`)."""

    text: str


Expr: TypeAlias = (
    Num | Name | Param | Access | Call | Index | Unary | Binary | Ternary | Cast | Text
)


@dataclass(frozen=True, slots=True)
class Assign:
    """``target op value;`` (``op``: ``=``, ``+=`` ...)."""

    target: Expr
    op: str
    value: Expr


@dataclass(frozen=True, slots=True)
class Decl:
    """``ctype name = init;`` (no initialiser when ``init`` is None)."""

    ctype: str
    name: str
    init: Expr | None = None


@dataclass(frozen=True, slots=True)
class IfStmt:
    cond: Expr
    then: tuple[Stmt, ...]
    other: tuple[Stmt, ...] | None = None


@dataclass(frozen=True, slots=True)
class BlockStmt:
    body: tuple[Stmt, ...]


Stmt: TypeAlias = Assign | Decl | IfStmt | BlockStmt


# ----------------------------------------------------------------------------- printing
def to_c(e: Expr) -> str:
    """C text of ``e`` with the parentheses precedence (and ``-Wparentheses``) needs."""
    return _print(e)[0]


def to_c_at(e: Expr, need: int) -> str:
    """C text of ``e`` as an operand that binds at precedence ``need`` (parenthesised when
    ``e`` binds more loosely)."""
    return _wrap(e, need)


def to_c_arg(e: Expr) -> str:
    """C text of ``e`` as a macro argument or a function's argument."""
    return _wrap(e, _ARG)


def simple_text(s: Assign | Decl) -> str:
    """C text of an assignment or a declaration without its semicolon (the body of a
    statement macro of one statement, which its call completes: ``s0(i);``)."""
    if isinstance(s, Assign):
        return f"{to_c(s.target)} {s.op} {to_c(s.value)}"
    init = "" if s.init is None else f" = {to_c(s.init)}"
    return f"{s.ctype} {s.name}{init}"


def stmt_lines(body: Sequence[Stmt], depth: int = 0) -> list[str]:
    """C text of statements, one per line, two spaces of indentation per level."""
    pad = "  " * depth
    lines: list[str] = []
    for s in body:
        if isinstance(s, (Assign, Decl)):
            lines.append(f"{pad}{simple_text(s)};")
        elif isinstance(s, IfStmt):
            lines.append(f"{pad}if ({to_c(s.cond)})")
            lines += _braced(s.then, depth)
            if s.other is not None:
                lines.append(f"{pad}else")
                lines += _braced(s.other, depth)
        else:
            lines += _braced(s.body, depth)
    return lines


def _braced(body: Sequence[Stmt], depth: int) -> list[str]:
    pad = "  " * depth
    return [f"{pad}{{", *stmt_lines(body, depth + 1), f"{pad}}}"]


def _print(e: Expr) -> tuple[str, int]:
    return _PRINT[type(e)](e)


def _num(e: Num) -> tuple[str, int]:
    return e.text, C_UNARY if e.text.startswith("-") else C_ATOM


def _name(e: Name) -> tuple[str, int]:
    return e.name, C_ATOM


def _param(e: Param) -> tuple[str, int]:
    return e.name, _ARG


def _text(e: Text) -> tuple[str, int]:
    return e.text, _ARG


def _access(e: Access) -> tuple[str, int]:
    return f"{e.macro or e.space}({_args(e.indices)})", C_ATOM


def _call(e: Call) -> tuple[str, int]:
    return f"{e.func}({_args(e.args)})", C_ATOM


def _index(e: Index) -> tuple[str, int]:
    return f"{_wrap(e.base, C_ATOM)}[{to_c(e.index)}]", C_ATOM


def _unary(e: Unary) -> tuple[str, int]:
    inner = _wrap(e.operand, C_UNARY)
    if e.op in "+-" and inner[:1] in "+-":
        inner = f"({inner})"  # - -x, not --x
    return f"{e.op}{inner}", C_UNARY


def _cast(e: Cast) -> tuple[str, int]:
    return f"({e.ctype}) {_wrap(e.operand, C_UNARY)}", C_UNARY


def _ternary(e: Ternary) -> tuple[str, int]:
    cond, then = _wrap(e.cond, C_COND + 1), _wrap(e.then, C_COND + 1)
    return f"{cond} ? {then} : {_wrap(e.other, C_COND)}", C_COND


def _binary(e: Binary) -> tuple[str, int]:
    prec = C_PREC[e.op]
    left = _operand(e.left, e.op, prec)
    right = _operand(e.right, e.op, prec + 1)  # left-associative: a - (b - c)
    return f"{left} {e.op} {right}", prec


_PRINT: dict[type, Callable[[Any], tuple[str, int]]] = {
    Num: _num,
    Name: _name,
    Param: _param,
    Text: _text,
    Access: _access,
    Call: _call,
    Index: _index,
    Unary: _unary,
    Cast: _cast,
    Ternary: _ternary,
    Binary: _binary,
}
"""The printer of each node type (one lookup instead of a chain of isinstance tests)."""


def _args(args: Sequence[Expr]) -> str:
    return ", ".join(to_c_arg(a) for a in args)


def _operand(e: Expr, op: str, need: int) -> str:
    text, prec = _print(e)
    picky = isinstance(e, Binary) and _picky(op, e.op)
    negated = isinstance(e, Unary) and e.op == "!" and (op in _COMPARE or op in _BITWISE)
    return f"({text})" if prec < need or picky or negated else text


def _wrap(e: Expr, need: int) -> str:
    text, prec = _print(e)
    return text if prec >= need else f"({text})"


def _picky(parent: str, child: str) -> bool:
    """Operator nestings that gcc's ``-Wparentheses`` wants parenthesised."""
    if parent in _BITWISE:
        return child != parent
    if parent == "||":
        return child == "&&"
    return parent in _COMPARE and child in _COMPARE


# ----------------------------------------------------------------------------- queries
def children(e: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``e``."""
    if isinstance(e, (Access,)):
        return e.indices
    if isinstance(e, Call):
        return e.args
    if isinstance(e, Index):
        return (e.base, e.index)
    if isinstance(e, (Unary, Cast)):
        return (e.operand,)
    if isinstance(e, Binary):
        return (e.left, e.right)
    if isinstance(e, Ternary):
        return (e.cond, e.then, e.other)
    return ()


def stmt_exprs(body: Sequence[Stmt]) -> Iterator[Expr]:
    """The top-level expressions of statements (targets, values, initialisers, conditions)."""
    for s in body:
        if isinstance(s, Assign):
            yield s.target
            yield s.value
        elif isinstance(s, Decl):
            if s.init is not None:
                yield s.init
        elif isinstance(s, IfStmt):
            yield s.cond
            yield from stmt_exprs(s.then)
            yield from stmt_exprs(s.other or ())
        else:
            yield from stmt_exprs(s.body)


def nodes(e: Expr) -> Iterator[Expr]:
    """``e`` and every expression under it."""
    yield e
    for c in children(e):
        yield from nodes(c)


def accesses(body: Sequence[Stmt]) -> Iterator[Access]:
    """Every data-space access of ``body``, reads and writes."""
    for top in stmt_exprs(body):
        for e in nodes(top):
            if isinstance(e, Access):
                yield e


def substitute(e: Expr, values: dict[str, Expr]) -> Expr:
    """``e`` with each :class:`Param` in ``values`` replaced by its value (a macro's
    expansion at one call)."""
    if isinstance(e, Param):
        return values.get(e.name, e)
    if isinstance(e, Access):
        return Access(e.space, tuple(substitute(i, values) for i in e.indices), e.macro)
    if isinstance(e, Call):
        return Call(e.func, tuple(substitute(a, values) for a in e.args))
    if isinstance(e, Index):
        return Index(substitute(e.base, values), substitute(e.index, values))
    if isinstance(e, Unary):
        return Unary(e.op, substitute(e.operand, values))
    if isinstance(e, Cast):
        return Cast(e.ctype, substitute(e.operand, values))
    if isinstance(e, Binary):
        return Binary(e.op, substitute(e.left, values), substitute(e.right, values))
    if isinstance(e, Ternary):
        return Ternary(*(substitute(x, values) for x in (e.cond, e.then, e.other)))
    return e

"""The small typed tree a statement's C is converted to: expression nodes (``_Expr``: numbers,
iterator/parameter/local variables, data-space references, UF and function calls, exact index
divisions, unary/binary/conditional operators and casts) and statement nodes (``_Stmt``:
assignments, local declarations, if/else and nested blocks). The nodes are frozen dataclasses
and know nothing of pycparser; C text, index text and Python are printed from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True)
class _Num:
    text: str  # the C spelling
    value: int | float


@dataclass(frozen=True)
class _Var:
    name: str
    local: bool  # False: an iterator or parameter


@dataclass(frozen=True)
class _Ref:  # a data-space access
    ds: str
    indices: tuple[_Expr, ...]


@dataclass(frozen=True)
class _UFCall:
    name: str
    args: tuple[_Expr, ...]
    component: int | None = None
    """``f(k)[c]``: component ``c`` of a UF that returns a tuple (read as ``f(k, c)``)."""


@dataclass(frozen=True)
class _Call:  # math function, min/max, or a named constant (no args, value_only)
    func: str
    args: tuple[_Expr, ...]


@dataclass(frozen=True)
class _IDiv:  # floor(e/c) / ceil(e/c) in an index: exact integer rounding
    ceil: bool
    num: _Expr
    den: int


@dataclass(frozen=True)
class _Unary:
    op: str
    operand: _Expr


@dataclass(frozen=True)
class _Binary:
    op: str
    left: _Expr
    right: _Expr


@dataclass(frozen=True)
class _Cond:
    cond: _Expr
    then: _Expr
    other: _Expr


@dataclass(frozen=True)
class _Cast:
    ctype: str
    operand: _Expr


_Expr: TypeAlias = _Num | _Var | _Ref | _UFCall | _Call | _IDiv | _Unary | _Binary | _Cond | _Cast


@dataclass(frozen=True)
class _Assign:
    target: _Ref | _Var
    op: str  # "=", "+=", ...
    value: _Expr


@dataclass(frozen=True)
class _Decl:
    name: str
    ctype: str
    init: _Expr | None


@dataclass(frozen=True)
class _If:
    cond: _Expr
    then: tuple[_Stmt, ...]
    other: tuple[_Stmt, ...] | None


@dataclass(frozen=True)
class _Block:
    body: tuple[_Stmt, ...]


_Stmt: TypeAlias = _Assign | _Decl | _If | _Block

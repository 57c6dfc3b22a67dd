"""A statement's body as a C tree (:mod:`spf.cexpr`), built once from its parsed source.

The statement's domain iterators become macro parameters (:class:`~spf.cexpr.Param`), its
data-space reads and writes :class:`~spf.cexpr.Access` nodes (through ``spf_ds_<name>`` for
a run-time index array, whose ``<name>(...)`` reads it as a UF), UF reads calls of the UF's
macro, ``min``/``max`` the generated code's own ``spf_min``/``spf_max``, and an index
``floor(e/c)``/``ceil(e/c)`` an exact integer division.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from spf.cexpr import (
    Access,
    Assign,
    Binary,
    BlockStmt,
    Call,
    Cast,
    Decl,
    Expr,
    IfStmt,
    Name,
    Num,
    Param,
    Stmt,
    Ternary,
    Unary,
)
from spf.computation.source.tree import (
    _Assign,
    _Binary,
    _Call,
    _Cast,
    _Cond,
    _Decl,
    _Expr,
    _IDiv,
    _If,
    _Num,
    _Ref,
    _Stmt,
    _UFCall,
    _Unary,
    _Var,
)


class BodyBuilder:
    """Converts a parsed statement's nodes; ``params`` are the macro's parameters,
    ``index`` the run-time index arrays, ``calls`` the renamed functions."""

    def __init__(
        self, params: Collection[str], index: Collection[str], calls: Mapping[str, str]
    ) -> None:
        self.params = frozenset(params)
        self.index = frozenset(index)
        self.calls = calls

    def stmts(self, body: Sequence[_Stmt]) -> tuple[Stmt, ...]:
        return tuple(self.stmt(s) for s in body)

    def stmt(self, s: _Stmt) -> Stmt:
        if isinstance(s, _Assign):
            return Assign(self.expr(s.target), s.op, self.expr(s.value))
        if isinstance(s, _Decl):
            return Decl(s.ctype, s.name, None if s.init is None else self.expr(s.init))
        if isinstance(s, _If):
            other = None if s.other is None else self.stmts(s.other)
            return IfStmt(self.expr(s.cond), self.stmts(s.then), other)
        return BlockStmt(self.stmts(s.body))

    def expr(self, e: _Expr) -> Expr:
        if isinstance(e, _Num):
            return Num(e.text)
        if isinstance(e, _Var):
            return Param(e.name) if e.name in self.params and not e.local else Name(e.name)
        if isinstance(e, _Ref):
            return self.access(e)
        if isinstance(e, _UFCall):  # a component is the last index of the UF's array
            tail = () if e.component is None else (Num(str(e.component)),)
            return Call(e.name, (*(self.expr(a) for a in e.args), *tail))
        if isinstance(e, _Call):
            if not e.args:
                return Name(e.func)  # a named constant (INFINITY)
            return Call(self.calls.get(e.func, e.func), tuple(self.expr(a) for a in e.args))
        if isinstance(e, _IDiv):
            return _floor_div(self.expr(e.num), e.den, e.ceil)
        if isinstance(e, _Unary):
            return Unary(e.op, self.expr(e.operand))
        if isinstance(e, _Cast):
            return Cast(e.ctype, self.expr(e.operand))
        if isinstance(e, _Cond):
            return Ternary(self.expr(e.cond), self.expr(e.then), self.expr(e.other))
        assert isinstance(e, _Binary)
        return Binary(e.op, self.expr(e.left), self.expr(e.right))

    def access(self, e: _Ref) -> Access:
        macro = f"spf_ds_{e.ds}" if e.ds in self.index else ""
        return Access(e.ds, tuple(self.expr(i) for i in e.indices), macro)


def _floor_div(num: Expr, den: int, ceil: bool) -> Expr:
    """``floor(num / den)`` (``ceil`` with ``ceil``) in C's truncating integer division, for
    a positive constant ``den``."""
    if ceil:
        num = Binary("+", num, Num(str(den - 1)))
    d, d1 = Num(str(den)), Num(str(den - 1))
    negative = Unary("-", Binary("/", Binary("+", Unary("-", num), d1), d))
    return Ternary(Binary("<", num, Num("0")), negative, Binary("/", num, d))

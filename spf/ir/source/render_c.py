"""The typed tree of a statement as C trees (:mod:`spf.cexpr`), printed by the one C printer.

:class:`CTreeBuilder` converts a parsed statement's nodes: iterators, parameters and locals
renamed, the names in ``params`` as macro parameters (:class:`~spf.cexpr.Param`), data-space
accesses and UF calls through the caller's builders (by default an
:class:`~spf.cexpr.Access` and a :class:`~spf.cexpr.Call`), functions renamed (``min`` as
code generation's ``spf_min``), a named constant (``INFINITY``) a name, and an index
``floor(e/c)``/``ceil(e/c)`` an exact integer division. Code generation builds statement
macros with it (:mod:`spf.codegen.body`); :meth:`ParsedSource.render_c` prints a rewritten
statement's source with it (inlining, renaming, packing).

>>> from spf.ir.source import parse_source
>>> p = parse_source("$y$(i) = $x$(i) / 2;", data_spaces={"y": 1, "x": 1}, ufs={})
>>> b = CTreeBuilder(access=source_access, rename={"i": "i0"})
>>> cx.stmt_lines(b.stmts(p.body))
['$y$(i0) = $x$(i0) / 2;']
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from spf import cexpr as cx
from spf.ir.source.tree import (
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

Build = Callable[[str, tuple[cx.Expr, ...]], cx.Expr]
"""Builds the node of a data-space access or a UF call from its name and its arguments."""


def source_access(name: str, indices: tuple[cx.Expr, ...]) -> cx.Expr:
    """An access as statement source writes it: ``$A$(i, j)``, ``$s$`` for a scalar."""
    if not indices:
        return cx.Name(f"${name}$")
    return cx.Access(name, indices, f"${name}$")


class CTreeBuilder:
    """Converts a parsed statement's nodes to C trees (see the module's docstring)."""

    def __init__(
        self,
        *,
        params: Collection[str] = (),
        rename: Mapping[str, str] | None = None,
        calls: Mapping[str, str] | None = None,
        access: Build | None = None,
        uf: Build | None = None,
    ) -> None:
        self.params = frozenset(params)
        self.rename = dict(rename or {})
        self.calls = dict(calls or {})
        self._access: Build = access or cx.Access
        self._uf: Build = uf or cx.Call

    def stmts(self, body: Sequence[_Stmt]) -> tuple[cx.Stmt, ...]:
        return tuple(self.stmt(s) for s in body)

    def stmt(self, s: _Stmt) -> cx.Stmt:
        if isinstance(s, _Assign):
            return cx.Assign(self.expr(s.target), s.op, self.expr(s.value))
        if isinstance(s, _Decl):
            init = None if s.init is None else self.expr(s.init)
            return cx.Decl(s.ctype, self.rename.get(s.name, s.name), init)
        if isinstance(s, _If):
            other = None if s.other is None else self.stmts(s.other)
            return cx.IfStmt(self.expr(s.cond), self.stmts(s.then), other)
        return cx.BlockStmt(self.stmts(s.body))

    def expr(self, e: _Expr) -> cx.Expr:
        if isinstance(e, _Num):
            return cx.Num(e.text)
        if isinstance(e, _Var):
            name = self.rename.get(e.name, e.name)
            return cx.Param(name) if e.name in self.params and not e.local else cx.Name(name)
        if isinstance(e, _Ref):
            return self.access(e)
        if isinstance(e, _UFCall):  # a component is the last index of the UF's array
            tail = () if e.component is None else (cx.Num(str(e.component)),)
            return self._uf(e.name, (*(self.expr(a) for a in e.args), *tail))
        if isinstance(e, _Call):
            if not e.args:
                return cx.Name(e.func)  # a named constant (INFINITY)
            return cx.Call(self.calls.get(e.func, e.func), tuple(self.expr(a) for a in e.args))
        if isinstance(e, _IDiv):
            return floor_div(self.expr(e.num), e.den, e.ceil)
        if isinstance(e, _Unary):
            return cx.Unary(e.op, self.expr(e.operand))
        if isinstance(e, _Cast):
            return cx.Cast(e.ctype, self.expr(e.operand))
        if isinstance(e, _Cond):
            return cx.Ternary(self.expr(e.cond), self.expr(e.then), self.expr(e.other))
        assert isinstance(e, _Binary)
        return cx.Binary(e.op, self.expr(e.left), self.expr(e.right))

    def access(self, e: _Ref) -> cx.Expr:
        return self._access(e.ds, tuple(self.expr(i) for i in e.indices))


def floor_div(num: cx.Expr, den: int, ceil: bool) -> cx.Expr:
    """``floor(num / den)`` (``ceil`` with ``ceil``) in C's truncating integer division, for
    a positive constant ``den``."""
    if ceil:
        num = cx.Binary("+", num, cx.Num(str(den - 1)))
    d, d1 = cx.Num(str(den)), cx.Num(str(den - 1))
    negative = cx.Unary("-", cx.Binary("/", cx.Binary("+", cx.Unary("-", num), d1), d))
    return cx.Ternary(cx.Binary("<", num, cx.Num("0")), negative, cx.Binary("/", num, d))

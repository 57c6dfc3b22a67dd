"""C printing of the typed tree for code generation (:meth:`ParsedSource.render_c`): statements
one per line with two-space indentation, expressions with C precedence and the parentheses gcc's
``-Wparentheses`` asks for, data-space accesses and UF calls through the caller's callbacks,
renamed iterators/parameters/locals, and an index ``floor(e/c)``/``ceil(e/c)`` as an exact
integer division expression.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from spf.clang import C_ATOM, C_COND, C_PREC, C_UNARY
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
from spf.computation.source.vocab import _IDENT

_C_BITWISE = {"|", "^", "&", "<<", ">>"}
_C_COMPARE = {"==", "!=", "<", "<=", ">", ">="}


class _CWriter:
    def __init__(
        self,
        access: Callable[[str, tuple[str, ...]], str],
        uf: Callable[[str, tuple[str, ...]], str],
        rename: dict[str, str],
        calls: Mapping[str, str] | None = None,
    ) -> None:
        self.access = access
        self.uf = uf
        self.rename = rename
        self.calls = calls or {}

    def stmts(self, body: tuple[_Stmt, ...], depth: int) -> list[str]:
        pad = "  " * depth
        lines: list[str] = []
        for s in body:
            if isinstance(s, _Assign):
                lines.append(f"{pad}{self.expr(s.target)} {s.op} {self.expr(s.value)};")
            elif isinstance(s, _Decl):
                init = "" if s.init is None else f" = {self.expr(s.init)}"
                lines.append(f"{pad}{s.ctype} {self.rename.get(s.name, s.name)}{init};")
            elif isinstance(s, _If):
                lines.append(f"{pad}if ({self.expr(s.cond)})")
                lines += self._braced(s.then, depth)
                if s.other is not None:
                    lines.append(f"{pad}else")
                    lines += self._braced(s.other, depth)
            else:
                lines += self._braced(s.body, depth)
        return lines

    def _braced(self, body: tuple[_Stmt, ...], depth: int) -> list[str]:
        pad = "  " * depth
        return [f"{pad}{{", *self.stmts(body, depth + 1), f"{pad}}}"]

    def expr(self, e: _Expr) -> str:
        return self._print(e)[0]

    def _print(self, e: _Expr) -> tuple[str, int]:
        if isinstance(e, _Num):
            return e.text, C_ATOM
        if isinstance(e, _Var):
            return self.rename.get(e.name, e.name), C_ATOM
        if isinstance(e, _Ref):
            return _atomic(self.access(e.ds, tuple(self.expr(i) for i in e.indices)))
        if isinstance(e, _UFCall):  # a component is the last index of the UF's array
            tail = () if e.component is None else (str(e.component),)
            return _atomic(self.uf(e.name, (*(self.expr(a) for a in e.args), *tail)))
        if isinstance(e, _Call):
            if not e.args:
                return e.func, C_ATOM
            func = self.calls.get(e.func, e.func)
            return f"{func}({', '.join(self.expr(a) for a in e.args)})", C_ATOM
        if isinstance(e, _IDiv):
            num = self._wrap(e.num, C_ATOM)
            num = num if not e.ceil else f"({self._wrap(e.num, 12)} + {e.den - 1})"
            floor = f"({num} < 0 ? -((-{num} + {e.den - 1}) / {e.den}) : {num} / {e.den})"
            return floor, C_ATOM
        if isinstance(e, _Unary):
            inner = self._wrap(e.operand, C_UNARY)
            if inner[:1] in "+-" and e.op in "+-":
                inner = f"({inner})"
            return f"{e.op}{inner}", C_UNARY
        if isinstance(e, _Cast):
            return f"({e.ctype}) {self._wrap(e.operand, C_UNARY)}", C_UNARY
        if isinstance(e, _Cond):
            c, t = self._wrap(e.cond, C_COND + 1), self._wrap(e.then, C_COND + 1)
            return f"{c} ? {t} : {self._wrap(e.other, C_COND)}", C_COND
        prec = C_PREC[e.op]
        left = self._operand(e.left, e.op, prec)
        right = self._operand(e.right, e.op, prec + 1)
        return f"{left} {e.op} {right}", prec

    def _operand(self, e: _Expr, op: str, need: int) -> str:
        text, prec = self._print(e)
        picky = isinstance(e, _Binary) and _picky(op, e.op)
        negated = isinstance(e, _Unary) and e.op == "!" and (op in _C_COMPARE or op in "&|^")
        return f"({text})" if prec < need or picky or negated else text

    def _wrap(self, e: _Expr, need: int) -> str:
        text, prec = self._print(e)
        return text if prec >= need else f"({text})"


def _picky(parent: str, child: str) -> bool:
    """Operator nestings that gcc's -Wparentheses wants parenthesized."""
    if parent in _C_BITWISE:
        return child != parent
    if parent == "||":
        return child == "&&"
    return parent in _C_COMPARE and child in _C_COMPARE


def _atomic(text: str) -> tuple[str, int]:
    """A callback's text as an operand: a name followed by bracket groups stays bare."""
    found = _IDENT.match(text)
    pos = found.end() if found is not None else 0
    while found is not None and pos < len(text):
        if text[pos] not in "([":
            found = None
            break
        depth, start = 0, pos
        for k in range(start, len(text)):
            depth += 1 if text[k] in "([" else -1 if text[k] in ")]" else 0
            if depth == 0:
                pos = k + 1
                break
        else:
            found = None
    return (text, C_ATOM) if found is not None else (f"({text})", C_ATOM)

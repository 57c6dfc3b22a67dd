"""Index expressions of the typed tree as values and as text: ``_const`` folds an integer
constant expression, and ``_itext`` prints an index expression in spf's set syntax (``i + 1``,
``col(k)``, ``floor(i/2)``) with the minimal parentheses, which is how accesses and UF calls are
reported in :class:`ParsedSource`.
"""

from __future__ import annotations

from spf.errors import InternalError
from spf.ir.source.tree import _Binary, _Call, _Expr, _IDiv, _Num, _UFCall, _Unary, _Var


def _const(e: _Expr) -> int | None:
    """Value of an integer constant expression, else None."""
    if isinstance(e, _Num):
        return e.value if isinstance(e.value, int) else None
    if isinstance(e, _Unary):
        v = _const(e.operand)
        return None if v is None else (-v if e.op == "-" else v)
    if isinstance(e, _Binary) and e.op in ("+", "-", "*"):
        a, b = _const(e.left), _const(e.right)
        if a is None or b is None:
            return None
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


_SUM, _PRODUCT, _UNARY, _ATOM = 1, 2, 3, 4


def _itext(e: _Expr) -> str:
    return _iprint(e)[0]


def _iprint(e: _Expr) -> tuple[str, int]:
    """Index expression in spf's set syntax with its precedence."""
    if isinstance(e, _Num):
        return str(e.value), (_ATOM if e.value >= 0 else _UNARY)
    if isinstance(e, _Var):
        return e.name, _ATOM
    if isinstance(e, _UFCall | _Call):
        name = e.name if isinstance(e, _UFCall) else e.func
        call = f"{name}({', '.join(_itext(a) for a in e.args)})"
        if isinstance(e, _UFCall) and e.component is not None:
            call += f"[{e.component}]"
        return call, _ATOM
    if isinstance(e, _IDiv):
        return f"{'ceil' if e.ceil else 'floor'}({_iwrap(e.num, _PRODUCT)}/{e.den})", _ATOM
    if isinstance(e, _Unary):
        inner = _iwrap(e.operand, _UNARY)
        return (f"-{inner}", _UNARY) if e.op == "-" else (inner, _UNARY)
    if isinstance(e, _Binary):
        if e.op == "/":
            return f"floor({_iwrap(e.left, _PRODUCT)}/{_iwrap(e.right, _ATOM)})", _ATOM
        if e.op in ("+", "-"):
            return f"{_iwrap(e.left, _SUM)} {e.op} {_iwrap(e.right, _SUM + 1)}", _SUM
        sep = "*" if e.op == "*" else f" {e.op} "
        return f"{_iwrap(e.left, _PRODUCT)}{sep}{_iwrap(e.right, _PRODUCT + 1)}", _PRODUCT
    raise InternalError(f"spf bug: not an index expression: {e!r}")  # pragma: no cover


def _iwrap(e: _Expr, need: int) -> str:
    text, prec = _iprint(e)
    return text if prec >= need else f"({text})"

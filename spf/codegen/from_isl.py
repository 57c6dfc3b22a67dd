"""isl AST expressions -> :mod:`spf.codegen.loop_ast` expressions (the only isl reader of
codegen besides the scanner itself)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.codegen.loop_ast import Expr, Int, Op, Var
from spf.errors import CodegenError

if TYPE_CHECKING:
    import islpy as isl

_OP_NAMES = {
    "and_": "&&",
    "and_then": "&&",
    "or_": "||",
    "or_else": "||",
    "max": "max",
    "min": "min",
    "minus": "neg",
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "fdiv_q": "floord",
    "pdiv_q": "/",
    "pdiv_r": "%",
    "zdiv_r": "%",
    "cond": "select",
    "select": "select",
    "eq": "==",
    "le": "<=",
    "lt": "<",
    "ge": ">=",
    "gt": ">",
}


def _enum(value: object) -> str:
    """The member name of an islpy enum value (``ast_node_type.for_`` -> ``for_``)."""
    return str(value).rsplit(".", 1)[-1]


def node_kind(n: isl.AstNode) -> str:
    """``block``, ``if``, ``for``, ``mark`` or ``user``."""
    return _enum(n.get_type()).rstrip("_")


def expr(e: isl.AstExpr) -> Expr:
    """Convert one isl AST expression."""
    kind = _enum(e.get_type())
    if kind == "int":
        return Int(int(e.get_val().to_python()))
    if kind == "id":
        return Var(str(e.get_id().get_name()))
    op = _enum(e.get_op_type())
    if op not in _OP_NAMES:
        raise CodegenError(f"spf bug: unsupported isl AST operation {op} in {e.to_C_str()}")
    args = tuple(expr(e.get_op_arg(k)) for k in range(e.get_op_n_arg()))
    name = _OP_NAMES[op]
    if name in ("max", "min") and len(args) > 2:  # isl's n-ary min/max
        out = args[0]
        for a in args[1:]:
            out = Op(name, (out, a))
        return out
    return Op(name, args)

"""Loops whose step is a symbolic constant (``i += inc``, ``inc`` an integer parameter or an
expression of them): isl cannot hold a stride that is a parameter, so the loop's domain is
the unit-step range ``lo <= i < hi`` and its statements test ``(i - lo) % inc == 0``; the
C loop only ends when ``inc >= 1``, which becomes an assumption that the compiled kernel
checks when called (docs/import_c.md)."""

from __future__ import annotations

from typing import Any

from spf.frontend.cparse import c_ast, nodes
from spf.frontend.exprs import NotAffineError, Scope


def symbolic_step(scope: Scope, node: Any, it: str) -> tuple[int, str] | None:
    """``(direction, source text of the step)`` when the increment of for loop ``node`` (on
    ``it``) adds or subtracts an expression of integer parameters that is not a literal;
    None for any other increment (constant steps are read elsewhere)."""
    nx = node.next
    if not isinstance(nx, c_ast.Assignment) or not _is(nx.lvalue, it):
        return None
    if nx.op in ("+=", "-="):
        sign, amount = (1 if nx.op == "+=" else -1), nx.rvalue
    elif nx.op == "=" and isinstance(nx.rvalue, c_ast.BinaryOp) and nx.rvalue.op in "+-":
        rv = nx.rvalue
        if _is(rv.left, it):
            sign, amount = (1 if rv.op == "+" else -1), rv.right
        elif rv.op == "+" and _is(rv.right, it):
            sign, amount = 1, rv.left
        else:
            return None
    else:
        return None
    names = [n for n in nodes(amount) if isinstance(n, c_ast.ID)]
    if not names or any(n.name not in scope.consts for n in names):
        return None
    saved = scope.iters, scope.aliases
    scope.iters, scope.aliases = (), {}
    try:
        scope.affine(amount)  # an affine expression of the parameters
        return sign, scope.value(amount)
    except NotAffineError:
        return None
    finally:
        scope.iters, scope.aliases = saved


def _is(node: Any, name: str) -> bool:
    return isinstance(node, c_ast.ID) and node.name == name

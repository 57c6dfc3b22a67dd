"""Loops whose step is a symbolic constant (``i += inc``, ``inc`` an integer parameter or an
expression of them): isl cannot hold a stride that is a parameter, so the loop's domain is
the unit-step range ``lo <= i < hi`` and its statements test ``(i - lo) % inc == 0``; the
C loop only ends when ``inc >= 1``, which becomes an assumption that the compiled kernel
checks when called (docs/import_c.md)."""

from __future__ import annotations

import re
from typing import Any

from spf.frontend.cparse import c_ast, nodes
from spf.frontend.exprs import NotAffineError, Scope


def symbolic_step(scope: Scope, node: Any, it: str) -> int | tuple[int, str] | None:
    """The step of for loop ``node`` (on ``it``) when it adds or subtracts a name or an
    expression, not a literal: an int when its value is a constant (``int k = 2; i += k``),
    ``(direction, source text)`` when it is an expression of integer parameters, None for
    any other increment (literal steps are read elsewhere). ``scope`` holds the aliases at
    the loop."""
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
    if not any(isinstance(n, c_ast.ID) for n in nodes(amount)):
        return None  # a literal
    saved = scope.iters
    scope.iters = ()
    try:
        text = scope.affine(amount)
        value = scope.value(amount)
    except NotAffineError:
        return None
    finally:
        scope.iters = saved
    if re.fullmatch(r"-?\d+", text):
        return sign * int(text) or None
    words = set(re.findall(r"[A-Za-z_]\w*", text)) - {"floor"}
    calls = set(re.findall(r"([A-Za-z_]\w*)\s*\(", text)) - {"floor"}
    if calls or not words <= scope.consts:
        return None  # an index array read: no assumption can make it positive
    return sign, value


def _is(node: Any, name: str) -> bool:
    return isinstance(node, c_ast.ID) and node.name == name

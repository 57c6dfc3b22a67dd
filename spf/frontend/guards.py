"""Early-exit guards at the top level of a ``void`` function, ``if (n <= 0) return;``: what
follows runs only where the condition does not hold, so the import reads it as ``if
(!(n <= 0)) { <the rest of the body> }``. An affine condition then becomes a constraint of
every later statement's domain (loops and statements outside loops alike run nothing where
it holds); any other (``alpha == 0.0``) is tested by each of them, which means the same as
the guard because the condition reads only the function's parameters, which nothing assigns.

A guard whose condition reads anything else (an array, a local, a call, a parameter the
function assigns) could hold differently at each later statement; it is refused, naming
what it reads and how to rewrite it. A ``return`` anywhere else is left to the walker,
which refuses it."""

from __future__ import annotations

from typing import Any

from spf.frontend.cparse import Source, c_ast, nodes
from spf.frontend.rewrite import located

_CHANGES = ("p++", "p--", "++", "--")


def lower_early_returns(src: Source) -> None:
    """Rewrite, in every ``void`` function of ``src``, each top-level ``if (c) return;``
    into an ``if (!(c))`` around the statements after it (see the module docstring)."""
    for ext in src.ast.ext:
        if isinstance(ext, c_ast.FuncDef) and _void(ext) and ext.body is not None:
            params = _scalar_params(ext)
            assigned = _assigned(ext.body)
            items = list(ext.body.block_items or [])
            ext.body.block_items = _lower(src, items, params - assigned, params & assigned)


def _lower(src: Source, items: list[Any], params: set[str], assigned: set[str]) -> list[Any]:
    for k, item in enumerate(items):
        if not _is_guard(item):
            continue
        _check_condition(src, item, params, assigned)
        rest = _lower(src, items[k + 1 :], params, assigned)
        if rest and isinstance(rest[-1], c_ast.Return) and rest[-1].expr is None:
            rest = rest[:-1]  # the final 'return;' of a void function does nothing
        if not rest:
            return items[:k]
        negated = located(c_ast.UnaryOp("!", item.cond), item.cond)
        body = located(c_ast.Compound(rest), item)
        return [*items[:k], located(c_ast.If(negated, body, None), item)]
    return items


def _is_guard(node: Any) -> bool:
    """``if (c) return;`` or ``if (c) { return; }``, without ``else``."""
    if not isinstance(node, c_ast.If) or node.iffalse is not None:
        return False
    then = node.iftrue
    if isinstance(then, c_ast.Compound) and len(then.block_items or []) == 1:
        then = then.block_items[0]
    return isinstance(then, c_ast.Return) and then.expr is None


def _check_condition(src: Source, guard: Any, params: set[str], assigned: set[str]) -> None:
    for n in nodes(guard.cond):
        what = ""
        if isinstance(n, c_ast.ArrayRef):
            what = "an array element"
        elif isinstance(n, c_ast.FuncCall):
            what = "a call"
        elif isinstance(n, c_ast.Assignment) or (isinstance(n, c_ast.UnaryOp) and n.op in _CHANGES):
            what = "an assignment"
        elif isinstance(n, c_ast.ID) and n.name in assigned:
            what = f"parameter {n.name!r}, which the function assigns"
        elif isinstance(n, c_ast.ID) and n.name not in params:
            what = f"{n.name!r}, which is not a scalar parameter of the function"
        if what:
            raise src.error(
                guard.iftrue,
                f"an early return cannot be represented in spf where its condition reads "
                f"{what} (one on scalar parameters the function does not assign becomes a "
                "condition of the statements after it)",
                "guard the rest of the body with the opposite if instead: "
                "if (!(<condition>)) { <the rest> }",
            )


def _void(fn: Any) -> bool:
    t = fn.decl.type.type
    return (
        isinstance(t, c_ast.TypeDecl)
        and isinstance(t.type, c_ast.IdentifierType)
        and t.type.names == ["void"]
    )


def _scalar_params(fn: Any) -> set[str]:
    args = fn.decl.type.args
    return {
        p.name
        for p in (args.params if args is not None else [])
        if isinstance(p, c_ast.Decl) and p.name and isinstance(p.type, c_ast.TypeDecl)
    }


def _assigned(body: Any) -> set[str]:
    out: set[str] = set()
    for n in nodes(body):
        target = None
        if isinstance(n, c_ast.Assignment):
            target = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and n.op in _CHANGES:
            target = n.expr
        if isinstance(target, c_ast.ID):
            out.add(target.name)
    return out


__all__ = ["lower_early_returns"]

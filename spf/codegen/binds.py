"""Placing UF value reads (:class:`~spf.codegen.loop_ast.Bind`) where the loops use them.

The scanner reads a UF value once where it becomes computable, for the group of statements
that needs it; isl then scans that group's inner loops, and may split them into branches or
consecutive nests of which only some use the value: a statement whose loop runs one more
iteration than another's (``0 <= i <= N`` beside a row loop bounded by ``rowptr(i+1)``) ends
up in ``if (i < N) ...`` with the other statement outside. Reading ``rowptr(i + 1)`` above
that branch reads ``rowptr[N + 1]`` in the extra iteration: out of bounds.

:func:`bind_where_used` puts each read at the top of the smallest part of the body that uses
it: into the one item of a block that does (or into each of them), into the branches of an
``if`` whose condition does not use it. It never moves a read into a loop (that would read
it once per iteration). A read placed lower runs later, never earlier, and still before every
use; the scanner binds a run-time index array's value only below the last write that can
change it (:mod:`spf.codegen.written_ufs`), so a later read gets the same value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spf.codegen.loop_ast import Bind, Block, Expr, If, Node, expr_vars, uses


def bind_where_used(var: str, uf: str, args: tuple[Expr, ...], body: Node) -> Node:
    """``body`` with ``var = uf(args)`` read at the top of each smallest part that uses
    ``var`` (``body`` unchanged when nothing does)."""
    if not uses(body, var):
        return body
    if isinstance(body, Block):
        return Block(tuple(bind_where_used(var, uf, args, item) for item in body.items))
    if isinstance(body, If) and var not in set(expr_vars(body.cond)):
        orelse = None if body.orelse is None else bind_where_used(var, uf, args, body.orelse)
        return If(body.cond, bind_where_used(var, uf, args, body.then), orelse)
    if isinstance(body, Bind) and not any(var in set(expr_vars(a)) for a in body.args):
        return Bind(body.var, body.uf, body.args, bind_where_used(var, uf, args, body.body))
    return Bind(var, uf, args, body)


def bind_all_where_used(
    names: Sequence[str], values: Mapping[str, tuple[str, tuple[Expr, ...]]], body: Node
) -> Node:
    """Each of ``names`` (``values``: name -> ``(uf, args)``) read where ``body`` uses it; a
    value whose arguments use another of ``names`` is placed first, so the other one's read
    lands above it."""
    order = list(names)
    placed: list[str] = []
    while order:
        # a value no other pending value's arguments use goes next (innermost first)
        for var in reversed(order):
            others = (values[o][1] for o in order if o != var)
            if not any(var in set(expr_vars(a)) for args in others for a in args):
                break
        order.remove(var)
        placed.append(var)
    for var in placed:
        uf, args = values[var]
        body = bind_where_used(var, uf, args, body)
    return body

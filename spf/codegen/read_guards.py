"""Guards on the reads of UF values that only some statements of a group need.

The scanner binds a UF value for a group of statements that share loops (isl scans them
together), though only some of them need it. Where :func:`spf.codegen.binds.bind_where_used`
cannot place the read under a branch that keeps its arguments inside the UF's declared
domain (the branches isl makes test the value itself), the read would run at the other
statements' points too: ``f(k)``, needed by a statement with ``0 <= k <= N``, read beside one
whose ``k`` runs to ``NNZ`` reads the index array out of bounds. :func:`guarded_binds` puts
such a read under ``if (<arguments in the domain>)`` when everything the read's scope calls
needs the value (those statements run only inside the domain, so nothing else is skipped);
the scanner decides, from what the enclosing branches already say, whether a guard is needed
(:meth:`spf.codegen.scan.Scanner._read_guard`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from spf.codegen.loop_ast import (
    Bind,
    Block,
    Call,
    Expr,
    For,
    If,
    Int,
    Node,
    Op,
    Var,
    expr_vars,
    node_exprs,
    walk,
)

GuardAt = Callable[[str, Sequence[str]], Expr | None]
"""``(value, enclosing conditions as isl text) -> guard`` (None: no guard needed)."""


def guarded_binds(
    body: Node, values: Sequence[str], needs: Mapping[str, set[str]], at: GuardAt
) -> Node:
    """``body`` with each read of one of ``values`` whose scope calls only statements that
    need it (``needs``: call label -> values) under the guard ``at`` gives it."""
    wanted = set(values)

    def rec(n: Node, known: tuple[str, ...]) -> Node:
        if isinstance(n, Block):
            return Block(tuple(rec(i, known) for i in n.items))
        if isinstance(n, If):
            text = isl_condition(n.cond)
            inner = known if text is None else (*known, text)
            orelse = None if n.orelse is None else rec(n.orelse, known)
            return If(n.cond, rec(n.then, inner), orelse)
        if isinstance(n, For):
            return For(n.var, n.init, n.cond, n.step, rec(n.body, ()), n.position, n.tags)
        if not isinstance(n, Bind):
            return n
        out = Bind(n.var, n.uf, n.args, rec(n.body, known))
        if n.var not in wanted:
            return out
        calls = [c.stmt for c in walk(n.body) if isinstance(c, Call)]
        if not calls:
            return out
        rest: Node | None = None
        if not all(n.var in needs[c] for c in calls):
            # others share the scope: they run alone where the guard fails
            try:
                rest = _without(out.body, lambda stmt: n.var in needs[stmt])
            except _UnprunedError:
                return out
            if rest is not None and any(n.var in set(expr_vars(e)) for e in node_exprs(rest)):
                return out  # their loops use the value too (isl's bounds of the union)
        guard = at(n.var, known)
        return out if guard is None else If(guard, out, rest)

    return rec(body, ())


class _UnprunedError(Exception):
    """A node :func:`_without` does not take apart (an allocation, a merge)."""


def _without(n: Node, drop: Callable[[str], bool]) -> Node | None:
    """``n`` without the calls of the statements ``drop`` names (None: nothing is left)."""
    if isinstance(n, Call):
        return None if drop(n.stmt) else n
    if isinstance(n, Block):
        items = [x for x in (_without(i, drop) for i in n.items) if x is not None]
        return Block(tuple(items)) if items else None
    if isinstance(n, If):
        then = _without(n.then, drop)
        orelse = None if n.orelse is None else _without(n.orelse, drop)
        if then is None and orelse is None:
            return None
        return If(n.cond, Block(()) if then is None else then, orelse)
    if isinstance(n, For):
        inner = _without(n.body, drop)
        return None if inner is None else replace(n, body=inner)
    if isinstance(n, Bind):
        inner = _without(n.body, drop)
        return None if inner is None else Bind(n.var, n.uf, n.args, inner)
    raise _UnprunedError


_AFFINE = {"+", "-", "*"}
_COMPARE = {"==", "<", "<=", ">", ">="}


def isl_condition(e: Expr) -> str | None:
    """``e`` as isl constraint text when it is a conjunction of affine comparisons, else
    None (a condition isl's text cannot say here is simply not used)."""
    if isinstance(e, Op) and e.op == "&&":
        parts = [isl_condition(a) for a in e.args]
        return None if any(p is None for p in parts) else " and ".join(f"({p})" for p in parts)
    if isinstance(e, Op) and e.op in _COMPARE:
        left, right = (_isl_term(a) for a in e.args)
        if left is None or right is None:
            return None
        op = "=" if e.op == "==" else e.op
        return f"{left} {op} {right}"
    return None


def _isl_term(e: Expr) -> str | None:
    if isinstance(e, Int):
        return str(e.value)
    if isinstance(e, Var):
        return e.name
    if not isinstance(e, Op):
        return None
    args = [_isl_term(a) for a in e.args]
    if any(a is None for a in args):
        return None
    if e.op == "neg":
        return f"-({args[0]})"
    if e.op in _AFFINE and len(args) == 2:
        return f"({args[0]}) {e.op} ({args[1]})"
    if e.op == "floord" and isinstance(e.args[1], Int) and e.args[1].value > 0:
        return f"floor(({args[0]}) / {e.args[1].value})"
    return None

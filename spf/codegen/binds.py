"""Placing UF value reads (:class:`~spf.codegen.loop_ast.Bind`) where the loops use them.

The scanner reads a UF value once where it becomes computable, for the group of statements
that needs it; isl then scans that group's inner loops, and may split them into branches or
consecutive nests of which only some use the value: a statement whose loop runs one more
iteration than another's (``0 <= i <= N`` beside a row loop bounded by ``rowptr(i+1)``) ends
up in ``if (i < N) ...`` with the other statement outside. Reading ``rowptr(i + 1)`` above
that branch reads ``rowptr[N + 1]`` in the extra iteration: out of bounds.

:func:`bind_where_used` puts each read at the top of the smallest part of the body that uses
it: into the item of a block that does (into the branches of each ``if`` item that uses it
only there, above the first item that uses it otherwise), into the branches of an ``if``
whose condition does not use it. It never moves a read into a loop (that would read it once
per iteration). With ``below_guards`` (the scanner's second try, where its self-check
found a read outside its UF's domain) a read that an ``if`` tests goes below the operands of
its ``&&`` condition that do not use it: ``if (i >= 1 && rowptr_i >= rowptr__1_i + 2)``
reads ``rowptr(i - 1)`` inside ``if (i >= 1)``. A read placed lower runs later, never
earlier, and still before every use; the scanner binds a run-time index array's value
only below the last write that can change it (:mod:`spf.codegen.written_ufs`), so a later
read gets the same value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spf.codegen.loop_ast import Bind, Block, Expr, If, Node, Op, conjunction, expr_vars, uses


def bind_where_used(
    var: str, uf: str, args: tuple[Expr, ...], body: Node, below_guards: bool = False
) -> Node:
    """``body`` with ``var = uf(args)`` read at the top of each smallest part that uses
    ``var`` (``body`` unchanged when nothing does). With ``below_guards``, a read that an
    ``if`` uses goes below the operands of its ``&&`` condition that do not use it
    (:func:`_under_guard`)."""
    if not uses(body, var):
        return body
    here = Bind(var, uf, args, body)
    if isinstance(body, Block):
        return _in_block(var, uf, args, body, below_guards)
    if isinstance(body, If) and var not in set(expr_vars(body.cond)):
        orelse = body.orelse
        if orelse is not None:
            orelse = bind_where_used(var, uf, args, orelse, below_guards)
        return If(body.cond, bind_where_used(var, uf, args, body.then, below_guards), orelse)
    if below_guards and isinstance(body, If) and body.orelse is None:
        guarded = _under_guard(var, uf, args, body)
        if guarded is not None:
            return guarded
    if isinstance(body, Bind) and not any(var in set(expr_vars(a)) for a in body.args):
        inner = bind_where_used(var, uf, args, body.body, below_guards)
        if inner == Bind(var, uf, args, body.body):
            return here  # no lower: keep the reads in the order the scanner gave them
        return Bind(body.var, body.uf, body.args, inner)
    return here


def _conjuncts(cond: Expr) -> list[Expr]:
    """The operands of ``cond``'s ``&&`` chain (``[cond]`` when it is no ``&&``)."""
    if isinstance(cond, Op) and cond.op == "&&":
        return [c for arg in cond.args for c in _conjuncts(arg)]
    return [cond]


def _under_guard(var: str, uf: str, args: tuple[Expr, ...], body: If) -> Node | None:
    """``if (a && b) X`` whose ``b`` uses ``var`` and ``a`` does not, as ``if (a) { read
    var; if (b) X }``: ``a`` may be what keeps the read's arguments in the UF's domain
    (``i >= 1`` guarding ``rowptr(i - 1)``), so the read goes below it, never above (None
    when every operand uses ``var``)."""
    conds = _conjuncts(body.cond)
    free = [c for c in conds if var not in set(expr_vars(c))]
    if not free:
        return None
    rest = [c for c in conds if var in set(expr_vars(c))]
    return If(conjunction(free), Bind(var, uf, args, If(conjunction(rest), body.then)))


def _in_block(var: str, uf: str, args: tuple[Expr, ...], block: Block, below_guards: bool) -> Block:
    """The items of ``block`` that use ``var`` only inside an ``if`` each read it in their
    branches; from the first item that reads it unconditionally on, one read covers the rest
    (one declaration per C scope: two reads of one name side by side would clash)."""
    items = _flat(block)
    for k, item in enumerate(items):
        if not uses(item, var):
            continue
        placed = bind_where_used(var, uf, args, item, below_guards)
        if isinstance(placed, If):  # read inside its branches only
            items[k] = placed
            continue
        last = max(j for j, other in enumerate(items) if uses(other, var))
        rest = items[k : last + 1]
        inner: Node = placed if len(rest) == 1 else Bind(var, uf, args, Block(tuple(rest)))
        return Block((*items[:k], inner, *items[last + 1 :]))
    return Block(tuple(items))


def _flat(block: Block) -> list[Node]:
    """The items of ``block``, those of blocks inside it spliced in (a block is no scope)."""
    out: list[Node] = []
    for item in block.items:
        out.extend(_flat(item) if isinstance(item, Block) else [item])
    return out


def bind_all_where_used(
    names: Sequence[str],
    values: Mapping[str, tuple[str, tuple[Expr, ...]]],
    body: Node,
    below_guards: bool = False,
) -> Node:
    """Each of ``names`` (``values``: name -> ``(uf, args)``) read where ``body`` uses it; a
    value whose arguments use another of ``names`` is placed first, so the other one's read
    lands above it. ``below_guards``: see :func:`bind_where_used`."""
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
        body = bind_where_used(var, uf, args, body, below_guards)
    return body

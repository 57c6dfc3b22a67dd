"""Merges in the loop tree: co-iterated loops become one :class:`~spf.codegen.loop_ast.Merge`.

The statements of each co-iteration group (:func:`spf.analysis.coiteration.groups`) are
scanned as one *placeholder* statement over their outer iterators only (the domain's
constraints on them, the schedule before the merge, the outer loops' tags): the scanner
places its call where the merge belongs, with the values of the outer iterators, and
:func:`merging`'s second result replaces that call by the ``Merge`` node, whose cursors,
keys and bodies (calls of the group's statements, guarded by their filters) come from the
statements' domains. The scanner and the implemented-domain check see the placeholder
computation; everything after them sees the merges (docs/coiteration.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING

from spf.codegen.loop_ast import (
    Bind,
    Block,
    Call,
    Cursor,
    Expr,
    For,
    If,
    Merge,
    Node,
    Op,
    Var,
    walk,
)
from spf.errors import CodegenError
from spf.ir import ComputationIR, StmtIR
from spf.sets.affine import Aff

if TYPE_CHECKING:
    from spf.analysis.coiteration import Branch, Constraint, Group, Side

Expand = Callable[[Node], Node]


def merging(ir: ComputationIR) -> tuple[ComputationIR, Expand]:
    """The computation to scan (each group's statements replaced by its placeholder) and
    the function that turns the placeholders' calls in the scanned tree into merges."""
    from spf.analysis.coiteration import NotMergeableError, groups

    try:
        found = groups(ir)
    except NotMergeableError as err:
        raise CodegenError(str(err)) from None
    if not found:
        return ir, lambda body: body
    taken = {*ir.params, *ir.data_space_table, *ir.uf_decls, *(b.name for b in ir.buffers)}
    taken |= {s.name for s in ir.parsed_stmts}
    names: dict[str, Group] = {}
    for g in found:
        name = f"{g.stmt}_merge"
        while name in taken:
            name += "_"
        taken.add(name)
        names[name] = g
    shadow = _shadow(ir, names)
    reserved = frozenset(taken)
    return shadow, lambda body: _expand(body, names, reserved)


# ----------------------------------------------------------------------------- the shadow
def _shadow(ir: ComputationIR, placeholders: Mapping[str, Group]) -> ComputationIR:
    from spf.analysis.coiteration import outer_domain_text
    from spf.ir.parsed import share

    by_stmt = {g.stmt: (name, g) for name, g in placeholders.items()}
    gone = {s for g in placeholders.values() for s in g.stmts}
    stmts = []
    for entry in ir.stmts:
        if entry.name in by_stmt:
            name, g = by_stmt[entry.name]
            domain = str(ir.set_of(outer_domain_text(g.shape)))
            schedule = str(ir.relation_of(g.schedule))
            stmts.append(
                StmtIR(
                    name=name,
                    source=";",
                    domain=domain,
                    schedule=schedule,
                    current_schedule=schedule,
                    reads=(),
                    writes=(),
                    tags=tuple((loop, tuple(t)) for loop, t in sorted(g.tags.items())),
                )
            )
        elif entry.name not in gone:
            stmts.append(entry)
    order = [s.name for s in ir.parsed_stmts]
    operations = tuple(  # positions in the statement list, which shrank
        replace(
            op,
            position=op.position
            - sum(1 for s in order[: op.position] if s in gone and s not in by_stmt),
        )
        for op in ir.operations
    )
    for w in ir.workspaces:
        if w.stmt in gone:
            raise CodegenError(
                f"statement {w.stmt} runs in a merge (co-iteration) and cannot hold the "
                f"workspace {w.name!r}; give it to a statement outside the merge"
            )
    shadow = replace(ir, stmts=tuple(stmts), operations=operations)
    share(ir, shadow)
    return shadow


# ----------------------------------------------------------------------------- the merges
def _expand(body: Node, placeholders: Mapping[str, Group], reserved: frozenset[str]) -> Node:
    taken = set(reserved) | {n.var for n in walk(body) if isinstance(n, (For, Bind))}

    def visit(n: Node) -> Node:
        if isinstance(n, Call):
            return _merge(placeholders[n.stmt], n.args, taken) if n.stmt in placeholders else n
        if isinstance(n, Block):
            return Block(tuple(visit(i) for i in n.items))
        if isinstance(n, If):
            return If(n.cond, visit(n.then), None if n.orelse is None else visit(n.orelse))
        if isinstance(n, Merge):
            return n.map_bodies(visit)
        return replace(n, body=visit(n.body))

    return visit(body)


def _merge(g: Group, args: Sequence[Expr], taken: set[str]) -> Merge:
    shape = g.shape
    env: dict[str, Expr] = dict(zip(shape.outer_vars, args, strict=True))
    cursors = []
    for side in (shape.left, shape.right):
        var = side.var
        while var in taken:
            var += "_"
        taken.add(var)
        env[side.var] = Var(var)
        cursors.append(var)
    left, right = (
        _cursor(side, var, g.position + 2 * k, env)
        for k, (side, var) in enumerate(zip((shape.left, shape.right), cursors, strict=True))
    )
    both = _guarded(Call(shape.stmt, tuple(env[v] for v in shape.tuple_vars)), shape.filters, env)
    return Merge(
        left=left,
        right=right,
        both=both,
        left_only=_branch(g.left, shape.outer_vars, shape.left, env),
        right_only=_branch(g.right, shape.outer_vars, shape.right, env),
    )


def _cursor(side: Side, var: str, position: int, env: Mapping[str, Expr]) -> Cursor:
    init = _fold("max", [to_expr(lo, env) for lo in side.lower])
    end = _fold("min", [to_expr(u, env) for u in side.upper])
    return Cursor(var=var, init=init, end=end, key=to_expr(side.key, env), position=position)


def _branch(
    branch: Branch | None, outer: Sequence[str], side: Side, env: Mapping[str, Expr]
) -> Node | None:
    """The call of a union's statement over one position (its iterators are the outer
    ones, then the position)."""
    if branch is None:
        return None
    args = tuple(env[v] for v in (*outer, side.var))
    return _guarded(Call(branch.stmt, args), branch.filters, env)


def _guarded(call: Call, filters: Sequence[Constraint], env: Mapping[str, Expr]) -> Node:
    if not filters:
        return call
    conds = [_condition(q, e, env) for q, e in filters]
    cond = conds[0]
    for c in conds[1:]:
        cond = Op("&&", (cond, c))
    return If(cond, call)


def _condition(is_eq: bool, e: Aff, env: Mapping[str, Expr]) -> Expr:
    """``e = 0`` / ``e >= 0`` as ``positive terms == / >= negated negative terms``."""
    pos = Aff({a: c for a, c in e.coeffs.items() if c > 0}, max(e.const, Fraction(0)))
    neg = Aff({a: -c for a, c in e.coeffs.items() if c < 0}, max(-e.const, Fraction(0)))
    left = to_expr(pos, env)
    right = to_expr(neg, env)
    return Op("==" if is_eq else ">=", (left, right))


def _fold(op: str, items: list[Expr]) -> Expr:
    out = items[0]
    for e in items[1:]:
        out = Op(op, (out, e))
    return out


def to_expr(e: Aff, env: Mapping[str, Expr]) -> Expr:
    """An expression of the domain (integers, iterators, parameters, ``+``, ``*``,
    ``floor``, UF calls) as a loop-AST expression, the constant last; iterators are
    replaced by ``env``."""
    from spf.codegen.affine_expr import loop_expr

    return loop_expr(e, lambda n: env.get(n, Var(n)), constant_last=True, what="merge bound")


def merge_tag(n: Merge) -> str:
    """The ``coiterate(...)`` tag that asks for ``n`` (``loop_structure`` shows it)."""
    from spf.analysis.coiteration import tag_text

    def first(body: Node | None) -> str | None:
        calls = [] if body is None else [c.stmt for c in walk(body) if isinstance(c, Call)]
        return calls[0] if calls else None

    return tag_text(n.right.var, first(n.left_only), first(n.right_only))

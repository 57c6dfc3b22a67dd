"""The loops of a PDFG, read from the current schedules (docs/pdfg.md).

Every statement's schedule, padded to the computation's width, is a sequence of constants
and loop variables. Statements that agree on every constant before a loop position share
that loop; the constants order what they enclose. So each loop of the schedule is one
:class:`Nest` (tiled, split and fused loops included), whatever pieces isl would cut it into
when scanning, and the statements come out in execution order.

Each loop is labelled with its bounds as a half-open range over the enclosing loops'
variables and the parameters, ``i0 ∈ [0, ⌈N/64⌉)``, computed by isl from the statements'
schedule-space sets; the statements' full domains are kept for the tooltip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import islpy as isl

from spf.analysis.dependences import padded
from spf.codegen.from_isl import expr as isl_expr
from spf.codegen.from_isl import node_kind
from spf.codegen.loop_ast import Expr, Int, Op, Var
from spf.errors import InternalError, SpfError
from spf.ir.reading import is_constant
from spf.sets import affine
from spf.sets.linear import DT
from spf.sets.view import uf_view

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import StmtReading
    from spf.sets.affine import Aff


@dataclass(frozen=True)
class Nest:
    """One loop of the current schedule: its name, ``label`` (its bounds, ``i ∈ [0, N)``),
    its items (statement names and inner loops, in execution order), its tags, the schedule
    ``position`` it scans, ``domain`` (the domains of the statements inside, one per line)
    and ``carries`` (the dependences it carries, ``flow s2→s1 on u``)."""

    loop: str
    label: str
    items: tuple[str | Nest, ...]
    tags: tuple[str, ...] = ()
    position: int = 0
    domain: str = ""
    carries: tuple[str, ...] = ()


def statements_in(item: str | Nest) -> list[str]:
    """The statements of ``item`` in execution order."""
    if isinstance(item, str):
        return [item]
    return [name for inner in item.items for name in statements_in(inner)]


def loop_tree(
    ir: ComputationIR, carried: Mapping[tuple[str, int], Sequence[str]] | None = None
) -> tuple[str | Nest, ...]:
    """The loops and statements of the computation ``ir`` in execution order. ``carried``
    maps ``(statement, position)`` to the dependences the loop at that position of the
    statement's schedule carries."""
    stmts = ir.parsed_stmts
    if not stmts:
        return ()
    return tuple(_Builder(ir, carried or {}).build([s.name for s in stmts], 0, ()))


class _Builder:
    def __init__(self, ir: ComputationIR, carried: Mapping[tuple[str, int], Sequence[str]]):
        self.width = ir.schedule_width
        self.stmts = {s.name: s for s in ir.parsed_stmts}
        self.outs = {s.name: padded(s, self.width).out_vars for s in ir.parsed_stmts}
        self.carried = carried

    def build(self, names: list[str], p: int, outer: tuple[str, ...]) -> list[str | Nest]:
        """The items of the statements ``names`` (equal before position ``p``); ``outer``
        names the loops around them, one per position before ``p`` (``""`` for constants)."""
        if p >= self.width:
            return list(names)
        consts: dict[int, list[str]] = {}
        looped: list[str] = []
        for name in names:
            v = self.outs[name][p]
            if is_constant(v):
                consts.setdefault(int(v), []).append(name)
            else:
                looped.append(name)
        out: list[str | Nest] = []
        if looped:
            out.append(self._loop(looped, p, outer))
        for value in sorted(consts):
            out.extend(self.build(consts[value], p + 1, (*outer, "")))
        return out

    def _loop(self, names: list[str], p: int, outer: tuple[str, ...]) -> Nest:
        first = names[0]
        var = self.outs[first][p]
        loop = var if var.isidentifier() else f"c{p}"
        items = tuple(self.build(names, p + 1, (*outer, loop)))
        order = [n for item in items for n in statements_in(item)]
        first = order[0]
        var = self.outs[first][p]
        loop = var if var.isidentifier() else f"c{p}"
        tags: list[str] = []
        carries: list[str] = []
        for name in order:
            for tag in self.stmts[name].tags.get(self.outs[name][p], ()):
                if tag not in tags:
                    tags.append(tag)
            for dep in self.carried.get((name, p), ()):
                if dep not in carries:
                    carries.append(dep)
        stmts = [self.stmts[n] for n in order]
        return Nest(
            loop=loop,
            label=loop_label(loop, p, stmts, outer, self.width),
            items=items,
            tags=tuple(tags),
            position=p,
            domain="\n".join(f"{s.name}: {s.domain}" for s in stmts),
            carries=tuple(carries),
        )


def loop_label(
    loop: str, p: int, stmts: Sequence[StmtReading], outer: tuple[str, ...], width: int
) -> str:
    """``loop ∈ [lower, upper)`` (or ``loop = value``) over the statements ``stmts``; just
    the name when isl cannot state the bounds (hidden variables, unbounded loops)."""
    try:
        bounds = _bounds(p, stmts, (*outer, loop), width)
    except (SpfError, isl.Error):
        return loop
    if bounds is None:
        return loop
    lo, hi = bounds
    if hi is None:
        return f"{loop} = {lo}"
    return f"{loop} ∈ [{lo}, {hi})"


def _bounds(
    p: int, stmts: Sequence[StmtReading], names: tuple[str, ...], width: int
) -> tuple[str, str | None] | None:
    calls: dict[str, str] = {}  # UF call text -> parameter name
    union: isl.Set | None = None
    for s in stmts:
        line = _line(s, p, names, width, calls)
        if line is None:
            return None
        if union is None:
            union = line
        else:
            union = union.align_params(line.get_space()).union(line.align_params(union.get_space()))
    if union is None or union.is_empty() or not union.is_bounded():
        return None
    texts = {param: call for call, param in calls.items()}
    return _ast_bounds(union.coalesce(), texts)


def _line(
    s: StmtReading, p: int, names: tuple[str, ...], width: int, calls: dict[str, str]
) -> isl.Set | None:
    """The values of position ``p`` of ``s``'s schedule-space set as a 1-D isl set whose
    parameters are the enclosing loops, the computation's parameters and the UF calls
    computable outside the loop (named ``__ufK``, their text in ``calls``)."""
    sset = padded(s, width).apply(s.domain)
    reserved = set(sset.params) | set(s.domain.params)
    dims = [
        n if k <= p and n and n not in reserved else f"__c{k}"
        for k, n in enumerate((*names, *[""] * (width - len(names))))
    ]
    if any(d.startswith("__c") for k, d in enumerate(dims[: p + 1]) if names[k]):
        return None  # a loop named like a parameter: no readable bounds
    view = uf_view(sset, dims)
    outside = {d for k, d in enumerate(dims[:p]) if names[k]} | reserved
    kept: list[int] = []
    texts: dict[str, str] = {}
    for k, (uf, args) in enumerate(view.terms):
        free = {n for a in args for n in a.free_names()}
        if free <= outside:
            kept.append(k)
            outside.add(f"__u{k}")
            texts[f"__u{k}"] = f"{uf}({', '.join(_show(a, texts) for a in args)})"
    iset = view.iset
    n_terms = len(view.terms)
    drop = [k for k in range(width) if k > p or (k < p and not names[k])]
    drop += [width + k for k in range(n_terms) if k not in kept]
    for d in sorted(drop, reverse=True):
        iset = iset.project_out(DT.set, d, 1)
    n_outer = sum(1 for k in range(p) if names[k])
    n_params = iset.dim(DT.param)
    iset = iset.move_dims(DT.param, n_params, DT.set, n_outer + 1, len(kept))
    for j, k in enumerate(kept):
        text = texts[f"__u{k}"]
        param = calls.setdefault(text, f"__uf{len(calls)}")
        iset = iset.set_dim_name(DT.param, n_params + j, param)
    iset = iset.move_dims(DT.param, iset.dim(DT.param), DT.set, 0, n_outer)
    return iset.set_dim_name(DT.set, 0, names[p])


def _ast_bounds(line: isl.Set, texts: Mapping[str, str]) -> tuple[str, str | None] | None:
    """Lower and exclusive upper bound of the 1-D ``line`` as isl's AST generator states
    them (``None`` upper: a single value)."""
    build = isl.AstBuild.from_context(line.params())
    ident = isl.Map.identity(line.get_space().map_from_set()).intersect_domain(line)
    node = build.node_from_schedule_map(isl.UnionMap.from_map(ident))
    while True:
        kind = node_kind(node)
        if kind == "if":
            node = node.if_get_then()
        elif kind == "block":
            children = node.block_get_children()
            if children.n_ast_node() != 1:
                return None
            node = children.get_at(0)
        elif kind == "mark":
            node = node.mark_get_node()
        else:
            break
    if kind == "user":
        call = node.user_get_expr()
        return _text(isl_expr(call.get_op_arg(1)), texts), None
    if kind != "for":
        return None
    cond = isl_expr(node.for_get_cond())
    if not isinstance(cond, Op) or cond.op not in ("<=", "<") or len(cond.args) != 2:
        return None
    upper = cond.args[1] if cond.op == "<" else _plus_one(cond.args[1])
    return _text(isl_expr(node.for_get_init()), texts), _text(upper, texts)


def _plus_one(e: Expr) -> Expr:
    """``e + 1`` pushed into ``min``/``max`` and ``floord`` (``⌊x/d⌋ + 1 = ⌈(x+1)/d⌉``)."""
    if isinstance(e, Op) and e.op in ("min", "max"):
        return Op(e.op, tuple(_plus_one(a) for a in e.args))
    if isinstance(e, Op) and e.op == "+" and _has_floor(e.args[1]) and not _has_floor(e.args[0]):
        return Op("+", (e.args[0], _plus_one(e.args[1])))
    if isinstance(e, Op) and e.op in ("+", "-") and _has_floor(e.args[0]):
        return Op(e.op, (_plus_one(e.args[0]), e.args[1]))
    if isinstance(e, Op) and e.op in ("floord", "/"):
        return Op("ceild", (Op("+", (e.args[0], Int(1))), e.args[1]))
    return Op("+", (e, Int(1)))


def _has_floor(e: Expr) -> bool:
    return isinstance(e, Op) and (e.op in ("floord", "/") or any(_has_floor(a) for a in e.args))


def _text(e: Expr, texts: Mapping[str, str]) -> str:
    """Readable text of a bound: ``⌈N/64⌉``, ``min(N, 64*i0 + 64)``, ``rowptr(i + 1)``."""
    if isinstance(e, Op) and e.op in ("min", "max"):
        return f"{e.op}({', '.join(_text(a, texts) for a in e.args)})"
    if isinstance(e, Op) and e.op in ("floord", "/", "ceild"):
        num, den = _affine(e.args[0]), _affine(e.args[1])
        top = _show(num, texts)
        if not (num.as_sym() is not None or num.is_integer()):
            top = f"({top})"
        left, right = ("⌈", "⌉") if e.op == "ceild" else ("⌊", "⌋")
        return f"{left}{top}/{_show(den, texts)}{right}"
    return _show(_affine(e), texts)


def _affine(e: Expr) -> Aff:
    if isinstance(e, Int):
        return affine.const(e.value)
    if isinstance(e, Var):
        return affine.sym(e.name)
    if not isinstance(e, Op):
        raise InternalError(f"unexpected bound {e!r}")
    if e.op in ("floord", "/", "ceild", "min", "max"):
        return affine.sym(_text(e, {}))  # an atom inside arithmetic
    args = [_affine(a) for a in e.args]
    if e.op == "+":
        return args[0] + args[1]
    if e.op == "-":
        return args[0] - args[1]
    if e.op == "*":
        return args[0] * args[1]
    if e.op == "neg":
        return -args[0]
    raise InternalError(f"unexpected operation {e.op!r} in a loop bound")


_UF_PARAM = re.compile(r"\b__u(?:f)?\d+\b")


def _show(e: Aff, texts: Mapping[str, str]) -> str:
    """``e`` as text, UF-value parameters replaced by their calls."""
    return _UF_PARAM.sub(lambda m: texts.get(m.group(0), m.group(0)), str(e))


def tags_text(tags: Iterable[str]) -> str:
    """``[parallel, unroll(4)]`` or nothing."""
    tags = list(tags)
    return f" [{', '.join(tags)}]" if tags else ""

"""The implemented-domain check (loopy's idea): prove that the scanned loops execute each
statement's domain exactly once.

Every path to a statement call is a set over the loop variables and bound UF values in
scope (loop bounds, guards, ``v = uf(args)`` bindings); mapping it through the call's
iterator values gives the instances that call site executes. Their union must equal the
statement's domain, and different call sites must not overlap. The check runs on UF-aware
sets, so it covers the UF bindings too; a failure is a ``CodegenError`` (a scanner bug) that
names the scheduling command to blame.

Only parameter values a kernel can be called with count (:func:`spf.analysis.bounds.
call_context`: no array extent is negative, the parameter assumptions hold): the loops isl
builds may take a bound from another statement's array (``k0 < NNZ/2`` where a tile of
``L(k)`` runs), which is exact only for the extents a call can pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.codegen.budget import isl_budget
from spf.codegen.loop_ast import Bind, Block, Call, Expr, For, If, Int, Node, Op, UFRead, Var
from spf.errors import CodegenError
from spf.sets import Relation, Set

if TYPE_CHECKING:
    from spf.computation.computation import Computation

_NEG = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


@dataclass(frozen=True)
class _Site:
    stmt: str
    names: tuple[str, ...]
    conds: tuple[str, ...]
    args: tuple[Expr, ...]


class _Text:
    """Loop-AST expressions as set text; min/max/select become auxiliary variables."""

    def __init__(self, prefix: str = "_m", tuple_valued: frozenset[str] = frozenset()) -> None:
        self.prefix = prefix
        self.aux: list[str] = []
        self.conds: list[str] = []
        self.tuple_valued = tuple_valued
        """UFs that return a tuple: their reads ``f(i, c)`` are the set text ``f(i)[c]``."""

    def call(self, uf: str, args: tuple[Expr, ...]) -> str:
        """A UF read as set text."""
        texts = [self.expr(a) for a in args]
        if uf in self.tuple_valued:
            return f"{uf}({', '.join(texts[:-1])})[{texts[-1]}]"
        return f"{uf}({', '.join(texts)})"

    def expr(self, e: Expr) -> str:
        if isinstance(e, Int):
            return str(e.value)
        if isinstance(e, Var):
            return e.name
        if isinstance(e, UFRead):
            return self.call(e.uf, e.args)
        a = [self.expr(x) for x in e.args]
        if e.op == "neg":
            return f"-({a[0]})"
        if e.op in ("+", "-", "*"):
            return f"({a[0]}) {e.op} ({a[1]})"
        if e.op in ("floord", "/"):
            return f"floor(({a[0]})/({a[1]}))"
        if e.op == "%":
            return f"({a[0]}) % ({a[1]})"
        if e.op in ("min", "max"):
            m = self._fresh()
            op = "<=" if e.op == "min" else ">="
            self.conds.append(
                f"(({m} = {a[0]} && {a[0]} {op} {a[1]}) || ({m} = {a[1]} && {a[1]} {op} {a[0]}))"
            )
            return m
        if e.op == "select":
            m = self._fresh()
            c = self.cond(e.args[0])
            nc = self.cond(e.args[0], negate=True)
            self.conds.append(f"(({c} && {m} = {a[1]}) || ({nc} && {m} = {a[2]}))")
            return m
        return f"({self.cond(e)})"

    def cond(self, e: Expr, negate: bool = False) -> str:
        if isinstance(e, Op) and e.op in ("&&", "||"):
            op = {"&&": "||", "||": "&&"}[e.op] if negate else e.op
            return f"(({self.cond(e.args[0], negate)}) {op} ({self.cond(e.args[1], negate)}))"
        if isinstance(e, Op) and e.op in _NEG:
            op = _NEG[e.op] if negate else e.op
            split = _split_bound(e.args[0], op, e.args[1])
            if split is not None:
                join, parts = split
                return f" {join} ".join(f"({self.cond(part)})" for part in parts)
            left, right = self.expr(e.args[0]), self.expr(e.args[1])
            return f"{left} {'=' if op == '==' else op} {right}"
        raise CodegenError(f"spf bug: cannot verify the condition {e}")

    def _fresh(self) -> str:
        name = f"{self.prefix}{len(self.aux)}"
        self.aux.append(name)
        return name


def _split_bound(left: Expr, op: str, right: Expr) -> tuple[str, tuple[Op, ...]] | None:
    """``left op right`` with a ``min``/``max`` side as a conjunction or disjunction of the
    comparisons with its arguments (``x <= min(a, b)``: ``x <= a && x <= b``), so loop
    bounds need no auxiliary variable (each one is a disjunction, and the subset tests of
    :func:`verify` grow exponentially with them: skewed tiles have many)."""
    if op not in ("<", "<=", ">", ">="):
        return None
    below = op in ("<", "<=")
    for side, other, on_right in ((right, left, True), (left, right, False)):
        if isinstance(side, Op) and side.op in ("min", "max"):
            # x < min(a, b), x > max(a, b), min(a, b) > x, max(a, b) < x: all arguments
            every = (side.op == "min") == (below == on_right)
            parts = tuple(Op(op, (other, arg) if on_right else (arg, other)) for arg in side.args)
            return ("&&" if every else "||"), parts
    return None


def _sites(n: Node, names: tuple[str, ...], conds: tuple[str, ...], text: _Text) -> Iterator[_Site]:
    if isinstance(n, Block):
        for item in n.items:
            yield from _sites(item, names, conds, text)
    elif isinstance(n, For):
        a0, c0 = len(text.aux), len(text.conds)
        c = [text.cond(Op(">=", (Var(n.var), n.init))), text.cond(n.cond)]
        if n.step != 1:
            c.append(f"({n.var} - ({text.expr(n.init)})) % {n.step} = 0")
        c += text.conds[c0:]
        new = (*names, n.var, *text.aux[a0:])
        yield from _sites(n.body, new, (*conds, *c), text)
    elif isinstance(n, If):
        a0, c0 = len(text.aux), len(text.conds)
        c = [text.cond(n.cond)]
        yield from _sites(n.then, (*names, *text.aux[a0:]), (*conds, *c, *text.conds[c0:]), text)
        if n.orelse is not None:
            a0, c0 = len(text.aux), len(text.conds)
            c = [text.cond(n.cond, negate=True)]
            yield from _sites(
                n.orelse, (*names, *text.aux[a0:]), (*conds, *c, *text.conds[c0:]), text
            )
    elif isinstance(n, Bind):
        value = text.call(n.uf, n.args)
        yield from _sites(n.body, (*names, n.var), (*conds, f"{n.var} = {value}"), text)
    elif isinstance(n, Call):
        yield _Site(n.stmt, names, conds, n.args)


def verify(comp: Computation, body: Node) -> None:
    """Raise ``CodegenError`` unless every statement's domain is executed exactly once; the
    error names the scheduling command to blame (the latest one applied to the statement)."""
    with isl_budget(f"verifying the loops of {comp.name}"):
        try:
            _verify(comp, body)
        except _UnverifiedError as err:
            raise CodegenError(_blamed(comp, err)) from None


class _UnverifiedError(Exception):
    """The loops of ``stmt`` do not provably execute its domain exactly once."""

    def __init__(self, stmt: str, why: str) -> None:
        super().__init__(why)
        self.stmt = stmt
        self.why = why


def _blamed(comp: Computation, err: _UnverifiedError) -> str:
    """The message: the command to blame first, what the self-check found last."""
    from spf.schedule.trace import culprit

    found = f"the self-check found: {err.why}"
    entry = culprit(comp, [err.stmt])
    if entry is None:
        return (
            f"scanner bug: the loops generated for statement {err.stmt} (its schedule as "
            f"added, no scheduling command) do not provably run its domain exactly once; "
            f"report it to spf's maintainers; {found}"
        )
    return (
        f"scanner bug: the loops generated for statement {err.stmt} do not provably run its "
        f"domain exactly once, caused by {entry.as_python()} (the latest scheduling command "
        f"on {err.stmt}); split or tile alike the statements that share its outer loops, or "
        "order them apart first (after, fuse), and report the schedule (comp.trace) to spf's "
        f"maintainers; {found}"
    )


def _verify(comp: Computation, body: Node) -> None:
    from spf.analysis.bounds import call_context
    from spf.analysis.preconditions import parameter_text

    context = call_context(comp)
    where = None if context is None else parameter_text(context)
    executed: dict[str, list[Set]] = {s.name: [] for s in comp.stmts}
    ufs = comp.ufs
    tuple_valued = frozenset(n for n, u in ufs.items() if u.out_arity > 1)
    for site in _sites(body, (), (), _Text(tuple_valued=tuple_valued)):
        text = _Text("_a", tuple_valued)
        args = [text.expr(a) for a in site.args]
        names = [*site.names, *text.aux]
        conds = [*site.conds, *text.conds]
        outs = [f"_x{k}" for k in range(len(args))]
        path = Set(f"{{[{', '.join(names)}] : {' && '.join(conds) or 'true'}}}", ufs=ufs)
        rel = Relation(
            f"{{[{', '.join(names)}] -> [{', '.join(outs)}] : "
            f"{' && '.join(f'{o} = {a}' for o, a in zip(outs, args, strict=True)) or 'true'}}}",
            ufs=ufs,
        )
        executed[site.stmt].append(rel.apply(path))
    for stmt in comp.stmts:
        domain = _within(stmt.domain, where)
        _check(stmt.name, domain, [_within(p, where) for p in executed[stmt.name]])


def _within(s: Set, context: str | None) -> Set:
    """``s`` where the parameters satisfy ``context`` (constraint text; None: anywhere)."""
    if context is None:
        return s
    names = ", ".join(f"_p{k}" for k in range(s.arity))
    return s.intersect(Set(f"{{[{names}] : {context}}}"))


def _check(name: str, domain: Set, pieces: list[Set]) -> None:
    if not pieces:
        if not domain.is_empty():
            raise _UnverifiedError(name, f"statement {name} is never executed")
        return
    for a in range(len(pieces)):
        for b in range(a + 1, len(pieces)):
            if not pieces[a].intersect(pieces[b]).is_empty():
                raise _UnverifiedError(name, f"statement {name} is executed twice")
    total = pieces[0]
    for p in pieces[1:]:
        total = total.union(p)
    total = (
        Set(f"{{[{', '.join(domain.tuple_vars)}]}}").intersect(total) if _named(domain) else total
    )
    if not _subset(total, domain) or not _subset(domain, total):
        raise _UnverifiedError(
            name, f"the loops execute {total} for statement {name}, whose domain is {domain}"
        )


def _named(domain: Set) -> bool:
    return all(v.isidentifier() for v in domain.tuple_vars)


def _subset(a: Set, b: Set) -> bool:
    """``a`` within ``b`` (hidden variables in ``b`` are checked through ``a``'s points)."""
    if a.is_subset(b):
        return True
    return a == b

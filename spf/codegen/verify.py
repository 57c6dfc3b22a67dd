"""The implemented-domain check (loopy's idea): prove that the scanned loops execute each
statement's domain exactly once.

A path to a statement call (its loops, guards and ``v = uf(args)`` bindings) and the call's
iterator values ``F(x)`` are checked without projecting the loop variables ``x`` away: a UF
argument over loops that a projection has to eliminate (``rowptr(3*i0 + i1 + 1)`` where
``i = 3*i0 + i1``) would be left over existential variables, about which nothing follows.
Instead, the statement's schedule ``S`` names the loop point of each instance ``d``:

1. every point ``x`` of a path calls the instance whose time it is: each loop at position
   ``p`` has ``x = S_p(F(x)) - c_p`` (a subset test over ``[x, d]`` with ``d = F(x)``: no
   variable is eliminated), so a call site runs an instance ``d`` at most once, at
   ``x = S(d) - c``. The shift ``c_p`` is 0 but in a loop of step ``s > 1``, where it is a
   constant ``0 <= c_p < s``: isl scans statements that take turns in a loop's iterations
   (``S_p = 3k``, ``3k + 1``, ``3k + 2``) by one loop of step 3 that calls ``s1(i)``,
   ``s2(i + 1)``, ``s3(i + 2)`` (a "shifted stride", which keeps the order); the shift a
   path has is read off its points (:func:`_shifts`) and then proved like the rest;
2. hence it runs exactly ``Q = {d : S(d) - c passes the path, F(S(d) - c) = d}``: the path
   with the loop variables replaced by the schedule's expressions (``i0 = floor(i/3)``), a
   set over the statement's iterators whose UF arguments are expressions of them;
3. the ``Q`` of a statement's call sites are pairwise disjoint, and their union equals its
   domain.

Each binding ``v = uf(args)`` must also read inside the UF's declared domain wherever the
loops reach it: spf's sets treat a call outside the domain as no instance at all, so step 3
cannot see a read there (``rowptr(N + 1)`` in an iteration where only another statement
runs), though it reads past the end of the array.

The check runs on UF-aware sets, so it covers the UF bindings too; a failure is a
``CodegenError`` (a scanner bug) that names the scheduling command to blame.

Only parameter values a kernel can be called with count (:func:`spf.analysis.bounds.
call_context`: no array extent is negative, the parameter assumptions hold): the loops isl
builds may take a bound from another statement's array (``k0 < NNZ/2`` where a tile of
``L(k)`` runs), which is exact only for the extents a call can pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import islpy as isl

from spf.analysis.bounds import values_in_ranges
from spf.analysis.dependences import padded
from spf.codegen.budget import isl_budget
from spf.codegen.loop_ast import (
    Alloc,
    Bind,
    Block,
    Call,
    Expr,
    For,
    If,
    Int,
    Node,
    Op,
    UFRead,
    Var,
    expr_vars,
)
from spf.errors import CodegenError
from spf.sets import Set
from spf.sets.emptiness import declared_facts
from spf.sets.memo import Table

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import ParsedStmt
    from spf.sets import UF

_NEG = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


class _Text:
    """Loop-AST expressions as set text; min/max/select become auxiliary variables."""

    def __init__(self, prefix: str = "_m", tuple_valued: frozenset[str] = frozenset()) -> None:
        self.prefix = prefix
        self.aux: list[str] = []
        self.conds: list[str] = []
        self.values: dict[str, str] = {}
        """Text of a variable's value where it is not a variable of the set (a bound UF
        value, a loop variable given by the schedule)."""
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
            return self.values.get(e.name, e.name)
        if isinstance(e, UFRead):
            return self.call(e.uf, e.args)
        a = [self.expr(x) for x in e.args]
        o = [self._operand(x, t) for x, t in zip(e.args, a, strict=True)]
        if e.op == "neg":
            return f"-{o[0]}"
        if e.op in ("+", "-", "*"):
            return f"{o[0]} {e.op} {o[1]}"
        if e.op in ("floord", "/"):
            return f"floor({o[0]}/{o[1]})"
        if e.op == "%":
            return f"{o[0]} % {o[1]}"
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

    def _operand(self, e: Expr, text: str) -> str:
        """``text`` (of ``e``) as an operand: in parentheses unless it is a name, a call or
        a non-negative integer (the parser's time grows with the tokens). A variable's
        text is one too: its name, a call (a bound value) or in parentheses (a loop's
        value from the schedule, :func:`_render`)."""
        atomic = isinstance(e, (Var, UFRead)) or (isinstance(e, Int) and e.value >= 0)
        return text if atomic else f"({text})"

    def cond(self, e: Expr, negate: bool = False) -> str:
        if isinstance(e, Int):  # a folded condition (the scanner's ``i == i``)
            return "0 = 0" if (e.value != 0) != negate else "1 = 0"
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


@dataclass(frozen=True)
class _Guard:
    cond: Expr
    negate: bool


_Step = For | Bind | _Guard
"""What a path to a call passes: a loop (its body), a binding, a guard (or its else)."""


@dataclass(frozen=True)
class _Site:
    stmt: str
    steps: tuple[_Step, ...]
    args: tuple[Expr, ...]

    @property
    def loops(self) -> tuple[For, ...]:
        return tuple(s for s in self.steps if isinstance(s, For))


def _sites(n: Node, steps: tuple[_Step, ...] = ()) -> Iterator[_Site]:
    """The calls under ``n``, and a site ``("", steps, args)`` for each binding (its read of
    ``uf(args)`` happens after ``steps``)."""
    if isinstance(n, Block):
        for item in n.items:
            yield from _sites(item, steps)
    elif isinstance(n, (For, Bind)):
        if isinstance(n, Bind):
            yield _Site("", (*steps, n), n.args)
        yield from _sites(n.body, (*steps, n))
    elif isinstance(n, If):
        yield from _sites(n.then, (*steps, _Guard(n.cond, False)))
        if n.orelse is not None:
            yield from _sites(n.orelse, (*steps, _Guard(n.cond, True)))
    elif isinstance(n, Alloc):  # a buffer's scope (placed after the self-check runs)
        yield from _sites(n.body, steps)
    elif isinstance(n, Call):
        yield _Site(n.stmt, steps, n.args)


@dataclass(frozen=True)
class _Path:
    names: tuple[str, ...]
    """The loop variables (empty where the schedule gives their values)."""
    aux: tuple[str, ...]
    """Auxiliary variables (``min``, ``max`` and ``select`` values)."""
    conds: tuple[str, ...]
    args: tuple[str, ...]
    """The call's iterator values."""


def _render(
    site: _Site,
    ufs: Mapping[str, UF],
    times: Mapping[int, str] | None = None,
    its: Sequence[str] = (),
) -> _Path:
    """``site`` as constraint text over its loop variables, or with ``times`` (position ->
    text) over what those give the loop variables; bound UF values are their calls, but
    where ``its`` names the call's iterators, a value the call passes as an iterator is
    that iterator (``_d3``, with ``_d3 = order_i(_d2)``: the same set, whose calls then
    read ``diag(_d3)`` as the statement's domain does, which makes comparing the two far
    cheaper than through ``diag(order_i(_d2))``)."""
    text = _Text(tuple_valued=frozenset(n for n, u in ufs.items() if u.out_arity > 1))
    names: list[str] = []
    conds: list[str] = []
    passed: dict[str, str] = {}  # a bound value passed as an iterator -> that iterator
    for it, arg in zip(its, site.args, strict=False):  # no its: none
        if isinstance(arg, Var):
            passed.setdefault(arg.name, it)
    for step in site.steps:
        if isinstance(step, For):
            if times is None:
                names.append(step.var)
            else:
                text.values[step.var] = f"({times[step.position]})"
            conds += [text.cond(Op(">=", (Var(step.var), step.init))), text.cond(step.cond)]
            if step.step != 1:
                var, init = text.expr(Var(step.var)), text.expr(step.init)
                conds.append(f"({var} - ({init})) % {step.step} = 0")
        elif isinstance(step, Bind):
            value = text.call(step.uf, step.args)
            if step.var in passed:
                conds.append(f"{passed[step.var]} = {value}")
                value = passed[step.var]
            text.values[step.var] = value
        else:
            conds.append(text.cond(step.cond, negate=step.negate))
    args = tuple(text.expr(a) for a in site.args)
    return _Path(tuple(names), tuple(text.aux), (*conds, *text.conds), args)


def verify(ir: ComputationIR, body: Node) -> None:
    """Raise ``CodegenError`` unless the loops ``body`` run every statement's domain of
    ``ir`` exactly once; the error names the scheduling command to blame (the latest one
    applied to the statement)."""
    with isl_budget(f"verifying the loops of {ir.name}"):
        try:
            _verify(ir, body)
        except _UnverifiedError as err:
            raise CodegenError(_blamed(ir, err)) from None


class _UnverifiedError(Exception):
    """The loops of ``stmt`` do not provably execute its domain exactly once."""

    def __init__(self, stmt: str, why: str) -> None:
        super().__init__(why)
        self.stmt = stmt
        self.why = why


def _blamed(ir: ComputationIR, err: _UnverifiedError) -> str:
    """The message: the command to blame first, what the self-check found last."""
    from spf.schedule.trace import culprit_in

    found = f"the self-check found: {err.why}"
    uncovered = _unscheduled(ir, err.stmt)
    if uncovered is not None:
        return (
            f"the schedule of statement {err.stmt} gives no time to part of its domain: it "
            f"maps {uncovered} (a schedule must map every instance of the domain: comp.stmt("
            f"{err.stmt!r}).set_schedule(...) with a relation defined on the whole domain, or "
            f"restrict the domain instead); {found}"
        )
    entry = culprit_in(ir.trace, [err.stmt])
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


def _verify(ir: ComputationIR, body: Node) -> None:
    from spf.analysis.bounds import call_context
    from spf.analysis.preconditions import parameter_text

    context = call_context(ir)
    given = () if context is None else (parameter_text(context),)
    found = list(_sites(body))
    calls = [site for site in found if site.stmt]
    for site in found:
        if not site.stmt:
            _check_read(ir, site, calls, given)
    width = ir.schedule_width
    for stmt in ir.parsed_stmts:
        mine = [site for site in calls if site.stmt == stmt.name]
        _check_statement(stmt, mine, width, given)


def _check_read(ir: ComputationIR, site: _Site, calls: list[_Site], given: tuple[str, ...]) -> None:
    """A binding reads its UF inside the UF's declared domain wherever the loops reach it.
    Where its arguments use other UF values (``scol(cs(ch) + 4*w + r)``), being inside may
    follow from facts about those values that nobody declared; such a read is also allowed
    where a statement whose domain calls the UF runs (whether it is in bounds is then that
    statement's bounds question, :mod:`spf.analysis.bounds`), not where none does."""
    bind = site.steps[-1]
    assert isinstance(bind, Bind)
    ufs = ir.uf_decls
    decl = ufs.get(bind.uf)
    if decl is None or decl.domain is None:
        return
    before = site.steps[:-1]
    args = bind.args[: decl.arity]  # a tuple-valued UF's read f(i)[c] ends with c
    path = _render(replace(site, steps=before, args=args), ufs)
    xs = [*path.names, *path.aux]
    at = [f"_a{k}" for k in range(len(path.args))]
    names = ", ".join([*xs, *at])
    values = [f"{a} = {v}" for a, v in zip(at, path.args, strict=True)]
    if _read_inside_by_bounds(path, at, values, given, decl.domain, ufs):
        return
    reads = Set(f"{{[{names}] : {_conj([*path.conds, *values, *given])}}}", ufs)
    allowed = Set(f"{{[{', '.join(xs)}]}}").product(
        Set(f"{{[{', '.join(at)}]}}").intersect(decl.domain)
    )
    if _subset(reads, allowed):
        return
    bound = {step.var for step in before if isinstance(step, Bind)}
    if any(set(expr_vars(a)) & bound for a in args):
        needing = {s.name for s in ir.parsed_stmts if bind.uf in s.domain.inferred_ufs}
        for call in calls:
            if (
                call.stmt in needing
                and _below(call.steps, site.steps)
                and _uses_value(call, len(site.steps), bind.var)
            ):
                allowed = allowed.union(_reached(call, len(site.steps), names, ufs))
        if _subset(reads, allowed):
            return
    users = [n.stmt for n in _calls_in(bind.body)] or [ir.parsed_stmts[0].name]
    raise _UnverifiedError(
        users[0],
        f"the loops read {bind.uf}({', '.join(path.args)}) outside the UF's domain "
        f"{decl.domain}: at {reads}",
    )


def _uses_value(call: _Site, start: int, var: str) -> bool:
    """Whether the path to ``call`` from step ``start`` on, or the call itself, uses the
    bound value ``var``: only such a call's statement answers for the read's bounds (a
    statement that calls the same UF elsewhere, ``f(i)`` below a read of ``f(i + f(i))``,
    says nothing of where that read lies)."""
    exprs: list[Expr] = list(call.args)
    for step in call.steps[start:]:
        if isinstance(step, For):
            exprs += [step.init, step.cond]
        elif isinstance(step, Bind):
            exprs += list(step.args)
        else:
            exprs.append(step.cond)
    return any(var in set(expr_vars(e)) for e in exprs)


def _calls_in(n: Node) -> Iterator[Call]:
    for site in _sites(n):
        if site.stmt:
            yield Call(site.stmt, site.args)


def _below(steps: tuple[_Step, ...], prefix: tuple[_Step, ...]) -> bool:
    """Whether a path with ``steps`` passes the steps ``prefix`` (the same nodes)."""
    return len(steps) > len(prefix) and all(a is b for a, b in zip(steps, prefix, strict=False))


def _reached(call: _Site, start: int, names: str, ufs: Mapping[str, UF]) -> Set:
    """Where the path to ``call`` passes from step ``start`` on (a set over the variables
    before it, then the read's arguments, unconstrained): an over-approximation that leaves
    out the loops after that step and what depends on their variables."""
    deeper: set[str] = set()
    kept = list(call.steps[:start])
    for step in call.steps[start:]:
        if isinstance(step, For):
            deeper.add(step.var)
            continue
        exprs = step.args if isinstance(step, Bind) else (step.cond,)
        if any(set(expr_vars(e)) & deeper for e in exprs):
            if isinstance(step, Bind):
                deeper.add(step.var)
            continue
        kept.append(step)
    prefix = _render(_Site("", call.steps[:start], ()), ufs)
    path = _render(_Site("", tuple(kept), ()), ufs)
    extra = path.aux[len(prefix.aux) :]
    body = _conj(list(path.conds))
    if extra:
        body = f"exists({', '.join(extra)}: {body})"
    return Set(f"{{[{names}] : {body}}}", ufs)


def _check_statement(
    stmt: ParsedStmt, sites: list[_Site], width: int, given: tuple[str, ...]
) -> None:
    name, ufs = stmt.name, stmt.domain.ufs
    its = tuple(f"_d{k}" for k in range(stmt.domain.arity))
    domain = Set(f"{{[{', '.join(its)}] : {_conj(given)}}}").intersect(stmt.domain)
    if not sites:
        if not domain.is_empty():
            raise _UnverifiedError(name, f"statement {name} is never executed")
        return
    times = padded(stmt, width).as_function(its)
    if times is None:
        raise _UnverifiedError(
            name, f"the schedule {stmt.schedule} of {name} is not a function of its iterators"
        )
    runs = []
    for site in sites:
        at = _check_points(name, site, its, times, ufs, given)
        runs.append(_instances(site, its, at, ufs, given))
    for a in range(len(runs)):
        for b in range(a + 1, len(runs)):
            if not runs[a].intersect(runs[b]).is_empty():
                raise _UnverifiedError(name, f"statement {name} is executed twice")
    total = runs[0].union_all(runs[1:])
    if not _subset(total, domain) or not _subset(domain, total):
        raise _UnverifiedError(
            name, f"the loops execute {total} for statement {name}, whose domain is {domain}"
        )


def _check_points(
    name: str,
    site: _Site,
    its: tuple[str, ...],
    times: Sequence[str],
    ufs: Mapping[str, UF],
    given: tuple[str, ...],
) -> dict[int, str]:
    """Step 1 of the module text: each point of the path runs its instance at the time the
    schedule gives it (less the shift of a strided loop); the loop values that proves (loop
    position -> text over the iterators ``its``)."""
    path = _render(site, ufs)
    if not any(loop.step != 1 for loop in site.loops) and _times_by_construction(
        site, path, its, times
    ):
        return {loop.position: f"({times[loop.position]}) - 0" for loop in site.loops}
    both = ", ".join([*path.names, *path.aux, *its])
    calls = [f"{d} = {a}" for d, a in zip(its, path.args, strict=True)]
    conds = [*path.conds, *calls, *given]
    runs = Set(f"{{[{both}] : {_conj(conds)}}}", ufs)
    shifts = _shifts(site.loops, times, both, conds, ufs)
    at = {
        loop.position: f"({times[loop.position]}) - {shift}"
        for loop, shift in zip(site.loops, shifts, strict=True)
    }
    scheduled = Set(
        f"{{[{both}] : {_conj([f'{v.var} = {at[v.position]}' for v in site.loops])}}}", ufs
    )
    if not _subset(runs, scheduled):
        raise _UnverifiedError(
            name,
            f"a call of {name} runs {runs} (loop variables, then the instance), not at the "
            f"times its schedule gives: {scheduled}",
        )
    return at


_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_WORD = re.compile(r"[A-Za-z_]\w*")


def _calls_uf(text: str) -> bool:
    """Whether set text ``text`` calls a UF (``floor`` is isl's own)."""
    return any(m.group(1) != "floor" for m in _CALL.finditer(text))


def _uf_free_set(names: Sequence[str], conds: Sequence[str]) -> isl.Set:
    """``{[names] : conds}`` as a plain isl set, every other word of ``conds`` a parameter
    (``conds`` call no UF); isl.Error where isl does not read the text. Remembered by the
    names and conditions: the paths of one kernel's self-check ask for the same sets again
    (a cold SpTRSV wavefront's 85 asks are 27 sets)."""
    key = (tuple(names), tuple(conds))
    found = _UF_FREE_SETS.get(key)
    if found is None:
        words = {w for c in conds for w in _WORD.findall(c)}
        params = ", ".join(sorted(words - {*names, "floor"}))
        text = f"[{params}] -> {{ [{', '.join(names)}] : {' and '.join(conds) or 'true'} }}"
        found = _UF_FREE_SETS.put(key, isl.Set(text))
    return found


_UF_FREE_SETS: Table[tuple[tuple[str, ...], tuple[str, ...]], isl.Set] = Table(4096)


def _times_by_construction(
    site: _Site, path: _Path, its: tuple[str, ...], times: Sequence[str]
) -> bool:
    """Whether step 1 holds whatever the path's conditions are: the call's iterators
    ``F(x)`` and the schedule ``S`` are affine without UFs and ``S(F(x)) = x`` at every
    loop for all values (a subset test of two small isl sets over ``[x, d]`` with no
    condition of the path). That is the scanner's own construction (a call's iterators
    invert the schedule) wherever no UF value stands in for a loop; anything else (a UF,
    a stride, text isl does not read) is left to the full test. Only the iterators the
    loops' times read take part: ``S`` does not depend on the others, so their values
    (``_d3 = order_i(i_pos)`` in a wavefront executor, a UF's) cannot change the test."""
    loop_times = [times[loop.position] for loop in site.loops]
    used = {w for t in loop_times for w in _WORD.findall(t)}
    read = [(d, a) for d, a in zip(its, path.args, strict=True) if d in used]
    if any(_calls_uf(t) for t in [*loop_times, *(a for _, a in read)]):
        return False
    names = [*path.names, *path.aux, *its]
    calls = [f"{d} = {a}" for d, a in read]
    at = [f"{loop.var} = {times[loop.position]}" for loop in site.loops]
    try:
        called, scheduled = _uf_free_set(names, calls), _uf_free_set(names, at)
        called = called.align_params(scheduled.get_space())
        return bool(called.is_subset(scheduled.align_params(called.get_space())))
    except isl.Error:
        return False


def _read_inside_by_bounds(
    path: _Path,
    at: Sequence[str],
    values: Sequence[str],
    given: Sequence[str],
    domain: Set,
    ufs: Mapping[str, UF],
) -> bool:
    """Whether a binding's read ``uf(path.args)`` lies in the UF's ``domain`` by the
    path's conditions with each UF call a variable within the UF's declared range whose
    arguments lie within its declared domain (:func:`_calls_as_variables`: what spf's sets
    know of any call, as the full test's sets do; ``0 <= i < N`` for ``rowptr(i + 1)``,
    ``levelptr(l) <= p < levelptr(l + 1)`` for ``partptr(p + 1)`` where ``levelptr``'s
    values lie in ``0 .. nparts``), a plain isl subset test; a superset of the reads
    inside means the reads are. False (the full test decides) where the domain calls a
    UF, a call or a declaration is not one this test reads, or isl does not read the
    text."""
    if domain.uf_calls:
        return False
    abstract = _calls_as_variables([*path.conds, *given, *values], ufs)
    if abstract is None:
        return False
    conds, variables = abstract
    names = [*path.names, *path.aux, *variables, *at]
    try:
        reads = _uf_free_set(names, conds)
        reads = reads.project_out(isl.dim_type.set, 0, len(names) - len(at))
        inside = domain.body_iset().reset_tuple_id()
        if inside.dim(isl.dim_type.set) != len(at):  # hidden variables: the full test
            return False
        reads = reads.reset_tuple_id().align_params(inside.get_space())
        return bool(reads.is_subset(inside.align_params(reads.get_space())))
    except isl.Error:
        return False


def _calls_as_variables(
    texts: Sequence[str], ufs: Mapping[str, UF]
) -> tuple[list[str], list[str]] | None:
    """``texts`` with each UF call (innermost first, one variable per distinct call) a
    variable ``_cv<k>``, followed by what the UFs' declarations say of those variables: the
    value within the declared range, the arguments within the declared domain; and the
    variables. None where a call is of an undeclared or tuple-valued UF, or a range or a
    domain is not plain constraints over its tuple (:func:`_declared_conds`)."""
    if any("_cv" in t for t in texts):  # a name of the texts' own could meet a variable's
        return None
    if any("||" in t and _calls_uf(t) for t in texts):  # a call in a disjunct may not be
        return None  # read (its domain not assumed): the full test decides
    calls: dict[tuple[str, str], str] = {}
    out = []
    for text in texts:
        plain = _without_calls(text, ufs, calls)
        if plain is None:
            return None
        out.append(plain)
    for (uf, args), var in calls.items():
        decl = ufs[uf]
        for s, vals in ((decl.range, [var]), (decl.domain, _split_args(args))):
            found = _declared_conds(s, vals)
            if found is None:
                return None
            out += found
    return out, list(calls.values())


def _without_calls(
    text: str, ufs: Mapping[str, UF], calls: dict[tuple[str, str], str]
) -> str | None:
    """``text`` with each call of a UF of ``ufs`` replaced by its variable in ``calls`` (a
    new one for a call not there yet); None where a call is of another function (but
    ``floor``), of a tuple-valued UF, or its parentheses do not close."""
    out: list[str] = []
    start = 0
    while (m := _CALL.search(text, start)) is not None:
        name = m.group(1)
        if name == "floor":
            out.append(text[start : m.end()])
            start = m.end()
            continue
        decl = ufs.get(name)
        close = _closing(text, m.end())
        if decl is None or decl.out_arity != 1 or close is None:
            return None
        inner = _without_calls(text[m.end() : close], ufs, calls)
        if inner is None:
            return None
        var = calls.setdefault((name, inner), f"_cv{len(calls)}")
        out += [text[start : m.start()], var]
        start = close + 1
    out.append(text[start:])
    return "".join(out)


def _closing(text: str, start: int) -> int | None:
    """The index of the ``)`` that closes the one opened just before ``start``."""
    depth = 1
    for k in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            return k
    return None


def _split_args(text: str) -> list[str]:
    """A call's argument text split at its top-level commas."""
    parts, depth, begin = [], 0, 0
    for k, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[begin:k].strip())
            begin = k + 1
    parts.append(text[begin:].strip())
    return parts


_DECLARED = re.compile(r"^\{\[([^\]]*)\](?: : (.*))?\}$")
_PLAIN = re.compile(r"^[\w\s+\-*()<>=&|]*$")


def _declared_conds(s: Set | None, values: Sequence[str]) -> list[str] | None:
    """The constraints of a UF's declared range or domain ``s`` (None: none) on
    ``values`` (texts, one per tuple position): its printed constraints with each tuple
    name replaced by its value. None where ``s`` calls a UF, has hidden variables or
    positions that are not names, another arity, or text beyond linear comparisons."""
    if s is None:
        return []
    m = _DECLARED.match(str(s))
    if s.uf_calls or m is None or (m.group(2) is not None and not _PLAIN.match(m.group(2))):
        return None
    names = [n.strip() for n in m.group(1).split(",")] if m.group(1).strip() else []
    if len(names) != len(values) or not all(n.isidentifier() for n in names):
        return None
    if m.group(2) is None:
        return []
    by_name = dict(zip(names, values, strict=True))
    return [
        re.sub(
            r"\b[A-Za-z_]\w*\b",
            lambda w: f"({by_name[w.group()]})" if w.group() in by_name else w.group(),
            m.group(2),
        )
    ]


def _shifts(
    loops: tuple[For, ...],
    times: Sequence[str],
    both: str,
    conds: list[str],
    ufs: Mapping[str, UF],
) -> list[int]:
    """The shift ``S_p(d) - x_p`` of each loop where a path has one (module text, step 1): 0
    in a loop of step 1, else the one value the path's points give it if that is within
    ``0 .. step - 1``, else 0. Only a candidate: the subset test proves it."""
    strided = [k for k, loop in enumerate(loops) if loop.step != 1]
    found = [0] * len(loops)
    if not strided:
        return found
    names = [f"_shift{k}" for k in strided]
    values = [f"_shift{k} = ({times[loops[k].position]}) - {loops[k].var}" for k in strided]
    points = Set(f"{{[{', '.join([*names, both])}] : {_conj([*conds, *values])}}}", ufs)
    iset = points.body_iset()
    iset = iset.project_out(isl.dim_type.param, 0, iset.dim(isl.dim_type.param))
    for n, k in enumerate(strided):
        one = iset.project_out(isl.dim_type.set, n + 1, iset.dim(isl.dim_type.set) - n - 1)
        one = one.project_out(isl.dim_type.set, 0, n)
        if one.is_empty() or not one.is_singleton():  # isl: the empty set is a singleton
            continue
        value = one.sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()
        if 0 <= value < loops[k].step:
            found[k] = value
    return found


def _instances(
    site: _Site,
    its: tuple[str, ...],
    at: Mapping[int, str],
    ufs: Mapping[str, UF],
    given: tuple[str, ...],
) -> Set:
    """Step 2 of the module text: the instances ``site`` runs (``at``: its loops' values)."""
    path = _render(site, ufs, at, its)
    calls = [f"{d} = {a}" for d, a in zip(its, path.args, strict=True) if d != a]
    body = _conj([*path.conds, *calls, *given])
    if path.aux:
        body = f"exists({', '.join(path.aux)}: {body})"
    return Set(f"{{[{', '.join(its)}] : {body}}}", ufs)


def _conj(conds: Sequence[str]) -> str:
    return " && ".join(conds) or "true"


def _subset(a: Set, b: Set) -> bool:
    """``a`` within ``b`` (hidden variables in ``b`` are checked through ``a``'s points).
    Two sufficient tests come first: the same set (structurally), and a plain isl subset
    test where both call the same UF terms (:func:`_same_calls_subset`); the UF-aware test
    decides the rest."""
    return a == b or _same_calls_subset(a, b) or a.is_subset(b)


def _same_calls_subset(a: Set, b: Set) -> bool:
    """Whether ``a``'s isl set, each UF call's value within its UF's declared range and its
    arguments within the declared domain (:func:`~spf.sets.emptiness.declared_facts`: a
    call outside the domain is no instance of spf's sets), lies in ``b``'s where both have
    the same hidden variables and the same UF calls (each call's value a dim of both, at
    the same place) or ``b`` has neither: a point of ``a`` with its witnesses and call
    values is then one of ``b``, whatever values the UFs take in their ranges (a
    statement's instances and its domain where the loops bound it by the domain's own
    calls: SpGEMM's row loop; a read inside its UF's domain; a wavefront executor's domain
    within its instances, ``_d1 < nparts_i`` from ``partptr_i(_d1 + 1)``'s domain: the
    UF-aware test took 10-25 ms for each). False leaves it to the UF-aware test, which
    also knows that equal arguments give equal values."""
    x, y = a._body, b._body
    if x.n_tuple != y.n_tuple:
        return False
    plain = not y.hidden and not y.terms
    if not plain and (len(x.hidden) != len(y.hidden) or x.terms != y.terms):
        return False
    try:
        # a call's declared domain holds where the call is read: in every point of one
        # conjunction, not in a disjunct that C's || or ?: never evaluates (where the
        # UF-aware test keeps the domain only in the pieces that use the call)
        if x.iset.n_basic_set() == 1:
            xs = declared_facts(x, a.ufs)
        else:
            xs = values_in_ranges(x.iset, len(x.names) + len(x.hidden), x.terms, a.ufs)
        ys = y.iset
        if plain:  # b's constraints hold whatever a's witnesses and call values are
            ys = ys.add_dims(isl.dim_type.set, xs.dim(isl.dim_type.set) - ys.dim(isl.dim_type.set))
        xs = xs.align_params(ys.get_space())
        return bool(xs.is_subset(ys.align_params(xs.get_space())))
    except isl.Error:
        return False


def _unscheduled(ir: ComputationIR, stmt: str) -> str | None:
    """``"<the schedule's domain> of <the domain>"`` when ``stmt``'s schedule leaves part
    of its domain unmapped, None when it maps all of it or that cannot be decided."""
    from spf.errors import SpfError
    from spf.ir.parsed import parsed

    s = next((x for x in ir.stmts if x.name == stmt), None)
    if s is None:
        return None
    try:
        domain = parsed(ir, s.domain, "set")
        sched = parsed(ir, s.current_schedule, "relation")
        timed = sched.domain()  # type: ignore[union-attr]
        if domain.is_subset(timed):  # type: ignore[arg-type]
            return None
        return f"{timed} of {domain}"
    except (SpfError, ValueError, TypeError):
        return None

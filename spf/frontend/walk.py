"""The function body as spf statements: one record per assignment with its loop variables,
its domain constraints (loop bounds, affine ``if`` conditions) and its 2d+1 schedule
(textual order and nesting); non-affine conditions stay in the statement source."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from spf.frontend.conds import Cmp, Cond, conj, domain_text, negate
from spf.frontend.cparse import INT_LITERALS, c_ast, c_integer, nodes
from spf.frontend.exprs import NotAffineError, Scope, Tree
from spf.frontend.increments import increment
from spf.frontend.induction import Inductions, State, fill_text, single_bound, substitute
from spf.frontend.narrow import narrow_counter
from spf.frontend.not_equal import as_ordered
from spf.frontend.pointers import PointerAlias, bind
from spf.frontend.rewrite import c_name, located
from spf.frontend.steps import symbolic_step

if TYPE_CHECKING:
    from spf.frontend.decls import Var

_UNSUPPORTED = {
    "While": ("while loops", "write the loop as a counted for loop"),
    "DoWhile": ("do-while loops", "write the loop as a counted for loop"),
    "Break": ("break", "express the early exit as a loop bound or an if condition"),
    "Continue": ("continue", "guard the rest of the body with an if instead"),
    "Goto": ("goto", "use structured loops"),
    "Label": ("labels", "use structured loops"),
    "Return": ("return inside the loops", "only a final 'return;' is allowed"),
    "FuncCall": ("a call statement (it may have side effects)", "inline the callee's loops"),
    "StaticAssert": ("_Static_assert", "remove it"),
}
_ASSIGN = ("=", "+=", "-=", "*=", "/=")
_MAX_INIT = 64
"""The most elements an initializer list of a local array gives (one statement each)."""


@dataclass(frozen=True)
class Record:
    """One statement: source text, loop variables, constraints and 2d+1 schedule entries."""

    source: str
    iters: tuple[str, ...]
    conds: tuple[Cond, ...]
    schedule: tuple[str, ...]
    node: Any
    down: frozenset[str] = frozenset()  # loops that run downward


@dataclass(frozen=True)
class _Ctx:
    iters: tuple[str, ...] = ()
    conds: tuple[Cond, ...] = ()
    prefix: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()  # non-affine conditions (source text), outermost first
    aliases: tuple[tuple[str, str], ...] = ()
    down: frozenset[str] = frozenset()
    pointers: tuple[tuple[str, PointerAlias], ...] = ()
    minmax: tuple[tuple[str, tuple[Tree, str]], ...] = ()
    ivs: tuple[tuple[str, State], ...] = ()  # closed forms of the induction variables


class Walker:
    """Turns the function body into :class:`Record` s (see the module docstring)."""

    def __init__(
        self, scope: Scope, written: dict[str, int], inductions: Inductions | None = None
    ) -> None:
        self.scope = scope
        self.inductions = inductions
        scope.inductions = inductions
        self.written = written  # assignments per scalar name (declaration inits excluded)
        self.records: list[Record] = []
        self.facts: list[tuple[str, Any]] = []  # preconditions the C implies (inc >= 1)

    def fail(self, node: Any, message: str, hint: str = "") -> Exception:
        return self.scope.fail(node, message, hint)

    def run(self, body: Any) -> list[Record]:
        items = list(body.block_items or []) if isinstance(body, c_ast.Compound) else [body]
        if items and isinstance(items[-1], c_ast.Return) and items[-1].expr is None:
            items = items[:-1]
        elif items and isinstance(items[-1], c_ast.Return):
            raise self.fail(
                items[-1],
                "the function returns a value, which a kernel does not return",
                "write the result into an array parameter (double out[1]; ... out[0] = s;) "
                "and make the function void",
            )
        unset = State(None, "is read before it is given a value")
        names = sorted(self.inductions.names) if self.inductions is not None else []
        self.block(items, _Ctx(ivs=tuple((n, unset) for n in names)), [0])
        return self.records

    def _scoped(self, ctx: _Ctx) -> Scope:
        s = self.scope
        s.iters = ctx.iters
        s.aliases = dict(ctx.aliases)
        s.pointers = dict(ctx.pointers)
        s.minmax = dict(ctx.minmax)
        s.ivs = dict(ctx.ivs)
        s.conds = domain_text(list(ctx.conds))
        return s

    def _bind(self, ctx: _Ctx, name: str, value: Any) -> _Ctx | None:
        """``ctx`` with integer local ``name`` bound to ``value`` when it is affine, or a
        min/max of affine values; else None."""
        s = self._scoped(ctx)
        try:
            return replace(ctx, aliases=(*ctx.aliases, (name, s.affine(value))))
        except NotAffineError:
            pass
        try:
            tree = s.tree(value)
        except NotAffineError:
            return None
        if isinstance(tree, str):
            return None
        return replace(ctx, minmax=(*ctx.minmax, (name, (tree, s.value(value)))))

    def block(self, items: list[Any], ctx: _Ctx, counter: list[int]) -> _Ctx:
        """Handle ``items``; returns the context at their end."""
        for item in items:
            ctx = self.item(item, ctx, counter)
        return ctx

    def item(self, node: Any, ctx: _Ctx, counter: list[int]) -> _Ctx:
        """Handle one block item; returns the context for the items after it (a declaration
        may bind an alias)."""
        kind = type(node).__name__
        if kind in _UNSUPPORTED:
            what, hint = _UNSUPPORTED[kind]
            if kind == "Return" and not ctx.iters:  # if (n <= 0) return; before the loops
                what = "an early return"
                hint = "guard the rest of the body with the opposite if instead"
            raise self.fail(node, f"{what} cannot be represented in spf", hint)
        if isinstance(node, c_ast.Compound):
            end = self.block(list(node.block_items or []), ctx, counter)
            return replace(ctx, ivs=end.ivs)  # its declarations end with it, not the values
        elif isinstance(node, c_ast.EmptyStatement | c_ast.Pragma):
            pass
        elif isinstance(node, c_ast.For):
            return self.loop(node, ctx, counter)
        elif isinstance(node, c_ast.If):
            return self.branch(node, ctx, counter)
        elif isinstance(node, c_ast.Decl):
            return self.decl(node, ctx, counter)
        elif isinstance(node, c_ast.DeclList):
            for d in node.decls:
                ctx = self.decl(d, ctx, counter)
        elif isinstance(node, c_ast.Assignment | c_ast.UnaryOp):
            return self._update(node, ctx, counter)
        else:
            raise self.fail(
                node,
                f"unsupported statement ({kind})",
                "spf imports for loops, if/else and assignments",
            )
        return ctx

    # ---------- statements ----------

    def _update(self, node: Any, ctx: _Ctx, counter: list[int]) -> _Ctx:
        """An assignment or increment: a new closed form of an induction variable, a
        pointer or integer bound to a place or value, or a statement."""
        stepped = self._induction(node, ctx)
        if stepped is not None:
            return stepped
        pointed = self._pointer(node, ctx)
        if pointed is not None:
            return replace(ctx, pointers=(*ctx.pointers, pointed))
        bound = self._alias(node, ctx)
        if bound is not None:
            return bound
        self.emit(self.assignment(node, ctx), ctx, counter, node)
        return ctx

    def _alias(self, node: Any, ctx: _Ctx) -> _Ctx | None:
        """The context after ``node`` when it is the only assignment ``j = e;`` of an integer
        local declared without a value and ``e`` is affine (``j = col[k];``) or a min/max of
        affine values: later uses in the block read ``e`` itself, so subscripts such as
        ``x[j]`` stay UF calls."""
        if not (isinstance(node, c_ast.Assignment) and node.op == "="):
            return None
        if not isinstance(node.lvalue, c_ast.ID) or isinstance(node.rvalue, c_ast.Assignment):
            return None
        name = node.lvalue.name
        var = self.scope.vars.get(name)
        if var is None or var.role != "local" or var.rank or var.base in ("double", "float"):
            return None
        if name in self.scope.iterators or self.written.get(name, 0) != 1:
            return None
        if getattr(var.node, "init", None) is not None:
            return None
        bound = self._bind(ctx, name, node.rvalue)
        if bound is not None:
            self.scope.bound_only.add(name)
        return bound

    def _induction(self, node: Any, ctx: _Ctx) -> _Ctx | None:
        """The context after an update ``k++``/``k += c``/``k = e`` of induction variable
        ``k`` (its new closed form); None when ``node`` updates none."""
        target = node.lvalue if isinstance(node, c_ast.Assignment) else node.expr
        states = dict(ctx.ivs)
        if self.inductions is None or not isinstance(target, c_ast.ID) or target.name not in states:
            return None
        name = target.name
        self._scoped(ctx)
        amount = increment(node, name)
        if amount is not None:
            states[name] = self.inductions.add(node, name, states, amount)
        else:
            states[name] = self.inductions.assign(node, name, states, node.rvalue)
        return replace(ctx, ivs=tuple(states.items()))

    def _pointer(self, node: Any, ctx: _Ctx) -> tuple[str, PointerAlias] | None:
        """``(name, alias)`` when ``node`` is the only assignment ``p = &a[k];`` of a local
        pointer declared without a value; a pointer that moves is refused."""
        target = node.lvalue if isinstance(node, c_ast.Assignment) else node.expr
        var = self.scope.vars.get(target.name) if isinstance(target, c_ast.ID) else None
        if var is None or not var.rank or var.role != "local":
            return None
        once = self.written.get(var.name, 0) == 1 and getattr(var.node, "init", None) is None
        if not (once and isinstance(node, c_ast.Assignment) and node.op == "="):
            raise self.fail(
                node,
                f"pointer {var.name!r} moves (pointer arithmetic)",
                "bind each pointer once (double *p = &a[k];) and subscript it, p[i]",
            )
        return var.name, bind(self._scoped(ctx), var.name, var.rank, node.rvalue)

    def emit(self, lines: list[str], ctx: _Ctx, counter: list[int], node: Any) -> None:
        for line in lines:
            source = line
            if ctx.guards:
                cond = (
                    " && ".join(f"({g})" for g in ctx.guards)
                    if len(ctx.guards) > 1
                    else ctx.guards[0]
                )
                source = f"if ({cond}) {{ {line} }}"
            sched = (*ctx.prefix, str(counter[0]))
            counter[0] += 1
            self.records.append(Record(source, ctx.iters, ctx.conds, sched, node, ctx.down))

    def assignment(self, node: Any, ctx: _Ctx) -> list[str]:
        """Source lines of an assignment (a chain ``a = b = e`` gives two)."""
        s = self._scoped(ctx)
        if isinstance(node, c_ast.UnaryOp):
            if node.op not in ("p++", "p--", "++", "--"):
                raise self.fail(node, "an expression statement without effect", "remove it")
            target = self.target(node.expr, ctx)
            return [f"{target} {'+' if '+' in node.op else '-'}= 1;"]
        if node.op not in _ASSIGN:
            raise self.fail(
                node, f"assignment operator '{node.op}' is not supported", "use =, +=, -=, *= or /="
            )
        target = self.target(node.lvalue, ctx)
        lines: list[str] = []
        rv = node.rvalue
        if isinstance(rv, c_ast.Assignment):
            if node.op != "=" or rv.op != "=":
                raise self.fail(rv, "a compound assignment inside a chain", "split the chain")
            lines = self.assignment(rv, ctx)
            value = self.target(rv.lvalue, ctx)
        else:
            value = s.value(rv)
        lines.append(f"{target} {node.op} {value};")
        return lines

    def target(self, node: Any, ctx: _Ctx) -> str:
        """Source text of an assigned location (a data array element or scalar)."""
        s = self._scoped(ctx)
        if isinstance(node, c_ast.ID):
            name = node.name
            if name in s.iterators:
                raise self.fail(
                    node,
                    f"loop variable {name!r} is assigned outside its for header",
                    "spf loops own their variables; use a separate variable",
                )
            var = s.vars.get(name)
            if name in s.consts or name in s.fconsts or (var and var.role == "param"):
                raise self.fail(
                    node,
                    f"parameter {name!r} is assigned",
                    "copy it into a local variable and assign that",
                )
            if name in dict(ctx.aliases):
                raise self.fail(node, f"{name!r} is assigned after its declaration")
            if name in dict(ctx.ivs):
                raise self.fail(
                    node,
                    f"induction variable {name!r} is updated under a condition; it has no "
                    "closed form",
                    "update it unconditionally, or compute the index from the loop counters",
                )
        elif isinstance(node, c_ast.ArrayRef):
            name, subs = s.chain(node)
            if not subs:  # *p with p = &t
                return self.target(located(c_ast.ID(name), node), ctx)
            if name in s.ufs:
                raise self.fail(
                    node,
                    f"write to {name!r}, an index array used as a UF (in a bound or subscript)",
                    "compute index arrays in a separate function (an inspector)",
                )
        else:
            raise self.fail(
                node,
                "only array elements and scalar variables may be assigned",
                "pointer arithmetic is not supported",
            )
        return s.value(node)

    def decl(self, node: Any, ctx: _Ctx, counter: list[int]) -> _Ctx:
        states = dict(ctx.ivs)
        if self.inductions is not None and node.name in states:
            self._scoped(ctx)
            states[node.name] = self.inductions.assign(node, node.name, states, node.init)
            return replace(ctx, ivs=tuple(states.items()))
        if node.init is None:
            return ctx
        var = self.scope.vars[node.name]
        if isinstance(node.init, c_ast.InitList):
            self.emit(self._init_list(node, var, ctx), ctx, counter, node)
            return ctx
        if var.rank:  # double *p = &a[k];
            alias = bind(self._scoped(ctx), node.name, var.rank, node.init)
            return replace(ctx, pointers=(*ctx.pointers, (node.name, alias)))
        if node.name in self.scope.iterators:
            return ctx  # a for-loop variable declared with its initial value outside the loop
        if var.base not in ("double", "float") and self.written.get(node.name, 0) == 0:
            bound = self._bind(ctx, node.name, node.init)
            if bound is not None:
                return bound
        s = self._scoped(ctx)
        self.emit([f"${node.name}$ = {s.value(node.init)};"], ctx, counter, node)
        return ctx

    def _init_list(self, node: Any, var: Var, ctx: _Ctx) -> list[str]:
        """``double w[3] = {0.25, 0.5, 0.25};`` (nested braces per dimension, or one flat
        list in row-major order): one assignment per element, the elements the list does
        not give set to 0 as C sets them."""
        refuse = f"initializer list for {node.name!r}"
        s = self._scoped(ctx)
        extents: list[int] = []
        for d in var.dims:
            try:
                text = s.affine(d) if d is not None else ""
            except NotAffineError:
                text = ""
            if not text.isdigit():
                raise self.fail(
                    node,
                    f"{refuse} of an extent that is not a number",
                    f"give the extent as a number ({var.base} {c_name(node.name)}[3] = {{...}}), "
                    "or assign the elements in a loop",
                )
            extents.append(int(text))
        total = math.prod(extents)
        if not var.rank or total > _MAX_INIT:
            raise self.fail(node, refuse, "assign the elements in a loop")
        given: dict[tuple[int, ...], Any] = {}
        flat = [e for e in node.init.exprs if not isinstance(e, c_ast.InitList)]
        if var.rank > 1 and len(flat) == len(node.init.exprs):  # {1, 2, 3, 4} for a[2][2]
            if len(flat) > total:
                raise self.fail(node, f"{refuse}: more values than the {total} elements")
            for k, e in enumerate(flat):
                given[tuple(_digits(k, extents))] = e
        else:
            self._init_level(node.init, (), extents, given, refuse, node)
        out = []
        for k in range(total):
            at = tuple(_digits(k, extents))
            value = s.value(given[at]) if at in given else "0"
            out.append(f"${node.name}$({', '.join(map(str, at))}) = {value};")
        return out

    def _init_level(
        self,
        init: Any,
        at: tuple[int, ...],
        extents: list[int],
        given: dict[tuple[int, ...], Any],
        refuse: str,
        decl: Any,
    ) -> None:
        if len(at) == len(extents):
            if isinstance(init, c_ast.InitList):
                if len(init.exprs) != 1:
                    raise self.fail(init, f"{refuse}: braces around several values")
                init = init.exprs[0]
            given[at] = init
            return
        if not isinstance(init, c_ast.InitList):
            raise self.fail(init, f"{refuse}: write braces for each dimension")
        if len(init.exprs) > extents[len(at)]:
            raise self.fail(init, f"{refuse}: more values than the extent {extents[len(at)]}")
        for k, e in enumerate(init.exprs):
            if isinstance(e, c_ast.NamedInitializer):
                raise self.fail(decl, f"{refuse}: designated initializers are not read")
            self._init_level(e, (*at, k), extents, given, refuse, decl)

    # ---------- loops ----------

    def loop(self, node: Any, ctx: _Ctx, counter: list[int]) -> _Ctx:
        it, lo = self._init(node)
        if it in ctx.iters:
            raise self.fail(node, f"loop variable {it!r} is already used by an enclosing loop")
        s = self._scoped(ctx)
        found = symbolic_step(s, node, it)
        symbolic = found if isinstance(found, tuple) else None
        if isinstance(found, int):
            step = found
        else:
            step = symbolic[0] if symbolic is not None else self._step(node, it)
        inner = replace(ctx, iters=(*ctx.iters, it))
        s = self._scoped(inner)
        try:
            start = s.compare(c_ast.ID(it), ">=" if step > 0 else "<=", lo, node)
        except NotAffineError as err:
            raise self.fail(
                err.node,
                f"loop {it!r}: its start is not affine ({err.why})",
                "bounds may use loop variables, integer parameters, index arrays "
                "(rowptr[i]) and min/max",
            ) from None
        conds: list[Cond] = [start]
        s.conds = domain_text([*ctx.conds, start])  # the bounds' proofs know where it starts
        conds.extend(self._bounds(node, it, step, s, (start, symbolic is None)))
        narrow_counter(s, node, it, (step, symbolic), [*ctx.conds, *conds])
        if abs(step) > 1:
            if not isinstance(start, Cmp):
                raise self.fail(
                    node.init, f"loop {it!r}: a strided loop needs a single start value"
                )
            conds.append(Cmp(f"({it} - ({start.rhs})) % {abs(step)}", "=", "0"))
        pos = str(counter[0])
        counter[0] += 1
        down = ctx.down | {it} if step < 0 else ctx.down
        inner = replace(
            inner, conds=(*ctx.conds, conj(conds)), prefix=(*ctx.prefix, pos, it), down=down
        )
        if symbolic is not None:  # a stride isl cannot hold: the statements test it
            sign, inc = symbolic
            first = s.value(lo, 12)
            offset = f"{first} - {it}" if sign < 0 else it if first == "0" else f"{it} - {first}"
            inc_text = inc if inc.isidentifier() else f"({inc})"
            inner = replace(inner, guards=(*inner.guards, f"({offset}) % {inc_text} == 0"))
            self.facts.append((f"{inc} >= 1", node.next))
        body = node.stmt
        items = list(body.block_items or []) if isinstance(body, c_ast.Compound) else [body]
        if self.inductions is None or not ctx.ivs:
            self.block(items, inner, [0])
            return ctx
        return self._induction_loop(node, ctx, inner, items, (it, lo, step, symbolic))

    def _induction_loop(
        self, node: Any, ctx: _Ctx, inner: _Ctx, items: list[Any], head: tuple[Any, ...]
    ) -> _Ctx:
        """Walk a loop body while induction variables are live: each one it increments
        holds a placeholder for the earlier iterations' part, filled in once the body says
        what one iteration adds (docs/import_c.md)."""
        assert self.inductions is not None
        it, lo, step, symbolic = head
        before = dict(ctx.ivs)
        self._scoped(ctx)
        body = self.inductions.enter(node, it, lo, None if symbolic else step, before)
        first = len(self.records)
        end = self.block(items, replace(inner, ivs=tuple(body.items())), [0])
        bound, op = single_bound(node, it, None if symbolic else step)
        self._scoped(ctx)
        facts = [*self.inductions.extent_facts(), *(f for f, _ in self.facts)]  # assumed too
        trips, why = self.inductions.trips(
            it, lo, bound, op, None if symbolic else step, ctx.iters,
            domain_text(list(ctx.conds)) or "0 = 0", before, facts,
        )  # fmt: skip
        after, fills = self.inductions.leave(before, dict(end.ivs), trips, why)
        if fills:
            self.records[first:] = [
                replace(
                    r,
                    source=fill_text(r.source, fills),
                    conds=tuple(substitute(c, fills) for c in r.conds),
                )
                for r in self.records[first:]
            ]
        return replace(ctx, ivs=tuple(after.items()))

    def _init(self, node: Any) -> tuple[str, Any]:
        init = node.init
        if (
            isinstance(init, c_ast.DeclList)
            and len(init.decls) == 1
            and init.decls[0].init is not None
        ):
            return init.decls[0].name, init.decls[0].init
        if (
            isinstance(init, c_ast.Assignment)
            and init.op == "="
            and isinstance(init.lvalue, c_ast.ID)
        ):
            return init.lvalue.name, init.rvalue
        raise self.fail(
            node,
            "a for loop must start with one assignment 'i = lo'",
            "write for (i = lo; i < hi; i++)",
        )

    def _step(self, node: Any, it: str) -> int:
        nx = node.next
        if isinstance(nx, c_ast.UnaryOp) and isinstance(nx.expr, c_ast.ID) and nx.expr.name == it:
            if nx.op in ("p++", "++"):
                return 1
            if nx.op in ("p--", "--"):
                return -1
        if (
            isinstance(nx, c_ast.Assignment)
            and isinstance(nx.lvalue, c_ast.ID)
            and nx.lvalue.name == it
        ):
            rv = nx.rvalue
            if nx.op in ("+=", "-=") and _literal(rv) is not None:
                v = _literal(rv) or 0
                step = v if nx.op == "+=" else -v
                if step != 0:
                    return step
            if (
                nx.op == "="
                and isinstance(rv, c_ast.BinaryOp)
                and rv.op in ("+", "-")
                and isinstance(rv.left, c_ast.ID)
                and rv.left.name == it
            ):
                inc = _literal(rv.right)
                if inc:
                    return inc if rv.op == "+" else -inc
        raise self.fail(
            nx if nx is not None else node,
            f"loop {it!r}: the increment must be {it}++, {it}--, {it} += c or {it} -= c with c "
            "an integer constant or an expression of integer parameters",
        )

    def _bounds(
        self, node: Any, it: str, step: int, s: Scope, first: tuple[Cond, bool]
    ) -> list[Cond]:
        """The loop's bounds; ``first``: its start condition and whether its step is the
        constant ``step`` (not a symbolic one of that sign)."""
        if node.cond is None:
            raise self.fail(node, f"loop {it!r} has no condition", f"write {it} < hi")
        parts = _conjuncts(node.cond)
        out: list[Cond] = []
        bounded = False
        for p in parts:
            uses = _mentions(p, it)
            if uses and isinstance(p, c_ast.BinaryOp) and p.op == "!=":
                pair = (_coefficient(p.left, it), _coefficient(p.right, it))
                start, constant = first
                p = as_ordered(s, p, it, step if constant else 0, start, pair, self.facts)
            if uses:
                side = _bound_side(p, it)
                if side is None:
                    raise self.fail(
                        p,
                        f"loop {it!r}: the condition must compare expressions affine in "
                        f"{it} (i + 1 < n, 2*i <= n), with {it} outside subscripts and calls",
                        f"write {it} < hi (a condition that stops the loop early is not a domain)",
                    )
                if side != ("upper" if step > 0 else "lower"):
                    raise self.fail(
                        p,
                        f"loop {it!r} runs {'up' if step > 0 else 'down'} but "
                        f"its condition bounds it from {'below' if step > 0 else 'above'}",
                    )
                bounded = True
            try:
                s.in_bound = True  # docs/import_c.md: C's quotients, exactly
                out.append(s.cond(p))
            except NotAffineError as err:
                raise self.fail(
                    err.node,
                    f"loop {it!r}: its bound is not affine ({err.why})",
                    "bounds may use loop variables, integer parameters, index "
                    "arrays (rowptr[i]) and min/max",
                ) from None
            finally:
                s.in_bound = False
        if not bounded:
            raise self.fail(node.cond, f"loop {it!r}: the condition does not bound {it}")
        return out

    # ---------- if / else ----------

    def branch(self, node: Any, ctx: _Ctx, counter: list[int]) -> _Ctx:
        """Handle an ``if``; induction variables are frozen in its arms (an increment there
        has no closed form) and unknown after it where an arm assigned them."""
        frozen = tuple((n, replace(st, frozen=True)) for n, st in ctx.ivs)
        ends = self._branch(node, replace(ctx, ivs=frozen), counter)
        after = []
        for name, state in ctx.ivs:
            changed = any(dict(end.ivs)[name] is not dict(frozen)[name] for end in ends)
            why = "is assigned under a condition, so its value after the if is not known"
            after.append((name, State(None, why) if changed else state))
        return replace(ctx, ivs=tuple(after))

    def _branch(self, node: Any, ctx: _Ctx, counter: list[int]) -> list[_Ctx]:
        s = self._scoped(ctx)
        try:
            cond: Cond | None = s.cond(node.cond)
        except NotAffineError:
            cond = None
        if cond is not None:
            ends = [self._arm(node.iftrue, replace(ctx, conds=(*ctx.conds, cond)), counter)]
            if node.iffalse is not None:
                other = replace(ctx, conds=(*ctx.conds, negate(cond)))
                ends.append(self._arm(node.iffalse, other, counter))
            return ends
        if node.iffalse is None:
            aff: list[Cond] = []
            rest: list[Any] = []
            for p in _conjuncts(node.cond):
                try:
                    aff.append(s.cond(p))
                except NotAffineError:
                    rest.append(p)
            if aff:
                ctx = replace(ctx, conds=(*ctx.conds, conj(aff)))
            text = " && ".join(s.value(p, 6) for p in rest)
        else:
            text = s.value(node.cond)
        if not _has_loop(node):
            self.emit([self.render_if(text, node, ctx)], ctx, counter, node)
            return []
        self._check_guard(node, ctx)
        ends = [self._arm(node.iftrue, replace(ctx, guards=(*ctx.guards, text)), counter)]
        if node.iffalse is not None:
            other = replace(ctx, guards=(*ctx.guards, f"!({text})"))
            ends.append(self._arm(node.iffalse, other, counter))
        return ends

    def _arm(self, node: Any, ctx: _Ctx, counter: list[int]) -> _Ctx:
        items = list(node.block_items or []) if isinstance(node, c_ast.Compound) else [node]
        return self.block(items, ctx, counter)

    def _check_guard(self, node: Any, ctx: _Ctx) -> None:
        """A data-dependent ``if`` around loops guards each statement inside, so it must
        mean the same for all of them: nothing under it may write what it reads (also
        through a pointer alias, ``q = &x[0]; if (q[0] > 0) for (...) x[i] = -x[i];``)."""
        into = self.scope.pointer_roots
        read = {into.get(n.name, n.name) for n in nodes(node.cond) if isinstance(n, c_ast.ID)}
        for sub in nodes(node):
            if isinstance(sub, c_ast.Assignment):
                base = sub.lvalue
            elif isinstance(sub, c_ast.UnaryOp) and sub.op in ("p++", "p--", "++", "--"):
                base = sub.expr
            else:
                continue
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            target = into.get(base.name, base.name) if isinstance(base, c_ast.ID) else None
            if target in read:
                through = f" (through pointer {c_name(base.name)!r})" if target != base.name else ""
                raise self.fail(
                    sub,
                    f"{target!r} is written{through} under a data-dependent condition that "
                    "reads it, around a loop",
                    "compute the condition into a variable first",
                )

    def render_if(self, cond: str, node: Any, ctx: _Ctx) -> str:
        """One statement holding the whole (loop-free) ``if``/``else`` block."""
        out = f"if ({cond}) {{ {self._render_body(node.iftrue, ctx)} }}"
        if node.iffalse is not None:
            out += f" else {{ {self._render_body(node.iffalse, ctx)} }}"
        return out

    def _render_decl(self, node: Any, ctx: _Ctx) -> _Ctx | str:
        """A declaration inside a rendered ``if`` block: a pointer (``double *p = &x[i];``,
        also an inlined callee's array parameter) or an integer local with an affine value
        binds an alias for the items after it, as :meth:`decl` does; any other value is an
        assignment in the block's text."""
        if node.init is None:
            return ""
        if isinstance(node.init, c_ast.InitList):
            raise self.fail(
                node, f"initializer list for {node.name!r}", "assign the elements in a loop"
            )
        var = self.scope.vars[node.name]
        if var.rank:
            alias = bind(self._scoped(ctx), node.name, var.rank, node.init)
            return replace(ctx, pointers=(*ctx.pointers, (node.name, alias)))
        if var.base not in ("double", "float") and self.written.get(node.name, 0) == 0:
            bound = self._bind(ctx, node.name, node.init)
            if bound is not None:
                return bound
        return f"${node.name}$ = {self._scoped(ctx).value(node.init)};"

    def _render_body(self, node: Any, ctx: _Ctx) -> str:
        items = list(node.block_items or []) if isinstance(node, c_ast.Compound) else [node]
        out: list[str] = []
        for item in items:
            kind = type(item).__name__
            if kind in _UNSUPPORTED:
                what, hint = _UNSUPPORTED[kind]
                raise self.fail(item, f"{what} cannot be represented in spf", hint)
            if isinstance(item, c_ast.Assignment | c_ast.UnaryOp):
                out.extend(self.assignment(item, ctx))
            elif isinstance(item, c_ast.If):
                s = self._scoped(ctx)
                out.append(self.render_if(s.value(item.cond), item, ctx))
            elif isinstance(item, c_ast.Compound):
                out.append(self._render_body(item, ctx))
            elif isinstance(item, c_ast.Decl):
                done = self._render_decl(item, ctx)
                if isinstance(done, _Ctx):
                    ctx = done
                elif done:
                    out.append(done)
            elif not isinstance(item, c_ast.EmptyStatement):
                raise self.fail(item, f"unsupported statement ({kind}) under a condition")
        return " ".join(out)


def _digits(k: int, extents: list[int]) -> list[int]:
    """The subscripts of the ``k``-th element in row-major order."""
    out = []
    for e in reversed(extents):
        out.append(k % e)
        k //= e
    return out[::-1]


def _literal(node: Any) -> int | None:
    """The value of an integer literal of any suffix (``2``, ``2L``, ``2u``), else None."""
    if isinstance(node, c_ast.Constant) and node.type in INT_LITERALS:
        return c_integer(node.value)
    return None


def _conjuncts(node: Any) -> list[Any]:
    if isinstance(node, c_ast.BinaryOp) and node.op == "&&":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _mentions(node: Any, name: str) -> bool:
    return any(isinstance(n, c_ast.ID) and n.name == name for n in nodes(node))


def _has_loop(node: Any) -> bool:
    return any(isinstance(n, c_ast.For | c_ast.While | c_ast.DoWhile) for n in nodes(node))


def _bound_side(node: Any, it: str) -> str | None:
    """``"upper"``/``"lower"`` when ``node`` compares expressions affine in ``it`` with a
    nonzero integer coefficient in all (``i < n``, ``i + 1 < n``, ``2*i <= n``, ``n > i``),
    ``it`` nowhere else (not in a subscript or call), else None."""
    if not isinstance(node, c_ast.BinaryOp) or node.op not in ("<", "<=", ">", ">="):
        return None
    left, right = _coefficient(node.left, it), _coefficient(node.right, it)
    if left is None or right is None or left == right:
        return None
    grows = left - right > 0  # the left side minus the right grows with it
    return "upper" if grows == (node.op in ("<", "<=")) else "lower"


def _coefficient(node: Any, it: str) -> int | None:
    """The integer coefficient of ``it`` in the C expression ``node`` when ``node`` is affine
    in it (0 when it does not mention it), else None."""
    if not _mentions(node, it):
        return 0
    if isinstance(node, c_ast.ID):
        return 1
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        inner = _coefficient(node.expr, it)
        return None if inner is None else (-inner if node.op == "-" else inner)
    if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
        a, b = _coefficient(node.left, it), _coefficient(node.right, it)
        if a is None or b is None:
            return None
        return a + b if node.op == "+" else a - b
    if isinstance(node, c_ast.BinaryOp) and node.op == "*":
        for factor, other in ((node.left, node.right), (node.right, node.left)):
            value = _int_constant(factor)
            if value is not None:
                inner = _coefficient(other, it)
                return None if inner is None else value * inner
    return None  # it under a call, a subscript, a division, a cast...


def _int_constant(node: Any) -> int | None:
    """The value of a decimal integer literal (``3``, ``-3``), else None."""
    if isinstance(node, c_ast.UnaryOp) and node.op == "-":
        inner = _int_constant(node.expr)
        return None if inner is None else -inner
    if isinstance(node, c_ast.Constant) and node.type == "int" and node.value.isdigit():
        return c_integer(node.value)  # 010 is 8
    return None

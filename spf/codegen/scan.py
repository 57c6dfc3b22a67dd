"""UF-aware polyhedra scanning on isl (cut where UF values become computable).

isl knows no UFs. Every UF call of a statement's schedule-space domain gets a variable
(``rowptr_i``), computable at the innermost schedule position its arguments use (its
*level*). The schedule is cut after every such level; each segment is one isl AST build in
which outer iterators and the UF values already bound are parameters and later dimensions
and UF values are projected out, so every guard isl hoists lands where its symbols exist.
At each leaf of a non-final segment the newly computable UF values are bound, once, and
only for the statements that need them; the next segment is scanned below. The result is
spf's own loop AST (:mod:`spf.codegen.loop_ast`); the scanner prints nothing.

Full and partial tiles are scanned apart (:func:`separate`): the inner loops made by
``split``, ``tile`` and ``vectorize`` cut a statement into pieces (isl statements of their
own, ``s0#k``) where those loops run their whole constant range or not, so the loops of full
tiles and full vectors get constant bounds without ``min``/``max`` and a vector loop's
remainder is a plain scalar loop. Calls name the statement again at the end.

No piece leaves a ``parallel``, ``gpu_*`` or ``distribute`` loop (a *whole* loop): left to
itself, isl scans the last, partial tile of a parallel tile loop as a piece of its own after
the parallel loop (serially). Where some statement is in pieces, the schedule is also cut
after each whole loop's position (:meth:`Scanner._whole_positions`): in the segment ending
there, the pieces of a statement are one isl statement (its set before separation), scanned
with isl's ``atomic`` option, so each whole loop is one loop; the next segment tells the
pieces apart inside it, by the whole loops' values first (isl's ``separate`` on its first
dimension: ``if (last tile) ... else ...`` rather than guards deep in the nest).

Loops of one iteration: isl drops a loop whose dimension has a single value where it is
scanned (``P == 1``, or ``q = 0`` split off a range) and substitutes the value. Two kinds of
loop must stay loops whatever their trip count: a ``distribute`` loop (the MPI printer binds
it to the rank; without it every rank would run the iteration) and a loop some buffer is
allocated in (``allocate_at``: :func:`spf.codegen.program.lower` puts the allocation in that
loop). At each isl leaf, the values isl fixed at such positions are not substituted; the leaf
is wrapped in a loop ``for (v = e; v <= e; v++)`` instead (:meth:`Scanner._keep_loops`), and
:func:`hoist_kept_loops` lifts these wrappers out of later loops, guards and bindings and
merges neighbours, so each sits where isl would have put the loop.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import islpy as isl

from spf.analysis.dependences import padded
from spf.codegen import from_isl
from spf.codegen.affine_expr import loop_expr
from spf.codegen.ast_build import build_ast
from spf.codegen.binds import bind_all_where_used
from spf.codegen.budget import isl_budget
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
    UFRead,
    Var,
    expr_vars,
    map_expr,
    map_node,
    substitute,
    substitute_expr,
    uses,
    walk,
)
from spf.codegen.read_guards import guarded_binds
from spf.codegen.written_ufs import is_written_index_array, written_level
from spf.errors import CodegenError, SpfError
from spf.ir.reading import is_constant, storage_of
from spf.sets.affine import Aff, Sym
from spf.sets.linear import DT, to_isl
from spf.sets.view import uf_view

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import ParsedStmt
    from spf.sets.set_like import Set


@dataclass
class UFValue:
    var: str
    uf: str
    args: tuple[Expr, ...]
    level: int


@dataclass
class StmtScan:
    name: str
    iset: isl.Set
    """Schedule-space domain: dims ``c`` (named by position), UF values as parameters."""
    needs: set[str]
    iterators: tuple[Expr, ...]
    tags: dict[int, tuple[str, ...]] = field(default_factory=dict)
    label: str = ""
    """The key of this piece (the statement name, or ``name#k`` for a separated piece)."""


class Scanner:
    """Scans the statements of one computation (its IR) into a loop AST."""

    def __init__(self, ir: ComputationIR, below_guards: bool = False) -> None:
        self.ir = ir
        self.below_guards = below_guards
        """Read UF values below the guards of their ``if``s that do not use them
        (:func:`spf.codegen.binds.bind_where_used`): the second try of
        :func:`spf.codegen.program.lower`."""
        self.ufs = ir.uf_decls
        self.width = ir.schedule_width
        self._written: dict[tuple[str, str], int] = {}
        self._ranges: dict[str, isl.Set] = {}
        self._contexts: dict[tuple[frozenset[str], tuple[str, ...]], isl.Set] = {}
        self._domain_facts: dict[str, isl.Set] = {}
        """Value -> where its call's arguments lie in the UF's declared domain (a set over
        the schedule positions; see :meth:`_guard_reads`)."""
        if self._read_after_last_position():
            self.width += 1  # a constant position below it, where the value is bound
        self._params = sorted(ir.params)
        self.reserved = {*self._params, *ir.data_space_table, *self.ufs}
        self.reserved |= {b.name for b in ir.buffers}
        self.names = self._position_names()
        self.values: dict[str, UFValue] = {}
        self.keys: dict[tuple[str, tuple[Expr, ...], int], str] = {}
        self.stmts: dict[str, StmtScan] = {}
        self.alloc_positions = self._allocation_positions()
        self.unseparated: dict[str, StmtScan] = {}
        with isl_budget(f"preparing the loops of {ir.name} (full and partial tiles)"):
            for s in ir.parsed_stmts:
                prepared = self._prepare(s)
                if prepared is None:  # an empty domain: the statement never runs
                    continue
                self.unseparated[s.name] = prepared
                for piece in separate(s, self.unseparated[s.name], self.names):
                    self.stmts[piece.label] = piece
        self._stmt_by_name = {s.name: s for s in ir.parsed_stmts}
        levels = {v.level for v in self.values.values() if v.level >= 0}
        self.whole = self._whole_positions()
        self.cuts = sorted(levels | self.whole | {self.width - 1})

    # --- preparation
    def _position_names(self) -> list[str]:
        names: list[str | None] = [None] * self.width
        for s in self.ir.parsed_stmts:
            for p, v in enumerate(padded(s, self.width).out_vars):
                if names[p] is None and not is_constant(v) and v.isidentifier():
                    names[p] = v
        out: list[str] = []
        for p, n in enumerate(names):
            name = n if n is not None else f"c{p}"
            while name in self.reserved or name in out:
                name += "_"
            out.append(name)
        return out

    def _prepare(self, stmt: ParsedStmt) -> StmtScan | None:
        """How ``stmt`` is scanned; None when its domain is empty whatever the parameters
        and UF values are (it generates nothing)."""
        sched = padded(stmt, self.width)
        where = f"statement {stmt.name}"
        sdom = sched.apply(stmt.domain)
        try:
            view = uf_view(sdom, self.names)
        except Exception as err:
            raise CodegenError(
                f"{where}: its schedule does not determine the UF arguments of its domain "
                f"({err}); make the schedule injective on the domain"
            ) from err
        if view.iset.is_empty():
            return None
        if sched.as_function(tuple(f"_d{k}" for k in range(stmt.domain.arity))) is None:
            raise CodegenError(
                f"{where}: its schedule {stmt.schedule} is not one function of its "
                "iterators that codegen can write (one quasi-affine expression per schedule "
                "position). A union of pieces that time parts of the domain by different "
                "expressions or constants: split the statement into one statement per piece "
                "(each with its part of the domain) and order those instead. A tile of a "
                "split's inner loop by a factor that does not divide the split's (split j "
                "by 4, then tile with its outer loop by 3): use factors that divide"
            )
        local: list[str] = []
        for uf, args in view.terms:
            exprs = tuple(_to_expr(a, local) for a in args)
            local.append(self._register(uf, exprs, self._written_level(stmt, uf)))
        iset = view.iset
        n = self.width
        iset = _to_params(iset, n, local)
        for var in local:  # declared ranges bound loops scanned before a value is known
            fact = self._range_fact(var).align_params(iset.get_space())
            iset = iset.align_params(fact.get_space()).intersect_params(fact)
        for (uf, args), var in zip(view.terms, local, strict=True):
            iset = self._within_uf_domain(iset, uf, args, local, var)
        self._check_bounded(stmt, iset)
        its = sched.intersect_domain(stmt.domain).inverse_function_exprs(self.names)
        if its is None:
            raise CodegenError(
                f"{where}: its schedule {stmt.schedule} is not invertible on its domain "
                "(each iteration needs its own time); codegen needs one"
            )
        iterators = tuple(_to_expr(e, []) for e in its)
        needs = self._closure(set(local))
        tags = _tags(stmt, self.width)
        return StmtScan(stmt.name, iset.reset_tuple_id(), needs, iterators, tags, stmt.name)

    def _within_uf_domain(
        self, iset: isl.Set, uf: str, args: Sequence[Aff], local: Sequence[str], var: str
    ) -> isl.Set:
        """``iset`` where the arguments of a call of ``uf`` lie in its declared domain: a
        call outside it has no value, so no instance there exists (spf's sets mean that),
        and the loops must not reach it (they would read the index array out of bounds:
        ``0 <= i <= N + 5`` beside ``rowptr(i + 1)`` with ``rowptr`` defined up to ``N``)."""
        decl = self.ufs.get(uf)
        if decl is None or decl.domain is None:
            return iset
        args = args[: decl.arity]  # a tuple-valued UF's read f(i)[c] ends with c
        try:
            texts = [to_isl(_with_value_names(a, local)) for a in args]
        except ValueError:  # not quasi-affine: the range facts alone bound the loops
            return iset
        params = [str(p) for p in iset.get_var_names(DT.param)]
        target = decl.domain.body_iset()
        params += [str(p) for p in target.get_var_names(DT.param) if str(p) not in params]
        ma = isl.MultiAff(
            f"[{', '.join(params)}] -> {{ [{', '.join(self.names)}] -> [{', '.join(texts)}] }}"
        )
        target = target.reset_tuple_id().align_params(ma.get_space())
        fact = target.preimage_multi_aff(ma.align_params(target.get_space()))
        self._domain_facts.setdefault(var, fact)
        return _align_intersect(iset, fact)

    def _check_bounded(self, stmt: ParsedStmt, iset: isl.Set) -> None:
        """A loop with no upper (or lower) bound would never end: refuse it by name."""
        if iset.is_bounded():
            return
        n = iset.dim(DT.set)
        for p in range(n):
            one = iset.project_out(DT.set, p + 1, n - p - 1).project_out(DT.set, 0, p)
            if one.is_bounded():
                continue
            side = "upper" if not one.dim_has_upper_bound(DT.set, 0) else "lower"
            if one.dim_has_upper_bound(DT.set, 0) and one.dim_has_lower_bound(DT.set, 0):
                side = "finite"
            raise CodegenError(
                f"statement {stmt.name}: loop {self.names[p]} has no {side} bound in its "
                f"domain {stmt.domain} (scheduled by {stmt.schedule}); add one (e.g. "
                f"'{self.names[p]} < N' with a symbolic constant N) so the loop ends"
            )

    def _register(self, uf: str, args: tuple[Expr, ...], written: int = -1) -> str:
        """The variable of the value ``uf(args)``; ``written``: the position below which a
        statement may have changed it (a run-time index array, :func:`written_level`)."""
        level = max((self._level_of(a) for a in args), default=-1)
        if is_written_index_array(self.ir, uf):
            # its value is read no earlier than inside the reader's top-level statement
            # group (never before the function's first statement, whatever the arguments),
            # and after the last write that can change it (a write in the same iteration)
            level = max(level, written, 0)
        key = (uf, args, level)
        if key in self.keys:
            return self.keys[key]
        base = re.sub(r"\W+", "_", f"{uf}_{'_'.join(_text(a) for a in args)}").strip("_")
        var = base
        while var in self.reserved or var in self.values or var in self.names:
            var += "_"
        self.values[var] = UFValue(var, uf, args, level)
        self.keys[key] = var
        return var

    def _read_after_last_position(self) -> bool:
        """Whether a statement's loops read a run-time index array that another statement
        writes before it at the schedule's last position (the value is bound below that
        position: the schedule gets one more, a constant, for it). Only the arrays its
        domain or schedule call are bound (:meth:`_prepare`); a read in its body alone is
        printed where the body runs, so its written level is not asked for."""
        return any(
            self._written_level(s, uf) == self.width - 1
            for s in self.ir.parsed_stmts
            for uf in self._bound_index_arrays(s)
        )

    def _bound_index_arrays(self, stmt: ParsedStmt) -> set[str]:
        """The run-time index arrays ``stmt``'s domain or schedule call."""
        called = {*stmt.domain.inferred_ufs, *stmt.schedule.inferred_ufs}
        return {uf for uf in called if is_written_index_array(self.ir, uf)}

    def _written_level(self, stmt: ParsedStmt, uf: str) -> int:
        """:func:`written_level`, at least 0 where the schedule has more than one position:
        :meth:`_register` reads a run-time index array at position 0 or below anyway, and
        :meth:`_read_after_last_position` asks for the last position only."""
        key = (stmt.name, uf)
        if key not in self._written:
            level = -1
            if is_written_index_array(self.ir, uf):
                floor = 0 if self.width > 1 else -1
                level = written_level(self.ir, stmt, uf, self.width, floor)
            self._written[key] = level
        return self._written[key]

    def _level_of(self, e: Expr) -> int:
        if isinstance(e, Var):
            if e.name in self.names:
                return self.names.index(e.name)
            if e.name in self.values:
                return self.values[e.name].level
            return -1
        if isinstance(e, (Op, UFRead)):
            return max((self._level_of(a) for a in e.args), default=-1)
        return -1

    def _closure(self, used: set[str]) -> set[str]:
        out = set(used)
        while True:
            more = {
                v
                for u in out
                for a in self.values[u].args
                for v in expr_vars(a)
                if v in self.values
            }
            if more <= out:
                return out
            out |= more

    # --- isl helpers
    def _restrict(self, s: StmtScan, a: int, b: int, scope: set[str]) -> isl.Set:
        iset = s.iset.project_out(DT.set, b + 1, self.width - b - 1)
        iset = _to_params(iset, 0, self.names[:a])
        for name in list(iset.get_var_names(DT.param)):
            if name in self.values and name not in scope:
                pos = iset.find_dim_by_name(DT.param, name)
                iset = iset.project_out(DT.param, pos, 1)
        return iset

    def _outer(self, s: StmtScan, a: int, parent: set[str]) -> isl.Set:
        """What the enclosing loops enforce for ``s`` (as a parameter set)."""
        iset = self._restrict(s, 0, a - 1, parent)
        return _to_params(iset, 0, self.names[: iset.dim(DT.set)]).params()

    def _context(self, scope: set[str], outer: Sequence[str]) -> isl.Set:
        """The parameters, the loops outside and the values in ``scope`` with their range
        facts (once per scope and loops: the statements alone in their segments below a
        cut share them, SpGEMM's sort's ten)."""
        key = (frozenset(scope), tuple(outer))
        found = self._contexts.get(key)
        if found is None:
            params = ", ".join([*self._params, *outer, *sorted(scope)])
            found = isl.Set(f"[{params}] -> {{ : }}")
            for var in scope:
                found = _align_intersect(found, self._range_fact(var))
            self._contexts[key] = found
        return found

    def _range_fact(self, var: str) -> isl.Set:
        """The declared range of value ``var``'s UF, as a parameter set over ``var`` (once
        per value: each segment's context asks for those of its whole scope)."""
        found = self._ranges.get(var)
        if found is None:
            found = self._ranges[var] = self._range_fact_of(var)
        return found

    def _range_fact_of(self, var: str) -> isl.Set:
        info = self.values[var]
        decl = self.ufs.get(info.uf)
        universe = isl.Set(f"[{var}] -> {{ : }}")
        if decl is None or decl.range is None:
            return universe
        values: Set | None = decl.range
        if decl.out_arity > 1:  # f(i)[c] is read as f(i, c): the range of component c
            component = info.args[-1]
            assert isinstance(component, Int)
            values = decl.component_range(component.value)
        assert values is not None
        return _param_fact(uf_view(values, [var]).iset, var)

    # --- the recursive scan
    def scan(self) -> Node:
        top = {v for v, info in self.values.items() if info.level < 0}
        try:
            with isl_budget(f"scanning the loops of {self.ir.name}"):
                body = self._segment(0, sorted(self.stmts), top, set())
        except isl.Error as err:
            raise CodegenError(
                f"cannot scan the schedule of {self.ir.name}: {str(err).split(' in /')[0]}; "
                "a loop is probably bounded only by UF values that are not known yet where "
                "it runs (declare UF ranges, or keep loops whose bounds use a UF inside the "
                "loops of its arguments)"
            ) from err
        body = hoist_kept_loops(body)
        body = self._local_names(self._bind_all(sorted(top), body), frozenset(self.reserved))
        return map_node(self._stmt_names(body), _fold)

    def _stmt_names(self, n: Node) -> Node:
        """Calls of separated pieces (``s0#1``) call their statement (``s0``)."""
        if isinstance(n, Call):
            return Call(self.stmts[n.stmt].name, n.args)
        if isinstance(n, Block):
            return Block(tuple(self._stmt_names(i) for i in n.items))
        if isinstance(n, If):
            orelse = None if n.orelse is None else self._stmt_names(n.orelse)
            return If(n.cond, self._stmt_names(n.then), orelse)
        if isinstance(n, (For, Bind)):
            return replace(n, body=self._stmt_names(n.body))
        return n

    def _local_names(self, n: Node, taken: frozenset[str]) -> Node:
        """Give each loop the name its statements use at that position (positions are named
        after the first statement that has a loop there; a later nest may call it otherwise)."""
        if isinstance(n, Block):
            return Block(tuple(self._local_names(i, taken) for i in n.items))
        if isinstance(n, If):
            orelse = None if n.orelse is None else self._local_names(n.orelse, taken)
            return If(n.cond, self._local_names(n.then, taken), orelse)
        if isinstance(n, Bind):
            return Bind(n.var, n.uf, n.args, self._local_names(n.body, taken | {n.var}))
        if not isinstance(n, For):
            return n
        want = self._loop_name_inside(n)
        if want is not None and want != n.var and want not in taken and not uses(n, want):
            n = replace(
                n,
                var=want,
                body=substitute(n.body, {n.var: Var(want)}),
                cond=substitute_expr(n.cond, n.var, want),
            )
        return replace(n, body=self._local_names(n.body, taken | {n.var}))

    def _loop_name_inside(self, n: For) -> str | None:
        for node in walk(n.body):
            if isinstance(node, Call):
                stmt = self._stmt_by_name[self.stmts[node.stmt].name]
                outs = padded(stmt, self.width).out_vars
                name = outs[n.position]
                return name if name.isidentifier() and not is_constant(name) else None
        return None

    def _bind_all(self, names: Sequence[str], body: Node) -> Node:
        """Read each of ``names`` where ``body`` uses it (:func:`bind_all_where_used`)."""
        values = {v: (self.values[v].uf, self.values[v].args) for v in names}
        return bind_all_where_used(names, values, body, self.below_guards)

    def _segment(self, seg: int, names: list[str], scope: set[str], parent: set[str]) -> Node:
        a = 0 if seg == 0 else self.cuts[seg - 1] + 1
        b = self.cuts[seg]
        last = b == self.width - 1
        sets = {n: self._restrict(self.stmts[n], a, b, scope) for n in names}
        sets = {n: s for n, s in sets.items() if not s.is_empty()}
        if not sets:
            return Block(())
        groups = [[n] for n in sets] if last else _overlapping_groups(sets, self._owner(b))
        order = self._tie_order(sets) if last else None
        group_of: dict[str, list[str]] = {}
        joined: dict[str, isl.Set] = {}
        for gi, group in enumerate(groups):
            label = group[0] if last else f"G{seg}_{gi}"
            group_of[label] = group
            joined[label] = self._joined(group, sets, a, b, scope).set_tuple_name(label)
        separate = b not in self.whole and a - 1 in self.whole
        consts = _common_constants(list(joined.values()), 1)
        kept = b - a + 1 - len(consts)
        umap: isl.UnionMap | None = None
        for label, points in joined.items():
            ident = isl.Map.identity(points.get_space().map_from_set()).intersect_domain(points)
            for k in sorted(consts, reverse=True):
                ident = ident.project_out(DT.out, k, 1)
            if order is not None:  # ties broken by statement order: one more position
                ident = ident.add_dims(DT.out, 1).fix_val(DT.out, kept, order[label])
            part = isl.UnionMap.from_map(ident.reset_tuple_id(DT.out))
            umap = part if umap is None else umap.union(part)
        assert umap is not None
        ctx = self._context(scope, self.names[:a])
        if a > 0:
            outer = [self._outer(self.stmts[n], a, parent) for n in names]
            ctx = _align_intersect(ctx, _union(outer))
        # the union of the statements' outer constraints comes in one piece per statement;
        # coalesced (one where they agree) isl's AST build gists against far fewer
        # disjuncts: the same loops, sorted SpGEMM's 12-statement segment 100 ms -> 15 ms
        context = _used_context(ctx, umap).coalesce()
        tie = 0 if order is None else 1
        loops = [x for k, x in enumerate(self.names[a : b + 1]) if k not in consts]
        options = None
        dims = ", ".join(f"c{k}" for k in range(kept + tie))
        if b in self.whole:  # one loop per position: no piece of the whole loop split off
            options = "{ " + "; ".join(f"[{dims}] -> atomic[{k}]" for k in range(kept)) + " }"
        elif separate:  # the pieces apart: by the whole loops' values first
            options = f"{{ [{dims}] -> separate[0] }}"
        node = build_ast(context, umap, [*loops, *(["spf_tie"] if tie else [])], options)
        return self._convert(node, _Segment(seg, a, b, last, group_of), scope)

    def _tie_order(self, sets: dict[str, isl.Set]) -> dict[str, int] | None:
        """Each statement piece's place in statement order, when the instances of two
        statements of the innermost segment ``sets`` may run at equal times (their schedules
        put them at one point), else None. isl's AST orders such instances its own way; the
        interpreter, and so what the program means, runs them in statement order, so the
        scan breaks ties by one more schedule position holding that place. Two statements
        whose constant positions differ never tie (no isl test)."""
        index = {st.name: k for k, st in enumerate(self.ir.parsed_stmts)}
        labels = list(sets)
        fixed = {x: _fixed_values(sets[x]) for x in labels}
        for i, x in enumerate(labels):
            for y in labels[i + 1 :]:
                if self.stmts[x].name == self.stmts[y].name:
                    continue  # pieces of one statement are disjoint
                if any(
                    p is not None and q is not None and p != q
                    for p, q in zip(fixed[x], fixed[y], strict=True)
                ):
                    continue
                one, two = sets[x].reset_tuple_id(), sets[y].reset_tuple_id()
                if not _align_intersect(one, two).is_empty():
                    return {label: index[self.stmts[label].name] for label in labels}
        return None

    def _joined(
        self, group: list[str], sets: dict[str, isl.Set], a: int, b: int, scope: set[str]
    ) -> isl.Set:
        """The union of the sets of ``group``; where the group holds every piece of a
        statement, that statement's set before :func:`separate` (simpler loop bounds)."""
        parts: list[isl.Set] = []
        done: set[str] = set()
        for label in group:
            name = self.stmts[label].name
            pieces = {x for x, info in self.stmts.items() if info.name == name}
            if label == name or not pieces <= set(group):
                parts.append(sets[label])
            elif name not in done:
                done.add(name)
                parts.append(self._restrict(self.unseparated[name], a, b, scope))
        return _union(parts)

    def _convert(self, n: isl.AstNode, part: _Segment, scope: set[str]) -> Node:
        kind = from_isl.node_kind(n)

        def rec(m: isl.AstNode) -> Node:
            return self._convert(m, part, scope)

        if kind == "block":
            kids = n.block_get_children()
            return Block(tuple(rec(kids.get_at(k)) for k in range(kids.n_ast_node())))
        if kind == "if":
            orelse = rec(n.if_get_else_node()) if n.if_has_else_node() else None
            return If(from_isl.expr(n.if_get_cond()), rec(n.if_get_then_node()), orelse)
        if kind == "for":
            var = str(n.for_get_iterator().get_id().get_name())
            inc = from_isl.expr(n.for_get_inc())
            step = inc.value if isinstance(inc, Int) else 1
            body = rec(n.for_get_body())
            pos = self.names.index(var)
            return For(
                var,
                from_isl.expr(n.for_get_init()),
                from_isl.expr(n.for_get_cond()),
                step,
                body,
                pos,
                self._loop_tags(body, pos),
            )
        if kind == "mark":
            return rec(n.mark_get_node())
        if kind != "user":
            raise CodegenError(f"spf bug: unexpected isl AST node {kind}")
        return self._leaf(n, part, scope)

    def _leaf(self, n: isl.AstNode, part: _Segment, scope: set[str]) -> Node:
        a, b = part.a, part.b
        call = n.user_get_expr()
        label = str(call.get_op_arg(0).get_id().get_name())
        vals = [from_isl.expr(call.get_op_arg(k + 1)) for k in range(call.get_op_n_arg() - 1)]
        vals = vals[: b - a + 1]  # without the position breaking ties (_tie_order)
        fixed = {
            self.names[a + k]: v
            for k, v in enumerate(vals)
            if not (isinstance(v, Var) and v.name == self.names[a + k])
        }
        group = [label] if part.last else part.group_of[label]
        free = self._free_values(group, fixed)
        if part.last:
            return self._keep_loops(self._call(label, free, scope), group, fixed, free)
        needed = set().union(*(self.stmts[s].needs for s in group))
        new = [v for v, info in self.values.items() if info.level == b and v in needed]
        inner = self._segment(part.seg + 1, group, scope | set(new), scope)
        inner = self._guard_reads(self._bind_all(new, inner), new, group, a, b, scope)
        return self._keep_loops(substitute(inner, free), group, fixed, free)

    # --- reads of values some statements of a group do not need
    def _guard_reads(
        self, body: Node, new: Sequence[str], group: Sequence[str], a: int, b: int, scope: set[str]
    ) -> Node:
        """``body`` with the reads of values that some statement of ``group`` does not need
        guarded where their arguments could leave the UF's domain (:mod:`read_guards`)."""
        partial = [v for v in new if any(v not in self.stmts[s].needs for s in group)]
        partial = [v for v in partial if v in self._domain_facts]
        if not partial:
            return body
        points = _union([self._points(label, a, b, scope) for label in group])

        def at(var: str, known: Sequence[str]) -> Expr | None:
            return self._read_guard(var, points, known)

        needs = {label: s.needs for label, s in self.stmts.items()}
        return guarded_binds(body, partial, needs, at)

    def _points(self, label: str, a: int, b: int, scope: set[str]) -> isl.Set:
        """The points of ``label`` at segment ``a .. b`` as a parameter set over the
        positions up to ``b`` (the scope's values and the constants are parameters)."""
        pts = self._restrict(self.stmts[label], a, b, scope)
        return _to_params(pts, 0, self.names[a : a + pts.dim(DT.set)]).params()

    def _read_guard(self, var: str, points: isl.Set, known: Sequence[str]) -> Expr | None:
        """The condition that ``var``'s call has arguments in its UF's domain, or None when
        the group's ``points``, the declared ranges of the values the arguments read and the
        enclosing conditions ``known`` (isl text) imply it."""
        fact = self._domain_facts[var]
        n = fact.dim(DT.set)
        b = self.values[var].level
        cond = fact.project_out(DT.set, b + 1, n - b - 1)
        cond = _to_params(cond, 0, self.names[: b + 1]).params()
        where = points
        for k in range(cond.dim(DT.param)):  # the declared ranges of the values it reads
            name = cond.get_dim_name(DT.param, k)
            if name in self.values:
                where = _align_intersect(where, self._range_fact(name))
        for text in known:
            params = [str(p) for p in where.get_var_names(DT.param)]
            try:
                said = isl.Set(f"[{', '.join(params)}] -> {{ : {text} }}")
            except isl.Error:  # a name the points do not know: not used
                continue
            where = _align_intersect(where, said)
        cond = cond.align_params(where.get_space())
        where = where.align_params(cond.get_space())
        if where.is_subset(cond):
            return None
        build = isl.AstBuild.from_context(where)  # what holds there goes unsaid
        node = build.node_from_schedule_map(
            isl.UnionMap.from_map(
                isl.Map.from_domain_and_range(
                    isl.Set.from_params(cond).set_tuple_name("G"), isl.Set("{ [] }")
                )
            )
        )
        if from_isl.node_kind(node) != "if" or node.if_has_else_node():
            return None  # isl found it implied after all (a bare call)
        if from_isl.node_kind(node.if_get_then_node()) != "user":
            return None
        return from_isl.expr(node.if_get_cond())

    def _call(self, name: str, fixed: dict[str, Expr], scope: set[str]) -> Node:
        info = self.stmts[name]
        bound = {
            (uf, args): var
            for (uf, args, _), var in self.keys.items()
            if var in scope and var in info.needs
        }

        def use_bound(e: Expr) -> Expr | None:
            if isinstance(e, UFRead):
                var = bound.get((e.uf, e.args))
                return Var(var) if var is not None else None
            return None

        args = tuple(
            map_expr(
                map_expr(x, use_bound), lambda e: fixed.get(e.name) if isinstance(e, Var) else None
            )
            for x in info.iterators
        )
        return Call(name, args)

    def _loop_tags(self, body: Node, pos: int) -> tuple[str, ...]:
        tags: list[str] = []
        for node in walk(body):
            if isinstance(node, Call):
                for t in self.stmts[node.stmt].tags.get(pos, ()):
                    if t not in tags:
                        tags.append(t)
        return tuple(tags)

    # --- loops that keep the pieces of a statement inside
    def _whole_positions(self) -> set[int]:
        """Positions of ``parallel``, ``gpu_*`` and ``distribute`` loops, when some statement is
        scanned in pieces (:func:`separate`): the schedule is cut after each, so the pieces of
        a statement are one isl statement up to that loop and are told apart only inside it."""
        if all("#" not in label for label in self.stmts):
            return set()
        return {
            pos
            for info in self.stmts.values()
            for pos, tags in info.tags.items()
            if pos < self.width - 1 and any(t.split("(", 1)[0] in _WHOLE for t in tags)
        }

    def _owner(self, b: int) -> dict[str, str] | None:
        """Piece label -> statement name, for a segment ending at a whole loop: pieces of one
        statement are scanned together there (see :meth:`_whole_positions`)."""
        if b not in self.whole:
            return None
        return {label: info.name for label, info in self.stmts.items()}

    # --- loops of one iteration that must stay loops
    def _kept(self, group: Sequence[str]) -> dict[int, tuple[str, ...]]:
        """Positions where some statement of ``group`` needs a loop even when it has one
        iteration (see the module docstring), with that position's tags."""
        out: dict[int, tuple[str, ...]] = {}
        for label in group:
            info = self.stmts[label]
            for pos, tags in info.tags.items():
                if "distribute" in tags:
                    out[pos] = tuple(dict.fromkeys((*out.get(pos, ()), *tags)))
            for pos in self.alloc_positions.get(info.name, ()):
                out.setdefault(pos, info.tags.get(pos, ()))
        return out

    def _free_values(self, group: Sequence[str], fixed: dict[str, Expr]) -> dict[str, Expr]:
        """``fixed`` without the values of kept positions (their loops stay)."""
        kept = {self.names[p] for p in self._kept(group)}
        return {k: v for k, v in fixed.items() if k not in kept}

    def _keep_loops(
        self, body: Node, group: Sequence[str], fixed: dict[str, Expr], free: dict[str, Expr]
    ) -> Node:
        """Wrap ``body`` in a one-iteration loop ``v .. v`` for each kept position isl fixed to
        a single value ``v`` (isl drops such loops). :func:`hoist_kept_loops` then lifts these
        loops as far out as they can go."""
        tags = self._kept(group)
        for pos in sorted(tags, reverse=True):
            var = self.names[pos]
            if var in fixed and var not in free:
                value = substitute_expr_values(fixed[var], free)
                body = For(var, value, Op("<=", (Var(var), value)), 1, body, pos, tags[pos])
        return body

    def _allocation_positions(self) -> dict[str, set[int]]:
        """Statement -> positions of the loops its buffers are allocated in (``allocate_at``)."""
        from spf.analysis.dependences import position_in

        out: dict[str, set[int]] = {}
        for b in self.ir.buffers:
            owner, level = b.allocation or ("", None)
            if level is None:  # not allocated in a loop (None: spf.ROOT)
                continue
            try:
                pos = position_in(self.ir.parsed_stmt(owner), level, self.ir.schedule_width)
            except SpfError:  # the loop is gone: lower() reports it
                continue
            spaces = {b.name} | {
                ds
                for ds in self.ir.data_space_table
                if (storage_of(self.ir, ds) or ("",))[0] == b.name
            }
            for s in self.ir.parsed_stmts:
                touched = {d for d, _ in (*s.record.reads, *s.record.writes)}
                outs = padded(s, self.width).out_vars
                if touched & spaces and pos < len(outs) and not is_constant(outs[pos]):
                    out.setdefault(s.name, set()).add(pos)
        return out


def substitute_expr_values(e: Expr, values: dict[str, Expr]) -> Expr:
    return map_expr(e, lambda x: values.get(x.name) if isinstance(x, Var) else None)


def is_loop_of_one(n: Node) -> bool:
    """A one-iteration loop ``for (v = e; v <= e; v++)`` (made by :meth:`Scanner._keep_loops`;
    isl never prints one)."""
    return isinstance(n, For) and n.step == 1 and n.cond == Op("<=", (Var(n.var), n.init))


def _same_loop_of_one(a: Node, b: Node) -> bool:
    return (
        isinstance(a, For)
        and isinstance(b, For)
        and is_loop_of_one(a)
        and is_loop_of_one(b)
        and (a.var, a.init, a.position) == (b.var, b.init, b.position)
    )


def hoist_kept_loops(n: Node) -> Node:
    """Lift the one-iteration loops of :meth:`Scanner._keep_loops` out of the loops of
    later positions, guards and bindings that do not use their variable, and merge neighbours
    with the same value, so the loop sits where isl would have put it. Each move is exact:
    a loop ``for (q = e; q <= e; q++)`` runs its body once, whatever encloses it."""
    if isinstance(n, Block):
        items: list[Node] = []
        for item in (hoist_kept_loops(i) for i in n.items):
            prev = items[-1] if items else None
            if isinstance(prev, For) and isinstance(item, For) and _same_loop_of_one(prev, item):
                tags = tuple(dict.fromkeys((*prev.tags, *item.tags)))
                items[-1] = replace(prev, body=_join(prev.body, item.body), tags=tags)
            else:
                items.append(item)
        return items[0] if len(items) == 1 and is_loop_of_one(items[0]) else Block(tuple(items))
    if isinstance(n, If):
        then = hoist_kept_loops(n.then)
        orelse = None if n.orelse is None else hoist_kept_loops(n.orelse)
        if (
            isinstance(then, For)
            and is_loop_of_one(then)
            and (orelse is None or _same_loop_of_one(then, orelse))
            and then.var not in set(expr_vars(n.cond))
        ):
            other = None if not isinstance(orelse, For) else orelse.body
            tags = then.tags if not isinstance(orelse, For) else (*then.tags, *orelse.tags)
            return replace(then, body=If(n.cond, then.body, other), tags=tuple(dict.fromkeys(tags)))
        return If(n.cond, then, orelse)
    if isinstance(n, (For, Bind)):
        body = hoist_kept_loops(n.body)
        outer = replace(n, body=body)
        if not (isinstance(body, For) and is_loop_of_one(body)):
            return outer
        if isinstance(n, For) and n.position <= body.position:
            return outer
        bound = {n.var}
        used: set[str] = set()
        for e in (n.init, n.cond) if isinstance(n, For) else n.args:
            used |= set(expr_vars(e))
        if body.var in used or bound & set(expr_vars(body.init)):
            return outer
        return replace(body, body=replace(n, body=body.body))
    return n


def _join(a: Node, b: Node) -> Node:
    left = a.items if isinstance(a, Block) else (a,)
    right = b.items if isinstance(b, Block) else (b,)
    return Block((*left, *right))


_SAME_IS = {"==": 1, "<=": 1, ">=": 1, "!=": 0, "<": 0, ">": 0}
"""A comparison of an expression with itself (isl's guard ``f_i == k`` with ``k`` fixed to
``f_i`` at a leaf): C compilers warn of a self-comparison (an error under ``-Werror``)."""


def _fold(e: Expr) -> Expr | None:
    """Constant folding (substituted outer values leave ``-(-1)``, ``2 * 0``, ``i == i``
    ...)."""
    if isinstance(e, Op) and e.op in _SAME_IS and e.args[0] == e.args[1]:
        return Int(_SAME_IS[e.op])
    if isinstance(e, Op) and e.op in ("&&", "||") and any(isinstance(a, Int) for a in e.args):
        unit = 1 if e.op == "&&" else 0
        if any(isinstance(a, Int) and a.value != unit for a in e.args):
            return Int(1 - unit)  # a 0 in a conjunction, a 1 in a disjunction
        rest = [a for a in e.args if not isinstance(a, Int)]
        return Int(unit) if not rest else rest[0] if len(rest) == 1 else Op(e.op, tuple(rest))
    if not isinstance(e, Op) or not all(isinstance(a, Int) for a in e.args):
        return None
    v = [a.value for a in e.args if isinstance(a, Int)]
    if e.op == "neg":
        return Int(-v[0])
    if e.op == "+":
        return Int(v[0] + v[1])
    if e.op == "-":
        return Int(v[0] - v[1])
    if e.op == "*":
        return Int(v[0] * v[1])
    return None


def _tags(stmt: ParsedStmt, width: int) -> dict[int, tuple[str, ...]]:
    """Tags of the statement's loops by padded schedule position."""
    outs = padded(stmt, width).out_vars
    out: dict[int, tuple[str, ...]] = {}
    for loop, tags in stmt.record.tags:
        if loop in outs:
            out[outs.index(loop)] = tuple(tags)
    return out


def _to_params(iset: isl.Set, first: int, names: Sequence[str]) -> isl.Set:
    """``iset`` with its set dimensions ``first .. first + len(names) - 1`` moved to the end
    of its parameters, named ``names``."""
    n = len(names)
    iset = iset.move_dims(DT.param, iset.dim(DT.param), DT.set, first, n)
    base = iset.dim(DT.param) - n
    for k, name in enumerate(names):
        iset = iset.set_dim_name(DT.param, base + k, name)
    return iset


def _param_fact(fact: isl.Set, var: str) -> isl.Set:
    return _to_params(fact, 0, [var]).params()


def _used_context(ctx: isl.Set, umap: isl.UnionMap) -> isl.Set:
    """``ctx`` with the parameters the statements' sets do not mention projected out (the
    exact integer projection: what they imply about the others stays). isl's AST build
    gists every loop bound and guard against its context, and a context over the whole
    scope (the row's bound UF values, their range facts) costs it more in each build than
    the constraints it holds on the sets' own parameters: the same loops, sorted SpGEMM's
    66 builds 125 ms -> 88 ms."""
    space = umap.get_space()
    used = {space.get_dim_name(DT.param, k) for k in range(space.dim(DT.param))}
    for k in reversed(range(ctx.dim(DT.param))):
        if ctx.get_dim_name(DT.param, k) not in used:
            ctx = ctx.project_out(DT.param, k, 1)
    return ctx


def _align_intersect(a: isl.Set, b: isl.Set) -> isl.Set:
    a = a.align_params(b.get_space())
    b = b.align_params(a.get_space())
    return a.intersect(b)


@dataclass(frozen=True)
class _Segment:
    """One isl AST build of :meth:`Scanner._segment`: schedule positions ``a .. b`` of
    segment ``seg`` (``last``: the innermost) and the statements of each group's label."""

    seg: int
    a: int
    b: int
    last: bool
    group_of: dict[str, list[str]]


def _common_constants(sets: list[isl.Set], start: int) -> dict[int, int]:
    """The positions from ``start`` where every one of ``sets`` holds one and the same
    integer (the 2d+1 schedules' constant positions, which order nothing in this build), with
    that value. isl's AST build carries each such position through all its projections and
    gists for nothing: the inner segment of BLIS's packed GEMM, eleven positions of which six
    are 0, took 1.4 s with them and 0.7 s without. A position where the sets differ orders
    them and stays, as does the first when an option names it (``start`` 1)."""
    values = [_fixed_values(s) for s in sets]
    out: dict[int, int] = {}
    for k in range(start, len(values[0])):
        first = values[0][k]
        if first is not None and all(v[k] == first for v in values[1:]):
            out[k] = first
    return out


def _fixed_values(iset: isl.Set) -> list[int | None]:
    """The value of each set dimension of ``iset`` where it is one integer, else None."""
    out: list[int | None] = []
    for k in range(iset.dim(DT.set)):
        val = iset.plain_get_val_if_fixed(DT.set, k)
        out.append(int(val.to_python()) if val.is_int() else None)
    return out


def _union(sets: list[isl.Set]) -> isl.Set:
    out = sets[0]
    for s in sets[1:]:
        out = out.align_params(s.get_space())
        out = out.union(s.align_params(out.get_space()))
    return out


def _overlapping_groups(
    sets: dict[str, isl.Set], owner: dict[str, str] | None = None
) -> list[list[str]]:
    """Statements whose projections overlap stay together (inner segments interleave them);
    with ``owner`` (piece label -> statement), so do the pieces of one statement."""
    groups: list[list[str]] = []
    by_owner: dict[str, list[str]] = {}
    for n in sets:
        if owner is None:
            groups.append([n])
        elif owner[n] in by_owner:
            by_owner[owner[n]].append(n)
        else:
            by_owner[owner[n]] = [n]
            groups.append(by_owner[owner[n]])
    merged = True
    while merged:
        merged = False
        for g1 in groups:
            for g2 in groups:
                if g1 is g2:
                    continue
                u1, u2 = _union([sets[x] for x in g1]), _union([sets[x] for x in g2])
                u1 = u1.align_params(u2.get_space())
                if not u1.intersect(u2.align_params(u1.get_space())).is_empty():
                    g1 += g2
                    groups.remove(g2)
                    merged = True
                    break
            if merged:
                break
    return groups


def _with_value_names(e: Aff, local: Sequence[str]) -> Aff:
    """``e`` with the symbols ``__u<k>`` renamed ``local[k]`` (the values' variables)."""
    syms = {x for x in e.symbols() if x.name[:3] == "__u"}
    return e.xreplace({x: Sym(local[int(x.name[3:])]).aff() for x in syms})


def _to_expr(e: Aff, local: Sequence[str]) -> Expr:
    """An expression (integers, symbols, +, *, floor, UF calls) -> loop AST expression, a
    sum's terms in sympy's order; ``__u<k>`` symbols refer to ``local[k]``."""

    def name(n: str) -> Expr:
        return Var(local[int(n[3:])]) if n.startswith("__u") else Var(n)

    return loop_expr(e, name, constant_last=False, what="expression")


def _text(e: Expr) -> str:
    if isinstance(e, Int):
        return str(e.value)
    if isinstance(e, Var):
        return e.name
    if isinstance(e, UFRead):
        return f"{e.uf}_{'_'.join(_text(a) for a in e.args)}"
    return "_".join(_text(a) for a in e.args)


# ------------------------------------------------------------ full and partial tiles
MAX_SEPARATED = 4
"""At most this many loops of one statement are separated (at most ``2**4`` pieces)."""

MIN_SEPARATED_EXTENT = 4
"""Tile and split loops of fewer iterations are not separated (a full tile of 2 or 3 gains
nothing from constant bounds and would double the code); vector and unrolled loops always
are (an unroll-and-jam register tile needs their constant trip counts)."""

_NOT_SEPARATED = frozenset({"gpu_block", "gpu_thread", "distribute"})
"""Statements with these tags keep one loop per position (grid and rank mappings)."""

_WHOLE = frozenset({"parallel", *_NOT_SEPARATED})
"""Loops that every piece of a statement runs inside (their positions are scan cuts)."""


def separable_loops(stmt: ParsedStmt) -> list[str]:
    """Loops of ``stmt`` whose full and partial parts codegen scans apart: the inner loops
    made by ``split``, ``tile`` and ``vectorize``, and both parts of such a loop split again
    (by name, from the trace and the tags).
    Statements mapped to GPU grids or MPI ranks are not separated."""
    from spf.schedule.commands import Split, Tile, Vectorize

    tags = stmt.tags
    if any(t.split("(", 1)[0] in _NOT_SEPARATED for ts in tags.values() for t in ts):
        return []
    names = [loop for loop, ts in tags.items() if any(t.startswith("vector(") for t in ts)]
    for e in stmt.ir.trace:
        cmd = e.command
        if e.stmt != stmt.name:
            continue
        if isinstance(cmd, Split):
            names += [cmd.outer, cmd.inner] if cmd.loop in names else [cmd.inner]
        elif isinstance(cmd, Tile):
            names += [o for loop, o in ((cmd.i, cmd.i0), (cmd.j, cmd.j0)) if loop in names]
            names += [cmd.i1, cmd.j1]
        elif isinstance(cmd, Vectorize) and isinstance(cmd.loop, str):
            inner = cmd.inner or f"{cmd.loop}1"
            names += [cmd.outer or f"{cmd.loop}0", inner] if cmd.loop in names else [inner]
    loops = stmt.loops
    return [n for n in dict.fromkeys(names) if n in loops]


def separate(stmt: ParsedStmt, scan: StmtScan, names: Sequence[str]) -> list[StmtScan]:
    """Split ``scan`` into full and partial pieces along its :func:`separable_loops`, from
    the innermost out: a loop is *full* where every value of its constant range ``lo..hi``
    occurs (under the same outer loop values) among the points already full in the loops
    inside it. Piece ``k`` is partial in the ``k``-th separated loop from the inside and
    full inside it; the last piece is full everywhere, so scanned apart its separated loops
    have constant bounds. A ``vector`` tag stays off the piece that is partial in the
    vector loop (the scalar remainder). Tile and split loops shorter than
    :data:`MIN_SEPARATED_EXTENT` stay whole unless unrolled, and so do statements whose
    domains use UFs."""
    if scan.needs:  # UF-bounded loops: the pieces would need UF values before they are bound
        return [scan]
    outs = padded(stmt, len(names)).out_vars
    positions = sorted(outs.index(n) for n in separable_loops(stmt))[-MAX_SEPARATED:]
    vector = {p for p, ts in scan.tags.items() if any(t.startswith("vector(") for t in ts)}
    unrolled = {p for p, ts in scan.tags.items() if any(t.startswith("unroll(") for t in ts)}
    short_ok = vector | unrolled  # a register tile needs constant trips however short
    pieces: list[tuple[isl.Set, int | None]] = []
    full = scan.iset
    for p in reversed(positions):
        bounds = _constant_range(full, p)
        if bounds is None or (
            p not in short_ok and bounds[1] - bounds[0] + 1 < MIN_SEPARATED_EXTENT
        ):
            continue
        inner = _full_part(full, p, bounds, names)
        partial = full.subtract(inner)
        if inner.is_empty() or partial.is_empty():
            continue
        pieces.append((partial.coalesce(), p))
        full = inner.coalesce()
    if not pieces:
        return [scan]
    out = []
    for k, (iset, mark) in enumerate([*pieces, (full, None)]):
        tags = {
            pos: tuple(t for t in ts if pos != mark or not t.startswith("vector("))
            for pos, ts in scan.tags.items()
        }
        out.append(replace(scan, iset=iset, tags=tags, label=f"{scan.name}#{k}"))
    return out


def _constant_range(iset: isl.Set, p: int) -> tuple[int, int] | None:
    """``(lo, hi)`` when dimension ``p`` takes values within constants (``lo < hi``)."""
    w = iset.dim(DT.set)
    one = iset.project_out(DT.set, p + 1, w - p - 1).project_out(DT.set, 0, p)
    n = one.dim(DT.param)
    one = one.move_dims(DT.set, 1, DT.param, 0, n).project_out(DT.set, 1, n)
    if one.is_empty() or not one.is_bounded():
        return None
    lo, hi = int(one.dim_min_val(0).to_python()), int(one.dim_max_val(0).to_python())
    return (lo, hi) if lo < hi else None


def _full_part(iset: isl.Set, p: int, bounds: tuple[int, int], names: Sequence[str]) -> isl.Set:
    """The points of ``iset`` whose outer values (dimensions before ``p``) see every value
    ``lo..hi`` of dimension ``p``."""
    lo, hi = bounds
    w = iset.dim(DT.set)
    upto = iset.project_out(DT.set, p + 1, w - p - 1)
    outer = upto.project_out(DT.set, p, 1)
    box = outer.insert_dims(DT.set, p, 1).set_dim_name(DT.set, p, names[p])
    space = box.get_space()
    low = isl.Constraint.inequality_alloc(space).set_coefficient_val(DT.set, p, 1)
    high = isl.Constraint.inequality_alloc(space).set_coefficient_val(DT.set, p, -1)
    box = box.add_constraint(low.set_constant_val(-lo)).add_constraint(high.set_constant_val(hi))
    missing = box.subtract(upto).project_out(DT.set, p, 1)
    full = outer.subtract(missing).insert_dims(DT.set, p, w - p)
    for k in range(p, w):
        full = full.set_dim_name(DT.set, k, names[k])
    return iset.intersect(full)

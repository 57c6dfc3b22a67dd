"""Memory-based dependences by relation algebra on UF-aware sets, and legality checks.

For every pair of accesses to one data space (at least one a write) the instances of the two
statements that touch the same element are joined with both schedules into one set over
``[x, y, t, t']``; one emptiness test per schedule position tells where the source runs
before the sink (``t`` and ``t'`` equal before position d, ``t[d] < t'[d]``). Emptiness uses
the UF axioms and declarations, so a nondecreasing ``rowptr`` proves CSR rows disjoint; when
UF equality cannot be decided the dependence is kept (sound). ``compute_flow`` is not used:
with UF values as dimensions it fails or misses dependences (measured against brute force).

Data layout (Layer III) adds memory-based dependences: when ``store_in``/``storage_fold``
puts different elements at one buffer location (folding, modulo, projection, a scalar, two
data spaces in one buffer), :mod:`spf.analysis.storage` adds the conflicts between their
accesses in the current schedule (a loop carrying one cannot run in parallel) and
``check_legality`` refuses a layout where a write overwrites a value before its last read.

Distributed memory (Layer IV): statements with a ``distribute`` loop run each iteration of it
on its own MPI rank with the rank's own arrays, so instances of two distributed statements on
different ranks never touch the same element; data moves between ranks only through
``send``/``receive`` operations, which are ordered on each rank like any statement.

Private memory: a ``shared`` buffer (and every data space stored in one) has one copy per gpu
block of a kernel launch, a ``local`` one per gpu thread (:func:`private_group`), a buffer
allocated inside a loop (``allocate_at``) one per iteration of it
(:func:`spf.analysis.storage.same_allocation`). ``dependences()`` relates only instances
that touch the same copy, so none is carried by the gpu loops (the allocation loop). That is
the GPU's meaning of the program when every read of such memory reads what its own copy
received earlier (``check_gpu_memory``, and ``check_storage`` for allocations); the
schedule must then still keep the order of the sequential program, in which each buffer is
one array: ``check_legality`` checks it against ``compute_dependences(private=False)``.
Within a gpu thread nest the threads run concurrently, which the ``gpu_thread`` tags claim
and the parallel-tag check proves; thread nests one after another in a block (and the
iterations of a sequential loop around them) are ordered by barriers (spf.codegen.cuda), as
their sequential schedule orders them.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from spf.analysis.memo import clear as clear_results
from spf.analysis.memo import remembered
from spf.errors import ArgumentError, IllegalScheduleError, UndeclaredError
from spf.ir.dependence import Dependence
from spf.ir.reading import (
    is_constant,
    iterator_names,
    order_width,
    placement_of,
    placement_relation,
    program_schedules,
    storage_of,
)
from spf.schedule.tags import kind as tag_kind
from spf.sets import Relation, Set
from spf.sets.memo import Table

if TYPE_CHECKING:
    from spf.ir import ComputationIR, OperationIR, StmtIR
    from spf.ir.reading import ParsedStmt, StmtReading
    from spf.sets.facts import Fact

KINDS = (("flow", "writes", "reads"), ("anti", "reads", "writes"), ("output", "writes", "writes"))


def padded(stmt: StmtReading, width: int, which: str = "current") -> Relation:
    """The statement's schedule with ``0`` appended up to ``width`` outputs."""
    sched = stmt.schedule if which == "current" else stmt.original_schedule
    return _padded(str(sched), tuple(sched._ufs.items()), sched, width)


# Relations are immutable: what the analysis derives from one is remembered, keyed by its
# text (names matter) and the relation itself (structure matter too), and a derived
# relation also by the UF declarations it carries (computations differ in them).
@functools.lru_cache(maxsize=4096)
def _padded(text: str, ufs: object, sched: Relation, width: int) -> Relation:
    return sched.pad_outputs(width)


@functools.lru_cache(maxsize=4096)
def _out_vars(text: str, rel: Relation) -> tuple[str, ...]:
    return rel.out_vars


def out_vars(rel: Relation) -> tuple[str, ...]:
    """``rel.out_vars``, remembered."""
    return _out_vars(str(rel), rel)


@functools.lru_cache(maxsize=4096)
def _function(text: str, rel: Relation, names: tuple[str, ...]) -> tuple[str, ...] | None:
    return rel.as_function(list(names))


_PAIRS: Table[object, Any] = Table(20_000)
"""The work of statement pairs (their dependences in program order, then ordered by the
current schedules) and legality verdicts, keyed by the values they depend on
(:func:`_context_key`, :func:`_pair_inputs`, the schedules' texts): any computation with
equal inputs reuses them, a copy of a computation (``serial_computation``, a wavefront's
executor before its rewrite) or the same one after a command that left them alone."""


def clear_remembered() -> None:
    """Forget what this module remembers across computations (derived from relations and
    statement pairs, and whole-computation results: :mod:`spf.analysis.memo`); for cold
    timings."""
    clear_results()
    for fn in (_padded, _out_vars, _function, _constraint_set):
        fn.cache_clear()
    _PAIRS.clear()


def function_of(rel: Relation, names: Sequence[str]) -> tuple[str, ...] | None:
    """``rel.as_function(names)``, remembered."""
    return _function(str(rel), rel, tuple(names))


def _generic(n: int) -> list[str]:
    return [f"a{k}" for k in range(n)]


def _constraint(names: list[str], conds: list[str]) -> Set:
    return _constraint_set(tuple(names), tuple(conds))


@functools.lru_cache(maxsize=4096)
def _constraint_set(names: tuple[str, ...], conds: tuple[str, ...]) -> Set:
    body = " && ".join(conds) if conds else "true"
    return Set(f"{{[{', '.join(names)}] : {body}}}")


def _project(s: Set, keep: list[int], names: list[str]) -> Set:
    src = _generic(s.arity)
    rel = Relation(f"{{[{', '.join(src)}] -> [{', '.join(src[k] for k in keep)}]}}")
    return _constraint(names, []).intersect(rel.apply(s))


def pair_names(src: StmtReading, snk: StmtReading) -> tuple[list[str], list[str]]:
    """Iterator names for the source instance and the sink instance (``i`` and ``ip``)."""
    xs = list(iterator_names(src.domain))
    taken = set(xs) | src.domain.params | snk.domain.params
    ys = []
    for n in iterator_names(snk.domain):
        new = n
        while new in taken:
            new += "p"
        taken.add(new)
        ys.append(new)
    return xs, ys


def same_element(
    src: StmtReading, a: Relation, snk: StmtReading, b: Relation, xs: list[str], ys: list[str]
) -> Set:
    """``{[x, y] : x in D_src, y in D_snk, a(x) = b(y)}``."""
    touch = b.inverse().compose(a).intersect_domain(src.domain).intersect_range(snk.domain)
    return _constraint(xs + ys, []).intersect(touch.as_set())


def empty(s: Set, facts: Sequence[Fact] = ()) -> bool:
    """``s.is_empty()``, using the computation's assumptions ``facts`` when there are any
    (verdicts shared by every equal set: :func:`spf.sets.facts.is_empty_under`)."""
    from spf.sets.facts import is_empty_under

    return is_empty_under(s, facts)


class _Timing:
    """Order conditions between instance pairs ``[x, y]`` under two schedules."""

    def __init__(
        self,
        th_s: Relation,
        th_t: Relation,
        xs: list[str],
        ys: list[str],
        facts: Sequence[Fact] = (),
    ) -> None:
        self.th_s, self.th_t, self.xs, self.ys = th_s, th_t, xs, ys
        self.facts = facts
        self.width = th_s.out_arity
        self.fs = function_of(th_s, xs)
        self.gs = function_of(th_t, ys)

    def level(self, pairs: Set, d: int, op: str) -> Set:
        """Pairs whose times agree before position ``d`` and compare with ``op`` at ``d``
        (``op`` ``"="``: agree everywhere)."""
        if self.fs is not None and self.gs is not None:
            upto = self.width if op == "=" else d
            # equal texts (the constants of a common loop nest) hold trivially: leaving
            # them out lets pairs of different nests share one parsed constraint set
            conds = [f"{f} = {g}" for f, g in zip(self.fs[:upto], self.gs[:upto], strict=True)
                     if f.strip() != g.strip()]  # fmt: skip
            fixed = self._constants(d) if op != "=" else None
            holds = fixed is not None and (
                fixed[0] < fixed[1] if op == "<" else fixed[0] > fixed[1]
            )
            if op != "=" and not holds:  # two constants in order compare trivially too
                conds.append(f"{self.fs[d]} {op} {self.gs[d]}")
            return pairs.intersect(_constraint(self.xs + self.ys, conds))
        return self._general_level(pairs, d, op)

    def _general_level(self, pairs: Set, d: int, op: str) -> Set:
        n, m, w = len(self.xs), len(self.ys), self.width
        j = pairs.product(self.th_s.as_set()).product(self.th_t.as_set())
        names = _generic(j.arity)
        t1, t2 = 2 * n + m, 2 * n + 2 * m + w
        conds = [f"a{k} = a{n + m + k}" for k in range(n)]
        conds += [f"a{n + k} = a{2 * n + m + w + k}" for k in range(m)]
        upto = w if op == "=" else d
        conds += [f"a{t1 + k} = a{t2 + k}" for k in range(upto)]
        if op != "=":
            conds.append(f"a{t1 + d} {op} a{t2 + d}")
        j = j.intersect(_constraint(names, conds))
        return _project(j, list(range(n + m)), self.xs + self.ys)

    def levels(self, pairs: Set, op: str, first: bool = False) -> list[tuple[int, Set]]:
        """The non-empty :meth:`level` pieces of ``pairs`` (``op``: ``<`` or ``>``), by
        position. Positions where both schedules are constants decide without a test: equal
        constants order nothing there, different ones order everything there and nothing
        later (the times must agree at earlier positions). ``first``: stop at the first."""
        out = []
        for d in range(self.width):
            fixed = self._constants(d)
            if fixed is not None and (fixed[0] == fixed[1] or (fixed[0] < fixed[1]) != (op == "<")):
                if fixed[0] == fixed[1]:
                    continue
                break
            piece = self.level(pairs, d, op)
            if not empty(piece, self.facts):
                out.append((d, piece))
                if first:
                    break
            if fixed is not None:
                break
        return out

    def tie(self, pairs: Set) -> Set | None:
        """The pairs of ``pairs`` whose times are equal at every position, when there are
        any (None: provably none; two constants that differ rule them out without a
        test)."""
        for d in range(self.width):
            fixed = self._constants(d)
            if fixed is not None and fixed[0] != fixed[1]:
                return None
        piece = self.level(pairs, 0, "=")
        return None if empty(piece, self.facts) else piece

    def never_before(self) -> bool:
        """Whether no source instance runs before any sink instance, decided from the
        constant positions alone: the first position where the two schedules differ holds
        two constants, the sink's the smaller, and only equal constants precede it."""
        for d in range(self.width):
            fixed = self._constants(d)
            if fixed is None:
                return False
            if fixed[0] != fixed[1]:
                return fixed[0] > fixed[1]
        return False

    def _constants(self, d: int) -> tuple[int, int] | None:
        """Both schedules' values at position ``d`` when both are integer constants."""
        if self.fs is None or self.gs is None:
            return None
        a, b = self.fs[d].strip(), self.gs[d].strip()
        if is_constant(a) and is_constant(b):
            return int(a), int(b)
        return None


def _loop_name(stmt: StmtReading, width: int, d: int, which: str = "current") -> str | None:
    outs = out_vars(padded(stmt, width, which))
    return None if is_constant(outs[d]) else outs[d]


def compute_dependences(ir: ComputationIR, *, private: bool = True) -> tuple[Dependence, ...]:
    """Every dependence of the computation ``ir`` (``comp.ir``). Memory with one copy per gpu block
    or thread (``shared``/``local``) or per iteration of the loop it is allocated in
    (``allocate_at``) carries no dependence between copies; ``private=False`` treats every data
    space and buffer as one array (the sequential program's view, which ``check_legality`` keeps).

    Remembered by ``ir.fingerprint`` (:mod:`spf.analysis.memo`: an equal computation, a
    clone, shares them); the work of each statement pair is remembered by the values it
    depends on (:func:`_pair_inputs`), so after a schedule change only the pairs of the
    statements it moved are ordered again."""
    return remembered(ir, ("dependences", private), lambda: _compute(ir, private))


def _compute(ir: ComputationIR, private: bool) -> tuple[Dependence, ...]:
    from spf.analysis.storage import storage_dependences
    from spf.progress import Progress

    width = order_width(ir)
    if width == 0:
        return ()
    stmts = ir.parsed_stmts
    scheds = {s.name: (padded(s, width, "original"), padded(s, width)) for s in stmts}
    context = _context_key(ir, width, private)
    records = _records(ir)
    memo = _PAIRS
    deps: list[Dependence] = []
    progress = Progress("dependences", len(stmts) ** 2, "statement pairs")
    spaces = {s.name: _touched(ir, s) for s in stmts}
    for k, (src, snk) in enumerate((a, b) for a in stmts for b in stmts):
        progress.step(k)
        (written_s, touched_s), (written_t, touched_t) = spaces[src.name], spaces[snk.name]
        if not (written_s & touched_t or touched_s & written_t):
            continue  # no common data space that one of them writes
        # statement order orders instances at one time (runs_first_at_ties)
        base = (context, _pair_inputs(records, src, snk), runs_first_at_ties(ir, src, snk))
        now = (str(scheds[src.name][1]), str(scheds[snk.name][1]))
        # tags (distribute, gpu) map instances to ranks and copies by the current schedule
        placed = dependence_tags(src) or dependence_tags(snk)
        rel_key = ("relations", *base, *(now if placed else ()))
        found = memo.get(rel_key)
        if found is None:
            found = memo.put(rel_key, _pair_relations(ir, src, snk, width, scheds, private))
        dep_key = ("ordered", *base, *now)
        ordered = memo.get(dep_key)
        if ordered is None:
            ordered = memo.put(dep_key, _pair_dependences(ir, src, snk, width, scheds, found))
        deps += ordered
    return (*deps, *storage_dependences(ir))


def _context_key(ir: ComputationIR, width: int, private: bool) -> object:
    """What every statement pair's dependences depend on besides the two statements: the
    schedule widths, and the UF declarations, assumptions, data spaces and data layout of
    ``ir`` (values of the IR, compared by content)."""
    return (
        width,
        ir.schedule_width,
        private,
        ir.ufs,
        ir.assumptions,
        ir.data_spaces,
        ir.buffers,
        ir.placements,
        ir.workspaces,
        # a buffer allocated in a loop: pairs depend on the allocating statement's schedule
        tuple(s.current_schedule for s in ir.stmts)
        if any(b.allocation is not None for b in ir.buffers) or ir.workspaces
        else (),
    )


def _records(ir: ComputationIR) -> dict[str, StmtIR | OperationIR]:
    """The statements and operations of ``ir`` by name."""
    found: dict[str, StmtIR | OperationIR] = {s.name: s for s in ir.stmts}
    found.update((o.name, o) for o in ir.operations)
    return found


def _pair_inputs(
    records: dict[str, StmtIR | OperationIR], src: ParsedStmt, snk: ParsedStmt
) -> object:
    """What the dependences from ``src`` to ``snk`` depend on besides the context and their
    current schedules: their IR records (names, sources, domains, accesses, program order:
    original schedules and Layer IV placements) but for the current schedules and tags,
    and the tags that decide which instances share memory (:func:`dependence_tags`)."""
    placed = program_schedules(src, snk)
    return (
        _stmt_inputs(records[src.name]),
        _stmt_inputs(records[snk.name]),
        None if placed is None else (str(placed[0]), str(placed[1])),
        dependence_tags(src),
        dependence_tags(snk),
    )


def _stmt_inputs(record: StmtIR | OperationIR) -> StmtIR | OperationIR:
    """``record`` without its current schedule and tags (keyed separately)."""
    return dataclasses.replace(record, current_schedule="", tags=())


_HOW_TO_RUN = frozenset(
    {
        "parallel",
        "reduction",
        "vector",
        "unroll",
        "sums",
        "pipeline",
        "wavefront",
        "wavefront_levels",
        "wavefront_rows",
        "wavefront_single",
        "wavefront_p2p",
        "wavefront_prefetch",
    }
)
"""Tags that only say how a loop runs (judged against the dependences by the legality
check); the others (``distribute``, ``gpu_block``, ``gpu_thread``, and any kind not listed)
decide which instances share memory, so the dependences depend on them."""


def dependence_tags(stmt: StmtReading) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The tags of ``stmt`` its dependences depend on, by loop (a memo key): tagging a loop
    ``parallel`` or ``wavefront`` leaves the dependences as they are."""
    out = []
    for loop, tags in sorted(stmt.tags.items()):
        kept = tuple(t for t in tags if tag_kind(t) not in _HOW_TO_RUN)
        if kept:
            out.append((loop, kept))
    return tuple(out)


def _spaces(ir: ComputationIR, accesses: tuple[tuple[str, str], ...]) -> set[str]:
    """Data spaces accessed, plus the buffers they are stored in."""
    out = set()
    for ds, _ in accesses:
        out.add(ds)
        where = storage_of(ir, ds)
        if where is not None:
            out.add(where[0])
    return out


def _touched(ir: ComputationIR, stmt: ParsedStmt) -> tuple[set[str], set[str]]:
    """The spaces ``stmt`` writes, and those it writes or reads (see :func:`_spaces`): read
    from its record, without parsing its accesses."""
    written = _spaces(ir, stmt.record.writes)
    return written, written | _spaces(ir, stmt.record.reads)


def match(
    ir: ComputationIR, ds: str, a: Relation, ds2: str, b: Relation
) -> tuple[str, Relation, Relation] | None:
    """The accesses ``a`` (of ``ds``) and ``b`` (of ``ds2``) on one space: the same data
    space, or a buffer accessed directly (a Layer IV operation) and a data space stored in
    it (then both as buffer accesses); None when they never meet logically."""
    if ds == ds2:
        return (ds, a, b) if a.out_arity == b.out_arity else None
    where, where2 = placement_of(ir, ds), placement_of(ir, ds2)
    if where is None and where2 is not None and where2.buffer == ds:
        pb = placement_relation(ir, where2).compose(b)
        return (ds, a, pb) if a.out_arity == pb.out_arity else None
    if where2 is None and where is not None and where.buffer == ds2:
        pa = placement_relation(ir, where).compose(a)
        return (ds2, pa, b) if pa.out_arity == b.out_arity else None
    return None


_Found = tuple[str, str, Set, tuple[int, ...]]
"""One dependence before ordering: kind, data space, instance pairs ``[x, y]`` and the
positions of the program order at which source and sink are ordered."""


def _order_schedules(
    src: ParsedStmt, snk: ParsedStmt, width: int, scheds: dict[str, tuple[Relation, Relation]]
) -> tuple[Relation, Relation]:
    """The schedules of the program order of the pair: the original ones, or where a Layer
    IV operation was placed."""
    placed = program_schedules(src, snk)
    if placed is None:
        return scheds[src.name][0], scheds[snk.name][0]
    return placed[0].pad_outputs(width), placed[1].pad_outputs(width)


def _pair_relations(
    ir: ComputationIR,
    src: ParsedStmt,
    snk: ParsedStmt,
    width: int,
    scheds: dict[str, tuple[Relation, Relation]],
    private: bool = True,
) -> tuple[_Found, ...]:
    """The dependences from ``src`` to ``snk`` in the program order (no current schedule
    involved unless a tag maps instances to ranks or gpu copies)."""
    from spf.analysis.private import same_copy
    from spf.analysis.storage import same_allocation, same_workspace_iteration

    xs, ys = pair_names(src, snk)
    facts = ir.facts
    orig_s, orig_t = _order_schedules(src, snk, width, scheds)
    orig = _Timing(orig_s, orig_t, xs, ys, facts)
    if orig.never_before():
        return ()  # e.g. the sink's loop nest comes first: no access pair to compare
    tied = runs_first_at_ties(ir, src, snk)
    touching: dict[tuple[int, int, int, int], Set] = {}
    out: list[_Found] = []
    for kind, src_kind, snk_kind in KINDS:
        found: dict[str, tuple[list[Set], set[int]]] = {}
        for a_idx, (ds_a, a_rel) in enumerate(getattr(src, src_kind)):
            for b_idx, (ds_b, b_rel) in enumerate(getattr(snk, snk_kind)):
                matched = match(ir, ds_a, a_rel, ds_b, b_rel)
                if matched is None:
                    continue
                ds, a, b = matched
                key = (KIND_INDEX[src_kind], a_idx, KIND_INDEX[snk_kind], b_idx)
                if key not in touching:
                    pairs = same_element(src, a, snk, b, xs, ys)
                    if private:
                        pairs = same_rank(ir, src, snk, pairs, xs, ys, ds)
                        pairs = same_allocation(ir, ds, src, snk, pairs, xs, ys)
                    else:
                        pairs = same_rank(ir, src, snk, pairs, xs, ys)
                    pairs = same_workspace_iteration(ir, ds, src, snk, pairs, xs, ys)
                    pairs = same_copy(ir, ds, pairs, xs, ys, (orig_s, orig_t))
                    touching[key] = pairs
                # the pieces are tested as they are: testing the whole relation first
                # costs a search for a model when it is not empty (most are), and an
                # empty relation has empty pieces (measured: 30% fewer isl samples)
                pieces = _ordered_pieces(orig, touching[key], tied)
                if not pieces:
                    continue
                parts, levels = found.setdefault(ds, ([], set()))
                parts.extend(p for _, p in pieces)  # united once, below
                levels.update(d for d, _ in pieces if d is not None)
        for ds, (parts, levels) in sorted(found.items()):
            out.append((kind, ds, parts[0].union_all(parts[1:]), tuple(sorted(levels))))
    return tuple(out)


def runs_first_at_ties(ir: ComputationIR, src: StmtReading, snk: StmtReading) -> bool:
    """Whether instances of ``src`` run before those of ``snk`` at equal times: two
    statements whose schedules put instances at one time run them in statement order (the
    interpreter, and the generated code, whose scan breaks such ties the same way)."""
    if src.name == snk.name:
        return False
    order = [st.name for st in ir.parsed_stmts]
    return order.index(src.name) < order.index(snk.name)


def _ordered_pieces(orig: _Timing, pairs: Set, tied: bool) -> list[tuple[int | None, Set]]:
    """The pieces of ``pairs`` where the source runs first in the program order: by the
    schedule position ordering them, and (``tied``: the source's statement comes first in
    statement order, :func:`runs_first_at_ties`) at equal times, with no position (None): a
    loop-independent dependence that a schedule moving the sink before the source (or the
    source after the sink) breaks."""
    pieces: list[tuple[int | None, Set]] = list(orig.levels(pairs, "<"))
    if tied:
        tie = orig.tie(pairs)
        pieces += [] if tie is None else [(None, tie)]
    return pieces


def _pair_dependences(
    ir: ComputationIR,
    src: ParsedStmt,
    snk: ParsedStmt,
    width: int,
    scheds: dict[str, tuple[Relation, Relation]],
    found: tuple[_Found, ...],
) -> tuple[Dependence, ...]:
    """The dependences ``found`` in program order, ordered by the current schedules (the
    loops that carry them now)."""
    xs, ys = pair_names(src, snk)
    orig_s, orig_t = _order_schedules(src, snk, width, scheds)
    cur = _Timing(scheds[src.name][1], scheds[snk.name][1], xs, ys, ir.facts)
    moved = cur.th_s != orig_s or cur.th_t != orig_t
    out = []
    for kind, ds, pairs, orig_levels in found:
        orig_outs = [out_vars(orig_s)[d] for d in orig_levels]
        orig_names = [None if is_constant(n) else n for n in orig_outs]
        levels = set(orig_levels)
        if moved:
            levels = {d for d, _ in cur.levels(pairs, "<")}
        names = [_loop_name(src, width, d) for d in sorted(levels)]
        out.append(
            Dependence(
                kind=kind,
                source=src.name,
                sink=snk.name,
                data_space=ds,
                relation=pairs.as_relation(len(xs)),
                carried_by=tuple(n for n in names if n is not None),
                levels=tuple(sorted(levels)),
                original_carried_by=tuple(n for n in orig_names if n is not None),
            )
        )
    return tuple(out)


KIND_INDEX = {"reads": 0, "writes": 1}


def rank_of(ir: ComputationIR, stmt: StmtReading, names: list[str]) -> str | None:
    """The rank that runs an instance (the value of the statement's ``distribute`` loop as an
    expression of ``names``), or None when no loop of it is distributed."""
    for loop, tags in stmt.tags.items():
        if "distribute" in tags:
            pos = position_in(stmt, loop, ir.schedule_width)
            exprs = function_of(padded(stmt, ir.schedule_width), names)
            return None if exprs is None else exprs[pos]
    return None


def same_rank(
    ir: ComputationIR,
    src: StmtReading,
    snk: StmtReading,
    pairs: Set,
    xs: list[str],
    ys: list[str],
    space: str | None = None,
) -> Set:
    """Distributed memory: when both statements are distributed over ranks, each rank works
    on its own arrays, so only instances on the same rank can touch the same element (data
    moves between ranks only by ``send``/``receive``). GPU memory (``space``, the data space
    or buffer touched, given): a ``shared`` buffer is private to each block of a kernel launch
    and a ``local`` one to each thread, so when both statements run in the same gpu loops
    only instances of one :func:`private_group` touch the same element."""
    r1, r2 = rank_of(ir, src, xs), rank_of(ir, snk, ys)
    if r1 is not None and r2 is not None:
        pairs = pairs.intersect(_constraint(xs + ys, [f"{r1} = {r2}"]))
    if space is None:
        return pairs
    scope = gpu_scope(ir, space)
    g1, g2 = private_group(ir, src, scope, xs), private_group(ir, snk, scope, ys)
    if g1 is None or g2 is None or len(g1) != len(g2):
        return pairs  # not both in gpu loops alike: one array (sound)
    return pairs.intersect(
        _constraint(xs + ys, [f"{a} = {b}" for a, b in zip(g1, g2, strict=True)])
    )


def gpu_scope(ir: ComputationIR, space: str) -> str:
    """The memory scope of a data space (that of its buffer) or of a buffer."""
    buffers = {b.name: b for b in ir.buffers}
    if space in buffers:
        return buffers[space].scope
    where = storage_of(ir, space)
    return buffers[where[0]].scope if where is not None and where[0] in buffers else "global"


def private_group(
    ir: ComputationIR, stmt: StmtReading, scope: str, names: list[str]
) -> list[str] | None:
    """Which copy of a ``shared`` (``local``) buffer an instance of ``stmt`` touches: its
    schedule values up to its last ``gpu_block`` (``gpu_thread``) loop, as expressions of
    ``names`` (the kernel launch and the block, and the thread nest iteration and the
    thread). Instances of one group are consecutive in the schedule. None for other scopes,
    statements outside gpu loops, and schedules that are not functions."""
    from spf.schedule.tags import gpu_loops

    kinds = {"shared": ("gpu_block",), "local": ("gpu_block", "gpu_thread")}.get(scope)
    if kinds is None:
        return None
    positions = []
    for which in kinds:
        loops = gpu_loops(stmt.tags, which)
        if not loops:
            return None
        positions += [position_in(stmt, loop, ir.schedule_width) for _, loop in loops]
    exprs = function_of(padded(stmt, ir.schedule_width), names)
    return None if exprs is None else list(exprs[: max(positions) + 1])


def violation(ir: ComputationIR, dep: Dependence) -> str | None:
    """Why the current schedule breaks ``dep`` (None when it does not)."""
    width = ir.schedule_width
    src, snk = ir.parsed_stmt(dep.source), ir.parsed_stmt(dep.sink)
    xs, ys = pair_names(src, snk)
    facts = ir.facts
    cur = _Timing(padded(src, width), padded(snk, width), xs, ys, facts)
    pairs = _constraint(xs + ys, []).intersect(dep.relation.as_set())
    for d, _ in cur.levels(pairs, ">", first=True):
        loop = _loop_name(src, width, d)
        where = f"across loop {loop!r}" if loop else f"at schedule position {d}"
        return f"the sink would run before the source {where}"
    if runs_first_at_ties(ir, src, snk):
        return None  # at equal times the source runs first, in statement order
    if not empty(cur.level(pairs, 0, "="), facts):
        if src.name == snk.name:
            return "source and sink would run at the same time (the schedule is not injective)"
        return (
            "source and sink would run at the same time, where the sink's statement comes "
            "first (instances at one time run in statement order)"
        )
    return None


_PARALLEL_TAGS = frozenset({"parallel", "vector", "distribute", "gpu_block", "gpu_thread"})
"""Tags whose loop must carry no dependence (its iterations run concurrently)."""


def check_legality(ir: ComputationIR, *, waive: Callable[[Dependence], bool] | None = None) -> None:
    """For the computation ``ir`` (``comp.ir``): raise ``IllegalScheduleError`` for a parallel tag
    on a loop that carries a dependence, a gpu memory use the schedule cannot express, a dependence
    the current schedule breaks or a layout that overwrites a live value. The dependences are
    computed only when one of these needs them: a computation with no such tag whose statements all
    still run in program order (an inspector, the executor of a wavefront) breaks none. A dependence
    between two statements of one wavefront loop is ordered by its inspector at run time (kernels
    fused into the loop), and ``waive`` names more that are not checked."""
    from spf.analysis.private import check_private

    check_private(ir)
    _check_parallel_tags(ir)
    check_gpu_memory(ir)
    if not _all_in_program_order(ir):
        # the schedule must keep the sequential program's meaning with shared/local buffers
        # as one array; the gpu loops then run it with one copy per block/thread
        private = not _uses_private_memory(ir)
        _check_order(ir, compute_dependences(ir, private=private), waive)
    from spf.analysis.storage import check_storage

    check_storage(ir)


def _check_parallel_tags(ir: ComputationIR) -> None:
    """A loop tagged to run its iterations concurrently carries no dependence (reduction
    loops are :mod:`spf.analysis.reductions`' part)."""
    from spf.analysis.private import shared_buffer_hint, shared_scalar_hint
    from spf.schedule.trace import blame_in

    for stmt in ir.parsed_stmts:
        for loop, tags in stmt.tags.items():
            parallel = any(tag_kind(t) in _PARALLEL_TAGS for t in tags)
            reduction = any(t.startswith("reduction(") for t in tags)
            if not parallel or reduction or carries_nothing(ir, stmt, loop):
                continue
            deps = compute_dependences(ir)  # remembered: computed once
            if not _parallel_ok(ir, stmt, loop, deps):
                at = position_in(stmt, loop, ir.schedule_width)
                carried = [d for d in deps if at in d.levels]
                carried.sort(key=lambda d: not shared_scalar_hint(ir, d.data_space, loop))
                raise IllegalScheduleError(
                    f"illegal tag: loop {loop!r} of {stmt.name} cannot run in parallel "
                    f"({', '.join(tags)}): "
                    f"{carried[0]}"
                    + shared_scalar_hint(ir, carried[0].data_space, loop, carried[0])
                    + shared_buffer_hint(ir, carried[0].data_space, loop, stmt.name)
                    + blame_in(ir.trace, [stmt.name], loop)
                )


def run_time_ordered(ir: ComputationIR, dep: Dependence) -> bool:
    """Whether the inspector of a wavefront loop orders ``dep``, which the static schedule
    breaks: its ends run in the loop and belong to different kernels fused into it (the
    inspector orders the kernels' rows between them). Within one kernel the inspector only
    orders rows and keeps the schedule's order inside a row, so a dependence the schedule
    breaks there (a fission that reorders a row's statements) stays illegal."""
    from spf.analysis.executor import wavefront_stmts
    from spf.analysis.inspector import kernel_groups

    src, snk = ir.parsed_stmt(dep.source), ir.parsed_stmt(dep.sink)
    for s in (src, snk):
        if not s.loops or not any(t.startswith("wavefront(") for t in s.tags.get(s.loops[0], ())):
            return False
    members = wavefront_stmts(ir, src.loops[0])
    if snk.name not in {s.name for s in members}:
        return False
    groups = kernel_groups(members)
    return groups.get(src.name) != groups.get(snk.name)


def wavefront_could_order(ir: ComputationIR, dep: Dependence) -> str | None:
    """The loop whose wavefront would order ``dep`` when a fusion broke it: its ends were
    separate loop nests in program order, share their outermost loop now, and that loop's
    statements go through index arrays (None otherwise)."""
    from spf.analysis.inspector import kernel_groups, wavefront_members

    src, snk = ir.parsed_stmt(dep.source), ir.parsed_stmt(dep.sink)
    if not (src.loops and snk.loops) or len(set(kernel_groups([src, snk]).values())) == 1:
        return None  # the same loop nest in program order: not a fusion
    members = wavefront_members(ir, src.loops[0])
    sparse = any("(" in str(s.domain) for s in members)
    return src.loops[0] if sparse and snk.name in {s.name for s in members} else None


def splits_kernel(ir: ComputationIR, dep: Dependence) -> bool:
    """Whether ``dep`` goes between statements of one loop nest of the program order (a
    kernel) that now run in different loop nests, index arrays in their loops: a fusion
    of the kernel into another's loop that is not finished (``comp.fuse`` moves one
    statement at a time)."""
    from spf.analysis.inspector import nest_of

    src, snk = ir.parsed_stmt(dep.source), ir.parsed_stmt(dep.sink)
    if not (src.loops and snk.loops):
        return False
    if nest_of(src, original=True) != nest_of(snk, original=True):
        return False
    sparse = any("(" in str(s.domain) for s in (src, snk))
    return sparse and nest_of(src) != nest_of(snk)


def carries_nothing(ir: ComputationIR, stmt: StmtReading, loop: str | int) -> bool:
    """A sufficient test, cheaper than :func:`compute_dependences`, that ``loop`` of
    ``stmt`` (a statement of ``ir``) carries no
    dependence (True: it carries none; False: not decided). Only a dependence between two
    statements both inside the loop can be carried by it, and none through a workspace of
    that very loop (each iteration has its own,
    :func:`spf.analysis.storage.same_workspace_iteration`): the other pairs are ordered in
    program order as :func:`_compute` orders them (their work is shared with it), where
    every statement still runs in program order, without layout placements or private
    memory. A sparse output's phases (a row loop with a dozen statements on row workspaces)
    are proved parallel from one or two pairs instead of every pair at every level."""
    from spf.analysis.storage import _in_loop

    width = order_width(ir)
    if width == 0 or ir.placements or _uses_private_memory(ir):
        return False
    if not _all_in_program_order(ir):
        return False
    d = position_in(stmt, loop, ir.schedule_width)
    inside = [s for s in ir.parsed_stmts if s.name == stmt.name or _in_loop(ir, s, stmt, d)]
    owners = {w.name: (ir.parsed_stmt(w.stmt), w.loop) for w in ir.workspaces}
    own = {
        ws
        for ws, (owner, at) in owners.items()
        if position_in(owner, at, ir.schedule_width) == d
        and (owner.name == stmt.name or _in_loop(ir, owner, stmt, d))
    }
    scheds = {s.name: (padded(s, width, "original"), padded(s, width)) for s in ir.parsed_stmts}
    context = _context_key(ir, width, True)
    records = _records(ir)
    spaces = {s.name: _touched(ir, s) for s in inside}
    for src in inside:
        for snk in inside:
            (written_s, touched_s), (written_t, touched_t) = spaces[src.name], spaces[snk.name]
            if not ((written_s & touched_t) | (touched_s & written_t)) - own:
                continue  # only this loop's own workspaces in common (or nothing)
            now = (str(scheds[src.name][1]), str(scheds[snk.name][1]))
            placed = dependence_tags(src) or dependence_tags(snk)
            inputs = _pair_inputs(records, src, snk)
            key = ("relations", context, inputs, *(now if placed else ()))
            found = _PAIRS.get(key)
            if found is None:
                found = _PAIRS.put(key, _pair_relations(ir, src, snk, width, scheds, True))
            if any(d in levels for _, _, _, levels in found):
                return False
    return True


def _check_order(
    ir: ComputationIR,
    deps: Sequence[Dependence],
    waive: Callable[[Dependence], bool] | None = None,
) -> None:
    """Raise for the first of ``deps`` the current schedule breaks."""
    from spf.analysis.private import shared_scalar_hint
    from spf.progress import Progress
    from spf.schedule.trace import blame_in

    context = _violation_context(ir)
    progress = Progress("legality", len(deps), "dependences")
    for k, dep in enumerate(deps):
        progress.step(k)
        if dep.storage:
            continue  # ordered by the current schedule: never violated
        why = _remembered_violation(ir, dep, context)
        if why is None:
            continue
        if run_time_ordered(ir, dep) or (waive and waive(dep)):
            continue
        loop = wavefront_could_order(ir, dep)
        if loop is not None:
            why += (
                f" (the kernels fused into loop {loop!r} need it to run as a wavefront: "
                f"comp.wavefront({loop!r}) orders this dependence at run time)"
            )
        elif splits_kernel(ir, dep):
            why += (
                f" ({dep.source} and {dep.sink} ran in one loop nest and now run in two: "
                "fuse the rest of that kernel into the same loop, one comp.fuse per "
                "statement, then run the loop as a wavefront)"
            )
        raise IllegalScheduleError(
            f"illegal schedule: the {dep.kind} dependence on {dep.data_space!r} from "
            f"{dep.source} to {dep.sink} (carried by "
            f"{', '.join(dep.original_carried_by) or 'no loop'} in program order): {why}; "
            f"relation {dep.relation}"
            + shared_scalar_hint(ir, dep.data_space, _violated_loop(why) or "", dep)
            + blame_in(ir.trace, [dep.source, dep.sink], _violated_loop(why))
        )


def broken_until_run_time(ir: ComputationIR) -> Dependence | None:
    """The first dependence the static schedule of ``ir`` breaks that only a wavefront's
    inspector orders (kernels fused into one loop: :func:`run_time_ordered`, or a fusion
    ``comp.fuse`` keeps for a wavefront still to come), None when there is none. The
    reference interpreter, which runs the schedule's order, refuses such a computation."""
    if _all_in_program_order(ir) or not any("(" in str(s.domain) for s in ir.parsed_stmts):
        return None  # such fusions go through index arrays
    deps = compute_dependences(ir, private=not _uses_private_memory(ir))
    context = _violation_context(ir)
    for dep in deps:
        if dep.storage or _remembered_violation(ir, dep, context) is None:
            continue
        if run_time_ordered(ir, dep) or wavefront_could_order(ir, dep) or splits_kernel(ir, dep):
            return dep
    return None


def _violation_context(ir: ComputationIR) -> object:
    """What every :func:`violation` depends on besides the dependence and its statements."""
    return ("violation", ir.schedule_width, ir.assumptions, ir.ufs)


def _remembered_violation(ir: ComputationIR, dep: Dependence, context: object) -> str | None:
    """:func:`violation`, remembered by its inputs: the dependence and the domains and
    current schedules of its two statements (a schedule change re-checks only the
    dependences of the statements it moved)."""
    from spf.ir.keys import value_key

    src, snk = ir.parsed_stmt(dep.source), ir.parsed_stmt(dep.sink)
    if _in_program_order(ir, src, snk):
        return None  # nothing to check, and no key to build (it prints the relation)
    width = ir.schedule_width
    key = (
        context,
        value_key(dep),
        value_key(src.domain),
        value_key(snk.domain),
        str(padded(src, width)),
        str(padded(snk, width)),
    )
    memo = _PAIRS
    found: tuple[str | None] | None = memo.get(key)
    if found is None:
        found = memo.put(key, (violation(ir, dep),))
    return found[0]


def _in_program_order(ir: ComputationIR, src: ParsedStmt, snk: ParsedStmt) -> bool:
    """Whether both statements still run in the order their dependences were found in (then
    every source instance runs before its sink: nothing to check)."""
    width = order_width(ir)
    scheds = {s.name: (padded(s, width, "original"), padded(s, width)) for s in (src, snk)}
    orig_s, orig_t = _order_schedules(src, snk, width, scheds)
    return scheds[src.name][1] == orig_s and scheds[snk.name][1] == orig_t


def _all_in_program_order(ir: ComputationIR) -> bool:
    """Whether every pair of statements still runs in the order its dependences were found
    in (:func:`_in_program_order`): then no dependence can be broken."""
    stmts = ir.parsed_stmts
    if any(o.placement is not None for o in ir.operations):
        return all(_in_program_order(ir, a, b) for a in stmts for b in stmts)
    width = order_width(ir)
    return all(padded(s, width) == padded(s, width, "original") for s in stmts)


def _uses_private_memory(ir: ComputationIR) -> bool:
    """Whether a buffer is allocated inside a loop or a statement in gpu loops touches
    ``shared``/``local`` memory (one copy per allocation, block or thread)."""
    from spf.schedule.tags import gpu_loops

    if any(b.allocation is not None for b in ir.buffers):
        return True
    return any(
        gpu_scope(ir, ds) in ("shared", "local")
        for s in ir.parsed_stmts
        if gpu_loops(s.tags, "gpu_block")
        for ds, _ in (*s.reads, *s.writes)
    )


def check_gpu_memory(ir: ComputationIR) -> None:
    """GPU memory the sequential schedule cannot express: no kernel writes ``constant``
    memory, and every read of ``shared`` (``local``) memory in a kernel reads what an earlier
    instance of its own :func:`private_group` wrote there. Group instances are consecutive in
    the schedule, so that write is the last one before the read in the sequential program
    too, and the private copy the GPU reads holds the same value."""
    from spf.schedule.tags import gpu_loops

    for stmt in ir.parsed_stmts:
        if not gpu_loops(stmt.tags, "gpu_block"):
            continue
        for ds, _ in stmt.writes:
            if gpu_scope(ir, ds) == "constant":
                raise IllegalScheduleError(
                    f"illegal gpu mapping: {stmt.name} runs in gpu loops and writes {ds!r}, "
                    "which lives in constant memory (read-only in kernels); write it in a "
                    "host statement or use a 'global' buffer"
                )
        for ds, rel in stmt.reads:
            scope = gpu_scope(ir, ds)
            if scope in ("shared", "local") and not _covered(ir, stmt, ds, rel, scope):
                who = "block" if scope == "shared" else "thread"
                raise IllegalScheduleError(
                    f"illegal gpu mapping: {stmt.name} reads {ds!r} ({scope} memory, one copy "
                    f"per gpu {who}) where no earlier instance of the same {who} "
                    f"{'in the same kernel' if scope == 'shared' else 'and thread nest'} "
                    "wrote it, so the GPU would not read what the loops mean; write the "
                    f"element in that {who} before reading it (e.g. in an earlier thread nest "
                    "of the kernel), or use a 'global' buffer"
                )


def _covered(ir: ComputationIR, reader: ParsedStmt, ds: str, read: Relation, scope: str) -> bool:
    """Whether every instance of ``reader`` reads an element of ``ds`` that an earlier
    instance of its private group wrote (current schedule)."""
    width = ir.schedule_width
    names = list(iterator_names(reader.domain))
    covered = _constraint(names, ["1 = 0"])
    for writer in ir.parsed_stmts:
        for ds2, write in writer.writes:
            if ds2 != ds or write.out_arity != read.out_arity:
                continue
            xs, ys = pair_names(writer, reader)
            g1 = private_group(ir, writer, scope, xs)
            g2 = private_group(ir, reader, scope, ys)
            if g1 is None or g2 is None or len(g1) != len(g2):
                continue
            pairs = same_element(writer, write, reader, read, xs, ys).intersect(
                _constraint(xs + ys, [f"{a} = {b}" for a, b in zip(g1, g2, strict=True)])
            )
            timing = _Timing(padded(writer, width), padded(reader, width), xs, ys)
            for _, piece in timing.levels(pairs, "<"):
                found = _project(piece, list(range(len(xs), len(xs) + len(ys))), names)
                covered = covered.union(found)
    return _constraint(names, []).intersect(reader.domain).is_subset(covered)


def _violated_loop(why: str) -> str | None:
    """The loop a :func:`violation` message names (``across loop 'j0'``), if any."""
    found = re.search(r"loop '([^']+)'", why)
    return found.group(1) if found else None


def position_in(stmt: StmtReading, loop: str | int, width: int) -> int:
    """Position of ``loop`` (a loop name or a depth) in ``stmt``'s schedule padded to
    ``width``."""
    outs = out_vars(padded(stmt, width))
    positions = [k for k, v in enumerate(outs) if not is_constant(v)]
    if isinstance(loop, int) and not isinstance(loop, bool):
        if 0 <= loop < len(positions):
            return positions[loop]
        raise UndeclaredError(
            "loop",
            str(loop),
            [outs[k] for k in positions],
            hint=f"statement {stmt.name} has {len(positions)} loop(s)",
        )
    if not isinstance(loop, str):
        raise ArgumentError(f"a loop is named by its name or depth, got {loop!r}")
    for k in positions:
        if outs[k] == loop:
            return k
    raise UndeclaredError("loop", loop, [outs[k] for k in positions], hint=f"of {stmt.name}")


def is_parallel_legal(ir: ComputationIR, stmt: str, loop: str | int) -> bool:
    """Whether ``loop`` of statement ``stmt`` of the computation ``ir`` carries no
    dependence between statements that share it."""
    return _parallel_ok(ir, ir.parsed_stmt(stmt), loop, compute_dependences(ir))


def _parallel_ok(
    ir: ComputationIR, stmt: StmtReading, loop: str | int, deps: Sequence[Dependence]
) -> bool:
    width = ir.schedule_width
    d = position_in(stmt, loop, width)
    mine = out_vars(padded(stmt, width))
    for dep in deps:
        if d not in dep.levels:
            continue
        other = out_vars(padded(ir.parsed_stmt(dep.source), width))
        shares = all(
            not (is_constant(mine[k]) and is_constant(other[k])) or mine[k] == other[k]
            for k in range(d)
        )
        if shares:
            return False
    return True

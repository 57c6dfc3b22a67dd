"""Inspector synthesis for wavefront loops: dependences -> inspector Computations.

A loop whose carried dependences go through index arrays (SpTRSV's row loop: row ``i'``
reads ``u(col(k))`` that row ``col(k) < i'`` wrote) cannot be proved parallel at compile
time. :func:`analyze_wavefront` takes every dependence the loop carries, keeps the part that
goes from iteration ``i`` to a later iteration ``i'`` (dropping the relations the UF
properties and ``assume`` facts prove empty) and turns it into an edge the inspector can
enumerate:

- **pull form**: projected onto (sink instance -> source ``i``), ``i`` a term of the sink's
  iterators (``i = col(k)``): read off the relation, or discovered by proving ``i < t`` and
  ``i > t`` empty under the facts for a term ``t`` of the sink's domain (ILU(0): the entry
  ``diag(col(k))`` a row updates lies in row ``col(k)``, and rows do not overlap);
- **push form**, when the source is not such a term: projected onto (source instance ->
  sink ``i'``), ``i'`` a term of the source's iterators (Gauss-Seidel's anti dependence:
  row ``i`` reads the old ``x(j)``, ``j = col(k) > i``, which row ``j`` overwrites).

A dependence that is neither is refused with ``IllegalScheduleError`` naming it. Edges
equal to or contained in another one of the same form are dropped.

:func:`build_inspector` turns the result into a Computation of its own: ``level`` starts at
0; then one pass over the iterations ``i`` in increasing order runs, for each ``i``, first
the pull edges whose sink is ``i`` (``level(i) = max(level(i), level(src) + 1)``), then the
push edges whose source is ``i`` (``level(snk) = max(level(snk), level(i) + 1)``, a
scatter); finally ``nlevels``, the number of levels. O(iterations + dependences).

Why this gives every dependence ``src -> snk`` (``src < snk``) ``level(snk) > level(src)``:
by induction on ``i``, ``level(i)`` is final once its pull statements have run. Every raise
of ``level(i)`` comes from a pull edge into ``i`` (run at ``i``) or a push edge from some
``src < i`` (run at ``src``, before ``i``); both read ``level(src)`` with ``src < i``, final
by then (a push from ``src`` runs after ``src``'s pulls). So each edge's update reads the
final level of its source and raises its sink, whose level only grows afterwards.

:func:`build_level_sort` builds the counting sort that follows it, as two more
Computations that read the previous stage's output as a UF (as an executor does): the level
sizes and their prefix sum ``levelptr``, each iteration's ``slot``, and the level-ordered
iteration list ``order``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from spf.errors import IllegalScheduleError, InternalError, ScheduleError, VerifyError
from spf.ir import build
from spf.ir.reading import StmtReading, iterator_names
from spf.schedule.relations import loops_of
from spf.sets import Relation, Set
from spf.sets.facts import Fact, is_empty_under
from spf.sets.memo import Table

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import ParsedStmt


class Dependence(Protocol):
    """What the synthesis reads of a dependence (``Computation.dependences()`` items)."""

    @property
    def kind(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def sink(self) -> str: ...
    @property
    def data_space(self) -> str: ...
    @property
    def relation(self) -> Relation: ...
    @property
    def levels(self) -> tuple[int, ...]: ...
    @property
    def storage(self) -> bool: ...


LEVEL = "level"
NLEVELS = "nlevels"


@dataclass(frozen=True)
class CarriedEdge:
    """One kept dependence as the inspector enumerates it: the instances ``relation.domain()``
    of statement ``stmt`` (over ``iterators``; ``loop_var`` is its wavefront iterator) and,
    for each, the iteration ``other`` (a term of ``iterators``) at the other end. Pull form
    (``push=False``): ``stmt`` is the dependence's sink and ``other`` its source iteration,
    an earlier one. Push form: ``stmt`` is the source and ``other`` the sink iteration, a
    later one."""

    dependence: Dependence
    stmt: str
    iterators: tuple[str, ...]
    loop_var: str
    other: str
    relation: Relation
    """``stmt``'s instance -> the other end's iteration (the projected, carried part)."""
    instances: Set
    """The instances the inspector enumerates: ``relation.domain()``, or where that needs
    existential variables, the statement's instances whose other end lies on the carried
    side (a superset: every extra edge still goes forward in the loop)."""
    push: bool = False
    group: int = 0
    """The kernel (:attr:`WavefrontAnalysis.groups`) of ``stmt``'s end of the edge."""
    other_group: int = 0
    """The kernel of the other end."""


@dataclass(frozen=True)
class WavefrontAnalysis:
    """The carried dependences of a wavefront loop, simplified for the inspector."""

    loop: str
    stmts: tuple[str, ...]
    var: str
    """The name of the loop's iterator in the inspector (``i``)."""
    extent: str
    """The loop runs ``0 <= var < extent``."""
    edges: tuple[CarriedEdge, ...]
    dropped: tuple[str, ...]
    """Why each dropped relation was dropped (empty, duplicate, subsumed)."""
    groups: int = 1
    """How many kernels were fused into the loop (statements that ran in separate loop
    nests in program order): iteration ``i`` of kernel ``g`` is the inspector's node
    ``g * extent + i``, with a level of its own."""

    @property
    def nodes(self) -> str:
        """How many nodes the inspector levels: ``extent``, times ``groups`` when kernels
        were fused."""
        return self.extent if self.groups == 1 else f"{self.groups} * ({self.extent})"

    def node(self, iteration: str, group: int) -> str:
        """The node of ``iteration`` (text) of kernel ``group``."""
        return iteration if group == 0 else f"{iteration} + {group} * ({self.extent})"


def loop_iterator(stmt: StmtReading, loop: str, cmd: str) -> int:
    """The domain position of ``stmt``'s outermost loop ``loop`` (refused when the loop is
    not outermost or not a plain iterator of the domain)."""
    if loop not in stmt.loops:
        raise ScheduleError(
            f"{cmd}: {loop!r} is not a loop of statement {stmt.name} (its loops: "
            f"{', '.join(stmt.loops) or 'none'})"
        )
    depth = stmt.loops.index(loop)
    if depth != 0:
        raise IllegalScheduleError(
            f"{cmd}: loop {loop!r} of statement {stmt.name} lies inside loop "
            f"{stmt.loops[0]!r}; spf runs a wavefront on an outermost loop only: "
            f"run the wavefront on {stmt.loops[0]!r} or move {loop!r} outermost (interchange)"
        )
    names = iterator_names(stmt.domain)
    outs = stmt.schedule.as_function(list(names))
    positions = loops_of(stmt.schedule)[0]
    if outs is None or outs[positions[0]] not in names:
        raise IllegalScheduleError(
            f"{cmd}: loop {loop!r} of statement {stmt.name} is not an iterator of its domain "
            f"(schedule {stmt.schedule}); a wavefront needs an untransformed loop (one "
            "whose value is an iterator): write a loop that runs backwards (C's 'for (i = "
            "n - 1; i >= 0; i--)', a schedule of -i) as a forward loop t over the rows "
            "n - 1 - t, as spf.kernels.trsv_diag_csr(upper=True) does"
        )
    return names.index(outs[positions[0]])


def wavefront_members(ir: ComputationIR, loop: str) -> list[ParsedStmt]:
    """The statements of ``ir`` that have loop ``loop`` and those fused into its nest
    (``comp.fuse``) whose outermost loop is the same loop under their own name."""
    stmts = ir.parsed_stmts
    nests = {nest_of(s) for s in stmts if s.loops and s.loops[0] == loop}
    return [s for s in stmts if loop in s.loops or (s.loops and nest_of(s) in nests)]


def kernel_groups(stmts: Sequence[StmtReading]) -> dict[str, int]:
    """Each statement's kernel: statements whose outermost loops were separate loop nests in
    program order (fused since) are separate kernels, numbered in program order."""
    nests = sorted({nest_of(s, original=True) or () for s in stmts}, key=_nest_key)
    return {s.name: nests.index(nest_of(s, original=True) or ()) for s in stmts}


def _nest_key(nest: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(int(x) if x.lstrip("-").isdigit() else 0 for x in nest)


def _loop_name(stmt: StmtReading, loop: str) -> str:
    """``stmt``'s own name for the wavefront loop ``loop`` (its outermost loop when it was
    fused into ``loop``'s nest)."""
    return loop if loop in stmt.loops else stmt.loops[0]


def analyze_wavefront(ir: ComputationIR, names: Sequence[str], loop: str) -> WavefrontAnalysis:
    """For the computation ``ir`` (``comp.ir``), the simplified carried dependences of
    ``loop`` over the statements named ``names`` (the wavefront); ``IllegalScheduleError``
    when the inspector cannot order them. Statements of kernels fused into the loop
    (separate loop nests in program order) form groups: every dependence between two groups
    is an edge (it may go to an earlier iteration of the fused loop: the inspector orders
    it all the same). Remembered by ``ir.fingerprint`` (:mod:`spf.analysis.memo`)."""
    from spf.analysis.memo import remembered

    def analyze() -> WavefrontAnalysis:
        return _analyze(ir, [ir.parsed_stmt(n) for n in names], loop)

    return remembered(ir, ("wavefront", tuple(names), loop), analyze)


def _analyze(ir: ComputationIR, stmts: Sequence[ParsedStmt], loop: str) -> WavefrontAnalysis:
    from spf.analysis.dependences import compute_dependences

    cmd = f"wavefront({loop!r})"
    names = {s.name for s in stmts}
    positions = {s.name: loop_iterator(s, _loop_name(s, loop), cmd) for s in stmts}
    group = kernel_groups(stmts)
    level = loops_of(stmts[0].schedule)[0][0]
    facts = list(ir.facts)
    kept: list[CarriedEdge] = []
    dropped: list[str] = []
    deps = [d for d in compute_dependences(ir) if not d.storage]
    carried = [
        d
        for d in deps
        if (d.source in names or d.sink in names)
        and (level in d.levels or (d.source in names and d.sink in names and _across(d, group)))
    ]
    for dep in carried:
        outside = [s for s in (dep.source, dep.sink) if s not in names]
        if outside:
            raise IllegalScheduleError(
                f"{cmd}: the {dep} is carried by loop {loop!r} but statement {outside[0]} is "
                f"not part of the wavefront; run comp.wavefront({loop!r}) so that every "
                f"statement of the loop is in it"
            )
        try:
            found = _edge(ir, dep, positions, loop, facts, group)
        except IllegalScheduleError as err:
            raise _through_shared_scalar(ir, dep, loop) or err from None
        if not found:
            dropped.append(f"{dep.kind} {dep.source}->{dep.sink}: empty")
        kept.extend(found)
    _check_alone(ir, stmts, loop, cmd)
    _check_one_loop(stmts, positions, loop, cmd)
    if not kept:
        raise IllegalScheduleError(
            f"{cmd}: loop {loop!r} carries no dependence: parallelize it instead "
            f"(comp.stmt(...).parallelize({loop!r}))"
        )
    edges = _simplify(kept, dropped)
    var, extent = _extent(stmts, positions, loop)
    return WavefrontAnalysis(
        loop=loop,
        stmts=tuple(s.name for s in stmts),
        var=var,
        extent=extent,
        edges=tuple(edges),
        dropped=tuple(dropped),
        groups=len(set(group.values())),
    )


def _across(dep: Dependence, group: dict[str, int]) -> bool:
    """Whether ``dep`` goes from one fused kernel to another."""
    return group[dep.source] != group[dep.sink]


def _check_one_loop(
    stmts: Sequence[StmtReading], positions: dict[str, int], loop: str, cmd: str
) -> None:
    """Statements of fused kernels run the wavefront loop over the same iterations (their
    loop is at the same schedule position)."""
    at = {loops_of(s.schedule)[0][0] for s in stmts}
    if len(at) > 1:
        raise IllegalScheduleError(
            f"{cmd}: the statements {', '.join(s.name for s in stmts)} do not share loop "
            f"{loop!r} (it sits at different schedule positions); fuse them first "
            "(comp.fuse(s1, s2, 1))"
        )


def _through_shared_scalar(
    ir: ComputationIR, dep: Dependence, loop: str
) -> IllegalScheduleError | None:
    """The error for a carried dependence the inspector cannot order because it goes
    through a scalar every iteration shares (None for other data spaces)."""
    from spf.analysis.private import shared_scalar_hint

    hint = shared_scalar_hint(ir, dep.data_space, loop, dep)
    if not hint:
        return None
    return IllegalScheduleError(
        f"wavefront({loop!r}): the {dep} orders every iteration of loop {loop!r} after the "
        f"earlier ones (no inspector can run them in levels){hint}"
    )


def nest_of(stmt: StmtReading, original: bool = False) -> tuple[str, ...] | None:
    """The schedule outputs before ``stmt``'s outermost loop (which nest it is in; with
    ``original``, which nest it was in in program order)."""
    sched = stmt.original_schedule if original else stmt.schedule
    outs = sched.as_function(list(iterator_names(stmt.domain)))
    positions = loops_of(sched)[0]
    if outs is None or not positions:
        return None
    return tuple(outs[: positions[0]])


def _check_alone(ir: ComputationIR, stmts: Sequence[StmtReading], loop: str, cmd: str) -> None:
    """Every statement in the loop nest of a wavefront statement is in the wavefront (the
    executor reorders the whole loop; a statement left in it would run in the old order)."""
    names = {s.name for s in stmts}
    nests = {nest_of(s) for s in stmts}
    for other in ir.parsed_stmts:
        if other.name in names or not other.loops:
            continue
        if nest_of(other) in nests:
            raise IllegalScheduleError(
                f"{cmd}: statement {other.name} shares loop {loop!r} with the wavefront "
                f"statements ({', '.join(sorted(names))}) but is not part of the wavefront; "
                f"run comp.wavefront({loop!r}) so that every statement of the loop is in it"
            )


_EDGES: Table[object, tuple[CarriedEdge, ...]] = Table(4096)
""":func:`_edge`'s results by the values they depend on (see :func:`_edge`)."""


def _edge(
    ir: ComputationIR,
    dep: Dependence,
    positions: dict[str, int],
    loop: str,
    facts: Sequence[Fact],
    group: dict[str, int],
) -> tuple[CarriedEdge, ...]:
    """:func:`_find_edges`, remembered by its inputs (the dependence, the loop's positions
    and the domains of its two statements, the facts): the analysis runs again on the
    tagged computation when it is compiled, and on copies of it."""
    from spf.ir.keys import value_key

    key = (
        value_key(dep),
        loop,
        tuple(
            (s, positions[s], value_key(ir.parsed_stmt(s).domain)) for s in (dep.source, dep.sink)
        ),
        tuple((f.text, f.vars) for f in facts),
        group[dep.source],
        group[dep.sink],
    )
    found = _EDGES.get(key)
    if found is None:
        found = _EDGES.put(key, _find_edges(ir, dep, positions, loop, facts, group))
    return found


def _find_edges(
    ir: ComputationIR,
    dep: Dependence,
    positions: dict[str, int],
    loop: str,
    facts: Sequence[Fact],
    group: dict[str, int],
) -> tuple[CarriedEdge, ...]:
    """The carried part of ``dep`` as edges the inspector can enumerate: one edge
    (:func:`_find_edge`) when it can, else one per disjunct of the carried part (a statement
    that reads ``x(i)`` and ``x(col(k))``, whose dependence on a later kernel's write of
    ``x(i)`` is the union of two functions, none of the whole); none when the carried part
    is empty. A dependence between two fused kernels is carried whole (its source
    iteration may be later than its sink's)."""
    rel = dep.relation
    p, q = positions[dep.source], positions[dep.sink]
    ins = [f"_wa{k}" for k in range(rel.in_arity)]
    outs = [f"_wb{k}" for k in range(rel.out_arity)]
    gs, gt = group[dep.source], group[dep.sink]
    order = f"{ins[p]} < {outs[q]}" if gs == gt else f"{ins[p]} = {ins[p]}"
    forward = Relation(f"{{[{', '.join(ins)}] -> [{', '.join(outs)}] : {order}}}")
    part = rel.intersect(forward)
    if is_empty_under(part, facts):
        return ()
    whole = _find_edge(ir, dep, part, positions, group, facts)
    if whole is not None:
        return (whole,)
    pieces = [d for d in part.disjuncts() if not is_empty_under(d, facts)]
    if len(pieces) > 1:
        edges = [_find_edge(ir, dep, d, positions, group, facts) for d in pieces]
        if all(e is not None for e in edges):
            return tuple(e for e in edges if e is not None)
    sink_its = ", ".join(iterator_names(ir.parsed_stmt(dep.sink).domain))
    source_its = ", ".join(iterator_names(ir.parsed_stmt(dep.source).domain))
    raise IllegalScheduleError(
        f"wavefront({loop!r}): in the {dep}, neither is the source iteration of loop {loop!r} "
        f"a function of the sink's iteration ({sink_its}) nor the sink iteration a function "
        f"of the source's ({source_its}), so the inspector cannot enumerate it; declare the "
        "index-array property that makes one of them a function with comp.assume(...) (e.g. "
        "a triangular matrix: 'forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i') "
        "or do not run this loop as a wavefront"
    )


def _find_edge(
    ir: ComputationIR,
    dep: Dependence,
    part: Relation,
    positions: dict[str, int],
    group: dict[str, int],
    facts: Sequence[Fact],
) -> CarriedEdge | None:
    """``part`` (the carried part of ``dep``, or a disjunct of it) as an edge the
    inspector can enumerate: pull form (over the sink's instances, the source iteration a
    term of them) when it can, else push form (over the source's instances, the sink
    iteration a term of them); None when neither end is a function of the other's."""
    p, q = positions[dep.source], positions[dep.sink]
    ins = [f"_wa{k}" for k in range(part.in_arity)]
    outs = [f"_wb{k}" for k in range(part.out_arity)]
    gs, gt = group[dep.source], group[dep.sink]
    pull = Relation(f"{{[{', '.join(ins)}] -> [{ins[p]}]}}").compose(part.inverse())
    push = Relation(f"{{[{', '.join(outs)}] -> [{outs[q]}]}}").compose(part)
    for stmt, projected, at, is_push in ((dep.sink, pull, q, False), (dep.source, push, p, True)):
        its = iterator_names(ir.parsed_stmt(stmt).domain)
        found = _function_of(ir.parsed_stmt(stmt), projected, its, facts)
        if found is not None:
            term, projected = found
            instances, used = projected.domain(), its
            if "exists" in str(instances):
                side = f"{its[at]} < {term}" if is_push else f"{term} < {its[at]}"
                if gs != gt:
                    side = ""
                instances, used = _instances_over(ir.parsed_stmt(stmt), its[at], term, side)
            return CarriedEdge(
                dependence=dep,
                stmt=stmt,
                iterators=used,
                loop_var=its[at],
                other=term,
                relation=projected,
                instances=instances,
                push=is_push,
                group=gs if is_push else gt,
                other_group=gt if is_push else gs,
            )
    return None


def _instances_over(
    stmt: StmtReading, var: str, term: str, order: str
) -> tuple[Set, tuple[str, ...]]:
    """The instances of ``stmt`` projected onto the iterators that ``var`` and ``term`` use,
    keeping the domain's constraints on those iterators only, with ``order`` (the carried
    side): a superset of the dependence's instances, without existential variables."""
    its = iterator_names(stmt.domain)
    words = set(re.findall(r"\b\w+\b", f"{var} {term}"))
    used = tuple(x for x in its if x in words)
    pieces = []
    for piece in str(stmt.domain).split(" union "):
        m = re.match(r"^\{\[(.*?)\](?: : (.*))?\}$", piece)
        if m is None:
            raise InternalError(f"spf bug: cannot read the domain piece {piece!r}")
        cons = [
            c
            for c in (m.group(2) or "").split(" && ")
            if c and set(re.findall(r"\b\w+\b", c)) & set(its) <= set(used)
        ]
        cons += [order] if order else []
        pieces.append(f"{{[{', '.join(used)}]" + (f" : {' && '.join(cons)}}}" if cons else "}"))
    return Set(" union ".join(pieces), ufs=stmt.domain.ufs), used


def _function_of(
    stmt: StmtReading, projected: Relation, its: tuple[str, ...], facts: Sequence[Fact]
) -> tuple[str, Relation] | None:
    """The other end's iteration as a term of ``stmt``'s iterators ``its`` (``projected``:
    ``stmt``'s instances -> that iteration), and ``projected`` with the equality it took:
    read off the relation, or discovered by proving ``x < t`` and ``x > t`` empty under the
    facts for a term ``t`` of ``stmt``'s domain (``i = col(k)`` when ``k`` lies in row ``i``
    and in row ``col(k)``: rows do not overlap)."""
    fn = projected.as_function(list(its))
    if fn is not None:
        return fn[0], projected
    xs = [f"_wx{k}" for k in range(len(its))]
    head = f"{{[{', '.join(xs)}] -> [_wy] : "
    for term in _candidate_terms(stmt, its):
        t = re.sub(r"\b\w+\b", lambda m: xs[its.index(m[0])] if m[0] in its else m[0], term)
        if all(
            is_empty_under(projected.intersect(Relation(f"{head}_wy {op} {t}}}")), facts)
            for op in ("<", ">")
        ):
            narrowed = projected.intersect(Relation(f"{head}_wy = {t}}}"))
            return term, narrowed
    return None


def _candidate_terms(stmt: StmtReading, its: tuple[str, ...]) -> list[str]:
    """The iterators of ``stmt``, then the UF calls of its domain and of its accesses on them
    (innermost first: ILU(0) written in C reads ``val(diag(col(k)))``, whose row is
    ``col(k)``), then those calls' arguments (a solve that runs its rows last first reads
    row ``N - 1 - t`` of a matrix: ``diag(N - 1 - t)``)."""
    text = " ".join([str(stmt.domain), *(str(rel) for _, rel in (*stmt.reads, *stmt.writes))])
    calls: list[str] = []
    for m in re.finditer(r"\b\w+\(", text):
        depth, end = 0, m.end() - 1
        while end < len(text):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
            end += 1
        call = text[m.start() : end + 1]
        if call not in calls:
            calls.append(call)
    calls.sort(key=len)
    args = [c[c.index("(") + 1 : -1] for c in calls]  # a row ``diag(N - 1 - t)`` names
    args = [a for a in dict.fromkeys(args) if a not in its and a not in calls and "," not in a]
    return [*its, *calls, *args]


def _simplify(edges: list[CarriedEdge], dropped: list[str]) -> list[CarriedEdge]:
    """Drop edges equal to or contained in another edge of the same form over the same
    statement."""
    out: list[CarriedEdge] = []
    for e in edges:
        d = e.dependence
        same = [o for o in out if o.push == e.push]
        if any(_covers(o, e) for o in same):
            dropped.append(f"{d.kind} {d.source}->{d.sink}: duplicate or subsumed")
            continue
        for o in [o for o in same if _covers(e, o)]:
            od = o.dependence
            dropped.append(f"{od.kind} {od.source}->{od.sink}: subsumed")
            out.remove(o)
        out.append(e)
    return out


def _covers(a: CarriedEdge, b: CarriedEdge) -> bool:
    """Whether edge ``a`` gives every (iteration, other end) pair that ``b`` gives: the same
    statement and ``b``'s relation contained in ``a``'s, or the same pairs read off
    instances over the same iterators (edges of different statements)."""
    if (a.group, a.other_group) != (b.group, b.other_group):
        return False
    if a.stmt == b.stmt and b.relation.is_subset(a.relation):
        return True
    if (a.iterators, a.loop_var, a.other) != (b.iterators, b.loop_var, b.other):
        return False
    return b.instances.is_subset(a.instances)


_RANGE = re.compile(r"^\{\[(\w+)\] : (.*)\}$")


def _plain_range(r: Set) -> tuple[str, str] | None:
    """``("i", "N")`` when ``r`` (one piece) says ``i < N`` (or ``i <= M``) among its
    constraints; the caller checks that ``0 <= i < N`` contains the range (a larger range is
    safe: the inspector gives iterations that do not run level 0)."""
    m = _RANGE.match(str(r))
    if m is None:
        return None
    var, cons = m.group(1), m.group(2).split(" && ")
    for c in cons:
        for op, extra in ((" < ", ""), (" <= ", " + 1")):
            if c.startswith(var + op):
                bound = c[len(var + op) :]
                if not re.search(rf"\b{var}\b", bound) and "(" not in bound:
                    return var, bound + extra
    return None


def _extent(stmts: Sequence[StmtReading], positions: dict[str, int], loop: str) -> tuple[str, str]:
    """The loop's iterator name and upper bound: ``0 <= i < N`` containing the loop's range
    in every statement of the wavefront."""
    ranges = []
    for s in stmts:
        its = iterator_names(s.domain)
        proj = Relation(f"{{[{', '.join(its)}] -> [{its[positions[s.name]]}]}}", ufs=s.domain.ufs)
        ranges.append(proj.apply(s.domain))
    for r in ranges:
        found = _plain_range(r)
        if found is None:
            continue
        var, bound = found
        plain = Set(f"{{[{var}] : 0 <= {var} < {bound}}}", ufs=r.ufs)
        if all(o.is_subset(plain) for o in ranges):
            return var, bound
    raise IllegalScheduleError(
        f"wavefront({loop!r}): the inspector needs loop {loop!r} to run over 0 <= {loop} < "
        f"<bound> in one of its statements; its ranges are {', '.join(map(str, ranges))}"
    )


def _copy_declarations(ir: ComputationIR, into: ComputationIR) -> ComputationIR:
    """``into`` with the UF declarations and assumptions of ``ir``."""
    copied = ("arity", "domain", "range", "monotonic", "dtype")  # not an inverse's
    for uf in ir.ufs:
        into = build.declare_uf(into, uf.name, **{f: getattr(uf, f) for f in copied})
    for fact in ir.assumptions:
        into = build.assume(into, fact)
    return into


def _domain_pieces(text: str, what: str) -> list[tuple[str, str | None]]:
    """The pieces of the inspector domain ``text`` (``{[its] : constraints}`` joined by
    ``union``) as (iterators, constraints or None); ``what`` says what the caller does with
    them, for the error."""
    pieces: list[tuple[str, str | None]] = []
    for piece in text.split(" union "):
        m = re.match(r"^\{\[(.*?)\](?: : (.*))?\}$", piece)
        if m is None:
            raise InternalError(f"spf bug: cannot {what} the inspector domain {text}")
        pieces.append((m.group(1), m.group(2)))
    return pieces


def _with_source(domain: Set, its: tuple[str, ...], expr: str, name: str) -> str:
    """``domain`` with one more iterator ``name = expr`` (text)."""
    return " union ".join(
        f"{{[{', '.join(its)}, {name}] : {f'{cons} && ' if cons else ''}{name} = {expr}}}"
        for _, cons in _domain_pieces(str(domain), "extend")
    )


def with_constraint(text: str, constraint: str) -> str:
    """The set ``text`` (as :func:`edge_enumeration` writes it: pieces joined by ``union``)
    with ``constraint`` (over its iterators) added to every piece."""
    return " union ".join(
        f"{{[{its}] : {f'{cons} && ' if cons else ''}{constraint}}}"
        for its, cons in _domain_pieces(text, "constrain")
    )


def edge_enumeration(e: CarriedEdge) -> tuple[str, tuple[str, ...], str, str]:
    """The instances of edge ``e`` as set text over iterators (with ``_wsrc = <other>``
    appended when the other end's iteration is not an iterator), the iterators, the other
    end's iteration (an iterator) and the enumerated statement's wavefront iterator."""
    its = e.iterators
    domain = e.instances
    dom_its = iterator_names(domain)
    rename = dict(zip(its, dom_its, strict=True))
    if e.other in its:
        return str(domain), dom_its, rename[e.other], rename[e.loop_var]
    other = re.sub(r"\b\w+\b", lambda m: rename.get(m[0], m[0]), e.other)
    text = _with_source(domain, dom_its, other, "_wsrc")
    return text, (*dom_its, "_wsrc"), "_wsrc", rename[e.loop_var]


def build_inspector(ir: ComputationIR, analysis: WavefrontAnalysis) -> ComputationIR:
    """The level stage of the inspector of a wavefront loop of ``ir`` as a computation (an
    IR): ``level[extent]`` and ``nlevels`` (0-d) are its outputs (zeroed by the caller)."""
    insp = _copy_declarations(ir, build.computation(f"{ir.name}_inspector_{analysis.loop}"))
    taken = set(ir.params) | {u.name for u in ir.ufs}
    for name in (LEVEL, NLEVELS):
        if name in taken:
            raise VerifyError(
                f"wavefront({analysis.loop!r}): the inspector names its output {name!r}, "
                f"which {ir.name} already uses; rename that parameter or UF"
            )
    insp = build.add_data_space(insp, LEVEL, "int64_t", (analysis.nodes,))
    insp = build.add_data_space(insp, NLEVELS, "int64_t", ())
    insp = _over_nodes(insp, analysis, "$level$({node}) = 0;", 0)
    pulls = [e for e in analysis.edges if not e.push]
    pushes = [e for e in analysis.edges if e.push]
    for k, e in enumerate([*pulls, *pushes], start=1):
        text, dom_its, other, var = edge_enumeration(e)
        rest = [x for x in dom_its if x != var]
        sched = "".join(f", {x}, 0" for x in rest)
        head = "1" if analysis.groups == 1 else f"1, {e.group}"  # kernels in program order
        schedule = f"{{[{', '.join(dom_its)}] -> [{head}, {var}, {k}{sched}]}}"
        var, other = analysis.node(var, e.group), analysis.node(other, e.other_group)
        sink, src = (other, var) if e.push else (var, other)
        source = f"$level$({sink}) = max($level$({sink}), $level$({src}) + 1);"
        insp = build.add_stmt(insp, source, text, schedule)
    return _over_nodes(insp, analysis, "$nlevels$ = max($nlevels$, $level$({node}) + 1);", 2)


def _over_nodes(
    insp: ComputationIR, analysis: WavefrontAnalysis, source: str, at: int, extra: str = ""
) -> ComputationIR:
    """``insp`` with the statement ``source`` (``{node}`` standing for a node) at schedule
    position ``at`` over every node: one loop over the iterations per fused kernel (a loop
    over all nodes would run the checks of the facts about the index arrays past their
    ends); ``extra``, constraints added to its domain (`` && ...``)."""
    v, n = analysis.var, analysis.extent
    for g in range(analysis.groups):
        head = f"{at}" if analysis.groups == 1 else f"{at}, {g}"
        insp = build.add_stmt(
            insp,
            source.format(node=analysis.node(v, g)),
            f"{{[{v}]: 0 <= {v} < {n}{extra}}}",
            f"{{[{v}] -> [{head}, {v}, 0]}}",
        )
    return insp


def sort_stage_name(analysis: WavefrontAnalysis) -> str:
    """The name of the counting sorts of ``analysis``'s inspector (:func:`build_level_sort`,
    :func:`spf.analysis.coarse_inspector.build_pair_sort`): what they compute depends on the
    loop's iterator and node count only, never on the computation, so every wavefront over
    ``N`` nodes of ``i`` shares ``spf_sort_i_N``, one library built once per cache directory
    and loaded once per process. A node count that is not a name is named by a checksum
    (``spf_sort_i_x1a2b3c4d``)."""
    nodes = analysis.nodes
    tag = nodes if nodes.isidentifier() else f"x{zlib.crc32(nodes.encode()):08x}"
    return f"spf_sort_{analysis.var}_{tag}"


def build_level_sort(analysis: WavefrontAnalysis, name: str) -> tuple[ComputationIR, ComputationIR]:
    """The counting sort after the level stage, as two computations (IRs):
    ``<name>_levelptr`` reads ``level`` as a UF and writes ``levelptr`` (level sizes, then
    their prefix sum), ``slot`` (each iteration's position in level order) and ``fill``
    (scratch, zeroed by the caller); ``<name>_order`` reads ``slot`` as a UF and writes
    ``order``."""
    v, n = analysis.var, analysis.nodes
    ranged = {
        "domain": f"{{[{v}]: 0 <= {v} < {n}}}",
        "range": f"{{[x]: 0 <= x < {n}}}",
        "dtype": "int64",
    }
    count = build.declare_uf(build.computation(f"{name}_levelptr"), LEVEL, **ranged)
    count = build.add_data_space(count, "levelptr", "int64_t", (f"{n} + 1",))
    count = build.add_data_space(count, "slot", "int64_t", (n,))
    count = build.add_data_space(count, "fill", "int64_t", (n,))
    dom = f"{{[{v}]: 0 <= {v} < {n}}}"
    for source, schedule in (
        (f"$levelptr$(level({v}) + 1) += 1;", f"{{[{v}] -> [0, {v}, 0]}}"),
        (f"$levelptr$({v} + 1) += $levelptr$({v});", f"{{[{v}] -> [1, {v}, 0]}}"),
        (
            f"$slot$({v}) = $levelptr$(level({v})) + $fill$(level({v}));",
            f"{{[{v}] -> [2, {v}, 0]}}",
        ),
        (f"$fill$(level({v})) += 1;", f"{{[{v}] -> [2, {v}, 1]}}"),
    ):
        count = build.add_stmt(count, source, dom, schedule)
    order = build.declare_uf(build.computation(f"{name}_order"), "slot", **ranged)
    order = build.add_data_space(order, "order", "int64_t", (n,))
    order = build.add_stmt(order, f"$order$(slot({v})) = {v};", dom, f"{{[{v}] -> [0, {v}, 0]}}")
    return count, order

"""Inspector synthesis for wavefront loops: dependences -> inspector Computations.

A loop whose carried dependences go through index arrays (SpTRSV's row loop: row ``i'``
reads ``u(col(k))`` that row ``col(k) < i'`` wrote) cannot be proved parallel at compile
time. :func:`analyze_wavefront` takes every dependence the loop carries, keeps the part that
goes from iteration ``i`` to a later iteration ``i'`` (dropping the relations the UF
properties and ``assume`` facts prove empty), projects it onto (sink instance -> source
``i``) and discovers the equality that gives ``i`` as a term of the sink's iterators
(``i = col(k)``); relations equal to or contained in another one with the same sink are
dropped. A dependence whose source iteration is not such a term (the inspector could not
enumerate it) is refused with ``IllegalScheduleError`` naming it.

:func:`build_inspector` turns the result into a Computation of its own: for every iteration
``i'`` in increasing order, ``level(i') = max(level(i'), level(src) + 1)`` over the sink
instances of each kept dependence (valid because every carried dependence goes from a
smaller ``i``), and ``nlevels``, the number of levels: O(iterations + dependences).
:func:`build_level_sort` builds the counting sort that follows it, as two more
Computations that read the previous stage's output as a UF (as an executor does): the level
sizes and their prefix sum ``levelptr``, each iteration's ``slot``, and the level-ordered
iteration list ``order``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from spf.computation.access import iterator_names
from spf.computation.statement import Stmt
from spf.errors import IllegalScheduleError, SpfError
from spf.schedule.relations import loops_of
from spf.sets import Relation, Set
from spf.sets.facts import is_empty_under

if TYPE_CHECKING:
    from spf.computation.computation import Computation


class Dependence(Protocol):
    """What the synthesis reads of a dependence (``Computation.dependences()`` items)."""

    @property
    def kind(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def sink(self) -> str: ...
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
    """One kept dependence: sink instances ``domain`` (over ``iterators``) whose source
    iteration of the wavefront loop is ``source``, a term of the sink's iterators."""

    dependence: Dependence
    sink: str
    iterators: tuple[str, ...]
    loop_var: str
    source: str
    relation: Relation
    """Sink instance -> source iteration (the projected, carried dependence)."""


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


def loop_iterator(stmt: Stmt, loop: str, cmd: str) -> int:
    """The domain position of ``stmt``'s outermost loop ``loop`` (refused when the loop is
    not outermost or not a plain iterator of the domain)."""
    if loop not in stmt.loops:
        raise SpfError(
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
            f"(schedule {stmt.schedule}); a wavefront needs an untransformed loop"
        )
    return names.index(outs[positions[0]])


def analyze_wavefront(comp: Computation, stmts: Sequence[Stmt], loop: str) -> WavefrontAnalysis:
    """The simplified carried dependences of ``loop`` over the statements ``stmts`` (the
    wavefront); ``IllegalScheduleError`` when the inspector cannot order them."""
    cmd = f"wavefront({loop!r})"
    names = {s.name for s in stmts}
    positions = {s.name: loop_iterator(s, loop, cmd) for s in stmts}
    level = loops_of(stmts[0].schedule)[0][0]
    facts = comp.assumptions
    kept: list[CarriedEdge] = []
    dropped: list[str] = []
    carried = [d for d in comp.dependences() if level in d.levels and not d.storage]
    carried = [d for d in carried if d.source in names or d.sink in names]
    for dep in carried:
        outside = [s for s in (dep.source, dep.sink) if s not in names]
        if outside:
            raise IllegalScheduleError(
                f"{cmd}: the {dep} is carried by loop {loop!r} but statement {outside[0]} is "
                f"not part of the wavefront; run comp.wavefront({loop!r}) so that every "
                f"statement of the loop is in it"
            )
        edge = _edge(comp, dep, positions, loop, facts)
        if edge is None:
            dropped.append(f"{dep.kind} {dep.source}->{dep.sink}: empty")
        else:
            kept.append(edge)
    _check_alone(comp, stmts, loop, cmd)
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
    )


def _nest(stmt: Stmt) -> tuple[str, ...] | None:
    """The schedule outputs before ``stmt``'s outermost loop (which nest it is in)."""
    outs = stmt.schedule.as_function(list(iterator_names(stmt.domain)))
    positions = loops_of(stmt.schedule)[0]
    if outs is None or not positions:
        return None
    return tuple(outs[: positions[0]])


def _check_alone(comp: Computation, stmts: Sequence[Stmt], loop: str, cmd: str) -> None:
    """Every statement in the loop nest of a wavefront statement is in the wavefront (the
    executor reorders the whole loop; a statement left in it would run in the old order)."""
    names = {s.name for s in stmts}
    nests = {_nest(s) for s in stmts}
    for other in comp.stmts:
        if other.name in names or not other.loops:
            continue
        if _nest(other) in nests and other.loops[0] == loop:
            raise IllegalScheduleError(
                f"{cmd}: statement {other.name} shares loop {loop!r} with the wavefront "
                f"statements ({', '.join(sorted(names))}) but is not part of the wavefront; "
                f"run comp.wavefront({loop!r}) so that every statement of the loop is in it"
            )


def _edge(
    comp: Computation,
    dep: Dependence,
    positions: dict[str, int],
    loop: str,
    facts: Sequence[object],
) -> CarriedEdge | None:
    """The carried part of ``dep`` projected onto (sink instance -> source iteration)."""
    rel = dep.relation
    p, q = positions[dep.source], positions[dep.sink]
    ins = [f"_wa{k}" for k in range(rel.in_arity)]
    outs = [f"_wb{k}" for k in range(rel.out_arity)]
    forward = Relation(f"{{[{', '.join(ins)}] -> [{', '.join(outs)}] : {ins[p]} < {outs[q]}}}")
    part = rel.intersect(forward)
    if is_empty_under(part, list(facts)):  # type: ignore[arg-type]
        return None
    project = Relation(f"{{[{', '.join(ins)}] -> [{ins[p]}]}}")
    projected = project.compose(part.inverse())
    sink = comp.stmt(dep.sink)
    its = iterator_names(sink.domain)
    fn = projected.as_function(list(its))
    if fn is None:
        raise IllegalScheduleError(
            f"wavefront({loop!r}): the source iteration of loop {loop!r} in the {dep} is not "
            f"a function of the sink's iteration ({', '.join(its)}), so the inspector cannot "
            "enumerate it; declare the index-array property that makes it one with "
            "comp.assume(...) (e.g. a triangular matrix: 'forall i, k: rowptr(i) <= k < "
            "rowptr(i+1) => col(k) <= i') or do not run this loop as a wavefront"
        )
    return CarriedEdge(
        dependence=dep,
        sink=dep.sink,
        iterators=its,
        loop_var=its[q],
        source=fn[0],
        relation=projected,
    )


def _simplify(edges: list[CarriedEdge], dropped: list[str]) -> list[CarriedEdge]:
    """Drop edges equal to or contained in another edge with the same sink."""
    out: list[CarriedEdge] = []
    for e in edges:
        d = e.dependence
        same = [o for o in out if o.sink == e.sink]
        if any(e.relation.is_subset(o.relation) for o in same):
            dropped.append(f"{d.kind} {d.source}->{d.sink}: duplicate or subsumed")
            continue
        for o in [o for o in same if o.relation.is_subset(e.relation)]:
            od = o.dependence
            dropped.append(f"{od.kind} {od.source}->{od.sink}: subsumed")
            out.remove(o)
        out.append(e)
    return out


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


def _extent(stmts: Sequence[Stmt], positions: dict[str, int], loop: str) -> tuple[str, str]:
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


def _copy_declarations(comp: Computation, into: Computation) -> None:
    for uf in comp.ufs.values():
        into.declare_uf(
            uf.name,
            arity=uf.arity,
            domain=uf.domain,
            range=uf.range,
            monotonic=uf.monotonic,
            dtype=uf.dtype,
        )
    for fact in comp.assumptions:
        into.assume(str(fact))


def _with_source(domain: Set, its: tuple[str, ...], expr: str, name: str) -> str:
    """``domain`` with one more iterator ``name = expr`` (text)."""
    pieces = []
    for piece in str(domain).split(" union "):
        m = re.match(r"^\{\[(.*?)\](?: : (.*))?\}$", piece)
        if m is None:
            raise SpfError(f"spf bug: cannot extend the inspector domain {domain}")
        cons = f"{m.group(2)} && " if m.group(2) else ""
        pieces.append(f"{{[{', '.join(its)}, {name}] : {cons}{name} = {expr}}}")
    return " union ".join(pieces)


def edge_enumeration(e: CarriedEdge) -> tuple[str, tuple[str, ...], str, str]:
    """The sink instances of edge ``e`` as set text over iterators (with ``_wsrc = <source>``
    appended when the source is not an iterator), the iterators, the source iterator and the
    sink's wavefront iterator."""
    its = e.iterators
    domain = e.relation.domain()
    dom_its = iterator_names(domain)
    src = e.source
    if src not in its:
        fn = e.relation.as_function(list(dom_its))  # the source in the domain's names
        if fn is None:
            raise SpfError(f"spf bug: the inspector lost the source of {e.relation}")
        src = "_wsrc"
        text = _with_source(domain, dom_its, fn[0], src)
        dom_its = (*dom_its, src)
    else:
        text = str(domain)
        src = dom_its[its.index(src)]
    return text, dom_its, src, dom_its[its.index(e.loop_var)]


def build_inspector(comp: Computation, analysis: WavefrontAnalysis) -> Computation:
    """The level stage of the inspector of a wavefront loop as a Computation:
    ``level[extent]`` and ``nlevels`` (0-d) are its outputs (zeroed by the caller)."""
    from spf.computation.computation import Computation as _Computation

    insp = _Computation(f"{comp.name}_inspector_{analysis.loop}")
    _copy_declarations(comp, insp)
    taken = set(comp.params) | set(comp.ufs)
    for name in (LEVEL, NLEVELS):
        if name in taken:
            raise SpfError(
                f"wavefront({analysis.loop!r}): the inspector names its output {name!r}, "
                f"which {comp.name} already uses; rename that parameter or UF"
            )
    v = analysis.var
    insp.add_data_space(LEVEL, "int64_t", shape=(analysis.extent,))
    insp.add_data_space(NLEVELS, "int64_t", shape=())
    insp.add_stmt(
        Stmt(
            f"$level$({v}) = 0;",
            f"{{[{v}]: 0 <= {v} < {analysis.extent}}}",
            f"{{[{v}] -> [0, {v}, 0]}}",
        )
    )
    for k, e in enumerate(analysis.edges, start=1):
        text, dom_its, src, sink_var = edge_enumeration(e)
        rest = [x for x in dom_its if x != sink_var]
        sched = [f"{x}, 0" for x in rest]
        schedule = (
            f"{{[{', '.join(dom_its)}] -> [0, {sink_var}, {k}{''.join(', ' + s for s in sched)}]}}"
        )
        insp.add_stmt(
            Stmt(
                f"$level$({sink_var}) = max($level$({sink_var}), $level$({src}) + 1);",
                text,
                schedule,
            )
        )
    insp.add_stmt(
        Stmt(
            f"$nlevels$ = max($nlevels$, $level$({v}) + 1);",
            f"{{[{v}]: 0 <= {v} < {analysis.extent}}}",
            f"{{[{v}] -> [1, {v}, 0]}}",
        )
    )
    return insp


def build_level_sort(analysis: WavefrontAnalysis, name: str) -> tuple[Computation, Computation]:
    """The counting sort after the level stage, as two Computations: ``<name>_levelptr``
    reads ``level`` as a UF and writes ``levelptr`` (level sizes, then their prefix sum),
    ``slot`` (each iteration's position in level order) and ``fill`` (scratch, zeroed by
    the caller); ``<name>_order`` reads ``slot`` as a UF and writes ``order``."""
    from spf.computation.computation import Computation as _Computation

    v, n = analysis.var, analysis.extent
    ranged = {
        "domain": f"{{[{v}]: 0 <= {v} < {n}}}",
        "range": f"{{[x]: 0 <= x < {n}}}",
        "dtype": "int64",
    }
    count = _Computation(f"{name}_levelptr")
    count.declare_uf(LEVEL, **ranged)
    count.add_data_space("levelptr", "int64_t", shape=(f"{n} + 1",))
    count.add_data_space("slot", "int64_t", shape=(n,))
    count.add_data_space("fill", "int64_t", shape=(n,))
    dom = f"{{[{v}]: 0 <= {v} < {n}}}"
    count.add_stmt(Stmt(f"$levelptr$(level({v}) + 1) += 1;", dom, f"{{[{v}] -> [0, {v}, 0]}}"))
    count.add_stmt(
        Stmt(f"$levelptr$({v} + 1) += $levelptr$({v});", dom, f"{{[{v}] -> [1, {v}, 0]}}")
    )
    count.add_stmt(
        Stmt(
            f"$slot$({v}) = $levelptr$(level({v})) + $fill$(level({v}));",
            dom,
            f"{{[{v}] -> [2, {v}, 0]}}",
        )
    )
    count.add_stmt(Stmt(f"$fill$(level({v})) += 1;", dom, f"{{[{v}] -> [2, {v}, 1]}}"))
    order = _Computation(f"{name}_order")
    order.declare_uf("slot", **ranged)
    order.add_data_space("order", "int64_t", shape=(n,))
    order.add_stmt(Stmt(f"$order$(slot({v})) = {v};", dom, f"{{[{v}] -> [0, {v}, 0]}}"))
    return count, order

"""Reduction loops: which carried dependences are reductions, for
``stmt.parallelize(loop, reduction="atomic" | "privatize")`` (docs/scheduling.md).

A statement *updates* data space ``y`` when every access of ``y`` in its source is one
element ``y(f)`` that appears only as the target of one kind of accumulation: ``y(f) += e``,
``-=``, ``++``/``--`` and the spelled-out ``y(f) = y(f) + e`` / ``e + y(f)`` / ``y(f) - e``
(operator family ``+``), or ``*=``, ``/=``, ``y(f) = y(f) * e`` (family ``*``), where ``e``
does not read ``y``. The statement parser finds these (``ParsedSource.reductions``); this
module adds the family and the "``e`` does not read ``y``" condition (no other element of
``y`` is accessed).

A loop may run in parallel as a reduction loop when every dependence it carries (between
statements that share it) is on a data space ``y`` that both the source and the sink update
with the same family: the updates commute, so any order of the iterations, and any split of
them over threads whose partial results are combined at the end, gives the same result up to
floating-point rounding. A statement inside the loop that reads or assigns ``y`` otherwise
breaks it: it would see a partial sum (or, with private copies, the wrong copy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from spf.analysis.apart import indices_apart
from spf.analysis.dependences import (
    carries_nothing,
    compute_dependences,
    out_vars,
    padded,
    position_in,
)
from spf.analysis.sources import source_tree
from spf.errors import ArgumentError, IllegalScheduleError, SpfError
from spf.ir.reading import is_constant
from spf.ir.source.accesses import _reduction_form
from spf.ir.source.tree import _Assign, _If, _Ref
from spf.schedule.tags import REDUCTION_OPTIONS, reduction_option, sums_option

if TYPE_CHECKING:
    from spf.analysis.inspector import Dependence as DependenceLike
    from spf.ir import ComputationIR
    from spf.ir.dependence import Dependence
    from spf.ir.reading import ParsedStmt
    from spf.ir.source import ParsedSource

_COMPOUND_FAMILY = {"+=": "+", "-=": "+", "*=": "*", "/=": "*"}
_PARALLEL_KINDS = frozenset({"parallel", "gpu_block", "gpu_thread", "distribute"})
SUPPORTED_FAMILIES = ("+", "*")
"""Operator families a reduction loop accepts (``min``/``max`` updates are not run in
parallel: OpenMP's ``atomic`` has no form for them)."""


def updates(parsed: ParsedSource) -> dict[str, str]:
    """``{data space: family}`` of the reductions of a statement's parsed source in the sense
    of the module docstring (families ``+`` and ``*``; others are left out)."""
    out: dict[str, str] = {}
    for access in parsed.reductions:
        ds = access.data_space
        touched = {a.indices for a in (*parsed.reads, *parsed.writes) if a.data_space == ds}
        if touched != {access.indices}:
            continue  # another element of ds is read or written: e reads y
        families = _families(parsed.body, ds)
        if len(families) == 1 and families <= set(SUPPORTED_FAMILIES):
            out[ds] = families.pop()
    return out


def families(parsed: ParsedSource, ds: str) -> set[str]:
    """The operator families of every assignment to ``ds`` in a statement's parsed source
    (``+``, ``*``, ``max``, ``min``; ``?`` for an assignment that is no update)."""
    return _families(parsed.body, ds)


def _families(body: Sequence[object], ds: str) -> set[str]:
    found: set[str] = set()
    for node in body:
        if isinstance(node, _If):
            found |= _families(node.then, ds)
            found |= _families(node.other or (), ds)
        elif isinstance(node, _Assign) and isinstance(node.target, _Ref):
            if node.target.ds != ds:
                continue
            family = _COMPOUND_FAMILY.get(node.op)
            if family is None and node.op == "=":
                family = _reduction_form(node.target, node.value)
            found.add(family or "?")
    return found


def _why_not_update(ir: ComputationIR, stmt: ParsedStmt, ds: str) -> str:
    """Why ``stmt``'s accesses of ``ds`` are not one update ``ds(f) op= e``."""
    parsed = source_tree(ir, stmt)
    if any(a.data_space == ds for a in parsed.reductions):
        touched = {a.indices for a in (*parsed.reads, *parsed.writes) if a.data_space == ds}
        if len(touched) > 1:
            return f"{stmt.name} accumulates into {ds} but also reads another element of {ds}"
        return (
            f"{stmt.name} accumulates into {ds} with min/max or mixed operators; only "
            "+=, -=, *=, /= (or y = y + e, y = y * e) are parallel reductions"
        )
    if any(a.data_space == ds for a in parsed.writes):
        return f"{stmt.name} assigns {ds} ({stmt.source.strip()}), which is not an accumulation"
    return f"{stmt.name} reads {ds} ({stmt.source.strip()}) while the loop accumulates into it"


def _in_loop(ir: ComputationIR, stmt: ParsedStmt, d: int, other: ParsedStmt) -> bool:
    """Whether ``other`` runs inside the loop at position ``d`` of ``stmt`` (the same test
    the parallel-tag check uses for dependence sources)."""
    width = ir.schedule_width
    mine = out_vars(padded(stmt, width))
    theirs = out_vars(padded(other, width))
    if is_constant(theirs[d]):
        return False
    return all(
        not (is_constant(mine[k]) and is_constant(theirs[k])) or mine[k] == theirs[k]
        for k in range(d)
    )


def accumulation_hint(ir: ComputationIR, dep: DependenceLike, loop: str) -> str:
    """Advice for ``dep``, carried by ``loop``, when it runs through a running value: both
    its ends accumulate into the data space (``s += x(i)``, ``m = max(m, x(i))``) and every
    statement in the loop that touches it only accumulates into it (empty when not: a
    statement reading it, as ``y(i) = t`` after ``t += A(i, j)``, may mean a temporary
    that should be private). Making a running value private to each iteration, the advice
    for a temporary, would drop it."""
    ds = dep.data_space
    ends = [ir.parsed_stmt(dep.source), ir.parsed_stmt(dep.sink)]
    if not all(any(a.data_space == ds for a in source_tree(ir, s).reductions) for s in ends):
        return ""
    try:
        d = position_in(ends[0], loop, ir.schedule_width)
    except SpfError:
        return ""
    for s in (s for s in ir.parsed_stmts if _in_loop(ir, ends[0], d, s)):
        parsed = source_tree(ir, s)
        accumulates = any(a.data_space == ds for a in parsed.reductions)
        touches = any(a.data_space == ds for a in (*parsed.reads, *parsed.writes))
        if touches and (not accumulates or "?" in families(parsed, ds)):
            return ""  # read or assigned in the loop: maybe a temporary meant to be private
    kinds = {updates(source_tree(ir, s)).get(ds) for s in ends}
    if len(kinds) == 1 and kinds <= set(SUPPORTED_FAMILIES):
        how = (
            f"keep loop {loop!r} serial (no parallel or vector tag), or run it as a parallel "
            f'reduction with parallelize({loop!r}, reduction="atomic") or '
            f'parallelize({loop!r}, reduction="privatize")'
        )
    else:
        how = f"keep loop {loop!r} serial (min/max and mixed updates are no parallel reduction)"
    return (
        f"; {ds!r} is a reduction: {dep.sink} accumulates into it across the iterations of "
        f"loop {loop!r}, so a copy private to each iteration would lose the running value; " + how
    )


def carried(
    ir: ComputationIR, stmt: ParsedStmt, loop: str | int, deps: Sequence[Dependence] | None = None
) -> list[Dependence]:
    """The dependences ``loop`` of ``stmt`` carries among the statements that share it."""
    d = position_in(stmt, loop, ir.schedule_width)
    deps = compute_dependences(ir) if deps is None else deps
    return [
        dep for dep in deps if d in dep.levels and _in_loop(ir, stmt, d, ir.parsed_stmt(dep.source))
    ]


def reduction_refusal(
    ir: ComputationIR, stmt: ParsedStmt, loop: str | int, deps: Sequence[Dependence] | None = None
) -> str | None:
    """None when every dependence ``loop`` carries is a reduction and no other statement
    in the loop touches a reduced data space; else why not (naming the dependence or the
    statement)."""
    d = position_in(stmt, loop, ir.schedule_width)
    inside = [s for s in ir.parsed_stmts if _in_loop(ir, stmt, d, s)]
    upd = {s.name: updates(source_tree(ir, s)) for s in inside}
    reduced: dict[str, str] = {}
    for dep in carried(ir, stmt, loop, deps):
        if dep.storage:
            return (
                f"the storage conflict on buffer {dep.data_space!r} between {dep.source} and "
                f"{dep.sink} (two elements share a location: store_in/storage_fold) is not a "
                "reduction"
            )
        ds = dep.data_space
        src = upd.get(dep.source, {}).get(ds)
        snk = upd.get(dep.sink, {}).get(ds)
        what = f"the {dep.kind} dependence on {ds!r} from {dep.source} to {dep.sink}"
        for name, family in ((dep.source, src), (dep.sink, snk)):
            if family is None:
                why = _why_not_update(ir, ir.parsed_stmt(name), ds)
                return f"{what} is not a reduction: {why}"
        if src != snk:
            return (
                f"{what} is not a reduction: {dep.source} accumulates with {src} and "
                f"{dep.sink} with {snk}; one data space is reduced with one operator"
            )
        reduced[ds] = str(src)
    for ds, family in reduced.items():
        for s in inside:
            parsed = source_tree(ir, s)
            touches = any(a.data_space == ds for a in (*parsed.reads, *parsed.writes))
            if touches and upd[s.name].get(ds) != family:
                why = _why_not_update(ir, s, ds)
                if ds in upd[s.name]:
                    why = f"{s.name} accumulates into {ds} with {upd[s.name][ds]}, not {family}"
                return f"{why}; inside a reduction loop {ds} may only be accumulated into"
    return None


def reduced_only(
    ir: ComputationIR, stmt: ParsedStmt, loop: str | int, deps: Sequence[Dependence] | None = None
) -> list[str]:
    """The data spaces reduced by the dependences ``loop`` carries, when they are all
    reductions (:func:`reduction_refusal` is None); else an empty list."""
    found = carried(ir, stmt, loop, deps)
    if not found or reduction_refusal(ir, stmt, loop, deps) is not None:
        return []
    return sorted({dep.data_space for dep in found})


def is_reduction_legal(
    ir: ComputationIR, name: str, loop: str | int, reduction: str | None = None
) -> bool:
    """``comp.is_parallel_legal(stmt, loop, reduction=...)`` for the computation ``ir`` and
    its statement ``name``: whether the dependences ``loop`` carries are all reductions
    (``reduction`` None: with the option the loop is tagged with, False when it has none)."""
    stmt = ir.parsed_stmt(name)
    if reduction is None:  # the loop's own tag, if it has one
        names = stmt.loops
        at = names[loop] if isinstance(loop, int) and 0 <= loop < len(names) else loop
        reduction = reduction_option(stmt.tags.get(str(at), ()))
        if reduction is None:
            return False
    if reduction not in REDUCTION_OPTIONS:
        raise ArgumentError(
            f"is_parallel_legal: reduction must be one of "
            f"{', '.join(repr(o) for o in REDUCTION_OPTIONS)} or None, got {reduction!r}"
        )
    return reduction_refusal(ir, stmt, loop, compute_dependences(ir)) is None


def check_reduction_loops(ir: ComputationIR) -> None:
    """For the computation ``ir`` (``comp.ir``), the reduction part of ``check_legality``: a loop
    tagged ``reduction(...)`` carries only reductions (else ``IllegalScheduleError`` naming the
    first other dependence or statement), and a ``parallel`` loop without the tag whose carried
    dependences are all reductions is refused with a message naming both options. Other parallel
    loops are left to the ordinary parallel-tag check."""
    from spf.schedule.trace import blame_in

    for stmt in ir.parsed_stmts:
        for loop, tags in stmt.tags.items():
            if sums_option(tags) is not None:
                _check_sums(ir, stmt, loop, tags)
                continue
            if not any(t.split("(", 1)[0] in _PARALLEL_KINDS for t in tags):
                continue
            option = reduction_option(tags)
            if option is None and carries_nothing(ir, stmt, loop):
                continue  # no dependence carried: none that is a reduction either
            deps = compute_dependences(ir)  # remembered: computed once, when needed
            where = f"loop {loop!r} of {stmt.name} ({', '.join(tags)})"
            if option is not None:
                why = reduction_refusal(ir, stmt, loop, deps)
                if why is not None:
                    raise IllegalScheduleError(
                        f"illegal tag: {where} cannot run as a reduction loop: {why}"
                        + blame_in(ir.trace, [stmt.name], loop)
                    )
                continue
            spaces = reduced_only(ir, stmt, loop, deps)
            if spaces:
                names = ", ".join(repr(s) for s in spaces)
                raise IllegalScheduleError(
                    f"illegal tag: {where} cannot run in parallel: the dependences it carries "
                    f"are reductions on {names} (concurrent updates would race); use "
                    f'parallelize({loop!r}, reduction="atomic") for atomic updates or '
                    f'parallelize({loop!r}, reduction="privatize") for per-thread copies of '
                    f"{names} combined after the loop" + blame_in(ir.trace, [stmt.name], loop)
                )


def _check_sums(ir: ComputationIR, stmt: ParsedStmt, loop: str, tags: Sequence[str]) -> None:
    """A loop tagged ``sums(...)`` (``partial_sums``) carries dependences and all of them
    are reductions (:func:`reduction_refusal`); else ``IllegalScheduleError`` naming the
    loop and why."""
    from spf.schedule.trace import blame_in

    where = f"loop {loop!r} of {stmt.name} ({', '.join(tags)})"
    if carries_nothing(ir, stmt, loop):
        raise IllegalScheduleError(
            f"illegal tag: {where} cannot accumulate into partial sums: no dependence is "
            "carried across it, so no element is accumulated along it (partial_sums is "
            "for a loop such as a sparse row's k loop of y(i) += A(k) * x(col(k)))"
            + blame_in(ir.trace, [stmt.name], loop)
        )
    why = reduction_refusal(ir, stmt, loop, compute_dependences(ir))
    if why is not None and _apart_update(ir, stmt, loop):
        why = None  # a solve's row: the other reads of x never meet the row's own element
    if why is not None:
        raise IllegalScheduleError(
            f"illegal tag: {where} cannot accumulate into partial sums: {why}"
            + blame_in(ir.trace, [stmt.name], loop)
        )


def _apart_update(ir: ComputationIR, stmt: ParsedStmt, loop: str) -> bool:
    """Whether ``stmt`` is alone in ``loop``, writes one data space ``y``, only by one
    update ``y(f) op= e`` (``+`` or ``*`` family), and every other element of ``y`` it
    reads is kept from ``y(f)`` by the facts (:func:`spf.analysis.apart.indices_apart`, the
    proof the row scalar uses): then every dependence the loop carries goes through
    ``y(f)`` alone and the loop's updates may be reassociated (a solve's row, ``x(i) -=
    A(k) * x(col(k))``, ``col(k) < i``)."""
    d = position_in(stmt, loop, ir.schedule_width)
    if any(s.name != stmt.name and _in_loop(ir, stmt, d, s) for s in ir.parsed_stmts):
        return False
    parsed = source_tree(ir, stmt)
    if len(parsed.reductions) != 1:
        return False
    update = parsed.reductions[0]
    ds = update.data_space
    if any(a.data_space != ds or a.indices != update.indices for a in parsed.writes):
        return False
    families = _families(parsed.body, ds)
    if len(families) != 1 or not families <= set(SUPPORTED_FAMILIES):
        return False
    return all(
        indices_apart(stmt, update.indices, a.indices, ir.facts)
        for a in parsed.reads
        if a.data_space == ds and a.indices != update.indices
    )

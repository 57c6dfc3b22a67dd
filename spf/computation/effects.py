"""Scheduling commands that change domains or the statement list (:class:`Effect` commands).

``compute_at(consumer, level)`` (Tiramisu): the producer is computed inside the consumer's
loop nest at ``level``. Its domain gains the consumer's loops up to ``level`` as leading
dimensions, and for each of their values holds exactly the producer instances that write
what the consumer instances under those loops read, before the read in program order
(overlapping halos are computed redundantly). The producer runs right before the consumer
inside the shared loops. A copy that would not compute what its instance computes in program
order, or would overwrite a value before a read that needs it, makes ``compute_at`` raise
``IllegalScheduleError`` (:mod:`spf.analysis.recompute`).

``inline()``: the statement's value is substituted into its consumers; the statement and
the data space it writes disappear (:func:`spf.computation.inlining.inline_stmt`).

Both are recorded in the trace, print as Python, replay, and serialize like every command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from spf.errors import ArgumentError, IllegalScheduleError, ScheduleError
from spf.schedule.commands import ROOT, Effect, Level, check_loop_ref, register_command
from spf.schedule.order import _constants
from spf.schedule.relations import is_constant, loops_of, rebuild, set_constants
from spf.sets import Relation, Set

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt


@register_command
@dataclass(frozen=True, kw_only=True)
class ComputeAt(Effect):
    """Compute this statement (the producer) inside ``consumer``'s loops up to and
    including ``level``, just before the consumer, on the region those iterations read."""

    method: ClassVar[str] = "compute_at"
    n_required: ClassVar[int] = 2
    consumer: str
    level: Level

    def __post_init__(self) -> None:
        if not isinstance(self.consumer, str) or not self.consumer:
            raise ArgumentError(
                f"compute_at: consumer must be a statement or its name, got {self.consumer!r}"
            )
        check_loop_ref("compute_at", "level", self.level)

    def perform(self, stmt: Stmt) -> None:
        compute_at(stmt, self.consumer, self.level)


@register_command
@dataclass(frozen=True, kw_only=True)
class Inline(Effect):
    """Substitute this statement's value into the statements that read it; the statement
    and the data space it writes disappear."""

    method: ClassVar[str] = "inline"
    n_required: ClassVar[int] = 0

    def perform(self, stmt: Stmt) -> None:
        from spf.computation.inlining import inline_stmt

        comp = _comp(stmt, "inline")
        inline_stmt(comp, stmt)


def _comp(stmt: Stmt, cmd: str) -> Computation:
    comp = stmt.computation
    if comp is None:
        raise ScheduleError(f"{cmd}: statement {stmt.name} is not part of a Computation")
    return comp


def _named(names: list[str]) -> Set:
    return Set(f"{{[{', '.join(names)}]}}")


def _producer_data(comp: Computation, producer: Stmt, consumer: Stmt) -> str:
    """The one data space the producer writes; the consumer must be its only reader."""
    written = sorted({ds for ds, _ in producer.writes})
    where = f"compute_at: producer {producer.name}"
    if len(written) != 1:
        raise ScheduleError(
            f"{where} must write exactly one data space, writes {written or 'none'}"
        )
    (ds,) = written
    if not any(d == ds for d, _ in consumer.reads):
        raise ScheduleError(
            f"{where}: consumer {consumer.name} does not read {ds!r}, which {producer.name} "
            "writes; compute a statement at the statement that reads its result"
        )
    for s in comp.stmts:
        if s is producer or s is consumer:
            continue
        if any(d == ds for d, _ in s.writes):
            raise ScheduleError(
                f"{where}: {s.name} also writes {ds!r}; {producer.name} must be alone"
            )
        if any(d == ds for d, _ in s.reads):
            raise ScheduleError(
                f"{where}: {s.name} also reads {ds!r}; computing {producer.name} at "
                f"{consumer.name} only produces what {consumer.name} reads"
            )
    if any(d == ds for d, _ in producer.reads):
        raise ScheduleError(f"{where} reads {ds!r}, which it writes")
    return ds


def _shared(consumer: Stmt, level: Level) -> int:
    """How many of the consumer's loops the producer joins (they must sit at the odd
    positions 1, 3, .. of a 2d+1 schedule)."""
    from spf.schedule.apply import LoopView

    if level is ROOT:
        raise ScheduleError(
            "compute_at: level must be a loop of the consumer; to run a statement before "
            "another without sharing loops use before(other, spf.ROOT)"
        )
    view = LoopView(consumer.name, consumer.schedule)
    n = view.depth("compute_at", level) + 1
    if list(view.positions[:n]) != [2 * k + 1 for k in range(n)]:
        raise ScheduleError(
            f"compute_at: the loops of consumer {consumer.name} up to {level!r} must sit at the "
            f"odd positions of a 2d+1 schedule; its schedule is {consumer.schedule}"
        )
    return n


def _fresh(label: str | None, k: int, taken: set[str]) -> str:
    name = label or f"c{k}"
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def compute_at(producer: Stmt, consumer_ref: str, level: Level) -> None:
    """Change ``producer`` (and shift the statements after the consumer) as described in
    the module docstring; raises before changing anything."""
    from spf.computation.access import iterator_names
    from spf.schedule.apply import LoopView

    comp = _comp(producer, "compute_at")
    consumer = comp.stmt(consumer_ref)
    if consumer is producer:
        raise ScheduleError(f"compute_at: statement {producer.name} cannot be computed at itself")
    ds = _producer_data(comp, producer, consumer)
    n = _shared(consumer, level)
    cview = LoopView(consumer.name, consumer.schedule)
    cvars = list(iterator_names(consumer.domain))
    cfun = consumer.schedule.as_function(cvars)
    pits = list(iterator_names(producer.domain))
    pfun = producer.schedule.as_function(pits)
    if cfun is None or pfun is None:
        raise ScheduleError(
            f"compute_at: the schedules of {producer.name} and {consumer.name} must be "
            "functions of their iterators (one time per instance)"
        )
    if not is_constant(pfun[0]):
        raise ScheduleError(
            f"compute_at: the schedule of {producer.name} must start with a constant: "
            f"{producer.schedule}"
        )
    # the producer keeps its own loop names (a split's ``o2``, not only its iterators), so
    # a consumer loop of the same name joins it renamed (``o2_``), not twice as ``o2``
    taken = set(pits) | set(producer.loops) | set(comp.params) | set(comp.data_spaces)
    taken |= set(comp.ufs)
    outer = [_fresh(cview.labels[k], k, taken) for k in range(n)]
    ufs = comp.ufs or None
    loops = ", ".join(cfun[2 * k + 1] for k in range(n))
    to_outer = Relation(f"{{[{', '.join(cvars)}] -> [{loops}]}}", ufs=ufs).intersect_domain(
        consumer.domain
    )
    reads = [rel for d, rel in consumer.reads if d == ds]
    (write,) = [rel for d, rel in producer.writes if d == ds]
    _check_current_legal(comp, producer.name)
    flow = comp._compute_at_footprint(producer, write, consumer, reads)
    needed = flow.compose(to_outer.inverse()).intersect_range(producer.domain)
    domain = _named(outer + pits).intersect(needed.as_set())
    domain = _with_leftover(comp, producer, consumer, write, ds, needed, to_outer, domain)
    schedule = _schedule(producer, consumer, n, outer, pits, pfun)
    shifted = _shift_peers(comp, producer, consumer, n)
    new_reads, new_writes = _extend(producer.reads, outer), _extend(producer.writes, outer)
    copy = (outer + pits, domain, schedule, new_reads, new_writes)
    comp._check_compute_at(producer, consumer, level, ds, copy, shifted)
    producer._domain = domain
    producer._schedule = schedule
    producer._reads = new_reads
    producer._writes = new_writes
    loops_now = loops_of(schedule)[1]
    producer._tags = {k: v for k, v in producer.tags.items() if k in loops_now}
    for s in comp.stmts:  # the current order becomes program order (see _check_current_legal)
        s._original = s.schedule
    from spf.computation.operations import forget_orders

    forget_orders(comp)  # placed Layer IV operations too
    for s, sched in shifted.items():
        s._schedule = s._original = sched
    producer._original = schedule


def _with_leftover(
    comp: Computation,
    producer: Stmt,
    consumer: Stmt,
    write: Relation,
    ds: str,
    needed: Relation,
    to_outer: Relation,
    domain: Set,
) -> Set:
    """``domain`` plus the producer instances no consumer reads whose values are results
    of the kernel, in one extra iteration of the shared loops after the consumer's last
    (:mod:`spf.analysis.leftover`)."""
    rest = comp._compute_at_leftover(producer, consumer, write, ds, needed, to_outer)
    return domain if rest is None else domain.union(rest)


def _schedule(
    producer: Stmt,
    consumer: Stmt,
    n: int,
    outer: list[str],
    pits: list[str],
    pfun: tuple[str, ...],
) -> Relation:
    """``[c0, o0, c2, .., o_{n-1}, slot, <producer's schedule after its first constant>]``
    keeping the producer's loop names."""
    couts = consumer.schedule.pad_outputs(2 * n + 1).out_vars
    slot = couts[2 * n]
    if not is_constant(slot):
        raise ScheduleError(f"compute_at: {consumer.name} has no constant after its loop {n - 1}")
    ext = Relation(f"{{[{', '.join(outer + pits)}] -> [{', '.join([*outer, *pfun])}]}}")
    positions, _, labels = loops_of(producer.schedule)
    all_labels = [*outer, *labels]
    all_positions = [*range(n), *(n + p for p in positions)]
    outs: list[tuple[str, str | int]] = []
    for k in range(n):
        outs += [("const", int(couts[2 * k])), ("pass", k)]
    outs.append(("const", int(slot)))
    outs += [("pass", n + p) for p in range(1, len(pfun))]
    return rebuild(ext, all_labels, all_positions, outs, [])


def _extend(
    accesses: tuple[tuple[str, Relation], ...], outer: list[str]
) -> tuple[tuple[str, Relation], ...]:
    out = []
    for ds, rel in accesses:
        wide = _named(outer).product(rel.as_set()).as_relation(len(outer) + rel.in_arity)
        out.append((ds, wide))
    return tuple(out)


def _shift_peers(comp: Computation, producer: Stmt, consumer: Stmt, n: int) -> dict[Stmt, Relation]:
    """Statements in the consumer's slot or later inside the shared loops move one later."""
    q = 2 * n
    mine = _constants(consumer.schedule.out_vars, q)
    prefix, slot = mine[:-1], mine[-1]
    out: dict[Stmt, Relation] = {}
    for s in comp.stmts:
        if s is producer:
            continue
        vals = _constants(s.schedule.out_vars, q)
        if vals[:-1] == prefix and vals[-1] is not None and slot is not None and vals[-1] >= slot:
            out[s] = set_constants(s.schedule, {q: vals[-1] + 1})
    return out


def _check_current_legal(comp: Computation, producer: str) -> None:
    """``compute_at`` makes the current schedule the program order that later legality
    checks compare against; that is sound only if the current schedule respects every
    dependence of the program so far."""
    try:
        comp.check_legality()
    except IllegalScheduleError as err:
        raise IllegalScheduleError(
            f"compute_at: the schedule before computing {producer} is already illegal; fix it "
            f"first ({err})"
        ) from err


__all__ = ["ComputeAt", "Inline", "compute_at"]

"""What ``compute_at`` may recompute: its footprint and the legality of the copies.

``compute_at`` gives the producer one copy of an instance ``p`` for every iteration ``o`` of
the shared loops whose consumer instances need ``p`` (a halo is computed once per tile that
reads it). The current schedule (legal, checked first) is the program order; a copy
``(o, p)`` must compute what ``p`` computes there and the consumer must read it:

* the footprint of ``o`` holds, for each element a consumer instance under ``o`` reads, the
  producer instance whose value that read sees in program order: the last one writing it
  before the read (never a later writer; with UF calls, where the difference of sets is
  not exact, every earlier writer, run in program order so the last one still wins);
* every copy keeps the order ``p`` has in program order with each instance of another
  statement touching the same element, one of them writing (memory-based dependences, the
  copy standing for ``p``): its reads then see what ``p`` saw;
* no copy runs before a consumer read that ``p`` follows in program order (the consumer
  would read a value it never reads in program order). A copy running *after* a read it
  precedes in program order only rewrites the value the read already took from the copy
  in its own iteration of the shared loops (the last writer before the read there), so
  those pairs are allowed.

:func:`check_copies` raises ``IllegalScheduleError`` naming ``compute_at`` and the
dependence a copy would break (e.g. a time-loop stencil computed at its space loop: the
copies of a neighbour point read values the consumer has already overwritten).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from spf.analysis.dependences import KINDS, _constraint, _Timing, match
from spf.errors import IllegalScheduleError
from spf.ir.reading import iterator_names

if TYPE_CHECKING:
    from collections.abc import Mapping

    from spf.ir import ComputationIR
    from spf.ir.reading import StmtReading
    from spf.sets import Relation, Set

    AccessList = tuple[tuple[str, Relation], ...]


def _other_names(stmt: StmtReading, taken: set[str]) -> list[str]:
    out = []
    for n in iterator_names(stmt.domain):
        while n in taken:
            n += "p"
        taken.add(n)
        out.append(n)
    return out


def _touching(
    a: Relation, dom_a: Set, b: Relation, dom_b: Set, xs: Sequence[str], ys: Sequence[str]
) -> Set:
    """``{[x, y] : x in dom_a, y in dom_b, a(x) = b(y)}``."""
    touch = b.inverse().compose(a).intersect_domain(dom_a).intersect_range(dom_b)
    return _constraint([*xs, *ys], []).intersect(touch.as_set())


def _before(timing: _Timing, pairs: Set, op: str) -> Set | None:
    """The pairs whose first instance runs before (``op`` ``<``) or after (``>``) the
    second; None when there are none."""
    if pairs.is_empty():
        return None
    pieces = timing.levels(pairs, op)
    if not pieces:
        return None
    return pieces[0][1].union_all([p for _, p in pieces[1:]])


def flow_footprint(
    producer: StmtReading,
    write: Relation,
    consumer: StmtReading,
    reads: Sequence[Relation],
    width: int,
) -> Relation:
    """``{consumer instance -> producer instance}``: the producer instances that write an
    element the consumer instance reads, before it in the current schedule."""
    taken = set(producer.domain.params) | set(consumer.domain.params)
    xs = _other_names(producer, taken)
    ys = _other_names(consumer, taken)
    timing = _Timing(
        producer.schedule.pad_outputs(width), consumer.schedule.pad_outputs(width), xs, ys
    )
    found: Set | None = None
    for read in reads:
        pairs = _touching(write, producer.domain, read, consumer.domain, xs, ys)
        flow = _before(timing, pairs, "<")
        if flow is not None:
            found = flow if found is None else found.union(flow)
    if found is None:
        return _constraint([*xs, *ys], ["1 = 0"]).as_relation(len(xs)).inverse()
    found = _last_writers(found, producer, write, xs, timing.th_s)
    return found.as_relation(len(xs)).inverse()


def _last_writers(
    flow: Set, producer: StmtReading, write: Relation, xs: list[str], sched: Relation
) -> Set:
    """``flow`` without the pairs whose producer instance another one overwrites before the
    read (a time loop writes one element in every step: only the latest step is needed).
    Exact for sets without UF calls; with them every earlier writer stays (sound: the
    copies run in program order, so the last one written is still the latest)."""
    from spf.sets import Set, ops

    taken = set(xs) | set(producer.domain.params)
    later = _other_names(producer, taken)
    own = _Timing(sched, sched, xs, later)
    same = _touching(write, producer.domain, write, producer.domain, xs, later)
    overwritten = _before(own, same, "<")
    if overwritten is None:
        return flow
    # (p, c) killed: some p2 after p writes the same element and is itself a flow source of c
    killed = flow.as_relation(len(xs)).compose(overwritten.as_relation(len(xs))).as_set()
    if flow._body.hidden or killed._body.hidden or flow.uf_calls or killed.uf_calls:
        return flow
    return Set._make(ops.subtract(flow._body, killed._body), flow.ufs)


def check_copies(
    ir: ComputationIR,
    producer: StmtReading,
    consumer: StmtReading,
    level: object,
    ds: str,
    copy: tuple[list[str], Set, Relation, AccessList, AccessList],
    shifted: Mapping[str, Relation],
) -> None:
    """Raise unless every copy keeps its program-order place (module docstring).

    ``copy`` is the producer after ``compute_at``: its iterator names (shared loops first),
    domain, schedule, reads and writes; ``shifted`` the new schedules (by statement name) of
    the statements that move one slot later; ``ir``: the computation before the command."""
    names, domain, schedule, reads, writes = copy
    n_outer = len(names) - len(iterator_names(producer.domain))
    old_width = ir.schedule_width
    stmts = ir.parsed_stmts
    new_width = max(
        [schedule.out_arity, *(shifted.get(s.name, s.schedule).out_arity for s in stmts)]
    )
    outer = _constraint(names[:n_outer], [])
    old_copy = outer.product(producer.schedule.pad_outputs(old_width).as_set()).as_relation(
        len(names)
    )
    new_copy = schedule.pad_outputs(new_width)
    for other in stmts:
        if other.name == producer.name:
            continue
        taken = set(names) | set(domain.params) | set(other.domain.params)
        ys = _other_names(other, taken)
        old = _Timing(old_copy, other.schedule.pad_outputs(old_width), names, ys)
        new = _Timing(
            new_copy, shifted.get(other.name, other.schedule).pad_outputs(new_width), names, ys
        )
        for kind, mine_kind, their_kind in KINDS:
            mine = reads if mine_kind == "reads" else writes
            theirs = other.reads if their_kind == "reads" else other.writes
            for ds_a, a_rel in mine:
                for ds_b, b_rel in theirs:
                    matched = match(ir, ds_a, a_rel, ds_b, b_rel)
                    if matched is None:
                        continue
                    space, a, b = matched
                    pairs = _touching(a, domain, b, other.domain, names, ys)
                    ops: tuple[str, ...] = ("<", ">")
                    if other.name == consumer.name and ds_a == ds and kind == "flow":
                        ops = (">",)  # a later copy rewrites the value read (docstring)
                    for op in ops:
                        kept = _before(old, pairs, op)
                        if kept is None:
                            continue
                        broken = _broken(new, kept, op)
                        if broken is not None:
                            _refuse(producer, consumer, level, other, kind, op, space, broken)


def _broken(timing: _Timing, pairs: Set, op: str) -> Set | None:
    """The pairs ``timing`` does not order as ``op`` says (the other way round or at one
    time)."""
    flipped = ">" if op == "<" else "<"
    for d in range(timing.width):
        bad = timing.level(pairs, d, flipped)
        if not bad.is_empty():
            return bad
    same = timing.level(pairs, 0, "=")
    return None if same.is_empty() else same


def _refuse(
    producer: StmtReading,
    consumer: StmtReading,
    level: object,
    other: StmtReading,
    kind: str,
    op: str,
    space: str,
    pairs: Set,
) -> None:
    src, snk = (producer.name, other.name) if op == "<" else (other.name, producer.name)
    if op == ">":
        kind = {"flow": "anti", "anti": "flow"}.get(kind, kind)
    if kind == "flow":
        why = f"{snk} would read {space!r} before {src} writes the value it reads"
    elif kind == "anti":
        why = f"{snk} would overwrite {space!r} before {src} reads the value there"
    else:
        why = f"the writes of {src} and {snk} to {space!r} would land in the other order"
    raise IllegalScheduleError(
        f"illegal compute_at: computing {producer.name} at {consumer.name} loop {level!r} "
        f"recomputes instances of {producer.name} (one copy per iteration of the shared "
        f"loops) out of the order the {kind} dependence on {space!r} from {src} to {snk} "
        f"needs: {why}; compute it at an outer loop of {consumer.name}, or keep the "
        f"statements apart. Copy/instance pairs (copy first): {pairs}"
    )


__all__ = ["check_copies", "flow_footprint"]

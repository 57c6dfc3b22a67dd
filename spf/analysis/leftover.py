"""The producer instances ``compute_at`` must still run although no consumer reads them.

``compute_at`` computes, inside the consumer's loops, the producer instances whose values the
consumer reads (:func:`spf.analysis.recompute.flow_footprint`). When the data space the
producer writes is a result of the kernel (an argument, not a local or a buffer of the
function), the instances whose values are final (no later producer instance overwrites the
element) and that no consumer reads are results too: the last step of a time loop
(``A = B`` after the final stencil sweep), or every row of the blur's ``bx`` when ``N = 2``
leaves the consumer no iteration. They run in one extra iteration of the shared loops,
after the last one of the consumer (:func:`after_last`), so they still follow every read of
the elements they write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import islpy as isl

from spf.analysis.dependences import _Timing, empty
from spf.analysis.recompute import _before, _other_names, _touching
from spf.errors import IllegalScheduleError
from spf.ir.model import ARGUMENT_SCOPES
from spf.ir.reading import buffer_of, data_space, storage_of

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import StmtReading
    from spf.sets import Relation, Set

_DT = isl.dim_type


def observable(ir: ComputationIR, ds: str) -> bool:
    """Whether the final contents of ``ds`` are seen by the caller: a kernel argument that
    is not stored in a buffer the function owns."""
    space = data_space(ir, ds)
    if space is None or space.role == "local":
        return False
    placed = storage_of(ir, ds)
    buffer = None if placed is None else buffer_of(ir, placed[0])
    return buffer is None or buffer.scope in ARGUMENT_SCOPES


def _minus(a: Set, b: Set) -> Set | None:
    """``a \\ b`` when the difference is exact (``b`` has no hidden variables), else None."""
    from spf.sets import Set, ops

    if b._body.hidden:
        return None
    return Set._make(ops.subtract(a._body, b._body), {**a.ufs, **b.ufs})


def _overwritten(producer: StmtReading, write: Relation) -> Set | None:
    """The producer instances a later producer instance overwrites (current schedule);
    None when there are none."""
    xs = _other_names(producer, set(producer.domain.params))
    later = _other_names(producer, set(xs) | set(producer.domain.params))
    own = _Timing(producer.schedule, producer.schedule, xs, later)
    same = _touching(write, producer.domain, write, producer.domain, xs, later)
    pairs = _before(own, same, "<")
    return None if pairs is None else pairs.as_relation(len(xs)).domain()


def leftover(
    ir: ComputationIR,
    producer: StmtReading,
    consumer: StmtReading,
    written: tuple[Relation, str],
    needed: Relation,
) -> Set | None:
    """The producer instances (a Set over its iterators) whose values are results of the
    kernel and that no copy in ``needed`` (``{outer -> producer instance}``) computes; None
    when there are provably none. Raises ``IllegalScheduleError`` when there may be some
    and UF calls keep spf from telling which (or from running them outside the consumer's
    iterations: the extra iteration would bind index arrays past their ends)."""
    write, ds = written
    if not observable(ir, ds):
        return None
    live: Set | None = producer.domain
    gone = _overwritten(producer, write)
    if gone is not None:
        live = _minus(producer.domain, gone)
    covered = needed.range()
    rest = None if live is None else _minus(live, covered)
    if rest is not None and empty(rest, ir.facts):
        return None
    if rest is None and producer.domain.is_subset(covered):
        return None
    if rest is None or needed.uf_calls:
        raise IllegalScheduleError(
            f"illegal compute_at: {producer.name} writes {ds!r}, a result of the kernel "
            f"(an argument), and {consumer.name} may not read every value it leaves there; "
            f"computed at {consumer.name}, those instances would not run, and UF calls keep "
            "spf from telling which they are. If only the values the consumer reads matter, "
            f"make {ds!r} a temporary of the function (add_local, or store_in a stack "
            "buffer) first"
        )
    return rest


def after_last(outer: Set, names: list[str]) -> Set | None:
    """One point of the shared loops lexicographically after every point of ``outer`` (the
    consumer's iterations of those loops): ``(max of the first + 1, 0, ..)``, or all zeros
    for parameters where the consumer has none. UF constraints are dropped first (a
    superset has a larger maximum). None when the first loop has no upper bound."""
    from spf.sets import Set
    from spf.sets.body import Body, canonical

    n = len(names)
    iset = outer.body_iset()
    iset = iset.project_out(_DT.set, n, iset.dim(_DT.set) - n)
    try:
        top = iset.dim_max(0)
    except isl.Error:
        return None
    end = isl.Set.from_pw_aff(top.add_constant_val(isl.Val.one(iset.get_ctx())))
    end = end.add_dims(_DT.set, n - 1)
    zero = isl.Set.universe(end.get_space()).intersect_params(top.domain().complement())
    for k in range(n):
        zero = zero.fix_val(_DT.set, k, isl.Val.zero(iset.get_ctx()))
        if k:
            end = end.fix_val(_DT.set, k, isl.Val.zero(iset.get_ctx()))
    body = Body(tuple(names), None, (), (), end.union(zero).coalesce())
    return Set._make(canonical(body), outer.ufs)


def rest_after_last(
    ir: ComputationIR,
    producer: StmtReading,
    consumer: StmtReading,
    written: tuple[Relation, str],
    needed: Relation,
    to_outer: Relation,
) -> Set | None:
    """The :func:`leftover` instances placed at :func:`after_last` (points ``[outer..,
    producer iterators..]``), or None when there are none. ``written``: the producer's
    write access and its data space; ``to_outer``: consumer instance -> shared loops."""
    ds = written[1]
    rest = leftover(ir, producer, consumer, written, needed)
    if rest is None:
        return None
    names = [f"o{k}" for k in range(needed.in_arity)]
    end = after_last(to_outer.range(), names)
    if end is None:
        raise IllegalScheduleError(
            f"illegal compute_at: {producer.name} writes {ds!r}, a result of the kernel, "
            f"where no instance of {consumer.name} reads it ({rest}), and the shared loops "
            "have no upper bound to run those instances after; store "
            f"{ds!r} in a buffer of the function (store_in) or compute {producer.name} "
            f"at an outer loop of {consumer.name}"
        )
    return end.product(rest)


__all__ = ["after_last", "leftover", "observable", "rest_after_last"]

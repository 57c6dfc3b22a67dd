"""Locals private to the iterations of a loop (``add_local(..., private="i")``).

A private local has one fresh (zeroed) copy per iteration of its loop and of the loops around
it, as a C scalar declared inside a loop body. Its meaning is fixed by the program order: two
statement instances touch the same copy when both run inside the loop (at the same schedule
position) and their original schedules agree up to it. So:

- dependences (:func:`same_copy`): the pairs of instances on the local are kept only where
  they touch the same copy, whatever the view (``compute_dependences(private=False)`` too:
  privacy is part of the algorithm, not a layout choice); no dependence on it is carried by
  the loop or the loops around it;
- the current schedule must run every copy in exactly one iteration of some loop
  (:func:`private_position`): usually the private loop itself, untouched but for tags such as
  ``parallel`` and ``wavefront`` (loops inside it may be transformed at will); after a split
  or tile of it, the inner piece (checked by emptiness: no two instances of one copy differ
  in the schedule up to that loop, no two of different copies agree). Generated code declares
  the local at the start of that loop's body (per thread in parallel loops), and the
  interpreter gives it a fresh copy per iteration;
- a dependence carried through a *shared* scalar is the usual reason a loop cannot run in
  parallel or as a wavefront: :func:`shared_scalar_hint` says how to make it private.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from spf.analysis.dependences import (
    _constraint,
    empty,
    function_of,
    out_vars,
    padded,
    pair_names,
)
from spf.analysis.memo import remembered
from spf.errors import IllegalScheduleError, VerifyError
from spf.ir.reading import data_space, is_constant, iterator_names, uses
from spf.sets import Relation

if TYPE_CHECKING:
    from spf.analysis.inspector import Dependence
    from spf.ir import ComputationIR
    from spf.ir.reading import ParsedStmt
    from spf.sets import Set
    from spf.sets.facts import Fact


def private_loop(ir: ComputationIR, space: str) -> str | None:
    """The loop ``space`` is private to (None: not a private local)."""
    ds = data_space(ir, space)
    return None if ds is None else ds.private


def _position(sched: Relation, loop: str) -> int | None:
    """Where loop ``loop`` is in the (padded) schedule ``sched``; None when it has no such
    loop."""
    outs = out_vars(sched)
    found = [k for k, v in enumerate(outs) if v == loop and not is_constant(v)]
    return found[0] if found else None


def same_copy(
    ir: ComputationIR,
    space: str,
    pairs: Set,
    xs: list[str],
    ys: list[str],
    orders: tuple[Relation, Relation],
) -> Set:
    """``pairs`` (over ``xs + ys``) restricted to instances touching the same copy of the
    private local ``space``: equal program-order times (``orders``, padded) up to its loop.
    Unchanged for other spaces, and where the loop is not at one position in both
    statements (sound: :func:`private_position` refuses such a computation)."""
    loop = private_loop(ir, space)
    if loop is None:
        return pairs
    p, q = _position(orders[0], loop), _position(orders[1], loop)
    fs, gs = function_of(orders[0], xs), function_of(orders[1], ys)
    if p is None or p != q or fs is None or gs is None:
        return pairs
    conds = [
        f"{f} = {g}"
        for f, g in zip(fs[: p + 1], gs[: p + 1], strict=True)
        if f.strip() != g.strip()
    ]
    return pairs.intersect(_constraint(xs + ys, conds)) if conds else pairs


def users(ir: ComputationIR, space: str) -> list[ParsedStmt]:
    """The statements (and operations) of ``ir`` that read or write ``space``."""
    return [s for s in ir.parsed_stmts if uses(s, space)]


def private_position(ir: ComputationIR, space: str) -> int | None:
    """For the computation ``ir`` (``comp.ir``), the position, in the current (padded) schedules, of
    the loop whose iterations each hold one copy of the private local ``space`` (None when no
    statement uses it).

    Raises ``SpfError`` when a statement using it does not run inside its loop, and
    ``IllegalScheduleError`` when no loop of the current schedule runs exactly one copy per
    iteration (see the module docstring). Remembered by ``ir.fingerprint``
    (:mod:`spf.analysis.memo`)."""
    return remembered(ir, ("private_position", space), lambda: _position_now(ir, space))


def _position_now(ir: ComputationIR, space: str) -> int | None:
    loop = private_loop(ir, space)
    assert loop is not None
    stmts = users(ir, space)
    if not stmts:
        return None
    width = ir.schedule_width
    p = _original_position(stmts, space, loop, width)
    if _kept(stmts, p, width):
        return p
    found = _regrouped(ir, stmts, p, width)
    if found is None:
        raise _moved(stmts, space, loop)
    return found


def _original_position(stmts: list[ParsedStmt], space: str, loop: str, width: int) -> int:
    """The position of ``loop`` in the program order of every statement in ``stmts``."""
    found: set[int] = set()
    for s in stmts:
        order = padded(s, width, "original")
        p = _position(order, loop)
        if p is None:
            first = ", ".join(v for v in out_vars(order) if not is_constant(v)) or "none"
            head = f"statement {s.name} uses {space!r}, a local private to loop {loop!r}"
            if loop in s.loops:  # a loop the schedule made: tile_gpu's j1, split's i0 ...
                raise VerifyError(
                    f"{head}, which is a loop of its current schedule ({', '.join(s.loops)}) "
                    f"but not of its program order ({first}), the loops private= names; "
                    f"name the loop of the program order that {loop!r} came from: the local "
                    "then lives in the loop of the schedule that runs one iteration of it"
                )
            raise VerifyError(
                f"{head}, but does not run inside a loop {loop!r} (its loops: {first}); "
                "declare the local private to a loop around every statement that uses it"
            )
        found.add(p)
    if len(found) > 1:
        raise VerifyError(
            f"local {space!r} is private to loop {loop!r}, which is at different depths in "
            f"the statements that use it ({', '.join(s.name for s in stmts)}); "
            "name the loops alike only where they are one loop"
        )
    return found.pop()


def _kept(stmts: list[ParsedStmt], p: int, width: int) -> bool:
    """Whether the schedule keeps the loops up to ``p`` as they were (tags aside) and the
    statements that shared a nest there still share one (and only they)."""
    nests: dict[tuple[str, ...], tuple[str, ...]] = {}
    for s in stmts:
        its = list(iterator_names(s.domain))
        fo = function_of(padded(s, width, "original"), its)
        fc = function_of(padded(s, width), its)
        if fo is None or fc is None or fo[1 : p + 1 : 2] != fc[1 : p + 1 : 2]:
            return False
        before, now = tuple(fo[0:p:2]), tuple(fc[0:p:2])
        if nests.setdefault(before, now) != now:
            return False
    return len(set(nests.values())) == len(nests)


_Pair = tuple[list[str], "Set", tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _regrouped(ir: ComputationIR, stmts: list[ParsedStmt], p: int, width: int) -> int | None:
    """The first loop position of the current schedules whose iterations hold exactly one
    copy each (instances of one copy share the schedule up to it, instances of two copies
    do not), e.g. the inner loop of a split or tiled private loop; None when there is none."""
    pairs: list[_Pair] = []
    for s in stmts:
        for t in stmts:
            xs, ys = pair_names(s, t)
            times = [
                function_of(padded(u, width, which), names)
                for u, names in ((s, xs), (t, ys))
                for which in ("original", "current")
            ]
            os_, cs, ot, ct = times
            if os_ is None or cs is None or ot is None or ct is None:
                return None
            both = Relation(f"{{[{', '.join(xs)}] -> [{', '.join(ys)}]}}")
            inst = both.intersect_domain(s.domain).intersect_range(t.domain).as_set()
            base = _constraint(xs + ys, []).intersect(inst)
            pairs.append((xs + ys, base, os_[: p + 1], ot[: p + 1], cs, ct))
    facts = ir.facts
    for pos in range(1, width, 2):
        if all(
            _never(names, base, _equal(cs[: pos + 1], ct[: pos + 1]), os_, ot, facts)
            and _never(names, base, _equal(os_, ot), cs[: pos + 1], ct[: pos + 1], facts)
            for names, base, os_, ot, cs, ct in pairs
        ):
            return pos
    return None


def _equal(a: Sequence[str], b: Sequence[str]) -> list[str] | None:
    """Constraints ``a = b`` (None when two constants differ: never equal)."""
    out = []
    for x, y in zip(a, b, strict=True):
        if is_constant(x) and is_constant(y):
            if int(x) != int(y):
                return None
        elif x.strip() != y.strip():
            out.append(f"{x} = {y}")
    return out


def _never(
    names: list[str],
    base: Set,
    given: list[str] | None,
    a: Sequence[str],
    b: Sequence[str],
    facts: Sequence[Fact],
) -> bool:
    """Whether no pair of ``base`` satisfying ``given`` has ``a != b`` (tuples)."""
    if given is None:
        return True
    held = base.intersect(_constraint(names, given)) if given else base
    for x, y in zip(a, b, strict=True):
        if x.strip() == y.strip() or (is_constant(x) and is_constant(y) and int(x) == int(y)):
            continue
        for op in ("<", ">"):
            if not empty(held.intersect(_constraint(names, [f"{x} {op} {y}"])), facts):
                return False
    return True


def _moved(stmts: list[ParsedStmt], space: str, loop: str) -> IllegalScheduleError:
    scheds = "; ".join(f"{s.name}: {s.schedule}" for s in stmts)
    return IllegalScheduleError(
        f"illegal schedule: {', '.join(s.name for s in stmts)} use {space!r}, a local private "
        f"to each iteration of loop {loop!r}, but no loop of their schedules ({scheds}) runs "
        f"exactly one iteration of {loop!r} per iteration (the schedule moves {loop!r} inside "
        f"another loop, or separates or merges the statements that share a copy); transform "
        f"{loop!r} so that one of its pieces runs its iterations (split, tile), or only the "
        f"loops inside it, or make {space!r} a function-level local (without private=)"
    )


def check_private(ir: ComputationIR) -> None:
    """Every private local's copies still live in one iteration of its loop
    (:func:`private_position`)."""
    for ds in ir.data_spaces:
        if ds.private is not None:
            private_position(ir, ds.name)


def shared_scalar_hint(
    ir: ComputationIR, space: str, loop: str, dep: Dependence | None = None
) -> str:
    """Advice for a dependence on ``space`` (``dep`` when known) that loop ``loop``
    carries: when ``space`` is a shared scalar, how to make it private (empty otherwise),
    unless ``dep`` runs through a reduction's running value, which must stay shared: then
    what to do instead (:func:`spf.analysis.reductions.accumulation_hint`)."""
    ds = data_space(ir, space)
    if (
        not loop
        or ds is None
        or ds.rank != 0
        or ds.private is not None
        or ds.role not in ("data", "local")
    ):
        return ""
    if dep is not None:
        from spf.analysis.reductions import accumulation_hint

        reduction = accumulation_hint(ir, dep, loop)
        if reduction:
            return reduction
    return (
        f"; {space!r} is a scalar shared by every iteration of loop {loop!r}: make it private "
        f"to each iteration by declaring it inside the loop body in C "
        f"('double {space} = ...;'), or by writing it before reading it in every iteration "
        f"(a function-level scalar then becomes private), or with "
        f"comp.add_local({space!r}, {ds.type!r}, private={loop!r})"
    )


def shared_buffer_hint(ir: ComputationIR, space: str, loop: str, stmt: str) -> str:
    """Advice for a dependence on ``space`` that loop ``loop`` of ``stmt`` carries: when
    ``space`` is stored in a function-level buffer (a ``cache_read`` copy's
    ``<data space>_pack_buf``, a ``store_in`` buffer allocated once per call), or when
    ``space`` is such a buffer (a storage dependence: a fold), how to give each iteration
    its own (empty otherwise)."""
    if not loop:
        return ""
    stored = {p.buffer for p in ir.placements if p.data_space == space}
    for b in ir.buffers:
        if b.name == space and b.allocation is None and not b.argument:
            # a storage dependence (two elements at one location of a fold or store_in)
            return (
                f"; buffer {b.name!r} is one array allocated once per call and shared by "
                f"every iteration of loop {loop!r}: give each iteration its own with "
                f"comp.buffer({b.name!r}).allocate_at({stmt!r}, {loop!r}) (or at a loop "
                "inside it that holds its writers and readers)"
            )
        if b.name in stored and b.allocation is None and not b.argument:
            return (
                f"; {space!r} is stored in buffer {b.name!r}, one array allocated once per "
                f"call and shared by every iteration of loop {loop!r}: give each iteration "
                f"its own with comp.buffer({b.name!r}).allocate_at({stmt!r}, {loop!r}) (or "
                "at a loop inside it that holds the copy and its readers)"
            )
    return ""

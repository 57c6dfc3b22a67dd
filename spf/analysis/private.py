"""Locals private to the iterations of a loop (``add_local(..., private="i")``).

A private local has one fresh (zeroed) copy per iteration of its loop and of the loops around
it, as a C scalar declared inside a loop body. Its meaning is fixed by the program order: two
statement instances touch the same copy when both run inside the loop (at the same schedule
position) and their original schedules agree up to it. So:

- dependences (:func:`same_copy`): the pairs of instances on the local are kept only where
  they touch the same copy, whatever the view (``compute_dependences(private=False)`` too:
  privacy is part of the algorithm, not a layout choice); no dependence on it is carried by
  the loop or the loops around it;
- the current schedule must keep every copy in one iteration of the same loop
  (:func:`private_position`): the loops up to it keep their place and their expressions
  (tags such as ``parallel`` and ``wavefront`` are fine; inner loops may be transformed), and
  statements that shared a copy still share the loop nest. Then generated code declares the
  local at the start of that loop's body (per thread in parallel loops), and the interpreter
  gives it a fresh copy per iteration;
- a dependence carried through a *shared* scalar is the usual reason a loop cannot run in
  parallel or as a wavefront: :func:`shared_scalar_hint` says how to make it private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.analysis.dependences import _constraint, function_of, out_vars, padded
from spf.computation.access import iterator_names
from spf.computation.statement import is_constant
from spf.errors import IllegalScheduleError, SpfError

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt
    from spf.sets import Relation, Set


def private_loop(comp: Computation, space: str) -> str | None:
    """The loop ``space`` is private to (None: not a private local)."""
    ds = comp.data_spaces.get(space)
    return None if ds is None else ds.private


def _position(sched: Relation, loop: str) -> int | None:
    """Where loop ``loop`` is in the (padded) schedule ``sched``; None when it has no such
    loop."""
    outs = out_vars(sched)
    found = [k for k, v in enumerate(outs) if v == loop and not is_constant(v)]
    return found[0] if found else None


def same_copy(
    comp: Computation,
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
    loop = private_loop(comp, space)
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


def users(comp: Computation, space: str) -> list[Stmt]:
    """The statements that read or write ``space``."""
    return [s for s in comp.stmts if any(ds == space for ds, _ in (*s.reads, *s.writes))]


def private_position(comp: Computation, space: str) -> int | None:
    """The position, in the current (padded) schedules, of the loop whose iterations each
    hold one copy of the private local ``space`` (None when no statement uses it).

    Raises ``SpfError`` when a statement using it does not run inside its loop, and
    ``IllegalScheduleError`` when the schedule no longer keeps each copy inside one
    iteration of that loop (see the module docstring)."""
    loop = private_loop(comp, space)
    assert loop is not None
    width = comp.schedule_width()
    found: set[int] = set()
    nests: dict[tuple[str, ...], tuple[str, ...]] = {}
    for s in users(comp, space):
        orig, cur = padded(s, width, "original"), padded(s, width)
        p = _position(orig, loop)
        if p is None:
            raise SpfError(
                f"statement {s.name} uses {space!r}, a local private to loop {loop!r}, but "
                f"does not run inside a loop {loop!r} (its loops: {', '.join(s.loops) or 'none'})"
                f"; declare the local private to a loop around every statement that uses it"
            )
        its = list(iterator_names(s.domain))
        fo, fc = function_of(orig, its), function_of(cur, its)
        if fo is None or fc is None or fo[1 : p + 1 : 2] != fc[1 : p + 1 : 2]:
            raise _moved(s, space, loop)
        found.add(p)
        before, now = tuple(fo[0:p:2]), tuple(fc[0:p:2])
        if nests.setdefault(before, now) != now or list(nests.values()).count(now) > 1:
            raise _moved(s, space, loop)
    if len(found) > 1:
        raise SpfError(
            f"local {space!r} is private to loop {loop!r}, which is at different depths in "
            f"the statements that use it ({', '.join(s.name for s in users(comp, space))}); "
            "name the loops alike only where they are one loop"
        )
    return found.pop() if found else None


def _moved(stmt: Stmt, space: str, loop: str) -> IllegalScheduleError:
    return IllegalScheduleError(
        f"illegal schedule: {stmt.name} uses {space!r}, a local private to each iteration of "
        f"loop {loop!r}, but its schedule {stmt.schedule} moves loop {loop!r} or the loops "
        f"around it (or separates statements that share a copy), so one copy would no longer "
        f"live in one iteration; transform only the loops inside {loop!r}, or make "
        f"{space!r} a function-level local (without private=)"
    )


def check_private(comp: Computation) -> None:
    """Every private local's copies still live in one iteration of its loop
    (:func:`private_position`)."""
    for name, ds in comp.data_spaces.items():
        if ds.private is not None:
            private_position(comp, name)


def shared_scalar_hint(comp: Computation, space: str, loop: str) -> str:
    """Advice for a dependence on ``space`` that loop ``loop`` carries: when ``space`` is a
    shared scalar, how to make it private (empty otherwise)."""
    ds = comp.data_spaces.get(space)
    if (
        not loop
        or ds is None
        or ds.rank != 0
        or ds.private is not None
        or ds.role not in ("data", "local")
    ):
        return ""
    return (
        f"; {space!r} is a scalar shared by every iteration of loop {loop!r}: make it private "
        f"to each iteration by declaring it inside the loop body in C "
        f"('double {space} = ...;'), or by writing it before reading it in every iteration "
        f"(a function-level scalar then becomes private), or with "
        f"comp.add_local({space!r}, {ds.ctype!r}, private={loop!r})"
    )

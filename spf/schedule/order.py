"""Ordering statements: ``after`` (``before`` and ``then`` are ``after`` on the other one).

``s.after(o, level)`` makes ``s`` share ``o``'s loops up to and including ``level`` (none for
``ROOT``) and run right after ``o`` inside the innermost shared loop: ``s`` takes ``o``'s
constants at the even (2d+1) positions up to that depth and ``o``'s next constant plus one,
and keeps the rest of its schedule. When another statement already sits there, every
statement from that slot on (same outer constants) moves one slot later, so statements left
unordered keep their order. Statements fused into ``s``'s loops by earlier orders (``t.after(s,
level)`` sharing more loops than the new order does, and theirs in turn) move with ``s``: ordering
a statement before the first statement of a fused nest moves the nest, not just its first
statement. An ``after`` that breaks an earlier ``after`` of the same statement (two conflicting
predecessors) raises ``SpfError`` naming both. PDFG ``reschedule`` (:func:`place_rescheduled`)
moves a statement to just before another instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spf.errors import ScheduleError, SpfError, UndeclaredError
from spf.schedule.commands import ROOT, After, Follow, Reschedule
from spf.schedule.relations import State, is_constant, loops_of, set_constants


def shared_loops(stmt: str, cmd: After, states: Mapping[str, State]) -> int:
    """How many loops ``stmt`` shares with ``cmd.other`` (``level`` resolved against the
    other statement's loops, then against ``stmt``'s)."""
    level = cmd.level
    _, other_names, _ = loops_of(states[cmd.other].schedule)
    _, own_names, _ = loops_of(states[stmt].schedule)
    if level is ROOT:
        return 0
    if isinstance(level, int):
        if level < min(len(other_names), len(own_names)):
            return level + 1
        raise UndeclaredError(
            "loop",
            str(level),
            other_names,
            hint=f"after: depth {level} is not a loop of both {cmd.other} "
            f"({len(other_names)} loop(s)) and {stmt} ({len(own_names)} loop(s))",
        )
    if level in other_names:
        return other_names.index(level) + 1
    if level in own_names:
        return own_names.index(level) + 1
    raise UndeclaredError(
        "loop", level, other_names, hint=f"after: not a loop of {cmd.other} nor of {stmt}"
    )


def _constants(schedule_outs: Sequence[str], q: int) -> list[int | None]:
    """Values at the even positions ``0, 2, .., q`` (padded with 0; None: not a constant)."""
    outs = [*schedule_outs, *(["0"] * max(0, q + 1 - len(schedule_outs)))]
    return [int(outs[p]) if is_constant(outs[p]) else None for p in range(0, q + 1, 2)]


def _check_nest(stmt: str, partner: str, state: State, n: int) -> list[int | None]:
    positions, names, _ = loops_of(state.schedule)
    if len(positions) < n:
        raise ScheduleError(
            f"after: statement {stmt} has {len(names)} loop(s) "
            f"({', '.join(names) or 'none'}), fewer than the {n} the level asks it to share "
            f"with {partner}: name a loop both statements have (or spf.ROOT) as the level"
        )
    inner_ok = len(positions) <= n or positions[n] > 2 * n
    if list(positions[:n]) != [2 * k + 1 for k in range(n)] or not inner_ok:
        raise ScheduleError(
            f"after: statement {stmt} needs {n} loop(s) at the odd positions of a 2d+1 "
            f"schedule to share them with {partner}; its schedule is {state.schedule}"
        )
    return _constants(state.schedule.out_vars, 2 * n)


def place_after(
    stmt: str, cmd: After, states: Mapping[str, State], orders: Sequence[tuple[str, After]]
) -> dict[str, State]:
    """The new states of ``stmt`` and of the statements it pushes one slot later."""
    return _place(stmt, cmd, states, orders, 1)


def place_before(
    stmt: str, cmd: After, states: Mapping[str, State], orders: Sequence[tuple[str, After]]
) -> dict[str, State]:
    """``stmt`` (with the nest fused into it) takes the slot of ``cmd.other`` inside their
    shared loops up to ``cmd.level``; ``cmd.other`` and every later statement there move one
    slot later (PDFG ``reschedule``: the mover moves, the anchor keeps its neighbours;
    :func:`place_rescheduled` decides which earlier orders give way)."""
    return _place(stmt, cmd, states, orders, 0)


def place_rescheduled(
    stmt: str, cmd: Reschedule, states: Mapping[str, State], orders: Sequence[tuple[str, After]]
) -> tuple[dict[str, State], tuple[Follow, ...]]:
    """PDFG ``reschedule``: the new states when ``stmt`` (with the nest fused into it) takes
    the slot of ``cmd.other`` inside their loops up to ``cmd.level``, and the orders the
    move reversed. The earlier orders of ``stmt`` against statements outside its nest give
    way (the user asked for this place); each that no longer holds while its reverse does
    comes back reversed, as ``(succ, pred, level)``, so later commands see the orders in
    force (:attr:`Reschedule.follows`)."""
    anchor = After(other=cmd.other, level=cmd.level)
    group = fused_with(stmt, shared_loops(stmt, anchor, states), states, orders)
    own = [o for o in orders if stmt in (o[0], o[1].other)]
    given_way = [o for o in own if not {o[0], o[1].other} <= group]
    kept = [o for o in orders if o not in given_way]
    updates = place_before(stmt, anchor, states, kept)
    new = {**states, **updates}
    follows: list[Follow] = []
    for succ, old in latest_orders(given_way):
        pred = old.other
        if {succ, pred} == {stmt, cmd.other} or _order_holds(succ, old, new):
            continue
        if _order_holds(pred, After(other=succ, level=old.level), new):
            follows.append((pred, succ, old.level))
    return updates, tuple(follows)


def _order_holds(succ: str, cmd: After, states: Mapping[str, State]) -> bool:
    try:
        return holds(states[succ], states[cmd.other], shared_loops(succ, cmd, states))
    except SpfError:
        return False


def _place(
    stmt: str,
    cmd: After,
    states: Mapping[str, State],
    orders: Sequence[tuple[str, After]],
    offset: int,
) -> dict[str, State]:
    """``stmt`` at ``cmd.other``'s slot plus ``offset`` (1: right after, 0: right before)."""
    if cmd.other not in states:
        raise UndeclaredError("statement", cmd.other, states, hint=f"after: for {stmt}")
    if cmd.other == stmt:
        raise ScheduleError(f"after: statement {stmt} cannot run after itself")
    n = shared_loops(stmt, cmd, states)
    q = 2 * n
    theirs = _check_nest(cmd.other, stmt, states[cmd.other], n)
    _check_nest(stmt, cmd.other, states[stmt], n)
    if any(v is None for v in theirs):
        raise ScheduleError(
            f"after: the schedule of {cmd.other} has no constant at some even position up to "
            f"{q}: {states[cmd.other].schedule}"
        )
    prefix, slot = theirs[:-1], int(theirs[-1] or 0) + offset
    moving = fused_with(stmt, n, states, orders) - {cmd.other}
    peers: dict[str, int] = {}
    for name, st in states.items():
        vals = _constants(st.schedule.out_vars, q)
        if name not in moving and vals[:-1] == prefix and vals[-1] is not None:
            peers[name] = vals[-1]
    updates: dict[str, State] = {}
    if slot in peers.values():
        for name, v in peers.items():
            if v >= slot:
                st = states[name]
                updates[name] = State(set_constants(st.schedule, {q: v + 1}), st.tags)
    values = {2 * k: int(c or 0) for k, c in enumerate(prefix)} | {q: slot}
    for name in sorted(moving):
        own = states[name]
        updates[name] = State(set_constants(own.schedule, values), own.tags)
    new_states = {**states, **updates}
    for name in [stmt, *sorted(moving - {stmt})]:
        _check_orders(name, cmd if name == stmt else None, stmt, new_states, orders)
    return updates


def latest_orders(orders: Sequence[tuple[str, After]]) -> list[tuple[str, After]]:
    """The orders in force: a later order of the same pair replaces an earlier one."""
    seen: set[frozenset[str]] = set()
    out: list[tuple[str, After]] = []
    for succ, cmd in reversed(orders):
        pair = frozenset((succ, cmd.other))
        if pair not in seen:
            seen.add(pair)
            out.append((succ, cmd))
    return out[::-1]


def fused_with(
    stmt: str, n: int, states: Mapping[str, State], orders: Sequence[tuple[str, After]]
) -> set[str]:
    """``stmt`` and the statements ordered after it (transitively) inside more than ``n`` of
    its loops: the nest that moves with ``stmt`` when ``stmt`` is ordered at depth ``n``."""
    group = {stmt}
    todo = [stmt]
    latest = latest_orders(orders)
    while todo:
        pred = todo.pop()
        for succ, cmd in latest:
            if cmd.other != pred or succ in group or succ not in states:
                continue
            try:
                shared = shared_loops(succ, cmd, states)
            except SpfError:
                continue  # its loop no longer exists: not fused any more
            if shared > n and holds(states[succ], states[pred], shared):
                group.add(succ)
                todo.append(succ)
    return group


def holds(succ: State, pred: State, n: int) -> bool:
    """Whether ``succ`` still runs after ``pred`` inside their ``n`` shared loops (True
    where that cannot be read off constants)."""
    q = 2 * n
    a = _constants(succ.schedule.out_vars, q)
    b = _constants(pred.schedule.out_vars, q)
    if any(v is None for v in (*a, *b)):
        return True
    return a[:-1] == b[:-1] and int(a[-1] or 0) > int(b[-1] or 0)


def _check_orders(
    name: str,
    cmd: After | None,
    stmt: str,
    states: Mapping[str, State],
    orders: Sequence[tuple[str, After]],
) -> None:
    """Every earlier order involving ``name`` still holds (``cmd``: the new order of ``name``,
    which replaces an earlier one of the same pair; None for a statement that moved with
    ``stmt``)."""
    seen = {frozenset((name, cmd.other))} if cmd is not None else set()
    for succ, earlier in reversed(orders):  # a later order of the same pair replaces one
        pair = frozenset((succ, earlier.other))
        if pair in seen:
            continue
        seen.add(pair)
        if name not in pair or succ not in states or earlier.other not in states:
            continue
        try:
            n = shared_loops(succ, earlier, states)
        except SpfError:
            continue  # its loop no longer exists: nothing to compare
        if not holds(states[succ], states[earlier.other], n):
            partner = earlier.other if succ == name else succ
            if cmd is None:
                raise ScheduleError(
                    f"after: {name} runs inside the loops of {stmt} and moves with it, which "
                    f"breaks the earlier {succ}.after({earlier.other!r}, {earlier.level!r}) "
                    f"({partner} would stay behind); order {stmt} before giving {succ} that "
                    "predecessor (conflicting predecessors)"
                )
            raise ScheduleError(
                f"after: running {name} right after {cmd.other} at level {cmd.level!r} breaks "
                f"the earlier {succ}.after({earlier.other!r}, {earlier.level!r}); "
                f"{name} cannot be ordered against both {cmd.other} and {partner} this way "
                "(conflicting predecessors)"
            )

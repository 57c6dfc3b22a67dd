"""What the scheduling commands do: pure functions from schedules to schedules.

A loop transformation builds a relation ``T`` on the schedule's output space and returns
``T . schedule`` (composition), named so that every loop of the result carries its loop
name. :func:`apply_command` maps a command and a :class:`Context` (every statement's
schedule and tags, the reserved names) to the new states of the statements it changes and
raises before anything changes; :func:`run` applies it to a ``Stmt`` and records it in the
computation's trace. Commands do not check legality (as in Tiramisu): ``check_legality``
and ``codegen`` do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from spf.errors import ArityError, InternalError, ScheduleError, UndeclaredError
from spf.schedule import tags as tagrules
from spf.schedule.commands import (
    INTERNAL_PREFIX,
    After,
    Command,
    Distribute,
    Fuse,
    Gpu,
    Interchange,
    Loop,
    Parallelize,
    PartialSums,
    Pipeline,
    Reschedule,
    Reverse,
    SetSchedule,
    Shift,
    Skew,
    Split,
    Tile,
    TileGpu,
    Unroll,
    Vectorize,
    Wavefront,
)
from spf.schedule.order import place_after, place_rescheduled
from spf.schedule.relations import State, Tags, loops_of, rebuild
from spf.sets import UF, Relation

__all__ = ["Context", "LoopView", "State", "apply_command", "transform"]


@dataclass(frozen=True)
class Context:
    """Everything a command may read: all statements (in order), names a loop may not take."""

    states: Mapping[str, State]
    domain_arity: Mapping[str, int]
    reserved: frozenset[str] = frozenset()
    ufs: Mapping[str, UF] = field(default_factory=dict)
    orders: tuple[tuple[str, After], ...] = ()
    """The orders earlier commands put in force as ``(statement, After)``, oldest first
    (:meth:`spf.schedule.trace.Trace.orders`)."""


class LoopView:
    """The loops of one schedule: output positions that are not constants, outer first."""

    def __init__(self, stmt: str, schedule: Relation) -> None:
        self.stmt = stmt
        self.schedule = schedule
        self.outs = schedule.out_vars
        self.positions, self.names, self.labels = loops_of(schedule)
        """Loop positions, names as shown, and names as names (None for ``i + 1``)."""

    def depth(self, cmd: str, loop: Loop) -> int:
        """The depth of ``loop`` (a name or a depth); ``UndeclaredError`` lists the loops."""
        if isinstance(loop, int) and not isinstance(loop, bool):
            if 0 <= loop < len(self.names):
                return loop
            hint = f"{cmd}: statement {self.stmt} has {len(self.names)} loop(s); depth {loop}"
            raise UndeclaredError("loop", str(loop), self.names, hint=hint + " is not one")
        if loop in self.names:
            return self.names.index(loop)
        raise UndeclaredError(
            "loop", str(loop), self.names, hint=f"{cmd}: not a loop of statement {self.stmt}"
        )


def _check_labels(
    cmd: str, stmt: str, labels: Sequence[str | None], new: Sequence[str], reserved: frozenset[str]
) -> None:
    """New loop names must not be data spaces, UFs or parameters, nor repeat a loop name."""
    for n in new:
        if n in reserved:
            raise ScheduleError(
                f"{cmd}: the new loop name {n!r} of statement {stmt} collides with a data "
                "space, UF, parameter or statement of the computation; pick another name"
            )
    seen: set[str] = set()
    for label in labels:
        if label is None:
            continue
        if label in seen:
            raise ScheduleError(
                f"{cmd}: the loop name {label!r} would be used twice in statement {stmt} "
                f"(loops afterwards: {', '.join(x or '?' for x in labels)}); pick another name"
            )
        seen.add(label)


def _q(k: int) -> str:
    return f"{INTERNAL_PREFIX}q{k}"


# ------------------------------------------------------------------- loop transformations
Out = tuple[str, str | int]
"""One output of ``T``: ``("pass", k)``, ``("const", c)``, ``("name", n)`` or ``("expr", e)``."""


def _passes(view: LoopView, start: int, stop: int) -> list[Out]:
    return [("pass", k) for k in range(start, stop)]


def _relabel(view: LoopView, outs: Sequence[Out]) -> list[str | None]:
    """Loop names of the new schedule, outer first (None for unnamed loops)."""
    out: list[str | None] = []
    for kind, v in outs:
        if kind == "name":
            out.append(str(v))
        elif kind == "pass":
            k = int(v)
            if k in view.positions:
                out.append(view.labels[view.positions.index(k)])
        elif kind == "expr":
            out.append(None)
    return out


def _result(
    cmd: str,
    view: LoopView,
    outs: list[Out],
    conds: list[str],
    new: Sequence[str],
    reserved: frozenset[str],
) -> Relation:
    _check_labels(cmd, view.stmt, _relabel(view, outs), new, reserved)
    return rebuild(view.schedule, view.labels, view.positions, outs, conds)


def _moved(view: LoopView, d: int, name: str | None, value: str) -> tuple[Out, list[str]]:
    """Loop ``d`` replaced by ``value`` (text over ``T``'s inputs), named ``name`` if any."""
    if name is None:
        return ("expr", value), []
    return ("name", name), [f"{name} = {value}"]


def transform(
    cmd: Command, view: LoopView, reserved: frozenset[str]
) -> tuple[Relation, dict[str, str]]:
    """The new schedule for a loop transformation, and the loops it renames (old -> new)."""
    name = cmd.method
    if isinstance(cmd, Tile):
        return _tile(cmd, view, reserved)
    if isinstance(cmd, (Split, Vectorize)):
        loop = cmd.loop
        d = view.depth(name, loop)
        factor = cmd.factor if isinstance(cmd, Split) else cmd.width
        outer, inner = _split_names(cmd, view, d)
        return _split(name, view, d, factor, outer, inner, reserved)
    if isinstance(cmd, Interchange):
        a, b = view.depth(name, cmd.i), view.depth(name, cmd.j)
        if a == b:
            raise ScheduleError(f"interchange: {cmd.i!r} and {cmd.j!r} are the same loop")
        pa, pb = view.positions[a], view.positions[b]
        outs = _passes(view, 0, len(view.outs))
        outs[pa], outs[pb] = outs[pb], outs[pa]
        return _result(name, view, outs, [], [], reserved), {}
    if isinstance(cmd, (Shift, Reverse)):
        d = view.depth(name, cmd.loop)
        p = view.positions[d]
        value = f"{_q(p)} + ({cmd.amount})" if isinstance(cmd, Shift) else f"-{_q(p)}"
        outs = _passes(view, 0, len(view.outs))
        outs[p], conds = _moved(view, d, view.labels[d], value)
        return _result(name, view, outs, conds, [], reserved), {}
    if isinstance(cmd, Skew):
        return _skew(cmd, view, reserved)
    raise InternalError(f"spf bug: {type(cmd).__name__} is not a loop transformation")


def _split_names(cmd: Split | Vectorize, view: LoopView, d: int) -> tuple[str, str]:
    if isinstance(cmd, Split):
        return cmd.outer, cmd.inner
    base = view.labels[d] or f"c{d}"
    return cmd.outer or f"{base}0", cmd.inner or f"{base}1"


def _split(
    cmd: str,
    view: LoopView,
    d: int,
    factor: int,
    outer: str,
    inner: str,
    reserved: frozenset[str],
) -> tuple[Relation, dict[str, str]]:
    p = view.positions[d]
    outs: list[Out] = [*_passes(view, 0, p), ("name", outer), ("const", 0), ("name", inner)]
    outs += _passes(view, p + 1, len(view.outs))
    conds = [f"{_q(p)} = {factor}*{outer} + {inner}", f"0 <= {inner} < {factor}"]
    old = view.labels[d]
    renames = {old: outer} if old is not None else {}
    return _result(cmd, view, outs, conds, [outer, inner], reserved), renames


def _tile(cmd: Tile, view: LoopView, reserved: frozenset[str]) -> tuple[Relation, dict[str, str]]:
    a, b = view.depth("tile", cmd.i), view.depth("tile", cmd.j)
    if b != a + 1:
        raise ScheduleError(
            f"tile: loops {cmd.i!r} (depth {a}) and {cmd.j!r} (depth {b}) of statement "
            f"{view.stmt} are not consecutive (j must be the loop right inside i); loops: "
            f"{', '.join(view.names)}"
        )
    pi, pj = view.positions[a], view.positions[b]
    outs: list[Out] = [*_passes(view, 0, pi), ("name", cmd.i0), ("const", 0), ("name", cmd.j0)]
    outs += [("const", 0), ("name", cmd.i1), *_passes(view, pi + 1, pj), ("name", cmd.j1)]
    outs += _passes(view, pj + 1, len(view.outs))
    conds = [
        f"{_q(pi)} = {cmd.ti}*{cmd.i0} + {cmd.i1}",
        f"0 <= {cmd.i1} < {cmd.ti}",
        f"{_q(pj)} = {cmd.tj}*{cmd.j0} + {cmd.j1}",
        f"0 <= {cmd.j1} < {cmd.tj}",
    ]
    new = [cmd.i0, cmd.j0, cmd.i1, cmd.j1]
    renames = {old: to for old, to in ((view.labels[a], cmd.i0), (view.labels[b], cmd.j0)) if old}
    return _result("tile", view, outs, conds, new, reserved), renames


def _skew(cmd: Skew, view: LoopView, reserved: frozenset[str]) -> tuple[Relation, dict[str, str]]:
    a, b = view.depth("skew", cmd.i), view.depth("skew", cmd.j)
    if a == b:
        raise ScheduleError(f"skew: {cmd.i!r} and {cmd.j!r} are the same loop")
    pi, pj = view.positions[a], view.positions[b]
    outs = _passes(view, 0, len(view.outs))
    conds: list[str] = []
    if cmd.new_i is not None:
        outs[pi], conds = _moved(view, a, cmd.new_i, _q(pi))
    name_j = cmd.new_j if cmd.new_j is not None else view.labels[b]
    outs[pj], more = _moved(view, b, name_j, f"{_q(pj)} + ({cmd.factor})*{_q(pi)}")
    new = [n for n in (cmd.new_i, cmd.new_j) if n is not None]
    renames = {
        old: to
        for old, to in ((view.labels[a], cmd.new_i), (view.labels[b], cmd.new_j))
        if old is not None and to is not None
    }
    return _result("skew", view, outs, conds + more, new, reserved), renames


def retag(
    tags: Tags, renames: Mapping[str, str], loops: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """Tags after a transformation: renamed loops take their tags along; tags of loops that
    no longer exist are dropped."""
    out: dict[str, tuple[str, ...]] = {}
    for loop, ts in tags.items():
        to = renames.get(loop, loop)
        if to in loops:
            out[to] = tuple(dict.fromkeys((*out.get(to, ()), *ts)))
    return out


def _with_tag(tags: Tags, loop: str, tag: str) -> dict[str, tuple[str, ...]]:
    """``tags`` with ``tag`` on ``loop``, replacing a tag of the same kind (``unroll(2)``)."""
    kind = tag.split("(", 1)[0]
    out = dict(tags)
    kept = tuple(t for t in out.get(loop, ()) if t.split("(", 1)[0] != kind)
    out[loop] = (*kept, tag)
    return out


def _parallel_tags(tags: Tags, loop: str, cmd: Parallelize) -> dict[str, tuple[str, ...]]:
    """``parallel`` on ``loop`` and ``reduction(<option>)`` with ``cmd.reduction`` (a plain
    ``parallelize`` drops an earlier one); a loop already mapped to gpu blocks or threads
    only gains the reduction tag (its iterations already run concurrently)."""
    kept = tuple(t for t in tags.get(loop, ()) if tagrules.kind(t) != "reduction")
    out = {**tags, loop: kept}
    if cmd.reduction is None or not any(tagrules.kind(t) in tagrules.GPU_KINDS for t in kept):
        out = _with_tag(out, loop, "parallel")
    if cmd.reduction is not None:
        out = _with_tag(out, loop, f"reduction({cmd.reduction})")
    return out


# ------------------------------------------------------------------------------- dispatch
def apply_command(cmd: Command, stmt: str, ctx: Context) -> dict[str, State]:
    """The new states of the statements ``cmd`` changes when applied to ``stmt`` (pure);
    the tags of every changed statement are validated again (:mod:`spf.schedule.tags`)."""
    updates = _apply(cmd, stmt, ctx)
    for name, state in updates.items():
        tagrules.validate(cmd.call_text(), name, LoopView(name, state.schedule).names, state.tags)
    return updates


def _gpu_tags(
    cmd: str, view: LoopView, tags: Tags, blocks: Sequence[Loop], threads: Sequence[Loop]
) -> dict[str, tuple[str, ...]]:
    names = [view.names[view.depth(cmd, loop)] for loop in (*blocks, *threads)]
    if len(set(names)) != len(names):
        raise ScheduleError(f"{cmd}: a loop is named twice among the gpu loops {names}")
    out = {
        loop: tuple(t for t in ts if tagrules.kind(t) not in tagrules.GPU_KINDS)
        for loop, ts in tags.items()
    }
    for k, loop in enumerate(names[: len(blocks)]):
        out = _with_tag(out, loop, f"gpu_block({k})")
    for k, loop in enumerate(names[len(blocks) :]):
        out = _with_tag(out, loop, f"gpu_thread({k})")
    return {loop: ts for loop, ts in out.items() if ts}


def _tag_of(cmd: Unroll | Distribute | Pipeline | Wavefront | PartialSums) -> str:
    """The loop tag a tagging command puts (replacing a tag of its kind on the loop: a
    second ``unroll`` or ``partial_sums`` replaces the first's)."""
    if isinstance(cmd, PartialSums):
        return f"sums({cmd.count},{cmd.min_trip})"
    if isinstance(cmd, Wavefront):
        return f"wavefront({cmd.how})"
    if isinstance(cmd, Unroll):
        return f"unroll({cmd.factor})"
    if isinstance(cmd, Pipeline):
        return "pipeline" if cmd.ii == 1 else f"pipeline({cmd.ii})"
    return "distribute"


def _apply(cmd: Command, stmt: str, ctx: Context) -> dict[str, State]:
    if stmt not in ctx.states:
        raise UndeclaredError("statement", stmt, ctx.states)
    state = ctx.states[stmt]
    if isinstance(cmd, (After, Reschedule, Fuse)):
        return _ordered(cmd, stmt, ctx)
    if isinstance(cmd, SetSchedule):
        return {stmt: _set_schedule(cmd, stmt, state, ctx)}
    view = LoopView(stmt, state.schedule)
    if isinstance(cmd, (Parallelize, Unroll, Distribute, Pipeline, Wavefront, PartialSums)):
        loop = view.names[view.depth(cmd.method, cmd.loop)]
        if isinstance(cmd, Parallelize):
            return {stmt: State(state.schedule, _parallel_tags(state.tags, loop, cmd))}
        return {stmt: State(state.schedule, _with_tag(state.tags, loop, _tag_of(cmd)))}
    if isinstance(cmd, Gpu):
        tags = _gpu_tags("gpu", view, state.tags, cmd.blocks, cmd.threads)
        return {stmt: State(state.schedule, tags)}
    if isinstance(cmd, TileGpu):
        a, b = view.depth("tile_gpu", cmd.i), view.depth("tile_gpu", cmd.j)
        li, lj = view.labels[a] or f"c{a}", view.labels[b] or f"c{b}"
        tile = Tile(
            i=cmd.i,
            j=cmd.j,
            ti=cmd.ti,
            tj=cmd.tj,
            i0=cmd.i0 or f"{li}0",
            j0=cmd.j0 or f"{lj}0",
            i1=cmd.i1 or f"{li}1",
            j1=cmd.j1 or f"{lj}1",
        )
        schedule, renames = transform(tile, view, ctx.reserved)
        new = LoopView(stmt, schedule)
        tags = retag(state.tags, renames, new.names)
        tags = _gpu_tags("tile_gpu", new, tags, (tile.i0, tile.j0), (tile.i1, tile.j1))
        return {stmt: State(schedule, tags)}
    schedule, renames = transform(cmd, view, ctx.reserved)
    loops = LoopView(stmt, schedule).names
    tags = retag(state.tags, renames, loops)
    if isinstance(cmd, Vectorize):
        inner = _split_names(cmd, view, view.depth("vectorize", cmd.loop))[1]
        tags = _with_tag(tags, inner, f"vector({cmd.width})")
    return {stmt: State(schedule, tags)}


def _ordered(cmd: After | Reschedule | Fuse, stmt: str, ctx: Context) -> dict[str, State]:
    """A new place in the program order: ``after``, PDFG ``fuse`` (the earlier orders that
    give way are in ``cmd``) or PDFG ``reschedule`` (the orders it reverses are in ``cmd``)."""
    if isinstance(cmd, After):
        return place_after(stmt, cmd, ctx.states, ctx.orders)
    if isinstance(cmd, Fuse):
        ended = cmd.replaced(stmt)
        kept = [o for o in ctx.orders if frozenset((o[0], o[1].other)) not in ended]
        return place_after(stmt, After(other=cmd.other, level=cmd.level), ctx.states, kept)
    return place_rescheduled(stmt, cmd, ctx.states, ctx.orders)[0]


def _set_schedule(cmd: SetSchedule, stmt: str, state: State, ctx: Context) -> State:
    rel = Relation(cmd.relation, ufs=dict(ctx.ufs))  # {}: a call of an undeclared UF is refused
    want = ctx.domain_arity.get(stmt, rel.in_arity)
    if rel.in_arity != want:
        raise ArityError(
            f"set_schedule: the schedule {rel} takes {rel.in_arity}-tuples but the domain of "
            f"statement {stmt} has arity {want}"
        )
    loops = LoopView(stmt, rel).names
    return State(rel, retag(state.tags, {}, loops))

"""Candidates as symbolic loop nests: which commands each stage may add, and the loops a
schedule would have after them (for the cost model, without touching the computation)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from spf.tuning.blocking import lanes, names
from spf.tuning.space import Space, Step, cores

if TYPE_CHECKING:
    from spf.tuning.blocking import Block
    from spf.tuning.nest import Nest


@dataclass(frozen=True)
class Loop:
    """A loop of the symbolic nest: its name, the original loop variable it enumerates, its
    trip count and whether index arrays bound it."""

    name: str
    var: str
    extent: float
    dense: bool


@dataclass(frozen=True)
class State:
    """The symbolic schedule after some steps."""

    loops: tuple[Loop, ...]
    tiled: tuple[str, ...] = ()  # names of the outer loops of tiles/splits
    packed: tuple[str, ...] = ()
    vector: int = 1
    unroll: int = 1
    parallel: str = ""  # "", "parallelize", "wavefront"
    reduction: str | None = None
    method: str = ""
    blocked: tuple[int, ...] = ()  # the blocking (mc, kc, nc, mr, nr) of GEMM-like statements
    fissioned: bool = False  # the main statement has loops of its own inside the outermost
    inner: bool = False  # the parallel loop is inside the outermost one (a region per iteration)
    piped: int = 0  # rows per strip of a producer-consumer pipeline (spf.tuning.pipeline)
    skewed: float = 0.0  # time steps per tile of a skewed stencil (spf.tuning.skew)

    def names(self) -> tuple[str, ...]:
        return tuple(lp.name for lp in self.loops)


def initial(nest: Nest) -> State:
    return State(
        tuple(
            Loop(n, n, e, d) for n, e, d in zip(nest.loops, nest.extents, nest.dense, strict=True)
        )
    )


def fresh(state: State, base: str, taken: set[str]) -> str:
    """An unused loop name ``base``, ``base_``, ``base__``, ..."""
    name = fresh_name(base, set(state.names()) | taken)
    taken.add(name)
    return name


def fresh_name(base: str, taken: set[str]) -> str:
    """``base`` followed by as many ``_`` as make it new; the result joins ``taken``."""
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def writes_move(nest: Nest, var: str) -> bool:
    """Whether every write of the nest moves with ``var`` (else the loop over ``var`` is a
    reduction: vectorizing it is illegal, parallelizing it needs a reduction option)."""
    from spf.tuning.model import mentions

    writes = [a for a in nest.accesses if a.write]
    return bool(writes) and all(any(mentions(e, var) for e in a.exprs) for a in writes)


def _pieces(state: State, loop: Loop, taken: set[str]) -> tuple[str, str]:
    """Fresh names of the outer and inner loop ``loop`` is cut into."""
    return fresh(state, loop.name + "0", taken), fresh(state, loop.name + "1", taken)


def _compute_at(nest: Nest, state: State, space: Space) -> list[Step]:
    """The main statement computed at the row strips of its consumer (``nest.pipe``), in
    strips of each number of rows of the space (``"thread"``: one strip per thread of each
    thread count of the space)."""
    if nest.pipe is None or not state.loops:
        return []
    extent = state.loops[0].extent
    rows: list[int] = []
    for p in space.get("compute_at"):
        if p == "thread":
            rows += [math.ceil(extent / (t or cores())) for t in space.get("threads")]
        elif p < extent:
            rows.append(int(p))
    pair = (nest.pipe.producer, nest.pipe.consumer)
    return [Step("compute_at", r, pair) for r in dict.fromkeys(rows) if r >= 1]


def _fission(nest: Nest, state: State, space: Space) -> list[Step]:
    """Give the main statement loops of its own inside the outermost loop (``Nest.fission``),
    so that interchanges and tiles of its inner loops leave the other statements alone."""
    if not nest.fission or not space.get("fission") or not state.loops:
        return []
    return [Step("fission", True, (state.loops[0].name,))]


def _interchange(nest: Nest, state: State, space: Space) -> list[Step]:
    loops = state.loops
    if not space.get("interchange"):
        return []
    first = 0 if nest.outer_parallel else 1  # a loop carrying a dependence stays outermost
    first = max(first, nest.fixed)  # and loops shared with statements outside the nest stay
    return [
        Step("interchange", True, (loops[a].name, loops[b].name))
        for b in range(len(loops))
        for a in range(first, b)
        if all(lp.dense for lp in loops[: b + 1])
    ]


def _tiling(nest: Nest, state: State, space: Space) -> list[Step]:
    loops, out = state.loops, []
    # a stencil's time loop is tiled only skewed (a plain time tile crosses its dependences)
    timed = nest.stencil is not None and bool(loops) and loops[0].var == nest.stencil.loops[0]
    for p in range(len(loops) - 1):
        if not all(lp.dense for lp in loops[: p + 2]) or (timed and p == 0) or p < nest.fixed:
            continue
        for size in space.get("tile"):
            if size[0] < loops[p].extent and size[1] < loops[p + 1].extent:
                taken: set[str] = set()
                (i0, i1), (j0, j1) = (
                    _pieces(state, loops[p], taken),
                    _pieces(state, loops[p + 1], taken),
                )
                out.append(Step("tile", size, (loops[p].name, loops[p + 1].name, i0, j0, i1, j1)))
    for f in space.get("split") if loops and not timed and not nest.fixed else ():
        if f < loops[0].extent:
            out.append(Step("split", f, (loops[0].name, *_pieces(state, loops[0], set()))))
    out += _skews(nest, state, space)
    main = main_block(nest)
    if main is not None and state.names() == nest.loops and not state.fissioned:
        i0 = names(main, set(nest.loops))["i0"]
        ext = {lp.var: lp.extent for lp in state.loops}
        out += [
            Step("blocking", p, (i0,))
            for p in space.get("blocking")
            if ext[main.i] * ext[main.j] * ext[main.k] >= MIN_BLOCKED
            and ext[main.i] >= p[3]
            and ext[main.j] >= p[4]
        ]
    return out


def _skews(nest: Nest, state: State, space: Space) -> list[Step]:
    """Time skewing and tiling of a stencil nest as given (``nest.stencil``), for each tile
    size ``(tt, tx)`` smaller than the time steps and rows."""
    st = nest.stencil
    if st is None or state.names() != nest.loops or state.fissioned:
        return []
    steps = state.loops[0].extent * len(st.stmts)
    return [
        Step("skew", size, (st.wave, st.tile))
        for size in space.get("skew")
        if size[0] < steps and size[1] < state.loops[1].extent
    ]


def _skewed(nest: Nest, state: State, size: tuple[int, int]) -> State:
    """The loops after a ``skew`` ``(tt, tx)``: wavefronts, time tiles, ``t`` inside a tile,
    the skewed space loops (the first ``tx`` rows)."""
    st = nest.stencil
    assert st is not None
    tt, tx = size
    t, first, *rest = state.loops
    count = len(st.stmts)
    tiles_t = max(t.extent * count / tt, 1.0)
    tiles_x = max((first.extent + st.radius * t.extent * count) / tx, 1.0)
    inner = (Loop(n, lp.var, lp.extent, True) for n, lp in zip(st.skewed[1:], rest, strict=True))
    loops = (Loop(st.wave, t.var, tiles_t + tiles_x, True),
             Loop(st.tile, t.var, min(tiles_t, tiles_x), True),
             Loop(t.name, t.var, max(tt / count, 1.0), True),
             Loop(st.skewed[0], first.var, float(tx), True), *inner)  # fmt: skip
    # gcc vectorizes the innermost skewed loop (unit stride, no dependence inside a step)
    return replace(state, loops=loops, tiled=(st.wave, st.tile), skewed=max(tt / count, 1.0),
                   vector=SKEW_LANES)  # fmt: skip


SKEW_LANES = 4
"""The vector width the model credits a skewed stencil's innermost loop with (gcc's)."""


MIN_BLOCKED = 64**3
"""Iterations of the three loops below which no blocking is offered (packing then costs more than it
saves; a register tile wider than the loop is never offered either)."""


def main_block(nest: Nest) -> Block | None:
    """The main statement when it is GEMM-like (:mod:`spf.tuning.blocking`)."""
    for b in nest.blocks:
        if b.stmt in nest.stmts and {b.i, b.j, b.k} == set(nest.loops):
            return b
    return None


def _blocked(nest: Nest, state: State, param: tuple[int, ...]) -> State:
    """The main statement's loops after ``blocking`` ``param`` (``j0, k0, i0, j2, i2, k1,
    i3, j30, j31``)."""
    main = main_block(nest)
    assert main is not None
    mc, kc, nc, mr, nr = param
    n = names(main, set(nest.loops))
    ext = {lp.var: lp.extent for lp in state.loops}
    ei, ej, ek = ext[main.i], ext[main.j], ext[main.k]
    vec = lanes(nr, main.itemsize)
    shape = [("j0", main.j, ej / nc), ("k0", main.k, ek / kc), ("i0", main.i, ei / mc),
             ("j2", main.j, min(nc, ej) / nr), ("i2", main.i, min(mc, ei) / mr),
             ("k1", main.k, min(kc, ek)), ("i3", main.i, mr), ("j30", main.j, nr / vec),
             ("j31", main.j, vec)]  # fmt: skip
    loops = tuple(Loop(n[r], v, max(float(e), 1.0), True) for r, v, e in shape)
    return replace(state, loops=loops, vector=vec, unroll=mr, blocked=param,
                   parallel="parallelize", inner=True)  # fmt: skip


def _cache_read(nest: Nest, state: State, space: Space) -> list[Step]:
    if len(state.tiled) < 2 or state.skewed:
        return []
    wanted = space.get("cache_read")
    return [
        Step("cache_read", ds, (state.tiled[-1],))
        for ds in nest.reads
        if True in wanted or ds in wanted
    ]


def _vectorize(nest: Nest, state: State, space: Space) -> list[Step]:
    if not state.loops or state.blocked or not writes_move(nest, state.loops[-1].var):
        return []
    if state.skewed:  # gcc vectorizes the skewed loop itself; split by spf it ran 1.9x slower
        return []
    inner = state.loops[-1]
    return [
        Step("vectorize", w, (inner.name, *_pieces(state, inner, set())))
        for w in space.get("vectorize")
        if w <= inner.extent
    ]


def _unroll(nest: Nest, state: State, space: Space) -> list[Step]:
    if not state.loops or state.vector > 1 or state.blocked:
        return []
    inner = state.loops[-1]
    return [Step("unroll", f, (inner.name,)) for f in space.get("unroll") if f <= inner.extent]


def _parallel(nest: Nest, state: State, space: Space) -> list[Step]:
    """``parallelize`` the outermost loop (with a reduction option exactly when it is a
    reduction loop), or run it as a ``wavefront`` when it carries a dependence, or then the
    loop inside it (a time step's sweep); none over a packed copy (one buffer shared by the
    threads) nor in a blocked nest (its ``i0`` loop is parallel already)."""
    if not state.loops or state.packed or state.blocked:
        return []
    if state.skewed:  # the time tiles of a wavefront of skewed tiles
        return [Step("parallelize", None, (state.loops[1].name,))] * (
            None in space.get("parallelize")
        )
    outer = state.loops[0]
    moving = writes_move(nest, outer.var)
    carried = outer.var == nest.loops[0] and not nest.outer_parallel
    stencil = nest.stencil is not None  # its time loop is no reduction, nor a wavefront's
    # a loop shared with statements outside the nest is theirs too (the first nest's moves)
    shared = bool(nest.fixed) and outer.name == nest.loops[0]
    out = [
        Step("parallelize", r, (outer.name,))
        for r in space.get("parallelize")
        if (r is None) == moving and not (carried and r is None) and not stencil and not shared
    ]
    if carried and outer.name == nest.loops[0]:
        out += [Step("wavefront", m, (outer.name,)) for m in space.get("wavefront")
                if not stencil and not shared]  # fmt: skip
        second = state.loops[1] if len(state.loops) > 1 else None
        if second is not None and second.dense and writes_move(nest, second.var):
            out += [Step("parallelize", None, (second.name,))] * (None in space.get("parallelize"))
    return out


_STAGES = {
    "compute_at": _compute_at,
    "fission": _fission,
    "interchange": _interchange,
    "tiling": _tiling,
    "cache_read": _cache_read,
    "vectorize": _vectorize,
    "unroll": _unroll,
    "parallel": _parallel,
}


def options(nest: Nest, state: State, stage: str, space: Space) -> list[Step]:
    """The steps stage ``stage`` may add to ``state`` (skipping the stage is always also an
    option, added by the caller); none after a ``compute_at``, which schedules the whole
    pipeline."""
    if state.piped:
        return []
    return _STAGES[stage](nest, state, space)


def _whole(state: State, step: Step, nest: Nest | None) -> State | None:
    """The state after a command that reshapes the whole nest (``skew``, ``blocking`` and
    ``compute_at``) or marks it (``fission``); None for the others."""
    if step.kind == "skew" and nest is not None:
        return _skewed(nest, state, tuple(step.param))
    if step.kind == "blocking" and nest is not None:
        return _blocked(nest, state, tuple(step.param))
    if step.kind == "fission":
        return replace(state, fissioned=True)
    if step.kind == "compute_at":
        return replace(state, piped=int(step.param), parallel="parallelize")
    return None


def advance(state: State, step: Step, nest: Nest | None = None) -> State:
    """The symbolic schedule after ``step`` (``blocking`` needs the ``nest``)."""
    loops = list(state.loops)
    pos = {lp.name: k for k, lp in enumerate(loops)}
    if step.kind == "interchange":
        a, b = pos[step.loops[0]], pos[step.loops[1]]
        loops[a], loops[b] = loops[b], loops[a]
        return replace(state, loops=tuple(loops))
    if step.kind == "tile":
        i, _j, i0, j0, i1, j1 = step.loops
        p = pos[i]
        li, lj = loops[p], loops[p + 1]
        ti, tj = step.param
        new = [
            Loop(i0, li.var, max(li.extent / ti, 1.0), True),
            Loop(j0, lj.var, max(lj.extent / tj, 1.0), True),
            Loop(i1, li.var, float(ti), True),
            Loop(j1, lj.var, float(tj), True),
        ]
        loops[p : p + 2] = new
        return replace(state, loops=tuple(loops), tiled=(*state.tiled, i0, j0))
    if step.kind in ("split", "vectorize"):
        name, outer, inner = step.loops
        p = pos[name]
        lp = loops[p]
        f = step.param
        loops[p : p + 1] = [
            Loop(outer, lp.var, max(lp.extent / f, 1.0), lp.dense),
            Loop(inner, lp.var, float(min(f, lp.extent)), lp.dense),
        ]
        if step.kind == "vectorize":
            return replace(state, loops=tuple(loops), vector=f)
        return replace(state, loops=tuple(loops), tiled=(*state.tiled, outer))
    whole = _whole(state, step, nest)
    if whole is not None:
        return whole
    if step.kind == "cache_read":
        return replace(state, packed=(*state.packed, str(step.param)))
    if step.kind == "unroll":
        return replace(state, unroll=int(step.param))
    if step.kind == "parallelize":
        nested = bool(state.loops) and step.loops[0] != state.loops[0].name
        return replace(state, parallel="parallelize", reduction=step.param, inner=nested)
    if step.kind == "wavefront":
        return replace(state, parallel="wavefront", method=str(step.param))
    return state

"""A candidate made real: its commands applied to a copy of the computation."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spf.errors import ArgumentError, ScheduleError, SpfError
from spf.schedule.trace import Trace
from spf.tuning.blocking import apply as apply_blocking
from spf.tuning.pipeline import apply as apply_pipeline
from spf.tuning.skew import apply as apply_skew

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.tuning.nest import Nest
    from spf.tuning.space import Candidate, Space, Step


def realize(
    comp: Computation, cand: Candidate, nests: Nest | Mapping[str, Nest], space: Space
) -> Computation:
    """A clone of ``comp`` with the commands of ``cand`` applied (``comp`` is untouched):
    those of its chain in order, each on its main nest (``nests[c.main]``; one ``Nest``: the
    first main nest's, for candidates of no other nest). A command that
    does not apply raises the ``SpfError`` it raises on its own; an illegal one
    (``wavefront`` refuses loops it cannot order) ``IllegalScheduleError``."""
    from spf.tuning.nest import Nest

    by_main = {"": nests} if isinstance(nests, Nest) else nests
    copy = comp.clone()
    if cand.extra is not None:
        given = space.candidates[cand.extra]
        if callable(given):
            _user(copy, given, cand.extra)
        else:
            Trace.from_data(list(given)).replay(copy)
        return copy
    for part in cand.chain():
        for step in part.steps:
            _apply(copy, step, by_main[part.main])
    return copy


def _user(copy: Computation, fn: Callable[[Any], object], index: int) -> None:
    try:
        fn(copy)
    except SpfError:
        raise
    except Exception as err:
        raise ArgumentError(
            f"tune: space['candidates'][{index}] raised {type(err).__name__}: {err}"
        ) from err


def _whole(comp: Computation, step: Step, nest: Nest) -> bool:
    """Apply a command that is not one per statement of the nest; False for the others."""
    if step.kind == "wavefront":
        comp.wavefront(step.loops[0], method=str(step.param))
    elif step.kind == "cache_read":
        comp.stmt(_main(comp, nest, step.loops)).cache_read(str(step.param), step.loops[0])
    elif step.kind == "fission":
        for stmt, other, level in nest.fission:
            comp.stmt(stmt).after(other, level)
    elif step.kind == "blocking":
        for block in nest.blocks:
            apply_blocking(comp, block, step.param)
    elif step.kind == "skew" and nest.stencil is not None:
        apply_skew(comp, nest.stencil, *step.param)
    elif step.kind == "compute_at" and nest.pipe is not None:
        apply_pipeline(comp, nest.pipe, int(step.param))
    else:
        return False
    return True


def _apply(comp: Computation, step: Step, nest: Nest) -> None:
    loops = step.loops
    if _whole(comp, step, nest):
        return
    need = loops[:2] if step.kind in ("interchange", "tile") else loops[:1]
    targets = [s for s in nest.stmts if all(lp in comp.stmt(s).loops for lp in need)]
    if not targets:
        raise ScheduleError(f"tune: no statement has the loops {', '.join(need)}")
    for name in targets:
        s = comp.stmt(name)
        p = step.param
        if step.kind == "interchange":
            s.interchange(loops[0], loops[1])
        elif step.kind == "tile":
            s.tile(loops[0], loops[1], p[0], p[1], *loops[2:])
        elif step.kind == "split":
            s.split(loops[0], p, loops[1], loops[2])
        elif step.kind == "vectorize":
            s.vectorize(loops[0], p, loops[1], loops[2])
        elif step.kind == "unroll":
            s.unroll(loops[0], p)
        elif step.kind == "parallelize":
            s.parallelize(loops[0], reduction=p)
    if step.kind == "tile":
        _align(comp, step, nest, targets)


def _align(comp: Computation, step: Step, nest: Nest, tiled: list[str]) -> None:
    """When the tile splits the outermost loop: split it alike in the nest's statements that
    have it but not the second tiled loop (``tmp(i) = 0`` before ``tmp(i) += A(i, j) * x(j)``),
    and keep statements that shared only the outermost loop in loops of their own inside
    the tile loop (the tiles would otherwise share the inner tile loop: atax's
    ``y(j) += A(i, j) * tmp(i)`` would read ``tmp(i)`` before its sum is complete)."""
    i, _j, i0, _j0, i1, _j1 = step.loops
    if i != nest.loops[0]:
        return
    for name in nest.stmts:
        loops = comp.stmt(name).loops
        if name not in tiled and loops[:1] == (i,):
            comp.stmt(name).split(i, step.param[0], i0, i1)
    for name, before, shared in nest.chain:
        if shared == 1 and i0 in comp.stmt(name).loops and i0 in comp.stmt(before).loops:
            comp.stmt(name).after(before, i0)


def _main(comp: Computation, nest: Nest, loops: Sequence[str]) -> str:
    """The statement of the nest with the most loops among those that have ``loops``."""
    have = [s for s in nest.stmts if all(lp in comp.stmt(s).loops for lp in loops)]
    if not have:
        raise ScheduleError(f"tune: no statement has the loop {loops[0]}")
    return max(have, key=lambda s: len(comp.stmt(s).loops))


def new_entries(comp: Computation, start: int) -> list[Mapping[str, Any]]:
    """The trace entries ``comp`` gained after its first ``start`` (JSON data)."""
    return [e.to_data() for e in comp.trace.entries[start:]]


def commands_text(comp: Computation, start: int) -> str:
    """The Python of the commands after the first ``start`` of ``comp``'s trace."""
    return Trace(comp.trace.entries[start:]).as_python()

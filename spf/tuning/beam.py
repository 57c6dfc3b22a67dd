"""Candidate generation: a beam search over command sequences guided by the cost model, and
the mutations of the evolutionary refinement.

A candidate takes at most one command per stage (:data:`spf.tuning.space.STAGES`), in stage
order. The beam keeps the :data:`WIDTH` sequences the model likes best after each stage;
the last stage's sequences, times each thread count for the parallel ones, are the ranked
list the search measures from the top. A mutation redoes one stage of a measured candidate
(another option or none) or its thread count, and keeps the other stages' commands where
they still apply.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from spf.tuning.model import predict
from spf.tuning.moves import State, advance, initial, options
from spf.tuning.space import STAGES, Candidate, Space, Step, cores

if TYPE_CHECKING:
    import random

    from spf.tuning.nest import Nest

WIDTH = 24
"""Sequences kept after each stage."""

TIES = 3
"""Sequences of one predicted cost kept after each stage."""

STAGE_OF = {
    "compute_at": "compute_at",
    "fission": "fission",
    "interchange": "interchange",
    "tile": "tiling",
    "split": "tiling",
    "skew": "tiling",
    "blocking": "tiling",
    "cache_read": "cache_read",
    "vectorize": "vectorize",
    "unroll": "unroll",
    "parallelize": "parallel",
    "wavefront": "parallel",
}


def _score(nest: Nest, state: State, space: Space) -> float:
    threads = space.get("threads") if state.parallel else (None,)
    return min(predict(nest, state, t, cores()) for t in threads)


def ranked(nest: Nest, space: Space) -> list[tuple[float, Candidate]]:
    """Every candidate the beam keeps, with its predicted seconds, best first (the default
    schedule itself excluded)."""
    beam: list[tuple[State, tuple[Step, ...]]] = [(initial(nest), ())]
    for stage in STAGES:
        grown: dict[tuple[object, ...], tuple[State, tuple[Step, ...]]] = {}
        for state, steps in beam:
            grown.setdefault(tuple(s.key() for s in steps), (state, steps))
            for step in options(nest, state, stage, space):
                new = (*steps, step)
                grown.setdefault(tuple(s.key() for s in new), (advance(state, step, nest), new))
        scored = sorted(grown.values(), key=lambda g: _score(nest, g[0], space))
        beam = scored if stage == STAGES[-1] else _diverse(nest, scored, space)
    out: list[tuple[float, Candidate]] = []
    for state, steps in beam:
        for t in space.get("threads") if state.parallel else (None,):
            if steps or t is not None:
                out.append((predict(nest, state, t, cores()), Candidate(steps, t)))
    out.sort(key=lambda pc: (pc[0], len(pc[1].steps)))  # ties: fewer commands first
    return out


def singles(nest: Nest, space: Space) -> list[tuple[float, Candidate]]:
    """Every one-command candidate, best predicted first: what the search tries when the
    beam's list is used up (its sequences may all be illegal for a nest the model misjudges)."""
    state = initial(nest)
    out: list[tuple[float, Candidate]] = []
    for stage in STAGES:
        for step in options(nest, state, stage, space):
            after = advance(state, step, nest)
            for t in space.get("threads") if after.parallel else (None,):
                out.append((predict(nest, after, t, cores()), Candidate((step,), t)))
    out.sort(key=lambda pc: pc[0])
    return out


def _diverse(
    nest: Nest, scored: list[tuple[State, tuple[Step, ...]]], space: Space
) -> list[tuple[State, tuple[Step, ...]]]:
    """The best :data:`WIDTH` of ``scored``, at most :data:`TIES` of any one prediction (the
    model often cannot tell tile sizes apart; measuring tells them apart, and the beam keeps
    room for other shapes)."""
    kept: list[tuple[State, tuple[Step, ...]]] = []
    count: dict[float, int] = {}
    for g in scored:
        p = round(_score(nest, g[0], space), 12)
        if count.get(p, 0) < TIES:
            count[p] = count.get(p, 0) + 1
            kept.append(g)
        if len(kept) == WIDTH:
            break
    return kept


def predicted(nest: Nest, cand: Candidate) -> float:
    """The model's seconds for ``cand`` (its steps replayed symbolically)."""
    state = initial(nest)
    for s in cand.steps:
        state = advance(state, s, nest)
    return predict(nest, state, cand.threads, cores())


def mutate(nest: Nest, space: Space, cand: Candidate, rng: random.Random) -> Candidate:
    """``cand`` with one stage of its own steps (on ``nest``, its main nest) or its thread
    count chosen again at random; the chain before it is kept."""
    threads = space.get("threads")
    pick = rng.randrange(len(STAGES) + (1 if cand.parallel and len(threads) > 1 else 0))
    if pick == len(STAGES):
        others = [t for t in threads if t != cand.threads]
        return replace(cand, threads=rng.choice(others))
    old = {STAGE_OF[s.kind]: s for s in cand.steps}
    state, steps = initial(nest), []
    for k, stage in enumerate(STAGES):
        opts = options(nest, state, stage, space)
        prev = old.get(stage)
        chosen: Step | None
        if k == pick:
            choices: list[Step | None] = [None, *opts]
            choices = [c for c in choices if (c is None) != (prev is None) or c != prev]
            chosen = rng.choice(choices) if choices else prev
        else:
            chosen = _same(prev, opts)
        if chosen is not None:
            steps.append(chosen)
            state = advance(state, chosen, nest)
    parallel = state.parallel or (cand.before is not None and cand.before.parallel)
    if not parallel:
        return replace(cand, steps=tuple(steps), threads=None)
    if cand.threads is None:  # a serial parent made parallel: the model's thread count
        return replace(cand, steps=tuple(steps), threads=min(
            threads, key=lambda t: predict(nest, state, t, cores()), default=None))  # fmt: skip
    return replace(cand, steps=tuple(steps))


def _same(prev: Step | None, opts: list[Step]) -> Step | None:
    """The option that is ``prev`` (same loops), else one of its kind and parameter."""
    if prev is None:
        return None
    for o in opts:
        if o == prev:
            return o
    for o in opts:
        if o.kind == prev.kind and o.param == prev.param:
            return o
    return None

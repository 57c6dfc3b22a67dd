"""Legality-safe automatic scheduling: :func:`tune` (``spf.tune``, API.md §17, docs/tune.md).

``spf.tune(comp, args)`` searches scheduling commands (tiles, interchanges, vector widths,
unroll factors, parallel loops with their reduction options, wavefronts, packing, thread
counts) for the computation ``comp`` on the arguments ``args``: a cost model from the priced
PDFG orders the candidates, every candidate is checked for legality before it is compiled,
its outputs are compared with the default schedule's, and interleaved timings decide.
Results are recorded on disk and reused.

:func:`tune_schedule` is the same search without the records, for other searches that tune
the schedule of one computation among other choices (``spf.formats.tune``).

Modules: :mod:`~spf.tuning.space` (the space and candidates), :mod:`~spf.tuning.nest`
(what the model knows of the loops), :mod:`~spf.tuning.moves` (candidates as symbolic
nests), :mod:`~spf.tuning.blocking` (BLIS's blocking of GEMM-like statements),
:mod:`~spf.tuning.pipeline` (producer-consumer pipelines fused by ``compute_at``),
:mod:`~spf.tuning.skew` (time skewing and tiling of stencils),
:mod:`~spf.tuning.model` (the cost model), :mod:`~spf.tuning.beam` (the beam search
and mutations), :mod:`~spf.tuning.realize` (applying a candidate), :mod:`~spf.tuning.measure`
(compile, check, time), :mod:`~spf.tuning.search` (the search loop),
:mod:`~spf.tuning.records` (records on disk), :mod:`~spf.tuning.report` (progress).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spf._scalars import plain
from spf.errors import ArgumentError
from spf.tuning.result import Trial, TuneResult
from spf.tuning.space import default_space

if TYPE_CHECKING:
    from pathlib import Path

    from spf.computation.computation import Computation
    from spf.tuning.space import Space

__all__ = ["Trial", "TuneResult", "default_space", "tune", "tune_schedule"]


def tune(
    comp: Computation,
    args: Mapping[str, Any],
    budget: float = 60.0,
    space: Mapping[str, Any] | None = None,
    seed: int | None = None,
    reuse: bool = True,
    threads: int | None = None,
    *,
    max_trials: int | None = None,
    progress: bool | None = None,
    cflags: Sequence[str] | None = None,
) -> TuneResult:
    """Search a faster schedule of ``comp`` for the arguments ``args`` (the kernel's keyword
    arguments) within ``budget`` seconds; ``comp`` itself is unchanged.

    ``space``: a dict of command kind -> parameter list that replaces the default's entries
    (``spf.tuning.default_space()``; docs/tune.md); ``seed``: the seed of every random choice;
    ``reuse``: return the record of an earlier search of the same computation, argument
    shapes, machine and space without measuring (a new search is recorded either way);
    ``threads``: the OpenMP thread count of the parallel candidates (default: tried among
    ``space["threads"]``); ``max_trials``: at most this many candidates (a budget in
    candidates rather than seconds); ``progress``: a progress bar (default: when stderr is
    a terminal; otherwise lines of the ``spf`` logger); ``cflags``: the compiler flags every
    candidate and the default schedule are built with (None: spf's ``-O3 -march=native``;
    compile ``res.comp`` with the same).

    Ctrl-C (``KeyboardInterrupt``) during the search returns the best schedule measured so
    far with ``res.interrupted`` True; such a result is not recorded.
    """
    import numpy as np

    from spf.tuning import records
    from spf.tuning.space import make_space

    budget, seed = plain(budget), plain(seed)  # np.int64(5) is a number as 5 is
    threads, max_trials = plain(threads), plain(max_trials)
    _check(comp, args, budget, seed, max_trials)
    if not isinstance(reuse, (bool, np.bool_)):  # reuse="no" was truthy: a record answered
        raise ArgumentError(f"tune: reuse must be True or False, got {reuse!r}")
    sp = make_space(space, threads, cflags)
    name, what = records.key(comp, args, sp)
    if reuse:
        found = records.load(name)
        if found is not None:
            return _replayed(comp, found, records.directory() / f"{name}.json")
    res, entries = _search(comp, args, budget, sp, seed, max_trials, progress)
    if res.interrupted:
        return res  # a search stopped by Ctrl-C is not recorded (a later call searches again)
    if res.tried == 0 and res.illegal == 0 and max_trials != 0:
        return res  # the budget ran out before any candidate: a record would answer for good
    record = {
        **what,
        "commands": entries,
        "python": res.commands,
        "threads": res.threads,
        "cflags": None if cflags is None else list(cflags),
        "time": res.time,
        "baseline_time": res.baseline_time,
        "speedup": res.speedup,
        "tried": res.tried,
        "illegal": res.illegal,
        "budget": budget,
        "seed": seed,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "history": [t.to_data() for t in res.history],
    }
    try:
        path: Path | None = records.save(name, record)
    except OSError as err:  # a read-only or full cache: the result stands, unrecorded
        from spf.progress import LOGGER

        LOGGER.warning(
            "tune: the result is not recorded (%s); a later tune(reuse=True) searches again: "
            "set $SPF_CACHE_DIR to a writable directory to keep records",
            err,
        )
        path = None
    return TuneResult(**{**_fields(res), "record": path})


def tune_schedule(
    comp: Computation,
    args: Mapping[str, Any],
    budget: float = 60.0,
    space: Mapping[str, Any] | None = None,
    seed: int | None = None,
    threads: int | None = None,
    *,
    max_trials: int | None = None,
    progress: bool | None = None,
    cflags: Sequence[str] | None = None,
) -> TuneResult:
    """:func:`tune` without records: always searches, never reads or writes the cache. For a
    caller that tunes the schedule of one computation inside a larger search (the format
    choice of ``spf.formats.tune``: one call per format, with its share of the budget)."""
    from spf.tuning.space import make_space

    budget, seed = plain(budget), plain(seed)  # np.int64(5) is a number as 5 is
    threads, max_trials = plain(threads), plain(max_trials)
    _check(comp, args, budget, seed, max_trials)
    sp = make_space(space, threads, cflags)
    return _search(comp, args, budget, sp, seed, max_trials, progress)[0]


def _search(
    comp: Computation,
    args: Mapping[str, Any],
    budget: float,
    space: Space,
    seed: int | None,
    max_trials: int | None,
    progress: bool | None,
) -> tuple[TuneResult, list[Mapping[str, Any]]]:
    """The search's result and the trace data of the commands it chose."""
    from spf.tuning.search import search

    out = search(comp, args, space, budget=float(budget), seed=seed, max_trials=max_trials,
                 progress=progress)  # fmt: skip
    speedup = out.baseline_time / out.time if out.time > 0 else 1.0
    return TuneResult(
        comp=out.comp,
        time=out.time,
        baseline_time=out.baseline_time,
        speedup=speedup,
        tried=out.tried,
        illegal=out.illegal,
        history=tuple(out.history),
        threads=out.threads,
        commands=out.commands,
        interrupted=out.interrupted,
    ), out.entries


def _fields(res: TuneResult) -> dict[str, Any]:
    return {f: getattr(res, f) for f in TuneResult.__dataclass_fields__}


def _replayed(comp: Computation, rec: Mapping[str, Any], path: Any) -> TuneResult:
    """The result a record describes, its commands replayed on a clone of ``comp``."""
    from spf.errors import SpfError
    from spf.schedule.trace import Trace

    copy = comp.clone()
    try:
        Trace.from_data(rec.get("commands", [])).replay(copy)
        copy.check_legality()  # an edited record is checked as every candidate is
        history = tuple(Trial.from_data(t) for t in rec.get("history", []))
        t, base = float(rec["time"]), float(rec["baseline_time"])
        speedup = float(rec.get("speedup", base / t if t else 1.0))
        tried, illegal = int(rec.get("tried", 0)), int(rec.get("illegal", 0))
        threads = rec.get("threads")
        if threads is not None and (type(threads) is not int or threads < 1):
            raise ValueError(f"threads {threads!r} is not an int >= 1 or null")
    except (AttributeError, KeyError, TypeError, ValueError, SpfError) as err:
        raise ArgumentError(
            f"tune: the record {path} is damaged ({err}); delete it, or call with reuse=False"
        ) from err
    return TuneResult(
        comp=copy,
        time=t,
        baseline_time=base,
        speedup=speedup,
        tried=tried,
        illegal=illegal,
        history=history,
        threads=threads,
        reused=True,
        record=path,
        commands=str(rec.get("python", "")),
    )


def _check(comp: object, args: object, budget: object, seed: object, max_trials: object) -> None:
    from spf.computation.computation import Computation

    if not isinstance(comp, Computation):
        raise ArgumentError(f"tune: comp must be an spf.Computation, got {type(comp).__name__}")
    if not isinstance(args, Mapping) or not all(isinstance(k, str) for k in args):
        raise ArgumentError(
            "tune: args must be a dict of the kernel's keyword arguments "
            "(e.g. {'y': y, 'A': A, 'x': x}), got " + type(args).__name__
        )
    if (
        isinstance(budget, bool)
        or not isinstance(budget, (int, float))
        or not math.isfinite(budget)
        or budget <= 0
    ):
        raise ArgumentError(f"tune: budget must be a positive number of seconds, got {budget!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ArgumentError(f"tune: seed must be an int or None, got {seed!r}")
    if max_trials is not None and (
        isinstance(max_trials, bool) or not isinstance(max_trials, int) or max_trials < 0
    ):
        raise ArgumentError(f"tune: max_trials must be an int >= 0 or None, got {max_trials!r}")

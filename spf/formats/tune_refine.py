"""Formats x schedules: the winning format's SpMV handed to a schedule search.

``spf.formats`` sits below ``spf.tuning`` in spf's layers (tests/unit/test_layering.py): it
cannot import the schedule search, so :func:`spf.formats.tune` takes it as an argument,
``refine=`` (a :class:`Refiner`; :func:`spf.tuning.tune_schedule` is one). After the formats
have been measured, the refiner gets the winner's Computation (its schedule included) and
the kernel's arguments (``y``, ``x`` and the converted arrays) with what is left of the
budget; the copy it returns is compiled (a build-cache hit: the refiner compiled it), checked
against scipy and timed interleaved with the winner and the CSR baseline, and replaces the
winner only when its median is lower.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any, Protocol

from spf.errors import ArgumentError, PreconditionWarning, SpfError
from spf.schedule.trace import Trace

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from spf.computation import Computation
    from spf.formats.tune_space import Candidate
    from spf.formats.tuner import _Measured, _Search

__all__ = ["MIN_REFINE_S", "Refined", "Refiner", "refine_entry", "refine_winner"]

MIN_REFINE_S = 0.5
"""Seconds the refiner must be left at least; with less it is not called."""


class Refined(Protocol):
    """What a refiner returns (:class:`spf.TuneResult` is one)."""

    @property
    def comp(self) -> Computation: ...


class Refiner(Protocol):
    """A schedule search: ``refine(comp, args, budget, seed=, threads=, progress=)``."""

    def __call__(
        self,
        comp: Computation,
        args: Mapping[str, Any],
        budget: float,
        *,
        seed: int | None,
        threads: int | None,
        progress: bool | None,
    ) -> Refined: ...


def refiner_name(refine: object) -> str | None:
    """What the record key holds of ``refine``: its qualified name (a ``functools.partial``:
    the function's; an object: its class's), None without one. Its arguments are not in the
    key: a search with other ones needs ``reuse=False``."""
    if refine is None:
        return None
    if not callable(refine):
        raise ArgumentError(
            "formats.tune: refine must be a schedule search called as refine(comp, args, "
            f"budget, seed=, threads=, progress=) (e.g. spf.tuning.tune_schedule), got {refine!r}"
        )
    inner = getattr(refine, "func", refine)  # functools.partial: the function it wraps
    named = inner if hasattr(inner, "__qualname__") else type(inner)  # an instance: its class
    return f"{named.__module__}.{named.__qualname__}"


def refine_entry(c: Candidate) -> dict[str, Any]:
    """The history entry of the refinement of candidate ``c``."""
    return {
        "candidate": f"{c.label} + refine",
        "family": c.family,
        "params": list(c.params),
        "schedule": c.schedule,
        "predicted_bytes": None,
        "predicted_s": None,
        "status": "not measured",
        "reason": None,
        "time": None,
        "commands": [],
    }


def refine_winner(
    search: _Search, refine: Refiner, best: _Measured, baseline: _Measured, entry: dict[str, Any]
) -> _Measured:
    """``best`` or its refinement by ``refine``, whichever times faster (``entry``: the
    refinement's history entry, filled in). The refiner shows its own bar when the search
    shows one, logger lines otherwise."""
    left = search.total - search.elapsed() - 0.05 * search.total
    if left < MIN_REFINE_S:
        entry["reason"] = f"budget spent ({max(left, 0.0):.2f} s left, {MIN_REFINE_S} s needed)"
        return best
    kargs = search.kernel_args(best.args)
    start = len(best.comp.trace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PreconditionWarning)
        got = _called(refine, best.comp, kargs, left, search)
        search.interrupted = bool(getattr(got, "interrupted", False))
        added = [e.to_data() for e in got.comp.trace.entries[start:]]
        if not added:
            tried = getattr(got, "tried", None)
            counted = "" if tried is None else f" ({tried} schedules measured)"
            entry.update(status="measured", reason="no faster schedule found" + counted,
                         time=best.time)  # fmt: skip
            return best
        t0 = time.perf_counter()
        # the candidate's own flags (CSRV's gathers): the refiner searched with its own
        kernel = got.comp.compile(cflags=best.plan.candidate.cflags)
    compile_time = time.perf_counter() - t0
    m = search.check_and_time(best.plan, got.comp, kernel, best.args, compile_time,
                              best.conversion_time)  # fmt: skip
    m.commands = added
    search.interleave([m, best], baseline, search.total)
    entry.update(status="measured", commands=added, time=m.time, compile_time=compile_time,
                 conversion_time=best.conversion_time)  # fmt: skip
    if m.time < best.time:
        return m
    entry["reason"] = f"slower than {best.plan.candidate.label} timed interleaved"
    return best


def _called(
    refine: Refiner, comp: Computation, kargs: Mapping[str, Any], left: float, search: _Search
) -> Refined:
    """What ``refine`` returns for ``comp``; an ``SpfError`` naming ``refine=`` when it raises
    an exception of its own (a user's function: its ``ZeroDivisionError`` surfaced from deep
    inside the format search) or returns no object with the scheduled copy as ``comp`` (its
    ``AttributeError`` on ``None`` did). Ctrl-C and spf's own errors pass unchanged."""
    from spf.computation import Computation

    try:
        got = refine(comp, kargs, left, seed=search.seed, threads=search.threads,
                     progress=search.bar.shown)  # fmt: skip
    except SpfError:
        raise
    except Exception as err:
        raise ArgumentError(
            f"formats.tune: refine= raised {type(err).__name__}: {err}; fix the schedule "
            "search passed as refine= (e.g. spf.tuning.tune_schedule), or leave it out"
        ) from err
    if not isinstance(getattr(got, "comp", None), Computation):
        raise ArgumentError(
            "formats.tune: refine= must return an object whose comp is the scheduled copy of "
            f"the Computation it was given (as spf.tuning.tune_schedule's result), got "
            f"{type(got).__name__}"
        )
    return got


def replay_refined(
    comp: Computation,
    commands: list[dict[str, Any]],
    path: Path,
    cflags: tuple[str, ...] | None = None,
) -> tuple[Computation, Any]:
    """``comp`` with a record's refinement ``commands`` replayed, and its kernel (built with
    the candidate's ``cflags``)."""
    try:
        Trace.from_data(commands).replay(comp)
    except SpfError as err:
        raise ArgumentError(
            f"formats.tune: the record {path} holds commands that no longer apply ({err}); "
            "delete it, or call with reuse=False"
        ) from err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PreconditionWarning)
        return comp, comp.compile(cflags=cflags)

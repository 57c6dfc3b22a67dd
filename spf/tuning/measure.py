"""Compiling, checking and timing candidates against the baseline.

Every candidate runs once on a fresh copy of the arguments and its outputs are compared with
the baseline's (a mismatch beyond round-off is an ``SpfError``); it is then timed
interleaved with the baseline: each round calls both, in an order shuffled (seeded) every
round, and the medians over the rounds give the ratio (as ``spf.bench.common`` times its
variants: a fixed order would give each the same predecessor in the caches).
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import InternalError

if TYPE_CHECKING:
    import random

    from spf.computation.computation import Computation
    from spf.computation.products import CompiledKernel as Kernel


def build(comp: Computation, cflags: tuple[str, ...] | None = None) -> Kernel:
    """Compile ``comp`` for the C target (OpenMP on) with ``cflags`` (None: spf's default
    flags); the one place the search compiles."""
    return comp.compile(target="c", cflags=None if cflags is None else list(cflags))


def copy_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments with every array copied (the caller's arrays are never written)."""
    return {k: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for k, v in args.items()}


def outputs(comp: Computation, args: Mapping[str, Any]) -> tuple[str, ...]:
    """The kernel arguments some statement writes."""
    written = {ds for s in comp.stmts for ds, _ in s.writes}
    return tuple(k for k in args if k in written and isinstance(args[k], np.ndarray))


@contextlib.contextmanager
def _threads(n: int | None) -> Iterator[None]:
    if n is None:
        yield
        return
    from spf.runtime.threads import openmp_threads

    with openmp_threads(n):
        yield


def caller(kernel: Kernel, work: dict[str, Any], threads: int | None) -> Callable[[], None]:
    """One unchecked call of ``kernel`` on ``work`` (a copy of the arguments that every timed
    call shares: one copy in memory however many candidates are kept)."""

    mine = taken(kernel, work)

    def call() -> None:
        with _threads(threads):
            kernel(check=False, **mine)

    return call


def run_once(kernel: Kernel, args: Mapping[str, Any], names: tuple[str, ...],
             threads: int | None) -> dict[str, Any]:  # fmt: skip
    """The outputs ``names`` of one checked call on a fresh copy of ``args`` (those the
    kernel takes: an intermediate kept in a local buffer is no argument of a pipeline's)."""
    work = taken(kernel, copy_args(args))
    with _threads(threads):
        kernel(**work)
    return {k: work[k] for k in names if k in work}


def taken(kernel: Kernel, args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of ``args`` that ``kernel`` takes."""
    names = {a.name for a in kernel.arguments}
    return {k: v for k, v in args.items() if k in names}


def compare(what: str, got: Mapping[str, Any], want: Mapping[str, Any]) -> None:
    """``SpfError`` naming ``what`` and the data space when ``got`` differs from ``want``
    beyond round-off (:func:`mismatch`)."""
    found = mismatch(got, want)
    if found is not None:
        raise InternalError(
            f"tune: candidate {what} computes a different {found[1]}; this is a bug of spf's "
            "scheduling or code generation: please report it with the candidate's commands "
            "(res.history lists the ones measured so far)"
        )


def mismatch(got: Mapping[str, Any], want: Mapping[str, Any]) -> tuple[bool, str] | None:
    """None when ``got`` equals ``want`` within round-off: ``|got - want| <= tol * (|want| +
    the largest finite |want|)``, ``tol`` 1e-6 for double and 1e-3 for float (the second
    term allows a reordered sum's round-off on small elements), non-finite values equal (an
    ``inf`` among the outputs no longer makes every difference pass), integers exactly.
    Otherwise ``(floating, text)``: whether the array is floating point, and
    ``'s' than the baseline (at (0,): ... instead of ...)``."""
    for name, ref in want.items():
        out = got[name]
        floating = bool(np.issubdtype(ref.dtype, np.floating))
        if floating:
            tol = 1e-3 if ref.dtype.itemsize <= 4 else 1e-6
            finite = np.abs(ref[np.isfinite(ref)])
            scale = float(finite.max()) if finite.size else 0.0
            with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: compared below
                ok = np.allclose(out, ref, rtol=tol, atol=tol * max(scale, 1e-30), equal_nan=True)
            ok = ok and bool(np.array_equal(np.isfinite(out), np.isfinite(ref)))
        else:
            ok = bool(np.array_equal(out, ref))
        if not ok:
            with np.errstate(invalid="ignore", over="ignore"):
                diff = np.abs(np.asarray(out, dtype=float) - np.asarray(ref, dtype=float))
            diff[np.isfinite(np.asarray(out, dtype=float)) != np.isfinite(ref)] = np.inf
            where = np.unravel_index(int(np.nanargmax(diff)), diff.shape) if diff.size else ()
            return floating, (
                f"{name!r} than the baseline (at {tuple(int(w) for w in where)}: "
                f"{out[where]!r} instead of {ref[where]!r})"
            )
    return None


def interleaved(
    fns: list[Callable[[], None]],
    seconds: float,
    rng: random.Random,
    reps: int = 1,
    least: int = 3,
    warm: bool = True,
) -> list[float]:
    """Median seconds per call of each of ``fns``, timed in shuffled rounds for about
    ``seconds`` (at least ``least`` rounds, at most 200), after a warm-up round when
    ``warm`` (long calls skip it: the checked run before the timing warmed the code)."""
    if warm:
        for f in fns:
            f()
    times: list[list[float]] = [[] for _ in fns]
    end = time.perf_counter() + seconds
    order = list(range(len(fns)))
    rounds = 0
    while rounds < least or (time.perf_counter() < end and rounds < 200):
        rng.shuffle(order)
        for k in order:
            t0 = time.perf_counter()
            for _ in range(reps):
                fns[k]()
            times[k].append((time.perf_counter() - t0) / reps)
        rounds += 1
    return [statistics.median(t) for t in times]


def repetitions(call: Callable[[], None]) -> tuple[int, float]:
    """Calls per timed sample so that one sample takes about a millisecond, and the
    seconds of one call."""
    t0 = time.perf_counter()
    call()
    one = max(time.perf_counter() - t0, 1e-7)
    return max(1, min(1000, int(1e-3 / one))), one

"""``spf.formats.tune``: the storage format (and a schedule) for SpMV on one matrix.

The search, in order (docs/formats.md, "Choosing a format"):

1. :func:`~spf.formats.features.matrix_features` reads the pattern once with numpy;
   candidates whose padding exceeds ``max_padding`` times the entries are pruned, and so are
   parallel schedules a format has no legal row-parallel loop for. Nothing is compiled yet.
2. :func:`~spf.formats.tune_space.candidates` orders the survivors by the bytes one SpMV
   moves (values and padding, index arrays, ``x`` and ``y``), divided by the threads a
   parallel schedule runs on.
3. Within ``budget`` seconds (compile and conversion included) the candidates are converted
   (:func:`spf.sparse.format_args`), compiled (spf's build cache makes a kernel built before
   load in milliseconds), checked against scipy's ``A @ x`` and timed; the fastest few and
   the CSR baseline are then timed again in interleaved rounds (a shuffled order each round,
   medians), and the fastest median wins.
4. With ``refine=`` (a schedule search such as :func:`spf.tuning.tune_schedule`), the
   winner's schedule is refined with the budget's last :data:`REFINE_SHARE`
   (:mod:`spf.formats.tune_refine`); the refined kernel is checked against scipy and timed
   interleaved with the winner and the baseline, and replaces the winner when faster.

Progress is a tqdm bar when stderr is a terminal (``progress=``), INFO lines of the ``spf``
logger otherwise. The result is remembered in spf's cache directory
(:mod:`spf.formats.tune_record`); with ``reuse=True`` a matrix of the same pattern returns
the recorded choice without measuring.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import dataclasses
import functools
import importlib
import logging
import math
import os
import random
import statistics
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import spf.sparse
from spf._scalars import plain
from spf.errors import (
    ArgumentError,
    CompileError,
    IllegalScheduleError,
    InternalError,
    PreconditionWarning,
)
from spf.formats.features import MatrixFeatures, matrix_features
from spf.formats.tune_kernels import chunk_args, parts_args
from spf.formats.tune_record import load_record, record_key, record_path, save_record
from spf.formats.tune_refine import (
    Refiner,
    refine_entry,
    refine_winner,
    refiner_name,
    replay_refined,
)
from spf.formats.tune_space import (
    Candidate,
    Planned,
    candidates,
    checked_candidate,
    normalize_space,
)
from spf.progress import Bar
from spf.schedule.trace import Trace

if TYPE_CHECKING:
    from pathlib import Path

    from spf.computation import Computation
    from spf.formats.format import Format

__all__ = ["FormatTuneResult", "tune"]

LOG = logging.getLogger("spf")
BASELINE = Candidate("CSR", (), "serial")
SAMPLE_S = 5e-4  # one timed sample repeats the call until it lasts about this long
FINALISTS = 4  # candidates timed again, interleaved, with the baseline
COMPILE_GUESS_S = 2.0  # what a compile is assumed to cost before one has been seen
REFINE_SHARE = 0.4  # share of the budget kept for refine= (the winner's schedule)


@dataclasses.dataclass(eq=False)
class FormatTuneResult:
    """What :func:`tune` chose. ``fres(x)`` runs the chosen SpMV (``y = A @ x``)."""

    format: Format
    comp: Computation
    args: dict[str, Any]
    kernel: Any
    time: float
    """Median seconds of one SpMV in the chosen format and schedule."""
    baseline_time: float
    """The same for CSR with the default schedule (serial)."""
    speedup: float
    conversion_time: float
    """Seconds to build ``args`` from the matrix (not part of ``time``)."""
    tried: int
    """Candidates compiled and measured (the baseline included)."""
    history: list[dict[str, Any]]
    schedule: str
    """``"serial"`` or ``"parallel"`` (the rows, row blocks or chunks over OpenMP threads)."""
    threads: int | None
    index_dtype: str
    features: MatrixFeatures
    reused: bool
    """True when the choice came from a record (nothing was measured)."""
    record: Path | None
    commands: str = ""
    """The Python of the commands ``refine=`` added to the chosen format's schedule ("" when
    none was faster or no ``refine`` was given)."""
    interrupted: bool = False
    """True when Ctrl-C (``KeyboardInterrupt``) stopped the search: the fastest candidate
    measured until then (no final interleaved timing, no refinement), and no record written."""
    candidate: str = ""
    """The chosen candidate as the history names it (``"CSRP(1) parallel"``: CSR's arrays
    with the rows in parts of equal entries; :attr:`format` is then CSR)."""

    @property
    def shape(self) -> tuple[int, int]:
        return self.features.n, self.features.m

    @property
    def kernel_shape(self) -> tuple[int, int]:
        """Lengths of the ``y`` and ``x`` :attr:`kernel` takes with :attr:`args` (the matrix's
        shape, rounded up to whole blocks for BCSR)."""
        return _padded_shape(self.args, *self.shape)

    def __call__(self, x: Any, y: Any = None) -> Any:
        """``y += A @ x`` with the chosen kernel (``y`` zeros when not given); returns ``y``.
        Pads ``x`` and ``y`` where the format needs it (BCSR's whole blocks)."""
        n, m = self.shape
        if np.iscomplexobj(x):
            raise ArgumentError("formats.tune result: x must be real (float64), got complex")
        try:
            xv = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ArgumentError(f"formats.tune result: x must be numbers ({err})") from err
        if xv.shape != (m,):
            raise ArgumentError(f"formats.tune result: x must have shape ({m},), got {xv.shape}")
        if y is not None and not (
            isinstance(y, np.ndarray)
            and y.dtype == np.float64
            and y.shape == (n,)
            and y.flags.writeable
        ):
            got = f"{y.dtype} {y.shape}" if isinstance(y, np.ndarray) else type(y).__name__
            got += "" if not isinstance(y, np.ndarray) or y.flags.writeable else " read-only"
            raise ArgumentError(
                f"formats.tune result: y must be a writeable float64 array of shape ({n},) (it is "
                f"updated in place: y += A @ x), got {got}; pass np.zeros({n}) or leave it out"
            )
        rows, cols = self.kernel_shape
        xp = np.zeros(cols)
        xp[:m] = xv
        out = np.zeros(n) if y is None else y
        yp = np.zeros(rows)
        with _openmp_team(self.threads):
            self.kernel(y=yp, x=xp, **self.args)
        out += yp[:n]
        return out

    def prepare(self, check: bool = True) -> Callable[[Any, Any], None]:
        """``spmv = fres.prepare()``, then ``spmv(x, y)``: ``y += A @ x`` with the chosen
        kernel as one C call, the converted arrays bound once (``kernel.prepare``,
        docs/formats_tune.md, "Prepared calls"); ``x`` and ``y`` float64 arrays of the
        matrix's shape (:attr:`shape`). ``check=True`` verifies the bound arrays first with
        one checked run. A format padded to whole blocks (BCSR) copies ``x`` into, and adds
        ``y`` from, buffers of :attr:`kernel_shape` the callable owns. A parallel schedule
        with ``threads`` set runs on that OpenMP team."""
        call: Callable[..., None] = self.kernel.prepare(["x", "y"], check=check, **self.args)
        if self.threads is not None and self.schedule == "parallel":
            call = _on_team(call, self.threads)
        if self.kernel_shape == self.shape:
            return call
        return _padded(call, self.shape, self.kernel_shape)


def tune(
    A: object,  # noqa: N803
    kernel: str = "spmv",
    budget: float = 30.0,
    space: Mapping[str, object] | Sequence[str] | None = None,
    seed: int | None = None,
    reuse: bool = True,
    threads: int | None = None,
    *,
    index_dtype: str | None = None,
    max_padding: float = 3.0,
    record_dir: str | Path | None = None,
    refine: Refiner | None = None,
    progress: bool | None = None,
) -> FormatTuneResult:
    """Choose the storage format and schedule of ``kernel`` (``"spmv"``) for the
    ``scipy.sparse`` matrix ``A`` by measuring within ``budget`` seconds.

    ``space`` restricts or extends the formats tried (:mod:`spf.formats.tune_space`),
    ``seed`` fixes the shuffled order of the timed rounds, ``threads`` the OpenMP team
    (``1``: serial schedules only; None: OpenMP's default), ``index_dtype`` the index arrays
    (None: ``A``'s own, int32 unless ``A`` holds int64 indices), ``max_padding`` the padding
    (a multiple of the entries) beyond which a format is not tried. ``reuse=True`` returns a
    recorded choice for the same pattern, kernel, dtypes, space and machine without measuring;
    records live in ``record_dir`` (None: ``formats_tune/`` in spf's cache directory).
    Kernels go to spf's build cache as every ``compile()`` does.
    Ctrl-C (``KeyboardInterrupt``) after the CSR baseline was measured stops the search and
    returns the fastest candidate measured so far (``interrupted`` True, not recorded).

    ``refine``: a schedule search called on the winning format's SpMV with the last
    :data:`REFINE_SHARE` of the budget, ``refine(comp, args, budget, seed=, threads=,
    progress=)`` returning an object with ``comp`` (a scheduled copy) and ``commands``;
    :func:`spf.tuning.tune_schedule` is one (docs/formats_tune.md, "Formats x schedules").
    ``progress``: a progress bar (None: when stderr is a terminal; INFO lines of the ``spf``
    logger otherwise).
    """
    if kernel != "spmv":
        raise ArgumentError(
            f"formats.tune: kernel must be 'spmv' (the only one tuned), got {kernel!r}"
        )
    budget, seed, threads = plain(budget), plain(seed), plain(threads)
    max_padding = plain(max_padding)
    if (
        isinstance(budget, bool)
        or not isinstance(budget, (int, float))
        or not math.isfinite(budget)  # as spf.tune: inf would never stop searching
        or not budget > 0
    ):
        raise ArgumentError(
            f"formats.tune: budget must be a positive number of seconds, got {budget!r}"
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ArgumentError(f"formats.tune: seed must be an int or None, got {seed!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):  # fmt: skip
        raise ArgumentError(
            f"formats.tune: threads must be None or a positive int, got {threads!r}"
        )
    if (
        isinstance(max_padding, bool)
        or not isinstance(max_padding, (int, float))
        or not max_padding >= 0  # nan too: it pruned nothing
    ):
        raise ArgumentError(f"formats.tune: max_padding must be a number >= 0, got {max_padding!r}")
    if not isinstance(reuse, (bool, np.bool_)):  # reuse="no" was truthy: a record answered
        raise ArgumentError(f"formats.tune: reuse must be True or False, got {reuse!r}")
    families, schedules = normalize_space(space)
    dtype = _index_dtype(A, index_dtype)
    base = spf.sparse.csr_args(A, dtype)
    sp = importlib.import_module("scipy.sparse")
    csr = sp.csr_array((base["A"], base["col"], base["rowptr"]), shape=(base["N"], base["M"]))
    features = matrix_features(csr)
    settings: dict[str, object] = {
        "kernel": kernel,
        "value_dtype": "float64",
        "index_dtype": dtype,
        "threads": threads,
        "max_padding": float(max_padding),
        "space": {k: [list(p) for p in v] for k, v in families.items()},
        "schedules": list(schedules),
        "refine": refiner_name(refine),
    }
    digest, key = record_key((features.n, features.m), base["rowptr"], base["col"], settings)
    path = record_path(digest, record_dir)
    search = _Search(csr, features, dtype, threads, budget, seed)
    team = threads if threads is not None else _default_team()
    if reuse:
        record = load_record(path, key)
        if record is not None:
            return search.replay(record, path)
    if features.nnz == 0:
        return search.empty()
    plans = candidates(
        features,
        families,
        schedules,
        index_dtype=dtype,
        threads=team,
        max_padding=float(max_padding),
    )
    search.refiner = refine
    search.bar = Bar(f"formats.tune {features.n}x{features.m}", budget, progress)
    try:
        result = search.run(plans)
    finally:
        search.bar.close()
    if result.interrupted:
        return result  # a search stopped by Ctrl-C is not recorded (a later call searches again)
    result.record = path
    save_record(path, search.record(result, key))
    return result


def _index_dtype(A: object, index_dtype: str | None) -> str:  # noqa: N803
    if index_dtype is not None:
        if index_dtype not in ("int32", "int64"):
            raise ArgumentError(
                f"formats.tune: index_dtype must be 'int32' or 'int64', got {index_dtype!r}"
            )
        return index_dtype
    own = getattr(A, "indices", getattr(A, "row", None))
    return "int64" if getattr(own, "dtype", None) == np.int64 else "int32"


def _default_team() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _padded_shape(args: Mapping[str, Any], n: int, m: int) -> tuple[int, int]:
    """Lengths of ``y`` and ``x`` the format's kernel takes (BCSR: whole blocks)."""
    if "NNZB" in args:
        r, c = args["A"].shape[1:]
        return int(args["NB"]) * r, int(args["MB"]) * c
    return n, m


def _on_team(call: Callable[..., None], threads: int) -> Callable[..., None]:
    """``call`` run on an OpenMP team of ``threads``."""

    def on_team(*arrays: Any) -> None:
        with _openmp_team(threads):
            call(*arrays)

    return on_team


def _padded(
    call: Callable[[Any, Any], None], shape: tuple[int, int], padded: tuple[int, int]
) -> Callable[[Any, Any], None]:
    """``(x, y)`` of ``shape`` for a call on ``(x, y)`` of the ``padded`` shape, through
    buffers (each calling thread's own, so that calls from several threads at once never
    read one another's ``x``): ``x`` copied in, ``y`` added from the padded result. ``x`` and
    ``y`` are checked as the unpadded prepared call checks them: float64 arrays of the
    matrix's shape, ``y`` writeable."""
    (n, m), (rows, cols) = shape, padded
    mine = threading.local()

    def spmv(x: Any, y: Any) -> None:
        for name, v, length, out in (("x", x, m, False), ("y", y, n, True)):
            if (
                not isinstance(v, np.ndarray)
                or v.dtype != np.float64
                or v.shape != (length,)
                or (out and not v.flags.writeable)
            ):
                got = f"{v.dtype} {v.shape}" if isinstance(v, np.ndarray) else type(v).__name__
                got += (
                    " read-only"
                    if out and isinstance(v, np.ndarray) and not v.flags.writeable
                    else ""
                )
                raise ArgumentError(
                    f"formats.tune prepared call: {name} must be a "
                    f"{'writeable ' if out else ''}float64 array of shape ({length},), got "
                    f"{got}; pass np.asarray({name}, dtype=np.float64)"
                    + (" (updated in place: y += A @ x)" if out else "")
                )
        buffers = getattr(mine, "buffers", None)
        if buffers is None:
            buffers = mine.buffers = (np.zeros(cols), np.zeros(rows))
        xp, yp = buffers
        xp[:m] = x
        yp.fill(0.0)
        call(xp, yp)
        y += yp[:n]

    return spmv


@contextlib.contextmanager
def _openmp_team(threads: int | None) -> Iterator[None]:
    """OpenMP's team size set to ``threads`` for a block (libgomp is one shared object per
    process, so this applies to spf's kernels), restored afterwards; nothing when None."""
    lib = _libgomp() if threads is not None else None
    if lib is None or threads is None:
        yield
        return
    previous = lib.omp_get_max_threads()
    lib.omp_set_num_threads(threads)
    try:
        yield
    finally:
        lib.omp_set_num_threads(previous)


@functools.cache
def _libgomp() -> ctypes.CDLL | None:
    for name in ("libgomp.so.1", ctypes.util.find_library("gomp")):
        if name is None:
            continue
        with contextlib.suppress(OSError, AttributeError):
            lib = ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
            lib.omp_get_max_threads.restype = ctypes.c_int
            lib.omp_set_num_threads.argtypes = [ctypes.c_int]
            return lib
    return None


@dataclasses.dataclass
class _Measured:
    plan: Planned
    comp: Computation
    kernel: Any
    args: dict[str, Any]
    compile_time: float
    conversion_time: float
    call: Callable[[], None]
    reps: int = 1
    samples: list[float] = dataclasses.field(default_factory=list)
    commands: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Trace data of the commands ``refine=`` added (empty: the candidate's own schedule)."""

    @property
    def time(self) -> float:
        return statistics.median(self.samples)


class _Search:
    """One call of :func:`tune`: the matrix, its features and the measurements so far."""

    def __init__(
        self,
        csr: Any,
        features: MatrixFeatures,
        index_dtype: str,
        threads: int | None,
        budget: float,
        seed: int | None,
    ) -> None:
        self.csr, self.features, self.index_dtype = csr, features, index_dtype
        self.threads, self.total, self.seed = threads, float(budget), seed
        self.team = threads if threads is not None else _default_team()
        """The threads a parallel candidate plans for (CSRP's parts per thread)."""
        self.refiner: Refiner | None = None
        self.bar = Bar("formats.tune", budget, False)
        self.best_so_far: tuple[str, float] | None = None
        self.chosen_commands: list[dict[str, Any]] = []
        self.interrupted = False  # Ctrl-C stopped the search (the best so far is returned)
        # the formats' share: the rest is refine='s
        self.budget = self.total
        self.rng = random.Random(seed)
        self.start = time.perf_counter()
        self.x = np.random.default_rng(0 if seed is None else seed).standard_normal(features.m)

    @functools.cached_property
    def want(self) -> np.ndarray[Any, np.dtype[np.float64]]:
        """scipy's ``A @ x``, every candidate's reference (not needed to replay a record)."""
        return np.asarray(self.csr @ self.x, dtype=np.float64)

    @functools.cached_property
    def tolerance(self) -> np.ndarray[Any, np.dtype[np.float64]]:
        """Round-off allowed per row: summing a row in another order (or through padding)
        changes the result by a few ulps of ``|A| @ |x|`` per entry of the row."""
        eps = np.finfo(np.float64).eps
        bound = np.asarray(abs(self.csr) @ np.abs(self.x), dtype=np.float64)
        return 4 * eps * (self.features.row_max + 2) * bound + np.finfo(np.float64).tiny

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    # --- building one candidate
    def build(self, c: Candidate) -> tuple[Computation, Any, float]:
        t0 = time.perf_counter()
        comp = c.computation(self.index_dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PreconditionWarning)
            kernel = comp.compile(cflags=c.cflags)
        return comp, kernel, time.perf_counter() - t0

    def convert(self, c: Candidate) -> tuple[dict[str, Any], float]:
        t0 = time.perf_counter()
        args = spf.sparse.format_args(self.csr, c.format, self.index_dtype)
        parts = c.parts(self.team)
        if parts is not None:
            args = parts_args(args, parts)
        if c.chunks is not None:
            args = chunk_args(args, c.chunks)
        return args, time.perf_counter() - t0

    def measure(self, plan: Planned) -> _Measured:
        """Compile, convert, check against scipy and time ``plan``'s candidate."""
        comp, kernel, compile_time = self.build(plan.candidate)
        args, conversion_time = self.convert(plan.candidate)
        return self.check_and_time(plan, comp, kernel, args, compile_time, conversion_time)

    def check_and_time(
        self,
        plan: Planned,
        comp: Computation,
        kernel: Any,
        args: dict[str, Any],
        compile_time: float,
        conversion_time: float,
    ) -> _Measured:
        """Run ``kernel`` once (checked) against scipy's ``A @ x``, then time it."""
        c = plan.candidate
        kargs = self.kernel_args(args)
        x, y = kargs["x"], kargs["y"]
        with _openmp_team(self.threads):
            kernel(y=y, x=x, **args)  # checked call: the arrays meet the format's facts
        got = y[: self.features.n]
        # NaN where scipy has NaN, the same infinities (a matrix with such entries gives
        # them in any summation order); round-off only where scipy's result is finite
        same = (got == self.want) | (np.isnan(got) & np.isnan(self.want))
        with np.errstate(invalid="ignore"):  # inf - inf: a difference, set below
            error = np.where(same, 0.0, np.abs(got - self.want))
        wrong = ~same & ~(np.isfinite(self.want) & np.isfinite(got))  # NaN/inf not matched
        error[wrong] = np.inf
        if np.any(wrong) or np.any(error > self.tolerance):
            worst = int(np.argmax(error))
            raise InternalError(
                f"formats.tune: {c.label} computed y[{worst}] = {y[worst]!r} where scipy's "
                f"A @ x gives {self.want[worst]!r} (beyond round-off); spf generated a wrong "
                "kernel for this format: please report it with the matrix"
            )

        prepared = kernel.prepare(["y", "x"], check=False, **args)  # checked just above
        call = functools.partial(prepared, y, x)
        m = _Measured(plan, comp, kernel, args, compile_time, conversion_time, call)
        with _openmp_team(self.threads):
            t0 = time.perf_counter()
            call()
            once = time.perf_counter() - t0
            m.reps = max(1, min(100_000, math.ceil(SAMPLE_S / max(once, 1e-9))))
            m.samples = [self.sample(m) for _ in range(3)]
        return m

    def kernel_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of one SpMV on the converted ``args``: ``y`` zeros and ``x``
        the search's vector, padded to whole blocks where the format needs it."""
        rows, cols = _padded_shape(args, self.features.n, self.features.m)
        x = np.zeros(cols)
        x[: self.features.m] = self.x
        return {"y": np.zeros(rows), "x": x, **args}

    def sample(self, m: _Measured) -> float:
        t0 = time.perf_counter()
        for _ in range(m.reps):
            m.call()
        return (time.perf_counter() - t0) / m.reps

    # --- the search
    def run(self, plans: list[Planned]) -> FormatTuneResult:
        if self.refiner is not None:
            self.budget = self.total * (1 - REFINE_SHARE)
        history: dict[Candidate, dict[str, Any]] = {p.candidate: _entry(p) for p in plans}
        base_plan = next((p for p in plans if p.candidate == BASELINE), None)
        baseline = self.measure(base_plan or Planned(BASELINE))
        measured = [baseline] if base_plan is not None else []
        spent = [baseline.compile_time + baseline.conversion_time]
        for plan in plans:
            entry = history[plan.candidate]
            if plan.pruned is not None or plan.candidate == BASELINE:
                continue
            if self.interrupted:
                entry.update(status="not measured", reason="interrupted (Ctrl-C)")
                continue
            guess = statistics.median(spent) if spent else COMPILE_GUESS_S
            others = sum(m is not baseline for m in measured)
            if others and self.elapsed() + guess > 0.8 * self.budget:
                entry.update(status="not measured", reason="budget spent")
                continue
            got = self.attempt(plan, entry)
            if got is None:
                continue
            spent.append(got.compile_time + got.conversion_time)
            measured.append(got)
            self.report(got, baseline, len(measured), plan.candidate.label)
            LOG.debug("formats.tune: %s %.3g s per SpMV (%.2f s to compile and convert)",
                      plan.candidate.label, got.time, spent[-1])  # fmt: skip
        if not measured:
            raise ArgumentError(
                "formats.tune: no candidate of the space could be measured (see the reasons: "
                + "; ".join(f"{c.label}: {e['reason']}" for c, e in history.items())
                + "); widen space or raise max_padding"
            )
        if not self.interrupted:
            with self.on_interrupt():
                self.interleave(measured, baseline)
        best = min(measured, key=lambda m: m.time)
        entries = list(history.values())
        if self.refiner is not None and not self.interrupted:
            entries.append(refine_entry(best.plan.candidate))
            with self.on_interrupt():
                best = refine_winner(self, self.refiner, best, baseline, entries[-1])
        # the first conversion of a format may pay one-time costs (page faults on fresh
        # memory, a busy core): the chosen one is converted again and the faster run counts
        best.conversion_time = min(best.conversion_time, self.convert(best.plan.candidate)[1])
        for m in {id(m): m for m in [*measured, baseline]}.values():
            if m.plan.candidate in history:
                entry = history[m.plan.candidate]
                entry.update(status="measured", time=m.time, compile_time=m.compile_time,
                             conversion_time=m.conversion_time)  # fmt: skip
        chosen = entries[-1] if best.commands else history[best.plan.candidate]
        chosen["status"] = "chosen"
        refined = sum(1 for e in entries if e.get("commands"))  # a refinement measured
        tried = len(measured) + (base_plan is None) + refined
        res = self.result(best, baseline.time, tried, entries)
        res.interrupted = self.interrupted
        return res

    def attempt(self, plan: Planned, entry: dict[str, Any]) -> _Measured | None:
        """:meth:`measure`, or None with ``entry`` saying why not (illegal, refused, Ctrl-C)."""
        try:
            return self.measure(plan)
        except KeyboardInterrupt:
            self.interrupted = True
            entry.update(status="not measured", reason="interrupted (Ctrl-C)")
        except IllegalScheduleError as err:
            entry.update(status="illegal", reason=str(err).splitlines()[0])
        except ArgumentError as err:
            entry.update(status="refused", reason=str(err).splitlines()[0])
        except CompileError as err:
            if plan.candidate.cflags is None:
                raise  # spf's own flags: a bug to report, not a candidate to skip
            flags = " ".join(plan.candidate.cflags)
            why = f"the compiler refused its flags {flags}: {str(err).splitlines()[0]}"
            entry.update(status="refused", reason=why)
        return None

    @contextlib.contextmanager
    def on_interrupt(self) -> Iterator[None]:
        """A ``KeyboardInterrupt`` in the block ends it and marks the search interrupted."""
        try:
            yield
        except KeyboardInterrupt:
            self.interrupted = True

    def report(self, got: _Measured, baseline: _Measured, measured: int, label: str) -> None:
        """Progress after a measured candidate: the bar, or an INFO line of the logger."""
        speedup = baseline.time / got.time
        if self.best_so_far is None or speedup > self.best_so_far[1]:
            self.best_so_far = (label, speedup)
        best, ratio = self.best_so_far
        if self.bar.shown:
            self.bar.update(self.elapsed(), f"{measured} measured, best {ratio:.2f}x: {best}")
            return
        LOG.info("formats.tune: %.1f s, %d measured, best %.2fx (%s); last: %s %.3g s",
                 self.elapsed(), measured, ratio, best, label, got.time)  # fmt: skip

    def interleave(
        self, measured: list[_Measured], baseline: _Measured, budget: float | None = None
    ) -> None:
        """Time the fastest few and the baseline again, in a shuffled order each round, for
        as many rounds as the budget (None: the formats' share) leaves (3 to 25)."""
        finalists = sorted(measured, key=lambda m: m.time)[:FINALISTS]
        if baseline not in finalists:
            finalists.append(baseline)
        before = {id(m): len(m.samples) for m in finalists}
        per_round = sum(m.time * m.reps for m in finalists) + 1e-6
        left = (self.budget if budget is None else budget) - self.elapsed()
        rounds = max(3, min(25, int(left / per_round)))
        with _openmp_team(self.threads):
            for _ in range(rounds):
                self.rng.shuffle(finalists)
                for m in finalists:
                    m.samples.append(self.sample(m))
        for m in finalists:
            m.samples = m.samples[before[id(m)] :]  # the samples taken before are dropped

    def result(
        self, best: _Measured, baseline_time: float, tried: int, history: list[dict[str, Any]]
    ) -> FormatTuneResult:
        c = best.plan.candidate
        LOG.info("formats.tune: %s, %.3g s per SpMV, %.2fx CSR", c.label, best.time,
                 baseline_time / best.time)  # fmt: skip
        found = (best.comp, best.kernel, best.args, best.conversion_time)
        res = self.answer(c, found, best.time, baseline_time, tried, history, None)
        res.commands = Trace.from_data(best.commands).as_python() if best.commands else ""
        self.chosen_commands = best.commands
        return res

    def answer(
        self,
        c: Candidate,
        found: tuple[Computation, Any, dict[str, Any], float],
        seconds: float,
        baseline_time: float,
        tried: int,
        history: list[dict[str, Any]],
        record: Path | None,
    ) -> FormatTuneResult:
        """The result for candidate ``c`` with its ``(comp, kernel, args, conversion_time)``;
        ``record``: the record it was replayed from (None: just measured)."""
        comp, kernel, args, conversion_time = found
        return FormatTuneResult(
            format=c.format,
            comp=comp,
            args=args,
            kernel=kernel,
            time=seconds,
            baseline_time=baseline_time,
            speedup=baseline_time / seconds,
            conversion_time=conversion_time,
            tried=tried,
            history=history,
            schedule=c.schedule,
            threads=self.threads,
            index_dtype=self.index_dtype,
            features=self.features,
            reused=record is not None,
            record=record,
            candidate=c.label,
        )

    def empty(self) -> FormatTuneResult:
        """A matrix with no stored entry: CSR, serial (every format stores nothing)."""
        m = self.measure(Planned(BASELINE))
        entry = _entry(m.plan)
        entry.update(status="chosen", reason="no stored entries: nothing to choose",
                     time=m.time)  # fmt: skip
        return self.result(m, m.time, 1, [entry])

    # --- records
    def record(self, res: FormatTuneResult, key: dict[str, object]) -> dict[str, Any]:
        chosen = next(h for h in res.history if h["status"] == "chosen")
        return {
            "key": key,
            "choice": {
                **{k: chosen[k] for k in ("family", "params", "schedule")},
                **({"commands": self.chosen_commands} if self.chosen_commands else {}),
            },
            "time": res.time,
            "baseline_time": res.baseline_time,
            "speedup": res.speedup,
            "conversion_time": res.conversion_time,
            "tried": res.tried,
            "history": res.history,
        }

    def replay(self, record: dict[str, Any], path: Path) -> FormatTuneResult:
        """The recorded choice, compiled (a build-cache hit) and converted, not measured."""
        c, numbers = _recorded_choice(record, path)
        comp, kernel, _ = self.build(c)
        commands = record["choice"].get("commands") or []
        if commands:
            comp, kernel = replay_refined(comp, commands, path, c.cflags)
        args, conversion_time = self.convert(c)
        res = self.answer(
            c,
            (comp, kernel, args, conversion_time),
            *numbers,
            path,
        )
        res.commands = Trace.from_data(commands).as_python() if commands else ""
        return res


def _recorded_choice(
    record: dict[str, Any], path: Path
) -> tuple[Candidate, tuple[float, float, int, list[dict[str, Any]]]]:
    """The candidate a record chose and its ``time, baseline_time, tried, history``, checked:
    a damaged record (a missing field, an unknown family, bad parameters or numbers) is an
    ``ArgumentError`` naming the file, never a raw ``KeyError`` or a kernel of a made-up
    format."""
    try:
        choice = record["choice"]
        c = checked_candidate(choice["family"], choice["params"], choice["schedule"])
        history = record["history"]
        if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
            raise TypeError("history is not a list of entries")
        numbers = (
            float(record["time"]),
            float(record["baseline_time"]),
            int(record["tried"]),
            list(history),
        )
    except (KeyError, TypeError, ValueError, ArgumentError) as err:
        raise ArgumentError(
            f"formats.tune: the record {path} is damaged ({err}); delete it, or call with "
            "reuse=False"
        ) from err
    return c, numbers


def _entry(p: Planned) -> dict[str, Any]:
    c = p.candidate
    return {
        "candidate": c.label,
        "family": c.family,
        "params": list(c.params),
        "schedule": c.schedule,
        "predicted_bytes": p.predicted_bytes,
        "predicted_s": p.predicted_s,
        "status": "pruned" if p.pruned else "planned",
        "reason": p.pruned,
        "time": None,
    }

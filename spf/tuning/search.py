"""The search behind :func:`spf.tune` (docs/tune.md, "How the search works").

1. The baseline (the computation as given) is compiled, run once for the reference outputs
   and timed.
2. The user's ``space["candidates"]`` come first; then the beam search's ranked list
   (:mod:`spf.tuning.beam`): the model's top :data:`TOP_K` are measured in order; after
   that list, or as soon as the top ones all failed the legality check, every single command
   on its own.
3. Then measured refinement: every other candidate is a mutation of one of the best
   three measured so far (chosen at random, seeded), the others the next of the ranked list,
   until the budget is spent. The timed rounds' shuffles draw from another generator (seeded
   alike): how many rounds fit in a time slice does not change these choices.
4. The best measured candidate and the baseline are timed again, interleaved; the faster
   one is the result.

Each candidate is applied to a clone, checked for legality (an illegal one is counted and
never compiled), compiled, run once and compared with the baseline's outputs (a mismatch
raises ``SpfError``), then timed interleaved with the best candidate so far (the baseline
until one beats it): its estimate is the measured ratio times the reference's estimate (a
slow baseline is not re-run for every candidate; one slower than :data:`SLOW_S` per call is
run once only, and candidates are timed alone against that run).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError, IllegalScheduleError, SpfError
from spf.tuning import measure
from spf.tuning.beam import mutate, predicted, ranked, singles
from spf.tuning.nest import Nest, analyze, main_stmts, sizes_of
from spf.tuning.realize import commands_text, new_entries, realize
from spf.tuning.report import Reporter
from spf.tuning.result import Trial
from spf.tuning.space import Candidate, Space

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.products import CompiledKernel as Kernel

TOP_K = 3
"""Candidates measured in the model's order before the refinement starts."""

LONG_S = 0.05
"""A call longer than this is timed in fewer rounds, without warm-up."""

SLOW_S = 1.0
"""A default schedule slower than this per call is run once: that run's time is its time, and
candidates are timed alone against it (a 45-second GEMM timed three more times would spend
the whole budget); the final timing re-times it only when the best is not twice as fast."""

BLOCKED_BUILD_S = 20.0
"""Seconds a blocking candidate takes to build (legality check, scan of the packed nest,
compile: 10 s on a quiet 2-core machine, 50 s on a loaded one): with less budget left one is
not started (a search of a few seconds skips them)."""

WHOLE = ("skew", "blocking", "compute_at")
"""Commands that schedule more than their nest (a stencil's statements, every GEMM-like
statement, a pipeline's two stages): never chained after another nest's moves."""

FINAL_SHARE = 0.15
"""Share of the budget kept for the final interleaved timing of the best against the baseline."""


@dataclass
class Measured:
    """A candidate that ran: its estimated seconds (ratio to the baseline times the
    baseline's time), the clone and the trace length the search started from."""

    estimate: float
    cand: Candidate
    comp: Computation
    kernel: Kernel
    predicted: float
    call: Callable[[], None]


@dataclass
class Outcome:
    """What :func:`search` found (:func:`spf.tune` turns it into a ``TuneResult``)."""

    comp: Computation
    time: float
    baseline_time: float
    tried: int
    illegal: int
    history: list[Trial]
    threads: int | None
    entries: list[Mapping[str, Any]] = field(default_factory=list)
    commands: str = ""
    interrupted: bool = False


class _Search:
    def __init__(self, comp: Computation, args: Mapping[str, Any], space: Space, seed: int | None,
                 deadline: float, budget: float, reporter: Reporter) -> None:  # fmt: skip
        self.comp, self.args, self.space = comp, args, space
        self.rng = random.Random(seed)
        # the timed rounds' shuffles draw from a generator of their own: how many rounds fit
        # in a time slice follows the clock, and the search's choices must not
        self.shuffles = random.Random(seed)
        self.deadline, self.budget, self.reporter = deadline, budget, reporter
        self.start_len = len(comp.trace)
        self.t0 = time.perf_counter()
        self.history: list[Trial] = []
        self.measured: list[Measured] = []
        self.seen: set[tuple[object, ...]] = set()
        self.illegal = 0
        self.costs: list[float] = []
        self.built: dict[tuple[object, ...], tuple[Any, Any, str]] = {}
        if not comp.stmts:
            raise ArgumentError(f"tune: {comp.name} has no statements; add some before tuning it")
        written = {ds for s in comp.stmts for ds, _ in s.writes}
        for name in sorted(written & set(args)):
            if not isinstance(args[name], np.ndarray):
                raise ArgumentError(
                    f"tune: args[{name!r}] must be a numpy array ({comp.name} writes it in "
                    f"place), got {type(args[name]).__name__}; pass np.asarray(...) of it"
                )
        self.names = measure.outputs(comp, args)
        if not self.names:
            raise ArgumentError(
                f"tune: {comp.name} writes none of the arrays passed in args "
                f"({', '.join(sorted(args))}); pass its outputs too"
            )
        sizes = sizes_of(comp, args)
        self.args = {**{p: sizes[p] for p in comp.params if p in sizes}, **args}
        self.nest: Nest = analyze(comp, self.args)
        # every other statement with as many loops is a main nest of its own ("" the first)
        self.nests: dict[str, Nest] = {"": self.nest}
        for stmt in main_stmts(comp)[1:]:
            self.nests[stmt.name] = analyze(comp, self.args, stmt, alone=True)
        self.defaults = {m: predicted(n, Candidate()) for m, n in self.nests.items()}
        # the first nest prices the statements of its outer loop: a second main nest among
        # them is counted there already
        self.total = self.defaults[""] + sum(
            d for m, d in self.defaults.items() if m and m not in self.nest.stmts
        )
        self.done: set[tuple[str, int | None]] = set()  # (commands, threads) measured or refused
        # commands refused (illegal or rejected) whatever the thread count: one trial each
        self.refusals: set[tuple[object, ...]] = set()
        self.refused: set[str] = set()  # nests refused while the others' candidates gain
        self.slice = min(max(budget * 0.03, 0.02), 0.5)

    # -- the baseline
    def baseline(self) -> None:
        began = time.perf_counter()
        kernel = self._compile(self.comp)
        _check_names(kernel, self.args)
        t0 = time.perf_counter()
        self.ref = measure.run_once(kernel, self.args, self.names, None)
        first = time.perf_counter() - t0
        self.work = measure.copy_args(self.args)
        self.base_call = measure.caller(kernel, self.work, None)
        self.slow = first > SLOW_S
        if self.slow:  # one call is the measurement: a second would eat the budget
            self.reps, self.long, self.base_time = 1, True, first
        else:
            self.reps, one = measure.repetitions(self.base_call)
            self.long = one > LONG_S
            (self.base_time,) = self._time([self.base_call], self.slice, least=1)
        pred = self.predict(Candidate())
        cost = time.perf_counter() - began
        self.history.append(
            Trial("", "default schedule", None, pred, self.base_time, "baseline", "", cost)
        )

    def predict(self, cand: Candidate) -> float:
        """The model's seconds for the whole computation under ``cand``: the nests as given,
        less what each candidate of its chain gains on its own nest (one nest: exactly the
        nest's prediction)."""
        own = predicted(self.nests[cand.main], replace(cand, before=None))
        rest = self.total - self.defaults[cand.main]
        for c in cand.chain()[:-1]:
            rest += predicted(self.nests[c.main], replace(c, before=None)) - self.defaults[c.main]
        return own + rest

    # -- one candidate
    def evaluate(self, cand: Candidate, pred: float) -> bool:
        """Check, build, run and time ``cand``; False when its commands are those of a
        candidate considered before with the same thread count (another nest's blocking is
        the same blocking): nothing is noted then."""
        began = time.perf_counter()
        self.seen.add(cand.key())
        built = self._built(cand)
        done = (built[1] if isinstance(built[0], str) else built[2], cand.threads)
        if done in self.done and cand.extra is None:
            return False
        verdict = replace(cand, threads=None).key()
        if isinstance(built[0], str) and verdict in self.refusals and cand.extra is None:
            return False  # refused for another thread count: the verdict is the commands'
        self.done.add(done)
        if isinstance(built, tuple) and isinstance(built[0], str):
            self.refusals.add(verdict)
            status, text, reason = built
            self.illegal += status == "illegal"
            self.refused.add(cand.main)
            self._note(cand, text, pred, None, status, reason, began)
            return True
        copy, kernel, text = built
        try:
            got = measure.run_once(kernel, self.args, self.names, cand.threads)
        except SpfError as err:
            self._note(cand, text, pred, None, "rejected", _first_line(err), began)
            return True
        dropped = [k for k in self.names if k not in got and k not in self._intermediates(cand)]
        if dropped:  # a user's candidate that stores an output in a local buffer
            why = f"it no longer writes {', '.join(dropped)} (stored in a local buffer)"
            self._note(cand, text, pred, None, "rejected", why, began)
            return True
        want = {k: v for k, v in self.ref.items() if k in got}
        found = measure.mismatch(got, want)
        order = _reassociated(copy, self.space.cflags)
        if found is not None and found[0] and order:
            # a floating-point sum in another order: its round-off on cancelling terms may
            # exceed the tolerance, which is relative to the (small) result; no spf bug
            why = (
                f"computes a different {found[1]}: a reduction summed in another order "
                f"({order}) rounds differently on these arguments beyond the tolerance; "
                "not chosen"
            )
            self._note(cand, text, pred, None, "rejected", why, began)
            return True
        measure.compare(f"{cand.describe()!r} ({text.replace(chr(10), '; ')})", got, want)
        call = measure.caller(kernel, self.work, cand.threads)
        ref = self.best()
        ref_call, ref_time = (
            (self.base_call, self.base_time) if ref is None else (ref.call, ref.estimate)
        )
        if ref is None and self.slow:  # the slow baseline is not called again
            (estimate,) = self._time([call], self.slice, least=1)
        else:
            tr, tc = self._time([ref_call, call], self.slice)
            estimate = tc / tr * ref_time
        self.measured.append(Measured(estimate, cand, copy, kernel, pred, call))
        best = self.best()
        if best is None or best.cand is not cand:  # no gain: the model's order decides again
            self.refused.clear()
        self.costs.append(time.perf_counter() - began)
        self._note(cand, text, pred, estimate, "measured", "", began)
        return True

    def _intermediates(self, cand: Candidate) -> set[str]:
        """The outputs ``cand`` may keep in a local buffer: a pipeline's intermediate."""
        pipe = self.nest.pipe
        steps = [s for c in cand.chain() for s in c.steps]
        piped = pipe is not None and any(s.kind == "compute_at" for s in steps)
        return {pipe.data} if piped and pipe is not None else set()

    def _time(self, fns: list[Callable[[], None]], seconds: float, least: int = 3) -> list[float]:
        """:func:`measure.interleaved`; long calls (over :data:`LONG_S`) get two rounds at
        least and no warm-up."""
        if self.long:
            least = min(least, 2)
        return measure.interleaved(
            fns, seconds, self.shuffles, self.reps, least, warm=not self.long
        )

    def _compile(self, comp: Computation) -> Kernel:
        """:func:`measure.build` with the space's compiler flags (one argument without)."""
        flags = self.space.cflags
        return measure.build(comp) if flags is None else measure.build(comp, flags)

    def _built(self, cand: Candidate) -> tuple[Any, Any, str]:
        """The clone, kernel and commands of ``cand``, or ``(status, commands, reason)``
        when it is illegal or rejected; remembered per command sequence (candidates that
        differ only in their thread count share the verdict and the compiled code)."""
        key = replace(cand, threads=None).key()
        found = self.built.get(key)
        if found is not None:
            return found
        text = ""
        try:
            copy = realize(self.comp, cand, self.nests, self.space)
            text = commands_text(copy, self.start_len)
            copy.check_legality()
            kernel = self._compile(copy)
        except IllegalScheduleError as err:
            out: tuple[Any, Any, str] = ("illegal", text, _first_line(err))
        except SpfError as err:
            out = ("rejected", text, _first_line(err))
        else:
            out = (copy, kernel, text)
        self.built[key] = out
        return out

    def _note(self, cand: Candidate, text: str, pred: float, t: float | None, status: str,
              reason: str, began: float) -> None:  # fmt: skip
        cost = time.perf_counter() - began
        self.history.append(
            Trial(text, cand.describe(), cand.threads, pred, t, status, reason, cost)
        )
        best = self.best()
        self.reporter.update(
            time.perf_counter() - self.t0,
            len(self.measured),
            self.illegal,
            "default schedule" if best is None else best.cand.describe(),
            1.0 if best is None else self.base_time / best.estimate,
            f"{cand.describe()}: {status}" + (f" ({reason[:160]})" if reason else ""),
        )

    def best(self) -> Measured | None:
        better = [m for m in self.measured if m.estimate < self.base_time]
        return min(better, key=lambda m: m.estimate) if better else None

    # -- the loop
    def time_left(self) -> float:
        return self.deadline - time.perf_counter()

    def affordable(self) -> bool:
        """Whether one more candidate fits before the final timing."""
        ordered = sorted(self.costs)
        typical = ordered[(3 * len(ordered)) // 4] if ordered else self.slice * 3
        return self.time_left() - self.budget * FINAL_SHARE > typical

    def run(self, max_trials: int | None) -> None:
        queue = [(predicted(self.nest, Candidate(extra=k)), Candidate(extra=k))
                 for k in range(len(self.space.candidates))]  # fmt: skip
        model = self._merged(ranked)
        self.singles = self._merged(singles)
        trials = 0
        while self.affordable() and (max_trials is None or trials < max_trials):
            nxt = self._next(queue, model, trials)
            if nxt is None:
                break
            if self._too_long(nxt[1]):
                self.seen.add(nxt[1].key())
                continue
            trials += self.evaluate(nxt[1], nxt[0])

    def _merged(
        self, make: Callable[[Nest, Space], list[tuple[float, Candidate]]]
    ) -> list[tuple[float, Candidate]]:
        """The candidates ``make`` gives for each main nest, ordered by the model's seconds
        for the whole computation (:meth:`predict`): across nests, by what they gain."""
        out = []
        for main, nest in self.nests.items():
            for _, cand in make(nest, self.space):
                mine = replace(cand, main=main)
                out.append((self.predict(mine), mine))
        out.sort(key=lambda pc: (pc[0], len(pc[1].steps)))
        return out

    def _turn(self, pending: list[tuple[float, Candidate]]) -> int:
        """The index in ``pending`` of the next candidate: the first, unless the legality
        check refused a candidate of its nest and another nest has one waiting (the model
        prices a nest's moves, not the dependences that forbid them: lu's first nest moves
        ``s0``, whose ``j, k`` interchange is illegal, while ``s2`` alone may move). A refused
        nest yields its turns while the others' candidates beat the best so far; the first
        measured candidate that does not hands the order back to the model."""
        if not self.refused or len(self.nests) < 2:
            return 0
        return next((k for k, pc in enumerate(pending) if pc[1].main not in self.refused), 0)

    def _chained(self, pc: tuple[float, Candidate]) -> tuple[float, Candidate]:
        """``pc`` applied after the best candidate measured so far when that one schedules
        other main nests (a chain: its moves kept, this nest's searched on top of them); not a
        candidate with a command of :data:`WHOLE`, nor after a best with one."""
        best = self.best()
        cand = pc[1]
        if best is None or best.cand.extra is not None or len(self.nests) < 2:
            return pc
        if cand.main in {c.main for c in best.cand.chain()}:
            return pc
        if any(s.kind in WHOLE for s in cand.steps):  # they reshape more than their nest
            return pc
        if any(s.kind in WHOLE for c in best.cand.chain() for s in c.steps):
            return pc  # the other nests' loops are renamed under the best's (a skew's t_w, t_p)
        threads = cand.threads if replace(cand, before=None).parallel else best.cand.threads
        chained = replace(cand, before=best.cand, threads=threads)
        if not self._applies(chained):
            return pc  # the best's moves renamed loops this nest's commands name: on its own
        return self.predict(chained), chained

    def _applies(self, cand: Candidate) -> bool:
        """Whether every command of the chain ``cand`` finds the loops it names once the
        commands before it are applied. The first nest may hold another nest's statement (a
        stencil's sweeps share its time loop: jacobi-1d's ``s1`` moves with ``s0``), and a
        command of the first that renames a loop (``vectorize(i, 4)``: ``i0``, ``i1``) leaves
        nothing for the other nest's ``vectorize(i, 4)`` to apply to; such a chain is no
        candidate (it was refused as ``no statement has the loops i``, a trial spent)."""
        try:
            realize(self.comp, cand, self.nests, self.space)
        except IllegalScheduleError:
            return True  # applies, and the legality check refuses it as it refuses others
        except SpfError:
            return False
        return True

    def _too_long(self, cand: Candidate) -> bool:
        """Whether ``cand`` is a blocking and less than :data:`BLOCKED_BUILD_S` of the search's
        budget is left (its code would not be generated in time)."""
        blocked = any(s.kind == "blocking" for c in cand.chain() for s in c.steps)
        return blocked and self.time_left() - self.budget * FINAL_SHARE < BLOCKED_BUILD_S

    def _next(self, queue: list[tuple[float, Candidate]], model: list[tuple[float, Candidate]],
              trials: int) -> tuple[float, Candidate] | None:  # fmt: skip
        if queue:
            return queue.pop(0)
        past_top = trials >= TOP_K + len(self.space.candidates)
        refine = past_top and self.rng.random() < 0.5
        if refine or not model:
            child = self._mutation()
            if child is not None:
                return child
        # nothing measured after the model's best (all illegal): single commands first
        lists = [self.singles, model] if past_top and not self.measured else [model, self.singles]
        for pending in lists:
            while pending:
                pc = self._chained(pending.pop(self._turn(pending)))
                if pc[1].key() not in self.seen:
                    return pc
        return None

    def _mutation(self) -> tuple[float, Candidate] | None:
        """A new mutation of one of the best three measured candidates (None after ten
        tries that give only candidates seen already)."""
        parents = [m.cand for m in sorted(self.measured, key=lambda m: m.estimate)[:3]]
        parents = [p for p in parents if p.extra is None]
        for _ in range(10 if parents else 0):
            parent = self.rng.choice(parents)
            child = mutate(self.nests[parent.main], self.space, parent, self.rng)
            if child.key() not in self.seen and (child.steps or child.threads):
                return self.predict(child), child
        return None

    # -- the end
    def interrupted(self) -> Outcome:
        """The best candidate measured so far, by its estimate (Ctrl-C: no final timing)."""
        self.history.append(Trial("", "interrupted (KeyboardInterrupt)", None, 0.0, None,
                                  "interrupted", "the search stopped here"))  # fmt: skip
        best = self.best()
        if best is None:
            out = Outcome(self.comp.clone(), self.base_time, self.base_time, len(self.measured),
                          self.illegal, self.history, None)  # fmt: skip
        else:
            out = Outcome(best.comp, best.estimate, self.base_time, len(self.measured),
                          self.illegal, self.history, best.cand.threads,
                          new_entries(best.comp, self.start_len),
                          commands_text(best.comp, self.start_len))  # fmt: skip
        out.interrupted = True
        return out

    def finish(self) -> Outcome:
        best = self.best()
        seconds = max(min(self.time_left(), self.budget * FINAL_SHARE), 0.02)
        if best is not None and self.slow and best.estimate * 2 < self.base_time:
            (tc,) = self._time([best.call], seconds, least=1)  # no noise turns 2x around
            return Outcome(best.comp, tc, self.base_time, len(self.measured), self.illegal,
                           self.history, best.cand.threads,
                           new_entries(best.comp, self.start_len),
                           commands_text(best.comp, self.start_len))  # fmt: skip
        if best is not None:
            tb, tc = self._time([self.base_call, best.call], seconds)
            if tc < tb:
                return Outcome(best.comp, tc, tb, len(self.measured), self.illegal,
                               self.history, best.cand.threads,
                               new_entries(best.comp, self.start_len),
                               commands_text(best.comp, self.start_len))  # fmt: skip
            self.base_time = tb
        return Outcome(self.comp.clone(), self.base_time, self.base_time, len(self.measured),
                       self.illegal, self.history, None)  # fmt: skip


def _check_names(kernel: Kernel, args: Mapping[str, Any]) -> None:
    """``ArgumentError`` naming the keys of ``args`` that are no argument of the default
    schedule's ``kernel`` (a misspelt name would otherwise be dropped silently: candidates
    take the arguments their kernel takes, :func:`spf.tuning.measure.taken`)."""
    names = [a.name for a in kernel.arguments]
    unknown = sorted(set(args) - set(names))
    if unknown:
        raise ArgumentError(
            f"tune: args names {', '.join(map(repr, unknown))}, not an argument of "
            f"the default schedule of {kernel.name}; its arguments are {', '.join(names)}"
        )


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def search(
    comp: Computation,
    args: Mapping[str, Any],
    space: Space,
    *,
    budget: float,
    seed: int | None = None,
    max_trials: int | None = None,
    progress: bool | None = None,
) -> Outcome:
    """Search the schedules of ``comp`` in ``space`` on ``args`` for ``budget`` seconds
    (the baseline's compilation and the final timing included).

    A ``KeyboardInterrupt`` (Ctrl-C) after the baseline was timed stops the search: the best
    candidate measured so far is returned (``interrupted=True``, without the final timing);
    one during the baseline propagates (there is nothing to return yet)."""
    deadline = time.perf_counter() + budget
    reporter = Reporter(comp.name, budget, progress)
    try:
        s = _Search(comp, args, space, seed, deadline, budget, reporter)
        s.baseline()
        try:
            s.run(max_trials)
            return s.finish()
        except KeyboardInterrupt:
            return s.interrupted()
    finally:
        reporter.close()


def _reassociated(comp: Computation, cflags: tuple[str, ...] | None) -> str:
    """What makes ``comp``'s kernel sum a floating-point reduction in another order than the
    default schedule ("" when nothing does): a parallel reduction (per-thread copies or
    atomic updates) or compiler flags that let gcc reassociate."""
    fast = [f for f in cflags or () if f in ("-ffast-math", "-Ofast", "-fassociative-math")]
    if fast:
        return f"compiled with {fast[0]}"
    for entry in comp.trace.to_data():
        if entry.get("command") == "Parallelize" and entry.get("args", {}).get("reduction"):
            return (
                f"parallelize({entry['args']['loop']!r}, reduction={entry['args']['reduction']!r})"
            )
    return ""

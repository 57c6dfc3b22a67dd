"""Run-time checks of facts (``assume``) on kernel arguments, by generated C (API.md §16).

Each fact ``forall vars: premise => conclusion`` is checked on its check domain (the premise
where every UF call it makes is inside the UF's declared domain) by a statement of a small
spf Computation (:mod:`spf.analysis.check_loops`): it counts the points where the conclusion
fails and records the first one in lexicographic order. It is scanned, printed and compiled
like any computation (cached on disk), so the loop over the premise is C, not Python. A
fact over parameters only is evaluated on the parameter values.
:mod:`spf.analysis.fact_plan` decides how each fact is checked (:attr:`FactCost.how`):

* ``"parameters"``: a fact over parameters only, evaluated on their values;
* ``"in loop"``: the kernel's checked function tests it where its statements run
  (:mod:`spf.codegen.arg_checks`); this checker only words the error;
* ``"each call"``: a check whose cost is linear in the arrays it reads runs before every
  call: in the kernel's checked function, before its loops, where it can be printed there
  (:mod:`spf.codegen.each_call`, :attr:`FactCost.before_loops`), else all of them in one
  generated function of their own;
* ``"implied"``: the facts checked imply it (:mod:`spf.analysis.fact_prover`: Gauss-Seidel's
  ``col(k) < i`` left of the diagonal follows from sorted rows and ``col(diag(i)) = i``), so
  it is not checked at all: arguments that break it break one of those, which is reported;
* ``"remembered"``: a check that stays superlinear runs once per content of the arrays it
  reads: a checksum of each (:func:`spf.runtime.checksum.checksums`, XXH3) and the
  parameters it uses are remembered once it passed, and a call with the same content skips
  it; any other content (new arrays, or the same arrays changed in place) is checked again.
  A kernel that remembers the contents its checked calls verified (:mod:`spf.runtime.known`)
  reports every fact it checks as ``"remembered"`` (:attr:`FactCost.first`: where a call on
  new contents checks it).

An ordering over pairs (``k1 < k2 => col(k1) < col(k2)``) is checked on neighbouring pairs
(:func:`~spf.analysis.fact_plan.adjacent_form`); its errors still name the fact as written.
A check that takes more than a fifth of the kernel's own call (:data:`SLOW_SHARE`: alone it
keeps the call above 1.2x; a check longer than the kernel is one of these) in two timed
calls (:data:`SLOW_TIMES`) logs one warning naming the fact (logger ``spf``).

:class:`FactChecker` takes any list of facts, e.g. obligations of the form
``forall i, k, j: <domain> => 0 <= j < M`` that a bounds proof could not discharge.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.analysis.check_loops import check_bounded, check_loops
from spf.analysis.injective import EITHER, Injective, first_repeat
from spf.errors import ArgumentError
from spf.runtime.checksum import checksums
from spf.sets.facts import Fact, check_domain

if TYPE_CHECKING:
    from spf.analysis.fact_plan import FactPlan
    from spf.runtime.kernel import Kernel
    from spf.sets import UF

REMEMBERED = 32
"""Contents remembered per remembered fact (the least recently used one is forgotten)."""
TIMED_CALLS = 3
"""The first calls time the per-call checks (for the too-slow warning); later ones do not."""
SLOW_FLOOR_S = 2e-4
"""A check is called too slow (the warning) only past this many seconds: below it the time
is the calls' own overhead, not the check's work."""
SLOW_SHARE = 0.2
SLOW_TIMES = 2
"""A fact is named once its check was slow in this many timed calls: one slow call alone is
as likely a preempted thread or a garbage-collector pause as a slow check."""
"""A check taking more than this share of its kernel's time warns: alone it keeps the call
above the 1.2x that API.md §16 allows a checked call (a check longer than the kernel, the
case the issue names, is one of these)."""


@dataclass(frozen=True)
class FactCost:
    """How a ``check=True`` call verifies one fact (:attr:`spf.Kernel.check_cost`).

    ``fact``: the fact as written (an assumption, or a bounds obligation); ``label``: how
    errors name it; ``how``: ``"parameters"``, ``"in loop"``, ``"each call"`` or
    ``"remembered"`` (module docstring); ``checked``: the fact the check tests (the
    neighbouring-pairs form of an ordering over pairs, else ``fact``); ``reads``: the index
    arrays it reads (for a remembered fact, the arrays whose checksum it is remembered by);
    ``before_loops``: an each-call fact the kernel's checked function tests itself, before
    its loops (:mod:`spf.codegen.each_call`; False: a compiled pass of its own, called first);
    ``implied_by``: for an ``"implied"`` fact, the facts (as written) it follows from.
    """

    fact: str
    label: str
    how: str
    checked: str
    reads: tuple[str, ...]
    before_loops: bool = False
    implied_by: tuple[str, ...] = ()
    first: str = ""
    """For a ``"remembered"`` fact, where a call whose index arrays hold new contents checks
    it: ``"in loop"``, ``"before loops"`` (the kernel's checked function, before its loops)
    or ``"own pass"`` (a compiled pass of its own, called first)."""

    def __str__(self) -> str:
        if self.implied_by:
            by = ", ".join(repr(f) for f in self.implied_by)
            return f"{self.how}: {self.fact!r} (follows from {by})"
        via = f" (checked as {self.checked!r})" if self.checked != self.fact else ""
        how = f"{self.how} ({self.first} on new contents)" if self.first else self.how
        return f"{how}: {self.fact!r}{via}"


class CheckCost(tuple[FactCost, ...]):
    """The :class:`FactCost` of each fact, in order; ``remembered`` lists the facts verified
    once per content of the arrays they read; ``str()`` gives one line per fact."""

    @property
    def remembered(self) -> tuple[str, ...]:
        return tuple(c.fact for c in self if c.how == "remembered")

    @property
    def implied(self) -> tuple[str, ...]:
        """The facts not checked because the others imply them."""
        return tuple(c.fact for c in self if c.how == "implied")

    @property
    def kept(self) -> tuple[str, ...]:
        """The facts a ``check=True`` call verifies (every fact but the implied ones)."""
        return tuple(c.fact for c in self if c.how != "implied")

    def __str__(self) -> str:
        return "\n".join(map(str, self)) or "(no facts)"


class _Checks:
    """Facts checked by one generated Computation, one statement each (compiled on first
    use): :meth:`run` returns the first one that fails, its count and first point.

    ``counting``: the statements only count the violations (``n += !(holds)``: no branch,
    so the compiler vectorizes the check loops); a count above 0 then runs the recording
    form (compiled then) for the first violating point, so errors name the same point."""

    def __init__(
        self, name: str, facts: Sequence[Fact], ufs: Mapping[str, UF], *, counting: bool = False
    ) -> None:
        loops = check_loops(name, facts, ufs, counting=counting)
        ir = loops.ir
        self.stride, self.record_name = loops.stride, loops.record
        self.ir = ir
        self.name = name
        self.counting = counting
        self._first: _Checks | None = None
        """The recording form, when counting (made on the first violation)."""
        self.facts = tuple(facts)
        self.kernel: Kernel | None = None
        self.seconds = 0.0
        """How long the last :meth:`run` took (its compiled check's call alone; 0 for the
        first, which also sets the call up)."""
        self.runs = 0
        self.timed = True
        """Whether :meth:`run` measures :attr:`seconds` (the caller's first calls)."""
        self.params = tuple(sorted(ir.params))
        self.ufs = tuple(sorted(u.name for u in ir.ufs))
        self._ufs = ufs
        self._clean = bytes(8 * len(facts) * self.stride)
        """The bytes of a record that found nothing."""
        self.places: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
        """:meth:`place`'s positions."""
        self._records = threading.local()

    def holds(self, values: Sequence[Any], arrays: Sequence[np.ndarray]) -> bool:
        """Whether every fact holds, for a call already :meth:`run` once on the same
        declarations: ``values`` and ``arrays`` are the caller's parameter values and
        arrays, read at the positions :meth:`place` gave (no dictionary built). False
        also when this thread has no record yet: :meth:`run` then says what fails."""
        try:
            record = self._records.record
        except AttributeError:
            return False
        kernel, (params, ufs) = self.kernel, self.places
        assert kernel is not None
        record.fill(0)
        kernel.call_checked_raw(
            tuple([values[i] for i in params]), [*[arrays[i] for i in ufs], record]
        )
        return bool(record.tobytes() == self._clean)  # cheaper than a numpy reduction

    def place(self, param_order: Sequence[str], uf_order: Sequence[str]) -> None:
        """Where :meth:`holds` finds this check's parameters among the caller's values
        (``param_order``) and its UFs among the caller's arrays (``uf_order``)."""
        self.places = (
            tuple(param_order.index(p) for p in self.params),
            tuple(uf_order.index(u) for u in self.ufs),
        )

    def run(
        self, params: Mapping[str, Any], ufs: Mapping[str, np.ndarray]
    ) -> tuple[int, int, tuple[int, ...]] | None:
        """The first fact that fails (its position, count and first point), or None. The
        arrays were checked by the caller's binding (the same UF declarations), so after its
        first call the compiled check is called directly (its own checked function still
        tests every index value it reads)."""
        kernel = self.kernel
        if kernel is None:
            from spf.runtime.compile import compile_kernel

            kernel = self.kernel = compile_kernel(self.ir, openmp=False, check=False)
        try:
            record = self._records.record
            record.fill(0)
        except AttributeError:  # this thread's own record array
            record = self._records.record = np.zeros(len(self.facts) * self.stride, np.int64)
        arrays = [ufs[u] for u in self.ufs]
        if self.runs:
            start = time.perf_counter() if self.timed else 0.0
            kernel.call_checked_raw(tuple(params[p] for p in self.params), [*arrays, record])
            self.seconds = time.perf_counter() - start if self.timed else 0.0
        else:  # the full binding, once: any argument it would refuse is refused here
            args: dict[str, object] = {p: params[p] for p in self.params}
            kernel(check=True, **args, **dict(zip(self.ufs, arrays, strict=True)),
                   **{self.record_name: record})  # fmt: skip
            self.seconds = 0.0  # that call also set up the argument checks: not the cost
        self.runs += 1
        if not np.count_nonzero(record):
            return None
        counts = record[:: self.stride]
        if not counts.any():
            return None
        if self.counting:  # the first point: the recording form, on these arrays
            if self._first is None:
                self._first = _Checks(f"{self.name}_first", self.facts, self._ufs)
            return self._first.run(params, ufs)
        n = int(np.flatnonzero(counts)[0])
        nvars = len(self.facts[n].vars)
        base = n * self.stride
        return n, int(record[base]), tuple(int(v) for v in record[base + 1 : base + 1 + nvars])


class _Repeats:
    """An injectivity fact (:mod:`spf.analysis.injective`) checked with numpy: the first
    pair of positions holding one value, as the fact's own (quadratic) check loop would
    find it, in O(n log n). :meth:`run` answers as :meth:`_Checks.run` does; :attr:`value`
    is the repeated value it found last on the calling thread."""

    def __init__(self, form: Injective) -> None:
        self.form = form
        self.seconds = 0.0
        self.timed = True
        self._found = threading.local()

    @property
    def value(self) -> int | None:
        return getattr(self._found, "value", None)

    def run(
        self, params: Mapping[str, Any], ufs: Mapping[str, np.ndarray]
    ) -> tuple[int, int, tuple[int, ...]] | None:
        start = time.perf_counter() if self.timed else 0.0
        values = ufs[self.form.uf]
        found = first_repeat(self.form, values, params)
        self.seconds = time.perf_counter() - start if self.timed else 0.0
        if found is None:
            return None
        count, point = found
        self._found.value = int(np.asarray(values)[point[0]])
        return 0, count, point


def _exact(q: _Planned, ufs: Mapping[str, UF]) -> _Checks | _Repeats:
    """The check that finds ``q``'s first violating point: its own check loop, or for an
    injectivity fact :class:`_Repeats` (its check loop is quadratic)."""
    form = q.plan.injective
    if form is not None:
        return _Repeats(form)
    return _Checks("spf_assumption", [q.plan.checked], ufs)


def assumption_label(fact: Fact) -> str:
    """How a failed check names an assumption in its message."""
    return f"the assumption {fact.text!r}"


def _with(params: Mapping[str, Any]) -> str:
    text = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f" (with {text})" if text else ""


class _Planned:
    """One quantified fact and how it is checked."""

    def __init__(
        self, plan: FactPlan, label: str, how: str, ufs: Mapping[str, UF], before: bool = False
    ) -> None:
        self.plan, self.label, self.how = plan, label, how
        self.before_loops = before
        self.route = "before loops" if before else how
        """Where the check runs: :attr:`how`, or ``"before loops"`` (the kernel's own)."""
        domain_ufs = {c.split("(", 1)[0] for c in check_domain(plan.checked, ufs).uf_calls}
        self.reads = tuple(sorted((plan.checked.ufs | domain_ufs) & set(ufs)))
        self.params = tuple(sorted(plan.checked.params | _declared_params(self.reads, ufs)))
        self.seen: OrderedDict[tuple[Any, ...], None] = OrderedDict()
        self.exact: _Checks | _Repeats | None = None
        self.warned = False
        self.slow_seen = 0  # timed checks of this fact that were slow (SLOW_TIMES warn)

    @property
    def fact(self) -> Fact:
        return self.plan.fact

    @property
    def value(self) -> int | None:
        """The value an injectivity fact's check found repeated last (None: none)."""
        return self.exact.value if isinstance(self.exact, _Repeats) else None

    def point(self, point: tuple[int, ...]) -> str:
        """``i = 3, k1 = 5, k2 = 6``: the point of the checked fact named in the fact's
        own variables (an adjacent form's second variable is its first plus one)."""
        names = list(self.plan.checked.vars)
        values = dict(zip(names, point, strict=False))
        adj = self.plan.adjacent
        if adj is not None and adj.first in values:
            values[adj.second] = values[adj.first] + 1
        return ", ".join(f"{v} = {values[v]}" for v in self.fact.vars if v in values)

    def error(
        self, count: int, point: tuple[int, ...], params: Mapping[str, Any], note: str = ""
    ) -> ArgumentError:
        form = self.plan.injective
        if form is not None:
            return self._repeat_error(form, count, point, params, note)
        more = f" ({count} violations in all)" if count > 1 and self.plan.adjacent is None else ""
        drop = " or drop the assumption" if self.label == assumption_label(self.fact) else ""
        return ArgumentError(
            f"{self.label} does not hold for these arguments: it fails first at "
            f"{self.point(point)}{more}{_with(params)}; fix the index arrays{drop}"
            f" (or call with check=False to skip the checks){note}"
        )

    def _repeat_error(
        self,
        form: Injective,
        count: int,
        point: tuple[int, ...],
        params: Mapping[str, Any],
        note: str,
    ) -> ArgumentError:
        """An injectivity fact broken: ``uf`` holds one value at the two positions of
        ``point`` (:mod:`spf.analysis.injective`)."""
        name = form.uf
        first, second = sorted(point[:2])
        value = f" = {self.value}" if self.value is not None else ""
        more = f" ({count} such pairs in all)" if count > 1 and form.order != EITHER else ""
        drop = " or drop the assumption" if self.label == assumption_label(self.fact) else ""
        return ArgumentError(
            f"{self.label} does not hold for these arguments: {name}[{first}] = "
            f"{name}[{second}]{value}, but {name} must hold a different value at each "
            f"position {form.interval()} (it fails first at {self.point(point)}){more}"
            f"{_with(params)}; fix {name} so that no value repeats (a format's packer, "
            f"Format.args or spf.sparse, builds a valid one){drop}"
            f" (or call with check=False to skip the checks){note}"
        )

    def key(self, params: Mapping[str, Any], ufs: Mapping[str, np.ndarray]) -> tuple[Any, ...]:
        """What a remembered verdict is keyed by: the parameters the check uses and each
        array's dtype, shape and checksum (XXH3: linear in the bytes, ~1 ms per 24 MB)."""
        read = [ufs[n] for n in self.reads]
        arrays = tuple(
            (a.dtype.str, a.shape, crc) for a, crc in zip(read, checksums(read), strict=True)
        )
        return tuple(params[p] for p in self.params), arrays


def _declared_params(names: Sequence[str], ufs: Mapping[str, UF]) -> set[str]:
    out: set[str] = set()
    for n in names:
        decl = ufs[n]
        for s in (decl.domain, decl.range):
            if s is not None:
                out |= s.params
    return out


class FactChecker:
    """Checks ``facts`` on the arguments of a call (``ArgumentError`` for the first one that
    fails). How each fact is checked is decided on the first call that checks
    (:attr:`cost`); the check functions are generated then and compiled on first use.
    ``labels`` (one per fact) name them in messages (default ``the assumption '<text>'``);
    ``in_loop``: the numbers of the facts the kernel's checked function tests itself;
    ``implied``: the facts the kernel found implied by the others (each with the facts it
    follows from), not checked (None: :func:`~spf.analysis.fact_plan.plan_facts` decides);
    ``validated``: each check was found bounded when the kernel was built (a kernel loaded
    from a warm entry), so it is not derived again."""

    def __init__(
        self,
        facts: Sequence[Fact],
        ufs: Mapping[str, UF],
        labels: Sequence[str] | None = None,
        *,
        in_loop: frozenset[int] = frozenset(),
        before_loops: frozenset[int] = frozenset(),
        implied: Mapping[int, tuple[int, ...]] | None = None,
        validated: bool = False,
    ) -> None:
        names = list(labels) if labels is not None else [assumption_label(f) for f in facts]
        assert len(names) == len(facts), "FactChecker takes one label per fact"
        self.facts = tuple(facts)
        self.labels = tuple(names)
        self.ufs = dict(ufs)
        self.in_loop = in_loop
        self.before_loops = before_loops
        self.implied = dict(implied) if implied is not None else None
        self.parameter_facts = tuple(
            (f, n) for f, n in zip(facts, names, strict=True) if f.is_parameter_fact
        )
        for f in () if validated else facts:  # an unbounded check is refused when the
            # kernel is made (a kernel loaded from a warm entry was made before)
            if not f.is_parameter_fact:
                check_bounded(f, check_domain(f, ufs))
        self._parameters_ok: set[tuple[Any, ...]] = set()
        self._quiet: bool | None = None
        self._planned: dict[int, _Planned] | None = None
        self._plans: tuple[FactPlan, ...] | None = None
        """What :func:`~spf.analysis.fact_plan.plan_facts` decided (:meth:`adopt_plans`)."""
        self._each: _Checks | None = None
        self._each_call: tuple[_Planned, ...] = ()
        self._marks: tuple[_Planned, ...] = ()
        """Each-call injectivity facts not tested by the kernel's checked function: checked
        with numpy (:class:`_Repeats`), in linear-logarithmic time."""
        self._remembered: tuple[_Planned, ...] = ()
        self._calls = 0
        self._order: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        """The binding's parameter and array orders (:meth:`place`)."""
        self.timings: list[tuple[str, float]] = []
        """``(fact text, seconds)`` of the checks the last :meth:`check` timed."""
        self.by_content = False
        """The kernel remembers the index-array contents its checked calls verified
        (spf.runtime.known): :attr:`cost` says ``"remembered"`` for every fact it checks."""

    # ------------------------------------------------------------------------- the plan
    def _plan(self) -> dict[int, _Planned]:
        if self._planned is None:
            from spf.analysis.fact_plan import plan_facts

            if self._plans is None:
                constants = sorted(
                    {p for f in self.facts for p in f.params} | _all_params(self.ufs)
                )
                self._plans = plan_facts(self.facts, self.ufs, constants)
            planned: dict[int, _Planned] = {}
            implied = self._implied()
            for p in self._plans:
                if p.number in implied:
                    how = "implied"
                elif p.number in self.in_loop:
                    how = "in loop"
                elif p.linear or not p.checked.vars:
                    how = "each call"
                else:
                    how = "remembered"
                before = how == "each call" and p.number in self.before_loops
                planned[p.number] = _Planned(p, self.labels[p.number], how, self.ufs, before)
            each = [q for q in planned.values() if q.route == "each call"]
            self._each_call = tuple(q for q in each if q.plan.injective is None)
            self._marks = tuple(q for q in each if q.plan.injective is not None)
            self._remembered = tuple(q for q in planned.values() if q.how == "remembered")
            if self._each_call:
                facts = [q.plan.checked for q in self._each_call]
                self._each = _Checks("spf_assumptions", facts, self.ufs, counting=True)
            self._planned = planned
        return self._planned

    def _implied(self) -> dict[int, tuple[int, ...]]:
        """The facts not checked, each with those it follows from: the kernel's (its
        checked function's choice, so that the two agree), else this plan's."""
        if self.implied is not None:
            return self.implied
        assert self._plans is not None
        return {p.number: p.implied_by for p in self._plans if p.implied_by}

    def plans(self) -> tuple[FactPlan, ...]:
        """How each quantified fact is checked (planned now if it was not yet): what a
        kernel loaded later with the same facts may :meth:`adopt_plans` instead of planning."""
        self._plan()
        assert self._plans is not None
        return self._plans

    def adopt_plans(self, plans: tuple[FactPlan, ...]) -> None:
        """Check the facts as ``plans`` (:meth:`plans` of a checker of the same facts, UFs
        and labels) say, without planning them again."""
        if self._planned is None:
            self._plans = plans

    @property
    def cost(self) -> CheckCost:
        """How each fact is verified (:class:`FactCost`), in order."""
        planned = self._plan()
        out = []
        for n, (f, label) in enumerate(zip(self.facts, self.labels, strict=True)):
            q = planned.get(n)
            if q is None:
                out.append(FactCost(f.text, label, "parameters", f.text, ()))
            else:
                text = q.plan.checked.text
                by = tuple(self.facts[m].text for m in self._implied().get(n, ()))
                how, first = q.how, ""
                if (self.by_content and how != "implied") or how == "remembered":
                    how, first = "remembered", _FIRST.get(q.route, "own pass")
                cost = FactCost(f.text, label, how, text, q.reads, q.before_loops, by, first)
                out.append(cost)
        return CheckCost(out)

    @property
    def quiet(self) -> bool:
        """Nothing to check before a call: no parameter fact, every other in the loops."""
        if self.parameter_facts:
            return False
        return self._all_in_loop() or all(
            q.route in ("in loop", "before loops", "implied") for q in self._plan().values()
        )

    @property
    def per_values(self) -> bool:
        """Whether what :meth:`check` tests depends on the parameter values alone: parameter
        facts, every other fact checked by the kernel's loops (or implied). A call whose
        values passed needs no :meth:`check` again for those values."""
        return self._all_in_loop()

    def _all_in_loop(self) -> bool:
        """Every fact that is not a parameter fact is checked by the kernel's loops: a call
        needs no plan (planning is analysis: it would cost a first call for nothing)."""
        implied = self.implied or {}
        return all(
            n in self.in_loop or n in implied or f.is_parameter_fact
            for n, f in enumerate(self.facts)
        )

    # ------------------------------------------------------------------------ checking
    def place(self, param_order: Sequence[str], array_order: Sequence[str]) -> None:
        """Let :meth:`holds` take a caller's parameter values and arrays as they are, in
        these orders (the binding's)."""
        if not self._all_in_loop():
            self._plan()
        self._order = (tuple(param_order), tuple(array_order))
        if self._each is not None:
            self._each.place(*self._order)

    def holds(self, values: Sequence[Any], arrays: Sequence[np.ndarray]) -> bool:
        """The steady call (after :data:`TIMED_CALLS` timed ones, facts planned,
        :meth:`place` called): True when the facts checked each call hold, run in one
        compiled call on the caller's own tuple of values and arrays, with no dictionary
        built. False when that call found a fact broken, or when :meth:`check` is needed
        (parameter facts, remembered facts, timing, a first call): the caller then runs
        :meth:`check`, which raises the error naming the first broken fact."""
        each = self._each
        if (
            self._order is None
            or self._calls < TIMED_CALLS
            or self.parameter_facts
            or self._remembered
            or self._marks
        ):
            return False
        if each is None:
            return True
        if not each.runs or not each.holds(values, arrays):
            return False
        self._calls += 1
        return True

    def check(self, params: Mapping[str, Any], ufs: Mapping[str, np.ndarray]) -> None:
        self.timings = []
        if self.parameter_facts:
            self._check_parameters(params)
        self._plan()
        timed = self._calls < TIMED_CALLS
        self._calls += 1
        if self._each is not None:
            self._each.timed = timed
            found = self._each.run(params, ufs)
            if timed:
                spent = self._each.seconds
                self.timings += [(q.fact.text, spent) for q in self._each_call]
            if found is not None:
                n, count, point = found
                q = self._each_call[n]
                raise self._earlier(q, params, ufs) or q.error(count, point, params)
        self._check_marks(params, ufs, timed)
        for q in self._remembered:
            key = q.key(params, ufs)
            if key in q.seen:
                q.seen.move_to_end(key)
                continue
            if q.exact is None:
                q.exact = _exact(q, self.ufs)
            found = q.exact.run(params, ufs)
            self.timings.append((q.fact.text, q.exact.seconds))
            if found is not None:
                raise self._earlier(q, params, ufs) or q.error(found[1], found[2], params)
            q.seen[key] = None
            if len(q.seen) > REMEMBERED:
                q.seen.popitem(last=False)

    def _check_marks(
        self, params: Mapping[str, Any], ufs: Mapping[str, np.ndarray], timed: bool
    ) -> None:
        """The each-call injectivity facts the kernel's checked function does not test
        (:class:`_Repeats`)."""
        for q in self._marks:
            if q.exact is None:
                q.exact = _exact(q, self.ufs)
            q.exact.timed = timed
            found = q.exact.run(params, ufs)
            if timed:
                self.timings.append((q.fact.text, q.exact.seconds))
            if found is not None:
                raise self._earlier(q, params, ufs) or q.error(found[1], found[2], params)

    def _earlier(
        self,
        failed: _Planned,
        params: Mapping[str, Any],
        ufs: Mapping[str, np.ndarray],
        note: str = "",
    ) -> ArgumentError | None:
        """The error of the first fact before ``failed`` (in the kernel's order) that fails
        too, among those checked elsewhere (in the loops, before them, remembered, or not
        at all: implied by others), or None: a call names the first fact it breaks whatever
        the order the checks ran in (``note``: as :meth:`loop_error` adds it)."""
        for n, q in sorted(self._plan().items()):
            if n >= failed.plan.number:
                break
            marks = q.plan.injective is not None or failed.plan.injective is not None
            if q.route == failed.route and not marks:  # the same check would have said
                continue
            if q.exact is None:
                q.exact = _exact(q, self.ufs)
            found = q.exact.run(params, ufs)
            if found is not None:
                return q.error(found[1], found[2], params, note)
        return None

    def _check_parameters(self, params: Mapping[str, Any]) -> None:
        key = tuple(sorted(params.items()))
        if key in self._parameters_ok:
            return
        for f, label in self.parameter_facts:
            values = {p: int(params[p]) for p in f.params if p in params}
            if not f.conclusion.contains((), params=values):
                raise ArgumentError(
                    f"{label} does not hold{_with(values)}; pass parameters that satisfy it "
                    "(or call with check=False to skip the checks)"
                )
        if len(self._parameters_ok) > 256:
            self._parameters_ok.clear()
        self._parameters_ok.add(key)

    def loop_error(
        self, number: int, params: Mapping[str, Any], ufs: Mapping[str, np.ndarray], note: str
    ) -> ArgumentError:
        """The error for fact ``number``, found broken by the kernel's loops: the first
        violating point, found by the fact's own check loop (and if that fact holds, the
        first other fact the loops check that does not: facts past the 63rd share a flag).
        The facts the loops check with lower numbers are looked at first: the loops may
        test one only through a stronger fact's test (spf.analysis.dominated_checks), whose
        flag ``number`` then is, and the error names the lowest fact broken, as if each
        had its own test; so does a fact before it checked elsewhere or implied
        (:meth:`_earlier`: SpTRSV's lower fact ``col(k) <= i``, implied by its diagonal facts,
        which its loops test)."""
        planned = self._plan()
        lower = [n for n in sorted(self.in_loop) if n < number]
        order = [*lower, number] + [n for n in sorted(self.in_loop) if n > number]
        for n in order:
            q = planned.get(n)
            if q is None:
                continue
            if q.exact is None:
                q.exact = _exact(q, self.ufs)
            found = q.exact.run(params, ufs)
            if found is not None:
                return self._earlier(q, params, ufs, note) or q.error(
                    found[1], found[2], params, note
                )
        return ArgumentError(
            f"{self.labels[number]} did not hold while the kernel ran, but holds now: the "
            "index arrays changed during the call"
        )

    def each_error(
        self,
        number: int,
        params: Mapping[str, Any],
        ufs: Mapping[str, np.ndarray],
        unallocated: int = 0,
    ) -> ArgumentError:
        """The error for each-call fact ``number``, found broken by the kernel's checked
        function before its loops: the same error the separate pass gives (its first
        violating point and count, or an earlier fact checked elsewhere that fails too).
        ``unallocated``: the bytes of the mark array of an injectivity fact that the
        checked function could not allocate (:mod:`spf.codegen.injective_marks`)."""
        q = self._plan()[number]
        form = q.plan.injective
        if unallocated and form is not None:
            return ArgumentError(
                f"{self.labels[number]} could not be checked: the checked call could not "
                f"allocate {unallocated} bytes to mark the values of {form.uf!r} (one bit "
                f"per value of its declared range){_with(params)}; declare a smaller range "
                f"for {form.uf!r} or call with check=False to skip the checks"
            )
        if q.exact is None:
            q.exact = _exact(q, self.ufs)
        found = q.exact.run(params, ufs)
        if found is None:
            return ArgumentError(
                f"{self.labels[number]} did not hold when the kernel checked it, but holds "
                "now: the index arrays changed during the call"
            )
        return self._earlier(q, params, ufs) or q.error(found[1], found[2], params)

    def slow(self, kernel_s: float) -> list[tuple[str, float]]:
        """``(fact, seconds)`` of the facts whose check (timed by the last :meth:`check`)
        took more than :data:`SLOW_SHARE` of the kernel's ``kernel_s`` seconds (and more than
        :data:`SLOW_FLOOR_S`) in this timed call and in :data:`SLOW_TIMES` timed calls in all,
        each named once per checker."""
        out = []
        planned = self._plan()
        timings, self.timings = self.timings, []
        for text, spent in timings:
            if spent <= max(kernel_s * SLOW_SHARE, SLOW_FLOOR_S):
                continue
            for q in planned.values():
                if q.fact.text == text and not q.warned:
                    q.slow_seen += 1
                    if q.slow_seen >= SLOW_TIMES:
                        q.warned = True
                        out.append((text, spent))
        return out


_FIRST = {"in loop": "in loop", "before loops": "before loops"}
"""A remembered fact's :attr:`FactCost.first` by its route (any other: ``"own pass"``)."""


def _all_params(ufs: Mapping[str, UF]) -> set[str]:
    return _declared_params(list(ufs), ufs)

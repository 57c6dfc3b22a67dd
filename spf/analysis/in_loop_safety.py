"""Which facts a checked call may test inside the kernel's loops without risking an access.

A fact tested in the loops (:func:`spf.analysis.fact_plan.in_loop_plan`) that fails only
raises a flag: the loops run on, and the call is refused once they are done. So every
access the loops make must stay in bounds whether or not such a fact holds. An access is
safe when its bounds proof (:mod:`spf.analysis.bounds`) holds without the fact: the proof
then rests on the UFs' declared ranges (every index value the checked loops read is kept
in its range before any access uses it), the parameters, and facts tested before the
loops. Hence:

* a bounds obligation is never tested in the loops: it is what keeps its own access in
  bounds, and that access runs where it would be tested;
* an assumption that implies a bounds obligation (which is then tested nowhere,
  :mod:`spf.analysis.fact_prover`) is tested before the loops;
* an assumption stays in the loops only if every side its proof searched under the
  quantified facts (:attr:`~spf.analysis.bounds.AccessBounds.by_facts`) is proved again
  without it and without the other assumptions kept in the loops (nor the facts implied by
  any of those, which are not tested at all, :mod:`spf.analysis.fact_prover`). A side that
  fails sends back before the loops the assumptions in the loops that call one of its UFs
  (all of them if none does), and the proof is made again, until it holds;
* a kernel whose run-time index arrays (``index=True``) settled an obligation with a range
  derived for their values (:func:`spf.analysis.index_ranges.settle_index_obligations`)
  tests every assumption before the loops: that proof, made with every assumption, is not
  made again here.

A kernel without such sides (no access proved through the facts), or without facts in its
loops, costs nothing here; otherwise one proof per round, of those sides only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from spf.analysis.bounds import unproved_without

if TYPE_CHECKING:
    from spf.analysis.bounds import BoundsReport, Obligation
    from spf.ir import ComputationIR


def safe_in_loop(
    ir: ComputationIR,
    report: BoundsReport,
    covered: frozenset[int],
    implied: Mapping[int, Sequence[int]],
    obligations: Sequence[Obligation],
) -> frozenset[int]:
    """The facts of ``covered`` (numbers: ``ir.facts``, then the bounds obligations) that
    may be tested in the loops (module docstring). ``report``: the bounds proof of ``ir``
    (:func:`~spf.analysis.bounds.analyze_bounds`); ``implied``: each fact not tested
    because others imply it, with their numbers; ``obligations``: those the kernel checks
    (the report's, less those settled by the ranges of run-time index arrays)."""
    assumed = len(ir.facts)
    inside = {n for n in covered if n < assumed}
    # an obligation implied by assumptions is tested nowhere: those assumptions are what
    # keeps its access in bounds, so they are tested before the loops
    inside -= {m for n, by in implied.items() if n >= assumed for m in by}
    if any(o not in obligations for o in report.obligations):
        return frozenset()
    if not inside or not any(a.by_facts for a in report.accesses):
        return frozenset(inside)
    while inside:
        lost = inside | {n for n, by in implied.items() if n < assumed and inside & set(by)}
        kept = [f for n, f in enumerate(ir.facts) if n not in lost]
        failing = unproved_without(ir, report, kept)
        if not failing:
            break
        back = set()
        for ufs in failing:
            for n in lost:
                if ir.facts[n].ufs & ufs:
                    back |= {n} if n in inside else inside & set(implied.get(n, ()))
        inside -= back or inside
    return frozenset(inside)


__all__ = ["safe_in_loop"]

"""A fact's check plan is remembered by the facts' texts and the declarations and constants
they use: a wavefront's executor (more UFs and constants, other bounds obligations after
the assumptions) and its inspector share the plans of the assumptions, which stay what a
cold start computes."""

from __future__ import annotations

from spf import UF, kernels
from spf.analysis.fact_plan import plan_facts
from spf.sets.facts import Fact
from spf.sets.memo import clear_all


def _plans(extra: bool) -> tuple[object, ...]:
    comp = kernels.ilu0_csr()
    ufs = dict(comp.ufs)
    constants = sorted(comp.params)
    facts = list(comp.assumptions)
    if extra:  # an executor's own UFs, constants and a bounds obligation after the facts
        ufs["levelptr_i"] = UF("levelptr_i", domain="{[l]: 0 <= l <= L}")
        constants.append("L")
        facts.append(Fact.parse("forall l: 0 <= l < L => levelptr_i(l) <= N", ufs, constants))
    return plan_facts(facts, ufs, constants)


def test_an_executor_and_its_inspector_share_the_plans_of_their_assumptions() -> None:
    inspector, executor = _plans(extra=False), _plans(extra=True)
    assert len(executor) == len(inspector) + 1
    assert all(a is b for a, b in zip(inspector, executor, strict=False))
    clear_all()
    cold = _plans(extra=False)
    assert all(a is not b for a, b in zip(inspector, cold, strict=True))
    assert [(p.checked.text, p.linear, p.adjacent) for p in cold] == [
        (p.checked.text, p.linear, p.adjacent) for p in inspector
    ]

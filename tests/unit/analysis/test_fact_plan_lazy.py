"""A plan's linearity is proved on first use, with the verdict the eager proof gave; the
plan's set text (printed with few parentheses) reads back as the sets sympy's printer
gives."""

from __future__ import annotations

from spf import kernels
from spf.analysis.fact_plan import as_set, conjunction, is_linear, plan_facts
from spf.sets import Set
from spf.sets.facts import check_domain
from spf.sets.memo import clear_all


def _ilu0() -> tuple[list, dict, list[str]]:
    comp = kernels.ilu0_csr()
    return list(comp.assumptions), dict(comp.ufs), sorted(comp.params)


def test_linearity_is_proved_when_first_asked_and_matches_the_direct_proof() -> None:
    clear_all()
    facts, ufs, constants = _ilu0()
    plans = plan_facts(facts, ufs, constants)
    assert plans
    assert all(p.linearity._args is not None for p in plans)  # nothing proved yet
    for p in plans:
        domain = check_domain(p.checked, ufs)
        terms = conjunction(p.checked.conclusion) or ()
        assert p.linear == is_linear(domain, terms, facts[: p.number])
        assert p.linearity._args is None  # proved once, then kept
    assert any(p.linear for p in plans)


def test_plan_set_text_reads_as_sympys_printing() -> None:
    facts, ufs, _ = _ilu0()
    compared = 0
    for fact in facts:
        domain = check_domain(fact, ufs)
        terms = conjunction(domain)
        if not terms or not domain.tuple_vars:
            continue
        names = list(domain.tuple_vars)
        printed = " && ".join(f"{e} {'=' if eq else '>='} 0" for eq, e in terms)
        assert as_set(names, terms, ufs) == Set(f"{{[{', '.join(names)}] : {printed}}}", ufs)
        compared += 1
    assert compared >= 4

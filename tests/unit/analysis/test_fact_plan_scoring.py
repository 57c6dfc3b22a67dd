"""In-loop check placement scores each renaming of a fact's variables to a statement's
iterators by the constraints it shares with the statement's domain; the score worked out
per constraint (once per place its own variables go) is the one renaming every constraint
gives, on the facts and statements of the wavefront kernels."""

from __future__ import annotations

import itertools

import pytest

from spf import kernels
from spf.analysis.fact_plan import _s, _Scorer, conjunction, rename
from spf.sets.facts import check_domain


@pytest.mark.parametrize("kernel", ["sptrsv_csr", "gauss_seidel_csr", "ilu0_csr"])
def test_per_constraint_scores_equal_renaming_every_constraint(kernel: str) -> None:
    comp = getattr(kernels, kernel)()
    compared = 0
    for fact in comp.assumptions:
        dterms = conjunction(check_domain(fact, comp.ufs))
        if fact.is_parameter_fact or dterms is None:
            continue
        names = list(fact.vars)
        for stmt in comp.stmts:
            sterms = conjunction(stmt.domain)
            svars = list(stmt.domain.tuple_vars)
            if sterms is None or len(svars) < len(names):
                continue
            own = set(sterms)
            score = _Scorer(names, dterms, own)
            for image in itertools.permutations(svars, len(names)):
                for shifts in itertools.product((-1, 0), repeat=len(names)):
                    mapping = {v: _s(s) + d for v, s, d in zip(names, image, shifts, strict=True)}
                    want = sum(t in own for t in rename(dterms, mapping))
                    choice = dict(zip(names, zip(image, shifts, strict=True), strict=True))
                    assert score(choice) == want, (fact.text, stmt.name, mapping)
                    compared += 1
    assert compared > 0

"""Facts a kernel need not check: those the facts it does check imply (API.md §16).

A kernel checks each fact ``forall vars: premise => conclusion`` on its check domain
(:func:`~spf.sets.facts.check_domain`). When the facts it keeps checking imply another one,
that one holds whenever the checks pass, and checking it costs time for nothing: the
strictly-lower ``forall i, k: rowptr(i) <= k < diag(i) => col(k) < i`` of Gauss-Seidel
follows from the sorted columns of each row, ``diag(i)`` inside row ``i`` and
``col(diag(i)) = i``. :func:`implied_facts` proves it on the facts as sets, with the set
algebra's emptiness under facts (:func:`~spf.sets.facts.is_empty_under`): each constraint
of the conclusion, negated, conjoined with the check domain, is empty under the other
facts. Facts are dropped one at a time, in order, each proved from those still kept, so two
facts that imply each other are not both dropped.

Two things help the proof along, both sound because the facts they come from are checked:

* :func:`pairwise_closure`: an ordering stated on neighbours (``col(k) < col(k+1)`` inside a
  row) also holds for every pair of the row (``k1 < k2 => col(k1) < col(k2)``). The pair form
  is derived and then proved equivalent: its neighbouring-pairs form
  (:func:`~spf.analysis.fact_plan.adjacent_form`, which proves the reduction) must be the
  fact itself, compared as sets.
* the conclusions of kept facts of one variable (``rowptr(i) <= diag(i) < rowptr(i+1)``,
  ``col(diag(i)) = i``) are conjoined at each variable of the tested fact whose values lie in
  their check domain (a subset test): the emptiness search instantiates facts on the calls a
  set makes, and these name the calls the proof goes through (``rowptr(i+1)``,
  ``col(diag(i))``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING

from spf.analysis.fact_plan import (
    Terms,
    adjacent_form,
    as_set,
    conjunction,
    declarations_of,
    fresh,
    rename,
)
from spf.errors import SpfError
from spf.sets.affine import Aff, Call, Sym
from spf.sets.facts import Fact, check_domain, is_empty_under
from spf.sets.linear import sym
from spf.sets.memo import Table

if TYPE_CHECKING:
    from spf.sets import UF


def implied_facts(
    facts: Sequence[Fact], ufs: Mapping[str, UF], constants: Sequence[str]
) -> dict[int, tuple[int, ...]]:
    """The facts of ``facts`` (by number) that the others imply, each with the numbers of
    the facts kept (checked), which imply it (the proof does not say which of them)."""
    key = (
        tuple((f.text, f.vars) for f in facts),
        tuple(sorted(ufs.items())),
        tuple(constants),
    )
    found = _IMPLIED.get(key)
    if found is None:
        found = _IMPLIED.put(key, _implied(facts, ufs, constants))
    return dict(found)


_IMPLIED: Table[Hashable, tuple[tuple[int, tuple[int, ...]], ...]] = Table(256)


def _implied(
    facts: Sequence[Fact], ufs: Mapping[str, UF], constants: Sequence[str]
) -> tuple[tuple[int, tuple[int, ...]], ...]:
    quantified = [n for n, f in enumerate(facts) if not f.is_parameter_fact]
    if len(quantified) < 2:
        return ()
    reads = {n: set(declarations_of([facts[n]], ufs)) for n in range(len(facts))}
    closures: dict[int, Fact | None] = {}

    def closure(m: int) -> Fact | None:
        if m not in closures:
            closures[m] = pairwise_closure(facts[m], ufs, constants)
        return closures[m]

    dropped: dict[int, tuple[int, ...]] = {}
    for n in quantified:
        kept = [m for m in range(len(facts)) if m != n and m not in dropped]
        if not any(m in quantified for m in kept):
            continue
        if not any(facts[m].is_parameter_fact or reads[m] & reads[n] for m in kept):
            # only facts over other index arrays are left: none of them would be named
            # as implying it (below), so it is checked whatever a proof finds; no proof
            # is tried (SpAdd's three facts read A's, B's and C's arrays: 0.1 to 0.2 s)
            continue
        trusted = [facts[m] for m in kept]
        trusted += [c for m in kept if m in quantified and (c := closure(m)) is not None]
        singles = [facts[m] for m in kept if m in quantified and len(facts[m].vars) == 1]
        try:
            proved = _follows(facts[n], trusted, singles, ufs)
        except SpfError:
            proved = False
        if proved:
            dropped[n] = tuple(kept)
    # each dropped fact follows from those kept at its turn, and the ones among them dropped
    # later follow from fewer still: all follow from the facts kept in the end, of which
    # those over other UFs say nothing about it (a wavefront executor's own facts)
    final = [m for m in range(len(facts)) if m not in dropped]
    return tuple(
        (n, tuple(m for m in final if facts[m].is_parameter_fact or reads[m] & reads[n]))
        for n in dropped
    )


def _follows(
    fact: Fact, trusted: Sequence[Fact], singles: Sequence[Fact], ufs: Mapping[str, UF]
) -> bool:
    """Whether ``fact`` holds on its check domain wherever ``trusted`` hold."""
    names = list(fact.vars)
    domain = conjunction(check_domain(fact, ufs))
    concl = conjunction(fact.conclusion)
    if domain is None or not concl:
        return False
    known = (*domain, *_conclusions_at(names, domain, singles, ufs))
    for negated in _negations(concl):
        if not is_empty_under(as_set(names, (*known, negated), ufs), trusted):
            return False
    return True


def _negations(concl: Terms) -> list[tuple[bool, Aff]]:
    """Each way the conjunction ``concl`` can fail, one constraint each."""
    out: list[tuple[bool, Aff]] = []
    for eq, e in concl:
        out.append((False, -e - 1))
        if eq:
            out.append((False, e - 1))
    return out


def _conclusions_at(
    names: list[str], domain: Terms, singles: Sequence[Fact], ufs: Mapping[str, UF]
) -> Terms:
    """The conclusions of the one-variable facts ``singles`` at each of ``names`` whose
    values (over ``domain``) lie in the fact's check domain."""
    out: list[tuple[bool, Aff]] = []
    own = as_set(names, domain, ufs)
    for h in singles:
        hdomain = conjunction(check_domain(h, ufs))
        hconcl = conjunction(h.conclusion)
        if hdomain is None or not hconcl:
            continue
        (x,) = h.vars
        for v in names:
            at = {x: sym(v).aff()}
            if own.is_subset(as_set(names, rename(hdomain, at), ufs)):
                out += rename(hconcl, at)
    return tuple(out)


# ---------------------------------------------------------------------- pairwise closure
def pairwise_closure(fact: Fact, ufs: Mapping[str, UF], constants: Sequence[str]) -> Fact | None:
    """The ordering over every pair that ``fact``, an ordering stated on neighbouring
    pairs, is equivalent to (module docstring), or None."""
    premise = conjunction(fact.premise)
    concl = conjunction(fact.conclusion)
    domain = conjunction(check_domain(fact, ufs))
    if premise is None or not concl or domain is None:
        return None
    names = list(fact.vars)
    for k in names:
        try:
            pair = _pair_fact(fact, names, k, premise, concl, ufs, constants)
            if pair is not None and _same_as(fact, names, domain, concl, pair, ufs, constants):
                return pair
        except SpfError:
            continue
    return None


def _pair_fact(
    fact: Fact,
    names: list[str],
    k: str,
    premise: Terms,
    concl: Terms,
    ufs: Mapping[str, UF],
    constants: Sequence[str],
) -> Fact | None:
    """``forall .., k1, k2: premise(k1) && premise(k2 - 1) && k1 < k2 => concl(k1, k2)``
    where ``concl(k1, k2)`` is the conclusion with ``k`` as ``k1`` and ``k + 1`` as ``k2``
    inside UF calls; None when no call reads ``k + 1``."""
    taken = set(names) | {n for _, e in (*premise, *concl) for n in e.free_names()}
    k1 = fresh(f"{k}1", taken)
    k2 = fresh(f"{k}2", taken | {k1})
    s1, s2 = sym(k1), sym(k2)
    first = rename(concl, {k: s1.aff()})
    swaps: dict[Call, Aff] = {}
    for _, e in first:
        for call in e.calls():
            if len(call.args) != 1:
                continue
            if call.args[0] - s1 - 1 == 0:
                swaps[call] = Call(call.name, [s2.aff()]).aff()
    if not swaps:
        return None
    pair_concl = tuple((eq, e.xreplace(swaps)) for eq, e in first)
    if any(_has_shift(e, s1) for _, e in pair_concl):
        return None
    pair_premise = (
        *rename(premise, {k: s1.aff()}),
        *rename(premise, {k: s2 - 1}),
        (False, s2 - s1 - 1),
    )
    vars_ = [v for n in names for v in ((k1, k2) if n == k else (n,))]
    text = _text(vars_, pair_premise, pair_concl)
    return Fact.parse(text, dict(ufs), list(constants))


def _has_shift(e: Aff, s: Sym) -> bool:
    """Whether a sum with the terms ``s`` and ``1`` (``s + 1``, ``s + 1 + j``) occurs in
    ``e``, at its top or inside a call or a floor."""
    if e.coeff(s) == 1 and e.const == 1:
        return True
    return any(_has_shift(a, s) for c in e.calls() for a in c.args) or any(
        _has_shift(f.arg, s) for f in e.floors()
    )


def _text(names: list[str], premise: Terms, concl: Terms) -> str:
    def conj(ts: Terms) -> str:
        return " && ".join(f"{e} {'=' if eq else '>='} 0" for eq, e in ts)

    return f"forall {', '.join(names)}: {conj(premise)} => {conj(concl)}"


def _same_as(
    fact: Fact,
    names: list[str],
    domain: Terms,
    concl: Terms,
    pair: Fact,
    ufs: Mapping[str, UF],
    constants: Sequence[str],
) -> bool:
    """Whether checking ``pair`` on neighbouring pairs checks exactly ``fact``: its
    adjacent form (proved equivalent to ``pair``) has ``fact``'s check domain and, there,
    its conclusion."""
    adj = adjacent_form(pair, ufs, constants)
    if adj is None or len(adj.fact.vars) != len(names):
        return False
    back = {a: sym(b).aff() for a, b in zip(adj.fact.vars, names, strict=True)}
    adomain = conjunction(check_domain(adj.fact, ufs))
    aconcl = conjunction(adj.fact.conclusion)
    if adomain is None or aconcl is None:
        return False
    adomain, aconcl = rename(adomain, back), rename(aconcl, back)
    mine, theirs = as_set(names, domain, ufs), as_set(names, adomain, ufs)
    if not (mine.is_subset(theirs) and theirs.is_subset(mine)):
        return False
    holds = as_set(names, (*domain, *concl), ufs)
    also = as_set(names, (*domain, *aconcl), ufs)
    return holds.is_subset(also) and also.is_subset(holds)

"""Injectivity facts: a UF one-to-one over an interval, checked in linear time (API.md §16).

A fact of one of the forms

* ``forall t1, t2: lo <= t1 < t2 < hi => perm(t1) != perm(t2)`` (or ``t2 < t1``; the
  conclusion may also read ``perm(t1) < perm(t2) || perm(t1) > perm(t2)``);
* ``forall t1, t2: perm(t1) = perm(t2) => t1 = t2`` (the interval from the premise or from
  ``perm``'s declared domain: its check domain is ``lo <= t1, t2 < hi && perm(t1) =
  perm(t2)``)

says that ``perm`` takes no value twice on ``lo <= t < hi``. Checked as written, over
every pair, it is quadratic (:func:`spf.analysis.fact_plan.is_linear` says so, and it was
checked once per content, an O(N^2) pass on new contents). With ``perm``'s declared range
an interval ``rlo <= v <= rhi``, one pass marking each value seen (a bit per value of the
range, ``calloc``'d) finds a repeated value in O(hi - lo + rhi - rlo):
:mod:`spf.codegen.injective_marks` prints it into the kernel's checked function and
:func:`first_repeat` finds the first violating pair (the one the fact's own check loop
would name) with numpy when it fails. Any other fact, or this one over a UF whose range is
undeclared or not an interval, is left as it was (:func:`injective_form` returns None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import SpfError
from spf.sets.affine import Aff, Call, Sym
from spf.sets.facts import Fact, check_domain, condition_terms

if TYPE_CHECKING:
    from spf.sets import UF

Terms = tuple[tuple[bool, Aff], ...]

ASCENDING, DESCENDING, EITHER = "ascending", "descending", "either"
"""How a fact's two variables are ordered on its check domain: the first below the second,
above it, or either way (the ``perm(t1) = perm(t2) => t1 = t2`` form)."""


@dataclass(frozen=True)
class Injective:
    """``uf`` takes no value twice on ``lo <= t < hi`` (``lo``, ``hi`` over parameters).
    ``order``: :data:`ASCENDING`, :data:`DESCENDING` or :data:`EITHER`, how the fact's two
    variables (in the fact's order) relate on its check domain: it decides which pair is
    its first violating point (:func:`first_repeat`)."""

    uf: str
    lo: Aff
    hi: Aff
    order: str

    def interval(self) -> str:
        """``0 <= t < N``: the interval as text."""
        return f"{self.lo} <= t < {self.hi}"


def injective_form(fact: Fact, ufs: Mapping[str, UF]) -> Injective | None:
    """What ``fact`` says when it is one of the injectivity forms (module docstring) over a
    UF whose declared range is an interval, else None."""
    if len(fact.vars) != 2 or len(fact.ufs) != 1:
        return None
    (name,) = fact.ufs
    decl = ufs.get(name)
    if decl is None or not _interval_range(decl):
        return None
    a, b = (Sym(v).aff() for v in fact.vars)
    fa, fb = Call(name, (a,)).aff(), Call(name, (b,)).aff()
    try:
        domain = condition_terms(check_domain(fact, ufs))
        conclusion = condition_terms(fact.conclusion)
    except SpfError:
        return None
    if len(domain) != 1:
        return None
    terms = tuple(domain[0])
    distinct = {fa - fb - 1, fb - fa - 1}
    if len(conclusion) == 2 and {_single(c, False) for c in conclusion} == distinct:
        return _pairs(name, fact.vars, terms)
    if len(conclusion) == 1 and _single(conclusion[0], True) in (a - b, b - a):
        same = [t for t in terms if t in ((True, fa - fb), (True, fb - fa))]
        if len(same) != 1:
            return None
        rest = tuple(t for t in terms if t != same[0])
        return _both(name, fact.vars, rest)
    return None


def _single(conj: list[tuple[bool, Aff]], eq: bool) -> Aff | None:
    """The one constraint of ``conj`` when it has one of kind ``eq`` (else None)."""
    if len(conj) != 1 or conj[0][0] != eq:
        return None
    return conj[0][1]


def _interval_range(decl: UF) -> bool:
    """``decl``: one argument, one value, and a declared range ``lo <= v <= hi`` over
    parameters (the mark array's extent)."""
    if decl.arity != 1 or decl.out_arity != 1 or decl.range is None or decl.monotonic:
        return False
    try:
        disjuncts = condition_terms(decl.range)
    except SpfError:
        return False
    if len(disjuncts) != 1:
        return False
    (v,) = decl.range.tuple_vars
    lower = upper = False
    for eq, e in disjuncts[0]:
        if eq or e.calls() or e.floors():
            return False
        c = e.coeffs.get(Sym(v), 0)
        if c not in (1, -1) or set(e.free_names()) & set(decl.range.tuple_vars) - {v}:
            return False
        lower, upper = lower or c == 1, upper or c == -1
    return lower and upper


def _pairs(name: str, names: tuple[str, ...], terms: Terms) -> Injective | None:
    """``lo <= t1 < t2 < hi`` (or ``t2 < t1``) exactly, as ``terms`` state it."""
    if any(eq or e.calls() or e.floors() for eq, e in terms):
        return None
    for order, (small, big) in ((ASCENDING, names), (DESCENDING, names[::-1])):
        for lo in _bounds(terms, small, 1, names):
            for hi in _bounds(terms, big, -1, names):
                s, g = Sym(small).aff(), Sym(big).aff()
                wanted = ((False, s - lo), (False, g - s - 1), (False, hi - g - 1))
                if _same(names, terms, wanted):
                    return Injective(name, lo, hi, order)
    return None


def _both(name: str, names: tuple[str, ...], terms: Terms) -> Injective | None:
    """``lo <= t1 < hi && lo <= t2 < hi`` exactly, as ``terms`` state it."""
    if any(eq or e.calls() or e.floors() for eq, e in terms):
        return None
    first, second = names
    for lo in _bounds(terms, first, 1, names):
        for hi in _bounds(terms, first, -1, names):
            a, b = Sym(first).aff(), Sym(second).aff()
            wanted = tuple((False, e) for v in (a, b) for e in (v - lo, hi - v - 1))
            if _same(names, terms, wanted):
                return Injective(name, lo, hi, EITHER)
    return None


def _bounds(terms: Terms, var: str, sign: int, names: tuple[str, ...]) -> list[Aff]:
    """The bounds ``terms`` give ``var`` alone, over parameters (no variable of ``names``):
    lower ones (``sign`` 1, from ``var - lo >= 0``) as ``lo``, upper ones (``sign`` -1, from
    ``hi' - var >= 0``) as the exclusive ``hi = hi' + 1``."""
    v = Sym(var)
    out = []
    for _, e in terms:
        if e.coeffs.get(v, 0) != sign:
            continue
        rest = e - v.aff() * sign
        if set(rest.free_names()) & set(names):
            continue
        out.append(-rest if sign == 1 else rest + 1)
    return out


def _same(names: tuple[str, ...], terms: Terms, wanted: Terms) -> bool:
    """Whether ``terms`` and ``wanted`` state the same set over ``names``."""
    from spf.analysis.fact_plan import as_set

    try:
        got, want = as_set(names, terms, {}), as_set(names, wanted, {})
        return got.is_subset(want) and want.is_subset(got)
    except SpfError:
        return False


def evaluate(e: Aff, params: Mapping[str, Any]) -> int:
    """``e`` (over parameters) at ``params``."""
    total = e.const
    for atom, c in e.coeffs.items():
        assert isinstance(atom, Sym), f"spf bug: {e} is not over parameters"
        total += c * int(params[atom.name])
    return int(total)


def first_repeat(
    form: Injective, values: Any, params: Mapping[str, Any]
) -> tuple[int, tuple[int, int]] | None:
    """The violations of ``form`` by ``values`` (the UF's array) and its first violating
    point in lexicographic order of the fact's variables (as its own check loop finds it),
    or None when no value repeats on the interval. O(n log n) in the interval's length."""
    lo, hi = evaluate(form.lo, params), evaluate(form.hi, params)
    used = np.asarray(values)[max(lo, 0) : max(hi, lo, 0)]
    if used.size < 2:
        return None
    low, high = int(used.min()), int(used.max())
    dense = high - low < 4 * used.size + 1024  # a count per value: O(n), no sort
    if dense and int(np.bincount(used.astype(np.int64) - low).max()) <= 1:
        return None
    _, first, inverse, counts = np.unique(
        used, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    repeated = counts[inverse] > 1
    if not repeated.any():
        return None
    pairs = int(np.sum(counts * (counts - 1) // 2))
    if form.order == DESCENDING:  # the first position with an earlier one of its value
        later = np.flatnonzero(first[inverse] != np.arange(used.size))
        t = int(later[0])
        point = (t, int(first[inverse[t]]))
    else:  # the first position whose value repeats, and its next one
        t = int(np.flatnonzero(repeated)[0])
        point = (t, t + 1 + int(np.flatnonzero(used[t + 1 :] == used[t])[0]))
    count = pairs * 2 if form.order == EITHER else pairs
    start = max(lo, 0)
    return count, (point[0] + start, point[1] + start)

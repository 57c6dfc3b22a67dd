"""Injectivity facts tested by a kernel's checked function in one marking pass (API.md §16).

A fact that a UF takes no value twice over an interval (:mod:`spf.analysis.injective`:
SELL-C-sigma's row permutation, ``forall t1, t2: 0 <= t1 < t2 < N => perm(t1) !=
perm(t2)``) holds on pairs, so its own check loop is quadratic. The checked function
``f_spf_checked`` tests it before its loops, after the range pass and the each-call facts
(:mod:`spf.codegen.range_pass`, :mod:`spf.codegen.each_call`), in one pass over the
interval: a bit per value of the UF's declared range (``calloc``'d, ``spf_lim_<n> + 1``
bits), each value's bit tested and set, no branch. A value out of the declared range marks
nothing (its range is the range pass's or the loops' to refuse, as for any read); a value
seen twice records ``[FAULT_EACH, fact number, 0, 0]`` (:data:`~spf.codegen.each_call.
FAULT_EACH`, as a broken each-call fact) and the function returns before anything is
written: the caller names the fact, ``perm`` and the two positions
(:meth:`spf.runtime.fact_check.FactChecker.each_error`). A mark array that cannot be
allocated records ``[FAULT_EACH, fact number, -1, bytes]`` and the call is refused with an
error that says so.

The mark array costs ``(range + 1) / 8`` bytes and one pass; SELL(8, 32)'s checked SpMV
pays one read, one bit test and one store per row (the range pass already read ``perm``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from spf.codegen.each_call import FAULT_EACH
from spf.sets.affine import Aff, Sym

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spf.analysis.fact_plan import FactPlan
    from spf.codegen.program import Program

FAULT_NO_MARKS = -1
"""The index word of a ``FAULT_EACH`` record whose mark array could not be allocated (its
value word: the bytes asked for)."""


@dataclass(frozen=True)
class MarkCheck:
    """Fact number ``fact``: ``uf`` takes no value twice on ``lo <= t < hi``."""

    fact: int
    uf: str
    lo: Aff
    hi: Aff


def plan_marks(
    program: Program, plans: Sequence[FactPlan], in_loop: frozenset[int]
) -> tuple[MarkCheck, ...]:
    """The injectivity facts of ``plans`` that the checked function of ``program`` tests in
    a marking pass: checked (not implied, not in ``in_loop``), over a UF argument of one
    index and a declared range, with bounds over the kernel's parameters."""
    params = {a.name for a in program.signature.args if a.kind == "param"}
    ufs = {
        a.name
        for a in program.signature.args
        if a.kind == "uf" and a.uf is not None and a.uf.range is not None and not a.inner
    }
    out = []
    for p in plans:
        form = p.injective
        if form is None or p.implied_by or p.number in in_loop or form.uf not in ufs:
            continue
        if set(form.lo.free_names()) | set(form.hi.free_names()) <= params:
            out.append(MarkCheck(p.number, form.uf, form.lo, form.hi))
    return tuple(out)


def mark_lines(program: Program, marks: Sequence[MarkCheck]) -> list[str]:
    """The checked function's marking pass of each of ``marks`` (module docstring)."""
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    names = [a.name for a in ufs]
    out: list[str] = []
    for m in marks:
        n = names.index(m.uf)
        lim = f"spf_lim_{n}"
        out += [
            "{",
            f"  const int64_t spf_m_lo = {_c(m.lo)}, spf_m_hi = {_c(m.hi)};",
            "  if (spf_m_hi - spf_m_lo > 1)",
            "  {",
            f"    const uint64_t spf_m_bytes = {lim} / 8 + 1;",
            "    unsigned char *spf_mark = (unsigned char *)calloc(spf_m_bytes, 1);",
            "    if (!spf_mark)",
            f"    {{ spf_fault_note(spf_fault, {FAULT_EACH}, {m.fact}, {FAULT_NO_MARKS}, "
            "(int64_t)spf_m_bytes); return; }",
            "    unsigned spf_seen = 0;",
            "    for (int64_t spf_t = spf_m_lo; spf_t < spf_m_hi; spf_t++)",
            "    {",
            f"      const uint64_t spf_v = (uint64_t)(int64_t){m.uf}[spf_t] - "
            f"(uint64_t)spf_lo_{n};",
            f"      const unsigned spf_in = spf_v <= {lim};",
            "      const uint64_t spf_i = spf_in ? spf_v : 0;",
            "      const unsigned spf_bit = spf_in << (spf_i & 7);",
            "      spf_seen |= spf_mark[spf_i >> 3] & spf_bit;",
            "      spf_mark[spf_i >> 3] |= (unsigned char)spf_bit;",
            "    }",
            "    free(spf_mark);",
            "    if (spf_seen)",
            f"    {{ spf_fault_note(spf_fault, {FAULT_EACH}, {m.fact}, 0, 0); return; }}",
            "  }",
            "}",
        ]
    return out


def _c(e: Aff) -> str:
    """``e`` (integer multiples of parameters and a constant) as C over ``int64_t``."""
    parts = []
    for atom, c in sorted(e.coeffs.items(), key=lambda item: str(item[0])):
        assert isinstance(atom, Sym), f"spf bug: {e} is not over parameters"
        assert Fraction(c).denominator == 1, f"spf bug: {e}"
        parts.append(f"{int(c)}LL * {atom.name}" if c != 1 else atom.name)
    assert Fraction(e.const).denominator == 1, f"spf bug: {e}"
    if e.const or not parts:
        parts.append(f"{int(e.const)}LL")
    return " + ".join(parts)

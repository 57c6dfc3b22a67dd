"""Preconditions: the parameter values under which an access stays inside its data space.

An access that isl proves outside its data space for *some* parameter values, but not for
every value at which its statement runs, is not refused (API.md section 10): PolyBench's
``durbin`` reads ``r(0)``, which is out of bounds only when ``N = 0``. The bounds proof
(:mod:`spf.analysis.bounds`) hands this module two parameter sets: ``run``, where the access
touches some element (its statement has instances), and ``bad``, where some instance
accesses outside the shape (both within the parameter values a kernel can be called with,
the *context*). The condition under which the access is in bounds is ``run => not bad``,
written as a :class:`Precondition` (a parameter :class:`~spf.sets.facts.Fact` in ``assume``
syntax, gisted against the context and the premise so it reads as simply as isl can make
it)::

    >>> import islpy as isl
    >>> run = isl.Set("[N] -> { : N >= 0 }")
    >>> bad = isl.Set("[N] -> { : N = 0 }")
    >>> condition(run, bad, run)
    'N >= 1'

:func:`parameter_terms` turns a parameter set into plain integers (one conjunction per
disjunct, floor divisions spelled out), from which :func:`parameter_text` prints it and the
kernel's call checks (:mod:`spf.runtime.preconditions`) evaluate it without isl.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Literal

import islpy as isl

from spf.errors import PreconditionWarning
from spf.sets.facts import Fact

# ----------------------------------------------------------------------------- the fact


@dataclass(frozen=True, kw_only=True)
class Precondition(Fact):
    """A parameter condition that keeps one access in bounds (``kernel.preconditions``).

    ``condition`` is the ``assume`` text (``"N >= 1"``, or ``"NY >= 1 && TMAX >= 1 => NX >=
    1"`` when the statement runs only for some values); ``text`` adds the access it protects.

    >>> p = Precondition.make("N >= 1", stmt="s0", access="r(0)", data_space="r", kind="read")
    >>> p.text
    'N >= 1 (for r(0) in statement s0)'
    >>> p.is_parameter_fact, sorted(p.params)
    (True, ['N'])
    """

    condition: str
    """The condition in ``comp.assume`` syntax (a parameter fact)."""
    stmt: str
    """The statement whose access it protects."""
    access: str
    """The access as the source writes it (``r(0)``)."""
    data_space: str
    kind: Literal["read", "write"]
    example: str = ""
    """An offending instance outside the condition (``its only instance with N = 0 (index
    (0))``), for messages."""

    @classmethod
    def make(
        cls,
        condition: str,
        *,
        stmt: str,
        access: str,
        data_space: str,
        kind: Literal["read", "write"],
        example: str = "",
    ) -> Precondition:
        """The precondition of ``condition`` (parsed as a parameter fact)."""
        fact = Fact.parse(condition)
        return cls(
            text=f"{condition} (for {access} in statement {stmt})",
            vars=(),
            premise=fact.premise,
            conclusion=fact.conclusion,
            condition=condition,
            stmt=stmt,
            access=access,
            data_space=data_space,
            kind=kind,
            example=example,
        )

    def __repr__(self) -> str:
        return f"Precondition({self.text!r})"

    def describe(self) -> str:
        """``statement s0 reads r(0) inside data space 'r' only under the precondition 'N >=
        1' (outside it, e.g. at ...)``."""
        verb = "reads" if self.kind == "read" else "writes"
        example = f" (outside it, e.g. at {self.example})" if self.example else ""
        return (
            f"statement {self.stmt} {verb} {self.access} inside data space {self.data_space!r} "
            f"only under the precondition {self.condition!r}{example}"
        )

    def to_data(self) -> dict[str, str]:
        """What :meth:`from_data` needs (the remembered-compile entry, spf.runtime.warm)."""
        return {
            "condition": self.condition,
            "stmt": self.stmt,
            "access": self.access,
            "data_space": self.data_space,
            "kind": self.kind,
            "example": self.example,
        }

    @classmethod
    def from_data(cls, data: dict[str, str]) -> Precondition:
        kind = data["kind"]
        if kind not in ("read", "write"):
            raise ValueError(f"bad access kind {kind!r}")
        return cls.make(
            data["condition"],
            stmt=data["stmt"],
            access=data["access"],
            data_space=data["data_space"],
            kind="read" if kind == "read" else "write",
            example=data.get("example", ""),
        )


def warn_preconditions(name: str, preconditions: Sequence[Precondition]) -> None:
    """One :class:`~spf.errors.PreconditionWarning` naming every precondition of computation
    ``name`` (none: nothing), attributed to the first caller outside spf."""
    if not preconditions:
        return
    lines = "".join(f"\n  - {p.describe()}" for p in preconditions)
    conditions = list(dict.fromkeys(p.condition for p in preconditions))
    hint = " and ".join(f"comp.assume({c!r})" for c in conditions)
    count = len(preconditions)
    message = (
        f"computation {name}: {count} access{'es are' if count > 1 else ' is'} in bounds only "
        f"for some parameter values:{lines}\na call with check=True refuses parameters "
        f"outside {'these preconditions' if count > 1 else 'it'} (kernel.preconditions); "
        f"if {'they always hold' if len(conditions) > 1 else 'it always holds'}, say so "
        f"with {hint}, which removes this warning"
    )
    warnings.warn(message, PreconditionWarning, stacklevel=_outside_spf())


_SPF = str(Path(__file__).parent.parent) + os.sep


def _outside_spf() -> int:
    """The ``stacklevel`` of the first frame outside the spf package (its caller's code)."""
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_SPF):
        frame = frame.f_back
        level += 1
    return level


def condition(run: isl.Set, bad: isl.Set, context: isl.Set) -> str | None:
    """The ``assume`` text of ``run => not bad`` (parameter sets) within ``context``; None
    when ``bad`` covers ``run`` (every value at which the statement runs is out of bounds:
    no condition helps, the access is a definite bug).

    The condition is ``not bad`` simplified against the context when that is one
    conjunction (``N <= 5``); otherwise ``premise => conclusion`` with the premise a part
    of ``run`` as small as keeps it exact (``NY >= 1 && TMAX >= 1 => NX >= 1``), so a call
    at which the statement does not run is never refused.
    """
    run = run.intersect(context).coalesce()
    bad = bad.intersect(run).coalesce()
    if run.is_subset(bad):
        return None
    allowed = bad.complement().intersect(context).coalesce()
    plain = allowed.gist(context).coalesce()
    if len(plain.get_basic_sets()) <= 1:
        return parameter_text(plain)
    conclusion = allowed.gist(run).coalesce()
    premise = _smallest_premise(run.gist(context).coalesce(), conclusion, allowed, context)
    if premise.plain_is_universe():
        return parameter_text(conclusion)
    return f"{parameter_text(premise)} => {parameter_text(conclusion)}"


def _smallest_premise(
    premise: isl.Set, conclusion: isl.Set, allowed: isl.Set, context: isl.Set
) -> isl.Set:
    """``premise`` without each of its constraints that ``premise => conclusion`` does not
    need to stay equal to ``allowed`` (within ``context``)."""
    pieces = premise.get_basic_sets()
    if len(pieces) != 1:
        return premise
    kept = list(pieces[0].get_constraints())
    for c in list(kept):
        trial = [k for k in kept if k is not c]
        smaller = isl.BasicSet.universe(pieces[0].get_space())
        for k in trial:
            smaller = smaller.add_constraint(k)
        implied = smaller.to_set().complement().union(conclusion).intersect(context)
        if implied.is_equal(allowed):
            kept = trial
    out = isl.BasicSet.universe(pieces[0].get_space())
    for k in kept:
        out = out.add_constraint(k)
    return out.to_set()


# ----------------------------------------------------------------------------- plain terms
Linear = tuple[tuple[tuple[str, int], ...], tuple[int, ...], int]
"""``(((parameter, coefficient), ...), div coefficients, constant)``: an integer affine
expression over parameters and the conjunction's floor divisions."""
Div = tuple[Linear, int]
"""``floor(numerator / denominator)``; its numerator may use earlier divisions."""
Conjunction = tuple[tuple[Div, ...], tuple[tuple[Linear, bool], ...]]
"""The divisions, then the constraints ``(e, is_equality)``: ``e = 0`` or ``e >= 0``."""


def parameter_terms(s: isl.Set) -> tuple[Conjunction, ...]:
    """``s`` (a set of parameter values) as integer constraints, one conjunction per
    disjunct (none: the empty set).

    >>> ((divs, constraints),) = parameter_terms(isl.Set("[M, N] -> { : N >= 1 and M <= N }"))
    >>> constraints  # N - 1 >= 0 and -M + N >= 0
    ((((('N', 1),), (), -1), False), (((('M', -1), ('N', 1)), (), 0), False))
    """
    out: list[Conjunction] = []
    for bset in s.compute_divs().coalesce().get_basic_sets():
        bset = bset.remove_redundancies()
        names = [
            str(bset.get_dim_name(isl.dim_type.param, k))
            for k in range(bset.dim(isl.dim_type.param))
        ]
        divs = tuple(_div(bset.get_div(k), names) for k in range(bset.dim(isl.dim_type.div)))
        constraints = tuple(
            (_linear(c, names, 1), bool(c.is_equality())) for c in bset.get_constraints()
        )
        out.append((divs, tuple(sorted(constraints, key=lambda c: _linear_text(c[0], divs)))))
    return tuple(out)


def _div(aff: isl.Aff, names: list[str]) -> Div:
    den = int(aff.get_denominator_val().to_python())
    return _linear(aff, names, den), den


def _linear(obj: isl.Constraint | isl.Aff, names: list[str], scale: int) -> Linear:
    """The coefficients of ``obj`` times ``scale`` (integers)."""

    def value(v: isl.Val) -> int:
        x = Fraction(str(v)) * scale
        assert x.denominator == 1, f"{obj} scaled by {scale} is not integral"
        return int(x)

    coeffs = tuple(
        (names[k], c)
        for k in range(len(names))
        if (c := value(obj.get_coefficient_val(isl.dim_type.param, k)))
    )
    ndiv = obj.dim(isl.dim_type.div)
    divs = tuple(value(obj.get_coefficient_val(isl.dim_type.div, k)) for k in range(ndiv))
    return tuple(sorted(coeffs)), divs, value(obj.get_constant_val())


# ----------------------------------------------------------------------------- text
def parameter_text(s: isl.Set) -> str:
    """``s`` in ``assume`` syntax: ``N >= 1``, ``M <= N || N = 0`` (``true``/``false`` for
    the universe and the empty set).

    >>> parameter_text(isl.Set("[NX, NY] -> { : NX > 0 or NY = 0 }"))
    'NX >= 1 || NY = 0'
    """
    conjs = parameter_terms(s)
    if not conjs:
        return "false"
    texts = [" && ".join(_constraint_text(e, eq, divs) for e, eq in cons) for divs, cons in conjs]
    if any(not t for t in texts):
        return "true"
    if len(texts) == 1:
        return texts[0]
    return " || ".join(f"({t})" if " && " in t else t for t in texts)


def _constraint_text(e: Linear, is_eq: bool, divs: tuple[Div, ...]) -> str:
    """``e = 0`` / ``e >= 0`` with the positive terms on the left: ``N >= 1``, ``N <= 5``,
    ``M >= N + 1``."""
    terms = _terms(e, divs)
    pos = [(c, t) for c, t in terms if c > 0]
    neg = [(-c, t) for c, t in terms if c < 0]
    const = e[2]
    if not pos:  # -N + 5 >= 0: N <= 5
        return f"{_sum(neg, 0)} {'=' if is_eq else '<='} {const}"
    return f"{_sum(pos, 0)} {'=' if is_eq else '>='} {_sum(neg, -const)}"


def _terms(e: Linear, divs: tuple[Div, ...]) -> list[tuple[int, str]]:
    names, div_coeffs, _ = e
    out = [(c, n) for n, c in names]
    for k, c in enumerate(div_coeffs):
        if c:
            num, den = divs[k]
            out.append((c, f"floor(({_linear_text(num, divs)})/{den})"))
    return out


def _linear_text(e: Linear, divs: tuple[Div, ...]) -> str:
    terms = _terms(e, divs)
    pos = [(c, t) for c, t in terms if c > 0]
    neg = [(-c, t) for c, t in terms if c < 0]
    text = _sum(pos, 0) if pos else ""
    for c, t in neg:
        text += f" - {_term(c, t)}" if text else f"-{_term(c, t)}"
    const = e[2]
    if not text:
        return str(const)
    if const:
        text += f" + {const}" if const > 0 else f" - {-const}"
    return text


def _sum(terms: list[tuple[int, str]], const: int) -> str:
    """``N + 2*M + 1`` (positive coefficients; ``const`` of any sign)."""
    parts = [_term(c, t) for c, t in terms]
    if not parts:
        return str(const)
    text = " + ".join(parts)
    if const:
        text += f" + {const}" if const > 0 else f" - {-const}"
    return text


def _term(c: int, t: str) -> str:
    return t if c == 1 else f"{c}*{t}"


__all__ = [
    "Precondition",
    "condition",
    "parameter_terms",
    "parameter_text",
    "warn_preconditions",
]

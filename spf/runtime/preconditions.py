"""The kernel's preconditions, checked on the parameter values of a call with ``check=True``.

A precondition (:class:`~spf.analysis.preconditions.Precondition`) is a condition on the
parameters under which an access stays inside its data space (``N >= 1`` for PolyBench's
``durbin``, which reads ``r(0)``). Each is turned once into integer constraints
(:func:`~spf.analysis.preconditions.parameter_terms`) and evaluated in Python on the call's
parameter values: a few integer operations, whatever the size of the arrays, and no isl;
preconditions with the same condition are evaluated once, and the parameter values that pass
are remembered (a later call with the same values costs one look-up). A call outside one is
an :class:`~spf.errors.ArgumentError` naming the access and the values.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spf.analysis.preconditions import Conjunction, Linear, parameter_terms
from spf.errors import ArgumentError

if TYPE_CHECKING:
    from spf.analysis.preconditions import Precondition
    from spf.sets import Set

Test = Callable[[Mapping[str, Any]], bool]


class PreconditionCheck:
    """Checks ``preconditions`` on a call's parameters; ``where`` starts each message
    (``"kernel durbin: "``)."""

    def __init__(self, preconditions: Sequence[Precondition], where: str) -> None:
        self.where = where
        first: dict[str, Precondition] = {}
        for p in preconditions:  # one test per condition, named by its first access
            first.setdefault(p.condition, p)
        self.tests = tuple((_test(p.premise), _test(p.conclusion), p) for p in first.values())
        names = sorted({n for p in preconditions for n in p.params})
        self._key: Callable[[Mapping[str, Any]], object] = (
            operator.itemgetter(*names) if names else lambda params: ()
        )
        self._passed: set[object] = set()
        """Parameter values (of the names the conditions use) that satisfy them all."""

    def check(self, params: Mapping[str, Any]) -> None:
        """``ArgumentError`` for the first precondition ``params`` break."""
        key = self._key(params)
        if key in self._passed:
            return
        for premise, conclusion, p in self.tests:
            if premise(params) and not conclusion(params):
                raise self.error(p, params)
        if len(self._passed) >= 256:
            self._passed.clear()
        self._passed.add(key)

    def error(self, p: Precondition, params: Mapping[str, Any]) -> ArgumentError:
        values = ", ".join(f"{n}={params[n]}" for n in sorted(p.params))
        verb = "reads" if p.kind == "read" else "writes"
        return ArgumentError(
            f"{self.where}statement {p.stmt} {verb} {p.access} inside data space "
            f"{p.data_space!r} only under the precondition {p.condition!r}, which {values} "
            "breaks (the access would be out of bounds); pass parameters that satisfy it"
        )


def _test(s: Set) -> Test:
    """A membership test of the parameter set ``s``."""
    conjunctions = [_conjunction(c) for c in parameter_terms(s.body_iset())]
    if len(conjunctions) == 1:
        return conjunctions[0]
    return lambda params: any(c(params) for c in conjunctions)


def _conjunction(conj: Conjunction) -> Test:
    divs, constraints = conj
    div_fns = [(_linear(num), den) for num, den in divs]
    tests = [(_linear(e), is_eq) for e, is_eq in constraints]

    def holds(params: Mapping[str, Any]) -> bool:
        values: list[int] = []
        for num, den in div_fns:  # each may use the earlier ones
            values.append(num(params, values) // den)
        for e, is_eq in tests:
            v = e(params, values)
            if v != 0 if is_eq else v < 0:
                return False
        return True

    return holds


def _linear(e: Linear) -> Callable[[Mapping[str, Any], list[int]], int]:
    names, div_coeffs, const = e
    used = [(k, c) for k, c in enumerate(div_coeffs) if c]

    def value(params: Mapping[str, Any], divs: list[int]) -> int:
        total = const
        for name, c in names:
            total += c * params[name]
        for k, c in used:
            total += c * divs[k]
        return total

    return value


__all__ = ["PreconditionCheck"]

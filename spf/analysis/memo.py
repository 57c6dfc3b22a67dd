"""Whole-computation analysis results remembered by the value of a frozen IR.

The analysis takes a :class:`~spf.ir.ComputationIR` (``comp.ir``). A result (the
dependences, the legality verdict, the ranges implied for index arrays, the loop of a
private local, generated code) is remembered under the IR's
:attr:`~spf.ir.ComputationIR.fingerprint` and the analysis's own arguments, in one bounded
table shared by every computation of the process: equal computations (a clone, a
computation built again from its IR or JSON, the same kernel made twice) share it, and a
change to a computation gives it another IR, so another key. An exception is never
remembered.

The analysis reads an IR through :mod:`spf.ir.reading` only; it never builds or reads a
``spf.Computation`` (:func:`as_ir` takes anything with an ``ir`` attribute, as a
computation has).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from spf.ir import ComputationIR

__all__ = ["HasIR", "as_ir", "clear", "remember", "remembered"]

_R = TypeVar("_R")

MAXSIZE = 512
"""Results kept (least recently used first out)."""

_RESULTS: OrderedDict[Hashable, Any] = OrderedDict()


class HasIR(Protocol):
    """A value that offers its frozen IR (a ``spf.Computation``: ``comp.ir``)."""

    @property
    def ir(self) -> ComputationIR: ...


def remembered(
    ir: ComputationIR,
    key: Hashable,
    compute: Callable[[], _R],
    keep: Callable[[], bool] | None = None,
) -> _R:
    """``compute()`` for ``ir``, remembered under ``key`` (the analysis's name and
    arguments) and ``ir.fingerprint``. ``keep``: asked after computing, whether to remember
    the result (a caller that computes on a live computation remembers only when the
    computation is still equal to ``ir``)."""
    full = (ir.fingerprint, key)
    if full in _RESULTS:
        _RESULTS.move_to_end(full)
        found: _R = _RESULTS[full]
        return found
    value = compute()
    if keep is None or keep():
        remember(ir, key, value)
    return value


def remember(ir: ComputationIR, key: Hashable, value: object) -> None:
    """Remember ``value`` as the result under ``key`` for ``ir`` (a result known without
    computing it, e.g. the legality verdict of a computation in program order)."""
    _RESULTS[(ir.fingerprint, key)] = value
    _RESULTS.move_to_end((ir.fingerprint, key))
    while len(_RESULTS) > MAXSIZE:
        _RESULTS.popitem(last=False)


def as_ir(value: ComputationIR | HasIR, what: str) -> ComputationIR:
    """``value`` as an IR: an IR as it is, a computation's :attr:`~spf.Computation.ir`
    (for the analyses documented as taking a computation); ``ArgumentError`` naming
    ``what`` otherwise."""
    from spf.errors import ArgumentError
    from spf.ir import ComputationIR

    if isinstance(value, ComputationIR):
        return value
    ir = getattr(value, "ir", None)
    if isinstance(ir, ComputationIR):
        return ir
    raise ArgumentError(
        f"{what}: expected a spf.Computation or its IR (comp.ir), got {type(value).__name__}"
    )


def clear() -> None:
    """Forget every remembered result (for cold timings)."""
    _RESULTS.clear()

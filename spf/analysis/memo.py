"""Whole-computation analysis results remembered by the value of a frozen IR.

The analysis takes a :class:`~spf.ir.ComputationIR` (``comp.ir``). A result (the
dependences, the legality verdict, the ranges implied for index arrays, the loop of a
private local, generated code) is remembered under the IR's
:attr:`~spf.ir.ComputationIR.fingerprint` and the analysis's own arguments, in one bounded
table shared by every computation of the process: equal computations (a clone, a
computation built again from its IR or JSON, the same kernel made twice) share it, and a
change to a computation gives it another IR, so another key. An exception is never
remembered.

:func:`reader` is the computation an analysis reads an IR through: a copy of the live
computation the IR was taken from while that one is unchanged (nothing parsed again), else
one built from the IR (:func:`spf.computation.snapshot.reader`). The analysis only reads it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.ir import ComputationIR

__all__ = ["as_ir", "clear", "reader", "remember", "remembered"]

_R = TypeVar("_R")

MAXSIZE = 512
"""Results kept (least recently used first out)."""

_RESULTS: OrderedDict[Hashable, Any] = OrderedDict()


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


def as_ir(value: ComputationIR | Computation, what: str) -> ComputationIR:
    """``value`` as an IR: an IR as it is, a computation's :attr:`~spf.Computation.ir`
    (for the analyses documented as taking a computation); ``ArgumentError`` naming
    ``what`` otherwise."""
    from spf.computation.computation import Computation
    from spf.errors import ArgumentError
    from spf.ir import ComputationIR

    if isinstance(value, ComputationIR):
        return value
    if isinstance(value, Computation):
        return value.ir
    raise ArgumentError(
        f"{what}: expected a spf.Computation or its IR (comp.ir), got {type(value).__name__}"
    )


def reader(ir: ComputationIR) -> Computation:
    """A computation equal to ``ir`` for an analysis to read (never to change)."""
    from spf.computation.snapshot import reader as snapshot_reader

    return snapshot_reader(ir)


def clear() -> None:
    """Forget every remembered result (for cold timings)."""
    _RESULTS.clear()

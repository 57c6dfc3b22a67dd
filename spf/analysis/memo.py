"""Whole-computation analysis results remembered by the computation's value.

A result (the dependences, the ranges implied for index arrays, the loop of a private
local) is remembered under the fingerprint of the computation's frozen IR
(:attr:`spf.Computation.ir`) and the analysis's own arguments, in one bounded table shared
by every computation of the process: equal computations (a clone, a computation built
again from its IR or JSON, the same kernel made twice) share it, and a change to a
computation changes its key. A result is remembered only when computing it left the
computation unchanged, and an exception is never remembered.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from spf.computation.computation import Computation

__all__ = ["clear", "remembered", "value_key"]

_R = TypeVar("_R")

MAXSIZE = 512
"""Results kept (least recently used first out)."""

_RESULTS: OrderedDict[Hashable, Any] = OrderedDict()


def value_key(comp: Computation) -> str:
    """What a result of ``comp`` is remembered by: the fingerprint of its IR. The IR holds
    everything the analysis reads; the statements' sets carry the computation's own UF
    declarations (a declaration that would change one they hold is refused:
    :func:`spf.computation.index_arrays.check_redeclared`)."""
    return comp.ir.fingerprint


def remembered(comp: Computation, key: Hashable, compute: Callable[[], _R]) -> _R:
    """``compute()`` for ``comp``, remembered under ``key`` (the analysis's name and
    arguments) and the value of ``comp``."""
    version = comp.version
    full = (value_key(comp), key)
    if full in _RESULTS:
        _RESULTS.move_to_end(full)
        found: _R = _RESULTS[full]
        return found
    value = compute()
    if comp.version == version:  # computing changed nothing: remember it
        _RESULTS[full] = value
        while len(_RESULTS) > MAXSIZE:
            _RESULTS.popitem(last=False)
    return value


def clear() -> None:
    """Forget every remembered result (for cold timings)."""
    _RESULTS.clear()

"""Bookkeeping of data-space uses for the converter: the raw per-occurrence record ``_Use``
(not de-duplicated, tagged with its assignment), ``_dedup`` that turns uses into the
:class:`Access` tuples of a :class:`ParsedSource` (first occurrence wins), and
``_reduction_form`` that recognises the spelled-out reductions ``m = max(m, e)``/``min`` and
``x = x + e`` (and ``*``, ``-``, ``/``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from spf.ir.source.model import Access
from spf.ir.source.tree import _Binary, _Call, _Expr, _Ref


@dataclass
class _Use:  # one occurrence of a data space (not de-duplicated)
    ds: str
    indices: tuple[str, ...]
    span: tuple[int, int]
    write: bool
    owner: int  # id of the assignment holding it (reduction analysis)


def _dedup(uses: Iterator[_Use]) -> tuple[Access, ...]:
    seen: dict[tuple[str, tuple[str, ...]], Access] = {}
    for u in uses:
        seen.setdefault((u.ds, u.indices), Access(u.ds, u.indices, u.span))
    return tuple(seen.values())


def _reduction_form(target: _Ref, value: _Expr) -> str | None:
    """``m = max(m, e)`` / ``min`` / ``x = x + e`` (and ``*``, ``-``, ``/``) -> family."""
    if isinstance(value, _Call) and len(value.args) == 2:
        family = {"max": "max", "fmax": "max", "min": "min", "fmin": "min"}.get(value.func)
        if family is not None and target in value.args:
            return family
    if isinstance(value, _Binary):
        if value.op in ("+", "*") and target in (value.left, value.right):
            return value.op
        if value.op in ("-", "/") and value.left == target:
            return "+" if value.op == "-" else "*"
    return None

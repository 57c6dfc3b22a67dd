"""Which accesses of a statement run only under a condition inside its body.

An access inside an ``if``/``else`` branch, an arm of ``?:`` or the right operand of ``&&`` /
``||`` may not run for every statement instance (``(i < N) ? A(i) : 0.0``): its access
relation, which ignores the condition, over-approximates what the statement touches. Bounds
proofs use this to avoid refusing guarded accesses.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING

from spf.ir.source.index_text import _itext
from spf.ir.source.tree import _Binary, _Cond, _If, _Ref

if TYPE_CHECKING:
    from spf.ir.source.model import ParsedSource

AccessKey = tuple[str, tuple[str, ...]]


def guarded_accesses(parsed: ParsedSource) -> frozenset[AccessKey]:
    """``(data space, index texts)`` of the accesses that run only under a condition of the
    body (never also unconditionally); index texts as in :class:`Access`."""
    always: set[AccessKey] = set()
    guarded: set[AccessKey] = set()
    _visit(parsed.body, False, always, guarded)
    return frozenset(guarded - always)


def _visit(node: object, cond: bool, always: set[AccessKey], guarded: set[AccessKey]) -> None:
    if isinstance(node, tuple):
        for item in node:
            _visit(item, cond, always, guarded)
        return
    if isinstance(node, _Ref):
        (guarded if cond else always).add((node.ds, tuple(_itext(e) for e in node.indices)))
        _visit(node.indices, cond, always, guarded)
    elif isinstance(node, (_If, _Cond)):
        _visit(node.cond, cond, always, guarded)
        _visit(node.then, True, always, guarded)
        _visit(node.other, True, always, guarded)
    elif isinstance(node, _Binary) and node.op in ("&&", "||"):
        _visit(node.left, cond, always, guarded)
        _visit(node.right, True, always, guarded)
    elif is_dataclass(node) and not isinstance(node, type):
        for f in fields(node):
            _visit(getattr(node, f.name), cond, always, guarded)

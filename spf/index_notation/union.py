"""A sparse output that is the sum of two sparse operands, built by a union merge.

``C(i,j) = A(i,j) + B(i,j)`` with ``A``, ``B`` and ``C`` compressed along ``i`` (CSR):
row ``i`` of ``C`` holds the union of the sorted column lists of row ``i`` of ``A`` and
``B``. One merge of the two lists (docs/coiteration.md, ``stmt.coiterate(p, q, left=,
right=)``) visits that union in increasing column order, O(len_a + len_b) per row, with
three bodies: a column in both rows, only in ``A``'s, only in ``B``'s. The sizing phase
counts the bodies' visits; the filling phase lists each visit's column and value at the
end of the row's lists (``lst``, ``val``, length ``len``), sorted as they come, then copies
them to the row's place in ``C``: no marks, no dense accumulator indexed by column, no
sort (:mod:`spf.index_notation.sparse_output` builds every other sparse output that
way)::

    both:   {[i, A_k, B_k]: ... && A_col(A_k) = B_col(B_k)}  lst(len) = A_col(A_k);
                                                            val(len) = A(A_k) + B(B_k)
    A only: {[i, A_k]: 0 <= i < I && A_rowptr(i) <= A_k < A_rowptr(i+1)}  ... = A(A_k)
    B only: {[i, B_k]: ...}                                 lst(len) = B_col(B_k); ...

Used when the formula is exactly two products, each over one operand whose format keeps
its columns sorted (an ordering fact) reached by one position loop inside the row
(``A(i,j) - 2 * B(i,j) * x(j)`` qualifies; ``A(i,j) * B(i,j) + C(i,j)`` does not).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.computation import Stmt
from spf.index_notation.formula import atoms
from spf.index_notation.operands import rename

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spf.computation import Computation
    from spf.index_notation.formula import Term

__all__ = ["Union", "add_union", "union_of"]


@dataclass(frozen=True)
class Union:
    """The three bodies of a union along ``index`` inside row ``outer``: ``cursors`` (the
    two operands' positions), and for the bodies (both, first only, second only) their
    ``loops``, ``domains``, ``keys`` (the column) and ``values``."""

    outer: str
    index: str
    cursors: tuple[str, str]
    operands: tuple[str, str]
    loops: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    domains: tuple[str, str, str]
    keys: tuple[str, str, str]
    values: tuple[str, str, str]


def _single(t: Term, outer: str, index: str) -> tuple[str, str] | None:
    """(cursor, key) where ``t`` scans ``index`` through one sorted operand's position
    inside row ``outer``, else None."""
    if t.merge is not None or len(t.uses) != 1:
        return None
    u = t.uses[0]
    if not u.fmt.ordered or not u.iterates(index) or len(t.loops) != 3:
        return None
    if t.loops[0] != outer or t.loops[2] != index or t.loops[1] in u.indices:
        return None
    if outer not in u.indices:  # one fiber read by every row (Y(j,i) = x(i) + z(i))
        return None
    return t.loops[1], u.defined[index]


def _body(t: Term) -> str:
    return t.domain[t.domain.index(":") + 1 : t.domain.rindex("}")]


def union_of(terms: list[Term], outer: str, index: str) -> Union | None:
    """The union merge of ``terms`` along ``index`` in row ``outer``, or None where the
    formula is not such a sum (see the module docstring)."""
    if len(terms) != 2:
        return None
    a, b = terms
    sa, sb = _single(a, outer, index), _single(b, outer, index)
    if sa is None or sb is None or sa[0] == sb[0]:
        return None
    (p, ka), (q, kb) = sa, sb
    on_a, on_b = {index: ka}, {index: kb}
    both = list(dict.fromkeys([*atoms(_body(a), on_a), *atoms(_body(b), on_a)]))
    left, right = atoms(_body(a), on_a), atoms(_body(b), on_b)
    loops = ((outer, p, q), (outer, p), (outer, q))
    doms = [
        f"{{[{', '.join(v)}]: {' && '.join(x)}}}"
        for v, x in zip(loops, (both, left, right), strict=True)
    ]
    return Union(
        outer,
        index,
        (p, q),
        (a.uses[0].operand, b.uses[0].operand),
        loops,
        (doms[0], doms[1], doms[2]),
        (ka, ka, kb),
        (
            f"{rename(a.value, on_a)} + {rename(b.value, on_a)}",
            rename(a.value, on_a),
            rename(b.value, on_b),
        ),
    )


def add_union(comp: Computation, u: Union, pos: int, sources: Sequence[str]) -> None:
    """The three bodies (C sources ``sources``) at position ``pos`` of row ``u.outer``,
    declared one union merge."""
    o, (p, q) = u.outer, u.cursors
    schedules = (f"[0, {o}, {pos}, {p}, 0, {q}, 0]", f"[0, {o}, {pos}, {p}, 1, 0, 0]",
                 f"[0, {o}, {pos}, {q}, 2, 0, 0]")  # fmt: skip
    stmts = [
        comp.add_stmt(Stmt(src, dom, f"{{[{', '.join(loops)}] -> {sched}}}"))
        for src, dom, loops, sched in zip(sources, u.domains, u.loops, schedules, strict=True)
    ]
    stmts[0].coiterate(p, q, left=stmts[1], right=stmts[2])

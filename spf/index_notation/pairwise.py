"""Products whose merge runs for every pair of rows (auditeinsum): a :class:`CostWarning`.

``C(i,j) = A(i,k) * B(j,k)`` with ``A`` and ``B`` in CSR merges row ``i`` of ``A`` with row
``j`` of ``B`` along ``k``. No operand iterates ``i`` or ``j``: both are dense loops over
their whole extents, so the merge runs for every pair ``(i, j)``, ``I * J`` merges however
few products exist (4000 x 4000 with 10 entries a row: 2.5 s, where scipy's ``A @ B.T``
takes 7 ms).
Where every such dense loop is an index of a dense output, or of a dense operand of the
product, the pairs are that tensor's own elements and cost what reading or writing it does;
otherwise (a summed index, a sparse output) the cost grows with the product of the extents,
not with the input and the output.

:func:`warn_pairwise` warns there, when the formula is bound, naming the product, the merge
and the operand that only locates the innermost such loop, and what scans only the products
that exist: that operand in a format that iterates the loop's index inside the merged one
(``B`` in CSC, 9 ms on that pair: a SpGEMM; for ``A(i,k) * A(j,k)``, ``A`` a second time as
another tensor in CSC). The generated code is unchanged.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.errors import CostWarning
from spf.index_notation.formula import Formula, uses_of

if TYPE_CHECKING:
    from spf.index_notation.expand import Monomial
    from spf.index_notation.operands import SparseUse

__all__ = ["Pairwise", "pairwise", "warn_pairwise"]


@dataclass(frozen=True)
class Pairwise:
    """A product ``monomial`` whose merge along ``merged`` runs inside the dense loops
    ``dense`` (outer first), ``locating`` locating the innermost of them, ``loop``;
    ``twice``: both merged lists are that operand's."""

    monomial: Monomial
    merged: str
    dense: tuple[str, ...]
    loop: str
    locating: SparseUse
    twice: bool


def pairwise(f: Formula) -> list[Pairwise]:
    """The products of ``f`` whose merge pairs a fiber of one operand, chosen by dense loops
    around it that the other does not hold, with every fiber of the other, chosen likewise:
    not where all those loops are indices of one dense tensor of the product or of a dense
    output (module docstring)."""
    dense_output = set(f.output.indices) if f.out_format() is None else set()
    found: list[Pairwise] = []
    for m in f.monomials:
        uses = uses_of(f, m)
        wanted = set(f.output.indices) | m.indices() | m.sums
        # the dense tensors of the product and a dense output: pairs of their own elements
        covers = [dense_output] + [
            set(a.indices) for a in m.factors if a.name not in f.formats and a.indices
        ]
        dense: list[str] = []
        for v in (v for v in f.order if v in wanted):
            iterating = [u for u in uses if v in u.indices and u.iterates(v)]
            if len(iterating) > 1:
                a, b = iterating[0], iterating[1]
                own = [d for d in dense if (d in a.indices) != (d in b.indices)]
                chosen = {d in a.indices for d in own}  # whose fibers they choose
                if len(chosen) == 2 and not any(set(dense) <= c for c in covers):
                    loop = own[-1]
                    who = a if loop in a.indices else b
                    found.append(Pairwise(m, v, tuple(dense), loop, who, a.operand == b.operand))
                break
            if not iterating:
                dense.append(v)
    return found


_OTHER = {"CSR": "CSC", "CSC": "CSR"}
"""The matrix format that iterates a compressed one's two indices the other way round."""


def warn_pairwise(f: Formula) -> None:
    """Warn (:class:`CostWarning`) for each product :func:`pairwise` finds."""
    for p in pairwise(f):
        from spf.analysis.preconditions import _outside_spf

        u = p.locating
        loops = " and ".join(f"{d} (0 <= {d} < {f.extents[d]})" for d in p.dense)
        pairs = " * ".join(f.extents[d] for d in p.dense)
        other = _OTHER.get(u.fmt.name)
        instead = f"{other} instead of {u.fmt.name}" if other else "convert it"
        if p.twice:  # both lists are its: the other use keeps its format
            instead = f"passed a second time, as another tensor, in {other or 'such a format'}"
        message = (
            f"{f.where()}: the product {p.monomial} merges along {p.merged} inside the dense "
            f"loops {loops}: {pairs} merges whatever the result's pattern, a cost that grows "
            f"with the product of the extents, not with the operands' entries. "
            f"{u.operand} ({u.fmt.name}) only locates {p.loop}: give it a format that "
            f"iterates {p.loop} inside {p.merged} ({instead}), and the product scans only "
            "the pairs whose entries meet, as SpGEMM does"
        )
        warnings.warn(message, CostWarning, stacklevel=_outside_spf())

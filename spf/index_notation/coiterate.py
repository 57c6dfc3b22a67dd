"""Where two sparse operands of one product iterate the same index: an intersection merge.

``A(i,j) * B(i,j)`` with ``A`` and ``B`` in CSR: both produce ``j`` from their own sorted
column lists, so the loop over ``j`` walks both lists at once (an intersection merge,
O(len_a + len_b), docs/coiteration.md), never one list nested in the other with a guard.
The product's statement runs over both operands' positions, the index itself replaced by
the first operand's coordinate::

    C(i,j) = A(i,j) * B(i,j), A and B in CSR
      {[i, A_k, B_k]: 0 <= i < I && A_rowptr(i) <= A_k < A_rowptr(i+1)
                      && B_rowptr(i) <= B_k < B_rowptr(i+1) && A_col(A_k) = B_col(B_k)}
      C(i, A_col(A_k)) += A(A_k) * B(B_k)

with the two positions its innermost loops, and the formats' ordering facts (sorted
coordinates, no duplicates) declared, so code generation scans them as one merge
(``stmt.coiterate`` insists on it). A sum of such operands (``A(i,j) + B(i,j)``) needs no
merge: it is two products, each over one operand (into a dense output, or into a sparse
output's row workspace, :mod:`spf.index_notation.sparse_output`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.index_notation.operands import SparseUse

__all__ = ["Merge", "intersect"]


@dataclass(frozen=True)
class Merge:
    """The intersection of two operands' coordinate lists along ``index``: the cursors
    ``loops`` (one position of each operand, the product's two innermost loops), ``key``
    the expression of ``index`` (the first operand's coordinate), ``operands`` whose
    ordering facts the merge relies on."""

    index: str
    loops: tuple[str, str]
    key: str
    operands: tuple[str, str]


def _refuse(text: str, index: str, uses: list[SparseUse], why: str) -> CodegenError:
    names = " and ".join(f"{u.operand} ({u.fmt.name})" for u in uses)
    if len(uses) == 2:
        who, dense = "both iterate", "Pass one of them dense (leave it out of the formats)"
    else:
        who, dense = "all iterate", "Pass all but two of them dense (leave them out of the formats)"
    return CodegenError(
        f"einsum {text!r}: {names} {who} index {index!r} from their own coordinate lists; "
        f"{why}. {dense}, or split the formula into several einsum calls"
    )


def intersect(text: str, index: str, uses: list[SparseUse], outer: list[str]) -> Merge:
    """The merge of ``uses``' coordinate lists along ``index``, given the ``outer`` loops
    already open; :class:`CodegenError` where it is not one merge of two lists, each
    reached by a single position loop under the outer ones."""
    if len(uses) != 2:
        raise _refuse(text, index, uses, "a merge walks two lists, not more")
    cursors: list[str] = []
    for u in uses:
        new = [v for v in u.closure(index) if v not in outer]
        if len(new) != 1 or new[0] not in u.loops or new[0] in u.indices:
            how = (
                f"through the loops {', '.join(new)}"
                if new
                else "at the position that gives the indices before it (one list of all "
                "its entries, not a list for each of the indices before it)"
            )
            raise _refuse(
                text,
                index,
                uses,
                f"a merge needs each list reached by one position loop inside the indices "
                f"before {index}, but {u.operand} reads {index} {how}",
            )
        cursors.append(new[0])
    unsorted = [u for u in uses if not u.fmt.ordered]
    if unsorted:
        raise _refuse(
            text,
            index,
            uses,
            f"{' and '.join(dict.fromkeys(u.fmt.name for u in unsorted))} "
            f"{'has' if len({u.fmt.name for u in unsorted}) == 1 else 'have'} no ordering "
            "fact (its coordinates may come in any order), and a format without an ordering "
            "fact cannot be merged",
        )
    return Merge(
        index, (cursors[0], cursors[1]), uses[0].defined[index], (uses[0].operand, uses[1].operand)
    )

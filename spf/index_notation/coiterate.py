"""Where two sparse operands of one product iterate the same index.

``A(i,j) * B(i,j)`` with ``A`` and ``B`` in CSR: both produce ``j`` from their own sorted
column lists, so the loop over ``j`` must walk both lists at once (an intersection merge,
O(len_a + len_b)), never one list nested in the other with a guard. This module is the one
place the lowering asks for that loop; a sum of such operands (``A(i,j) + B(i,j)``) needs
no merge in a product: it is two products, each over one operand (into a dense output, or
into a sparse output's row workspace, :mod:`spf.index_notation.sparse_output`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.index_notation.operands import SparseUse

__all__ = ["intersect"]


def intersect(text: str, index: str, uses: list[SparseUse]) -> list[str]:
    """The loop variables that scan ``index`` over the intersection of ``uses``' coordinate
    lists. spf has no merge loop yet, so this refuses the formula (rather than nesting one
    list inside the other behind a guard) and says how to write it instead."""
    names = " and ".join(f"{u.operand} ({u.fmt.name})" for u in uses)
    raise CodegenError(
        f"einsum {text!r}: {names} both iterate index {index!r} from their own sorted "
        "coordinate lists; multiplying them needs a merge of the two lists (co-iteration), "
        "which this version of spf does not generate yet. Pass all but one of them dense "
        "(leave it out of the formats)"
    )

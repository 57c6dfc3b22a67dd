"""A sparse operand read twice at the same coordinates in one product.

Equal accesses of one product share one use of the operand (``A(i,j) * A(i,j)`` reads
``A(A_k) * A(A_k)`` at each stored entry), which is the product of the tensor's values only
where each coordinate is stored once. A format with an ordering fact (CSR, CSC, CSF: sorted
coordinates, no duplicates) promises that; one without (COO, which may hold a coordinate
several times and whose kernels sum them) does not, and the shared use squared each
duplicate instead of their sum (``s = A(i,j) * A(i,j)`` gave the sum of the stored values'
squares). :func:`refuse_repeated_unordered` refuses such a product with an
:class:`~spf.errors.ArgumentError` (audit27); reading such an operand once per product stays
linear in its entries, so duplicates are summed as documented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from spf.errors import ArgumentError

if TYPE_CHECKING:
    from spf.formats.format import Format
    from spf.index_notation.expand import Monomial

__all__ = ["refuse_repeated_unordered"]


def refuse_repeated_unordered(
    text: str, formats: Mapping[str, Format], monomials: Sequence[Monomial]
) -> None:
    """Raise ``ArgumentError`` where a product reads an operand whose format has no ordering
    fact twice at the same coordinates (the module docstring)."""
    for m in monomials:
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for acc in m.factors:
            fmt = formats.get(acc.name)
            key = (acc.name, acc.indices)
            if fmt is not None and not fmt.ordered and key in seen:
                raise ArgumentError(
                    f"einsum {text!r}: {acc.name} ({fmt.name}) is read twice at the same "
                    f"coordinates in the product {m}, but {fmt.name} has no ordering fact: it "
                    "may hold a coordinate more than once (duplicates, which einsum sums), and "
                    "the product would multiply each duplicate by itself instead of their sum. "
                    "Sum the duplicates first and pass it in a format that keeps its "
                    "coordinates sorted and unique (CSR, CSC, CSF: spf.sparse.csr_args, "
                    "csf_args), or pass it dense"
                )
            seen.add(key)

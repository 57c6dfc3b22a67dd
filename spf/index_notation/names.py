"""The names einsum generates, kept apart from the formula's own.

A sparse operand's use reads index arrays, sizes and position loops named after it
(``A_rowptr``, ``A_col``, ``A_NNZ``, ``A_k``; a second use of ``A`` in one product scans
positions of its own, ``A2_k``), and a sparse output adds its arrays (``C_rowptr``,
``C_col``, ``C_NNZ``, ``C_CAP``, ``C_bound``) and row workspaces (``mark``, the dense row
``acc`` and its column list, sort and counts). An index, a tensor or an extent of the formula
that bears one of those names would share its variable or array with it: an index
``A_k`` (its extent renamed by ``sizes``) became the loop over ``A``'s positions, and the
kernel summed the wrong entries, silently. :func:`check_operands` and :func:`check_output`
refuse such names with an :class:`~spf.errors.ArgumentError` naming them.

>>> from spf.formats import CSR
>>> import spf
>>> spf.einsum("y(i) = A(i,j) * A_col(j)", A=CSR)
Traceback (most recent call last):
  ...
spf.errors.ArgumentError: einsum 'y(i) = A(i,j) * A_col(j)': the tensor A_col bears a name \
einsum gives the sparse operand A's index arrays, sizes and position loops (A_M, A_N, A_NNZ, \
A_col, A_k, A_rowptr); rename it
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.errors import ArgumentError

if TYPE_CHECKING:
    from spf.index_notation.formula import Formula
    from spf.index_notation.sparse_output import Compressed

__all__ = ["ROW_WORKSPACES", "check_operands", "check_output"]

ROW_WORKSPACES = (
    "acc", "lst", "len", "srt", "thr", "base", "bits", "rnk", "cnt", "cnt2", "dig", "tmp",
)  # fmt: skip
"""The row workspaces of a sparse output built through a dense row (every sparse output
but a union's), besides ``mark``, which every sizing phase uses."""


def _own(f: Formula) -> dict[str, str]:
    """Every name of the formula itself -> what it is (an index, a tensor, an extent)."""
    own: dict[str, str] = {}
    for e in f.extents.values():
        own[e] = f"the extent {e}"
    for t in f.tensors:
        own[t] = f"the tensor {t}"
    for v in f.extents:
        own[v] = f"the index {v}"
    return own


def check_operands(f: Formula) -> None:
    """Refuse an index, tensor or extent of ``f`` named as a sparse operand's generated
    name (an index array, a size, a position loop of one of its uses)."""
    from spf.index_notation.formula import uses_of

    generated: dict[str, set[str]] = {}
    extents = set(f.extents.values())
    for m in f.monomials:
        for u in uses_of(f, m):
            mine = generated.setdefault(u.operand, set())
            # an extent of a coordinate is the index's own (CSR's N is the formula's I)
            mine.update(v for k, v in u.names.items() if k not in u.fmt.coords and v not in extents)
            # and A_N, the size csr_args(A, prefix="A_") passes for it (build.sparse_aliases)
            mine.update(f"{u.operand}_{e}" for e in u.fmt.shape if e.isidentifier())
    own = _own(f)
    for operand, names in generated.items():
        for name in sorted(names.intersection(own)):
            raise ArgumentError(
                f"{f.where()}: {own[name]} bears a name einsum gives the sparse operand "
                f"{operand}'s index arrays, sizes and position loops "
                f"({', '.join(sorted(names))}); rename it"
            )


def check_output(f: Formula, c: Compressed, *, union: bool) -> None:
    """Refuse an index, tensor or extent of ``f`` named as one of the sparse output
    ``c``'s arrays, sizes or row workspaces (``union``: built by a union merge, which names
    its list afresh)."""
    from spf.index_notation.single_pass import cap_name

    arrays = {
        c.array(c.ptr), c.array(c.idx), f"{c.name}_NNZ", cap_name(c), c.array("bound"),
    }  # fmt: skip
    spaces = {"mark", *(() if union else ROW_WORKSPACES)}
    own = _own(f)
    for name in sorted((arrays | spaces).intersection(own)):
        what = (
            f"the sparse output {c.name}'s arrays and sizes ({', '.join(sorted(arrays))})"
            if name in arrays
            else f"the row workspaces of the sparse output {c.name} ({', '.join(sorted(spaces))})"
        )
        raise ArgumentError(f"{f.where()}: {own[name]} bears a name einsum gives {what}; rename it")

"""Tensor formats of any order, written as :class:`~spf.formats.format.Format` relations.

* ``CSF(order)``: compressed sparse fiber, every level compressed (TACO's ``{sparse}*``
  format, SPLATT's CSF). Level ``l`` stores ``pos<l>`` and ``crd<l>``: the children of
  position ``p`` of level ``l-1`` (the root is position 0) are the positions
  ``pos<l>[p] .. pos<l>[p+1]-1`` of level ``l``, whose coordinates ``crd<l>`` increase
  strictly; the values ``A`` sit at the positions of the last level. ``CSF(1)`` is a sparse
  vector (``pos1 = [0, nnz]``, ``crd1``, ``A``); ``CSF(2)`` is doubly compressed rows.
* ``COO(order)``: coordinate lists ``crd1 .. crd<order>`` and values ``A``, entries in any
  order, duplicates summed. ``COO(2)`` is the matrix format ``spf.formats.COO`` (``row``,
  ``col``, ``A``), so ``spf.formats.COO`` is both that format and this function.

Extents ``N1 .. N<order>``; level sizes ``NNZ1 .. NNZ<order-1>`` and ``NNZ`` (the entries).
``spf.sparse.csf_args`` and ``spf.sparse.coo_tensor_args`` build the arrays with numpy;
``spf.formats.convert`` converts between them (:mod:`spf.formats.to_csf`).

>>> CSF(3).coords, CSF(3).positions, CSF(3).exists
(('i1', 'i2', 'i3'), ('p3',), ('p1', 'p2'))
>>> COO(3).sizes
('N1', 'N2', 'N3', 'NNZ')
"""

from __future__ import annotations

import functools

from spf.errors import FormatError
from spf.formats.format import Format
from spf.sets import UF

__all__ = ["COO", "CSF", "MatrixCOO", "csf_order", "tensor_coo_order"]


def _order(fmt: str, order: object, least: int) -> int:
    if isinstance(order, bool) or not isinstance(order, int) or order < least:
        raise FormatError(f"{fmt}(order): order must be an int >= {least}, got {order!r}")
    return order


def _level_size(level: int, order: int) -> str:
    """Entries of level ``level`` (``NNZ`` for the last)."""
    return "NNZ" if level == order else f"NNZ{level}"


@functools.cache
def CSF(order: int) -> Format:  # noqa: N802
    """Compressed sparse fiber of ``order`` levels (see the module docstring)."""
    n = _order("CSF", order, 1)
    coords = [f"i{lv}" for lv in range(1, n + 1)]
    atoms: list[str] = []
    ufs: list[UF] = []
    facts: list[str] = []
    for lv in range(1, n + 1):
        parent, parents = ("0", "1") if lv == 1 else (f"p{lv - 1}", _level_size(lv - 1, n))
        hi = "1" if lv == 1 else f"p{lv - 1}+1"
        atoms.append(f"pos{lv}({parent}) <= p{lv} < pos{lv}({hi}) && i{lv} = crd{lv}(p{lv})")
        size = _level_size(lv, n)
        ufs.append(
            UF(
                f"pos{lv}",
                domain=f"{{[t]: 0 <= t <= {parents}}}",
                range=f"{{[v]: 0 <= v <= {size}}}",
                monotonic="nondecreasing",
            )
        )
        ufs.append(
            UF(f"crd{lv}", domain=f"{{[t]: 0 <= t < {size}}}", range=f"{{[v]: 0 <= v < N{lv}}}")
        )
        quant = "q1, q2" if lv == 1 else "p, q1, q2"
        at = ("0", "1") if lv == 1 else ("p", "p+1")
        facts.append(
            f"forall {quant}: pos{lv}({at[0]}) <= q1 < q2 < pos{lv}({at[1]}) => "
            f"crd{lv}(q1) < crd{lv}(q2)"
        )
    hidden = ", ".join(f"p{lv}" for lv in range(1, n))
    body = " && ".join(atoms)
    exists = f"exists {hidden}: " if hidden else ""
    return Format(
        f"CSF{n}",
        coords=f"[{', '.join(coords)}]",
        storage=f"{{[{', '.join(coords)}] -> [p{n}]: {exists}{body}}}",
        ufs=ufs,
        assume=facts,
        shape=tuple(f"N{lv}" for lv in range(1, n + 1)),
    )


@functools.cache
def _tensor_coo(order: int) -> Format:
    coords = [f"i{lv}" for lv in range(1, order + 1)]
    ties = " && ".join(f"i{lv} = crd{lv}(p)" for lv in range(1, order + 1))
    return Format(
        f"COO{order}",
        coords=f"[{', '.join(coords)}]",
        storage=f"{{[{', '.join(coords)}] -> [p]: 0 <= p < NNZ && {ties}}}",
        ufs=[
            UF(f"crd{lv}", domain="{[t]: 0 <= t < NNZ}", range=f"{{[v]: 0 <= v < N{lv}}}")
            for lv in range(1, order + 1)
        ],
        shape=tuple(f"N{lv}" for lv in range(1, order + 1)),
    )


class MatrixCOO(Format):
    """The matrix format ``COO`` (``row, col, A``), also callable: ``COO(order)`` is the
    coordinate format of a tensor of that order (``COO(2)`` is this format itself)."""

    def __call__(self, order: int) -> Format:
        n = _order("COO", order, 1)
        return self if n == 2 else _tensor_coo(n)


def COO(order: int) -> Format:  # noqa: N802
    """``spf.formats.COO(order)`` (the same as calling the matrix format ``COO``)."""
    from spf.formats.builtin import builtin

    coo = builtin("COO")
    assert isinstance(coo, MatrixCOO)
    return coo(order)


def csf_order(fmt: Format) -> int | None:
    """The order of ``fmt`` when it is ``CSF(order)``, else ``None``."""
    name = fmt.name
    if name.startswith("CSF") and name[3:].isdigit() and CSF(int(name[3:])) is fmt:
        return int(name[3:])
    return None


def tensor_coo_order(fmt: Format) -> int | None:
    """The order of ``fmt`` when it is ``COO(order)`` (``COO`` itself: 2), else ``None``."""
    if isinstance(fmt, MatrixCOO):
        return 2
    name = fmt.name
    if name.startswith("COO") and name[3:].isdigit() and _tensor_coo(int(name[3:])) is fmt:
        return int(name[3:])
    return None

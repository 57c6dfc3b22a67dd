"""Splitting a matrix in a built-in format over the ranks (API.md §19, :func:`spf.mpi.scatter`).

Which loop of each format's SpMV (``spf.kernels.spmv(fmt)``) is distributed, and what a rank
holds (``y`` and ``x`` are always split by their entries: contiguous blocks, or an
``owner`` array):

* **CSR, ELL, SELL(C, sigma)**: loop ``i``, the rows. A rank holds its rows packed in the
  format (global column indices; ELL's width ``W`` and SELL's chunks are its own), with the
  padding slots pointing at an entry of ``x`` the rank owns or reads anyway, so they add no
  ghost: the ghosts are exactly CSR's, and ``y`` equals the single-process kernel's bitwise
  (each row sums its entries in the same order).
* **COO**: loop ``k``, the entries. A rank holds the entries of its rows (global row and
  column indices), so every write is its own and the result is bitwise the serial one; an
  entry of another rank's row (a file read in slices) is summed at the row's owner, as
  PETSc's ``MatSetValues(..., ADD_VALUES)`` stashes it (then equal to round-off).
* **CSC**: loop ``j``, the columns. A rank holds the columns whose entries of ``x`` it owns
  (global row indices); its partial sums into rows it does not own are sent to their owners
  and added there (the path of A^T·x in CSR, PETSc's ``MatMultTranspose``): equal to the
  serial kernel to round-off (the sums of a row are grouped by rank), bitwise on one rank.

* **DIA, BDIA(R)**: loop ``i``, the rows. A rank holds the format of its rows (offsets
  from its local row to the global column: ``fmt.args(A[rows])``); ``x`` is read at the row
  plus an offset, so the executor reads a window of ``x`` (:mod:`spf.distributed.window`);
  the ghosts are the image of the rank's rows (every slot of its diagonals inside the
  matrix, zero or not) minus its own entries. Bitwise equal: each row sums its diagonals in
  column order, and a diagonal slot absent from the whole matrix's format adds ``0 * x``.

* **BCSR(r, c)**: loop ``ib``, the block rows. ``y`` and ``x`` are vectors of blocks
  (``r*NB``, ``c*MB`` entries): entry ``r*b + t`` of ``y`` belongs to the owner of block row
  ``b`` (an ``owner`` array has one rank per block row), and the exchange moves whole blocks
  of ``x`` (the ghosts are the block columns of the rank's blocks it does not own). A rank
  holds its block rows (global block columns; the matrix zero-padded to whole blocks as
  ``spf.sparse.bcsr_args`` pads it). Bitwise equal.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from spf import sparse
from spf.errors import ArgumentError, FormatError

Format = Any
"""An ``spf.Format`` (this layer, below spf.formats, does not import it)."""
Partition = Any
"""An :class:`spf.mpi.Partition` (spf.mpi imports this module)."""


_PACKERS = {"csr_args": "CSR", "coo_args": "COO", "csc_args": "CSC", "dia_args": "DIA",
            "ell_args": "ELL"}  # fmt: skip
_BLOCKED = {"_sell": "SELL", "_bdia": "BDIA", "_bcsr_blocks": "BCSR"}


def _builtin(fmt: Format) -> tuple[str, tuple[int, ...]]:
    """The built-in format's family (``CSR``, ``SELL``, ...) and its numbers (SELL's ``C,
    sigma``, BDIA's ``R``, BCSR's ``r, c``), known by the packer it was built with (this
    layer does not import spf.formats); FormatError for any other format."""
    packer = getattr(fmt, "packer", None)
    if packer is None or not hasattr(fmt, "spmv"):
        raise ArgumentError(
            f"expected a built-in format (spf.formats.CSR, COO, CSC, ELL, SELL(C, sigma), DIA, "
            f"BDIA(R), BCSR(r, c)), got {fmt!r}"
        )
    if getattr(packer, "__module__", "") == "spf.sparse" and packer.__name__ in _PACKERS:
        return _PACKERS[packer.__name__], ()
    if isinstance(packer, functools.partial):
        func = packer.func
        if getattr(func, "__module__", "") == "spf.formats.builtin" and func.__name__ in _BLOCKED:
            return _BLOCKED[func.__name__], tuple(int(a) for a in packer.args)
    raise FormatError(
        f"{fmt.name} is not a built-in format; spf.mpi.scatter splits spf.formats.CSR, COO, "
        "CSC, ELL, SELL(C, sigma), DIA, BDIA(R) and BCSR(r, c) (for a format of your own, "
        "pack each rank's rows with its packer and call distribute_rows on its SpMV)"
    )


def loop_of(fmt: Format) -> str:
    """The loop of ``spf.kernels.spmv(fmt)`` that is distributed (module docstring)."""
    family, _ = _builtin(fmt)
    loops = {"CSR": "i", "ELL": "i", "SELL": "i", "DIA": "i", "BDIA": "i", "COO": "k", "CSC": "j"}
    return loops.get(family, "ib")  # BCSR: the block rows


def blocks(fmt: Format) -> tuple[int, int]:
    """Entries per block of ``y`` and of ``x`` (BCSR(r, c): ``(r, c)``; else ``(1, 1)``)."""
    family, numbers = _builtin(fmt)
    return (numbers[0], numbers[1]) if family == "BCSR" else (1, 1)


def spmv(fmt: Format, index_dtype: str | None = None) -> Any:
    """``spf.kernels.spmv(fmt)`` (``fmt.spmv``) distributed as :func:`scatter` splits
    ``fmt``."""
    loop = loop_of(fmt)
    comp = fmt.spmv(index_dtype)
    family, _ = _builtin(fmt)
    # SELL's rows are i = perm(C*ch + r): scatter packs perm with the rank's local rows
    local = ("perm",) if family == "SELL" and "perm" in fmt.ufs else ()
    comp._distribute_rows(loop, {"y": 0, "x": 0}, "block", local)
    return comp


def scatter(
    matrix: Any, fmt: Format, part: Partition, xpart: Partition, rank: int, index_dtype: str
) -> dict[str, Any]:
    """This rank's arguments of :func:`spmv` (``part``: the rows' partition, ``xpart``:
    ``x``'s), without ``owner``."""
    family, _ = _builtin(fmt)
    csr = sparse._csr(matrix, "scatter")
    n, m = (int(d) for d in csr.shape)
    if family == "BCSR":
        return _bcsr(csr, fmt, part, rank, index_dtype)
    if family == "CSC":
        cols = xpart.owned(rank)
        args = sparse.csc_args(csr.tocsc()[:, cols], index_dtype)
        return {**args, "N": n, "M": m}
    rows = part.owned(rank)
    local = csr[rows]
    if family == "COO":
        args = sparse.coo_args(local, index_dtype)
        args["row"] = rows[args["row"]].astype(args["row"].dtype)
        return {**args, "N": n, "M": m}
    args = fmt.args(local, index_dtype)
    if family in ("ELL", "SELL"):
        _repoint_padding(fmt, family, local, args, _pad_column(local, xpart, rank))
    return {**args, "N": n, "M": m}


def _bcsr(csr: Any, fmt: Format, part: Partition, rank: int, index_dtype: str) -> dict[str, Any]:
    """The rank's block rows (``part`` counts blocks), the matrix zero-padded to whole
    blocks as ``spf.sparse.bcsr_args`` pads it: ``NB``, ``MB`` global, ``NNZB`` the rank's."""
    r, c = blocks(fmt)
    n, m = (int(d) for d in csr.shape)
    nb, mb = -(-n // r), -(-m // c)
    indptr = np.concatenate([csr.indptr, np.full(nb * r - n, csr.indptr[-1])])
    padded = type(csr)((csr.data, csr.indices, indptr), shape=(nb * r, mb * c))
    rows = (part.owned(rank)[:, None] * r + np.arange(r)).ravel()
    args = fmt.args(padded[rows], index_dtype)
    return {**args, "NB": nb, "MB": mb}


def _pad_column(local: Any, xpart: Partition, rank: int) -> int:
    """An entry of ``x`` the rank owns, else one its rows read (0 without either: then
    there is no padding slot)."""
    owned = xpart.owned(rank)
    if owned.size:
        return int(owned[0])
    return int(local.indices[0]) if local.nnz else 0


def _repoint_padding(
    fmt: Format, family: str, local: Any, args: dict[str, Any], column: int
) -> None:
    """Padding slots (value 0) of ELL's ``col`` / SELL's ``scol`` read ``x(column)``
    instead of ``x(0)``, which another rank owns: no ghost of their own."""
    pattern = local.copy()
    pattern.data = np.ones_like(pattern.data)
    filled = fmt.args(pattern, None)
    value, index = ("A", "col") if family == "ELL" else ("val", "scol")
    pad = filled[value] == 0
    args[index][pad] = column


__all__ = ["blocks", "loop_of", "scatter", "spmv"]

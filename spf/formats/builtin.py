"""The built-in formats, each written as a :class:`~spf.formats.format.Format` relation.

Array names follow docs/api.md §12: COO ``row, col, A``; CSR ``rowptr, col, A`` (columns
sorted within rows); CSC ``colptr, row, A``; DIA ``offsets[ND], A[ND, N]``; ELL
``col[N, W], A[N, W]`` (padding: value 0, any valid column); BCSR(r, c) ``browptr, bcol,
A[NNZB, r, c]`` over ``NB*r`` by ``MB*c``; SELL(C, sigma) ``cs, cl, scol, val`` (and ``perm``
when ``sigma > 1``) as :func:`spf.formats.sell` builds them; BDIA(R) ``dptr[NB+1], doff[NS],
A[NS, R]`` (``spf.sparse.bdia_args``). Sizes ``N, M, NNZ``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from spf import sparse
from spf.errors import FormatError
from spf.formats.format import Format
from spf.sets import UF

__all__ = ["BCSR", "BDIA", "SELL", "builtin"]  # and COO, CSR, CSC, DIA, ELL, built on first use


def _idx(name: str, count: str, extent: str) -> UF:
    return UF(name, domain=f"{{[k]: 0 <= k < {count}}}", range=f"{{[v]: 0 <= v < {extent}}}")


def _ptr(name: str, n: str, nnz: str) -> UF:
    return UF(
        name,
        domain=f"{{[i]: 0 <= i <= {n}}}",
        range=f"{{[v]: 0 <= v <= {nnz}}}",
        monotonic="nondecreasing",
    )


@functools.cache
def _coo() -> Format:
    """Coordinate format: entry ``k`` at ``(row(k), col(k))``, any order; also callable,
    ``COO(order)`` (:mod:`spf.formats.tensor`)."""
    from spf.formats.tensor import MatrixCOO

    return MatrixCOO(
        "COO",
        coords="[i, j]",
        storage="{[i, j] -> [k]: 0 <= k < NNZ && i = row(k) && j = col(k)}",
        ufs=[_idx("row", "NNZ", "N"), _idx("col", "NNZ", "M")],
        packer=sparse.coo_args,
    )


@functools.cache
def _csr() -> Format:
    """Compressed rows, columns strictly increasing within each row."""
    return Format(
        "CSR",
        coords="[i, j]",
        storage="{[i, j] -> [k]: rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
        ufs=[_ptr("rowptr", "N", "NNZ"), _idx("col", "NNZ", "M")],
        assume=["forall i, k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) => col(k1) < col(k2)"],
        packer=sparse.csr_args,
    )


@functools.cache
def _csc() -> Format:
    """Compressed columns, rows strictly increasing within each column."""
    return Format(
        "CSC",
        coords="[i, j]",
        storage="{[i, j] -> [k]: colptr(j) <= k < colptr(j+1) && i = row(k)}",
        ufs=[_ptr("colptr", "M", "NNZ"), _idx("row", "NNZ", "N")],
        assume=["forall j, k1, k2: colptr(j) <= k1 < k2 < colptr(j+1) => row(k1) < row(k2)"],
        packer=sparse.csc_args,
    )


@functools.cache
def _dia() -> Format:
    """Diagonals: ``A[d, i]`` is entry ``(i, i + offsets(d))`` (outside the matrix: unused)."""
    return Format(
        "DIA",
        coords="[i, j]",
        storage="{[i, j] -> [d, p]: 0 <= d < ND && 0 <= p < N && i = p && j = p + offsets(d) "
        "&& 0 <= j < M}",
        ufs=[UF("offsets", domain="{[d]: 0 <= d < ND}", range="{[v]: -N < v < M}")],
        value_shape=("ND", "N"),
        packer=sparse.dia_args,
    )


@functools.cache
def _ell() -> Format:
    """ELLPACK: ``W`` slots per row; padding slots hold value 0 and any valid column."""
    return Format(
        "ELL",
        coords="[i, j]",
        storage="{[i, j] -> [p, w]: 0 <= p < N && 0 <= w < W && i = p && j = col(p, w)}",
        ufs=[
            UF(
                "col",
                arity=2,
                domain="{[p, w]: 0 <= p < N && 0 <= w < W}",
                range="{[v]: 0 <= v < M}",
            )
        ],
        value_shape=("N", "W"),
        packer=sparse.ell_args,
    )


def _positive(fmt: str, what: str, value: object) -> int:
    """``value`` as a positive int (a numpy int too, as the ``spf.sparse`` helpers take)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise FormatError(f"{fmt}: {what} must be a positive integer, got {value!r}")
    return int(value)


def BCSR(r: int, c: int) -> Format:  # noqa: N802
    """Block CSR with ``r`` by ``c`` dense blocks (``A[NNZB, r, c]``, block row ``ib`` of
    ``NB``, block column ``bcol(kb)`` of ``MB``)."""
    return _bcsr(_positive("BCSR", "r", r), _positive("BCSR", "c", c))


@functools.cache
def _bcsr(r: int, c: int) -> Format:
    """:func:`BCSR` of checked ints (one object per block size)."""
    return Format(
        f"BCSR{r}x{c}",
        coords="[i, j]",
        storage=f"{{[i, j] -> [kb, ri, ci]: exists ib: 0 <= ib < NB && browptr(ib) <= kb < "
        f"browptr(ib+1) && 0 <= ri < {r} && 0 <= ci < {c} && i = {r}*ib + ri && "
        f"j = {c}*bcol(kb) + ci}}",
        ufs=[_ptr("browptr", "NB", "NNZB"), _idx("bcol", "NNZB", "MB")],
        assume=["forall ib, k1, k2: browptr(ib) <= k1 < k2 < browptr(ib+1) => bcol(k1) < bcol(k2)"],
        value_shape=("NNZB", r, c),
        shape=(f"{r}*NB", f"{c}*MB"),
        packer=functools.partial(_bcsr_blocks, r, c),
    )


def SELL(C: int, sigma: int = 1) -> Format:  # noqa: N802, N803
    """SELL-``C``-``sigma`` as :func:`spf.formats.sell` stores it: entry ``w`` of row ``r``
    of chunk ``ch`` at ``cs(ch) + C*w + r``; rows permuted by ``perm`` when ``sigma > 1``."""
    return _sell_format(_positive("SELL", "C", C), _positive("SELL", "sigma", sigma))


@functools.cache
def _sell_format(C: int, sigma: int) -> Format:  # noqa: N803
    """:func:`SELL` of checked ints (one object per ``C``, ``sigma``)."""
    if sigma > 1 and sigma % C:
        raise FormatError(f"SELL: sigma ({sigma}) must be 1 or a multiple of C ({C})")
    row = f"{C}*ch + r" if sigma == 1 else f"perm({C}*ch + r)"
    ufs = [
        _ptr("cs", "NC", "NV"),
        UF("cl", domain="{[t]: 0 <= t < NC}", range="{[v]: 0 <= v <= M}"),
        _idx("scol", "NV", "M"),
    ]
    # the rows are read through perm, each once: a permutation (its range says no more: a
    # repeated row would be written twice and the row it displaced never), checked in one
    # marking pass (spf.analysis.injective)
    assume = ["forall t1, t2: 0 <= t1 < t2 < N => perm(t1) != perm(t2)"] if sigma > 1 else []
    if sigma > 1:
        ufs.append(_idx("perm", "N", "N"))
    return Format(
        f"SELL{C}_{sigma}",
        coords="[i, j]",
        storage=f"{{[i, j] -> [k]: exists ch, w, r: 0 <= ch < NC && 0 <= w < cl(ch) && "
        f"0 <= r < {C} && {C}*ch + r < N && k = cs(ch) + {C}*w + r && i = {row} && "
        "j = scol(k)}",
        ufs=ufs,
        assume=assume,
        value="val",
        value_shape=("NV",),
        window=sigma if sigma > 1 else None,
        packer=functools.partial(_sell, C, sigma),
    )


def BDIA(R: int) -> Format:  # noqa: N802, N803
    """Diagonals per block of ``R`` rows (what MKL's inspector-executor builds for matrices
    whose entries lie on a few diagonals): row block ``b`` has the diagonal slots
    ``dptr(b) <= s < dptr(b+1)``; slot ``s`` holds the ``R`` entries
    ``(R*b + r, R*b + r + doff(s))`` in ``A[s, r]`` (0 where an entry is absent or outside
    the matrix). No column index per entry: one offset per slot, and the offsets may change
    from block to block (DIA's are fixed for the whole matrix)."""
    return _bdia_format(_positive("BDIA", "R", R))


@functools.cache
def _bdia_format(R: int) -> Format:  # noqa: N803
    """:func:`BDIA` of a checked int (one object per ``R``)."""
    return Format(
        f"BDIA{R}",
        coords="[i, j]",
        storage=f"{{[i, j] -> [s, r]: exists b: 0 <= b < NB && dptr(b) <= s < dptr(b+1) && "
        f"0 <= r < {R} && i = {R}*b + r && i < N && j = i + doff(s) && 0 <= j < M}}",
        ufs=[
            _ptr("dptr", "NB", "NS"),
            UF("doff", domain="{[s]: 0 <= s < NS}", range="{[v]: -N < v < M}"),
        ],
        assume=["forall b, s1, s2: dptr(b) <= s1 < s2 < dptr(b+1) => doff(s1) < doff(s2)"],
        value_shape=("NS", R),
        packer=functools.partial(_bdia, R),
    )


def _bcsr_blocks(r: int, c: int, matrix: object, index_dtype: object) -> dict[str, Any]:
    """``spf.sparse.bcsr_args`` with the blocks in the relation's shape ``A[NNZB, r, c]``
    (the same memory as its flat ``A``)."""
    args = sparse.bcsr_args(matrix, r, c, index_dtype)
    args["A"] = args["A"].reshape(args["NNZB"], r, c)
    return args


def _sell(c: int, sigma: int, matrix: object, index_dtype: object) -> dict[str, Any]:
    return sparse.sell_args(matrix, c, sigma, index_dtype)


def _bdia(r: int, matrix: object, index_dtype: object) -> dict[str, Any]:
    return sparse.bdia_args(matrix, r, index_dtype)


_BUILTINS = {"COO": _coo, "CSR": _csr, "CSC": _csc, "DIA": _dia, "ELL": _ell}


def builtin(name: str) -> Format:
    """The built-in format ``name`` (``"COO"``, ``"CSR"``, ``"CSC"``, ``"DIA"``, ``"ELL"``),
    built on first use so that ``import spf`` stays cheap."""
    return _BUILTINS[name]()


def __getattr__(name: str) -> Format:
    if name in _BUILTINS:
        return _BUILTINS[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""``scipy.sparse`` matrices as keyword arguments of the ``spf.kernels`` computations.

Each ``*_args`` function takes any ``scipy.sparse`` matrix or array (or a 2-D numpy array)
and returns a dict of the index arrays, values and symbolic constants of the matching kernel;
the caller adds the dense operands (``x``, ``y``, ``B``, ...):

>>> import numpy as np, scipy.sparse as sp
>>> import spf.kernels
>>> m = sp.csr_array(np.array([[1.0, 0.0], [2.0, 3.0]]))
>>> y = np.zeros(2)
>>> spf.kernels.spmv_csr().interpret(y=y, x=np.ones(2), **csr_args(m))
>>> y
array([1., 5.])

Values become contiguous ``float64`` (before duplicates are summed); index arrays are
``int32`` unless ``index_dtype="int64"`` is asked for (or a dimension or entry count does
not fit in ``int32``, which picks ``int64``). Duplicate entries are summed for CSR / CSC /
BCSR (COO keeps them: the kernel accumulates anyway); explicitly stored zeros are kept.
The input matrix is never modified. A scipy matrix whose index arrays are malformed (an
index outside the matrix, a decreasing ``indptr``: scipy's constructors do not check) is
refused with ``ArgumentError``, as are ELL / DIA / SELL arrays that would take more than
half of the machine's memory (a matrix with a dense row); big-endian and float16 values
are converted like any other numeric dtype.
``index_dtype`` takes any type spelling :mod:`spf.dtypes` accepts (``"int64"``,
``"int64_t"``, ``np.int64``). ``names={"rowptr": "rp", ...}`` renames the arguments for a
Computation of your own whose data spaces and UFs are named otherwise (``"M": None`` leaves
out a size it does not have). Each built-in :class:`spf.Format` packs its arguments with
the helper of its layout (:meth:`spf.Format.args`, :func:`format_args`). scipy is a
dependency of spf; it is imported on first use.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from spf.dtypes import numpy_name
from spf.errors import ArgumentError, SpfError, ToolchainError
from spf.sparse_checks import check_fits, check_rows_fit, check_structure, mtx_source

__all__ = [
    "bcsr_args",
    "bdia_args",
    "coo_args",
    "coo_tensor_args",
    "csc_args",
    "csf_args",
    "csr_args",
    "dia_args",
    "ell_args",
    "format_args",
    "gauss_seidel_args",
    "ilu0_args",
    "poisson2d",
    "prefix_args",
    "read_matrix_market",
    "sell_args",
    "spmm_args",
    "sptrsv_args",
]

_INT32_MAX = int(np.iinfo(np.int32).max)


def _scipy(module: str = "scipy.sparse") -> Any:
    """Import a scipy module lazily (scipy is an optional, dev-only dependency)."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ToolchainError("spf.sparse needs scipy: pip install scipy") from err


def _as_sparse(matrix: object, what: str) -> Any:
    """Any scipy.sparse matrix / array, or a 2-D array-like, as a scipy sparse object."""
    sparse = _scipy()
    m: Any
    if sparse.issparse(matrix):
        m = matrix
        if len(m.shape) == 2:
            check_structure(m, what)  # indices scipy's constructors leave unchecked
        if m.dtype.kind not in "biufc":
            raise ArgumentError(
                f"{what}: values must be numbers (bool, int or float), got dtype {m.dtype}; "
                "convert them, e.g. m.astype(np.float64)"
            )
    else:
        if not isinstance(matrix, (np.ndarray, list, tuple)):
            raise ArgumentError(
                f"{what}: expected a scipy.sparse matrix or a 2-D array, "
                f"got {type(matrix).__name__}"
            )
        try:
            dense = np.asarray(matrix)
        except ValueError as err:  # a ragged list
            raise ArgumentError(
                f"{what}: cannot read it as a 2-D array ({err}); pass a scipy.sparse matrix "
                "or a 2-D array of numbers"
            ) from None
        if dense.ndim != 2:
            raise ArgumentError(f"{what}: expected a 2-D matrix, got {dense.ndim} dimension(s)")
        if dense.dtype.kind not in "biufc":
            raise ArgumentError(
                f"{what}: values must be numbers (bool, int or float), got dtype {dense.dtype}; "
                "convert them, e.g. np.asarray(matrix, dtype=np.float64)"
            )
        if dense.dtype == np.float16 or not dense.dtype.isnative:  # scipy.sparse has neither
            dense = dense.astype(np.float64 if dense.dtype == np.float16 else
                                 dense.dtype.newbyteorder("="))  # fmt: skip
        m = sparse.csr_array(dense)
    if len(m.shape) != 2:
        raise ArgumentError(f"{what}: expected a 2-D matrix, got shape {m.shape}")
    if np.issubdtype(m.dtype, np.complexfloating):
        raise ArgumentError(f"{what}: complex values are not supported (kernels use double)")
    if m.dtype != np.float64:  # before duplicates are summed: int8 100 + 100 is not -56;
        m = m.astype(np.float64)  # big-endian ">f8" values, which scipy converts nowhere
    return m


def _values(data: Any) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.ascontiguousarray(np.asarray(data), dtype=np.float64)


def _index_dtype(index_dtype: object, largest: int, what: str) -> np.dtype[Any]:
    """The index dtype asked for; None: int32, or int64 when ``largest`` does not fit."""
    if index_dtype is None:
        return np.dtype(np.int64 if largest > _INT32_MAX else np.int32)
    try:
        name = numpy_name(index_dtype, what=f"{what}: index_dtype")
    except SpfError:
        name = ""
    if name not in ("int32", "int64"):
        raise ArgumentError(f"{what}: index_dtype must be 'int32' or 'int64', got {index_dtype!r}")
    if name == "int32" and largest > _INT32_MAX:
        raise ArgumentError(
            f"{what}: a dimension or entry count ({largest}) does not fit in int32; "
            "use index_dtype='int64' (and the kernel's index_dtype='int64')"
        )
    return np.dtype(name)


def _indices(values: Any, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    return np.ascontiguousarray(np.asarray(values), dtype=dtype)


def _csr(matrix: object, what: str) -> Any:
    """A canonical CSR copy: duplicates summed, columns sorted, explicit zeros kept."""
    m = _as_sparse(matrix, what).tocsr(copy=True)
    m.sum_duplicates()
    m.sort_indices()
    return m


def _compressed_args(m: Any, ptr: str, idx: str, index_dtype: object, what: str) -> dict[str, Any]:
    n, cols = (int(d) for d in m.shape)
    nnz = int(m.indptr[-1])
    dtype = _index_dtype(index_dtype, max(n, cols, nnz), what)
    return {
        "A": _values(m.data[:nnz]),
        ptr: _indices(m.indptr, dtype),
        idx: _indices(m.indices[:nnz], dtype),
        "N": n,
        "M": cols,
        "NNZ": nnz,
    }


def _rename(
    args: dict[str, Any], names: object, what: str, prefix: object = None
) -> dict[str, Any]:
    """``args`` with the keys ``names`` maps to the caller's names (the rest unchanged; a
    size mapped to None left out), then, with ``prefix="A_"``, the value array (the first
    key) named ``A`` and every other key prefixed (``A_rowptr``, ``A_NNZ``): the arguments
    of operand ``A`` of ``spf.einsum``."""
    return prefix_args(_renamed(args, names, what), prefix, what)


def prefix_args(
    args: dict[str, Any], prefix: object, what: str, *, value: str | None = None
) -> dict[str, Any]:
    """``args`` for operand ``prefix[:-1]`` of ``spf.einsum``: the value array ``value``
    (default: the first key) renamed to the operand's name, every other key prefixed.

    >>> prefix_args({"A": 1, "rowptr": 2, "NNZ": 3}, "B_", "csr_args")
    {'B': 1, 'B_rowptr': 2, 'B_NNZ': 3}
    """
    if prefix is None:
        return args
    if not isinstance(prefix, str) or not prefix.endswith("_") or not prefix[:-1].isidentifier():
        raise ArgumentError(
            f"{what}: prefix must be an operand name followed by '_' (prefix='A_'), got {prefix!r}"
        )
    value = next(iter(args)) if value is None else value
    return {(prefix[:-1] if k == value else prefix + k): v for k, v in args.items()}


def _renamed(args: dict[str, Any], names: object, what: str) -> dict[str, Any]:
    if names is None:
        return args
    if not isinstance(names, Mapping):
        raise ArgumentError(
            f"{what}: names must map standard names to yours, e.g. "
            f"{{'rowptr': 'rp'}}, got {names!r}"
        )
    unknown = sorted(str(k) for k in names if k not in args)
    if unknown:
        raise ArgumentError(
            f"{what}: names has unknown key(s) {', '.join(map(repr, unknown))}; "
            f"the standard names are {', '.join(args)}"
        )
    for key, new in names.items():
        if new is None and not isinstance(args[key], int):
            raise ArgumentError(
                f"{what}: names[{key!r}] is None, but only a size (an int such as N, M, NNZ) "
                f"may be left out; {key!r} is an array every kernel over it reads"
            )
        if new is not None and (not isinstance(new, str) or not new.isidentifier()):
            raise ArgumentError(
                f"{what}: names[{key!r}] must be an identifier (or None to leave a size out), "
                f"got {new!r}"
            )
    kept = {names.get(k, k): v for k, v in args.items() if names.get(k, k) is not None}
    renamed = [names.get(k, k) for k in args if names.get(k, k) is not None]
    clash = sorted({n for n in renamed if renamed.count(n) > 1})
    if clash:
        raise ArgumentError(
            f"{what}: names gives two arguments the same name ({', '.join(clash)}); "
            "every argument needs its own name"
        )
    return kept


# ===================================================================================== formats
def csr_args(
    matrix: object,
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmv_csr``: ``A, rowptr, col, N, M, NNZ``.

    ``names`` renames them for a Computation of your own that calls them otherwise (every
    ``*_args`` helper takes it): ``names={"rowptr": "rp", "A": "vals", "N": "n"}``; a size
    mapped to None is left out (``"M": None`` for a square kernel that has no ``M``).

    >>> import scipy.sparse as sp
    >>> args = csr_args(sp.eye_array(3, format="coo"), index_dtype="int64")
    >>> args["rowptr"], args["col"].dtype, args["NNZ"]
    (array([0, 1, 2, 3]), dtype('int64'), 3)
    >>> list(csr_args(sp.eye_array(2), names={"rowptr": "rp", "A": "vals", "N": "n"}))
    ['vals', 'rp', 'col', 'n', 'M', 'NNZ']
    """
    args = _compressed_args(_csr(matrix, "csr_args"), "rowptr", "col", index_dtype, "csr_args")
    return _rename(args, names, "csr_args", prefix)


def spmm_args(
    matrix: object,
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmm_csr`` for the sparse operand ``A`` (``NxM``).

    ``A, rowptr, col, N, M, NNZ``; ``K`` follows from the shapes of the dense ``B[M, K]`` and
    ``C[N, K]`` the caller passes.

    >>> import numpy as np, scipy.sparse as sp
    >>> sorted(spmm_args(sp.csr_array(np.eye(2))))
    ['A', 'M', 'N', 'NNZ', 'col', 'rowptr']
    """
    args = _compressed_args(_csr(matrix, "spmm_args"), "rowptr", "col", index_dtype, "spmm_args")
    return _rename(args, names, "spmm_args", prefix)


def csc_args(
    matrix: object,
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmv_csc``: ``A, colptr, row, N, M, NNZ``.

    >>> import numpy as np, scipy.sparse as sp
    >>> args = csc_args(sp.csr_array(np.array([[1.0, 2.0], [0.0, 3.0]])))
    >>> args["colptr"], args["row"], args["A"]
    (array([0, 1, 3], dtype=int32), array([0, 0, 1], dtype=int32), array([1., 2., 3.]))
    """
    m = _as_sparse(matrix, "csc_args").tocsc(copy=True)
    m.sum_duplicates()
    m.sort_indices()
    args = _compressed_args(m, "colptr", "row", index_dtype, "csc_args")
    return _rename(args, names, "csc_args", prefix)


def coo_args(
    matrix: object,
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmv_coo``: ``A, row, col, N, M, NNZ``.

    Entries keep their stored order; duplicates are kept (the kernel sums them).

    >>> import numpy as np, scipy.sparse as sp
    >>> args = coo_args(sp.coo_array((np.array([1.0, 2.0]), (np.array([1, 1]), np.array([0, 0])))))
    >>> args["row"], args["col"], args["A"], args["N"], args["M"]
    (array([1, 1], dtype=int32), array([0, 0], dtype=int32), array([1., 2.]), 2, 1)
    """
    m = _as_sparse(matrix, "coo_args").tocoo(copy=True)
    n, cols = (int(d) for d in m.shape)
    nnz = int(m.nnz)
    dtype = _index_dtype(index_dtype, max(n, cols, nnz), "coo_args")
    args = {
        "A": _values(m.data),
        "row": _indices(m.row, dtype),
        "col": _indices(m.col, dtype),
        "N": n,
        "M": cols,
        "NNZ": nnz,
    }
    return _rename(args, names, "coo_args", prefix)


def bcsr_args(
    matrix: object,
    R: int,  # noqa: N803
    C: int,  # noqa: N803
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmv_bcsr(R, C)``: ``A, browptr, bcol, NB, MB, NNZB``.

    The matrix is padded with zero rows / columns to ``NB*R x MB*C`` (``NB = ceil(N/R)``,
    ``MB = ceil(M/C)``); every ``RxC`` block holding a stored entry is kept, stored row-major
    (``A[k*R*C + C*ii + jj]``), block columns sorted within each block row. The caller passes
    ``x`` of length ``MB*C`` and ``y`` of length ``NB*R`` (zero-padded).

    >>> import numpy as np, scipy.sparse as sp
    >>> args = bcsr_args(sp.csr_array(np.array([[1.0, 2.0, 3.0]])), 2, 2)
    >>> args["A"]
    array([1., 2., 0., 0., 3., 0., 0., 0.])
    >>> args["browptr"], args["bcol"], args["NB"], args["MB"], args["NNZB"]
    (array([0, 2], dtype=int32), array([0, 1], dtype=int32), 1, 2, 2)
    """
    for name, value in (("R", R), ("C", C)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ArgumentError(
                f"bcsr_args: block size {name} must be a positive int, got {value!r}"
            )
    r, c = int(R), int(C)
    m, rows = _entries(matrix, "bcsr_args")
    n, cols = (int(d) for d in m.shape)
    nb, mb = -(-n // r), -(-cols // c)
    block, inside, brow, bcol = _blocks(m, rows, (r, c), (nb, mb))
    nnzb = len(bcol)
    dtype = _index_dtype(index_dtype, max(nb, mb, nnzb * r * c), "bcsr_args")
    values = np.zeros(nnzb * r * c, dtype=np.float64)
    values[block * (r * c) + inside] = _values(m.data)
    browptr = np.zeros(nb + 1, dtype=np.int64)
    np.cumsum(np.bincount(brow, minlength=nb), out=browptr[1:])
    args = {
        "A": values,
        "browptr": _indices(browptr, dtype),
        "bcol": _indices(bcol, dtype),
        "NB": nb,
        "MB": mb,
        "NNZB": nnzb,
    }
    return _rename(args, names, "bcsr_args", prefix)


def _blocks(
    m: Any, rows: np.ndarray[Any, Any], size: tuple[int, int], extents: tuple[int, int]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The ``r x c`` blocks (``size``) of canonical CSR ``m`` (its entries' ``rows``;
    ``extents``: the block rows and columns) that hold a stored entry: each entry's
    block (numbered in block-row-major order) and its place inside it (``c*ii + jj``), and
    each block's block row and block column. O(nnz) memory and a stable sort of the entries
    by block (a block row's ``r`` rows are runs already sorted by column): no array of the
    block columns' extent, which scipy's ``tobsr`` allocates (13 s for two entries among
    3e9 columns)."""
    (r, c), (nb, mb) = size, extents
    col = np.asarray(m.indices, dtype=np.int64)
    brow, bcol = rows // r, col // c
    if r == 1:  # CSR's order is the blocks' already
        order = np.arange(len(col), dtype=np.int64)
    elif nb * mb <= np.iinfo(np.int64).max:
        order = np.argsort(brow * mb + bcol, kind="stable")
    else:
        order = np.lexsort((bcol, brow))
    brow, bcol = brow[order], bcol[order]
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = (brow[1:] != brow[:-1]) | (bcol[1:] != bcol[:-1])
    block = np.empty(len(order), dtype=np.int64)
    block[order] = np.cumsum(starts) - 1
    inside = (rows % r) * c + col % c
    return block, inside, brow[starts], bcol[starts]


def _entries(matrix: object, what: str) -> tuple[Any, np.ndarray[Any, Any]]:
    """Canonical CSR and the row of each stored entry."""
    m = _csr(matrix, what)
    rows = np.repeat(np.arange(m.shape[0], dtype=np.int64), np.diff(m.indptr))
    return m, rows


def dia_args(
    matrix: object,
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmv(spf.formats.DIA)``: ``A[ND, N], offsets, N, M,
    ND``; ``A[d, i]`` holds entry ``(i, i + offsets[d])`` (0 outside the matrix).

    >>> import numpy as np, scipy.sparse as sp
    >>> args = dia_args(sp.csr_array(np.array([[1.0, 2.0], [0.0, 3.0]])))
    >>> args["offsets"], args["A"]
    (array([0, 1], dtype=int32), array([[1., 3.],
           [2., 0.]]))
    """
    m, rows = _entries(matrix, "dia_args")
    n, cols = (int(d) for d in m.shape)
    diag = m.indices.astype(np.int64) - rows
    offsets, which = np.unique(diag, return_inverse=True)
    dtype = _index_dtype(index_dtype, max(n, cols, len(offsets) * max(n, 1)), "dia_args")
    check_fits(len(offsets) * n * 8, "dia_args", f"{len(offsets)} diagonals of {n} values")
    values = np.zeros((len(offsets), n))
    values[which, rows] = m.data
    args = {"A": values, "offsets": _indices(offsets, dtype), "N": n, "M": cols, "ND": len(offsets)}
    return _rename(args, names, "dia_args", prefix)


def _block_slots(
    block: np.ndarray[Any, Any], off: np.ndarray[Any, Any], nb: int, span: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``(slot of each entry, doff, dptr)``: the distinct offsets (``off + span//2`` in
    ``0..span-1``) of each row block, in block order and increasing offset within a block.
    Without sorting where the matrix has few distinct offsets (a presence table of blocks by
    distinct offsets), else by sorting ``(block, offset)`` keys."""
    counts = np.bincount(off, minlength=span)
    present = np.flatnonzero(counts)
    nd = len(present)
    if nb * nd <= 8 * len(off) + (1 << 20):
        which = np.zeros(span, dtype=np.int64)
        which[present] = np.arange(nd)
        key = block * nd + which[off]
        table = np.zeros(nb * nd, dtype=bool)
        table[key] = True
        numbering = np.cumsum(table) - 1
        filled = np.flatnonzero(table)
        doff, per_block = present[filled % nd], table.reshape(nb, nd).sum(axis=1)
        return numbering[key], doff, np.concatenate(([0], np.cumsum(per_block)))
    keys, slot = np.unique(block * span + off, return_inverse=True)
    dptr = np.searchsorted(keys // span, np.arange(nb + 1))
    return slot.reshape(-1), keys % span, dptr


def bdia_args(
    matrix: object,
    R: int,  # noqa: N803
    index_dtype: object = None,
    *,
    max_fill: float = 4.0,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmv(spf.formats.BDIA(R))``: ``A[NS, R], dptr[NB+1],
    doff[NS], N, M, NB, NS``: row block ``b`` (rows ``R*b .. R*b+R-1``) has one slot per
    distinct diagonal ``j - i`` of its entries (``dptr[b] <= s < dptr[b+1]``, offsets
    ``doff[s]`` increasing); ``A[s, r]`` holds entry ``(R*b + r, R*b + r + doff[s])``, 0 where
    there is none. ``NS * R / nnz`` is the fill (1 for banded matrices such as Poisson's); a
    matrix whose fill would exceed ``max_fill`` (entries scattered over many diagonals: use
    CSR or SELL) raises :class:`~spf.errors.ArgumentError` before the values are allocated.

    >>> import numpy as np, scipy.sparse as sp
    >>> args = bdia_args(sp.csr_array(np.array([[1.0, 2.0], [0.0, 3.0]])), 2)
    >>> args["dptr"], args["doff"], args["A"]
    (array([0, 2], dtype=int32), array([0, 1], dtype=int32), array([[1., 3.],
           [2., 0.]]))
    """
    if isinstance(R, bool) or not isinstance(R, (int, np.integer)) or R < 1:
        raise ArgumentError(f"bdia_args: R (rows per block) must be a positive int, got {R!r}")
    if (
        isinstance(max_fill, bool)
        or not isinstance(max_fill, (int, float, np.integer, np.floating))
        or not max_fill > 0
    ):
        raise ArgumentError(
            f"bdia_args: max_fill must be a positive number (the most values stored per "
            f"nonzero; float('inf') for no limit), got {max_fill!r}"
        )
    r = int(R)
    m, rows = _entries(matrix, "bdia_args")
    n, cols = (int(d) for d in m.shape)
    nb = -(-n // r)
    slot, doff, dptr = _block_slots(rows // r, m.indices.astype(np.int64) - rows + n, nb, n + cols)
    ns = len(doff)
    fill = ns * r / max(len(rows), 1)
    if fill > max_fill:
        raise ArgumentError(
            f"bdia_args: with R = {r} this matrix needs {ns} diagonal slots of {r} values for "
            f"{len(rows)} entries (fill {fill:.1f} > max_fill = {max_fill}); BDIA suits banded "
            "matrices: use a smaller R, CSR or SELL, or raise max_fill"
        )
    dtype = _index_dtype(index_dtype, max(n, cols, ns * r), "bdia_args")
    values = np.zeros((ns, r))
    values.reshape(-1)[slot * r + rows % r] = m.data  # one flat scatter
    args = {"A": values, "dptr": _indices(dptr, dtype), "doff": _indices(doff - n, dtype),
            "N": n, "M": cols, "NB": nb, "NS": ns}  # fmt: skip
    return _rename(args, names, "bdia_args", prefix)


def ell_args(
    matrix: object,
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmv(spf.formats.ELL)``: ``A[N, W], col[N, W], N, M,
    W`` (``W`` the longest row; padding slots hold value 0 and column 0).

    >>> import numpy as np, scipy.sparse as sp
    >>> args = ell_args(sp.csr_array(np.array([[1.0, 2.0], [0.0, 3.0]])))
    >>> args["col"], args["W"]
    (array([[0, 1],
           [1, 0]], dtype=int32), 2)
    """
    m, rows = _entries(matrix, "ell_args")
    n, cols = (int(d) for d in m.shape)
    lengths = np.diff(m.indptr)
    width = int(lengths.max()) if n else 0
    dtype = _index_dtype(index_dtype, max(n, cols, n * width), "ell_args")
    check_fits(n * width * (8 + dtype.itemsize), "ell_args", f"{n} rows padded to {width} slots")
    slot = np.arange(len(rows)) - m.indptr[rows]
    values = np.zeros((n, width))
    col = np.zeros((n, width), dtype=dtype)
    values[rows, slot] = m.data
    col[rows, slot] = m.indices
    args = {"A": values, "col": col, "N": n, "M": cols, "W": width}
    return _rename(args, names, "ell_args", prefix)


def sell_args(
    matrix: object,
    C: int,  # noqa: N803
    sigma: int = 1,
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmv(spf.formats.SELL(C, sigma))``: ``val, cs, cl,
    scol, N, M, NC, NV`` (and ``perm`` when ``sigma > 1``), laid out as ``spf.formats.sell``
    lays them out (rows sorted by decreasing length within windows of ``sigma``, stable).

    >>> import numpy as np, scipy.sparse as sp
    >>> args = sell_args(sp.csr_array(np.array([[1.0, 2.0], [0.0, 3.0]])), 2)
    >>> args["cs"], args["cl"], args["scol"], args["val"]
    (array([0, 4], dtype=int32), array([2], dtype=int32), array([0, 1, 1, 0], dtype=int32), \
array([1., 3., 2., 0.]))
    """
    for name, value in (("C", C), ("sigma", sigma)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ArgumentError(f"sell_args: {name} must be a positive int, got {value!r}")
    c, sg = int(C), int(sigma)
    if sg > 1 and sg % c:
        raise ArgumentError(f"sell_args: sigma ({sg}) must be 1 or a multiple of C ({c})")
    m, rows = _entries(matrix, "sell_args")
    n, cols = (int(d) for d in m.shape)
    lengths = np.diff(m.indptr).astype(np.int64)
    perm = np.lexsort((-lengths, np.arange(n) // sg)) if sg > 1 else np.arange(n)
    iperm = np.empty(n, dtype=np.int64)
    iperm[perm] = np.arange(n)
    nc = -(-n // c)
    padded = np.zeros(nc * c, dtype=np.int64)
    padded[:n] = lengths[perm]
    cl = padded.reshape(nc, c).max(axis=1) if nc else np.zeros(0, dtype=np.int64)
    cs = np.concatenate(([0], np.cumsum(c * cl))).astype(np.int64)
    nv = int(cs[-1])
    dtype = _index_dtype(index_dtype, max(n, cols, nv), "sell_args")
    check_fits(nv * (8 + dtype.itemsize), "sell_args", f"{nv} slots (padding included)")
    pos = iperm[rows]
    slot = cs[pos // c] + c * (np.arange(len(rows)) - m.indptr[rows]) + pos % c
    val = np.zeros(nv)
    scol = np.zeros(nv, dtype=dtype)
    val[slot] = m.data
    scol[slot] = m.indices
    args: dict[str, Any] = {
        "val": val, "cs": _indices(cs, dtype), "cl": _indices(cl, dtype), "scol": scol,
        "N": n, "M": cols, "NC": nc, "NV": nv,
    }  # fmt: skip
    if sg > 1:
        args["perm"] = _indices(perm, dtype)
    return _rename(args, names, "sell_args", prefix)


def format_args(
    matrix: object, fmt: object, index_dtype: object = None, *, prefix: str | None = None
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.spmv(fmt)``, all but ``x`` and ``y``: what
    ``fmt.args(matrix, index_dtype, prefix=prefix)`` packs (:meth:`spf.Format.args`). The
    built-in formats of ``spf.formats`` (``COO, CSR, CSC, DIA, ELL, BCSR(r, c), SELL(C,
    sigma), BDIA(R)``) pack with the matching ``*_args`` helper (BCSR: ``A[NNZB, r, c]``,
    ``y`` of length ``NB*r``, ``x`` of ``MB*c``, zero-padded); a format of your own packs
    with the ``packer`` it was built with.

    >>> import numpy as np, scipy.sparse as sp
    >>> from spf.formats import CSC
    >>> sorted(format_args(sp.eye_array(2), CSC))
    ['A', 'M', 'N', 'NNZ', 'colptr', 'row']
    """
    pack = getattr(fmt, "args", None)
    if not callable(pack) or isinstance(fmt, (str, type)):
        raise ArgumentError(
            f"format_args: {fmt!r} is not a built-in format (COO, CSR, CSC, DIA, ELL, "
            "BCSR(r, c), SELL(C, sigma), BDIA(R)) nor an spf.Format; pass one of "
            "spf.formats, or build the arguments of your own format by hand"
        )
    args: dict[str, Any] = pack(matrix, index_dtype, prefix=prefix)
    return args


def sptrsv_args(
    L: object,  # noqa: N803
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.sptrsv_csr``: ``L, rowptr, col, N, NNZ``.

    ``L`` must be square and lower triangular with every diagonal entry stored and nonzero
    (after summing duplicates); columns come out sorted, so the diagonal is last in each row.
    Otherwise ``SpfError`` says which entry is wrong.

    >>> import numpy as np, scipy.sparse as sp
    >>> args = sptrsv_args(sp.csr_array(np.array([[2.0, 0.0], [1.0, 4.0]])))
    >>> args["L"], args["rowptr"], args["col"], args["N"], args["NNZ"]
    (array([2., 1., 4.]), array([0, 1, 3], dtype=int32), array([0, 0, 1], dtype=int32), 2, 3)
    """
    m = _csr(L, "sptrsv_args")
    n, cols = (int(d) for d in m.shape)
    if n != cols:
        raise ArgumentError(f"sptrsv_args: L must be square, got shape {n}x{cols}")
    indptr, indices, data = m.indptr, m.indices, m.data
    rows = np.repeat(np.arange(n), np.diff(indptr))
    above = np.nonzero(indices > rows)[0]
    if above.size:
        k = int(above[0])
        raise ArgumentError(
            f"sptrsv_args: L is not lower triangular: entry ({int(rows[k])}, {int(indices[k])}) "
            "lies above the diagonal"
        )
    last = np.asarray(indptr[1:], dtype=np.int64) - 1  # each row's last entry (sorted)
    rows_with = np.flatnonzero(last >= np.asarray(indptr[:-1], dtype=np.int64))
    missing = np.ones(n, dtype=bool)  # an empty row has no diagonal entry
    missing[rows_with] = indices[last[rows_with]] != rows_with
    zero = np.zeros(n, dtype=bool)
    zero[rows_with] = data[last[rows_with]] == 0
    wrong = np.flatnonzero(missing | zero)  # the first row the entry check would stop at
    if wrong.size:
        i = int(wrong[0])
        why = "missing" if missing[i] else "zero"
        raise ArgumentError(f"sptrsv_args: diagonal entry L[{i}, {i}] is {why}")
    args = _compressed_args(m, "rowptr", "col", index_dtype, "sptrsv_args")
    out = {
        "L": args["A"],
        "rowptr": args["rowptr"],
        "col": args["col"],
        "N": n,
        "NNZ": args["NNZ"],
    }
    return _rename(out, names, "sptrsv_args", prefix)


def _diag_args(
    matrix: object, index_dtype: object, names: object, what: str, prefix: str | None = None
) -> dict[str, Any]:
    """``A, rowptr, col, diag, N, NNZ`` of a square CSR matrix with every diagonal entry
    stored and nonzero; ``diag[i]`` is the position of ``A[i, i]``."""
    m = _csr(matrix, what)
    n, cols = (int(d) for d in m.shape)
    if n != cols:
        raise ArgumentError(f"{what}: the matrix must be square, got shape {n}x{cols}")
    indptr, indices, data = m.indptr, m.indices, m.data
    rows = np.repeat(np.arange(n), np.diff(indptr))
    on_diag = np.nonzero(indices == rows)[0]
    diag = np.full(n, -1, dtype=np.int64)
    diag[rows[on_diag]] = on_diag  # columns are unique after summing duplicates
    missing = np.nonzero(diag < 0)[0]
    if missing.size:
        i = int(missing[0])
        raise ArgumentError(
            f"{what}: diagonal entry A[{i}, {i}] is not stored ({missing.size} row(s) lack "
            "one); every row needs its diagonal entry"
        )
    zero = np.nonzero(data[diag] == 0)[0]
    if zero.size:
        i = int(zero[0])
        raise ArgumentError(f"{what}: diagonal entry A[{i}, {i}] is zero")
    args = _compressed_args(m, "rowptr", "col", index_dtype, what)
    out = {
        "A": args["A"],
        "rowptr": args["rowptr"],
        "col": args["col"],
        "diag": _indices(diag, args["rowptr"].dtype),
        "N": n,
        "NNZ": args["NNZ"],
    }
    return _rename(out, names, what, prefix)


def gauss_seidel_args(
    A: object,  # noqa: N803
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.gauss_seidel_csr``: ``A, rowptr, col, diag, N, NNZ``.

    ``A`` must be square with every diagonal entry stored and nonzero (after summing
    duplicates), otherwise ``ArgumentError`` names the first bad row; columns come out
    sorted and ``diag[i]`` is the position of ``A[i, i]``, which is what the kernel's
    assumptions say. The caller adds ``x`` (updated in place) and ``b``.

    >>> import numpy as np, scipy.sparse as sp
    >>> args = gauss_seidel_args(sp.csr_array(np.array([[2.0, 1.0], [1.0, 4.0]])))
    >>> args["diag"], args["rowptr"], args["col"]
    (array([0, 3], dtype=int32), array([0, 2, 4], dtype=int32), array([0, 1, 0, 1], dtype=int32))
    """
    return _diag_args(A, index_dtype, names, "gauss_seidel_args", prefix)


def ilu0_args(
    A: object,  # noqa: N803
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``spf.kernels.ilu0_csr``: ``A, rowptr, col, diag, N, NNZ``.

    Same checks and layout as :func:`gauss_seidel_args`; ``args["A"]`` is a fresh copy of the
    values that the kernel overwrites with the factors (``L`` strictly below the diagonal,
    unit diagonal not stored, ``U`` on and above it).

    >>> import numpy as np, scipy.sparse as sp
    >>> import spf.kernels
    >>> args = ilu0_args(sp.csr_array(np.array([[4.0, 2.0], [2.0, 5.0]])))
    >>> spf.kernels.ilu0_csr().interpret(**args)
    >>> args["A"]
    array([4. , 2. , 0.5, 4. ])
    """
    return _diag_args(A, index_dtype, names, "ilu0_args", prefix)


# ============================================================================ matrices to use
def read_matrix_market(path: str | os.PathLike[str]) -> Any:
    """Read a Matrix Market ``.mtx`` file as a canonical ``scipy.sparse.csr_array`` of float64.

    Symmetric / skew / Hermitian storage is expanded and pattern files get the value 1.0
    (``scipy.io.mmread``); values become float64, then duplicates are summed and columns
    sorted. ``.mtx.gz`` / ``.mtx.bz2`` files are decompressed. A file scipy refuses, a complex
    one, one holding a NUL byte or starting with a byte order mark, and one whose size line
    asks for more than half of the machine's memory (rows, entries, or the values of an
    array file; checked on the header, before scipy allocates) raise ``ArgumentError``
    naming the file (and line where there is one). A last line without its newline is read
    (scipy's reader crashed on one that ended in a blank).
    """
    sparse = _scipy()
    io = _scipy("scipy.io")
    if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str):
        raise ArgumentError(
            f"read_matrix_market: expected the path of a .mtx file (a str or pathlib.Path), "
            f"got {type(path).__name__}"
        )
    name = os.fspath(path)
    if not os.path.isfile(name):
        kind = "a directory" if os.path.isdir(name) else "not a regular file"
        raise ArgumentError(
            f"read_matrix_market: {name!r} is {kind}; give a .mtx file"
            if os.path.exists(name)
            else f"read_matrix_market: no such file: {name!r}"
        )
    source = mtx_source(name, "read_matrix_market")  # bytes that crash scipy's reader
    try:
        rows, cols, entries, layout, _, _ = io.mminfo(source)  # sizes before reading
        if not isinstance(source, str):
            source.seek(0)
        check_rows_fit(int(rows), name, "read_matrix_market")
        if layout == "coordinate":  # int64 row and column, a double each
            check_fits(int(entries) * 24, "read_matrix_market",
                       f"{name!r}: the {entries} entries of the size line",
                       "check the size line")  # fmt: skip
        else:  # scipy allocates the dense matrix first
            check_fits(int(rows) * int(cols) * 8, "read_matrix_market",
                       f"{name!r}: {rows} x {cols} dense values (an array file)",
                       "check the size line, or store the matrix as a coordinate file")  # fmt: skip
        try:  # scipy >= 1.15: a sparse array (1.18 warns when spmatrix= is left out)
            raw = io.mmread(source, spmatrix=False)
        except TypeError:
            raw = io.mmread(source)
    except (ValueError, OSError, OverflowError, EOFError) as err:  # Overflow: a value too large
        raise ArgumentError(f"read_matrix_market: cannot read {name!r}: {err}") from err
    if not sparse.issparse(raw):
        raw = sparse.coo_array(np.asarray(raw))
    if np.iscomplexobj(raw.data):
        raise ArgumentError(
            f"read_matrix_market: {name!r} holds complex values; spf's kernels use double: "
            "give a real, integer or pattern file"
        )
    values = np.asarray(raw.data, dtype=np.float64)  # float64 before duplicates are summed
    m = sparse.csr_array(sparse.coo_array((values, (raw.row, raw.col)), shape=raw.shape))
    m.sum_duplicates()
    m.sort_indices()
    return m


def poisson2d(n: int) -> Any:
    """The 5-point 2-D Poisson matrix of an ``nxn`` grid: ``n*n`` rows, CSR (csr_array).

    ``4`` on the diagonal, ``-1`` for each grid neighbour (row-major numbering), columns
    sorted.

    >>> poisson2d(2).toarray()
    array([[ 4., -1., -1.,  0.],
           [-1.,  4.,  0., -1.],
           [-1.,  0.,  4., -1.],
           [ 0., -1., -1.,  4.]])
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ArgumentError(f"poisson2d: n must be a positive int, got {n!r}")
    sparse = _scipy()
    k = int(n)
    tri = sparse.diags_array(
        [-np.ones(k - 1), 2.0 * np.ones(k), -np.ones(k - 1)], offsets=[-1, 0, 1], shape=(k, k)
    )
    eye = sparse.eye_array(k)
    m = sparse.csr_array(sparse.kron(eye, tri) + sparse.kron(tri, eye), dtype=np.float64)
    m.sum_duplicates()
    m.sort_indices()
    return m


# ====================================================================================== tensors
def _array(value: object, what: str, name: str) -> np.ndarray[Any, Any]:
    """``np.asarray(value)``; a ragged list raises ``ArgumentError`` naming ``name``."""
    try:
        return np.asarray(value)
    except ValueError as err:
        raise ArgumentError(
            f"{what}: cannot read {name} as an array ({err}); pass equal-length sequences"
        ) from None


def _tensor_values(values: object, what: str) -> np.ndarray[Any, np.dtype[np.float64]]:
    """``values`` as a 1-d float64 array; complex values refused as :func:`csr_args` does."""
    raw = _array(values, what, "values")
    if np.iscomplexobj(raw):
        raise ArgumentError(f"{what}: complex values are not supported (kernels use double)")
    if raw.dtype.kind not in "biuf":  # strings, None (read as NaN), dates
        raise ArgumentError(
            f"{what}: values must be numbers (bool, int or float), got dtype {raw.dtype}; "
            "convert them, e.g. np.asarray(values, dtype=np.float64)"
        )
    vals = _values(raw)
    if vals.ndim != 1:
        raise ArgumentError(f"{what}: values must be 1-d, got shape {vals.shape}")
    return vals


def _tensor_entries(
    coords: object, values: object, shape: object, what: str
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], tuple[int, ...]]:
    """``(coords[order, nnz] as int64, values[nnz] as float64, shape)``, checked."""
    if not isinstance(shape, (tuple, list)) or not shape:
        raise ArgumentError(f"{what}: shape must be a tuple of extents, got {shape!r}")
    dims: list[int] = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise ArgumentError(f"{what}: extents must be non-negative ints, got {shape!r}")
        dims.append(int(d))
    order = len(dims)
    vals = _tensor_values(values, what)
    c = _array(coords, what, "coords")
    if c.size == 0:
        c = np.zeros((order, 0), dtype=np.int64)
    if c.ndim != 2 or order not in c.shape:
        raise ArgumentError(
            f"{what}: coords must hold one coordinate array per dimension ({order}), "
            f"got shape {c.shape}"
        )
    if c.shape[0] != order:
        c = c.T
    if not np.issubdtype(c.dtype, np.integer):
        raise ArgumentError(f"{what}: coords must be integers, got {c.dtype}")
    if c.shape[1] != len(vals):
        raise ArgumentError(f"{what}: {c.shape[1]} coordinates but {len(vals)} values")
    for d in range(order):  # on the given dtype: a uint64 beyond int64 would wrap
        bad = np.nonzero((c[d] < 0) | (c[d] >= dims[d]))[0]
        if bad.size:
            k = int(bad[0])
            raise ArgumentError(
                f"{what}: entry {k} has coordinate {int(c[d, k])} in dimension {d + 1}, outside "
                f"0..{dims[d] - 1}"
            )
    return c.astype(np.int64), vals, tuple(dims)


def _linear_key(c: np.ndarray[Any, Any], dims: tuple[int, ...]) -> np.ndarray[Any, Any] | None:
    """Each entry's row-major position in a tensor of extents ``dims`` (one int64 whose
    order is the coordinates' lexicographic order), or None where that does not fit in
    int64. ``np.lexsort`` sorts once per dimension; a stable sort of this key gives the same
    order in one (4M entries of a 2000^3 tensor: 0.6 s against 2.4 s)."""
    size = 1
    for extent in dims:
        size *= max(extent, 1)
    if size > np.iinfo(np.int64).max:
        return None
    key: np.ndarray[Any, Any] = c[0].astype(np.int64, copy=True)
    for d in range(1, len(dims)):
        key *= dims[d]
        key += c[d]
    return key


def csf_args(
    coords: object,
    values: object,
    shape: object,
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Arguments of a tensor in ``spf.formats.CSF(order)``: ``A, pos1, crd1, ...,
    pos<order>, crd<order>, N1 .. N<order>, NNZ1 .. NNZ<order-1>, NNZ``.

    ``coords`` holds one coordinate array per dimension (``order x nnz``, as pydata
    ``sparse.COO.coords``; ``nnz x order`` is accepted too, except where ``nnz`` equals the
    order: a square array is read as ``order x nnz``), ``values`` the ``nnz`` values,
    ``shape`` the extents. Entries are sorted lexicographically and duplicates summed.

    >>> import numpy as np
    >>> args = csf_args([[0, 0, 2], [1, 1, 0]], [1.0, 2.0, 5.0], (3, 2))
    >>> args["pos1"], args["crd1"], args["pos2"], args["crd2"], args["A"]
    (array([0, 2], dtype=int32), array([0, 2], dtype=int32), array([0, 1, 2], dtype=int32), \
array([1, 0], dtype=int32), array([3., 5.]))
    """
    c, vals, dims = _tensor_entries(coords, values, shape, "csf_args")
    given = vals  # may be the caller's array: the result's values are a copy of their own
    order = len(dims)
    key = _linear_key(c, dims)
    if key is None:
        perm = np.lexsort(c[::-1]) if c.shape[1] else np.zeros(0, dtype=np.int64)
        c, vals = np.take(c, perm, axis=1), vals[perm]
        new = np.ones(c.shape[1], dtype=bool)
        new[1:] = np.any(c[:, 1:] != c[:, :-1], axis=0)
    else:
        if c.shape[1] and not bool(np.all(key[1:] >= key[:-1])):  # sorted input: no sort
            perm = np.argsort(key, kind="stable")  # lexsort's order, one pass not `order`
            c, vals, key = np.take(c, perm, axis=1), vals[perm], key[perm]
        new = np.ones(c.shape[1], dtype=bool)
        new[1:] = key[1:] != key[:-1]
    starts = np.flatnonzero(new)
    if len(starts) < c.shape[1]:  # duplicates, summed (np.take: 4x c[:, starts] here)
        vals = np.add.reduceat(vals, starts) if len(starts) else vals[:0]
        c = np.take(c, starts, axis=1)
    n = c.shape[1]
    args: dict[str, Any] = {"A": vals.copy() if vals is given else np.ascontiguousarray(vals)}
    dtype = _index_dtype(index_dtype, max(*dims, n, 1), "csf_args")
    parent = np.zeros(1, dtype=np.int64)  # the root: entry 0
    first = np.zeros(n, dtype=bool)
    first[:1] = True
    for level in range(order):
        if n:
            first[1:] |= c[level, 1:] != c[level, :-1]
        nodes = np.flatnonzero(first) if n else np.zeros(0, dtype=np.int64)
        pos = np.searchsorted(nodes, parent) if level else np.zeros(1, dtype=np.int64)
        args[f"pos{level + 1}"] = _indices(np.append(pos, len(nodes)), dtype)
        args[f"crd{level + 1}"] = _indices(c[level, nodes], dtype)
        parent = nodes
    for level, extent in enumerate(dims, 1):
        args[f"N{level}"] = extent
    for level in range(1, order):
        args[f"NNZ{level}"] = len(args[f"crd{level}"])
    args["NNZ"] = n
    return _rename(args, names, "csf_args", prefix)


def coo_tensor_args(
    coords: object,
    values: object,
    shape: object,
    index_dtype: object = None,
    *,
    names: Mapping[str, str | None] | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Arguments of a tensor in ``spf.formats.COO(order)``: ``A, crd1 .. crd<order>,
    N1 .. N<order>, NNZ``; entries keep their order, duplicates are kept (summed by the
    kernels). ``coords`` as for :func:`csf_args`.

    >>> args = coo_tensor_args([[0, 2], [1, 0], [3, 3]], [1.0, 5.0], (3, 2, 4))
    >>> args["crd3"], args["N3"], args["NNZ"]
    (array([3, 3], dtype=int32), 4, 2)
    """
    c, vals, dims = _tensor_entries(coords, values, shape, "coo_tensor_args")
    dtype = _index_dtype(index_dtype, max(*dims, c.shape[1], 1), "coo_tensor_args")
    args: dict[str, Any] = {"A": vals}
    for level in range(len(dims)):
        args[f"crd{level + 1}"] = _indices(c[level], dtype)
    for level, extent in enumerate(dims, 1):
        args[f"N{level}"] = extent
    args["NNZ"] = int(c.shape[1])
    return _rename(args, names, "coo_tensor_args", prefix)

"""What a matrix's sparsity pattern says about the formats that store it well.

:func:`matrix_features` reads a canonical CSR pattern (rows in order, columns sorted within
rows) once with numpy and returns :class:`MatrixFeatures`: row-length statistics, the occupied
diagonals, and, for any block or chunk size, the exact number of slots each padded format
would store (:meth:`MatrixFeatures.stored`), so that :func:`spf.formats.tune` prunes formats
before anything is compiled.

Costs: row lengths and diagonals are O(N + M + NNZ) (``np.diff``, ``np.bincount``); the
number of ``r x c`` blocks (BCSR) and of per-block diagonals (BDIA) sorts one key per entry
with numpy's stable sort, which on these keys (already sorted within each row, rows in block
order) merges ``r`` sorted runs per block row: O(NNZ log r); SELL's chunk widths sort the row
lengths within windows of ``sigma`` rows, O(N log sigma).

>>> import numpy as np, scipy.sparse as sp
>>> f = matrix_features(sp.csr_array(np.array([[1.0, 2.0, 0.0], [0.0, 3.0, 4.0], [0, 0, 5]])))
>>> f.row_max, f.diagonals, f.stored("ELL"), f.stored("DIA"), f.stored("BCSR", 2, 2)
(2, 2, 6, 6, 12)
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

__all__ = ["MatrixFeatures", "matrix_features"]

IntArray = np.ndarray[Any, np.dtype[np.int64]]


@dataclasses.dataclass(frozen=True, eq=False)
class MatrixFeatures:
    """The pattern of an ``n x m`` matrix with ``nnz`` entries (canonical CSR ``indptr``,
    ``indices``) and the statistics read from it."""

    n: int
    m: int
    nnz: int
    row_mean: float
    row_max: int
    row_cv: float
    """Coefficient of variation of the row lengths (standard deviation / mean; 0 if empty)."""
    empty_rows: int
    diagonals: int
    """Occupied diagonals ``j - i``."""
    indptr: IntArray = dataclasses.field(repr=False)
    indices: IntArray = dataclasses.field(repr=False)

    @functools.cached_property
    def rows(self) -> IntArray:
        """The row of each entry."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))

    @functools.cached_property
    def lengths(self) -> IntArray:
        return np.diff(self.indptr)

    @property
    def dia_fill(self) -> float:
        """DIA's stored slots per entry (``diagonals * n / nnz``; 1 for a full band)."""
        return self.stored("DIA") / max(self.nnz, 1)

    def stored(self, family: str, *params: int) -> int:
        """Value slots ``family`` (``"CSR"``, ``"CSC"``, ``"ELL"``, ``"DIA"``, ``"SELL"`` with
        ``C, sigma``, ``"BCSR"`` with ``r, c``, ``"BDIA"`` with ``R``) stores for this
        pattern, padding included (exact)."""
        return _stored(self, family, params)

    def padding(self, family: str, *params: int) -> int:
        """Slots beyond the entries themselves: ``stored(...) - nnz``."""
        return self.stored(family, *params) - self.nnz

    def blocks(self, r: int, c: int) -> int:
        """Occupied ``r x c`` blocks (BCSR's ``NNZB``)."""
        return _distinct_keys((self.rows // r) * (-(-self.m // c)) + self.indices // c)

    def block_diagonals(self, r: int) -> int:
        """Diagonal slots of BDIA(``r``): distinct ``(i // r, j - i)`` pairs (``NS``)."""
        span = self.n + self.m
        return _distinct_keys((self.rows // r) * span + (self.indices - self.rows + self.n))

    def sell_slots(self, c: int, sigma: int) -> tuple[int, int]:
        """``(NV, NC)`` of SELL(``c``, ``sigma``): stored slots and chunks."""
        lengths = self.lengths
        if sigma > 1:
            window = np.arange(self.n) // sigma
            lengths = lengths[np.lexsort((-lengths, window))]
        nc = -(-self.n // c)
        padded = np.zeros(nc * c, dtype=np.int64)
        padded[: self.n] = lengths
        widths = padded.reshape(nc, c).max(axis=1) if nc else padded
        return int(c * widths.sum()), nc


def _distinct_keys(keys: IntArray) -> int:
    if len(keys) == 0:
        return 0
    ordered = np.sort(keys, kind="stable")
    return int(1 + np.count_nonzero(ordered[1:] != ordered[:-1]))


def _stored(f: MatrixFeatures, family: str, params: tuple[int, ...]) -> int:
    if family in ("CSR", "CSC", "COO"):
        return f.nnz
    if family == "ELL":
        return f.n * f.row_max
    if family == "DIA":
        return f.diagonals * f.n
    if family == "SELL":
        return f.sell_slots(params[0], params[1] if len(params) > 1 else 1)[0]
    if family == "BCSR":
        return f.blocks(params[0], params[1]) * params[0] * params[1]
    if family == "BDIA":
        return f.block_diagonals(params[0]) * params[0]
    raise KeyError(family)


def matrix_features(csr: Any) -> MatrixFeatures:
    """The features of a canonical ``scipy.sparse`` CSR matrix (duplicates summed, columns
    sorted; :func:`spf.formats.tune` makes that copy)."""
    n, m = (int(d) for d in csr.shape)
    indptr = np.asarray(csr.indptr, dtype=np.int64)
    nnz = int(indptr[-1]) if len(indptr) else 0
    indices = np.asarray(csr.indices[:nnz], dtype=np.int64)
    lengths = np.diff(indptr)
    mean = nnz / n if n else 0.0
    cv = float(lengths.std() / mean) if n and mean else 0.0
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    occupied = np.bincount(indices - rows + n, minlength=n + m) if nnz else np.zeros(0)
    return MatrixFeatures(
        n=n,
        m=m,
        nnz=nnz,
        row_mean=mean,
        row_max=int(lengths.max()) if n else 0,
        row_cv=cv,
        empty_rows=int(np.count_nonzero(lengths == 0)),
        diagonals=int(np.count_nonzero(occupied)),
        indptr=indptr,
        indices=indices,
    )

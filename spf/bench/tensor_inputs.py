"""The inputs issue 33 names for ``spf bench --only tensor``, deterministic (fixed seeds):

* the 2-D Poisson matrix (``poisson_grid**2`` rows: 1M in a full run), and a second operand
  with its pattern and random values (SpAdd);
* a random ``random_rows``-row matrix (200k in a full run) and a second one (SpAdd, SpGEMM);
* a synthetic power-law 3-D tensor (10M entries in a full run) for MTTKRP, with the
  reference result computed in chunks (no ``nnz x rank`` temporary).

Matrices are CSR (scipy ``csr_array``), columns sorted, int32 indices.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import spf.sparse

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy

TENSOR_NNZ = 10_000_000  # entries of the power-law tensor in a full run (issue 33)
QUICK_TENSOR_NNZ = 10_000
SKEW = 3.0  # coordinate = extent * u**SKEW: density falling as a power of the coordinate
CHUNK = 1 << 20  # entries per step of the MTTKRP reference


def as_int32(a: Any) -> Any:
    """``a`` as a CSR array with sorted columns and int32 indices."""
    a = sp.csr_array(a)
    a.sum_duplicates()
    a.sort_indices()
    a.indptr, a.indices = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    return a


def random_csr(n: int, m: int, nnz: int, seed: int) -> Any:
    """A random ``n x m`` CSR matrix with about ``nnz`` entries, columns sorted, int32."""
    rng = np.random.default_rng(seed)
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, m, nnz)
    return as_int32(sp.csr_array((rng.random(nnz), (rows, cols)), shape=(n, m)))


def poisson_pair(grid: int) -> tuple[Any, Any]:
    """The 5-point Poisson matrix of a ``grid x grid`` mesh, and one with its pattern and
    random values (two operators on the same mesh, as SpAdd meets them)."""
    a = as_int32(spf.sparse.poisson2d(grid))
    b = a.copy()
    b.data = np.random.default_rng(7).random(b.nnz)
    return a, b


def power_law_tensor(nnz: int, seed: int = 8) -> tuple[np.ndarray[Any, Any], Any, tuple[int, ...]]:
    """``(coords[3, nnz], values, shape)`` of a 3-D tensor whose coordinates follow a power
    law in each mode (a few heavy slices and fibers, a long tail; each mode's labels
    shuffled), duplicates left in (``csf_args`` sums them). Runs in seconds at 10M entries."""
    n = max(nnz // 10, 8)
    shape = (n, max(n // 2, 4), max(n // 4, 2))
    rng = np.random.default_rng(seed)
    coords = np.empty((3, nnz), dtype=np.int64)
    for mode, extent in enumerate(shape):
        heavy = (extent * rng.random(nnz) ** SKEW).astype(np.int64)
        coords[mode] = rng.permutation(extent)[heavy]
    return coords, rng.random(nnz), shape


def mttkrp_reference(args: dict[str, Any], shape: tuple[int, ...], c: Any, d: Any) -> Any:
    """``A(i,j) = sum_{k,l} B(i,k,l) C(k,j) D(l,j)`` from ``B``'s CSF arrays (prefix ``B_``),
    by numpy and scipy in chunks of entries (a row-selection matrix times the entries'
    ``C ⊙ D`` rows)."""
    crd1, pos2, crd2, pos3, crd3 = (
        args[f"B_{x}"].astype(np.int64) for x in ("crd1", "pos2", "crd2", "pos3", "crd3")
    )
    nnz = len(crd3)
    fiber = np.repeat(np.arange(len(crd2)), np.diff(pos3))  # entry -> its (i,k) fiber
    rows = crd1[np.repeat(np.arange(len(crd1)), np.diff(pos2))][fiber]
    ks = crd2[fiber]
    out = np.zeros((shape[0], c.shape[1]))
    for lo in range(0, nnz, CHUNK):
        hi = min(lo + CHUNK, nnz)
        pick = sp.csr_array(
            (args["B"][lo:hi], (rows[lo:hi], np.arange(hi - lo))), shape=(shape[0], hi - lo)
        )
        out += pick @ (c[ks[lo:hi]] * d[crd3[lo:hi]])
    return out

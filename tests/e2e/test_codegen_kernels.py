"""End to end: every ready-made kernel (API.md section 9) generated, compiled and run.

Each kernel of ``spf.kernels`` is compiled once per index dtype (a session-scoped cache dir
keeps the run hermetic) and called on random inputs against numpy / scipy: empty rows, empty
matrices (``NNZ = 0``), one row, odd sizes, ``int32`` and ``int64`` index arrays, unsorted
column indices where the kernel allows them, COO duplicates, BCSR padding; then on the real
SuiteSparse matrices (skipped when the shared folder is absent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from spf import SpfError, kernels
from spf.sparse import (
    bcsr_args,
    coo_args,
    csc_args,
    csr_args,
    poisson2d,
    read_matrix_market,
    spmm_args,
    sptrsv_args,
)
from spf.testing import random_csr

if TYPE_CHECKING:
    from pathlib import Path

    from spf import Computation
    from spf.runtime import Kernel

Array = np.ndarray[Any, Any]
INDEX_DTYPES = ["int32", "int64"]

FACTORIES: dict[str, Callable[[str], Computation]] = {
    "dense_mv": lambda _dt: kernels.dense_mv(),
    "gemm": lambda _dt: kernels.gemm(),
    "spmv_csr": lambda dt: kernels.spmv_csr(index_dtype=dt),
    "spmv_coo": lambda dt: kernels.spmv_coo(index_dtype=dt),
    "spmv_csc": lambda dt: kernels.spmv_csc(index_dtype=dt),
    "spmv_bcsr_2x3": lambda dt: kernels.spmv_bcsr(2, 3, index_dtype=dt),
    "spmv_bcsr_1x1": lambda dt: kernels.spmv_bcsr(1, 1, index_dtype=dt),
    "sptrsv_csr": lambda dt: kernels.sptrsv_csr(index_dtype=dt),
    "spmm_csr": lambda dt: kernels.spmm_csr(index_dtype=dt),
    "blur2d": lambda _dt: kernels.blur2d(),
    "jacobi2d": lambda _dt: kernels.jacobi2d(),
}


class KernelCache:
    """Compiles each (kernel, index dtype) once per session into a private cache dir."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self._kernels: dict[tuple[str, str], Kernel] = {}

    def __call__(self, name: str, index_dtype: str = "int32") -> Kernel:
        key = (name, index_dtype)
        if key not in self._kernels:
            comp = FACTORIES[name](index_dtype)
            self._kernels[key] = comp.compile(cache_dir=str(self.cache_dir))
        return self._kernels[key]


@pytest.fixture(scope="session")
def spf_cache_dir(shared_cache: Path) -> Path:
    return shared_cache


@pytest.fixture(scope="session")
def kernel(spf_cache_dir: Path) -> KernelCache:
    return KernelCache(spf_cache_dir)


# ================================================================================= inputs
def random_sparse(seed: int, n: int, m: int, density: float, *, empty_rows: bool = True) -> Any:
    """A random ``n x m`` CSR matrix; with ``empty_rows`` every third row is emptied."""
    return random_csr(n, m, density, rng=seed, empty_rows=range(1, n, 3) if empty_rows else 0)


# (name, rows, cols, density): empty rows, the empty matrix, one row, odd sizes, dense-ish
MATRICES = [
    ("empty_rows", 23, 17, 0.25),
    ("nnz0", 5, 4, 0.0),
    ("one_row", 1, 9, 0.6),
    ("one_col", 7, 1, 0.5),
    ("odd", 31, 13, 0.4),
    ("dense", 6, 5, 1.0),
    ("one_by_one", 1, 1, 1.0),
]
MATRIX_IDS = [case[0] for case in MATRICES]


def matrix_case(case: tuple[str, int, int, float]) -> Any:
    name, n, m, density = case
    return random_sparse(len(name) * 1000 + n * 31 + m, n, m, density)


def shuffle_compressed(args: dict[str, Any], ptr: str, idx: str, seed: int) -> dict[str, Any]:
    """Permute the entries inside each compressed row/column: unsorted indices, same matrix."""
    rng = np.random.default_rng(seed)
    p = args[ptr]
    order = np.concatenate(
        [
            np.arange(p[r], p[r + 1])[rng.permutation(int(p[r + 1] - p[r]))]
            for r in range(len(p) - 1)
        ]
        + [np.zeros(0, dtype=np.int64)]
    ).astype(np.int64)
    out = dict(args)
    out[idx] = np.ascontiguousarray(args[idx][order])
    out["A"] = np.ascontiguousarray(args["A"][order])
    return out


def is_unsorted(ptr: Array, idx: Array) -> bool:
    return any(np.any(np.diff(idx[ptr[r] : ptr[r + 1]]) < 0) for r in range(len(ptr) - 1))


def close(got: Array, want: Array) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ================================================================================== dense
@pytest.mark.parametrize(("n", "m"), [(1, 1), (3, 5), (7, 2), (16, 16), (0, 3), (4, 0)])
def test_dense_mv(kernel: KernelCache, n: int, m: int) -> None:
    rng = np.random.default_rng(n * 10 + m)
    A, x, y = rng.random((n, m)), rng.random(m), rng.random(n)
    want = y + A @ x
    kernel("dense_mv")(y=y, A=A, x=x)  # N, M inferred from the shapes
    close(y, want)


def test_dense_mv_explicit_parameters(kernel: KernelCache) -> None:
    rng = np.random.default_rng(5)
    A, x, y = rng.random((3, 4)), rng.random(4), np.zeros(3)
    kernel("dense_mv")(y=y, A=A, x=x, N=3, M=4)
    close(y, A @ x)


@pytest.mark.parametrize(
    ("n", "m", "k"), [(1, 1, 1), (3, 5, 7), (8, 1, 3), (9, 11, 2), (0, 2, 2), (2, 3, 0)]
)
def test_gemm(kernel: KernelCache, n: int, m: int, k: int) -> None:
    rng = np.random.default_rng(n * 100 + m * 10 + k)
    A, B, C = rng.random((n, k)), rng.random((k, m)), rng.random((n, m))
    want = C + A @ B
    kernel("gemm")(C=C, A=A, B=B)
    close(C, want)


# ================================================================================== sparse
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("case", MATRICES, ids=MATRIX_IDS)
def test_spmv_csr(kernel: KernelCache, case: tuple[str, int, int, float], index_dtype: str) -> None:
    a = matrix_case(case)
    rng = np.random.default_rng(1)
    x, y = rng.random(a.shape[1]), rng.random(a.shape[0])
    want = y + a @ x
    args = csr_args(a, index_dtype=index_dtype)
    assert args["rowptr"].dtype == np.dtype(index_dtype)
    kernel("spmv_csr", index_dtype)(y=y, x=x, **args)
    close(y, want)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_spmv_csr_unsorted_columns(kernel: KernelCache, index_dtype: str) -> None:
    a = random_sparse(7, 19, 23, 0.5)
    args = shuffle_compressed(csr_args(a, index_dtype=index_dtype), "rowptr", "col", 7)
    assert is_unsorted(args["rowptr"], args["col"])
    rng = np.random.default_rng(2)
    x, y = rng.random(23), rng.random(19)
    want = y + a @ x
    kernel("spmv_csr", index_dtype)(y=y, x=x, **args)
    close(y, want)


def test_spmv_csr_zero_rows(kernel: KernelCache) -> None:
    """A 0 x 5 matrix: rowptr = [0], nothing runs, nothing is written."""
    args = csr_args(sp.csr_array((0, 5)))
    y = np.zeros(0)
    kernel("spmv_csr")(y=y, x=np.ones(5), **args)
    assert y.shape == (0,)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("case", MATRICES, ids=MATRIX_IDS)
def test_spmv_coo(kernel: KernelCache, case: tuple[str, int, int, float], index_dtype: str) -> None:
    """Entries in random order, with duplicates (the kernel sums them)."""
    a = matrix_case(case).tocoo()
    rng = np.random.default_rng(3)
    order = rng.permutation(a.nnz)
    dup = order[: a.nnz // 3]  # a third of the entries stored twice, as two halves
    half = np.where(np.isin(order, dup), 0.5, 1.0)
    row = np.concatenate([a.row[order], a.row[dup]])
    col = np.concatenate([a.col[order], a.col[dup]])
    val = np.concatenate([a.data[order] * half, a.data[dup] * 0.5])
    shuffled = sp.coo_array((val, (row, col)), shape=a.shape)
    args = coo_args(shuffled, index_dtype=index_dtype)
    assert args["NNZ"] == a.nnz + len(dup)
    x, y = rng.random(a.shape[1]), rng.random(a.shape[0])
    want = y + a.tocsr() @ x
    kernel("spmv_coo", index_dtype)(y=y, x=x, **args)
    close(y, want)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("case", MATRICES, ids=MATRIX_IDS)
def test_spmv_csc(kernel: KernelCache, case: tuple[str, int, int, float], index_dtype: str) -> None:
    a = matrix_case(case)
    rng = np.random.default_rng(4)
    x, y = rng.random(a.shape[1]), rng.random(a.shape[0])
    want = y + a @ x
    kernel("spmv_csc", index_dtype)(y=y, x=x, **csc_args(a, index_dtype=index_dtype))
    close(y, want)


def test_spmv_csc_unsorted_rows(kernel: KernelCache) -> None:
    a = random_sparse(8, 21, 14, 0.5)
    args = shuffle_compressed(csc_args(a), "colptr", "row", 8)
    assert is_unsorted(args["colptr"], args["row"])
    rng = np.random.default_rng(5)
    x, y = rng.random(14), rng.random(21)
    want = y + a @ x
    kernel("spmv_csc")(y=y, x=x, **args)
    close(y, want)


def run_bcsr(kernel: KernelCache, a: Any, r: int, c: int, args: dict[str, Any], dt: str) -> None:
    n, m = a.shape
    nb, mb = args["NB"], args["MB"]
    assert (nb, mb) == (-(-n // r), -(-m // c))
    rng = np.random.default_rng(n + m)
    x = rng.random(mb * c)  # the padding of x only meets zero-padded block entries
    y = rng.random(nb * r)
    want = y.copy()
    want[:n] += a @ x[:m]
    kernel(f"spmv_bcsr_{r}x{c}", dt)(y=y, x=x, **args)
    close(y, want)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("case", MATRICES, ids=MATRIX_IDS)
@pytest.mark.parametrize(("r", "c"), [(2, 3), (1, 1)])
def test_spmv_bcsr(
    kernel: KernelCache, r: int, c: int, case: tuple[str, int, int, float], index_dtype: str
) -> None:
    a = matrix_case(case)
    run_bcsr(kernel, a, r, c, bcsr_args(a, r, c, index_dtype=index_dtype), index_dtype)


@pytest.mark.parametrize(("r", "c"), [(2, 3), (1, 1)])
def test_spmv_bcsr_unsorted_blocks(kernel: KernelCache, r: int, c: int) -> None:
    """Blocks of a block row in random order (block data moves with its bcol entry)."""
    a = random_sparse(9, 17, 20, 0.3, empty_rows=False)
    args = bcsr_args(a, r, c)
    rng = np.random.default_rng(9)
    ptr, size = args["browptr"], r * c
    order = np.concatenate(
        [
            np.arange(ptr[i], ptr[i + 1])[rng.permutation(int(ptr[i + 1] - ptr[i]))]
            for i in range(len(ptr) - 1)
        ]
    ).astype(np.int64)
    blocks = args["A"].reshape(-1, size)
    args = {**args, "bcol": np.ascontiguousarray(args["bcol"][order])}
    args["A"] = np.ascontiguousarray(blocks[order].reshape(-1))
    assert is_unsorted(ptr, args["bcol"])
    run_bcsr(kernel, a, r, c, args, "int32")


def lower_triangular(seed: int, n: int, density: float) -> Any:
    rng = np.random.default_rng(seed)
    strict = sp.tril(sp.random_array((n, n), density=density, rng=rng), k=-1)
    diag = sp.diags_array(rng.uniform(1.0, 2.0, n) * np.where(rng.random(n) < 0.5, -1, 1))
    return sp.csr_array(strict + diag)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize(
    ("n", "density"), [(1, 0.0), (2, 1.0), (9, 0.0), (17, 0.3), (40, 0.1), (25, 1.0)]
)
def test_sptrsv_csr(kernel: KernelCache, n: int, density: float, index_dtype: str) -> None:
    L = lower_triangular(n * 7, n, density)
    f = np.random.default_rng(n).uniform(-1.0, 1.0, n)
    want = spla.spsolve_triangular(L.tocsr(), f, lower=True)
    u = np.full(n, np.nan)  # fully overwritten
    kernel("sptrsv_csr", index_dtype)(u=u, f=f, **sptrsv_args(L, index_dtype=index_dtype))
    np.testing.assert_allclose(u, want, rtol=1e-10, atol=1e-12)


def test_sptrsv_csr_poisson(kernel: KernelCache) -> None:
    """The lower triangle of the 2-D Poisson matrix (the classic forward-solve input)."""
    L = sp.csr_array(sp.tril(poisson2d(7)))
    f = np.random.default_rng(0).random(49)
    u = np.zeros(49)
    kernel("sptrsv_csr")(u=u, f=f, **sptrsv_args(L))
    np.testing.assert_allclose(u, spla.spsolve_triangular(L, f, lower=True), rtol=1e-10)


def test_sptrsv_csr_empty(kernel: KernelCache) -> None:
    u = np.zeros(0)
    kernel("sptrsv_csr")(u=u, f=np.zeros(0), **sptrsv_args(sp.csr_array((0, 0))))
    assert u.shape == (0,)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("case", MATRICES, ids=MATRIX_IDS)
@pytest.mark.parametrize("k", [1, 3])
def test_spmm_csr(
    kernel: KernelCache, k: int, case: tuple[str, int, int, float], index_dtype: str
) -> None:
    a = matrix_case(case)
    n, m = a.shape
    rng = np.random.default_rng(k)
    B, C = rng.random((m, k)), rng.random((n, k))
    want = C + a @ B
    kernel("spmm_csr", index_dtype)(C=C, B=B, **spmm_args(a, index_dtype=index_dtype))
    close(C, want)


def test_spmm_csr_unsorted_columns(kernel: KernelCache) -> None:
    a = random_sparse(11, 13, 10, 0.6)
    args = shuffle_compressed(spmm_args(a), "rowptr", "col", 11)
    assert is_unsorted(args["rowptr"], args["col"])
    rng = np.random.default_rng(11)
    B, C = rng.random((10, 4)), rng.random((13, 4))
    want = C + a @ B
    kernel("spmm_csr")(C=C, B=B, **args, K=4)
    close(C, want)


# ================================================================================ stencils
@pytest.mark.parametrize(("n", "m"), [(3, 3), (5, 8), (9, 4), (17, 13), (3, 30)])
def test_blur2d(kernel: KernelCache, n: int, m: int) -> None:
    img = np.random.default_rng(n * m).random((n, m))
    bx_want = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3.0
    out_want = (bx_want[:-2] + bx_want[1:-1] + bx_want[2:]) / 3.0
    out, bx = np.full((n - 2, m - 2), np.nan), np.full((n, m - 2), np.nan)
    kernel("blur2d")(out=out, bx=bx, img=img)
    close(bx, bx_want)
    close(out, out_want)


@pytest.mark.parametrize("n", [2, 3, 4, 9, 16])
def test_jacobi2d(kernel: KernelCache, n: int) -> None:
    A = np.random.default_rng(n).random((n, n))
    B = np.full((n, n), -7.0)
    want = B.copy()
    want[1:-1, 1:-1] = 0.2 * (
        A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
    )
    kernel("jacobi2d")(B=B, A=A)
    close(B, want)  # the border keeps its -7


# ============================================================================ SuiteSparse
@pytest.fixture(scope="session")
def suitesparse(suitesparse_dir: Path) -> dict[str, Any]:
    """Every ``.mtx`` scipy can read, by file name (unreadable ones are left out)."""
    out: dict[str, Any] = {}
    for path in sorted(suitesparse_dir.glob("*.mtx")):
        try:
            out[path.name] = read_matrix_market(path)
        except SpfError:
            continue
    if not out:
        pytest.skip(f"no readable .mtx file in {suitesparse_dir}")
    return out


def rel_close(got: Array, want: Array, a: Any, x: Array) -> None:
    """Sums of many terms in another order: tolerance from the magnitudes summed."""
    scale = abs(a) @ np.abs(x) + 1.0
    assert np.all(np.abs(got - want) <= 1e-12 * scale), np.max(np.abs(got - want) / scale)


def test_spmv_csr_suitesparse(kernel: KernelCache, suitesparse: dict[str, Any]) -> None:
    failed = []
    for name, a in suitesparse.items():
        rng = np.random.default_rng(len(name))
        x, y = rng.uniform(-1, 1, a.shape[1]), rng.uniform(-1, 1, a.shape[0])
        want = y + a @ x
        kernel("spmv_csr")(y=y, x=x, **csr_args(a))
        if not np.all(np.abs(y - want) <= 1e-12 * (abs(a) @ np.abs(x) + 1.0)):
            failed.append(name)
    assert not failed, f"spmv_csr differs from scipy on {failed}"


SOME = ["LFAT5_hypersparse.mtx", "lp_afiro.mtx", "west0067.mtx", "cryg2500.mtx", "arrow.mtx"]


@pytest.mark.parametrize("name", SOME)
def test_spmv_csc_suitesparse(kernel: KernelCache, suitesparse: dict[str, Any], name: str) -> None:
    if name not in suitesparse:
        pytest.skip(f"{name} is absent or unreadable")
    a = suitesparse[name]
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1, 1, a.shape[1]), rng.uniform(-1, 1, a.shape[0])
    want = y + a @ x
    kernel("spmv_csc", "int64")(y=y, x=x, **csc_args(a, index_dtype="int64"))
    rel_close(y, want, a, x)


@pytest.mark.parametrize("name", SOME)
def test_spmv_coo_suitesparse(kernel: KernelCache, suitesparse: dict[str, Any], name: str) -> None:
    if name not in suitesparse:
        pytest.skip(f"{name} is absent or unreadable")
    a = suitesparse[name].tocoo()
    order = np.random.default_rng(1).permutation(a.nnz)
    shuffled = sp.coo_array((a.data[order], (a.row[order], a.col[order])), shape=a.shape)
    rng = np.random.default_rng(2)
    x, y = rng.uniform(-1, 1, a.shape[1]), rng.uniform(-1, 1, a.shape[0])
    want = y + a.tocsr() @ x
    kernel("spmv_coo")(y=y, x=x, **coo_args(shuffled))
    rel_close(y, want, a, x)

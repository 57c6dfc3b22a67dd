"""End to end: ``spf.kernels.gauss_seidel_csr`` and ``ilu0_csr`` with ``spf.sparse``'s
argument helpers, compiled (assumptions checked on every call) and interpreted, against
straightforward Python references on random and SuiteSparse matrices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import ArgumentError
from spf.sparse import gauss_seidel_args, ilu0_args, read_matrix_market

if TYPE_CHECKING:
    from pathlib import Path

INDEX_DTYPES = ("int32", "int64")
GS_SUITESPARSE = ["cryg2500.mtx", "bcsstk13.mtx", "jagmesh7.mtx", "arrow.mtx"]
ILU0_SUITESPARSE = ["olm1000.mtx", "cryg2500.mtx", "bcsstk13.mtx"]
"""The square SuiteSparse matrices of the shared set with every diagonal entry nonzero, where
the operation stays finite: one GS sweep overflows on olm1000 (tiny diagonal), ILU0's pivots
vanish on the pattern matrix jagmesh7, and arrow's dense row makes the ILU0 reference slow."""


# ================================================================================ references
def gauss_seidel_reference(a: sps.csr_array, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """One forward sweep, row by row: ``x[i] = (b[i] - sum_{j != i} a_ij x[j]) / a_ii``."""
    x = x.copy()
    for i in range(a.shape[0]):
        start, end = a.indptr[i], a.indptr[i + 1]
        s, d = b[i], 0.0
        for k in range(start, end):
            j = a.indices[k]
            if j == i:
                d = a.data[k]
            else:
                s -= a.data[k] * x[j]
        x[i] = s / d
    return x


def ilu0_reference(a: sps.csr_array) -> np.ndarray:
    """ILU(0) (IKJ) on the pattern of ``a``: the factor values in ``a``'s storage order."""
    n = a.shape[0]
    rows = [
        dict(
            zip(
                a.indices[a.indptr[i] : a.indptr[i + 1]].tolist(),
                a.data[a.indptr[i] : a.indptr[i + 1]].tolist(),
                strict=True,
            )
        )
        for i in range(n)
    ]
    for i in range(n):
        row = rows[i]
        for c in sorted(row):
            if c >= i:
                break
            row[c] /= rows[c][c]
            for j, v in rows[c].items():
                if j > c and j in row:
                    row[j] -= row[c] * v
    return np.array(
        [rows[i][int(j)] for i in range(n) for j in a.indices[a.indptr[i] : a.indptr[i + 1]]]
    )


# ================================================================================== matrices
def random_matrix(n: int, density: float, seed: int) -> sps.csr_array:
    """A random square matrix with a dominant diagonal (so GS and ILU0 are well defined)."""
    rng = np.random.default_rng(seed)
    m = sps.random_array((n, n), density=density, rng=rng, format="csr")
    m = m + sps.diags_array(2.0 + rng.random(n) * n * density)
    return sps.csr_array(m)


RANDOM = [(1, 1.0), (2, 0.5), (7, 0.3), (33, 0.1), (101, 0.05), (250, 0.0)]


@pytest.fixture(scope="module", params=INDEX_DTYPES)
def gs(request: pytest.FixtureRequest) -> tuple[str, spf.Kernel]:
    dtype = str(request.param)
    return dtype, spf.kernels.gauss_seidel_csr(index_dtype=dtype).compile()


@pytest.fixture(scope="module", params=INDEX_DTYPES)
def ilu0(request: pytest.FixtureRequest) -> tuple[str, spf.Kernel]:
    dtype = str(request.param)
    return dtype, spf.kernels.ilu0_csr(index_dtype=dtype).compile()


def _sweep(kernel: spf.Kernel, m: Any, dtype: str, seed: int = 1) -> None:
    a = sps.csr_array(m)
    a.sum_duplicates()
    a.sort_indices()
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(a.shape[0])
    x0 = rng.standard_normal(a.shape[0])
    x = x0.copy()
    args = gauss_seidel_args(a, index_dtype=dtype)
    assert args["rowptr"].dtype == np.dtype(dtype)
    assert args["diag"].dtype == np.dtype(dtype)
    kernel(x=x, b=b, **args)
    want = gauss_seidel_reference(a, b, x0)
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(x, want, rtol=1e-10, atol=1e-10 * scale)


def _factor(kernel: spf.Kernel, m: Any, dtype: str) -> None:
    a = sps.csr_array(m)
    a.sum_duplicates()
    a.sort_indices()
    args = ilu0_args(a, index_dtype=dtype)
    before = args["A"].copy()
    kernel(**args)
    want = ilu0_reference(a)
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(args["A"], want, rtol=1e-10, atol=1e-10 * scale)
    np.testing.assert_array_equal(a.data, before)  # the helper copied the values


# ============================================================================= Gauss-Seidel
@pytest.mark.parametrize(("n", "density"), RANDOM)
def test_gauss_seidel_random(gs: tuple[str, spf.Kernel], n: int, density: float) -> None:
    dtype, kernel = gs
    _sweep(kernel, random_matrix(n, density, seed=n), dtype)


def test_gauss_seidel_converges_on_poisson(gs: tuple[str, spf.Kernel]) -> None:
    dtype, kernel = gs
    a = spf.sparse.poisson2d(6)
    b = np.ones(a.shape[0])
    x = np.zeros(a.shape[0])
    args = gauss_seidel_args(a, index_dtype=dtype)
    for _ in range(300):
        kernel(x=x, b=b, **args)
    np.testing.assert_allclose(a @ x, b, atol=1e-8)


def test_gauss_seidel_interpreted_equals_compiled() -> None:
    a = random_matrix(9, 0.3, seed=4)
    b = np.arange(9.0)
    x1, x2 = np.ones(9), np.ones(9)
    spf.kernels.gauss_seidel_csr().interpret(x=x1, b=b, **gauss_seidel_args(a))
    spf.kernels.gauss_seidel_csr().compile()(x=x2, b=b, **gauss_seidel_args(a))
    np.testing.assert_allclose(x1, x2, rtol=1e-14)
    np.testing.assert_allclose(x1, gauss_seidel_reference(a, b, np.ones(9)), rtol=1e-12)


# ===================================================================================== ILU0
@pytest.mark.parametrize(("n", "density"), RANDOM)
def test_ilu0_random(ilu0: tuple[str, spf.Kernel], n: int, density: float) -> None:
    dtype, kernel = ilu0
    _factor(kernel, random_matrix(n, density, seed=n + 100), dtype)


def test_ilu0_is_exact_without_fill(ilu0: tuple[str, spf.Kernel]) -> None:
    """A tridiagonal matrix has no fill-in: ``L·U`` reproduces it exactly."""
    dtype, kernel = ilu0
    n = 11
    a = sps.csr_array(sps.diags_array([-1.0, 4.0, -2.0], offsets=[-1, 0, 1], shape=(n, n)))
    args = ilu0_args(a, index_dtype=dtype)
    kernel(**args)
    f = sps.csr_array((args["A"], args["col"], args["rowptr"]), shape=(n, n))
    lower = sps.tril(f, -1) + sps.eye_array(n)
    upper = sps.triu(f)
    np.testing.assert_allclose((lower @ upper).toarray(), a.toarray(), atol=1e-12)


def test_ilu0_matches_on_the_pattern() -> None:
    """On every stored entry ``(L·U)[i, j] = A[i, j]`` (fill outside the pattern dropped)."""
    a = random_matrix(40, 0.15, seed=7)
    args = ilu0_args(a)
    spf.kernels.ilu0_csr().compile()(**args)
    f = sps.csr_array((args["A"], args["col"], args["rowptr"]), shape=a.shape)
    lu = (sps.tril(f, -1) + sps.eye_array(40)) @ sps.triu(f)
    rows, cols = a.nonzero()
    np.testing.assert_allclose(lu.toarray()[rows, cols], a.toarray()[rows, cols], rtol=1e-10)


def test_ilu0_interpreted() -> None:
    a = random_matrix(12, 0.3, seed=3)
    args = ilu0_args(a)
    spf.kernels.ilu0_csr().interpret(**args)
    np.testing.assert_allclose(args["A"], ilu0_reference(a), rtol=1e-12)


# ============================================================================ real matrices
def _mtx(suitesparse_dir: Path, name: str) -> Any:
    path = suitesparse_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return read_matrix_market(path)


@pytest.mark.parametrize("name", GS_SUITESPARSE)
def test_gauss_seidel_suitesparse(
    suitesparse_dir: Path, name: str, gs: tuple[str, spf.Kernel]
) -> None:
    _sweep(gs[1], _mtx(suitesparse_dir, name), gs[0])


@pytest.mark.parametrize("name", ILU0_SUITESPARSE)
def test_ilu0_suitesparse(suitesparse_dir: Path, name: str, ilu0: tuple[str, spf.Kernel]) -> None:
    _factor(ilu0[1], _mtx(suitesparse_dir, name), ilu0[0])


# =============================================================================== bad input
@pytest.mark.parametrize("helper", [gauss_seidel_args, ilu0_args])
def test_helpers_refuse_bad_matrices(helper: Any) -> None:
    name = helper.__name__
    with pytest.raises(ArgumentError, match=f"{name}: the matrix must be square"):
        helper(np.ones((2, 3)))
    with pytest.raises(ArgumentError, match=rf"{name}: diagonal entry A\[1, 1\] is not stored"):
        helper(np.array([[1.0, 0.0], [1.0, 0.0]]))
    zero = sps.csr_array((np.array([1.0, 0.0]), np.array([0, 1]), np.array([0, 1, 2])))
    with pytest.raises(ArgumentError, match=rf"{name}: diagonal entry A\[1, 1\] is zero"):
        helper(zero)
    with pytest.raises(ArgumentError, match="index_dtype"):
        helper(np.eye(2), index_dtype="int16")
    renamed = helper(np.eye(2), names={"diag": "dp", "A": "vals"})
    assert sorted(renamed) == ["N", "NNZ", "col", "dp", "rowptr", "vals"]


def test_kernels_check_their_assumptions(gs: tuple[str, spf.Kernel]) -> None:
    dtype, kernel = gs
    a = random_matrix(5, 0.5, seed=2)
    args = gauss_seidel_args(a, index_dtype=dtype)
    args["diag"] = args["diag"].copy()
    args["diag"][3] = (
        args["rowptr"][3] if args["diag"][3] != args["rowptr"][3] else (args["rowptr"][4] - 1)
    )
    with pytest.raises(ArgumentError, match="col\\(diag\\(i\\)\\) = i"):
        kernel(x=np.zeros(5), b=np.ones(5), **args)


def test_unsorted_columns_are_refused() -> None:
    a = random_matrix(6, 0.6, seed=5)
    args = ilu0_args(a)
    k = int(args["rowptr"][2])
    args["col"] = args["col"].copy()
    args["A"] = args["A"].copy()
    args["col"][[k, k + 1]] = args["col"][[k + 1, k]]
    with pytest.raises(ArgumentError, match="assumption"):
        spf.kernels.ilu0_csr().compile()(**args)


def test_kernels_carry_the_assumptions() -> None:
    for comp in (spf.kernels.gauss_seidel_csr(), spf.kernels.ilu0_csr()):
        texts = [f.text for f in comp.assumptions]
        assert "forall i: rowptr(i) <= diag(i) < rowptr(i+1)" in texts
        assert "forall i: col(diag(i)) = i" in texts
        assert comp.ufs["diag"].monotonic == "increasing"


def test_empty_matrix() -> None:
    empty = sps.csr_array((0, 0))
    x = np.zeros(0)
    spf.kernels.gauss_seidel_csr().compile()(x=x, b=np.zeros(0), **gauss_seidel_args(empty))
    args = ilu0_args(empty)
    spf.kernels.ilu0_csr().compile()(**args)
    assert args["A"].size == 0


@pytest.mark.parametrize("factory", [spf.kernels.gauss_seidel_csr, spf.kernels.ilu0_csr])
def test_row_loop_is_not_parallel(factory: Any) -> None:
    """Both kernels carry dependences on the row loop: parallelizing it is refused."""
    comp = factory()
    comp.stmt(0).parallelize("i")
    with pytest.raises(spf.IllegalScheduleError, match="loop 'i' of s0 cannot run in parallel"):
        comp.check_legality()


@pytest.mark.parametrize("factory", [spf.kernels.gauss_seidel_csr, spf.kernels.ilu0_csr])
def test_json_round_trip_keeps_the_assumptions(factory: Any) -> None:
    comp = factory(index_dtype="int64")
    back = spf.Computation.from_json(comp.to_json())
    assert back.assumptions == comp.assumptions
    assert back.codegen() == comp.codegen()
    assert "const int64_t *restrict diag" in back.codegen()


def test_ilu0_dependences_are_those_of_pldi19() -> None:
    """Only ``s1`` (the row update) carries dependences across rows; ``s0`` of one row
    touches no entry ``s0``/``s1`` of another row touches (co-monotonicity of ``diag`` and
    ``rowptr``, derived from the assumptions)."""
    deps = spf.kernels.ilu0_csr().dependences()
    across = sorted((d.kind, d.source, d.sink) for d in deps if "i" in d.carried_by)
    assert across == [("flow", "s1", "s0"), ("flow", "s1", "s1")]
    assert len(deps) == 7

"""spf.einsum kernels run against numpy (dense reference) and pydata ``sparse``
(``sparse.einsum``) on random tensors with empty fibers, duplicates in COO input, int32 and
int64 index arrays: SpMV, SpMM, SpAdd (CSR + CSR -> CSR), SpGEMM (CSR · CSR -> CSR), SDDMM,
TTV, TTM, MTTKRP, the inner product of a sparse and a dense vector; and the products of
two sparse operands sharing an index, scanned as an intersection merge (the inner product
of two sparse vectors, CSR * CSR elementwise, SDDMM with sparse factors). Each formula is
compiled once per index type (module cache)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp
import sparse

import spf
from spf.formats import COO, CSC, CSF, CSR
from spf.sparse import coo_tensor_args, csf_args, csr_args, format_args, read_matrix_market

if TYPE_CHECKING:
    from pathlib import Path

_KERNELS: dict[tuple[str, str, str], Any] = {}


def _kernel(text: str, dtype: str = "int32", **formats: spf.Format) -> Any:
    key = (text, repr(sorted((k, v.name) for k, v in formats.items())), dtype)
    if key not in _KERNELS:
        _KERNELS[key] = spf.einsum(text, index_dtype=dtype, **formats).compile()
    return _KERNELS[key]


def _matrix(n: int, m: int, density: float, seed: int) -> sp.csr_array:
    """A random CSR matrix with every third row empty (when it has rows)."""
    a = sp.random_array((n, m), density=density, format="csr", rng=seed)
    keep = (np.arange(n) % 3 != 1).astype(float)
    out = sp.csr_array(sp.diags_array(keep) @ a) if n else sp.csr_array((n, m))
    out.sort_indices()
    return out


MATRICES = [(40, 30, 0.1), (1, 9, 0.5), (17, 1, 0.4), (0, 5, 0.0), (6, 4, 0.0), (31, 23, 0.3)]


def _tensor(shape: tuple[int, ...], density: float, seed: int) -> sparse.COO:
    """A random pydata tensor with (where it has more than one) its first slice and its
    second fibers along dimension 2 emptied."""
    t = sparse.random(shape, density=density, random_state=seed)
    dense = t.todense()
    if shape[0] > 1:
        dense[0] = 0.0
    if len(shape) > 2 and shape[1] > 1:
        dense[:, 1, :] = 0.0
    return sparse.COO.from_numpy(dense)


@pytest.fixture(params=["int32", "int64"])
def dtype(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize(("n", "m", "density"), MATRICES)
def test_spmv_csr(dtype: str, n: int, m: int, density: float) -> None:
    a = _matrix(n, m, density, 1)
    x, y = np.random.default_rng(2).random(m), np.full(n, 7.0)
    _kernel("y(i) = A(i,j) * x(j)", dtype, A=CSR)(y=y, x=x, **csr_args(a, dtype, prefix="A_"))
    assert np.allclose(y, a @ x)
    assert np.allclose(y, sparse.einsum("ij,j->i", sparse.COO.from_scipy_sparse(a), x).todense())


@pytest.mark.parametrize("fmt", [COO, CSC])
def test_spmv_other_formats_and_duplicates(fmt: spf.Format) -> None:
    a = _matrix(25, 19, 0.2, 3)
    coo = a.tocoo()
    dup = sp.coo_array(
        (np.concatenate([coo.data, coo.data[:7]]),
         (np.concatenate([coo.row, coo.row[:7]]), np.concatenate([coo.col, coo.col[:7]]))),
        shape=a.shape,
    )  # fmt: skip
    args = format_args(dup, fmt, prefix="A_")  # COO keeps the duplicates, CSC sums them
    x, y = np.random.default_rng(4).random(19), np.zeros(25)
    _kernel("y(i) = A(i,j) * x(j)", A=fmt)(y=y, x=x, **args)
    assert np.allclose(y, dup.tocsr() @ x)


def test_spmm(dtype: str) -> None:
    a = _matrix(33, 21, 0.15, 5)
    b = np.random.default_rng(6).random((21, 5))
    c = np.zeros((33, 5))
    _kernel("C(i,j) = A(i,k) * B(k,j)", dtype, A=CSR)(C=c, B=b, **csr_args(a, dtype, prefix="A_"))
    assert np.allclose(c, a @ b)


def _csr_out(out: dict[str, Any]) -> sp.csr_array:
    return sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=(out["N"], out["M"]))


def _same_csr(got: sp.csr_array, want: object) -> None:
    want = sp.csr_array(want)
    want.sum_duplicates()
    want.sort_indices()
    assert np.array_equal(got.indptr, want.indptr)
    assert np.array_equal(got.indices, want.indices)  # sorted, no duplicates
    assert np.allclose(got.data, want.data)


@pytest.mark.parametrize(("n", "m", "density"), MATRICES)
def test_spadd_csr_plus_csr_into_csr(n: int, m: int, density: float) -> None:
    a, b = _matrix(n, m, density, 7), _matrix(n, m, density / 2, 8)
    k = _kernel("C(i,j) = A(i,j) - 2 * B(i,j)", A=CSR, B=CSR, C=CSR)
    out = k(**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_"))
    assert out["rowptr"].dtype == np.int32
    _same_csr(_csr_out(out), a - 2 * b)
    pyd = sparse.COO.from_scipy_sparse(a) - 2 * sparse.COO.from_scipy_sparse(b)
    assert np.allclose(_csr_out(out).toarray(), pyd.todense())


def test_spadd_into_csr_by_a_union_merge(dtype: str) -> None:
    a, b = _pair(31, 23, 0.2)
    x = np.random.default_rng(33).random(23) + 1.0
    disjoint = sp.csr_array(b.toarray() * (a.toarray() == 0))  # no column common with A
    k = _kernel("C(i,j) = A(i,j) + B(i,j) * x(j)", dtype, A=CSR, B=CSR, C=CSR)
    for other in (b, disjoint, a, sp.csr_array((31, 23))):
        other.sort_indices()
        out = k(x=x, **csr_args(a, dtype, prefix="A_"), **csr_args(other, dtype, prefix="B_"))
        assert out["col"].dtype == np.dtype(dtype)
        _same_csr(_csr_out(out), a + other.multiply(x[None, :]))


def test_spadd_into_a_dense_output(dtype: str) -> None:
    a, b = _matrix(20, 14, 0.2, 9), _matrix(20, 14, 0.3, 10)
    c = np.full((20, 14), 3.0)
    k = _kernel("C(i,j) = A(i,j) + B(i,j)", dtype, A=CSR, B=CSR)
    k(C=c, **csr_args(a, dtype, prefix="A_"), **csr_args(b, dtype, prefix="B_"))
    assert np.allclose(c, (a + b).toarray())


def test_spgemm_against_pydata_sparse(dtype: str) -> None:
    a, b = _matrix(26, 18, 0.15, 11), _matrix(18, 22, 0.15, 12)
    k = spf.kernels.spgemm_csr(index_dtype=dtype).compile()
    out = k(**csr_args(a, dtype, prefix="A_"), **csr_args(b, dtype, prefix="B_"))
    assert out["col"].dtype == np.dtype(dtype)
    got = _csr_out(out)
    _same_csr(got, a @ b)
    want = sparse.einsum(
        "ik,kj->ij", sparse.COO.from_scipy_sparse(a), sparse.COO.from_scipy_sparse(b)
    )
    assert np.allclose(got.toarray(), want.todense())


def test_sddmm_into_csr_and_dense(dtype: str) -> None:
    s = _matrix(24, 17, 0.2, 13)
    rng = np.random.default_rng(14)
    x, y = rng.random((24, 6)), rng.random((17, 6))
    want = s.multiply(x @ y.T).toarray()
    text = "O(i,j) = S(i,j) * X(i,k) * Y(j,k)"
    out = _kernel(text, dtype, S=CSR, O=CSR)(X=x, Y=y, **csr_args(s, dtype, prefix="S_"))
    got = _csr_out(out)
    assert np.array_equal(got.indptr, s.indptr)  # the pattern of S
    assert np.array_equal(got.indices, s.indices)
    assert np.allclose(got.toarray(), want)
    o = np.zeros((24, 17))
    _kernel(text, dtype, S=CSR)(O=o, X=x, Y=y, **csr_args(s, dtype, prefix="S_"))
    assert np.allclose(o, want)


SHAPES = [((7, 5, 4), 0.3), ((3, 6, 2), 0.6), ((2, 3, 4), 0.0), ((1, 1, 1), 1.0)]


def _with_duplicates(t: sparse.COO) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``t``'s coordinates and values with its first entries repeated (halved)."""
    k = min(3, t.nnz)
    coords = np.concatenate([t.coords, t.coords[:, :k]], axis=1)
    values = np.concatenate([t.data, t.data[:k]])
    values[:k] /= 2
    values[-k:] /= 2 if k else 1
    return coords, values


@pytest.mark.parametrize(("shape", "density"), SHAPES)
def test_ttv(dtype: str, shape: tuple[int, int, int], density: float) -> None:
    t = _tensor(shape, density, 15)
    c = np.random.default_rng(16).random(shape[2])
    want = np.einsum("ijk,k->ij", t.todense(), c)
    assert np.allclose(sparse.einsum("ijk,k->ij", t, c).todense(), want)
    text = "A(i,j) = B(i,j,k) * c(k)"
    a = np.zeros(shape[:2])
    _kernel(text, dtype, B=CSF(3))(
        A=a, c=c, **csf_args(t.coords, t.data, shape, dtype, prefix="B_")
    )
    assert np.allclose(a, want)
    coords, values = _with_duplicates(t)
    a = np.zeros(shape[:2])
    args = coo_tensor_args(coords, values, shape, dtype, prefix="B_")
    _kernel(text, dtype, B=COO(3))(A=a, c=c, **args)
    assert np.allclose(a, want)


@pytest.mark.parametrize(("shape", "density"), SHAPES)
def test_ttm(shape: tuple[int, int, int], density: float) -> None:
    t = _tensor(shape, density, 17)
    c = np.random.default_rng(18).random((3, shape[2]))
    a = np.zeros((*shape[:2], 3))
    _kernel("A(i,j,k) = B(i,j,l) * C(k,l)", B=CSF(3))(
        A=a, C=c, **csf_args(t.coords, t.data, shape, prefix="B_")
    )
    assert np.allclose(a, np.einsum("ijl,kl->ijk", t.todense(), c))


@pytest.mark.parametrize(("shape", "density"), SHAPES)
def test_mttkrp(dtype: str, shape: tuple[int, int, int], density: float) -> None:
    t = _tensor(shape, density, 19)
    rng = np.random.default_rng(20)
    c, d = rng.random((shape[1], 4)), rng.random((shape[2], 4))
    want = np.einsum("ikl,kj,lj->ij", t.todense(), c, d)
    text = "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)"
    a = np.zeros((shape[0], 4))
    _kernel(text, dtype, B=CSF(3))(
        A=a, C=c, D=d, **csf_args(t.coords, t.data, shape, dtype, prefix="B_")
    )
    assert np.allclose(a, want)
    coords, values = _with_duplicates(t)
    a = np.zeros((shape[0], 4))
    args = coo_tensor_args(coords, values, shape, dtype, prefix="B_")
    _kernel(text, dtype, B=COO(3))(A=a, C=c, D=d, **args)
    assert np.allclose(a, want)
    assert np.allclose(sparse.einsum("ikl,kj,lj->ij", t, c, d).todense(), want)


@pytest.mark.parametrize("n", [0, 1, 13])
def test_inner_product_of_sparse_and_dense_vectors(dtype: str, n: int) -> None:
    v = _tensor((n + 1,), 0.5, 21)  # its first entry emptied
    w = np.random.default_rng(22).random(n + 1)
    s = np.full((), 5.0)
    _kernel("s = a(i) * b(i)", dtype, a=CSF(1))(
        s=s, b=w, **csf_args(v.coords, v.data, v.shape, dtype, prefix="a_")
    )
    assert np.isclose(float(s), float(v.todense() @ w))


@pytest.mark.parametrize(("n", "density"), [(0, 0.0), (1, 1.0), (13, 0.5), (200, 0.1)])
def test_inner_product_of_two_sparse_vectors_by_a_merge(dtype: str, n: int, density: float) -> None:
    u, v = _tensor((n + 1,), density, 26), _tensor((n + 1,), density, 27)
    k = _kernel("s = a(i) * b(i)", dtype, a=CSF(1), b=CSF(1))
    for w in (v, u):  # random, then one pattern (every coordinate common)
        s = np.full((), 5.0)
        k(
            s=s,
            **csf_args(u.coords, u.data, u.shape, dtype, prefix="a_"),
            **csf_args(w.coords, w.data * 2, w.shape, dtype, prefix="b_"),
        )
        assert np.isclose(float(s), float(u.todense() @ (2 * w.todense())))


def _pair(n: int, m: int, density: float) -> tuple[sp.csr_array, sp.csr_array]:
    """Two random CSR matrices whose empty rows are at different places (B's rows rotated
    by one)."""
    a = _matrix(n, m, density, 28)
    b = sp.csr_array(_matrix(n, m, density * 2, 29)[np.roll(np.arange(n), 1)]) if n else a
    b.sort_indices()
    return a, b


@pytest.mark.parametrize(("n", "m", "density"), MATRICES)
def test_elementwise_product_of_csr_matrices_by_a_merge(
    dtype: str, n: int, m: int, density: float
) -> None:
    a, b = _pair(n, m, density)
    same = a.copy()  # one pattern: every column common
    same.data = same.data + 1.0
    for other in (b, same):
        args = {**csr_args(a, dtype, prefix="A_"), **csr_args(other, dtype, prefix="B_")}
        want = a.multiply(other)
        c = np.full((n, m), 3.0)
        _kernel("C(i,j) = A(i,j) * B(i,j)", dtype, A=CSR, B=CSR)(C=c, **args)
        assert np.allclose(c, want.toarray())
        out = _kernel("C(i,j) = A(i,j) * B(i,j)", dtype, A=CSR, B=CSR, C=CSR)(**args)
        assert out["col"].dtype == np.dtype(dtype)
        _same_csr(_csr_out(out), want)  # the common columns of each row, sorted


def test_sddmm_with_sparse_factors_by_a_merge(dtype: str) -> None:
    s, x, y = _matrix(24, 17, 0.3, 30), _matrix(24, 11, 0.3, 31), _matrix(17, 11, 0.3, 32)
    want = s.multiply((x @ y.T).toarray()).toarray()
    text = "O(i,j) = S(i,j) * X(i,k) * Y(j,k)"
    args = {
        **csr_args(s, dtype, prefix="S_"),
        **csr_args(x, dtype, prefix="X_"),
        **csr_args(y, dtype, prefix="Y_"),
    }
    o = np.zeros((24, 17))
    _kernel(text, dtype, S=CSR, X=CSR, Y=CSR)(O=o, **args)
    assert np.allclose(o, want)
    out = _kernel(text, dtype, S=CSR, X=CSR, Y=CSR, O=CSR)(**args)
    # the entries of S where some k meets (the product's pattern, as TACO builds it)
    _same_csr(_csr_out(out), s.multiply(x @ y.T))


def test_scalar_constants_and_sums() -> None:
    a = _matrix(12, 9, 0.3, 23)
    rng = np.random.default_rng(24)
    x, z = rng.random(9), rng.random(12)
    y = np.zeros(12)
    k = _kernel("y(i) = 0.5 * A(i,j) * x(j) - z(i) + 2", A=CSR)
    k(y=y, x=x, z=z, **csr_args(a, prefix="A_"))
    assert np.allclose(y, 0.5 * (a @ x) - z + 2)
    y0 = y.copy()
    _kernel("y(i) += A(i,j) * x(j)", A=CSR)(y=y, x=x, **csr_args(a, prefix="A_"))
    assert np.allclose(y, y0 + a @ x)


@pytest.mark.parametrize("name", ["west0067.mtx", "lp_afiro.mtx"])
def test_suitesparse_spmv_and_spadd(suitesparse_dir: Path, name: str) -> None:
    path = suitesparse_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    a = read_matrix_market(path)
    x, y = np.random.default_rng(25).random(a.shape[1]), np.zeros(a.shape[0])
    _kernel("y(i) = A(i,j) * x(j)", A=CSR)(y=y, x=x, **csr_args(a, prefix="A_"))
    assert np.allclose(y, a @ x)
    b = sp.csr_array(a * 0.3)  # no entry of a - 2b cancels: scipy would drop it
    b.data[::2] = 0.0
    b.eliminate_zeros()
    out = _kernel("C(i,j) = A(i,j) - 2 * B(i,j)", A=CSR, B=CSR, C=CSR)(
        **csr_args(a, prefix="A_"), **csr_args(b, prefix="B_")
    )
    _same_csr(_csr_out(out), a - 2 * b)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6)])
def test_an_operand_read_twice_must_agree_with_both_reads(shape: tuple[int, int]) -> None:
    """``A(i,k) * A(k,j)`` needs a square ``A``: every access of an operand gives its
    extents, so a 6 x 4 ``A`` is refused (it ran, treating the rows past 4 as empty), for a
    CSR operand with a dense or a sparse output and for a dense operand; a square one
    matches numpy, and the dense operand read twice compiles without a precondition
    warning (the einsum says its two extents are equal)."""
    import warnings

    a = sp.random_array(shape, density=0.6, format="csr", rng=1)
    args = spf.sparse.csr_args(a, prefix="A_")
    with pytest.raises(spf.ArgumentError, match="the extent K is"):
        spf.einsum("Y(i,j) = A(i,k) * A(k,j)", A=CSR).compile()(Y=np.zeros(shape), **args)
    with pytest.raises(spf.ArgumentError, match="the extent K is"):
        spf.einsum("C(i,j) = A(i,k) * A(k,j)", A=CSR, C=CSR).compile()(**args, J=shape[1])
    d = a.toarray()
    with warnings.catch_warnings():
        warnings.simplefilter("error", spf.PreconditionWarning)
        trace = spf.einsum("s = D(i,j) * D(j,i)").compile()
    with pytest.raises(spf.ArgumentError, match="the extent J is"):
        trace(s=np.zeros(()), D=d)
    sq = sp.random_array((5, 5), density=0.6, format="csr", rng=2)
    y = np.zeros((5, 5))
    spf.einsum("Y(i,j) = A(i,k) * A(k,j)", A=CSR).compile()(
        Y=y, **spf.sparse.csr_args(sq, prefix="A_")
    )
    assert np.allclose(y, sq.toarray() @ sq.toarray())
    s = np.zeros(())
    trace(s=s, D=sq.toarray())
    assert np.isclose(float(s), float(np.trace(sq.toarray() @ sq.toarray())))


def test_a_row_workspace_too_large_to_allocate_is_an_spf_error_naming_it() -> None:
    """``C = A B`` with ``J = 2**45`` columns: the single pass's dense row workspaces over
    ``j`` cannot be allocated (more than the address space), and the kernel's plain
    MemoryError became an ArgumentError naming the workspace, its size and the index, and
    saying what to change (a format compressed along ``j``, blocks, renumbering)."""
    big = 2**45
    a = sp.csr_array(np.array([[1.0, 2.0], [0.0, 3.0]]))
    b = sp.csr_array(
        (np.array([1.0, 4.0]), np.array([0, big - 1]), np.array([0, 1, 2])), shape=(2, big)
    )
    args = {**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_")}
    args = {k: v.astype(np.int64) if getattr(v, "dtype", None) == np.int32 else v
            for k, v in args.items()}  # fmt: skip
    k = _kernel("C(i,j) = A(i,k) * B(k,j)", "int64", A=CSR, B=CSR, C=CSR)
    words = (
        rf"the sparse output C is built row by row in dense workspaces sized by the extent "
        rf"of its index j \(J = {big}\), and workspace '\w+' of \d+ entries .* cannot be "
        r"allocated on this machine.*format compressed along j"
    )
    with pytest.raises(spf.ArgumentError, match=words) as err:
        k(**args)
    assert isinstance(err.value.__cause__, MemoryError)

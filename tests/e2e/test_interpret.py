"""End to end: ``Computation.interpret`` (the reference executor) against numpy / scipy.

Computations are built by hand (API.md section 3, EXAMPLES.md) and run on random inputs:
dense MV, CSR SpMV (empty rows, empty matrices, one row, unsorted columns), the forward solve,
a jacobi sweep with copy-back, COO SpMV with duplicate entries, 0-d accumulations; with int32
and int64 index arrays and with parameters inferred from declared shapes. Bad arguments raise
``ArgumentError`` (API.md section 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from spf import ArgumentError, Computation, SpfError, Stmt
from spf.testing import random_csr

DOM1 = "{[i]: 0 <= i < N}"
SPMV_DOMAIN = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
FS_DOMAIN = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && j < i}"
JACOBI_DOMAIN = "{[i,j]: 1 <= i < N-1 && 1 <= j < N-1}"
JACOBI_SRC = "$B$(i,j) = 0.2 * ($A$(i,j) + $A$(i-1,j) + $A$(i+1,j) + $A$(i,j-1) + $A$(i,j+1));"
INDEX_DTYPES = [np.int32, np.int64]


# ================================================================================ builders
def dense_mv() -> Computation:
    comp = Computation("mv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(Stmt("$y$(i) += $A$(i,j) * $x$(j);", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    return comp


def spmv(*, given: bool = True) -> Computation:
    comp = Computation("spmv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    accesses: dict[str, Any] = {}
    if given:
        accesses = {
            "reads": [("y", "{[i,k,j]->[i]}"), ("A", "{[i,k,j]->[k]}"), ("x", "{[i,k,j]->[j]}")],
            "writes": [("y", "{[i,k,j]->[i]}")],
        }
    comp.add_stmt(
        Stmt("$y$(i) += $A$(k) * $x$(j);", SPMV_DOMAIN, "{[i,k,j] -> [0,i,0,k,0,j,0]}", **accesses)
    )
    return comp


def forward_solve() -> Computation:
    comp = Computation("fs")
    for d in ("u", "f", "l", "diag"):
        comp.add_data_space(d, "double*")
    comp.add_stmt(Stmt("$u$(i) = $f$(i);", DOM1, "{[i]->[0,i,0,0,0]}"))
    comp.add_stmt(Stmt("$u$(i) -= $l$(k) * $u$(j);", FS_DOMAIN, "{[i,k,j]->[0,i,1,k,0]}"))
    comp.add_stmt(Stmt("$u$(i) /= $diag$(i);", DOM1, "{[i]->[0,i,2,0,0]}"))
    return comp


def jacobi() -> Computation:
    comp = Computation("jacobi")
    comp.add_data_space("B", "double", shape=("N", "N"))
    comp.add_data_space("A", "double", shape=("N", "N"))
    comp.add_stmt(Stmt(JACOBI_SRC, JACOBI_DOMAIN))
    comp.add_stmt(Stmt("$A$(i,j) = $B$(i,j);", JACOBI_DOMAIN))
    return comp


def coo() -> Computation:
    comp = Computation("coo")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(Stmt("$y$(row(k)) += $A$(k) * $x$(col(k));", "{[k]: 0 <= k < NNZ}"))
    return comp


def zero_d(domain: str) -> Computation:
    comp = Computation("total")
    comp.add_data_space("t", "double")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$ = 0;", domain))
    comp.add_stmt(Stmt("$t$ += $x$(i);", DOM1))
    return comp


def csr_args(a: sp.csr_matrix, index_dtype: type = np.int32) -> dict[str, Any]:
    """The arrays of the spmv computation for matrix ``a`` (parameters left to inference)."""
    return {
        "A": np.array(a.data, dtype=np.float64),
        "rowptr": np.array(a.indptr, dtype=index_dtype),
        "col": np.array(a.indices, dtype=index_dtype),
    }


# ================================================================================ dense
@pytest.mark.parametrize(("n", "m"), [(5, 7), (1, 1), (3, 0), (0, 4)])
def test_dense_mv(n: int, m: int) -> None:
    rng = np.random.default_rng(n * 10 + m)
    A, x, y = rng.random((n, m)), rng.random(m), rng.random(n)
    want = y + A @ x
    dense_mv().interpret(y=y, A=A, x=x, N=n, M=m)
    np.testing.assert_allclose(y, want)


def test_dense_mv_parameters_inferred_from_shapes() -> None:
    rng = np.random.default_rng(1)
    A, x, y = rng.random((4, 6)), rng.random(6), np.zeros(4)
    dense_mv().interpret(y=y, A=A, x=x)
    np.testing.assert_allclose(y, A @ x)


def test_inputs_are_not_written() -> None:
    rng = np.random.default_rng(2)
    A, x = rng.random((3, 3)), rng.random(3)
    A0, x0 = A.copy(), x.copy()
    dense_mv().interpret(y=np.zeros(3), A=A, x=x)
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(x, x0)


# ================================================================================ CSR
def _empty_rows() -> sp.csr_matrix:
    return random_csr(9, 6, 0.4, 3, empty_rows=[0, 4, 8])  # first, middle and last rows empty


MATRICES: dict[str, Callable[[], sp.csr_matrix]] = {
    "random": lambda: random_csr(12, 9, 0.3, 0),
    "empty rows": _empty_rows,
    "empty matrix": lambda: sp.csr_matrix((5, 4), dtype=np.float64),
    "one row": lambda: random_csr(1, 8, 0.6, 1),
    "one column": lambda: random_csr(6, 1, 0.6, 2),
    "dense": lambda: sp.csr_matrix(np.random.default_rng(4).random((4, 5))),
}


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("matrix", sorted(MATRICES))
def test_spmv_csr(matrix: str, index_dtype: type) -> None:
    a = MATRICES[matrix]()
    n, m = a.shape
    rng = np.random.default_rng(5)
    x, y = rng.random(m), rng.random(n)
    want = y + a @ x
    spmv().interpret(y=y, x=x, N=n, M=m, NNZ=a.nnz, **csr_args(a, index_dtype))
    np.testing.assert_allclose(y, want)


def test_empty_matrix_has_no_nonzeros() -> None:
    a = MATRICES["empty matrix"]()
    assert a.nnz == 0
    y = np.full(5, 3.0)
    spmv().interpret(y=y, x=np.ones(4), **csr_args(a))
    np.testing.assert_array_equal(y, 3.0)


@pytest.mark.parametrize("given", [True, False], ids=["given", "inferred"])
def test_spmv_parameters_inferred_from_shapes(given: bool) -> None:
    """N, M and NNZ omitted: y has shape (N,), x (M,), A (NNZ,)."""
    a = random_csr(7, 5, 0.4, 6)
    x, y = np.random.default_rng(7).random(5), np.zeros(7)
    spmv(given=given).interpret(y=y, x=x, **csr_args(a, np.int64))
    np.testing.assert_allclose(y, a @ x)


def test_spmv_unsorted_columns() -> None:
    a = random_csr(6, 6, 0.5, 8)
    args = csr_args(a)
    rng = np.random.default_rng(9)
    for i in range(6):  # shuffle each row's entries
        lo, hi = a.indptr[i], a.indptr[i + 1]
        perm = lo + rng.permutation(hi - lo)
        args["A"][lo:hi] = a.data[perm]
        args["col"][lo:hi] = a.indices[perm]
    x, y = rng.random(6), np.zeros(6)
    spmv().interpret(y=y, x=x, **args)
    np.testing.assert_allclose(y, a @ x)


def test_spmv_larger_random() -> None:
    a = random_csr(40, 30, 0.1, 10)
    x, y = np.random.default_rng(11).random(30), np.zeros(40)
    spmv().interpret(y=y, x=x, **csr_args(a))
    np.testing.assert_allclose(y, a @ x)


def test_json_round_trip_runs_the_same() -> None:
    a = random_csr(8, 8, 0.4, 12)
    x = np.random.default_rng(13).random(8)
    y1, y2 = np.zeros(8), np.zeros(8)
    comp = spmv()
    comp.interpret(y=y1, x=x, **csr_args(a))
    Computation.from_json(comp.to_json()).interpret(y=y2, x=x, **csr_args(a))
    np.testing.assert_array_equal(y1, y2)


# ================================================================================ forward solve
def _lower(n: int, density: float, seed: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """A strictly lower triangular CSR part (sorted columns) and a diagonal far from 0."""
    strict = sp.tril(random_csr(n, n, density, seed), k=-1, format="csr")
    assert isinstance(strict, sp.csr_array)
    strict.sort_indices()
    diag = np.random.default_rng(seed).uniform(1.0, 2.0, n)
    return strict, diag


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize(("n", "density"), [(10, 0.4), (1, 1.0), (6, 0.0), (15, 0.9)])
def test_forward_solve(n: int, density: float, index_dtype: type) -> None:
    strict, diag = _lower(n, density, n)
    f = np.random.default_rng(n + 1).random(n)
    u = np.zeros(n)
    forward_solve().interpret(
        u=u,
        f=f,
        l=np.array(strict.data, dtype=np.float64),
        diag=diag,
        rowptr=strict.indptr.astype(index_dtype),
        col=strict.indices.astype(index_dtype),
        N=n,
    )
    full = (strict + sp.diags(diag)).tocsr()
    np.testing.assert_allclose(u, spla.spsolve_triangular(full, f, lower=True))
    np.testing.assert_allclose(full @ u, f)


def test_forward_solve_ignores_upper_entries() -> None:
    """The domain keeps j < i only: entries on or above the diagonal are skipped."""
    n = 7
    a = random_csr(n, n, 0.5, 14)
    diag = np.random.default_rng(15).uniform(1.0, 2.0, n)
    f = np.random.default_rng(16).random(n)
    u = np.zeros(n)
    forward_solve().interpret(
        u=u, f=f, l=a.data.copy(), diag=diag, rowptr=a.indptr, col=a.indices, N=n
    )
    lower = np.tril(a.toarray(), k=-1) + np.diag(diag)
    np.testing.assert_allclose(u, np.linalg.solve(lower, f))


def test_forward_solve_needs_n() -> None:
    """``double*`` spaces have no declared shape: N cannot be inferred."""
    strict, diag = _lower(4, 0.5, 17)
    with pytest.raises(ArgumentError, match="N"):
        forward_solve().interpret(
            u=np.zeros(4),
            f=np.ones(4),
            l=strict.data.copy(),
            diag=diag,
            rowptr=strict.indptr,
            col=strict.indices,
        )


# ================================================================================ jacobi
@pytest.mark.parametrize("n", [2, 3, 8])
def test_jacobi(n: int) -> None:
    rng = np.random.default_rng(n)
    A, B = rng.random((n, n)), rng.random((n, n))
    wantA, wantB = A.copy(), B.copy()
    inner = 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
    wantB[1:-1, 1:-1] = inner
    wantA[1:-1, 1:-1] = inner
    jacobi().interpret(A=A, B=B)
    np.testing.assert_allclose(B, wantB)
    np.testing.assert_allclose(A, wantA)


# ================================================================================ COO
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_coo_with_duplicates(index_dtype: type[np.integer[Any]]) -> None:
    rng = np.random.default_rng(18)
    n, m, nnz = 6, 5, 30  # 30 entries in 30 slots: duplicates certain
    row: np.ndarray = rng.integers(0, n, nnz).astype(index_dtype)
    col: np.ndarray = rng.integers(0, m, nnz).astype(index_dtype)
    val = rng.random(nnz)
    assert len(set(zip(row.tolist(), col.tolist(), strict=True))) < nnz
    x, y = rng.random(m), rng.random(n)
    want = y + sp.coo_matrix((val, (row, col)), shape=(n, m)).tocsr() @ x
    coo().interpret(y=y, A=val, x=x, row=row, col=col)
    np.testing.assert_allclose(y, want)


def test_coo_empty() -> None:
    y = np.ones(3)
    empty = np.zeros(0, dtype=np.int32)
    coo().interpret(y=y, A=np.zeros(0), x=np.ones(2), row=empty, col=empty)
    np.testing.assert_array_equal(y, 1.0)


# ================================================================================ 0-d and order
@pytest.mark.parametrize("domain", ["{[0]}", "{[]}"])
@pytest.mark.parametrize("n", [0, 1, 6])
def test_zero_d_accumulation(domain: str, n: int) -> None:
    x = np.random.default_rng(n).random(n)
    t = np.array(123.0)
    zero_d(domain).interpret(t=t, x=x)
    assert t.shape == ()
    np.testing.assert_allclose(t, x.sum())


def test_schedule_order_not_insertion_order() -> None:
    comp = Computation("order")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(Stmt("$a$(i) = 2 * $a$(i);", DOM1, "{[i] -> [1, i, 0]}"))
    comp.add_stmt(Stmt("$a$(i) = $a$(i) + 1;", DOM1, "{[i] -> [0, i, 0]}"))  # runs first
    a = np.arange(5, dtype=np.float64)
    comp.interpret(a=a)
    np.testing.assert_array_equal(a, 2 * (np.arange(5) + 1))


def test_prefix_sum_is_sequential() -> None:
    comp = Computation("prefix")
    comp.add_data_space("a", "int64_t", shape=("N",))
    comp.add_stmt(Stmt("$a$(i) = $a$(i-1) + $a$(i);", "{[i]: 1 <= i < N}"))
    a = np.arange(1, 9, dtype=np.int64)
    comp.interpret(a=a)
    np.testing.assert_array_equal(a, np.cumsum(np.arange(1, 9)))


def test_integer_histogram() -> None:
    comp = Computation("hist")
    comp.add_data_space("h", "int32_t", shape=("B",))
    comp.add_stmt(Stmt("$h$(bin(k)) += 1;", "{[k]: 0 <= k < K}"))
    bins = np.random.default_rng(19).integers(0, 7, 50)
    h = np.zeros(7, dtype=np.int32)
    comp.interpret(h=h, bin=bins, K=50)
    np.testing.assert_array_equal(h, np.bincount(bins, minlength=7))


def test_float32_data_space() -> None:
    comp = Computation("axpy")
    comp.add_data_space("y", "float", shape=("N",))
    comp.add_data_space("x", "float", shape=("N",))
    comp.add_stmt(Stmt("$y$(i) += 2.5 * $x$(i);", DOM1))
    x = np.arange(6, dtype=np.float32)
    y = np.ones(6, dtype=np.float32)
    comp.interpret(y=y, x=x)
    np.testing.assert_allclose(y, 1 + 2.5 * x)


# ================================================================================ bad arguments
def _spmv_args() -> dict[str, Any]:
    a = random_csr(4, 3, 0.5, 20)
    return {"y": np.zeros(4), "x": np.ones(3), **csr_args(a)}


def test_missing_data_space() -> None:
    args = _spmv_args()
    del args["x"]
    with pytest.raises(ArgumentError, match="'x'"):
        spmv().interpret(**args)


def test_missing_uf_array() -> None:
    args = _spmv_args()
    del args["col"]
    with pytest.raises(ArgumentError, match="col"):
        spmv().interpret(**args)


def test_missing_parameter() -> None:
    """K bounds the domain but no declared shape gives it (``a`` is ``double*``)."""
    comp = Computation("fill")
    comp.add_data_space("a", "double*")
    comp.add_stmt(Stmt("$a$(i) = 1;", "{[i]: 0 <= i < K}"))
    with pytest.raises(ArgumentError, match="K"):
        comp.interpret(a=np.zeros(3))


def test_unknown_argument() -> None:
    with pytest.raises(ArgumentError) as info:
        spmv().interpret(**_spmv_args(), z=np.zeros(3))
    assert "z" in str(info.value)
    assert "rowptr" in str(info.value)  # the expected names are listed
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize(
    ("name", "value"),
    [("y", np.zeros((2, 2))), ("x", np.array(1.0)), ("A", np.zeros((1, 1)))],
)
def test_wrong_ndim(name: str, value: np.ndarray) -> None:
    args = _spmv_args()
    args[name] = value
    with pytest.raises(ArgumentError, match=repr(name)):
        spmv().interpret(**args)


def test_wrong_uf_array() -> None:
    for bad in (np.zeros(5, dtype=np.float64), np.zeros((5, 1), dtype=np.int32)):
        args = _spmv_args()
        args["rowptr"] = bad
        with pytest.raises(ArgumentError, match="rowptr"):
            spmv().interpret(**args)


@pytest.mark.parametrize("value", [[0.0, 0.0, 0.0, 0.0], (1, 2, 3, 4), 3.0, None])
def test_not_an_array(value: Any) -> None:
    args = _spmv_args()
    args["y"] = value
    with pytest.raises(ArgumentError):
        spmv().interpret(**args)


@pytest.mark.parametrize("value", [4.0, "4", True, None])
def test_parameter_not_an_int(value: Any) -> None:
    with pytest.raises(ArgumentError):
        spmv().interpret(**_spmv_args(), N=value)


def test_read_only_output() -> None:
    args = _spmv_args()
    args["y"].flags.writeable = False
    with pytest.raises(ArgumentError, match="'y'"):
        spmv().interpret(**args)


def test_read_only_input_is_accepted() -> None:
    """API.md section 1 refuses read-only *outputs*; x is only read."""
    args = _spmv_args()
    args["x"].flags.writeable = False
    args["A"].flags.writeable = False
    spmv().interpret(**args)


def test_explicit_parameter_disagrees_with_shape() -> None:
    args = _spmv_args()  # y has shape (4,): N = 4
    with pytest.raises(ArgumentError, match="'y'"):
        spmv().interpret(**args, N=3)


def test_shapes_disagree() -> None:
    """y says N = 4, A says N = 3."""
    with pytest.raises(ArgumentError):
        dense_mv().interpret(y=np.zeros(4), A=np.zeros((3, 2)), x=np.zeros(2))


def test_wrong_dtype() -> None:
    args = _spmv_args()
    args["y"] = np.zeros(4, dtype=np.int64)  # a double data space: results would be truncated
    with pytest.raises(ArgumentError, match="'y'"):
        spmv().interpret(**args)


def test_index_out_of_range_is_reported() -> None:
    args = _spmv_args()
    assert len(args["col"]) > 0
    args["col"] = np.full_like(args["col"], 7)  # x has 3 elements
    with pytest.raises(SpfError, match="x"):
        spmv().interpret(**args)


def test_uf_array_too_short() -> None:
    """rowptr must have N + 1 entries (its declared domain); a short one is not silently
    treated as a smaller matrix."""
    args = _spmv_args()
    args["rowptr"] = args["rowptr"][:2].copy()
    with pytest.raises(SpfError):
        spmv().interpret(**args)


def test_failed_run_raises_spf_error_only() -> None:
    """Nothing crashes with a bare numpy / Python exception on a bad 0-d argument."""
    with pytest.raises(SpfError):
        zero_d("{[0]}").interpret(t=np.zeros(3), x=np.zeros(2))


@pytest.mark.parametrize(
    "source",
    [
        "$a$(i) = abs($b$(i));",  # stdlib.h's abs takes an int: 1.7 -> 1 (was 1.7)
        "$a$(i) = labs($b$(i)) + $b$(i);",
        "$a$(i) = $b$(i) + '\\x41' + '\\101' + '\\377' + '\\a';",  # hex/octal escapes, signed
    ],
)
def test_interpret_computes_what_the_c_kernel_computes(source: str, tmp_path: Any) -> None:
    """The interpreter is the reference the tests compare kernels with: it follows C where a
    statement relies on C's rules (it returned ``abs(1.7)`` as 1.7, and read ``'\\x41'`` as
    the digit ``'1'``)."""
    comp = Computation("c_rules")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("b", "double", shape=("N",))
    comp.add_stmt(Stmt(source, DOM1))
    b = np.array([1.7, -2.5, 3.0, -0.4, 0.0])
    got, want = np.zeros(5), np.zeros(5)
    comp.compile(cache_dir=str(tmp_path))(a=want, b=b)
    comp.interpret(a=got, b=b)
    np.testing.assert_array_equal(got, want)


def test_a_multi_character_constant_is_refused() -> None:
    comp = Computation("mc")
    comp.add_data_space("a", "double", shape=("N",))
    with pytest.raises(SpfError, match="multi-character constant 'ab' has an implementation"):
        comp.add_stmt(Stmt("$a$(i) = 'ab';", DOM1))


def test_interpret_rounds_the_argument_of_a_single_precision_function(tmp_path: Any) -> None:
    """``sqrtf`` of a double converts its argument to ``float`` first (the interpreter took
    the square root of the double and rounded only the result)."""
    comp = Computation("single")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("b", "double", shape=("N",))
    comp.add_stmt(Stmt("$a$(i) = sqrtf($b$(i)) * 0.3;", DOM1))
    b = np.random.default_rng(1).random(200)
    got, want = np.zeros(200), np.zeros(200)
    comp.compile(cache_dir=str(tmp_path))(a=want, b=b)
    comp.interpret(a=got, b=b)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", ["c", "cuda", "hls"])
def test_abs_of_a_double_is_cs_on_every_target(target: str, tmp_path: Any) -> None:
    """C converts a double passed to ``abs`` to ``int``; C++ (the CUDA and HLS targets) has
    an ``abs(double)`` overload: the emulated CUDA kernel gave 1.7 where C, HLS and the
    interpreter give 1. Every target now casts the argument as C converts it."""
    comp = Computation("abs_all")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("b", "double", shape=("N",))
    stmt = comp.add_stmt(Stmt("$a$(i) = abs($b$(i)) + labs($b$(i));", DOM1))
    options: dict[str, Any] = {"cache_dir": str(tmp_path)}
    if target == "cuda":
        stmt.split("i", 4, "i0", "i1").gpu(("i0",), ("i1",))
        options["emulate"] = True
    b = np.array([1.7, -2.5, 3.0, -0.4, 0.0, 5.5, -6.6, 7.7])
    got, want = np.zeros(8), np.zeros(8)
    comp.compile(target=target, **options)(a=got, b=b)
    comp.interpret(a=want, b=b)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, 2 * np.trunc(np.abs(b)))


@pytest.mark.parametrize(("ctype", "dtype"), [("uint32_t", np.uint32), ("int8_t", np.int8)])
def test_interpret_stores_integers_as_c_converts_them(
    ctype: str, dtype: Any, tmp_path: Any
) -> None:
    """A value outside the element type wraps as the compiled kernel stores it (-3 into a
    uint32_t is 4294967293, 150 into an int8_t -106); the interpreter raised
    ArgumentError ("cannot store -3 into data space 'k'")."""
    comp = Computation("wrap")
    comp.add_data_space("k", ctype, shape=("N",))
    comp.add_data_space("x", "int64_t", shape=("N",))
    comp.add_stmt(Stmt("$k$(i) = $x$(i) * 50 - 3;", DOM1))
    x = np.arange(5, dtype=np.int64)
    got, want = np.zeros(5, dtype=dtype), np.zeros(5, dtype=dtype)
    comp.compile(cache_dir=str(tmp_path))(k=want, x=x)
    comp.interpret(k=got, x=x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, (x * 50 - 3).astype(dtype))

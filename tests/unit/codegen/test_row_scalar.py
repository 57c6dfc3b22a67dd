"""A row's element kept in a local (spf.codegen.row_scalar): the same bits as the statements
printed as macros, including a read that lands on the element itself."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import kernels
from spf.codegen.row_scalar import NAME, PREV


def _solve_in_order(
    rowptr: np.ndarray, col: np.ndarray, vals: np.ndarray, f: np.ndarray
) -> np.ndarray:
    """``sptrsv_csr``'s statements one by one in memory (Python floats are IEEE doubles):
    ``u(i) = f(i)``, ``u(i) -= L(k) * u(col(k))`` for every entry but the last, ``u(i) /= L``
    of the last."""
    u = np.zeros(len(f))
    for i in range(len(f)):
        u[i] = f[i]
        for k in range(int(rowptr[i]), int(rowptr[i + 1]) - 1):
            u[i] = u[i] - vals[k] * u[int(col[k])]
        last = int(rowptr[i + 1]) - 1
        u[i] = u[i] / vals[last]
    return u


def _triangular_only(index_dtype: str = "int32") -> spf.Computation:
    """``sptrsv_csr`` with its triangular fact (``col(k) <= i``) alone, without
    :data:`spf.kernels.DIAGONAL_LAST`: a row may read its own ``u(i)`` before its last
    entry."""
    comp = kernels.sptrsv_csr(index_dtype=index_dtype, triangular=False)
    comp.assume(kernels.TRIANGULAR)
    return comp


def test_the_row_lives_in_a_local_with_one_store() -> None:
    code = _triangular_only().codegen()
    body = code[code.index("void sptrsv_csr(") :]
    assert f"double {NAME};" in body
    assert f"{NAME} = f(i);" in body
    prev = f"col_k == {PREV}_at0 ? {PREV} : u(col_k)"  # the row before, from a local
    read = f"(__builtin_expect(col_k == i, 0) ? {NAME} : {prev})"
    assert f"{NAME} -= L(k) * {read};" in body
    assert f"u(i) = {NAME};" in body
    assert "s1(" not in body  # no update of u(i) in memory per entry
    assert "u(i) -=" not in body
    # a read of u(col(k)) that may be u(i) itself reads the running value, with no store
    assert "if (__builtin_expect(" not in body


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_read_of_the_row_itself_sees_its_running_value(dtype: str) -> None:
    """Row ``i`` holds an entry in column ``i`` before its last one (allowed by the fact
    ``col(k) <= i`` alone): ``u(i) -= L(k) * u(i)`` must read the partial value."""
    n = 300
    rng = np.random.default_rng(3)
    a = sp.random_array((n, n), density=0.03, format="csr", rng=rng)
    lower = sp.csr_array(sp.tril(a, k=-1) + sp.eye_array(n) * 3.0)
    lower.sort_indices()
    rowptr, col, vals = lower.indptr, lower.indices, lower.data
    # every fifth row gets one more entry in its own column, placed before its last entry
    rows = []
    for i in range(n):
        cols = list(col[rowptr[i] : rowptr[i + 1]])
        vs = list(vals[rowptr[i] : rowptr[i + 1]])
        if i % 5 == 0:
            cols.insert(len(cols) - 1, i)
            vs.insert(len(vs) - 1, 0.25)
        rows.append((cols, vs))
    ptr = np.cumsum([0] + [len(c) for c, _ in rows])
    cols_all = np.concatenate([c for c, _ in rows])
    vals_all = np.concatenate([v for _, v in rows])
    f = rng.uniform(-1.0, 1.0, n)
    want = _solve_in_order(ptr, cols_all, vals_all, f)
    solve = _triangular_only(dtype).compile()
    u = np.zeros(n)
    solve(u=u, f=f, L=vals_all, rowptr=ptr.astype(dtype), col=cols_all.astype(dtype), N=n,
          NNZ=len(vals_all))  # fmt: skip
    assert np.array_equal(u, want)


def test_a_parallel_loop_inside_the_body_keeps_it_as_written() -> None:
    """A local declared outside a parallel loop would be shared by its threads: an outer
    loop's body holding one is printed as before."""
    comp = spf.Computation("outer")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(spf.Stmt("$y$(t) = 0.0;", "{[t]: 0 <= t < N}", "{[t] -> [0,t,0,0]}"))
    comp.add_stmt(
        spf.Stmt("$y$(t) += $x$(j);", "{[t,j]: 0 <= t < N && 0 <= j < M}", "{[t,j] -> [0,t,1,j]}")
    )
    comp.stmts[1].parallelize("j", reduction="atomic")
    assert NAME not in comp.codegen()


def test_reads_the_facts_keep_apart_store_nothing_before_them() -> None:
    """``trsv_diag_csr``'s facts put every entry before ``diag(i)`` left of the diagonal
    (``col(k) < i``): its read ``x(col(k))`` is never the row's ``x(i)``, so no store of the
    local precedes it; so do ``sptrsv_csr``'s (:data:`spf.kernels.DIAGONAL_LAST`), while
    ``col(k) <= i`` alone allows it, and keeps the test
    (``test_the_row_lives_in_a_local_with_one_store``)."""
    body = kernels.trsv_diag_csr().codegen()
    body = body[body.index("void trsv_lower_csr(") :]
    body = body[: body.index("\n}\n")]
    assert f"{NAME} -= A(k) * (col_k == {PREV}_at0 ? {PREV} : x(col_k));" in body
    assert "__builtin_expect" not in body
    solve = kernels.sptrsv_csr().codegen()
    solve = solve[solve.index("void sptrsv_csr(") :]
    read = f"(col_k == {PREV}_at0 ? {PREV} : u(col_k))"
    assert f"{NAME} -= L(k) * {read};" in solve[: solve.index("\n}\n")]
    assert "__builtin_expect" not in solve[: solve.index("\n}\n")]
    gs = kernels.gauss_seidel_csr().codegen()
    gs = gs[gs.index("void gauss_seidel_csr(") :]
    assert "__builtin_expect(col_k == i" not in gs[: gs.index("\n}\n")]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_row_without_the_stores_solves_as_scipy(dtype: str) -> None:
    """The lower solve of ``trsv_diag_csr`` (no store before its reads) against scipy's
    ``spsolve_triangular`` and, bitwise, against the statements run one by one."""
    n = 400
    rng = np.random.default_rng(5)
    a = sp.random_array((n, n), density=0.02, format="csr", rng=rng)
    full = sp.csr_array(a + a.T + sp.eye_array(n) * 8.0)
    full.sort_indices()
    args = spf.sparse.gauss_seidel_args(full, index_dtype=dtype)
    b = rng.uniform(-1.0, 1.0, n)
    x = np.zeros(n)
    kernels.trsv_diag_csr(index_dtype=dtype).compile()(x=x, b=b, **args)
    lower = sp.csr_array(sp.tril(full, format="csr"))
    want = sp.linalg.spsolve_triangular(lower, b, lower=True)
    assert np.allclose(x, want, rtol=1e-12, atol=1e-12)
    rp, col, vals = args["rowptr"], args["col"], args["A"]
    seq = np.zeros(n)
    for i in range(n):
        seq[i] = b[i]
        d = int(args["diag"][i])
        for k in range(int(rp[i]), d):
            seq[i] = seq[i] - vals[k] * seq[int(col[k])]
        seq[i] = seq[i] / vals[d]
    assert np.array_equal(x, seq)

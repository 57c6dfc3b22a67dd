"""spf.kernels.spgemm_csr: C = A·B in CSR with the pattern computed at run time
(symbolic phase, numeric phase, per-thread workspaces), against scipy: the einsum
``C(i,j) = A(i,k) * B(k,j)`` with CSR operands, API §14 names, columns sorted."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

from spf import kernels
from spf.errors import ArgumentError, IllegalScheduleError, SpfError
from spf.sparse import csr_args, read_matrix_market

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="module", params=[("int32", True), ("int64", False), ("int32", False)])
def kernel(request: pytest.FixtureRequest) -> tuple[kernels.SpGEMMKernel, str]:
    dtype, parallel = request.param
    return kernels.spgemm_csr(index_dtype=dtype, parallel=parallel).compile(), dtype


def _multiply(k: kernels.SpGEMMKernel, dtype: str, a: object, b: object) -> sp.csr_array:
    a, b = sp.csr_array(a), sp.csr_array(b)
    n, kk = a.shape
    m = b.shape[1]
    out = k(
        A_rowptr=a.indptr.astype(dtype), A_col=a.indices.astype(dtype), A=a.data.astype(float),
        B_rowptr=b.indptr.astype(dtype), B_col=b.indices.astype(dtype), B=b.data.astype(float),
        N=n, K=kk, M=m,
    )  # fmt: skip
    assert out["rowptr"].dtype == dtype
    assert out["col"].dtype == dtype
    assert (out["N"], out["M"], out["NNZ"]) == (n, m, len(out["col"]))
    return sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=(n, m))


def _same(c: sp.csr_array, want: object) -> None:
    want = sp.csr_array(want)
    want.sum_duplicates()
    want.sort_indices()
    assert np.array_equal(c.indptr, want.indptr)  # the same pattern, row by row
    assert np.array_equal(c.indices, want.indices)  # columns sorted, no duplicates
    assert np.allclose(c.data, want.data, rtol=1e-12, atol=1e-12)


def _random(n: int, m: int, density: float, seed: int) -> sp.csr_array:
    return sp.random_array((n, m), density=density, format="csr", rng=seed)


@pytest.mark.parametrize(
    ("n", "k", "m", "density"),
    [(40, 30, 50, 0.08), (1, 20, 7, 0.3), (25, 25, 25, 0.02), (60, 5, 60, 0.5)],
)
def test_matches_scipy_on_random_matrices(
    kernel: tuple[kernels.SpGEMMKernel, str], n: int, k: int, m: int, density: float
) -> None:
    a, b = _random(n, k, density, 1), _random(k, m, density, 2)
    a = sp.csr_array(a.toarray() * (np.arange(n) % 3 != 1)[:, None])  # empty rows
    _same(_multiply(*kernel, a, b), a @ b)


@pytest.mark.parametrize("m", [1, 2, 5, 63, 64, 65, 257])
def test_rows_of_every_length_come_out_sorted(
    kernel: tuple[kernels.SpGEMMKernel, str], m: int
) -> None:
    """Short rows are rank-sorted, long ones radix-sorted (two counting passes): rows of
    length 0, 1, around the switch, and full rows (every column, the last counting slot),
    with columns reached in descending and shuffled order."""
    rng = np.random.default_rng(m)
    lengths = sorted({0, 1, 2, m // 4, m // 2, m - 1, m} & set(range(m + 1)))
    b = np.zeros((len(lengths), m))
    for r, length in enumerate(lengths):
        b[r, rng.permutation(m)[:length]] = rng.random(length) + 1.0
    a = np.eye(len(lengths))[::-1] + np.eye(len(lengths))  # rows of B summed in pairs
    _same(_multiply(*kernel, a, b), a @ b)
    _same(_multiply(*kernel, np.eye(len(lengths)), b[:, ::-1]), b[:, ::-1])


@pytest.mark.parametrize("length", [15, 16, 17, 31, 32, 33])
def test_rank_sorted_rows_around_the_vector_padding_come_out_sorted(
    kernel: tuple[kernels.SpGEMMKernel, str], length: int
) -> None:
    """Short rows' keys are padded to a multiple of 16 (with M - 1) before the ranks are
    counted: rows just under, at and over a multiple, below the radix switch (56 columns at
    M = 10000), their columns reached out of order from two rows of B."""
    rng = np.random.default_rng(length)
    m = 10_000
    cols = rng.permutation(m)[:length]
    b = sp.csr_array(
        (rng.random(length) + 1.0, (np.arange(length) % 2, cols)), shape=(2, m)
    )  # interleaved halves: the row's list is unsorted
    a = np.ones((3, 2)) * np.array([[1.0], [0.0], [2.0]])  # and an empty row
    _same(_multiply(*kernel, a, b), sp.csr_array(a) @ b)


RANK_LIMIT = int(np.sqrt(32 * np.sqrt(10_000)))
"""The longest row the rank sort takes at M = 10000 (56 columns); longer ones are
radix-sorted."""


@pytest.mark.parametrize("length", [1, 2, 15, 16, 17, 33, RANK_LIMIT - 1, RANK_LIMIT])
def test_rank_sorted_rows_holding_the_padding_value_come_out_sorted(
    kernel: tuple[kernels.SpGEMMKernel, str], length: int
) -> None:
    """A padding lane holds M - 1 and its rank is the row's length, or one less where the
    row's last column is M - 1 itself (the lane then writes that column over itself): rows
    holding column M - 1 (and 0), reached last, first or in between, in and around a
    block of 16, up to the rank sort's limit."""
    rng = np.random.default_rng(length)
    m = 10_000
    middle = rng.permutation(np.arange(1, m - 1))[: max(length - 2, 0)]
    for cols in ([m - 1, *middle, 0][:length], [*middle, 0, m - 1][-length:]):
        cols = np.array(cols)
        half = np.arange(len(cols)) % 2  # interleaved: the list is unsorted
        b = sp.csr_array((rng.random(len(cols)) + 1.0, (half, cols)), shape=(2, m))
        a = np.array([[1.0, 2.0], [0.0, 0.0], [0.0, 3.0], [1.0, 0.0]])
        _same(_multiply(*kernel, a, b), sp.csr_array(a) @ b)


@pytest.mark.parametrize("length", [RANK_LIMIT, RANK_LIMIT + 1, 200])
def test_rows_either_side_of_the_radix_switch_come_out_sorted(
    kernel: tuple[kernels.SpGEMMKernel, str], length: int
) -> None:
    """Rows of the rank sort's last length and of the radix sort's first, and long ones,
    next to short and empty rows in the same product, columns out of order (from three
    rows of B) and the last column among them."""
    rng = np.random.default_rng(length + 1)
    m = 10_000
    cols = np.append(rng.permutation(m - 1)[: length - 1], m - 1)
    b = sp.csr_array((rng.random(length) + 1.0, (np.arange(length) % 3, cols)), shape=(3, m))
    a = np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 2.0, 0.0], [3.0, 0.0, 1.0]])
    _same(_multiply(*kernel, a, b), sp.csr_array(a) @ b)


def test_numeric_phase_interprets() -> None:
    a, b = _random(8, 6, 0.4, 1), _random(6, 20, 0.4, 2)
    want = sp.csr_array(a @ b)
    want.sort_indices()
    col, val = np.zeros(want.nnz, np.int32), np.zeros(want.nnz)
    kernels.spgemm_numeric().interpret(
        A_rowptr=a.indptr, A_col=a.indices, B_rowptr=b.indptr, B_col=b.indices,
        A=a.data, B=b.data, N=8, K=6, M=20, A_NNZ=a.nnz, B_NNZ=b.nnz, C_NNZ=want.nnz,
        C_rowptr=want.indptr.astype(np.int32), C_col=col, C=val,
    )  # fmt: skip
    assert np.array_equal(col, want.indices)
    assert np.allclose(val, want.data)


def test_empty_matrices(kernel: tuple[kernels.SpGEMMKernel, str]) -> None:
    z = sp.csr_array((4, 3))
    c = _multiply(*kernel, z, _random(3, 5, 0.5, 3))
    assert c.nnz == 0
    assert c.shape == (4, 5)
    c = _multiply(*kernel, sp.csr_array((0, 3)), _random(3, 5, 0.5, 3))
    assert c.shape == (0, 5)
    assert list(c.indptr) == [0]


def test_one_row_one_column(kernel: tuple[kernels.SpGEMMKernel, str]) -> None:
    a, b = np.array([[1.0, 2.0, 0.0]]), np.array([[3.0], [4.0], [5.0]])
    _same(_multiply(*kernel, a, b), a @ b)


@pytest.mark.parametrize("name", ["karate.mtx", "west0067.mtx", "lp_afiro.mtx", "olm1000.mtx"])
def test_suitesparse(suitesparse_dir: Path, name: str) -> None:
    path = suitesparse_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    a = sp.csr_array(read_matrix_market(path))
    k = kernels.spgemm_csr().compile()
    _same(_multiply(k, "int32", a, a.T.tocsr()), a @ a.T)


def test_takes_the_csr_args_of_both_operands() -> None:
    a, b = _random(9, 7, 0.3, 4), _random(7, 5, 0.3, 5)
    k = kernels.spgemm_csr(parallel=False).compile()
    out = k(**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_"))
    _same(sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=(9, 5)), a @ b)
    with pytest.raises(ArgumentError, match="K"):  # A is 9x7, B is 6x5
        k(**csr_args(a, prefix="A_"), **csr_args(_random(6, 5, 0.3, 5), prefix="B_"))


def test_old_argument_names_are_refused() -> None:
    k = kernels.spgemm_csr(parallel=False).compile()
    a = sp.csr_array(np.eye(2))
    with pytest.raises(ArgumentError, match="unknown argument"):
        k(Ap=a.indptr, Aj=a.indices, Ax=a.data, Bp=a.indptr, Bj=a.indices, Bx=a.data, N=2, K=2, M=2)


def test_is_the_einsum_of_the_product() -> None:
    from spf import einsum
    from spf.formats import CSR

    comp = einsum(kernels.SPGEMM, A=CSR, B=CSR, C=CSR, sizes={"i": "N", "k": "K", "j": "M"})
    assert comp.numeric.loop_structure() == kernels.spgemm_csr().numeric.loop_structure()


def test_rows_are_parallel_through_workspaces() -> None:
    for comp in (kernels.spgemm_symbolic(), kernels.spgemm_numeric()):
        assert comp.is_parallel_legal("s0", "i")
        text = comp.codegen()
        assert "= spf_thread_id() *" not in text  # not parallel: one copy
    par = kernels.spgemm_csr()
    for comp in (par.symbolic, par.numeric):
        assert "#pragma omp parallel for" in comp.codegen()
        assert "spf_thread_id() * spf_ws_stride((M))" in comp.codegen()
        assert kernels.Computation.from_json(comp.to_json()).codegen() == comp.codegen()


def test_row_workspaces_are_read_without_range_checks() -> None:
    # their values stay in range by construction (spf.index_notation.sparse_output)
    text = kernels.spgemm_csr().numeric.codegen()
    assert "spf_index_in_int32_t(" not in text.replace("static inline int32_t spf_index_in", "")
    for ws in ("lst", "len", "srt", "cnt", "dig", "tmp"):
        assert f"#define {ws}(t0) {ws}[spf_ws_{ws} + (t0)]" in text


def test_without_workspace_rows_are_not_parallel() -> None:
    from spf.computation import Computation

    comp = Computation("marks")
    comp.add_data_space("cnt", "int32_t", shape=("N",))
    comp.add_local("mark", "int32_t", ("M",))
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    comp.declare_uf(
        "rp", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}", monotonic="nondecreasing"
    )
    from spf.computation import Stmt

    comp.add_stmt(
        Stmt(
            "if ($mark$(col(k)) != i + 1) { $mark$(col(k)) = i + 1; $cnt$(i) += 1; }",
            "{[i,k]: 0 <= i < N && rp(i) <= k < rp(i+1)}",
        )
    )
    assert not comp.is_parallel_legal("s0", "i")
    comp.stmt("s0").parallelize("i")
    with pytest.raises(IllegalScheduleError, match="mark"):
        comp.check_legality()
    comp.stmt("s0").workspace("mark", "i")
    comp.check_legality()
    assert "spf_thread_id() * spf_ws_stride((M))" in comp.codegen()
    back = Computation.from_json(comp.to_json())
    assert back.codegen() == comp.codegen()


def test_workspace_errors() -> None:
    comp = kernels.spgemm_symbolic()
    with pytest.raises(SpfError, match="local"):
        comp.stmt("s1").workspace("C_rowptr", "i")
    with pytest.raises(SpfError, match="add_local"):
        comp.stmt("s1").workspace("nope", "i")
    with pytest.raises(SpfError):
        comp.stmt("s1").workspace("mark", "q")
    with pytest.raises(SpfError, match="fill"):
        comp.stmt("s1").workspace("mark", "i", fill="x")  # type: ignore[arg-type]


def test_bad_calls() -> None:
    k = kernels.spgemm_csr(parallel=False).compile()
    with pytest.raises(ArgumentError, match="A_col"):
        k(A_rowptr=np.zeros(1, np.int32), N=0, K=0, M=0)
    a = sp.csr_array(np.eye(3))
    with pytest.raises(ArgumentError):  # an out-of-range column index of B
        k(
            A_rowptr=a.indptr, A_col=a.indices, A=a.data, B_rowptr=a.indptr,
            B_col=np.array([0, 1, 9], np.int32), B=a.data, N=3, K=3, M=3,
        )  # fmt: skip
    with pytest.raises(SpfError, match="index_dtype"):
        kernels.spgemm_csr(index_dtype="float64")


def test_a_huge_row_count_is_refused_before_allocating() -> None:
    k = kernels.spgemm_csr(parallel=False).compile()
    a = sp.csr_array(np.eye(3))
    ptr, col = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    with pytest.raises(ArgumentError, match=r"N = 1000000000000 .*row pointers"):
        k(A_rowptr=ptr, A_col=col, A=a.data, B_rowptr=ptr, B_col=col, B=a.data,
          N=10**12, K=3, M=3)  # fmt: skip
    with pytest.raises(ArgumentError):  # fits in memory, but not A's row pointers
        k(A_rowptr=ptr, A_col=col, A=a.data, B_rowptr=ptr, B_col=col, B=a.data, N=7, K=3, M=3)


@pytest.mark.parametrize("target", ["cuda", "hls"])
def test_workspaces_other_targets_refuse_clearly(target: str) -> None:
    with pytest.raises(SpfError, match=r"workspace 'mark'.*target 'c'"):
        kernels.spgemm_symbolic().codegen(target=target)


def test_symbolic_phase_interprets() -> None:
    a, b = _random(8, 6, 0.3, 1), _random(6, 5, 0.3, 2)
    cp = np.zeros(9, np.int32)
    kernels.spgemm_symbolic().interpret(
        A_rowptr=a.indptr, A_col=a.indices, B_rowptr=b.indptr, B_col=b.indices,
        A=a.data, B=b.data, N=8, K=6, M=5, A_NNZ=a.nnz, B_NNZ=b.nnz, C_rowptr=cp,
    )  # fmt: skip
    assert np.array_equal(cp, sp.csr_array(a @ b).indptr)

"""``spf.sparse`` helpers on inputs a careless caller passes: an ``ArgumentError`` naming the
helper and what to pass, never numpy's or scipy's own exception (API.md §1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        ([[1.0, "a"]], r"values must be numbers .* got dtype <U"),
        (np.array([[1.0, None]], dtype=object), r"values must be numbers .* got dtype object"),
        (np.array([[np.datetime64("2020-01-01")]]), r"values must be numbers .* datetime64"),
        ([[1.0, 2.0], [3.0]], r"cannot read it as a 2-D array"),
    ],
)
@pytest.mark.parametrize("helper", ["csr_args", "coo_args", "ell_args"])
def test_dense_input_that_is_not_a_numeric_matrix(
    helper: str, matrix: object, message: str
) -> None:
    with pytest.raises(spf.ArgumentError, match=f"{helper}: {message}"):
        getattr(spf.sparse, helper)(matrix)


def test_numeric_dense_inputs_still_accepted() -> None:
    for matrix in ([[1, 0], [2, 3]], np.array([[True, False]]), np.eye(2, dtype=np.float32)):
        args = spf.sparse.csr_args(matrix)
        assert args["A"].dtype == np.float64


@pytest.mark.parametrize("max_fill", ["x", float("nan"), 0.0, -1.0, None])
def test_bdia_max_fill_must_be_a_positive_number(max_fill: object) -> None:
    with pytest.raises(spf.ArgumentError, match=r"bdia_args: max_fill must be a positive number"):
        spf.sparse.bdia_args(spf.sparse.poisson2d(3), 2, max_fill=max_fill)  # type: ignore[arg-type]


def test_bdia_max_fill_infinite_accepted() -> None:
    args = spf.sparse.bdia_args(sp.random_array((9, 9), density=0.5, rng=0), 2, max_fill=np.inf)
    assert args["NS"] > 0


def test_matrix_market_value_out_of_range(tmp_path: Path) -> None:
    path = tmp_path / "big.mtx"
    path.write_text(
        "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 99999999999999999999\n"
    )
    with pytest.raises(spf.ArgumentError, match=r"read_matrix_market: cannot read .*big\.mtx"):
        spf.sparse.read_matrix_market(path)


def test_block_sizes_take_numpy_ints_as_the_helpers_do() -> None:
    """``spf.sparse.bcsr_args(m, np.int64(2), 2)`` worked, ``spmv_bcsr(np.int64(2), 2)``
    and ``BCSR(np.int64(2), 2)`` refused the same block size."""
    from spf.formats import BCSR, BDIA, SELL

    two = np.int64(2)
    assert BCSR(two, np.int32(3)) is BCSR(2, 3)
    assert SELL(two, np.int64(4)) is SELL(2, 4)
    assert BDIA(two) is BDIA(2)
    comp = spf.kernels.spmv_bcsr(two, 2)
    assert comp.name == "spmv_bcsr_2x2"
    m = sp.random_array((5, 4), density=0.5, rng=1, format="csr")
    args = spf.sparse.bcsr_args(m, two, 2)
    y, x = np.zeros(2 * args["NB"]), np.zeros(2 * args["MB"])
    x[:4] = np.arange(1.0, 5.0)
    comp.interpret(y=y, x=x, **args)
    assert np.allclose(y[:5], m @ x[:4])


# ------------------------------------------------ Matrix Market bytes that crash scipy's reader
_MTX = b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n3 2 -7"


def _read_in_child(paths: list[Path]) -> list[str]:
    """``read_matrix_market`` of each path in a child process, so that a crash of scipy's
    reader fails the test instead of killing pytest: the dense matrix, or the error."""
    import subprocess
    import sys

    script = (
        "import sys, spf, spf.sparse as s\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        print(s.read_matrix_market(p).toarray().tolist())\n"
        "    except spf.ArgumentError as e:\n"
        "        print(e)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    return run.stdout.splitlines()


def test_matrix_market_last_line_without_newline_is_read_not_a_crash(tmp_path: Path) -> None:
    """scipy's reader (fast_matrix_market) died with a segmentation fault on a last line that
    ends in a blank, a CR or any other byte but a newline."""
    tails = [b"", b"\n", b" ", b"\t", b"  ", b"\r", b"x"]
    paths = [tmp_path / f"t{k}.mtx" for k in range(len(tails))]
    for path, tail in zip(paths, tails, strict=True):
        path.write_bytes(_MTX + tail)
    want = str([[1.5, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, -7.0, 0.0]])
    assert _read_in_child(paths) == [want] * len(tails)


def test_matrix_market_nul_byte_refused_with_its_line(tmp_path: Path) -> None:
    import gzip

    nul = tmp_path / "nul.mtx"  # "1.5\0" crashed scipy's reader (a segmentation fault)
    nul.write_bytes(_MTX.replace(b"1.5", b"1.5\0") + b"\n")
    packed = tmp_path / "packed.mtx"
    packed.write_bytes(gzip.compress(_MTX + b"\n"))
    out = _read_in_child([nul, packed])
    assert "nul.mtx' line 3: a NUL byte" in out[0], out
    assert "gzip-compressed: name it .mtx.gz" in out[1], out


def test_matrix_market_damaged_archive_and_non_paths(tmp_path: Path) -> None:
    import bz2
    import gzip

    (tmp_path / "cut.mtx.gz").write_bytes(gzip.compress(_MTX + b"\n")[:-8])
    (tmp_path / "cut.mtx.bz2").write_bytes(bz2.compress(_MTX + b"\n")[:-8])
    for name in ("cut.mtx.gz", "cut.mtx.bz2"):  # raw EOFError before
        with pytest.raises(spf.ArgumentError, match=rf"cannot read .*{name}"):
            spf.sparse.read_matrix_market(tmp_path / name)
    (tmp_path / "ok.mtx.gz").write_bytes(gzip.compress(_MTX + b" "))
    assert spf.sparse.read_matrix_market(tmp_path / "ok.mtx.gz")[2, 1] == -7.0
    for bad in (None, 3, b"x.mtx"):  # raw TypeError before
        with pytest.raises(spf.ArgumentError, match=r"expected the path of a \.mtx file"):
            spf.sparse.read_matrix_market(bad)  # type: ignore[arg-type]


# ------------------------------------------ scipy matrices whose index arrays scipy left unchecked
def _malformed() -> list[tuple[object, str]]:
    shape = (4, 3)
    neg = sp.csr_array((np.ones(1), np.array([-1]), np.array([0, 1, 1, 1, 1])), shape=shape)
    big = sp.csr_array((np.ones(1), np.array([0]), np.array([0, 1, 1, 1, 1])), shape=shape)
    big.indices[0] = 5  # as a careless in-place edit does
    down = sp.csr_array((np.ones(2), np.array([0, 1]), np.array([0, 2, 1, 2, 2])), shape=shape)
    csc = sp.csc_array((np.ones(1), np.array([7]), np.array([0, 1, 1, 1])), shape=shape)
    coo = sp.coo_array((np.ones(1), (np.array([0]), np.array([1]))), shape=shape)
    coo.col[0] = -2
    return [
        (neg, r"CSR matrix is malformed: stored entry 0 has index -1, outside 0\.\.2"),
        (big, r"CSR matrix is malformed: stored entry 0 has index 5, outside 0\.\.2"),
        (down, r"CSR matrix is malformed: indptr decreases from indptr\[1\] = 2 to 1"),
        (csc, r"CSC matrix is malformed: stored entry 0 has index 7, outside 0\.\.3"),
        (coo, r"COO matrix is malformed: stored entry 0 has axis-1 index -2, outside 0\.\.2"),
    ]


@pytest.mark.parametrize("helper", ["csr_args", "csc_args", "coo_args", "dia_args", "ell_args"])
def test_malformed_scipy_matrix_refused(helper: str) -> None:
    """csc_args dropped the entry of column -1 (NNZ 0) and dia_args stored it on diagonal -1,
    silently; csr_args passed col = -1 on; a decreasing indptr raised scipy's ValueError."""
    for m, message in _malformed():
        with pytest.raises(spf.ArgumentError, match=f"{helper}: the {message}"):
            getattr(spf.sparse, helper)(m)


def test_big_endian_and_half_precision_inputs() -> None:
    """scipy.sparse refuses ">f8" and float16 values (a raw ValueError before): spf converts
    them, as it converts every other numeric dtype, and the product is scipy's."""
    a = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 5.0, 0.0]])
    x = np.array([1.0, -2.0, 0.5])
    be = sp.csr_array(
        (np.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype=">f8"), np.array([0, 2, 2, 0, 1], dtype=">i4"),
         np.array([0, 2, 3, 5], dtype=">i4")), shape=(3, 3),
    )  # fmt: skip
    for m in (a.astype(">f8"), a.astype(np.float16), np.asfortranarray(a.astype(">f4")), be):
        for helper, kernel in (("csr_args", "spmv_csr"), ("csc_args", "spmv_csc"),
                               ("coo_args", "spmv_coo")):  # fmt: skip
            y = np.zeros(3)
            getattr(spf.kernels, kernel)().interpret(y=y, x=x, **getattr(spf.sparse, helper)(m))
            assert np.array_equal(y, a @ x), (m, helper)


def test_matrix_market_size_line_beyond_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``1000000000 3 1`` with one entry: the CSR conversion asked for 8 GB of row pointers
    (numpy's MemoryError, or a filled machine); refused from the size line instead."""
    import spf.sparse_checks

    monkeypatch.setattr(spf.sparse_checks, "physical_memory", lambda: 2**30)
    path = tmp_path / "tall.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n1000000000 3 1\n1 1 1\n")
    with pytest.raises(spf.ArgumentError, match=r"tall\.mtx': the size line gives 1000000000 rows"):
        spf.sparse.read_matrix_market(path)
    small = tmp_path / "small.mtx"
    small.write_text("%%MatrixMarket matrix coordinate real general\n1000 3 1\n1 1 1\n")
    assert spf.sparse.read_matrix_market(small).shape == (1000, 3)


@pytest.mark.parametrize("helper", ["csf_args", "coo_tensor_args"])
def test_tensor_helpers_on_careless_inputs(helper: str) -> None:
    """Values "a" / ragged coordinates raised numpy's ValueError; None became NaN silently;
    a uint64 coordinate beyond int64 was reported as a negative one."""
    build = getattr(spf.sparse, helper)
    with pytest.raises(spf.ArgumentError, match=rf"{helper}: values must be numbers .*<U1"):
        build([[0, 1]], ["a", "b"], (2,))
    with pytest.raises(spf.ArgumentError, match=rf"{helper}: values must be numbers .*object"):
        build([[0, 1]], np.array([1.0, None], dtype=object), (2,))
    with pytest.raises(spf.ArgumentError, match=rf"{helper}: cannot read coords as an array"):
        build([[0, 1], [0]], [1.0, 2.0], (2, 2))
    with pytest.raises(spf.ArgumentError, match=r"coordinate 9223372036854775809 in dimension 1"):
        build(np.array([[0, 2**63 + 1]], dtype=np.uint64), [1.0, 2.0], (3,))
    args = build(np.array([[1, 0]], dtype=">u4"), np.array([True, False]), (2,))
    assert args["NNZ"] == 2


def test_mpi_scatter_csr_refuses_a_malformed_matrix() -> None:
    """scatter_csr passed a column index of -1 on to the rank's kernel."""

    class OneRank:
        def Get_rank(self) -> int:
            return 0

        def Get_size(self) -> int:
            return 1

    for m, message in _malformed():
        if getattr(m, "format", "") == "csr":
            with pytest.raises(spf.ArgumentError, match=f"scatter_csr: the {message}"):
                spf.mpi.scatter_csr(m, OneRank())
    good = spf.sparse.poisson2d(2)
    assert spf.mpi.scatter_csr(good, OneRank())["NNZ"] == good.nnz


def test_padded_formats_refused_before_filling_the_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """ELL / DIA of a matrix with one dense row and column (arrow.mtx, 139498 entries) asked
    for 26 / 35 GB: numpy's MemoryError, or a filled machine. Scaled down here."""
    import spf.sparse_checks

    n = 400
    arrow = sp.lil_array((n, n))
    arrow[0, :] = 1.0
    arrow[:, 0] = 1.0
    arrow.setdiag(2.0)
    arrow = sp.csr_array(arrow)
    monkeypatch.setattr(spf.sparse_checks, "physical_memory", lambda: 2 * n * n * 8)
    with pytest.raises(spf.ArgumentError, match=r"ell_args: 400 rows padded to 400 slots take"):
        spf.sparse.ell_args(arrow)
    with pytest.raises(spf.ArgumentError, match=r"dia_args: 799 diagonals of 400 values take"):
        spf.sparse.dia_args(arrow)
    with pytest.raises(spf.ArgumentError, match=r"sell_args: .* slots \(padding included\) take"):
        spf.sparse.sell_args(arrow, 400)
    assert spf.sparse.sell_args(arrow, 4, 8)["NV"] < n * n / 4  # sorted rows: little padding
    assert spf.sparse.csr_args(arrow)["NNZ"] == 3 * n - 2


def test_matrix_market_path_that_is_not_a_file(tmp_path: Path) -> None:
    """A directory or a FIFO was reported as "no such file"."""
    import os

    folder = tmp_path / "m.mtx"
    folder.mkdir()
    with pytest.raises(spf.ArgumentError, match=r"m\.mtx' is a directory; give a \.mtx file"):
        spf.sparse.read_matrix_market(folder)
    fifo = tmp_path / "pipe.mtx"
    os.mkfifo(fifo)
    with pytest.raises(spf.ArgumentError, match=r"pipe\.mtx' is not a regular file"):
        spf.sparse.read_matrix_market(fifo)


def test_matrix_market_byte_order_mark_named(tmp_path: Path) -> None:
    """scipy refuses it as "Missing banner", which does not say what is wrong."""
    path = tmp_path / "bom.mtx"
    path.write_bytes(b"\xef\xbb\xbf" + _MTX + b"\n")
    with pytest.raises(spf.ArgumentError, match=r"bom\.mtx' line 1: .* byte order mark"):
        spf.sparse.read_matrix_market(path)


@pytest.mark.parametrize(
    "helper", ["csr_args", "csc_args", "coo_args", "ell_args", "dia_args", "spmm_args"]
)
def test_duplicates_summed_in_float64_not_in_the_input_dtype(helper: str) -> None:
    """int8 duplicates 100 + 100 came out as -56 (uint8 200 + 100 as 44, bool True + True as
    1) from every helper that sums duplicates, while coo_args kept both: 200."""
    rows, cols = np.array([0, 0, 1]), np.array([0, 0, 1])
    for data, want in (
        (np.array([100, 100, 1], dtype=np.int8), 200.0),
        (np.array([200, 100, 1], dtype=np.uint8), 300.0),
        (np.array([True, True, True]), 2.0),
        (np.array([1e8, 1.0, 1.0], dtype=np.float32), 100000001.0),
    ):
        m = sp.coo_array((data, (rows, cols)), shape=(2, 2))
        args = getattr(spf.sparse, helper)(m)
        y = np.zeros(2)
        if helper == "dia_args":
            spf.kernels.spmv(spf.formats.DIA).interpret(y=y, x=np.array([1.0, 0.0]), **args)
        elif helper == "ell_args":
            spf.kernels.spmv(spf.formats.ELL).interpret(y=y, x=np.array([1.0, 0.0]), **args)
        elif helper == "spmm_args":
            c = np.zeros((2, 1))
            spf.kernels.spmm_csr().interpret(C=c, B=np.array([[1.0], [0.0]]), **args)
            y = c[:, 0]
        else:
            kernel = {"csr_args": "spmv_csr", "csc_args": "spmv_csc", "coo_args": "spmv_coo"}
            getattr(spf.kernels, kernel[helper])().interpret(y=y, x=np.array([1.0, 0.0]), **args)
        assert y[0] == want, (helper, data.dtype, y[0])


def test_mpi_scatter_csr_sums_duplicates_in_float64() -> None:
    """The CSR conversion summed int8 duplicates 100 + 100 in int8: -56."""

    class OneRank:
        def Get_rank(self) -> int:
            return 0

        def Get_size(self) -> int:
            return 1

    m = sp.coo_array((np.array([100, 100], dtype=np.int8), ([0, 0], [0, 0])), shape=(1, 1))
    assert spf.mpi.scatter_csr(m, OneRank())["A"].tolist() == [200.0]


def test_matrix_market_integer_duplicates_summed_in_float64(tmp_path: Path) -> None:
    """Two entries 2**62 at one place summed in int64 wrapped to -2**63."""
    path = tmp_path / "dup.mtx"
    big = 2**62
    path.write_text(
        f"%%MatrixMarket matrix coordinate integer general\n1 1 2\n1 1 {big}\n1 1 {big}\n"
    )
    assert spf.sparse.read_matrix_market(path)[0, 0] == 2.0**63


def test_matrix_market_array_file_beyond_memory(tmp_path: Path) -> None:
    """An array file whose size line says 100000 x 100000 (one value given): scipy allocated
    the 74.5 GiB dense matrix first (numpy's MemoryError)."""
    path = tmp_path / "dense.mtx"
    path.write_text("%%MatrixMarket matrix array real general\n100000 100000\n1\n")
    with pytest.raises(spf.ArgumentError, match=r"100000 x 100000 dense values .* coordinate"):
        spf.sparse.read_matrix_market(path)


def test_matrix_market_entry_count_beyond_memory(tmp_path: Path) -> None:
    """``3 3 5000000000`` and one entry: scipy allocated the 5e9 entries first (MemoryError)."""
    path = tmp_path / "many.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n3 3 5000000000\n1 1 2\n")
    with pytest.raises(spf.ArgumentError, match=r"the 5000000000 entries of the size line take"):
        spf.sparse.read_matrix_market(path)


@pytest.mark.parametrize("seed", range(4))
def test_bcsr_args_equal_scipys_blocks(seed: int) -> None:
    """``bcsr_args`` finds the blocks itself (scipy's ``tobsr`` allocates an array of the
    block columns' extent): the same arrays as ``tobsr`` of the zero-padded matrix, with
    duplicates, explicit zeros, empty rows and shapes that leave partial blocks."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n, m = (int(v) for v in rng.integers(1, 30, 2))
        nnz = int(rng.integers(0, n * m + 1))
        rows, cols = rng.integers(0, n, nnz), rng.integers(0, m, nnz)
        a = sp.coo_array((rng.choice([0.0, 1.0, -2.5], nnz), (rows, cols)), shape=(n, m))
        r, c = (int(v) for v in rng.integers(1, 6, 2))
        got = spf.sparse.bcsr_args(a, r, c)
        nb, mb = -(-n // r), -(-m // c)
        padded = sp.csr_array((a.data, (a.row, a.col)), shape=(nb * r, mb * c))
        padded.sum_duplicates()
        bsr = padded.tobsr(blocksize=(r, c))
        bsr.sort_indices()
        assert (got["NB"], got["MB"], got["NNZB"]) == (nb, mb, bsr.nnz // (r * c))
        assert np.array_equal(got["browptr"], bsr.indptr)
        assert np.array_equal(got["bcol"], bsr.indices)
        assert np.array_equal(got["A"], bsr.data.reshape(-1))


def test_bcsr_args_of_a_wide_hypersparse_matrix() -> None:
    """Two entries among 3e9 columns: the blocks of the entries alone (scipy's ``tobsr``
    took 13 s and 750M bytes of scratch for them)."""
    wide = 3_000_000_000
    m = sp.coo_array(([1.0, 2.0], ([0, 1], [wide - 1, 5])), shape=(3, wide))
    got = spf.sparse.bcsr_args(m, 1, 4)
    assert got["bcol"].dtype == np.int32
    assert got["bcol"].tolist() == [749_999_999, 1]
    assert got["browptr"].tolist() == [0, 1, 2, 2]
    assert got["MB"] == 750_000_000
    assert got["A"].tolist() == [0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("data", "indices", "indptr", "message"),
    [
        ([2.0, 1.0], [0, 0], [0, 1, 2], r"L\[1, 1\] is missing"),  # row 1 ends left of it
        ([2.0, 1.0, 0.0], [0, 0, 1], [0, 1, 3], r"L\[1, 1\] is zero"),
        ([0.0, 1.0], [0, 0], [0, 1, 2], r"L\[0, 0\] is zero"),  # the first row stops it
        ([1.0], [0], [0, 0, 1], r"L\[0, 0\] is missing"),  # an empty row
        ([], [], [0, 0, 0], r"L\[0, 0\] is missing"),  # no entry at all
        ([1.0, 5.0, 2.0], [0, 1, 1], [0, 2, 3], r"entry \(0, 1\) lies above the diagonal"),
    ],
)
def test_sptrsv_args_names_the_first_wrong_diagonal_entry(
    data: list[float], indices: list[int], indptr: list[int], message: str
) -> None:
    m = sp.csr_array((np.array(data), np.array(indices), np.array(indptr)), shape=(2, 2))
    with pytest.raises(spf.ArgumentError, match=rf"sptrsv_args: .*{message}"):
        spf.sparse.sptrsv_args(m)


def test_sptrsv_args_checks_a_million_rows_in_numpy() -> None:
    """The diagonal check is numpy over the rows (a Python loop took ~2 us a row: 1 s for
    500k rows); a zero diagonal deep in a large triangle is still found and named."""
    n = 1_000_000
    m = sp.csr_array(sp.eye_array(n, format="csr") * 2.0 + sp.eye_array(n, k=-1, format="csr"))
    args = spf.sparse.sptrsv_args(m)
    assert args["N"] == n
    assert args["NNZ"] == 2 * n - 1
    m.data[m.indptr[n - 3 + 1] - 1] = 0.0  # row n - 3's diagonal
    with pytest.raises(spf.ArgumentError, match=rf"L\[{n - 3}, {n - 3}\] is zero"):
        spf.sparse.sptrsv_args(m)

"""Cheap checks of the checked function's sparse rows: fused reads (spf.codegen.row_pairs)
and, where those do not apply, blocked pre-checks (spf.codegen.row_blocks).

A checked CSR-shaped kernel with sorted rows tests each entry's range and its pair with the
previous entry of its row in one unsigned comparison (fused reads, 32- and 64-bit indices),
or, where that does not apply (forced here), runs its rows in blocks of about
``BLOCK_ENTRIES`` entries; each block's index range and breaking pairs are counted by
vectorised passes, a block in range runs without in-loop tests (its pairs across row starts
counted per row) and one out of range runs the exact checked loops. Either way every
violation is still caught, in the first, a middle or the last row (block) and at a block
boundary, at a row's first entry and at the top of the range, with the same error naming
the fact, row and entries; results are bitwise those of the unchecked call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError, kernels
from spf.analysis import memo
from spf.codegen import row_pairs
from spf.codegen.row_blocks import BLOCK_ENTRIES
from spf.formats import CSC, CSR, Format
from spf.runtime import compile as compile_module
from spf.runtime import warm
from spf.testing import random_csr

ROWS = 3000
"""Rows of about 3 entries: several blocks, the last one partial."""


WAYS = [("int32", "pairs"), ("int64", "pairs"), ("int32", "blocks")]
"""Index dtype and the checked rows' form: fused reads, or the blocks (where fused reads do
not apply; 32-bit indices only)."""


def _compiled(fmt: Format, dtype: str, way: str) -> Any:
    """``spmv(fmt)`` compiled with its checked rows in ``way``'s form."""
    if way == "pairs":
        kernel = kernels.spmv(fmt, index_dtype=dtype).compile()
    else:
        with _without_fused_reads():  # as for a kernel whose rows fused reads do not fit
            kernel = kernels.spmv(fmt, index_dtype=dtype).compile()
    assert ("spf_rb_rows" if way == "blocks" else "spf_pair_") in kernel.source
    return kernel


@contextlib.contextmanager
def _without_fused_reads() -> Iterator[None]:
    """Compiles generate their code again with no fused reads (not the units or kernels
    generated before, in memory or on disk, and keeping none)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(row_pairs, "plan", lambda *args: None)
        mp.setattr(compile_module, "_GENERATED", {})
        mp.setattr(compile_module, "_read_generated", lambda *args: None)
        mp.setattr(compile_module, "_write_generated", lambda *args: None)
        mp.setattr(warm, "warm_key", lambda *args, **kwargs: None)
        mp.setattr(memo, "remembered", lambda ir, key, run: run())
        yield


@pytest.fixture(scope="module", params=WAYS, ids=["-".join(w) for w in WAYS])
def csr(request: pytest.FixtureRequest) -> tuple[str, Any]:
    dtype, way = request.param
    return dtype, _compiled(CSR, dtype, way)


@pytest.fixture(scope="module")
def matrix() -> Any:
    m = random_csr(ROWS, ROWS, 3 / ROWS, 7, empty_rows=[0, 5, 6, ROWS - 2])
    assert m.nnz > 3 * BLOCK_ENTRIES  # several blocks
    return m


def _args(m: Any, dtype: str) -> dict[str, Any]:
    return spf.sparse.format_args(m, CSR, index_dtype=dtype)


def _run(kernel: Any, args: dict[str, Any], check: bool = True) -> Any:
    y = np.zeros(args["N"])
    x = np.linspace(-1.0, 2.0, args["M"])
    kernel(**args, x=x, y=y, check=check)
    return y


def test_the_csr_shaped_kernels_fuse_their_reads() -> None:
    for fmt in (CSR, CSC):  # sorted rows (columns), 32- and 64-bit indices
        for dtype in ("int32", "int64"):
            source = kernels.spmv(fmt, index_dtype=dtype).compile().source
            assert "spf_pair_" in source
            assert "spf_rb_rows" not in source
    # the blocks, where fused reads do not apply, need 32-bit indices (their pair counts)
    with _without_fused_reads():
        for fmt in (CSR, CSC):
            assert "spf_rb_rows" in kernels.spmv(fmt).compile().source
        assert "spf_rb_rows" not in kernels.spmv(CSR, index_dtype="int64").compile().source
    # measured no gain, so they keep their checked loops: a row loop with range tests only,
    # loops with other bounds than the row's, a loop inside the row loop
    left = (kernels.spmv_csr(), kernels.gauss_seidel_csr(), kernels.spmm_csr())
    for comp in left:
        source = comp.compile().source
        assert "spf_rb_rows" not in source
        assert "spf_pair_" not in source


def test_checked_results_are_bitwise_the_unchecked_ones(csr: tuple[str, Any], matrix: Any) -> None:
    dtype, kernel = csr
    args = _args(matrix, dtype)
    y = _run(kernel, args)
    assert np.array_equal(y, _run(kernel, args, check=False))
    np.testing.assert_allclose(y, matrix @ np.linspace(-1.0, 2.0, ROWS), rtol=1e-12, atol=1e-12)


def _swapped(a: Any, s: int) -> Any:
    """A copy of index array ``a`` with entries ``s`` and ``s + 1`` swapped."""
    out = a.copy()
    out[s], out[s + 1] = a[s + 1], a[s]
    return out


def _row_of_two(m: Any, where: str) -> int:
    """A row of at least two entries in the first, middle or last block."""
    lengths = np.diff(m.indptr)
    rows = np.flatnonzero(lengths >= 2)
    return int({"first": rows[0], "middle": rows[len(rows) // 2], "last": rows[-1]}[where])


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_unsorted_rows_are_refused_in_every_block(
    csr: tuple[str, Any], matrix: Any, where: str
) -> None:
    dtype, kernel = csr
    args = _args(matrix, dtype)
    row = _row_of_two(matrix, where)
    s = int(args["rowptr"][row])
    with pytest.raises(ArgumentError, match=rf"fails first at i = {row}, k1 = {s}, k2 = {s + 1}"):
        _run(kernel, {**args, "col": _swapped(args["col"], s)})
    col = args["col"].copy()
    col[s + 1] = col[s]  # equal columns: not strictly sorted
    with pytest.raises(ArgumentError, match=rf"fails first at i = {row}, k1 = {s}, k2 = {s + 1}"):
        _run(kernel, {**args, "col": col})


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_columns_out_of_range_are_refused_in_every_block(
    csr: tuple[str, Any], matrix: Any, where: str
) -> None:
    dtype, kernel = csr
    args = _args(matrix, dtype)
    start = int(args["rowptr"][_row_of_two(matrix, where)])
    for k in (start + 1, start):  # inside a row and at its first entry
        for bad in (ROWS, -1):
            col = args["col"].copy()
            col[k] = bad
            with pytest.raises(ArgumentError, match=rf"col\[{k}\] = {bad} is outside"):
                _run(kernel, {**args, "col": col})


def test_a_descent_between_rows_is_no_error(csr: tuple[str, Any]) -> None:
    dtype, kernel = csr
    # every row restarts at column 0, and rows 1 and 3 are empty
    _checked_rows(kernel, dtype, [[0, 5, 9], [], [0, 1], [], [2, 3, 4, 8]] * 700)


def _checked_rows(kernel: Any, dtype: str, rows: list[list[int]]) -> dict[str, Any]:
    """The CSR arguments of a matrix of ``rows`` (each its columns, of 10), whose checked
    call returns the unchecked call's results, bitwise, and scipy's."""
    r = np.repeat(np.arange(len(rows)), [len(c) for c in rows])
    c = np.concatenate([np.array(c, dtype=np.int64) for c in rows])
    m = sp.csr_array((np.arange(1.0, len(r) + 1), (r, c)), shape=(len(rows), 10))
    args = _args(m, dtype)
    y = _run(kernel, args)
    assert np.array_equal(y, _run(kernel, args, check=False))
    np.testing.assert_allclose(y, m @ np.linspace(-1.0, 2.0, 10))
    return args


def test_one_row_and_a_dense_row(csr: tuple[str, Any]) -> None:
    dtype, kernel = csr
    one = sp.csr_array(np.arange(1.0, 5001.0).reshape(1, 5000))
    args = _args(one, dtype)
    assert np.array_equal(_run(kernel, args), _run(kernel, args, check=False))
    col = args["col"].copy()
    col[4000], col[4001] = col[4001], col[4000]
    with pytest.raises(ArgumentError, match=r"fails first at i = 0, k1 = 4000, k2 = 4001"):
        _run(kernel, {**args, "col": col})
    dense = sp.vstack([random_csr(2000, 5000, 0.001, 3), one, random_csr(2000, 5000, 0.001, 4)])
    args = _args(sp.csr_array(dense), dtype)
    y = _run(kernel, args)
    assert np.array_equal(y, _run(kernel, args, check=False))
    np.testing.assert_allclose(y, dense @ np.linspace(-1.0, 2.0, 5000))


def test_a_broken_row_after_other_arrays_were_remembered(csr: tuple[str, Any], matrix: Any) -> None:
    dtype, kernel = csr
    args = _args(matrix, dtype)
    for _ in range(3):
        _run(kernel, args)
    row = _row_of_two(matrix, "last")
    s = int(args["rowptr"][row])
    col = _swapped(args["col"], s)
    with pytest.raises(ArgumentError, match=rf"fails first at i = {row}, k1 = {s}"):
        _run(kernel, {**args, "col": col})


@pytest.mark.parametrize("offset", [-1, 0])
def test_a_broken_row_at_a_block_boundary(csr: tuple[str, Any], offset: int) -> None:
    dtype, kernel = csr
    # three entries a row: blocks of BLOCK_ENTRIES * N / NNZ rows; the last row of the first
    # block (offset -1) and the first of the second (0), whose first pair starts the block
    n = ROWS
    r = np.repeat(np.arange(n), 3)
    c = (np.arange(3 * n) * 7) % n
    m = sp.csr_array((np.ones(3 * n), (r, c)), shape=(n, n))
    m.sort_indices()
    args = _args(m, dtype)
    assert np.array_equal(_run(kernel, args), _run(kernel, args, check=False))
    row = BLOCK_ENTRIES * n // (3 * n) + offset
    s = int(args["rowptr"][row])
    col = _swapped(args["col"], s)
    with pytest.raises(ArgumentError, match=rf"fails first at i = {row}, k1 = {s}, k2 = {s + 1}"):
        _run(kernel, {**args, "col": col})


@pytest.mark.parametrize(("dtype", "way"), WAYS, ids=["-".join(w) for w in WAYS])
def test_csc_columns_are_checked(dtype: str, way: str, matrix: Any) -> None:
    kernel = _compiled(CSC, dtype, way)
    args = spf.sparse.format_args(matrix, CSC, index_dtype=dtype)
    x = np.linspace(-1.0, 2.0, ROWS)

    def run(a: dict[str, Any], check: bool = True) -> Any:
        y = np.zeros(ROWS)
        kernel(**a, x=x, y=y, check=check)
        return y

    assert np.array_equal(run(args), run(args, check=False))
    np.testing.assert_allclose(run(args), matrix @ x, rtol=1e-12, atol=1e-12)
    j = _row_of_two(sp.csr_array(matrix.T), "middle")  # a column of two entries
    s = int(args["colptr"][j])
    row = _swapped(args["row"], s)
    with pytest.raises(ArgumentError, match=rf"fails first at j = {j}, k1 = {s}, k2 = {s + 1}"):
        run({**args, "row": row})
    row = args["row"].copy()
    row[s] = ROWS
    with pytest.raises(ArgumentError, match=rf"row\[{s}\] = {ROWS} is outside"):
        run({**args, "row": row})


def test_the_top_of_the_range(csr: tuple[str, Any]) -> None:
    dtype, kernel = csr
    # rows ending at the last column, the next row starting again below it: no error
    rows = [[3, 9], [0, 9], [9], [5, 6, 9]] * 600
    args = _checked_rows(kernel, dtype, rows)
    for row in (1, len(rows) - 1):  # the last column twice: not strictly sorted
        s = int(args["rowptr"][row + 1]) - 2
        col = args["col"].copy()
        col[s] = 9
        with pytest.raises(
            ArgumentError, match=rf"fails first at i = {row}, k1 = {s}, k2 = {s + 1}"
        ):
            _run(kernel, {**args, "col": col})
    col = args["col"].copy()
    col[1] = 10  # one past the last column, after the last column's neighbour
    with pytest.raises(ArgumentError, match=r"col\[1\] = 10 is outside"):
        _run(kernel, {**args, "col": col})

"""``interpret`` runs computations whose statements compute index arrays later ones read.

A run-time index array (``add_data_space(..., index=True)``) gets its values while the
computation runs: a conversion's row pointers, cursors and chosen path, SpGEMM's column
lists. The interpreter used to refuse them (it listed every statement instance before
running any). It now walks the schedule and lists the instances of a statement whose domain
reads such an array once the statements before it have run, reading the array as it is
then; it equals the compiled kernel on every array, for COO -> CSR (duplicates summed, rows
sorted, empty rows, an empty matrix, one row, int32 and int64 indices), on SpGEMM's numeric
phase, and on small hand-written computations, one with a loop whose bounds the loop's own
earlier statement writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import kernels
from spf.formats import COO, CSR, convert
from spf.formats.sizing import extent
from spf.testing import expand_rows

if TYPE_CHECKING:
    from pathlib import Path

Args = dict[str, Any]


def copies(args: Args) -> Args:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}


def assert_same(compiled: Args, interpreted: Args) -> None:
    for name, value in compiled.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, interpreted[name]), name


@pytest.fixture(scope="module")
def coo_to_csr() -> dict[str, Any]:
    """COO -> CSR for both index types, each compiled once."""
    out = {}
    for dtype in ("int32", "int64"):
        conv = convert(COO, CSR, index_dtype=dtype)
        out[dtype] = (conv, conv.compile())
    return out


def coo_matrix(n: int, m: int, nnz: int, seed: int, dtype: str) -> Args:
    rng = np.random.default_rng(seed)
    row = rng.integers(0, max(n, 1), nnz).astype(dtype)
    col = rng.integers(0, max(m, 1), nnz).astype(dtype)
    if n > 2:
        row[row == 1] = 2  # an empty row
    return {"row": row, "col": col, "A": rng.random(nnz), "N": n, "M": m, "NNZ": nnz}


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(("n", "m", "nnz"), [(6, 5, 13), (4, 4, 0), (0, 0, 0), (1, 7, 5)])
def test_coo_to_csr_interprets_as_compiled(
    coo_to_csr: dict[str, Any], dtype: str, n: int, m: int, nnz: int
) -> None:
    conv, kernel = coo_to_csr[dtype]
    args = coo_matrix(n, m, nnz, n * 31 + nnz, dtype)
    sizes = kernel._ranked({"N": n, "M": m, "NNZ": nnz})  # with the sizes of the sort's ranks
    for name, shape in conv.allocate.items():
        kind = {"double": np.float64, "int32_t": np.int32, "int64_t": np.int64}[
            conv.data_spaces[name].ctype
        ]
        args[name] = np.zeros([extent(e, sizes) for e in shape], dtype=kind)
    args.update(kernel._rank_args(sizes))
    compiled, interpreted = copies(args), copies(args)
    kernel.kernel(**compiled)
    conv.interpret(**interpreted)
    assert_same(compiled, interpreted)
    want = sp.coo_matrix((args["A"], (args["row"], args["col"])), shape=(n, m)).tocsr()
    want.sum_duplicates()
    ptr, idx, val = (interpreted[conv.outputs[k]] for k in ("rowptr", "col", "A"))
    nz = int(ptr[-1])
    assert np.array_equal(ptr, want.indptr)
    assert np.array_equal(idx[:nz], want.indices)
    assert np.allclose(val[:nz], want.data)


def test_spgemm_numeric_interprets_as_compiled(tmp_path: Path) -> None:
    """``lst``, ``srt`` and the counters are index arrays local to the function, written
    and read as UFs inside the row loop."""
    a = sp.random(7, 6, density=0.35, format="csr", random_state=5)
    b = sp.random(6, 8, density=0.35, format="csr", random_state=6)
    operands = {
        "A_rowptr": a.indptr.astype(np.int32), "A_col": a.indices.astype(np.int32), "A": a.data,
        "B_rowptr": b.indptr.astype(np.int32), "B_col": b.indices.astype(np.int32), "B": b.data,
        "N": 7, "K": 6, "M": 8,
    }  # fmt: skip
    want = kernels.spgemm_csr(parallel=False).compile(cache_dir=str(tmp_path))(**operands)
    nnz = want["NNZ"]
    args = {
        **operands, "A_NNZ": a.nnz, "B_NNZ": b.nnz, "C_NNZ": nnz, "C_rowptr": want["rowptr"],
        "C_col": np.zeros(nnz, np.int32), "C": np.zeros(nnz),
    }  # fmt: skip
    kernels.spgemm_numeric().interpret(**args)
    assert np.array_equal(args["C_col"], want["col"])
    assert np.array_equal(args["C"], want["A"])


def rows_args(n: int, nnz: int) -> Args:
    rng = np.random.default_rng(n + nnz)
    row = rng.integers(0, max(n, 1), nnz).astype(np.int32)
    if n > 2:
        row[row == 1] = 0  # an empty row
    return {"row": row, "cnt": np.zeros(n, np.int32), "ptr": np.full(n + 1, 7, np.int32),
            "rows": np.full(nnz, -1, np.int32), "y": np.zeros(n), "A": rng.random(nnz),
            "N": n, "NNZ": nnz}  # fmt: skip


def rows_reference(args: Args) -> tuple[Args, Args]:
    """``ptr``, ``rows`` and ``y`` as the program computes them (its order of additions)."""
    n, row, a = args["N"], args["row"], args["A"]
    cnt = np.bincount(row, minlength=n)[:n].astype(np.int32)
    ptr = np.concatenate([[0], np.cumsum(cnt)]).astype(np.int32)
    rows, y = np.repeat(np.arange(n, dtype=np.int32), cnt), np.zeros(n)
    for i in range(n):
        for p in range(ptr[i], ptr[i + 1]):
            y[i] += a[p]
    return {"ptr": ptr, "rows": rows, "y": y}, {"cnt": cnt}


SIZES = [(6, 14), (3, 0), (0, 0), (1, 4)]


@pytest.mark.parametrize(("n", "nnz"), SIZES)
def test_a_loop_bounded_by_a_computed_index_array_interprets_as_compiled(
    n: int, nnz: int, tmp_path: Path
) -> None:
    comp = expand_rows()
    args = rows_args(n, nnz)
    compiled, interpreted = copies(args), copies(args)
    comp.compile(cache_dir=str(tmp_path))(**compiled)
    comp.interpret(**interpreted)
    assert_same(compiled, interpreted)
    want, _ = rows_reference(args)
    assert_same(want, interpreted)


@pytest.mark.parametrize(("n", "nnz"), SIZES)
def test_a_loop_bounded_by_what_its_own_iteration_writes_interprets_in_order(
    n: int, nnz: int
) -> None:
    """The walk lists ``p`` once ``ptr(i+1)`` is written in the same iteration of ``i``."""
    args = rows_args(n, nnz)
    expand_rows(fused=True).interpret(**args)
    want, more = rows_reference(args)
    assert_same({**want, **more}, args)


def test_an_index_array_stored_in_a_buffer_is_refused_clearly() -> None:
    comp = expand_rows()
    comp.stmt("s3").store_in(comp.add_buffer("ptr_buf", ("N+1",), "int32_t", "stack"), ["i+1"])
    with pytest.raises(spf.SpfError, match=r"index array 'ptr' is stored in buffer 'ptr_buf'"):
        comp.interpret(row=np.zeros(2, np.int32), cnt=np.zeros(2, np.int32),
                       rows=np.zeros(2, np.int32), y=np.zeros(2), A=np.zeros(2), N=2, NNZ=2)  # fmt: skip

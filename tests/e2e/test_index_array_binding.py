"""Where the generated loops read UF values (spf.codegen.scan, spf.codegen.binds).

* A run-time index array written in an iteration of a loop and read as a loop bound later
  in that iteration is read after the write (it used to be read at the top of the
  iteration: the row loop of a fused prefix sum ran on stale row pointers and the result
  was silently wrong), and a schedule that moves the read before the write is refused.
* A UF value is read only in the branch that needs it: a statement whose loop runs one
  iteration more than its neighbour's (the extra iteration ``compute_at`` adds for the
  producer instances no consumer reads) does not read ``rowptr(N + 1)``, one past the end:
  the kernels, built with AddressSanitizer and run in a child process, read nothing out of
  bounds (an unused read changes no result, so only a bounds-checking build shows it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spf
from spf.testing import expand_rows

SIZES = [(6, 14), (3, 0), (0, 0), (1, 4), (9, 30)]


def fused_rows(ctype: str) -> spf.Computation:
    """Count entries per row, prefix-sum the counts into the index array ``ptr``, and in the
    same ``i`` iteration, right after ``ptr(i+1)`` is written, loop ``ptr(i) <= p <
    ptr(i+1)``: ``rows(p) = i`` and ``y(i) += A(p)``."""
    return expand_rows(fused=True, index_dtype=ctype)


def rows_args(n: int, nnz: int, dtype: str) -> dict[str, Any]:
    rng = np.random.default_rng(n * 7 + nnz)
    row = rng.integers(0, max(n, 1), nnz).astype(dtype)
    if n > 2:
        row[row == 1] = 0  # an empty row
    return {"row": row, "cnt": np.zeros(n, dtype), "ptr": np.full(n + 1, 7, dtype),
            "rows": np.full(nnz, -1, dtype), "y": np.zeros(n), "A": rng.random(nnz),
            "N": n, "NNZ": nnz}  # fmt: skip


@pytest.fixture(scope="module", params=["int32_t", "int64_t"])
def fused(request: pytest.FixtureRequest) -> tuple[spf.Computation, Any, str]:
    comp = fused_rows(request.param)
    return comp, comp.compile(), request.param.removesuffix("_t")


@pytest.mark.parametrize(("n", "nnz"), SIZES)
def test_a_row_loop_bounded_by_pointers_its_own_iteration_writes_runs_after_the_write(
    fused: tuple[spf.Computation, Any, str], n: int, nnz: int
) -> None:
    comp, kernel, dtype = fused
    args = rows_args(n, nnz, dtype)
    compiled = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    kernel(**compiled)
    comp.interpret(**args)
    counts = np.bincount(args["row"], minlength=n)[:n]
    ptr = np.concatenate([[0], np.cumsum(counts)])
    want_y = np.array([args["A"][ptr[i] : ptr[i + 1]].sum() for i in range(n)])
    np.testing.assert_array_equal(compiled["ptr"], ptr)
    np.testing.assert_array_equal(compiled["rows"], np.repeat(np.arange(n), counts))
    np.testing.assert_allclose(compiled["y"], want_y)
    for name in ("ptr", "rows", "y", "cnt"):
        np.testing.assert_array_equal(compiled[name], args[name])


def test_the_row_loop_reads_the_pointers_after_the_prefix_sum_statement() -> None:
    code = fused_rows("int32_t").codegen()
    body = code[code.index("s3(i);") :]
    assert "ptr(1 + i)" in body  # read after s3(i) wrote it, not before


def test_reading_the_pointers_before_their_writer_in_the_iteration_is_refused() -> None:
    comp = fused_rows("int32_t")
    comp.stmt("s4").set_schedule("{[i,p] -> [3,i,-1,p,0]}")
    with pytest.raises(spf.IllegalScheduleError, match=r"flow dependence on 'ptr' from s3 to s4"):
        comp.codegen()


# ------------------------------------------------------------------ reads only where needed
def spmv_beside_a_longer_loop(compute_at: bool) -> spf.Computation:
    """``t(i) = 2 x(i)`` for ``0 <= i <= N`` (one row more than the matrix), then per row
    ``y(i) = t(i)`` and ``y(i) += A(k)`` over ``rowptr(i) <= k < rowptr(i+1)``; with
    ``compute_at`` the producer runs in the rows' loop, its last instance in an extra
    iteration (``t`` is a result), else it shares the loop by its schedule."""
    c = spf.Computation("longer")
    c.declare_uf(
        "rowptr",
        domain="{[v]: 0 <= v <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )
    c.add_data_space("t", "double", shape=("N+1",))
    c.add_data_space("x", "double", shape=("N+1",))
    c.add_data_space("y", "double", shape=("N",))
    c.add_data_space("A", "double", shape=("NNZ",))
    producer = "{[i] -> [0,i,0,0]}" if compute_at else "{[i] -> [1,i,-1,0]}"
    c.add_stmt(spf.Stmt("$t$(i) = 2 * $x$(i);", "{[i]: 0 <= i <= N}", producer))
    c.add_stmt(spf.Stmt("$y$(i) = $t$(i);", "{[i]: 0 <= i < N}", "{[i] -> [1,i,0,0]}"))
    c.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(k);",
            "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}",
            "{[i,k] -> [1,i,1,k]}",
        )
    )
    if compute_at:
        c.stmt("s0").compute_at("s1", "i")
    return c


@pytest.mark.parametrize("compute_at", [True, False], ids=["compute_at", "shared_loop"])
def test_rows_beside_a_longer_loop_compute_y_and_t(compute_at: bool) -> None:
    comp = spmv_beside_a_longer_loop(compute_at)
    kernel = comp.compile()
    rng = np.random.default_rng(3)
    for n in (0, 1, 5, 12):
        counts = rng.integers(0, 4, n)
        counts[::3] = 0  # empty rows
        nnz = int(counts.sum())
        rowptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        x, a = rng.random(n + 1), rng.random(nnz)
        t, y = np.zeros(n + 1), np.zeros(n)
        kernel(rowptr=rowptr, x=x, A=a, t=t, y=y, N=n, NNZ=nnz)
        np.testing.assert_array_equal(t, 2 * x)
        want = 2 * x[:n] + np.array([a[rowptr[i] : rowptr[i + 1]].sum() for i in range(n)])
        np.testing.assert_allclose(y, want)


SANITIZED_RUN = """
import importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("binding_tests", sys.argv[1])
tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tests)
flags = ["-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"]
for compute_at in (True, False):
    kernel = tests.spmv_beside_a_longer_loop(compute_at).compile(cflags=flags, openmp=False)
    for n, nnz in ((5, 6), (1, 2), (0, 0)):
        rowptr = np.linspace(0, nnz, n + 1).astype(np.int32)  # exactly n + 1 entries
        kernel(rowptr=rowptr, x=np.ones(n + 1), A=np.ones(nnz), t=np.zeros(n + 1),
               y=np.zeros(n), N=n, NNZ=nnz, check=False)
print("no out-of-bounds read")
"""


def test_rows_read_no_row_pointer_past_the_end_in_the_extra_iteration() -> None:
    """Both loop shapes (compute_at's extra iteration, a shared longer loop) built with
    AddressSanitizer, run in a child process that preloads its runtime: a read of
    ``rowptr[N + 1]`` (what the loops did when they bound it above the rows' branch) stops
    it with a heap-buffer-overflow report."""
    found = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True)
    asan = Path(found.stdout.strip())
    if not asan.is_absolute() or not asan.exists():
        pytest.skip("gcc has no AddressSanitizer runtime (libasan) here")
    env = {
        **os.environ,
        "LD_PRELOAD": str(asan),
        "ASAN_OPTIONS": "detect_leaks=0",
        "PYTHONPATH": str(Path(spf.__file__).resolve().parents[1]),
    }
    run = subprocess.run(
        [sys.executable, "-c", SANITIZED_RUN, __file__],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "AddressSanitizer" not in run.stderr, run.stderr[-3000:]
    assert run.returncode == 0, run.stderr[-3000:]
    assert "no out-of-bounds read" in run.stdout


def test_the_row_pointers_are_read_inside_the_rows_branch() -> None:
    code = spmv_beside_a_longer_loop(True).codegen()
    loop = code[code.index("for (int64_t i") :]
    assert loop.index("if (N >= i_ + 1)") < loop.index("rowptr(1 + i_)")


def test_rows_past_the_row_pointers_domain_are_not_scanned() -> None:
    """A domain ``0 <= i <= N + 5`` over rows bounded by ``rowptr(i)`` and ``rowptr(i+1)``,
    with ``rowptr`` defined on ``0 .. N``: the rows past ``N - 1`` call ``rowptr`` outside
    its domain, so they hold no instance, and the loops stop at ``N - 1`` rather than read
    the array past its end."""
    c = spf.Computation("wide")
    c.declare_uf("rowptr", domain="{[v]: 0 <= v <= N}", range="{[v]: 0 <= v <= NNZ}")
    c.add_data_space("y", "double", shape=("N+6",))
    c.add_data_space("A", "double", shape=("NNZ",))
    c.add_stmt(
        spf.Stmt("$y$(i) += $A$(k);", "{[i,k]: 0 <= i <= N + 5 && rowptr(i) <= k < rowptr(i+1)}")
    )
    kernel = c.compile()
    guarded = np.array([0, 2, 2, 5, -1, -1, -1, -1, -1, -1], np.int32)
    rowptr, a = guarded[:4], np.arange(1.0, 6.0)
    y, want = np.zeros(9), np.zeros(9)
    kernel(rowptr=rowptr, A=a, y=y, N=3, NNZ=5)  # check=True: no fault
    c.interpret(rowptr=rowptr, A=a, y=want, N=3, NNZ=5)
    np.testing.assert_array_equal(y, [3.0, 0.0, 12.0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(y, want)

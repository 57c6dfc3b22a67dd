"""Wavefronts of computations written by the user, not taken from ``spf.kernels``: what an
adversarial audit of the executors and the run-time inspection found (docs/inspection.md).
Every result is compared bitwise with the computation run serially (unfused, unscheduled),
at one and two OpenMP threads, or the input is refused with a clear ``spf`` error."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import Computation, Stmt
from spf.runtime import plan as plan_module

if TYPE_CHECKING:
    from collections.abc import Callable


def _index_ufs(comp: Computation) -> None:
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}")


def lower_solve_diag_first(
    update: str = "$x$(i) -= $L$(k) * $x$(j);", last_row: bool = True
) -> Computation:
    """``x = L^-1 b``, ``L`` in CSR with each row's diagonal stored first (``update``: the
    statement of the entries left of it, run on every row, or all but the last)."""
    comp = Computation("user_lower")
    for name in ("x", "b"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("L", "double", shape=("NNZ",))
    _index_ufs(comp)
    comp.assume("forall i, k: rowptr(i) < k < rowptr(i+1) => col(k) < i")
    comp.add_stmt(Stmt("$x$(i) = $b$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    comp.add_stmt(
        Stmt(
            update,
            f"{{[i,k,j]: 0 <= i < N{'' if last_row else ' - 1'} && rowptr(i) + 1 <= k < "
            "rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0,i,1,k,0,j,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$x$(i) = $x$(i) / $L$(k);",
            "{[i,k]: 0 <= i < N && k = rowptr(i)}",
            "{[i,k] -> [0,i,2,k,0]}",
        )
    )
    return comp


def scale() -> Computation:
    """``t = 2 b``: no dependence between its rows."""
    comp = Computation("user_scale")
    for name in ("t", "b"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(Stmt("$t$(i) = 2 * $b$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    return comp


def lower_args(n: int, seed: int) -> dict[str, object]:
    """A random lower triangle (diagonal first in each row), its arrays and a ``t``."""
    a = sps.random_array((n, n), density=3.0 / n, format="csr", rng=seed)
    low = sps.csr_array(sps.tril(a, k=-1) + sps.eye_array(n) * 4.0)
    low.sort_indices()
    rowptr, col, val = [0], [], []
    for i in range(n):
        cols = low.indices[low.indptr[i] : low.indptr[i + 1]]
        vals = low.data[low.indptr[i] : low.indptr[i + 1]]
        first = np.argsort(cols != i, kind="stable")  # the diagonal first
        col += list(cols[first])
        val += list(vals[first])
        rowptr.append(len(col))
    return {
        "x": np.zeros(n),
        "b": np.arange(1.0, n + 1.0),
        "t": np.zeros(n),
        "L": np.array(val),
        "rowptr": np.array(rowptr, dtype=np.int32),
        "col": np.array(col, dtype=np.int32),
        "N": n,
        "NNZ": len(col),
    }


def solve_beside_scale(scale_first: bool) -> Callable[[bool], Computation]:
    """A user's lower solve and an independent scale fused into one row loop: the scale's
    rows are a free kernel that no dependence enters."""

    def make(fused: bool) -> Computation:
        comp = Computation("user_solve_scale")
        for name in ("x", "b", "t"):
            comp.add_data_space(name, "double", shape=("N",))
        comp.add_data_space("L", "double", shape=("NNZ",))
        solve = (lower_solve_diag_first(), {"x": "x", "b": "b", "L": "L"})
        other = (scale(), {"t": "t", "b": "b"})
        for k, (callee, args) in enumerate((other, solve) if scale_first else (solve, other)):
            comp.append_computation(callee, "{[]}", f"{{[] -> [{k}]}}", args)
        if fused:
            pairs = (("s0", "s1"), ("s1", "s2"), ("s2", "s3")) if scale_first else (("s2", "s3"),)
            for s1, s2 in pairs:
                comp.fuse(s1, s2, 1)
        return comp

    return make


def _copied(args: dict[str, object]) -> dict[str, object]:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}


@pytest.mark.parametrize("method", ["auto", "coarse"])
@pytest.mark.parametrize("scale_first", [True, False])
def test_fused_free_kernel_without_incoming_edges(
    method: str, scale_first: bool, omp_threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A free kernel fused beside a solve that no dependence reaches: its coarse plans need
    no sink pass (none of its rows has a source to run after). The inspection compiled an
    empty sink pass and every call failed with "has no statements to generate"."""
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 2)
    make = solve_beside_scale(scale_first)
    args = lower_args(300, 1)
    ref = _copied(args)
    make(False).compile()(**ref)
    comp = make(True)
    comp.wavefront("_i0_i", method=method)
    kernel = comp.compile()
    index = {k: v for k, v in args.items() if k in kernel.inspected_arguments}
    for strategy in ("auto", "coarse", "levels", "serial"):
        plan = kernel.inspect(strategy=strategy, threads=2, **index)
        got = _copied(args)
        kernel(plan=plan, **got)
        assert np.array_equal(got["x"], ref["x"])
        assert np.array_equal(got["t"], ref["t"])
    got = _copied(args)
    kernel(**got)  # inspected inside the call
    assert np.array_equal(got["x"], ref["x"])
    assert np.array_equal(got["t"], ref["t"])


@pytest.mark.parametrize("method", ["levels", "p2p"])
def test_parameter_too_large_for_memory_is_an_argument_error(method: str) -> None:
    """A loop extent far beyond the index arrays (``N = 2**40`` with 301 row pointers): the
    levels inspector allocated its plan arrays before its stages checked the arrays, and
    numpy's raw ``MemoryError`` came out of ``inspect`` and of a call without a plan."""
    comp = lower_solve_diag_first()
    comp.wavefront("i", method=method)
    kernel = comp.compile()
    args = lower_args(300, 2)
    del args["t"]
    index = {k: v for k, v in args.items() if k in kernel.inspected_arguments}
    with pytest.raises(spf.ArgumentError, match=r"inspect: loop 'i' runs 1,099,511,627,776"):
        kernel.inspect(**{**index, "N": 2**40})
    with pytest.raises(spf.ArgumentError, match="do not fit in memory"):
        kernel(**{**args, "N": 2**40})


def scale_in_place() -> Computation:
    """``x = 2 x + 1`` in place."""
    comp = Computation("user_scale_in_place")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$x$(i) = 2 * $x$(i) + 1;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    return comp


def solve_then_update(fused: bool) -> Computation:
    """A user's lower solve, then ``x = 2 x + 1`` in place, fused into its row loop: the
    update of row ``j`` must wait for every solve row that reads ``x(j)`` (``j = col(k)``)
    and for the solve of row ``j`` itself, a dependence whose sink row is ``i`` in one
    disjunct and ``col(k)`` in the other (no one function of the source's iteration)."""
    comp = Computation("user_solve_update")
    for name in ("x", "b"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("L", "double", shape=("NNZ",))
    comp.append_computation(
        lower_solve_diag_first(), "{[]}", "{[] -> [0]}", {"x": "x", "b": "b", "L": "L"}
    )
    comp.append_computation(scale_in_place(), "{[]}", "{[] -> [1]}", {"x": "x"})
    if fused:
        comp.fuse("s2", "s3", 1)
    return comp


def solve_reading_previous_row() -> Computation:
    """A lower solve whose row ``i`` also reads ``x(i - 1)``: the flow dependence from the
    first statement is the union of ``i - 1`` and ``col(k)``."""
    return lower_solve_diag_first("$x$(i) -= $L$(k) * ($x$(j) + 0.25 * $x$(i - 1));")


@pytest.mark.parametrize("method", ["levels", "coarse", "auto"])
def test_fused_in_place_update_dependence_of_two_disjuncts(
    method: str, omp_threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dependence is ordered by one edge per disjunct (each a function); it was refused
    with "neither is the source iteration ... a function" (and a suggestion of the
    triangular assumption the computation already declares)."""
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 2)
    args = lower_args(300, 3)
    del args["t"]
    ref = _copied(args)
    solve_then_update(False).compile()(**ref)
    comp = solve_then_update(True)
    comp.wavefront("_i0_i", method=method)
    kernel = comp.compile()
    index = {k: v for k, v in args.items() if k in kernel.inspected_arguments}
    strategies = ("wavefront", "serial") if method == "levels" else ("coarse", "levels", "serial")
    for strategy in strategies:
        plan = kernel.inspect(strategy=strategy, threads=2, **index)
        for _ in range(3):
            got = _copied(args)
            kernel(plan=plan, **got)
            assert np.array_equal(got["x"], ref["x"])


@pytest.mark.parametrize("method", ["levels", "p2p"])
def test_reads_of_two_earlier_rows_in_one_statement(method: str, omp_threads: int) -> None:
    """Row ``i`` reads ``x(i - 1)`` and ``x(col(k))`` in one statement: one pull edge each."""
    args = lower_args(300, 4)
    del args["t"]
    ref = _copied(args)
    solve_reading_previous_row().compile()(**ref)
    comp = solve_reading_previous_row()
    comp.wavefront("i", method=method)
    kernel = comp.compile()
    index = {k: v for k, v in args.items() if k in kernel.inspected_arguments}
    plan = kernel.inspect(strategy="wavefront", **index)
    for _ in range(3):
        got = _copied(args)
        kernel(plan=plan, **got)
        assert np.array_equal(got["x"], ref["x"])


BACKWARD_GS = """
void gs_backward(int n, const int *rowptr, const int *col, const double *val,
                 const double *diag, const double *b, double *x)
{
  for (int i = n - 1; i >= 0; i--) {
    double sum = b[i];
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
      if (col[k] != i)
        sum -= val[k] * x[col[k]];
    x[i] = sum / diag[i];
  }
}
"""


def test_backward_loop_refusal_says_how_to_write_it() -> None:
    """The textbook backward Gauss-Seidel sweep imported from C runs its rows last first
    (schedule ``-i``): refused, and the error now says how to write it so that a wavefront
    can order it (a forward loop over the rows ``n - 1 - t``)."""
    shapes = {"val": ("NNZ",), "diag": ("n",), "b": ("n",), "x": ("n",)}
    comp = spf.from_c(BACKWARD_GS, shapes=shapes)
    with pytest.raises(spf.IllegalScheduleError, match="forward loop t over the rows n - 1 - t"):
        comp.wavefront("i")


def upper_gs_forward_over_t() -> Computation:
    """The same backward sweep written over ``t``, row ``N - 1 - t``."""
    comp = Computation("user_gs_backward")
    for name in ("x", "b", "diag"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("val", "double", shape=("NNZ",))
    _index_ufs(comp)
    comp.add_local("s", "double", private="t")
    row = "N - 1 - t"
    comp.add_stmt(Stmt(f"s = $b$({row});", "{[t]: 0 <= t < N}", "{[t] -> [0,t,0]}"))
    comp.add_stmt(
        Stmt(
            "s -= $val$(k) * $x$(j);",
            f"{{[t,k,j]: 0 <= t < N && rowptr({row}) <= k < rowptr(N - t) && j = col(k)}}",
            "{[t,k,j] -> [0,t,1,k,0,j,0]}",
        )
    )
    comp.add_stmt(Stmt(f"$x$({row}) = s / $diag$({row});", "{[t]: 0 <= t < N}", "{[t] -> [0,t,2]}"))
    return comp


@pytest.mark.parametrize("method", ["levels", "p2p", "coarse"])
def test_backward_sweep_written_forward_runs_as_wavefront(method: str, omp_threads: int) -> None:
    """What the refusal suggests runs, bitwise equal to the serial sweep (rows that read
    both earlier and later rows: pull and push edges)."""
    a = sps.random_array((400, 400), density=0.01, format="csr", rng=5)
    off = sps.csr_array(a + a.T)
    off.setdiag(0)
    off.eliminate_zeros()
    off.sort_indices()
    args: dict[str, object] = {
        "x": np.linspace(0.0, 1.0, 400),
        "b": np.arange(1.0, 401.0),
        "diag": np.full(400, 8.0),
        "val": off.data.copy(),
        "rowptr": off.indptr.astype(np.int32),
        "col": off.indices.astype(np.int32),
        "N": 400,
        "NNZ": off.nnz,
    }
    ref = _copied(args)
    upper_gs_forward_over_t().compile()(**ref)
    comp = upper_gs_forward_over_t()
    comp.wavefront("t", method=method)
    kernel = comp.compile()
    index = {k: v for k, v in args.items() if k in kernel.inspected_arguments}
    plan = kernel.inspect(strategy="wavefront", **index)
    for _ in range(3):
        got = _copied(args)
        kernel(plan=plan, **got)
        assert np.array_equal(got["x"], ref["x"])


def init_loop_then_solve() -> Computation:
    """``x = b`` in a loop nest of its own, then the solve's loop nest, both over ``i``:
    ``wavefront("i")`` takes both nests (kernels of one loop name), whose dependence from the
    copy to the solve is the union of ``i`` (the row's own ``x(i) -=``) and ``col(k)``."""
    comp = Computation("user_init_solve")
    for name in ("x", "b"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("L", "double", shape=("NNZ",))
    _index_ufs(comp)
    comp.assume("forall i, k: rowptr(i) < k < rowptr(i+1) => col(k) < i")
    comp.add_stmt(Stmt("$x$(i) = $b$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    comp.add_stmt(
        Stmt(
            "$x$(i) -= $L$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) + 1 <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [1,i,1,k,0,j,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$x$(i) = $x$(i) / $L$(k);",
            "{[i,k]: 0 <= i < N && k = rowptr(i)}",
            "{[i,k] -> [1,i,2,k,0]}",
        )
    )
    return comp


@pytest.mark.parametrize("method", ["levels", "coarse", "auto"])
def test_initialization_in_its_own_loop_nest(
    method: str, omp_threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused before ("neither is the source iteration ... a function", suggesting the
    assumption the computation declares); now bitwise equal to the serial kernel."""
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 2)
    args = lower_args(300, 6)
    del args["t"]
    ref = _copied(args)
    init_loop_then_solve().compile()(**ref)
    comp = init_loop_then_solve()
    comp.wavefront("i", method=method)
    kernel = comp.compile()
    index = {k: v for k, v in args.items() if k in kernel.inspected_arguments}
    strategies = ("wavefront",) if method == "levels" else ("coarse", "levels")
    for strategy in strategies:
        plan = kernel.inspect(strategy=strategy, threads=2, **index)
        for _ in range(3):
            got = _copied(args)
            kernel(plan=plan, **got)
            assert np.array_equal(got["x"], ref["x"])


@pytest.mark.parametrize("method", ["coarse", "auto", "levels"])
def test_row_reading_the_next_row(method: str, omp_threads: int) -> None:
    """Row ``i`` reads ``x(i + 1)`` (an anti dependence to the next row, for rows with an
    entry left of the diagonal) and ``x(col(k))``: the coarse pass's edge over ``{[ip]: 1 <=
    ip < N && rowptr(ip - 1) < rowptr(ip) - 1}`` read ``rowptr(ip - 1)`` above its guard,
    and compiling the default method failed with "scanner bug"."""
    update = "$x$(i) -= $L$(k) * ($x$(j) + 0.25 * $x$(i + 1));"
    make = lambda: lower_solve_diag_first(update, last_row=False)  # noqa: E731
    args = lower_args(300, 7)
    del args["t"]
    ref = _copied(args)
    make().compile()(**ref)
    comp = make()
    comp.wavefront("i", method=method)
    kernel = comp.compile()
    index = {k: v for k, v in args.items() if k in kernel.inspected_arguments}
    plan = kernel.inspect(strategy="wavefront", threads=2, **index)
    for _ in range(3):
        got = _copied(args)
        kernel(plan=plan, **got)
        assert np.array_equal(got["x"], ref["x"])


def test_printed_trace_of_a_fused_wavefront_rebuilds_it() -> None:
    """The trace of ``comp.wavefront("_i0_i")`` over kernels fused into one loop records
    each statement under its own loop name (``_i0_i``, ``_i1_i``); it printed a
    ``stmt.wavefront`` line per statement, of which the first alone is refused. It prints
    the one call now, and running that text on a fresh computation gives the same code."""
    comp = solve_then_update(True)
    comp.wavefront("_i0_i", method="levels")
    text = str(comp.trace)
    assert text.splitlines()[-1] == 'comp.wavefront("_i0_i", method="levels")'
    fresh = solve_then_update(False)
    exec(text, {"comp": fresh})
    assert fresh.codegen() == comp.codegen()


@pytest.mark.parametrize("method", ["levels", "auto"])
def test_negative_size_names_the_parameter(method: str) -> None:
    """``N = -3``: the inspector's refusal named its own arrays (``level: expected shape
    (-3,)``, ``work: ...``), which the caller never passes; it names ``N`` now. ``N = 0``
    stays an empty loop."""
    comp = lower_solve_diag_first()
    comp.wavefront("i", method=method)
    kernel = comp.compile()
    args = lower_args(50, 8)
    del args["t"]
    index = {k: v for k, v in args.items() if k in kernel.inspected_arguments}
    with pytest.raises(spf.ArgumentError, match=r"inspect: N=-3 is negative") as info:
        kernel.inspect(**{**index, "N": -3})
    assert "level" not in str(info.value)
    assert "work" not in str(info.value)
    empty = kernel.inspect(rowptr=np.zeros(1, np.int32), col=np.zeros(0, np.int32), N=0, NNZ=0)
    assert empty.levels == 0

"""The element a loop's previous iteration stored, read from a local (spf.codegen.row_scalar,
``spf_prev``): a solve's row ``i`` reads ``x(i - 1)`` from a register instead of through the
store the row before made, with the same bits as the statements run one by one."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import kernels
from spf.codegen.row_scalar import NAME, PREV


def _banded_lower(n: int, seed: int, dtype: str = "int32") -> dict[str, object]:
    """``gauss_seidel_args`` of a matrix whose rows mostly hold column ``i - 1`` (a band of
    width 3 with a third of its subdiagonal dropped) plus a few random entries."""
    rng = np.random.default_rng(seed)
    sub = rng.uniform(-1.0, 1.0, n - 1) * (rng.uniform(size=n - 1) < 0.67)
    band = sp.diags_array([sub, rng.uniform(-1.0, 1.0, n - 2)], offsets=[-1, -2], shape=(n, n))
    extra = sp.random_array((n, n), density=0.01, format="csr", rng=rng)
    off = sp.csr_array(band + extra + extra.T)
    full = sp.csr_array(off + off.T + sp.eye_array(n) * 6.0)
    full.sort_indices()
    return spf.sparse.gauss_seidel_args(full, index_dtype=dtype)


def _in_order(args: dict[str, object], b: np.ndarray, *, upper: bool, sweep: bool) -> np.ndarray:
    """The solve's (or sweep's) statements one by one in memory, rows in the kernel's
    order: ``x(i) = b(i)``, ``x(i) -= A(k) * x(col(k))`` per entry, ``x(i) /= A(diag(i))``
    (a unit upper solve divides by nothing)."""
    rp, col, a, dg = (np.asarray(args[k]) for k in ("rowptr", "col", "A", "diag"))
    n = len(b)
    x = np.zeros(n)
    for i in reversed(range(n)) if upper else range(n):
        d = int(dg[i])
        ks = list(range(int(rp[i]), d)) if not upper else []
        if upper or sweep:
            ks += list(range(d + 1, int(rp[i + 1])))
        s = b[i]
        for k in ks:
            s = s - a[k] * x[int(col[k])]
        x[i] = s if upper else s / a[d]
    return x


def test_a_solve_keeps_the_row_it_stored_for_the_next() -> None:
    body = kernels.trsv_diag_csr().codegen()
    body = body[body.index("void trsv_lower_csr(") :]
    body = body[: body.index("\n}\n")]
    assert f"int64_t {PREV}_at0 = INT64_MIN;" in body  # no row stored yet
    keep = f"x(i) = {NAME};\n        {PREV} = {NAME};\n        {PREV}_at0 = i;"
    assert keep in body
    # the row's entries but its last read memory; the last (a sorted row's column i - 1)
    # reads the local when it is the row before
    most, last = body.split("const int64_t k = spf_end_k - 1;")
    assert "for (int64_t k = spf_first_k; k < spf_end_k - 1; k++)" in most
    assert "spf_row -= A(k) * x(col_k);" in most
    assert PREV not in most[most.index("for (int64_t k") :]
    assert f"spf_row -= A(k) * (col_k == {PREV}_at0 ? {PREV} : x(col_k));" in last


def _function(code: str, name: str) -> str:
    body = code[code.index(f"void {name}(") :]
    return body[: body.index("\n}\n")]


def test_a_wavefront_part_keeps_the_row_it_stored_for_the_next() -> None:
    """A coarse level's part runs its rows in order on one thread: the loop over its rows
    keeps the element each row stored (``x(order(pos))``) as the serial loop does; the
    ``omp for`` loop over the parts keeps none."""
    comp = kernels.trsv_diag_csr()
    comp.wavefront("i", method="coarse")
    body = _function(comp.codegen(), "trsv_lower_csr")
    parts = body.index("#pragma omp for schedule(static, 1)")
    assert PREV not in body[:parts]
    rows = body.index("for (int64_t i_pos = ")
    assert f"{PREV} = 0;\n" in body[parts:rows]  # opened per part, before its rows
    assert f"{PREV}_at0 = order_i_i_pos;" in body[rows:]
    assert f"(col_k == {PREV}_at0 ? {PREV} : x(col_k))" in body[rows:]


def test_a_run_of_narrow_levels_keeps_it_on_its_one_thread() -> None:
    """``method="levels"``: a group run by ``omp single`` keeps the row before; the same
    rows dealt over the team by ``omp for`` read memory."""
    comp = kernels.trsv_diag_csr()
    comp.wavefront("i", method="levels")
    body = _function(comp.codegen(), "trsv_lower_csr")
    single, spread = body.split("#pragma omp for schedule(static)")
    assert "#pragma omp single" in single
    assert f"{PREV}_at0 = order_i_i_pos;" in single
    assert PREV not in spread


def test_a_generic_parallel_loop_reads_memory() -> None:
    """A loop inside a ``parallel`` loop (not a wavefront's part) keeps no row before: only
    the wavefront's legality proves that no other thread writes the element kept."""
    comp = spf.Computation("slices")
    comp.add_data_space("D", "double", shape=("T", "N"))
    dom = "{[t,i,j]: 0 <= t < T && 0 <= i < N && 0 <= j < N}"
    comp.add_stmt(spf.Stmt("$D$(t,i) += $D$(t,j) * 0.5;", dom, "{[t,i,j] -> [0,t,0,i,0,j,0]}"))
    comp.add_stmt(spf.Stmt("$D$(t,i) *= 0.75;", dom, "{[t,i,j] -> [0,t,0,i,0,j,1]}"))
    serial = comp.codegen()
    assert PREV in serial
    for s in comp.stmts:
        s.parallelize("t")
    code = comp.codegen()
    assert "#pragma omp parallel for" in code
    assert NAME in code
    assert PREV not in code


def test_a_loop_that_reads_no_other_element_keeps_none() -> None:
    assert PREV not in kernels.spmv_csr().codegen()


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_solves_and_sweeps_are_the_statements_bit_for_bit(dtype: str) -> None:
    n = 700
    args = _banded_lower(n, 11, dtype)
    b = np.random.default_rng(4).uniform(-1.0, 1.0, n)
    for comp, upper, sweep in (
        (kernels.trsv_diag_csr(index_dtype=dtype), False, False),
        (kernels.trsv_diag_csr(index_dtype=dtype, upper=True, unit=True), True, False),
        (kernels.gauss_seidel_csr(index_dtype=dtype), False, True),
    ):
        x = np.zeros(n)
        comp.compile()(x=x, b=b, **args)
        assert np.array_equal(x, _in_order(args, b, upper=upper, sweep=sweep)), comp.name


def test_a_row_reading_the_one_before_at_every_entry() -> None:
    """Row ``i`` reads every earlier element (``D(j)``, ``j < N``, ``i - 1`` among them, and
    ``i`` itself): the element kept is the previous row's; reads of the row's own element
    see its running value; the element's index repeats in the inner loop's iterations."""
    comp = spf.Computation("rows")
    comp.add_data_space("D", "double", shape=("N",))
    comp.add_stmt(
        spf.Stmt("$D$(i) += $D$(j) * 0.5;", "{[i,j]: 0 <= i < N && 0 <= j < N}",
                 "{[i,j] -> [0,i,0,j,0]}")
    )  # fmt: skip
    comp.add_stmt(
        spf.Stmt("$D$(i) *= 0.75;", "{[i,j]: 0 <= i < N && 0 <= j < N}", "{[i,j] -> [0,i,0,j,1]}")
    )
    n = 40
    d0 = np.random.default_rng(2).uniform(-1.0, 1.0, n)
    want = d0.copy()
    for i in range(n):
        for j in range(n):
            want[i] = want[i] + want[j] * 0.5
            want[i] = want[i] * 0.75
    got = d0.copy()
    code = comp.codegen()
    assert PREV in code
    comp.compile()(D=got, N=n)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("team", [1, 2])
def test_wavefront_parts_are_the_statements_bit_for_bit(team: int) -> None:
    """The coarse executor's parts and the levels executor's narrow runs, which keep the row
    before, at one and two threads: the bits of the statements run one by one."""
    from spf.runtime import threads

    n = 700
    args = _banded_lower(n, 12)
    b = np.random.default_rng(5).uniform(-1.0, 1.0, n)
    want = _in_order(args, b, upper=False, sweep=False)
    grid = spf.sparse.gauss_seidel_args(spf.sparse.poisson2d(30), index_dtype="int32")
    b_grid = np.random.default_rng(6).uniform(-1.0, 1.0, 900)
    want_grid = _in_order(grid, b_grid, upper=False, sweep=False)
    adaptive = threads.set_adaptive(False)
    try:
        with threads.openmp_threads(team):
            for method, strategy in (("coarse", "coarse"), ("levels", "wavefront")):
                comp = kernels.trsv_diag_csr()
                comp.wavefront("i", method=method)
                k = comp.compile()
                for a, rhs, expect in ((args, b, want), (grid, b_grid, want_grid)):
                    plan = k.inspect(strategy=strategy, threads=2, **a)  # type: ignore[attr-defined]
                    x = np.zeros(len(rhs))
                    k(x=x, b=rhs, plan=plan, **a)
                    assert np.array_equal(x, expect), method
    finally:
        threads.set_adaptive(adaptive)


def test_a_fused_part_keeps_the_solve_row_beside_the_product() -> None:
    """A solve fused with a product of its solution (pipeline parts): the solve's branch
    keeps the row before; the product's branch writes ``y`` only and reads ``x`` from memory."""
    comp = spf.Computation("solve_mv_prev")
    for name in ("x", "b", "y"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    spaces = {"x": "x", "A": "A", "b": "b"}
    comp.append_computation(kernels.trsv_diag_csr(), "{[]}", "{[] -> [0]}", spaces)
    spaces = {"y": "y", "A": "A", "x": "x"}
    comp.append_computation(kernels.spmv_csr(), "{[]}", "{[] -> [1]}", spaces)
    comp.fuse("s2", "s3", 1)
    comp.wavefront("_i0_i")
    body = comp.codegen()
    solve, product = body[body.index("for (int64_t _i0_i_pos") :].split("else", 1)
    assert f"{PREV}_at0 = order__i0_i__i0_i_pos;" in solve
    assert f"? {PREV} : x(col__i0_k))" in solve
    assert PREV not in product

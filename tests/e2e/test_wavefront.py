"""Wavefront SpTRSV end to end (API.md section 11): ``comp.wavefront("i")`` on
``spf.kernels.sptrsv_csr`` equals scipy's ``spsolve_triangular`` and, bitwise, the serial spf
kernel on random and SuiteSparse lower-triangular matrices at 1 and 2 OpenMP threads, with
every argument check on (plans forced to the ``"wavefront"`` strategy, so the executor runs
however narrow the levels); plans are reusable and refuse index arrays they did not inspect."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve_triangular

import spf
from spf import ArgumentError, CodegenError, IllegalScheduleError, kernels
from spf.runtime.plan import MIN_PARALLEL_ROWS, MIN_ROWS_PER_LEVEL, Plan, WavefrontKernel
from spf.sparse import read_matrix_market, sptrsv_args

if TYPE_CHECKING:
    from pathlib import Path


def lower(n: int, density: float, seed: int) -> sp.csr_array:
    """Random lower-triangular CSR, diagonal dominant (so scipy's answer is accurate)."""
    rng = np.random.default_rng(seed)
    a = sp.tril(sp.random(n, n, density=density, format="csr", random_state=rng), k=-1)
    diag = np.asarray(abs(a).sum(axis=1)).ravel() + 1.0
    return sp.csr_array(a + sp.diags(diag))


def tril_with_diag(path: Path) -> sp.csr_array:
    m = read_matrix_market(path)
    if m.dtype.kind not in "fc":
        m = m.astype(np.float64)
    m.data[:] = np.where(m.data == 0, 1.0, m.data)
    a = sp.tril(m, k=-1)
    diag = np.asarray(abs(a).sum(axis=1)).ravel() + 1.0
    return sp.csr_array(a + sp.diags(diag))


@pytest.fixture(scope="module", params=[("int32", "levels"), ("int64", "levels"), ("int32", "p2p")])
def solver(request: pytest.FixtureRequest) -> tuple[WavefrontKernel, spf.Kernel, str]:
    dtype, method = request.param
    comp = kernels.sptrsv_csr(index_dtype=dtype)
    comp.wavefront("i", method=method)
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k, kernels.sptrsv_csr(index_dtype=dtype).compile(), dtype


def solve_both(
    solver: tuple[WavefrontKernel, spf.Kernel, str], m: sp.csr_array, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k, serial, dtype = solver
    args = sptrsv_args(m, dtype)
    f = np.random.default_rng(seed).random(m.shape[0])
    u, ref = np.zeros(m.shape[0]), np.zeros(m.shape[0])
    plan = k.inspect(strategy="wavefront", **args)
    dataclasses.replace(plan, order=plan.order.copy())  # the checks of a rebuilt plan pass
    k(u=u, f=f, plan=plan, **args)
    serial(u=ref, f=f, **args)
    return u, ref, f


CASES = [(1, 0.0, 0), (2, 1.0, 1), (5, 0.0, 2), (17, 0.3, 3), (101, 0.05, 4), (999, 0.01, 5)]


@pytest.mark.parametrize(("n", "density", "seed"), CASES)
def test_random_matrices_match_scipy_and_serial(
    solver: tuple[WavefrontKernel, spf.Kernel, str],
    omp_threads: int,
    n: int,
    density: float,
    seed: int,
) -> None:
    m = lower(n, density, seed)
    u, ref, f = solve_both(solver, m, seed)
    np.testing.assert_array_equal(u, ref)
    expected = spsolve_triangular(sp.csr_matrix(m), f, lower=True)
    np.testing.assert_allclose(u, expected, rtol=1e-12, atol=1e-12)


MATRICES = ["west0067", "olm1000", "jagmesh7", "LFAT5_hypersparse", "cryg2500", "bcsstk13"]


@pytest.mark.parametrize("name", MATRICES)
def test_suitesparse_matrices_match_scipy_and_serial(
    solver: tuple[WavefrontKernel, spf.Kernel, str],
    omp_threads: int,
    suitesparse_dir: Path,
    name: str,
) -> None:
    path = suitesparse_dir / f"{name}.mtx"
    if not path.exists():
        pytest.skip(f"{path} not found")
    m = tril_with_diag(path)
    u, ref, f = solve_both(solver, m, 7)
    np.testing.assert_array_equal(u, ref)
    expected = spsolve_triangular(sp.csr_matrix(m), f, lower=True)
    np.testing.assert_allclose(u, expected, rtol=1e-10, atol=1e-12)


def test_plan_is_reusable_and_describes_the_levels(
    solver: tuple[WavefrontKernel, spf.Kernel, str],
) -> None:
    k, serial, dtype = solver
    m = lower(300, 0.02, 11)
    args = sptrsv_args(m, dtype)
    plan = k.inspect(strategy="wavefront", **args)
    assert isinstance(plan, Plan)
    assert plan.strategy == "wavefront"
    level = np.zeros(300, dtype=np.int64)
    for i in range(300):
        for p in range(m.indptr[i], m.indptr[i + 1] - 1):
            level[i] = max(level[i], level[m.indices[p]] + 1)
    np.testing.assert_array_equal(plan.level_of, level)
    assert plan.levels == int(level.max()) + 1
    np.testing.assert_array_equal(plan.level_sizes, np.bincount(level))
    np.testing.assert_array_equal(plan.order, np.argsort(level, kind="stable"))
    for seed in range(3):  # one plan, several right-hand sides
        f = np.random.default_rng(seed).random(300)
        u, ref = np.zeros(300), np.zeros(300)
        k(u=u, f=f, plan=plan, **args)
        serial(u=ref, f=f, **args)
        np.testing.assert_array_equal(u, ref)


def test_plan_from_other_index_arrays_is_refused(
    solver: tuple[WavefrontKernel, spf.Kernel, str],
) -> None:
    k, _, dtype = solver
    a, b = sptrsv_args(lower(50, 0.1, 1), dtype), sptrsv_args(lower(50, 0.1, 2), dtype)
    plan = k.inspect(**a)
    u, f = np.zeros(50), np.ones(50)
    with pytest.raises(ArgumentError, match="plan= was built from other index arrays"):
        k(u=u, f=f, plan=plan, **b)
    c = sptrsv_args(lower(60, 0.1, 1), dtype)
    with pytest.raises(ArgumentError, match="other index arrays"):
        k(u=np.zeros(60), f=np.ones(60), plan=plan, **c)
    with pytest.raises(ArgumentError, match="plan must be a Plan"):
        k(u=u, f=f, plan="levels", **a)
    with pytest.raises(ArgumentError, match="come from the inspection plan"):
        k(u=u, f=f, levelptr_i=np.zeros(51, dtype=np.int64), **a)
    with pytest.raises(ArgumentError, match="unknown argument"):
        k.inspect(bogus=1, **a)


def test_a_missing_array_is_named_missing(
    solver: tuple[WavefrontKernel, spf.Kernel, str],
) -> None:
    """A call with a plan that leaves out an array is told which one is missing (an index
    array left out was "col differs from the col the plan inspected"; a data array was
    "missing ... of void sptrsv_csr(..., nlevels_i, ...)", the executor's arguments), and
    only the loop's arrays are listed, not the plan's."""
    k, _, dtype = solver
    a = sptrsv_args(lower(50, 0.1, 1), dtype)
    plan = k.inspect(**a)
    u, f = np.zeros(50), np.ones(50)
    for check in (False, True):
        for name in ("col", "rowptr", "L"):
            given = {n: v for n, v in a.items() if n != name}
            with pytest.raises(ArgumentError, match=rf"missing array argument\(s\) {name};") as err:
                k(u=u, f=f, plan=plan, check=check, **given)
            assert "levelptr" not in str(err.value)
        with pytest.raises(ArgumentError, match=r"missing array argument\(s\) f;"):
            k(u=u, plan=plan, check=check, **a)
        with pytest.raises(ArgumentError, match=r"unknown argument\(s\) bogus; expected: ") as err:
            k(u=u, f=f, plan=plan, check=check, bogus=1, **a)
        assert "levelptr" not in str(err.value)
        assert "_serial" not in str(err.value)


def narrow_chain(dtype: str) -> dict[str, object]:
    """A wide level, a chain of 10 one-row levels, a wide level (groups: parallel, one
    thread, parallel)."""
    wide = MIN_PARALLEL_ROWS + 44
    rows: list[list[int]] = [[] for _ in range(wide)] + [[wide + c - 1] for c in range(10)]
    rows += [[wide + 9]] * wide
    n = len(rows)
    r = [i for i, cols in enumerate(rows) for _ in cols]
    c = [j for cols in rows for j in cols]
    m = sp.csr_array(sp.coo_array((np.full(len(r), 0.5), (r, c)), shape=(n, n)) + sp.identity(n))
    return sptrsv_args(m, dtype)


def test_plan_arrays_are_read_only(solver: tuple[WavefrontKernel, spf.Kernel, str]) -> None:
    k, _, dtype = solver
    plan = k.inspect(strategy="wavefront", **sptrsv_args(lower(40, 0.1, 5), dtype))
    for name in ("level_of", "levelptr", "order", "groupptr", "one_thread"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(plan, name)[0] = 1


def test_plan_rebuilt_from_inconsistent_arrays_is_refused(
    solver: tuple[WavefrontKernel, spf.Kernel, str],
) -> None:
    k, _, dtype = solver
    plan = k.inspect(strategy="wavefront", **narrow_chain(dtype))
    n = len(plan.order)
    swapped = plan.order.copy()
    swapped[[0, -1]] = swapped[[-1, 0]]  # the first and last rows trade levels
    twice = plan.order.copy()
    twice[1] = twice[0]
    outside = plan.order.copy()
    outside[0] = n
    two_levels = plan.groupptr.copy()
    two_levels[1] += 1  # the parallel group 0 takes level 1 (its one row) too
    split = plan.groupptr.copy()
    split[2] += 1  # the last group starts inside the last level
    parallel = plan.one_thread.copy()
    parallel[1] = 0  # the chain of ten levels run in parallel
    bad = [
        ({"order": swapped}, "outside its level"),
        ({"order": twice}, "not a permutation"),
        ({"order": outside}, "outside 0 .. "),
        ({"order": plan.order[:-1]}, "level_of has"),
        ({"levels": plan.levels + 1}, "levelptr"),
        ({"levels": 0}, "levels = 0"),
        ({"groupptr": split}, "splits a level"),
        ({"groupptr": two_levels}, "more than one level"),
        ({"one_thread": parallel}, "more than one level"),
        ({"groups": 0}, "needs groups"),
        ({"strategy": "fast"}, "strategy must be"),
        ({"level_of": plan.level_of.astype(float)}, "integer array"),
    ]
    for change, message in bad:
        with pytest.raises(ArgumentError, match=message):
            dataclasses.replace(plan, **change)
    same = dataclasses.replace(plan, order=plan.order.copy(), levels=np.int64(plan.levels))
    assert same.levels == plan.levels
    assert isinstance(same.levels, int)


def test_plan_with_consistently_edited_levels_is_refused_by_a_checked_call(
    solver: tuple[WavefrontKernel, spf.Kernel, str],
) -> None:
    k, serial, dtype = solver
    args = narrow_chain(dtype)
    plan = k.inspect(strategy="wavefront", **args)
    n = len(plan.order)
    level_of = plan.level_of.copy()
    level_of[level_of == 2] = 1  # two chained rows in one level: consistent, but wrong
    sizes = np.bincount(level_of)
    sizes = sizes[sizes > 0]
    level_of = np.unique(level_of, return_inverse=True)[1]
    levelptr = np.full(n + 1, n)
    levelptr[: len(sizes) + 1] = np.concatenate([[0], np.cumsum(sizes)])
    groupptr = np.full(n + 1, n)
    groupptr[:2] = [0, n]
    edited = dataclasses.replace(
        plan,
        levels=len(sizes),
        level_of=level_of,
        levelptr=levelptr,
        order=np.argsort(level_of, kind="stable"),
        groups=1,
        groupptr=groupptr,
        one_thread=np.ones(n, dtype=np.int64),
    )
    f, u = np.ones(n), np.zeros(n)
    with pytest.raises(ArgumentError, match=r"levels \(level_of\) other than those its inspector"):
        k(u=u, f=f, plan=edited, **args)
    k(u=u, f=f, plan=plan, **args)
    ref = np.zeros(n)
    serial(u=ref, f=f, **args)
    np.testing.assert_array_equal(u, ref)


def test_plan_of_another_computations_inspector_is_refused() -> None:
    gs = kernels.gauss_seidel_csr()
    gs.wavefront("i")
    m = lower(30, 0.2, 3)
    gs_args = spf.sparse.gauss_seidel_args(m + m.T)
    gs_plan = gs.compile().inspect(**gs_args)
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    solve = comp.compile()
    args = sptrsv_args(m)
    with pytest.raises(ArgumentError, match="built by the inspector of another computation"):
        solve(u=np.zeros(30), f=np.ones(30), plan=gs_plan, **args)


def test_index_arrays_violating_the_triangular_assumption(
    solver: tuple[WavefrontKernel, spf.Kernel, str],
) -> None:
    k, _, dtype = solver
    args = sptrsv_args(lower(8, 0.5, 3), dtype)
    col = args["col"].copy()
    row = int(np.argmax(np.diff(args["rowptr"]) > 1))
    col[args["rowptr"][row]] = 7  # an off-diagonal entry above the diagonal
    args["col"] = col
    with pytest.raises(ArgumentError, match=r"forall i, k: .*col\(k\) <= i"):
        k.inspect(**args)
    with pytest.raises(ArgumentError, match=r"forall i, k: .*col\(k\) <= i"):
        k(u=np.zeros(8), f=np.ones(8), **args)


def test_executor_runs_every_level_in_one_parallel_region() -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    code = comp.codegen()
    assert code.count("#pragma omp parallel") == 1
    assert "#pragma omp parallel for" not in code
    assert code.count("#pragma omp for") == 1
    region = code.index("#pragma omp parallel")
    # the level loop stops at nlevels_i (and at N, where levelptr_i's declared domain ends)
    levels = re.search(r"for \(int64_t i_lev = 0; i_lev < [^;]*nlevels_i[^;]*; i_lev\+\+\)", code)
    assert levels is not None
    assert region < levels.start()
    assert "order_i(i_pos)" in code


@pytest.mark.parametrize("target", ["cuda", "mpi", "hls"])
def test_other_targets_refuse_the_wavefront(target: str) -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    with pytest.raises(CodegenError, match=rf"loop 'i' .* the '{target}' target does not"):
        comp.codegen(target=target)


def test_p2p_executor_waits_on_predecessors_only() -> None:
    """One parallel loop over the iterations in level order (static chunks: each thread runs
    its positions in increasing order, so no thread waits on an iteration it has still to run
    itself); each waits on the flags of its sources."""
    comp = kernels.sptrsv_csr()
    comp.wavefront("i", method="p2p")
    code = comp.codegen()
    assert code.count("#pragma omp parallel for schedule(static, 64)") == 1
    assert "#pragma omp for" not in code
    assert "i_lev" not in code
    body = code[code.index("for (int64_t i_pos = 0; i_pos < N; i_pos++)") :]
    # s1 runs with the row's u(i) in a local (spf.codegen.row_scalar), stored before the post
    read = "u(col_k)"  # never the row's own u(i): spf.kernels.DIAGONAL_LAST
    update, post = body.index(f"spf_row -= L(k) * {read};"), body.index("post_i1(")
    assert body.index("wait_i0(") < update < body.rindex("u(order_i_i_pos) = spf_row;", 0, post)
    assert "__atomic_load_n((p), __ATOMIC_ACQUIRE)" in code
    assert "__atomic_store_n((p), 1, __ATOMIC_RELEASE)" in code


def test_wavefront_refusals_without_check_false() -> None:
    with pytest.raises(IllegalScheduleError, match="carries no dependence: parallelize"):
        kernels.spmv_csr().wavefront("i")
    comp = kernels.sptrsv_csr()
    with pytest.raises(IllegalScheduleError, match="s0 is not part of the wavefront"):
        comp.stmt("s1").wavefront("i")


def test_source_iteration_through_a_uf_call() -> None:
    """``x(i) = x(p(i)) + 1`` with ``p(i) < i``: the source row is the UF call ``p(i)``, not an
    iterator, so the inspector enumerates it as an extra iterator; levels are chain depths."""
    comp = spf.Computation("chain")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.declare_uf("p", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < N}", dtype="int64")
    comp.assume("forall i: 1 <= i < N => p(i) < i")
    dom = "{[i]: 1 <= i < N}"
    comp.add_stmt(spf.Stmt("$x$(i) = $x$(p(i)) + 1.0;", dom, "{[i] -> [0, i, 0]}"))
    comp.add_stmt(spf.Stmt("$y$(i) = 2.0 * $x$(i);", dom, "{[i] -> [0, i, 1]}"))
    serial = spf.Computation.from_json(comp.to_json()).compile()
    comp.wavefront("i")
    k = comp.compile()
    rng = np.random.default_rng(5)
    n = 500
    p = np.array([0] + [int(rng.integers(0, i)) for i in range(1, n)], dtype=np.int64)
    x, y, xr, yr = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    plan = k.inspect(p=p, N=n, strategy="wavefront")
    k(x=x, y=y, p=p, N=n, plan=plan)
    serial(x=xr, y=yr, p=p, N=n)
    np.testing.assert_array_equal(x, xr)
    np.testing.assert_array_equal(y, yr)
    np.testing.assert_array_equal(plan.level_of[1:], xr[1:] - 1)  # depth of the chain


def test_plan_strategy_serial_for_narrow_levels(
    solver: tuple[WavefrontKernel, spf.Kernel, str], omp_threads: int
) -> None:
    """``strategy="auto"`` runs the loop in its original order when the levels average fewer
    than MIN_ROWS_PER_LEVEL rows (a 300-row matrix), by levels when they are wide (a diagonal
    matrix: one level); both give the serial kernel's bits, and either can be forced."""
    k, serial, dtype = solver
    args = sptrsv_args(lower(300, 0.02, 11), dtype)
    auto = k.inspect(**args)
    assert auto.strategy == "serial"
    assert auto.levels > 1
    assert "strategy='serial'" in repr(auto)
    forced = k.inspect(strategy="serial", **args)
    f = np.random.default_rng(0).random(300)
    ref = np.zeros(300)
    serial(u=ref, f=f, **args)
    for plan in (auto, forced, k.inspect(strategy="wavefront", **args)):
        u = np.zeros(300)
        k(u=u, f=f, plan=plan, **args)
        np.testing.assert_array_equal(u, ref)
    u = np.zeros(300)
    k(u=u, f=f, **args)  # inspected inside the call: auto
    np.testing.assert_array_equal(u, ref)
    n = MIN_ROWS_PER_LEVEL
    diag = sptrsv_args(sp.csr_array(sp.diags(np.arange(1.0, n + 1))), dtype)
    wide = k.inspect(**diag)
    assert (wide.levels, wide.strategy) == (1, "wavefront")
    u, f = np.zeros(n), np.ones(n)
    k(u=u, f=f, plan=wide, **diag)
    np.testing.assert_array_equal(u, 1.0 / np.arange(1.0, n + 1))
    with pytest.raises(ArgumentError, match="strategy must be one of 'auto', 'wavefront'"):
        k.inspect(strategy="fast", **args)


def test_runs_of_narrow_levels_run_on_one_thread(
    solver: tuple[WavefrontKernel, spf.Kernel, str], omp_threads: int
) -> None:
    """A wide level, a chain of 10 one-row levels, a wide level: the chain is one group that one
    thread runs (one barrier, not ten), the wide levels are groups of their own."""
    k, serial, dtype = solver
    wide = MIN_PARALLEL_ROWS + 44
    rows = [[] for _ in range(wide)] + [[wide + c - 1] for c in range(10)]
    rows += [[wide + 9]] * wide
    n = len(rows)
    r = [i for i, cols in enumerate(rows) for _ in cols]
    c = [j for cols in rows for j in cols]
    m = sp.csr_array(sp.coo_array((np.full(len(r), 0.5), (r, c)), shape=(n, n)) + sp.identity(n))
    args = sptrsv_args(m, dtype)
    plan = k.inspect(strategy="wavefront", **args)
    assert plan.levels == 12
    assert plan.groups == 3
    np.testing.assert_array_equal(plan.groupptr[:4], [0, wide, wide + 10, n])
    np.testing.assert_array_equal(plan.one_thread[:3], [0, 1, 0])
    f = np.random.default_rng(1).random(n)
    u, ref = np.zeros(n), np.zeros(n)
    k(u=u, f=f, plan=plan, **args)
    serial(u=ref, f=f, **args)
    np.testing.assert_array_equal(u, ref)


def test_levels_executor_runs_narrow_groups_in_omp_single() -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i", method="levels")
    code = comp.codegen()
    assert "if (single_i(i_lev))" in code
    assert code.index("#pragma omp single") < code.index("#pragma omp for schedule(static)")


def test_last_threads_follows_the_plan_strategy(
    solver: tuple[WavefrontKernel, spf.Kernel, str], omp_threads: int
) -> None:
    """By levels the executor runs on the OpenMP team; a serial plan runs the loop in its
    original order on one thread."""
    k, _, dtype = solver
    args = sptrsv_args(lower(300, 0.02, 11), dtype)
    u, f = np.zeros(300), np.ones(300)
    k(u=u, f=f, plan=k.inspect(strategy="wavefront", **args), **args)
    assert k.last_threads == omp_threads
    k(u=u, f=f, plan=k.inspect(strategy="serial", **args), **args)
    assert k.last_threads == 1

"""Wavefront Gauss-Seidel and ILU(0) end to end (API.md section 11, docs/inspection.md):
``comp.wavefront("i")`` on ``spf.kernels.gauss_seidel_csr`` (flow dependences pulled, anti
dependences pushed) and ``spf.kernels.ilu0_csr`` (``levels`` and ``p2p``) equals the serial
kernel bitwise at 1 and 2 OpenMP threads on random and SuiteSparse matrices, int32 and
int64 indices, with every argument check on."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.runtime import threads
from spf.runtime.kernel import Kernel
from spf.runtime.plan import Plan, WavefrontKernel
from spf.sparse import gauss_seidel_args, ilu0_args, read_matrix_market

if TYPE_CHECKING:
    from pathlib import Path

GS_SUITESPARSE = ["cryg2500.mtx", "bcsstk13.mtx", "jagmesh7.mtx", "arrow.mtx"]
ILU0_SUITESPARSE = ["olm1000.mtx", "cryg2500.mtx", "bcsstk13.mtx"]
"""As tests/e2e/test_gauss_seidel_ilu0.py chooses them (diagonal stored, finite results)."""

RANDOM = [(1, 1.0, 0), (2, 0.5, 1), (5, 0.0, 2), (7, 0.3, 3), (33, 0.1, 4), (101, 0.05, 5)]
RANDOM += [(999, 0.005, 6), (250, 0.0, 7)]
"""(rows, density, seed): one row, diagonal only (density 0), odd sizes."""


def random_matrix(n: int, density: float, seed: int) -> sps.csr_array:
    """A random square matrix with a dominant diagonal, sorted columns."""
    rng = np.random.default_rng(seed)
    m = sps.random_array((n, n), density=density, rng=rng, format="csr")
    m = sps.csr_array(m + sps.diags_array(2.0 + rng.random(n) * n * density))
    m.sum_duplicates()
    m.sort_indices()
    return m


def plan_for(k: WavefrontKernel, **args: Any) -> Plan:
    """A plan that runs the executor (a kernel that may choose the serial order for few rows
    per level is told not to, so that the executor is what is compared)."""
    if "strategy" in inspect.signature(k.inspect).parameters:
        return k.inspect(strategy="wavefront", **args)
    return k.inspect(**args)


@pytest.fixture(params=[1, 2])
def omp_threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run at exactly ``n`` OpenMP threads (spf's busy-machine cap turned off)."""
    gomp = threads.openmp_library()
    assert gomp is not None
    before, adaptive = gomp.omp_get_max_threads(), threads.set_adaptive(False)
    gomp.omp_set_num_threads(int(request.param))
    try:
        yield int(request.param)
    finally:
        gomp.omp_set_num_threads(before)
        threads.set_adaptive(adaptive)


Pair = tuple[WavefrontKernel, Kernel, str]


def _pair(factory: Callable[..., spf.Computation], dtype: str, method: str) -> Pair:
    comp = factory(index_dtype=dtype)
    comp.wavefront("i", method=method)
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k, factory(index_dtype=dtype).compile(), dtype


@pytest.fixture(scope="module", params=[("int32", "levels"), ("int64", "levels"), ("int64", "p2p")])
def gs(request: pytest.FixtureRequest) -> Pair:
    dtype, method = request.param
    return _pair(kernels.gauss_seidel_csr, dtype, method)


@pytest.fixture(scope="module", params=[("int32", "levels"), ("int64", "levels"), ("int32", "p2p")])
def ilu0(request: pytest.FixtureRequest) -> Pair:
    dtype, method = request.param
    return _pair(kernels.ilu0_csr, dtype, method)


def sweep_both(pair: Pair, m: Any, seed: int) -> None:
    k, serial, dtype = pair
    args = gauss_seidel_args(m, index_dtype=dtype)
    rng = np.random.default_rng(seed)
    b, x0 = rng.standard_normal(m.shape[0]), rng.standard_normal(m.shape[0])
    x, ref = x0.copy(), x0.copy()
    k(x=x, b=b, plan=plan_for(k, **args), **args)
    serial(x=ref, b=b, **args)
    np.testing.assert_array_equal(x, ref)


def factor_both(pair: Pair, m: Any) -> None:
    k, serial, dtype = pair
    args, ref = ilu0_args(m, index_dtype=dtype), ilu0_args(m, index_dtype=dtype)
    index = {name: v for name, v in args.items() if name != "A"}
    k(plan=plan_for(k, **index), **args)
    serial(**ref)
    np.testing.assert_array_equal(args["A"], ref["A"])


def mtx(suitesparse_dir: Path, name: str) -> sps.csr_array:
    path = suitesparse_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    m = sps.csr_array(read_matrix_market(path))
    m.sum_duplicates()
    m.sort_indices()
    return m


# ============================================================================= Gauss-Seidel
@pytest.mark.parametrize(("n", "density", "seed"), RANDOM)
def test_gauss_seidel_random(gs: Pair, omp_threads: int, n: int, density: float, seed: int) -> None:
    sweep_both(gs, random_matrix(n, density, seed), seed)


@pytest.mark.parametrize("name", GS_SUITESPARSE)
def test_gauss_seidel_suitesparse(
    gs: Pair, omp_threads: int, suitesparse_dir: Path, name: str
) -> None:
    sweep_both(gs, mtx(suitesparse_dir, name), 3)


def test_gauss_seidel_plan_is_reusable_over_sweeps(gs: Pair) -> None:
    """One plan, many sweeps: converges on 2-D Poisson like the serial sweep, bit for bit."""
    k, serial, dtype = gs
    a = spf.sparse.poisson2d(9)
    args = gauss_seidel_args(a, index_dtype=dtype)
    plan = plan_for(k, **args)
    assert plan.levels > 1
    b, x, ref = np.ones(a.shape[0]), np.zeros(a.shape[0]), np.zeros(a.shape[0])
    for _ in range(40):
        k(x=x, b=b, plan=plan, **args)
        serial(x=ref, b=b, **args)
    np.testing.assert_array_equal(x, ref)


def test_gauss_seidel_levels_order_both_triangles() -> None:
    """Row ``i`` comes after every row ``j < i`` it reads (flow) and every row ``j < i`` that
    reads it (anti): on a pattern whose upper triangle differs from its lower one."""
    comp = kernels.gauss_seidel_csr()
    comp.wavefront("i")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    # 0 reads x(2) (anti: 0 before 2); 1 reads nothing; 2 reads nothing below it
    a = sps.csr_array(np.array([[4.0, 0.0, 1.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]]))
    plan = plan_for(k, **gauss_seidel_args(a))
    np.testing.assert_array_equal(plan.level_of, [0, 0, 1])


def test_gauss_seidel_p2p_counts_pushed_edges() -> None:
    """p2p: each row waits on the flags of the rows ``col(k) < i`` it reads (pull) and until
    every earlier row that reads its ``x`` has added one back to its ``pending`` counter,
    which a serial prologue set to minus their number (push)."""
    comp = kernels.gauss_seidel_csr()
    comp.wavefront("i", method="p2p")
    code = comp.codegen()
    assert "spf_wait_flag(&done_i(((j))), (1))" in code
    assert "spf_wait_flag(&pending_i(((i))), (0))" in code
    assert "spf_post_add(&pending_i(((j))))" in code
    assert "__atomic_fetch_add((p), 1, __ATOMIC_RELEASE)" in code
    region = code.index("#pragma omp parallel")
    head = "void gauss_seidel_csr_spf_faults("  # the loops' function when it has a fault record
    prologue = code.index("{", code.index(head if head in code else "void gauss_seidel_csr("))
    assert code.index("pending_i((j)) -= 1") < region
    assert "s8(i, k, col_k" in code[prologue:region]  # the prologue runs before the region
    body = code[region:]
    assert body.index("wait_i0(") < body.index("wait_i1(") < body.index("s0(")
    assert body.index("s3(") < body.index("post_i2(")
    # the waits, the statements and the posts all read diag(i): bound once in the row's block
    assert body.count("const int64_t diag_i = diag(order_i_i_pos);") == 1


def test_gauss_seidel_assumption_checked_before_inspecting(gs: Pair) -> None:
    k, _, dtype = gs
    args = gauss_seidel_args(random_matrix(6, 0.5, 2), index_dtype=dtype)
    args["diag"] = args["diag"].copy()
    args["diag"][3] = (
        args["rowptr"][3] if args["diag"][3] != args["rowptr"][3] else args["rowptr"][4] - 1
    )
    with pytest.raises(spf.ArgumentError, match=r"col\(diag\(i\)\) = i"):
        k.inspect(**args)


# ===================================================================================== ILU0
@pytest.mark.parametrize(("n", "density", "seed"), RANDOM)
def test_ilu0_random(ilu0: Pair, omp_threads: int, n: int, density: float, seed: int) -> None:
    factor_both(ilu0, random_matrix(n, density, seed + 100))


@pytest.mark.parametrize("name", ILU0_SUITESPARSE)
def test_ilu0_suitesparse(ilu0: Pair, omp_threads: int, suitesparse_dir: Path, name: str) -> None:
    factor_both(ilu0, mtx(suitesparse_dir, name))


def test_ilu0_levels_are_those_of_the_lower_triangle(ilu0: Pair) -> None:
    """ILU(0) row ``i`` waits on the rows ``col(k)``, ``k`` left of its diagonal: the levels
    of SpTRSV on its lower triangle."""
    k, _, dtype = ilu0
    m = random_matrix(300, 0.02, 9)
    args = ilu0_args(m, index_dtype=dtype)
    plan = plan_for(k, **{n: v for n, v in args.items() if n != "A"})
    level = np.zeros(300, dtype=np.int64)
    for i in range(300):
        for p in range(m.indptr[i], m.indptr[i + 1]):
            if m.indices[p] < i:
                level[i] = max(level[i], level[m.indices[p]] + 1)
    np.testing.assert_array_equal(plan.level_of, level)

"""Fused solve and SpMV on pipeline parts (docs/inspection.md, "Fused kernels in a
pipeline"): on a matrix of long rows the default plan for two threads runs the solve's rows
in order as the first part of each coarse level and the product's rows beside them once
their inputs are done (:mod:`spf.runtime.pipeline`); the fused kernel on it equals the two
kernels run one after the other bitwise, on one thread and on two, int32 and int64 indices,
checked and unchecked calls."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.runtime import pipeline
from spf.runtime import plan as plan_module
from spf.runtime.plan import WavefrontKernel
from spf.sparse import gauss_seidel_args


@pytest.fixture
def team(omp_threads: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """The parts run on exactly ``omp_threads`` OpenMP threads (a team of one runs the
    parts too, not the serial kernels)."""
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 2)
    return omp_threads


def solve_mv(dtype: str) -> WavefrontKernel:
    comp = spf.Computation(f"solve_mv_pipe_{dtype}")
    for name in ("x", "b", "y"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.append_computation(
        kernels.trsv_diag_csr(index_dtype=dtype), "{[]}", "{[] -> [0]}",
        {"x": "x", "A": "A", "b": "b"},
    )  # fmt: skip
    comp.append_computation(
        kernels.spmv_csr(index_dtype=dtype), "{[]}", "{[] -> [1]}", {"y": "y", "A": "A", "x": "x"}
    )
    comp.fuse("s2", "s3", 1)
    comp.wavefront("_i0_i")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k


@pytest.fixture(scope="module", params=["int32", "int64"])
def fused(request: pytest.FixtureRequest) -> tuple[str, WavefrontKernel]:
    return request.param, solve_mv(request.param)


def banded(n: int, reach: int, seed: int) -> Any:
    """A random band of ``2 * reach + 1`` diagonals, diagonally dominant: every solve row
    reads the ``reach`` rows before it (one chain of ``n`` levels), every product row ``x``
    up to ``reach`` rows after its own."""
    rng = np.random.default_rng(seed)
    offsets = list(range(-reach, reach + 1))
    diags = [rng.uniform(-1.0, 1.0, n - abs(o)) for o in offsets]
    m = sps.csr_array(sps.diags_array(diags, offsets=offsets, format="csr"))
    m = sps.csr_array(m + sps.diags_array(np.abs(m).sum(axis=1) + 1.0))
    m.sum_duplicates()
    m.sort_indices()
    return m


def scattered(n: int, per_row: int, seed: int) -> Any:
    """A random symmetric pattern of about ``per_row`` entries a row (pushpull's kind:
    long rows, a solve of ~100 levels whose coarse levels are narrow), diagonally dominant.
    Its coarse plans were estimated no faster than the serial kernels (``auto`` ran it
    serially before the pipeline)."""
    rng = np.random.default_rng(seed)
    m = sps.random_array((n, n), density=per_row / (2 * n), rng=rng, format="csr")
    m = sps.csr_array(m + m.T)
    m = sps.csr_array(m + sps.diags_array(np.abs(m).sum(axis=1) + 1.0))
    m.sum_duplicates()
    m.sort_indices()
    return m


def separately(m: Any, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    args = gauss_seidel_args(m)
    x, y = np.zeros(m.shape[0]), np.zeros(m.shape[0])
    kernels.trsv_diag_csr().compile()(x=x, b=b, **args)
    kernels.spmv_csr().compile()(y=y, x=x, **{k: args[k] for k in ("rowptr", "col", "A")})
    return x, y


def is_pipeline(plan: Any, n: int) -> bool:
    """Whether the plan's parts are a pipeline: two parts a coarse level, the first parts
    of all levels but the last the solve's rows ``0 .. n-1`` in order."""
    ptr, partptr, order = plan.coarse_ptr, plan.part_ptr, plan.coarse_order
    levels = plan.coarse_levels
    if plan.parts != 2 * levels or not np.array_equal(ptr[: levels + 1], 2 * np.arange(levels + 1)):
        return False
    chain = [order[partptr[2 * lev] : partptr[2 * lev + 1]] for lev in range(levels - 1)]
    return np.array_equal(np.concatenate(chain), np.arange(n))


def test_long_rows_run_the_solve_beside_the_product(
    fused: tuple[str, WavefrontKernel], team: int
) -> None:
    dtype, k = fused
    m = scattered(2000, 120, 1)
    n = m.shape[0]
    args = gauss_seidel_args(m, index_dtype=dtype)
    index = {key: v for key, v in args.items() if key != "A"}
    plan = k.inspect(threads=2, **index)
    assert plan.strategy == "coarse"
    assert is_pipeline(plan, n)
    assert plan.coarse_levels <= max(pipeline.BLOCKS) + 1
    b = np.random.default_rng(2).standard_normal(n)
    want_x, want_y = separately(m, b)
    for check in (True, False):
        x, y = np.zeros(n), np.zeros(n)
        k(x=x, y=y, b=b, plan=plan, check=check, **args)
        np.testing.assert_array_equal(x, want_x, err_msg=f"x, check={check}")
        np.testing.assert_array_equal(y, want_y, err_msg=f"y, check={check}")


def test_one_thread_runs_a_pipeline_plan_as_the_serial_kernels(
    fused: tuple[str, WavefrontKernel], omp_threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A team of one (the busy-machine cap, ``OMP_NUM_THREADS=1``) runs the pipeline plan's
    call as the two serial kernels: the same bits."""
    dtype, k = fused
    m = scattered(2000, 120, 3)
    n = m.shape[0]
    args = gauss_seidel_args(m, index_dtype=dtype)
    plan = k.inspect(threads=2, **{key: v for key, v in args.items() if key != "A"})
    assert is_pipeline(plan, n)
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 1)
    b = np.random.default_rng(4).standard_normal(n)
    x, y = np.zeros(n), np.zeros(n)
    k(x=x, y=y, b=b, plan=plan, check=False, **args)
    want_x, want_y = separately(m, b)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)


def test_short_loops_stay_serial(fused: tuple[str, WavefrontKernel]) -> None:
    """Too little work to pay for the parallel region (``coarse.REGION_WORK``): serial."""
    dtype, k = fused
    args = gauss_seidel_args(banded(300, 2, 5), index_dtype=dtype)
    plan = k.inspect(threads=2, **{key: v for key, v in args.items() if key != "A"})
    assert plan.strategy == "serial"


def test_a_coarse_plan_that_pays_is_kept(fused: tuple[str, WavefrontKernel]) -> None:
    """The pipeline stands in for the serial plan only: a band, whose coarse plan is
    estimated to pay, keeps it."""
    dtype, k = fused
    m = banded(3000, 24, 1)
    args = gauss_seidel_args(m, index_dtype=dtype)
    plan = k.inspect(threads=2, **{key: v for key, v in args.items() if key != "A"})
    assert plan.strategy == "coarse"
    assert not is_pipeline(plan, m.shape[0])


def test_a_pipeline_plan_rebuilt_from_its_arrays_passes_the_dependence_check(
    fused: tuple[str, WavefrontKernel], team: int
) -> None:
    """A pipeline has an empty part (nothing is ready before the first solve block); a
    plan rebuilt from its arrays was refused by the structural check ("each part
    non-empty") before the generated check of its parts against the dependences ran."""
    import dataclasses

    dtype, k = fused
    m = scattered(2000, 120, 1)
    n = m.shape[0]
    args = gauss_seidel_args(m, index_dtype=dtype)
    plan = k.inspect(threads=2, **{key: v for key, v in args.items() if key != "A"})
    assert is_pipeline(plan, n)
    sizes = np.diff(plan.part_ptr[: plan.parts + 1])
    assert sizes.min() == 0  # the empty part the structural check refused
    rebuilt = dataclasses.replace(plan, coarse_order=np.asarray(plan.coarse_order).copy())
    b = np.random.default_rng(2).standard_normal(n)
    want_x, want_y = separately(m, b)
    x, y = np.zeros(n), np.zeros(n)
    k(x=x, y=y, b=b, plan=rebuilt, **args)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)


def test_a_pipeline_estimated_over_the_common_gain_is_taken(
    fused: tuple[str, WavefrontKernel], team: int
) -> None:
    """A narrow band of 8,000 rows (one chain): its coarse plans do not pay, its pipeline is
    estimated ~1.3x the serial kernels, above ``coarse.MIN_GAIN`` (1.25) but under the 1.4
    the pipeline once had to reach, so ``auto`` ran it serially (bayer10's case)."""
    dtype, k = fused
    m = banded(8000, 3, 1)
    n = m.shape[0]
    args = gauss_seidel_args(m, index_dtype=dtype)
    plan = k.inspect(threads=2, **{key: v for key, v in args.items() if key != "A"})
    assert plan.strategy == "coarse"
    assert is_pipeline(plan, n)
    b = np.random.default_rng(6).standard_normal(n)
    want_x, want_y = separately(m, b)
    x, y = np.zeros(n), np.zeros(n)
    k(x=x, y=y, b=b, plan=plan, check=False, **args)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)

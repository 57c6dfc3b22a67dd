"""Coarse wavefronts end to end (API.md section 18, docs/inspection.md): ``comp.wavefront("i",
method="coarse")`` and ``method="auto"`` (the default) on SpTRSV, Gauss-Seidel and ILU(0) from
``spf.kernels`` run bitwise equal to the serial kernel at 1 and 2 OpenMP threads, for every
strategy of their plans (coarse, levels, serial, auto), on random and SuiteSparse matrices,
int32 and int64 indices, the empty matrix, one row and a matrix with one dense row; on random
lower-triangular patterns every method (levels, p2p, coarse, auto) gives the same bits. A
plan over another pattern, of another kernel, or forged so that two parts of a coarse level
depend on each other is refused with ``ArgumentError``."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError, kernels
from spf.runtime import checksum, threads
from spf.runtime.kernel import Kernel
from spf.runtime.plan import Plan, WavefrontKernel
from spf.sparse import gauss_seidel_args, ilu0_args, read_matrix_market, sptrsv_args
from spf.testing import compiled, random_csr
from spf.testing import random_lower as lower

if TYPE_CHECKING:
    from pathlib import Path

STRATEGIES = ("coarse", "levels", "serial", "auto")

Pair = tuple[WavefrontKernel, Kernel, str]


def _pair(name: str, dtype: str, method: str) -> Pair:
    """The wavefront kernel ``name`` of ``spf.kernels`` and its serial kernel (compiled once
    per process, :func:`spf.testing.compiled`)."""
    comp: spf.Computation = getattr(kernels, name)(index_dtype=dtype)
    comp.wavefront("i", method=method)
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k, compiled(name, index_dtype=dtype), dtype


@pytest.fixture(scope="module", params=[("int32", "coarse"), ("int64", "auto")])
def trsv(request: pytest.FixtureRequest) -> Pair:
    dtype, method = request.param
    return _pair("sptrsv_csr", dtype, method)


@pytest.fixture(scope="module")
def trsv32() -> Pair:
    return _pair("sptrsv_csr", "int32", "coarse")


@pytest.fixture(scope="module")
def others32() -> dict[str, WavefrontKernel]:
    """The levels and p2p SpTRSV kernels (int32) and the auto one, for the differential test."""
    out = {}
    for method in ("levels", "p2p", "auto"):
        comp = kernels.sptrsv_csr(index_dtype="int32")
        comp.wavefront("i", method=method)
        k = comp.compile()
        assert isinstance(k, WavefrontKernel)
        out[method] = k
    return out


@pytest.fixture(params=[1, 2])
def omp_threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run at exactly ``n`` OpenMP threads (spf's busy-machine cap turned off)."""
    adaptive = threads.set_adaptive(False)
    try:
        with threads.openmp_threads(int(request.param)):
            yield int(request.param)
    finally:
        threads.set_adaptive(adaptive)


def dense_row(n: int, seed: int) -> sp.csr_array:
    """A random lower triangle whose last row is full (every row a dependence of it)."""
    m = sp.lil_array(lower(n, 0.02, seed))
    m[n - 1, : n - 1] = 0.01
    out = sp.csr_array(m)
    out.sort_indices()
    return out


MATRICES = {
    "empty": lambda: sp.csr_array((0, 0)),
    "one row": lambda: lower(1, 0.0, 0),
    "diagonal": lambda: lower(17, 0.0, 1),
    "odd 33": lambda: lower(33, 0.2, 2),
    "odd 501": lambda: lower(501, 0.01, 3),
    "random 3000": lambda: lower(3000, 0.001, 4),
    "dense row": lambda: dense_row(300, 5),
    "poisson 50": lambda: sp.csr_array(sp.tril(spf.sparse.poisson2d(50), format="csr")),
}


def solve(k: Kernel, m: sp.csr_array, dtype: str, plan: Plan | None = None) -> np.ndarray:
    args = sptrsv_args(m, dtype)
    n = m.shape[0]
    u = np.zeros(n)
    extra = {} if plan is None else {"plan": plan}
    k(u=u, f=np.random.default_rng(n).uniform(-1.0, 1.0, n), **args, **extra)
    return u


@pytest.mark.parametrize("name", list(MATRICES))
def test_sptrsv_every_strategy_bitwise_equals_serial(
    trsv: Pair, omp_threads: int, name: str
) -> None:
    k, serial, dtype = trsv
    m = MATRICES[name]()
    want = solve(serial, m, dtype)
    args = sptrsv_args(m, dtype)
    for strategy in STRATEGIES:
        plan = k.inspect(strategy=strategy, threads=2, **args)
        assert plan.strategy in ("coarse", "levels", "serial")
        np.testing.assert_array_equal(solve(k, m, dtype, plan), want, err_msg=strategy)
    np.testing.assert_array_equal(solve(k, m, dtype), want)  # inspected inside the call


@pytest.mark.parametrize("seed", range(6))
def test_random_patterns_every_method_gives_the_same_bits(
    trsv32: Pair, others32: dict[str, WavefrontKernel], omp_threads: int, seed: int
) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 700))
    m = lower(n, float(rng.uniform(0.0, 8.0 / n)), seed)
    k, serial, _ = trsv32
    want = solve(serial, m, "int32")
    args = sptrsv_args(m, "int32")
    runs = {"coarse": (k, k.inspect(threads=3, **args))}
    runs["levels"] = (others32["levels"], others32["levels"].inspect(strategy="wavefront", **args))
    runs["p2p"] = (others32["p2p"], others32["p2p"].inspect(strategy="wavefront", **args))
    runs["auto"] = (others32["auto"], others32["auto"].inspect(**args))
    for method, (kernel, plan) in runs.items():
        np.testing.assert_array_equal(solve(kernel, m, "int32", plan), want, err_msg=method)


def mtx(where: Path, name: str, *, triangle: bool = False) -> sp.csr_array:
    """SuiteSparse matrix ``name`` (skipped where missing), sorted; ``triangle``: its strict
    lower triangle with a dominant diagonal."""
    if not (where / name).is_file():
        pytest.skip(f"{where / name} not found")
    m = sp.csr_array(read_matrix_market(where / name)).astype(np.float64)
    m.sum_duplicates()
    if triangle:
        a = sp.tril(sp.csr_array((np.where(m.data == 0, 1.0, m.data), m.indices, m.indptr)), k=-1)
        m = sp.csr_array(a + sp.diags_array(np.asarray(abs(a).sum(axis=1)).ravel() + 1.0))
    m.sort_indices()
    return m


@pytest.mark.parametrize("name", ["bcsstk13.mtx", "cryg2500.mtx", "jagmesh7.mtx", "arrow.mtx"])
def test_sptrsv_suitesparse(trsv: Pair, omp_threads: int, suitesparse_dir: Path, name: str) -> None:
    k, serial, dtype = trsv
    m = mtx(suitesparse_dir, name, triangle=True)
    want = solve(serial, m, dtype)
    for strategy in ("coarse", "levels"):
        plan = k.inspect(strategy=strategy, threads=2, **sptrsv_args(m, dtype))
        np.testing.assert_array_equal(solve(k, m, dtype, plan), want, err_msg=strategy)


# ======================================================================= Gauss-Seidel, ILU(0)
@pytest.fixture(scope="module", params=[("int32", "coarse"), ("int64", "auto")])
def gs(request: pytest.FixtureRequest) -> Pair:
    dtype, method = request.param
    return _pair("gauss_seidel_csr", dtype, method)


@pytest.fixture(scope="module", params=[("int64", "coarse")])
def ilu0(request: pytest.FixtureRequest) -> Pair:
    dtype, method = request.param
    return _pair("ilu0_csr", dtype, method)


def random_square(n: int, density: float, seed: int) -> sp.csr_array:
    """:func:`spf.testing.random_csr` with a dominant diagonal (entries in [-1, 1))."""
    out = sp.csr_array(random_csr(n, n, density, seed) + sp.eye_array(n) * (2.0 + n * density))
    out.sort_indices()
    return out


SQUARE = {
    "one row": lambda: random_square(1, 1.0, 0),
    "odd 7": lambda: random_square(7, 0.3, 3),
    "odd 999": lambda: random_square(999, 0.005, 6),
    "poisson 40": lambda: sp.csr_array(spf.sparse.poisson2d(40)),
}


def sweep_both(pair: Pair, m: Any, strategy: str) -> None:
    """One Gauss-Seidel sweep from a random start, by plan and serially: the same bits."""
    k, serial, dtype = pair
    args = gauss_seidel_args(m, index_dtype=dtype)
    b, x0 = np.random.default_rng(m.shape[0]).standard_normal((2, m.shape[0]))
    outs = [x0.copy(), x0.copy()]
    k(x=outs[0], b=b, plan=k.inspect(strategy=strategy, threads=2, **args), **args)
    serial(x=outs[1], b=b, **args)
    np.testing.assert_array_equal(*outs)


def factor_both(pair: Pair, m: Any, strategy: str) -> None:
    """ILU(0) in place, by plan and serially: the same bits."""
    k, serial, dtype = pair
    by_plan, ref = (ilu0_args(m, index_dtype=dtype) for _ in range(2))
    plan = k.inspect(strategy=strategy, threads=2, **{a: by_plan[a] for a in k.inspected_arguments})
    k(plan=plan, **by_plan)
    serial(**ref)
    np.testing.assert_array_equal(by_plan["A"], ref["A"])


@pytest.mark.parametrize("name", list(SQUARE))
def test_gauss_seidel_bitwise_equals_serial(gs: Pair, omp_threads: int, name: str) -> None:
    for strategy in STRATEGIES:
        sweep_both(gs, SQUARE[name](), strategy)


@pytest.mark.parametrize("name", ["cryg2500.mtx", "jagmesh7.mtx"])
def test_gauss_seidel_suitesparse(
    gs: Pair, omp_threads: int, suitesparse_dir: Path, name: str
) -> None:
    sweep_both(gs, mtx(suitesparse_dir, name), "coarse")


@pytest.mark.parametrize("name", list(SQUARE))
def test_ilu0_bitwise_equals_serial(ilu0: Pair, omp_threads: int, name: str) -> None:
    for strategy in ("coarse", "levels"):
        factor_both(ilu0, SQUARE[name](), strategy)


@pytest.mark.parametrize("name", ["olm1000.mtx", "bcsstk13.mtx"])
def test_ilu0_suitesparse(ilu0: Pair, omp_threads: int, suitesparse_dir: Path, name: str) -> None:
    factor_both(ilu0, mtx(suitesparse_dir, name), "coarse")


# ================================================================================ the plans
def test_coarse_plan_merges_levels_into_balanced_parts(trsv32: Pair) -> None:
    """2-D Poisson in natural order: a level's rows lie a grid row apart, but blocks of rows
    run as pieces, so the coarse levels are about the grid's width (not 2 * width - 1), two
    parts each, every part's rows increasing."""
    k, _, _ = trsv32
    m = sp.csr_array(sp.tril(spf.sparse.poisson2d(300), format="csr"))
    plan = k.inspect(threads=2, **sptrsv_args(m, "int32"))
    assert plan.strategy == "coarse"
    assert plan.levels == 599
    assert 300 <= plan.coarse_levels < 360  # the grid rows, one more per block crossed
    per_level = np.diff(plan.coarse_ptr[: plan.coarse_levels + 1])
    assert per_level.max() == 2
    assert (per_level[10:-10] == 2).all()  # two parts but near the grid's corners
    ptr = plan.part_ptr[: plan.parts + 1]
    for p in range(0, plan.parts, 97):
        assert (np.diff(plan.coarse_order[ptr[p] : ptr[p + 1]]) > 0).all()
    first = plan.coarse_ptr[10 : plan.coarse_levels - 10]
    sizes = np.diff(ptr)
    assert (abs(sizes[first] - sizes[first + 1]) <= 64 + 2).all()  # balanced up to a block
    assert "coarse_levels=" in repr(plan)


def test_coarse_plan_sorts_its_levels_when_first_read(
    trsv32: Pair, others32: dict[str, WavefrontKernel]
) -> None:
    """A coarse plan's inspector skips the sort by level (the executor runs the parts); the
    level order, read later, is the levels kernel's, and survives pickle and copy."""
    k, serial, dtype = trsv32
    m = sp.csr_array(sp.tril(spf.sparse.poisson2d(40), format="csr"))
    args = sptrsv_args(m, dtype)
    plan = k.inspect(threads=2, **args)
    assert plan.strategy == "coarse"
    assert "order" not in vars(plan)  # not sorted yet
    np.testing.assert_array_equal(solve(k, m, dtype, plan), solve(serial, m, dtype))
    assert "order" not in vars(plan)  # a call runs the parts alone
    levels = others32["levels"].inspect(**args)
    for copied in (pickle.loads(pickle.dumps(plan)), plan):
        for name in ("levelptr", "order", "groupptr", "one_thread"):
            np.testing.assert_array_equal(getattr(copied, name), getattr(levels, name))
        assert copied.groups == levels.groups
    assert not plan.order.flags.writeable
    with pytest.raises(AttributeError, match="no attribute 'ordr'"):
        plan.ordr  # noqa: B018


def test_auto_picks_from_the_plan_shape(others32: dict[str, WavefrontKernel]) -> None:
    k = others32["auto"]
    poisson = sptrsv_args(sp.csr_array(sp.tril(spf.sparse.poisson2d(300), format="csr")), "int32")
    assert k.inspect(threads=2, **poisson).strategy == "coarse"
    assert k.inspect(threads=1, **poisson).strategy == "serial"  # one thread: in order
    chain = sptrsv_args(lower(2000, 0.0, 1) + sp.eye_array(2000, k=-1, format="csr"), "int32")
    assert k.inspect(threads=2, **chain).strategy == "serial"  # one level per row
    wide = sptrsv_args(lower(20000, 0.0, 2), "int32")  # one level: no dependence at all
    assert k.inspect(threads=2, **wide).strategy in ("levels", "coarse")


def test_auto_weighs_a_memory_bound_plan_by_its_measured_efficiency(
    others32: dict[str, WavefrontKernel], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loop of ``coarse.MEMORY_WORK`` units of work or more is expected to reach
    ``coarse.PARALLEL_EFFICIENCY`` of its estimate (what the idle bench measured on its 1M-row
    triangles): the random triangle of ``spf bench --only sptrsv`` (here 200,000 rows: 11
    levels, levels on copies, estimated ~1.4x with its values' hash) runs serially once
    its work counts as memory-bound; a smaller loop keeps the estimate. Same bits either way."""
    from spf.runtime import coarse

    assert coarse.expected(2.0, coarse.MEMORY_WORK) == pytest.approx(
        2.0 * coarse.PARALLEL_EFFICIENCY
    )
    assert coarse.expected(2.0, coarse.MEMORY_WORK - 1) == 2.0
    k = others32["auto"]
    n = 200_000
    strict = sp.tril(
        sp.random_array((n, n), density=2.0 / n, format="csr", rng=np.random.default_rng(4)), k=-1
    )
    m = sp.csr_array(strict + sp.eye_array(n, format="csr") * 4.0)
    m.sort_indices()
    args = sptrsv_args(m, "int32")
    cached = k.inspect(threads=2, **args)
    assert cached.strategy == "levels"
    assert cached.copies  # the values' hash counted, estimated above MIN_GAIN
    monkeypatch.setattr(coarse, "MEMORY_WORK", 1)
    # weighed by the efficiency sessions 9-15 measured (0.72; refitted to 0.87 since), the
    # estimate (~1.4x) falls under MIN_GAIN
    monkeypatch.setattr(coarse, "PARALLEL_EFFICIENCY", 0.72)
    bound = k.inspect(threads=2, **args)
    assert bound.strategy == "serial"
    assert not bound.copies
    want = solve(compiled("sptrsv_csr", index_dtype="int32"), m, "int32")
    for plan in (cached, bound):
        np.testing.assert_array_equal(solve(k, m, "int32", plan), want)


def few_levels(n: int, levels: int) -> sp.csr_array:
    """A lower triangle of ``levels`` levels, each a band of ``n / levels`` contiguous rows:
    row ``i`` depends on row ``i - n / levels``."""
    band = sp.eye_array(n, k=-(n // levels), format="csr") * 0.5
    m = sp.csr_array(band + sp.diags_array(np.full(n, 2.0)))
    m.sort_indices()
    return m


def test_auto_keeps_small_inputs_serial_and_parallelizes_large_few_level_ones(
    others32: dict[str, WavefrontKernel], omp_threads: int
) -> None:
    """The start of the parallel region and its barriers (``coarse.REGION_WORK``,
    ``BARRIER_WORK``) outweigh what two threads gain on 8,000 rows, even with few
    levels; a large triangle of 12 levels runs in parallel. Both give the serial bits."""
    k = others32["auto"]
    serial = compiled("sptrsv_csr", index_dtype="int32")
    cases = {"small": (few_levels(8000, 12), "serial"), "large": (few_levels(120000, 12), "")}
    for label, (m, want) in cases.items():
        args = sptrsv_args(m, "int32")
        plan = k.inspect(threads=2, **args)
        if want:
            assert plan.strategy == want, label
        else:
            assert plan.strategy in ("coarse", "levels"), label
            assert plan.levels == 12
        np.testing.assert_array_equal(solve(k, m, "int32", plan), solve(serial, m, "int32"))


def test_plan_stays_valid_when_values_change(trsv32: Pair) -> None:
    k, serial, dtype = trsv32
    m = lower(800, 0.01, 9)
    plan = k.inspect(**sptrsv_args(m, dtype))
    m.data[:] *= np.random.default_rng(1).uniform(0.5, 2.0, m.nnz)
    np.testing.assert_array_equal(solve(k, m, dtype, plan), solve(serial, m, dtype))


def test_plan_over_another_pattern_is_refused(trsv32: Pair) -> None:
    k, _, dtype = trsv32
    plan = k.inspect(**sptrsv_args(lower(300, 0.02, 1), dtype))
    with pytest.raises(ArgumentError, match="other index arrays"):
        solve(k, lower(300, 0.02, 2), dtype, plan)


def test_plan_of_a_levels_kernel_is_refused(
    trsv32: Pair, others32: dict[str, WavefrontKernel]
) -> None:
    k, _, dtype = trsv32
    m = lower(300, 0.02, 1)
    plan = others32["levels"].inspect(**sptrsv_args(m, dtype))
    with pytest.raises(ArgumentError, match="inspector of another computation"):
        solve(k, m, dtype, plan)
    coarse_plan = k.inspect(**sptrsv_args(m, dtype))
    with pytest.raises(ArgumentError, match="inspector of another computation"):
        solve(others32["levels"], m, dtype, coarse_plan)


def test_forged_plan_with_racing_parts_is_refused(trsv32: Pair) -> None:
    """Two consecutive levels glued into one coarse level (each part's rows still
    increasing, so the structural checks pass): the first call checks the parts against
    the dependences and refuses the plan; the honest plan rebuilt from arrays passes."""
    k, serial, dtype = trsv32
    m = sp.csr_array(sp.tril(spf.sparse.poisson2d(20), format="csr"))
    plan = k.inspect(strategy="levels", threads=1, **sptrsv_args(m, dtype))
    assert plan.parts == plan.coarse_levels == plan.levels  # one part per level
    ptr = plan.coarse_ptr.copy()
    ptr[1 : plan.levels] = ptr[2 : plan.levels + 1]  # levels 0 and 1: two parts of one level
    ptr[plan.levels :] = plan.parts
    forged = dataclasses.replace(plan, coarse_levels=plan.levels - 1, coarse_ptr=ptr)
    with pytest.raises(ArgumentError, match="race"):
        solve(k, m, dtype, forged)
    rebuilt = pickle.loads(pickle.dumps(plan))  # a plan built from arrays: checked, runs
    np.testing.assert_array_equal(solve(k, m, dtype, rebuilt), solve(serial, m, dtype))


def test_a_plan_for_too_many_threads_names_the_threads(trsv32: Pair) -> None:
    """The parts of every level for each thread do not fit in memory: the error said to check
    the parameters against the index arrays, which were right, and named no threads."""
    k, _, dtype = trsv32
    args = sptrsv_args(lower(200, 0.02, 3), dtype)
    with pytest.raises(ArgumentError, match=r"cut for threads=1099511627776 .* do not fit"):
        k.inspect(threads=2**40, strategy="levels", **args)


def test_forged_plan_arrays_are_refused(trsv32: Pair) -> None:
    k, _, dtype = trsv32
    plan = k.inspect(threads=2, **sptrsv_args(lower(200, 0.02, 3), dtype))
    backwards = plan.coarse_order.copy()
    start, end = plan.part_ptr[0], plan.part_ptr[1]
    backwards[start:end] = backwards[start:end][::-1]
    with pytest.raises(ArgumentError, match="increasing order"):
        dataclasses.replace(plan, coarse_order=backwards)
    twice = plan.coarse_order.copy()
    twice[0] = twice[1]
    with pytest.raises(ArgumentError, match="not a permutation"):
        dataclasses.replace(plan, coarse_order=twice)
    with pytest.raises(ArgumentError, match="coarse_levels"):
        dataclasses.replace(plan, coarse_levels=0)
    with pytest.raises(ArgumentError, match="strategy must be one of"):
        k.inspect(strategy="fast", **sptrsv_args(lower(20, 0.1, 3), dtype))
    forced = k.inspect(strategy="wavefront", threads=1, **sptrsv_args(lower(20, 0.1, 3), dtype))
    assert forced.strategy in ("coarse", "levels")  # the executor, even on one thread
    with pytest.raises(ArgumentError, match="threads must be"):
        k.inspect(threads=0, **sptrsv_args(lower(20, 0.1, 3), dtype))


def test_plan_pointers_are_sized_by_levels_and_parts(trsv32: Pair, omp_threads: int) -> None:
    """The inspector's pointers hold what the executor reads (``coarse_levels + 1``,
    ``parts + 1``, ``levels + 1``, ``groups + 1`` entries); a plan built from pointers padded
    to the rows (the layout of before) runs with the same bits, one whose pointers are
    shorter than its levels or parts is refused naming the array."""
    k, serial, dtype = trsv32
    m = sp.csr_array(sp.tril(spf.sparse.poisson2d(40), format="csr"))
    want = solve(serial, m, dtype)
    for strategy in ("coarse", "levels"):
        plan = k.inspect(strategy=strategy, threads=2, **sptrsv_args(m, dtype))
        n = len(plan.order)
        assert len(plan.coarse_ptr) == plan.coarse_levels + 1
        assert len(plan.part_ptr) == plan.parts + 1
        assert len(plan.levelptr) == plan.levels + 1
        assert len(plan.groupptr) == plan.groups + 1
        assert len(plan.one_thread) == plan.groups
        np.testing.assert_array_equal(solve(k, m, dtype, plan), want)
        cptr, pptr = np.full(n + 1, plan.parts), np.full(n + 1, n)
        cptr[: plan.coarse_levels + 1] = plan.coarse_ptr
        pptr[: plan.parts + 1] = plan.part_ptr
        padded = dataclasses.replace(plan, coarse_ptr=cptr, part_ptr=pptr)
        np.testing.assert_array_equal(solve(k, m, dtype, padded), want)
        with pytest.raises(ArgumentError, match=r"part_ptr has .* fewer than"):
            dataclasses.replace(plan, part_ptr=plan.part_ptr[:-1])
        with pytest.raises(ArgumentError, match=r"coarse_ptr has .* fewer than"):
            dataclasses.replace(plan, coarse_ptr=plan.coarse_ptr[:-1])
        with pytest.raises(ArgumentError, match=r"levelptr has .* fewer than"):
            dataclasses.replace(plan, levelptr=plan.levelptr[:-1])


def test_auto_plans_levels_alone_when_blocks_merge_none(
    others32: dict[str, WavefrontKernel], omp_threads: int
) -> None:
    """A triangle whose dependences span more than a block (row ``i`` reads row
    ``i - 10000``) has as many coarse levels as levels: ``auto`` plans the levels, sorted by
    the coarse inspector's sort stages, in the same order as the levels kernel's plan, and
    the solve gives the serial bits."""
    m = few_levels(120000, 12)
    args = sptrsv_args(m, "int32")
    plan = others32["auto"].inspect(threads=2, **args)
    assert plan.strategy == "levels"
    want = others32["levels"].inspect(strategy="wavefront", **args)
    for name in ("level_of", "levelptr", "order"):
        np.testing.assert_array_equal(getattr(plan, name), getattr(want, name))
    serial = compiled("sptrsv_csr", index_dtype="int32")
    np.testing.assert_array_equal(
        solve(others32["auto"], m, "int32", plan), solve(serial, m, "int32")
    )


def test_plan_call_refuses_index_arrays_edited_in_place_after_a_call(trsv32: Pair) -> None:
    """A call checks the index arrays' contents every time (``check=True``), even the same
    array objects as the call before: one edited in place is refused."""
    k, _, dtype = trsv32
    m = lower(300, 0.05, 4)
    args = sptrsv_args(m, dtype)
    plan = k.inspect(**args)
    u, f = np.zeros(300), np.ones(300)
    k(u=u, f=f, plan=plan, **args)
    col, rowptr = args["col"], args["rowptr"]
    rows = np.flatnonzero(np.diff(rowptr) > 1)  # rows with an entry left of the diagonal
    at = int(rowptr[int(rows[rows >= 2][0])])
    col[at] = 0 if col[at] else 1  # still left of the diagonal
    with pytest.raises(ArgumentError, match="'col' differs"):
        k(u=u, f=f, plan=plan, **args)
    k(u=u, f=f, plan=plan, check=False, **args)  # unchecked: sizes and dtypes only


def test_an_unchecked_inspection_records_the_checksums_a_checked_call_takes(
    trsv: Pair,
) -> None:
    """``inspect(check=False)`` hashes the index arrays and the level seal on a worker thread
    beside its generated stages (:func:`spf.runtime.checksum.prefetch`): its plan carries
    the same fingerprint and seal as a checked inspection, a checked call runs it, and a
    call over another pattern is refused."""
    k, serial, dtype = trsv
    n = 40_001  # index arrays over PREFETCH_BYTES: hashed on the worker
    m = lower(n, 16.0 / n, 5)
    args = sptrsv_args(m, dtype)
    assert args["col"].nbytes + args["rowptr"].nbytes >= checksum.PREFETCH_BYTES
    plan = k.inspect(check=False, threads=2, **args)
    assert plan.inspected == k.inspect(threads=2, **args).inspected
    u, want, f = np.zeros(n), np.zeros(n), np.ones(n)
    k(u=u, f=f, plan=plan, **args)
    serial(u=want, f=f, **args)
    np.testing.assert_array_equal(u, want)
    other = sptrsv_args(lower(n, 16.0 / n, 6), dtype)
    with pytest.raises(ArgumentError, match="differs"):
        k(u=u, f=f, plan=plan, **other)

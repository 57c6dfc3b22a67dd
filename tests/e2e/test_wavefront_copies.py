"""Coarse plans on part-ordered copies (API.md section 18, docs/inspection.md "Part-ordered
copies"): ``inspect(copies=...)`` on SpTRSV (``method="auto"``) runs bitwise equal to the
serial kernel at 1 and 2 OpenMP threads, coarse and levels strategies, int32 and int64
indices, random, Poisson and SuiteSparse triangles; a plan with copies stays valid when the
values change (a new array or the same one edited in place) and is refused over another
pattern; loops whose rows have no segments to copy refuse ``copies=True``."""

from __future__ import annotations

import functools
import pickle
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError, kernels
from spf.analysis.executor import build_executor
from spf.analysis.local_copies import plan_copies
from spf.codegen.prefetch import MIN_ELEMENTS
from spf.runtime import threads
from spf.runtime.kernel import Kernel
from spf.runtime.plan import Plan, WavefrontKernel
from spf.sparse import gauss_seidel_args, read_matrix_market, sptrsv_args
from spf.testing import compiled
from spf.testing import random_lower as lower

if TYPE_CHECKING:
    from pathlib import Path

Pair = tuple[WavefrontKernel, Kernel, str]


@pytest.fixture(scope="module", params=["int32", "int64"])
def trsv(request: pytest.FixtureRequest) -> Pair:
    dtype = str(request.param)
    comp = kernels.sptrsv_csr(index_dtype=dtype)
    comp.wavefront("i", method="auto")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k, compiled("sptrsv_csr", index_dtype=dtype), dtype


@pytest.fixture(params=[1, 2])
def omp_threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run at exactly ``n`` OpenMP threads (spf's busy-machine cap turned off)."""
    adaptive = threads.set_adaptive(False)
    try:
        with threads.openmp_threads(int(request.param)):
            yield int(request.param)
    finally:
        threads.set_adaptive(adaptive)


@pytest.fixture
def two_threads() -> Iterator[None]:
    adaptive = threads.set_adaptive(False)
    try:
        with threads.openmp_threads(2):
            yield
    finally:
        threads.set_adaptive(adaptive)


MATRICES = {
    "empty": lambda: sp.csr_array((0, 0)),
    "one row": lambda: lower(1, 0.0, 0),
    "odd 501": lambda: lower(501, 0.01, 3),
    "random 3000": lambda: lower(3000, 0.002, 4),
    "poisson 60": lambda: sp.csr_array(sp.tril(spf.sparse.poisson2d(60), format="csr")),
}


def solve(k: Kernel, m: sp.csr_array, dtype: str, plan: Plan | None = None) -> np.ndarray:
    n = m.shape[0]
    u = np.zeros(n)
    extra = {} if plan is None else {"plan": plan}
    k(u=u, f=np.random.default_rng(n).uniform(-1.0, 1.0, n), **sptrsv_args(m, dtype), **extra)
    return u


@pytest.mark.parametrize("name", list(MATRICES))
def test_copies_bitwise_equal_serial(trsv: Pair, omp_threads: int, name: str) -> None:
    k, serial, dtype = trsv
    m = MATRICES[name]()
    want = solve(serial, m, dtype)
    for strategy in ("coarse", "levels"):
        plan = k.inspect(strategy=strategy, threads=2, copies=True, **sptrsv_args(m, dtype))
        assert plan.copies == ("rowptr", "col", "L")
        np.testing.assert_array_equal(solve(k, m, dtype, plan), want, err_msg=strategy)
        again = solve(k, m, dtype, plan)  # the copies kept with the plan
        np.testing.assert_array_equal(again, want, err_msg=strategy)


@functools.cache
def _past_prefetch_size() -> sp.csr_array:
    n = MIN_ELEMENTS + 4099  # odd: the last part of a level is short
    return lower(n, 2.0 / n, 11)


def test_copies_of_a_triangle_past_the_prefetch_size_stay_bitwise_serial(
    trsv: Pair, omp_threads: int
) -> None:
    """Vectors of at least ``MIN_ELEMENTS`` take the executor's prefetches of the rows ahead
    (:mod:`spf.codegen.prefetch`): a hint, the same bits (unchecked and checked calls, both
    strategies, parts shorter and longer than the distance ahead)."""
    k, serial, dtype = trsv
    m = _past_prefetch_size()
    n = m.shape[0]
    want = solve(serial, m, dtype)
    args = sptrsv_args(m, dtype)
    f = np.random.default_rng(n).uniform(-1.0, 1.0, n)
    for strategy in ("coarse", "levels"):
        plan = k.inspect(strategy=strategy, threads=2, copies=True, **args)
        assert plan.copies == ("rowptr", "col", "L")
        np.testing.assert_array_equal(solve(k, m, dtype, plan), want, err_msg=strategy)
        u = np.zeros(n)
        k(u=u, f=f, plan=plan, check=False, **args)
        np.testing.assert_array_equal(u, want, err_msg=strategy)


@pytest.mark.parametrize("name", ["bcsstk13.mtx", "jagmesh7.mtx"])
def test_copies_suitesparse(trsv: Pair, omp_threads: int, suitesparse_dir: Path, name: str) -> None:
    if not (suitesparse_dir / name).is_file():
        pytest.skip(f"{suitesparse_dir / name} not found")
    m = sp.csr_array(read_matrix_market(suitesparse_dir / name)).astype(np.float64)
    m.sum_duplicates()
    a = sp.tril(sp.csr_array((np.where(m.data == 0, 1.0, m.data), m.indices, m.indptr)), k=-1)
    m = sp.csr_array(a + sp.diags_array(np.asarray(abs(a).sum(axis=1)).ravel() + 1.0))
    m.sort_indices()
    k, serial, dtype = trsv
    want = solve(serial, m, dtype)
    for strategy in ("coarse", "levels"):
        plan = k.inspect(strategy=strategy, threads=2, copies=True, **sptrsv_args(m, dtype))
        np.testing.assert_array_equal(solve(k, m, dtype, plan), want, err_msg=strategy)


def test_values_changed_with_the_same_pattern_reuse_the_plan(trsv: Pair, two_threads: None) -> None:
    k, serial, dtype = trsv
    m = lower(2000, 0.003, 7)
    args = sptrsv_args(m, dtype)
    plan = k.inspect(strategy="coarse", threads=2, copies=True, **args)
    np.testing.assert_array_equal(solve(k, m, dtype, plan), solve(serial, m, dtype))
    rng = np.random.default_rng(3)
    m.data[:] *= rng.uniform(0.5, 2.0, m.nnz)  # the same array, edited in place
    np.testing.assert_array_equal(solve(k, m, dtype, plan), solve(serial, m, dtype))
    other = sp.csr_array((m.data * 3.0, m.indices, m.indptr), shape=m.shape)  # a new array
    np.testing.assert_array_equal(solve(k, other, dtype, plan), solve(serial, other, dtype))
    u = np.zeros(2000)
    f = np.ones(2000)
    k(u=u, f=f, plan=plan, check=False, **sptrsv_args(other, dtype))  # unchecked calls too
    want = np.zeros(2000)
    serial(u=want, f=f, **sptrsv_args(other, dtype))
    np.testing.assert_array_equal(u, want)


def test_changed_pattern_with_copies_is_refused(trsv: Pair, two_threads: None) -> None:
    k, _, dtype = trsv
    plan = k.inspect(strategy="coarse", copies=True, **sptrsv_args(lower(300, 0.02, 1), dtype))
    with pytest.raises(ArgumentError, match="other index arrays"):
        solve(k, lower(300, 0.02, 2), dtype, plan)


def test_an_unchecked_call_on_other_arrays_leaves_no_copies_behind(
    trsv: Pair, two_threads: None
) -> None:
    """Copies built by an unchecked call on another pattern of the plan's sizes (a wrong
    result, as any unchecked call of a plan over other arrays) are not kept for the plan:
    the next unchecked call on the plan's own arrays reads copies of those, not the stale
    ones (it gave a wrong result until a checked call rebuilt them)."""
    k, serial, dtype = trsv
    m = lower(2000, 0.004, 8)
    args = sptrsv_args(m, dtype)
    other = dict(args, col=args["col"].copy())
    starts, ends = args["rowptr"][:-1], args["rowptr"][1:]
    first = starts[(ends - starts >= 2) & (args["col"][starts] > 0)]
    assert len(first) > 100
    other["col"][first] -= 1  # a row's first column one to the left: another pattern
    f = np.ones(2000)
    want = np.zeros(2000)
    serial(u=want, f=f, **args)
    for strategy in ("coarse", "levels"):
        plan = k.inspect(strategy=strategy, threads=2, copies=True, **args)
        k(u=np.zeros(2000), f=f, plan=plan, check=False, **other)  # the careless call
        u = np.zeros(2000)
        k(u=u, f=f, plan=plan, check=False, **args)
        np.testing.assert_array_equal(u, want, err_msg=strategy)


def test_plan_says_whether_it_copies(trsv: Pair) -> None:
    k, _, dtype = trsv
    args = sptrsv_args(lower(3000, 0.002, 4), dtype)
    plain = k.inspect(strategy="levels", copies=False, **args)
    assert plain.copies == ()
    assert "copies" not in repr(plain)
    assert k.inspect(strategy="levels", **args).copies == ()  # None: small, stays in cache
    big = sptrsv_args(lower(100_000, 4e-5, 4), dtype)  # scattered rows, 400k entries
    auto = k.inspect(strategy="levels", **big)  # None: copies where they pay
    assert auto.copies == ("rowptr", "col", "L")
    assert "part-ordered copies of rowptr, col, L" in repr(auto)
    assert k.inspect(strategy="serial", **args).copies == ()  # nothing runs by parts
    with pytest.raises(ArgumentError, match="copies must be"):
        k.inspect(copies="yes", **args)


def test_plan_with_copies_survives_pickle(trsv: Pair, two_threads: None) -> None:
    k, serial, dtype = trsv
    m = lower(900, 0.01, 5)
    plan = k.inspect(strategy="coarse", copies=True, **sptrsv_args(m, dtype))
    solve(k, m, dtype, plan)
    back = pickle.loads(pickle.dumps(plan))
    assert back.copies == plan.copies
    np.testing.assert_array_equal(solve(k, m, dtype, back), solve(serial, m, dtype))


def test_copies_refused_where_rows_cannot_be_copied() -> None:
    gs = kernels.gauss_seidel_csr()  # reads its diagonal at diag(i): no segment to copy
    gs.wavefront("i", method="auto")
    k = gs.compile()
    assert isinstance(k, WavefrontKernel)
    m = sp.csr_array(spf.sparse.poisson2d(20))
    args = gauss_seidel_args(m)
    with pytest.raises(ArgumentError, match="cannot run on copies"):
        k.inspect(strategy="coarse", copies=True, **args)
    assert k.inspect(strategy="coarse", **args).copies == ()
    by_levels = kernels.sptrsv_csr()
    by_levels.wavefront("i", method="levels")
    lk = by_levels.compile()
    assert isinstance(lk, WavefrontKernel)
    with pytest.raises(ArgumentError, match="needs a coarse executor"):
        lk.inspect(copies=True, **sptrsv_args(lower(50, 0.05, 1), "int32"))


def test_copy_executor_reads_the_copies_in_position_order() -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i", method="auto")
    executor = build_executor(comp.ir)
    ((analysis, names),) = executor.loops
    found = plan_copies(comp.ir, executor.ir, "i", analysis.groups, names, analysis.nodes)
    assert found is not None
    spec, ir = found
    assert spec.names == ("rowptr", "col", "L")
    assert spec.copies == ("rowptr_part", "col_part", "L_part")
    assert spec.segments[0].need == 1  # k = rowptr(i + 1) - 1: the diagonal
    code = spf.Computation.from_ir(ir).codegen()
    for read in ("rowptr_part(1 + i_pos)", "L_part(k)", "col_part(k)"):
        assert read in code


def test_values_that_do_not_match_the_pattern_are_refused(trsv: Pair, two_threads: None) -> None:
    k, _, dtype = trsv
    m = lower(400, 0.02, 6)
    args = sptrsv_args(m, dtype)
    plan = k.inspect(strategy="coarse", copies=True, **args)
    with pytest.raises(ArgumentError, match="reach past the end of 'L'"):
        k(u=np.zeros(400), f=np.ones(400), plan=plan, **dict(args, L=args["L"][:10]))


def test_copies_read_32_bit_plan_arrays_where_they_fit(
    trsv: Pair, two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executor of copies reads ``order``, the level and part pointers and the pointer
    copy in 32 bits when the plan's positions and entries fit, in 64 bits otherwise (the
    limit lowered here), with the same bits either way."""
    from spf.runtime import copies
    from spf.runtime import plan as plan_module

    k, serial, dtype = trsv
    m = lower(3000, 0.002, 9)
    args = sptrsv_args(m, dtype)
    want = solve(serial, m, dtype)
    narrow = k.inspect(strategy="levels", threads=2, copies=True, **args)
    np.testing.assert_array_equal(solve(k, m, dtype, narrow), want)
    made = plan_module._COPIES[narrow]
    assert made.narrow
    assert all(made.arrays[a].dtype == np.int32 for a in ("order_i", "partptr_i", "rowptr_part"))
    monkeypatch.setattr(copies, "NARROW_LIMIT", 1000)  # 3000 positions: too many for "32 bits"
    wide = k.inspect(strategy="levels", threads=2, copies=True, **args)
    np.testing.assert_array_equal(solve(k, m, dtype, wide), want)
    made = plan_module._COPIES[wide]
    assert not made.narrow
    assert all(made.arrays[a].dtype == np.int64 for a in ("order_i", "partptr_i", "rowptr_part"))
    assert set(k._copy_kernels) == {True, False}


def test_copy_executor_declares_the_plan_arrays_in_the_index_width() -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i", method="auto")
    executor = build_executor(comp.ir)
    ((analysis, names),) = executor.loops
    where = (comp.ir, executor.ir, "i", analysis.groups, names, analysis.nodes)
    for dtype in ("int32", "int64"):
        found = plan_copies(*where, index_dtype=dtype)
        assert found is not None
        code = spf.Computation.from_ir(found[1]).codegen()
        for array in ("levelptr_i", "order_i", "partptr_i", "rowptr_part"):
            assert f"const {dtype}_t *restrict {array}" in code


def test_auto_counts_the_values_hash_of_a_plan_on_copies(trsv: Pair) -> None:
    """``inspect(strategy="auto")`` counts what each call on copies pays to hash the values
    (``spf.runtime.copies.hash_work``): a plan estimated just above ``MIN_GAIN`` without
    it runs serially, a plan well above keeps its strategy and copies."""
    from spf.runtime import coarse, copies

    k, _, dtype = trsv
    m = lower(4000, 0.002, 5)
    args = sptrsv_args(m, dtype)
    n, entries = m.shape[0], m.nnz
    spec = k._copy_spec
    assert spec is not None
    assert copies.hash_work(spec, args, n) == copies.HASH_WORK * entries
    names = spec.names
    work = 3 * entries
    hashed = copies.HASH_WORK * entries
    just_above = coarse.MIN_GAIN * 1.01
    # without the hash the plan gains just_above; with it, less than MIN_GAIN
    assert work / (work / just_above + hashed) < coarse.MIN_GAIN
    assert k._with_hash(True, "levels", just_above, work, names, args, n) == ("serial", ())
    assert k._with_hash(True, "levels", 4.0, work, names, args, n) == ("levels", names)
    assert k._with_hash(False, "levels", just_above, work, names, args, n) == ("levels", names)
    assert k._with_hash(True, "coarse", just_above, work, (), args, n) == ("coarse", ())


def test_copy_executor_keeps_the_kernels_facts_about_rows(two_threads: None) -> None:
    """The kernel's facts about a row's entries hold of their copies (spf.kernels.DIAGONAL_LAST
    read at positions): the executor of copies reads ``u(col_part(k))`` without a compare
    against the row per entry, as the kernel read in place does, and a checked call verifies
    the copied facts on the copies."""
    comp = kernels.sptrsv_csr()
    comp.wavefront("i", method="auto")
    executor = build_executor(comp.ir)
    ((analysis, names),) = executor.loops
    found = plan_copies(comp.ir, executor.ir, "i", analysis.groups, names, analysis.nodes)
    assert found is not None
    ir = found[1]
    moved = "forall i, k: rowptr_part(i) <= k < rowptr_part(i+1) - 1 => col_part(k) < order_i(i)"
    assert moved in ir.assumptions
    code = spf.Computation.from_ir(ir).codegen()
    body = code[: code.index("\n}\n")]
    assert "spf_row -= L_part(k) * u(col_part_k);" in body
    assert "__builtin_expect(col_part_k" not in body
    k = comp.compile()
    m = lower(3000, 0.004, 9)
    args = sptrsv_args(m)
    f = np.random.default_rng(1).uniform(-1.0, 1.0, 3000)
    want = np.zeros(3000)
    compiled("sptrsv_csr")(u=want, f=f, **args)
    plan = k.inspect(strategy="levels", threads=2, copies=True, **args)
    assert plan.copies
    for check in (True, False):
        u = np.zeros(3000)
        k(u=u, f=f, plan=plan, check=check, **args)
        assert np.array_equal(u, want)


def test_copies_an_unchecked_call_built_are_rebuilt_by_a_checked_call(
    trsv: Pair, two_threads: None
) -> None:
    """The part-ordered copies are built by a plan's first call; when that call is
    unchecked on another pattern (a user error: unchecked calls are trusted), the next
    ``check=True`` call, whose arrays match the plan's fingerprint, builds them again from
    its own arrays instead of running on the other pattern's columns."""
    k, serial, dtype = trsv
    n = 1500
    a = sptrsv_args(lower(n, 0.004, 4), dtype)
    b = {key: (v.copy() if isinstance(v, np.ndarray) else v) for key, v in a.items()}
    rp = b["rowptr"]
    for i in range(n):  # the same row pointers, other (valid, sorted) columns
        s, e = int(rp[i]), int(rp[i + 1])
        b["col"][s : e - 1] = np.arange(e - 1 - s)
    assert not np.array_equal(a["col"], b["col"])
    f = np.random.default_rng(0).uniform(-1, 1, n)
    want = np.zeros(n)
    serial(u=want, f=f, **a)
    plan = k.inspect(strategy="coarse", threads=2, copies=True, **a)
    assert plan.copies
    k(u=np.zeros(n), f=f, plan=plan, check=False, **b)
    u = np.zeros(n)
    k(u=u, f=f, plan=plan, **a)
    assert np.array_equal(u, want)


def test_a_hand_built_plan_checked_on_an_unchecked_call_is_checked_again_when_checked(
    trsv: Pair, two_threads: None
) -> None:
    """A coarse plan the inspector did not build is checked against the dependences of the
    call's arrays; an unchecked call's arrays (another pattern, not compared with the
    plan's fingerprint) do not vouch for later checked calls: the race over the plan's own
    pattern is still refused."""
    import dataclasses

    k, _, dtype = trsv
    n, h = 400, 200

    def csr(offdiag: dict[int, list[int]]) -> tuple[np.ndarray, np.ndarray]:
        rowptr = np.zeros(n + 1, dtype=dtype)
        cols: list[int] = []
        for i in range(n):
            cols += [*offdiag.get(i, []), i]
            rowptr[i + 1] = len(cols)
        return rowptr, np.array(cols, dtype=dtype)

    rp_a, col_a = csr({i: [n - 1 - i] for i in range(h, n)})  # second half reads the first
    rp_b, col_b = csr({**{i: [i - 1] for i in range(1, h)}, h + 1: [h]})  # none across
    nnz = len(col_a)
    assert len(col_b) == nnz
    values = np.full(nnz, 0.5)
    values[rp_a[1:] - 1] = 2.0
    values_b = np.full(nnz, 0.5)
    values_b[rp_b[1:] - 1] = 2.0
    a = {"rowptr": rp_a, "col": col_a, "L": values, "N": n, "NNZ": nnz}
    b = {"rowptr": rp_b, "col": col_b, "L": values_b, "N": n, "NNZ": nnz}
    f = np.ones(n)
    plan = k.inspect(strategy="coarse", threads=2, **a)
    racy = dataclasses.replace(
        plan,
        coarse_levels=1,
        coarse_ptr=np.array([0, 2]),
        part_ptr=np.array([0, h, n]),
        coarse_order=np.arange(n),
    )
    k(u=np.zeros(n), f=f, plan=racy, check=False, **b)  # no dependence across halves in b
    with pytest.raises(ArgumentError, match="a race"):
        k(u=np.zeros(n), f=f, plan=racy, **a)


def test_a_plan_call_takes_sizes_from_the_arrays_shapes_as_a_plain_call_does(trsv: Pair) -> None:
    """``N`` and ``NNZ`` left out of a call with ``plan=`` are taken from the arrays' shapes,
    as a call without a plan takes them (it said "'N' differs from the 'N' the plan
    inspected"); sizes the shapes contradict are still refused."""
    k, serial, dtype = trsv
    n = 500
    a = sptrsv_args(lower(n, 0.01, 1), dtype)
    plan = k.inspect(**a)
    sizes_left_out = {key: v for key, v in a.items() if key not in ("N", "NNZ")}
    f = np.ones(n)
    u, want = np.zeros(n), np.zeros(n)
    serial(u=want, f=f, **a)
    k(u=u, f=f, plan=plan, **sizes_left_out)
    assert np.array_equal(u, want)
    short = {**sizes_left_out, "rowptr": a["rowptr"][:-1].copy()}
    with pytest.raises(ArgumentError):
        k(u=np.zeros(n - 1), f=f[:-1], plan=plan, **short)

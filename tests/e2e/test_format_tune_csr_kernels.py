"""spf.formats.tune's CSR kernel variants (spf.formats.tune_kernels): rows in parts of equal
entries run in parallel (CSRP), the inner loop vectorised by gathers (CSRV), both (CSRPV).
Each is legal by spf's check, equals scipy on random, power-law, empty-row, one-row and
odd-sized matrices with int32 and int64 indices, and replays from its record."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.sparse
from spf.bench.tune import power_law
from spf.computation import Computation, Stmt
from spf.errors import IllegalScheduleError
from spf.formats.tune_kernels import GATHER_CFLAGS, parts_args, row_parts, spmv_csr_parts

if TYPE_CHECKING:
    from pathlib import Path

VARIANTS = {
    "CSRV": [()],
    "CSRP": [(1,), (3,)],
    "CSRPV": [(1,)],
    "schedules": ["serial", "parallel"],
}
ROOMY = 120.0  # room to compile every candidate on a cold build cache and a busy machine


def _with_holes(n: int, m: int, seed: int) -> sp.csr_array:
    """A random matrix with empty rows at the start, the middle and the end."""
    a = sp.random_array((n, m), density=0.15, rng=np.random.default_rng(seed), format="csr")
    keep = np.ones(n)
    keep[[0, n // 2, n - 1]] = 0.0
    return sp.csr_array(sp.diags_array(keep) @ a)


def _as(m: Any, index_dtype: str) -> Any:
    m = sp.csr_array(m)
    m.indices, m.indptr = m.indices.astype(index_dtype), m.indptr.astype(index_dtype)
    return m


@pytest.mark.parametrize("parts", [1, 2, 3, 7, 64, 500])
def test_row_parts_cut_the_entries_evenly(parts: int) -> None:
    rowptr = power_law(300, seed=4).indptr
    bounds = row_parts(rowptr, parts)
    assert bounds.shape == (parts + 1,)
    assert bounds[0] == 0
    assert bounds[-1] == 300
    assert np.all(np.diff(bounds) >= 0)
    per_part = np.diff(rowptr[bounds])
    assert per_part.sum() == rowptr[-1]
    longest_row = int(np.diff(rowptr).max())
    assert per_part.max() <= -(-rowptr[-1] // parts) + longest_row


def test_row_parts_of_empty_rows_and_an_empty_matrix() -> None:
    assert row_parts(np.zeros(5, dtype=np.int32), 3).tolist() == [0, 0, 0, 4]
    assert row_parts(np.array([0, 0, 3, 3]), 2).tolist() == [0, 2, 3]  # the long row: part 0


def test_parts_are_parallel_because_part_is_nondecreasing() -> None:
    comp = spmv_csr_parts("int32")
    comp.stmt("spmv").parallelize("p")
    comp.check_legality()  # two parts never share a row: part is declared nondecreasing
    unordered = Computation("spmv_unordered_parts")
    for name, extent in (("y", "N"), ("A", "NNZ"), ("x", "M")):
        unordered.add_data_space(name, "double", shape=(extent,))
    unordered.declare_uf("part", domain="{[t]: 0 <= t <= NP}", range="{[v]: 0 <= v <= N}")
    unordered.declare_uf("rowptr", domain="{[t]: 0 <= t <= N}", range="{[v]: 0 <= v <= NNZ}",
                         monotonic="nondecreasing")  # fmt: skip
    unordered.declare_uf("col", domain="{[t]: 0 <= t < NNZ}", range="{[v]: 0 <= v < M}")
    unordered.add_stmt(Stmt(
        "$y$(i) += $A$(k) * $x$(col(k));",
        "{[p, i, k]: 0 <= p < NP && part(p) <= i < part(p+1) && rowptr(i) <= k < rowptr(i+1)}",
        "{[p, i, k] -> [0, p, 0, i, 0, k, 0]}",
        name="spmv",
    ))  # fmt: skip
    unordered.stmt("spmv").parallelize("p")
    with pytest.raises(IllegalScheduleError):
        unordered.check_legality()  # parts in any order may overlap: refused


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_parts_kernel_equals_scipy_for_any_part_count(index_dtype: str) -> None:
    comp = spmv_csr_parts(index_dtype)
    comp.stmt("spmv").parallelize("p")
    kernel = comp.compile()
    x_rng = np.random.default_rng(8)
    for m in (_with_holes(61, 47, 1), power_law(400, seed=2), sp.csr_array(np.ones((1, 9)))):
        m = _as(m, index_dtype)
        args = spf.sparse.csr_args(m, index_dtype)
        x = x_rng.standard_normal(m.shape[1])
        for parts in (1, 2, 5, m.shape[0] + 3):
            y = np.zeros(m.shape[0])
            kernel(y=y, x=x, **parts_args(args, parts))
            np.testing.assert_allclose(y, m @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_every_variant_is_measured_and_the_choice_equals_scipy(
    tmp_path: Path, index_dtype: str
) -> None:
    x_rng = np.random.default_rng(9)
    for m in (power_law(500, seed=3), _with_holes(77, 53, 5)):
        m = _as(m, index_dtype)
        fres = spf.formats.tune(m, budget=ROOMY, space=VARIANTS, seed=0, threads=2,
                                record_dir=tmp_path)  # fmt: skip
        status = {h["candidate"]: h["status"] for h in fres.history}
        measured = {"CSRV serial", "CSRV parallel", "CSRP(1) parallel", "CSRP(3) parallel",
                    "CSRPV(1) parallel"}  # fmt: skip
        assert {c: status[c] in ("measured", "chosen") for c in measured} == dict.fromkeys(
            measured, True
        )
        assert status["CSRP(1) serial"] == "pruned"  # serial, it is CSR's kernel
        assert fres.format.name == "CSR"
        assert fres.candidate in measured
        assert fres.index_dtype == index_dtype
        x = x_rng.standard_normal(m.shape[1])
        np.testing.assert_allclose(fres(x), m @ x, rtol=1e-12, atol=1e-12)


def test_a_recorded_parts_choice_replays_with_its_parts(tmp_path: Path) -> None:
    m = power_law(300, seed=6)
    space = {"CSRP": [(2,)], "schedules": ["parallel"]}
    first = spf.formats.tune(m, budget=ROOMY, space=space, threads=2, record_dir=tmp_path)
    again = spf.formats.tune(m * 3.0, budget=ROOMY, space=space, threads=2, record_dir=tmp_path)
    assert again.reused
    assert again.candidate == first.candidate == "CSRP(2) parallel"
    assert again.args["NP"] == 4
    assert again.args["part"].tolist() == first.args["part"].tolist()
    x = np.random.default_rng(1).standard_normal(300)
    np.testing.assert_allclose(again(x), 3.0 * (m @ x), rtol=1e-12, atol=1e-12)


def test_the_gather_kernel_is_built_with_reassociation(tmp_path: Path) -> None:
    m = _with_holes(30, 30, 2)
    fres = spf.formats.tune(m, budget=ROOMY, space={"CSRV": [()], "schedules": ["serial"]},
                            threads=1, record_dir=tmp_path)  # fmt: skip
    assert fres.candidate == "CSRV serial"
    assert "-fassociative-math" in GATHER_CFLAGS
    assert all(flag in fres.kernel.command for flag in GATHER_CFLAGS)


def test_a_refined_gather_kernel_keeps_its_flags(tmp_path: Path) -> None:
    import functools

    import spf.tuning

    m = power_law(400, seed=8)
    unrolls = {k: [] for k in spf.tuning.default_space()} | {"unroll": [2], "threads": [1]}
    refine = functools.partial(spf.tuning.tune_schedule, space=unrolls, max_trials=1)
    space = {"CSRV": [()], "schedules": ["serial"]}
    for _ in range(2):  # searched, then replayed from the record
        fres = spf.formats.tune(m, budget=ROOMY, space=space, threads=1, refine=refine,
                                record_dir=tmp_path)  # fmt: skip
        assert fres.candidate == "CSRV serial"
        assert all(flag in fres.kernel.command for flag in GATHER_CFLAGS)
        x = np.random.default_rng(2).standard_normal(400)
        np.testing.assert_allclose(fres(x), m @ x, rtol=1e-12, atol=1e-12)
    assert fres.reused
    # a recorded refinement of a gather kernel is rebuilt with the gathers' flags
    from spf.formats.tune_refine import replay_refined
    from spf.formats.tune_space import Candidate

    comp = Candidate("CSRV", (), "serial").computation("int32")
    unrolled = Candidate("CSRV", (), "serial").computation("int32")
    unrolled.stmt("spmv").unroll("k", 2)
    _, kernel = replay_refined(comp, unrolled.trace.to_data(), tmp_path, GATHER_CFLAGS)
    assert all(flag in kernel.command for flag in GATHER_CFLAGS)
    assert "unroll" in kernel.source

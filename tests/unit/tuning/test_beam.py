"""The cost model and the beam search rank candidates without compiling anything."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

import spf
from spf import kernels
from spf.schedule.commands import WAVEFRONT_METHODS
from spf.tuning.beam import mutate, ranked
from spf.tuning.moves import advance, initial, options
from spf.tuning.nest import Nest, analyze
from spf.tuning.space import STAGES, make_space

if TYPE_CHECKING:
    import pytest


def _gemm_nest(n: int) -> Nest:
    return analyze(
        kernels.gemm(), {"C": np.zeros((n, n)), "A": np.zeros((n, n)), "B": np.zeros((n, n))}
    )


def test_the_model_puts_a_unit_stride_vector_loop_inside_gemm_first() -> None:
    # without BLIS's blockings (tests/unit/tuning/test_blocking.py: those come first)
    best = ranked(_gemm_nest(512), make_space({"blocking": []}, None))[0][1]
    kinds = [s.kind for s in best.steps]
    assert kinds[0] == "interchange"
    assert best.steps[0].loops == ("j", "k")
    assert "vectorize" in kinds
    assert "parallelize" in kinds


def _csr(name: str) -> dict[str, object]:
    a = sp.csr_array(sp.random(50, 50, density=0.1, random_state=0) + sp.eye(50))
    args = spf.sparse.csr_args(a)
    if name == "sptrsv_csr":
        return {"rowptr": args["rowptr"], "col": args["col"], "L": args["A"],
                "u": np.zeros(50), "f": np.zeros(50)}  # fmt: skip
    return {**args, "y": np.zeros(50), "x": np.zeros(50)}


def test_sparse_loops_are_neither_tiled_nor_interchanged() -> None:
    nest = analyze(kernels.spmv_csr(), _csr("spmv_csr"))
    assert nest.dense == (True, False)
    kinds = {s.kind for _, c in ranked(nest, make_space(None, None)) for s in c.steps}
    assert not kinds & {"tile", "interchange", "cache_read"}
    assert "parallelize" in kinds
    assert "wavefront" not in kinds


def test_a_loop_carrying_a_dependence_gets_wavefronts_not_parallel_for() -> None:
    nest = analyze(kernels.sptrsv_csr(), _csr("sptrsv_csr"))
    assert not nest.outer_parallel
    cands = [c for _, c in ranked(nest, make_space(None, None))]
    assert not any(s.kind == "parallelize" for c in cands for s in c.steps)
    methods = {s.param for c in cands for s in c.steps if s.kind == "wavefront"}
    assert methods == set(WAVEFRONT_METHODS)


def test_mutations_stay_in_the_space() -> None:
    nest = _gemm_nest(64)
    space = make_space({"tile": [(8, 8), (16, 16)], "unroll": [2]}, None)
    rng = random.Random(0)
    cand = ranked(nest, space)[0][1]
    for _ in range(50):
        cand = mutate(nest, space, cand, rng)
        state = initial(nest)
        steps = list(cand.steps)
        for stage in STAGES:
            allowed = options(nest, state, stage, space)
            if steps and steps[0] in allowed:
                state = advance(state, steps.pop(0), nest)
        assert steps == [], cand.describe()
        assert cand.threads in space.get("threads")


def test_a_serial_candidate_mutated_parallel_gets_a_thread_count_of_the_space() -> None:
    nest = _gemm_nest(64)
    space = make_space({"tile": [(8, 8)], "threads": [2]}, None)
    serial = [c for _, c in ranked(nest, space) if not c.parallel]
    assert serial
    rng = random.Random(1)
    made_parallel = 0
    for cand in serial * 20:
        child = mutate(nest, space, cand, rng)
        assert child.threads == (2 if child.parallel else None), child.describe()
        made_parallel += child.parallel
    assert made_parallel  # some mutation added a parallelize


def test_the_model_counts_the_cpus_the_process_may_run_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine of 64 CPUs of which ``taskset`` (or a container's cpuset) leaves 8: the
    default space's third thread count is half of those 8, as OpenMP's default team is 8."""
    import os

    from spf.tuning import space

    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert space.cores() == 8
    assert space.default_space()["threads"] == [None, 1, 4]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(1)), raising=False)
    assert space.default_space()["threads"] == [None, 1]


def test_outputs_compare_per_element_and_an_inf_does_not_widen_the_tolerance() -> None:
    """The tolerance of the comparison with the baseline came from the largest element,
    so an ``inf`` made any difference pass and small elements went unchecked beside large
    ones (``[1e4, 0]`` for ``[1e4, 1e-3]``); now it takes its scale from finite elements and
    non-finite values must be equal."""
    import pytest

    from spf.errors import InternalError
    from spf.tuning.measure import compare

    compare("c", {"y": np.array([1.0, 2.0, np.inf])}, {"y": np.array([1.0, 2.0, np.inf])})
    compare("c", {"y": np.array([1e4, 1e-3 + 1e-9])}, {"y": np.array([1e4, 1e-3])})
    for got, want in (
        ([100.0, -5.0, np.inf], [1.0, 2.0, np.inf]),
        ([1e4, 1.0], [1e4, 1e-3 + 1.0 + 1.0]),
        ([1.0, np.inf], [1.0, 5.0]),
    ):
        with pytest.raises(InternalError):
            compare("c", {"y": np.array(got)}, {"y": np.array(want)})

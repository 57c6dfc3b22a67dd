"""Audit of spf.tune (API.md §17, docs/tune.md): chains of main nests apply, and kernels with
a loop-carried dependence are never run in parallel or vectorized. Budgets are tiny
(``max_trials`` stops the searches)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import spf
from spf.bench.polybench import kernel as polybench
from spf.tuning import measure, records

ROOMY = 600.0
"""A budget that ``max_trials`` stops first (the test must not follow the clock)."""


@pytest.fixture(autouse=True)
def records_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Records go to a fresh folder per test (the build cache stays shared)."""
    folder = tmp_path / "tune"
    monkeypatch.setattr(records, "directory", lambda cache_dir=None: folder)
    return folder


def _only(**kinds: list[Any]) -> dict[str, list[Any]]:
    """A space of the kinds given, every other kind removed."""
    return {**{k: [] for k in spf.tuning.default_space()}, **kinds}


def test_a_second_nest_whose_loops_the_best_renamed_is_tried_on_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """jacobi-1d's first nest holds both sweeps (they share the time loop), and ``s1`` is a
    main nest of its own: once the first nest's ``vectorize(i, 4)`` (both sweeps) is the best,
    ``s1: vectorize(i, 4)`` chained after it named a loop ``i`` that no longer existed and was
    refused as ``no statement has the loops i``, a trial spent; it is tried on its own."""
    # every candidate measures faster than its reference: each becomes the best
    monkeypatch.setattr(
        measure, "interleaved", lambda fns, *a, **k: [1e-3 / (i + 1) for i in range(len(fns))]
    )
    k = polybench("jacobi-1d")
    args = k.arguments()
    res = spf.tune(k.build(), args, budget=ROOMY, space=_only(vectorize=[4], threads=[1]),
                   seed=0, reuse=False, max_trials=2)  # fmt: skip
    trials = [(t.status, t.summary) for t in res.history[1:]]
    assert trials == [("measured", "vectorize(i,i0,i1 4)"),
                      ("measured", "s1: vectorize(i,i0,i1 4)")]  # fmt: skip
    kernel = res.comp.compile()
    got, want = measure.copy_args(args), k.expected(args)
    kernel(**measure.taken(kernel, got))
    for out in k.outputs:
        assert np.allclose(got[out], want[out])


def _prefix_2d() -> spf.Computation:
    """``x(i, j) += x(i, j - 1)``: each row a prefix sum, a flow dependence along ``j``."""
    comp = spf.Computation("prefix_rows")
    comp.add_data_space("x", "double", shape=("N", "M"))
    comp.add_stmt(spf.Stmt("$x$(i, j) = $x$(i, j) + $x$(i, j - 1);",
                           "{[i, j]: 0 <= i < N && 1 <= j < M}", "{[i, j] -> [0, i, 0, j, 0]}"))  # fmt: skip
    return comp


def test_a_prefix_sum_is_never_vectorized_along_its_dependence_and_keeps_its_results() -> None:
    """The rows are independent, the columns are not: candidates that vectorize ``j`` are
    refused by the legality check, never run; the tuned kernel equals the default bitwise
    (no reduction is reordered), at sizes that leave partial vectors and tiles."""
    rng = np.random.default_rng(0)
    args = {"x": rng.random((7, 13))}
    space = _only(vectorize=[4], tile=[(4, 4)], parallelize=[None], threads=[1])
    res = spf.tune(_prefix_2d(), args, budget=ROOMY, space=space, seed=0, reuse=False,
                   max_trials=6)  # fmt: skip
    for trial in res.history:
        if "vectorize(j," in trial.summary and "interchange" not in trial.summary:
            assert trial.status == "illegal", trial
    assert res.illegal >= 1
    assert 'parallelize("j"' not in res.commands
    want, got = measure.copy_args(args), measure.copy_args(args)
    _prefix_2d().compile()(**want)
    res.comp.compile()(**got)
    assert np.array_equal(got["x"], want["x"])


def _small_matrix() -> Any:
    import scipy.sparse as sp

    return sp.csr_array(sp.random_array((40, 30), density=0.1, rng=np.random.default_rng(3)))


def _raises(comp: spf.Computation, args: Any, budget: float, **kw: Any) -> Any:
    return 1 / 0


def _returns_none(comp: spf.Computation, args: Any, budget: float, **kw: Any) -> Any:
    return None


@pytest.mark.parametrize(
    ("refine", "message"),
    [
        (_raises, r"refine= raised ZeroDivisionError: division by zero; fix the schedule search"),
        (_returns_none, r"refine= must return an object whose comp is the scheduled copy"),
    ],
)
def test_a_refiner_that_fails_is_an_spf_error_naming_refine(
    tmp_path: Any, refine: Any, message: str
) -> None:
    """A user's ``refine=`` that raises, or returns no result with a ``comp``, surfaced as its
    raw ``ZeroDivisionError`` / ``AttributeError`` from inside the format search."""
    with pytest.raises(spf.ArgumentError, match=message):
        spf.formats.tune(_small_matrix(), budget=120.0, space={"CSR": [()], "schedules": ["serial"]},
                         threads=1, record_dir=tmp_path, refine=refine)  # fmt: skip


@pytest.mark.parametrize("reuse", ["no", None, 0])
def test_reuse_that_is_no_bool_is_refused(reuse: Any) -> None:
    """``reuse="no"`` was truthy: a recorded result answered without a search; ``None`` and
    ``0`` searched. Each is an ``ArgumentError`` naming ``reuse`` before anything runs."""
    args = {"C": np.zeros((3, 4)), "A": np.ones((3, 2)), "B": np.ones((2, 4))}
    with pytest.raises(spf.ArgumentError, match=r"tune: reuse must be True or False, got"):
        spf.tune(spf.kernels.gemm(), args, budget=ROOMY, reuse=reuse, max_trials=0)
    with pytest.raises(spf.ArgumentError, match=r"formats\.tune: reuse must be True or False"):
        spf.formats.tune(_small_matrix(), budget=ROOMY, reuse=reuse)


def test_a_nan_max_padding_is_refused() -> None:
    """``max_padding=nan`` passed the ``< 0`` check and pruned no format however padded."""
    with pytest.raises(spf.ArgumentError, match=r"max_padding must be a number >= 0, got nan"):
        spf.formats.tune(_small_matrix(), budget=ROOMY, max_padding=float("nan"))


def test_commands_refused_once_are_not_refused_again_for_another_thread_count() -> None:
    """``s = s * 0.5 + x(i)`` carries a dependence that is no reduction: the model offers
    ``parallelize(i, reduction=...)`` (the write does not move with ``i``) for each thread
    count, and each was refused again, spending a trial and counting in ``illegal`` (four
    trials for two verdicts here; seven of ilu0's eight at ``max_trials=8``)."""
    comp = spf.Computation("decay")
    comp.add_data_space("s", "double", shape=())
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$s$ = $s$ * 0.5 + $x$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}"))
    space = _only(parallelize=["privatize", "atomic"], threads=[None, 1])
    res = spf.tune(comp, {"s": np.zeros(()), "x": np.ones(9)}, budget=ROOMY, space=space,
                   seed=0, reuse=False, max_trials=4)  # fmt: skip
    summaries = [t.summary for t in res.history[1:]]
    assert summaries == ["parallelize(i privatize)", "parallelize(i atomic)"]
    assert all(t.status == "illegal" for t in res.history[1:])
    assert (res.illegal, res.tried) == (2, 0)

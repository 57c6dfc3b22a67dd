"""spf.tune (API.md §17): tuned schedules compute what the default computes; illegal
candidates are counted and never compiled; a wrong kernel is an SpfError; records are reused
without compiling; a seed makes the search reproducible. Budgets are tiny (a few candidates)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import spf
from spf import kernels
from spf.schedule.trace import Trace
from spf.tuning import measure, records
from spf.tuning.space import make_space


@pytest.fixture(autouse=True)
def records_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Records go to a fresh folder per test (the build cache stays shared)."""
    folder = tmp_path / "tune"
    monkeypatch.setattr(records, "directory", lambda cache_dir=None: folder)
    return folder


ROOMY = 600.0
"""The budget of a search that ``max_trials`` stops: the few candidates never spend it however
busy the machine (a test that asks which candidates ran must not follow the clock)."""


def _run(comp: spf.Computation, args: dict[str, Any], out: str) -> np.ndarray:
    """``out`` after a call on a copy of the arguments the kernel takes (a fused pipeline's
    kernel no longer takes its intermediate)."""
    kernel = comp.compile()
    work = measure.taken(kernel, measure.copy_args(args))
    kernel(**work)
    return work[out]  # type: ignore[no-any-return]


def _replays(res: spf.TuneResult, fresh: spf.Computation) -> None:
    """``res.comp.trace`` rebuilds the tuned schedule on a fresh kernel."""
    again = Trace(res.comp.trace.entries).replay(fresh)
    assert again.loop_structure() == res.comp.loop_structure()


def test_tuned_gemm_equals_numpy_and_leaves_comp_alone() -> None:
    rng = np.random.default_rng(1)
    n, m, k = 23, 17, 9  # odd sizes: partial tiles and vector remainders
    args = {"C": np.zeros((n, m)), "A": rng.random((n, k)), "B": rng.random((k, m))}
    comp = kernels.gemm()
    # no blocking: a 20 s budget never started one, and this one would
    res = spf.tune(comp, args, budget=ROOMY, space={"blocking": []}, seed=0, reuse=False,
                   max_trials=2)  # fmt: skip
    assert len(comp.trace) == 0
    assert res.comp is not comp
    assert res.history[0].status == "baseline"
    assert len(res.history) == 3
    assert res.tried + res.illegal <= 2
    assert res.time > 0
    assert res.baseline_time > 0
    assert res.speedup == pytest.approx(res.baseline_time / res.time)
    np.testing.assert_allclose(_run(res.comp, args, "C"), args["A"] @ args["B"], rtol=1e-12)
    _replays(res, kernels.gemm())
    assert not args["C"].any()  # the caller's arrays are never written


def test_tuned_blur_equals_the_default() -> None:
    img = np.random.default_rng(2).random((19, 13))
    args = {"out": np.zeros((17, 11)), "bx": np.zeros((19, 11)), "img": img}
    res = spf.tune(kernels.blur2d(), args, budget=20.0, seed=0, reuse=False, max_trials=2)
    want = _run(kernels.blur2d(), args, "out")
    np.testing.assert_allclose(_run(res.comp, args, "out"), want, rtol=1e-12)
    _replays(res, kernels.blur2d())


def _csr_case(n: int, index_dtype: str) -> dict[str, Any]:
    a = sp.random(n, n + 3, density=0.2, format="lil", random_state=3)
    a[1, :] = 0  # an empty row
    args = spf.sparse.csr_args(sp.csr_array(a), index_dtype=index_dtype)
    args.update(y=np.zeros(n), x=np.random.default_rng(4).random(n + 3))
    return args


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_tuned_spmv_equals_scipy(index_dtype: str) -> None:
    args = _csr_case(31, index_dtype)
    comp = kernels.spmv_csr(index_dtype=index_dtype)
    res = spf.tune(comp, args, budget=20.0, seed=0, reuse=False, max_trials=2)
    a = sp.csr_array((args["A"], args["col"], args["rowptr"]), shape=(31, 34))
    np.testing.assert_allclose(_run(res.comp, args, "y"), a @ args["x"], rtol=1e-12)


def _parallel_rows(comp: spf.Computation) -> None:
    for s in comp.stmts:
        s.parallelize("i")


def test_tuned_sptrsv_equals_scipy_and_never_runs_the_illegal_parallel_loop() -> None:
    n = 40
    low = sp.tril(sp.random(n, n, density=0.15, random_state=5), k=-1, format="csr")
    low = sp.csr_array(low + sp.diags_array(np.arange(1.0, n + 1.0)))
    low.sort_indices()
    csr = spf.sparse.csr_args(low)
    f = np.random.default_rng(6).random(n)
    args = {"rowptr": csr["rowptr"], "col": csr["col"], "L": csr["A"], "u": np.zeros(n), "f": f}
    space = {"wavefront": ["levels"], "unroll": [], "split": [], "threads": [None],
             "candidates": [_parallel_rows]}  # fmt: skip
    res = spf.tune(
        kernels.sptrsv_csr(), args, budget=ROOMY, space=space, seed=0, reuse=False, max_trials=2
    )
    want = spla.spsolve_triangular(low.tocsr(), f, lower=True)
    np.testing.assert_allclose(_run(res.comp, args, "u"), want, rtol=1e-10)
    assert res.illegal == 1
    assert res.history[1].status == "illegal"
    assert res.history[2].status == "measured"
    assert "wavefront" in res.history[2].commands


def test_an_empty_matrix_tunes_to_a_result() -> None:
    args = spf.sparse.csr_args(sp.csr_array((0, 5)))
    args.update(y=np.zeros(0), x=np.zeros(5))
    res = spf.tune(kernels.spmv_csr(), args, budget=10.0, seed=0, reuse=False, max_trials=1)
    assert _run(res.comp, args, "y").shape == (0,)


def _counting_builds(monkeypatch: pytest.MonkeyPatch) -> list[spf.Computation]:
    built: list[spf.Computation] = []
    real = measure.build

    def build(comp: spf.Computation) -> Any:
        built.append(comp)
        return real(comp)

    monkeypatch.setattr(measure, "build", build)
    return built


NOTHING = {k: [] for k in spf.tuning.default_space() if k != "threads"}
"""A space with no generated candidates (only ``candidates`` given by the test)."""


def _gemm_args(n: int = 8) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    return {"C": np.zeros((n, n)), "A": rng.random((n, n)), "B": rng.random((n, n))}


def test_an_injected_illegal_candidate_is_counted_and_never_compiled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = _counting_builds(monkeypatch)
    space = {**NOTHING, "candidates": [lambda c: c.stmt("s0").parallelize("k")]}
    res = spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space=space, reuse=False)
    assert (res.illegal, res.tried) == (1, 0)
    assert res.history[1].status == "illegal"
    assert "cannot run in parallel" in res.history[1].reason
    assert len(built) == 1
    assert len(built[0].trace) == 0
    assert len(res.comp.trace) == 0
    assert res.speedup == 1.0


def test_a_candidate_computing_something_else_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = measure.run_once
    calls: list[int] = []

    def wrong_after_baseline(*a: Any) -> dict[str, Any]:
        out = real(*a)
        calls.append(1)
        if len(calls) > 1:  # every candidate's kernel writes a wrong C[0, 0]
            out["C"][0, 0] += 1.0
        return out

    monkeypatch.setattr(measure, "run_once", wrong_after_baseline)
    space = {**NOTHING, "candidates": [lambda c: c.stmt("s0").unroll("k", 2)]}
    with pytest.raises(spf.SpfError, match=r"candidates\[0\].*different 'C'"):
        spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space=space, reuse=False)


def test_a_record_is_reused_without_compiling(
    monkeypatch: pytest.MonkeyPatch, records_dir: Any
) -> None:
    space = {**NOTHING, "candidates": [lambda c: c.stmt("s0").interchange("j", "k")]}
    first = spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space=space)
    assert not first.reused
    assert first.record is not None
    data = json.loads(first.record.read_text())
    assert data["computation"] == "gemm"
    assert data["machine"]["cores"] >= 1
    assert data["args"]["A"] == ["float64", [8, 8]]
    built = _counting_builds(monkeypatch)
    again = spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space=space)
    assert again.reused
    assert built == []
    assert again.comp.trace == first.comp.trace
    assert (again.time, again.tried, again.history) == (first.time, first.tried, first.history)
    other = spf.tune(kernels.gemm(), _gemm_args(6), budget=20.0, space=space, max_trials=0)
    assert not other.reused  # other shapes: another record


def test_a_seed_repeats_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the clock replaced by a fixed one (the measurements tie), the candidates tried,
    mutations included, depend on the seed alone."""
    baseline = kernels.gemm().compile()
    monkeypatch.setattr(measure, "build", lambda comp: baseline)
    monkeypatch.setattr(measure, "interleaved", lambda fns, *a, **k: [1e-3] * len(fns))
    space = {"cache_read": [], "vectorize": [], "tile": [(4, 4), (2, 4)], "unroll": [2, 4]}

    def tried(seed: int) -> list[str]:
        res = spf.tune(kernels.gemm(), _gemm_args(), budget=ROOMY, space=space, seed=seed,
                       reuse=False, max_trials=8)  # fmt: skip
        return [t.summary for t in res.history]

    first = tried(3)
    assert len(first) == 9
    assert tried(3) == first
    assert any(tried(s) != first for s in (4, 5, 6))


def test_the_number_of_timed_rounds_leaves_the_candidates_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """How many shuffled rounds a timing holds follows the clock (a loaded machine fits fewer
    in its time slice); with the measurements tied, the candidates a seed gives do not."""
    baseline = kernels.gemm().compile()
    monkeypatch.setattr(measure, "build", lambda comp: baseline)
    space = {"cache_read": [], "vectorize": [], "tile": [(4, 4), (2, 4)], "unroll": [2, 4]}

    def tried(rounds: int) -> list[str]:
        def interleaved(fns: list[Any], seconds: float, rng: Any, *a: Any, **k: Any) -> Any:
            order = list(range(len(fns)))
            for _ in range(rounds):  # as measure.interleaved shuffles each round
                rng.shuffle(order)
            return [1e-3] * len(fns)

        monkeypatch.setattr(measure, "interleaved", interleaved)
        res = spf.tune(kernels.gemm(), _gemm_args(), budget=ROOMY, space=space, seed=3,
                       reuse=False, max_trials=8)  # fmt: skip
        return [t.summary for t in res.history]

    few = tried(3)
    assert len(few) == 9
    assert tried(40) == few
    assert tried(7) == few


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget": 0}, "budget must be a positive number"),
        ({"space": {"bogus": []}}, "unknown space key 'bogus'"),
        ({"space": {"tile": [(0, 4)]}}, r"space\['tile'\] has a bad parameter"),
        ({"threads": 0}, "threads must be an int >= 1"),
        ({"seed": "x"}, "seed must be an int"),
    ],
)
def test_bad_arguments_are_spf_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(spf.SpfError, match=message):
        spf.tune(kernels.gemm(), _gemm_args(), **kwargs)


def test_args_without_outputs_are_refused() -> None:
    args = _gemm_args()
    del args["C"]
    with pytest.raises(spf.SpfError, match="writes none of the arrays"):
        spf.tune(kernels.gemm(), args, budget=5.0, reuse=False)
    with pytest.raises(spf.SpfError, match="has no statements"):
        spf.tune(spf.Computation("empty"), {}, budget=5.0, reuse=False)


def test_a_misspelt_argument_is_refused_not_dropped() -> None:
    """Candidates take the arguments their kernel takes; a name no argument of the default
    schedule has was dropped silently (a typo of an input ran on whatever the kernel read)."""
    args = {**_gemm_args(), "Bee": np.ones(3)}
    with pytest.raises(spf.ArgumentError, match="args names 'Bee', not an argument of the default"):
        spf.tune(kernels.gemm(), args, budget=5.0, reuse=False)


def test_a_damaged_record_is_an_error_that_names_it(records_dir: Any) -> None:
    name, _ = records.key(kernels.gemm(), _gemm_args(), make_space(None, None))
    records.save(name, {"commands": [{"stmt": "s0", "command": "Nope", "args": {}}]})
    with pytest.raises(spf.SpfError, match=r"the record .*\.json is damaged .*reuse=False"):
        spf.tune(kernels.gemm(), _gemm_args(), budget=5.0)


@pytest.mark.parametrize(
    "damage",
    [
        {"history": [1, "x"]},  # an entry that is no dict
        {"tried": "x"},
        {"speedup": None},
        {"illegal": [2]},
        {"threads": "lots"},
    ],
)
def test_a_record_with_a_damaged_field_is_an_error_that_names_it(
    records_dir: Any, damage: dict[str, Any]
) -> None:
    """Every field of a damaged record is an SpfError naming the file, never a raw
    AttributeError / ValueError / TypeError from reading it."""
    name, _ = records.key(kernels.gemm(), _gemm_args(), make_space(None, None))
    records.save(name, {"commands": [], "time": 1e-3, "baseline_time": 1e-3, **damage})
    with pytest.raises(spf.SpfError, match=r"the record .*\.json is damaged .*reuse=False"):
        spf.tune(kernels.gemm(), _gemm_args(), budget=5.0)


def test_a_record_whose_schedule_is_illegal_is_refused_by_tune(records_dir: Any) -> None:
    """An edited record (records are plain JSON) that parallelizes gemm's reduction loop is
    checked when it is replayed: tune refuses it, not a later compile of ``res.comp``."""
    name, _ = records.key(kernels.gemm(), _gemm_args(), make_space(None, None))
    racy = [{"stmt": "s0", "command": "Parallelize", "args": {"loop": "k", "reduction": None}}]
    records.save(name, {"commands": racy, "time": 1e-3, "baseline_time": 1e-3})
    with pytest.raises(
        spf.SpfError, match=r"the record .*\.json is damaged .*cannot run in parallel"
    ):
        spf.tune(kernels.gemm(), _gemm_args(), budget=5.0)


def _only(**kinds: list[Any]) -> dict[str, list[Any]]:
    """A space of just ``kinds`` (every other kind removed), one thread."""
    space: dict[str, list[Any]] = {k: [] for k in spf.tuning.default_space()}
    return {**space, "threads": [1], **kinds}


def _replayed_result(trial: Any, k: Any, args: dict[str, Any]) -> dict[str, Any]:
    """The outputs of the trial's commands, pasted onto a fresh kernel as a user would."""
    comp = k.build()
    exec(trial.commands, {"comp": comp})  # the Python spf.tune printed
    work = {a: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for a, v in args.items()}
    comp.compile()(**work)
    return work


@pytest.mark.slow  # run first (tests/conftest.py): among the longest in the suite
def test_a_blocked_2mm_at_odd_sizes_equals_the_reference() -> None:
    from spf.bench.polybench import kernel as polybench

    k = polybench("2mm")
    args = k.arguments({"NI": 67, "NJ": 65, "NK": 63, "NL": 61})  # partial blocks everywhere
    space = _only(blocking=[(8, 4, 16, 4, 8)])
    res = spf.tune(k.build(), args, budget=ROOMY, space=space, seed=0, reuse=False, max_trials=1)
    trial = res.history[1]
    assert (trial.status, trial.summary) == ("measured", "blocking(i0 8x4x16x4x8) threads=1")
    assert trial.commands.count("cache_read") == 4  # A, B of tmp = A B; tmp, C of D = tmp C
    assert 'after("s0", spf.ROOT)' in trial.commands or "after('s0'" in trial.commands
    want, got = k.expected(args), _replayed_result(trial, k, args)
    for out in k.outputs:
        np.testing.assert_allclose(got[out], want[out], rtol=1e-12)


def test_covariance_after_fission_takes_a_unit_stride_inner_loop_and_equals_the_reference() -> None:
    from spf.bench.polybench import kernel as polybench

    k = polybench("covariance")
    args = k.arguments({"M": 9, "N": 11})
    space = _only(fission=[True], interchange=[True], vectorize=[4])
    res = spf.tune(k.build(), args, budget=ROOMY, space=space, seed=0, reuse=False, max_trials=1)
    trial = res.history[1]
    assert trial.summary.startswith("fission(i) interchange(j,k)"), trial.summary
    assert trial.status == "measured", trial.reason
    want, got = k.expected(args), _replayed_result(trial, k, args)
    for out in k.outputs:
        np.testing.assert_allclose(got[out], want[out], rtol=1e-12)


def test_a_slow_default_is_run_once_and_candidates_are_timed_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from spf.tuning import search

    monkeypatch.setattr(search, "SLOW_S", 0.0)  # every default counts as slow
    calls: list[int] = []
    made: list[Any] = []
    real = measure.caller

    def caller(kernel: Any, work: Any, threads: Any) -> Any:
        call = real(kernel, work, threads)
        index = len(calls)
        calls.append(0)

        def counted() -> None:
            calls[index] += 1
            call()

        made.append(counted)
        return counted

    # every timing says a nanosecond: each candidate is more than twice as fast as the
    # default's one run, whatever the machine's load (the final timing then re-times the best
    # alone), and the calls each timing was given are kept
    timed: list[list[Any]] = []

    def interleaved(fns: list[Any], *a: Any, **k: Any) -> list[float]:
        timed.append(list(fns))
        return [1e-9] * len(fns)

    monkeypatch.setattr(measure, "caller", caller)
    monkeypatch.setattr(measure, "interleaved", interleaved)
    rng = np.random.default_rng(5)
    args = {"C": np.zeros((21, 19)), "A": rng.random((21, 7)), "B": rng.random((7, 19))}
    # no blocking (whether a short budget leaves time to build one follows the clock) and a
    # budget that three candidates never spend: max_trials alone stops the search
    space = {"tile": [], "split": [], "cache_read": [], "unroll": [], "blocking": [],
             "threads": [1]}  # fmt: skip
    res = spf.tune(kernels.gemm(), args, budget=ROOMY, space=space, seed=0, reuse=False,
                   max_trials=3)  # fmt: skip
    assert res.history[0].status == "baseline"
    assert sum(t.status == "measured" for t in res.history) >= 2
    # the default's checked run was its measurement: never called again per candidate, nor
    # in the final timing of a best twice as fast; the first candidate was timed alone (the
    # later ones against the best so far)
    assert calls[0] == 0
    assert timed
    assert len(timed[0]) == 1
    assert all(made[0] not in fns for fns in timed)
    assert res.baseline_time == res.history[0].time
    np.testing.assert_allclose(_run(res.comp, args, "C"), args["A"] @ args["B"], rtol=1e-12)


def test_a_tiled_atax_keeps_its_statements_apart_in_the_tile_loop_and_equals_the_reference() -> (
    None
):
    from spf.bench.polybench import kernel as polybench

    k = polybench("atax")
    args = k.arguments({"M": 37, "N": 41})
    res = spf.tune(k.build(), args, budget=ROOMY, space=_only(tile=[(16, 16)]), seed=0,
                   reuse=False, max_trials=1)  # fmt: skip
    trial = res.history[1]
    assert trial.summary.startswith("tile(i,j,i0,j0,i1,j1 16x16)"), trial.summary
    assert trial.status == "measured", trial.reason
    assert 'stmt("s3").after("s2", "i0")' in trial.commands
    want, got = k.expected(args), _replayed_result(trial, k, args)
    for out in k.outputs:
        np.testing.assert_allclose(got[out], want[out], rtol=1e-12)


def test_a_short_budget_starts_no_blocking() -> None:
    rng = np.random.default_rng(6)
    args = {"C": np.zeros((64, 64)), "A": rng.random((64, 64)), "B": rng.random((64, 64))}
    space = _only(blocking=[(16, 16, 64, 4, 8)])
    res = spf.tune(kernels.gemm(), args, budget=4.0, space=space, seed=0, reuse=False)
    assert [t.status for t in res.history] == ["baseline"]  # 20 s of budget not left
    assert res.comp.trace.as_python() == ""


def test_remembered_searches_key_candidates_by_what_they_apply_and_sizes_by_value() -> None:
    """A candidate function is keyed by the commands it applies to a copy of the computation
    (one lambda tiling by a global ``T`` was one key for T=4 and T=8, and the second search
    reused the first's 4x4 tile), and a numpy integer size by its value (np.int64(64) and
    np.int64(4096) were one key)."""
    from spf.tuning.records import arg_shapes, key
    from spf.tuning.space import make_space

    comp = spf.kernels.gemm()
    size = [4]
    space = make_space({"candidates": [lambda c: c.stmt("s0").tile("i", "j", *size * 2)]}, 1)
    first = key(comp, {}, space)[0]
    size[0] = 8  # the same function object, another tile
    assert key(comp, {}, space)[0] != first
    assert arg_shapes({"N": np.int64(64)}) != arg_shapes({"N": np.int64(4096)})
    assert arg_shapes({"N": np.int64(64)}) == {"N": 64}


def test_a_record_that_cannot_be_written_keeps_the_result(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The records' folder cannot be made (a file where it should be; a full disk or a
    read-only cache alike): the search's result is returned, not recorded, with a warning,
    rather than lost to a raw OSError."""
    blocked = tmp_path / "a_file"
    blocked.write_text("not a folder\n")
    monkeypatch.setattr(records, "directory", lambda cache_dir=None: blocked / "tune")
    args = spf.sparse.csr_args(sp.csr_array((0, 5)))
    args.update(y=np.zeros(0), x=np.zeros(5))
    with caplog.at_level("WARNING", logger="spf"):
        res = spf.tune(kernels.spmv_csr(), args, budget=10.0, seed=0, reuse=False, max_trials=1)
    assert res.record is None
    assert "not recorded" in caplog.text
    assert _run(res.comp, args, "y").shape == (0,)


def test_a_reordered_float_reduction_beyond_round_off_is_rejected_not_a_bug() -> None:
    """A float32 sum of centred data (terms ~1e4 cancelling to a few units): a privatized
    reduction on two threads sums in another order, and its round-off exceeds the tolerance
    relative to the small result. That is no spf bug: the candidate is rejected with the
    reason (it raised InternalError 'a bug of spf', ending the whole search)."""
    comp = spf.from_c(
        "void total(int N, float *x, float *s) { for (int i = 0; i < N; i++) s[0] += x[i]; }",
        shapes={"x": "N", "s": "1"},
    )
    x = (np.random.default_rng(0).standard_normal(20000) * 1e4).astype(np.float32)
    x -= np.float32(x.mean())
    args = {"N": x.size, "x": x, "s": np.zeros(1, np.float32)}
    space = {**_only(parallelize=["privatize"]), "threads": [2]}
    res = spf.tune(comp, args, budget=ROOMY, space=space, seed=0, reuse=False, max_trials=1)
    (trial,) = [t for t in res.history if "privatize" in t.summary]
    assert trial.status == "rejected"  # two threads' partial sums: a fixed split
    assert "summed in another order" in trial.reason
    assert res.commands == ""
    got = {**args, "s": np.zeros(1, np.float32)}
    res.comp.compile()(**got)
    want = np.zeros(1, np.float32)
    comp.compile()(N=x.size, x=x, s=want)
    np.testing.assert_allclose(got["s"], want, rtol=0.5)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"budget": np.int64(600)},
        {"budget": np.float32(600.0)},
        {"seed": np.int64(1)},
        {"threads": np.int64(1)},
        {"max_trials": np.int64(0)},
    ],
)
def test_numpy_scalars_are_numbers(kwargs: dict[str, Any]) -> None:
    """``budget=np.int64(600)`` was refused with 'budget must be a positive number of
    seconds, got np.int64(600)' (numpy integers are no Python ints)."""
    res = spf.tune(kernels.gemm(), _gemm_args(), **{"max_trials": 0, "reuse": False, **kwargs})
    assert res.tried == 0


def test_an_output_passed_as_a_list_is_named() -> None:
    """The error said 'writes none of the arrays passed in args (A, B, C); pass its outputs
    too' although ``C`` was passed (as a list)."""
    args = {k: v.tolist() for k, v in _gemm_args().items()}
    with pytest.raises(spf.SpfError, match=r"args\['C'\] must be a numpy array .*got list"):
        spf.tune(kernels.gemm(), args, budget=5.0, reuse=False)

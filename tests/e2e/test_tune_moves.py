"""spf.tune's whole-nest moves: ``compute_at`` of a producer-consumer pipeline (blur2d), time
skewing of stencils (PolyBench's jacobi-2d), and second main nests (PolyBench lu: s0 left of
the diagonal, whose j, k interchange is illegal, and s2 right of it, whose interchange is
legal), with tiny sizes and budgets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import spf
from spf import kernels
from spf.bench.polybench import kernel as polybench
from spf.tuning import measure, records
from spf.tuning.beam import ranked
from spf.tuning.nest import analyze, sizes_of
from spf.tuning.search import _Search
from spf.tuning.space import make_space


@pytest.fixture(autouse=True)
def records_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Records go to a fresh folder per test (the build cache stays shared)."""
    folder = tmp_path / "tune"
    monkeypatch.setattr(records, "directory", lambda cache_dir=None: folder)
    return folder


ROOMY = 600.0
"""The budget of a search that ``max_trials`` stops: the few candidates never spend it however
busy the machine (which candidates ran must not follow the clock)."""


def _only(**kinds: list[Any]) -> dict[str, list[Any]]:
    """A space of just ``kinds`` (every other kind removed), one thread."""
    space: dict[str, list[Any]] = {k: [] for k in spf.tuning.default_space()}
    return {**space, "threads": [1], **kinds}


def _blur_args(n: int, m: int, seed: int = 0) -> dict[str, Any]:
    img = np.random.default_rng(seed).random((n, m))
    return {"out": np.zeros((n - 2, m - 2)), "bx": np.zeros((n, m - 2)), "img": img}


def _blurred(img: np.ndarray) -> np.ndarray:
    n, m = img.shape
    return sum(img[i : n - 2 + i, j : m - 2 + j] for i in range(3) for j in range(3)) / 9.0  # type: ignore[no-any-return]


def _kinds(comp: spf.Computation, args: dict[str, Any]) -> set[str]:
    """The command kinds in the candidates the beam ranks for ``comp`` on ``args``."""
    sizes = sizes_of(comp, args)
    nest = analyze(comp, {**{p: sizes[p] for p in comp.params if p in sizes}, **args})
    return {s.kind for _, c in ranked(nest, make_space(None, None)) for s in c.steps}


def test_the_default_space_offers_compute_at_for_blur_and_skew_for_stencils() -> None:
    assert "compute_at" in _kinds(kernels.blur2d(), _blur_args(40, 50))
    for name, sizes in (
        ("jacobi-2d", {"N": 30, "TSTEPS": 20}),
        ("heat-3d", {"N": 12, "TSTEPS": 20}),
    ):
        k = polybench(name)
        assert "skew" in _kinds(k.build(), k.arguments(sizes)), name
    gemm = {"C": np.zeros((40, 40)), "A": np.zeros((40, 40)), "B": np.zeros((40, 40))}
    assert not {"compute_at", "skew"} & _kinds(kernels.gemm(), gemm)  # neither applies


@pytest.fixture(scope="module")
def fused_blur() -> spf.TuneResult:
    """blur2d tuned with the pipeline move only, in strips of 4 rows (partial last strip)."""
    return spf.tune(kernels.blur2d(), _blur_args(19, 13), budget=ROOMY,
                    space=_only(compute_at=[4]), seed=0, reuse=False, max_trials=1)  # fmt: skip


def test_a_blur_computed_at_row_strips_equals_numpy_on_odd_sizes(
    fused_blur: spf.TuneResult,
) -> None:
    trial = fused_blur.history[1]
    assert (trial.status, trial.summary) == ("measured", "compute_at(s0,s1 4) threads=1")
    for cmd in ('compute_at("s1", "i0")', 'storage_fold("i", 3)', 'parallelize("i0")'):
        assert cmd in trial.commands
    comp = kernels.blur2d()
    exec(trial.commands, {"comp": comp})  # the Python spf.tune printed, pasted
    kernel = comp.compile()
    assert "bx" not in {a.name for a in kernel.arguments}  # the intermediate is a line buffer
    for n, m, seed in ((3, 3, 1), (4, 11, 2), (19, 13, 3), (37, 9, 4)):  # one row, partial strips
        args = _blur_args(n, m, seed)
        out = args["out"]
        kernel(out=out, img=args["img"])
        np.testing.assert_allclose(out, _blurred(args["img"]), rtol=1e-12)


def test_a_fused_blur_record_is_replayed(fused_blur: spf.TuneResult) -> None:
    """The record of a pipeline (its folded line buffer included) replays on a fresh blur."""
    space = _only(compute_at=[4])
    first = spf.tune(kernels.blur2d(), _blur_args(19, 13), budget=ROOMY, space=space, seed=0,
                     max_trials=1)  # fmt: skip
    again = spf.tune(kernels.blur2d(), _blur_args(19, 13), budget=ROOMY, space=space, seed=0,
                     max_trials=1)  # fmt: skip
    assert again.reused
    assert again.comp.trace == first.comp.trace
    kernel = again.comp.compile()
    args = _blur_args(19, 13, 5)
    work = measure.taken(kernel, args)
    kernel(**work)
    np.testing.assert_allclose(work["out"], _blurred(args["img"]), rtol=1e-12)


def _reference(k: Any, sizes: dict[str, int], commands: str) -> None:
    """The commands pasted on a fresh kernel give the reference's outputs on ``sizes``."""
    comp = k.build()
    exec(commands, {"comp": comp})
    args = k.arguments(sizes)
    want = k.expected(args)
    comp.compile()(**args)
    for out in k.outputs:
        np.testing.assert_allclose(args[out], want[out], rtol=1e-12)


# which trials the search measures after the model's first ones follows the times it measured
# (a chain after the best so far, a mutation of it), so the test asks for the two skews among
# them, not for exactly them
@pytest.mark.parametrize("name", ["jacobi-2d", "heat-3d"])
def test_a_skewed_stencil_equals_the_reference(name: str) -> None:
    k = polybench(name)
    sizes = {"N": 11, "TSTEPS": 5} if name == "jacobi-2d" else {"N": 7, "TSTEPS": 3}
    space = _only(skew=[(4, 4)], parallelize=[None], threads=[2])
    # s1's own nest (s1: parallelize(i)) ranks between the two skews at these sizes, and a
    # chain or mutation may come before the second skew: five trials
    res = spf.tune(k.build(), k.arguments(sizes), budget=ROOMY, space=space, seed=0,
                   reuse=False, max_trials=5)  # fmt: skip
    trials = {t.summary: t for t in res.history[1:] if t.summary.startswith("skew")}
    assert {"skew(t_w,t_p 4x4)", "skew(t_w,t_p 4x4) parallelize(t_p) threads=2"} <= set(trials)
    # a parallel candidate always carries the space's thread count (a mutation that makes a
    # serial skew parallel included)
    assert all("threads=2" in s for s in trials if "parallelize" in s), sorted(trials)
    assert all(t.status == "measured" for t in trials.values()), [t.reason for t in trials.values()]
    parallel = trials["skew(t_w,t_p 4x4) parallelize(t_p) threads=2"].commands
    assert 'parallelize("t_p")' in parallel
    # other sizes than the search's, one time step and tiles cut by the edges
    for other in ({"N": 13, "TSTEPS": 1}, {"N": 9, "TSTEPS": 7}):
        _reference(k, other if name == "jacobi-2d" else {"N": 6, "TSTEPS": other["TSTEPS"]},
                   parallel)  # fmt: skip


def test_an_illegal_skew_is_counted_and_never_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A skew by a radius too small (0: time tiles over unskewed space loops) breaks the
    stencil's dependences: the legality check refuses it before anything is compiled."""
    from dataclasses import replace

    from spf.tuning import skew

    real = skew.find
    monkeypatch.setattr(skew, "find", lambda *a: (lambda s: s and replace(s, radius=0))(real(*a)))
    built: list[str] = []
    compile_ = measure.build
    monkeypatch.setattr(
        measure, "build", lambda comp, *f: built.append(comp.name) or compile_(comp, *f)
    )
    k = polybench("jacobi-2d")
    res = spf.tune(k.build(), k.arguments({"N": 11, "TSTEPS": 5}), budget=ROOMY,
                   space=_only(skew=[(4, 4)], parallelize=[]), seed=0, reuse=False, max_trials=1)  # fmt: skip
    trial = res.history[1]
    assert (trial.summary, trial.status) == ("skew(t_w,t_p 4x4)", "illegal")
    assert "dependence" in trial.reason
    assert (res.illegal, res.tried) == (1, 0)
    assert len(built) == 1  # the default only


def _run(comp: spf.Computation, args: dict[str, Any]) -> np.ndarray:
    work = {a: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for a, v in args.items()}
    comp.compile()(**work)
    return work["A"]  # type: ignore[no-any-return]


def test_lu_interchanges_s2_alone_and_equals_the_baseline_bitwise() -> None:
    k = polybench("lu")
    comp, args = k.build(), k.arguments({"N": 48})
    space = _only(interchange=[True])
    res = spf.tune(comp, args, budget=ROOMY, space=space, seed=0, reuse=False, max_trials=2)
    by_summary = {t.summary: t for t in res.history}
    assert by_summary["interchange(j,k)"].status == "illegal"  # s0's, with s2's: refused
    s2 = by_summary["s2: interchange(j,k)"]
    assert s2.status == "measured", s2.reason
    assert s2.commands == 'comp.stmt("s2").interchange("j", "k")'
    replayed = k.build()
    exec(s2.commands, {"comp": replayed})
    baseline = _run(comp, args)
    assert np.array_equal(_run(replayed, args), baseline)  # bitwise: same sums, same order
    assert np.array_equal(_run(res.comp, args), baseline)
    np.testing.assert_allclose(baseline, k.expected(args)["A"], rtol=1e-9)


def test_moves_of_one_nest_are_chained_after_the_best_of_the_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every candidate times at half its reference: the first measured is the best so far
    def halves(self: _Search, fns: list[Any], seconds: float, least: int = 3) -> list[float]:
        return [1.0] * (len(fns) - 1) + [0.5] if len(fns) > 1 else [1.0]

    monkeypatch.setattr(_Search, "_time", halves)
    k = polybench("lu")
    comp, args = k.build(), k.arguments({"N": 24})
    space = _only(interchange=[True], unroll=[4])
    res = spf.tune(comp, args, budget=ROOMY, space=space, seed=0, reuse=False, max_trials=8)
    chained = [t for t in res.history if " then " in t.summary]
    assert chained, [t.summary for t in res.history]
    for t in chained:  # each after a candidate of the other nest measured before it
        before = res.history[: res.history.index(t)]
        head = t.summary.rsplit(" then ", 1)[0]
        prior = next(p for p in before if p.summary == head and p.status == "measured")
        assert ("s2:" in head) != ("s2:" in t.summary.rsplit(" then ", 1)[1])
        assert t.commands.startswith(prior.commands + "\n")
    assert any(t.status == "measured" for t in chained), [(t.summary, t.reason) for t in chained]
    assert np.array_equal(_run(res.comp, args), _run(comp, args))

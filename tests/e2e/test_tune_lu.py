"""spf.tune on PolyBench lu: two statements with three loops each, s0 left of the diagonal
(whose j, k interchange is illegal) and s2 right of it (whose interchange is legal)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import spf
from spf.bench.polybench import kernel as polybench
from spf.tuning import records
from spf.tuning.search import _Search


@pytest.fixture(autouse=True)
def records_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    folder = tmp_path / "tune"
    monkeypatch.setattr(records, "directory", lambda cache_dir=None: folder)
    return folder


def _only(**kinds: list[Any]) -> dict[str, list[Any]]:
    space: dict[str, list[Any]] = {k: [] for k in spf.tuning.default_space()}
    return {**space, "threads": [1], **kinds}


def _run(comp: spf.Computation, args: dict[str, Any]) -> np.ndarray:
    work = {a: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for a, v in args.items()}
    comp.compile()(**work)
    return work["A"]  # type: ignore[no-any-return]


def test_lu_interchanges_s2_alone_and_equals_the_baseline_bitwise() -> None:
    k = polybench("lu")
    comp, args = k.build(), k.arguments({"N": 48})
    space = _only(interchange=[True])
    res = spf.tune(comp, args, budget=60.0, space=space, seed=0, reuse=False, max_trials=2)
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
    res = spf.tune(comp, args, budget=60.0, space=space, seed=0, reuse=False, max_trials=8)
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

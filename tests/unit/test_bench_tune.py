"""spf.bench.tune's inputs: the power-law matrix and the geomean of ratios."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spf.bench import BENCHMARKS
from spf.bench.tune import geomean, power_law


def test_tune_is_a_benchmark() -> None:
    assert "tune" in BENCHMARKS


def test_power_law_rows_are_skewed_and_in_range() -> None:
    m = power_law(2000, seed=1)
    assert m.shape == (2000, 2000)
    lengths = np.diff(m.indptr)
    assert lengths.min() >= 0
    assert lengths.max() > 20 * np.median(lengths)  # a few long rows among many short ones
    assert m.indices.max() < 2000
    assert (power_law(2000, seed=1) != m).nnz == 0  # seeded


def test_geomean_skips_what_is_not_a_ratio() -> None:
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([4.0, float("nan"), 0.0]) == pytest.approx(4.0)
    assert math.isnan(geomean([]))


def test_blur_targets_compare_with_adams2019_and_the_best_hand_schedule() -> None:
    from spf.bench.common import Section
    from spf.bench.tune_dense import _blur_targets

    sec = Section("tune")
    ms = {"spf.tune": 5.0, "Halide Adams2019": 6.0, "Halide line": 4.7, "Halide line-par": 4.4}
    _blur_targets(sec, ms, {}, "")
    verdicts = {t["target"]: (t["measured"], t["met"]) for t in sec.targets}
    assert verdicts == {
        "blur: spf.tune faster than Halide Adams2019": ("0.83x its time", True),
        "blur: spf.tune within 1.1x of Halide's best hand schedule": ("1.14x its time", False),
    }
    sec = Section("tune")
    _blur_targets(sec, {"spf.tune": 5.0}, {"error": "no halide"}, "halide missing")
    assert [(t["measured"], t["met"], t["note"]) for t in sec.targets] == [
        ("not run", False, "no halide"),
        ("not run", False, "halide missing"),
    ]


def test_tvm_row_says_not_installed_without_tvm(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from spf.bench import tune_dense

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    row = tune_dense._tvm_row(None, 64, 1.0, 1.0)  # type: ignore[arg-type]
    assert row["row"] == ["TVM MetaSchedule", "not installed", "-"]


def test_adams2019_blur_computes_the_blur() -> None:
    pytest.importorskip("halide")
    from spf.bench.halide_auto import adams2019

    n, m = 20, 36
    pipe, inp, hl, info = adams2019((n, m), 1)
    assert pipe is not None, info
    img = np.random.default_rng(0).uniform(0.0, 1.0, (n, m))
    out = np.zeros((n - 2, m - 2))
    inp.set(hl.Buffer(img))
    pipe.realize(hl.Buffer(out))
    want = sum(img[a : n - 2 + a, b : m - 2 + b] for a in range(3) for b in range(3)) / 9.0
    np.testing.assert_allclose(out, want, rtol=1e-12)
    assert "vectorize" in info["schedule"] or "compute_root" in info["schedule"]

"""spf.bench.tune's inputs: the power-law matrix and the geomean of ratios."""

from __future__ import annotations

import math
from typing import Any

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
    assert tune_dense._tvm_start(None, 64) is None  # type: ignore[arg-type]
    row = tune_dense._tvm_row(None, None, 1.0, 1.0)  # type: ignore[arg-type]
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


_FAKE_TVM = """
import json, os, signal, sys, time
mode = sys.argv[1]
if mode == "search":
    if os.environ.get("FAKE_TVM") == "crash":
        print('  File "<unknown>", line 0, in tvm::ffi::ToJSONGraph(tvm::ffi::Any const&)')
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(float(os.environ.get("FAKE_SETUP_S", "0")))
    print(json.dumps({"ready": 0.25}), flush=True)
    sys.stdin.readline()
    print("searching", flush=True)
    time.sleep(60)
else:
    print(json.dumps({"ms": 4.0, "blas_ms": 2.0, "records": 3}))
"""


def _fake_tvm(monkeypatch: pytest.MonkeyPatch, tmp_path: Any, **env: str) -> None:
    import os
    import sys

    from spf.bench import tvm_gemm

    script = tmp_path / "fake_tvm.py"
    script.write_text(_FAKE_TVM)
    monkeypatch.setattr(tvm_gemm, "_command", lambda args: (
        [sys.executable, str(script), *args], {**os.environ, **env}))  # fmt: skip


def test_metaschedule_searches_for_its_budget_once_set_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from spf.bench.tvm_gemm import MetaSchedule

    _fake_tvm(monkeypatch, tmp_path)
    got = MetaSchedule(64, tmp_path / "work").run(budget=1.0, rounds=3)
    assert got["setup_s"] == 0.25  # the child's own setup seconds, apart from the budget
    # stopped when the budget was spent: before the fake search's 60 s were over (however
    # long a loaded machine takes to stop it)
    assert 1.0 <= got["tune_s"] < 60.0
    assert (got["ms"], got["blas_ms"], got["records"]) == (4.0, 2.0, 3)
    assert "apache-tvm" in got["versions"]


def test_metaschedule_reports_a_crash_in_setup_by_signal_and_frame(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from spf.bench.tvm_gemm import MetaSchedule

    _fake_tvm(monkeypatch, tmp_path, FAKE_TVM="crash")
    got = MetaSchedule(64, tmp_path / "work").run(budget=1.0, rounds=3)
    assert got["error"].startswith("setting TVM up crashed with SIGSEGV in tvm::ffi::ToJSONGraph")
    assert "tune_s" not in got


def test_metaschedule_setup_past_its_allowance_is_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from spf.bench.tvm_gemm import MetaSchedule

    _fake_tvm(monkeypatch, tmp_path, FAKE_SETUP_S="30")
    got = MetaSchedule(64, tmp_path / "work").run(budget=1.0, rounds=3, allowance=1.0)
    assert got["error"] == "setting TVM up took more than the 1 s allowed"


def test_exit_reasons_name_the_signal_or_the_last_line() -> None:
    from spf.bench.tvm_gemm import exit_reason

    assert exit_reason(139, "x\n  File \"<unknown>\", line 0, in tvm::runtime::Foo(int)\n!!! boom\n") == (
        "crashed with SIGSEGV in tvm::runtime::Foo (last output: !!! boom)")  # fmt: skip
    assert exit_reason(-9, "") == "crashed with SIGKILL (last output: no output)"
    assert exit_reason(1, "Traceback\nValueError: bad\n") == "exited with 1: ValueError: bad"


def test_tvm_row_scales_its_own_ratio_to_this_runs_openblas_time() -> None:
    import types

    from spf.bench import tune_dense

    got = {"ms": 1000.0, "blas_ms": 200.0, "records": 4, "setup_s": 12.0, "waited_s": 130.0,
           "tune_s": 120.0, "versions": "apache-tvm x"}  # fmt: skip
    tvm = types.SimpleNamespace(run=lambda budget, rounds: got)
    ctx = types.SimpleNamespace(log=lambda text: None, cfg=types.SimpleNamespace(gemm_rounds=3))
    row = tune_dense._tvm_row(ctx, tvm, 120.0, 150.0)  # type: ignore[arg-type]
    assert row["row"] == ["TVM MetaSchedule", "750.00", "0.20"]  # 5x OpenBLAS's 150 ms
    assert "set up in 12 s (not counted in the budget" in row["note"]

"""spf.tune and spf.formats.tune as a user of an autotuner expects (issue 30): Ctrl-C returns
the best so far (not recorded), records are invalidated when the computation or the machine
changes, and a budget stops starting candidates. The KeyboardInterrupt is injected from a
patched measuring function (no signals); budgets are tiny and the kernels small."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.formats.tune_record as tune_record
from spf import kernels
from spf.cli import main
from spf.formats import tuner
from spf.tuning import measure, records

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

NOTHING = {k: [] for k in spf.tuning.default_space() if k != "threads"}
"""A space with no generated candidates (only ``candidates`` given by a test)."""

THREE = [
    lambda c: c.stmt("s0").interchange("j", "k"),
    lambda c: c.stmt("s0").unroll("k", 2),
    lambda c: c.stmt("s0").interchange("i", "j"),
]
SPACE = {**NOTHING, "candidates": THREE}
SERIAL = {"CSR": [()], "DIA": [()], "ELL": [()], "BDIA": [(4,)], "schedules": ["serial"]}


@pytest.fixture(autouse=True)
def records_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tune"
    monkeypatch.setattr(records, "directory", lambda cache_dir=None: folder)
    return folder


def _gemm_args(n: int = 8) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    return {"C": np.zeros((n, n)), "A": rng.random((n, n)), "B": rng.random((n, n))}


def _interrupt_on_call(monkeypatch: pytest.MonkeyPatch, obj: Any, name: str, nth: int) -> None:
    """``obj.name`` raises KeyboardInterrupt on its ``nth`` call (1-based), as Ctrl-C would."""
    real: Callable[..., Any] = getattr(obj, name)
    calls: list[int] = []

    def patched(*a: Any, **k: Any) -> Any:
        calls.append(1)
        if len(calls) == nth:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(obj, name, patched)


def _band(n: int) -> sp.csr_array:
    rng = np.random.default_rng(5)
    offsets = [-2, -1, 0, 1, 2]
    return sp.csr_array(sp.diags([rng.random(n) for _ in offsets], offsets, shape=(n, n)))


def test_ctrl_c_in_tune_returns_the_best_so_far_unrecorded(
    monkeypatch: pytest.MonkeyPatch, records_dir: Path
) -> None:
    _interrupt_on_call(monkeypatch, measure, "run_once", 3)  # baseline, 1st, then Ctrl-C
    comp, args = kernels.gemm(), _gemm_args()
    res = spf.tune(comp, args, budget=60.0, space=SPACE, seed=0)
    assert res.interrupted
    assert "interrupted" in repr(res)
    assert res.record is None
    assert not records_dir.exists() or not list(records_dir.iterdir())
    assert res.history[-1].status == "interrupted"
    assert [t.status for t in res.history[:2]] == ["baseline", "measured"]
    assert len(res.history) == 3  # baseline, the one measured, the marker
    assert len(comp.trace) == 0
    work = {k: np.array(v, copy=True) for k, v in args.items()}
    res.comp.compile()(**work)
    np.testing.assert_allclose(work["C"], args["A"] @ args["B"], rtol=1e-12)
    again = spf.tune(comp, args, budget=60.0, space={**NOTHING}, seed=0, max_trials=0)
    assert not again.reused
    assert not again.interrupted
    assert again.record is not None


def test_ctrl_c_during_the_baseline_propagates(monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupt_on_call(monkeypatch, measure, "run_once", 1)
    with pytest.raises(KeyboardInterrupt):
        spf.tune(kernels.gemm(), _gemm_args(), budget=60.0, space=SPACE, reuse=False)


def test_ctrl_c_in_the_cli_prints_the_best_so_far(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _interrupt_on_call(monkeypatch, measure, "run_once", 3)
    argv = ["tune", "gemm", "--sizes", "N=9,M=7,K=5", "--budget", "30", "--threads", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("# interrupted (Ctrl-C): the best schedule measured so far")
    assert "# gemm: " in out
    assert "# record:" not in out


def test_ctrl_c_in_formats_tune_returns_the_best_so_far_unrecorded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _interrupt_on_call(monkeypatch, tuner._Search, "measure", 3)  # CSR, one more, Ctrl-C
    m = _band(120)
    fres = spf.formats.tune(m, budget=120.0, space=SERIAL, seed=0, record_dir=tmp_path)
    assert fres.interrupted
    assert fres.record is None
    assert not list(tmp_path.glob("*.json"))
    assert fres.tried == 2
    reasons = {h["reason"] for h in fres.history if h["status"] == "not measured"}
    assert reasons == {"interrupted (Ctrl-C)"}
    x = np.random.default_rng(1).random(120)
    np.testing.assert_allclose(fres(x), m @ x, rtol=1e-12)
    from spf.tuning.formats_cli import summary

    assert summary(fres).startswith("interrupted (Ctrl-C): the best format measured so far")


def test_a_changed_computation_misses_the_record() -> None:
    space = {**NOTHING, "candidates": THREE[:1]}
    first = spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space=space)
    assert spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space=space).reused
    one_more = kernels.gemm()
    one_more.stmt("s0").interchange("j", "k")  # one more command
    res = spf.tune(one_more, _gemm_args(), budget=20.0, space={**NOTHING}, max_trials=0)
    assert not res.reused
    assert res.record != first.record


def test_another_kernel_misses_the_record() -> None:
    n = 10
    img = np.random.default_rng(2).random((n + 2, n + 2))
    blur = {"out": np.zeros((n, n)), "bx": np.zeros((n + 2, n)), "img": img}
    first = spf.tune(kernels.blur2d(), blur, budget=20.0, space={**NOTHING}, max_trials=0)
    gemm = spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space={**NOTHING}, max_trials=0)
    assert not gemm.reused
    assert gemm.record != first.record
    assert spf.tune(kernels.blur2d(), blur, budget=20.0, space={**NOTHING}).reused


def test_another_machine_misses_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    first = spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space={**NOTHING}, max_trials=0)
    assert spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space={**NOTHING}).reused
    real = records.machine()
    monkeypatch.setattr(records, "machine", lambda: {**real, "cpu": "another CPU"})
    moved = spf.tune(kernels.gemm(), _gemm_args(), budget=20.0, space={**NOTHING}, max_trials=0)
    assert not moved.reused
    assert moved.record != first.record


def test_formats_tune_on_another_machine_misses_the_record(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    m = _band(80)
    space = {"CSR": [()], "schedules": ["serial"]}
    first = spf.formats.tune(m, budget=60.0, space=space, record_dir=tmp_path)
    assert spf.formats.tune(m, budget=60.0, space=space, record_dir=tmp_path).reused
    real = tune_record.machine()
    monkeypatch.setattr(tune_record, "machine", lambda: {**real, "cpus": 999})
    moved = spf.formats.tune(m, budget=60.0, space=space, record_dir=tmp_path)
    assert not moved.reused
    assert moved.record != first.record
    other = _band(81)  # another pattern: another record
    assert not spf.formats.tune(other, budget=60.0, space=space, record_dir=tmp_path).reused


def test_a_budget_stops_starting_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every compile takes 0.4 s: a 2 s budget (15 % of it kept for the final timing) starts
    at most three of the space's dozens of candidates after the baseline."""
    real = measure.build

    def slow(comp: spf.Computation) -> Any:
        time.sleep(0.4)
        return real(comp)

    monkeypatch.setattr(measure, "build", slow)
    space = {"tile": [(2, 2), (2, 4), (4, 2), (4, 4)], "unroll": [2, 4], "threads": [1]}
    res = spf.tune(kernels.gemm(), _gemm_args(), budget=2.0, space=space, seed=0, reuse=False)
    assert 1 <= len(res.history) <= 4  # the baseline and at most three candidates

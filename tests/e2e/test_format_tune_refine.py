"""spf.formats.tune(refine=...): the winning format's SpMV handed to a schedule search, the
refined kernel checked against scipy, timed against the winner and recorded; progress as
logger lines (or a tqdm bar when asked).

CSR-only spaces and fake refiners keep it cheap: the one kernel comes from spf's build
cache after the first run."""

from __future__ import annotations

import functools
import logging
import types
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.tuning

if TYPE_CHECKING:
    from pathlib import Path

    from spf.computation import Computation

CSR_ONLY = {"CSR": [()], "schedules": ["serial"]}
ROOMY = 120.0  # a cold build cache on a busy machine; a warm call takes about a second


def _matrix(dtype: type = np.int32) -> sp.csr_array:
    m = sp.random_array((120, 90), density=0.05, rng=np.random.default_rng(3), format="csr")
    m = sp.csr_array(m)
    m.indices, m.indptr = m.indices.astype(dtype), m.indptr.astype(dtype)
    return m


def _agrees(fres: Any, m: Any) -> None:
    x = np.random.default_rng(9).standard_normal(m.shape[1])
    np.testing.assert_allclose(fres(x), m @ x, rtol=1e-12, atol=1e-12)


class Unroller:
    """A refiner that unrolls the row's loop by 2 on a copy and remembers its calls."""

    def __init__(self, factor: int | None = 2) -> None:
        self.factor = factor
        self.calls: list[dict[str, Any]] = []

    def __call__(self, comp: Computation, args: Any, budget: float, **kw: Any) -> Any:
        self.calls.append({"comp": comp, "args": dict(args), "budget": budget, **kw})
        copy = comp.clone()
        if self.factor:
            copy.stmt("spmv").unroll("k", self.factor)
        return types.SimpleNamespace(comp=copy)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_refine_gets_the_winner_and_its_arguments_and_the_result_is_right(
    tmp_path: Path, index_dtype: type
) -> None:
    m = _matrix(index_dtype)
    unroll = Unroller()
    fres = spf.formats.tune(m, budget=ROOMY, space=CSR_ONLY, seed=0, threads=1,
                            record_dir=tmp_path, refine=unroll)  # fmt: skip
    (call,) = unroll.calls
    assert call["comp"].name == fres.comp.name
    assert len(call["comp"].trace) == 0
    assert {"y", "x", "A", "col", "rowptr"} <= set(call["args"])
    assert call["args"]["col"].dtype == index_dtype
    assert 0 < call["budget"] <= ROOMY
    assert call["seed"] == 0
    assert call["threads"] == 1
    assert call["progress"] is False
    entry = fres.history[-1]
    assert entry["candidate"] == "CSR serial + refine"
    assert entry["commands"][0]["command"] == "Unroll"
    assert entry["status"] in ("chosen", "measured")
    assert entry["time"] > 0
    assert [h["status"] for h in fres.history].count("chosen") == 1
    if entry["status"] == "chosen":  # the unrolled loop timed faster on this machine
        assert 'unroll("k", 2)' in fres.commands
        assert fres.tried == 2
    else:
        assert fres.tried == 2, "the refinement was measured, and counts"
        assert fres.commands == ""
        assert "slower than CSR serial" in entry["reason"]
    _agrees(fres, m)


def test_a_recorded_refinement_is_replayed_without_measuring(tmp_path: Path) -> None:
    m = _matrix()
    first = spf.formats.tune(m, budget=ROOMY, space=CSR_ONLY, seed=0, threads=1,
                             record_dir=tmp_path, refine=Unroller())  # fmt: skip
    again_refiner = Unroller()
    again = spf.formats.tune(m, budget=ROOMY, space=CSR_ONLY, seed=0, threads=1,
                             record_dir=tmp_path, refine=again_refiner)  # fmt: skip
    assert again.reused
    assert not again_refiner.calls
    assert again.comp.trace == first.comp.trace
    assert again.commands == first.commands
    _agrees(again, m)
    plain = spf.formats.tune(m, budget=ROOMY, space=CSR_ONLY, seed=0, threads=1,
                             record_dir=tmp_path)  # fmt: skip
    assert not plain.reused, "a search without refine= has its own record"


def test_a_refiner_that_adds_nothing_keeps_the_winner(tmp_path: Path) -> None:
    fres = spf.formats.tune(_matrix(), budget=ROOMY, space=CSR_ONLY, threads=1,
                            record_dir=tmp_path, refine=Unroller(None))  # fmt: skip
    assert fres.history[-1]["reason"] == "no faster schedule found"
    assert fres.history[-1]["status"] == "measured"
    assert fres.commands == ""


def test_refine_with_spf_tunes_schedule_search(tmp_path: Path) -> None:
    space = {k: [] for k in spf.tuning.default_space()} | {"unroll": [2], "threads": [1]}
    refine = functools.partial(spf.tuning.tune_schedule, space=space, max_trials=1)
    m = _matrix()
    fres = spf.formats.tune(m, budget=ROOMY, space=CSR_ONLY, threads=1, record_dir=tmp_path,
                            refine=refine)  # fmt: skip
    entry = fres.history[-1]
    assert entry["status"] in ("chosen", "measured")
    assert entry["commands"] or entry["reason"].startswith("no faster schedule found")
    _agrees(fres, m)


def test_refine_leaves_no_time_on_a_spent_budget(tmp_path: Path) -> None:
    unroll = Unroller()
    fres = spf.formats.tune(_matrix(), budget=1e-3, space=CSR_ONLY, threads=1,
                            record_dir=tmp_path, refine=unroll)  # fmt: skip
    assert not unroll.calls
    assert fres.history[-1]["status"] == "not measured"
    assert fres.history[-1]["reason"].startswith("budget spent")


def test_refine_must_be_callable(tmp_path: Path) -> None:
    with pytest.raises(spf.SpfError, match="refine must be a schedule search"):
        spf.formats.tune(_matrix(), space=CSR_ONLY, record_dir=tmp_path, refine="tune")  # type: ignore[arg-type]


def test_progress_is_logged_without_a_terminal_and_a_bar_when_asked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    space = {"CSR": [()], "ELL": [()], "schedules": ["serial"]}
    with caplog.at_level(logging.INFO, logger="spf"):
        spf.formats.tune(_matrix(), budget=ROOMY, space=space, threads=1, record_dir=tmp_path)
    assert any("formats.tune: " in r.message and " measured, best " in r.message
               for r in caplog.records)  # fmt: skip
    caplog.clear()
    capsys.readouterr()
    with caplog.at_level(logging.INFO, logger="spf"):
        spf.formats.tune(_matrix(), budget=ROOMY, space=space, threads=1, reuse=False,
                         record_dir=tmp_path, progress=True)  # fmt: skip
    assert "formats.tune 120x90" in capsys.readouterr().err
    assert not any(" measured, best " in r.message for r in caplog.records)

"""spf.formats.tune: the chosen format's SpMV equals scipy's on banded, skewed, random, empty
and one-row matrices with int32 and int64 indices; padding prunes; records are reused
without compiling; a wrong kernel is an error, never a choice.

Small matrices, small spaces and tiny budgets: the kernels come from spf's build cache after
the first run, so the file stays fast."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.sparse
from spf.runtime.kernel import Kernel

if TYPE_CHECKING:
    from pathlib import Path

SERIAL = {"CSR": [()], "DIA": [()], "ELL": [()], "BDIA": [(4,)], "schedules": ["serial"]}
ROOMY = 120.0  # room to compile every candidate on a cold build cache and a busy machine;
# the timed rounds are capped by count, so with the cache warm a call takes about a second


def _band(n: int) -> sp.csr_array:
    rng = np.random.default_rng(5)
    offsets = (-3, -1, 0, 1, 4)
    return sp.csr_array(sp.diags_array([rng.random(n - abs(d)) for d in offsets], offsets=offsets))


def _dense_row(n: int) -> sp.csr_array:
    m = sp.lil_array(sp.random_array((n, n), density=0.02, rng=np.random.default_rng(2)))
    m[n // 2, :] = 1.0
    return sp.csr_array(m)


def _agrees(fres: Any, m: Any) -> None:
    x = np.random.default_rng(9).standard_normal(m.shape[1])
    np.testing.assert_allclose(fres(x), m @ x, rtol=1e-12, atol=1e-12)


def _statuses(fres: Any) -> dict[str, str]:
    return {h["candidate"]: h["status"] for h in fres.history}


def test_banded_matrix_tries_dia_and_bdia(tmp_path: Path) -> None:
    m = _band(400)
    fres = spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=0, record_dir=tmp_path)
    status = _statuses(fres)
    assert status["DIA serial"] in ("measured", "chosen")
    assert status["BDIA(4) serial"] in ("measured", "chosen")
    assert fres.tried == 4
    assert fres.baseline_time > 0
    assert fres.speedup == pytest.approx(fres.baseline_time / fres.time)
    _agrees(fres, m)


def test_one_dense_row_prunes_ell_and_the_choice_is_right(tmp_path: Path) -> None:
    m = _dense_row(150)
    fres = spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=0, record_dir=tmp_path)
    ell = next(h for h in fres.history if h["candidate"] == "ELL serial")
    assert ell["status"] == "pruned"
    assert ell["reason"].startswith("padding")
    assert fres.format.name != "ELL"
    _agrees(fres, m)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_random_matrices_chosen_kernel_equals_scipy(tmp_path: Path, index_dtype: str) -> None:
    rng = np.random.default_rng(17)
    for shape in ((57, 43), (1, 30), (64, 64)):
        m = sp.random_array(shape, density=0.1, rng=rng, format="csr")
        if index_dtype == "int64":
            m.indices, m.indptr = m.indices.astype(np.int64), m.indptr.astype(np.int64)
        space = {"CSR": [()], "SELL": [(4, 1)], "BCSR": [(2, 2)], "schedules": ["serial"]}
        fres = spf.formats.tune(m, budget=ROOMY, space=space, seed=1, record_dir=tmp_path)
        assert fres.index_dtype == index_dtype
        assert all(a.dtype == np.dtype(index_dtype) for a in fres.args.values()
                   if isinstance(a, np.ndarray) and a.dtype.kind == "i")  # fmt: skip
        _agrees(fres, m)
        y = np.zeros(fres.kernel_shape[0])  # the kernel called directly with fres.args
        x = np.zeros(fres.kernel_shape[1])
        x[: shape[1]] = 1.0
        fres.kernel(y=y, x=x, **fres.args)
        np.testing.assert_allclose(y[: shape[0]], m @ np.ones(shape[1]), rtol=1e-12)


def test_parallel_schedules_are_measured_and_right(tmp_path: Path) -> None:
    m = sp.csr_array(spf.sparse.poisson2d(20))
    space = {"CSR": [()], "SELL": [(4, 1)], "schedules": ["serial", "parallel"]}
    fres = spf.formats.tune(m, budget=ROOMY, space=space, seed=2, threads=2, record_dir=tmp_path)
    assert _statuses(fres)["CSR parallel"] in ("measured", "chosen")
    assert fres.threads == 2
    _agrees(fres, m)


def test_reuse_returns_the_record_without_compiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = _band(300)
    first = spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=0, record_dir=tmp_path)
    record = json.loads(first.record.read_text())  # plain readable JSON
    chosen = next(h for h in first.history if h["status"] == "chosen")
    assert record["choice"] == {k: chosen[k] for k in ("family", "params", "schedule")}
    assert record["key"]["pattern_sha256"]
    assert record["key"]["index_dtype"] == "int32"
    assert [h["candidate"] for h in record["history"]] == [h["candidate"] for h in first.history]

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("reuse compiled a kernel")

    monkeypatch.setattr(Kernel, "build", no_build)
    values = m.copy()
    values.data = values.data * 3.0  # same pattern, other values: the record applies
    again = spf.formats.tune(values, budget=ROOMY, space=SERIAL, seed=0, record_dir=tmp_path)
    assert again.reused
    assert not first.reused
    assert again.format is first.format
    assert again.schedule == first.schedule
    assert again.time == first.time
    assert again.history == first.history
    assert again.conversion_time > 0
    _agrees(again, values)


def test_reuse_false_and_another_space_measure_again(tmp_path: Path) -> None:
    m = _band(200)
    first = spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=0, record_dir=tmp_path)
    again = spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=0, reuse=False,
                             record_dir=tmp_path)  # fmt: skip
    other = spf.formats.tune(m, budget=ROOMY, space={"CSR": [()], "schedules": ["serial"]},
                             record_dir=tmp_path)  # fmt: skip
    assert not again.reused
    assert not other.reused
    assert other.format.name == "CSR"
    assert first.record != other.record


def test_tiny_budget_measures_the_baseline_and_the_first_candidate(tmp_path: Path) -> None:
    m = _band(100)
    fres = spf.formats.tune(m, budget=1e-3, space=SERIAL, record_dir=tmp_path)
    assert fres.tried == 2
    status = [h["status"] for h in fres.history]
    first = next(h for h in fres.history if h["candidate"] != "CSR serial")
    assert first["status"] in ("measured", "chosen")  # the model's first pick
    assert status.count("not measured") == len(status) - 2
    assert {h["reason"] for h in fres.history if h["status"] == "not measured"} == {"budget spent"}
    _agrees(fres, m)


@pytest.mark.parametrize("shape", [(0, 0), (5, 7), (0, 4)])
def test_empty_matrix_is_csr_without_search(tmp_path: Path, shape: tuple[int, int]) -> None:
    m = sp.csr_array(shape)
    fres = spf.formats.tune(m, budget=5.0, record_dir=tmp_path)
    assert fres.format.name == "CSR"
    assert fres.tried == 1
    assert fres.history[0]["reason"] == "no stored entries: nothing to choose"
    np.testing.assert_array_equal(fres(np.ones(shape[1])), np.zeros(shape[0]))


def test_one_row_matrix(tmp_path: Path) -> None:
    m = sp.csr_array(np.array([[0.0, 2.0, 0.0, -1.0, 5.0]]))
    fres = spf.formats.tune(m, budget=ROOMY, space=SERIAL, record_dir=tmp_path)
    _agrees(fres, m)


def test_a_wrong_kernel_is_an_error_not_a_choice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = spf.sparse.format_args

    def corrupt(matrix: object, fmt: Any, index_dtype: object = None) -> dict[str, Any]:
        args = real(matrix, fmt, index_dtype)
        if fmt.name == "DIA":
            args["A"] = args["A"] * (1.0 + 1e-6)
        return args

    monkeypatch.setattr(spf.sparse, "format_args", corrupt)
    with pytest.raises(spf.SpfError, match=r"DIA serial computed y\[\d+\].*beyond round-off"):
        spf.formats.tune(_band(80), budget=ROOMY, space=SERIAL, record_dir=tmp_path)


@pytest.mark.parametrize(
    "damage",
    [
        lambda r: r.pop("choice"),
        lambda r: r["choice"].update(family="XYZ"),
        lambda r: r["choice"].update(params=5),
        lambda r: r["choice"].update(family="SELL", params=[-3, 1]),
        lambda r: r.update(time=None),
        lambda r: r.update(history=5),
    ],
)
def test_a_damaged_record_is_an_error_that_names_it(tmp_path: Path, damage: Any) -> None:
    """A record whose key matches but whose choice or numbers are damaged is an SpfError
    naming the file, never a raw KeyError / TypeError or a VerifyError of a made-up name."""
    m = _band(60)
    first = spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=0, record_dir=tmp_path)
    record = json.loads(first.record.read_text())
    damage(record)
    first.record.write_text(json.dumps(record))
    with pytest.raises(spf.SpfError, match=r"the record .*\.json is damaged .*reuse=False"):
        spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=0, record_dir=tmp_path)


def test_calling_the_result_checks_y(tmp_path: Path) -> None:
    """``fres(x, y)`` refuses a ``y`` of another shape or dtype with an SpfError: a square
    ``y`` was broadcast into every row (a silent wrong result), an int or short ``y`` a raw
    numpy error."""
    m = _band(40)
    fres = spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=0, record_dir=tmp_path)
    x = np.ones(40)
    for y, message in (
        (np.zeros((40, 40)), r"y must be a writeable float64 array of shape \(40,\)"),
        (np.zeros(3), r"y must be a writeable float64 array of shape \(40,\)"),
        (np.zeros(40, dtype=np.int64), r"y must be a writeable float64 array of shape \(40,\)"),
        ([0.0] * 40, r"y must be a writeable float64 array of shape \(40,\)"),
        (np.broadcast_to(np.zeros(1), (40,)), r"got float64 \(40,\) read-only"),
    ):
        with pytest.raises(spf.SpfError, match=message):
            fres(x, y)
    with pytest.raises(spf.SpfError, match="x must be real"):
        fres(x + 1j)
    y = np.ones(40)
    assert fres(x, y) is y
    np.testing.assert_allclose(y, 1.0 + m @ x, rtol=1e-12)


def test_a_matrix_with_nan_and_inf_entries_is_tuned_not_reported_as_a_bug(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    """scipy's ``A @ x`` is NaN / inf in those rows too: the candidates agree with it there
    (NaN where NaN, the same infinities), which was an InternalError 'spf generated a wrong
    kernel' (any non-finite y was refused) and a RuntimeWarning from ``inf - inf``."""
    m = sp.lil_array(_band(50))
    m[3, 4], m[7, 7], m[9, 2], m[9, 3] = np.nan, np.inf, np.inf, -np.inf
    m = sp.csr_array(m)
    fres = spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=0, record_dir=tmp_path)
    x = np.random.default_rng(9).standard_normal(50)
    np.testing.assert_array_equal(np.isnan(fres(x)), np.isnan(m @ x))
    finite = np.isfinite(m @ x)
    np.testing.assert_allclose(fres(x)[finite], (m @ x)[finite], rtol=1e-12, atol=1e-12)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_numpy_scalars_are_numbers_and_a_bad_seed_is_an_spf_error(tmp_path: Path) -> None:
    """numpy scalars were refused (budget, threads) or a raw TypeError of random.Random
    (seed); a seed that is no int is an SpfError."""
    m = _band(30)
    fres = spf.formats.tune(m, budget=np.int64(120), space=SERIAL, seed=np.int64(0),
                            threads=np.int64(1), record_dir=tmp_path)  # fmt: skip
    _agrees(fres, m)
    with pytest.raises(spf.SpfError, match="seed must be an int or None"):
        spf.formats.tune(m, budget=ROOMY, space=SERIAL, seed=[1], record_dir=tmp_path)

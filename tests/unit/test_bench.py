"""spf.bench: the benchmark driver (``spf bench`` / ``make bench``) keeps working."""

from __future__ import annotations

import json
from contextlib import nullcontext
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

import spf.bench as bench
from spf.bench import BENCHMARKS, main, scale, tune_dense
from spf.bench import tune as tune_bench
from spf.bench.common import QUICK, Section

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@pytest.fixture(autouse=True)
def shared_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel_cache_factory: Callable[[str], Path]
) -> None:
    """The bench's working folder (a new temporary one per run) gets build caches that share
    the test run's compiled kernels (``kernels``: the benchmarks' own, ``helper``: the
    triad and thread-control library): each benchmark builds ``spmv_csr``, the helper
    library and the like in a folder of its own, so every quick run compiled them again.
    The folders where a benchmark measures a cold compile (``compile-own``, ``fresh-cache``,
    the wavefront probes' own) stay empty and private, as do its search records."""
    work = tmp_path / "bench-work"
    work.mkdir()
    for cache in ("kernels", "helper"):
        (work / cache).symlink_to(kernel_cache_factory(f"bench-{cache}"), target_is_directory=True)
    monkeypatch.setattr(
        bench, "tempfile", SimpleNamespace(TemporaryDirectory=lambda prefix: nullcontext(work))
    )


def test_section_table_and_targets() -> None:
    sec = Section("x")
    sec.table(["code", "ms"], [["spf", "1.0"]])
    sec.target("t", "0.9x", True)
    assert sec.markdown[:3] == ["| code | ms |", "|---|---:|", "| spf | 1.0 |"]
    assert sec.targets == [{"target": "t", "measured": "0.9x", "met": True, "note": ""}]


def test_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--only", "nonexistent"])
    assert main(["--threads", "2", "--only", "sets"]) == 2
    assert "--threads must include 1" in capsys.readouterr().err


def test_sets_quick_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert main(["--quick", "--only", "sets", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| parse SpMV domain |" in text
    doc = json.loads(out.read_text())
    assert doc["quick"]
    assert "sets" in doc["benchmarks"]


def test_polybench_quick_reports_codegen_targets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spf.bench.polybench import QUICK as FEW

    out = tmp_path / "pb.json"
    assert main(["--quick", "--only", "polybench", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "### PolyBench/C 4.2" in text
    assert "PolyBench codegen total <= 15 s" in text
    data = json.loads(out.read_text())["benchmarks"]["polybench"]["data"]
    assert [r["kernel"] for r in data["rows"]] == list(FEW)
    assert data["total_s"] == pytest.approx(sum(r["seconds"] for r in data["rows"]))
    assert data["worst"] in FEW
    assert all(r["cpu_s"] > 0 for r in data["rows"])


# What each benchmark's quick run must print (a heading of its section, a row name).
_PRINTS: dict[str, tuple[str, ...]] = {
    "spmv": ("### SpMV", "spf SELL-8-256"),
    "gemm": ("### DGEMM",),
    "blur": ("### Two-stage blur",),
    "sptrsv": (
        "### Forward solve",
        "forward solve: spf <= 1.05x serial hand C (the calling thread's CPU time)",
        "| spf wavefront auto (levels forced) | 2",
        "auto's levels plan forced",
    ),
    "pcg": ("### PCG, ILU(0)", "| spf PCG | 1 |", "| scipy cg | 1 |"),
    "overhead": ("call overhead",),
    "polybench": ("### PolyBench",),
    "tensor": (
        "### SpAdd C = A + B (CSR), 2-D Poisson",
        "### SpGEMM C = A·B (CSR), random",
        "| scipy A@B + sort_indices() | 1 |",
        "| spf einsum, rows unsorted | 1 |",
        "spf einsum (rows sorted) at 1 thread <= 1.0x scipy A@B + sort_indices() (CPU time)",
        "spf einsum, rows unsorted at 1 thread <= 1.0x scipy A@B (CPU time)",
        "spf einsum at 1 thread <= 1.0x scipy A+B (CPU time)",
        "| spf einsum, checked | 1 |",
        "spf einsum, checked at 1 thread <= 1.0x scipy A+B (CPU time)",
        "spf einsum, checked (rows sorted) at 1 thread <= 1.0x scipy A@B + sort_indices()",
        "CPU time of one call on the calling thread at 1 thread",
        "| SpGEMM_unsorted |",
        "### MTTKRP, power-law B",
        "| MLIR sparsifier |",
        "| Finch | - |",
    ),
    "tune": ("### SpMV: formats.tune", "### GEMM n=128", "### PolyBench: spf.tune"),
}


def _formats_reports_every_format(text: str, doc: dict[str, Any]) -> None:
    """formats: SpMV per built-in format vs hand C, conversions vs scipy (the bench runs its
    SpMV at 1 thread whatever ``--threads`` says)."""
    for fmt in ("COO", "CSR", "CSC", "DIA", "ELL", "BCSR2x2", "SELL8_1"):
        assert f"spmv({fmt}) <= 1.10x hand C" in text, fmt
    assert "convert(COO, CSR) <= 1.0x scipy" in text
    assert "SELL(8, 32) inspector from the relation <= 1.0x the hand-written" in text
    assert len(doc["benchmarks"]["formats"]["data"]["spmv_median_ms"]) == 14


def _overhead_times_a_fresh_interpreter(text: str, doc: dict[str, Any]) -> None:
    """overhead: the import and the warm compile are timed in child processes, with their
    target."""
    assert "| `import spf` |" in text
    assert "warm compile, import excluded" in text
    (target,) = [
        t
        for t in doc["targets"]
        if t["target"].startswith("compile warm in a fresh interpreter <= 20 ms")
    ]
    assert {"measured", "met"} <= set(target)
    data = doc["benchmarks"]["overhead"]["data"]["fresh_interpreter_s"]
    assert 0 < data["compile"] < data["build_and_compile"]
    assert not any(r["sympy_at_import"] for r in data["runs"])


def _analysis_probes_a_fresh_interpreter(text: str, doc: dict[str, Any]) -> None:
    """analysis: each probe times ``wavefront`` and ``compile`` in a fresh interpreter."""
    assert "### Wavefront generation, cold" in text
    for kernel in ("ilu0_csr", "gauss_seidel_csr", "sptrsv_csr"):
        runs = doc["benchmarks"]["analysis"]["data"][kernel]["runs"]["wavefront"]
        assert runs, kernel
        for got in runs:
            assert set(got) == {
                "wall_s", "cpu_s", "wavefront_wall_s", "wavefront_cpu_s", "import_wall_s",
                "import_cpu_s", "executor_wall_s", "executor_cpu_s", "threads",
            }  # fmt: skip
            assert got["threads"] in (0, 1)  # one CPU: no BLAS worker (0: not listed)
            assert got["executor_cpu_s"] > 0  # the executor's deferred C compile
            assert 0 < got["wavefront_cpu_s"] < got["cpu_s"]
            assert got["import_cpu_s"] > 0
            assert 0 < got["wavefront_wall_s"] < got["wall_s"]


_TUNE_BUDGETS = (
    tune_bench.BUDGET_S,
    tune_dense.GEMM_BUDGET_S,
    tune_dense.BLUR_BUDGET_S,
    tune_dense.POLYBENCH_BUDGET_S,
)
"""The ``tune`` benchmark's search budgets, by ``quick``."""


# What a benchmark's quick run must show beyond its needles (its output text, its JSON).
_CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "formats": _formats_reports_every_format,
    "overhead": _overhead_times_a_fresh_interpreter,
    "analysis": _analysis_probes_a_fresh_interpreter,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_runs_quick(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One benchmark per test, so that the workers of a parallel run share them out."""
    if name == "scale":
        # part ``wavefront`` of ``scale`` is ``analysis``'s code (scale_wavefront.run), whose
        # own run here checks it: the two would time the same six fresh interpreters
        monkeypatch.setattr(scale, "PARTS", tuple(p for p in scale.PARTS if p != "wavefront"))
    if name == "tune":
        # on an idle machine its quick run lasts its search budgets (~31 s in all; the suite's
        # slowest test, 29 s; at half of each still 18.4 s on an idle machine, 142 s of wall on
        # a loaded one): a quarter of each still times every baseline (a search always does,
        # whatever its budget) and prints every table
        for budgets in _TUNE_BUDGETS:
            monkeypatch.setitem(budgets, True, budgets[True] / 4)
    out = tmp_path / "one.json"
    assert QUICK.quick
    assert main(["--quick", "--only", name, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert set(doc["benchmarks"]) == {name}
    targets = ("## Targets",) if doc["targets"] else ()
    for needle in (f"## {name}", *_PRINTS.get(name, ()), *targets):
        assert needle in text, needle
    assert all({"target", "measured", "met"} <= set(t) for t in doc["targets"])
    if name in _CHECKS:
        _CHECKS[name](text, doc)


def test_every_printed_needle_names_a_benchmark() -> None:
    assert set(_PRINTS) <= set(BENCHMARKS)
    assert set(_CHECKS) <= set(BENCHMARKS)


def test_json_that_cannot_be_written_is_refused_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json DIR`` (or under a file) failed with a traceback after the whole run."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    for target in (tmp_path, blocker / "r.json"):
        assert main(["--quick", "--only", "sets", "--json", str(target)]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith(f"spf bench: error: --json {str(target)!r}: ")
        assert "Traceback" not in err

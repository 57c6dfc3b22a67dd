"""``spf bench --only analysis`` / part ``wavefront`` of ``--only scale``: wavefront generation
timed in fresh interpreters, with the targets of API.md §16 (what a probe measures is checked
on ``test_bench.py``'s quick run of ``analysis``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import spf
from spf.bench import BENCHMARKS, scale, scale_wavefront
from spf.bench.common import QUICK, Context, Runtime, progress

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_the_probe_times_this_spf_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PYTHONPATH": scale_wavefront._search_path()}
    done = subprocess.run(
        [sys.executable, "-c", "import spf; print(spf.__file__)"],
        capture_output=True, text=True, env=env, check=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.stdout.strip() == os.path.abspath(spf.__file__)


def test_the_section_reports_every_kernel_with_its_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seconds = {"ilu0_csr": 4.0, "gauss_seidel_csr": 1.5, "sptrsv_csr": 0.5}

    def fake(kernel: str, mode: str) -> dict[str, float]:
        s = seconds[kernel] if mode == "wavefront" else 0.1
        return {
            "wall_s": s, "cpu_s": s, "wavefront_wall_s": s / 2, "wavefront_cpu_s": s / 2,
            "import_wall_s": 0.75, "import_cpu_s": 0.75,
            "executor_wall_s": 0.25, "executor_cpu_s": 0.25,
        }  # fmt: skip

    monkeypatch.setattr(scale_wavefront, "probe", fake)
    monkeypatch.setattr(scale_wavefront, "compile_bytecode", lambda: True)
    ctx = Context(QUICK, Runtime(str(tmp_path / "helper")), [1], tmp_path, progress)
    sec = scale_wavefront.run(ctx, "analysis")
    text = "\n".join(sec.markdown)
    assert "| ILU(0) | 0.75 | 2.00 | 2.00 | 4.00 | 4.00 | 4.75 | 0.25 | 0.10 | 0.10 |" in text
    assert "bytecode compiled first" in text
    # judged with the import: Gauss-Seidel's 1.5 s + 0.75 s misses its 2 s
    verdicts = {t["target"].split(":")[0]: t["met"] for t in sec.targets}
    assert verdicts == {"ILU(0)": True, "Gauss-Seidel": False, "SpTRSV": False}
    assert sec.data["sptrsv_csr"]["wavefront_compile_cpu_s"] == 0.5
    assert sec.data["sptrsv_csr"]["cold_cpu_s"] == 1.25
    # the executor's build, deferred to its first run, is shown beside the target, not in it
    assert sec.data["sptrsv_csr"]["executor_cpu_s"] == 0.25
    assert all("+0.25 s CPU" in t["note"] for t in sec.targets)


def test_the_bench_compiles_this_spfs_bytecode_as_an_install_does() -> None:
    assert scale_wavefront.compile_bytecode()
    folder = os.path.join(os.path.dirname(os.path.abspath(spf.__file__)), "__pycache__")
    assert any(name.startswith("kernels.") for name in os.listdir(folder))


def test_analysis_is_a_benchmark_and_wavefront_a_part_of_scale() -> None:
    assert "analysis" in BENCHMARKS
    assert "wavefront" in scale.PARTS


def test_a_probe_runs_on_one_cpu_where_numpy_starts_no_spinning_blas_thread(
    tmp_path: Path,
) -> None:
    # on 2+ CPUs numpy's OpenBLAS starts a worker per other CPU, which spins ~0.1 s of CPU
    # after the import: counted in the probe's CPU seconds, a cost no one-core run has
    env = {
        **os.environ,
        "SPF_CACHE_DIR": str(tmp_path),
        "PYTHONPATH": scale_wavefront._search_path(),
    }
    done = subprocess.run(
        [sys.executable, "-c", scale_wavefront.PROBE, "sptrsv_csr", "codegen"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if hasattr(os, "sched_getaffinity") and os.path.isdir("/proc/self/task"):
        assert out["threads"] == 1

"""``spf bench --only mpi`` against PETSc: reading the jobs' output and the "not installed"
path (no MPI job runs here; the quick bench itself runs in test_bench.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from spf.bench import mpi
from spf.bench.common import Section
from spf.bench.petsc_mpi import PREFIX

if TYPE_CHECKING:
    from pathlib import Path

SPF: dict[str, Any] = {
    "spmv_ms": 2.1,
    "setup_ms": 30.0,
    "received": [1000, 1000],
    "cg_iterations": 1600,
    "cg_ms_per_iteration": 5.0,
    "cg_residual": 9e-9,
}
PETSC: dict[str, Any] = {
    "petsc_version": "3.18.5",
    "ranks": 2,
    "assembly_ms": 60.0,
    "matmult_ms": 2.0,
    "ghosts": [1000, 1000],
    "cg_iterations": 1600,
    "cg_ms_per_iteration": 5.0,
    "cg_converged": True,
    "cg_residual": 9e-9,
}


def test_parse_reads_the_last_prefixed_json_line() -> None:
    out = f"noise\n{PREFIX}{json.dumps({'a': 1})}\nmore\n{PREFIX}{json.dumps(PETSC)}\n"
    assert mpi.parse(out, PREFIX) == PETSC
    assert mpi.parse("no result here\n", PREFIX) is None
    assert mpi.parse(None, PREFIX) is None


def test_petsc_job_without_petsc4py_says_not_installed(tmp_path: Path) -> None:
    python = tmp_path / "python3"
    python.write_text("#!/bin/sh\nexit 1\n")  # an interpreter that cannot import petsc4py
    python.chmod(0o755)
    npz = tmp_path / "m.npz"
    assert mpi.petsc_job(npz, 3, True, python=str(python)) == {"skipped": mpi.NOT_INSTALLED}
    missing = str(tmp_path / "no-such-python")
    assert mpi.petsc_job(npz, 3, True, python=missing) == {"skipped": mpi.NOT_INSTALLED}


def test_report_without_petsc_prints_why_and_sets_no_target() -> None:
    sec = Section("mpi")
    mpi.report(sec, "poisson", "2-D Poisson", SPF, {"skipped": mpi.NOT_INSTALLED})
    text = "\n".join(sec.markdown)
    assert "PETSc: not installed (apt-get install python3-petsc4py-real)" in text
    assert "| spf distribute_rows | 1000 | 2.100 | 30.0 |" in text
    assert sec.targets == []


def test_report_compares_counts_ratios_and_iterations() -> None:
    sec = Section("mpi")
    sec.data["poisson"] = {}
    mpi.report(sec, "poisson", "2-D Poisson", SPF, PETSC)
    verdicts = {t["target"]: t for t in sec.targets}
    assert verdicts["poisson: entries exchanged per product equal PETSc's, on every rank"]["met"]
    spmv = verdicts["poisson: time per product <= 1.1x PETSc's MatMult"]
    assert spmv["measured"].startswith("1.05x")
    assert spmv["met"]
    assert verdicts["poisson: CG time per iteration <= 1.2x PETSc's KSPCG"]["met"]
    assert verdicts["poisson: CG iteration count equals PETSc's"]["met"]
    fewer = dict(PETSC, ghosts=[999, 1000], cg_iterations=1599)
    sec = Section("mpi")
    sec.data["poisson"] = {}
    mpi.report(sec, "poisson", "2-D Poisson", SPF, fewer)
    missed = [t["target"] for t in sec.targets if not t["met"]]
    assert missed == [
        "poisson: entries exchanged per product equal PETSc's, on every rank",
        "poisson: CG iteration count equals PETSc's",
    ]


def test_combine_takes_the_median_over_the_jobs_that_ran() -> None:
    jobs = [dict(SPF, spmv_ms=t) for t in (3.0, 1.0, 2.0)]
    out = mpi.combine([*jobs, {"skipped": "spf job failed"}])
    assert out["spmv_ms"] == 2.0
    assert out["spmv_ms_jobs"] == [3.0, 1.0, 2.0]
    assert out["cg_iterations"] == SPF["cg_iterations"]
    assert mpi.spread(out, "spmv_ms", 1) == "2.0 (1.0-3.0)"
    assert mpi.combine([{"skipped": mpi.NOT_INSTALLED}]) == {"skipped": mpi.NOT_INSTALLED}


def test_fastest_products_are_the_least_of_all_jobs_and_shown_as_a_ratio() -> None:
    ours = mpi.combine([dict(SPF, spmv_fastest_ms=t) for t in (3.0, 1.5, 2.0)])
    theirs = mpi.combine([dict(PETSC, matmult_fastest_ms=t) for t in (1.25, 2.0)])
    assert (ours["spmv_fastest_ms"], theirs["matmult_fastest_ms"]) == (1.5, 1.25)
    sec = Section("mpi")
    sec.data["poisson"] = {}
    mpi.report(sec, "poisson", "2-D Poisson", ours, theirs)
    text = "\n".join(sec.markdown)
    assert "Fastest product of all jobs: spf 1.500 ms, PETSc 1.250 ms (1.20x)." in text
    assert sec.data["poisson"]["spmv_fastest_ratio"] == 1.2
    assert not [t for t in sec.targets if "fastest" in t["target"].lower()]  # not judged

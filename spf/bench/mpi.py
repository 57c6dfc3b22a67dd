"""Distributed sparse loops on 2 MPI ranks (API.md §19) against PETSc (issue 32, "Measured").

Two matrices, written once to ``.npz`` files (CSR, the block row partition, a random vector)
that both sides load: 2-D Poisson (``poisson_grid``\\ :sup:`2` rows) and a uniform random
matrix (``random_rows`` rows, ``random_nnz`` entries, the SpMV bench's seed).

* spf (one ``mpiexec -n 2`` job with the venv's python, :func:`spf.mpi.run`, one OpenMP
  thread per rank): ``spf.kernels.spmv_csr()`` with ``distribute_rows``; on Poisson also the
  whole-block exchange of ``examples/mpi_spmv.py`` (a source checkout), timed interleaved
  with it; and CG as one computation (:mod:`spf.bench.mpi_cg`) to ``||r|| < 1e-8 ||b||``.
* PETSc (:mod:`spf.bench.petsc_mpi`, its own ``mpiexec -n 2`` job with the *system* python
  and Debian's ``python3-petsc4py-real``): ``MatMult`` on an ``MPIAIJ`` matrix of the same
  rows, and ``KSPCG`` without a preconditioner to rtol 1e-8. When the system python cannot
  import petsc4py, PETSc's column says so and the rest goes on.

A timed product is ``Barrier; t0; product; t1`` and counts as the slowest rank's ``t1 - t0``;
medians over the rounds; the fastest product of all jobs (each side's least disturbed one: on
a loaded machine a product's median is mostly how long a rank waits for its peer to be
scheduled) is shown next to it, not judged. Entries exchanged per product:
``kernel.exchange_stats()`` for spf, the distinct off-process columns of the rank's rows
(the off-diagonal block's columns, what ``MatMult``'s scatter receives) for PETSc. spf's
setup is the inspector and the exchange plan (a call with new index arrays, less a
product); PETSc's the matrix assembly from the same CSR arrays (which also builds
``MatMult``'s scatter), the second of two. Two ranks on a 2-core machine shared with other
work: the times are noisy.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spf.bench.common import Context, Section

RANKS = 2
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SYSTEM_PYTHON = "/usr/bin/python3"
NOT_INSTALLED = "PETSc: not installed (apt-get install python3-petsc4py-real)"
TARGET_SPMV, TARGET_CG = 1.1, 1.2
JOB_PAIRS = 3


def write_matrices(ctx: Context) -> dict[str, tuple[str, Path]]:
    """The two matrices as ``.npz`` files both sides load: name -> (description, path)."""
    sp: Any = importlib.import_module("scipy.sparse")  # no type stubs for scipy

    import spf
    from spf.mpi import Partition

    cfg = ctx.cfg
    g, rows, nnz = cfg.poisson_grid, cfg.random_rows, cfg.random_nnz
    rand = sp.random_array(
        (rows, rows), density=nnz / rows**2, format="csr", rng=np.random.default_rng(0)
    )
    out = {}
    for name, what, matrix in (
        ("poisson", f"2-D Poisson {g}x{g}", spf.sparse.poisson2d(g)),
        ("random", f"uniform random, {rows:,} rows", rand),
    ):
        csr = sp.csr_array(matrix)
        csr.sort_indices()
        n = csr.shape[0]
        path = ctx.work / f"mpi_{name}.npz"
        np.savez(
            path,
            indptr=csr.indptr.astype(np.int64),
            indices=csr.indices.astype(np.int64),
            data=csr.data.astype(np.float64),
            cuts=Partition(n, RANKS).cuts(),
            x=np.random.default_rng(2).random(n),
        )
        out[name] = (f"{what} ({n:,} rows, {csr.nnz:,} entries)", path)
    return out


def parse(stdout: str | None, prefix: str) -> dict[str, Any] | None:
    """The JSON of the last ``prefix`` line of a job's output (None when there is none)."""
    found = [ln for ln in (stdout or "").splitlines() if ln.startswith(prefix)]
    if not found:
        return None
    parsed: dict[str, Any] = json.loads(found[-1][len(prefix) :])
    return parsed


def petsc_job(path: Path, rounds: int, cg: bool, python: str = SYSTEM_PYTHON) -> dict[str, Any]:
    """PETSc's numbers for one matrix (:mod:`spf.bench.petsc_mpi`), or ``{"skipped": why}``:
    ``NOT_INSTALLED`` when ``python`` cannot import petsc4py."""
    import subprocess

    from spf.bench import petsc_mpi
    from spf.errors import SpfError
    from spf.mpi import run as mpirun

    try:
        found = subprocess.run(
            [python, petsc_mpi.__file__, "--probe"], capture_output=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return {"skipped": NOT_INSTALLED}
    if found.returncode != 0:
        return {"skipped": NOT_INSTALLED}
    args = [str(path), str(rounds), "1" if cg else "0"]
    try:
        done = mpirun(petsc_mpi.__file__, RANKS, args, timeout=900, python=python, mpi4py=False)
    except SpfError as err:
        return {"skipped": f"PETSc job: {err}"}
    res = parse(done.stdout, petsc_mpi.PREFIX)
    if done.returncode != 0 or res is None:
        return {"skipped": f"PETSc job failed (exit {done.returncode}): {done.stderr[-1500:]}"}
    return res


def spf_job(path: Path, rounds: int, cg: bool, blocks: bool) -> dict[str, Any]:
    """spf's numbers for one matrix (:func:`worker` on each rank), or ``{"skipped": why}``."""
    from spf.errors import SpfError
    from spf.mpi import run as mpirun

    # the ranks import this spf (a source checkout's, not an installed copy), one thread each
    here = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = "1"
    args = [str(path), str(rounds), "1" if cg else "0", "1" if blocks else "0"]
    try:
        done = mpirun(__file__, RANKS, args, timeout=1800, env=env)
    except SpfError as err:
        return {"skipped": f"spf job: {err}"}
    res = parse(done.stdout, "RESULT ")
    if done.returncode != 0 or res is None:
        return {"skipped": f"spf job failed (exit {done.returncode}): {done.stderr[-1500:]}"}
    return res


def run(ctx: Context) -> Section:
    from spf.bench.common import Section, progress

    sec = Section("mpi")
    rounds = max(5, ctx.cfg.spmv_rounds // 2)
    pairs = 1 if ctx.cfg.quick else JOB_PAIRS
    matrices = write_matrices(ctx)
    sec.line(
        f"{RANKS} ranks (block rows, PETSc's default partition), one thread each. spf and "
        f"PETSc run in separate mpiexec jobs, alternated ({pairs} of each per matrix, the "
        f"first with CG); {rounds} products per job, time = slowest rank; a job's median, "
        "then the median over the jobs. Shared 2-core machine: noisy."
    )
    sec.line()
    for name, (what, path) in matrices.items():
        runs: dict[str, list[dict[str, Any]]] = {"spf": [], "petsc": []}
        for pair in range(pairs):
            cg = name == "poisson" and pair == 0
            for side in ("spf", "petsc") if pair % 2 == 0 else ("petsc", "spf"):
                progress(f"mpi: {side} on {name} ({pair + 1}/{pairs})")
                if side == "spf":
                    runs[side].append(spf_job(path, rounds, cg, blocks=cg))
                else:
                    runs[side].append(petsc_job(path, rounds, cg))
        ours, theirs = combine(runs["spf"]), combine(runs["petsc"])
        sec.data[name] = {"spf": ours, "petsc": theirs}
        report(sec, name, what, ours, theirs)
    return sec


def combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One side's jobs on one matrix: the first job's numbers (counts, CG), the times the
    median over the jobs that ran (each job's own list under ``<key>_jobs``)."""
    done = [r for r in runs if "skipped" not in r]
    if not done:
        return runs[0]
    out = dict(done[0])
    for key in ("spmv_ms", "setup_ms", "matmult_ms", "assembly_ms"):
        if key in out:
            out[f"{key}_jobs"] = [r[key] for r in done]
            out[key] = float(np.median(out[f"{key}_jobs"]))
    for key in ("spmv_fastest_ms", "matmult_fastest_ms"):
        if all(key in r for r in done):
            out[key] = min(r[key] for r in done)
    return out


def spread(side: dict[str, Any], key: str, digits: int) -> str:
    """The median, and the jobs' range when there were several."""
    text = f"{side[key]:.{digits}f}"
    jobs = side.get(f"{key}_jobs", [])
    if len(jobs) > 1:
        text += f" ({min(jobs):.{digits}f}-{max(jobs):.{digits}f})"
    return text


def report(
    sec: Section, name: str, what: str, ours: dict[str, Any], theirs: dict[str, Any]
) -> None:
    """One matrix's table and targets."""
    sec.line(f"**{what}**")
    sec.line()
    for side in (ours, theirs):
        if "skipped" in side:
            sec.line(side["skipped"])
            sec.line()
    if "skipped" in ours:
        return
    petsc = "skipped" not in theirs
    if petsc:
        sec.line(f"PETSc {theirs['petsc_version']} (Debian's python3-petsc4py-real).")
        sec.line()
    rows = [["spf distribute_rows", str(max(ours["received"])), spread(ours, "spmv_ms", 3),
             spread(ours, "setup_ms", 1)]]  # fmt: skip
    if "blocks_ms" in ours:
        rows.append(["whole blocks (examples/mpi_spmv.py)", str(ours["blocks_received"]),
                     f"{ours['blocks_ms']:.3f}", ""])  # fmt: skip
    if petsc:
        rows.append(["PETSc MatMult", str(max(theirs["ghosts"])), spread(theirs, "matmult_ms", 3),
                     spread(theirs, "assembly_ms", 1)])  # fmt: skip
    sec.table(
        ["SpMV", "entries received per product (max rank)", "ms per product",
         "setup ms (spf: inspector; PETSc: assembly)"],
        rows,
    )  # fmt: skip
    if not petsc:
        return
    ratio = ours["spmv_ms"] / theirs["matmult_ms"]
    sec.target(
        f"{name}: entries exchanged per product equal PETSc's, on every rank",
        f"spf {ours['received']} vs PETSc {theirs['ghosts']}",
        ours["received"] == theirs["ghosts"],
    )
    sec.target(
        f"{name}: time per product <= {TARGET_SPMV}x PETSc's MatMult",
        f"{ratio:.2f}x ({ours['spmv_ms']:.3f} vs {theirs['matmult_ms']:.3f} ms)",
        ratio <= TARGET_SPMV,
    )
    sec.data[name]["spmv_ratio"] = ratio
    if "spmv_fastest_ms" in ours and "matmult_fastest_ms" in theirs:
        best = ours["spmv_fastest_ms"] / theirs["matmult_fastest_ms"]
        sec.data[name]["spmv_fastest_ratio"] = best
        sec.line(
            f"Fastest product of all jobs: spf {ours['spmv_fastest_ms']:.3f} ms, PETSc "
            f"{theirs['matmult_fastest_ms']:.3f} ms ({best:.2f}x)."
        )
        sec.line()
    sec.data[name]["setup_ratio"] = ours["setup_ms"] / theirs["assembly_ms"]
    if "cg_iterations" not in ours or "cg_iterations" not in theirs:
        return
    cg_ratio = ours["cg_ms_per_iteration"] / theirs["cg_ms_per_iteration"]
    sec.data[name]["cg_ratio"] = cg_ratio
    sec.table(
        ["CG to 1e-8, no preconditioner", "iterations", "ms per iteration", "relative residual"],
        [
            ["spf (one computation per iteration)", str(ours["cg_iterations"]),
             f"{ours['cg_ms_per_iteration']:.3f}", f"{ours['cg_residual']:.1e}"],
            ["PETSc KSPCG", str(theirs["cg_iterations"]), f"{theirs['cg_ms_per_iteration']:.3f}",
             f"{theirs['cg_residual']:.1e}"],
        ],
    )  # fmt: skip
    sec.target(
        f"{name}: CG time per iteration <= {TARGET_CG}x PETSc's KSPCG",
        f"{cg_ratio:.2f}x",
        cg_ratio <= TARGET_CG,
    )
    sec.target(
        f"{name}: CG iteration count equals PETSc's",
        f"spf {ours['cg_iterations']} vs PETSc {theirs['cg_iterations']}",
        ours["cg_iterations"] == theirs["cg_iterations"],
    )


# ---------------------------------------------------------------------------- on every rank


def _timed(
    comm: Any, calls: dict[str, Any], rounds: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Median and fastest ms per call of each, interleaved (the order reversed every other
    round)."""
    from mpi4py import MPI

    times: dict[str, list[float]] = {code: [] for code in calls}
    order = list(calls)
    for r in range(rounds + 2):
        for code in order if r % 2 else reversed(order):
            comm.Barrier()
            t0 = time.perf_counter()
            calls[code]()
            dt = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
            if r >= 2:
                times[code].append(dt)
    medians = {code: float(np.median(ts)) * 1e3 for code, ts in times.items()}
    return medians, {code: float(np.min(ts)) * 1e3 for code, ts in times.items()}


def worker(path: str, rounds: int, cg: bool, blocks: bool) -> None:
    """Runs on each rank; rank 0 prints one ``RESULT {json}`` line."""
    sp: Any = importlib.import_module("scipy.sparse")  # no type stubs for scipy
    from mpi4py import MPI

    import spf
    import spf.mpi
    from spf.bench import mpi_cg

    comm = MPI.COMM_WORLD
    data = np.load(path)
    n = int(data["cuts"][-1])
    matrix = sp.csr_array((data["data"], data["indices"], data["indptr"]), shape=(n, n))
    x = data["x"]
    comp = spf.kernels.spmv_csr()
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    kernel: Any = comp.compile(target="mpi")  # a DistributedKernel (exchange_stats)
    args = spf.mpi.scatter_csr(matrix, comm)
    mine = spf.mpi.owned_rows(n, comm)
    y, xl = np.zeros(mine.size), x[mine].copy()
    kernel(comm=comm, y=y, x=xl, check=False, **args)  # compiles the inspector
    calls = {"spf": lambda: kernel(comm=comm, y=y, x=xl, check=False, **args)}
    if blocks and (EXAMPLES / "mpi_spmv.py").is_file():
        sys.path.insert(0, str(EXAMPLES))
        mpi_spmv: Any = importlib.import_module("mpi_spmv")
        old = mpi_spmv.spmv().compile(target="mpi")
        old_args = mpi_spmv.local_args(comm, matrix, x)
        calls["blocks"] = lambda: old(check=False, **old_args)
    ms, fastest = _timed(comm, calls, rounds)
    # setup: a call with new index arrays (inspector, exchange plan, one product), less a product
    fresh = dict(args, rowptr=args["rowptr"].copy(), col=args["col"].copy())
    comm.Barrier()
    t0 = time.perf_counter()
    kernel(comm=comm, y=y, x=xl, check=False, **fresh)
    first = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX) * 1e3
    out: dict[str, Any] = {
        "spmv_ms": ms["spf"],
        "spmv_fastest_ms": fastest["spf"],
        "setup_ms": max(0.0, first - ms["spf"]),
        "received": comm.allgather(kernel.exchange_stats()["entries_received"]),
    }
    if "blocks" in ms:
        out["blocks_ms"] = ms["blocks"]
        out["blocks_received"] = comm.allreduce(
            int(old_args["need"].sum()) * int(old_args["B"]), op=MPI.MAX
        )
    if cg:
        b_norm = float(np.linalg.norm(x))
        res = mpi_cg.solve(comm, args, xl.copy(), b_norm)
        xs = spf.mpi.gather(res.pop("cg_x"), comm)
        res["cg_residual"] = float(np.linalg.norm(x - matrix @ xs) / b_norm)
        out.update(res)
    if comm.Get_rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    worker(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4] == "1")

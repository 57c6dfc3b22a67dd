"""Where one distributed CSR SpMV's time goes (issue 32): phase by phase, on 2 ranks.

The kernel of ``spf bench --only mpi`` (``spf.kernels.spmv_csr()`` with ``distribute_rows``,
``check=False``) on 2-D Poisson (``--grid``\\ :sup:`2` rows, default 1000) or a uniform random
matrix (``--random ROWS NNZ``). Each rank times, per product:

* ``agreement in Python``: the collective agreement when Python makes it
  (:func:`spf.distributed.arguments.agreed`; a repeated call sends its agreement integers
  to the other ranks inside the executor, :mod:`spf.distributed.protocol`);
* inside the executor (its C source with ``MPI_Wtime`` stamps after each step found in it,
  built once with the same compiler): packing the sends, the copy of the rank's own entries
  into the compact buffer, posting the receives, the sends and the agreement, the rows that
  read no ghost, the prefixes of the rows that read ghosts (up to their first ghost,
  :mod:`spf.distributed.prefix`), the wait (for the ghosts and the agreement's verdict), the
  rest of the rows that read ghosts;
* ``python``: the rest of the call (argument checks, the cached arguments, the cffi call).

Medians over ``--rounds`` products (after two warm-up calls), per rank, in microseconds.
Run: ``python benchmarks/mpi_profile.py`` (it launches itself on 2 ranks with
:func:`spf.mpi.run`; one OpenMP thread per rank). A shared machine makes the times noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

MARKS = (  # (text of a line of the executor's source, the step that ends after it)
    (": packed */", "pack sends"),
    ("memcpy(x + spf_x_near", "copy own entries"),
    ("MPI_Irecv(", "post receives"),
    ("MPI_Isend(", "post sends"),
    ("MPI_Isend(spf_agree", "post the agreement (to every other rank)"),
    ("spf_inner[2 * spf_r", "rows without ghosts"),
    ("_split(", "rows with ghosts, up to their first ghost"),
    ("MPI_Waitall(", "wait (ghosts and the agreement's verdict)"),
    ("spf_outer[2 * spf_r", "rows with ghosts (the rest)"),
)
STAMPS = 16


def instrumented(source: str) -> tuple[str, list[str]]:
    """The executor's source with ``spf_prof[k] = MPI_Wtime();`` after each step (a step's
    last line; the loop's body for a loop), and the steps' names in order."""
    out: list[str] = []
    steps: list[str] = []
    todo = list(MARKS)
    for line in source.splitlines():
        out.append(line)
        if line.strip() == "int spf_nreq = 0;" and not steps:
            out.append("  spf_prof[0] = MPI_Wtime();")
            steps.append("")
            continue
        for text, step in todo:
            if steps and text in line:
                todo.remove((text, step))
                out.append(f"  spf_prof[{len(steps)}] = MPI_Wtime();")
                steps.append(step)
                break
    return f"double spf_prof[{STAMPS}];\n" + "\n".join(out) + "\n", steps[1:]


def worker(spec: str, rounds: int) -> None:
    import importlib

    import cffi
    from mpi4py import MPI

    import spf
    import spf.mpi
    from spf.distributed import kernel as dk
    from spf.runtime.build import build
    from spf.runtime.mpi import MPICC

    sp: Any = importlib.import_module("scipy.sparse")
    comm = MPI.COMM_WORLD
    kind, *sizes = spec.split(",")
    if kind == "poisson":
        matrix = sp.csr_array(spf.sparse.poisson2d(int(sizes[0])))
    else:
        rows, nnz = int(sizes[0]), int(sizes[1])
        rng = np.random.default_rng(0)
        matrix = sp.random_array((rows, rows), density=nnz / rows**2, format="csr", rng=rng)
    matrix.sort_indices()
    n = matrix.shape[0]
    comp = spf.kernels.spmv_csr()
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    kernel: Any = comp.compile(target="mpi")
    args = spf.mpi.scatter_csr(matrix, comm)
    mine = spf.mpi.owned_rows(n, comm)
    x = np.random.default_rng(2).random(n)
    y, xl = np.zeros(mine.size), x[mine].copy()
    kernel(comm=comm, y=y, x=xl, check=False, **args)

    # the same executor with time stamps, called through the kernel's cached arguments
    source, steps = instrumented(kernel.source)
    built = build(source, name=kernel.name + "_prof", compiler=MPICC)
    ffi: Any = kernel._ffi
    lib = ffi.dlopen(str(built.path))
    ffi_prof = cffi.FFI()
    ffi_prof.cdef(f"double spf_prof[{STAMPS}];")
    stamps = ffi_prof.dlopen(str(built.path)).spf_prof
    kernel._fn = getattr(lib, kernel.name)

    spent = {"agreement": 0.0}
    original = dk.agreed

    def timed_agreed(*a: Any) -> bool:
        t0 = time.perf_counter()
        out = original(*a)
        spent["agreement"] = time.perf_counter() - t0
        return out

    dk.agreed = timed_agreed  # type: ignore[assignment]
    rows: list[list[float]] = []
    for r in range(rounds + 2):
        spent["agreement"] = 0.0  # a repeated call agrees inside the executor
        comm.Barrier()
        t0 = time.perf_counter()
        kernel(comm=comm, y=y, x=xl, check=False, **args)
        total = time.perf_counter() - t0
        if r < 2:
            continue
        t = [stamps[k] for k in range(len(steps) + 1)]
        inside = t[-1] - t[0]
        each = [t[k + 1] - t[k] for k in range(len(steps))]
        rows.append([spent["agreement"], *each, total - inside - spent["agreement"], total])
    dk.agreed = original  # type: ignore[assignment]
    med = np.median(np.array(rows), axis=0) * 1e6
    names = ["agreement in Python", *steps, "python (rest of the call)", "total"]
    everyone = comm.gather([(n, float(v)) for n, v in zip(names, med, strict=True)], root=0)
    stats = kernel.exchange_stats()
    plan: Any = kernel._plan
    rp = args["rowptr"].astype(np.int64)
    nnz = max(1, int(rp[-1]))
    before = int(rp[-1]) - sum(
        int(rp[hi] - rp[lo]) for lo, hi in plan.outer.reshape(-1, 2)
    )  # rows without ghosts
    if plan.split is not None:
        before += sum(
            int((plan.split[lo:hi] - rp[lo:hi]).sum()) for lo, hi in plan.outer.reshape(-1, 2)
        )  # prefixes
    stats["share_before_wait"] = round(before / nnz, 3)
    if comm.Get_rank() == 0:
        print("RESULT " + json.dumps({"ranks": everyone, "rows": n, "stats": stats}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=1000)
    parser.add_argument("--random", type=int, nargs=2, metavar=("ROWS", "NNZ"))
    parser.add_argument("--rounds", type=int, default=200)
    opts = parser.parse_args()
    spec = f"random,{opts.random[0]},{opts.random[1]}" if opts.random else f"poisson,{opts.grid}"
    from spf.mpi import run

    here = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = "1"
    done = run(__file__, 2, ["--worker", spec, str(opts.rounds)], timeout=900, env=env)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        sys.exit(f"profile failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    res = json.loads(lines[-1][len("RESULT ") :])
    print(f"{spec}: {res['rows']:,} rows, 2 ranks; rank 0 exchange: {res['stats']}")
    print("| step (median us per product) | rank 0 | rank 1 |\n|---|---:|---:|")
    for (name, zero), (_, one) in zip(res["ranks"][0], res["ranks"][1], strict=True):
        print(f"| {name} | {zero:.1f} | {one:.1f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]))
    else:
        main()

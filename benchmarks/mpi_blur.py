"""Strong scaling of the distributed two-stage blur (examples/mpi_blur.py) on 1, 2 and 4 ranks.

One global image (``--rows`` interior rows x ``--cols`` columns, default 2048 x 2048 doubles)
is blurred by ``P`` ranks, each owning ``rows / P`` rows plus two halo rows, for P in
``--ranks`` (default 1 2 4). Each job is launched with :func:`spf.mpi.run` (``mpiexec``) and
runs, on every rank: compile (rank 0 first, the others from the cache), one warm-up call
checked against numpy, then ``--repeats`` timed calls. A timed call is
``Barrier; t0; kernel (halo exchange + both stages); t1`` and its time is the slowest rank's
``t1 - t0`` (``MPI_Allreduce(MAX)``); the table gives the median and the minimum over the
repeats, the speedup of the medians over 1 rank and the parallel efficiency (speedup / P).
The 1-rank row also times the sequential blur compiled for target "c" (no MPI, same stages)
as the baseline the distributed code should match.

Ranks beyond the machine's cores are oversubscribed (Open MPI ``--oversubscribe``): they
time-share the cores, so such rows measure the overhead, not a speedup; the output says so.

Run ``python benchmarks/mpi_blur.py`` (``--quick``: a small image, few repeats). Prints a
markdown table and writes ``benchmarks/results/mpi_blur.json`` (``mpi_blur-quick.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"


def _examples() -> None:
    sys.path.insert(0, str(ROOT / "examples"))


# ---------------------------------------------------------------------------- on every rank


def worker(rows: int, cols: int, repeats: int) -> None:
    """Runs on each rank: prints one ``RESULT {json}`` line on rank 0."""
    from mpi4py import MPI

    _examples()
    import mpi_blur

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if rows % size:
        raise SystemExit(f"--rows {rows} is not a multiple of {size} ranks")
    nl = rows // size
    if rank == 0:
        kernel = mpi_blur.blur().compile(target="mpi")
    comm.Barrier()
    if rank != 0:
        kernel = mpi_blur.blur().compile(target="mpi")
    img = np.random.default_rng(0).random((rows + 2, cols))
    a = mpi_blur.local_block(img, rank, nl, size)
    bx, out = np.zeros((nl + 2, cols)), np.zeros((nl, cols))
    args = {"comm": comm, "a": a, "bx": bx, "out": out, "P": size, "NL": nl, "W": cols}
    for _ in range(3):  # warm-up: page in the arrays, set up the connections
        kernel(**args)
    want = mpi_blur.global_blur(img)[rank * nl : (rank + 1) * nl]
    if not np.allclose(out[:, 1:-1], want):
        raise SystemExit(f"rank {rank}: wrong blur")
    times = []
    for _ in range(repeats):
        comm.Barrier()
        t0 = time.perf_counter()
        kernel(**args)
        elapsed = time.perf_counter() - t0
        times.append(comm.allreduce(elapsed, op=MPI.MAX))
    result: dict[str, object] = {"ranks": size, "times": times}
    if size == 1:
        seq = mpi_blur.blur(distributed=False).compile()
        whole = {"a": img, "bx": np.zeros_like(img), "out": np.zeros((rows, cols))}
        seq(**whole, NL=rows, W=cols)
        seq_times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            seq(**whole, NL=rows, W=cols)
            seq_times.append(time.perf_counter() - t0)
        result["sequential_c"] = seq_times
    if rank == 0:
        print("RESULT " + json.dumps(result), flush=True)


# ---------------------------------------------------------------------------- driver


def drive(args: argparse.Namespace) -> None:
    import spf.mpi

    cores = os.cpu_count() or 1
    rows = []
    for n in args.ranks:
        done = spf.mpi.run(
            Path(__file__),
            n,
            [
                "--worker",
                "--rows",
                str(args.rows),
                "--cols",
                str(args.cols),
                "--repeats",
                str(args.repeats),
            ],
            timeout=args.timeout,
        )
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
        if done.returncode != 0 or not lines:
            raise SystemExit(f"{n} ranks failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        row = json.loads(lines[-1][len("RESULT ") :])
        row["load_after"] = round(os.getloadavg()[0], 2)  # 1-minute load: other processes
        rows.append(row)
    one = rows[0] if rows and rows[0]["ranks"] == 1 else None
    base = statistics.median(one["times"]) if one else None
    base_min = min(one["times"]) if one else None
    print(
        f"\nDistributed blur, {args.rows}x{args.cols} doubles (interior rows x columns), "
        f"median and min of {args.repeats} calls; {cores} cores here\n"
    )
    print("| ranks | median ms | min ms | speedup | efficiency | speedup (min) | load | note |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        med, low = statistics.median(r["times"]), min(r["times"])
        n = r["ranks"]
        speed = f"{base / med:.2f}" if base else "-"
        eff = f"{base / med / n:.0%}" if base else "-"
        speed_min = f"{base_min / low:.2f}" if base_min else "-"
        note = f"oversubscribed: {n} ranks on {cores} cores" if n > cores else ""
        load = r["load_after"]
        print(
            f"| {n} | {med * 1e3:.2f} | {low * 1e3:.2f} | {speed} | {eff} | {speed_min} "
            f"| {load} | {note} |"
        )
    seq = rows[0].get("sequential_c") if rows else None
    if seq:
        print(
            f"\nsequential blur (target c, no MPI, 1 process): median "
            f"{statistics.median(seq) * 1e3:.2f} ms, min {min(seq) * 1e3:.2f} ms"
        )
    print(
        f"\nload: the 1-minute load average after each job ({cores} = all cores busy); "
        "other processes on the machine stretch the medians"
    )
    if any(r["ranks"] > cores for r in rows):
        print(
            f"\nNote: this machine has {cores} cores; rows with more ranks than cores run "
            "oversubscribed (ranks time-share cores), so they show overhead, not scaling."
        )
    RESULTS.mkdir(exist_ok=True)
    name = "mpi_blur-quick.json" if args.quick else "mpi_blur.json"
    payload = {
        "rows": args.rows,
        "cols": args.cols,
        "repeats": args.repeats,
        "cores": cores,
        "results": rows,
    }
    (RESULTS / name).write_text(json.dumps(payload, indent=1) + "\n")
    print(f"\nwrote {RESULTS / name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--cols", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=51)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--quick", action="store_true", help="256x256, 5 repeats")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rows, args.cols, args.repeats = 256, 256, 5
    if args.worker:
        worker(args.rows, args.cols, args.repeats)
    else:
        drive(args)


if __name__ == "__main__":
    main()

"""spf's benchmarks: ``spf bench`` / ``make bench`` / ``python -m spf.bench``.

Each benchmark compares spf-generated code (with the best schedule written in spf's API) with
the hand-written C loop and the libraries one would otherwise call, on the same inputs, at 1
and 2 threads; medians of repeated interleaved runs; ratios to the best competitor. Prints
markdown tables and the target verdicts, shows progress on stderr, and writes JSON
(``benchmarks/results/`` in a source checkout, else the current directory, or ``--json``).

============ ===============================================================================
name         what it times
============ ===============================================================================
sets         the UF-aware set layer (parse, apply, compose, emptiness)
deps         ``Computation.dependences()`` on chains of stencil statements
analysis     wavefront generation (ILU(0), Gauss-Seidel, SpTRSV) cold, next to plain codegen
pldi19       emptiness of the PLDI'19 sparse-kernel dependence relations with their properties
spmv         CSR SpMV (spf CSR, SELL-8-sigma, BDIA-64, hand C, MKL IE, scipy); STREAM triad
formats      SpMV generated from each built-in format vs its hand C loop; convert vs scipy
spmtv        A^T x from CSR: spf serial, atomic and privatized reductions, scipy ``A.T @ x``
spgemm       SpGEMM C = A·A in CSR on 2-D Poisson (spf ``spgemm_csr``, scipy ``A @ A``)
tensor       ``spf.einsum`` SpAdd, SpGEMM, MTTKRP vs scipy, pydata sparse, Finch; first calls
sptrsv       CSR forward solve (spf serial and wavefront, hand C, scipy, MKL IE trsv)
gauss_seidel a Gauss-Seidel sweep on 2-D Poisson: serial spf vs its wavefronts
fused        a lower solve then y = A·x fused into one wavefront vs the two kernels (MKL IE)
sums         ``partial_sums`` on long rows: SpMV and lower solve vs in order, MKL IE, scipy
pcg          PCG with ILU(0) to 1e-8 on 2-D Poisson (fused spf preconditioner) vs scipy's cg
ilu0         ILU(0) in CSR: the row update as a merge vs the guarded nest (SuiteSparse, bands)
gemm         DGEMM n = 1024, 2048 (spf tiled schedule, OpenBLAS through numpy, hand C)
blur         two-stage 3x3 blur 2112x3520 (spf, hand-fused C, Halide)
overhead     kernel-call overhead, a checked SpMV call, ``compile`` cold and warm, codegen time
busy         parallel SpMV with a busy loop on one core: fixed vs adaptive thread counts
mpi          distributed SpMV on 2 ranks: generated exact-ghost exchange vs whole blocks
polybench    ``codegen("c")`` with checking on the 30 PolyBench/C 4.2 kernels (total, worst)
scale        issue 28's costs: checked/unchecked calls, conversions vs scipy, wavefront generation
tune         spf.tune / spf.formats.tune results vs parallel CSR, MKL IE, OpenBLAS, PolyBench
============ ===============================================================================
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["BENCHMARKS", "main"]

BENCHMARKS = (
    "sets",
    "deps",
    "analysis",
    "pldi19",
    "spmv",
    "formats",
    "spmtv",
    "spgemm",
    "tensor",
    "sptrsv",
    "gauss_seidel",
    "fused",
    "sums",
    "pcg",
    "ilu0",
    "gemm",
    "blur",
    "overhead",
    "busy",
    "mpi",
    "polybench",
    "scale",
    "tune",
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="spf bench", description="Benchmarks of spf-generated code against its competitors."
    )
    p.add_argument("--quick", action="store_true", help="small inputs, few repeats (smoke run)")
    p.add_argument(
        "--only",
        action="append",
        choices=BENCHMARKS,
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    p.add_argument("--json", type=Path, default=None, help="where to write the JSON results")
    p.add_argument(
        "--threads", type=int, nargs="+", default=[1, 2], help="OpenMP thread counts (1 2)"
    )
    p.add_argument(
        "--max-wait",
        type=float,
        default=None,
        help="seconds to wait for an idle machine before each timed phase",
    )
    return p


def _default_json(quick: bool) -> Path:
    name = "bench-quick.json" if quick else "bench.json"
    root = Path(__file__).resolve().parents[2]
    if (root / "benchmarks").is_dir() and (root / "pyproject.toml").is_file():
        return root / "benchmarks" / "results" / name
    return Path.cwd() / name


def _unwritable(out: Path) -> str | None:
    """Why the JSON results cannot be written to ``out`` (None when they can be)."""
    if out.is_dir():
        return "is a directory; give a file name such as results.json"
    folder = next((p for p in [out.parent, *out.parent.parents] if p.exists()), None)
    if folder is not None and not folder.is_dir():
        return f"{str(folder)!r} is a file, not a folder; give a path in a folder"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; 0 when all ran (missed targets are reported, not errors)."""
    import dataclasses

    from spf.bench.common import FULL, QUICK, Context, Runtime, progress

    opts = _parser().parse_args(argv)
    cfg = QUICK if opts.quick else FULL
    if opts.max_wait is not None:
        cfg = dataclasses.replace(cfg, max_wait_s=opts.max_wait)
    threads = sorted(set(opts.threads))
    if 1 not in threads or min(threads) < 1:
        progress("--threads must include 1 and be positive")
        return 2
    out = opts.json or _default_json(opts.quick)
    unwritable = _unwritable(out)
    if unwritable:  # refused now, not after the whole run
        print(f"spf bench: error: --json {str(out)!r}: {unwritable}", file=sys.stderr)
        return 2
    names = [n for n in BENCHMARKS if not opts.only or n in opts.only]
    results: dict[str, Any] = {}
    verdicts: list[dict[str, Any]] = []
    started = time.perf_counter()
    print(f"# spf benchmarks{' (--quick)' if opts.quick else ''}\n")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs; threads {threads}; "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')!r}\n"
    )
    with tempfile.TemporaryDirectory(prefix="spf-bench-") as tmp:
        ctx = Context(cfg, Runtime(str(Path(tmp) / "helper")), threads, Path(tmp), progress)
        for name in names:
            t0 = time.perf_counter()
            progress(f"{name} ...")
            module = importlib.import_module(f"spf.bench.{name}")
            section = module.run(ctx)
            progress(f"{name} done in {time.perf_counter() - t0:.1f} s")
            print(f"## {name}\n")
            print("\n".join(section.markdown), flush=True)
            results[name] = {
                "seconds": time.perf_counter() - t0,
                "data": section.data,
                "targets": section.targets,
            }
            verdicts.extend(section.targets)
    if verdicts:
        print("## Targets\n")
        print("| target | measured | met | note |\n|---|---|---|---|")
        for v in verdicts:
            print(
                f"| {v['target']} | {v['measured']} | {'yes' if v['met'] else 'NO'} | {v['note']} |"
            )
        print()
    total = time.perf_counter() - started
    print(f"total {total:.0f} s")
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "quick": opts.quick,
        "threads": threads,
        "machine": {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count()},
        "seconds": total,
        "benchmarks": results,
        "targets": verdicts,
    }
    out.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    print(f"wrote {out}")
    return 0

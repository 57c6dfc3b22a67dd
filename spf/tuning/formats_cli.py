"""``spf tune spmv --matrix FILE.mtx --formats [FAMILIES] [--refine]``: the storage format of
SpMV for one matrix (:func:`spf.formats.tune`), printed with its speedup over CSR, the
conversion time and how many candidates were measured, pruned and refused.

``--refine`` hands the chosen format's SpMV to :func:`spf.tuning.tune_schedule` with the
last share of the budget (``refine=`` of :func:`spf.formats.tune`).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from spf.errors import ArgumentError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from spf.formats.tuner import FormatTuneResult

KERNELS = ("spmv", "spmv_csr")
"""Kernel names ``--formats`` accepts: the SpMV (the one kernel formats.tune chooses for)."""


def run_formats(args: argparse.Namespace, progress: Callable[[str], None]) -> int:
    """``spf tune spmv --formats``: tune and print the result."""
    import spf.formats
    from spf.sparse import read_matrix_market
    from spf.tuning import tune_schedule

    if args.kernel not in KERNELS:
        raise ArgumentError(
            f"--formats chooses the storage format of SpMV: give the kernel 'spmv' "
            f"(not {args.kernel!r})"
        )
    if args.formats is None:
        raise ArgumentError("--refine refines the format chosen by --formats: give --formats too")
    if args.sizes or args.function or args.shape or args.param:
        raise ArgumentError(
            "--formats reads the matrix from --matrix; --sizes, --function, --shape and "
            "--param do not apply"
        )
    if not args.matrix:
        raise ArgumentError("--formats needs the matrix: give --matrix FILE.mtx")
    if not Path(args.matrix).is_file():
        raise ArgumentError(f"no such file {args.matrix!r}")
    space = None if args.formats == "all" else [f.strip() for f in args.formats.split(",")]
    matrix = read_matrix_market(args.matrix)
    n, m = matrix.shape
    progress(f"choosing the format of SpMV on {Path(args.matrix).name} ({n} x {m}, "
             f"{matrix.nnz} entries) for at most {args.budget:g} s")  # fmt: skip
    res = spf.formats.tune(
        matrix,
        budget=args.budget,
        space=space,
        seed=args.seed,
        reuse=args.reuse,
        threads=args.threads,
        refine=tune_schedule if args.refine else None,
    )
    sys.stdout.write(summary(res))
    return 0


def _kernel(candidate: str) -> str:
    """``", kernel CSRP(1) parallel"`` for one of the kernel variants (its format is CSR, or
    SELL(C, 1) for SELLV)."""
    from spf.formats.tune_space import KERNEL_VARIANTS

    family = candidate.split("(")[0].split(" ")[0]
    return f", kernel {candidate}" if family in KERNEL_VARIANTS else ""


def summary(res: FormatTuneResult) -> str:
    """What ``spf tune --formats`` prints: the choice, times and counts, one per line."""
    counts = Counter(h["status"] for h in res.history)
    refused = counts["illegal"] + counts["refused"]
    how = "from the record (nothing measured)" if res.reused else "medians of interleaved runs"
    lines = [
        f"format: {res.format.name} ({res.schedule}){_kernel(res.candidate)}",
        f"speedup: {res.speedup:.2f}x CSR ({res.time:.4g} s vs {res.baseline_time:.4g} s per "
        f"SpMV, {how})",
        f"conversion: {res.conversion_time:.4g} s "
        f"(= {res.conversion_time / res.time:.0f} SpMVs)" if res.time > 0 else
        f"conversion: {res.conversion_time:.4g} s",
        f"candidates: {res.tried} measured, {counts['pruned']} pruned, {refused} refused, "
        f"{counts['not measured']} not measured (budget)",
    ]  # fmt: skip
    if res.interrupted:
        lines.insert(0, "interrupted (Ctrl-C): the best format measured so far, not recorded")
    if res.threads is not None:
        lines.append(f"threads: {res.threads}")
    if res.record is not None:
        lines.append(f"record: {res.record}")
    lines.append(res.commands or "# the chosen format's own schedule (no refinement won)")
    return "\n".join(lines) + "\n"

"""ILU(0) in CSR: the update of row ``i`` by row ``k`` as a merge vs the guarded nest.

``spf.kernels.ilu0_csr()`` scans its inner update (``j1`` over row ``i``, ``j2`` over the
upper part of row ``col(k)``, ``col(j1) = col(j2)``) as one two-cursor merge, since its facts
say that each row's columns increase strictly (API.md section 20, docs/coiteration.md): the
update costs O(len_i + len_k). The reference is the kernel as it was before co-iteration:
the same computation without that ordering fact, which codegen scans as the nested loop with
a guard, O(len_i * len_k). Both are compiled with the same flags, run serially, and checked
bitwise against each other before timing.

Matrices: the square SuiteSparse matrices of ``shared/data/suitesparse`` whose diagonal is
stored (``spf.sparse.ilu0_args`` refuses the others), and banded matrices with long rows
(diagonally dominant, ``2w + 1`` entries per row: 101 and 201; the guarded nest's cost
grows as ``w**3`` per row, which keeps longer rows out of a repeated timing). Each timed
call first copies the original values into the array the factorization overwrites (the
same copy for both variants). Both kernels are serial, so each call is timed by this
process's CPU time (which other processes on a shared machine disturb far less than wall
time), interleaved in a shuffled order each round; the table gives medians and the ratio.
"""

from __future__ import annotations

import importlib
import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

import spf
import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, median

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy

SUITESPARSE = Path(__file__).resolve().parents[3] / "shared" / "data" / "suitesparse"
"""The shared SuiteSparse matrices (next to the repository, as the tests find them)."""
SORTED_FACT = "col(k+1)"
"""A piece of the text of ilu0_csr's fact that each row's columns increase strictly."""


def guarded_ilu0() -> spf.Computation:
    """``ilu0_csr()`` without the fact that proves its rows sorted: the guarded nest."""
    data = json.loads(spf.kernels.ilu0_csr().to_json())
    kept = [a for a in data["assumptions"] if SORTED_FACT not in a]
    if len(kept) != len(data["assumptions"]) - 1:
        raise SystemExit("ilu0: cannot find the ordering fact of ilu0_csr() to drop")
    data["assumptions"] = kept
    return spf.Computation.from_json(json.dumps(data))


def banded(n: int, w: int) -> Any:
    """An ``n x n`` band of half-width ``w`` (``2w + 1`` entries per row), random values,
    diagonally dominant (the factorization stays finite)."""
    rng = np.random.default_rng(n + w)
    offsets = list(range(-w, w + 1))
    diags = [rng.uniform(-1.0, 1.0, n - abs(o)) for o in offsets]
    diags[w] = np.full(n, 2.0 * w + 2.0)
    a = sp.csr_array(sp.diags_array(diags, offsets=offsets, shape=(n, n), format="csr"))
    a.sort_indices()
    return a


def matrices(ctx: Context) -> tuple[list[tuple[str, Any]], str]:
    """(name, matrix) to time, and a note on the SuiteSparse matrices left out."""
    out: list[tuple[str, Any]] = []
    skipped: list[str] = []
    if SUITESPARSE.is_dir():
        for path in sorted(SUITESPARSE.glob("*.mtx")):
            if ctx.cfg.quick and path.stat().st_size > 100_000:
                continue  # smoke runs: the small ones
            a = spf.sparse.read_matrix_market(path)
            if a.shape[0] != a.shape[1] or np.any(a.diagonal() == 0):
                skipped.append(path.stem)
                continue
            out.append((path.stem, a))
    note = f"SuiteSparse matrices without a full diagonal (not factored): {', '.join(skipped)}"
    if not SUITESPARSE.is_dir():
        note = f"SuiteSparse matrices: not found at {SUITESPARSE}"
    bands = [(300, 50)] if ctx.cfg.quick else [(4000, 50), (1000, 100)]
    out += [(f"band n={n}, {2 * w + 1} per row", banded(n, w)) for n, w in bands]
    return out, note


def run(ctx: Context) -> Section:
    sec = Section("ilu0")
    cache = str(ctx.work / "kernels")
    merged = spf.kernels.ilu0_csr().compile(cache_dir=cache)
    nest = guarded_ilu0().compile(cache_dir=cache)
    if "while (j1 < spf_end_j1" not in merged.source or "while (" in nest.source:
        raise SystemExit("ilu0: expected the merge in ilu0_csr() and a nest without its fact")
    found, note = matrices(ctx)
    rows: list[list[str]] = []
    data: dict[str, dict[str, float]] = {}
    for name, a in found:
        ms = _time(ctx, merged, nest, a, name)
        ratio = ms["guarded nest"] / ms["merge"]
        lens = np.diff(a.indptr)
        nest_ms, merge_ms = f"{ms['guarded nest']:.3f}", f"{ms['merge']:.3f}"
        rows.append([name, f"{a.shape[0]:,}", f"{a.nnz:,}", str(int(lens.max())),
                     nest_ms, merge_ms, f"{ratio:.2f}x"])  # fmt: skip
        data[name] = {**ms, "speed_up": ratio}
    sec.line(f"### ILU(0), CSR: the row update as a merge vs the guarded nest\n\n{note}\n")
    sec.line("Medians of the CPU time of serial calls, interleaved (shuffled each round).\n")
    sec.table(
        ["matrix", "N", "nnz", "longest row", "guarded nest ms", "merge ms", "speed-up"], rows
    )
    big = [data[n]["speed_up"] for n, _ in found if n.startswith("band")]
    if big:
        r = min(big)
        sec.target(
            "long rows (bands): merge >= 2x faster than the guarded nest", f"{r:.1f}x", r >= 2
        )
    sec.data.update(median_ms=data)
    return sec


def _time(ctx: Context, merged: Any, nest: Any, a: Any, name: str) -> dict[str, float]:
    """Medians (CPU ms) of both kernels on ``a`` after a bitwise check."""
    args = spf.sparse.ilu0_args(a)
    original = args["A"].copy()
    results = {}
    for code, kernel in (("merge", merged), ("guarded nest", nest)):
        values = original.copy()
        kernel(**{**args, "A": values}, check=False)
        results[code] = values
    if not np.array_equal(results["merge"], results["guarded nest"], equal_nan=True):
        raise SystemExit(f"ilu0: the merge and the guarded nest differ on {name}")

    def call(kernel: Any) -> Any:
        values = original.copy()
        call_args = {**args, "A": values}

        def one() -> None:
            np.copyto(values, original)
            kernel(**call_args, check=False)

        return one

    variants: list[Variant] = [("merge", 1, call(merged)), ("guarded nest", 1, call(nest))]
    ctx.log(f"ilu0: {name}: N = {a.shape[0]:,}, nnz = {a.nnz:,}")
    ctx.rt.set_threads(1)
    times: dict[str, list[float]] = {code: [] for code, _, _ in variants}
    order = random.Random(0)
    for r in range(1 + (2 if ctx.cfg.quick else 3)):  # a warm-up round, then timed rounds
        for code, _, fn in order.sample(variants, len(variants)):
            t0 = time.process_time()
            fn()
            if r > 0:
                times[code].append(time.process_time() - t0)
    return {code: 1e3 * median(ts) for code, ts in times.items()}

"""SpGEMM ``C = A·A`` in CSR on the 2-D Poisson matrix: ``spf.kernels.spgemm_csr()`` (its
symbolic and numeric phases, each parallel over rows with per-thread workspaces) at each
thread count against scipy's ``A @ A`` (serial). Each call produces a new ``C`` (its pattern
is computed at run time); the result is checked against scipy's before timing (same row
pointers, same sorted columns and values), then the calls are timed interleaved (medians).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, load_note, measure, median

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy


def _args(a: Any) -> tuple[dict[str, Any], int, int]:
    n, k = a.shape
    ip, ix = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    arrays = {"A_rowptr": ip, "A_col": ix, "A": a.data, "B_rowptr": ip, "B_col": ix, "B": a.data}
    return arrays, int(n), int(k)


def _check(out: dict[str, Any], want: Any, shape: tuple[int, int]) -> None:
    got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=shape)
    want = sp.csr_array(want)
    want.sort_indices()
    same = (
        np.array_equal(got.indptr, want.indptr)
        and np.array_equal(got.indices, want.indices)
        and np.allclose(got.data, want.data, rtol=1e-12, atol=1e-12)
    )
    if not same:
        raise SystemExit("spgemm: spf's C = A·A differs from scipy's A @ A")


def run(ctx: Context) -> Section:
    sec = Section("spgemm")
    g = ctx.cfg.poisson_grid
    a = sp.csr_array(spf.sparse.poisson2d(g))
    kernel = spf.kernels.spgemm_csr().compile(cache_dir=str(ctx.work / "kernels"))
    sec.data["sources"] = {"symbolic": kernel.symbolic.source, "numeric": kernel.numeric.source}
    arrays, n, k = _args(a)
    ctx.log(f"spgemm: 2-D Poisson {g}x{g}")

    def spf_call() -> object:
        return kernel(check=False, N=n, K=k, M=k, **arrays)

    want = a @ a
    for t in ctx.threads:
        ctx.rt.set_threads(t)
        _check(kernel(check=False, N=n, K=k, M=k, **arrays), want, (n, k))
    vs: list[Variant] = [("spf spgemm_csr", t, spf_call) for t in ctx.threads]
    vs.append(("scipy A@A", 1, lambda: a @ a))
    rounds = max(3, ctx.cfg.spmv_rounds // 10)
    times, load = measure(ctx, vs, rounds)
    ms = {key: 1e3 * median(ts) for key, ts in times.items()}
    scipy = ms["scipy A@A", 1]
    sec.line(
        f"### C = A·A, 2-D Poisson {g}x{g}: N = {n:,}, nnz(A) = {a.nnz:,}, nnz(C) = {want.nnz:,}\n"
    )
    sec.line(load_note(load) + "\n")
    rows = [
        [code, str(t), f"{v:.2f}", f"{v / scipy:.3f}"]
        for (code, t), v in sorted(ms.items(), key=lambda kv: (kv[0][1], kv[1]))
    ]
    sec.table(["code", "threads", "median ms", "/ scipy A@A"], rows)
    sec.data["median_ms"] = {f"{c}@{t}": v for (c, t), v in ms.items()}
    sec.data.update({"N": n, "nnz_A": int(a.nnz), "nnz_C": int(want.nnz), "load": load})
    one = ms["spf spgemm_csr", 1] / scipy if 1 in ctx.threads else float("nan")
    sec.target("SpGEMM Poisson: spf at 1 thread <= 1.2x scipy A@A", f"{one:.3f}x", one <= 1.2)
    most = max(ctx.threads)
    if most < 2:
        sec.target("SpGEMM Poisson: spf at 2 threads faster than scipy", "not run", False)
    else:
        r = ms["spf spgemm_csr", most] / scipy
        sec.target(f"SpGEMM Poisson: spf at {most} threads faster than scipy", f"{r:.3f}x", r < 1.0)
    sec.line(
        "Each spf call runs both phases and allocates C's arrays once the symbolic phase "
        "sized them; spf's columns come out sorted within each row (scipy's are in its own "
        "order: the check sorts them). scipy runs serially.\n"
    )
    return sec

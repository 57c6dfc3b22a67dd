"""Partial sums on long sparse rows: ``stmt.partial_sums(loop, 4, 16)`` against the in-order
loop, MKL and scipy, on every shared SuiteSparse matrix (docs/scheduling.md, "Partial sums").

Per matrix (its pattern with a dominant diagonal, :func:`spf.bench.fused.dominant`), timed
interleaved in a rotation of its own (the matrix stays in cache from call to call, as in an
iterative solver; a rotation over all matrices times cold calls, where a long row's loads
wait on memory more than on its chain of additions):

* ``spf SpMV``: ``spf.kernels.spmv_csr()`` with ``parallelize("i")``, at each thread count;
  ``spf SpMV, partial sums``: the same with ``partial_sums("k", 4, 16)``;
* ``MKL IE mv``: MKL's optimized handle at each thread count; ``scipy A@x`` (serial);
* ``spf solve`` / ``spf solve, partial sums``: the lower solve ``spf.kernels.trsv_diag_csr()``
  (serial) without and with ``partial_sums("k", 4, 16)`` on its row loop; ``MKL IE trsv``
  on the lower triangle (1 thread).

Every spf code is checked against scipy first (the partial sums to round-off: they
reassociate each long row's sum, which is why they are a command and not a default).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.common import (
    Context,
    Section,
    Variant,
    disturbed,
    load_note,
    measure,
    median,
)
from spf.bench.fused import SUITESPARSE, dominant
from spf.bench.mkl import MklCsr, MklTrsv, load_mkl

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy
spla: Any = importlib.import_module("scipy.sparse.linalg")

SUMS = (4, 16)
"""``partial_sums(loop, count, min_trip)`` of the timed kernels."""

LONG = 16.0
"""Matrices whose rows hold this many entries or more on average count as long-row ones in
the targets (the SpMV's rows; the solve's: the entries left of the diagonal)."""


FASTER, SLOWER = 0.9, 1.1
"""The targets: partial sums take at most 0.9x the in-order kernel's time on long-row
matrices (geomean), and at most 1.1x on the others, whose rows never reach ``min_trip``
(what the test a row costs)."""


def kernels(ctx: Context) -> dict[tuple[str, bool], Any]:
    """The SpMV (parallel rows) and the lower solve, each without and with partial sums."""
    cache = str(ctx.work / "kernels")
    out: dict[tuple[str, bool], Any] = {}
    for sums in (False, True):
        mv = spf.kernels.spmv_csr()
        mv.stmt(0).parallelize("i")
        solve = spf.kernels.trsv_diag_csr()
        if sums:
            mv.stmt(0).partial_sums("k", *SUMS)
            solve.stmt("s1").partial_sums("k", *SUMS)
        out["mv", sums] = mv.compile(cache_dir=cache)
        out["solve", sums] = solve.compile(cache_dir=cache)
    return out


def variants(
    ctx: Context, ks: dict[tuple[str, bool], Any], a: Any, name: str, mkl: Any
) -> list[Variant]:
    """The calls timed on matrix ``a`` (each checked first), codes prefixed by ``name``."""
    n = a.shape[0]
    args = spf.sparse.gauss_seidel_args(a)
    csr = {k: args[k] for k in ("rowptr", "col", "A")} | {"N": n, "M": n, "NNZ": a.nnz}
    x = np.random.default_rng(n).uniform(-1.0, 1.0, n)
    lower = sp.csr_array(sp.tril(a, format="csr"))
    lower.sort_indices()
    want_y, want_x = a @ x, spla.spsolve_triangular(lower, x, lower=True)
    out: list[Variant] = []

    def mv_call(kernel: Any) -> Any:
        y = np.zeros(n)

        def call() -> None:
            y[:] = 0.0
            kernel(y=y, x=x, check=False, **csr)

        call()
        if not np.allclose(y, want_y, rtol=1e-12, atol=1e-12):
            raise SystemExit(f"sums: an spf SpMV gives a wrong y on {name}")
        return call

    def solve_call(kernel: Any) -> Any:
        u = np.zeros(n)

        def call() -> None:
            kernel(x=u, b=x, check=False, **args)

        call()
        if not np.allclose(u, want_x, rtol=1e-10, atol=1e-12):
            raise SystemExit(f"sums: an spf solve gives a wrong x on {name}")
        return call

    for t in ctx.threads:
        out.append((f"{name}: spf SpMV", t, mv_call(ks["mv", False])))
        out.append((f"{name}: spf SpMV, partial sums", t, mv_call(ks["mv", True])))
    out.append((f"{name}: spf solve", 1, solve_call(ks["solve", False])))
    out.append((f"{name}: spf solve, partial sums", 1, solve_call(ks["solve", True])))
    out.append((f"{name}: scipy A@x", 1, lambda: a @ x))
    if mkl is not None:
        out += _mkl(ctx, mkl, a, lower, x, (want_y, want_x), name)
    return out


def _mkl(
    ctx: Context, mkl: Any, a: Any, lower: Any, x: np.ndarray, want: Any, name: str
) -> list[Variant]:
    """MKL's mv at each thread count (one handle per count) and trsv at 1 thread."""
    out: list[Variant] = []
    n = a.shape[0]
    for t in ctx.threads:
        ctx.rt.set_threads(t)
        handle, y = MklCsr(mkl, spf.sparse.csr_args(a)), np.zeros(n)
        handle.warm_up(x, y, 200)
        y[:] = 0.0
        handle.mv(x, y)
        if not np.allclose(y, want[0], rtol=1e-12, atol=1e-12):
            raise SystemExit(f"sums: MKL's mv gives a wrong y on {name}")
        out.append((f"{name}: MKL IE mv", t, _held(handle.bound_mv(x, y), handle, x, y)))
    ctx.rt.set_threads(1)
    trsv, u = MklTrsv(mkl, spf.sparse.sptrsv_args(lower)), np.zeros(n)
    trsv.solve(x, u)
    if not np.allclose(u, want[1], rtol=1e-10, atol=1e-12):
        raise SystemExit(f"sums: MKL's trsv gives a wrong x on {name}")
    out.append((f"{name}: MKL IE trsv", 1, _held(trsv.bound_solve(x, u), trsv, x, u)))
    return out


def _held(call: Any, *keep: object) -> Any:
    """``call`` (an MKL call bound to arrays by address) holding ``keep`` alive with it: the
    handle and the arrays whose addresses it was given."""

    def run() -> object:
        return call()

    run.keep = keep  # type: ignore[attr-defined]
    return run


def run(ctx: Context) -> Section:
    sec = Section("sums")
    if not SUITESPARSE.is_dir():
        sec.line(f"SuiteSparse matrices: not found at {SUITESPARSE}\n")
        return sec
    ks = kernels(ctx)
    mkl, where = load_mkl()
    if mkl is not None:
        ctx.rt.setters.append(mkl.MKL_Set_Num_Threads)
    cases: list[tuple[str, Any]] = []
    ms: dict[tuple[str, int], float] = {}
    loads = []
    for path in sorted(SUITESPARSE.glob("*.mtx")):
        raw = spf.sparse.read_matrix_market(path)
        if raw.shape[0] != raw.shape[1] or raw.shape[0] < 100:
            continue
        a = dominant(raw, 7)
        cases.append((path.stem, a))
        vs = variants(ctx, ks, a, path.stem, mkl)  # one rotation a matrix: warm, as in a solver
        times, load = measure(ctx, vs, ctx.cfg.spmv_rounds, warmup=5)
        ms |= {(code, t): 1e3 * median(times[code, t]) for code, t, _ in vs}
        loads.append(load)
    ctx.log(f"sums: {len(cases)} SuiteSparse matrices")
    t2 = max(ctx.threads)
    worst = max(loads, key=lambda info: disturbed(info["load"])) if loads else None
    sec.line(
        f"### partial_sums(k, {SUMS[0]}, {SUMS[1]}) on SuiteSparse matrices: the SpMV at "
        f"1 and {t2} threads, the lower solve serial; each matrix timed in its own rotation "
        "(its arrays stay in cache between calls, as in an iterative solver's loop)\n\n"
        f"{load_note(worst) if worst else ''}\n"
    )
    rows: list[list[str]] = []
    mv_long: list[float] = []
    mv1_long: list[float] = []
    mv1_short: list[float] = []
    mv_short: list[float] = []
    sv_long: list[float] = []
    sv_short: list[float] = []
    for name, a in cases:
        n = a.shape[0]
        row, left = a.nnz / n, (sp.tril(a, k=-1).nnz) / n
        mv, mvs = ms[f"{name}: spf SpMV", t2], ms[f"{name}: spf SpMV, partial sums", t2]
        one = ms[f"{name}: spf SpMV, partial sums", 1] / ms[f"{name}: spf SpMV", 1]
        (mv1_long if row >= LONG else mv1_short).append(one)
        sv, svs = ms[f"{name}: spf solve", 1], ms[f"{name}: spf solve, partial sums", 1]
        (mv_long if row >= LONG else mv_short).append(mvs / mv)
        (sv_long if left >= LONG else sv_short).append(svs / sv)
        theirs = [ms.get((f"{name}: MKL IE mv", t2), float("nan")),
                  ms.get((f"{name}: MKL IE trsv", 1), float("nan"))]  # fmt: skip
        scipy = ms[f"{name}: scipy A@x", 1]
        rows.append([name, f"{n:,}", f"{row:.1f}", f"{one:.2f}x", f"{mv:.4f}", f"{mvs:.4f}",
                     f"{mvs / mv:.2f}x",
                     f"{theirs[0]:.4f}", f"{scipy:.4f}", f"{left:.1f}", f"{sv:.4f}",
                     f"{svs:.4f}", f"{svs / sv:.2f}x", f"{theirs[1]:.4f}"])  # fmt: skip
    sec.table(
        ["matrix", "rows", "entries a row", "SpMV sums / in order (1 thread)",
         f"SpMV ms ({t2} threads)", "SpMV sums ms", "sums / in order",
         "MKL IE mv ms", "scipy ms (1 thread)", "entries left of the diagonal", "solve ms",
         "solve sums ms", "sums / in order", "MKL IE trsv ms"],
        rows,
    )  # fmt: skip
    if mkl is None:
        sec.line(f"MKL: not available ({where}); its columns are NaN.\n")
    for what, got, bound in (  # long rows gain; short rows pay at most the test a row
        (f"SpMV (1 thread), rows of >= {LONG:.0f} entries on average", mv1_long, FASTER),
        ("SpMV (1 thread), shorter rows", mv1_short, SLOWER),
        (f"SpMV ({t2} threads), rows of >= {LONG:.0f} entries on average", mv_long, FASTER),
        (f"SpMV ({t2} threads), shorter rows", mv_short, SLOWER),
        (f"lower solve, >= {LONG:.0f} entries left of the diagonal on average", sv_long, FASTER),
        ("lower solve, shorter rows", sv_short, SLOWER),
    ):
        if not got:
            continue
        geo = float(np.exp(np.mean(np.log(got))))
        sec.target(f"partial sums / in order, {what}: geomean <= {bound}x", f"{geo:.2f}x",
                   geo <= bound, f"{len(got)} matrices")  # fmt: skip
    sec.data.update(median_ms={f"{c} ({t})": v for (c, t), v in ms.items()}, load=worst)
    return sec

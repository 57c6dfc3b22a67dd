"""SpMV ``y += A·x``: spf CSR, spf SELL-C-sigma, spf BDIA, hand-written C, MKL, scipy; STREAM triad.

Matrices: 2-D Poisson (1000x1000 grid: 1M rows, 5M entries) and a uniform random matrix
(200k rows, 2M entries, fixed seed). Codes, all on the same arrays and checked against
``A @ x`` before timing:

* ``spf CSR``: ``spf.kernels.spmv_csr()`` with ``parallelize("i")``;
* ``spf SELL-8-s``: :func:`spf.formats.sell` (``C = 8``, sigma 1 and 256): the inspector is
  ``spf.formats.convert(CSR, SELL(8, s))``, synthesized from the relations, the executor is
  ``sell(...).scheduled_executor()`` (chunk loop parallel, row loop vectorized 8 wide);
* ``spf BDIA-64``: ``spf.kernels.spmv(spf.formats.BDIA(64))`` with ``parallelize("b")``
  (diagonals per block of 64 rows, no column indices: what MKL's inspector builds for
  Poisson, see :mod:`spf.bench.mkl`), arrays from ``spf.sparse.bdia_args``; only for
  matrices it suits (fill at most 1.5, so not the random one);
* ``hand C``: the CSR loop one writes by hand, built with the same flags;
* ``MKL IE``: MKL's inspector-executor (``mkl_sparse_optimize`` + ``mkl_sparse_d_mv``), one
  handle optimized per thread count (MKL partitions rows for the thread count at optimize);
* ``scipy A@x`` (allocates ``y``) and scipy's in-place ``csr_matvec`` (private API), serial.

GB/s counts CSR's compulsory traffic for every code: ``12*nnz + 4*(N+1) + 16*N + 8*M`` bytes.
The STREAM triad (24 B per element) runs before and after; the higher median is the reference.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING, Any

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, load_c, load_note, measure, median
from spf.bench.mkl import MklCsr, load_mkl
from spf.errors import ArgumentError
from spf.formats import BDIA, sell

if TYPE_CHECKING:
    from collections.abc import Callable

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy

HAND_C = r"""
#include <stdint.h>

/* y += A*x, A in CSR with int32 indices: the loop one writes by hand. */
void hand_spmv(int64_t n, const int32_t *restrict rowptr, const int32_t *restrict col,
               const double *restrict a, const double *restrict x, double *restrict y)
{
  #pragma omp parallel for
  for (int64_t i = 0; i < n; i++) {
    double sum = y[i];
    for (int32_t k = rowptr[i]; k < rowptr[i + 1]; k++)
      sum += a[k] * x[col[k]];
    y[i] = sum;
  }
}
"""
HAND_CDEF = """
void hand_spmv(int64_t n, const int32_t *rowptr, const int32_t *col, const double *a,
               const double *x, double *y);
"""
SIGMAS = (1, 256)
BDIA_ROWS = 64


@dataclasses.dataclass
class Case:
    key: str
    title: str
    matrix: Any
    args: dict[str, Any]
    x: Any

    @property
    def bytes_moved(self) -> int:
        n, m, nnz = self.args["N"], self.args["M"], self.args["NNZ"]
        return int(12 * nnz + 4 * (n + 1) + 16 * n + 8 * m)


def matrices(ctx: Context) -> list[Case]:
    cfg = ctx.cfg
    g, rows, nnz = cfg.poisson_grid, cfg.random_rows, cfg.random_nnz
    rand = sp.random_array(
        (rows, rows), density=nnz / rows**2, format="csr", rng=np.random.default_rng(0)
    )
    out = []
    for key, title, mat in (
        ("poisson2d", f"2-D Poisson, {g}x{g} grid", spf.sparse.poisson2d(g)),
        ("random", f"uniform random, {rows:,} rows", rand),
    ):
        args = spf.sparse.csr_args(mat)
        same = sp.csr_array((args["A"], args["col"], args["rowptr"]), shape=mat.shape, copy=False)
        x = np.random.default_rng(1).uniform(-1.0, 1.0, args["M"])
        out.append(Case(key, title, same, args, x))
    return out


def triad(ctx: Context) -> tuple[dict[int, dict[str, float]], dict[str, Any]]:
    """STREAM triad GB/s per thread count (medians and best of interleaved runs)."""
    n = ctx.cfg.triad_n
    a, b, c = np.zeros(n), np.full(n, 1.0), np.full(n, 2.0)
    fns: list[Variant] = [("triad", t, lambda: ctx.rt.triad(a, b, c, 3.0)) for t in ctx.threads]
    times, info = measure(ctx, fns, ctx.cfg.triad_rounds)
    if not np.all(a == 7.0):
        raise SystemExit("triad gives a wrong result")
    out = {
        t: {
            "median_gb_s": 24 * n / median(times["triad", t]) / 1e9,
            "best_gb_s": 24 * n / min(times["triad", t]) / 1e9,
        }
        for t in ctx.threads
    }
    return out, info


def scipy_inplace() -> Callable[..., None] | None:
    """scipy's own ``y += A*x`` loop (private API; None where it has moved)."""
    try:
        tools = importlib.import_module("scipy.sparse._sparsetools")
    except ImportError:
        return None
    fn = getattr(tools, "csr_matvec", None)
    return fn if callable(fn) else None


class Codes:
    """Everything compiled once per run: spf kernels, the hand-written library, MKL."""

    def __init__(self, ctx: Context, sec: Section) -> None:
        comp = spf.kernels.spmv_csr()
        comp.stmt(0).parallelize("i")
        self.csr = comp.compile(cache_dir=str(ctx.work / "kernels"))
        self.formats = {s: sell(8, s) for s in SIGMAS}
        self.sell = {
            s: f.scheduled_executor().compile(cache_dir=str(ctx.work / "kernels"))
            for s, f in self.formats.items()
        }
        bdia = spf.kernels.spmv(BDIA(BDIA_ROWS))
        bdia.stmt("spmv").parallelize("b")  # gcc vectorizes the row loop r by itself
        self.bdia = bdia.compile(cache_dir=str(ctx.work / "kernels"))
        self.ffi, self.hand, command = load_c(HAND_C, HAND_CDEF, "bench_hand_spmv", str(ctx.work))
        self.mkl: Any
        self.mkl, self.mkl_where = load_mkl()
        if self.mkl is not None:
            ctx.rt.setters.append(self.mkl.MKL_Set_Num_Threads)
        sec.data["spf_command"] = self.csr.command
        sec.data["hand_command"] = command
        sec.data["spf_csr_source"] = self.csr.source
        sec.data["spf_sell_source"] = {str(s): k.source for s, k in self.sell.items()}
        sec.data["spf_bdia_source"] = self.bdia.source

    def hand_call(self, case: Case, y: Any) -> Callable[[], object]:
        fb, a = self.ffi.from_buffer, case.args
        rp, col, val = (
            fb("int32_t[]", a["rowptr"]),
            fb("int32_t[]", a["col"]),
            fb("double[]", a["A"]),
        )
        xb, yb, n = fb("double[]", case.x), fb("double[]", y), a["N"]
        return lambda: self.hand.hand_spmv(n, rp, col, val, xb, yb)


def inspect_case(
    ctx: Context, codes: Codes, case: Case, info: dict[str, Any]
) -> tuple[dict[int, Any], dict[str, Any] | None, dict[int, MklCsr]]:
    """The inspectors, timed into ``info``: SELL matrices by sigma, BDIA arguments (None
    where the matrix's entries lie on too many diagonals per block) and MKL handles by
    thread count (MKL partitions rows for the thread count at optimize)."""
    import time

    n, args = case.args["N"], case.args
    sells = {}
    for s, fmt in codes.formats.items():
        t0 = time.perf_counter()
        sells[s] = fmt.inspect(args["rowptr"], args["col"], args["A"], (n, args["M"]))
        info[f"sell8-{s} inspector_s"] = time.perf_counter() - t0
        info[f"sell8-{s} fill_ratio"] = sells[s].fill_ratio
    t0 = time.perf_counter()
    bdia: dict[str, Any] | None = None
    try:
        bdia = spf.sparse.bdia_args(case.matrix, BDIA_ROWS, max_fill=1.5)
        info[f"bdia{BDIA_ROWS} inspector_s"] = time.perf_counter() - t0
        info[f"bdia{BDIA_ROWS} fill_ratio"] = bdia["NS"] * BDIA_ROWS / args["NNZ"]
    except ArgumentError:
        pass  # no BDIA row for this matrix
    handles = {}
    if codes.mkl is not None:
        for t in ctx.threads:
            ctx.rt.set_threads(t)
            handles[t] = MklCsr(codes.mkl, args)
            info[f"MKL optimize_s ({t} threads)"] = handles[t].optimize_s
        info["MKL handle bytes/nnz ratio"] = handles[ctx.threads[0]].handle_bytes / args["NNZ"]
    return sells, bdia, handles


def variants(
    ctx: Context, codes: Codes, case: Case, info: dict[str, Any]
) -> tuple[list[Variant], dict[tuple[str, int], Any]]:
    """The callables to time, each with its own ``y``; fills ``info`` (inspector times)."""
    ys: dict[tuple[str, int], Any] = {}
    out: list[Variant] = []
    n, x, args = case.args["N"], case.x, case.args

    def y_for(code: str, t: int) -> Any:
        ys[code, t] = np.zeros(n)
        return ys[code, t]

    sells, bdia, handles = inspect_case(ctx, codes, case, info)

    def kernel_call(kernel: Any, y: Any, kw: dict[str, Any]) -> Callable[[], object]:
        return lambda: kernel(y=y, x=x, check=False, **kw)

    def mkl_call(handle: MklCsr, y: Any) -> Callable[[], object]:
        return lambda: handle.mv(x, y)

    for t in ctx.threads:
        out.append(("spf CSR", t, kernel_call(codes.csr, y_for("spf CSR", t), args)))
        out.append(("hand C", t, codes.hand_call(case, y_for("hand C", t))))
        for s, kernel in codes.sell.items():
            y = y_for(f"spf SELL-8-{s}", t)
            out.append((f"spf SELL-8-{s}", t, kernel_call(kernel, y, sells[s].args())))
        if bdia is not None:
            y = y_for(f"spf BDIA-{BDIA_ROWS}", t)
            out.append((f"spf BDIA-{BDIA_ROWS}", t, kernel_call(codes.bdia, y, bdia)))
        if t in handles:
            out.append(("MKL IE", t, mkl_call(handles[t], y_for("MKL IE", t))))
    a = case.matrix
    out.append(("scipy A@x", 1, lambda: a @ x))
    inplace = scipy_inplace()
    if inplace is not None:
        y = y_for("scipy csr_matvec", 1)
        rp, col, val, m = args["rowptr"], args["col"], args["A"], args["M"]
        out.append(("scipy csr_matvec", 1, lambda: inplace(n, m, rp, col, val, x, y)))
    return out, ys


def check(ctx: Context, case: Case, vs: list[Variant], ys: dict[tuple[str, int], Any]) -> None:
    want = case.matrix @ case.x
    for code, t, fn in vs:
        ctx.rt.set_threads(t)
        got: Any = fn()
        if (code, t) in ys:
            got = ys[code, t].copy()
            ys[code, t][:] = 0.0
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            raise SystemExit(f"spmv {case.key}: {code} ({t} thread(s)) gives a wrong y")


def bench_case(ctx: Context, codes: Codes, case: Case, sec: Section, tri: dict[int, Any]) -> None:
    ctx.log(f"spmv: {case.title}")
    info: dict[str, Any] = {}
    vs, ys = variants(ctx, codes, case, info)
    check(ctx, case, vs, ys)
    times, load = measure(ctx, vs, ctx.cfg.spmv_rounds)
    ms = {key: 1e3 * median(ts) for key, ts in times.items()}
    sec.line(
        f"### SpMV, {case.title}: N = {case.args['N']:,}, nnz = {case.args['NNZ']:,}, "
        f"{case.bytes_moved / 1e6:.1f} MB per call (model)\n"
    )
    sec.line(load_note(load) + "\n")
    rows = []
    for code, t in ms:
        others = [v for (c2, t2), v in ms.items() if t2 == t and c2 != code and c2[:3] != "spf"]
        best = min(others, default=float("nan"))
        gbs = case.bytes_moved / (ms[code, t] * 1e-3) / 1e9
        rows.append([
            code, str(t), f"{ms[code, t]:.3f}", f"{gbs:.1f}", f"{gbs / tri[t]['median_gb_s']:.2f}",
            f"{ms[code, t] / ms['hand C', t]:.3f}", f"{ms[code, t] / best:.3f}",
        ])  # fmt: skip
    rows.sort(key=lambda r: (int(r[1]), float(r[2])))
    sec.table(
        ["code", "threads", "median ms", "GB/s", "of triad", "/ hand C", "/ best other"], rows
    )
    sec.line(
        "Inspector: "
        + ", ".join(
            f"{k} {v:.3f}" if "ratio" in k else f"{k} {v * 1e3:.1f} ms" for k, v in info.items()
        )
        + "\n"
    )
    sec.data.setdefault("matrices", {})[case.key] = {
        "title": case.title, "N": case.args["N"], "nnz": case.args["NNZ"],
        "bytes_model": case.bytes_moved, "load": load, "inspector": info,
        "median_ms": {f"{c}@{t}": v for (c, t), v in ms.items()},
    }  # fmt: skip
    targets(sec, case, ms, ctx.threads)


def targets(sec: Section, case: Case, ms: dict[tuple[str, int], float], threads: list[int]) -> None:
    most = max(threads)
    r = ms["spf CSR", most] / ms["hand C", most]
    sec.target(f"SpMV {case.key}: spf CSR <= 1.05x hand C ({most} threads)", f"{r:.3f}x", r <= 1.05)
    if ("MKL IE", most) not in ms:
        sec.target(f"SpMV {case.key}: spf SELL <= 1.0x MKL IE", "MKL not installed", False)
        return
    bdia = f"spf BDIA-{BDIA_ROWS}"
    for t in threads:
        if (bdia, t) in ms:
            r = ms[bdia, t] / ms["MKL IE", t]
            sec.target(f"SpMV {case.key}: {bdia} <= 1.0x MKL IE ({t} thread(s))", f"{r:.3f}x",
                       r <= 1.0)  # fmt: skip
    for t in threads:
        best = min(ms[f"spf SELL-8-{s}", t] for s in SIGMAS)
        which = min(SIGMAS, key=lambda s: ms[f"spf SELL-8-{s}", t])
        r = best / ms["MKL IE", t]
        sec.target(
            f"SpMV {case.key}: spf SELL-8-{which} <= 1.0x MKL IE ({t} thread(s))",
            f"{r:.3f}x",
            r <= 1.0,
        )


def run(ctx: Context) -> Section:
    sec = Section("spmv")
    codes = Codes(ctx, sec)
    if codes.mkl is None:
        sec.line(f"MKL: not available ({codes.mkl_where}); its columns are missing.\n")
    ctx.log("spmv: STREAM triad")
    before, load_b = triad(ctx)
    cases = matrices(ctx)
    body = Section("tmp")
    for case in cases:
        bench_case(ctx, codes, case, body, before)
    after, load_a = triad(ctx)
    tri = {
        t: {"median_gb_s": max(before[t]["median_gb_s"], after[t]["median_gb_s"]),
            "before": before[t], "after": after[t]}
        for t in ctx.threads
    }  # fmt: skip
    sec.line("### STREAM triad (same flags as the kernels), before and after the SpMV runs\n")
    sec.line(f"before: {load_note(load_b)}; after: {load_note(load_a)}\n")
    sec.table(
        ["threads", "median GB/s before", "median GB/s after", "best GB/s"],
        [[str(t), f"{before[t]['median_gb_s']:.1f}", f"{after[t]['median_gb_s']:.1f}",
          f"{max(before[t]['best_gb_s'], after[t]['best_gb_s']):.1f}"] for t in ctx.threads],
    )  # fmt: skip
    sec.line("`of triad` uses the triad before the SpMV runs; `/ best other` divides by the "
             "fastest code that is not spf's at the same thread count (scipy runs serially: its "
             "rows appear at 1 thread only).\n")  # fmt: skip
    sec.markdown.extend(body.markdown)
    sec.targets.extend(body.targets)
    sec.data.update(body.data)
    sec.data["triad"] = {str(t): v for t, v in tri.items()}
    return sec

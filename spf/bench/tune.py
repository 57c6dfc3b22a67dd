"""``spf bench --only tune``: what ``spf.tune`` and ``spf.formats.tune`` find (issue 30).

* SpMV on every matrix of the SuiteSparse folder (``$SPF_SUITESPARSE``, else
  ``/work/shared/data/suitesparse``, when present), 2-D Poisson and a synthetic power-law
  matrix: ``spf.formats.tune`` (``threads`` = the largest thread count of the run) against
  spf's parallel CSR (``spmv_csr()`` with ``parallelize("i")``), the exhaustive best of
  formats.tune's own space (every candidate measured: a budget no search exhausts) and MKL's
  inspector-executor (``mkl`` wheel, when installed; warmed up with the 1000 calls its hint
  announces, then timed at 1 thread and at that thread count, the faster counts: on small
  matrices its parallel region's start-up dominates), all
  timed in one interleaved rotation. spf's kernels are timed as prepared calls
  (``fres.prepare()``, ``kernel.prepare``: the matrix's arrays bound once, ``x`` and ``y``
  per call), what a user calls repeatedly, as MKL's executor is called on its handle.
  Targets: >= 1.2x parallel CSR and >= level with MKL (geomeans), >= 0.95 of the exhaustive
  best.
* The dense rows (GEMM, blur, eight PolyBench kernels, a repeated call with a record):
  :mod:`spf.bench.tune_dense`.

``--quick``: two small SuiteSparse matrices, small sizes and budgets of a few seconds.
"""

from __future__ import annotations

import importlib
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

import spf
import spf.formats
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
from spf.bench.mkl import MklCsr, load_mkl

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy
SUITESPARSE = Path(os.environ.get("SPF_SUITESPARSE", "/work/shared/data/suitesparse"))
BUDGET_S = {True: 2.0, False: 30.0}  # formats.tune's budget per matrix (quick, full)
EXHAUSTIVE_S = 1e6  # a budget no search exhausts: every candidate of the space is measured


def power_law(n: int, seed: int = 0) -> Any:
    """An ``n x n`` matrix whose row lengths follow a Zipf law (exponent 2, at most ``n``),
    columns uniform: a few long rows among many short ones, as in web and social graphs."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(2.0, n), n)
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.integers(0, n, rows.size)
    m = sp.csr_array((rng.uniform(-1, 1, rows.size), (rows, cols)), shape=(n, n))
    m.sum_duplicates()
    return m


def matrices(ctx: Context) -> list[tuple[str, Any]]:
    """``(name, csr matrix)``: the SuiteSparse files (two smallest in quick mode), Poisson,
    power-law."""
    files = sorted(SUITESPARSE.glob("*.mtx"), key=lambda p: p.stat().st_size)
    if ctx.cfg.quick:
        files = files[:2]
    out = [(p.stem, sp.csr_array(spf.sparse.read_matrix_market(p))) for p in files]
    g = ctx.cfg.poisson_grid
    out.append((f"poisson2d {g}x{g}", sp.csr_array(spf.sparse.poisson2d(g))))
    n = ctx.cfg.random_rows
    out.append((f"power-law {n}", power_law(n)))
    return out


def geomean(xs: list[float]) -> float:
    ok = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in ok) / len(ok)) if ok else float("nan")


class _Spmv:
    """One matrix's variants: each computes ``y = A @ x`` into its own ``y``."""

    def __init__(self, ctx: Context, a: Any, csr_par: Any, mkl: Any) -> None:
        self.a, self.t = a, max(ctx.threads)
        self.x = np.random.default_rng(1).uniform(-1.0, 1.0, a.shape[1])
        self.want = a @ self.x
        self.outs: dict[str, Any] = {}
        self.variants: list[Variant] = []
        self.handles: list[MklCsr] = []
        args = spf.sparse.csr_args(a)
        self._add("spf parallel CSR", csr_par, args)
        if mkl is not None and a.nnz:
            handle = MklCsr(mkl, args)
            self.handles.append(handle)
            handle.warm_up(self.x, np.zeros(a.shape[0]))  # timed past MKL's slow first calls
            for threads in dict.fromkeys((self.t, 1)):  # MKL's time: the faster of the two
                y = np.zeros(a.shape[0])
                self.outs[f"MKL IE@{threads}"] = y

                def mkl_call(h: MklCsr = handle, yv: Any = y) -> None:
                    yv.fill(0.0)
                    h.mv(self.x, yv)

                self.variants.append((f"MKL IE@{threads}", threads, mkl_call))

    def _add(self, code: str, kernel: Any, args: dict[str, Any]) -> None:
        """``kernel`` prepared on the matrix's ``args`` (as formats.tune's choice is: the
        two are compared with the same call from Python)."""
        prepared = kernel.prepare(["y", "x"], **args)
        self._variant(code, lambda x, y: prepared(y, x))

    def add_tuned(self, code: str, fres: Any) -> None:
        """``fres.prepare()``'s call, what a user of the result calls (the matrix's arrays
        bound once, as MKL's handle holds them)."""
        self._variant(code, fres.prepare())

    def _variant(self, code: str, spmv: Any) -> None:
        y = np.zeros(self.a.shape[0])
        self.outs[code] = y

        def call() -> None:
            y.fill(0.0)
            spmv(self.x, y)

        self.variants.append((code, self.t, call))

    def check(self) -> None:
        for code, y in self.outs.items():
            got = y[: self.a.shape[0]]
            if not np.allclose(
                got, self.want, rtol=1e-9, atol=1e-9 * (abs(self.want).max(initial=1))
            ):
                raise SystemExit(f"tune bench: {code} computes a wrong A @ x")

    def close(self) -> None:
        for h in self.handles:
            h.close()


def spmv(ctx: Context, sec: Section) -> None:
    quick = ctx.cfg.quick
    mkl, mkl_where = load_mkl()
    if mkl is not None and mkl.MKL_Set_Num_Threads not in ctx.rt.setters:
        ctx.rt.setters.append(mkl.MKL_Set_Num_Threads)  # "MKL IE@1" on one thread
    csr_par = spf.kernels.spmv_csr()
    csr_par.stmt(0).parallelize("i")
    csr_kernel = csr_par.compile(cache_dir=str(ctx.work / "kernels"))
    record_dir = ctx.work / "formats_tune"
    rows, speed, vs_exh, vs_mkl, data = [], [], [], [], []
    worst: dict[str, Any] = {"load": None, "attempts": 0, "waited_s": 0.0}
    for name, a in matrices(ctx):
        ctx.log(f"tune: formats.tune on {name} ({a.shape[0]} rows, {a.nnz} entries)")
        case = _Spmv(ctx, a, csr_kernel, mkl)
        fres = spf.formats.tune(a, budget=BUDGET_S[quick], seed=0, reuse=False,
                                threads=case.t, record_dir=record_dir)  # fmt: skip
        exh = spf.formats.tune(a, budget=EXHAUSTIVE_S, seed=0, reuse=False, threads=case.t,
                               record_dir=record_dir / "exhaustive")  # fmt: skip
        case.add_tuned("formats.tune", fres)
        case.add_tuned("exhaustive best", exh)
        for _, _, fn in case.variants:
            fn()
        case.check()
        times, info = measure(ctx, case.variants, ctx.cfg.spmv_rounds)
        if worst["load"] is None or disturbed(info["load"]) > disturbed(worst["load"]):
            worst = info
        us = {code: 1e6 * median(ts) for (code, _), ts in times.items()}
        mkl_us = {c: v for c, v in us.items() if c.startswith("MKL IE@")}
        if mkl_us:  # MKL at the thread count it ran faster with (formats.tune chooses too)
            us["MKL IE"] = min(mkl_us.values())
            mkl_best = min(mkl_us, key=mkl_us.__getitem__).split("@")[1]
        case.close()
        tuned = us["formats.tune"]
        speed.append(us["spf parallel CSR"] / tuned)
        vs_exh.append(us["exhaustive best"] / tuned)
        if "MKL IE" in us:
            vs_mkl.append(us["MKL IE"] / tuned)
        mkl_text = f"{us['MKL IE']:.1f} ({mkl_best}t)" if mkl_us else "not installed"
        rows.append([name, fres.candidate, f"{tuned:.1f}",
                     f"{us['spf parallel CSR']:.1f}", f"{us['exhaustive best']:.1f}", mkl_text,
                     f"{speed[-1]:.2f}", f"{vs_exh[-1]:.2f}"])  # fmt: skip
        data.append({"matrix": name, "choice": fres.format.name, "schedule": fres.schedule,
                     "candidate": fres.candidate, "exhaustive": exh.candidate, "us": us,
                     "tried": fres.tried})  # fmt: skip
    t = max(ctx.threads)
    sec.line(f"### SpMV: formats.tune ({BUDGET_S[quick]:g} s per matrix), {t} thread(s)\n")
    sec.line("Medians of interleaved rounds per matrix (microseconds per SpMV); the exhaustive "
             "best measured every candidate of formats.tune's space; MKL IE: the faster "
             f"of its runs at 1 and {t} thread(s) (in brackets); "
             f"{load_note(worst)}.\n")  # fmt: skip
    sec.table(["matrix", "chosen", "tune us", "CSR par us", "exhaustive us", "MKL IE us",
               "x CSR par", "/ exhaustive"], rows, "llrrrrrr")  # fmt: skip
    g_speed, g_exh = geomean(speed), geomean(vs_exh)
    sec.target("SpMV: formats.tune >= 1.2x spf parallel CSR (geomean)", f"{g_speed:.2f}x",
               g_speed >= 1.2)  # fmt: skip
    sec.target("SpMV: formats.tune >= 0.95 of its exhaustive best (geomean)", f"{g_exh:.2f}",
               g_exh >= 0.95)  # fmt: skip
    if vs_mkl:
        g_mkl = geomean(vs_mkl)
        sec.target("SpMV: formats.tune level with MKL IE (geomean >= 1.0)", f"{g_mkl:.2f}x",
                   g_mkl >= 1.0)  # fmt: skip
    else:
        sec.target("SpMV: formats.tune level with MKL IE (geomean >= 1.0)", "not installed",
                   False, mkl_where)  # fmt: skip
    sec.data["spmv"] = {"rows": data, "geomean_vs_csr_par": g_speed, "geomean_vs_exh": g_exh}


def run(ctx: Context) -> Section:
    from spf.bench import tune_dense

    sec = Section("tune")
    spmv(ctx, sec)
    tune_dense.run(ctx, sec)
    return sec

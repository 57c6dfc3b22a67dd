"""Transposed SpMV ``y += A^T·x`` from CSR: a scatter, parallel only as a reduction.

``spf.kernels.spmtv_csr()`` three ways: serial (no tag), ``parallelize("i",
reduction="atomic")`` (``#pragma omp atomic`` on every update) and ``parallelize("i",
reduction="privatize")`` (per-thread copies of ``y`` combined after the loop), at each thread
count, against scipy's ``A.T @ x`` (serial; it allocates ``y``). Same matrices as the SpMV
section (2-D Poisson and uniform random); every code is checked against ``A.T @ x`` first,
then timed interleaved (medians).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import spf.kernels
from spf.bench.common import Context, Section, Variant, load_note, measure, median
from spf.bench.spmv import Case, matrices

if TYPE_CHECKING:
    from collections.abc import Callable

OPTIONS = ("atomic", "privatize")


def kernels(ctx: Context) -> dict[str, Any]:
    """The serial and the two parallel kernels, compiled once per run."""
    out = {}
    for option in (None, *OPTIONS):
        comp = spf.kernels.spmtv_csr()
        if option is not None:
            comp.stmt(0).parallelize("i", reduction=option)
        out[option or "serial"] = comp.compile(cache_dir=str(ctx.work / "kernels"))
    return out


def variants(
    ctx: Context, ks: dict[str, Any], case: Case
) -> tuple[list[Variant], dict[tuple[str, int], Any]]:
    """Callables to time, each with its own ``y``."""
    args, x = case.args, np.random.default_rng(2).uniform(-1.0, 1.0, case.args["N"])
    case_x = x
    ys: dict[tuple[str, int], Any] = {}

    def call(kernel: Any, code: str, t: int) -> Callable[[], object]:
        y = ys[code, t] = np.zeros(args["M"])
        return lambda: kernel(y=y, x=case_x, check=False, **args)

    out: list[Variant] = [("spf serial", 1, call(ks["serial"], "spf serial", 1))]
    for t in ctx.threads:
        for option in OPTIONS:
            code = f"spf {option}"
            out.append((code, t, call(ks[option], code, t)))
    at = case.matrix.T.tocsr()  # scipy's A.T @ x on the CSR matrix converts first: time both
    out.append(("scipy A.T@x", 1, lambda: case.matrix.T @ case_x))
    out.append(("scipy (A.T CSR)@x", 1, lambda: at @ case_x))
    ys["x", 0] = x
    return out, ys


def check(ctx: Context, case: Case, vs: list[Variant], ys: dict[tuple[str, int], Any]) -> None:
    x = ys.pop(("x", 0))
    want = case.matrix.T @ x
    for code, t, fn in vs:
        ctx.rt.set_threads(t)
        got: Any = fn()
        if (code, t) in ys:
            got = ys[code, t].copy()
            ys[code, t][:] = 0.0
        scale = 1e-12 * (1.0 + float(np.abs(want).max(initial=0.0)))
        if not np.allclose(got, want, rtol=1e-12, atol=scale):
            raise SystemExit(f"spmtv {case.key}: {code} ({t} thread(s)) gives a wrong y")


def bench_case(ctx: Context, ks: dict[str, Any], case: Case, sec: Section) -> None:
    ctx.log(f"spmtv: {case.title}")
    vs, ys = variants(ctx, ks, case)
    check(ctx, case, vs, ys)
    times, load = measure(ctx, vs, ctx.cfg.spmv_rounds)
    ms = {key: 1e3 * median(ts) for key, ts in times.items()}
    serial = ms["spf serial", 1]
    scipy = ms["scipy A.T@x", 1]
    sec.line(f"### A^T x, {case.title}: N = {case.args['N']:,}, nnz = {case.args['NNZ']:,}\n")
    sec.line(load_note(load) + "\n")
    rows = [
        [code, str(t), f"{v:.3f}", f"{v / serial:.3f}", f"{v / scipy:.3f}"]
        for (code, t), v in sorted(ms.items(), key=lambda kv: (kv[0][1], kv[1]))
    ]
    sec.table(["code", "threads", "median ms", "/ spf serial", "/ scipy A.T@x"], rows)
    sec.data.setdefault("matrices", {})[case.key] = {
        "title": case.title,
        "N": case.args["N"],
        "nnz": case.args["NNZ"],
        "load": load,
        "median_ms": {f"{c}@{t}": v for (c, t), v in ms.items()},
    }
    most = max(ctx.threads)
    for option in OPTIONS:
        what = f"A^T x {case.key}: spf {option} at {most} threads faster than serial"
        if most < 2:
            sec.target(what, "not run (--threads has no count above 1)", False)
            continue
        r = ms[f"spf {option}", most] / serial
        sec.target(what, f"{r:.3f}x serial", r < 1.0)


def run(ctx: Context) -> Section:
    sec = Section("spmtv")
    ks = kernels(ctx)
    sec.data["sources"] = {k: v.source for k, v in ks.items()}
    for case in matrices(ctx):
        bench_case(ctx, ks, case, sec)
    sec.line(
        "`/ spf serial` divides by the untagged kernel at 1 thread; scipy runs serially (its "
        "rows appear at 1 thread only); `scipy (A.T CSR)@x` times the product with a "
        "transposed copy made beforehand (not counted).\n"
    )
    return sec

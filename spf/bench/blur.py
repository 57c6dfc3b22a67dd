"""Two-stage 3x3 box blur (``spf.kernels.blur2d``) on a 2112 x 3520 image of doubles.

* ``spf``: ``blur2d()`` scheduled with spf's commands (:func:`schedule`, one schedule per
  thread count, as for Halide): both stages in column strips, one per thread (the strip loop
  ``j0`` parallel), the second stage shifted two rows so it
  runs right after the row of ``bx`` it needs (fusion by ``set_schedule``), ``bx`` folded to 3
  rows (``storage_fold``: a local line buffer instead of an image-sized array), rows left to
  gcc's auto-vectorizer;
* ``hand C``: the hand-fused loop (parallel rows, horizontal sums recomputed per output row);
* ``Halide``: Halide's Python package (JIT for the host), two classic schedules (line buffer:
  ``split(y, 64)``, ``bx.store_at(yo).compute_at(yi)``; tiles: ``tile(256, 32)``,
  ``bx.compute_at(x)``), serial and parallel; the faster is "Halide best".
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import spf.kernels
from spf.bench.common import Context, Section, Variant, load_c, load_note, measure_groups, median
from spf.errors import SpfError

HAND_C = r"""
#include <stdint.h>
/* out = 3x3 box blur of img (n x m), as bx = horizontal 3-sums / 3, out = vertical ones / 3. */
void hand_blur(int64_t n, int64_t m, const double *restrict img, double *restrict out)
{
  #pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n - 2; i++) {
    const double *r0 = img + i * m, *r1 = r0 + m, *r2 = r1 + m;
    double *o = out + i * (m - 2);
    #pragma omp simd
    for (int64_t j = 0; j < m - 2; j++) {
      double b0 = (r0[j] + r0[j + 1] + r0[j + 2]) / 3.0;
      double b1 = (r1[j] + r1[j + 1] + r1[j + 2]) / 3.0;
      double b2 = (r2[j] + r2[j + 1] + r2[j + 2]) / 3.0;
      o[j] = (b0 + b1 + b2) / 3.0;
    }
  }
}
"""
HAND_CDEF = "void hand_blur(int64_t n, int64_t m, const double *img, double *out);"


def schedule(width: int, vector: bool = False) -> spf.Computation:
    """``blur2d()`` fused in column strips of ``width``, ``bx`` folded to three rows.

    The benchmark compiles one schedule per thread count, with one strip per thread (``width =
    ceil((M-2) / threads)`` rounded up to a multiple of 8): wide strips keep the row streams
    long (512-column strips jump a page per row and ran 1.5x slower here). Rows are left to
    gcc's auto-vectorizer (``vector=False``): ``vectorize`` makes codegen separate the partial
    strip, and the partial strip of a parallel loop is then run after the parallel loop,
    serially.
    """
    comp = spf.kernels.blur2d()
    s0, s1 = comp.stmts
    strip = f"j = {width}*j0 + j1 && 0 <= j1 < {width}"
    s0.set_schedule(f"{{[i,j] -> [0,j0,0,i,0,j1,0]: {strip}}}")
    s1.set_schedule(f"{{[i,j] -> [0,j0,0,i+2,1,j1,0]: {strip}}}")
    s0.parallelize("j0")
    s0.storage_fold("i", 3)
    if vector:
        s0.vectorize("j1", 8)
        s1.vectorize("j1", 8)
    return comp


def halide_pipelines() -> tuple[dict[str, Any], str]:
    """Compiled Halide pipelines by name, or ({}, why not)."""
    try:
        hl: Any = importlib.import_module("halide")
    except ImportError as err:  # pragma: no cover - depends on the install
        return {}, f"halide not importable ({err}); pip install halide"
    out: dict[str, Any] = {}
    try:
        target = hl.get_jit_target_from_environment()
        for name, parallel in (("line", False), ("line", True), ("tile", False), ("tile", True)):
            x, y = hl.Var("x"), hl.Var("y")
            xi, yi, yo, xo = hl.Var("xi"), hl.Var("yi"), hl.Var("yo"), hl.Var("xo")
            inp = hl.ImageParam(hl.Float(64), 2, "inp")
            bx, o = hl.Func("bx"), hl.Func("o")
            bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3.0
            o[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3.0
            if name == "line":
                o.split(y, yo, yi, 64).vectorize(x, 8)
                if parallel:
                    o.parallel(yo)
                bx.store_at(o, yo).compute_at(o, yi).vectorize(x, 8)
            else:
                o.tile(x, y, xo, yo, xi, yi, 256, 32).vectorize(xi, 8)
                if parallel:
                    o.parallel(yo)
                bx.compute_at(o, xo).vectorize(x, 8)
            o.compile_jit(target)
            out[f"{name}{'-par' if parallel else ''}"] = (o, inp, hl)
    except Exception as err:
        return {}, f"halide failed: {type(err).__name__}: {err}"
    return out, str(target)


def build_calls(
    ctx: Context, sec: Section, img: Any
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
    """The callables (spf, hand C, Halide pipelines), their outputs, the pipelines, target."""
    n, m = img.shape
    kernels: dict[int, Any] = {}
    for t in ctx.threads:  # one strip per thread, a multiple of 8 columns wide
        width = -(-(m - 2) // t)
        width += -width % 8
        comp = schedule(width)
        try:
            comp.check_legality()
            checked = True
        except SpfError as err:
            checked = False
            sec.line(f"Note: spf's legality check rejected the blur schedule ({err}); "
                     "compiled with check=False.\n")  # fmt: skip
        kernels[t] = comp.compile(check=checked, cache_dir=str(ctx.work / "kernels"))
        sec.data[f"spf_source@{t}"] = kernels[t].source
        sec.data[f"strip_width@{t}"] = width
    ffi, hand, command = load_c(HAND_C, HAND_CDEF, "bench_hand_blur", str(ctx.work))
    sec.data.update(spf_command=kernels[1].command, hand_command=command)
    outs = {k: np.zeros((n - 2, m - 2)) for k in ("spf", "hand")}
    hb = (ffi.from_buffer("double[]", img), ffi.from_buffer("double[]", outs["hand"]))
    calls: dict[str, Any] = {"hand C": lambda: hand.hand_blur(n, m, *hb)}
    for t, kernel in kernels.items():
        calls[f"spf@{t}"] = lambda k=kernel: k(out=outs["spf"], img=img, check=False)
    pipes, where = halide_pipelines()
    for name, (o, inp, hl) in pipes.items():
        outs[name] = np.zeros((n - 2, m - 2))
        inp.set(hl.Buffer(img))
        hbuf = hl.Buffer(outs[name])
        calls[f"Halide {name}"] = lambda o=o, hbuf=hbuf: o.realize(hbuf)
    if not pipes:
        sec.line(f"Halide: not run: {where}.\n")
    return calls, outs, pipes, where


def report(ctx: Context, sec: Section, ms: dict[tuple[str, int], float], where: str) -> None:
    n, m = ctx.cfg.blur_shape
    mpx = (n - 2) * (m - 2) / 1e6

    def halide_best(t: int) -> float | None:
        hal = [w for (c, tt), w in ms.items() if c.startswith("Halide") and tt == t]
        return min(hal) if hal else None

    rows = []
    for (code, t), v in sorted(ms.items(), key=lambda kv: (kv[0][1], kv[1])):
        best = halide_best(t)
        vs_best = "-" if best is None else f"{v / best:.3f}"
        rows.append([code, str(t), f"{v:.2f}", f"{mpx / v * 1e3:.0f}",
                     f"{v / ms['hand C', t]:.3f}", vs_best])  # fmt: skip
    sec.table(["code", "threads", "median ms", "Mpixel/s", "/ hand C", "/ Halide best"], rows)
    for t in ctx.threads:
        r = ms["spf", t] / ms["hand C", t]
        sec.target(f"blur, {t} thread(s): spf <= 1.0x hand-fused C", f"{r:.3f}x", r <= 1.0)
        best = halide_best(t)
        if best is not None:
            r = ms["spf", t] / best
            sec.target(f"blur, {t} thread(s): spf <= 1.0x Halide best", f"{r:.3f}x", r <= 1.0)
        else:
            sec.target(f"blur, {t} thread(s): spf <= 1.0x Halide best", "not run", False, where)


def run(ctx: Context) -> Section:
    sec = Section("blur")
    n, m = ctx.cfg.blur_shape
    img = np.random.default_rng(3).uniform(0.0, 1.0, (n, m))
    want = sum(img[a : n - 2 + a, b : m - 2 + b] for a in range(3) for b in range(3)) / 9.0
    calls, outs, pipes, where = build_calls(ctx, sec, img)
    for fn in calls.values():
        fn()
    for name, got in outs.items():
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            raise SystemExit(f"blur: {name} gives a wrong image")
    ours: list[Variant] = []
    for t in ctx.threads:
        ours += [("spf", t, calls[f"spf@{t}"]), ("hand C", t, calls["hand C"])]
    # Halide's thread pool is its own: serial schedules at 1 thread, parallel ones at all
    halide: list[Variant] = [
        (
            f"Halide {name}",
            max(ctx.threads) if name.endswith("-par") else 1,
            calls[f"Halide {name}"],
        )
        for name in pipes
    ]
    ctx.log(f"blur: {n}x{m}")
    times, load = measure_groups(ctx, [ours, halide], ctx.cfg.blur_rounds)
    ms = {key: 1e3 * median(ts) for key, ts in times.items()}
    sec.line(f"### Two-stage blur {n}x{m} (doubles)\n\n{load_note(load)}\n")
    if pipes:
        sec.line(f"Halide target: `{where}`; Halide's parallel schedules use its own thread "
                 f"pool (all {max(ctx.threads)} cores).\n")  # fmt: skip
    report(ctx, sec, ms, where)
    sec.data.update(median_ms={f"{c}@{t}": v for (c, t), v in ms.items()}, load=load)
    return sec

"""The dense rows of ``spf bench --only tune`` (:mod:`spf.bench.tune`).

* GEMM: ``spf.tune`` on the untransformed ``spf.kernels.gemm()`` at ``n`` = 1024 (quick:
  128), one thread, every candidate built with :data:`spf.bench.gemm.CFLAGS` (as the gemm
  bench builds spf's hand schedule: ``-ffp-contract=fast`` lets gcc fuse multiply-adds),
  timed interleaved with OpenBLAS (numpy's ``matmul``); TVM MetaSchedule
  (the ``apache-tvm`` wheel, :mod:`spf.bench.tvm_gemm`) is set up in a child started
  before ``spf.tune`` (its setup seconds reported apart from its search budget, the same as
  spf.tune's), and reported as not installed when it is not importable, or with the reason
  it measured nothing. Target: >= 0.7x OpenBLAS.
* Blur: ``spf.tune`` on the untransformed ``spf.kernels.blur2d()`` next to spf's hand
  schedule (:func:`spf.bench.blur.schedule`) at the run's largest thread count, and Halide
  (``halide`` wheel) when installed.
* PolyBench: ``spf.tune`` on eight kernels (gemm, 2mm, syrk, atax, jacobi-2d, heat-3d,
  covariance, lu) at sizes near PolyBench's MEDIUM (quick: a fifth), each result checked
  against the kernel's reference; the speedup is the one ``spf.tune`` measured (its final
  interleaved timing of the chosen schedule against the untransformed one). Target: >= 2x
  geomean.
* A repeated ``spf.tune`` call that finds its record: wall milliseconds. Target: < 50 ms.
"""

from __future__ import annotations

import importlib.util
import time
from typing import Any

import numpy as np

import spf
from spf.bench.blur import halide_pipelines, schedule
from spf.bench.common import Context, Section, Variant, load_note, measure, median
from spf.bench.gemm import CFLAGS as GEMM_CFLAGS
from spf.bench.halide_auto import adams2019
from spf.bench.polybench import kernel as polybench_kernel
from spf.bench.tune import geomean
from spf.bench.tvm_gemm import SETUP_S, MetaSchedule
from spf.errors import SpfError

GEMM_BUDGET_S = {True: 4.0, False: 120.0}
BLUR_BUDGET_S = {True: 3.0, False: 60.0}
POLYBENCH_BUDGET_S = {True: 2.0, False: 60.0}
POLYBENCH_SIZES: dict[str, dict[str, int]] = {
    "gemm": {"NI": 200, "NJ": 220, "NK": 240},
    "2mm": {"NI": 180, "NJ": 190, "NK": 210, "NL": 220},
    "syrk": {"N": 240, "M": 200},
    "atax": {"M": 390, "N": 410},
    "jacobi-2d": {"N": 250, "TSTEPS": 100},
    "heat-3d": {"N": 40, "TSTEPS": 100},
    "covariance": {"M": 240, "N": 260},
    "lu": {"N": 400},
}
"""Near PolyBench/C 4.2's MEDIUM datasets."""


def _tune(comp: spf.Computation, args: dict[str, Any], budget: float, **kw: Any) -> Any:
    return spf.tune(comp, args, budget=budget, seed=0, reuse=False, progress=False, **kw)


def gemm(ctx: Context, sec: Section) -> None:
    n = 128 if ctx.cfg.quick else 1024
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    tvm = _tvm_start(ctx, n)  # TVM sets itself up while spf.tune searches
    ctx.log(f"tune: spf.tune on gemm n={n}, 1 thread")
    res = _tune(spf.kernels.gemm(), {"C": np.zeros((n, n)), "A": a, "B": b},
                GEMM_BUDGET_S[ctx.cfg.quick], threads=1, cflags=GEMM_CFLAGS)  # fmt: skip
    kernel = res.comp.compile(cflags=GEMM_CFLAGS, cache_dir=str(ctx.work / "kernels"))
    c_spf, c_blas = np.zeros((n, n)), np.zeros((n, n))

    def spf_call() -> None:
        c_spf.fill(0.0)
        kernel(C=c_spf, A=a, B=b, check=False)

    variants: list[Variant] = [("spf.tune", 1, spf_call),
                               ("OpenBLAS", 1, lambda: np.matmul(a, b, out=c_blas))]  # fmt: skip
    for _, _, fn in variants:
        fn()
    if not np.allclose(c_spf, c_blas, rtol=1e-9):
        raise SystemExit("tune bench: the tuned gemm computes a wrong C")
    times, info = measure(ctx, variants, ctx.cfg.gemm_rounds)
    ms = {code: 1e3 * median(ts) for (code, _), ts in times.items()}
    ratio = ms["OpenBLAS"] / ms["spf.tune"]
    tvm_row = _tvm_row(ctx, tvm, GEMM_BUDGET_S[ctx.cfg.quick], ms["OpenBLAS"])
    sec.line(f"### GEMM n={n}, 1 thread: spf.tune ({GEMM_BUDGET_S[ctx.cfg.quick]:g} s) on the "
             f"untransformed kernel\n\n{load_note(info)}\n")  # fmt: skip
    sec.table(["code", "median ms", "x OpenBLAS"],
              [["spf.tune", f"{ms['spf.tune']:.2f}", f"{ratio:.2f}"],
               ["OpenBLAS (numpy @)", f"{ms['OpenBLAS']:.2f}", "1.00"],
               tvm_row["row"]])  # fmt: skip
    if "note" in tvm_row:
        sec.line(tvm_row["note"] + "\n")
    sec.line(f"spf.tune: {res.speedup:.1f}x the untransformed gemm, {res.tried} measured, "
             f"{res.illegal} illegal.\n")  # fmt: skip
    sec.target(f"GEMM n={n}, 1 thread: spf.tune >= 0.7x OpenBLAS", f"{ratio:.2f}x", ratio >= 0.7)
    sec.data["gemm"] = {"n": n, "ms": ms, "speedup_vs_default": res.speedup,
                        "tvm": tvm_row["data"]}  # fmt: skip


def _tvm_start(ctx: Context, n: int) -> MetaSchedule | None:
    """MetaSchedule's search child for GEMM ``n``, started (None: TVM not installed)."""
    if importlib.util.find_spec("tvm") is None:
        return None
    ctx.log(f"tune: TVM MetaSchedule on gemm n={n}: setting up in a child process")
    return MetaSchedule(n, ctx.work / "tvm_gemm")


def _tvm_row(
    ctx: Context, tvm: MetaSchedule | None, budget: float, blas_ms: float
) -> dict[str, Any]:
    """TVM MetaSchedule's GEMM after ``budget`` seconds of search (:mod:`spf.bench.tvm_gemm`):
    its table row, a note and its data. Its ratio to OpenBLAS is the one its own child
    process measured (TVM runs in a child), scaled to this run's OpenBLAS time."""
    if tvm is None:
        return {"row": ["TVM MetaSchedule", "not installed", "-"], "data": {}}
    ctx.log(f"tune: TVM MetaSchedule: {budget:g} s of search once set up")
    got = tvm.run(budget, ctx.cfg.gemm_rounds)
    if "setup_s" in got:
        setup = (f"set up in {got['setup_s']:.0f} s (not counted in the budget; ready "
                 f"{got['waited_s']:.0f} s after its start)")  # fmt: skip
    else:
        setup = f"waited {got['waited_s']:.0f} s for its setup (allowance {SETUP_S:.0f} s)"
    if "error" in got:
        return {"row": ["TVM MetaSchedule", f"none: {got['error'][:160]}", "-"], "data": got,
                "note": f"TVM MetaSchedule ({budget:g} s, {got['versions']}): {setup}; "
                        f"{got['error']}"}  # fmt: skip
    ratio = got["blas_ms"] / got["ms"]
    return {"row": ["TVM MetaSchedule", f"{blas_ms / ratio:.2f}", f"{ratio:.2f}"], "data": got,
            "note": f"TVM MetaSchedule ({got['versions']}): {setup}; {got['records']} "
                    f"records measured in {got['tune_s']:.0f} s of search; its median ms is "
                    f"its ratio to OpenBLAS timed in its own process ({got['ms']:.2f} ms "
                    "there) times this run's OpenBLAS time."}  # fmt: skip


def blur(ctx: Context, sec: Section) -> None:
    n, m = ctx.cfg.blur_shape
    t = max(ctx.threads)
    img = np.random.default_rng(3).uniform(0.0, 1.0, (n, m))
    outs = {k: np.zeros((n - 2, m - 2)) for k in ("spf.tune", "spf hand schedule")}
    bx = np.zeros((n, m - 2))
    ctx.log(f"tune: spf.tune on blur2d {n}x{m}")
    res = _tune(spf.kernels.blur2d(), {"out": outs["spf.tune"], "bx": bx, "img": img},
                BLUR_BUDGET_S[ctx.cfg.quick], threads=t)  # fmt: skip
    tuned = res.comp.compile(cache_dir=str(ctx.work / "kernels"))
    # a pipeline fused by compute_at keeps bx in a line buffer: no argument then
    tuned_args = {k: v for k, v in {"out": outs["spf.tune"], "bx": bx, "img": img}.items()
                  if k in {a.name for a in tuned.arguments}}  # fmt: skip
    hand = schedule(-(-(n - 2) // t)).compile(check=False, cache_dir=str(ctx.work / "kernels"))
    variants: list[Variant] = [
        ("spf.tune", t, lambda: tuned(**tuned_args, check=False)),
        ("spf hand schedule", t, lambda: hand(out=outs["spf hand schedule"], img=img, check=False)),
    ]
    pipes, where = halide_pipelines()
    for name, (o, inp, hl) in pipes.items():
        outs[f"Halide {name}"] = np.zeros((n - 2, m - 2))
        inp.set(hl.Buffer(img))
        buf = hl.Buffer(outs[f"Halide {name}"])
        threads = t if name.endswith("-par") else 1

        def realize(o: Any = o, buf: Any = buf) -> None:
            o.realize(buf)

        variants.append((f"Halide {name}", threads, realize))
    auto, auto_inp, hl_mod, auto_info = adams2019((n, m), t)
    if auto is not None:
        outs["Halide Adams2019"] = np.zeros((n - 2, m - 2))
        auto_inp.set(hl_mod.Buffer(img))
        auto_buf = hl_mod.Buffer(outs["Halide Adams2019"])
        variants.append(("Halide Adams2019", t, lambda: auto.realize(auto_buf)))
    for _, _, fn in variants:
        fn()
    want = sum(img[i : n - 2 + i, j : m - 2 + j] for i in range(3) for j in range(3)) / 9.0
    for code, got in outs.items():
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            raise SystemExit(f"tune bench: {code} gives a wrong blur")
    times, info = measure(ctx, variants, ctx.cfg.blur_rounds)
    ms = {code: 1e3 * median(ts) for (code, _), ts in times.items()}
    rows = [[code, f"{v:.2f}", f"{v / ms['spf hand schedule']:.2f}"] for code, v in ms.items()]
    if auto is None:
        rows.append(["Halide Adams2019", f"not run ({auto_info['error']})", "-"])
    sec.line(f"### Blur {n}x{m}, {t} thread(s): spf.tune ({BLUR_BUDGET_S[ctx.cfg.quick]:g} s) "
             f"on the untransformed blur2d()\n\n{load_note(info)}\n")  # fmt: skip
    sec.table(["code", "median ms", "/ spf hand schedule"], rows)
    if auto is not None:
        sec.line(f"Halide Adams2019: autoscheduled for {t} thread(s) in "
                 f"{auto_info['seconds']:.1f} s (a one-shot cost-model search, no budget to "
                 "give it); the other Halide rows are the hand schedules of spf.bench.blur "
                 "(-par: parallel).\n")  # fmt: skip
    _blur_targets(sec, ms, auto_info, where if not pipes else "")
    sec.data["blur"] = {"shape": [n, m], "ms": ms, "speedup_vs_default": res.speedup,
                        "adams2019": auto_info, "tried": res.tried}  # fmt: skip


def _blur_targets(sec: Section, ms: dict[str, float], auto: dict[str, Any], why: str) -> None:
    """spf.tune faster than Adams2019 and within 1.1x of Halide's best hand schedule."""
    tuned = ms["spf.tune"]
    if "Halide Adams2019" in ms:
        r = tuned / ms["Halide Adams2019"]
        sec.target("blur: spf.tune faster than Halide Adams2019", f"{r:.2f}x its time", r < 1.0)
    else:
        sec.target("blur: spf.tune faster than Halide Adams2019", "not run", False,
                   str(auto.get("error", "")))  # fmt: skip
    hand = [v for code, v in ms.items() if code.startswith("Halide ") and "Adams" not in code]
    if hand:
        r = tuned / min(hand)
        sec.target("blur: spf.tune within 1.1x of Halide's best hand schedule",
                   f"{r:.2f}x its time", r <= 1.1)  # fmt: skip
    else:
        sec.target("blur: spf.tune within 1.1x of Halide's best hand schedule", "not run",
                   False, why)  # fmt: skip


def polybench(ctx: Context, sec: Section) -> None:
    quick = ctx.cfg.quick
    rows, speedups, failed = [], [], []
    for name, sizes in POLYBENCH_SIZES.items():
        k = polybench_kernel(name)
        sz = {s: max(4, v // 5) for s, v in sizes.items()} if quick else sizes
        if quick and "TSTEPS" in sz:
            sz["TSTEPS"] = 4
        args = k.arguments(sz)
        ctx.log(f"tune: spf.tune on PolyBench {name} {sz}")
        try:
            res = _tune(k.build(), args, POLYBENCH_BUDGET_S[quick])
        except SpfError as err:  # a candidate computed something else: spf's bug, reported
            failed.append(name)
            rows.append([name, _sizes(sz), "-", "-", "error", str(err).splitlines()[0][:300]])
            continue
        got = {a: np.array(v, copy=True) if isinstance(v, np.ndarray) else v
               for a, v in args.items()}  # fmt: skip
        res.comp.compile(cache_dir=str(ctx.work / "kernels"))(**got)
        want = k.expected(args)
        if not all(np.allclose(got[o], want[o], rtol=1e-9, atol=1e-9) for o in k.outputs):
            raise SystemExit(f"tune bench: the tuned PolyBench {name} computes something else")
        speedups.append(res.speedup)
        rows.append([name, _sizes(sz),
                     f"{1e3 * res.baseline_time:.2f}", f"{1e3 * res.time:.2f}",
                     f"{res.speedup:.2f}", str(res.tried)])  # fmt: skip
    g = geomean(speedups)
    sec.line(f"### PolyBench: spf.tune ({POLYBENCH_BUDGET_S[quick]:g} s each) over the "
             "untransformed kernel\n")  # fmt: skip
    sec.line("Times: spf.tune's own final interleaved timing (medians).\n")
    sec.table(["kernel", "sizes", "untransformed ms", "tuned ms", "speedup", "measured"], rows,
              "llrrrr")  # fmt: skip
    note = f"spf.tune raised SpfError on {', '.join(failed)} (see the table)" if failed else ""
    sec.target("PolyBench (8 kernels): spf.tune >= 2x untransformed (geomean)", f"{g:.2f}x",
               g >= 2.0 and not failed, note)  # fmt: skip
    done = [n for n in POLYBENCH_SIZES if n not in failed]
    sec.data["polybench"] = {"speedups": dict(zip(done, speedups, strict=True)),
                             "failed": failed}  # fmt: skip


def _sizes(sz: dict[str, int]) -> str:
    return ", ".join(f"{s}={v}" for s, v in sz.items())


def repeat(ctx: Context, sec: Section) -> None:
    """A second ``spf.tune`` call on the same computation and shapes finds the first's record."""
    n = 64
    rng = np.random.default_rng(0)
    args = {"C": np.zeros((n, n)), "A": rng.random((n, n)), "B": rng.random((n, n))}
    spf.tune(spf.kernels.gemm(), args, budget=2.0, seed=0, progress=False, max_trials=2)
    walls = []
    for _ in range(5):
        t0 = time.perf_counter()
        again = spf.tune(spf.kernels.gemm(), args, budget=2.0, seed=0, progress=False,
                         max_trials=2)  # fmt: skip
        walls.append(1e3 * (time.perf_counter() - t0))
        if not again.reused:
            raise SystemExit("tune bench: the repeated spf.tune call did not reuse its record")
    ms = median(walls)
    sec.line(f"A repeated spf.tune call (gemm n={n}) with its record: {ms:.1f} ms (median of "
             "5, replay and compile from the build cache included).\n")  # fmt: skip
    sec.target("spf.tune repeated with a record < 50 ms", f"{ms:.1f} ms", ms < 50.0)
    sec.data["repeat_ms"] = ms


PARTS = {"gemm": gemm, "blur": blur, "polybench": polybench, "repeat": repeat}


def run(ctx: Context, sec: Section) -> None:
    for part in PARTS.values():
        part(ctx, sec)


def main(argv: list[str] | None = None) -> int:
    """``python -m spf.bench.tune_dense [--quick] PART...``: only these parts of ``spf bench
    --only tune``'s dense rows (gemm, blur, polybench, repeat), at the same budgets, 1 and 2
    threads; prints their tables and targets."""
    import sys
    import tempfile
    from pathlib import Path

    from spf.bench.common import FULL, QUICK, Runtime, progress

    args = list(sys.argv[1:] if argv is None else argv)
    quick = "--quick" in args
    parts = [a for a in args if a != "--quick"] or list(PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        progress(f"unknown part(s) {', '.join(unknown)}; known: {', '.join(PARTS)}")
        return 2
    with tempfile.TemporaryDirectory(prefix="spf-bench-") as tmp:
        ctx = Context(QUICK if quick else FULL, Runtime(str(Path(tmp) / "helper")), [1, 2],
                      Path(tmp), progress)  # fmt: skip
        sec = Section("tune")
        for p in parts:
            PARTS[p](ctx, sec)
    print("\n".join(sec.markdown))
    for v in sec.targets:
        print(f"| {v['target']} | {v['measured']} | {'yes' if v['met'] else 'NO'} | {v['note']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

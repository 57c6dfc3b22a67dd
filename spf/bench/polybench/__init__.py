"""The PolyBench/C 4.2 suite as spf Computations, and ``spf bench --only polybench``.

Thirty kernels in their original loop order (2d+1 schedules), each with PolyBench-style
inputs and a Python reference of the same loop nest (:class:`Kernel`). The benchmark times
``codegen("c")`` with checking (dependences, legality, bounds) on a fresh Computation of each
kernel with nothing remembered from earlier ones; targets: the whole suite <= 15 s, no kernel
over 2 s.
"""

from __future__ import annotations

import time

from spf.bench.common import Context, Section
from spf.bench.polybench import blas, kernels, medley, solvers, stencils
from spf.bench.polybench.kernel import Args, Kernel

__all__ = ["KERNELS", "Args", "Kernel", "kernel", "run", "time_codegen"]

#: The thirty kernels, by PolyBench name, in PolyBench's order of categories.
KERNELS: dict[str, Kernel] = {
    k.name: k
    for k in (
        *medley.KERNELS[:2],
        *blas.KERNELS,
        *kernels.KERNELS,
        *solvers.KERNELS,
        *medley.KERNELS[2:],
        *stencils.KERNELS,
    )
}

#: The handful ``--quick`` times: small, large and scalar-heavy ones.
QUICK = ("gemm", "correlation", "ludcmp", "deriche", "adi", "jacobi-2d")

TOTAL_TARGET_S = 15.0
WORST_TARGET_S = 2.0


def kernel(name: str) -> Kernel:
    """The kernel called ``name`` (PolyBench's spelling, e.g. ``"floyd-warshall"``)."""
    from spf.errors import UndeclaredError

    if name not in KERNELS:
        raise UndeclaredError("PolyBench kernel", name, KERNELS, "names as PolyBench spells them")
    return KERNELS[name]


def time_codegen(k: Kernel) -> tuple[float, float, int]:
    """Wall and CPU seconds of ``codegen("c")`` (checking on) on a fresh Computation of
    ``k``, with the set layer's and the dependence analysis' remembered results cleared
    first; and the number of statements. Building the Computation is not timed. On a busy
    machine the CPU time is what an idle one would take (the analysis is single-threaded).
    The preconditions of ``durbin``, ``fdtd-2d`` and ``correlation`` are expected: they are
    derived (and timed) but not warned about (:func:`spf.codegen.generate`)."""
    from spf.analysis.dependences import clear_remembered
    from spf.codegen import generate
    from spf.sets.memo import clear_all

    comp = k.build()
    clear_remembered()
    clear_all()
    t0, c0 = time.perf_counter(), time.process_time()
    generate(comp, "c")
    return time.perf_counter() - t0, time.process_time() - c0, len(comp.stmts)


def run(ctx: Context) -> Section:
    """Codegen time of every kernel (``--quick``: :data:`QUICK`), total, worst, verdicts."""
    import spf

    spf.Set("{[i]: 0 <= i < N}").is_empty()  # warm up isl before timing
    names = QUICK if ctx.cfg.quick else tuple(KERNELS)
    rows: list[dict[str, float | int | str]] = []
    for name in names:
        wall, cpu, stmts = time_codegen(KERNELS[name])
        ctx.log(f"polybench {name}: {wall:.2f} s")
        rows.append({"kernel": name, "statements": stmts, "seconds": wall, "cpu_s": cpu})
    secs = {str(r["kernel"]): (float(r["seconds"]), float(r["cpu_s"])) for r in rows}
    total = sum(w for w, _ in secs.values())
    total_cpu = sum(c for _, c in secs.values())
    worst = max(secs, key=lambda n: secs[n][0])
    worst_s, worst_cpu = secs[worst]
    sec = Section("polybench")
    sec.line(f"### PolyBench/C 4.2: codegen('c') with checking, {len(rows)} kernels\n")
    sec.table(
        ["kernel", "statements", "seconds", "CPU seconds"],
        [[n, str(r["statements"]), f"{secs[n][0]:.3f}", f"{secs[n][1]:.3f}"]
         for n, r in zip(secs, rows, strict=True)],
    )  # fmt: skip
    sec.line(f"total {total:.2f} s (CPU {total_cpu:.2f} s); worst {worst} {worst_s:.2f} s\n")
    sec.data.update({"rows": rows, "total_s": total, "total_cpu_s": total_cpu, "worst": worst})
    part = "" if len(rows) == len(KERNELS) else f"{len(rows)} of {len(KERNELS)} kernels; "
    sec.target(
        f"PolyBench codegen total <= {TOTAL_TARGET_S:g} s",
        f"{total:.2f} s",
        total <= TOTAL_TARGET_S,
        f"{part}checking on; CPU {total_cpu:.2f} s",
    )
    sec.target(
        f"PolyBench codegen worst kernel <= {WORST_TARGET_S:g} s",
        f"{worst_s:.2f} s ({worst})",
        worst_s <= WORST_TARGET_S,
        f"{part}CPU {worst_cpu:.2f} s",
    )
    return sec

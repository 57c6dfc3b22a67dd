"""Timing of ``Computation.dependences()`` on chains of 1-d stencil statements.

Statement ``k`` (``k = 1 .. n``) reads the previous array and writes its own::

    $Ak$(i) = $A{k-1}$(i-1) + $A{k-1}$(i) + $A{k-1}$(i+1);    over {[i]: 1 <= i < N-1}

each in its own loop at root position ``k``. The exact answer is ``n - 1`` flow dependences.

The remembered analysis (``Computation.version``): a repeated ``dependences()`` with nothing
changed (target <= 1 ms), the 12-statement LU decomposition with forward and back
substitution (PolyBench ``ludcmp``, 145 dependences) cold, repeated and after one schedule
change, ``kernels.spmv_csr().codegen("c")`` cold (target <= 50 ms, goal 20 ms) and
repeated, ``codegen("c")`` of a fresh chain of 100 (target <= 1.5 s), and
``kernels.ilu0_csr().dependences()`` cold (issue 17: <= 3 s).
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable

import spf
from spf.bench.common import Context, Section


def stencil_chain(n: int) -> spf.Computation:
    """The chain of ``n`` stencil statements over arrays ``A0 .. An``."""
    comp = spf.Computation(f"chain{n}")
    for k in range(n + 1):
        comp.add_data_space(f"A{k}", "double", shape=("N",))
    for k in range(1, n + 1):
        prev = f"A{k - 1}"
        comp.add_stmt(
            spf.Stmt(
                f"$A{k}$(i) = ${prev}$(i-1) + ${prev}$(i) + ${prev}$(i+1);",
                "{[i]: 1 <= i < N-1}",
                f"{{[i] -> [{k}, i, 0]}}",
            )
        )
    return comp


def time_dependences(n: int, repeat: int) -> dict[str, float | int]:
    """Median seconds of ``dependences()`` on a fresh chain of ``n`` (build not timed)."""
    times: list[float] = []
    found = -1
    for _ in range(repeat):
        comp = stencil_chain(n)
        t0 = time.perf_counter()
        found = len(comp.dependences())
        times.append(time.perf_counter() - t0)
        if found != n - 1:
            raise SystemExit(f"chain of {n}: {found} dependences found, expected {n - 1}")
    return {
        "statements": n,
        "dependences": found,
        "seconds": statistics.median(times),
        "runs": repeat,
    }


def ludcmp() -> spf.Computation:
    """PolyBench ``ludcmp``: LU decomposition of ``A`` through the scalar ``w``, then forward
    (``y``) and back (``x``) substitution; 12 statements, 145 dependences."""
    comp = spf.Computation("ludcmp")
    for name, shape in (("A", ("N", "N")), ("b", ("N",)), ("x", ("N",)), ("y", ("N",))):
        comp.add_data_space(name, "double", shape=shape)
    comp.add_data_space("w", "double")
    lower = "0 <= i < N && 0 <= j < i"
    upper = "0 <= i < N && i <= j < N"
    rows = "0 <= i < N"
    for source, domain, schedule in (
        ("$w$ = $A$(i, j);", f"[i,j]: {lower}", "[0,i,0,j,0,0,0]"),
        ("$w$ -= $A$(i, k) * $A$(k, j);", f"[i,j,k]: {lower} && 0 <= k < j", "[0,i,0,j,1,k,0]"),
        ("$A$(i, j) = $w$ / $A$(j, j);", f"[i,j]: {lower}", "[0,i,0,j,2,0,0]"),
        ("$w$ = $A$(i, j);", f"[i,j]: {upper}", "[0,i,1,j,0,0,0]"),
        ("$w$ -= $A$(i, k) * $A$(k, j);", f"[i,j,k]: {upper} && 0 <= k < i", "[0,i,1,j,1,k,0]"),
        ("$A$(i, j) = $w$;", f"[i,j]: {upper}", "[0,i,1,j,2,0,0]"),
        ("$w$ = $b$(i);", f"[i]: {rows}", "[1,i,0,0,0,0,0]"),
        ("$w$ -= $A$(i, j) * $y$(j);", f"[i,j]: {lower}", "[1,i,1,j,0,0,0]"),
        ("$y$(i) = $w$;", f"[i]: {rows}", "[1,i,2,0,0,0,0]"),
        ("$w$ = $y$(N-1-i);", f"[i]: {rows}", "[2,i,0,0,0,0,0]"),
        ("$w$ -= $A$(N-1-i, j) * $x$(j);", f"[i,j]: {rows} && N-i <= j < N", "[2,i,1,j,0,0,0]"),
        ("$x$(N-1-i) = $w$ / $A$(N-1-i, N-1-i);", f"[i]: {rows}", "[2,i,2,0,0,0,0]"),
    ):
        tup = domain.split(":", 1)[0]
        comp.add_stmt(spf.Stmt(source, f"{{{domain}}}", f"{{{tup} -> {schedule}}}"))
    return comp


def chain_codegen(n: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``codegen("c")`` (checking on) on a fresh chain of ``n``,
    nothing remembered from earlier computations (on a busy machine the CPU time is what
    an idle one would take)."""
    from spf.analysis.dependences import clear_remembered
    from spf.sets.memo import clear_all

    chain = stencil_chain(n)
    clear_remembered()
    clear_all()
    t0, c0 = time.perf_counter(), time.process_time()
    chain.codegen("c")
    return time.perf_counter() - t0, time.process_time() - c0


def _seconds(fn: Callable[[], object], repeat: int = 1) -> float:
    """Median seconds of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def remembered(quick: bool) -> list[dict[str, object]]:
    """The remembered-analysis figures: ``(what, seconds, target)`` rows."""
    from spf import kernels

    rows: list[dict[str, object]] = []

    def row(what: str, seconds: float, target: str = "") -> None:
        rows.append({"what": what, "seconds": seconds, "target": target})

    chain = stencil_chain(10)
    chain.dependences()
    row("chain of 10: repeated dependences()", _seconds(chain.dependences, 21), "<= 1 ms")
    from spf.analysis.dependences import clear_remembered

    cold = [kernels.spmv_csr() for _ in range(3)]
    times = []
    for comp in cold:
        clear_remembered()  # nothing remembered from an earlier computation
        times.append(_seconds(functools.partial(comp.codegen, "c")))
    row("SpMV CSR codegen('c'), cold", statistics.median(times), "<= 50 ms (goal 20 ms)")
    row("SpMV CSR codegen('c'), repeated", _seconds(lambda: cold[0].codegen("c"), 21), "<= 1 ms")
    if not quick:
        wall, cpu = chain_codegen(100)
        row(f"chain of 100: codegen('c') (CPU {cpu:.2f} s)", wall, "<= 1.5 s")
        rows[-1]["cpu_s"] = cpu
    if quick:
        return rows
    lu = ludcmp()
    row("ludcmp (12 statements): dependences(), cold", _seconds(lu.dependences))
    row("ludcmp: repeated dependences()", _seconds(lu.dependences, 21), "<= 1 ms")
    row("ludcmp: check_legality() after dependences()", _seconds(lu.check_legality))
    lu.stmt("s10").shift("j", 1)
    row("ludcmp: dependences() after one shift", _seconds(lu.dependences))
    row("ludcmp: codegen('c') after the shift", _seconds(lambda: lu.codegen("c")))
    wall, cpu = ilu0_cold()
    row("ilu0_csr: dependences(), cold", wall, "<= 3 s")
    row("ilu0_csr: dependences(), cold, CPU seconds of this process", cpu)
    return rows


def ilu0_cold(repeat: int = 3) -> tuple[float, float]:
    """Median wall and CPU seconds of ``kernels.ilu0_csr().dependences()`` on a fresh
    computation with nothing remembered (neither dependences nor the set layer's memo
    tables). The analysis is single-threaded: on a busy machine the CPU time is the figure
    a quiet machine's wall time would show."""
    from spf import kernels
    from spf.analysis.dependences import clear_remembered
    from spf.sets.memo import clear_all

    wall, cpu = [], []
    for _ in range(repeat):
        comp = kernels.ilu0_csr()
        clear_remembered()
        clear_all()
        c0 = time.process_time()
        wall.append(_seconds(comp.dependences))
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def run(ctx: Context) -> Section:
    spf.Set("{[i]: 0 <= i < N}").is_empty()  # warm up isl before timing
    sizes = (1, 10) if ctx.cfg.quick else (1, 10, 100)
    rows = [time_dependences(n, 5 if n <= 10 else 1) for n in sizes]
    sec = Section("deps")
    sec.line("### Dependence analysis on stencil chains\n")
    sec.table(
        ["statements", "dependences found", "seconds (median)", "runs"],
        [[str(r["statements"]), str(r["dependences"]), f"{r['seconds']:.3f}", str(r["runs"])]
         for r in rows],
    )  # fmt: skip
    sec.data["rows"] = rows
    figures = remembered(ctx.cfg.quick)
    sec.line("\n### Remembered analysis\n")
    sec.table(
        ["operation", "seconds (median)", "target"],
        [[str(r["what"]), f"{r['seconds']:.6f}", str(r["target"])] for r in figures],
    )
    sec.data["remembered"] = figures
    for r in figures:
        if "cpu_s" in r:
            wall, cpu = float(str(r["seconds"])), float(str(r["cpu_s"]))
            sec.target("chain of 100: codegen('c') <= 1.5 s", f"{wall:.2f} s", wall <= 1.5,
                       f"CPU {cpu:.2f} s")  # fmt: skip
    return sec

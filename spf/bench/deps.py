"""Timing of ``Computation.dependences()`` on chains of 1-d stencil statements.

Statement ``k`` (``k = 1 .. n``) reads the previous array and writes its own::

    $Ak$(i) = $A{k-1}$(i-1) + $A{k-1}$(i) + $A{k-1}$(i+1);    over {[i]: 1 <= i < N-1}

each in its own loop at root position ``k``. The exact answer is ``n - 1`` flow dependences.
"""

from __future__ import annotations

import statistics
import time

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
    return sec

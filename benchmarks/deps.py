"""Timing of ``Computation.dependences()`` on chains of 1-d stencil statements.

Statement ``k`` (``k = 1 .. n``) reads the previous array and writes its own::

    $Ak$(i) = $A{k-1}$(i-1) + $A{k-1}$(i) + $A{k-1}$(i+1);    over {[i]: 1 <= i < N-1}

each in its own loop at root position ``k`` (schedule ``{[i] -> [k, i, 0]}``). The exact answer
is ``n - 1`` flow dependences (``s{k-1} -> s{k}`` on ``A{k-1}``, loop-independent). Prints a
markdown table (median seconds, fewer repeats for long chains) and writes
``benchmarks/results/deps.json``. Run: ``python benchmarks/deps.py [n ...]``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import spf


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
        deps = comp.dependences()
        times.append(time.perf_counter() - t0)
        found = len(deps)
        expected = n - 1
        if found != expected:
            raise SystemExit(f"chain of {n}: {found} dependences found, expected {expected}")
    return {
        "statements": n,
        "dependences": found,
        "seconds": statistics.median(times),
        "runs": repeat,
    }


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [1, 10, 100]
    spf.Set("{[i]: 0 <= i < N}").is_empty()  # warm up isl before timing
    rows = [time_dependences(n, 5 if n <= 10 else 3 if n <= 30 else 1) for n in sizes]
    print("| statements | dependences found | seconds (median) | runs |\n|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['statements']} | {r['dependences']} | {r['seconds']:.3f} | {r['runs']} |")
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "deps.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Wavefront generation in seconds (issue 28, API.md §16): part ``wavefront`` of ``spf bench
--only scale``, and ``spf bench --only analysis``.

For ILU(0), Gauss-Seidel and SpTRSV (``spf.kernels``), each step is timed in a fresh
interpreter with an empty spf cache directory (``SPF_CACHE_DIR``), after ``import spf``
(timed too: a cold run pays it, so the targets are judged on import + wavefront + compile).
spf's bytecode is compiled first, as installing the package does (without it every cold
interpreter would also compile spf's sources: ~0.3-0.5 s more CPU, which an installed spf
never pays):

* ``wavefront + compile``: ``comp = spf.kernels.<kernel>()``, ``comp.wavefront("i")``,
  ``comp.compile()`` (the dependence analysis, the inspector's synthesis, the legality check,
  code generation for the executor and the inspector stages, and the C compiler run that
  builds the pass over the dependences with the counting sorts that wavefronts over the
  same nodes share (each probe's cache is empty, so it builds them); the executor is
  compiled when a call first runs it, the serial kernel when a call first runs a serial
  plan: neither is in the target; the executor's build is timed after it, in its own
  column, by reading ``kernel.path``), with
  ``wavefront`` alone beside it;
* the plain ``codegen``: ``comp = spf.kernels.<kernel>()``, ``comp.codegen("c")``, and the
  plain ``compile()`` (no wavefront).

Each row gives the median wall seconds and the median CPU seconds (the process and the C
compilers it ran) over the runs, the kernels interleaved in a reshuffled order every round.
Each probe runs on one CPU (:data:`ONE_CPU`, set before numpy loads: on more, numpy's
OpenBLAS workers spin idle on the others, ~0.1 s of CPU a one-core run never spends), so on
a busy machine the CPU seconds are what one quiet core takes; the targets (ILU(0) <= 5 s,
Gauss-Seidel <= 2 s, SpTRSV <= 1 s for ``import spf`` + ``wavefront`` + ``compile``) are
judged on them.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from typing import Any

from spf.bench.common import Context, CpuLoad, Section

KERNELS = ("ilu0_csr", "gauss_seidel_csr", "sptrsv_csr")

TARGETS_S = {"ilu0_csr": 5.0, "gauss_seidel_csr": 2.0, "sptrsv_csr": 1.0}
"""``wavefront`` + ``compile`` cold on one quiet core (API.md §16; SpTRSV: issue 28)."""

NAMES = {"ilu0_csr": "ILU(0)", "gauss_seidel_csr": "Gauss-Seidel", "sptrsv_csr": "SpTRSV"}

MODES = ("wavefront", "codegen", "compile")

ONE_CPU = """
import os
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
"""
"""The start of a probe: its interpreter (and the C compilers it runs) may use one CPU, so
the run is what the targets name, one core's. Before numpy loads: numpy's OpenBLAS starts a
worker thread per other CPU it may use, and each spins ~0.1 s of CPU waiting for work after
the import, a cost a one-core process never has (and no part of spf's; it was ~0.08 s of
the 0.86 s counted for a cold SpTRSV on the 2-core machine)."""

PROBE = (
    ONE_CPU
    + """
import json, os, sys, time

def now():
    t = os.times()
    return time.perf_counter(), t.user + t.system + t.children_user + t.children_system

wi, ci = now()
import spf, spf.kernels
kernel, mode = sys.argv[1], sys.argv[2]
w0, c0 = now()
comp = getattr(spf.kernels, kernel)()
if mode == "wavefront":
    comp.wavefront("i")
    w1, c1 = now()
    compiled = comp.compile()
elif mode == "codegen":
    comp.codegen("c")
else:
    comp.compile()
w2, c2 = now()
out = {"wall_s": w2 - w0, "cpu_s": c2 - c0, "import_wall_s": w0 - wi, "import_cpu_s": c0 - ci}
if mode == "wavefront":
    out |= {"wavefront_wall_s": w1 - w0, "wavefront_cpu_s": c1 - c0}
    compiled.path  # the executor, compiled when first read (a call that runs it)
    w3, c3 = now()
    out |= {"executor_wall_s": w3 - w2, "executor_cpu_s": c3 - c2}
tasks = "/proc/self/task"
out["threads"] = len(os.listdir(tasks)) if os.path.isdir(tasks) else 0
print(json.dumps(out))
"""
)
"""One step in a fresh interpreter on one CPU (:data:`ONE_CPU`): ``argv`` kernel and mode;
times after ``import spf``, and the import's own; ``threads``: the process's threads at the
end (0 where the system does not list them)."""


def _search_path() -> str:
    """``PYTHONPATH`` for a probe: the folder holding this ``spf`` package first, so the fresh
    interpreter times the same code as the bench, whatever the working directory (a script's
    folder, not the working directory, leads ``sys.path``; an installed copy may differ)."""
    import spf

    here = os.path.dirname(os.path.dirname(os.path.abspath(spf.__file__)))
    rest = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([here, rest]) if rest else here


def compile_bytecode() -> bool:
    """Compile this spf's bytecode where Python looks for it (``__pycache__`` beside the
    sources), as installing the package does; False when it could not (a read-only tree:
    the probes then also time compiling spf's sources)."""
    import compileall

    import spf

    folder = os.path.dirname(os.path.abspath(spf.__file__))
    try:
        return bool(compileall.compile_dir(folder, quiet=2))
    except OSError:
        return False


def probe(kernel: str, mode: str) -> dict[str, float]:
    """:data:`PROBE` in a fresh interpreter with a fresh, empty spf cache directory."""
    with tempfile.TemporaryDirectory(prefix="spf-wavefront-") as cache:
        env = {**os.environ, "SPF_CACHE_DIR": cache, "PYTHONPATH": _search_path()}
        done = subprocess.run(
            [sys.executable, "-c", PROBE, kernel, mode],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"wavefront probe {kernel} {mode} failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(rounds: int, modes: tuple[str, ...]) -> dict[tuple[str, str], list[dict[str, float]]]:
    """Every (kernel, mode) probe once per round, in an order reshuffled (seeded) each round."""
    runs: dict[tuple[str, str], list[dict[str, float]]] = {
        (k, m): [] for k in KERNELS for m in modes
    }
    rng = random.Random(0)
    for _ in range(rounds):
        for key in rng.sample(list(runs), len(runs)):
            runs[key].append(probe(*key))
    return runs


def run(ctx: Context, name: str = "wavefront") -> Section:
    quick = ctx.cfg.quick
    modes = MODES[:2] if quick else MODES
    rounds = 1 if quick else 3
    compiled = compile_bytecode()
    load = CpuLoad()
    runs = measure(rounds, modes)
    busy = load.stop()

    def med(kernel: str, mode: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[kernel, mode])

    sec = Section(name)
    sec.line(
        f"### Wavefront generation, cold (fresh interpreter, empty cache; median of {rounds}; "
        "seconds, CPU = process + C compiler; spf's bytecode "
        f"{'compiled first, as installed' if compiled else 'NOT compiled: imports compile it'})\n"
    )
    header = ["kernel", "import spf CPU", "wavefront() wall", "wavefront() CPU",
              "+ compile() wall", "+ compile() CPU", "import + both CPU",
              "executor's build CPU (first run)", "plain codegen wall",
              "plain codegen CPU"]  # fmt: skip
    if "compile" in modes:
        header += ["plain compile wall", "plain compile CPU"]
    rows = []
    data: dict[str, Any] = {}
    for kernel in KERNELS:
        cold = [r["import_cpu_s"] + r["cpu_s"] for r in runs[kernel, "wavefront"]]
        row = {
            "import_cpu_s": med(kernel, "wavefront", "import_cpu_s"),
            "wavefront_wall_s": med(kernel, "wavefront", "wavefront_wall_s"),
            "wavefront_cpu_s": med(kernel, "wavefront", "wavefront_cpu_s"),
            "wavefront_compile_wall_s": med(kernel, "wavefront", "wall_s"),
            "wavefront_compile_cpu_s": med(kernel, "wavefront", "cpu_s"),
            "cold_cpu_s": statistics.median(cold),
            "executor_cpu_s": med(kernel, "wavefront", "executor_cpu_s"),
            "codegen_wall_s": med(kernel, "codegen", "wall_s"),
            "codegen_cpu_s": med(kernel, "codegen", "cpu_s"),
        }
        if "compile" in modes:
            row["compile_wall_s"] = med(kernel, "compile", "wall_s")
            row["compile_cpu_s"] = med(kernel, "compile", "cpu_s")
        data[kernel] = {**row, "runs": {m: runs[kernel, m] for m in modes}}
        rows.append([NAMES[kernel], *(f"{v:.2f}" for v in row.values())])
        cpu, target = row["cold_cpu_s"], TARGETS_S[kernel]
        sec.target(
            f"{NAMES[kernel]}: import spf + wavefront + compile <= {target:g} s on one core (cold)",
            f"{cpu:.2f} s CPU (of it import {row['import_cpu_s']:.2f} s; wavefront + compile "
            f"{row['wavefront_compile_cpu_s']:.2f} s CPU, "
            f"{row['wavefront_compile_wall_s']:.2f} s wall)",
            cpu <= target,
            f"plain codegen {row['codegen_cpu_s']:.2f} s CPU; the executor's C compile, "
            f"deferred to the first call that runs it (not in the target): "
            f"+{row['executor_cpu_s']:.2f} s CPU",
        )
    sec.table(header, rows)
    if busy is not None:
        sec.line(
            f"While timing, other processes used {100 * busy['other_processes']:.0f}% of the "
            "CPUs' time: the wall times are what this machine gave; the CPU times are what "
            "one quiet core takes.\n"
        )
        data["load"] = busy
    data["bytecode_compiled"] = compiled
    sec.data.update(data)
    return sec

"""Where a cold wavefront's CPU time goes: ``import spf``, the kernel, ``wavefront("i")`` and
``compile()`` split into their parts, in fresh interpreters with empty cache directories
(what ``spf bench --only analysis`` times as one sum; issue 28, item 3).

    python benchmarks/cold_phases.py [--kernel sptrsv_csr] [--rounds 5] [--tree PATH ...]

Each ``--tree`` (a folder holding an ``spf`` package; default: this one) is timed in every
round, the trees in a reshuffled order each round; the medians are printed per tree, with
the ratio to the first tree. Seconds are CPU time of the interpreter's main thread (and of
the C compiler's processes for ``gcc``), so a busy machine inflates them less than wall
time but still does: compare trees within one run. ``compile()``'s parts are the pass's and
the sorts' IR building, each generated kernel's legality check, lowering (the scan, its
self-check and the statements' macros), bounds proof and fact plan, and the light unit's
loading; modules first imported during ``compile()`` are counted inside the part that
imports them. Cyclic garbage collection and dataclass creation are counted across phases
(their own rows, also inside the phases' times).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent

SEQUENCE = (
    "import numpy",
    "import islpy",
    "import pycparser",
    "import spf (its own modules)",
    "kernel()",
    "wavefront()",
    "compile() (main thread)",
    "compile(): gcc",
)
"""The rows that follow each other in time (their sum is the cold run); the others are
parts of them."""


OTHER_THREADS = "not in TOTAL: the process's other threads"
"""CPU seconds of the probe's threads besides the main one (gcc's waiting thread; on 2+
CPUs numpy's OpenBLAS workers, which spin ~0.1 s idle after the import: a one-core run,
such as ``spf bench --only analysis``'s probes, has none)."""


def probe(kernel: str) -> dict[str, float]:
    """One cold run of ``kernel`` in this (fresh) interpreter: CPU seconds by part."""
    import dataclasses
    import gc

    clock = time.thread_time
    out: collections.Counter[str] = collections.Counter()
    phase = ["import"]
    started = [0.0]

    def collected(event: str, _info: dict[str, Any]) -> None:
        if event == "start":
            started[0] = clock()
        else:
            out[f"gc during {phase[0]}"] += clock() - started[0]

    gc.callbacks.append(collected)
    process_class = dataclasses._process_class  # type: ignore[attr-defined]

    def counted_class(*args: Any, **kwargs: Any) -> Any:
        t = clock()
        try:
            return process_class(*args, **kwargs)
        finally:
            out[f"dataclasses created during {phase[0]}"] += clock() - t

    dataclasses._process_class = counted_class  # type: ignore[attr-defined]
    process_start, thread_start = os.times(), clock()
    t = clock()
    import numpy  # noqa: F401

    out["import numpy"] = clock() - t
    t = clock()
    import islpy  # noqa: F401

    out["import islpy"] = clock() - t
    t = clock()
    import pycparser.c_parser  # noqa: F401

    out["import pycparser"] = clock() - t
    t = clock()
    import spf.kernels

    out["import spf (its own modules)"] = clock() - t
    phase[0] = "kernel"
    t = clock()
    comp = getattr(spf.kernels, kernel)()
    out["kernel()"] = clock() - t
    phase[0] = "wavefront"
    t = clock()
    comp.wavefront("i")
    out["wavefront()"] = clock() - t
    phase[0] = "compile"
    _time_compile_parts(out, clock)
    children = os.times()
    t = clock()
    comp.compile()
    out["compile() (main thread)"] = clock() - t
    after = os.times()
    out["compile(): gcc"] = (
        after.children_user + after.children_system
        - children.children_user - children.children_system
    )  # fmt: skip
    process = sum(os.times()[:2]) - sum(process_start[:2])
    out[OTHER_THREADS] = max(process - (clock() - thread_start), 0.0)
    return dict(out)


def _time_compile_parts(out: collections.Counter[str], clock: Any) -> None:
    """Wrap the parts of ``compile()`` so that each adds its CPU time to ``out``."""
    import spf.analysis.bounds as bounds
    import spf.analysis.coarse_inspector as coarse
    import spf.analysis.inspector as inspector
    import spf.analysis.legality as legality
    import spf.codegen.arg_checks as arg_checks
    import spf.codegen.program as program
    import spf.codegen.verify as verify
    import spf.runtime.compile as compile_

    which = ["(before any kernel is generated)"]

    def timed(owner: Any, name: str, label: str, per_kernel: bool = False) -> None:
        fn = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                key = f"compile(): {which[0]} {label}" if per_kernel else f"compile(): {label}"
                out[key] += clock() - t

        setattr(owner, name, wrapper)

    generate = compile_._generate

    def generated(ir: Any, *args: Any, **kwargs: Any) -> Any:
        name = ir.name
        which[0] = "pass" if "inspector" in name else "sorts" if "spf_sort" in name else "exec"
        t = clock()
        try:
            return generate(ir, *args, **kwargs)
        finally:
            out[f"compile(): {which[0]} generated (all)"] += clock() - t

    compile_._generate = generated
    timed(coarse, "build_coarse_inspector", "pass IR built (coarse)")
    timed(inspector, "build_inspector", "pass IR built (levels)")
    timed(coarse, "build_pair_sort", "sorts' IR built")
    timed(legality, "check", "legality check", True)
    timed(program, "lower", "lowered (scan, self-check, macros)", True)
    timed(verify, "verify", "  of it the self-check", True)
    timed(bounds, "check_bounds", "bounds proof", True)
    timed(arg_checks, "plan_fact_checks", "fact plan", True)
    timed(compile_._Unit, "build", "light unit loaded (and remembered)")


def run_probe(tree: Path, kernel: str) -> dict[str, float]:
    """:func:`probe` in a fresh interpreter on ``tree``'s spf with an empty cache directory."""
    with tempfile.TemporaryDirectory(prefix="spf-cold-phases-") as cache:
        env = {**os.environ, "SPF_CACHE_DIR": cache, "PYTHONPATH": str(tree)}
        code = (
            f"import sys; sys.path.insert(0, {str(HERE / 'benchmarks')!r}); "
            f"import cold_phases, json; print(json.dumps(cold_phases.probe({kernel!r})))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
        )
    if done.returncode != 0:
        raise SystemExit(f"probe on {tree} failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", default="sptrsv_csr", help="a spf.kernels function")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", action="append", type=Path, help="a folder holding spf")
    args = parser.parse_args()
    trees = args.tree or [HERE]
    runs: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    rng = random.Random(0)
    for _ in range(args.rounds):
        for tree in rng.sample(trees, len(trees)):
            runs[tree].append(run_probe(tree, args.kernel))
    total = "TOTAL: imports + kernel() + wavefront() + compile() + gcc"
    for tree in trees:
        for r in runs[tree]:  # the phases in sequence; the other rows are parts of them
            r[total] = sum(v for k, v in r.items() if k in SEQUENCE)
    keys = [*sorted({k for rs in runs.values() for r in rs for k in r} - {total}), total]
    head = f"{'CPU seconds, median of ' + str(args.rounds):60s}" + "".join(
        f"{t.name[:14]:>16s}" for t in trees
    )
    print(f"{args.kernel}, fresh interpreters, empty cache directories\n{head}")
    for key in keys:
        meds = [statistics.median(r.get(key, 0.0) for r in runs[t]) for t in trees]
        ratios = "".join(f"  {m / meds[0]:.2f}x" if meds[0] else "" for m in meds[1:])
        print(f"{key:60s}" + "".join(f"{m:16.3f}" for m in meds) + ratios)


if __name__ == "__main__":
    main()

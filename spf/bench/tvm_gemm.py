"""TVM MetaSchedule on ``C = A @ B`` (doubles, ``n x n``, one thread) with a wall budget: the
GEMM row of ``spf bench --only tune`` that ``spf.tune`` is compared with (issue 30).

MetaSchedule has no time budget of its own (it takes a trial count), so the search runs in a
child process (``python -m spf.bench.tvm_gemm tune N WORK``, ``max_trials_global`` far more
than a budget allows) that is stopped when the budget is spent; its JSON database in ``WORK``
holds every batch measured by then. A second child (``best N WORK``) compiles the best
record of that database and times it and numpy's ``matmul`` (OpenBLAS) in one interleaved
rotation, printing one JSON line. Both run as children because TVM is imported nowhere else
in spf and a crash or hang of the wheel must not take the bench with it.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

TRIALS = 100_000  # more than any budget here measures: the budget stops the search
TRIALS_PER_ITER = 16
COMPILE_S = 300.0  # the second child: load the database, build the best, time it


def _tvm(name: str = "tvm") -> Any:
    """A module of the TVM wheel (no type stubs: typed Any)."""
    return importlib.import_module(name)


def _target() -> Any:
    tvm, codegen = _tvm(), _tvm("tvm.target.codegen")
    # the wheel's LLVM refuses -mcpu=native with its conda triple: name the CPU instead
    return tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu",
                              "mcpu": codegen.llvm_get_system_cpu(), "num-cores": 1})  # fmt: skip


def _module(n: int) -> Any:
    tvm, te = _tvm(), _tvm("tvm.te")

    a = te.placeholder((n, n), "float64", name="A")
    b = te.placeholder((n, n), "float64", name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


def _tune(n: int, work: str) -> None:
    ms = _tvm("tvm.s_tir.meta_schedule")

    ms.tune_tir(_module(n), _target(), work, max_trials_global=TRIALS,
                num_trials_per_iter=TRIALS_PER_ITER, seed=0)  # fmt: skip


def _best(n: int, work: str, rounds: int) -> None:
    import numpy as np

    tvm, ms = _tvm(), _tvm("tvm.s_tir.meta_schedule")

    mod, target = _module(n), _target()
    db = ms.database.JSONDatabase(work_dir=work)
    sch = ms.tir_integration.compile_tir(db, mod, target)
    if sch is None:
        print(json.dumps({"error": "no measured schedule in the database"}))
        return
    lib = tvm.compile(sch.mod, target=target)
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    c = np.zeros((n, n))
    ta, tb, tc = (tvm.runtime.tensor(x) for x in (a, b, c))
    calls: dict[str, Callable[[], object]] = {
        "tvm": lambda: lib["main"](ta, tb, tc),
        "blas": lambda: np.matmul(a, b, out=c),
    }
    calls["tvm"]()
    if not np.allclose(tc.numpy(), a @ b, rtol=1e-9):
        print(json.dumps({"error": "MetaSchedule's GEMM computes a wrong C"}))
        return
    times: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(rounds):
        for key, fn in calls.items():
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
    ms_ = {k: 1e3 * sorted(v)[len(v) // 2] for k, v in times.items()}
    print(json.dumps({"ms": ms_["tvm"], "blas_ms": ms_["blas"], "records": len(db)}))


def _child(args: list[str], timeout: float) -> tuple[int | None, str]:
    """Run ``python -m spf.bench.tvm_gemm *args`` (one thread); (exit code, output tail); a
    child still running after ``timeout`` seconds is stopped (exit code None)."""
    env = dict(os.environ, TVM_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "spf.bench.tvm_gemm", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the search and its builder/runner workers
        out, _ = proc.communicate()
        return None, out


def metaschedule(n: int, budget: float, work: Path, rounds: int) -> dict[str, Any]:
    """``{"ms", "blas_ms", "records", "tune_s"}`` of MetaSchedule's best GEMM after ``budget``
    seconds of search, or ``{"error": why}``."""
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    code, out = _child(["tune", str(n), str(work)], budget)
    tune_s = time.perf_counter() - t0
    if code is not None and code != 0:
        return {"error": f"tuning exited with {code}: {_tail(out)}", "tune_s": tune_s}
    searched = _tail(out)
    code, out = _child(["best", str(n), str(work), str(rounds)], COMPILE_S)
    if code != 0:
        why = "timed out" if code is None else f"exited with {code}"
        return {"error": f"building the best record {why}: {_tail(out)}", "tune_s": tune_s}
    try:
        got: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"no result: {_tail(out)}", "tune_s": tune_s}
    got["tune_s"] = tune_s
    if "error" in got:  # the search's last words say how far it got
        got["error"] += f" after {tune_s:.0f} s of search (its last output: {searched})"
    return got


def _tail(out: str) -> str:
    lines = [ln for ln in out.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "no output"


if __name__ == "__main__":
    if sys.argv[1] == "tune":
        _tune(int(sys.argv[2]), sys.argv[3])
    else:
        _best(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))

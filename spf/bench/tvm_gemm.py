"""TVM MetaSchedule on ``C = A @ B`` (doubles, ``n x n``, one thread) with a wall budget: the
GEMM row of ``spf bench --only tune`` that ``spf.tune`` is compared with (issue 30).

MetaSchedule has no time budget of its own (it takes a trial count), and the ``apache-tvm``
wheel is slow to set up and has crashed here, so it runs in child processes:

1. :class:`MetaSchedule` starts the search child (``python -m spf.bench.tvm_gemm search N
   WORK``) early, while ``spf.tune`` works: the child sets TVM up (:func:`_setup`: imports
   TVM and MetaSchedule, the x86 tensor intrinsics only, builds the GEMM's module and
   target and saves it as JSON once, the step that crashed), prints one ``ready`` line
   with its setup seconds and waits for a line on its stdin.
2. :meth:`MetaSchedule.run` waits for that line up to a setup allowance (reported apart
   from the search budget), then sends ``go``: the search runs (``max_trials_global`` far
   more than a budget allows) until the budget is spent and is stopped; its JSON database
   in ``WORK`` holds every batch measured by then.
3. A second child (``best N WORK ROUNDS``) compiles the best record of that database and
   times it and numpy's ``matmul`` (OpenBLAS) in one interleaved rotation, printing one
   JSON line.

A child that crashes or hangs cannot take the bench with it; its exit (a signal by name,
with the first TVM frame of the backtrace the wheel prints) or its last output is the
row's reason, with the wheel's versions.

Only the x86 tensor intrinsics are registered: ``import tvm.s_tir.tensor_intrin`` (which
MetaSchedule's tuning context imports) parses every target's intrinsics from TVMScript,
CUDA's hundreds of MMA variants among them, which took minutes on the loaded development
machine; an ``llvm`` target for this CPU uses none of them.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

TRIALS = 100_000  # more than any budget here measures: the budget stops the search
TRIALS_PER_ITER = 4  # small batches: the database gains records before the budget stops it
EVALUATOR = {"number": 1, "repeat": 1, "min_repeat_ms": 0}
"""One timed run per candidate (MetaSchedule's default runs each three times, at least 100 ms:
at n = 1024 its first batch of 8 was still being run when 120 s of search ended here)."""
POPULATION, GENETIC_ITERS = 128, 2
"""MetaSchedule's evolutionary search, sized for a budget of minutes (its defaults, 512 and 4,
spent about 90 s of a 120 s budget on the first round's candidates on the loaded 2-core
development machine, which then measured nothing)."""
COMPILE_S = 300.0  # the second child: set up, load the database, build the best, time it
SETUP_S = 600.0
"""The setup allowance: the longest wait, from the search child's start, for it to be ready
(TVM imported, the module built); reported apart from the search budget."""


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


def _x86_intrinsics_only() -> None:
    """Register the x86 tensor intrinsics without the package's ``__init__`` (which parses
    every target's: minutes): ``tvm.s_tir.tensor_intrin`` becomes a bare package first."""
    name = "tvm.s_tir.tensor_intrin"
    if name in sys.modules:
        return
    s_tir = _tvm("tvm.s_tir")
    package = types.ModuleType(name)
    package.__path__ = [os.path.join(os.path.dirname(s_tir.__file__), "tensor_intrin")]
    package.__package__ = name
    sys.modules[name] = package
    importlib.import_module(f"{name}.x86")


def _setup(n: int) -> tuple[Any, Any, Any]:
    """(meta_schedule, module, target): TVM set up for the search, the module saved as JSON
    once (MetaSchedule's tuning context does so; the wheel's crash was there)."""
    tvm = _tvm()
    _x86_intrinsics_only()
    ms = _tvm("tvm.s_tir.meta_schedule")
    mod, target = _module(n), _target()
    tvm.ir.save_json(mod)
    return ms, mod, target


def _search(n: int, work: str) -> None:
    t0 = time.perf_counter()
    ms, mod, target = _setup(n)
    print(json.dumps({"ready": time.perf_counter() - t0}), flush=True)
    if not sys.stdin.readline().strip():
        return  # the parent gave up before the search
    strategy = ms.search_strategy.EvolutionarySearch(population_size=POPULATION,
                                                     genetic_num_iters=GENETIC_ITERS)  # fmt: skip
    # the builder's and runner's worker processes import TVM afresh: the same intrinsics only
    # (the first build in a worker otherwise took 212 s here, 15 s with them)
    builder = ms.builder.LocalBuilder(initializer=_x86_intrinsics_only)
    runner = ms.runner.LocalRunner(evaluator_config=ms.runner.EvaluatorConfig(**EVALUATOR),
                                   initializer=_x86_intrinsics_only)  # fmt: skip
    ms.tune_tir(mod, target, work, max_trials_global=TRIALS, num_trials_per_iter=TRIALS_PER_ITER,
                builder=builder, runner=runner, strategy=strategy, seed=0)  # fmt: skip


def _best(n: int, work: str, rounds: int) -> None:
    import numpy as np

    tvm = _tvm()
    ms, mod, target = _setup(n)
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


def _command(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The child's command line and environment (one thread)."""
    env = dict(os.environ, TVM_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return [sys.executable, "-m", "spf.bench.tvm_gemm", *args], env


def _child(args: list[str], timeout: float) -> tuple[int | None, str]:
    """Run ``python -m spf.bench.tvm_gemm *args`` (one thread); (exit code, output); a
    child still running after ``timeout`` seconds is stopped (exit code None)."""
    cmd, env = _command(args)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        _stop(proc)
        out, _ = proc.communicate()
        return None, out


def _stop(proc: subprocess.Popen[str]) -> None:
    """Kill a child and its builder/runner workers (its own session)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


class MetaSchedule:
    """The search child, started now: it sets TVM up while the caller does other work."""

    def __init__(self, n: int, work: Path) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self.n, self.work, self.lines = n, work, queue.Queue[str | None]()
        self.out: list[str] = []
        self.ended = False  # its output ended (the reader saw the end of the pipe)
        self.started = time.perf_counter()
        cmd, env = _command(["search", str(n), str(work)])
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)  # fmt: skip
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # end of output: the child exited

    def _ready(self, allowance: float) -> float | None:
        """The child's setup seconds once it is ready; None when it exited or the
        allowance (from its start) ran out first."""
        while True:
            left = allowance - (time.perf_counter() - self.started)
            try:
                line = self.lines.get(timeout=max(left, 0.0))
            except queue.Empty:
                return None
            if line is None:
                self.ended = True
                return None
            self.out.append(line)
            if line.startswith('{"ready"'):
                return float(json.loads(line)["ready"])

    def _end(self) -> str:
        """Stop the child, reap it, close its pipes; its whole output."""
        _stop(self.proc)
        out = self._drain()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        return out

    def _drain(self) -> str:
        while not self.ended:
            try:
                line = self.lines.get(timeout=5.0)
            except queue.Empty:
                break
            if line is None:
                self.ended = True
                break
            self.out.append(line)
        return "".join(self.out)

    def run(self, budget: float, rounds: int, allowance: float = SETUP_S) -> dict[str, Any]:
        """``{"ms", "blas_ms", "records", "setup_s", "tune_s"}`` of MetaSchedule's best GEMM
        after ``budget`` seconds of search, or ``{"error": why, ...}``. The search starts once
        the child is set up, waited for up to ``allowance`` seconds from its start."""
        info: dict[str, Any] = {"versions": versions()}
        setup = self._ready(allowance)
        info["waited_s"] = time.perf_counter() - self.started
        if setup is None:
            try:  # the output ended before the allowance did: the child is exiting
                ended = self.proc.wait(timeout=10.0 if info["waited_s"] < allowance else 0.0)
            except subprocess.TimeoutExpired:
                ended = None
            out = self._end()
            if ended is None:
                why = f"setting TVM up took more than the {allowance:.0f} s allowed"
            else:
                why = f"setting TVM up {exit_reason(ended, out)}"
            return {**info, "error": why}
        info["setup_s"] = setup
        assert self.proc.stdin is not None
        t0 = time.perf_counter()
        code: int | None = None
        try:
            self.proc.stdin.write("go\n")
            self.proc.stdin.flush()
            code = self.proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            pass
        except BrokenPipeError:  # it exited between its ready line and the go
            code = self.proc.wait()
        info["tune_s"] = time.perf_counter() - t0
        searched = self._end()
        if code is not None and code != 0:
            return {**info, "error": f"the search {exit_reason(code, searched)}"}
        t1 = time.perf_counter()
        code, out = _child(["best", str(self.n), str(self.work), str(rounds)], COMPILE_S)
        info["best_s"] = time.perf_counter() - t1
        if code != 0:
            why = f"timed out after {COMPILE_S:.0f} s" if code is None else exit_reason(code, out)
            return {**info, "error": f"building the best record {why}"}
        try:
            got: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {**info, "error": f"building the best record printed no result: {_tail(out)}"}
        if "error" in got:  # the search's last words say how far it got
            got["error"] += (f" after {info['tune_s']:.0f} s of search (its last output: "
                             f"{_tail(searched)})")  # fmt: skip
        return {**info, **got}


def metaschedule(n: int, budget: float, work: Path, rounds: int) -> dict[str, Any]:
    """:class:`MetaSchedule` started and run at once (the setup then precedes the search)."""
    return MetaSchedule(n, work).run(budget, rounds)


def versions() -> str:
    """The TVM wheels installed (``apache-tvm 0.27.0.post1, apache-tvm-ffi 0.1.15.post2``)."""
    out = []
    for dist in ("apache-tvm", "apache-tvm-ffi"):
        try:
            out.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{dist} not installed")
    return ", ".join(out)


_FRAME = re.compile(r", in (tvm::[\w:]+)")


def exit_reason(code: int, out: str) -> str:
    """Why a child ended: ``crashed with SIGSEGV in tvm::ffi::ToJSONGraph`` (a signal, by
    name, with the first TVM frame of the backtrace the wheel prints) or ``exited with 1:``
    and its last line of output."""
    sig = -code if code < 0 else code - 128 if code > 128 else 0
    if sig:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        frame = _FRAME.search(out)
        where = f" in {frame.group(1)}" if frame else ""
        return f"crashed with {name}{where} (last output: {_tail(out)})"
    return f"exited with {code}: {_tail(out)}"


def _tail(out: str) -> str:
    lines = [ln for ln in out.strip().splitlines() if ln.strip() and not ln.startswith("  File")]
    return lines[-1][:200] if lines else "no output"


if __name__ == "__main__":
    if sys.argv[1] == "search":
        _search(int(sys.argv[2]), sys.argv[3])
    else:
        _best(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))

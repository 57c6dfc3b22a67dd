"""MLIR's sparsifier on the tensor benchmark's kernels (CSR SpMV, SpAdd and SpGEMM into CSR,
MTTKRP on a CSF tensor), for ``spf bench --only tensor``.

Each kernel is written as a ``linalg.generic`` over ``sparse_tensor`` encodings (CSR:
``dense, compressed``; CSF: three ``compressed`` levels, 32-bit positions and coordinates, the
arrays spf's kernels take), its operands assembled from those arrays
(``sparse_tensor.assemble``) and a sparse result disassembled into arrays of the reference's
size (``sparse_tensor.disassemble``); the module is lowered by the ``sparsifier`` pipeline
(codegen, no runtime library) and run through MLIR's ExecutionEngine at ``opt_level=3``.
The shapes are static: a new shape is a new compile, which the first-call time includes
(parse, sparsify, JIT, one call). Every result is checked against scipy's (numpy's for
MTTKRP) before it is timed. The script is a server (:class:`MlirServer`): it loads one kernel
at a time and times one call per request, by the wall clock and by the CPU time of its
process (every thread's; it also reports how many threads it has), so that the benchmark
interleaves its calls with spf's; the inputs are ``.npy`` files under ``/dev/shm`` that the
child maps and the benchmark maps too (:meth:`MlirServer.shared`), so both kernels read the
same pages. Run after spf's own timings instead, minutes apart, only the
CPU times compared at all, and not well: for a kernel bound by memory the CPU time moves with
the others' use of the caches and the memory bus (one such run put spf's SpMV on the random
matrix at 1.17x MLIR's, where interleaved calls of the same two kernels came within a few
percent; a wall-clock median taken minutes apart once showed MLIR's SpMV 2-3x faster than
scipy's, against 0.9x in CPU time).

MLIR comes from the ``torch-mlir`` wheel (its Python bindings; torch itself is not needed),
installed in a separate virtual environment, never spf's: the benchmark runs the script below
with that environment's interpreter, ``$SPF_MLIR_PYTHON`` or ``.bench-venv/bin/python`` at the
repository root (docs/einsum.md), and reports "not installed" when neither imports
``torch_mlir``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

__all__ = ["SCRIPT", "MlirServer", "mlir_python"]

TIMEOUT_S = 900

SCRIPT = r'''
import ctypes
import json
import os
import sys
import time

import numpy as np
from torch_mlir import ir, passmanager
from torch_mlir.execution_engine import ExecutionEngine
from torch_mlir.runtime import np_to_memref as rt

FOLDER = sys.argv[1]  # one .npy file an array, mapped: the benchmark's process maps them too


def array(name):
    path = os.path.join(FOLDER, name)
    return np.load(path, mmap_mode="r") if os.path.getsize(path) > 4096 else np.load(path)
CSR = (
    "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed), "
    "posWidth = 32, crdWidth = 32 }>"
)
CSF3 = (
    "#sparse_tensor.encoding<{ map = (d0, d1, d2) -> (d0 : compressed, d1 : compressed, "
    "d2 : compressed), posWidth = 32, crdWidth = 32 }>"
)
MUL_ADD = """^bb0(%a: f64, %b: f64, %c: f64):
      %p = arith.mulf %a, %b : f64
      %s = arith.addf %c, %p : f64
      linalg.yield %s : f64"""


def t(shape, elt="f64", enc=""):
    return f"tensor<{'x'.join(str(s) for s in shape)}x{elt}{', ' + enc if enc else ''}>"


def csr_in(name, n, m, nnz):
    """Arguments and assemble op of CSR operand ``name``."""
    args = f"%{name}p: {t([n + 1], 'i32')}, %{name}c: {t([nnz], 'i32')}, %{name}v: {t([nnz])}"
    op = (
        f"%{name} = sparse_tensor.assemble (%{name}p, %{name}c), %{name}v : "
        f"({t([n + 1], 'i32')}, {t([nnz], 'i32')}), {t([nnz])} to {t([n, m], enc='#CSR')}"
    )
    return args, op


def csr_out(n, m, nnz):
    """Disassembling the CSR result %0 into preallocated tensors."""
    return (
        f"%op = tensor.empty() : {t([n + 1], 'i32')}\n"
        f"  %oc = tensor.empty() : {t([nnz], 'i32')}\n"
        f"  %ov = tensor.empty() : {t([nnz])}\n"
        f"  %rp, %rc, %rv, %lp, %lc, %lv = sparse_tensor.disassemble %0 : {t([n, m], enc='#CSR')} "
        f"out_lvls(%op, %oc : {t([n + 1], 'i32')}, {t([nnz], 'i32')}) out_vals(%ov : {t([nnz])}) "
        f"-> ({t([n + 1], 'i32')}, {t([nnz], 'i32')}), {t([nnz])}, (i32, i32), i32\n"
        f"  return %rp, %rc, %rv : {t([n + 1], 'i32')}, {t([nnz], 'i32')}, {t([nnz])}"
    )


def generic(maps, iters, ins, out, body):
    m = ", ".join(f"affine_map<{x}>" for x in maps)
    it = ", ".join(f'"{x}"' for x in iters)
    names = ", ".join(n for n, _ in ins)
    types = ", ".join(ty for _, ty in ins)
    return (
        f"%0 = linalg.generic {{indexing_maps = [{m}], iterator_types = [{it}]}} "
        f"ins({names} : {types}) outs({out[0]} : {out[1]}) {{\n    {body}\n  }} -> {out[1]}"
    )


def module(func, args, results, ops):
    return (
        f"#CSR = {CSR}\n#CSF = {CSF3}\n"
        f"func.func @{func}({args}) -> ({results}) attributes {{ llvm.emit_c_interface }} {{\n  "
        + "\n  ".join(ops)
        + "\n}"
    )


def spmv(d):
    n, m, nnz = int(d["n"]), int(d["m"]), len(d["A_val"])
    args, asm = csr_in("A", n, m, nnz)
    body = generic(
        ["(i, j) -> (i, j)", "(i, j) -> (j)", "(i, j) -> (i)"],
        ["parallel", "reduction"],
        [("%A", t([n, m], enc="#CSR")), ("%x", t([m]))],
        ("%y", t([n])),
        MUL_ADD,
    )
    src = module(
        "k", f"{args}, %x: {t([m])}, %y: {t([n])}", t([n]), [asm, body, f"return %0 : {t([n])}"]
    )
    inputs = [d["A_ptr"], d["A_col"], d["A_val"], d["x"], np.zeros(n)]
    return src, inputs, [("f64", 1)], lambda got: np.allclose(got[0], d["want"])


def spadd_or_gemm(d, op):
    n, m = int(d["n"]), int(d["m"])
    a_nnz, b_nnz, c_nnz = len(d["A_val"]), len(d["B_val"]), len(d["C_val"])
    a_args, a_asm = csr_in("A", n, m, a_nnz)
    b_args, b_asm = csr_in("B", n, m, b_nnz)
    empty = f"%e = tensor.empty() : {t([n, m], enc='#CSR')}"
    if op == "add":
        maps = ["(i, j) -> (i, j)"] * 3
        iters = ["parallel", "parallel"]
        body = """^bb0(%a: f64, %b: f64, %c: f64):
      %s = arith.addf %a, %b : f64
      linalg.yield %s : f64"""
    else:
        maps = ["(i, j, k) -> (i, k)", "(i, j, k) -> (k, j)", "(i, j, k) -> (i, j)"]
        iters = ["parallel", "parallel", "reduction"]
        body = MUL_ADD
    gen = generic(
        maps,
        iters,
        [("%A", t([n, m], enc="#CSR")), ("%B", t([n, m], enc="#CSR"))],
        ("%e", t([n, m], enc="#CSR")),
        body,
    )
    results = f"{t([n + 1], 'i32')}, {t([c_nnz], 'i32')}, {t([c_nnz])}"
    src = module("k", f"{a_args}, {b_args}", results, [a_asm, b_asm, empty, gen,
                                                       csr_out(n, m, c_nnz)])
    inputs = [d[f"{x}_{y}"] for x in "AB" for y in ("ptr", "col", "val")]

    def ok(got):
        return (
            np.array_equal(got[0], d["C_ptr"])
            and np.array_equal(got[1], d["C_col"])
            and np.allclose(got[2], d["C_val"])
        )

    return src, inputs, [("i32", 1), ("i32", 1), ("f64", 1)], ok


def mttkrp(d):
    n1, n2, n3 = (int(x) for x in d["shape"])
    r = int(d["rank"])
    levels = [(d[f"pos{k}"], d[f"crd{k}"]) for k in (1, 2, 3)]
    nnz = len(d["val"])
    args = []
    lvl_names, lvl_types = [], []
    for k, (pos, crd) in enumerate(levels, 1):
        args.append(f"%p{k}: {t([len(pos)], 'i32')}, %c{k}: {t([len(crd)], 'i32')}")
        lvl_names += [f"%p{k}", f"%c{k}"]
        lvl_types += [t([len(pos)], "i32"), t([len(crd)], "i32")]
    asm = (
        f"%B = sparse_tensor.assemble ({', '.join(lvl_names)}), %v : ({', '.join(lvl_types)}), "
        f"{t([nnz])} to {t([n1, n2, n3], enc='#CSF')}"
    )
    gen = generic(
        ["(i, j, k, l) -> (i, k, l)", "(i, j, k, l) -> (k, j)", "(i, j, k, l) -> (l, j)",
         "(i, j, k, l) -> (i, j)"],
        ["parallel", "parallel", "reduction", "reduction"],
        [("%B", t([n1, n2, n3], enc="#CSF")), ("%C", t([n2, r])), ("%D", t([n3, r]))],
        ("%A", t([n1, r])),
        """^bb0(%b: f64, %c: f64, %d: f64, %a: f64):
      %p = arith.mulf %b, %c : f64
      %q = arith.mulf %p, %d : f64
      %s = arith.addf %a, %q : f64
      linalg.yield %s : f64""",
    )
    src = module(
        "k",
        f"{', '.join(args)}, %v: {t([nnz])}, %C: {t([n2, r])}, %D: {t([n3, r])}, "
        f"%A: {t([n1, r])}",
        t([n1, r]),
        [asm, gen, f"return %0 : {t([n1, r])}"],
    )
    inputs = [x for lv in levels for x in lv] + [d["val"], d["C"], d["D"], np.zeros((n1, r))]
    return src, inputs, [("f64", 2)], lambda got: np.allclose(got[0], d["want"])


def descriptor(elt, rank):
    return rt.make_nd_memref_descriptor(rank, rt.as_ctype(np.float64 if elt == "f64" else np.int32))


def load(build):
    """Compile one job, call it once and check the result: (its report, one timed call,
    what must stay alive while the job is loaded)."""
    t0 = time.perf_counter()
    src, inputs, outs, ok = build()
    context = ir.Context()
    with context, ir.Location.unknown():
        mod = ir.Module.parse(src)
        passmanager.PassManager.parse(
            "builtin.module(sparsifier{enable-runtime-library=false})"
        ).run(mod.operation)
        engine = ExecutionEngine(mod, opt_level=3)
    inputs = [np.ascontiguousarray(x) for x in inputs]
    args = [ctypes.pointer(ctypes.pointer(rt.get_ranked_memref_descriptor(x))) for x in inputs]
    kinds = [descriptor(e, r) for e, r in outs]
    if len(kinds) == 1:
        res = ctypes.pointer(ctypes.pointer(kinds[0]()))

        def got():
            return [rt.ranked_memref_to_numpy(res[0])]
    else:
        class Results(ctypes.Structure):
            _fields_ = [(f"r{k}", ty) for k, ty in enumerate(kinds)]

        res = ctypes.pointer(ctypes.pointer(Results()))

        def got():
            return [rt.ranked_memref_to_numpy(ctypes.pointer(getattr(res[0][0], f"r{k}")))
                    for k in range(len(kinds))]

    fn = engine.lookup("k")
    packed = (ctypes.c_void_p * (len(args) + 1))()
    for k, a in enumerate([res, *args]):
        packed[k] = ctypes.cast(a, ctypes.c_void_p)
    fn(packed)
    first = time.perf_counter() - t0
    matches = bool(ok([np.array(x, copy=True) for x in got()]))

    def call():
        s, c = time.perf_counter(), time.process_time()
        fn(packed)
        return {"s": time.perf_counter() - s, "cpu": time.process_time() - c}

    threads = len(os.listdir("/proc/self/task"))  # numpy's BLAS pool included
    report = {"first_s": first, "matches": matches, "threads": threads}
    return report, call, (context, mod, engine, inputs, args, res, packed)


BUILDERS = {"SpMV": spmv, "SpAdd": lambda d: spadd_or_gemm(d, "add"),
            "SpGEMM": lambda d: spadd_or_gemm(d, "mul"), "MTTKRP": mttkrp}


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


# A server, so that the benchmark can interleave these calls with spf's: each line read is a
# command, each answered by one JSON line.
#   load LABEL|KERNEL|PREFIX  compile KERNEL on the arrays keyed PREFIX* (the job loaded
#                             before is dropped), call and check it once: first_s, matches,
#                             threads; or error
#   call                      one call of the loaded job: s (wall), cpu (this process's)
call, keep = None, None
for line in sys.stdin:
    command, _, job = line.strip().partition(" ")
    if command == "load":
        call, keep = None, None
        label, kernel, prefix = job.split("|")
        d = {name[len(prefix):-4]: array(name) for name in os.listdir(FOLDER)
             if name.startswith(prefix) and name.endswith(".npy")}
        try:
            report, call, keep = load(lambda: BUILDERS[kernel](d))
        except Exception as e:  # reported as MLIR's error
            report = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        answer(report)
    elif command == "call" and call is not None:
        answer(call())
    else:
        answer({"error": f"unknown command {line.strip()!r}"})
'''


def mlir_python() -> str | None:
    """An interpreter that imports ``torch_mlir`` (``$SPF_MLIR_PYTHON``, else the one running
    the benchmark, else the repository's ``.bench-venv``), or None."""
    root = Path(__file__).resolve().parents[2]
    candidates = (os.environ.get("SPF_MLIR_PYTHON"), sys.executable,
                  str(root / ".bench-venv/bin/python"))  # fmt: skip
    for candidate in candidates:
        if not candidate or not Path(candidate).exists():
            continue
        probe = subprocess.run(
            [candidate, "-c", "import torch_mlir.execution_engine"],
            capture_output=True,
            timeout=120,
        )
        if probe.returncode == 0:
            return candidate
    return None


class MlirServer:
    """The script above in a child process, loading one job at a time and timing one call
    per request, so that its calls interleave with spf's (each process times its own: on a
    shared machine, CPU times taken minutes apart compare two loads of the caches and the
    memory bus, not two kernels). ``arrays``: every job's inputs and references, keyed by
    each job's prefix (:meth:`load` names the job). The child is killed after ``limit_s``
    in all; an answer that does not come (killed, crashed) is an ``error``."""

    def __init__(self, python: str, arrays: dict[str, Any], work: Path,
                 limit_s: float = TIMEOUT_S) -> None:  # fmt: skip
        import numpy as np

        shm = Path("/dev/shm")
        base = shm if shm.is_dir() and os.access(shm, os.W_OK) else work
        self.folder = Path(tempfile.mkdtemp(prefix="spf-bench-mlir-", dir=base))
        for key, value in arrays.items():
            np.save(self.folder / f"{key}.npy", value)
        self._log = open(work / "tensor-mlir.log", "w+b")  # noqa: SIM115 (closed in close())
        self._proc = subprocess.Popen(
            [python, "-c", SCRIPT, str(self.folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        self._timer = threading.Timer(limit_s, self._proc.kill)
        self._timer.start()
        self.limit_s = limit_s

    def shared(self, key: str) -> Any:
        """The array ``key`` as the child reads it: the same pages (a file under /dev/shm,
        mapped by both processes), so that a kernel of the benchmark's process that reads
        it reads the memory MLIR's kernel reads. On the shared VM the physical placement
        of the arrays alone moved a memory-bound kernel's CPU time by up to 1.2x: five
        copies of the random matrix, one SpMV loop, 6.5 to 7.8 ms a call."""
        import numpy as np

        return np.asarray(np.load(self.folder / f"{key}.npy", mmap_mode="r+"))

    def _ask(self, command: str) -> dict[str, Any]:
        proc = self._proc
        assert proc.stdin is not None
        assert proc.stdout is not None
        try:
            proc.stdin.write(command.encode() + b"\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except OSError:
            line = b""
        if not line:
            return {"error": self._why()}
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _why(self) -> str:
        """Why no answer came: the limit, or the child's last line on stderr."""
        if self._proc.poll() is None or self._proc.returncode == -9:
            return f"no result within {self.limit_s:.0f} s"
        self._log.seek(0)
        lines = self._log.read().decode(errors="replace").strip().splitlines()
        return (lines or ["no output"])[-1]

    def load(self, job: str) -> dict[str, Any]:
        """Compile, call and check ``job`` (``label|kernel|prefix``: kernel SpMV, SpAdd,
        SpGEMM or MTTKRP on the arrays keyed prefix*): ``first_s`` (seconds to the first
        result), ``matches`` and ``threads`` (the child's), or ``error``."""
        return self._ask(f"load {job}")

    def call(self) -> dict[str, Any]:
        """One call of the loaded job: ``s`` (wall seconds) and ``cpu`` (CPU seconds of the
        child, all its threads), or ``error``."""
        return self._ask("call")

    def close(self) -> None:
        self._timer.cancel()
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._log.close()
        shutil.rmtree(self.folder, ignore_errors=True)  # mapped arrays stay valid

    def __enter__(self) -> MlirServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

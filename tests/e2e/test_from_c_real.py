"""``spf.from_c`` on C as people write it (API §15): empty inputs, sources given as files,
induction variables, calls to functions of the same file, symbolic steps, pointer aliases,
``switch`` and locals named like spf's helpers. Each kernel is compiled twice, by gcc as
written and by spf after the import, and both run on the same random inputs: their outputs
must agree bit for bit (``-O1 -fno-fast-math -ffp-contract=off`` on both sides)."""

from __future__ import annotations

import ctypes
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from pycparser import c_ast

import spf
from spf.frontend.cparse import function, parse

FLAGS = ("-O1", "-fno-fast-math", "-ffp-contract=off")
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
_BUILDS = tempfile.TemporaryDirectory(prefix="spf_gcc_")  # removed when the session ends


@functools.cache
def _gcc(text: str, name: str) -> tuple[Any, tuple[str, ...]]:
    """``name`` of ``text`` compiled by gcc (once per source) and its parameters' ctypes
    converters: ``p`` for arrays and pointers, ``d`` for double, ``i``/``l`` for int/long."""
    out = Path(tempfile.mkdtemp(dir=_BUILDS.name))
    (out / "k.c").write_text(text)
    subprocess.run(["gcc", *FLAGS, "-std=c99", "-shared", "-fPIC", str(out / "k.c"), "-o",
                    str(out / "k.so"), "-lm"], check=True, capture_output=True)  # fmt: skip
    fn = getattr(ctypes.CDLL(str(out / "k.so")), name)
    fn.restype = None
    decl = function(parse(text, frozenset()), name).decl
    kinds = []
    for p in decl.type.args.params or []:
        if not isinstance(p.type, c_ast.TypeDecl):
            kinds.append("p")
        else:
            words = p.type.type.names
            kinds.append("d" if "double" in words else "l" if "long" in words else "i")
    return fn, tuple(kinds)


def _params(text: str, name: str) -> list[str]:
    decl = function(parse(text, frozenset()), name).decl
    return [p.name for p in decl.type.args.params or []]


def gcc_run(text: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call the gcc build of ``name`` on copies of ``args``; the copies after the call."""
    fn, kinds = _gcc(text, name)
    out = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    conv = {"p": lambda v: ctypes.c_void_p(v.ctypes.data), "d": ctypes.c_double,
            "i": lambda v: ctypes.c_int(int(v)), "l": lambda v: ctypes.c_long(int(v))}  # fmt: skip
    fn(*(conv[k](out[n]) for k, n in zip(kinds, _params(text, name), strict=True)))
    return out


@functools.cache
def _kernel(comp_json: str) -> Any:
    return spf.Computation.from_json(comp_json).compile(cflags=list(FLAGS))


def spf_run(comp: spf.Computation, args: dict[str, Any]) -> dict[str, Any]:
    """Run the spf build of ``comp`` (compiled once per Computation) on copies of ``args``."""
    out = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    names = set(comp.params) | set(comp.ufs)
    names |= {n for n, d in comp.data_spaces.items() if d.role != "local"}
    _kernel(comp.to_json())(**{n: v for n, v in out.items() if n in names})
    return out


def same_as_gcc(text: str, name: str, args: dict[str, Any], **opts: Any) -> spf.Computation:
    """Import ``name`` from ``text``, run both builds, and check every array bitwise."""
    comp = spf.from_c(text, function=name, **opts)
    want, got = gcc_run(text, name, args), spf_run(comp, args)
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            assert got[key].tobytes() == value.tobytes(), f"{name}: {key} differs"
    return comp


def csr(n: int, m: int, density: float, seed: int, index: type = np.int32) -> dict[str, Any]:
    a = sp.random(n, m, density=density, format="csr", random_state=seed)
    a.sort_indices()
    return {"rowptr": a.indptr.astype(index), "col": a.indices.astype(index),
            "val": a.data.copy(), "nnz": a.nnz}  # fmt: skip


# ------------------------------------------------------------------ 1. empty inputs
SPMV_VLA = """
void spmv(int n, int nnz, const int rowptr[n + 1], const int col[nnz], const double val[nnz],
          const double x[n], double y[n])
{
  for (int i = 0; i < n; i++) {
    double sum = 0.0;
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
      sum += val[k] * x[col[k]];
    y[i] = sum;
  }
}
"""


def test_declared_extents_are_non_negative_not_positive() -> None:
    comp = spf.from_c(SPMV_VLA)
    assert sorted(f.text for f in comp.assumptions) == ["n >= 0", "nnz >= 0"]


@pytest.mark.parametrize(
    ("n", "density"), [(16, 0.0), (0, 0.0), (1, 1.0), (17, 0.2)], ids=["nnz0", "n0", "one", "odd"]
)
def test_csr_spmv_runs_on_empty_matrices_and_vectors(n: int, density: float) -> None:
    rng = np.random.default_rng(n)
    args = {**csr(n, n, density, seed=n), "n": n, "x": rng.random(n), "y": rng.random(n)}
    same_as_gcc(SPMV_VLA, "spmv", args)
    if n == 16:
        assert args["nnz"] == 0


def test_csr_spmv_with_pointer_parameters_runs_on_an_empty_matrix() -> None:
    text = (Path(__file__).parent / "c_sources" / "spmv_csr.c").read_text()
    args = {**csr(16, 16, 0.0, seed=1), "n": 16, "x": np.ones(16), "y": np.full(16, 7.0)}
    args["NNZ"] = args.pop("nnz")
    shapes = {"val": ("NNZ",), "x": ("n",), "y": ("n",)}
    out = spf_run(spf.from_c(text, shapes=shapes), args)
    assert out["y"].tolist() == [0.0] * 16


# ------------------------------------------------------------------ 2. files
def test_source_is_a_path_or_a_file_name_or_text(tmp_path: Path) -> None:
    for suffix in (".c", ".h"):
        path = tmp_path / f"spmv{suffix}"
        path.write_text(SPMV_VLA)
        from_text = spf.from_c(SPMV_VLA).to_json()
        assert spf.from_c(path).to_json() == from_text
        assert spf.from_c(str(path)).to_json() == from_text
    with pytest.raises(spf.ParseError, match=r"no file '.*missing\.c', so it was read as C text"):
        spf.from_c(str(tmp_path / "missing.c"))
    with pytest.raises(spf.ParseError, match="cannot read"):
        spf.from_c(tmp_path / "missing.c")


# ------------------------------------------------------------------ 6. names
NAMES = """
#include <math.h>
void names(int n, double x[n], double y[n]) {
  double max = 0.0, min = 1e300, t0 = 2.0, new = 1.0, exp = 3.0;
  for (int i = 0; i < n; i++) {
    max = fmax(max, x[i]);
    min = fmin(min, x[i]);
    y[i] = max - min + t0 * new + exp + (i < 2 ? 1.0 : 0.5);
  }
  for (int floor = 0; floor < n; floor += 2)
    x[floor] = max * min;
}
"""


def test_locals_may_take_the_names_of_spf_helpers() -> None:
    rng = np.random.default_rng(3)
    args = {"n": 7, "x": rng.random(7), "y": rng.random(7)}
    comp = same_as_gcc(NAMES, "names", args)
    assert {"max", "min", "t0_", "new_", "exp_"} <= set(comp.data_spaces)
    assert "for floor_:" in comp.loop_structure()
    code = comp.codegen()
    assert "#define max(a, b)" not in code
    assert "#define max() max[0]" in code


SWITCH = """
#define TWO 2
void sw(int n, const int kind[n], double x[n], double y[n]) {
  for (int i = 0; i < n; i++) {
    switch (i % 4) {
      case 0: y[i] = 1.0; break;
      case 1: case TWO: y[i] = 2.0;  /* falls through */
      case 3: y[i] += 3.0; break;
    }
    switch (kind[i]) {
      case -1: x[i] *= 2.0;  /* falls through into default */
      default: x[i] += 1.0; break;
      case 5: { x[i] = 0.5 * y[i]; break; }
      case 'a': x[i] = 97.0;
    }
    switch (n) { case 3: y[i] -= 1.0; }
  }
}
"""


@pytest.mark.parametrize("n", [0, 3, 13])
def test_switch_is_an_if_chain_with_fallthrough_and_default(n: int) -> None:
    rng = np.random.default_rng(n)
    kind = rng.choice(np.array([-1, 5, 97, 0, 7], dtype=np.int32), n)
    args = {"n": n, "kind": kind, "x": rng.random(n), "y": rng.random(n)}
    comp = same_as_gcc(SWITCH, "sw", args)
    assert all("switch" not in s.source and "if" not in s.source for s in comp.stmts)


TURNS = """
void turns(int n, double y[n]) {
  for (int i = 0; i < n - 1; i++) {
    switch (i % 3) {
      case 0: y[i + 1] = 2.0 * y[i] + 1.0; break;
      case 1: y[i + 1] = 2.0 * y[i] - 3.0; break;
      default: y[i + 1] = 0.5 * y[i] + 2.0;
    }
  }
}
"""


@pytest.mark.parametrize("n", [0, 1, 2, 4, 8])
def test_cases_of_i_mod_3_run_in_one_loop_of_step_3_as_gcc_runs_them(n: int) -> None:
    """isl scans the three cases as one loop of step 3 calling them at ``i``, ``i + 1``,
    ``i + 2`` (a shifted stride), which the scanner's self-check used to refuse."""
    comp = same_as_gcc(TURNS, "turns", {"n": n, "y": np.random.default_rng(n).random(n)})
    assert "i += 3" in comp.codegen()


# ------------------------------------------------------------------ 5. symbolic steps
STEPS = """
void steps(int n, int inc, int s, double x[n], double y[n]) {
  for (int i = 1; i < n; i += inc) {
    y[i] = x[i - 1];
    for (int j = i; j < n; j = j + 2 * s) x[j] += 1.0;
  }
  for (int i = n - 1; i >= 0; i -= inc) y[i] *= 2.0;
  const int two = 2;
  for (int i = 1; i < n; i += two) y[i] -= 0.5;
}
"""


@pytest.mark.parametrize(("n", "inc", "s"), [(10, 3, 1), (11, 1, 2), (9, 4, 5), (0, 2, 1)])
def test_symbolic_steps_visit_what_the_c_visits(n: int, inc: int, s: int) -> None:
    rng = np.random.default_rng(n + inc)
    args = {"n": n, "inc": inc, "s": s, "x": rng.random(n), "y": rng.random(n)}
    comp = same_as_gcc(STEPS, "steps", args)
    assert {"inc >= 1", "2 * s >= 1"} <= {f.text for f in comp.assumptions}
    last = comp.stmts[-1]
    assert "if" not in last.source  # a constant step (an alias of 2) is a stride in the domain
    assert "floor" in str(last.domain)


def test_a_symbolic_step_must_be_positive_when_the_kernel_runs() -> None:
    comp = spf.from_c(STEPS)
    args = {"n": 4, "inc": 0, "s": 1, "x": np.zeros(4), "y": np.zeros(4)}
    with pytest.raises(spf.ArgumentError, match="'inc >= 1' does not hold"):
        spf_run(comp, args)


POINTERS = """
void ptrs(int n, int m, int nnz, const int rowptr[n + 1], const int col[nnz],
          const double val[nnz], double A[n][m], double x[m], double y[n], double out[2]) {
  double acc = 0.0;
  double *s = &acc;
  for (int i = 0; i < n; i++) {
    double *row = A[i];
    const double *v = &val[rowptr[i]];
    const int *c = col + rowptr[i];
    double *yi = &y[i];
    for (int k = 0; k < rowptr[i + 1] - rowptr[i]; k++)
      *yi += v[k] * x[c[k]];
    const double *shifted = &row[1] - 1;
    for (int j = 1; j < m; j++) row[j] += shifted[j - 1];
    *s += *yi;
  }
  double *o = out + 1;
  o[0] = acc;
  *out = s[0];
}
"""


@pytest.mark.parametrize(("n", "m"), [(7, 5), (1, 1), (0, 3)])
def test_pointer_aliases_read_and_write_the_arrays_they_point_into(n: int, m: int) -> None:
    rng = np.random.default_rng(n)
    args = {**csr(n, m, 0.4, seed=n), "n": n, "m": m, "A": rng.random((n, m)),
            "x": rng.random(m), "y": rng.random(n), "out": np.zeros(2)}  # fmt: skip
    comp = same_as_gcc(POINTERS, "ptrs", args)
    assert "$val$(rowptr(i) + k)" in comp.stmts[1].source
    assert not {"row", "v", "c", "yi", "shifted", "o", "s"} & set(comp.data_spaces)


# ------------------------------------------------------------------ 4. calls
CALLS = """
#include <math.h>
static inline int imin(int a, int b) { return a < b ? a : b; }
static inline double sq(double v) { return v * v; }
static double dot(int n, const double *x, const double *y) {
  double s = 0.0;
  for (int k = 0; k < n; k++) s += x[k] * y[k];
  return s;
}
static void axpy(int n, double a, const double *x, double *y) {
  for (int k = 0; k < n; k++) y[k] += a * x[k];
}
static void acc(double *out, double v) { *out += v; }
static double norm2(int n, const double *x) { return sqrt(dot(n, x, x)); }
void kernel(int n, int m, double A[n][m], double x[m], double y[n], double r[1]) {
  for (int i = 0; i < n; i++) {
    double d = dot(m, A[i], x);
    y[i] = sq(d) + dot(imin(m, 2), &A[i][0], x) - norm2(m, A[i]);
    for (int j = 0; j < imin(m, i + 2); j++) y[i] += sq(A[i][j]) * 1e-3;
    axpy(m, 1e-2 * y[i], x, A[i]);
    acc(&r[0], y[i]);
    sq(y[i]);
  }
}
"""


@pytest.mark.parametrize(("n", "m"), [(6, 5), (1, 1), (3, 0)])
def test_calls_to_functions_of_the_source_are_inlined(n: int, m: int) -> None:
    rng = np.random.default_rng(n * m)
    args = {"n": n, "m": m, "A": rng.random((n, m)), "x": rng.random(m), "y": rng.random(n),
            "r": np.zeros(1)}  # fmt: skip
    comp = same_as_gcc(CALLS, "kernel", args)
    loops = comp.loop_structure()
    assert "for _i0_k:" in loops
    assert "for j:" in loops
    assert comp.stmt("s11").source == "$y$(i) = $d$ * $d$ + $_i1_ret$ - $_i2_ret$;"
    assert "j <= i + 1" in str(comp.stmt("s12").domain)  # imin in a bound stays affine
    assert not [d for d in comp.data_spaces if d.endswith(("_x", "_y", "_out"))]  # aliases


# ------------------------------------------------------------------ 3. induction variables
INDUCTION = """
#define W 3
void ivs(int n, int m, double A[n][W], double B[n][m], double y[3 * n + 8], double z[n][m],
         double w[2 * n + 6]) {
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < W; j++)
      y[k++] = A[i][j];
  y[k] = -1.0;
  for (int i = 0; i < n; i++) {
    int c = 0;
    for (int j = 0; j < m; j++) { z[i][c] = B[i][j] * 2.0; c++; }
  }
  int p = 2 * n + 5;
  for (int i = 0; i < n; i += 2) { w[p] = (double)i; p -= 1; }
  int q = 0;
  for (int i = 0; i < n; i++) {
    for (int j = q; j < q + 2; j++) w[j] += 1.0;
    q += 2;
  }
}
"""


@pytest.mark.parametrize(("n", "m"), [(5, 4), (1, 1), (0, 2), (6, 0)])
def test_induction_variables_read_their_closed_forms(n: int, m: int) -> None:
    rng = np.random.default_rng(n + m)
    args = {"n": n, "m": m, "A": rng.random((n, 3)), "B": rng.random((n, m)),
            "y": rng.random(3 * n + 8), "z": rng.random((n, m)), "w": rng.random(2 * n + 6)}  # fmt: skip
    comp = same_as_gcc(INDUCTION, "ivs", args)
    sources = [s.source for s in comp.stmts]
    assert "$y$((3*i + j)) = $A$(i, j);" in sources
    assert "$y$(3*n) = -1.0;" in sources
    assert not {"k", "c", "p", "q"} & set(comp.data_spaces)  # no scalar carries a dependence
    assert comp.is_parallel_legal(comp.stmts[0], "i")


# ------------------------------------------------------------------ all of it, at random
class _Mixed:
    """A random function built from blocks that use the constructs above together (each
    block in bounds for N = 6): an induction-variable pack, a switch with fallthrough, row
    and offset pointers, calls, a symbolic step, random expressions and operators."""

    HELPERS = """
#include <math.h>
#define N 6
static inline double sq(double v) { return v * v; }
static inline int imin(int a, int b) { return a < b ? a : b; }
static double dot(int n, const double *u, const double *v) {
  double s = 0.0;
  for (int k = 0; k < n; k++) s += u[k] * v[k];
  return s;
}
static void scale(int n, double a, double *u) { for (int k = 0; k < n; k++) u[k] *= a; }
"""

    def __init__(self, seed: int) -> None:
        import random

        self.r = random.Random(seed)

    def expr(self, depth: int = 0) -> str:
        r = self.r
        leaves = ["x[i]", "y[i]", "A[i][imin(i + 1, N - 1)]", "alpha", "0.5", "sq(y[i])"]
        if depth > 1 or r.random() < 0.4:
            return r.choice(leaves)
        a, b = self.expr(depth + 1), self.expr(depth + 1)
        forms = [f"({a} + {b})", f"({a} * {b})", f"({a} - {b})", f"sqrt(fabs({a}))",
                 f"({a} > {b} ? {a} : {b})"]  # fmt: skip
        if depth == 0:  # a call that runs statements: never under a condition (?:)
            forms.append(f"dot(2, &A[i][1], x) * {a}")
        return r.choice(forms)

    def op(self) -> str:
        return self.r.choice(["=", "+=", "-=", "*="])

    def block(self) -> str:
        r, e, op = self.r, self.expr, self.op
        blocks = [
            f"{{ int k = 0; for (i = 0; i < N; i++) for (j = 0; j < 2; j++) big[k++] {op()} "
            f"{e()}; }}",
            f"for (i = 0; i < N; i++) {{ switch (i % 3) {{ case 0: y[i] {op()} {e()}; break; "
            f"case 1: x[i] {op()} {e()}; default: y[i] {op()} {e()}; }} }}",
            f"for (i = 0; i < N; i++) {{ double *row = A[i]; "
            f"for (j = 1; j < N; j++) row[j] {op()} row[j - 1] * 0.25; }}",
            f"{{ double *p = &x[1]; for (i = 0; i < N - 1; i++) p[i] {op()} {e()}; }}",
            f"for (i = 0; i < N; i++) y[i] {op()} {e()} + dot(N, A[i], x) * 1e-2;",
            f"for (i = {r.randint(0, 2)}; i < N; i += s) x[i] {op()} {e()};",
            "scale(N, 0.5, A[s % N]);",
            f"{{ int q = 2 * N - 1; for (i = N - 1; i >= 0; i--) {{ big[q] {op()} {e()}; q -= 2; }} }}",
        ]
        return r.choice(blocks)

    def source(self) -> str:
        body = "\n  ".join(self.block() for _ in range(self.r.randint(2, 4)))
        return (
            self.HELPERS + "void mixed(double alpha, int s, double x[N], double y[N], "
            f"double A[N][N], double big[2 * N]) {{\n  int i, j;\n  {body}\n}}\n"
        )


@pytest.mark.parametrize("seed", range(8))
def test_random_mixed_programs_match_gcc(seed: int) -> None:
    text = _Mixed(seed).source()
    rng = np.random.default_rng(seed)
    args = {"alpha": 0.75, "s": 1 + seed % 3, "x": rng.random(6), "y": rng.random(6),
            "A": rng.random((6, 6)), "big": rng.random(12)}  # fmt: skip
    try:
        same_as_gcc(text, "mixed", args)
    except AssertionError as err:
        raise AssertionError(f"{err}\n{text}") from None


AFFINE_CONDITIONS = """
void pairs(int n, double x[n], double y[n]) {
  for (int i = 0; i + 1 < n; i++)
    y[i] = x[i] + x[i + 1];
  for (int i = 0; 2 * i < n; i++)
    y[i] += 2.0 * x[2 * i];
  for (int i = n - 1; i - 1 >= 0; i--)
    y[i] -= 0.5 * y[i - 1];
  for (int i = 0; n - 3 > i + 0; i++)
    x[i] = y[i + 2];
}
"""


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_loop_conditions_affine_in_the_loop_variable_run_as_gcc_runs_them(n: int) -> None:
    rng = np.random.default_rng(n)
    args = {"n": n, "x": rng.random(n), "y": rng.random(n)}
    same_as_gcc(AFFINE_CONDITIONS, "pairs", args)


@pytest.mark.parametrize(
    "cond", ["i * i < n", "i < x[i]", "i / 2 < n", "i % 4 < n", "n - i < i - n"]
)
def test_loop_conditions_not_affine_in_the_loop_variable_are_refused(cond: str) -> None:
    text = f"void f(int n, double x[n]) {{ for (int i = 0; {cond}; i++) x[i] = 0.0; }}"
    with pytest.raises(spf.SpfError, match=r"loop 'i'"):
        spf.from_c(text, function="f")


TRUNCATING = """
void truncating(int n, int s, double x[n], double y[n], double z[n], double w[7]) {
  for (int i = 0; i < n; i++)
    if ((i - 3) / 2 == 0) y[i] = 1.0;
  for (int i = 0; i < n; i++)
    if ((i - 4) % 3 == -1) z[i] = 2.0;
  for (int i = (-3) / 2 + 2; i < n; i++)
    x[i] += 3.0;
  for (int i = 0; i < n / 2; i++)
    x[i] += w[s % 7];
}
"""


def test_c_division_of_possibly_negative_values_keeps_c_meaning() -> None:
    """C's ``/`` and ``%`` truncate toward zero, spf's set syntax floors: conditions with a
    dividend that can be negative run as C evaluates them (they set other elements), a
    constant folds as C folds it (the loop starts at 1, not 0), and a dividend over
    parameters alone is assumed non-negative, checked at the call; a subscript whose
    dividend can be negative is refused at its column (it was proved in bounds by floor
    and wrote one element past ``y``)."""
    args = {"n": 9, "s": 5, "x": np.zeros(9), "y": np.zeros(9), "z": np.zeros(9),
            "w": np.arange(7.0)}  # fmt: skip
    comp = same_as_gcc(TRUNCATING, "truncating", args)
    with pytest.raises(spf.ArgumentError):
        comp.compile()(**{**args, "s": -4})
    bad = "void f(int n, double x[n], double y[n]) {\n  for (int i = 0; i < n; i++)\n" \
          "    y[(i - n) / 2 + n] = x[i];\n}\n"  # fmt: skip
    with pytest.raises(spf.ParseError, match=r"line 3, column 8: '/' in a subscript"):
        spf.from_c(bad, function="f")


CASTS_UNSIGNED = """
void casts(int n, double y[n], double z[n], double w[n]) {
  for (int i = 0; i < n; i++)
    if ((unsigned)(i - 2) < 3u) y[i] = 1.0;
  for (int i = 0; i < n; i++)
    if ((double)i / 2 > 2) z[i] = 2.0;
  for (unsigned u = 0; u < n; u++)
    if (u - 1 >= 0) w[u] += 1.0;
  for (unsigned u = 0; u < n; u++)
    if (u - 2 < 3) w[u] += 10.0;
}
"""


def test_casts_and_unsigned_arithmetic_in_conditions_keep_c_meaning() -> None:
    """A cast to an unsigned, narrower or floating type, and a subtraction of unsigned
    values that may wrap, are not read as integer set constraints (the cast was dropped:
    the ``(unsigned)(i - 2) < 3u`` range idiom selected i = 0..4): such conditions stay
    conditions the generated C evaluates, with unsigned loop variables in their own type."""
    args = {"n": 7, "y": np.zeros(7), "z": np.zeros(7), "w": np.zeros(7)}
    same_as_gcc(CASTS_UNSIGNED, "casts", args)


LOCAL_TYPES = """
#define MIN(a, b) ((a) < (b) ? (a) : (b))
void local_types(int n, const int a[n], double y[4 * n]) {
  unsigned k = 0;
  for (int i = 0; i < n; i++) {
    unsigned u = a[i];
    long l = a[i] * 1000000;
    signed char c = a[i] * 40;
    unsigned hi = MIN(i, 3);
    y[4 * i] = u / 2;
    y[4 * i + 1] = l * 3000 / 7;
    y[4 * i + 2] = c + (hi - 4);
    y[4 * k + 3] = k - 3;
    k++;
  }
}
"""


def test_integer_locals_no_statement_computes_keep_their_c_type() -> None:
    """An integer local bound to one value (``unsigned u = a[i];``), a min/max or an
    induction variable has no statement; where a statement reads it, its value is converted
    to the local's type as C's assignment converts it. The plain value read instead divided
    ``u`` signed, multiplied ``l`` in 32 bits (it overflowed), never wrapped ``c`` to a
    char and subtracted ``hi - 4`` and ``k - 3`` below zero instead of wrapping."""
    args = {"n": 7, "a": np.arange(-3, 4, dtype=np.int32), "y": np.zeros(28)}
    same_as_gcc(LOCAL_TYPES, "local_types", args)


SHADOWING = """
#define N 6
void shadowing(const double x[N], double y[N], double z[N]) {
  double t = 1.0;
  int k = 2;
  for (int i = 0; i < N; i++) {
    z[i] = t;
    double t = x[i];
    y[i] = t;
    for (int j = 0; j < 2; j++) {
      int k = j + 3;
      z[k] += t;
      for (int m = 0; m < 2; m++)
        z[m] += 0.25;
    }
  }
  y[0] += t;
  z[k] += 0.5;
}
"""


def test_a_local_shadowing_another_is_another_variable() -> None:
    """A local declared in an inner block with the name of one in scope is a new variable:
    the names were one data space, and ``y[0] += t`` after the loop read the inner ``t``'s
    last value instead of 1.0. A loop ``i`` inside loop ``i`` is another loop (it was
    refused)."""
    args = {"x": np.arange(1.0, 7.0), "y": np.zeros(6), "z": np.zeros(6)}
    same_as_gcc(SHADOWING, "shadowing", args)
    inner_i = SHADOWING.replace("int m = 0; m < 2; m++", "int i = 0; i < 2; i++")
    same_as_gcc(inner_i.replace("z[m] += 0.25", "z[i] += 0.25"), "shadowing", args)


def test_a_static_local_that_keeps_a_value_between_calls_is_refused() -> None:
    """A ``static`` local keeps its value from one call to the next; inlined, the callee's
    counter restarted at every call (running sums 1, 2, 3 instead of 1, 3, 6). It is refused
    where it is declared; a ``static const`` never changes and is imported."""
    text = """
static double running(double v) { static double acc = 0.0; acc += v; return acc; }
void sums(int n, const double x[n], double y[n]) {
  static const double half = 0.5;
  for (int i = 0; i < n; i++) y[i] = running(x[i]) * half;
}
"""
    with pytest.raises(spf.ParseError, match=r"line 2, column 49: static local 'acc'"):
        spf.from_c(text, function="sums")
    constant = text.replace("running(x[i])", "x[i]")
    same_as_gcc(constant, "sums", {"n": 3, "x": np.ones(3), "y": np.zeros(3)})


BOUND_QUOTIENTS = """
#define MIN(a, b) ((a) < (b) ? (a) : (b))
void quotients(int n, const double v[n], double y[n + 9], double z[n + 9], double w[n + 9]) {
  for (int t = 0; t <= (n - 1) / 4; t++)
    y[t] += 1.0;
  for (int i = 0; i < n; i++)
    for (int j = -4; j < (i - 3) / 2; j++)
      z[j + 4] += i;
  for (int i = n; i > (n - 9) / 2; i--)
    w[i + 4] += 1.0;
  for (int i = -5; i < MIN((n - 9) / 2, 3) + 1; i++)
    w[i + 5] += 10.0;
}
"""


@pytest.mark.parametrize("n", [0, 1, 4, 9])
def test_quotients_in_loop_bounds_truncate_as_c_does(n: int) -> None:
    """A loop condition's ``e / c`` is C's quotient, truncated toward zero, also where ``e``
    may be negative: floor read it before, so the tile loop ``t <= (n - 1) / 4`` ran no
    iteration for n = 0 (C runs t = 0) and ``j < (i - 3) / 2`` one fewer for i < 3."""
    args = {"n": n, "v": np.zeros(n), "y": np.zeros(n + 9), "z": np.zeros(n + 9),
            "w": np.zeros(n + 9)}  # fmt: skip
    same_as_gcc(BOUND_QUOTIENTS, "quotients", args)


def test_a_remainder_in_a_loop_bound_that_may_be_negative_is_refused() -> None:
    text = """void f(int n, double y[n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < (i - 5) % 3 + 2; j++) y[i] += 1.0;
}"""
    with pytest.raises(spf.ParseError, match=r"line 3, column 26: loop 'j': its bound .*'%'"):
        spf.from_c(text)


GUARDED_CALL = """
static void negate(int n, double *v) { for (int i = 0; i < n; i++) v[i] = -v[i]; }
#define N 5
void guarded(double x[N]) {
  if (x[0] > 0.0) negate(N, x);
}
"""


def test_a_data_guard_around_loops_that_write_what_it_reads_through_a_pointer_is_refused() -> None:
    """An ``if`` that reads data, around loops, guards each statement inside: a write to
    what it reads made the later iterations see another condition. The check missed writes
    through a pointer alias (an inlined callee's array parameter: only ``x[0]`` was negated)
    and reads through one; the same code with the condition in a variable runs as C does."""
    with pytest.raises(
        spf.ParseError, match=r"line 2, column 68: 'x' is written \(through pointer 'v'\)"
    ):
        spf.from_c(GUARDED_CALL, function="guarded")
    aliased = "void g(int n, double x[n]) {\n  double *q = &x[0];\n" \
              "  if (q[0] > 0.0) for (int i = 0; i < n; i++) x[i] = -x[i];\n}\n"  # fmt: skip
    with pytest.raises(spf.ParseError, match=r"line 3, column 47: 'x' is written under"):
        spf.from_c(aliased)
    fixed = GUARDED_CALL.replace("if (x[0] > 0.0)", "int pos = x[0] > 0.0;\n  if (pos)")
    same_as_gcc(fixed, "guarded", {"x": np.arange(1.0, 6.0)})


UNUSED_ARGUMENT = """
static double zero(double a) { return 0.0; }
#define N 6
void unused(const double x[2 * N], double y[2 * N]) {
  int k = 0;
  for (int i = 0; i < N; i++) {
    y[i] = zero(x[k++]);
    y[k] += 1.0;
  }
}
"""


def test_an_argument_that_increments_runs_once_whatever_the_callee_does_with_it() -> None:
    """A function that only returns an expression is substituted at its call, each parameter
    replaced by its argument: an argument with ``k++`` was dropped where the parameter is
    unused (and would be repeated where it is used twice). Such a call is inlined as a
    statement call instead, its argument evaluated once; ``MIN(k++, 3)``, which C evaluates
    with ``k++`` up to twice, is the macro as written (and refused: ``k`` is read twice)."""
    same_as_gcc(UNUSED_ARGUMENT, "unused", {"x": np.arange(12.0), "y": np.zeros(12)})
    twice = UNUSED_ARGUMENT.replace("y[i] = zero(x[k++]);", "y[MIN(k++, 3)] += 1.0;")
    with pytest.raises(spf.ParseError, match="'k' is incremented and used again"):
        spf.from_c("#define MIN(a, b) ((a) < (b) ? (a) : (b))\n" + twice, function="unused")


MIN_TARGET = """
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define N 9
void clamp_sum(const double x[N], double y[N]) {
  for (int i = 0; i < N; i++)
    y[MIN(i, 3)] += x[i];
}
"""


def test_an_update_of_an_element_chosen_by_min_compiles() -> None:
    """``y[MIN(i, 3)] += x[i]`` imported; code generation read the target's subscript as a
    set and failed on ``min`` ("'min' cannot be used as a function name", no position)."""
    same_as_gcc(MIN_TARGET, "clamp_sum", {"x": np.arange(9.0), "y": np.zeros(9)})


BOUNDARY = """
#define N 7
void differences(const double x[N], double y[N], double z[N]) {
  double t;
  for (int i = 0; i < N; i++) {
    if (i == 0) t = x[0]; else t = x[i] - x[i - 1];
    y[i] = t;
  }
  for (int i = 0; i < N; i++) {
    double u;
    if (i > 0) u = 2.0 * x[i]; else u = -1.0;
    z[i] = u;
  }
}
"""


def test_a_local_written_at_one_iteration_only_by_some_statement_compiles() -> None:
    """``if (i == 0) t = ...; else t = ...;`` with ``t`` private to loop ``i``: code
    generation took ``t = x[0]`` (one iteration) out of the loop, before the loop that
    declares ``t``, and gcc refused the kernel. Such a local stays shared (as in the C)."""
    comp = same_as_gcc(BOUNDARY, "differences",
                       {"x": np.arange(7.0) ** 2, "y": np.zeros(7), "z": np.zeros(7)})  # fmt: skip
    assert comp.data_spaces["t"].private is None
    assert comp.data_spaces["u"].private is None


PIECES = """
void pieces(int n, const double x[n + 8], double y[n + 8]) {
  for (int i = 0; i < (n - 12) / 3 + 4; i++) {
    double t = x[i] * 2.0;
    y[i] += t;
  }
}
"""


@pytest.mark.parametrize("n", [0, 1, 5, 8, 20])
def test_a_private_local_in_a_loop_whose_last_iteration_is_scanned_apart(n: int) -> None:
    """C's quotient in the bound is a max: isl scans the loop's last iteration for some n
    apart from the loop, and that piece needs its own copy of the private ``t`` (gcc
    refused the generated C before); floor read the bound one iteration short for n = 1."""
    same_as_gcc(PIECES, "pieces", {"n": n, "x": np.arange(n + 8.0), "y": np.zeros(n + 8)})


UNSIGNED_MIX = """
void mix(int n, const int a[n], const double x[n], double y[n], double z[n]) {
  for (int i = 0; i < n; i++) {
    unsigned w = x[i] > 0.5;
    y[i] = (i - 3) * w + n * w;
    unsigned t = -2;
    if (t < a[i]) z[i] = 1.0;
  }
}
"""


def test_int_loop_variables_and_unsigned_locals_convert_as_c_converts_them() -> None:
    """The generated code counts in 64 bits: ``(i - 3) * w`` with ``unsigned w`` was a
    signed product (C converts ``i - 3`` to unsigned: 4294967293 for i = 0); an unsigned
    local bound to a constant was compared as the integer -2 (C compares it unsigned)."""
    args = {"n": 6, "a": np.array([-5, 0, 3, -1, 7, 2], np.int32), "x": np.full(6, 0.75),
            "y": np.zeros(6), "z": np.zeros(6)}  # fmt: skip
    same_as_gcc(UNSIGNED_MIX, "mix", args)


LITERALS = """
void literals(int n, double y[n], double z[n], double w[010]) {
  for (int i = 0; i < n; i++) {
    switch ((-1 / 3u) % 3) { case 0: y[i] += 1.0; break; default: y[i] -= 1.0; }
    if (i - 2 < 3u) z[i] = 1.0;
  }
  for (int i = 0; i < 010; i++)
    w[i] = i;
  for (int i = 0; i < 8u; i++)
    w[i] += 0.5;
}
"""


def test_unsigned_and_octal_literals_keep_c_meaning() -> None:
    """``-1 / 3u`` is unsigned arithmetic (1431655765, so ``% 3`` is 1, not 0) and
    ``i - 2 < 3u`` compares unsigned (false for i < 2); both were read as signed set
    constraints. ``010`` is 8: it raised a raw ValueError."""
    args = {"n": 6, "y": np.zeros(6), "z": np.zeros(6), "w": np.zeros(8)}
    same_as_gcc(LITERALS, "literals", args)


MOVING_OFFSET = """
#define N 8
void pack(const double x[N], double y[2 * N]) {
  int k = 0;
  for (int i = 0; i < N; i++) {
    double *p = &y[k];
    k += 2;
    p[1] = x[i];
  }
}
"""


def test_a_pointer_bound_at_an_induction_variable_is_refused() -> None:
    """``p = &y[k]`` then ``k += 2``: the pointer keeps the place it was bound to, but its
    offset was read again where ``p`` is used, with the new ``k`` (every write two elements
    late). Refused, naming the variable; subscripted before ``k`` changes, the import runs
    as the C does."""
    with pytest.raises(spf.ParseError, match=r"line 6, column 20: pointer 'p' .* reads 'k'"):
        spf.from_c(MOVING_OFFSET)
    direct = MOVING_OFFSET.replace("double *p = &y[k];\n    k += 2;\n    p[1] = x[i];",
                                   "y[k + 1] = x[i];\n    k += 2;")  # fmt: skip
    same_as_gcc(direct, "pack", {"x": np.arange(1.0, 9.0), "y": np.zeros(16)})


def test_a_narrow_counter_that_wraps_is_not_read_as_a_plain_subscript() -> None:
    """``unsigned char k = 250; ... x[k]; k += 10;`` reads x[4] after the wrap; the closed
    form read x[260] in bounds of a larger ``x``. A counter narrower than 32 bits keeps its
    cast in a subscript, which spf refuses (it is not quasi-affine)."""
    text = """
#define N 4
void f(const double x[300], double y[N]) {
  unsigned char k = 250;
  for (int i = 0; i < N; i++) { y[i] = x[k]; k += 10; }
}"""
    with pytest.raises(spf.ParseError, match=r"line 5, column 33: .*\(uint8_t\)"):
        spf.from_c(text)

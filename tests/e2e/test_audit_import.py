"""``spf.from_c`` on real C as written (API §13, §15), found by an audit: each kernel is
compiled by gcc as written and by spf after the import, both run on the same inputs, and
every array must agree bit for bit; what spf cannot import must be a ``ParseError`` that
names the construct."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import spf

if TYPE_CHECKING:
    from pathlib import Path

FLAGS = ("-O1", "-fno-fast-math", "-ffp-contract=off")
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def gcc_run(tmp: Path, text: str, name: str, args: list[tuple[str, Any]]) -> dict[str, Any]:
    """Call ``name`` of ``text`` built by gcc on copies of ``args`` (in parameter order:
    arrays by pointer, Python ints as ``int``, floats as ``double``); the copies after."""
    (tmp / "k.c").write_text(text)
    subprocess.run(["gcc", *FLAGS, "-std=c99", "-shared", "-fPIC", str(tmp / "k.c"), "-o",
                    str(tmp / "k.so"), "-lm"], check=True, capture_output=True)  # fmt: skip
    fn = getattr(ctypes.CDLL(str(tmp / "k.so")), name)
    fn.restype = None
    out = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args}
    conv = {np.ndarray: lambda v: ctypes.c_void_p(v.ctypes.data), int: ctypes.c_int,
            float: ctypes.c_double}  # fmt: skip
    fn(*(conv[type(v)](out[k]) for k, v in args))
    return out


def same_as_gcc(
    tmp: Path, text: str, name: str, args: list[tuple[str, Any]], **opts: Any
) -> spf.Computation:
    """Import ``name``, run the spf and gcc builds, and check every array bitwise."""
    comp = spf.from_c(text, function=name, **opts)
    want = gcc_run(tmp, text, name, args)
    got = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args}
    names = set(comp.params) | set(comp.ufs)
    names |= {n for n, d in comp.data_spaces.items() if d.role != "local"}
    comp.compile(cflags=list(FLAGS))(**{k: v for k, v in got.items() if k in names})
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            assert got[key].tobytes() == value.tobytes(), f"{name}: {key} differs"
    return comp


# ------------------------------------------------------------------ preprocessor
ELIF = """
#define FAST
#if 0
#define OFF 1.0
#elif 1
#define OFF 2.0
#else
#define OFF 3.0
#endif
#ifdef FAST
#define SCALE 4.0
#elif 1
#define SCALE 5.0
#endif
#if 0
#if defined(FAST) && OFF > 1
#error not C
#endif
#endif
void g(double x[8]) {
  for (int i = 0; i < 8; i++) x[i] = x[i] * SCALE + OFF;
}
"""


def test_elif_keeps_the_first_group_whose_condition_holds(tmp_path: Path) -> None:
    # #elif was ignored: the text after '#if 0' stayed skipped and '#else' kept OFF 3.0
    x = np.linspace(0, 1, 8)
    same_as_gcc(tmp_path, ELIF, "g", [("x", x)])


@pytest.mark.parametrize("guard", ["#ifndef N", "#if !defined(N)"])
def test_a_guarded_size_stays_symbolic_under_params(guard: str) -> None:
    # a name of params= counted as defined, so '#ifndef N / #define N 100' skipped the
    # define and params=["N"] was refused: "'N' is neither a #define of the source ..."
    src = f"{guard}\n#define N 100\n#endif\nvoid f(double x[N]) {{ x[0] = 1.0; }}"
    comp = spf.from_c(src, params=["N"])
    assert comp.data_spaces["x"].shape == ("N",)
    assert "N" in comp.params


# ------------------------------------------------------------------ declarations and literals
SIBLINGS = """
void g(int n, double x[n], float y[n]) {
  for (int i = 0; i < n; i++) { double t = x[i] / 3.0; x[i] = t; }
  for (long i = n - 1; i >= 0; i--) { float t = x[i] / 3.0; y[i] = t; }
  for (int i = 0; i < n; i++) y[i] += 1.0f;
}
"""


def test_sibling_blocks_may_declare_a_name_with_another_type(tmp_path: Path) -> None:
    # was a ParseError: 'i' (then 't') is declared twice with different types, valid C
    x, y = np.linspace(-1, 1, 9), np.zeros(9, np.float32)
    comp = same_as_gcc(tmp_path, SIBLINGS, "g", [("n", 9), ("x", x), ("y", y)])
    assert comp.data_spaces["t"].dtype != comp.data_spaces["t_"].dtype


SUFFIXES = """
#define N 8UL
void g(int n, double x[N], double y[n]) {
  for (unsigned long i = 0; i < N; i++) x[i] = x[i] + i;
  for (long i = 1L; i < n - 1LL; i += 2L) y[i] = y[i] * 2 + y[i - 1L];
  for (int i = 0; i < n; i++) {
    switch (i % 3) { case 0UL: y[i] += 1.0; break; case 1LL: y[i] += 2.0; break; }
    if (i - 2 < 3UL) y[i] += 10.0;
    if (i - 2L < 3L) y[i] += 100.0;
  }
}
"""


def test_integer_literals_with_l_and_ul_suffixes_are_integers(tmp_path: Path) -> None:
    # 8UL, 1L, 2L, case 0UL were refused ('8UL is not an integer'): pycparser types them
    # 'unsigned long int', 'long int', which the import did not list; 3UL stays unsigned
    x, y = np.linspace(0, 1, 8), np.linspace(-1, 1, 11)
    same_as_gcc(tmp_path, SUFFIXES, "g", [("n", 11), ("x", x), ("y", y)])


DATASETS = """
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(LARGE_DATASET)
#  define SMALL_DATASET
#endif
#if defined(MINI_DATASET)
#  define N 4
#elif defined(SMALL_DATASET)
#  define N 6
#else
#  define N 400
#endif
#if N >= 6 && N % 2 == 0
#  define SCALE (N / 4)
#else
#  define SCALE 1
#endif
void g(double x[N]) {
  for (int i = 0; i < N; i++) x[i] = x[i] * SCALE + N;
}
"""


def test_if_selects_a_polybench_dataset_as_cpp_does(tmp_path: Path) -> None:
    # '#if !defined(...)' was refused ('#if supports only an integer constant')
    comp = same_as_gcc(tmp_path, DATASETS, "g", [("x", np.linspace(0, 1, 6))])
    assert comp.data_spaces["x"].shape == (6,)


ENUMS = """
enum { N = 16, H = N / 2, Q };
enum color { RED, GREEN = 5, BLUE };
typedef enum { LO = -2, HI } range_t;
void g(double x[N], int y[4]) {
  for (int i = 0; i < H; i++) x[i] += x[i + H] * Q;
  y[0] = RED; y[1] = GREEN; y[2] = BLUE; y[3] = LO + HI;
}
"""


def test_enumerators_are_integer_constants(tmp_path: Path) -> None:
    # was a ParseError: "'H' is not declared" (the enumerators were not read)
    x, y = np.linspace(-1, 1, 16), np.zeros(4, np.int32)
    comp = same_as_gcc(tmp_path, ENUMS, "g", [("x", x), ("y", y)])
    assert comp.data_spaces["x"].shape == (16,)


LOCAL_ENUMS = """
void f(double x[8]) {
  enum { K = 2, L };
  for (int i = 0; i < 8; i++) {
    enum { M = 3 };
    x[i] = x[i] * K + L * M;
  }
  for (int i = 0; i < L; i++) x[i] += 1;
}
"""


def test_enumerators_declared_in_the_function_are_integer_constants(tmp_path: Path) -> None:
    # was a ParseError: "'L' is not declared"
    same_as_gcc(tmp_path, LOCAL_ENUMS, "f", [("x", np.linspace(0, 1, 8))])


INIT_LISTS = """
void g(int n, double x[n], double y[n], int z[4]) {
  const double w[3] = {0.25, 0.5, 0.25};
  double acc[4] = {0};
  int m[2][2] = {{1, 2}, {3}};
  int f[2][3] = {1, 2, 3, 4};
  for (int i = 1; i < n - 1; i++) y[i] = w[0] * x[i-1] + w[1] * x[i] + w[2] * x[i+1];
  for (int i = 0; i < n; i++) acc[i % 4] += x[i];
  for (int i = 0; i < 4; i++) { y[i] += acc[i]; z[i] = m[i / 2][i % 2] + f[i % 2][i % 3]; }
  for (int i = 0; i < n; i++) {
    double loc[2] = {x[i], -x[i]};
    y[i] += loc[0] * loc[1];
  }
}
"""


def test_local_arrays_with_initializer_lists(tmp_path: Path) -> None:
    # stencil weights and zeroed accumulators were a ParseError ("initializer list for 'w';
    # assign the elements in a loop")
    rng = np.random.default_rng(3)
    args = [("n", 12), ("x", rng.random(12) - 0.5), ("y", rng.random(12)),
            ("z", np.zeros(4, np.int32))]  # fmt: skip
    with warnings.catch_warnings():  # x(i - 1) for n >= 3 only: a PreconditionWarning
        warnings.simplefilter("ignore", spf.PreconditionWarning)
        same_as_gcc(tmp_path, INIT_LISTS, "g", args)


@pytest.mark.parametrize(
    ("decl", "words"),
    [
        ("double w[] = {1, 2};", "give the extent as a number"),
        ("double w[100] = {0};", "assign the elements in a loop"),
        ("double w[2] = {[1] = 2.0};", "designated initializers are not read"),
        ("double w[2] = {1, 2, 3};", "more values than the extent 2"),
        ("double w[2][2] = {{1, 2}, 3};", "write braces for each dimension"),
    ],
)
def test_initializer_lists_spf_does_not_read_are_named(decl: str, words: str) -> None:
    with pytest.raises(spf.ParseError, match=re.escape("initializer list for 'w'")) as err:
        spf.from_c(f"void g(double x[4]) {{ {decl} x[0] = 1.0; }}")
    assert words in str(err.value)


TERNARY_BOUNDS = """
void dia(int n, int nd, const int *off, const double val[][n], const double *x, double *y,
         int b, double A[n][n]) {
  for (int d = 0; d < nd; d++) {
    int o = off[d];
    int lo = o < 0 ? -o : 0;
    int hi = o > 0 ? n - o : n;
    for (int i = lo; i < hi; i++) y[i] += val[d][i] * x[i + o];
  }
  for (int i = 0; i < n; i++) {
    int lo = (i - b >= 0) ? i - b : 0;
    for (int j = lo; j <= (i + b < n - 1 ? i + b : n - 1); j++) y[i] += A[i][j];
    for (int j = 0; j < (i > b ? b : i); j++) y[i] -= A[j][i];
  }
}
"""


def test_conditional_expressions_that_pick_the_smaller_or_larger_are_min_max(
    tmp_path: Path,
) -> None:
    # a DIA SpMV's int lo = o < 0 ? -o : 0; was "its start is not affine ('lo' is a
    # variable...)": isl proves which of the two each ?: picks, and it becomes max/min
    rng = np.random.default_rng(2)
    n = 20
    args = [("n", n), ("nd", 3), ("off", np.array([-1, 0, 2], np.int32)),
            ("val", rng.random((3, n))), ("x", rng.random(n)), ("y", rng.random(n)),
            ("b", 2), ("A", rng.random((n, n)))]  # fmt: skip
    same_as_gcc(
        tmp_path,
        TERNARY_BOUNDS,
        "dia",
        args,
        shapes={"off": ("nd",), "x": ("n",), "y": ("n",), "val": ("nd", "n")},
    )
    mixed = (
        "void f(int n, double x[n]) { for (int i = 0; i < n; i++)"
        " for (int j = (i > 3 ? 0 : i); j < n; j++) x[j] += 1; }"
    )
    with pytest.raises(spf.ParseError, match="is not an affine expression"):
        spf.from_c(mixed)  # 0 where i > 3, else i: neither the smaller nor the larger


# ------------------------------------------------------------------ data-dependent ifs
DATA_IF_BLOCKS = """
static void neg(double *v) { double t = v[0]; v[0] = -t; }
static void flip(int i, double *v) { v[i] = -v[i]; }
void g(int n, const int *p, double A[n][n], double *x, double *y) {
  for (int i = 0; i < n; i++) {
    if (x[i] > 0) { neg(&x[i]); y[i] = x[i]; } else { flip(i, y); }
    if (y[i] > 0) { int j = p[i]; y[j] += x[i]; }
    if (x[i] < y[i]) { double *row = A[i]; row[0] = y[i]; row[n - 1] += row[0]; }
  }
}
"""


def test_calls_pointers_and_index_locals_inside_a_data_dependent_if(tmp_path: Path) -> None:
    # a loop-free if on data is one statement, whose block declared no pointer alias:
    # neg(&x[i]) there was "pointer operation '&'", flip(i, y) "array 'y' used without
    # subscripts", and int j = p[i]; y[j] "data space 'j' cannot be used in an index"
    rng = np.random.default_rng(5)
    n = 12
    args = [("n", n), ("p", rng.permutation(n).astype(np.int32)), ("A", rng.random((n, n))),
            ("x", rng.random(n) - 0.5), ("y", rng.random(n) - 0.5)]  # fmt: skip
    same_as_gcc(tmp_path, DATA_IF_BLOCKS, "g", args, shapes=dict.fromkeys("pxy", ("n",)))


# ------------------------------------------------------------------ whole files
PROGRAM = """
#include <stdio.h>
#include <stdlib.h>
#define N 12
void kernel(int n, double *x, double *y);
extern int verbose;
static long calls[4];
double scale = 2.0;

static double helper(double v) { return scale * v; }
void kernel(int n, double *x, double *y) {
  for (int i = 0; i < n; i++) y[i] = helper(x[i]);
}
int main(int argc, char **argv) {
  double *x = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) x[i] = i;
  kernel(N, x, y);
  if (verbose) printf("%f\\n", y[3]);
  free(x); free(y);
  return 0;
}
"""


def test_a_program_with_main_imports_its_kernel_and_only_the_globals_it_uses() -> None:
    # without function=, main (the one function no other calls) was picked and refused
    # ("the function returns a value"); with function="kernel", the unused 'verbose' was a
    # required kernel argument (unused arrays such as calls were dropped already)
    comp = spf.from_c(PROGRAM, shapes={"x": ("n",), "y": ("n",)})
    assert comp.name == "kernel"
    assert sorted(comp.params) == ["n", "scale"]
    x, y = np.arange(12.0), np.zeros(12)
    comp.compile()(n=12, x=x, y=y, scale=2.0)
    assert y.tolist() == (2.0 * x).tolist()


# ------------------------------------------------------------------ what is refused
PARAMETER_DECREMENTED = """
void g(int n, double x[], double y[]) {
  for (int i = 0; i < n; i++) y[i] = x[i];
  n--;
  for (int i = 0; i < n; i++) y[i] += x[i];
}
"""


def test_a_bound_on_a_parameter_the_function_decrements_says_so() -> None:
    # said "'n' is a variable, not a loop variable or an integer parameter" at the first
    # loop, though n is an integer parameter: n-- (line 4) made it no constant
    with pytest.raises(spf.ParseError, match="parameter 'n' is assigned in the function"):
        spf.from_c(PARAMETER_DECREMENTED, shapes={"x": ("N",), "y": ("N",)})


def test_sizeof_in_a_bound_is_named() -> None:
    # said "UnaryOp is not an affine expression"
    src = "void f(double x[8]) { for (int i = 0; i < sizeof(x) / sizeof(x[0]); i++) x[i] = 0; }"
    with pytest.raises(spf.ParseError, match="sizeof is not read: write the number"):
        spf.from_c(src)
    with pytest.raises(spf.ParseError, match="'~n' is not an affine expression"):
        spf.from_c("void f(int n, double x[8]) { for (int i = 0; i < ~n; i++) x[i] = 0; }")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("void f(int n, double x[n]) { ssize_t k = 0; x[0] = k; }", "ssize_t"),
        ("FILE *log_file;\nvoid f(int n, double x[n]) { x[0] = 0; }", "FILE"),
        ("void f(int n, const real_t x[n]) { double t = x[0]; }", "real_t"),
    ],
)
def test_a_type_from_a_system_header_is_named(text: str, name: str) -> None:
    # a bare "C syntax error: before: k" or "Invalid function definition"
    with pytest.raises(spf.ParseError, match=f"'{name}' is not a type spf knows"):
        spf.from_c(text)


@pytest.mark.parametrize(
    "text",
    [
        "void f(int n, double x[n]) { x[0] = n m; }",
        "typedef double real_t;\nvoid f(int n, double x[n]) { real_t m m; }",
    ],
)
def test_a_syntax_error_that_is_no_unknown_type_names_no_type(text: str) -> None:
    with pytest.raises(spf.ParseError, match="C syntax error: before: m") as err:
        spf.from_c(text)
    assert "is not a type" not in str(err.value)


def test_a_subscript_by_a_local_holding_data_says_what_to_do() -> None:
    # said "data space 'j' cannot be used in an index (not affine); declare index arrays as
    # UFs": p is written, so it is no index array, and j is no UF to declare
    src = """void g(int n, int p[n], double x[n], double y[n]) {
      for (int i = 0; i < n; i++) { int j = p[i]; p[i] = 0; y[j] += x[i]; }
    }"""
    with pytest.raises(spf.ParseError, match="subscript reads 'j', a local") as err:
        spf.from_c(src)
    assert "keep arrays used as indices read-only" in str(err.value)

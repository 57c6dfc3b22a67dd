"""C as numerical code writes it, imported and run against gcc's build of the same C: the
standard constants of the headers, early-exit guards, ``const`` declarations with values,
narrow loop counters, variadic macros and token pasting."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import spf
from spf.frontend.std_constants import STANDARD_CONSTANTS

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

FLAGS = ["-O2", "-ffp-contract=off"]


def _gcc(text: str, function: str, call: list[Any], tmp: Path) -> None:
    """Compile ``text`` with gcc and call ``function`` with the ctypes values ``call``."""
    c_file = tmp / f"{function}_gcc.c"
    c_file.write_text(text)
    lib = tmp / f"lib{function}_gcc.so"
    subprocess.run(["gcc", *FLAGS, "-std=c99", "-shared", "-fPIC", str(c_file), "-o", str(lib),
                    "-lm"], check=True, capture_output=True)  # fmt: skip
    fn = getattr(ctypes.CDLL(str(lib)), function)
    fn.restype = None
    fn(*call)


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


def test_standard_constants_have_gccs_values(tmp_path: Path) -> None:
    """Each constant spf substitutes is, read by gcc as spf writes it, the value the
    header gives (bitwise for the floating ones)."""
    names = sorted(STANDARD_CONSTANTS)
    lines = [
        "#define _GNU_SOURCE",
        "#include <math.h>",
        "#include <float.h>",
        "#include <limits.h>",
        "#include <stdio.h>",
        "#include <string.h>",
        "static void show(const char *n, long double h, long double s, int same_type) {",
        '  printf("%s %d %d\\n", n, h == s, same_type);',
        "}",
        "int main(void) {",
    ]
    for n in names:
        lit = STANDARD_CONSTANTS[n]
        same = f"sizeof({n}) == sizeof({lit}) && ((__typeof__({n}))-1 < 0) == ((__typeof__({lit}))-1 < 0)"
        lines.append(f'  show("{n}", (long double)({n}), (long double)({lit}), {same});')
    lines += ["  return 0;", "}"]
    src = tmp_path / "consts.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "consts"
    subprocess.run(["gcc", "-std=gnu99", str(src), "-o", str(exe), "-lm"], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    rows = {r.split()[0]: r.split()[1:] for r in out.splitlines()}
    assert sorted(rows) == names
    for n, (equal, same_type) in rows.items():
        if n.startswith("M_"):
            # glibc's M_ values are double literals too, with the same digits
            assert equal == "1", n
        else:
            assert (equal, same_type) == ("1", "1"), n


def test_header_constants_import_and_match_gcc(tmp_path: Path) -> None:
    c = """
#define _GNU_SOURCE
#include <math.h>
#include <float.h>
#include <limits.h>
void clampscale(int n, double x[n], double lo[1], int k[n]) {
  lo[0] = DBL_MAX;
  for (int i = 0; i < n; i++) {
    x[i] = M_PI * x[i] + DBL_EPSILON;
    if (x[i] < lo[0]) lo[0] = x[i];
    k[i] = i < 3 ? INT_MAX : INT_MIN;
  }
}
"""
    comp = spf.from_c(c)
    x = np.linspace(-1.0, 1.0, 7)
    want = {"x": x.copy(), "lo": np.zeros(1), "k": np.zeros(7, dtype=np.int32)}
    got = {k: v.copy() for k, v in want.items()}
    _gcc(c, "clampscale", [ctypes.c_int(7), *(_ptr(want[n]) for n in ("x", "lo", "k"))], tmp_path)
    comp.compile(cflags=FLAGS)(n=7, **got)
    for n in want:
        assert got[n].tobytes() == want[n].tobytes(), n
    assert want["lo"][0] < 0
    assert want["k"][0] == 2**31 - 1


def test_a_define_of_the_source_replaces_a_standard_constant() -> None:
    comp = spf.from_c("""
#define M_PI 3.0
void f(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] = M_PI; }""")
    assert comp.stmts[0].source == "$x$(i) = 3.0;"


@pytest.mark.parametrize("ctype", ["unsigned char", "unsigned short", "short", "char"])
def test_a_narrow_counter_that_may_wrap_is_refused_saying_so(ctype: str) -> None:
    """Before: ``unsigned char`` (and ``char``, ``short``) read as the range ``0 <= i < n``,
    a kernel that ends where the C loops forever for ``n > 255``; ``unsigned short`` was an
    unsupported type."""
    c = f"void f(int n, double x[n]) {{ for ({ctype} i = 0; i < n; i++) x[i] = 1.0; }}"
    with pytest.raises(spf.ParseError, match=r"loop variable 'i' is .*wraps it to .* never ends"):
        spf.from_c(c)


@pytest.mark.parametrize("ctype", ["unsigned char", "unsigned short", "short int", "signed char"])
def test_a_narrow_counter_within_its_type_imports_and_matches_gcc(
    ctype: str, tmp_path: Path
) -> None:
    c = f"""
void f(double x[127]) {{
  for ({ctype} i = 0; i < 125; i += 2) x[i] = 2.0 * x[i] + i;
  for ({ctype} j = 126; j > 0; j--) x[j] -= x[j - 1];
}}"""
    comp = spf.from_c(c)
    want = np.linspace(0.0, 1.0, 127)
    got = want.copy()
    _gcc(c, "f", [_ptr(want)], tmp_path)
    comp.compile(cflags=FLAGS)(x=got)
    assert got.tobytes() == want.tobytes()
    downward = f"void g(double x[9]) {{ for ({ctype} i = 8; i >= 0; i--) x[i] = 1.0; }}"
    if ctype.startswith("unsigned"):  # i >= 0 always holds: C loops forever
        with pytest.raises(spf.ParseError, match="wraps it to"):
            spf.from_c(downward)
    else:
        spf.from_c(downward)


def test_variadic_and_pasting_macros_import_and_match_gcc(tmp_path: Path) -> None:
    c = """
#define LOG(...)
#define AT(arr, ...) arr[__VA_ARGS__]
#define COL(k) x##k
void f(int n, double x0[n], double x1[n]) {
  for (int i = 0; i < n; i++) {
    LOG("row %d, of %d", i, n);
    AT(COL(1), i) += 2.0 * COL(0)[i];
  }
}
"""
    comp = spf.from_c(c)
    want = {"x0": np.linspace(0.0, 1.0, 5), "x1": np.ones(5)}
    got = {k: v.copy() for k, v in want.items()}
    _gcc(c, "f", [ctypes.c_int(5), _ptr(want["x0"]), _ptr(want["x1"])], tmp_path)
    comp.compile(cflags=FLAGS)(n=5, **got)
    assert got["x1"].tobytes() == want["x1"].tobytes()
    assert not np.array_equal(want["x1"], np.ones(5))


GUARDED = """
void f(int n, int m, double alpha, double x[n], double y[2]) {
  if (n <= 0) return;
  if (m < 2 || m > 8) { return; }
  y[0] = m;
  if (alpha == 0.0) return;
  for (int i = 0; i < n; i++)
    x[i] *= alpha;
  y[1] = alpha;
  return;
}
"""


@pytest.mark.parametrize(("n", "m", "alpha"), [(5, 3, 2.0), (0, 3, 2.0), (5, 9, 2.0), (5, 3, 0.0)])
def test_early_return_guards_import_and_match_gcc(
    n: int, m: int, alpha: float, tmp_path: Path
) -> None:
    """Before: 'an early return cannot be represented'. A statement after the guard, outside
    the loops, runs only where the guard does not hold."""
    comp = spf.from_c(GUARDED)
    assert comp.stmts[0].domain.is_subset(spf.Set("{[]: n >= 1 && 2 <= m <= 8}"))
    x = np.arange(1.0, 6.0)[: max(n, 0)] if n > 0 else np.zeros(0)
    want = {"x": x.copy(), "y": np.full(2, -1.0)}
    got = {k: v.copy() for k, v in want.items()}
    call = [ctypes.c_int(n), ctypes.c_int(m), ctypes.c_double(alpha), _ptr(want["x"])]
    _gcc(GUARDED, "f", [*call, _ptr(want["y"])], tmp_path)
    comp.compile(cflags=FLAGS)(n=n, m=m, alpha=alpha, **got)
    for k in want:
        assert got[k].tobytes() == want[k].tobytes(), k


@pytest.mark.parametrize(
    ("guard", "reads"),
    [
        ("if (x[0] < 0.0) return;", "an array element"),
        ("n = n - 1; if (n <= 0) return;", "parameter 'n', which the function assigns"),
    ],
)
def test_an_early_return_on_other_than_parameters_is_refused_saying_how(
    guard: str, reads: str
) -> None:
    c = f"void f(int n, double x[n]) {{ {guard} for (int i = 0; i < n; i++) x[i] = 1.0; }}"
    with pytest.raises(spf.ParseError, match=rf"condition reads {reads}.*if \(!\(<condition>\)\)"):
        spf.from_c(c)


CONSTANTS = """
static const int N = 6;
static const long BIG = 3000000000;
static const unsigned U = 7;
static const unsigned char WRAPPED = 300;
static const int LO = -5;
static const int M = N * 2 - 1;
const double HALF = 0.5;
static const float TENTH = 0.1;
void f(double x[M], long y[3], float z[N]) {
  double t[N];
  for (int i = 0; i < N; i++) {
    t[i] = HALF * x[i] + LO;
    z[i] = TENTH * z[i];
  }
  for (int i = N; i < M; i++)
    x[i] = t[i - N] * WRAPPED;
  y[0] = BIG * 3;
  y[1] = -U;
  y[2] = M;
}
"""


def test_file_scope_constants_take_their_values_and_match_gcc(tmp_path: Path) -> None:
    """Before: each was a kernel argument (N symbolic, HALF a double parameter), the
    initializer not applied."""
    comp = spf.from_c(CONSTANTS)
    assert not comp.params
    assert comp.data_spaces["x"].shape == (11,)
    want = {
        "x": np.linspace(0.0, 1.0, 11),
        "y": np.zeros(3, dtype=np.int64),
        "z": np.linspace(1.0, 2.0, 6, dtype=np.float32),
    }
    got = {k: v.copy() for k, v in want.items()}
    _gcc(CONSTANTS, "f", [_ptr(want[k]) for k in ("x", "y", "z")], tmp_path)
    comp.compile(cflags=FLAGS)(**got)
    for k in want:
        assert got[k].tobytes() == want[k].tobytes(), k
    assert want["y"].tolist() == [9000000000, 2**32 - 7, 11]


def test_a_parameter_hides_a_file_scope_constant_of_its_name() -> None:
    comp = spf.from_c("""
static const int N = 64;
void f(int N, double x[N]) { for (int i = 0; i < N; i++) x[i] = 1.0; }""")
    assert set(comp.params) == {"N"}

"""Calls to functions of the same source (API §15): pure expression functions are
substituted (``imin`` stays a ``min`` in bounds), others inlined with prefixed names
(``_i<N>_``) as ``append_computation`` does; recursion, early returns and calls whose
evaluation is conditional are ``ParseError`` s at the call."""

from __future__ import annotations

import numpy as np
import pytest

import spf

HELPERS = """
static inline int imin(int a, int b) { return b < a ? b : a; }
static inline int imax(int a, int b) { return a >= b ? a : b; }
static inline double half(int v) { return v / 2; }
static double sum(int n, const double *x) {
  double s = 0.0;
  for (int k = 0; k < n; k++) s += x[k];
  return s;
}
static void scale(int n, double a, double *x) { for (int k = 0; k < n; k++) x[k] *= a; }
"""


def test_the_function_no_other_calls_is_imported_by_default() -> None:
    comp = spf.from_c(HELPERS + "void top(int n, double x[n]) { scale(n, 2.0, x); }")
    assert comp.name == "top"
    assert [s.source for s in comp.stmts] == ["$_i0_a$ = 2.0;", "$x$(_i0_k) *= $_i0_a$;"]
    assert comp.stmts[1].loops == ("_i0_k",)


def test_pure_functions_are_substituted_and_min_max_stay_affine() -> None:
    comp = spf.from_c(
        HELPERS
        + """
        void top(int n, double x[n], double y[n]) {
          for (int i = imax(0, n - 4); i < imin(n, 6); i++) y[i] = half(i) + x[imin(i, 2)];
        }"""
    )
    (s,) = comp.stmts
    assert s.source == "$y$(i) = (double)(i / 2) + $x$(min(i, 2));"
    y = np.zeros(9)
    comp.interpret(x=np.arange(9.0), y=y, n=9)
    assert y.tolist() == [0, 0, 0, 0, 0, 2 + 2, 0, 0, 0]  # i = 5: 5 / 2 + x[2]


def test_returned_values_and_arguments_bind_like_append_computation() -> None:
    comp = spf.from_c(
        HELPERS
        + """
        void top(int n, double x[n], double out[2]) {
          out[0] = sum(n, x);
          out[1] = sum(n - 1, &x[1]) + sum(1, x);
        }"""
    )
    assert "$out$(0) = $_i0_ret$;" in [s.source for s in comp.stmts]
    assert "$_i1_s$ += $x$(1 + _i1_k);" in [s.source for s in comp.stmts]
    out = np.zeros(2)
    comp.interpret(x=np.arange(1.0, 5.0), out=out, n=4)
    assert out.tolist() == [10.0, 10.0]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("out[0] = f(n);", "recursive call to 'f' (f -> f)"),
        ("out[0] = g(n);", "recursive call to 'g' (g -> h -> g)"),
        ("out[0] = early(n);", "a return before the end of 'early'"),
        ("if (n > 0 && sum(n, out) > 1.0) out[0] = 1.0;", "runs only under a condition"),
        ("for (int i = 0; i < sum(n, out); i++) out[0] = 1.0;", "in a loop's condition"),
        ("out[0] = sum(n);", "'sum' takes 2 argument(s), got 1"),
        ("out[0] = undefined(1.0);", "call to 'undefined', which spf cannot model"),
        ("scale(n, 2.0, out + n * n);", "not affine"),
        ("out[0] = nothing(n);", "'nothing' returns no value"),
    ],
)
def test_calls_that_cannot_be_inlined_are_parse_errors(body: str, words: str) -> None:
    src = (
        HELPERS
        + """
        double undefined(double);
        static double f(int n) { return n > 0 ? f(n - 1) : 0.0; }
        static double g(int n);
        static double h(int n) { return g(n); }
        static double g(int n) { double t = h(n); return t; }
        static double early(int n) { if (n > 0) return 1.0; return 0.0; }
        static void nothing(int n) { }
        """
        + f"void top(int n, double out[2]) {{ {body} }}"
    )
    with pytest.raises(spf.ParseError, match=r"line \d+, column \d+: ") as info:
        spf.from_c(src, function="top")
    assert words in str(info.value), str(info.value)
    assert "^" in str(info.value)  # the caret under the call or statement


def test_an_argument_with_effects_runs_once_even_when_the_parameter_is_read_twice() -> None:
    comp = spf.from_c(
        """
        static inline double sq(double v) { return v * v; }
        static inline double zero(double v) { return 0.0; }
        static double bump(double *c) { *c += 1.0; return *c; }
        void top(double t[1], double out[2]) {
          out[0] = sq(bump(&t[0]));
          out[1] = zero(bump(&t[0]));
        }""",
        function="top",
    )
    t, out = np.array([2.0]), np.zeros(2)
    comp.interpret(t=t, out=out)
    assert (t[0], out.tolist()) == (4.0, [9.0, 0.0])


def test_a_pure_function_given_an_address_is_inlined_through_a_pointer() -> None:
    comp = spf.from_c(
        """
        static inline double first(const double *p) { return p[0] + p[1]; }
        static inline double sq(double v) { return v * v; }
        static double bump(double *c) { *c += 1.0; return *c; }
        void top(int n, double x[n], double y[n], double t[1]) {
          for (int i = 0; i < n - 1; i++) y[i] = first(&x[i]) + first(x);
          sq(bump(t));
        }""",
        function="top",
    )
    x, y, t = np.arange(4.0), np.zeros(4), np.zeros(1)
    comp.interpret(x=x, y=y, t=t, n=4)
    assert y.tolist() == [1 + 1, 3 + 1, 5 + 1, 0]
    assert t[0] == 1.0  # the unused result's argument still ran

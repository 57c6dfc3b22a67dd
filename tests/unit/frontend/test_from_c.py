"""``spf.from_c``: what each C construct becomes (statements, domains, schedules, data spaces,
UFs, locals) and that the result computes what the C computes (run by the interpreter)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf

if TYPE_CHECKING:
    from pathlib import Path


def test_one_statement_per_assignment_in_textual_order() -> None:
    comp = spf.from_c(
        """
        void f(int n, double a[n], double b[n]) {
          for (int i = 0; i < n; i++) {
            a[i] = 1.0;
            b[i] += a[i];
          }
          a[0] = 2.0;
        }"""
    )
    assert [s.source for s in comp.stmts] == ["$a$(i) = 1.0;", "$b$(i) += $a$(i);", "$a$(0) = 2.0;"]
    assert comp.loop_structure() == "for i:\n  s0\n  s1\ns2"
    assert comp.params == frozenset({"n"})
    assert "n >= 0" in [f.text for f in comp.assumptions]


def test_define_sizes_are_substituted_or_kept_symbolic_with_params() -> None:
    src = "#define N 10\nvoid f(double x[N]) { for (int i = 0; i < N; i++) x[i] = i; }"
    fixed = spf.from_c(src)
    assert fixed.data_spaces["x"].shape == (10,)
    assert fixed.params == frozenset()
    symbolic = spf.from_c(src, params=["N"])
    assert symbolic.data_spaces["x"].shape == ("N",)
    x = np.zeros(4)
    symbolic.interpret(x=x, N=4)
    assert x.tolist() == [0, 1, 2, 3]


def test_includes_pragmas_comments_and_typedefs_are_handled() -> None:
    comp = spf.from_c(
        """#include <math.h>
        typedef double real;  // a typedef
        /* a comment */
        void f(int n, real x[n]) {
        #pragma scop
          for (int i = 0; i < n; i++) x[i] = sqrt(x[i]);
        #pragma endscop
        }"""
    )
    assert comp.stmts[0].source == "$x$(i) = sqrt($x$(i));"
    assert comp.data_spaces["x"].ctype == "double"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("for (i = 0; i < n; i++)", [0, 1, 2, 3, 4, 5, 6]),
        ("for (i = 1; i <= n - 2; i++)", [1, 2, 3, 4, 5]),
        ("for (i = n - 1; i >= 0; i--)", [6, 5, 4, 3, 2, 1, 0]),
        ("for (i = n - 1; i > 2; --i)", [6, 5, 4, 3]),
        ("for (i = 1; i < n; i += 2)", [1, 3, 5]),
        ("for (i = n - 1; i >= 0; i -= 3)", [6, 3, 0]),
        ("for (i = max(1, n - 4); i < min(n, 5); i = i + 1)", [3, 4]),
        ("for (i = 0; n > i; ++i)", [0, 1, 2, 3, 4, 5, 6]),
        ("for (i = 0; i != n; i++)", [0, 1, 2, 3, 4, 5, 6]),
        ("for (i = n - 1; i != -1; i--)", [6, 5, 4, 3, 2, 1, 0]),
        ("for (i = 2; n != i; ++i)", [2, 3, 4, 5, 6]),
    ],
)
def test_loop_forms_visit_the_c_order(header: str, expected: list[int]) -> None:
    comp = spf.from_c(
        f"""
        #define min(a, b) ((a) < (b) ? (a) : (b))
        #define max(a, b) ((a) > (b) ? (a) : (b))
        void f(int n, double order[n], double c[1]) {{
          int i;
          {header} {{
            order[i] = c[0];
            c[0] += 1.0;
          }}
        }}"""
    )
    order = np.full(7, -1.0)
    c = np.zeros(1)
    comp.interpret(order=order, c=c, n=7)
    visited = sorted(expected, key=lambda i: order[i])
    assert visited == expected
    assert int(c[0]) == len(expected)


def test_affine_if_and_else_are_domains() -> None:
    comp = spf.from_c(
        """
        void f(int n, double x[n]) {
          for (int i = 0; i < n; i++)
            if (i < 3 && i != 1) x[i] = 1.0; else x[i] = 2.0;
        }"""
    )
    assert all("if" not in s.source for s in comp.stmts)
    x = np.zeros(6)
    comp.interpret(x=x, n=6)
    assert x.tolist() == [1, 2, 1, 2, 2, 2]


def test_non_affine_conditions_stay_in_the_source() -> None:
    comp = spf.from_c(
        """
        void f(int n, double x[n], double y[n]) {
          for (int i = 0; i < n; i++)
            if (x[i] > 0.5 && i > 0) { y[i] = x[i]; x[i] = 0.0; } else y[i] = -1.0;
        }"""
    )
    assert len(comp.stmts) == 1
    assert comp.stmts[0].source.startswith("if (")
    x = np.array([0.9, 0.1, 0.7, 0.8])
    y = np.zeros(4)
    comp.interpret(x=x, y=y, n=4)
    assert y.tolist() == [-1.0, -1.0, 0.7, 0.8]
    assert x.tolist() == [0.9, 0.1, 0.0, 0.0]


def test_data_dependent_condition_around_a_loop_guards_each_statement() -> None:
    comp = spf.from_c(
        """
        void f(int n, double s[n], double A[n][n]) {
          for (int i = 0; i < n; i++)
            if (s[i] > 0.0)
              for (int j = 0; j < n; j++) A[i][j] = s[i];
        }"""
    )
    assert comp.stmts[0].source == "if ($s$(i) > 0.0) { $A$(i, j) = $s$(i); }"
    s = np.array([1.0, -1.0, 2.0])
    a = np.zeros((3, 3))
    comp.interpret(s=s, A=a, n=3)
    assert a[:, 0].tolist() == [1.0, 0.0, 2.0]


def test_chained_assignment_becomes_two_statements() -> None:
    comp = spf.from_c("void f(double a[2], double b[2]) { a[0] = b[1] = 3.0; }")
    assert [s.source for s in comp.stmts] == ["$b$(1) = 3.0;", "$a$(0) = $b$(1);"]


def test_scalars_become_locals_and_float_parameters_constants() -> None:
    comp = spf.from_c(
        """
        void f(int n, double alpha, double x[n], double out[1]) {
          double sum = 0.0;
          double w[n];
          for (int i = 0; i < n; i++) { w[i] = alpha * x[i]; sum += w[i]; }
          out[0] = sum;
        }"""
    )
    assert comp.constants == {"alpha": "double", "n": "int64_t"}
    assert comp.data_spaces["sum"].role == "local"
    assert comp.data_spaces["w"].role == "local"
    out = np.zeros(1)
    comp.interpret(x=np.arange(4.0), out=out, alpha=2.0, n=4)
    assert out[0] == 12.0


def test_index_arrays_become_ufs_with_declared_properties() -> None:
    comp = spf.from_c(
        """
        void spmv(int n, int *rowptr, long *col, double *a, double *x, double *y) {
          for (int i = 0; i < n; i++)
            for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
              int j = col[k];
              y[i] += a[k] * x[j];
            }
        }""",
        shapes={"a": ("NNZ",), "x": ("M",), "y": ("n",)},
        ufs={
            "rowptr": spf.UF("rowptr", monotonic="nondecreasing"),
            "col": {"range": "{[v]: 0 <= v < M}"},
        },
    )
    assert comp.ufs["rowptr"].monotonic == "nondecreasing"
    assert comp.ufs["col"].dtype == "int64"
    assert comp.ufs["col"].range is not None
    assert comp.stmts[0].source == "$y$(i) += $a$(k) * $x$(col(k));"
    assert "rowptr(i) <= k" in str(comp.stmts[0].domain).replace(" ", " ") or "rowptr" in str(
        comp.stmts[0].domain
    )
    y = np.zeros(2)
    comp.interpret(y=y, a=np.array([1.0, 2.0, 3.0]), x=np.array([10.0, 20.0]),
                   rowptr=np.array([0, 2, 3], dtype=np.int32), col=np.array([0, 1, 1]),
                   n=2, M=2, NNZ=3)  # fmt: skip
    assert y.tolist() == [50.0, 60.0]


def test_condition_on_an_index_array_is_a_domain_constraint() -> None:
    comp = spf.from_c(
        """
        void f(int n, const int *rowptr, const int *col, const double *a, double *d) {
          for (int i = 0; i < n; i++)
            for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
              if (col[k] == i) d[i] = a[k];
        }""",
        shapes={"a": ("NNZ",), "d": ("n",)},
    )
    assert "col(k)" in str(comp.stmts[0].domain)
    assert "if" not in comp.stmts[0].source


def test_global_arrays_and_the_function_argument() -> None:
    src = """
    #define N 4
    double g[N];
    void one(void) { for (int i = 0; i < N; i++) g[i] = 1.0; }
    void two(void) { for (int i = 0; i < N; i++) g[i] = 2.0; }
    """
    comp = spf.from_c(src, function="two")
    g = np.zeros(4)
    comp.interpret(g=g)
    assert g.tolist() == [2.0] * 4


def test_math_calls_casts_and_ternaries_keep_their_text() -> None:
    comp = spf.from_c(
        """
        void f(int n, double x[n]) {
          for (int i = 0; i < n; i++)
            x[i] = fabs(x[i]) > 1.0 ? exp(-x[i]) : (double)i / n + pow(x[i], 2.0);
        }"""
    )
    assert comp.stmts[0].source == (
        "$x$(i) = fabs($x$(i)) > 1.0 ? exp(-$x$(i)) : (double)i / n + pow($x$(i), 2.0);"
    )


def test_parentheses_follow_the_c_tree() -> None:
    comp = spf.from_c("void f(double a[3]) { a[0] = a[1] - (a[2] - a[0]) * (a[1] + a[2]); }")
    assert comp.stmts[0].source == "$a$(0) = $a$(1) - ($a$(2) - $a$(0)) * ($a$(1) + $a$(2));"


def test_result_is_an_ordinary_computation() -> None:
    comp = spf.from_c(
        """
        void mm(int n, double C[n][n], double A[n][n], double B[n][n]) {
          for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
              for (int k = 0; k < n; k++)
                C[i][j] += A[i][k] * B[k][j];
        }"""
    )
    comp.stmt("s0").interchange("j", "k").parallelize("i")
    comp.check_legality()
    assert "for i [parallel]" in comp.loop_structure()
    assert spf.Computation.from_json(comp.to_json()).stmts[0].source == comp.stmts[0].source
    assert comp.pdfg() is not None


def test_translation_prints_python_that_rebuilds_it() -> None:
    from spf.frontend import translate

    t = translate("void f(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] = 0.0; }")
    scope: dict[str, object] = {}
    exec(t.as_python(), scope)
    rebuilt = scope["comp"]
    assert isinstance(rebuilt, spf.Computation)
    assert rebuilt.to_json() == t.comp.to_json()


def test_integer_local_assigned_once_from_an_index_array_is_its_value() -> None:
    comp = spf.from_c(
        """
        void scatter(int n, const int *col, const double *x, double *y) {
          int j;
          for (int k = 0; k < n; k++) {
            j = col[k];
            y[j] += x[k];
          }
        }""",
        shapes={"x": ("n",), "y": ("M",)},
    )
    assert [s.source for s in comp.stmts] == ["$y$(col(k)) += $x$(k);"]
    assert "col" in comp.ufs


@pytest.mark.parametrize(
    "body",
    [
        "if (k > 2) j = col[k]; y[j] += x[k];",
        "y[j] += x[k]; j = col[k];",
    ],
)
def test_integer_local_read_where_its_assignment_does_not_reach_is_refused(body: str) -> None:
    src = f"""
    void f(int n, const int *col, const double *x, double *y) {{
      int j;
      for (int k = 0; k < n; k++) {{ {body} }}
    }}"""
    with pytest.raises(spf.ParseError, match=r"'j' is (used|read)"):
        spf.from_c(src, shapes={"x": ("n",), "y": ("n",)})


def test_downward_loop_keeps_its_name() -> None:
    comp = spf.from_c("void f(int n, double x[n]) { for (int i = n - 1; i >= 0; i--) x[i] = i; }")
    assert comp.stmts[0].loops == ("i",)
    assert comp.loop_structure() == "for i:\n  s0"


def test_unused_pointer_parameter_needs_no_shape() -> None:
    comp = spf.from_c(
        "void f(int n, double *unused, double x[n]) { for (int i = 0; i < n; i++) x[i] = 0; }"
    )
    assert "unused" not in comp.data_spaces


def test_nested_min_and_max_bounds() -> None:
    comp = spf.from_c(
        """
        void f(int n, double x[n]) {
          for (int i = max(0, min(n - 3, 2)); i < min(n, max(3, n - 1)); i++) x[i] = 1.0;
        }"""
    )
    for n, expected in ((8, list(range(2, 7))), (4, [1, 2]), (2, [0, 1])):
        x = np.zeros(n)
        comp.interpret(x=x, n=n)
        lo, hi = max(0, min(n - 3, 2)), min(n, max(3, n - 1))
        assert np.flatnonzero(x).tolist() == list(range(lo, hi)) == expected


def test_min_max_inside_sums_are_lifted() -> None:
    comp = spf.from_c(
        """
        void f(int n, double x[n]) {
          for (int i = 1 + max(0, n - 6); i <= min(n - 1, 5) - 1; i++) x[i] = 1.0;
          for (int i = n - 1 - min(n - 1, 2); i < n - max(1, n - 7); i++) x[i] += 2.0;
        }"""
    )
    for n in (3, 6, 9):
        x = np.zeros(n)
        comp.interpret(x=x, n=n)
        want = np.zeros(n)
        want[1 + max(0, n - 6) : min(n - 1, 5)] = 1.0
        want[n - 1 - min(n - 1, 2) : n - max(1, n - 7)] += 2.0
        assert x.tolist() == want.tolist()


def test_two_dimensional_index_array_gets_its_domain_from_the_declaration() -> None:
    comp = spf.from_c(
        """
        void ell(int n, int w, int col[n][w], double val[n][w], double *x, double *y) {
          for (int i = 0; i < n; i++)
            for (int j = 0; j < w; j++)
              y[i] += val[i][j] * x[col[i][j]];
        }""",
        shapes={"x": ("M",), "y": ("n",)},
    )
    assert comp.ufs["col"].arity == 2
    assert comp.ufs["col"].domain is not None
    col = np.array([[0, 1], [1, 2], [2, 0]], dtype=np.int32)
    val = np.arange(6.0).reshape(3, 2)
    x, y = np.array([1.0, 10.0, 100.0]), np.zeros(3)
    comp.compile()(n=3, w=2, M=3, col=col, val=val, x=x, y=y)
    assert y.tolist() == (val * x[col]).sum(1).tolist()


def test_polybench_style_macros_and_gcc_spellings() -> None:
    comp = spf.from_c(
        """
        #include <polybench.h>
        #define DATA_TYPE double
        #define _PB_N n
        #define POLYBENCH_1D(var, dim1, ddim1) var[ddim1]
        #define POLYBENCH_2D(var, dim1, dim2, ddim1, ddim2) var[ddim1][ddim2]
        #ifndef N
        # define N 40
        #endif
        static inline __attribute__((noinline))
        void kernel_mvt(int n, DATA_TYPE POLYBENCH_1D(x1, N, n),
                        DATA_TYPE POLYBENCH_1D(y_1, N, n),
                        DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
        {
          int i, j;
        #pragma scop
          for (i = 0; i < _PB_N; i++)
            for (j = 0; j < _PB_N; j++)
              x1[i] = x1[i] + A[i][j] * y_1[j];
        #pragma endscop
        }
        """
    )
    assert comp.name == "kernel_mvt"
    assert comp.data_spaces["A"].shape == ("n", "n")
    assert comp.stmts[0].source == "$x1$(i) = $x1$(i) + $A$(i, j) * $y_1$(j);"


def test_csr_with_row_bounds_in_locals() -> None:
    comp = spf.from_c(
        """
        void spmv(int n, const int *__restrict__ rowptr, const int *__restrict__ col,
                  const double *__restrict__ val, const double *x, double *y) {
          for (int i = 0; i < n; ++i) {
            const int start = rowptr[i], end = rowptr[i + 1];
            double acc = 0.0;
            for (int k = start; k < end; ++k) acc += val[k] * x[col[k]];
            y[i] = acc;
          }
        }""",
        shapes={"val": ("NNZ",), "x": ("M",), "y": ("n",)},
    )
    assert set(comp.ufs) == {"rowptr", "col"}
    y = np.zeros(2)
    comp.interpret(y=y, val=np.array([1.0, 2.0, 3.0]), x=np.array([10.0, 20.0]),
                   rowptr=np.array([0, 2, 3], dtype=np.int32),
                   col=np.array([0, 1, 1], dtype=np.int32), n=2, M=2, NNZ=3)  # fmt: skip
    assert y.tolist() == [50.0, 60.0]


def test_source_may_be_a_path(tmp_path: Path) -> None:
    path = tmp_path / "k.c"
    path.write_text("void f(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] = 1.0; }")
    assert spf.from_c(path).name == "f"
    with pytest.raises(spf.ParseError, match="cannot read"):
        spf.from_c(tmp_path / "missing.c")


def test_histogram_increment_through_an_index_array() -> None:
    comp = spf.from_c(
        """
        void hist(int n, const int *key, int *h) {
          for (int k = 0; k < n; k++) h[key[k]]++;
        }""",
        shapes={"h": ("B",)},
    )
    assert comp.stmts[0].source == "$h$(key(k)) += 1;"
    h = np.zeros(3, dtype=np.int32)
    comp.interpret(h=h, key=np.array([0, 2, 2, 1, 2], dtype=np.int32), n=5, B=3)
    assert h.tolist() == [1, 1, 3]


def test_not_equal_bound_is_ordered_where_the_start_is_proved_or_assumed() -> None:
    """``i != n`` with a step of 1 is ``i < n`` where ``i`` starts at or below ``n``: proved
    from the enclosing loops, or over parameters assumed and checked at each call (before,
    every ``!=`` was refused as a condition 'that stops the loop early')."""
    tri = spf.from_c(
        """void f(int n, double x[8][8]) {
          for (int i = 0; i < n; i++)
            for (int j = i; j != n; j++)
              x[i][j] = 1.0;
        }"""
    )
    assert tri.stmts[0].domain == spf.Set("{[i, j]: 0 <= i <= j < n}")
    assert not tri.assumptions
    comp = spf.from_c(
        "void f(int n, int m, double x[8]) { for (int i = m; i != n; i++) x[i] = 1.0; }"
    )
    assert [f.text for f in comp.assumptions] == ["(m) <= n"]
    comp.assume("m >= 0")
    comp.assume("n <= 8")
    x = np.zeros(8)
    comp.compile()(n=6, m=2, x=x)
    np.testing.assert_array_equal(x, [0, 0, 1, 1, 1, 1, 0, 0])
    with pytest.raises(spf.ArgumentError, match=r"assumption '\(m\) <= n' does not hold"):
        comp.compile()(n=2, m=6, x=x)


@pytest.mark.parametrize(
    ("loops", "words"),
    [
        ("for (int j = i + 1; j != i; j++)", r"'j != i' stops j only where it starts at or "
         r"below the bound .*; write j < i"),
        ("for (int j = 0; j != n; j += 2)", "a step of \\+1 or -1; write j < hi"),
        ("for (int j = 0; j != n; j += n)", "a step of \\+1 or -1; write j < hi"),
        ("for (int j = rowptr[i]; j != rowptr[i + 1]; j++)", "write j < rowptr\\[i \\+ 1\\]"),
    ],
)  # fmt: skip
def test_not_equal_bound_that_may_be_passed_is_refused_saying_to_write_less_than(
    loops: str, words: str
) -> None:
    src = f"""void f(int n, const int *rowptr, double x[8][8]) {{
      for (int i = 0; i < n; i++)
        {loops}
          x[i][j] = 1.0;
    }}"""
    with pytest.raises(spf.ParseError, match=words):
        spf.from_c(src, shapes={"rowptr": ("n + 1",)})


def test_halved_induction_counter_from_zero_indexes_with_c_division() -> None:
    """``x[k/2]`` with ``k`` a counter from 0 that only ``k++`` changes: C's truncating
    division is floor there, so it is accepted (before: 'dividend may be negative')."""
    comp = spf.from_c(
        """void f(double x[8], const double y[16]) {
          int k = 0;
          for (int i = 0; i < 16; i++) {
            x[k / 2] += y[i];
            k++;
          }
        }"""
    )
    x, y = np.zeros(8), np.arange(16.0)
    comp.compile()(x=x, y=y)
    np.testing.assert_array_equal(x, y.reshape(8, 2).sum(axis=1))
    with pytest.raises(spf.ParseError, match="may be negative"):
        spf.from_c(
            """void f(int n, double x[8], const double y[16]) {
              int k = -2;
              for (int i = 0; i < n; i++) { x[k / 2] += y[i]; k++; }
            }"""
        )


def test_do_while_zero_macro_idiom_is_its_block() -> None:
    """``do { ... } while (0)`` runs its block once (before: refused as a do-while loop); one
    that a ``break`` of its own leaves early is still refused."""
    comp = spf.from_c(
        """#define SWAP(a, b) do { double t_ = (a); (a) = (b); (b) = t_; } while (0)
        void f(int n, double x[n], double y[n]) {
          for (int i = 0; i < n - 3; i++)
            SWAP(x[i], y[i]);
        }"""
    )
    x, y = np.arange(8.0), -np.arange(8.0)
    comp.compile()(n=8, x=x, y=y)
    np.testing.assert_array_equal(x, [0, -1, -2, -3, -4, 5, 6, 7])
    np.testing.assert_array_equal(y, [0, 1, 2, 3, 4, -5, -6, -7])
    with pytest.raises(spf.ParseError, match="do-while loops cannot be represented"):
        spf.from_c(
            """void f(int n, double x[8]) {
              for (int i = 0; i < n; i++)
                do { x[i] = 1.0; if (x[i] > 0) break; } while (0);
            }"""
        )


def test_counter_after_a_not_equal_loop_has_its_closed_form() -> None:
    """After ``for (i = 0; i != n; i++) k++;`` the counter is ``n``: the trip count reads
    ``i != n`` as ``i < n`` and uses the start the import assumed (``0 <= n``)."""
    comp = spf.from_c(
        """void f(int n, const double x[8], double y[9]) {
          int k = 0;
          for (int i = 0; i != n; i++) { y[k] = x[i]; k++; }
          y[k] = -1.0;
        }"""
    )
    assert [s.source for s in comp.stmts] == ["$y$(i) = $x$(i);", "$y$(n) = -1.0;"]
    comp.assume("n <= 8")
    x, y = np.arange(8.0), np.zeros(9)
    comp.compile()(n=5, x=x, y=y)
    np.testing.assert_array_equal(y, [0, 1, 2, 3, 4, -1, 0, 0, 0])


def test_function_like_macros_compute_what_gcc_computes() -> None:
    # found by the C-import audit (audit28): arguments were substituted in parentheses, so
    # SCALE(x > 0 ? x : 0) of 'a * 2' doubled the whole ?: and IDX(i, j + 1) of 'i * 4 + j'
    # read another element than gcc's build of the same C; ADD(ADD(..)) and i-OFF were refused
    comp = spf.from_c(
        """
        #define SCALE(a) a * 2
        #define IDX(i, j) i * 4 + j
        #define ADD(a, b) ((a) + (b))
        #define OFF -1
        void f(double x[12], double y[12], double z[12]) {
          for (int i = 0; i < 12; i++) y[i] = SCALE(x[i] > 0 ? x[i] : 0);
          for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) z[IDX(i, j + 1)] = ADD(ADD(x[IDX(i + 1, j)], 1.0), 2.0);
          for (int i = 1; i < 12; i++) z[i-OFF-2] += 1.0;
        }
        """
    )
    x = np.array([1.5, -2.0, 3.0, -0.5, 8.0, 1.0, -3.0, 4.0, 5.0, -6.0, 7.0, 8.0])
    y, z = np.zeros(12), np.zeros(12)
    comp.compile()(x=x, y=y, z=z)
    want_y = np.where(x > 0, x, 0.0)  # C: x > 0 ? x : (0 * 2)
    want_z = np.zeros(12)
    for i in range(2):
        for j in range(3):
            want_z[i * 4 + j + 1] = x[i + 1 * 4 + j] + 3.0  # C: i + 1 * 4 + j
    want_z[:11] += 1.0
    assert y.tolist() == want_y.tolist()
    assert z.tolist() == want_z.tolist()

"""What ``spf.from_c`` cannot represent raises ``ParseError`` naming the line and column, with a
caret under the construct and a hint; never a pycparser exception or a crash."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

import spf

if TYPE_CHECKING:
    import random

HEAD = "void f(int n, double x[n], double y[n], int idx[n], int *rp) {\n  int i, j;\n"


@pytest.mark.parametrize(
    ("body", "words", "line"),
    [
        ("  while (n > 0) { x[0] = 1.0; }\n", "while loops", 3),
        ("  do { x[0] = 1.0; } while (1);\n", "do-while", 3),
        ("  for (i = 0; i < n; i++) { if (x[i] > 0) break; }\n", "break", 3),
        ("  for (i = 0; i < n; i++) { continue; }\n", "continue", 3),
        ("  for (i = 0; i < n; i++) { goto out; }\n out: ;\n", "goto", 3),
        ("  for (i = 0; i < n; i++) { return; }\n", "return inside the loops", 3),
        ("  if (x[0] <= 0) return;\n  for (i = 0; i < n; i++) y[i] = 1.0;\n", "an early return", 3),
        ("  if (n > 0) { y[0] = 1.0; return; }\n", "an early return", 3),
        ("  for (i = 0; i < n; i++) y[i] = *(x + i);\n", "pointer", 3),
        ("  for (i = 0; i < n; i++) { y[idx[i]] = 1.0; idx[i] = 0; }\n", "index array", 3),
        ("  for (i = 0; i < n; i++) y[i] = rand();\n", "'rand'", 3),
        ('  for (i = 0; i < n; i++) printf("%d", i);\n', "call statement", 3),
        ("  for (i = 0; i < x[0]; i++) y[i] = 0.0;\n", "not affine", 3),
        ("  for (i = 0; i * i < n; i++) y[i] = 0.0;\n", "compare expressions affine in i", 3),
        (
            "  for (i = rp[0]; i < n && idx[i] < 3; i++) y[i] = 0.0;\n",
            "compare expressions affine in i",
            3,
        ),
        ("  for (i = 0; i < n; i++) { i = 2; }\n", "assigned outside its for header", 3),
        ("  for (i = 0; i < n; i++) y[i] = 1.0;\n  y[0] = i;\n", "outside its loop", 4),
        ("  n = 3;\n", "parameter 'n' is assigned", 3),
        ("  for (i = 0; i < n; i++) for (i = 0; i < n; i++) y[i] = 0;\n", "enclosing loop", 3),
        ("  for (i = 0; i >= 0; i++) y[i] = 0.0;\n", "bounds it from below", 3),
        ("  for (i = 0; i < n; i *= 2) y[i] = 0.0;\n", "increment", 3),
        ("  for (i = 0; i < n; i++) y[i] = x[i][0];\n", "subscript", 3),
        ("  for (i = 0; i < n; i++) y[i] = z;\n", "'z' is not declared", 3),
        ("  y[0] = x[0] +;\n", "syntax error", 3),
        ("  static double acc = 0.0;\n  acc += x[0];\n  y[0] = acc;\n", "static local 'acc'", 3),
    ],
)
def test_unsupported_constructs_raise_parse_error_with_position(
    body: str, words: str, line: int
) -> None:
    with pytest.raises(spf.ParseError) as info:
        spf.from_c(HEAD + body + "}\n", shapes={"rp": ("n",)})
    message = str(info.value)
    assert words in message, message
    assert re.search(rf"line {line}, column \d+", message), message
    assert "^" in message  # the caret under the construct


def test_column_points_at_the_construct() -> None:
    with pytest.raises(spf.ParseError) as info:
        spf.from_c(
            "void f(int n) {\n  int i;\n  for (i = 0; i < n; i++) {\n    while (1) ;\n  }\n}"
        )
    assert "line 4, column 5" in str(info.value)


def test_pointer_without_shape_asks_for_shapes() -> None:
    with pytest.raises(spf.ParseError, match=r"shapes=\{'x'"):
        spf.from_c("void f(int n, double *x) { for (int i = 0; i < n; i++) x[i] = 0.0; }")


def test_unknown_function_lists_the_functions() -> None:
    with pytest.raises(spf.ParseError, match="its functions: a, b"):
        spf.from_c("void a(void) {}\nvoid b(void) {}", function="c")
    with pytest.raises(spf.ParseError, match="pass function="):
        spf.from_c("void a(void) {}\nvoid b(void) {}")


def test_unsupported_directive_and_bad_macro_calls() -> None:
    with pytest.raises(spf.ParseError, match=r"^from_c: line 1, column 1: #if sizeof\(int\)"):
        spf.from_c("#if sizeof(int) > 3\n#endif\nvoid f(void) {}")  # located as every other
    with pytest.raises(spf.ParseError, match=r"^from_c: line 2, column 30: macro M takes 2 arg"):
        spf.from_c("#define M(a, b) a\nvoid f(double x[2]) { x[0] = M(1); }")
    with pytest.raises(spf.ParseError, match="'A' is not declared"):  # C stops the recursion
        spf.from_c("#define A B\n#define B (A + C)\n#define C A\nvoid f(double x[2]) { x[0] = C; }")


def test_bad_ufs_and_shapes_names_are_reported() -> None:
    src = "void f(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] = 0.0; }"
    with pytest.raises(spf.UndeclaredError, match="'nope'"):
        spf.from_c(src, ufs={"nope": {}})
    with pytest.raises(spf.UndeclaredError, match="'nope'"):
        spf.from_c(src, shapes={"nope": ("n",)})
    with pytest.raises(spf.SpfError, match="list of names"):
        spf.from_c(src, params="n")


def test_not_a_string_is_an_argument_error() -> None:
    with pytest.raises(spf.ArgumentError, match="source must be C text"):
        spf.from_c(b"void f(void) {}")  # type: ignore[arg-type]


_C_WORDS = st.sampled_from(
    ["for", "(", ")", "{", "}", ";", "i", "j", "n", "=", "<", "<=", "++", "--", "+=", "x", "[",
     "]", "0", "1", "2.5", "int", "double", "if", "else", "while", "*", "+", "-", "/", "%", "#define",
     "#pragma", "N", "\n", ",", "?", ":", "max", "min", "sqrt", "(double)", "&&", "||", "!", "return"]
)  # fmt: skip


def _outcome(text: str) -> None:
    try:
        comp = spf.from_c(text)
    except spf.ParseError:
        return
    assert isinstance(comp, spf.Computation)


@given(st.text(max_size=200))
def test_fuzz_random_text_is_a_computation_or_a_parse_error(text: str) -> None:
    _outcome(text)


@given(st.lists(_C_WORDS, max_size=40))
def test_fuzz_near_c_is_a_computation_or_a_parse_error(words: list[str]) -> None:
    body = " ".join(words)
    _outcome(f"void f(int n, double x[n]) {{ int i, j; {body} }}")
    _outcome(f"void f(int n, double x[n]) {{ int i, j; for (i = 0; i < n; i++) {{ {body} }} }}")


def _fuzz_expr(r: random.Random, depth: int = 0) -> str:
    # below depth 3 only names and subscripts, below depth 6 only names: subscripts alone
    # (one, two, one child or none) are a critical branching process, whose trees have no
    # finite mean size (programs of thousands of nodes, 0.3 s each)
    pick = r.randint(0, 11 if depth < 3 else 3 if depth < 6 else 0)
    sub = functools.partial(_fuzz_expr, r, depth + 1)
    forms = [
        lambda: r.choice(["i", "j", "n", "0", "1", "-1", "2.5", "alpha", "t", "q"]),
        lambda: f"x[{sub()}]",
        lambda: f"A[{sub()}][{sub()}]",
        lambda: f"idx[{sub()}]",
        lambda: f"({sub()} {r.choice(['+', '-', '*', '/', '%', '<', '==', '&&', '||'])} {sub()})",
        lambda: f"{r.choice(['sqrt', 'min', 'max', 'fabs', 'foo', 'MIN'])}({sub()}, {sub()})",
        lambda: f"(double){sub()}",
        lambda: f"{sub()} ? {sub()} : {sub()}",
        lambda: f"-{sub()}",
        lambda: f"*{sub()}",
        lambda: f"{sub()}++",
        lambda: f"&{sub()}",
    ]
    return forms[pick]()


def _fuzz_stmt(r: random.Random, depth: int = 0) -> str:
    pick = r.randint(0, 7 if depth < 3 else 2)
    expr = functools.partial(_fuzz_expr, r)
    if pick <= 2:
        target = r.choice([f"x[{expr(2)}]", f"A[{expr(2)}][{expr(2)}]", "t", "i", "n",
                           f"idx[{expr(2)}]", "alpha", "w[i]", "q"])  # fmt: skip
        return f"{target} {r.choice(['=', '+=', '-=', '*=', '/=', '%=', '<<='])} {expr()};"
    if pick == 3:
        v = r.choice("ijk")
        cond = f"{v} {r.choice(['<', '<=', '>', '>=', '!='])} {expr(2)}"
        step = r.choice(
            [f"{v}++", f"{v}--", f"{v} += 2", f"{v} -= 3", f"{v} = {v} + 1", f"{v} *= 2"]
        )
        body = " ".join(_fuzz_stmt(r, depth + 1) for _ in range(r.randint(0, 3)))
        return f"for ({r.choice(['', 'int '])}{v} = {expr(2)}; {cond}; {step}) {{ {body} }}"
    if pick == 4:
        other = f" else {_fuzz_stmt(r, depth + 1)}" if r.random() < 0.5 else ""
        return f"if ({expr()}) {{ {_fuzz_stmt(r, depth + 1)} }}{other}"
    if pick == 5:
        return r.choice(["break;", "continue;", "return;", "while (1) {}", ";", "{}",
                         "double t2 = 1.0;", "int q2 = idx[0];", "x[0] = x[1] = 2.0;"])  # fmt: skip
    if pick == 6:
        return f"{{ {_fuzz_stmt(r, depth + 1)} {_fuzz_stmt(r, depth + 1)} }}"
    return f"int z{depth} = {expr()};"


@given(st.randoms(use_true_random=False))
def test_fuzz_grammar_programs_are_a_computation_or_a_parse_error(r: random.Random) -> None:
    body = " ".join(_fuzz_stmt(r) for _ in range(r.randint(1, 4)))
    _outcome(
        "#define MIN(a, b) ((a) < (b) ? (a) : (b))\n"
        "void f(int n, double alpha, double x[n], double A[n][n], int idx[n]) {\n"
        f"  int i, j, k, q; double t, s; double w[n];\n  {body}\n}}"
    )


@pytest.mark.parametrize(
    ("switch", "words", "column"),
    [
        (
            "switch (n) { case 1: if (n > 2) break; y[0] = 1; break; }",
            "break under a condition",
            35,
        ),
        ("switch (n) { case 1: { case 2: y[0] = 1; } }", "case label inside a block", 26),
        ("switch (n) { y[0] = 2; case 1: y[0] = 1; }", "before the first case label", 16),
        ("switch (n) { case 1: y[0] = 1; break; case 1: y[0] = 2; }", "case 1 appears twice", 41),
        ("switch (n) { case n: y[0] = 1; }", "not an integer constant", 21),
    ],
)
def test_switch_without_an_if_form_is_refused_at_its_position(
    switch: str, words: str, column: int
) -> None:
    with pytest.raises(spf.ParseError) as info:
        spf.from_c(HEAD + f"  {switch}\n}}\n", shapes={"rp": ("n",)})
    assert words in str(info.value)
    assert f"line 3, column {column}:" in str(info.value)


@pytest.mark.parametrize(
    ("body", "words", "column"),
    [
        ("double *p = x; p++;", "pointer 'p' moves", 18),
        ("double *p; p = x; p = y;", "pointer 'p' moves", 14),
        ("double *p = &x[(int)y[0]];", "points at a place that is not affine ('y' is a data", 23),
        ("double *p = &x[idx[0] * idx[1]];", "not affine (a product", 18),
        ("double *p = (double *)rp;", "pointer 'p' to double points into 'rp' of element type", 15),
        ("double *p = x + (y - x);", "'y' is a variable", 20),
        ("double *p = &x[0]; y[0] = p[1][2];", "'x' has 1 dimension(s) but is used with 2", 29),
    ],
)
def test_pointers_that_move_or_point_nowhere_affine_are_refused(
    body: str, words: str, column: int
) -> None:
    with pytest.raises(spf.ParseError) as info:
        spf.from_c(HEAD + f"  {body}\n}}\n", shapes={"rp": ("n",)})
    assert words in str(info.value), str(info.value)
    assert f"line 3, column {column}:" in str(info.value), str(info.value)


def test_a_function_that_returns_a_value_is_refused_as_such() -> None:
    """The final ``return s;`` of the imported function was called "an early return"."""
    text = "double dot(int n, double x[n]) {\n  double s = 0.0;\n" \
           "  for (int i = 0; i < n; i++) s += x[i];\n  return s;\n}\n"  # fmt: skip
    with pytest.raises(spf.ParseError, match=r"line 4, column 3: the function returns a value"):
        spf.from_c(text)


@pytest.mark.parametrize(
    "src",
    [
        "void f(n, x) int n; double *x; { for (int i = 0; i < n; i++) x[i] = 0.0; }",
        "static void g(x) double *x; { x[0] = 1.0; }\nvoid f(double x[4]) { g(x); }",
    ],
)
def test_old_style_definitions_are_refused_by_name(src: str) -> None:
    # found by the C-import audit (audit28): a K&R definition was a raw AttributeError
    with pytest.raises(spf.errors.ParseError, match="old-style \\(K&R\\) definition"):
        spf.from_c(src, shapes={"x": ("n",)})

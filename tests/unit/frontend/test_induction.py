"""Induction variables (API §15): an integer local updated only by ``k += c`` / ``k++`` /
``k = k + c`` (and plain affine assignments) and read in a subscript or bound is replaced by
its closed form; where none exists, or it is not affine where it is read, ``ParseError``
names the variable and says why (line and column of the read or update)."""

from __future__ import annotations

import numpy as np
import pytest

import spf

HEAD = (
    "#define W 4\n"
    "void f(int n, int m, const int rowptr[n + 1], double A[n][m], double *y, double v[n]) {\n"
)
SHAPES = {"y": ("NY",)}


def imported(body: str) -> spf.Computation:
    return spf.from_c(HEAD + body + "\n}", shapes=SHAPES)


def test_a_counter_over_a_rectangular_nest_of_constant_width_is_affine() -> None:
    comp = imported(
        "int k = 1; for (int i = 0; i < n; i++) for (int j = 0; j < W; j++) { y[k] = v[i]; k++; }"
    )
    (s,) = comp.stmts
    assert s.source == "$y$((1 + 4*i + j)) = $v$(i);"
    y = np.zeros(10)
    comp.interpret(y=y, v=np.array([1.0, 2.0]), A=np.zeros((2, 1)), rowptr=np.zeros(3, np.int32),
                   n=2, m=1, NY=10)  # fmt: skip
    assert y.tolist() == [0, 1, 1, 1, 1, 2, 2, 2, 2, 0]


def test_a_counter_reset_in_each_row_may_count_a_symbolic_width() -> None:
    comp = imported(
        "for (int i = 0; i < n; i++) { int c = 0; "
        "for (int j = 0; j < m; j++) { A[i][c] = v[i]; c += 1; } }"
    )
    assert comp.stmts[0].source == "$A$(i, j) = $v$(i);"


def test_values_may_read_a_closed_form_that_is_not_affine() -> None:
    comp = imported(
        "int k = 0; y[k] = 1.0; "
        "for (int i = 0; i < n; i++) { for (int j = 0; j < m; j++) k++; v[i] = k; }"
    )
    # the closed form converted to k's type, as C's assignment converts it
    assert [s.source for s in comp.stmts] == ["$y$(0) = 1.0;", "$v$(i) = ((int32_t)(i*m + m));"]


@pytest.mark.parametrize(
    ("body", "words", "column"),
    [
        (
            "int k = 0; for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) y[k++] = 1.0;",
            "'k': its closed form j + i*m is not affine in the loop counters",
            70,
        ),
        (
            "int k = 0; for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) y[k++] = 1.0;",
            "'k': what one iteration of loop 'i' adds (i) depends on 'i' (a triangular nest)",
            70,
        ),
        (
            "int k = 0; for (int i = 0; i < n; i++) if (v[i] > 0.0) { y[k] = v[i]; k++; }",
            "'k' is updated under a condition",
            71,
        ),
        (
            "int k = 0; for (int i = 0; i < n; i++) "
            "for (int p = rowptr[i]; p < rowptr[i + 1]; p++) k++; y[k] = 1.0;",
            "'k': has no closed form after loop 'p', which may run fewer than zero times",
            12,
        ),
        ("int k = 2; for (int i = 0; i < k; i++) { y[i] = 1.0; k++; }", "bounds loop 'i'", 12),
        ("int k; y[k] = 1.0; k++;", "'k': is read before it is given a value", 10),
        ("int k = 0; for (int i = 0; i < n; i++) { y[k] = 1.0; k += m; }", "i*m is not affine", 44),
        ("int k = 0; for (int i = 0; i < n; i++) { y[k] = 1.0; k += i; }", "not a constant", 54),
        ("int k = 0; for (int i = 0; i < n; i++) { y[k] = 1.0; k *= 2; k++; }", "'*='", 54),
        (
            "int k = 0; for (int i = 0; i < n; i++) { if (i > 2) k = 0; y[k] = 1.0; k++; }",
            "'k': is assigned under a condition",
            62,
        ),
        ("int k = 0; y[k++] = y[k];", "incremented and used again in the same statement", 14),
    ],
)
def test_induction_variables_without_an_affine_closed_form_are_named(
    body: str, words: str, column: int
) -> None:
    with pytest.raises(spf.ParseError) as info:
        imported(body)
    assert words in str(info.value), str(info.value)
    assert f"line 3, column {column}:" in str(info.value), str(info.value)


def test_a_refused_quotient_of_a_counter_names_the_counter() -> None:
    """The message showed the closed form's internal placeholder (``dividend @iv0@``)."""
    with pytest.raises(spf.ParseError, match=r"a dividend k \+ 2 that may be negative") as info:
        imported("int k = -3; for (int i = 0; i < n; i++) { y[(k + 2) / 2] = v[i]; k++; }")
    assert "@" not in str(info.value)

"""``spf.from_c`` marks the locals private to a loop (API.md section 15, spf.frontend.private):
declared in a loop body, or function-level and written before read in each iteration."""

from __future__ import annotations

import pytest

import spf
from spf.frontend import translate

HEAD = "#define N 8\nvoid f(double x[N], double y[N], double A[N][N]) {\n"


def private_of(body: str, name: str = "t") -> str | None:
    comp = spf.from_c(HEAD + body + "\n}")
    return comp.data_spaces[name].private


@pytest.mark.parametrize(
    ("body", "loop"),
    [
        # declared in the loop body: a new variable per iteration
        ("for (int i = 0; i < N; i++) { double t = x[i]; y[i] = t * t; }", "i"),
        ("for (int i = 0; i < N; i++) { double t; t = x[i]; y[i] = t; }", "i"),
        # declared in the inner loop: private to it
        ("for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) "
         "{ double t = A[i][j]; y[i] += t; }", "j"),
        # function level, written first in every iteration
        ("double t; for (int i = 0; i < N; i++) { t = x[i]; y[i] = t + 1; }", "i"),
        ("double t; for (int i = 0; i < N; i++) { t = x[i]; "
         "for (int j = 0; j < N; j++) t += A[i][j]; y[i] = t; }", "i"),
        ("double t; for (int i = 0; i < N; i++) { if (i < 4) t = 1; else t = 2; y[i] = t; }", "i"),
        # written first in each iteration of the inner loop: private to the inner one
        ("double t; for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) "
         "{ t = A[i][j]; y[j] += t; }", "j"),
    ],
)  # fmt: skip
def test_private_locals(body: str, loop: str) -> None:
    assert private_of(body) == loop


@pytest.mark.parametrize(
    "body",
    [
        # reads the previous iteration's value
        "double t; for (int i = 0; i < N; i++) { t += x[i]; y[i] = t; }",
        "double t; for (int i = 0; i < N; i++) { y[i] = t; t = x[i]; }",
        # a value given outside the loop
        "double t = 0; for (int i = 0; i < N; i++) { t = x[i]; y[i] = t; }",
        # read after the loop
        "double t; for (int i = 0; i < N; i++) { t = x[i]; y[i] = t; } y[0] = t;",
        # written only on one branch
        "double t; for (int i = 0; i < N; i++) { if (i < 4) t = 1; y[i] = t; }",
        # written only inside an inner loop that may not run
        "double t; for (int i = 0; i < N; i++) { for (int j = 0; j < i; j++) t = A[i][j]; "
        "y[i] = t; }",
        # used in two loops
        "double t; for (int i = 0; i < N; i++) { t = x[i]; y[i] = t; } "
        "for (int j = 0; j < N; j++) { t = y[j]; x[j] = t; }",
    ],
)
def test_shared_locals(body: str) -> None:
    assert private_of(body) is None


def test_private_local_in_the_printed_python() -> None:
    text = HEAD + "for (int i = 0; i < N; i++) { double t = x[i]; y[i] = t * t; }\n}"
    assert "comp.add_local('t', 'double', (), private='i')" in translate(text).as_python()

"""The preprocessor in front of pycparser: directives, macro expansion, min/max macros and
the map from output positions back to the user's text."""

from __future__ import annotations

import pytest

from spf.errors import ParseError
from spf.frontend.preprocess import preprocess


def test_directives_are_dropped_and_lines_kept() -> None:
    src = "#include <math.h>\n#pragma scop\n#define N 4\nint a[N];\n"
    out = preprocess(src)
    assert out.text.splitlines() == ["", "", "", "int a[4];"]


def test_keep_leaves_a_size_symbolic() -> None:
    assert "a[N]" in preprocess("#define N 4\nint a[N];", frozenset({"N"})).text


@pytest.mark.parametrize(
    ("macro", "kind"),
    [
        ("#define MIN(a, b) ((a) < (b) ? (a) : (b))", "min"),
        ("#define MAX(a, b) (((a) > (b)) ? (a) : (b))", "max"),
        ("#define max_score(s1, s2) ((s1 >= s2) ? s1 : s2)", "max"),
        ("#define lo(x, y) ((y) <= (x) ? (y) : (x))", "min"),
    ],
)
def test_min_max_macros_become_calls(macro: str, kind: str) -> None:
    name = macro.split()[1].split("(")[0]
    out = preprocess(f"{macro}\nint v = {name}(i + 1, n);").text
    assert f"{kind}(i + 1, n)" in out


def test_function_like_macros_substitute_their_arguments_unparenthesized_as_c_does() -> None:
    # cpp pastes the argument's tokens: SQ(a + 1) of 'x * x' is a + 1 * a + 1 (was (a + 1) *
    # (a + 1), a different value than gcc's)
    out = preprocess("#define SQ(x) x * x\nint v = SQ(a + 1);").text
    assert " ".join(out.split()) == "int v = a + 1 * a + 1;"


def test_min_max_macros_with_a_loosely_binding_argument_expand_as_written() -> None:
    # MAX(c ? p : q, b) of '((a) > (b) ? (a) : (b))' is not max(c ? p : q, b) when the body
    # leaves a parameter bare: such arguments expand the body as written
    out = preprocess("#define MX(a, b) (a > b ? a : b)\nint v = MX(c ? p : q, r);").text
    assert " ".join(out.split()) == "int v = (c ? p : q > r ? c ? p : q : r);"


def test_arguments_expand_before_substitution_and_expansions_keep_tokens_apart() -> None:
    out = preprocess("#define ADD(a, b) ((a) + (b))\nint v = ADD(ADD(x, 1), 2);").text
    assert "ADD" not in out
    assert "".join(out.split()) == "intv=((((x)+(1)))+(2));"
    out = preprocess("#define OFF -1\nint v = i-OFF-2;").text
    assert "i- -1-2" in out  # C reads i - (-1) - 2, never i-- 1


def test_continuations_comments_and_conditionals() -> None:
    src = (
        "#define LONG 1 + \\\n  2\n"
        "/* a\n comment */ int v = LONG; // tail\n"
        "#ifdef LONG\nint yes;\n#else\nint no;\n#endif\n"
        "#if 0\nint never;\n#endif\n"
    )
    out = preprocess(src).text
    assert "int v = 1 + 2;" in " ".join(out.split())
    assert "yes" in out
    assert "no;" not in out
    assert "never" not in out
    assert out.count("\n") == src.count("\n")


def test_offsets_map_back_to_the_source() -> None:
    src = "#define N 100\nint  a[N]; int b;"
    out = preprocess(src)
    line2 = out.text.splitlines()[1]
    col_b = line2.index("b;") + 1
    assert src[out.offset(2, col_b)] == "b"
    col_n = line2.index("100") + 1
    assert src[out.offset(2, col_n)] == "N"  # an expansion points at its macro's name


@pytest.mark.parametrize(
    ("src", "words"),
    [
        ("#error stop\n", "unsupported preprocessor directive '#error'"),
        ("#if N > 2\n#endif\n", "#if supports only"),
        ("#endif\n", "#endif without #if"),
        ("#ifdef X\n", "without #endif"),
        ("#define\n", "#define needs a macro name"),
        ("#define F(a, 1) a\n", "macro parameters must be names"),
        ("#define F(a) a\nint v = F(1;\n", "unclosed"),
    ],
)
def test_bad_directives_are_parse_errors(src: str, words: str) -> None:
    with pytest.raises(ParseError, match=words.replace("(", r"\(").replace(")", r"\)")):
        preprocess(src)

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
        ("#if sizeof(int) == 4\n#endif\n", "#if takes an integer constant expression"),
        ("#if 1u\n#endif\n", "1u is unsigned"),
        ("#if 1 / 0\n#endif\n", "division by zero"),
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


@pytest.mark.parametrize(
    ("source", "want"),
    [
        ('#define LOG(...)\nLOG("x, y", i); a;', "; a;"),
        ("#define CALL(f, ...) f(__VA_ARGS__)\nCALL(g, 1, 2); CALL(h);", "g(1, 2); h();"),
        ('#define E(fmt, ...) p(fmt, ## __VA_ARGS__)\nE("a"); E("b", 3);', 'p("a"); p("b",3);'),
        ("#define G(fmt, args...) p(fmt, args)\nG(1, 2, 3);", "p(1, 2, 3);"),
        ("#define X(k) x##k\nX(1)[i] = X(_b);", "x1[i] = x_b;"),
        (
            "#define N 4\n#define CAT(a, b) a ## b\n#define XCAT(a, b) CAT(a, b)\n"
            "CAT(N, 2); XCAT(N, 2);",
            "N2; 42;",
        ),
        ("#define AB a ## b\nAB;", "ab;"),
        ('#define S(x) #x\nS(a  +  "q"); S(N);', '"a + \\"q\\""; "N";'),
        ('#define N 3\n#define F(x) "N" x\nF(N);', '"N" 3;'),
    ],
)
def test_variadic_macros_pasting_and_stringizing_expand_as_cpp_does(source: str, want: str) -> None:
    """Before: '#define LOG(...)' was 'macro parameters must be names' and 'x##k' a C
    syntax error at the call."""
    assert preprocess(source).text.split("\n")[-1] == want


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("#define B(x) #y\n", "'#' must be followed by a parameter of the macro"),
        ("#define B(x) ## x\n", "'##' cannot be at either end of a macro body"),
        ("#define B(x, ..., y) x\n", r"macro parameters must be names \(or a final '...'\)"),
        ("#define V(a, b, ...) a\nV(1);", r"macro V takes at least 2 argument\(s\), got 1"),
    ],
)
def test_malformed_variadic_or_pasting_macros_are_named(source: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        preprocess(source)


@pytest.mark.parametrize(
    ("cond", "kept"),
    [
        ("N > 4 && defined(N)", True),
        ("defined N && !defined(M)", True),
        ("M + 1 == 1", True),  # a name that is no macro is 0
        ("-7 / 2 == -3 && -7 % 2 == -1", True),  # C truncates toward zero
        ("(1 ? 2 : 3) == 2 && (0x10 >> 2) == 4 && ~0 == -1 && 010 == 8", True),
        ("0 && 1 / 0", False),  # an operand && skips is not evaluated
        ("TWICE(N) == 16", True),
        ("N < 4 || N > 8", False),
    ],
)
def test_if_takes_integer_constant_expressions(cond: str, kept: bool) -> None:
    # '#if' took a bare integer only: '#if defined(X)' and '#if N > 4' were refused
    src = f"#define N 8\n#define TWICE(x) 2 * x\n#if {cond}\nint yes;\n#endif\n"
    assert ("int yes;" in preprocess(src).text) == kept


def test_if_on_a_size_params_keeps_symbolic_is_refused() -> None:
    with pytest.raises(ParseError, match="reads 'N', which params= keeps symbolic"):
        preprocess("#define N 8\n#if N > 4\nint yes;\n#endif\n", frozenset({"N"}))

"""Names that clash in the generated C: refused with a clear spf error before gcc runs
(a function-like macro of a data space or statement rewrote the function's own name, a
data space named like a statement's reduction macro, isl's own words as constants)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf import CodegenError, Computation, ParseError, Set, Stmt, VerifyError

if TYPE_CHECKING:
    from pathlib import Path


def _comp(name: str, data: str = "A", stmt: str | None = None) -> Computation:
    comp = Computation(name)
    comp.add_data_space(data, "double", shape=("N",))
    comp.add_stmt(Stmt(f"${data}$(0) += 1.0 * i;", "{[i]: 0 <= i < N}", name=stmt))
    return comp


@pytest.mark.parametrize(
    ("comp", "function", "kind"),
    [
        (_comp("k", data="k"), None, "data space"),
        (_comp("s0"), None, "statement"),
        (_comp("s0_target"), None, "statement"),
        (_comp("c"), "A", "data space"),
    ],
)
def test_a_function_named_like_a_macro_is_refused(
    comp: Computation, function: str | None, kind: str
) -> None:
    name = function or comp.name
    with pytest.raises(CodegenError, match=rf"function name {name} is also the name of a {kind}"):
        comp.codegen(name=function)


def test_a_function_named_otherwise_than_its_computation_may_be() -> None:
    assert "void B(" in _comp("A").codegen(name="B")


@pytest.mark.parametrize("data", ["s0_target", "s0_value"])
def test_a_data_space_named_like_a_statement_macro_is_refused(data: str) -> None:
    with pytest.raises(CodegenError, match=rf"data space {data} has the name of a macro"):
        _comp("c", data=data).codegen()


@pytest.mark.parametrize("word", ["floord", "ceild", "True", "FALSE", "Max", "NaN"])
def test_isl_words_are_no_symbolic_constants(word: str) -> None:
    """Words of isl's notation, in any case: isl reads ``True`` as ``true`` (a constant so
    named was an isl syntax error, reported as an spf bug at codegen)."""
    with pytest.raises(ParseError, match=f"'{word}' is a reserved word"):
        Set(f"{{[i]: 0 <= i < {word}}}")


@pytest.mark.parametrize(
    "name",
    [
        *("HUGE_VAL", "M_PI", "INT64_MAX", "UINT8_C", "FP_NAN", "math_errhandling", "SIZE_MAX"),
        *("INT_MAX", "LLONG_MIN", "CHAR_BIT", "EOF", "stderr"),  # limits.h, stdio.h (MPI, CUDA)
    ],
)
def test_macros_of_the_included_headers_are_no_names(name: str) -> None:
    """A symbolic constant named ``HUGE_VAL`` (a macro of math.h) made the parameter
    ``int64_t HUGE_VAL`` a function declaration and the loop ``i < HUGE_VAL`` unbounded: the
    C and HLS kernels segfaulted; ``M_PI`` (g++'s cmath) or ``INT64_MAX`` were g++ errors."""
    comp = Computation("k")
    with pytest.raises(VerifyError, match=f"symbolic constant '{name}' is a macro of the"):
        comp.add_data_space("A", "double", shape=(name,))
    with pytest.raises(VerifyError, match=f"data space '{name}' is a macro of the"):
        comp.add_data_space(name, "double", shape=("N",))


def test_a_computation_named_like_a_header_macro_gets_a_prefixed_function() -> None:
    assert "void spf_HUGE_VAL(" in _comp("HUGE_VAL").codegen("hls")


@pytest.mark.parametrize("name", ["div", "erf", "y0", "rand", "select", "tgammaf", "strtod"])
@pytest.mark.parametrize("target", ["c", "hls"])
def test_a_computation_named_like_a_header_function_gets_a_prefixed_function(
    name: str, target: str, tmp_path: Path
) -> None:
    """``void div(...)`` conflicts with stdlib.h's div (``erf``, ``y0``: math.h's, with g++'s
    GNU extensions): gcc and g++ failed; the function is named ``spf_<name>`` as for ``main``
    or ``trunc``."""
    comp = _comp(name)
    kernel = comp.compile(target=target, cache_dir=str(tmp_path))
    assert kernel.name == f"spf_{name}"
    a = np.zeros(3)
    kernel(A=a)
    assert a[0] == 3.0  # 0 + 1 + 2


@pytest.mark.parametrize("name", ["fprintf", "printf", "FILE"])
def test_stdio_names_the_runtimes_call_are_no_names(name: str) -> None:
    """The MPI runtime calls ``fprintf(stderr, ...)`` and the CUDA host code ``snprintf``: a
    data space of that name would define a macro rewriting the call."""
    with pytest.raises(VerifyError, match=f"data space '{name}' is a name from the C headers"):
        Computation("k").add_data_space(name, "double", shape=("N",))

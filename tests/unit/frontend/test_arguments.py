"""``from_c``'s keyword arguments of the wrong type are an ``ArgumentError`` naming the
argument and the expected form, never a bare ``AttributeError``/``TypeError``; fuzzed lightly
with hypothesis."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spf

SRC = """
void spmv(int n, const int *rowptr, const int *col, const double *val, double *x, double *y) {
  for (int i = 0; i < n; i++)
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
      y[i] += val[k] * x[col[k]];
}"""
SHAPES = {"val": ("NNZ",), "x": ("n",), "y": ("n",)}


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"ufs": ["rowptr"]}, "ufs= must be a dict"),
        ({"ufs": {"rowptr": 3}}, r"ufs\['rowptr'\] must be an spf.UF"),
        ({"ufs": {"rowptr": {"monotone": "increasing"}}}, "unknown field"),
        ({"ufs": {1: {}}}, "keys are index-array names"),
        ({"shapes": ["x"]}, "shapes= must be a dict"),
        ({"shapes": {**SHAPES, "x": 2.5}}, r"shapes\['x'\] must be extents"),
        ({"shapes": {**SHAPES, "x": (None,)}}, r"shapes\['x'\] must be extents"),
        ({"params": "n"}, "params= must be a list of names"),
        ({"params": ["n m"]}, "'n m' is not a C name"),
        ({"params": 3}, "params= must be a list of names"),
        ({"function": 3}, "function= is the name of a C function"),
    ],
)
def test_wrong_argument_types_are_argument_errors(kwargs: dict[str, Any], words: str) -> None:
    opts = {"shapes": SHAPES, **kwargs}
    with pytest.raises(spf.ArgumentError, match=words):
        spf.from_c(SRC, **opts)


@pytest.mark.parametrize("source", [b"void f(void) {}", 3, None, ["void f(void) {}"]])
def test_source_of_the_wrong_type_is_an_argument_error(source: Any) -> None:
    with pytest.raises(spf.ArgumentError, match="source must be C text"):
        spf.from_c(source)


def test_bad_field_values_are_spf_errors() -> None:
    with pytest.raises(spf.SpfError, match="monotonic must be"):
        spf.from_c(SRC, shapes=SHAPES, ufs={"rowptr": {"monotonic": "up"}})
    with pytest.raises(spf.SpfError, match="extent"):
        spf.from_c(SRC, shapes={**SHAPES, "x": ("n", "n")})


SCALE = """
#define N 8
void scale(int n, double x[N], double a) {
  double t = 0.0;
  for (int i = 0; i < n; i++)
    x[i] *= a;
}"""


@pytest.mark.parametrize("name", ["Q", "i", "x", "a", "t"])
def test_params_naming_no_define_nor_integer_parameter_is_refused(name: str) -> None:
    """Before, ``params=["Q"]`` (or a loop variable, a local) added a parameter the kernel
    then required: now an UndeclaredError names it and the function's parameters."""
    with pytest.raises(spf.UndeclaredError, match=rf"'{name}' is neither a #define") as err:
        spf.from_c(SCALE, params=[name])
    assert "its parameters: n, x, a" in str(err.value)
    assert "known parameters: 'N', 'n'" in str(err.value)


def test_params_naming_a_define_or_an_integer_parameter_is_accepted() -> None:
    assert sorted(spf.from_c(SCALE, params=["N"]).params) == ["N", "a", "n"]
    assert sorted(spf.from_c(SCALE, params=["n"]).params) == ["a", "n"]


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False)
    | st.sampled_from(["n", "NNZ", "rowptr", "x", "{[i]: 0 <= i < n}", "increasing", "int64", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.sampled_from(["rowptr", "col", "x", "y", "val", "domain", "range",
                                       "monotonic", "dtype", "n"]), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip


@settings(max_examples=60)
@given(
    function=st.sampled_from([None, "spmv", "other"]) | _VALUES,
    params=_VALUES,
    ufs=_VALUES,
    shapes=st.just(SHAPES) | _VALUES,
)
def test_fuzzed_keyword_arguments_give_a_computation_or_an_spf_error(
    function: Any, params: Any, ufs: Any, shapes: Any
) -> None:
    try:
        comp = spf.from_c(SRC, function=function, params=params, ufs=ufs, shapes=shapes)
    except spf.SpfError:
        return
    assert isinstance(comp, spf.Computation)

"""One type vocabulary (spf.dtypes): C names, numpy names and numpy dtypes are accepted
wherever a type is taken; unknown types are SpfErrors listing the accepted ones. And
spf.sparse's ``*_args(..., names=...)`` for computations with their own names."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.dtypes import c_type, numpy_name

SPELLINGS = [
    ("double", "double"),
    ("float64", "double"),
    (np.float64, "double"),
    (np.dtype("float64"), "double"),
    (float, "double"),
    ("float", "float"),
    ("float32", "float"),
    (np.float32, "float"),
    ("int32_t", "int32_t"),
    ("int32", "int32_t"),
    (np.int32, "int32_t"),
    (np.dtype("int32"), "int32_t"),
    ("int", "int"),
    ("int64", "int64_t"),
    (np.int64, "int64_t"),
    ("uint8", "uint8_t"),
    ("bool", "bool"),
]


@pytest.mark.parametrize(("given", "ctype"), SPELLINGS)
def test_every_spelling_names_one_c_type(given: object, ctype: str) -> None:
    assert c_type(given, what="x") == ctype
    comp = spf.Computation("t")
    comp.add_data_space("a", given, shape=("N",))  # type: ignore[arg-type]
    assert comp.data_spaces["a"].ctype == ctype
    comp.add_parameter("p", given)  # type: ignore[arg-type]
    buffer = comp.add_buffer("b", ("N",), given, scope="stack")  # type: ignore[arg-type]
    assert buffer.dtype == ctype


@pytest.mark.parametrize("bad", ["complex", "double double", np.complex128, 3, None, "f8", b"x"])
def test_unknown_types_list_the_accepted_ones(bad: object) -> None:
    comp = spf.Computation("t")
    with pytest.raises(spf.SpfError, match=r"data space 'a': unsupported type .*float64"):
        comp.add_data_space("a", bad, shape=("N",))  # type: ignore[arg-type]
    with pytest.raises(spf.SpfError, match=r"add_buffer\('b'\): unsupported type"):
        comp.add_buffer("b", ("N",), bad)  # type: ignore[arg-type]


def test_pointer_form_and_kernels_with_numpy_types(tmp_path: object) -> None:
    comp = spf.Computation("scale")
    comp.add_data_space("a", np.float32, shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}"))
    a = np.arange(4, dtype=np.float32)
    comp.compile(openmp=False)(a=a)
    np.testing.assert_array_equal(a, [0, 2, 4, 6])
    fn = spf.Computation("f")
    fn.add_parameter("v", "float64*")
    assert fn.data_spaces["v"].pointer
    assert fn.data_spaces["v"].ctype == "double"


@pytest.mark.parametrize("given", ["int64", "int64_t", np.int64, np.dtype("int64")])
def test_uf_and_index_dtypes(given: object) -> None:
    assert spf.UF("rowptr", dtype=given).dtype == "int64"  # type: ignore[arg-type]
    comp = spf.kernels.spmv_csr(index_dtype=given)  # type: ignore[arg-type]
    assert comp.ufs["rowptr"].dtype == "int64"
    args = spf.sparse.csr_args(sp.eye_array(3, format="csr"), index_dtype=given)
    assert args["rowptr"].dtype == np.int64
    assert numpy_name(given, what="x") == "int64"


def test_uf_rejects_non_index_types() -> None:
    with pytest.raises(spf.SpfError, match="dtype must be 'int32' or 'int64'"):
        spf.UF("f", dtype=np.float64)  # type: ignore[arg-type]
    with pytest.raises(spf.SpfError, match="index_dtype must be 'int32' or 'int64'"):
        spf.kernels.spmv_csr(index_dtype="float64")
    with pytest.raises(spf.ArgumentError, match="index_dtype must be 'int32' or 'int64'"):
        spf.sparse.csr_args(sp.eye_array(2), index_dtype="int16_t")


# ------------------------------------------------------------------------ *_args(names=...)
def _my_spmv() -> spf.Computation:
    comp = spf.Computation("my_spmv")
    comp.add_data_space("out", "double", shape=("n",))
    comp.add_data_space("vals", np.float64, shape=("nz",))
    comp.add_data_space("v", "float64", shape=("m",))
    comp.declare_uf("rp", domain="{[i]: 0 <= i <= n}", range="{[t]: 0 <= t <= nz}",
                    monotonic="nondecreasing")  # fmt: skip
    comp.declare_uf("ci", domain="{[k]: 0 <= k < nz}", range="{[t]: 0 <= t < m}")
    comp.add_stmt(spf.Stmt("$out$(i) += $vals$(k) * $v$(ci(k));",
                           "{[i,k]: 0 <= i < n && rp(i) <= k < rp(i+1)}"))  # fmt: skip
    return comp


def test_csr_args_maps_standard_names_to_yours() -> None:
    a = sp.random(12, 9, density=0.3, format="csr", random_state=4)
    names = {"rowptr": "rp", "col": "ci", "A": "vals", "N": "n", "M": "m", "NNZ": "nz"}
    args = spf.sparse.csr_args(a, names=names)
    assert sorted(args) == sorted(names.values())
    x = np.linspace(0.0, 1.0, 9)
    y = np.zeros(12)
    _my_spmv().compile(openmp=False)(out=y, v=x, **args)
    np.testing.assert_allclose(y, a @ x)
    partial = spf.sparse.csr_args(a, names={"rowptr": "rp", "A": "vals", "N": "n"})
    assert list(partial) == ["vals", "rp", "col", "n", "M", "NNZ"]


@pytest.mark.parametrize(
    ("helper", "extra"),
    [
        (spf.sparse.csc_args, ()),
        (spf.sparse.coo_args, ()),
        (spf.sparse.spmm_args, ()),
        (spf.sparse.bcsr_args, (2, 2)),
    ],
)
def test_every_args_helper_takes_names(helper: object, extra: tuple[int, ...]) -> None:
    a = sp.csr_array(np.array([[1.0, 0.0], [2.0, 3.0]]))
    plain = helper(a, *extra)  # type: ignore[operator]
    first = next(iter(plain))
    renamed = helper(a, *extra, names={first: "mine"})  # type: ignore[operator]
    assert "mine" in renamed
    assert first not in renamed
    np.testing.assert_array_equal(renamed["mine"], plain[first])


def test_sptrsv_args_takes_names() -> None:
    low = sp.csr_array(np.array([[2.0, 0.0], [1.0, 4.0]]))
    args = spf.sparse.sptrsv_args(low, names={"L": "lvals", "N": "n"})
    assert list(args) == ["lvals", "rowptr", "col", "n", "NNZ"]


@pytest.mark.parametrize(
    ("names", "match"),
    [
        ({"rowpointer": "rp"}, "unknown key.*'rowpointer'.*standard names are A, rowptr"),
        ({"rowptr": "col"}, "the same name \\(col\\)"),
        ({"rowptr": "not a name"}, "must be an identifier"),
        (["rowptr"], "names must map standard names"),
    ],
)
def test_bad_names_are_argument_errors(names: object, match: str) -> None:
    with pytest.raises(spf.ArgumentError, match=match):
        spf.sparse.csr_args(sp.eye_array(2), names=names)  # type: ignore[arg-type]


@pytest.mark.parametrize("given", ["int64", "int64_t", np.int64])
def test_sell_index_dtype_takes_every_spelling(given: object) -> None:
    from spf.formats import sell

    assert sell(8, index_dtype=given).index_dtype == "int64"


def test_sell_rejects_other_index_types() -> None:
    from spf.formats import sell

    with pytest.raises(spf.SpfError, match="index_dtype must be 'int32' or 'int64'"):
        sell(8, index_dtype=np.float32)


@pytest.mark.parametrize("where", ["argument", "stack buffer"])
def test_a_bool_data_space_compiles_in_c(where: str, tmp_path: object) -> None:
    """C (before C23) has ``bool`` from ``<stdbool.h>``, which the C target did not include:
    a computation with a ``bool`` data space failed in gcc."""
    comp = spf.Computation("mask")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("m", "bool", shape=("N",))
    first = comp.add_stmt(spf.Stmt("$m$(i) = $x$(i) > 0.5;", "{[i]: 0 <= i < N}"))
    if where == "stack buffer":
        comp.add_data_space("y", "double", shape=("N",))
        comp.add_stmt(spf.Stmt("$y$(i) = $m$(i) ? 1.0 : 2.0;", "{[i]: 0 <= i < N}"))
        first.store_in(comp.add_buffer("mb", ("N",), "bool", scope="stack"), ["i"])
    assert "#include <stdbool.h>" in comp.codegen()
    x = np.random.default_rng(0).random(11)
    kernel = comp.compile(cache_dir=str(tmp_path))
    if where == "argument":
        m = np.zeros(11, dtype=bool)
        kernel(x=x, m=m)
        np.testing.assert_array_equal(m, x > 0.5)
    else:
        y = np.zeros(11)
        kernel(x=x, y=y)
        np.testing.assert_array_equal(y, np.where(x > 0.5, 1.0, 2.0))


def test_a_cast_to_bool_in_a_statement_compiles_in_c(tmp_path: object) -> None:
    """``(bool)`` in a statement's text needs ``<stdbool.h>`` too (only the data spaces'
    types were looked at: gcc failed on a double kernel casting to bool)."""
    comp = spf.Computation("nonzero")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$y$(i) = (bool)($x$(i) - 0.5);", "{[i]: 0 <= i < N}"))
    assert "#include <stdbool.h>" in comp.codegen()
    x = np.array([0.2, 0.5, 1.5, -3.0])
    y = np.zeros(4)
    comp.compile(cache_dir=str(tmp_path))(x=x, y=y)
    np.testing.assert_array_equal(y, (x - 0.5 != 0).astype(float))


def test_a_by_value_parameter_named_like_a_bound_is_a_codegen_error() -> None:
    """A function Computation's by-value parameter that its loops also read as a symbolic
    constant became two C arguments of one name (a gcc error)."""
    comp = spf.Computation("scale")
    comp.add_parameter("N", "int")
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(spf.Stmt("$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}"))
    with pytest.raises(
        spf.CodegenError, match=r"parameter 'N' \(add_parameter\) is also a symbolic"
    ):
        comp.codegen()

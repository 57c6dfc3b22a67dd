"""Argument binding without a compiler: spf.runtime.binding.Binder and spf.runtime.checks."""

from __future__ import annotations

import numpy as np
import pytest

from spf.codegen.signature import Arg, Signature
from spf.errors import ArgumentError
from spf.runtime.binding import Binder
from spf.runtime.checks import UFCheck
from spf.sets import UF

MV = Signature(
    function="mv",
    args=(
        Arg(name="M", kind="param", ctype="int64_t"),
        Arg(name="N", kind="param", ctype="int64_t"),
        Arg(name="y", kind="data", ctype="double", shape=("N",)),
        Arg(name="A", kind="data", ctype="double", const=True, shape=("N", "M")),
        Arg(name="x", kind="data", ctype="double", const=True, shape=("M",)),
    ),
)


def test_bind_returns_params_and_arrays_in_order() -> None:
    y, A, x = np.zeros(4), np.ones((4, 3)), np.ones(3)
    params, arrays = Binder(MV).bind({"x": x, "A": A, "y": y})
    assert params == {"N": 4, "M": 3}
    assert [a is b for a, b in zip(arrays, (y, A, x), strict=True)] == [True] * 3


def test_wrong_rank_is_reported_before_a_missing_parameter() -> None:
    """x would give M; its rank is what is wrong, not a missing M."""
    args = {"y": np.zeros(4), "A": np.ones((4, 3)), "x": np.ones((3, 1))}
    with pytest.raises(ArgumentError, match="x: expected 1-d, got a 2-d"):
        Binder(MV).bind(args)


def test_context_prefixes_and_quotes() -> None:
    binder = Binder(MV, context="interpret(mv)")
    with pytest.raises(ArgumentError, match=r"^interpret\(mv\): argument 'y': expected dtype"):
        binder.bind({"y": np.zeros(4, np.int64), "A": np.ones((4, 3)), "x": np.ones(3)})
    with pytest.raises(ArgumentError, match=r"^interpret\(mv\): missing array argument\(s\) 'x'$"):
        binder.bind({"y": np.zeros(4), "A": np.ones((4, 3))})


def _col_signature() -> Signature:
    """``f(M, NNZ, col)``: one int32 index array ``col`` of range ``[0, M)``."""
    uf = UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    return Signature(
        function="f",
        args=(
            Arg(name="M", kind="param", ctype="int64_t"),
            Arg(name="NNZ", kind="param", ctype="int64_t"),
            Arg(name="col", kind="uf", ctype="int32_t", const=True, rank=1, uf=uf),
        ),
    )


def test_check_false_skips_the_uf_facts() -> None:
    sig = _col_signature()
    col = np.array([0, 5], dtype=np.int32)
    Binder(sig).bind({"col": col, "M": 3, "NNZ": 2}, check=False)
    with pytest.raises(ArgumentError, match=r"col\[1\] = 5 is outside the declared range"):
        Binder(sig).bind({"col": col, "M": 3, "NNZ": 2})


def test_uf_check_label() -> None:
    check = UFCheck(UF("p", domain="{[i]: 0 <= i <= N}"), frozenset({"N"}), label="argument 'p'")
    with pytest.raises(ArgumentError, match=r"^argument 'p': length 2 is too short"):
        check.check(np.zeros(2, np.int32), {"N": 4})


def test_the_fast_plan_takes_parameters_from_shapes_as_bind_does() -> None:
    binder = Binder(MV)
    y, A, x = np.zeros(4), np.ones((4, 3)), np.ones(3)
    fast = binder.fast({"x": x, "A": A, "y": y})
    assert fast is not None
    assert fast[0] == (3, 4)  # M, N in parameter order
    assert binder.fast({"x": x, "A": A, "y": y, "M": 3}) == fast
    # the shapes disagree with the parameter taken from A: the full binding says why
    assert binder.fast({"x": np.ones(2), "A": A, "y": y}) is None
    with pytest.raises(ArgumentError, match=r"x: expected shape \(3,\).*M=3 was taken from A"):
        binder.bind({"x": np.ones(2), "A": A, "y": y})
    assert binder.fast({"A": A, "y": y}) is None  # x is missing
    assert binder.fast({"x": x, "A": A, "y": y, "z": x}) is None  # an unknown argument


def test_an_index_array_the_declared_type_cannot_hold_is_not_told_to_convert() -> None:
    """auditeinsum: ``csr_args`` of a matrix with 5e9 columns gives int64 index arrays; an
    int32 kernel's message said ``col.astype(np.int32)``, which wraps column 2**32 + 1 to 1
    and the call then ran on the wrong column, silently. It now names the value and asks
    for int64 index arrays; a value int32 holds keeps the plain advice."""
    sig = _col_signature()
    wide = np.array([7, 2**32 + 1], dtype=np.int64)
    with pytest.raises(ArgumentError) as err:
        Binder(sig).bind({"col": wide, "M": 5 * 10**9, "NNZ": 2})
    text = str(err.value)
    assert "holding 4294967297 at index 1, outside int32's range" in text
    assert "index_dtype='int64'" in text
    assert "would wrap it" in text
    for small in (np.array([0, 1], np.int64), np.array([0, 1], np.uint64)):
        with pytest.raises(ArgumentError, match=r"convert it with col\.astype\(np\.int32\)"):
            Binder(sig).bind({"col": small, "M": 3, "NNZ": 2})
    with pytest.raises(ArgumentError, match=r"holding 18446744073709551615 at index 0"):
        Binder(sig).bind({"col": np.array([2**64 - 1, 0], np.uint64), "M": 3, "NNZ": 2})
    with pytest.raises(ArgumentError, match=r"holding -2147483649 at index 1"):
        Binder(sig).bind({"col": np.array([0, -(2**31) - 1], np.int64), "M": 3, "NNZ": 2})


def test_a_data_space_the_declared_type_cannot_hold_asks_for_a_wider_type() -> None:
    sig = Signature(
        function="g",
        args=(
            Arg(name="N", kind="param", ctype="int64_t"),
            Arg(name="v", kind="data", ctype="int32_t", const=True, shape=("N",)),
        ),
    )
    with pytest.raises(
        ArgumentError, match=r"holding 3000000000 at flat index 3.*'v' with a wider"
    ):
        Binder(sig).bind({"v": np.array([[0, 1], [2, 3 * 10**9]], np.int64), "N": 2})

"""Branch-free range tests of SELL's lane reads (spf.codegen.lane_reads), and SELL(8, 32)'s
row permutation tested by the range pass (spf.codegen.range_reads).

A checked ``spmv(SELL(8, 1))`` reads ``scol`` in its loop over a slice's 8 lanes clamped to
the declared range, with no branch, and a value out of range sends the call to the loops
with every read checked: the same error (array, index, value) as the in-loop test, for a
value in the first, a middle or the last (partial) slice, at a slice's first or last lane,
int32 and int64, after other contents were remembered as verified too; an entry the loops
never read is still no error. Results are bitwise those of the unchecked call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import spf
from spf import ArgumentError, kernels
from spf.codegen import lower_checked
from spf.codegen.lane_reads import lanes
from spf.codegen.range_pass import READS_SUFFIX, ranged
from spf.formats import COO, CSR, ELL, SELL
from spf.testing import random_csr

ROWS, COLS = 93, 41
"""Twelve slices of 8 rows, the last one of 5."""


@pytest.fixture(scope="module")
def matrix() -> Any:
    return random_csr(ROWS, COLS, 0.12, 5, empty_rows=[0, 17, ROWS - 1])


@pytest.fixture(scope="module", params=["int32", "int64"])
def sell(request: pytest.FixtureRequest) -> tuple[str, Any]:
    return request.param, kernels.spmv(SELL(8, 1), index_dtype=request.param).compile()


def _run(kernel: Any, args: dict[str, Any], check: bool = True) -> Any:
    y = np.zeros(ROWS)
    kernel(**args, x=np.linspace(-1.0, 2.0, COLS), y=y, check=check)
    return y


def _lane(args: dict[str, Any], where: str) -> int:
    """The position of ``scol`` a lane reads: a slice's first lane (the first, a middle or
    the last slice), or the last lane of the first slice."""
    cs = args["cs"]
    middle = len(args["cl"]) // 2
    return int({"first": cs[0], "middle": cs[middle], "last": cs[-2], "edge": cs[0] + 7}[where])


def test_the_lanes_are_read_without_a_branch() -> None:
    def lane_ufs(comp: Any) -> frozenset[str]:
        program = lower_checked(comp.ir)
        return lanes(program, ranged(program))

    assert lane_ufs(kernels.spmv(SELL(8, 1))) == {"scol"}
    # SELL(8, 32) scatters to y(perm(...)): no vectorized loop to keep, the branch stays
    assert lane_ufs(kernels.spmv(SELL(8, 32))) == frozenset()
    for fmt in (CSR, COO, ELL):  # no loop of constant extent
        assert lane_ufs(kernels.spmv(fmt)) == frozenset()
    source = kernels.spmv(SELL(8, 1)).compile().source
    assert "spf_lane_scol" in source
    assert f"spmv_sell8_1_generated{READS_SUFFIX}(" in source  # the fallback
    for dtype, flag in (("int32", "uint32_t"), ("int64", "uint64_t")):  # the array's width
        text = kernels.spmv(SELL(8, 1), index_dtype=dtype).compile().source
        assert f"{flag} spf_lanes2 = 0;" in text
        assert f"*o |= ({flag})(c ^ v);" in text


def test_checked_results_are_bitwise_the_unchecked_ones(sell: tuple[str, Any], matrix: Any) -> None:
    dtype, kernel = sell
    args = spf.sparse.format_args(matrix, SELL(8, 1), index_dtype=dtype)
    y = _run(kernel, args)
    assert np.array_equal(y, _run(kernel, args, check=False))
    np.testing.assert_allclose(y, matrix @ np.linspace(-1.0, 2.0, COLS), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("where", ["first", "middle", "last", "edge"])
def test_a_column_out_of_range_is_refused_in_every_slice(
    sell: tuple[str, Any], matrix: Any, where: str
) -> None:
    dtype, kernel = sell
    args = spf.sparse.format_args(matrix, SELL(8, 1), index_dtype=dtype)
    k = _lane(args, where)
    wide = [2**40, -(2**40), 2**32 + 3, 2**63 - 1]  # 2**32 + 3: in range in its low half
    bads = [COLS, -1, 2**31 - 1, -(2**31)] + (wide if dtype == "int64" else [])
    for bad in bads:
        scol = args["scol"].copy()
        scol[k] = bad
        with pytest.raises(ArgumentError, match=rf"scol\[{k}\] = {bad} is outside") as e:
            _run(kernel, {**args, "scol": scol})
        assert "partially written" in str(e.value)  # found where the loops read it


def test_a_bad_column_after_other_contents_were_remembered(
    sell: tuple[str, Any], matrix: Any
) -> None:
    dtype, kernel = sell
    args = spf.sparse.format_args(matrix, SELL(8, 1), index_dtype=dtype)
    for _ in range(12):  # verified, then its size's trials (hashed or checked) decided
        _run(kernel, args)
    k = _lane(args, "middle") + 3
    scol = args["scol"].copy()
    scol[k] = COLS
    with pytest.raises(ArgumentError, match=rf"scol\[{k}\] = {COLS} is outside"):
        _run(kernel, {**args, "scol": scol})  # new arrays
    args["scol"][k] = -1  # in place
    with pytest.raises(ArgumentError, match=rf"scol\[{k}\] = -1 is outside"):
        _run(kernel, args)


def test_an_entry_the_lanes_never_read_is_not_an_error(sell: tuple[str, Any]) -> None:
    dtype, kernel = sell
    m = random_csr(13, 7, 0.4, 8)  # slices of 8 and 5 rows, the second padded to 8 lanes
    args = spf.sparse.format_args(m, SELL(8, 1), index_dtype=dtype)
    args = {**args, "scol": args["scol"].copy()}
    start, width = int(args["cs"][1]), int(args["cl"][1])
    assert width >= 1
    assert int(args["NV"]) >= start + 8
    args["scol"][start + 6] = 10**6  # lane 6 of a slice of 5 rows: never read
    y = np.zeros(13)
    x = np.linspace(-1.0, 2.0, 7)
    kernel(**args, x=x, y=y)
    np.testing.assert_allclose(y, m @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_sell_8_32_tests_its_row_permutation_before_the_loops(dtype: str, matrix: Any) -> None:
    comp = kernels.spmv(SELL(8, 32), index_dtype=dtype)
    assert ranged(lower_checked(comp.ir)) == {"cl", "perm"}  # perm: once per lane and column
    kernel = comp.compile()
    args = spf.sparse.format_args(matrix, SELL(8, 32), index_dtype=dtype)
    y = _run(kernel, args)
    assert np.array_equal(y, _run(kernel, args, check=False))
    np.testing.assert_allclose(y, matrix @ np.linspace(-1.0, 2.0, COLS), rtol=1e-12, atol=1e-12)
    for k in (0, 7, 8, ROWS - 1):  # a slice's first and last lane, the last row
        perm = args["perm"].copy()
        perm[k] = ROWS
        with pytest.raises(ArgumentError, match=rf"perm\[{k}\] = {ROWS} is outside"):
            _run(kernel, {**args, "perm": perm})
    scol = args["scol"].copy()
    k = int(args["cs"][1]) + 8
    scol[k] = COLS
    with pytest.raises(ArgumentError, match=rf"scol\[{k}\] = {COLS} is outside"):
        _run(kernel, {**args, "scol": scol})


def test_a_parallel_function_keeps_its_checked_reads() -> None:
    """The lanes' out-of-range flag is or-ed without atomics: a function with a parallel
    loop keeps the checked reads (which record a fault atomically)."""
    comp = kernels.spmv(SELL(8, 1), index_dtype="int32")
    stmt = comp.stmts[0]
    stmt.parallelize(stmt.loops[0])
    assert "spf_lanes" not in comp.codegen("c", arg_checks=True)
    assert "spf_lanes" in kernels.spmv(SELL(8, 1), index_dtype="int32").codegen(
        "c", arg_checks=True
    )

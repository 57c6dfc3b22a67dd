"""BDIA's sorted offsets inside each block counted in one flat pass (spf.codegen.flat_pairs).

The each-call check of ``doff(s) < doff(s + 1)`` inside every block of rows counts the
breaking pairs over all of ``doff`` at once and takes back the pairs across block ends, so
a descent inside a block is refused (first, middle and last block, a block's first and last
pair, int32 and int64, after other contents were remembered as verified) with the same error
naming the first violating point, while a descent across a block end, empty blocks and
blocks of one diagonal are no error. Results are bitwise those of the unchecked call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError, kernels
from spf.codegen import lower_checked
from spf.codegen.arg_checks import plan_fact_checks, prechecked
from spf.codegen.flat_pairs import plan
from spf.formats import BDIA, CSR, DIA
from spf.testing import random_csr

ROWS, COLS = 61, 47
FACT = r"the assumption 'forall b, s1, s2: dptr\(b\) <= s1 < s2 < dptr\(b\+1\)"


@pytest.fixture(scope="module")
def matrix() -> Any:
    return random_csr(ROWS, COLS, 0.1, 9, empty_rows=[0, 1, 2, 3, 30])


@pytest.fixture(scope="module", params=["int32", "int64"])
def bdia(request: pytest.FixtureRequest) -> tuple[str, Any]:
    return request.param, kernels.spmv(BDIA(4), index_dtype=request.param).compile()


def _flat(comp: Any) -> Any:
    program = plan_fact_checks(comp.ir, lower_checked(comp.ir))
    each = program.each_call
    return None if each is None else plan(each.program, prechecked(program))


def test_only_the_pairs_inside_rows_of_a_pointer_are_flattened() -> None:
    flat = _flat(kernels.spmv(BDIA(4)))
    assert flat is not None
    assert flat.ptr == "dptr"
    assert "spf_fp_lo" in kernels.spmv(BDIA(4)).compile().source
    for comp in (kernels.spmv(DIA), kernels.spmv(CSR)):  # one global order, or none
        assert _flat(comp) is None


def _run(kernel: Any, args: dict[str, Any], check: bool = True) -> Any:
    y = np.zeros(ROWS)
    kernel(**args, x=np.linspace(-1.0, 2.0, COLS), y=y, check=check)
    return y


def test_checked_results_are_bitwise_the_unchecked_ones(bdia: tuple[str, Any], matrix: Any) -> None:
    dtype, kernel = bdia
    args = spf.sparse.format_args(matrix, BDIA(4), index_dtype=dtype)
    assert (np.diff(args["dptr"]) == 0).any()  # an empty block
    y = _run(kernel, args)
    assert np.array_equal(y, _run(kernel, args, check=False))
    np.testing.assert_allclose(y, matrix @ np.linspace(-1.0, 2.0, COLS), rtol=1e-12, atol=1e-12)


def _pair(args: dict[str, Any], where: str) -> tuple[int, int]:
    """(block, first entry of a pair inside it): the first pair of the first, a middle or
    the last block of two diagonals or more, or the last pair of the first such block."""
    dptr = args["dptr"]
    blocks = np.flatnonzero(np.diff(dptr) >= 2)
    b = int({"first": blocks[0], "middle": blocks[len(blocks) // 2], "last": blocks[-1],
             "end": blocks[0]}[where])  # fmt: skip
    s = int(dptr[b + 1]) - 2 if where == "end" else int(dptr[b])
    return b, s


@pytest.mark.parametrize("where", ["first", "middle", "last", "end"])
def test_a_descent_inside_a_block_is_refused(
    bdia: tuple[str, Any], matrix: Any, where: str
) -> None:
    dtype, kernel = bdia
    args = spf.sparse.format_args(matrix, BDIA(4), index_dtype=dtype)
    b, s = _pair(args, where)
    for equal in (False, True):
        doff = args["doff"].copy()
        if equal:
            doff[s + 1] = doff[s]
        else:
            doff[s], doff[s + 1] = doff[s + 1], doff[s]
        with pytest.raises(ArgumentError, match=FACT) as e:
            _run(kernel, {**args, "doff": doff})
        assert f"fails first at b = {b}, s1 = {s}, s2 = {s + 1}" in str(e.value)


def test_a_descent_after_other_contents_were_remembered(bdia: tuple[str, Any], matrix: Any) -> None:
    dtype, kernel = bdia
    args = spf.sparse.format_args(matrix, BDIA(4), index_dtype=dtype)
    for _ in range(12):
        _run(kernel, args)
    b, s = _pair(args, "last")
    doff = args["doff"].copy()
    doff[s], doff[s + 1] = doff[s + 1], doff[s]
    with pytest.raises(ArgumentError, match=rf"fails first at b = {b}, s1 = {s}"):
        _run(kernel, {**args, "doff": doff})  # new arrays
    args["doff"][:] = doff  # in place
    with pytest.raises(ArgumentError, match=rf"fails first at b = {b}, s1 = {s}"):
        _run(kernel, args)


def test_descents_across_block_ends_are_no_error(bdia: tuple[str, Any]) -> None:
    dtype, kernel = bdia
    # every block restarts at offset -3 (a descent at each block end), one block of one
    # diagonal, two empty blocks
    dense = np.zeros((ROWS, COLS))
    for r in range(ROWS):
        block = r // 4
        if block in (3, 7):
            continue
        for off in (0,) if block == 5 else (-3, -1, 0, 2):
            if 0 <= r + off < COLS:
                dense[r, r + off] = 1.0 + r + off
    m = sp.csr_array(dense)
    args = spf.sparse.format_args(m, BDIA(4), index_dtype=dtype)
    assert (np.diff(args["dptr"]) == 0).any()
    assert (np.diff(args["dptr"]) == 1).any()
    starts = args["dptr"][1:-1][np.diff(args["dptr"])[1:] > 0]
    assert (args["doff"][starts] < args["doff"][starts - 1]).any()  # a descent at a block end
    y = _run(kernel, args)
    assert np.array_equal(y, _run(kernel, args, check=False))
    np.testing.assert_allclose(y, dense @ np.linspace(-1.0, 2.0, COLS), rtol=1e-12)


def test_no_block_reads_no_pointer_entry() -> None:
    """With no block (``NB = -1``: an empty ``dptr``) the flat pass reads nothing: no
    entry before or after the pointer array (it read ``dptr[0]`` and ``dptr[-1]``)."""
    k = kernels.spmv(BDIA(4), index_dtype="int64").compile()
    y = np.zeros(4)
    around = np.array([0, 0, 0, 0, 100_000, 0, 0], np.int64)
    dptr = around[5:5]  # dptr[-1] would be 100,000
    k(y=y, A=np.ones((2, 4)), x=np.ones(4), dptr=dptr, doff=np.array([0, 1]), N=4, M=4,
      NB=-1, NS=2)  # fmt: skip
    assert y.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_an_order_of_the_pair_is_compared_in_the_arrays_own_type() -> None:
    """``!(-1 - doff(s) + doff(s + 1) >= 0)`` counts ``doff[s + 1] <= doff[s]``: the two
    entries compared as they are (int32 ones in int32), in both passes."""
    from dataclasses import replace

    from spf import cexpr as cx
    from spf.codegen.flat_pairs import ordered

    comp = kernels.spmv(BDIA(4), index_dtype="int32")
    flat = _flat(comp)
    assert flat.order == ("doff", "<=")
    source = comp.compile().source
    assert "spf_fp_n += (doff[spf_t + 1] <= doff[spf_t]);" in source
    assert "spf_fp_n -= (doff[spf_fp_e - 1 + 1] <= doff[spf_fp_e - 1]);" in source
    program = plan_fact_checks(comp.ir, lower_checked(comp.ir)).each_call.program
    red = flat.stmt.reduction
    s = flat.stmt.params[flat.at]

    def value(c: int, ahead: int) -> Any:
        read = cx.Call("doff", (cx.Binary("+", cx.Param(s), cx.Num(str(ahead))),))
        form = cx.Binary("-", cx.Binary("+", cx.Num(str(c)), read), cx.Call("doff", (cx.Param(s),)))
        test = cx.Binary(">=", form, cx.Num("0"))
        return replace(flat.stmt, reduction=replace(red, value=cx.Unary("!", test)))

    assert ordered(value(0, 1), flat.at, program) == ("doff", "<")  # doff(s) <= doff(s + 1)
    assert ordered(value(-1, 1), flat.at, program) == ("doff", "<=")
    assert ordered(value(-2, 1), flat.at, program) is None  # a gap of 2: the general form
    assert ordered(value(-1, 2), flat.at, program) is None  # not a neighbouring pair

"""A fact whose in-loop test a stronger fact's test at the same statement makes redundant is
tested through that one only (spf.analysis.dominated_checks), and a checked call that breaks
it is still refused with the error naming it."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf.errors import ArgumentError

LOWER = "col(k) <= i"
STRICT = "rowptr(i+1) - 1 => col(k) < i"
ROWPTR = [0, 1, 3, 5, 8]
GOOD = [0, 0, 1, 1, 2, 0, 1, 3]


def _lower_and_diagonal_last() -> spf.Computation:
    """sptrsv_csr with its two ordering facts only (not DIAGONAL_STORED, which with them
    implies the lower fact): the kernel whose lower fact is tested at the diagonal."""
    comp = spf.kernels.sptrsv_csr(triangular=False)
    comp.assume(spf.kernels.TRIANGULAR)
    comp.assume(spf.kernels.DIAGONAL_LAST)
    return comp


def test_sptrsv_tests_col_at_most_i_at_the_diagonal_only() -> None:
    kernel = _lower_and_diagonal_last().compile()
    source = kernel.source if isinstance(kernel.source, str) else kernel.unit.source
    checked = source.split("_spf_checked(", 1)[1]
    # col(k) <= i (fact 0) at the row's last entry; col(k) < i (fact 1) covers the others,
    # in the entry loop, which the printer splits into its entries but the last and the last
    # (spf_prev: the row before's local is read at the last only), one test in each piece;
    # the fused rows (spf.codegen.row_pairs, where the rows lie in col's range) test fact 1
    # in col's read (its bit, 2) and fact 0 as the checked loops after them do
    fused, loops = checked.split("\n  else\n", 1)
    assert (
        "spf_bound_col(col, t0, spf_lo_0, spf_lim_0, spf_bottom_0, spf_room_0, (uint64_t)2ULL"
        in fused
    )
    for copy, fact1 in ((fused, 0), (loops, 2)):
        assert copy.count("((uint64_t)1 << 0)") == 1
        assert copy.count("((uint64_t)1 << 1)") == fact1
        assert "spf_prev" in copy


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(
    ("col", "fact", "where"),
    [
        ([0, 0, 1, 3, 2, 0, 1, 3], LOWER, "i = 2, k = 3"),  # above the diagonal, not last
        ([0, 1, 1, 1, 2, 0, 3, 3], STRICT, "i = 1, k = 1"),  # the diagonal twice
        ([0, 0, 1, 3, 2, 3, 1, 3], LOWER, "i = 2, k = 3"),  # both: the lower fact first
        ([0, 0, 1, 1, 3, 0, 1, 3], LOWER, "i = 2, k = 4"),  # above, the row's last entry
    ],
)
def test_a_broken_fact_is_refused_and_named(
    dtype: str, col: list[int], fact: str, where: str
) -> None:
    comp = spf.kernels.sptrsv_csr(index_dtype=dtype, triangular=False)
    comp.assume(spf.kernels.TRIANGULAR)  # the lower fact is not implied: it names its row
    comp.assume(spf.kernels.DIAGONAL_LAST)
    kernel = comp.compile()
    rowptr = np.array(ROWPTR, dtype=dtype)

    def call(c: list[int]) -> None:
        kernel(N=4, NNZ=8, rowptr=rowptr, col=np.array(c, dtype=dtype), L=np.full(8, 2.0),
               u=np.zeros(4), f=np.ones(4))  # fmt: skip

    for _ in range(3):  # remembered contents never include a refused call
        call(GOOD)
        with pytest.raises(ArgumentError, match="does not hold") as err:
            call(col)
        text = str(err.value)
        assert fact in text
        assert f"fails first at {where}" in text

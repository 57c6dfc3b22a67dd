"""The kernel's facts about a row's segment, restated over the segment's part-ordered copies
(spf.analysis.local_copies.copied_fact): the forms that hold of the copies, and the ones
left out."""

from __future__ import annotations

import pytest

from spf import kernels
from spf.analysis.local_copies import Segment, copied_fact

SEG = Segment("rowptr", "rowptr_part", 1, (("col", "col_part"),), (("L", "L_part"),))


@pytest.mark.parametrize(
    ("fact", "moved"),
    [
        (kernels.DIAGONAL_LAST,
         "forall i, k: rowptr_part(i) <= k < rowptr_part(i+1) - 1 => col_part(k) < order_i(i)"),
        (kernels.TRIANGULAR,
         "forall i, k: rowptr_part(i) <= k < rowptr_part(i+1) => col_part(k) <= order_i(i)"),
        ("forall r, t: rowptr(r) <= t < rowptr(r + 1) => col(t) >= 0",
         "forall r, t: rowptr_part(r) <= t < rowptr_part(r+1) => col_part(t) >= 0"),
        # a row of entries: its index, read as the position's row
        ("forall i, k: rowptr(i) <= k < rowptr(i+1) => i >= 0",
         "forall i, k: rowptr_part(i) <= k < rowptr_part(i+1) => order_i(i) >= 0"),
    ],
)  # fmt: skip
def test_a_fact_about_a_rows_entries_holds_of_their_copies(fact: str, moved: str) -> None:
    assert copied_fact(fact, SEG, "order_i") == moved


@pytest.mark.parametrize(
    "fact",
    [
        # k compared itself, or read at another entry: a copy's k is not the original's
        "forall i, k: rowptr(i) <= k < rowptr(i+1) => k < 5",
        "forall i, k: rowptr(i) <= k < rowptr(i+1) - 1 => col(k) < col(k+1)",
        # another UF, another pointer, another premise
        "forall i: rowptr(i) <= diag(i) < rowptr(i+1)",
        "forall i, k: colptr(i) <= k < colptr(i+1) => col(k) <= i",
        "forall i, k: rowptr(i) < k < rowptr(i+1) => col(k) <= i",
        "forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= diag(i)",
        "forall i, k, j: rowptr(i) <= k < rowptr(i+1) => col(k) <= j",
        "forall i, k: rowptr(i) <= k < rowptr(i+1) => diag(col(k)) <= i",
        "forall i, k: rowptr(i) <= k < rowptr(i+1) => col(col(k)) <= i",
        "N >= 1",
    ],
)
def test_other_facts_are_left_out(fact: str) -> None:
    assert copied_fact(fact, SEG, "order_i") is None

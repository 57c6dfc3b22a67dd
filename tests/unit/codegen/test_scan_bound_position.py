"""The scanner gives the schedule one more position, below the last, only where a statement's
loops (its domain) read a run-time index array that an earlier statement of the same
iteration writes: that value is bound at the new position, after the write. A read in a
statement's body alone is printed where the body runs, after the write already, and needs
no position (asking for it cost SpGEMM's numeric phase 0.6 s of written-level analysis)."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf.codegen.scan import Scanner


def _written_then_read(in_domain: bool) -> spf.Computation:
    comp = spf.Computation("written_then_read")
    comp.add_data_space("w", "int32_t", shape=("N",), index=True, range="{[v]: 0 <= v < 8}")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$w$(i) = i % 8;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}"))
    if in_domain:  # the loops read w(i): only the rows where it is at least 1 run
        stmt = spf.Stmt("$y$(i) = 1;", "{[i]: 0 <= i < N && w(i) >= 1}", "{[i] -> [0, i, 1]}")
    else:
        stmt = spf.Stmt("$y$(i) = w(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 1]}")
    comp.add_stmt(stmt)
    return comp


@pytest.mark.parametrize("in_domain", [True, False])
def test_a_position_is_added_only_for_an_index_array_the_loops_read(in_domain: bool) -> None:
    comp = _written_then_read(in_domain)
    assert Scanner(comp.ir).width == comp.schedule_width() + (1 if in_domain else 0)
    n = 19
    y = np.full(n, -1.0)
    comp.compile()(w=np.zeros(n, np.int32), y=y, N=n)
    rows = np.arange(n) % 8
    want = np.where(rows >= 1, 1.0, -1.0) if in_domain else rows.astype(float)
    np.testing.assert_array_equal(y, want)

"""An in-loop check that read an index array past its end (spf.runtime.kernel).

A UF declared without a domain has no length a call can check before the kernel runs, so a
too-short ``rowptr`` is read one past its end by the row loop; the checked kernel finds the
value there outside the declared range. The call raises ``ArgumentError`` naming the array,
the entry read and the array's length (it used to raise numpy's ``ValueError`` from turning
the entry into an index of the array).
"""

from __future__ import annotations

import numpy as np
import pytest

import spf


@pytest.fixture(scope="module")
def spmv_without_row_domain() -> spf.Kernel:
    c = spf.Computation("spmv_nodomain")
    c.declare_uf("rowptr", range="{[v]: 0 <= v <= NNZ}")
    c.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    c.add_data_space("y", "double", shape=("N",))
    c.add_data_space("x", "double", shape=("M",))
    c.add_data_space("A", "double", shape=("NNZ",))
    c.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(k) * $x$(col(k));",
            "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}",
        )
    )
    return c.compile()


def test_a_row_pointer_array_one_short_is_an_argument_error_naming_it(
    spmv_without_row_domain: spf.Kernel,
) -> None:
    memory = np.array([0, 1, 2, 99, 0], np.int32)  # 99 after the array: outside the range
    rowptr = memory[:3]  # N = 3 rows need 4 entries
    args = {"col": np.zeros(2, np.int32), "x": np.ones(2), "A": np.ones(2), "N": 3, "M": 2}
    with pytest.raises(spf.ArgumentError) as err:
        spmv_without_row_domain(rowptr=rowptr, y=np.zeros(3), NNZ=2, **args)
    message = str(err.value)
    assert "the loops read entry 3 of index array 'rowptr'" in message
    assert "only 3 entries" in message
    assert "at least 4 entries" in message
    assert "declare_uf('rowptr', domain=...)" in message


def test_a_long_enough_row_pointer_array_runs(spmv_without_row_domain: spf.Kernel) -> None:
    y = np.zeros(3)
    spmv_without_row_domain(
        rowptr=np.array([0, 1, 1, 2], np.int32),
        col=np.array([1, 0], np.int32),
        x=np.array([10.0, 20.0]),
        A=np.array([2.0, 3.0]),
        y=y,
        N=3,
        M=2,
        NNZ=2,
    )
    np.testing.assert_array_equal(y, [40.0, 0.0, 30.0])

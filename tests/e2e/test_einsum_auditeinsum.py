"""spf.einsum as a scipy.sparse user calls it (auditeinsum): a matrix wider than int32
columns, whose ``csr_args`` are int64, passed to a kernel of int32 index arrays. The call
is refused with the value int32 cannot hold and the way out (``index_dtype='int64'``), not
told to ``astype(np.int32)`` (which wrapped column 2**32 + 1 to 1: a wrong result,
silently); the int64 kernel computes it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.errors import ArgumentError
from spf.formats import CSR
from spf.sparse import csr_args

M = 5_000_000_000  # columns beyond int32: csr_args picks int64 index arrays


def _wide() -> tuple[sp.csr_array, sp.csr_array]:
    rowptr = np.array([0, 1, 2, 2])
    a = sp.csr_array((np.array([1.0, 2.0]), np.array([2**32 + 1, 7]), rowptr), shape=(3, M))
    b = sp.csr_array((np.array([10.0, 20.0]), np.array([1, 7]), rowptr), shape=(3, M))
    return a, b


def test_a_wide_matrix_in_an_int32_kernel_is_refused_with_the_way_out() -> None:
    a, b = _wide()
    args = {**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_")}
    assert args["A_col"].dtype == np.int64
    dot = spf.einsum("s = A(i,j) * B(i,j)", A=CSR, B=CSR).compile()
    with pytest.raises(ArgumentError) as err:
        dot(s=np.zeros(()), **args)
    text = str(err.value)
    assert text.startswith("A_col: expected dtype int32 (int32_t), got int64 holding 4294967297")
    assert "would wrap it" in text
    assert "index_dtype='int64' for spf.einsum" in text
    assert "convert it with" not in text
    s = np.zeros(())
    spf.einsum("s = A(i,j) * B(i,j)", A=CSR, B=CSR, index_dtype="int64").compile()(s=s, **args)
    assert float(s) == 2.0 * 20.0  # column 2**32 + 1 meets nothing in B; 7 meets 7

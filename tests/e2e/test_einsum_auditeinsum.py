"""spf.einsum as a scipy.sparse user calls it (auditeinsum).

* A matrix wider than int32 columns, whose ``csr_args`` are int64, passed to a kernel of
  int32 index arrays: refused with the value int32 cannot hold and the way out
  (``index_dtype='int64'``), not told to ``astype(np.int32)`` (which wrapped column
  2**32 + 1 to 1: a wrong result, silently); the int64 kernel computes it.
* ``C(i,j) = A(i,k) * B(j,k)`` with both in CSR merges every pair of rows: a
  ``CostWarning`` names the operand and the format that scans only the products.
* A checked call tested one operand's sorted rows in the loop over another's entries,
  reading past its arrays: valid operands refused, or a segmentation fault."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.errors import ArgumentError
from spf.formats import COO, CSC, CSF, CSR
from spf.sparse import coo_args, csc_args, csr_args

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


@pytest.mark.parametrize(
    ("text", "formats", "locating"),
    [
        ("C(i,j) = A(i,k) * B(j,k)", {"A": CSR, "B": CSR, "C": CSR}, "B (CSR) only locates j"),
        ("s = A(i,k) * B(j,k)", {"A": CSR, "B": CSR}, "B (CSR) only locates j"),
        ("y(i) = A(i,k) * B(j,k)", {"A": CSR, "B": CSR}, "B (CSR) only locates j"),
        ("C(i,j) = A(i,k) * A(j,k)", {"A": CSR, "C": CSR}, "A (CSR) only locates j"),
    ],
)
def test_a_merge_for_every_pair_of_rows_warns_with_the_format_that_scans_the_products(
    text: str, formats: dict[str, spf.Format], locating: str
) -> None:
    """auditeinsum: ``A(i,k) * B(j,k)`` in CSR merges row i of A with every row j of B:
    I * J merges whatever the result (4000 x 4000 with 10 entries a row: 2.5 s against 7 ms
    for scipy's ``A @ B.T``), silently. einsum now says so and what to pass instead."""
    with pytest.warns(spf.CostWarning) as record:
        spf.einsum(text, **formats)
    assert len(record) == 1
    message = str(record[0].message)
    assert "I * J merges" in message
    assert locating in message
    assert "inside k (" in message
    assert record[0].filename == __file__  # points at the caller's einsum


def test_the_format_the_warning_names_gives_the_same_result_without_a_warning() -> None:
    a = sp.random_array((40, 30), density=0.1, format="csr", rng=1)
    b = sp.random_array((50, 30), density=0.1, format="csr", rng=2)
    want = (a @ b.T).toarray()
    with pytest.warns(spf.CostWarning, match="CSC instead of CSR"):
        pairwise = spf.einsum("C(i,j) = A(i,k) * B(j,k)", A=CSR, B=CSR, C=CSR).compile()
    out = pairwise(**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_"))
    got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=want.shape).toarray()
    assert np.allclose(got, want)
    scans = spf.einsum("C(i,j) = A(i,k) * B(j,k)", A=CSR, B=CSC, C=CSR).compile()  # no warning
    out = scans(**csr_args(a, prefix="A_"), **csc_args(b, prefix="B_"))
    got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=want.shape).toarray()
    assert np.allclose(got, want)


@pytest.mark.parametrize(
    ("text", "formats"),
    [
        ("Y(i,j) = A(i,k) * B(j,k)", {"A": CSR, "B": CSR}),  # the pairs are Y's elements
        ("O(i,j) = S(i,j) * X(i,k) * Y(j,k)", {"S": CSR, "Y": CSC}),  # X's elements
        ("O(i,j) = S(i,j) * X(i,k) * Y(j,k)", {"S": CSR, "O": CSR}),  # SDDMM: S iterates j
        ("C(i,j) = A(i,k) * B(k,j)", {"A": CSR, "B": CSR, "C": CSR}),  # SpGEMM
        ("C(i,j) = A(i,j) * B(i,j)", {"A": CSR, "B": CSR, "C": CSR}),
        ("s = a(i) * b(i)", {"a": CSF(1), "b": CSF(1)}),
    ],
)
def test_merges_whose_pairs_are_a_dense_tensors_elements_do_not_warn(
    text: str, formats: dict[str, spf.Format]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spf.einsum(text, **formats)


def test_a_checked_call_reads_no_index_array_of_an_operand_its_loop_does_not_scan() -> None:
    """auditeinsum: in ``Y(k) = B(k,i) + C(j,i)`` (B in COO, C in CSR) the checked kernel
    tested C's sorted rows inside the loop over B's entries, with C's row ``i`` taken as
    B's position ``B_k``: ``C_rowptr(B_k + 1)`` and ``C_col(B_row(B_k))``, read past C's
    arrays. Valid operands were refused ("the index arrays changed during the call") on
    what lay there, or the interpreter died (a segmentation fault for 2M entries of B and a
    1 x 2 C). Here C's arrays are views into buffers whose next entries hold what made the
    old test fail; the fact is now tested where C's rows are read."""
    kernel = spf.einsum("Y(k) = B(k,i) + C(j,i)", B=COO, C=CSR).compile()
    b = sp.coo_array(
        (np.ones(6), (np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 0, 1, 0, 1]))), shape=(3, 2)
    )
    rowptr = np.array([0, 1, 0, 10, 0, 10, 0, 10], dtype=np.int32)[:2]  # C: 1 x 2, one entry
    col = np.array([1, 0, 0, 0], dtype=np.int32)[:1]
    c = {"C": np.array([5.0]), "C_rowptr": rowptr, "C_col": col, "C_N": 1, "C_M": 2, "C_NNZ": 1}
    y = np.zeros(3)
    kernel(Y=y, **coo_args(b, prefix="B_"), **c)
    assert y.tolist() == [7.0, 7.0, 7.0]
    bad = {**c, "C_col": np.array([1, 0], dtype=np.int32), "C": np.array([5.0, 6.0])}
    bad.update(C_rowptr=np.array([0, 2], dtype=np.int32), C_NNZ=2)
    with pytest.raises(ArgumentError, match=r"C_col\(k1\) < C_col\(k2\)' does not hold"):
        kernel(Y=y, **coo_args(b, prefix="B_"), **bad)  # C's rows are still tested

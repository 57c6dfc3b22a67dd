"""spf.einsum on formulas and operands a careless user writes (audit27): a sum whose
index's terms share a flat sum with terms that do not hold it, a COO operand read twice at
the same coordinates, index and extent names that are words of spf's set notation, and an
accumulation of nothing. Each either computes what the formula says, checked against numpy
on the densified operands, or is refused with an ``spf`` error naming what to change."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.errors import ArgumentError
from spf.formats import COO, CSC, CSR
from spf.sparse import coo_args, csc_args, csr_args


def _dense(n: int, m: int, seed: int) -> np.ndarray:
    return sp.random_array((n, m), density=0.5, format="csr", rng=seed).toarray()


@pytest.mark.parametrize(
    "text",
    [
        "y(i) = A(i,j) + B(i,j) + w(i)",
        "y(i) = (A(i,j) + B(i,j)) + w(i)",
        "y(i) = A(i,j) + w(i) + B(i,j)",
        "y(i) = w(i) + A(i,j) + B(i,j)",
    ],
)
@pytest.mark.parametrize("fmt", [None, CSR, CSC])
def test_a_term_without_the_summed_index_is_not_summed_in_a_flat_sum(
    text: str, fmt: spf.Format | None
) -> None:
    """Before: the sum over j covered every term of the flat sum, so w(i) was added J
    times (and 'A + B + w' differed from '(A + B) + w')."""
    a, b = _dense(4, 3, 1), _dense(4, 3, 2)
    w = np.arange(4.0) + 1
    formats = {} if fmt is None else {"A": fmt, "B": fmt}
    args: dict[str, object] = {"A": a, "B": b}
    if fmt is CSR:
        args = {**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_")}
    elif fmt is CSC:
        args = {**csc_args(a, prefix="A_"), **csc_args(b, prefix="B_")}
    y = np.zeros(4)
    spf.einsum(text, **formats).compile()(y=y, w=w, **args)
    assert np.allclose(y, a.sum(1) + b.sum(1) + w)


def test_cancelling_terms_leave_the_others_unsummed() -> None:
    a = _dense(4, 3, 3)
    w = np.arange(4.0) + 1
    y = np.zeros(4)
    spf.einsum("y(i) = A(i,j) - A(i,j) + w(i)", A=CSR).compile()(
        y=y, w=w, **csr_args(a, prefix="A_")
    )
    assert np.allclose(y, w)


def test_a_product_still_sums_its_constant_terms() -> None:
    """sum_i (x(i) + 1) * (z(i) + 1) holds I: the scope of i is the product."""
    x, z = np.arange(4.0), np.ones(4)
    s = np.zeros(())
    spf.einsum("s = (x(i) + 1) * (z(i) + 1)").compile()(s=s, x=x, z=z)
    assert float(s) == pytest.approx(float(((x + 1) * (z + 1)).sum()))


@pytest.mark.parametrize(
    "text", ["s = A(i,j) * A(i,j)", "C(i,j) = A(i,j) * A(i,j)", "y(i) = A(i,j) * A(i,j) * x(j)"]
)
def test_a_coo_operand_read_twice_at_the_same_coordinates_is_refused(text: str) -> None:
    """COO keeps duplicates (the kernels sum them); a product reading one entry twice
    squared each duplicate instead of their sum: s = 55 where sum(D**2) = 81."""
    with pytest.raises(ArgumentError, match=r"A \(COO\) is read twice.*duplicate"):
        spf.einsum(text, A=COO)


def test_a_coo_operand_read_once_per_product_still_sums_its_duplicates() -> None:
    row, col = np.array([1, 0, 1, 1, 0]), np.array([2, 1, 2, 0, 1])
    val = np.array([1.0, 2, 3, 4, 5])
    d = np.zeros((2, 3))
    np.add.at(d, (row, col), val)
    m = sp.coo_array((val, (row, col)), shape=(2, 3))
    x = np.arange(3.0) + 1
    y = np.zeros(2)
    spf.einsum("y(i) = A(i,j) * x(j) + A(i,j) * z(j)", A=COO).compile()(
        y=y, x=x, z=x, **coo_args(m, prefix="A_")
    )
    assert np.allclose(y, 2 * d @ x)


@pytest.mark.parametrize(
    ("text", "sizes", "what"),
    [
        ("y(i) = A(i,mod) * x(mod)", None, "index mod"),
        ("y(and) = A(and,j) * x(j)", {"and": "NA"}, "index and"),
        ("y(i) = A(i,j) * x(j)", {"i": "floord"}, "extent floord"),
        ("y(min) = A(min,j) * x(j)", None, "index min"),
    ],
)
def test_names_reserved_by_the_set_notation_are_refused_by_einsum(
    text: str, sizes: dict[str, str] | None, what: str
) -> None:
    """Before: einsum accepted them and compile() failed in the set parser ("'MOD' is a
    reserved word"), naming neither the formula nor the index."""
    with pytest.raises(ArgumentError, match=rf"einsum .*{what}.*reserved"):
        spf.einsum(text, A=CSR, sizes=sizes)


@pytest.mark.parametrize("text", ["y(i) += 0", "y(i) += x(i) - x(i)", "y(i) += A(i,j) * 0"])
def test_an_accumulation_of_nothing_is_refused_by_einsum(text: str) -> None:
    """Before: einsum accepted it and compile() raised CodegenError 'computation einsum_y
    has no statements to generate', naming neither the formula nor what to do."""
    formats = {"A": CSR} if "A(" in text else {}
    with pytest.raises(ArgumentError, match=r"right-hand side is zero.*nothing to compute"):
        spf.einsum(text, **formats)


def test_an_assignment_of_nothing_zeroes_the_output() -> None:
    y = np.arange(3.0)
    spf.einsum("y(i) = x(i) - x(i)").compile()(y=y, x=np.ones(3))
    assert np.array_equal(y, np.zeros(3))


@pytest.mark.parametrize(
    "text",
    [
        "y(i) = 1e308 * x(i) + 1e308 * x(i)",
        "y(i) = 1e200 * 1e200 * x(i)",
        "y(i) = 2 * x(i) * 1e308 - 1e308 * x(i) * 2",
    ],
)
def test_constants_that_combine_beyond_a_double_are_a_clear_error(text: str) -> None:
    """Before: the merged coefficient was printed as 'inf' (or 'nan') into the statement,
    and einsum raised UndeclaredError "unknown iterator or parameter 'inf'"."""
    with pytest.raises(ArgumentError, match=r"einsum .*constants.*beyond a double"):
        spf.einsum(text)

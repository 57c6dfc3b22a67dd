"""A sparse output whose rows gather several fibers of one sparse operand: ``Y(i,k) =
D(i,j) * B(j,k)`` with ``D`` dense and ``B`` in CSR reaches row ``i``'s columns through
``B``'s rows ``j``, one after another. The output was taken for the columns of one sorted
fiber of the row (as in ``Y(i,k) = A(i,k) * x(k)``): the single pass was bounded by
``nnz(B) + 1`` entries (rows cut short at the cursor's last slot: wrong values, silently)
and neither path sorted the rows (audit16)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import CSC, CSF, CSR
from spf.runtime.threads import openmp_threads
from spf.sparse import csc_args, csf_args, csr_args


@pytest.mark.parametrize("threads", [1, 2])  # one thread: the single pass; two: both phases
@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ("Y(i,k) = D(i,j) * B(j,k)", CSR),  # B's rows j inside Y's row i
        ("Y(i,k) = D(j,i) * B(k,j)", CSC),  # B's columns j, in CSC
        ("Y(i,k) = -v(j) * D(j,i) * B(k,j)", CSC),
    ],
)
def test_rows_that_gather_several_fibers_are_bounded_and_sorted(
    text: str, fmt: spf.Format, threads: int
) -> None:
    rng = np.random.default_rng(0)
    d = rng.random((4, 5))
    b = sp.random_array((5, 3), density=0.6, format="csr", rng=3).toarray()
    v = rng.random(5)
    if "D(i,j)" in text:
        want, dense, bm = d @ b, {"D": d}, b
    elif "v(j)" in text:
        want, dense, bm = -(d * v) @ b, {"D": d.T.copy(), "v": v}, b.T.copy()
    else:
        want, dense, bm = d @ b, {"D": d.T.copy()}, b.T.copy()
    args = csr_args(bm, prefix="B_") if fmt is CSR else csc_args(bm, prefix="B_")
    kernel = spf.einsum(text, B=fmt, Y=CSR).compile()
    with openmp_threads(threads):
        out = kernel(**dense, **args)
    got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=want.shape)
    assert got.has_sorted_indices
    assert np.allclose(got.toarray(), want)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_row_whose_later_fiber_holds_smaller_columns_comes_out_sorted(threads: int) -> None:
    """Row 0 reaches column 2 through B's row 0, then column 0 through B's row 1: both
    paths listed [2, 0] in a CSR output, whose format promises sorted rows."""
    kernel = spf.einsum("Y(i,k) = D(i,j) * B(j,k)", B=CSR, Y=CSR).compile()
    b = np.array([[0.0, 0.0, 5.0], [7.0, 0.0, 0.0]])
    with openmp_threads(threads):
        out = kernel(D=np.ones((1, 2)), **csr_args(b, prefix="B_"))
    assert out["col"].tolist() == [0, 2]
    assert out["A"].tolist() == [7.0, 5.0]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "text",
    [
        "Y(j,i) = v(j) * x(i)",  # a sparse vector's one fiber, in every row of Y
        "Y(j,i) = x(i)",
        "Y(j,i) = v(j) * x(i) * z(i)",  # the intersection of two, in every row
        "Y(j,i) = A(k,i) * x(i)",  # A's columns summed over its rows k, in every row
    ],
)
def test_a_fiber_every_row_of_the_output_reads(text: str, threads: int) -> None:
    """An operand without the output's row index gives every row the same fiber: the
    single pass was bounded by that fiber's length (one row's worth) and rows were lost."""
    rng = np.random.default_rng(1)
    v, x, z = rng.random(5), rng.random(4), rng.random(4)
    x[[0, 2]] = 0.0
    z[3] = 0.0
    a = sp.random_array((3, 4), density=0.6, format="csr", rng=4).toarray()
    formats: dict[str, spf.Format] = {"x": CSF(1), "Y": CSR}
    args: dict[str, object] = {**csf_args(np.nonzero(x), x[x != 0], (4,), prefix="x_")}
    want = np.tile(x, (5, 1))
    if "v(j)" in text:
        args["v"] = v
        want = want * v[:, None]
    if "z(i)" in text:
        formats["z"] = CSF(1)
        args.update(csf_args(np.nonzero(z), z[z != 0], (4,), prefix="z_"))
        want = want * z
    if "A(k,i)" in text:
        formats["A"] = CSR
        args.update(csr_args(a, prefix="A_"))
        want = want * a.sum(axis=0)
    if "v(j)" not in text:
        args["J"] = 5
    kernel = spf.einsum(text, **formats).compile()
    with openmp_threads(threads):
        out = kernel(**args)
    got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=(5, 4))
    assert got.has_sorted_indices
    assert np.allclose(got.toarray(), want)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "text", ["Y(j,i) = x(i) + z(i)", "Y(j,i) = v(j) * x(i) - z(i)", "Y(j,i) = x(i) + E(j,i)"]
)
def test_a_sum_over_fibers_every_row_reads_is_no_union_of_the_row(text: str, threads: int) -> None:
    """A union merge bounded by its operands' sizes (the single pass) and built per row:
    operands without the output's row index were merged as if each row had fibers of its
    own, and the rows came out wrong in both paths."""
    rng = np.random.default_rng(2)
    v, x, z = rng.random(5), rng.random(4), rng.random(4)
    x[[1, 2]] = 0.0
    z[0] = 0.0
    e = sp.random_array((5, 4), density=0.5, format="csr", rng=6).toarray()
    formats: dict[str, spf.Format] = {"x": CSF(1), "Y": CSR}
    args: dict[str, object] = {**csf_args(np.nonzero(x), x[x != 0], (4,), prefix="x_")}
    if "E(j,i)" in text:
        formats["E"] = CSR
        args.update(csr_args(e, prefix="E_"))
        want = x + e
    else:
        formats["z"] = CSF(1)
        args.update(csf_args(np.nonzero(z), z[z != 0], (4,), prefix="z_"))
        if "v(j)" in text:
            args["v"] = v
            want = np.outer(v, x) - z
        else:
            args["J"] = 5
            want = np.tile(x + z, (5, 1))
    kernel = spf.einsum(text, **formats).compile()
    with openmp_threads(threads):
        out = kernel(**args)
    got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=(5, 4))
    assert got.has_sorted_indices
    assert np.allclose(got.toarray(), want)

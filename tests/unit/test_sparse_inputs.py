"""``spf.sparse`` helpers on inputs a careless caller passes: an ``ArgumentError`` naming the
helper and what to pass, never numpy's or scipy's own exception (API.md §1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        ([[1.0, "a"]], r"values must be numbers .* got dtype <U"),
        (np.array([[1.0, None]], dtype=object), r"values must be numbers .* got dtype object"),
        (np.array([[np.datetime64("2020-01-01")]]), r"values must be numbers .* datetime64"),
        ([[1.0, 2.0], [3.0]], r"cannot read it as a 2-D array"),
    ],
)
@pytest.mark.parametrize("helper", ["csr_args", "coo_args", "ell_args"])
def test_dense_input_that_is_not_a_numeric_matrix(
    helper: str, matrix: object, message: str
) -> None:
    with pytest.raises(spf.ArgumentError, match=f"{helper}: {message}"):
        getattr(spf.sparse, helper)(matrix)


def test_numeric_dense_inputs_still_accepted() -> None:
    for matrix in ([[1, 0], [2, 3]], np.array([[True, False]]), np.eye(2, dtype=np.float32)):
        args = spf.sparse.csr_args(matrix)
        assert args["A"].dtype == np.float64


@pytest.mark.parametrize("max_fill", ["x", float("nan"), 0.0, -1.0, None])
def test_bdia_max_fill_must_be_a_positive_number(max_fill: object) -> None:
    with pytest.raises(spf.ArgumentError, match=r"bdia_args: max_fill must be a positive number"):
        spf.sparse.bdia_args(spf.sparse.poisson2d(3), 2, max_fill=max_fill)  # type: ignore[arg-type]


def test_bdia_max_fill_infinite_accepted() -> None:
    args = spf.sparse.bdia_args(sp.random_array((9, 9), density=0.5, rng=0), 2, max_fill=np.inf)
    assert args["NS"] > 0


def test_matrix_market_value_out_of_range(tmp_path: Path) -> None:
    path = tmp_path / "big.mtx"
    path.write_text(
        "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 99999999999999999999\n"
    )
    with pytest.raises(spf.ArgumentError, match=r"read_matrix_market: cannot read .*big\.mtx"):
        spf.sparse.read_matrix_market(path)


def test_block_sizes_take_numpy_ints_as_the_helpers_do() -> None:
    """``spf.sparse.bcsr_args(m, np.int64(2), 2)`` worked, ``spmv_bcsr(np.int64(2), 2)``
    and ``BCSR(np.int64(2), 2)`` refused the same block size."""
    from spf.formats import BCSR, BDIA, SELL

    two = np.int64(2)
    assert BCSR(two, np.int32(3)) is BCSR(2, 3)
    assert SELL(two, np.int64(4)) is SELL(2, 4)
    assert BDIA(two) is BDIA(2)
    comp = spf.kernels.spmv_bcsr(two, 2)
    assert comp.name == "spmv_bcsr_2x2"
    m = sp.random_array((5, 4), density=0.5, rng=1, format="csr")
    args = spf.sparse.bcsr_args(m, two, 2)
    y, x = np.zeros(2 * args["NB"]), np.zeros(2 * args["MB"])
    x[:4] = np.arange(1.0, 5.0)
    comp.interpret(y=y, x=x, **args)
    assert np.allclose(y[:5], m @ x[:4])

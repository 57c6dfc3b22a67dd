"""spf.Format: formats as relations, and SpMV generated from any format (API §12)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL

if TYPE_CHECKING:
    from pathlib import Path

BUILTINS = [COO, CSR, CSC, DIA, ELL, BCSR(2, 3), SELL(4, 1), SELL(4, 8)]


def _matrices() -> list[tuple[str, object]]:
    rng = np.random.default_rng(7)
    rand = sp.random_array((37, 29), density=0.15, rng=rng, format="csr")
    rows = rand.tolil()
    rows[3, :] = 0
    rows[17, :] = 0
    return [
        ("random", rand),
        ("empty_rows", sp.csr_array(rows)),
        ("empty", sp.csr_array((5, 4))),
        ("one_row", sp.random_array((1, 9), density=0.5, rng=rng, format="csr")),
        ("tall", sp.random_array((50, 3), density=0.4, rng=rng, format="csr")),
    ]


def _spmv(fmt: spf.Format, matrix: object, index_dtype: str) -> np.ndarray:
    args = spf.sparse.format_args(matrix, fmt, index_dtype)
    n, m = matrix.shape  # type: ignore[attr-defined]
    rows = args["NB"] * fmt_block(fmt)[0] if "NB" in args else n
    cols = args["MB"] * fmt_block(fmt)[1] if "MB" in args else m
    x = np.zeros(cols)
    x[:m] = np.linspace(-1.0, 2.0, m)
    y = np.zeros(rows)
    kernel = spf.kernels.spmv(fmt, index_dtype=index_dtype).compile()
    kernel(y=y, x=x, **args)
    return y[:n]


def fmt_block(fmt: spf.Format) -> tuple[int, int]:
    return int(fmt.value_shape[1]), int(fmt.value_shape[2])


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("fmt", BUILTINS, ids=lambda f: f.name)
def test_spmv_matches_scipy(fmt: spf.Format, index_dtype: str) -> None:
    for label, matrix in _matrices():
        m = matrix.shape[1]  # type: ignore[attr-defined]
        expected = matrix @ np.linspace(-1.0, 2.0, m)  # type: ignore[operator]
        got = _spmv(fmt, matrix, index_dtype)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=label)


@pytest.mark.parametrize("fmt", [COO, CSR, CSC, ELL, BCSR(2, 2), SELL(8, 32)], ids=lambda f: f.name)
def test_spmv_suitesparse(fmt: spf.Format, suitesparse_dir: Path) -> None:
    for name in ("bcsstk13.mtx", "lp_afiro.mtx", "LFAT5_hypersparse.mtx"):
        path = suitesparse_dir / name
        assert path.exists(), f"{path} missing from the shared SuiteSparse set"
        matrix = sp.csr_array(spf.sparse.read_matrix_market(path))
        expected = matrix @ np.linspace(-1.0, 2.0, matrix.shape[1])
        np.testing.assert_allclose(_spmv(fmt, matrix, "int32"), expected, rtol=1e-10, atol=1e-9)


def test_duplicates_summed_in_coo_spmv() -> None:
    coo = sp.coo_array((np.array([1.0, 2.0, 4.0]), (np.array([0, 0, 1]), np.array([1, 1, 0]))))
    y = np.zeros(2)
    args = spf.sparse.coo_args(coo)
    spf.kernels.spmv(COO).compile()(y=y, x=np.array([1.0, 10.0]), **args)
    np.testing.assert_array_equal(y, [30.0, 4.0])


def test_user_format_in_ten_lines() -> None:
    my = spf.Format(
        "MYCSR",
        coords="[i, j]",
        storage="{[i, j] -> [k]: rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
        ufs={"rowptr": spf.UF("rowptr", monotonic="nondecreasing"), "col": spf.UF("col")},
        assume=["forall i, k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) => col(k1) < col(k2)"],
    )
    assert my.loops == ("i", "k", "j")
    matrix = sp.random_array((9, 7), density=0.3, rng=np.random.default_rng(1), format="csr")
    y = np.zeros(9)
    x = np.arange(7.0)
    spf.kernels.spmv(my).compile()(y=y, x=x, **spf.sparse.csr_args(matrix))
    np.testing.assert_allclose(y, matrix @ x)


def test_formats_exported() -> None:
    assert spf.Format is spf.formats.Format
    assert "CSR" in spf.formats.__all__
    assert BCSR(2, 3) is BCSR(2, 3)


@pytest.mark.parametrize(
    ("storage", "message"),
    [
        ("{[i, j] -> [k]: 0 <= k < NNZ && i = row(k)}", "coordinate 'j' is not fixed"),
        ("{[i, j] -> [k, l]: 0 <= k < NNZ && 0 <= l < 4 && i = row(k) && j = col(k)}",
         "not tied"),
        ("{[i, j] -> [k]: i = row(k) && j = col(k)}", "no lower bound"),
        ("{[a, b] -> [k]: 0 <= k < NNZ && a = row(k) && b = col(k)}", "differ from coords"),
        ("{[i, j] -> [k]: 0 <= k < NNZ && i = row(k) && j = other(k)}", "unknown UF .other."),
        ("{[i, j] -> [k]: 0 <= k < NNZ && (i = row(k) || j = col(k))}", "one conjunction"),
        ("not a relation", "storage must read"),
    ],
)  # fmt: skip
def test_bad_relations_refused(storage: str, message: str) -> None:
    with pytest.raises(spf.SpfError, match=message):
        spf.Format("BAD", coords="[i, j]", storage=storage, ufs=[spf.UF("row"), spf.UF("col")])


def test_bad_format_arguments() -> None:
    ok = "{[i, j] -> [k]: 0 <= k < NNZ && i = row(k) && j = col(k)}"
    ufs = [spf.UF("row"), spf.UF("col")]
    with pytest.raises(spf.SpfError, match="ufs key"):
        spf.Format("X", coords="[i, j]", storage=ok, ufs={"r": spf.UF("row"), "col": ufs[1]})
    with pytest.raises(spf.SpfError, match="value"):
        spf.Format("X", coords="[i, j]", storage=ok, ufs=ufs, value="row")
    with pytest.raises(spf.SpfError, match="extents"):
        spf.Format("X", coords="[i, j]", storage=ok, ufs=ufs, value_shape=("N", "M"))
    with pytest.raises(spf.SpfError, match="coords"):
        spf.Format("X", coords="i, j", storage=ok, ufs=ufs)
    with pytest.raises(spf.SpfError, match="positive"):
        BCSR(0, 2)
    with pytest.raises(spf.SpfError, match="multiple of C"):
        SELL(4, 6)
    with pytest.raises(spf.SpfError, match=r"spf\.Format"):
        spf.kernels.spmv("CSR")  # type: ignore[arg-type]
    with pytest.raises(spf.ArgumentError, match="not a built-in"):
        spf.sparse.format_args(sp.eye_array(2), "CSR")


def test_sell_descriptor_matches_sell_inspector() -> None:
    matrix = sp.random_array((40, 30), density=0.2, rng=np.random.default_rng(3), format="csr")
    for c, sigma in ((4, 1), (4, 8)):
        built = spf.formats.sell(c, sigma).inspect_matrix(matrix)
        args = spf.sparse.sell_args(matrix, c, sigma)
        for key in ("cs", "cl", "scol", "val"):
            np.testing.assert_array_equal(args[key], getattr(built, key), err_msg=key)


def test_sell_inspector_output_runs_generated_spmv() -> None:
    matrix = sp.random_array((41, 23), density=0.2, rng=np.random.default_rng(5), format="csr")
    x = np.linspace(-1.0, 1.0, 23)
    for c, sigma in ((4, 1), (4, 8)):
        transform = spf.formats.sell(c, sigma)
        assert transform.format is SELL(c, sigma)
        built = transform.inspect_matrix(matrix)
        y = np.zeros(41)
        kernel = spf.kernels.spmv(transform.format).compile()
        kernel(y=y, x=x, **built.format_args())
        np.testing.assert_allclose(y, matrix @ x)

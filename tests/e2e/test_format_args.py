"""A Format owns its argument packing and its SpMV: ``fmt.args(matrix)`` is exactly what
``spf.kernels.spmv(fmt)`` takes (``spf.sparse.format_args`` is it), for every built-in
format, random and real matrices, empty rows, int32 and int64 indices; the flat blocks of
``spf.sparse.bcsr_args`` are accepted too; ``names={"M": None}`` leaves a size out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, BDIA, COO, CSC, CSR, DIA, ELL, SELL
from spf.runtime import Kernel

if TYPE_CHECKING:
    from pathlib import Path

FORMATS = {
    "COO": COO,
    "CSR": CSR,
    "CSC": CSC,
    "DIA": DIA,
    "ELL": ELL,
    "BCSR2x3": BCSR(2, 3),
    "SELL4_8": SELL(4, 8),
    "BDIA2": BDIA(2),
}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Kernel]:
    """One compiled SpMV per built-in format and index type (built on first use)."""
    return _Kernels(tmp_path_factory.mktemp("format_args"))


class _Kernels(dict[tuple[str, str], Kernel]):
    def __init__(self, cache: Path) -> None:
        super().__init__()
        self.cache = str(cache)

    def __missing__(self, key: tuple[str, str]) -> Kernel:
        name, dtype = key
        kernel = FORMATS[name].spmv(index_dtype=dtype).compile(cache_dir=self.cache)
        self[key] = kernel
        return kernel


def _matrices() -> dict[str, Any]:
    rng = np.random.default_rng(29)
    banded = sp.diags_array(
        [rng.random(36), rng.random(37), rng.random(36)], offsets=[-1, 0, 1], format="lil"
    )
    banded[5, :] = 0.0  # an empty row
    random = sp.random_array((23, 17), density=0.2, rng=rng, format="lil")
    random[[0, 7, 22], :] = 0.0  # empty first, middle and last rows
    return {
        "banded": sp.csr_array(banded),
        "random": sp.csr_array(random),
        "one row": sp.csr_array(np.array([[0.0, 2.0, 0.0, -1.0, 5.0]])),
        "empty": sp.csr_array((6, 5)),
    }


MATRICES = _matrices()


def _spmv(
    kernel: Kernel, fmt: spf.Format, matrix: Any, args: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = fmt.extents(args)
    x = np.zeros(cols)
    x[: matrix.shape[1]] = np.linspace(-1.0, 2.0, matrix.shape[1])
    y = np.zeros(rows)
    kernel(y=y, x=x, **args)
    return y[: matrix.shape[0]], matrix @ x[: matrix.shape[1]]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("name", list(FORMATS))
def test_every_builtin_format_args_run_its_spmv(
    kernels: dict[tuple[str, str], Kernel], name: str, dtype: str
) -> None:
    fmt = FORMATS[name]
    for label, matrix in MATRICES.items():
        args = fmt.args(matrix, dtype)
        index = [v for k, v in args.items() if k in fmt.ufs]
        assert index, name
        assert all(a.dtype == np.dtype(dtype) for a in index), (name, label)
        got, want = _spmv(kernels[name, dtype], fmt, matrix, args)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"{name} {label}")


@pytest.mark.parametrize("name", list(FORMATS))
def test_format_args_is_the_formats_args(name: str) -> None:
    fmt = FORMATS[name]
    matrix = MATRICES["random"]
    mine, theirs = fmt.args(matrix, "int64"), spf.sparse.format_args(matrix, fmt, "int64")
    assert list(mine) == list(theirs)
    for key, value in mine.items():
        np.testing.assert_array_equal(value, theirs[key])
    prefixed = fmt.args(matrix, prefix="B_")
    assert "B" in prefixed
    assert all(k == "B" or k.startswith("B_") for k in prefixed)


def test_real_matrix_through_every_format(
    kernels: dict[tuple[str, str], Kernel], suitesparse_dir: Path
) -> None:
    """A hypersparse 2000 x 2000 matrix: 46 entries, most rows empty."""
    path = suitesparse_dir / "LFAT5_hypersparse.mtx"
    matrix = spf.sparse.read_matrix_market(path)
    for name, fmt in FORMATS.items():
        args = fmt.args(matrix)
        got, want = _spmv(kernels[name, "int32"], fmt, matrix, args)
        np.testing.assert_allclose(got, want, rtol=1e-10, err_msg=f"{name} {path.name}")


def test_spmv_of_bcsr_takes_the_flat_blocks_of_bcsr_args(
    kernels: dict[tuple[str, str], Kernel],
) -> None:
    fmt, matrix = FORMATS["BCSR2x3"], MATRICES["random"]
    flat = spf.sparse.bcsr_args(matrix, 2, 3)
    assert flat["A"].ndim == 1  # the documented layout of bcsr_args stays flat
    got, want = _spmv(kernels["BCSR2x3", "int32"], fmt, matrix, flat)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for check in (False, True):  # again, through the binder's fast path for seen shapes
        again, _ = _spmv(kernels["BCSR2x3", "int32"], fmt, matrix, {**flat, "check": check})
        np.testing.assert_array_equal(again, got)
    rows, cols = fmt.extents(flat)
    y = np.zeros(rows)
    fmt.spmv().interpret(y=y, x=np.ones(cols), **flat)  # the interpreter binds the same way
    np.testing.assert_allclose(y[: matrix.shape[0]], matrix @ np.ones(matrix.shape[1]))
    short = {**flat, "A": flat["A"][:-1].copy()}
    with pytest.raises(spf.ArgumentError, match=r"A: expected shape \(\d+, 2, 3\) or the same "
                       r"blocks flat \(1-d, \d+ elements\), got \d+ elements"):  # fmt: skip
        kernels["BCSR2x3", "int32"](y=np.zeros(rows), x=np.ones(cols), **short)


def test_a_dense_matrix_is_not_taken_flat() -> None:
    """Only blocks of fixed extents may come flat: a dense A[N, M] still wants 2-d."""
    with pytest.raises(spf.ArgumentError, match=r"'A': expected 2-d, got a 1-d"):
        spf.kernels.dense_mv().interpret(y=np.zeros(2), A=np.ones(6), x=np.ones(3))


def test_spmv_csr_family_is_the_formats_spmv() -> None:
    """``spmv_csr`` is CSR's SpMV under its own names, without the sorted-columns fact."""
    for kernel, fmt in ((spf.kernels.spmv_csr, CSR), (spf.kernels.spmv_coo, COO),
                        (spf.kernels.spmv_csc, CSC)):  # fmt: skip
        named = kernel(index_dtype="int64")
        generated = fmt.spmv(index_dtype="int64")
        assert named.name == kernel.__name__
        assert not named.assumptions
        assert [str(s.domain) for s in named.stmts] == [str(s.domain) for s in generated.stmts]
        assert named.ufs.keys() == generated.ufs.keys()


def _square_spmv() -> spf.Computation:
    """A square-matrix SpMV with no ``M``: ``x`` has ``N`` entries too."""
    comp = spf.Computation("square_spmv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.declare_uf("rowptr", domain="{[i]: 0 <= i <= N}", range="{[t]: 0 <= t <= NNZ}",
                    monotonic="nondecreasing")  # fmt: skip
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[t]: 0 <= t < N}")
    comp.add_stmt(spf.Stmt("$y$(i) += $A$(k) * $x$(col(k));",
                           "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}"))  # fmt: skip
    return comp


def test_names_leaves_out_a_size_the_computation_has_not() -> None:
    matrix = spf.sparse.poisson2d(4)
    args = spf.sparse.csr_args(matrix, names={"M": None})
    assert list(args) == ["A", "rowptr", "col", "N", "NNZ"]
    x, y = np.linspace(0.0, 1.0, 16), np.zeros(16)
    _square_spmv().interpret(y=y, x=x, **args)
    np.testing.assert_allclose(y, matrix @ x)
    with pytest.raises(spf.ArgumentError, match=r"names\['col'\] is None, but only a size"):
        spf.sparse.csr_args(matrix, names={"col": None})
    with pytest.raises(spf.ArgumentError, match=r"names\['M'\] must be an identifier \(or None"):
        spf.sparse.csr_args(matrix, names={"M": 3})  # type: ignore[dict-item]


def _my_csr(packer: Any = None) -> spf.Format:
    return spf.Format(
        "MYCSR",
        coords="[i, j]",
        storage="{[i, j] -> [k]: rp(i) <= k < rp(i+1) && j = ci(k)}",
        ufs=[spf.UF("rp", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
                    monotonic="nondecreasing"),
             spf.UF("ci", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")],
        value="vals",
        packer=packer,
    )  # fmt: skip


def _my_packer(matrix: object, index_dtype: object) -> dict[str, Any]:
    return spf.sparse.csr_args(
        matrix, index_dtype, names={"A": "vals", "rowptr": "rp", "col": "ci"}
    )


class _Packed(spf.Format):
    """A Format subclass that packs by overriding ``args``."""

    def args(
        self, matrix: object, index_dtype: object = None, prefix: str | None = None
    ) -> dict[str, Any]:
        return spf.sparse.prefix_args(_my_packer(matrix, index_dtype), prefix, "MYCSR")


def test_formats_of_your_own_pack_through_format_args() -> None:
    matrix = MATRICES["random"]
    x = np.linspace(-1.0, 1.0, matrix.shape[1])
    plain = _my_csr()
    subclass = _Packed("MYCSR", coords="[i, j]", storage=plain.storage, ufs=plain.ufs,
                       value="vals")  # fmt: skip
    for fmt in (_my_csr(_my_packer), subclass):
        args = spf.sparse.format_args(matrix, fmt, "int64")
        assert args["rp"].dtype == np.int64
        y = np.zeros(matrix.shape[0])
        spf.kernels.spmv(fmt).interpret(y=y, x=x, **args)
        np.testing.assert_allclose(y, matrix @ x)
    with pytest.raises(spf.ArgumentError, match=r"not a built-in format .*BDIA\(R\).*packer="):
        spf.sparse.format_args(matrix, plain)
    with pytest.raises(spf.SpfError, match="packer must be a function"):
        _my_csr(packer=3)

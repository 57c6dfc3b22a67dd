"""Empty inputs everywhere (issue 27 item 3): every kernel of ``spf.kernels`` and every
conversion ``spf.formats.convert`` synthesizes runs on matrices without entries (``N x M``
with ``N, M > 0``; ``0 x 0``, ``0 x M`` and ``N x 0`` where the shapes allow) and on 0-length
arrays, and gives what scipy / numpy give."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, BDIA, COO, CSC, CSR, DIA, ELL, SELL, Format, convert

SHAPES = [(5, 4), (0, 0), (0, 3), (3, 0)]
SINGLE = [COO, CSR, CSC]
STORED = [DIA, ELL, BCSR(2, 3), SELL(4, 1), SELL(4, 8), BDIA(2)]
PAIRS = (
    [(s, d) for s in SINGLE for d in (COO, CSR, CSC, DIA, ELL, SELL(4, 1), SELL(4, 8))]
    + [(CSR, BCSR(2, 3))]
    + [(s, d) for s in STORED for d in (COO, CSR, CSC)]
)

_CONVERSIONS: dict[tuple[str, str], Any] = {}


def _conversion(src: Format, dst: Format) -> Any:
    if (src.name, dst.name) not in _CONVERSIONS:
        _CONVERSIONS[src.name, dst.name] = convert(src, dst).compile()
    return _CONVERSIONS[src.name, dst.name]


def _recorded_shape(src: Format, args: dict[str, Any], shape: tuple[int, int]) -> tuple[int, int]:
    """The matrix shape the source's arrays record (BCSR: whole blocks)."""
    if src.name.startswith("BCSR"):
        return 2 * args["NB"], 3 * args["MB"]
    return shape


@pytest.mark.parametrize(("src", "dst"), PAIRS, ids=lambda f: f.name)
def test_conversion_of_empty_matrices_matches_scipy(src: Format, dst: Format) -> None:
    kernel = _conversion(src, dst)
    for shape in SHAPES:
        args = spf.sparse.format_args(sp.csr_array(shape), src, "int32")
        out = kernel(**args)
        want = spf.sparse.format_args(sp.csr_array(_recorded_shape(src, args, shape)), dst, "int32")
        assert set(want) <= set(out), (shape, sorted(out))
        for key, value in want.items():
            got = out[key]
            if isinstance(value, int):
                assert got == value, (shape, key)
                continue
            assert np.asarray(got).dtype == value.dtype, (shape, key)
            assert np.array_equal(np.asarray(got).reshape(-1), value.reshape(-1)), (shape, key)


# ------------------------------------------------------------------------------ kernels
def _y(n: int) -> np.ndarray[Any, Any]:
    return np.random.default_rng(n).standard_normal(n)


def _spmv_case(comp: spf.Computation, args: Callable[[Any], dict[str, Any]], m: Any) -> Any:
    """``comp(y=y0, x=x, **args(m))`` leaves ``y0 + m @ x`` (scipy's product) in ``y``."""
    a = args(m)
    rows = a["NB"] * 2 if "NB" in a and "browptr" in a else m.shape[0]
    cols = a["MB"] * 2 if "MB" in a and "browptr" in a else m.shape[1]
    y0, x = _y(rows), _y(cols) + 1.0
    y = y0.copy()
    comp.compile()(y=y, x=x, **a)
    want = y0.copy()
    want[: m.shape[0]] += m @ x[: m.shape[1]]
    return np.array_equal(y, want)


SPMV = [
    ("spmv_csr", spf.kernels.spmv_csr, spf.sparse.csr_args),
    ("spmv_coo", spf.kernels.spmv_coo, spf.sparse.coo_args),
    ("spmv_csc", spf.kernels.spmv_csc, spf.sparse.csc_args),
    ("spmv_bcsr", lambda: spf.kernels.spmv_bcsr(2, 2), lambda m: spf.sparse.bcsr_args(m, 2, 2)),
] + [
    (
        f"spmv({f.name})",
        lambda f=f: spf.kernels.spmv(f),
        lambda m, f=f: spf.sparse.format_args(m, f),
    )
    for f in (COO, CSR, CSC, DIA, ELL, BCSR(2, 2), SELL(4, 1), SELL(4, 8), BDIA(2))
]


@pytest.mark.parametrize(("make", "args"), [(c[1], c[2]) for c in SPMV], ids=[c[0] for c in SPMV])
def test_spmv_kernels_on_empty_matrices_match_scipy(
    make: Callable[[], spf.Computation], args: Callable[[Any], dict[str, Any]]
) -> None:
    comp = make()
    for shape in SHAPES:
        assert _spmv_case(comp, args, sp.csr_array(shape)), shape


def test_spmtv_on_empty_matrices_matches_scipy() -> None:
    kernel = spf.kernels.spmtv_csr().compile()
    for n, m in SHAPES:
        a = sp.csr_array((n, m))
        y0, x = _y(m), _y(n)
        y = y0.copy()
        kernel(y=y, x=x, **spf.sparse.csr_args(a))
        assert np.array_equal(y, y0 + a.T @ x)


def test_dense_kernels_on_zero_extents_match_numpy() -> None:
    mv, mm = spf.kernels.dense_mv().compile(), spf.kernels.gemm().compile()
    rng = np.random.default_rng(0)
    for n, m in [*SHAPES, (4, 0)]:
        a, x, y0 = rng.standard_normal((n, m)), rng.standard_normal(m), _y(n)
        y = y0.copy()
        mv(y=y, A=a, x=x, N=n, M=m)
        assert np.allclose(y, y0 + a @ x, rtol=1e-14, atol=1e-14)
        for k in (0, 3):
            b, c0 = rng.standard_normal((n, k)), rng.standard_normal((n, m))
            d = rng.standard_normal((k, m))
            c = c0.copy()
            mm(C=c, A=b, B=d, N=n, M=m, K=k)
            assert np.allclose(c, c0 + b @ d, rtol=1e-14, atol=1e-14)


def test_spmm_on_empty_matrices_matches_scipy() -> None:
    kernel = spf.kernels.spmm_csr().compile()
    for n, m in SHAPES:
        a = sp.csr_array((n, m))
        for k in (0, 2):
            b, c0 = np.ones((m, k)), np.full((n, k), 2.0)
            c = c0.copy()
            kernel(C=c, B=b, K=k, **spf.sparse.spmm_args(a))
            assert np.array_equal(c, c0 + a @ b)


def test_spgemm_on_empty_matrices_matches_scipy() -> None:
    kernel = spf.kernels.spgemm_csr().compile()
    i32 = np.int32
    for n, k in SHAPES:
        for m in (0, 3):
            a, b = sp.csr_array((n, k)), sp.csr_array((k, m))
            out = kernel(A_rowptr=a.indptr.astype(i32), A_col=a.indices.astype(i32), A=a.data,
                         B_rowptr=b.indptr.astype(i32), B_col=b.indices.astype(i32), B=b.data,
                         N=n, K=k, M=m)  # fmt: skip
            c = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=(n, m))
            assert c.nnz == 0
            assert np.array_equal(out["rowptr"], (a @ b).indptr)


@pytest.mark.parametrize("name", ["sptrsv_csr", "gauss_seidel_csr", "ilu0_csr"])
def test_triangular_and_diagonal_kernels_on_0x0(name: str) -> None:
    """They need a diagonal entry per row: the empty matrix they take is 0 x 0."""
    empty = sp.csr_array((0, 0))
    comp = getattr(spf.kernels, name)()
    if name == "sptrsv_csr":
        u = np.zeros(0)
        comp.compile()(u=u, f=np.zeros(0), **spf.sparse.sptrsv_args(empty))
        assert u.shape == (0,)
    elif name == "gauss_seidel_csr":
        x = np.zeros(0)
        comp.compile()(x=x, b=np.zeros(0), **spf.sparse.gauss_seidel_args(empty))
        assert x.shape == (0,)
    else:
        args = spf.sparse.ilu0_args(empty)
        comp.compile()(**args)
        assert args["A"].shape == (0,)


def test_stencils_with_empty_interiors_match_numpy() -> None:
    blur, jacobi = spf.kernels.blur2d().compile(), spf.kernels.jacobi2d().compile()
    rng = np.random.default_rng(1)
    for n, m in ((2, 2), (2, 5), (5, 2)):
        img = rng.standard_normal((n, m))
        out, bx = np.zeros((n - 2, m - 2)), np.zeros((n, m - 2))
        blur(out=out, bx=bx, img=img, N=n, M=m)
        assert out.shape == (n - 2, m - 2)
        assert np.allclose(bx, (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3)
    for n in (0, 1, 2):
        a, b = rng.standard_normal((n, n)), np.full((n, n), 7.0)
        jacobi(B=b, A=a, N=n)
        assert np.array_equal(b, np.full((n, n), 7.0))

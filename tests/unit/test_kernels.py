"""Unit tests of ``spf.kernels`` (the ready-made computations) and ``spf.sparse`` helpers.

Every kernel is checked for the binding names of API.md section 9 (data spaces in order with
shapes, parameters, UFs and their facts, loops of the main statement, identity schedule) and
run through the reference interpreter on tiny inputs against numpy / scipy.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import kernels
from spf.errors import ArgumentError, SpfError
from spf.sparse import (
    bcsr_args,
    coo_args,
    csc_args,
    csr_args,
    poisson2d,
    read_matrix_market,
    spmm_args,
    sptrsv_args,
)
from spf.testing import random_csr

if TYPE_CHECKING:
    from pathlib import Path

RNG_SEED = 20240611

# ====================================================================== structure (section 9)
PTR = "nondecreasing"


def uf(name: str, domain: str, rng: str, mono: str | None = None, dtype: str = "int32") -> spf.UF:
    return spf.UF(name, domain=domain, range=rng, monotonic=mono, dtype=dtype)  # type: ignore[arg-type]


CSR_UFS = {
    "rowptr": uf("rowptr", "{[i]: 0 <= i <= N}", "{[v]: 0 <= v <= NNZ}", PTR),
    "col": uf("col", "{[k]: 0 <= k < NNZ}", "{[v]: 0 <= v < M}"),
}

# factory, name, data spaces (ordered, with shapes), params, UFs, main stmt, loops, schedule
STRUCTURE: list[
    tuple[
        Callable[[], spf.Computation],
        str,
        list[tuple[str, tuple[str, ...]]],
        set[str],
        dict[str, spf.UF],
        int,
        tuple[str, ...],
        str,
    ]
] = [
    (
        kernels.dense_mv,
        "dense_mv",
        [("y", ("N",)), ("A", ("N", "M")), ("x", ("M",))],
        {"N", "M"},
        {},
        0,
        ("i", "j"),
        "{[i,j] -> [0,i,0,j,0]}",
    ),
    (
        kernels.gemm,
        "gemm",
        [("C", ("N", "M")), ("A", ("N", "K")), ("B", ("K", "M"))],
        {"N", "M", "K"},
        {},
        0,
        ("i", "j", "k"),
        "{[i,j,k] -> [0,i,0,j,0,k,0]}",
    ),
    (
        kernels.spmv_csr,
        "spmv_csr",
        [("y", ("N",)), ("A", ("NNZ",)), ("x", ("M",))],
        {"N", "M", "NNZ"},
        CSR_UFS,
        0,
        ("i", "k", "j"),
        "{[i,k,j] -> [0,i,0,k,0,j,0]}",
    ),
    (
        kernels.spmv_coo,
        "spmv_coo",
        [("y", ("N",)), ("A", ("NNZ",)), ("x", ("M",))],
        {"N", "M", "NNZ"},
        {
            "row": uf("row", "{[k]: 0 <= k < NNZ}", "{[v]: 0 <= v < N}"),
            "col": uf("col", "{[k]: 0 <= k < NNZ}", "{[v]: 0 <= v < M}"),
        },
        0,
        ("k", "i", "j"),
        "{[k,i,j] -> [0,k,0,i,0,j,0]}",
    ),
    (
        kernels.spmv_csc,
        "spmv_csc",
        [("y", ("N",)), ("A", ("NNZ",)), ("x", ("M",))],
        {"N", "M", "NNZ"},
        {
            "colptr": uf("colptr", "{[i]: 0 <= i <= M}", "{[v]: 0 <= v <= NNZ}", PTR),
            "row": uf("row", "{[k]: 0 <= k < NNZ}", "{[v]: 0 <= v < N}"),
        },
        0,
        ("j", "k", "i"),
        "{[j,k,i] -> [0,j,0,k,0,i,0]}",
    ),
    (
        lambda: kernels.spmv_bcsr(2, 3),
        "spmv_bcsr_2x3",
        [("y", ("NB*2",)), ("A", ("NNZB*6",)), ("x", ("MB*3",))],
        {"NB", "MB", "NNZB"},
        {
            "browptr": uf("browptr", "{[i]: 0 <= i <= NB}", "{[v]: 0 <= v <= NNZB}", PTR),
            "bcol": uf("bcol", "{[k]: 0 <= k < NNZB}", "{[v]: 0 <= v < MB}"),
        },
        0,
        ("i", "k", "j", "ii", "jj"),
        "{[i,k,j,ii,jj] -> [0,i,0,k,0,j,0,ii,0,jj,0]}",
    ),
    (
        kernels.sptrsv_csr,
        "sptrsv_csr",
        [("u", ("N",)), ("L", ("NNZ",)), ("f", ("N",))],
        {"N", "NNZ"},
        {
            "rowptr": CSR_UFS["rowptr"],
            "col": uf("col", "{[k]: 0 <= k < NNZ}", "{[v]: 0 <= v < N}"),
        },
        1,
        ("i", "k", "j"),
        "{[i,k,j] -> [0,i,1,k,0,j,0]}",
    ),
    (
        kernels.spmm_csr,
        "spmm_csr",
        [("C", ("N", "K")), ("A", ("NNZ",)), ("B", ("M", "K"))],
        {"N", "M", "K", "NNZ"},
        CSR_UFS,
        0,
        ("i", "k", "j", "c"),
        "{[i,k,j,c] -> [0,i,0,k,0,j,0,c,0]}",
    ),
    (
        kernels.blur2d,
        "blur2d",
        [("out", ("N-2", "M-2")), ("bx", ("N", "M-2")), ("img", ("N", "M"))],
        {"N", "M"},
        {},
        0,
        ("i", "j"),
        "{[i,j] -> [0,i,0,j,0]}",
    ),
    (
        kernels.jacobi2d,
        "jacobi2d",
        [("B", ("N", "N")), ("A", ("N", "N"))],
        {"N"},
        {},
        0,
        ("i", "j"),
        "{[i,j] -> [0,i,0,j,0]}",
    ),
]
IDS = [row[1] for row in STRUCTURE]


@pytest.mark.parametrize(
    ("factory", "name", "spaces", "params", "ufs", "main", "loops", "schedule"),
    STRUCTURE,
    ids=IDS,
)
def test_structure(
    factory: Callable[[], spf.Computation],
    name: str,
    spaces: list[tuple[str, tuple[str, ...]]],
    params: set[str],
    ufs: dict[str, spf.UF],
    main: int,
    loops: tuple[str, ...],
    schedule: str,
) -> None:
    comp = factory()
    assert isinstance(comp, spf.Computation)
    assert comp.name == name
    assert [(n, ds.shape) for n, ds in comp.data_spaces.items()] == spaces
    assert all(ds.ctype == "double" for ds in comp.data_spaces.values())
    assert all(
        ds.rank == len(shape)
        for (_, shape), ds in zip(spaces, comp.data_spaces.values(), strict=True)
    )
    assert comp.params == frozenset(params)
    assert comp.ufs == ufs
    stmt = comp.stmts[main]
    assert stmt.loops == loops
    assert stmt.schedule == spf.Relation(schedule)
    assert comp.return_values == ()


@pytest.mark.parametrize("factory", [row[0] for row in STRUCTURE], ids=IDS)
def test_fresh_legal_and_serializable(factory: Callable[[], spf.Computation]) -> None:
    a, b = factory(), factory()
    assert a is not b
    a.add_data_space("extra", "double", shape=(3,))
    assert "extra" not in b.data_spaces  # b is untouched
    b.check_legality()  # the default schedule is legal
    assert spf.Computation.from_json(b.to_json()).to_json() == b.to_json()


def test_statement_sources() -> None:
    assert kernels.spmv_csr().stmts[0].domain == spf.Set(
        "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
    )
    trsv = kernels.sptrsv_csr()
    assert [s.name for s in trsv.stmts] == ["s0", "s1", "s2"]
    assert [s.loops for s in trsv.stmts] == [("i",), ("i", "k", "j"), ("i", "k")]
    blur = kernels.blur2d()
    assert [s.loops for s in blur.stmts] == [("i", "j"), ("i", "j")]
    assert [w[0] for s in blur.stmts for w in s.writes] == ["bx", "out"]
    assert blur.stmts[1].schedule == spf.Relation("{[i,j] -> [1,i,0,j,0]}")


@pytest.mark.parametrize(
    "factory",
    [
        kernels.spmv_csr,
        kernels.spmv_coo,
        kernels.spmv_csc,
        kernels.sptrsv_csr,
        kernels.spmm_csr,
        lambda **kw: kernels.spmv_bcsr(2, 2, **kw),
    ],
)
def test_index_dtype(factory: Callable[..., spf.Computation]) -> None:
    assert {u.dtype for u in factory().ufs.values()} == {"int32"}
    assert {u.dtype for u in factory(index_dtype="int64").ufs.values()} == {"int64"}
    with pytest.raises(SpfError, match="index_dtype"):
        factory(index_dtype="int16")


@pytest.mark.parametrize(("r", "c"), [(0, 1), (1, -2), (True, 2), (2.0, 2), ("2", 2)])
def test_bcsr_bad_block_size(r: Any, c: Any) -> None:
    with pytest.raises(SpfError, match="block size"):
        kernels.spmv_bcsr(r, c)


def test_bcsr_names() -> None:
    assert kernels.spmv_bcsr(1, 1).name == "spmv_bcsr_1x1"
    assert kernels.spmv_bcsr(4, 2).name == "spmv_bcsr_4x2"
    assert "8*k + 2*ii + jj" in kernels.spmv_bcsr(4, 2).stmts[0].source


# ====================================================================== inputs and helpers
def rng() -> np.random.Generator:
    return np.random.default_rng(RNG_SEED)


def shuffle_within(
    ptr: np.ndarray, idx: np.ndarray, vals: np.ndarray, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Permute the entries of every compressed row / column (unsorted indices)."""
    gen = np.random.default_rng(seed)
    idx, vals = idx.copy(), vals.copy()
    for r in range(len(ptr) - 1):
        lo, hi = int(ptr[r]), int(ptr[r + 1])
        perm = lo + gen.permutation(hi - lo)
        idx[lo:hi], vals[lo:hi] = idx[perm], vals[perm]
    return idx, vals


MATRICES = {
    "random_empty_rows": lambda: random_csr(7, 5, 0.5, 1, empty_rows=(0, 3, 6)),
    "one_row": lambda: random_csr(1, 6, 0.7, 2),
    "one_col": lambda: random_csr(6, 1, 0.7, 3),
    "no_entries": lambda: sp.csr_array((4, 3)),
    "dense_ish": lambda: random_csr(5, 5, 0.9, 4),
    "tall": lambda: random_csr(11, 3, 0.4, 5),
}


def allclose(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-12, atol=1e-12))


# ============================================================================== interpreting
def test_dense_mv_interpret() -> None:
    g = rng()
    A, x, y0 = g.standard_normal((5, 4)), g.standard_normal(4), g.standard_normal(5)
    y = y0.copy()
    kernels.dense_mv().interpret(y=y, A=A, x=x)
    assert allclose(y, y0 + A @ x)  # accumulates


def test_gemm_interpret() -> None:
    g = rng()
    A, B, C0 = g.standard_normal((3, 4)), g.standard_normal((4, 5)), g.standard_normal((3, 5))
    C = C0.copy()
    kernels.gemm().interpret(C=C, A=A, B=B, N=3, M=5, K=4)
    assert allclose(C, C0 + A @ B)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("key", list(MATRICES))
def test_spmv_csr_interpret(key: str, index_dtype: str) -> None:
    m = MATRICES[key]()
    args = csr_args(m, index_dtype=index_dtype)
    assert args["rowptr"].dtype == args["col"].dtype == np.dtype(index_dtype)
    g = rng()
    x, y0 = g.standard_normal(m.shape[1]), g.standard_normal(m.shape[0])
    y = y0.copy()
    kernels.spmv_csr(index_dtype=index_dtype).interpret(y=y, x=x, **args)
    assert allclose(y, y0 + m @ x)


def test_spmv_csr_unsorted_and_duplicate_columns() -> None:
    m = random_csr(8, 6, 0.6, 7, empty_rows=(2,))
    args = csr_args(m)
    col, A = shuffle_within(args["rowptr"], args["col"], args["A"], 8)
    assert not np.array_equal(col, args["col"])
    x = rng().standard_normal(6)
    y = np.zeros(8)
    kernels.spmv_csr().interpret(y=y, x=x, **(args | {"col": col, "A": A}))
    assert allclose(y, m @ x)
    # duplicate column entries in one row are summed by the kernel
    y = np.zeros(2)
    kernels.spmv_csr().interpret(
        y=y,
        x=np.array([1.0, 10.0]),
        A=np.array([1.0, 2.0, 4.0]),
        rowptr=np.array([0, 0, 3]),
        col=np.array([1, 0, 1]),
        N=2,
        M=2,
        NNZ=3,
    )
    assert y.tolist() == [0.0, 52.0]


def test_spmv_csr_empty_shapes() -> None:
    y = np.zeros(0)
    kernels.spmv_csr().interpret(y=y, x=np.zeros(0), **csr_args(sp.csr_array((0, 0))))
    y = np.ones(3)
    kernels.spmv_csr().interpret(y=y, x=np.ones(0), **csr_args(sp.csr_array((3, 0))))
    assert y.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("key", list(MATRICES))
def test_spmv_coo_interpret(key: str, index_dtype: str) -> None:
    m = MATRICES[key]()
    args = coo_args(m, index_dtype=index_dtype)
    perm = np.random.default_rng(9).permutation(args["NNZ"])  # any entry order
    args |= {"A": args["A"][perm], "row": args["row"][perm], "col": args["col"][perm]}
    x = rng().standard_normal(m.shape[1])
    y = np.zeros(m.shape[0])
    kernels.spmv_coo(index_dtype=index_dtype).interpret(y=y, x=x, **args)
    assert allclose(y, m @ x)


def test_spmv_coo_duplicates() -> None:
    m = sp.coo_array(
        (np.array([1.0, 2.0, 3.0, 0.0]), (np.array([1, 1, 0, 2]), np.array([0, 0, 2, 1]))),
        shape=(3, 3),
    )
    args = coo_args(m)
    assert args["NNZ"] == 4  # duplicates and the explicit zero are kept
    y = np.zeros(3)
    x = np.array([1.0, 2.0, 3.0])
    kernels.spmv_coo().interpret(y=y, x=x, **args)
    assert y.tolist() == [9.0, 3.0, 0.0]


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("key", list(MATRICES))
def test_spmv_csc_interpret(key: str, index_dtype: str) -> None:
    m = MATRICES[key]()
    args = csc_args(m, index_dtype=index_dtype)
    row, A = shuffle_within(args["colptr"], args["row"], args["A"], 10)  # unsorted rows
    x = rng().standard_normal(m.shape[1])
    y0 = rng().standard_normal(m.shape[0])
    y = y0.copy()
    kernels.spmv_csc(index_dtype=index_dtype).interpret(y=y, x=x, **(args | {"row": row, "A": A}))
    assert allclose(y, y0 + m @ x)


@pytest.mark.parametrize(("r", "c"), [(1, 1), (2, 3), (3, 2), (4, 4)])
@pytest.mark.parametrize("key", ["random_empty_rows", "one_row", "no_entries", "tall"])
def test_spmv_bcsr_interpret(key: str, r: int, c: int) -> None:
    m = MATRICES[key]()
    n, cols = m.shape
    args = bcsr_args(m, r, c)
    nb, mb = args["NB"], args["MB"]
    assert (nb, mb) == (-(-n // r), -(-cols // c))
    x = np.zeros(mb * c)
    x[:cols] = rng().standard_normal(cols)
    y = np.zeros(nb * r)
    kernels.spmv_bcsr(r, c).interpret(y=y, x=x, **args)
    assert allclose(y[:n], m @ x[:cols])
    assert not y[n:].any()


def test_spmv_bcsr_unsorted_blocks_int64() -> None:
    m = random_csr(6, 7, 0.5, 11)
    args = bcsr_args(m, 2, 2, index_dtype="int64")
    assert args["browptr"].dtype == np.int64
    blocks = args["A"].reshape(-1, 4)
    bcol, perm_blocks = shuffle_within(args["browptr"], args["bcol"], np.arange(args["NNZB"]), 12)
    args |= {"bcol": bcol, "A": np.ascontiguousarray(blocks[perm_blocks].reshape(-1))}
    x = np.zeros(8)
    x[:7] = rng().standard_normal(7)
    y = np.zeros(6)
    kernels.spmv_bcsr(2, 2, index_dtype="int64").interpret(y=y, x=x, **args)
    assert allclose(y, m @ x[:7])


def lower_triangular(n: int, density: float, seed: int) -> Any:
    gen = np.random.default_rng(seed)
    dense = np.tril(np.where(gen.random((n, n)) < density, gen.standard_normal((n, n)), 0.0), -1)
    dense += np.diag(2.0 + gen.random(n))
    return sp.csr_array(dense)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize(
    ("n", "density", "seed"), [(1, 0.0, 1), (6, 0.5, 2), (9, 0.3, 3), (5, 0.0, 4), (7, 1.0, 5)]
)
def test_sptrsv_interpret(n: int, density: float, seed: int, index_dtype: str) -> None:
    L = lower_triangular(n, density, seed)
    f = rng().standard_normal(n)
    u = np.full(n, np.nan)  # fully overwritten
    kernels.sptrsv_csr(index_dtype=index_dtype).interpret(
        u=u, f=f, **sptrsv_args(L, index_dtype=index_dtype)
    )
    assert allclose(u, np.linalg.solve(L.toarray(), f))


def test_sptrsv_empty() -> None:
    u = np.zeros(0)
    kernels.sptrsv_csr().interpret(u=u, f=np.zeros(0), **sptrsv_args(sp.csr_array((0, 0))))


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("key", ["random_empty_rows", "one_row", "no_entries", "tall"])
def test_spmm_interpret(key: str, index_dtype: str) -> None:
    m = MATRICES[key]()
    n, cols = m.shape
    args = spmm_args(m, index_dtype=index_dtype)
    col, A = shuffle_within(args["rowptr"], args["col"], args["A"], 13)
    g = rng()
    B, C0 = g.standard_normal((cols, 3)), g.standard_normal((n, 3))
    C = C0.copy()
    kernels.spmm_csr(index_dtype=index_dtype).interpret(C=C, B=B, **(args | {"col": col, "A": A}))
    assert allclose(C, C0 + m @ B)


@pytest.mark.parametrize(("n", "m"), [(3, 3), (5, 7), (6, 4)])
def test_blur2d_interpret(n: int, m: int) -> None:
    img = rng().standard_normal((n, m))
    out, bx = np.zeros((n - 2, m - 2)), np.zeros((n, m - 2))
    kernels.blur2d().interpret(out=out, bx=bx, img=img)
    want_bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    assert allclose(bx, want_bx)
    assert allclose(out, (want_bx[:-2] + want_bx[1:-1] + want_bx[2:]) / 3)


@pytest.mark.parametrize("n", [2, 3, 6])
def test_jacobi2d_interpret(n: int) -> None:
    g = rng()
    A, B0 = g.standard_normal((n, n)), g.standard_normal((n, n))
    B = B0.copy()
    kernels.jacobi2d().interpret(B=B, A=A)
    want = B0.copy()
    want[1:-1, 1:-1] = 0.2 * (
        A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
    )
    assert allclose(B, want)  # the border is untouched


# ===================================================================== real matrices (mtx)
@pytest.mark.parametrize(
    "name", ["karate.mtx", "west0067.mtx", "lp_afiro.mtx", "LFAT5_hypersparse.mtx", "olm1000.mtx"]
)
def test_spmv_csr_suitesparse(suitesparse_dir: Path, name: str) -> None:
    path = suitesparse_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    m = read_matrix_market(path)
    assert isinstance(m, sp.csr_array)
    assert m.dtype == np.float64
    assert m.has_canonical_format
    x = rng().standard_normal(m.shape[1])
    y = np.zeros(m.shape[0])
    kernels.spmv_csr().interpret(y=y, x=x, **csr_args(m))
    assert np.allclose(y, m @ x, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize(
    ("factory", "to_args"),
    [(kernels.spmv_coo, coo_args), (kernels.spmv_csc, csc_args)],
    ids=["coo", "csc"],
)
def test_spmv_formats_suitesparse(
    suitesparse_dir: Path,
    factory: Callable[[], spf.Computation],
    to_args: Callable[[Any], dict[str, Any]],
) -> None:
    path = suitesparse_dir / "west0067.mtx"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    m = read_matrix_market(path)
    x = rng().standard_normal(m.shape[1])
    y = np.zeros(m.shape[0])
    factory().interpret(y=y, x=x, **to_args(m))
    assert np.allclose(y, m @ x, rtol=1e-12, atol=1e-10)


def test_read_matrix_market_expands_symmetric_pattern(suitesparse_dir: Path) -> None:
    path = suitesparse_dir / "karate.mtx"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    m = read_matrix_market(path)
    assert m.shape == (34, 34)
    assert m.nnz == 156
    assert (m != m.T).nnz == 0
    assert set(np.unique(m.data).tolist()) == {1.0}


# ============================================================================ spf.sparse
def test_csr_args_layout_and_copy() -> None:
    m = sp.coo_array(
        (np.array([1, 2, 0, 5, 7]), (np.array([2, 0, 1, 0, 2]), np.array([0, 3, 1, 3, 0]))),
        shape=(3, 4),
    )  # integer values, duplicates at (0, 3) and (2, 0), an explicit zero at (1, 1)
    before = (m.data.copy(), m.row.copy(), m.col.copy())
    args = csr_args(m)
    assert set(args) == {"A", "rowptr", "col", "N", "M", "NNZ"}
    assert args["A"].dtype == np.float64
    assert args["A"].flags.c_contiguous
    assert args["A"].tolist() == [7.0, 0.0, 8.0]
    assert args["rowptr"].tolist() == [0, 1, 2, 3]
    assert args["rowptr"].dtype == np.int32
    assert args["col"].tolist() == [3, 1, 0]
    assert args["col"].dtype == np.int32
    assert (args["N"], args["M"], args["NNZ"]) == (3, 4, 3)
    assert all(type(args[k]) is int for k in ("N", "M", "NNZ"))
    assert all(np.array_equal(a, b) for a, b in zip(before, (m.data, m.row, m.col), strict=True))
    # a CSR input with duplicates is not modified either
    c = sp.csr_array((np.array([1.0, 2.0]), np.array([0, 0]), np.array([0, 2])), shape=(1, 1))
    assert csr_args(c)["A"].tolist() == [3.0]
    assert c.data.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "convert",
    [
        sp.csr_matrix,
        sp.csc_array,
        sp.coo_matrix,
        sp.lil_array,
        sp.dok_matrix,
        sp.bsr_array,
        np.asarray,
        lambda d: d.tolist(),
    ],
)
def test_helpers_accept_any_format(convert: Callable[[Any], Any]) -> None:
    dense = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [3.0, 4.0, 0.0]])
    ref = csr_args(sp.csr_array(dense))
    got = csr_args(convert(dense))
    assert all(np.array_equal(ref[k], got[k]) for k in ref)
    assert csc_args(convert(dense))["colptr"].tolist() == [0, 2, 3, 4]
    assert coo_args(convert(dense))["NNZ"] == 4
    assert spmm_args(convert(dense))["NNZ"] == 4


def test_csc_args_layout() -> None:
    dense = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    args = csc_args(sp.coo_array(dense))
    assert set(args) == {"A", "colptr", "row", "N", "M", "NNZ"}
    assert args["colptr"].tolist() == [0, 1, 1, 3]
    assert args["row"].tolist() == [0, 0, 1]
    assert args["A"].tolist() == [1.0, 2.0, 3.0]
    assert (args["N"], args["M"], args["NNZ"]) == (2, 3, 3)


def test_bcsr_args_layout() -> None:
    dense = np.arange(1.0, 16.0).reshape(3, 5)
    dense[:2, 2:4] = 0.0  # block (0, 1) of 2x2 blocks is empty
    args = bcsr_args(sp.csr_array(dense), 2, 2)
    assert set(args) == {"A", "browptr", "bcol", "NB", "MB", "NNZB"}
    assert (args["NB"], args["MB"], args["NNZB"]) == (2, 3, 5)
    assert args["browptr"].tolist() == [0, 2, 5]
    assert args["bcol"].tolist() == [0, 2, 0, 1, 2]
    padded = np.zeros((4, 6))
    padded[:3, :5] = dense
    blocks = args["A"].reshape(-1, 2, 2)
    for bi in range(2):
        for k in range(args["browptr"][bi], args["browptr"][bi + 1]):
            bj = args["bcol"][k]
            assert np.array_equal(blocks[k], padded[2 * bi : 2 * bi + 2, 2 * bj : 2 * bj + 2])
    with pytest.raises(ArgumentError, match="block size R"):
        bcsr_args(sp.csr_array(dense), 0, 2)
    with pytest.raises(ArgumentError, match="block size C"):
        bcsr_args(sp.csr_array(dense), 2, 1.5)  # type: ignore[arg-type]


def test_index_dtype_options() -> None:
    m = sp.eye_array(3, format="csr")
    assert csr_args(m, index_dtype=np.int64)["col"].dtype == np.int64
    assert csc_args(m, index_dtype="int64")["row"].dtype == np.int64
    assert coo_args(m, index_dtype="int64")["row"].dtype == np.int64
    assert bcsr_args(m, 2, 2, index_dtype="int64")["bcol"].dtype == np.int64
    assert sptrsv_args(m, index_dtype="int64")["rowptr"].dtype == np.int64
    for bad in ("int16", "float64", "nope", 3.5):
        with pytest.raises(SpfError, match="index_dtype"):
            csr_args(m, index_dtype=bad)


def test_helper_argument_errors() -> None:
    with pytest.raises(ArgumentError, match=r"scipy\.sparse matrix"):
        csr_args("not a matrix")
    with pytest.raises(ArgumentError, match="2-D"):
        coo_args(np.ones(3))
    with pytest.raises(ArgumentError, match="complex"):
        csr_args(sp.csr_array(np.array([[1j]])))


@pytest.mark.parametrize(
    ("dense", "message"),
    [
        (np.ones((2, 3)), "square"),
        (np.array([[1.0, 2.0], [0.0, 1.0]]), r"not lower triangular: entry \(0, 1\)"),
        (np.array([[1.0, 0.0], [1.0, 0.0]]), r"L\[1, 1\] is missing"),
        (np.zeros((1, 1)), r"L\[0, 0\] is missing"),
    ],
)
def test_sptrsv_args_errors(dense: np.ndarray, message: str) -> None:
    with pytest.raises(SpfError, match=message):
        sptrsv_args(sp.csr_array(dense))


def test_sptrsv_args_zero_diagonal() -> None:
    explicit = sp.csr_array(
        (np.array([1.0, 0.0]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2)
    )
    with pytest.raises(SpfError, match=r"L\[1, 1\] is zero"):
        sptrsv_args(explicit)
    cancelling = sp.coo_array(
        (np.array([1.0, -1.0]), (np.array([0, 0]), np.array([0, 0]))), shape=(1, 1)
    )
    with pytest.raises(SpfError, match=r"L\[0, 0\] is zero"):
        sptrsv_args(cancelling)


def test_sptrsv_args_sorts_diagonal_last() -> None:
    # row 1 stored as (1,1), (1,0): unsorted input comes out sorted, the diagonal last
    L = sp.csr_array(
        (np.array([2.0, 4.0, 1.0]), np.array([0, 1, 0]), np.array([0, 1, 3])), shape=(2, 2)
    )
    args = sptrsv_args(L)
    assert set(args) == {"L", "rowptr", "col", "N", "NNZ"}
    assert args["col"].tolist() == [0, 0, 1]
    assert args["L"].tolist() == [2.0, 1.0, 4.0]
    # an explicitly stored zero below the diagonal is kept
    Z = sp.csr_array(
        (np.array([2.0, 0.0, 4.0]), np.array([0, 0, 1]), np.array([0, 1, 3])), shape=(2, 2)
    )
    assert sptrsv_args(Z)["NNZ"] == 3


def test_poisson2d() -> None:
    for n in (1, 2, 4):
        m = poisson2d(n)
        assert isinstance(m, sp.csr_array)
        assert m.shape == (n * n, n * n)
        assert m.has_canonical_format
        assert m.dtype == np.float64
        dense = m.toarray()
        want = np.zeros((n * n, n * n))
        for i in range(n):
            for j in range(n):
                r = i * n + j
                want[r, r] = 4.0
                for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                    if 0 <= i + di < n and 0 <= j + dj < n:
                        want[r, (i + di) * n + j + dj] = -1.0
        assert np.array_equal(dense, want)
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ArgumentError, match="positive int"):
            poisson2d(bad)  # type: ignore[arg-type]


def test_poisson2d_spmv() -> None:
    m = poisson2d(3)
    x = rng().standard_normal(9)
    y = np.zeros(9)
    kernels.spmv_csr().interpret(y=y, x=x, **csr_args(m))
    assert allclose(y, m @ x)


def test_read_matrix_market_errors(tmp_path: Path) -> None:
    with pytest.raises(SpfError, match="no such file"):
        read_matrix_market(tmp_path / "missing.mtx")
    bad = tmp_path / "bad.mtx"
    bad.write_text("this is not matrix market\n")
    with pytest.raises(SpfError, match="cannot read"):
        read_matrix_market(bad)
    good = tmp_path / "good.mtx"
    good.write_text(
        "%%MatrixMarket matrix coordinate real general\n2 3 3\n1 1 1.5\n2 3 -2\n1 1 0.5\n"
    )
    m = read_matrix_market(str(good))
    assert m.toarray().tolist() == [[2.0, 0.0, 0.0], [0.0, 0.0, -2.0]]


def test_missing_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    monkeypatch.setitem(sys.modules, "scipy.io", None)
    for call in (
        lambda: csr_args(np.eye(2)),
        lambda: poisson2d(2),
        lambda: read_matrix_market("x.mtx"),
    ):
        with pytest.raises(SpfError, match=r"spf.sparse needs scipy: pip install scipy"):
            call()

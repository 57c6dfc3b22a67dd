"""convert(src, SELL(C, sigma)): the SELL inspector synthesized from the SELL relation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import COO, CSC, CSR, SELL, convert, sell
from spf.formats.to_sell import SellConversion, sell_layout

if TYPE_CHECKING:
    from pathlib import Path

LAYOUTS = [(8, 1), (4, 8), (8, 32), (1, 1), (2, 4)]


def _matrices() -> list[tuple[str, Any]]:
    rng = np.random.default_rng(7)
    lil = sp.random_array((37, 20), density=0.2, rng=rng, format="lil")
    lil[[3, 4, 5, 17], :] = 0.0
    skewed = sp.lil_array((29, 31))
    skewed[5, :] = 1.0  # one long row: padding in its chunk
    skewed[20, :7] = 2.0
    return [
        ("empty_rows", sp.csr_array(lil)),
        ("empty", sp.csr_array((0, 0))),
        ("no_rows", sp.csr_array((0, 5))),
        ("no_cols", sp.csr_array((5, 0))),
        ("all_zero", sp.csr_array((9, 4))),
        ("one_row", sp.random_array((1, 9), density=0.5, rng=rng, format="csr")),
        ("one_entry", sp.csr_array(([3.0], ([0], [0])), shape=(1, 1))),
        ("odd", sp.random_array((101, 33), density=0.15, rng=rng, format="csr")),
        ("skewed", sp.csr_array(skewed)),
    ]


def _args(src: spf.Format, matrix: Any, index_dtype: str) -> dict[str, Any]:
    if src is COO:
        return spf.sparse.coo_args(matrix, index_dtype)
    return spf.sparse.format_args(matrix, src, index_dtype)


def _dense(out: dict[str, Any], c: int, sigma: int) -> Any:
    """The matrix the SELL arrays hold (duplicates summed), read through the relation."""
    n, m = out["N"], out["M"]
    dense = np.zeros((n, m))
    perm = out["perm"] if sigma > 1 else np.arange(n)
    for ch in range(out["NC"]):
        for r in range(c):
            if c * ch + r >= n:
                break
            for w in range(int(out["cl"][ch])):
                k = int(out["cs"][ch]) + c * w + r
                dense[int(perm[c * ch + r]), int(out["scol"][k])] += out["val"][k]
    return dense


# every layout from CSR in both index types; COO and CSC sources on a few (compile time)
CASES = [(CSR, c, sigma, idx) for c, sigma in LAYOUTS for idx in ("int32", "int64")] + [
    (COO, 4, 8, "int32"), (COO, 8, 1, "int64"), (CSC, 4, 8, "int64"), (CSC, 2, 4, "int32")
]  # fmt: skip


@pytest.mark.parametrize(("src", "c", "sigma", "index_dtype"), CASES,
                         ids=lambda v: getattr(v, "name", str(v)))  # fmt: skip
def test_to_sell_matches_reference_layout(
    src: spf.Format, c: int, sigma: int, index_dtype: str
) -> None:
    """Every array equals the numpy reference (spf.sparse.sell_args), and the SpMV
    generated from the SELL relation over them equals scipy's."""
    kernel = convert(src, SELL(c, sigma), index_dtype=index_dtype).compile()
    spmv = spf.kernels.spmv(SELL(c, sigma), index_dtype=index_dtype).compile()
    for label, matrix in _matrices():
        out = kernel(**_args(src, matrix, index_dtype))
        want = spf.sparse.sell_args(matrix, c, sigma, index_dtype)
        assert sorted(out) == sorted(want), label
        for key, value in want.items():
            np.testing.assert_array_equal(out[key], value, err_msg=f"{label}: {key}")
            if isinstance(value, np.ndarray):
                assert out[key].dtype == value.dtype, (label, key)
        n, m = matrix.shape
        x = np.linspace(-1.0, 1.0, m)
        y = np.zeros(n)
        spmv(y=y, x=x, **out)
        np.testing.assert_allclose(y, matrix @ x, rtol=1e-12, atol=1e-12, err_msg=label)


def test_padding_holds_zero_and_an_in_range_column() -> None:
    matrix = sp.csr_array(np.array([[0, 0, 5.0], [1.0, 2.0, 3.0], [0, 0, 0], [4.0, 0, 0]]))
    out = convert(CSR, SELL(2, 1)).compile()(**spf.sparse.csr_args(matrix))
    assert out["cl"].tolist() == [3, 1]
    assert out["cs"].tolist() == [0, 6, 8]
    # chunk 0 column-major: row 0 (5 at col 2, two pads), row 1 (1, 2, 3)
    assert out["val"].tolist() == [5.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0]
    assert out["scol"].tolist() == [2, 0, 0, 1, 0, 2, 0, 0]


def test_sigma_sorts_rows_by_length_within_windows_stably() -> None:
    lengths = [1, 3, 0, 3, 2, 5, 5, 1, 4]
    rows = np.repeat(np.arange(9), lengths)
    cols = np.concatenate([np.arange(n) for n in lengths])
    matrix = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(9, 6))
    out = convert(CSR, SELL(2, 4)).compile()(**spf.sparse.csr_args(matrix))
    # windows [0..3], [4..7], [8]: decreasing length, ties in row order
    assert out["perm"].tolist() == [1, 3, 0, 2, 5, 6, 4, 7, 8]
    assert out["cl"].tolist() == [3, 1, 5, 2, 4]


def test_coo_duplicates_are_kept_and_summed_by_spmv() -> None:
    row = np.array([1, 0, 1, 1, 2], dtype=np.int32)
    col = np.array([0, 2, 0, 0, 1], dtype=np.int32)
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    out = convert(COO, SELL(2, 2)).compile()(row=row, col=col, A=a, N=3, M=3, NNZ=5)
    assert out["NV"] == 8  # row 1 holds its three copies: chunk 0 is 3 wide
    assert out["perm"].tolist() == [1, 0, 2]
    want = np.zeros((3, 3))
    np.add.at(want, (row, col), a)
    np.testing.assert_allclose(_dense(out, 2, 2), want)


def test_synthesis_reads_the_relation_not_the_name() -> None:
    """A SELL-like format of one's own (other names, C = 3, a window of 6) converts."""
    fmt = spf.Format(
        "MYSELL",
        coords="[i, j]",
        storage="{[i, j] -> [e]: exists b, s, l: 0 <= b < NC && 0 <= s < width(b) && "
        "0 <= l < 3 && 3*b + l < N && e = start(b) + 3*s + l && i = order(3*b + l) && "
        "j = cidx(e)}",
        ufs=[
            spf.UF("start", domain="{[t]: 0 <= t <= NC}", range="{[v]: 0 <= v <= NV}",
                   monotonic="nondecreasing"),
            spf.UF("width", domain="{[t]: 0 <= t < NC}", range="{[v]: 0 <= v <= M}"),
            spf.UF("cidx", domain="{[t]: 0 <= t < NV}", range="{[v]: 0 <= v < M}"),
            spf.UF("order", domain="{[t]: 0 <= t < N}", range="{[v]: 0 <= v < N}"),
        ],
        value="v",
        value_shape=("NV",),
        window=6,
    )  # fmt: skip
    layout = sell_layout(fmt)
    assert layout is not None
    assert (layout.C, layout.ptr, layout.width, layout.idx, layout.perm) == (
        3, "start", "width", "cidx", "order"
    )  # fmt: skip
    matrix = _matrices()[-2][1]
    out = convert(CSR, fmt).compile()(**spf.sparse.csr_args(matrix))
    want = spf.sparse.sell_args(matrix, 3, 6)
    for mine, ref in (("start", "cs"), ("width", "cl"), ("cidx", "scol"), ("v", "val"),
                      ("order", "perm")):  # fmt: skip
        np.testing.assert_array_equal(out[mine], want[ref], err_msg=mine)
    x = np.linspace(0.0, 1.0, matrix.shape[1])
    y = np.zeros(matrix.shape[0])
    spf.kernels.spmv(fmt).compile()(y=y, x=x, **out)
    np.testing.assert_allclose(y, matrix @ x)
    assert sell_layout(CSR) is None
    assert sell_layout(COO) is None


def test_without_a_window_rows_keep_their_order() -> None:
    fmt = spf.Format(
        "SELLP",
        coords="[i, j]",
        storage=SELL(4, 8).storage,
        ufs=list(SELL(4, 8).ufs.values()),
        value="val",
        value_shape=("NV",),
    )
    matrix = _matrices()[-1][1]
    out = convert(CSR, fmt).compile()(**spf.sparse.csr_args(matrix))
    assert out["perm"].tolist() == list(range(matrix.shape[0]))
    np.testing.assert_allclose(_dense(out, 4, 8), matrix.toarray())


def test_sell_inspector_is_the_conversion() -> None:
    fmt = sell(4, 8, index_dtype="int64")
    conv = fmt.conversion()
    assert isinstance(conv, SellConversion)
    assert conv.dst is SELL(4, 8)
    matrix = _matrices()[-2][1]
    built = fmt.inspect_matrix(matrix)
    want = spf.sparse.sell_args(matrix, 4, 8, "int64")
    for key in ("cs", "cl", "scol", "val", "perm"):
        np.testing.assert_array_equal(getattr(built, key), want[key], err_msg=key)
    np.testing.assert_array_equal(built.iperm[built.perm], np.arange(matrix.shape[0]))


SMALL = ("lp_afiro.mtx", "LFAT5_hypersparse.mtx", "west0067.mtx", "karate.mtx", "jagmesh7.mtx",
         "olm1000.mtx")  # fmt: skip


@pytest.mark.parametrize(("c", "sigma"), [(8, 1), (8, 32)], ids=lambda v: str(v))
def test_to_sell_suitesparse(suitesparse_dir: Path, c: int, sigma: int) -> None:
    kernel = convert(CSR, SELL(c, sigma)).compile()
    spmv = spf.kernels.spmv(SELL(c, sigma)).compile()
    for name in SMALL:
        path = suitesparse_dir / name
        if not path.exists():
            continue
        matrix = spf.sparse.read_matrix_market(path)
        out = kernel(**spf.sparse.csr_args(matrix))
        want = spf.sparse.sell_args(matrix, c, sigma)
        for key, value in want.items():
            np.testing.assert_array_equal(out[key], value, err_msg=f"{name}: {key}")
        x = np.linspace(-1.0, 1.0, matrix.shape[1])
        y = np.zeros(matrix.shape[0])
        spmv(y=y, x=x, **out)
        np.testing.assert_allclose(y, matrix @ x, rtol=1e-10, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("width", [2**15 + 1, 2**16 + 1])
def test_stored_slots_beyond_int32_refused_before_allocating(check: bool, width: int) -> None:
    """SELL(2^16, 1) of one chunk whose longest row has ``width`` entries: NV = 2^16 *
    width passes int32 (the arrays stay small). The int32 chunk pointers wrapped: NV was
    negative (an error about -25.8 GB), or 65536 (2^32 + 2^16 wrapped), small enough to
    allocate, and the entries were placed past it (the checked call caught it, naming the
    conversion's scratch cursor; an unchecked one wrote out of the arrays)."""
    c = 2**16
    rowptr = np.zeros(c + 1, dtype=np.int32)
    rowptr[1:] = width
    args = {"rowptr": rowptr, "col": np.arange(width, dtype=np.int32),
            "A": np.ones(width), "N": c, "M": width, "NNZ": width}  # fmt: skip
    kernel = convert(CSR, SELL(c, 1)).compile()
    with pytest.raises(spf.ArgumentError, match=r"NV = \d+ stored slots") as err:
        kernel(**args, check=check)
    assert f"NV = {c * width} stored slots" in str(err.value)
    assert "index_dtype='int64'" in str(err.value)
    assert "memory" not in str(err.value)


@pytest.mark.parametrize("dst", [CSR, COO])
def test_checked_conversion_from_sell_refuses_a_perm_that_is_no_permutation(
    dst: spf.Format,
) -> None:
    """A repeated row in SELL's ``perm`` (in range, so its declared range let it through)
    was converted twice and the row it displaced not at all, silently; checked, it is an
    ArgumentError naming perm, the positions and the missing row (unchecked: as given)."""
    m = sp.random_array((16, 16), density=0.3, rng=np.random.default_rng(1), format="csr")
    args = SELL(4, 8).args(m)
    kernel = convert(SELL(4, 8), dst).compile()
    whole = kernel(**args)
    assert whole["NNZ"] == m.nnz
    bad = {**args, "perm": args["perm"].copy()}
    lost = int(bad["perm"][1])
    bad["perm"][1] = bad["perm"][0]
    with pytest.raises(spf.ArgumentError, match=r"perm must be a permutation") as err:
        kernel(**bad)
    row = int(args["perm"][0])
    assert f"perm[0] = perm[1] = {row} and row {lost} is in no position" in str(err.value)
    assert f"convert(SELL4_8 -> {dst.name})" in str(err.value)
    kernel(**bad, check=False)  # the caller's word: converted as given

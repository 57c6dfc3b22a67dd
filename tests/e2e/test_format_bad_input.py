"""Bad input to formats, conversions and SpMV: clear spf errors, nothing written out of
bounds (API §12, "Bad input")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, convert
from spf.formats.convert import _extent

SORTED_COLS = r"col\(k1\) < col\(k2\)"


# ------------------------------------------------------------- relations that are not functions
@pytest.mark.parametrize(
    ("storage", "message"),
    [
        # a SELL-like relation that forgets the column: j is not fixed by the position
        ("{[i, j] -> [k]: exists ch, w, r: 0 <= ch < NC && 0 <= w < cl(ch) && 0 <= r < 4 && "
         "k = cs(ch) + 4*w + r && i = 4*ch + r}", "coordinate 'j' is not fixed"),
        # an exists variable nothing ties: one entry, four positions
        ("{[i, j] -> [k]: exists q: 0 <= q < 4 && 0 <= k < NNZ && i = row(k) && j = col(k)}",
         r"not tied .* one coordinate maps to many positions"),
        # a second position left free
        ("{[i, j] -> [k, l]: 0 <= k < NNZ && 0 <= l < W && i = row(k) && j = col(k)}",
         r"\['l'\] are not tied"),
        # the row read from nothing: coordinate i neither equal to anything nor scanned
        ("{[i, j] -> [k]: 0 <= k < NNZ && j = col(k)}", "coordinate 'i' is not fixed"),
    ],
)  # fmt: skip
def test_relation_not_a_function_of_the_coordinates(storage: str, message: str) -> None:
    ufs = [spf.UF("row"), spf.UF("col"), spf.UF("cs"), spf.UF("cl")]
    with pytest.raises(spf.SpfError, match=message) as err:
        spf.Format("BAD", coords="[i, j]", storage=storage, ufs=ufs)
    assert "'BAD'" in str(err.value)
    assert not isinstance(err.value, (TypeError, ValueError, KeyError))


# ------------------------------------------------------------ data violating an assumption
def _unsorted_csr() -> dict[str, Any]:
    args = spf.sparse.csr_args(sp.csr_array(np.array([[1.0, 2.0, 0.0], [3.0, 0.0, 4.0]])))
    args["col"] = np.array([1, 0, 0, 2], dtype=np.int32)  # row 0 holds columns 1, 0
    return args


@pytest.mark.parametrize(
    "dst", [CSC, COO, SELL(2, 1), SELL(2, 2), ELL, DIA, BCSR(2, 2)], ids=lambda f: f.name
)
def test_unsorted_columns_refused_by_conversion(dst: spf.Format) -> None:
    with pytest.raises(spf.ArgumentError, match=SORTED_COLS) as err:
        convert(CSR, dst).compile()(**_unsorted_csr())
    assert "i = 0, k1 = 0, k2 = 1" in str(err.value)


def test_unsorted_columns_refused_by_spmv_inputs_untouched() -> None:
    """The order is tested in the loops (on neighbouring entries, as the columns are
    loaded): the output may be partially written, the inputs are not."""
    args = _unsorted_csr()
    before = {k: v.copy() for k, v in args.items() if isinstance(v, np.ndarray)}
    with pytest.raises(spf.ArgumentError, match=SORTED_COLS) as err:
        spf.kernels.spmv(CSR).compile()(y=np.full(2, 7.0), x=np.ones(3), **args)
    assert "i = 0, k1 = 0, k2 = 1" in str(err.value)
    assert "partially written" in str(err.value)
    for name, value in before.items():
        np.testing.assert_array_equal(args[name], value)


def test_unsorted_rows_of_csc_and_block_columns_of_bcsr_refused() -> None:
    args = spf.sparse.csc_args(sp.csc_array(np.array([[1.0, 2.0], [3.0, 0.0]])))
    args["row"] = np.array([1, 0, 0], dtype=np.int32)
    with pytest.raises(spf.ArgumentError, match=r"row\(k1\) < row\(k2\)"):
        convert(CSC, CSR).compile()(**args)
    block = spf.sparse.format_args(sp.csr_array(np.ones((2, 4))), BCSR(2, 2))
    block["bcol"] = np.array([1, 0], dtype=np.int32)
    with pytest.raises(spf.ArgumentError, match=r"bcol\(k1\) < bcol\(k2\)"):
        spf.kernels.spmv(BCSR(2, 2)).compile()(y=np.zeros(2), x=np.ones(4), **block)


# ------------------------------------------------------------------ out-of-range coordinates
@pytest.mark.parametrize(
    ("src", "array", "values", "message"),
    [
        (COO, "row", [0, 3, 1], r"row\[1\] = 3 is outside the declared range"),
        (COO, "row", [0, -1, 1], r"row\[1\] = -1 is outside the declared range"),
        (COO, "col", [0, 1, 5], r"col\[2\] = 5 is outside the declared range"),
        (CSR, "col", [0, 1, 9], r"col\[2\] = 9 is outside the declared range"),
        (CSR, "rowptr", [0, 2, 1, 3], "declared nondecreasing"),
        (CSR, "rowptr", [0, 1, 2, 4], r"rowptr\[3\] = 4 is outside the declared range"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("dst", [CSR, SELL(2, 1), SELL(2, 2), ELL, DIA], ids=lambda f: f.name)
def test_out_of_range_coordinates_refused(
    src: spf.Format, array: str, values: list[int], message: str, dst: spf.Format
) -> None:
    matrix = sp.csr_array(np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]]))
    args = spf.sparse.coo_args(matrix) if src is COO else spf.sparse.csr_args(matrix)
    args[array] = np.array(values, dtype=np.int32)
    with pytest.raises(spf.ArgumentError, match=message) as err:
        convert(src, dst).compile()(**args)
    if dst is not CSR:
        assert f"convert({src.name} -> {dst.name})" in str(err.value)


# ---------------------------------------------------------- never an out-of-bounds write
GUARD = 16


def _guarded(shape: tuple[int, ...], dtype: Any, fill: float) -> tuple[Any, Any]:
    """A buffer with ``GUARD`` sentinel elements on each side and the view between them."""
    count = int(np.prod(shape))
    buf = np.full(count + 2 * GUARD, fill, dtype=dtype)
    return buf, buf[GUARD : GUARD + count].reshape(shape)


def _guards_intact(bufs: dict[str, Any], fill: float) -> list[str]:
    return [
        name
        for name, buf in bufs.items()
        if not (np.all(buf[:GUARD] == fill) and np.all(buf[-GUARD:] == fill))
    ]


@pytest.mark.parametrize("check", [True, False])
def test_conversion_kernel_never_writes_out_of_bounds(check: bool) -> None:
    """CSR whose row 0 holds more entries than there are columns (a duplicate column and
    one out of range), run through the compiled conversion kernel on guarded arrays: with
    check=True it is refused; with check=False the run-time index arrays are read through
    their declared ranges and the call raises. Either way no element outside any array
    changed."""
    conv = convert(CSR, SELL(2, 2))
    kernel = conv.compile(check=check)
    rowptr = np.array([0, 3, 4], dtype=np.int32)
    col = np.array([0, 0, 5, 1], dtype=np.int32)
    a = np.arange(1.0, 5.0)
    sizes = {"N": 2, "M": 2, "NNZ": 4, "NC": 1, "NW": 1, "CV_LONG": 2}  # CV_LONG: min(M, NNZ)
    bufs: dict[str, Any] = {}
    env: dict[str, Any] = {"rowptr": rowptr, "col": col, "A": a}
    for name, shape in conv.allocate.items():
        bufs[name], env[name] = _guarded(tuple(_extent(e, sizes) for e in shape), np.int32, -77)
    for name, dtype in (("val", np.float64), ("scol", np.int32)):
        bufs[name], env[name] = _guarded((0,), dtype, -77)
    with pytest.raises(spf.ArgumentError):
        kernel.kernel(check=check, PHASE=0, NV=0, **sizes, **env)
    assert _guards_intact(bufs, -77) == []
    with pytest.raises(spf.ArgumentError, match=r"convert\(CSR -> SELL2_2\)"):
        kernel(rowptr=rowptr, col=col, A=a, N=2, M=2, NNZ=4)


def test_spmv_with_bad_column_never_writes_out_of_bounds() -> None:
    """A column past M with check=True: ArgumentError naming it, and nothing around ``y``
    written (``y`` itself holds no valid result then)."""
    args = spf.sparse.csr_args(sp.csr_array(np.eye(3)))
    args["col"] = np.array([0, 1, 3], dtype=np.int32)
    buf, y = _guarded((3,), np.float64, 5.0)
    xbuf, x = _guarded((3,), np.float64, 1.0)
    with pytest.raises(spf.ArgumentError, match=r"col\[2\] = 3"):
        spf.kernels.spmv(CSR).compile()(y=y, x=x, **args)
    assert _guards_intact({"y": buf}, 5.0) == []
    assert np.all(xbuf == 1.0)  # an input: never written


@pytest.mark.parametrize(
    ("src", "dst", "array", "entry", "value"),
    [
        ("COO", "CSC", "col", 0, 2**31 - 1),
        ("CSR", "CSC", "col", -1, 5),
        ("COO", "CSR", "row", 2, -1),
        ("COO", "ELL", "row", 2, 6),
        ("COO", "SELL", "row", 2, 6),
        ("COO", "DIA", "row", 2, -1),
        ("CSR", "SELL", "col", -1, 5),
        ("CSR", "ELL", "col", -1, 5),
    ],
)
def test_unchecked_conversion_refuses_coordinates_out_of_range(
    src: str, dst: str, array: str, entry: int, value: int
) -> None:
    """``check=False`` leaves a conversion's order facts unchecked, not its source's index
    ranges: a conversion writes through the coordinates (counts, cursors, slots), and one
    out of range wrote out of bounds (heap corruption, a segfault, or an abort after the
    call). Now the call raises ``ArgumentError`` naming the array and the entry."""
    formats: dict[str, spf.Format] = {"COO": COO, "CSR": CSR, "CSC": CSC, "ELL": ELL,
                                  "DIA": DIA, "SELL": SELL(4, 8)}  # fmt: skip
    m = sp.random_array((6, 5), density=0.4, format="coo", rng=3)
    args = dict(spf.sparse.coo_args(m) if src == "COO" else spf.sparse.csr_args(m))
    bad = args[array].copy()
    bad[entry] = value
    args[array] = bad
    kernel = convert(formats[src], formats[dst]).compile()
    with pytest.raises(spf.ArgumentError, match=rf"{array}\[\d+\] = {value} is outside"):
        kernel(check=False, **args)


def test_coo_to_sell_refuses_rows_longer_than_the_columns() -> None:
    """COO keeps duplicates, so a row can hold more entries than there are columns; SELL
    declares its chunk widths at most ``M``, and spf's checked SELL kernels refused such a
    conversion's output (and converting it back). The conversion refuses it, naming the
    chunk; duplicates within ``M`` per row still convert, and SpMV sums them."""
    from spf.formats import COO

    rng = np.random.default_rng(5)
    many = sp.coo_array((rng.random(40) + 0.5, (rng.integers(0, 6, 40), rng.integers(0, 5, 40))),
                        shape=(6, 5))  # fmt: skip
    for fmt in (SELL(4, 8), SELL(1, 1)):
        with pytest.raises(spf.ArgumentError, match="more than the 5 columns"):
            convert(COO, fmt).compile()(**spf.sparse.coo_args(many))
    few = sp.coo_array((np.ones(3), (np.array([0, 0, 2]), np.array([1, 1, 0]))), shape=(3, 4))
    out = convert(COO, SELL(4, 8)).compile()(**spf.sparse.coo_args(few))
    x, y = np.arange(1.0, 5.0), np.zeros(3)
    spf.kernels.spmv(SELL(4, 8)).compile()(y=y, x=x, **out)
    assert np.allclose(y, few.toarray() @ x)

"""The fused reads of spf.codegen.row_pairs against the tests they replace, value by value.

``spf_pair_<uf>`` and ``spf_bound_<uf>`` (one unsigned comparison per entry, a slow path
behind it) must record the same range faults, clamp the same way and flag a broken fact
exactly where the separate tests do (``spf_read_<uf>``'s range test, then ``V(k) - V(k - 1)
>= gap`` inside a row, or ``V(k) <= i + c`` / ``V(k) >= i + c`` with ``i + c`` beyond
int64 both ways), for every range the bounds can give where the fused loop runs (from 0 or not, at
the ends of int64, and with gaps 0 and 1), and the fused loop must not run where the
accepted range is no interval of fewer than ``2**64`` values (empty, wrapping, the
widest). Run on random rows of values drawn around those ends, through the printed C.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError
from spf.bench.scale_checks import symmetric_spmv
from spf.codegen import row_pairs
from spf.codegen.loop_ast import Block, For, Int, Var
from spf.codegen.row_blocks import Pair
from spf.testing import built_c, compiled_without, random_csr

LO = [0, -5, 3, -(2**63), 2**63 - 3]
LIM = [0, 1, 10, 2**62, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]
MASK = 2**64 - 1


KINDS: list[tuple[bool, str, int]] = [
    *((zero, "pair", gap) for zero in (True, False) for gap in (0, 1)),
    *(
        (zero, side, c)
        for zero in (True, False)
        for side in ("upper", "lower")
        for c in (0, -1, 2, 2**63 - 1, -(2**63))
    ),
]
"""Each fused read tested: range from 0 or not; a pair fact with gap 0 or 1, or a row bound
``V(k) <= i + c`` (upper) or ``>=`` (lower)."""
FIRST_ROWS = [0, -3, 2**63 - 7, -(2**63)]
"""The first row of a call (``i + c`` beyond int64 both ways with the constants above: then
the checked loops run)."""


def _run_function(number: int, zero: bool, kind: str, c: int) -> list[str]:
    uf = f"v{number}"
    if kind == "pair":
        fact = {"pair": Pair(uf, "int64_t", c, frozenset(), 1)}
    else:
        fact = {"bound": row_pairs.Bound(kind == "upper", c, frozenset(), 1)}
    fused = row_pairs.Fused(uf, "int64_t", 0, zero, **fact)  # type: ignore[arg-type]
    rows = For("i", Int(0), Var("rows"), 1, Block(()), 0)
    pairs = row_pairs.RowPairs(rows, (fused,), Int(0), Var("rows"))
    return [
        *row_pairs.helper_chunk(pairs).lines,
        f"int run{number}(const int64_t *restrict {uf}, const int64_t *restrict starts,",
        "        int64_t i0, int64_t rows, int64_t spf_lo_0, uint64_t spf_lim_0,",
        "        int64_t *restrict spf_fault, uint64_t *restrict facts, int64_t *restrict out)",
        "{",
        "  uint64_t spf_facts = 0;",
        "  int64_t spf_x;",
        "  (void)spf_x;",
        f"  if (!({row_pairs.whole(pairs, 'i0', 'i0 + rows')})) return 0;",
        "  {",
        *row_pairs.open_lines(pairs),
        "  for (int64_t r = 0; r < rows; r++)",
        "  {",
        "    const int64_t i = i0 + r;",
        *row_pairs.row_lines(pairs),
        f"    for (int64_t k = starts[r]; k < starts[r + 1]; k++) out[k] = {uf}(k);",
        "  }",
        "  }",
        "  *facts = spf_facts;",
        "  return 1;",
        "}",
    ]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    lines: list[str] = []
    cdefs = []
    for number, kind in enumerate(KINDS):
        lines += _run_function(number, *kind)
        cdefs.append(
            f"int run{number}(const int64_t *v, const int64_t *starts, int64_t i0, int64_t rows, "
            "int64_t lo, uint64_t lim, int64_t *fault, uint64_t *facts, int64_t *out);"
        )
    return built_c(tmp_path_factory.mktemp("row_pairs"), "fused", lines, cdefs)


def _holds(kind: str, c: int, i: int, v: int, before: int | None) -> bool:
    """The fact at value ``v`` of row ``i`` (``before``: the row's previous value, if any)."""
    if kind == "pair":
        return before is None or v - before >= c
    return v <= i + c if kind == "upper" else v >= i + c


def _expected(
    values: list[int], starts: list[int], i0: int, lo: int, lim: int, zero: bool, kind: Any
) -> Any:
    """The separate tests: ``spf_read_<uf>`` then the fact (the pair with the previous raw
    entry, or the row's bound)."""
    fault: list[int] = [0, 0, 0, 0]
    broken, out = False, []
    hi = lim if zero else (lo + lim) & MASK
    hi = hi - 2**64 if hi >= 2**63 else hi
    for r in range(len(starts) - 1):
        for k in range(starts[r], starts[r + 1]):
            v = values[k]
            bad = (v & MASK) > lim if zero else ((v - lo) & MASK) > lim
            if bad:
                if not fault[0]:
                    fault = [1, 0, k, v]
                v = lo if v < lo else hi
            else:
                before = values[k - 1] if k > starts[r] else None
                broken |= not _holds(kind[0], kind[1], i0 + r, v, before)
            out.append(v)
    return fault, broken, out


@pytest.mark.parametrize(
    "kind", KINDS, ids=[f"{(z and 'zero') or 'lo'}-{k}-{c}" for z, k, c in KINDS]
)
def test_fused_reads_match_the_separate_tests(built: Any, kind: tuple[bool, str, int]) -> None:
    ffi, lib = built
    zero, fact, c = kind
    run = getattr(lib, f"run{KINDS.index(kind)}")
    rng = np.random.default_rng(KINDS.index(kind))
    for lo in LO:
        for lim in LIM:
            hi = lim if zero else lo + lim
            # one interval of int64 values, of fewer than 2**64: else the checked loops run
            interval = hi < 2**63 and lim < 2**64 - 1
            for i0 in FIRST_ROWS if fact != "pair" else [0]:
                ends = [lo, hi, lo - 1, hi + 1, 0, -1, 2**63 - 1, -(2**63), i0 + c, i0 + c + 3]
                ends = [e for e in ends if -(2**63) <= e < 2**63]
                for _ in range(8 if fact != "pair" else 40):
                    lengths = rng.integers(0, 5, size=6)
                    starts = [0, *np.cumsum(lengths).tolist()]
                    n = starts[-1]
                    picks = [int(rng.choice(ends)) + int(rng.integers(-2, 3)) for _ in range(n)]
                    values = [min(max(v, -(2**63)), 2**63 - 1) for v in picks]
                    if rng.random() < 0.5:  # mostly sorted rows inside the range
                        values = sorted(values)
                    fault_w = ffi.new("int64_t[4]")
                    facts = ffi.new("uint64_t *")
                    out = ffi.new("int64_t[]", max(n, 1))
                    col = ffi.new("int64_t[]", values or [0])
                    got = run(
                        col, ffi.new("int64_t[]", starts), i0, 6, lo, lim, fault_w, facts, out
                    )
                    where = f"lo={lo} lim={lim} i0={i0} rows={starts} values={values}"
                    fits = all(-(2**63) <= at + c < 2**63 for at in (i0, i0 + 6))
                    # every row's i + c in [lo - 1, hi] (upper) or [lo, hi + 1]: no clamp
                    first, last, low = i0 + c, i0 + 5 + c, 0 if zero else lo
                    inside = low - 1 <= first and last <= hi
                    if fact == "lower":
                        inside = low <= first and last <= hi + 1
                    assert got == (interval and (fact == "pair" or (fits and inside))), where
                    if not got:
                        continue
                    fault, broken, expect = _expected(values, starts, i0, lo, lim, zero, (fact, c))
                    assert list(fault_w) == fault, where
                    assert list(out)[:n] == expect, where
                    if not fault[0]:  # after a fault, the facts are not reported
                        assert bool(facts[0]) == broken, where


@pytest.fixture(scope="module", params=["int32", "int64"])
def symmetric(request: pytest.FixtureRequest) -> tuple[str, Any]:
    kernel = symmetric_spmv(request.param)
    assert "spf_bound_col" in kernel.source  # its assumption col(k) <= i, fused
    return request.param, kernel


def _lower(n: int, seed: int) -> Any:
    m = random_csr(n, n, 4 / n, seed)
    low = sp.csr_array(sp.tril(m + m.T + sp.eye_array(n)))
    low.sort_indices()
    return low


def _sym_run(kernel: Any, low: Any, dtype: str, col: Any = None, check: bool = True) -> Any:
    a = spf.sparse.csr_args(low, dtype)
    n = low.shape[0]
    y, x = np.zeros(n), np.linspace(-1.0, 2.0, n)
    cols = a["col"] if col is None else col
    kernel(A=a["A"], rowptr=a["rowptr"], col=cols, N=n, NNZ=a["NNZ"], y=y, x=x, check=check)
    return y


def test_a_row_bound_checked_with_the_range(symmetric: tuple[str, Any]) -> None:
    dtype, kernel = symmetric
    low = _lower(2000, 5)
    full = low + sp.triu(low.T, 1)
    y = _sym_run(kernel, low, dtype)
    assert np.array_equal(y, _sym_run(kernel, low, dtype, check=False))
    np.testing.assert_allclose(y, full @ np.linspace(-1.0, 2.0, 2000), rtol=1e-12, atol=1e-12)
    _sym_run(kernel, low, dtype)  # these contents remembered as verified
    col = spf.sparse.csr_args(low, dtype)["col"]
    starts = low.indptr
    for row in (1, 1000, 1998):  # the row's last entry (its diagonal) one column right
        k = int(starts[row + 1]) - 1
        bad = col.copy()
        bad[k] = row + 1
        with pytest.raises(ArgumentError, match=rf"col\(k\) <= i.*fails first at i = {row}"):
            _sym_run(kernel, low, dtype, bad)
    for k in (0, int(starts[1000]), len(col) - 1):  # out of range, the first entry of a row
        for value in (-1, 2000):
            bad = col.copy()
            bad[k] = value
            with pytest.raises(ArgumentError, match=rf"col\[{k}\] = {value} is outside"):
                _sym_run(kernel, low, dtype, bad)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_a_fact_over_fewer_pairs_than_the_row_reports_only_its_pairs(dtype: Any) -> None:
    """A sorted-columns fact from a row's second entry on (``rowptr(i) + 1 <= k1``) says
    nothing of the first pair: neither the fused test nor the blocks (which test whole
    rows) apply, and the checked loops report only a pair the fact covers."""
    comp = spf.kernels.spmv_csr(index_dtype=np.dtype(dtype).name)
    comp.assume("forall i, k1, k2: rowptr(i) + 1 <= k1 < k2 < rowptr(i+1) => col(k1) < col(k2)")
    k = comp.compile()
    args = {"A": np.ones(3), "x": np.arange(1.0, 4.0), "N": 1, "M": 3, "NNZ": 3}
    rowptr = np.array([0, 3], dtype=dtype)
    y = np.zeros(1)
    k(y=y, rowptr=rowptr, col=np.array([2, 0, 1], dtype=dtype), **args)  # first pair falls
    assert y.tolist() == [6.0]
    with pytest.raises(ArgumentError, match="col"):
        k(y=np.zeros(1), rowptr=rowptr, col=np.array([0, 2, 1], dtype=dtype), **args)


def test_a_row_bound_below_the_row_is_tested_from_its_fixed_bottom() -> None:
    """``V(k) <= i + c``'s interval ``[lo, i + c]`` moves its top every row: the one test is
    anchored at the fixed bottom (``(uint64_t)v - bottom >= room``) and the rows set only
    ``room``; ``V(k) >= i + c`` (``[i + c, hi]``) and the pair facts keep their fixed top."""
    rows = For("i", Int(0), Var("rows"), 1, Block(()), 0)
    for zero in (True, False):
        upper = row_pairs.Fused(
            "a", "int64_t", 0, zero, bound=row_pairs.Bound(True, -1, frozenset(), 1)
        )
        lower = row_pairs.Fused(
            "b", "int64_t", 1, zero, bound=row_pairs.Bound(False, 1, frozenset(), 2)
        )
        pair = row_pairs.Fused(
            "c", "int64_t", 2, zero, pair=Pair("c", "int64_t", 1, frozenset(), 4)
        )
        pairs = row_pairs.RowPairs(rows, (upper, lower, pair), Int(0), Var("rows"))
        helpers = "\n".join(row_pairs.helper_chunk(pairs).lines).split("static inline")
        assert "(uint64_t)v - (uint64_t)bottom >= room" in helpers[1]
        assert "(uint64_t)top - (uint64_t)v >= room" in helpers[2]
        assert "(uint64_t)top - (uint64_t)v >= *room" in helpers[3]
        opened = "\n".join(row_pairs.open_lines(pairs))
        assert "spf_bound_a(a, t0, spf_lo_0, spf_lim_0, spf_bottom_0, spf_room_0," in opened
        assert "spf_top_0" not in opened
        assert not any(line.startswith("spf_top_0") for line in row_pairs.row_lines(pairs))


@pytest.fixture(scope="module", params=["int32", "int64"])
def symmetric_pair(request: pytest.FixtureRequest) -> tuple[str, Any, Any]:
    dtype = request.param
    old = compiled_without(
        lambda: SimpleNamespace(compile=lambda: symmetric_spmv(dtype)), row_pairs
    )
    assert "spf_bound_col" not in old.source
    return dtype, symmetric_spmv(dtype), old


def test_a_row_bound_at_the_ends_of_the_index_type_raises_what_the_checked_loops_raise(
    symmetric_pair: tuple[str, Any, Any],
) -> None:
    """``col(k) <= i`` tested from its bottom: values at the ends of int32/int64, around 0,
    ``i`` and ``N``, in a row's first, middle and last entry, give the unchecked results or
    the same error text as the checked loops (the kernel printed without the fused reads)."""
    dtype, new, old = symmetric_pair
    n = 40
    low = _lower(n, 9)
    info = np.iinfo(dtype)
    ends = [int(info.min), int(info.min) + 1, int(info.max) - 1, int(info.max), -2, -1, 0, n, n + 1]
    col = spf.sparse.csr_args(low, dtype)["col"]
    starts = low.indptr
    raised = 0
    for row in (0, 1, n // 2, n - 1):
        s, e = int(starts[row]), int(starts[row + 1])
        for k in sorted({s, (s + e) // 2, e - 1}):
            for value in [*ends, row - 1, row, row + 1]:
                bad = col.copy()
                bad[k] = value
                errors, ys = [], []
                for kernel in (new, old):
                    try:
                        ys.append(_sym_run(kernel, low, dtype, bad))
                        errors.append(None)
                    except ArgumentError as error:
                        errors.append(str(error))
                assert errors[0] == errors[1], (row, k, value)
                if errors[0] is None:
                    assert np.array_equal(ys[0], ys[1]), (row, k, value)
                if not 0 <= value < n:
                    assert errors[0] is not None
                    assert f"col[{k}] = {value}" in errors[0]
                raised += errors[0] is not None
    assert raised > 30

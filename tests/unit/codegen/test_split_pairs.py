"""gauss_seidel_csr's sorted-rows test as one compare across its row split at ``diag(i)``
(spf.codegen.split_pairs): the same results and the same errors as the separate tests.

Each checked call runs twice, on the kernel as printed and on one compiled with the split
reads turned off (the checked loops as before), on the same arrays: valid inputs give
bitwise equal results, and broken ones (rows unsorted left or right of the diagonal, a
duplicate next to it, ``col(diag(i)) != i``, ``diag(i)`` outside its row, values out of
range) the same ArgumentError, naming the same fact. Every array is a view into a larger
buffer whose guard bytes must stay untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError
from spf.codegen import row_pairs, split_pairs
from spf.codegen.loop_ast import Block, For, Int, Op, Var
from spf.testing import built_c, compiled_without, same_checked_calls


@pytest.fixture(scope="module", params=["int32", "int64"])
def kernels(request: pytest.FixtureRequest) -> tuple[str, Any, Any]:
    dtype = request.param
    new = spf.kernels.gauss_seidel_csr(index_dtype=dtype).compile()
    assert "spf_split_col" in new.source
    old = compiled_without(lambda: spf.kernels.gauss_seidel_csr(index_dtype=dtype), split_pairs)
    assert "spf_split_col" not in old.source
    return dtype, new, old


def _matrix(n: int, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    m = sp.random_array((n, n), density=min(1.0, 4 / n), rng=rng, format="csr")
    return sp.csr_array(m + sp.eye_array(n) * (n + 1.0))


def _same(kernels: tuple[str, Any, Any], args: dict[str, Any], n: int) -> str | None:
    """The same error text or ``x`` from the kernel as printed and the one with the split
    reads turned off, on guarded copies of ``args``."""
    _, new, old = kernels
    arrays = {name: (args[name], 77) for name in ("A", "rowptr", "col", "diag")}
    arrays["b"] = (np.linspace(1.0, 2.0, n), -5.0)
    arrays["x"] = (np.zeros(n), -7.0)
    return same_checked_calls(new, old, arrays, "x", N=n, NNZ=int(args["NNZ"]))


def test_valid_rows_give_the_unchecked_results(kernels: tuple[str, Any, Any]) -> None:
    dtype, new, _ = kernels
    for n, seed in ((1, 0), (2, 1), (50, 2), (700, 3)):
        args = spf.sparse.gauss_seidel_args(_matrix(n, seed), dtype)
        assert _same(kernels, args, n) is None
        x0, x1 = np.zeros(n), np.zeros(n)
        b = np.linspace(1.0, 2.0, n)
        new(x=x0, b=b, **args, check=True)
        new(x=x1, b=b, **args, check=False)
        assert np.array_equal(x0, x1)


def _cases(args: dict[str, Any], n: int) -> list[tuple[str, dict[str, Any]]]:
    rowptr, col, diag = args["rowptr"], args["col"], args["diag"]
    out = []

    def put(what: str, name: str, at: int, value: int) -> None:
        a = {**args, name: args[name].copy()}
        a[name][at] = value
        out.append((what, a))

    for i in range(n):
        d, s, e = int(diag[i]), int(rowptr[i]), int(rowptr[i + 1])
        if d - s >= 2:
            put("left unsorted", "col", s, int(col[s + 1]))
        if d - s >= 1:
            put("duplicate left of the diagonal", "col", d - 1, i)
            put("left entry right of the diagonal", "col", d - 1, min(n - 1, i + 1))
        if e - d >= 3:
            put("right unsorted", "col", d + 2, int(col[d + 1]))
        if e - d >= 2:
            put("duplicate right of the diagonal", "col", d + 1, i)
            put("right entry left of the diagonal", "col", d + 1, max(0, i - 1))
        put("diagonal column wrong", "col", d, (i + 1) % n)
        put("diagonal column out of range", "col", d, n)
        put("negative column at the diagonal", "col", d, -1)
        if e - s >= 2:
            put("column out of range", "col", e - 1, n + 3)
            put("negative column", "col", s, -2)
        if d + 1 < e and (i + 1 == n or d + 1 < int(diag[i + 1])):
            put("diagonal moved right", "diag", i, d + 1)
        if d - 1 >= s and (i == 0 or d - 1 > int(diag[i - 1])):
            put("diagonal moved left", "diag", i, d - 1)
        if i + 1 < n and e < int(diag[i + 1]):
            put("diagonal outside its row", "diag", i, e)
        put("row pointer falls", "rowptr", i + 1, s - 1)
        put("row pointer jumps", "rowptr", i + 1, int(rowptr[-1]) + 1)
        put("row pointer negative", "rowptr", i, -1)
        put("diagonal out of range", "diag", i, int(rowptr[-1]))
        put("diagonal negative", "diag", i, -1)
        if i > 0:
            put("diagonal not increasing", "diag", i, int(diag[i - 1]))
        late = {**args, "col": col.copy(), "rowptr": rowptr.copy()}  # a range fault first
        late["col"][0], late["rowptr"][n] = n + 5, int(rowptr[n]) + 1
        out.append(("column out of range, then the last row pointer", late))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_broken_rows_raise_what_the_separate_tests_raise(
    kernels: tuple[str, Any, Any], seed: int
) -> None:
    n = 12
    args = spf.sparse.gauss_seidel_args(_matrix(n, 10 + seed), kernels[0])
    raised = 0
    for what, bad in _cases(args, n):
        error = _same(kernels, bad, n)
        raised += error is not None
        assert error is not None or what.startswith("diagonal moved"), what
    assert raised > 20


def test_random_damage_raises_what_the_separate_tests_raise(
    kernels: tuple[str, Any, Any],
) -> None:
    rng = np.random.default_rng(7)
    for trial in range(60):
        n = int(rng.integers(2, 30))
        args = spf.sparse.gauss_seidel_args(_matrix(n, 100 + trial), kernels[0])
        bad = {**args, "col": args["col"].copy(), "diag": args["diag"].copy()}
        bad["rowptr"] = args["rowptr"].copy()
        for _ in range(int(rng.integers(1, 4))):
            name = str(rng.choice(["col", "col", "col", "diag", "rowptr"]))
            at = int(rng.integers(0, bad[name].size))
            bad[name][at] = int(rng.integers(-2, n + 2))
        _same(kernels, bad, n)


def test_a_broken_pair_is_caught_after_the_contents_were_remembered(
    kernels: tuple[str, Any, Any],
) -> None:
    dtype, new, _ = kernels
    n = 40
    args = spf.sparse.gauss_seidel_args(_matrix(n, 5), dtype)
    b = np.ones(n)
    for _ in range(2):  # the second call finds the contents remembered as verified
        new(x=np.zeros(n), b=b, **args, check=True)
    i = next(i for i in range(n) if args["diag"][i] + 1 < args["rowptr"][i + 1])
    col = args["col"].copy()
    col[args["diag"][i] + 1] = i  # a duplicate of the diagonal's column right of it
    with pytest.raises(ArgumentError, match="col"):
        new(x=np.zeros(n), b=b, **{**args, "col": col}, check=True)


# ------------------------------------------------------------ the printed reads, value by value
LO = [0, -5, 3, -(2**63), 2**63 - 9]
LIM = [0, 1, 10, 2**62, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]
MASK = 2**64 - 1
SPLITS = [(zero, gap) for zero in (True, False) for gap in (0, 1)]
ROWS = 6


def _split_function(number: int, zero: bool, gap: int) -> list[str]:
    split = row_pairs.Split(For("k", Int(0), Var("e"), 1, Block(()), 0), gap, frozenset(), 1)
    fused = row_pairs.Fused(f"v{number}", "int64_t", 0, zero, split=split)
    rows = For("i", Int(0), Var("rows"), 1, Block(()), 0)
    pairs = row_pairs.RowPairs(rows, (fused,), Var("i0"), Op("+", (Var("i0"), Var("rows"))))
    uf = fused.uf
    return [
        *row_pairs.helper_chunk(pairs).lines,
        f"int run{number}(const int64_t *restrict {uf}, const int64_t *restrict starts,",
        "        const int64_t *restrict diags, int64_t i0, int64_t rows, int64_t spf_lo_0,",
        "        uint64_t spf_lim_0, int64_t *restrict spf_fault, uint64_t *restrict facts,",
        "        int64_t *restrict out)",
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
        f"    for (int64_t k = starts[r]; k < diags[r]; k++) out[k] = {uf}(k);",
        *row_pairs.mid_lines(pairs),
        f"    for (int64_t k = diags[r]; k < starts[r + 1]; k++) out[k] = {uf}(k);",
        "  }",
        "  }",
        "  *facts = spf_facts;",
        "  return 1;",
        "}",
    ]


@pytest.fixture(scope="module")
def split_built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    lines: list[str] = []
    cdefs = []
    for number, kind in enumerate(SPLITS):
        lines += _split_function(number, *kind)
        cdefs.append(
            f"int run{number}(const int64_t *v, const int64_t *starts, const int64_t *diags, "
            "int64_t i0, int64_t rows, int64_t lo, uint64_t lim, int64_t *fault, "
            "uint64_t *facts, int64_t *out);"
        )
    return built_c(tmp_path_factory.mktemp("split_pairs"), "split", lines, cdefs)


def _split_expected(
    values: list[int], starts: list[int], diags: list[int], i0: int, lo: int, hi: int, gap: int
) -> tuple[list[int], bool, list[int]]:
    """The separate tests with both premises holding (the diagonal's value is the row,
    between the two loops): the read's range test, then each pair of the row."""
    fault, broken, out = [0, 0, 0, 0], False, []
    for r in range(len(starts) - 1):
        row = [*range(starts[r], diags[r]), None, *range(diags[r], starts[r + 1])]
        before: int | None = None
        for k in row:
            v = i0 + r if k is None else values[k]
            if k is not None and not lo <= v <= hi:
                if not fault[0]:
                    fault = [1, 0, k, v]
                v = lo if v < lo else hi
            elif before is not None:
                broken |= v - before < gap
            if k is not None:
                out.append(v)
            before = v if k is None or lo <= values[k] <= hi else values[k]
    return fault, broken, out


def _split_rows(
    rng: Any, i0: int, lo: int, hi: int, gap: int
) -> tuple[list[int], list[int], list[int]]:
    """:data:`ROWS` rows of 0 to 4 entries, each split at a random diagonal position: values
    drawn around the range's ends and the row (mostly inside the range), some rows sorted
    on each side, and, one call in three, every row valid (left of ``i``, then right of
    it, by the gap)."""
    lengths = rng.integers(0, 5, size=ROWS)
    starts = [0, *np.cumsum(lengths).tolist()]
    diags = [int(s + rng.integers(0, n + 1)) for s, n in zip(starts, lengths, strict=False)]
    valid = rng.random() < 1 / 3
    values: list[int] = []
    for r in range(ROWS):
        i = i0 + r
        left, right = diags[r] - starts[r], starts[r + 1] - diags[r]
        if valid:
            values += [i - gap * (left - t) for t in range(left)]
            values += [i + gap * (t + 1) for t in range(right)]
            continue
        ends = [lo, hi, lo - 1, hi + 1, i - 1, i, i + 1, i - 2, i + 2]
        row = [int(rng.choice(ends)) + int(rng.integers(-1, 2)) for _ in range(left + right)]
        row = [min(max(v, lo), hi) if rng.random() < 0.97 else v for v in row]
        if rng.random() < 0.5:
            row = sorted(row[:left]) + sorted(row[left:])
        values += row
    return starts, diags, [min(max(v, -(2**63)), 2**63 - 1) for v in values]


@pytest.mark.parametrize("kind", SPLITS, ids=[f"{(z and 'zero') or 'lo'}-{g}" for z, g in SPLITS])
def test_split_reads_match_the_separate_tests(split_built: Any, kind: tuple[bool, int]) -> None:
    """The interval reset across the diagonal flags a row exactly when one of its pairs
    (those across the diagonal included) breaks, records and clamps values out of range as
    the read does, and the fused loop runs only where every row lies in the range (else the
    checked loops run)."""
    ffi, lib = split_built
    zero, gap = kind
    run = getattr(lib, f"run{SPLITS.index(kind)}")
    rng = np.random.default_rng(SPLITS.index(kind))
    seen = {"fused": 0, "fault": 0, "broken": 0, "whole": 0}
    for lo in LO if not zero else [0]:
        for lim in LIM:
            hi = lim if zero else lo + lim
            interval = hi < 2**63 and lim < 2**64 - 1
            for i0 in [lo, lo + 1, hi - ROWS + 1, hi - ROWS + 2, lo - 1, 0, -(2**63)]:
                if not -(2**63) <= i0 <= 2**63 - 1 - ROWS:
                    continue
                for _ in range(30):
                    starts, diags, values = _split_rows(rng, i0, lo, hi, gap)
                    n = starts[-1]
                    fault_w = ffi.new("int64_t[4]")
                    facts = ffi.new("uint64_t *")
                    out = ffi.new("int64_t[]", max(n, 1))
                    got = run(
                        ffi.new("int64_t[]", values or [0]),
                        ffi.new("int64_t[]", starts),
                        ffi.new("int64_t[]", diags),
                        i0,
                        ROWS,
                        lo,
                        lim,
                        fault_w,
                        facts,
                        out,
                    )
                    where = f"lo={lo} lim={lim} i0={i0} rows={starts} diags={diags} {values}"
                    fits = i0 - gap >= -(2**63) and i0 + ROWS + gap < 2**63
                    inside = lo <= i0 and i0 + ROWS - 1 <= hi and fits
                    assert got == (interval and inside), where
                    if not got:
                        continue
                    fault, broken, expect = _split_expected(values, starts, diags, i0, lo, hi, gap)
                    assert list(fault_w) == fault, where
                    assert list(out)[:n] == expect, where
                    if not fault[0]:
                        assert bool(facts[0]) == broken, where
                    seen["fused"] += 1
                    seen["fault"] += bool(fault[0])
                    seen["broken"] += not fault[0] and broken
                    seen["whole"] += not fault[0] and not broken
    assert min(seen.values()) > 20, seen

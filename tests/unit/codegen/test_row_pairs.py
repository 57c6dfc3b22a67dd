"""The fused reads of spf.codegen.row_pairs against the tests they replace, value by value.

``spf_pair_<uf>`` (one unsigned comparison per entry, a slow path behind it) must record
the same range faults, clamp the same way and flag a broken pair exactly where the
separate tests do (``spf_read_<uf>``'s range test, then ``V(k) - V(k - 1) >= gap`` inside
a row), for every range the bounds can give where the fused loop runs (from 0 or not, at
the ends of int64, and with gaps 0 and 1), and the fused loop must not run where the
accepted range is no interval of fewer than ``2**64`` values (empty, wrapping, the
widest). Run on random rows of values drawn around those ends, through the printed C.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import cffi
import numpy as np
import pytest

from spf.codegen import row_pairs
from spf.codegen.loop_ast import Block, For, Int, Var
from spf.codegen.row_blocks import Pair

LO = [0, -5, 3, -(2**63), 2**63 - 3]
LIM = [0, 1, 10, 2**62, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]
MASK = 2**64 - 1


def _driver(zero: bool, gap: int) -> str:
    fused = row_pairs.Fused("col", "int64_t", 0, zero, Pair("col", "int64_t", gap, frozenset(), 1))
    pairs = row_pairs.RowPairs(For("i", Int(0), Var("rows"), 1, Block(()), 0), (fused,))
    lines = [
        "#include <stdint.h>",
        "static void spf_fault_note(int64_t *f, int64_t kind, int64_t uf, int64_t at, int64_t v)",
        "{ if (!f[0]) { f[0] = kind; f[1] = uf; f[2] = at; f[3] = v; } }",
        *row_pairs.helper_chunk(pairs).lines,
        "int run(const int64_t *restrict col, const int64_t *restrict starts, int64_t rows,",
        "        int64_t spf_lo_0, uint64_t spf_lim_0, int64_t *restrict spf_fault,",
        "        uint64_t *restrict facts, int64_t *restrict out)",
        "{",
        "  uint64_t spf_facts = 0;",
        f"  if (!({row_pairs.whole(pairs)})) return 0;",
        "  {",
        *row_pairs.open_lines(pairs),
        "  for (int64_t i = 0; i < rows; i++)",
        "  {",
        *row_pairs.row_lines(pairs),
        "    for (int64_t k = starts[i]; k < starts[i + 1]; k++) out[k] = col(k);",
        "  }",
        "  }",
        "  *facts = spf_facts;",
        "  return 1;",
        "}",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[bool, int], Any]:
    folder = tmp_path_factory.mktemp("row_pairs")
    ffi = cffi.FFI()
    ffi.cdef(
        "int run(const int64_t *col, const int64_t *starts, int64_t rows, int64_t lo, "
        "uint64_t lim, int64_t *fault, uint64_t *facts, int64_t *out);"
    )
    out = {}
    for zero in (True, False):
        for gap in (0, 1):
            c = Path(folder / f"p{int(zero)}{gap}.c")
            c.write_text(_driver(zero, gap))
            so = c.with_suffix(".so")
            cmd = ["gcc", "-std=c99", "-O2", "-fPIC", "-shared", "-Wall", "-o", str(so), str(c)]
            subprocess.run(cmd, check=True)
            out[zero, gap] = (ffi, ffi.dlopen(str(so)))
    return out


def _expected(values: list[int], starts: list[int], lo: int, lim: int, zero: bool, gap: int) -> Any:
    """The separate tests: ``spf_read_<uf>`` then the pair with the previous raw entry."""
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
            elif k > starts[r] and values[k] - values[k - 1] < gap:
                broken = True
            out.append(v)
    return fault, broken, out


@pytest.mark.parametrize("zero", [True, False])
@pytest.mark.parametrize("gap", [0, 1])
def test_fused_reads_match_the_separate_tests(built: Any, zero: bool, gap: int) -> None:
    ffi, lib = built[zero, gap]
    rng = np.random.default_rng(11 + gap + 2 * zero)
    for lo in LO:
        for lim in LIM:
            hi = lim if zero else lo + lim
            # one interval of int64 values, of fewer than 2**64: else the checked loops run
            interval = hi < 2**63 and lim < 2**64 - 1
            ends = [lo, hi, lo - 1, hi + 1, 0, -1, 2**63 - 1, -(2**63)]
            ends = [e for e in ends if -(2**63) <= e < 2**63]
            for _ in range(40):
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
                ran = lib.run(col, ffi.new("int64_t[]", starts), 6, lo, lim, fault_w, facts, out)
                where = f"lo={lo} lim={lim} rows={starts} values={values}"
                assert ran == interval, where
                if not ran:
                    continue
                fault, broken, expect = _expected(values, starts, lo, lim, zero, gap)
                assert list(fault_w) == fault, where
                assert list(out)[:n] == expect, where
                if not fault[0]:  # after a fault, the facts are not reported
                    assert bool(facts[0]) == broken, where

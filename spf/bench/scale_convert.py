"""``spf bench --only scale``, part ``convert``: every destination of ``spf.formats.convert``
against scipy, or spf's numpy helper where scipy has no such format, on every SuiteSparse
matrix and on matrices with one dense row (API.md §16: conversions stay linear).

Conversions (1 thread, ``check=False``: the conversion's own work; what ``check=True`` adds
is the ``checks`` part's subject), each against its reference:

* COO -> CSR (entries shuffled, so that the sort does work) against ``coo.tocsr()`` of the
  same shuffled entries;
* CSR -> COO, CSR -> CSC, CSR -> DIA against ``csr.tocoo()``, ``csr.tocsc()``,
  ``csr.todia()``; DIA -> CSR and BCSR(4, 4) -> CSR against ``dia.tocsr()``, ``bsr.tocsr()``;
* CSR -> BCSR(4, 4) against ``tobsr(blocksize=(4, 4))`` of the matrix zero-padded to
  multiples of 4 (padded outside the timing: scipy refuses other shapes);
* CSR -> ELL against ``spf.sparse.ell_args`` and CSR -> SELL(8, 32) against
  ``spf.sparse.sell_args``, spf's numpy builders of those arrays (scipy has neither format).

ELL and DIA are left out where their padding (``N*W``, ``ND*N`` slots) exceeds
``PADDING_LIMIT`` times the entries (``arrow`` would need tens of GB). Every result is
checked against its reference before timing. Matrices: the SuiteSparse folder (``--quick``:
``arrow`` only) and ``dense row 10k`` / ``dense row 50k``: 100,000 x 100,000, 5 random
entries per row, and row 7 holding 10,000 or 50,000 (``--quick``: the 10k one only, on
20,000 rows, and only the two conversions with targets). Medians of interleaved rounds of
the calling thread's CPU time (``time.thread_time``: every conversion here runs on one
thread, and on a shared machine the wall time mostly measures the other processes).
Targets: ``arrow`` to BCSR(4, 4) within 2x of ``tobsr``, to SELL(8, 32) within 2x of
``sell_args``.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import spf.sparse
from spf.bench.common import Context, Section, Variant, load_note, measure, median
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, Format, convert

sp: Any = importlib.import_module("scipy.sparse")

PADDING_LIMIT = 20
"""ELL and DIA are timed where their slots number at most this many times the entries."""

Reference = Callable[[Any], Callable[[], object]]


def _padded(m: Any, r: int) -> Any:
    """``m`` with zero rows and columns up to multiples of ``r`` (scipy's tobsr needs them)."""
    n, k = m.shape
    big = sp.csr_array((m.data, m.indices, m.indptr), shape=(n, k))
    big.resize((-(-n // r) * r, -(-k // r) * r))
    return big


def _tobsr(m: Any) -> Callable[[], object]:
    padded = _padded(m, 4)
    return lambda: padded.tobsr(blocksize=(4, 4))


def _order(nnz: int) -> Any:
    """The order a COO matrix's entries come in here: shuffled (seeded), so that the
    conversion to CSR sorts, for spf and scipy alike."""
    return np.random.default_rng(0).permutation(nnz)


def _coo_tocsr(m: Any) -> Callable[[], object]:
    coo = m.tocoo()
    order = _order(coo.nnz)
    shuffled = sp.coo_array((coo.data[order], (coo.row[order], coo.col[order])), shape=m.shape)
    shuffled.has_canonical_format = False  # scipy checks nothing then: it sorts, as spf does
    return lambda: shuffled.tocsr()


CASES: tuple[tuple[str, Format, Format, str, Reference], ...] = (
    ("COO -> CSR", COO, CSR, "shuffled coo.tocsr()", _coo_tocsr),
    ("CSR -> COO", CSR, COO, "csr.tocoo()", lambda m: m.tocoo),
    ("CSR -> CSC", CSR, CSC, "csr.tocsc()", lambda m: m.tocsc),
    ("CSR -> DIA", CSR, DIA, "csr.todia()", lambda m: m.todia),
    ("DIA -> CSR", DIA, CSR, "dia.tocsr()", lambda m: m.todia().tocsr),
    ("CSR -> ELL", CSR, ELL, "spf.sparse.ell_args", lambda m: lambda: spf.sparse.ell_args(m)),
    ("CSR -> BCSR(4, 4)", CSR, BCSR(4, 4), "padded.tobsr((4, 4))", _tobsr),
    ("BCSR(4, 4) -> CSR", BCSR(4, 4), CSR, "bsr.tocsr()",
     lambda m: _padded(m, 4).tobsr(blocksize=(4, 4)).tocsr),
    ("CSR -> SELL(8, 32)", CSR, SELL(8, 32), "spf.sparse.sell_args",
     lambda m: lambda: spf.sparse.sell_args(m, 8, 32)),
)  # fmt: skip
TARGETS = ("CSR -> BCSR(4, 4)", "CSR -> SELL(8, 32)")


def suitesparse_dir() -> Path:
    """The SuiteSparse matrices: ``$SPF_SUITESPARSE``, else ``shared/data/suitesparse`` beside
    the checkout (where the test suite finds them)."""
    env = os.environ.get("SPF_SUITESPARSE")
    if env:
        return Path(env)
    return Path(spf.__file__).resolve().parents[2] / "shared" / "data" / "suitesparse"


def dense_row(n: int, length: int, seed: int = 0) -> Any:
    """``n x n``, 5 random entries per row, and row 7 holding ``length`` entries."""
    rng = np.random.default_rng(seed)
    rows = np.concatenate([np.repeat(np.arange(n), 5), np.full(length, 7)])
    cols = np.concatenate([rng.integers(0, n, 5 * n), rng.permutation(n)[:length]])
    m = sp.csr_array((rng.standard_normal(len(rows)), (rows, cols)), shape=(n, n))
    m.sum_duplicates()
    return m


def matrices(quick: bool) -> list[tuple[str, Any]]:
    """``(label, canonical CSR)`` of each matrix timed."""
    folder = suitesparse_dir()
    names = ["arrow"] if quick else sorted(p.stem for p in folder.glob("*.mtx"))
    found = [(n, spf.sparse.read_matrix_market(folder / f"{n}.mtx")) for n in names
             if (folder / f"{n}.mtx").exists()]  # fmt: skip
    if quick:
        return [*found, ("dense row 10k", dense_row(20_000, 10_000))]
    return [*found, ("dense row 10k", dense_row(100_000, 10_000)),
            ("dense row 50k", dense_row(100_000, 50_000))]  # fmt: skip


def _padding(m: Any, dst: Format) -> int:
    """Slots ELL or DIA would store for ``m`` (0 for the other formats)."""
    n = int(m.shape[0])
    if dst is ELL:
        return n * int(np.diff(m.indptr).max(initial=0))
    if dst is DIA:
        rows = np.repeat(np.arange(n), np.diff(m.indptr))
        return n * len(np.unique(m.indices.astype(np.int64) - rows))
    return 0


def _args(m: Any, src: Format) -> dict[str, Any]:
    args = spf.sparse.format_args(m, src, "int32")
    if src is COO:  # in no particular order, as a COO matrix comes
        order = _order(len(args["A"]))
        for a in ("row", "col", "A"):
            args[a] = np.ascontiguousarray(args[a][order])
    return args


def _same(out: dict[str, Any], m: Any, dst: Format) -> bool:
    """The conversion built ``m`` in ``dst``: the same matrix for COO and CSR (explicit zeros
    and the padding of laid-out sources aside), the same arrays as spf.sparse's builders for
    the other formats."""
    if dst in (COO, CSR):
        shape = (out["N"], out["M"])
        if dst is COO:
            got = sp.coo_array((out["A"], (out["row"], out["col"])), shape=shape).tocsr()
        else:
            got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=shape)
        want = sp.csr_array(m, copy=True)
        want.resize(shape)
        diff = abs(got - want)
        return bool(diff.nnz == 0 or diff.max() == 0.0)
    want_args = spf.sparse.format_args(m, dst, "int32")
    return all(
        np.array_equal(np.asarray(out[k]).reshape(-1), np.asarray(v).reshape(-1))
        for k, v in want_args.items()
    )


def run(ctx: Context) -> Section:
    sec = Section("scale_convert")
    quick = ctx.cfg.quick
    cases = [c for c in CASES if not quick or c[0] in TARGETS]
    rounds = 3 if quick else 9
    kernels: dict[str, Any] = {}
    rows: list[list[str]] = []
    ms_all: dict[str, dict[str, tuple[float, float]]] = {}
    notes: list[str] = []
    for label, m in matrices(quick):
        ctx.log(f"scale convert: {label}")
        variants: list[Variant] = []
        timed: list[tuple[str, str]] = []
        for name, src, dst, what, ref in cases:
            slots = max(_padding(m, src), _padding(m, dst))
            if slots > PADDING_LIMIT * max(m.nnz, 1):
                notes.append(f"{label}: {name} left out ({slots:,} slots for {m.nnz:,} entries)")
                continue
            if name not in kernels:
                kernels[name] = convert(src, dst).compile(cache_dir=str(ctx.work / "kernels"))
                kernels[name].check = False
            kernel, args = kernels[name], _args(m, src)
            if not _same(kernel(**args), m, dst):
                raise SystemExit(f"scale convert: {name} on {label} differs from its reference")

            def call(k: Any = kernel, a: Any = args) -> None:
                k(**a)

            variants += [(f"spf {name}", 1, call), (f"ref {name}", 1, ref(m))]
            timed.append((name, what))
        ctx.rt.set_threads(1)
        times, load = measure(ctx, variants, rounds, warmup=1, clock=time.thread_time)
        ms = {code: 1e3 * median(ts) for (code, _), ts in times.items()}
        ms_all[label] = {}
        for name, what in timed:
            s_ms, r_ms = ms[f"spf {name}"], ms[f"ref {name}"]
            ms_all[label][name] = (s_ms, r_ms)
            rows.append([label, f"{m.nnz:,}", name, f"{s_ms:.2f}", what, f"{r_ms:.2f}",
                         f"{s_ms / r_ms:.2f}"])  # fmt: skip
            if label == "arrow" and name in TARGETS:
                sec.target(
                    f"convert {name} on arrow <= 2x {what} (1 thread)",
                    f"{s_ms / r_ms:.2f}x",
                    s_ms <= 2 * r_ms,
                )
        sec.data.setdefault("load", {})[label] = load
    sec.line(
        "Conversions (`check=False`) against scipy / spf's numpy builders, 1 thread, CPU "
        "time of the calling thread per call (medians of interleaved rounds)\n"
    )
    sec.line(load_note(load) + " (last matrix)\n")
    header = ["matrix", "nnz", "conversion", "spf CPU ms", "reference", "ref CPU ms", "ratio"]
    sec.table(header, rows, "lrlrlrr")
    for note in notes:
        sec.line(f"- {note}")
    sec.data["median_ms"] = ms_all
    return sec

"""Formats as relations: SpMV generated from each built-in format's relation against the
hand-written C loop for that format (1 thread), and conversions against scipy.

Matrix: the 2-D Poisson matrix of the ``spmv`` section (5 diagonals, so DIA and ELL store it
without waste). Every code is checked against ``A @ x`` first; ratios come from one
interleaved run (``spmv_rounds`` calls each). Conversions (``spf.formats.convert``) on a
uniform random COO matrix with ``5 * poisson_grid**2`` entries, interleaved with scipy's
(medians of ``spmv_rounds // 10`` calls): COO -> CSR (columns sorted, duplicates summed)
against ``coo.tocsr()``, the same with the entries already in order, COO -> CSC, CSR -> CSC
against ``csr.tocsc()`` and CSR -> COO against ``csr.tocoo()``. The SELL inspector
synthesized from the relation against the hand-written one: :mod:`spf.bench.formats_sell`.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, load_c, load_note, measure, median
from spf.bench.formats_sell import sell_inspector
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, Format, convert

sp: Any = importlib.import_module("scipy.sparse")

HAND_C = r"""
#include <stdint.h>
typedef int32_t I;
void h_coo(int64_t nnz, const I *row, const I *col, const double *a, const double *x,
           double *y)
{ for (int64_t k = 0; k < nnz; k++) y[row[k]] += a[k] * x[col[k]]; }
void h_csr(int64_t n, const I *rp, const I *col, const double *a, const double *x, double *y)
{
  for (int64_t i = 0; i < n; i++) {
    double s = y[i];
    for (int64_t k = rp[i]; k < rp[i + 1]; k++) s += a[k] * x[col[k]];
    y[i] = s;
  }
}
void h_csc(int64_t m, const I *cp, const I *row, const double *a, const double *x, double *y)
{
  for (int64_t j = 0; j < m; j++) {
    double xj = x[j];
    for (int64_t k = cp[j]; k < cp[j + 1]; k++) y[row[k]] += a[k] * xj;
  }
}
void h_dia(int64_t n, int64_t m, int64_t nd, const I *off, const double *a, const double *x,
           double *y)
{
  for (int64_t d = 0; d < nd; d++) {
    int64_t o = off[d], lo = o < 0 ? -o : 0, hi = n < m - o ? n : m - o;
    for (int64_t i = lo; i < hi; i++) y[i] += a[d * n + i] * x[i + o];
  }
}
void h_ell(int64_t n, int64_t w, const I *col, const double *a, const double *x, double *y)
{
  for (int64_t i = 0; i < n; i++)
    for (int64_t s = 0; s < w; s++) y[i] += a[i * w + s] * x[col[i * w + s]];
}
void h_bcsr22(int64_t nb, const I *bp, const I *bcol, const double *a, const double *x,
              double *y)
{
  for (int64_t ib = 0; ib < nb; ib++)
    for (int64_t kb = bp[ib]; kb < bp[ib + 1]; kb++)
      for (int r = 0; r < 2; r++)
        for (int c = 0; c < 2; c++)
          y[2 * ib + r] += a[4 * kb + 2 * r + c] * x[2 * bcol[kb] + c];
}
void h_sell8(int64_t n, int64_t nc, const I *cs, const I *cl, const I *scol, const double *v,
             const double *x, double *y)
{
  for (int64_t ch = 0; ch < nc; ch++)
    for (int64_t w = 0; w < cl[ch]; w++)
      for (int64_t r = 0; r < 8 && 8 * ch + r < n; r++) {
        int64_t k = cs[ch] + 8 * w + r;
        y[8 * ch + r] += v[k] * x[scol[k]];
      }
}
"""
HAND_CDEF = """
typedef int32_t I;
void h_coo(int64_t, const I *, const I *, const double *, const double *, double *);
void h_csr(int64_t, const I *, const I *, const double *, const double *, double *);
void h_csc(int64_t, const I *, const I *, const double *, const double *, double *);
void h_dia(int64_t, int64_t, int64_t, const I *, const double *, const double *, double *);
void h_ell(int64_t, int64_t, const I *, const double *, const double *, double *);
void h_bcsr22(int64_t, const I *, const I *, const double *, const double *, double *);
void h_sell8(int64_t, int64_t, const I *, const I *, const I *, const double *,
             const double *, double *);
"""
FORMATS: tuple[Format, ...] = (COO, CSR, CSC, DIA, ELL, BCSR(2, 2), SELL(8, 1))


def _hand(ffi: Any, lib: Any, fmt: Format, a: dict[str, Any], x: Any, y: Any) -> Any:
    """The hand-written loop for ``fmt`` on its arguments ``a``."""
    fb = ffi.from_buffer

    def i32(name: str) -> Any:
        return fb("int32_t[]", a[name])

    def f64(arr: Any) -> Any:
        return fb("double[]", arr)

    xb, yb = f64(x), f64(y)
    calls = {
        "COO": lambda: lib.h_coo(a.get("NNZ", 0), i32("row"), i32("col"), f64(a["A"]), xb, yb),
        "CSR": lambda: lib.h_csr(a.get("N", 0), i32("rowptr"), i32("col"), f64(a["A"]), xb, yb),
        "CSC": lambda: lib.h_csc(a.get("M", 0), i32("colptr"), i32("row"), f64(a["A"]), xb, yb),
        "DIA": lambda: lib.h_dia(
            a.get("N", 0), a.get("M", 0), a.get("ND", 0), i32("offsets"), f64(a["A"]), xb, yb
        ),
        "ELL": lambda: lib.h_ell(a.get("N", 0), a.get("W", 0), i32("col"), f64(a["A"]), xb, yb),
        "BCSR2x2": lambda: lib.h_bcsr22(
            a.get("NB", 0), i32("browptr"), i32("bcol"), f64(a["A"]), xb, yb
        ),
        "SELL8_1": lambda: lib.h_sell8(
            a.get("N", 0), a.get("NC", 0), i32("cs"), i32("cl"), i32("scol"), f64(a["val"]), xb, yb
        ),
    }
    return calls[fmt.name]


def _spmv(ctx: Context, sec: Section) -> None:
    g = ctx.cfg.poisson_grid
    matrix = sp.csr_array(spf.sparse.poisson2d(g))
    n = matrix.shape[0]
    x = np.random.default_rng(1).uniform(-1.0, 1.0, n + 1)  # +1: BCSR pads to even
    ffi, lib, command = load_c(HAND_C, HAND_CDEF, "bench_hand_formats", str(ctx.work))
    sec.data["hand_command"] = command
    want = matrix @ x[:n]
    variants: list[Variant] = []
    ys: dict[str, Any] = {}
    for fmt in FORMATS:
        args = spf.sparse.format_args(matrix, fmt, "int32")
        kernel = spf.kernels.spmv(fmt).compile(cache_dir=str(ctx.work / "kernels"))
        for code in ("spf", "hand"):
            y = ys[f"{code} {fmt.name}"] = np.zeros(n + 1)
            extent_y, extent_x = fmt.extents(args)
            xs, ysl = x[:extent_x], y[:extent_y]
            if code == "spf":

                def call(k: Any = kernel, yv: Any = ysl, xv: Any = xs, kw: Any = args) -> None:
                    k(y=yv, x=xv, check=False, **kw)

                fn: Any = call
            else:
                fn = _hand(ffi, lib, fmt, args, xs, ysl)
            fn()
            if not np.allclose(y[:n], want, rtol=1e-12, atol=1e-12):
                raise SystemExit(f"formats: {code} {fmt.name} SpMV gives a wrong y")
            variants.append((f"{code} {fmt.name}", 1, fn))
    ctx.rt.set_threads(1)
    times, load = measure(ctx, variants, ctx.cfg.spmv_rounds)
    ms = {code: 1e3 * median(ts) for (code, _), ts in times.items()}
    sec.line(
        f"### SpMV over each built-in format, Poisson {g}x{g}, nnz = {matrix.nnz:,}, 1 thread\n"
    )
    sec.line(load_note(load) + "\n")
    rows = []
    for fmt in FORMATS:
        spf_ms, hand_ms = ms[f"spf {fmt.name}"], ms[f"hand {fmt.name}"]
        rows.append([fmt.name, f"{spf_ms:.3f}", f"{hand_ms:.3f}", f"{spf_ms / hand_ms:.3f}"])
        sec.target(
            f"SpMV spmv({fmt.name}) <= 1.10x hand C (1 thread)",
            f"{spf_ms / hand_ms:.3f}x",
            spf_ms <= 1.10 * hand_ms,
        )
    sec.table(["format", "spf ms", "hand C ms", "spf / hand"], rows)
    sec.data["spmv_median_ms"] = ms


def _conversions(ctx: Context, sec: Section) -> None:
    n = ctx.cfg.poisson_grid**2
    nnz = 5 * n
    rng = np.random.default_rng(0)
    coo = sp.coo_array(
        (rng.standard_normal(nnz), (rng.integers(0, n, nnz), rng.integers(0, n, nnz))),
        shape=(n, n),
    )
    csr = coo.tocsr()
    csr.sum_duplicates()
    csr.sort_indices()
    ordered = csr.tocoo()  # entries by (row, column), no duplicates: the copy path
    ordered.has_canonical_format = False  # scipy checks the order itself, as spf does
    cases = (  # (label, src, dst, spf arguments, scipy call, scipy text, a target?)
        ("COO -> CSR", COO, CSR, spf.sparse.coo_args(coo), coo.tocsr, "coo.tocsr()", True),
        ("COO -> CSR, input in order", COO, CSR, spf.sparse.coo_args(ordered),
         ordered.tocsr, "coo.tocsr()", False),
        ("COO -> CSC", COO, CSC, spf.sparse.coo_args(coo), coo.tocsc, "coo.tocsc()", False),
        ("CSR -> CSC", CSR, CSC, spf.sparse.csr_args(csr), csr.tocsc, "csr.tocsc()", True),
        ("CSR -> COO", CSR, COO, spf.sparse.csr_args(csr), csr.tocoo, "csr.tocoo()", False),
    )  # fmt: skip
    variants: list[Variant] = []
    kernels = {}
    for label, src, dst, args, ref, _, _ in cases:
        key = (src.name, dst.name)
        if key not in kernels:
            kernels[key] = convert(src, dst).compile(cache_dir=str(ctx.work / "kernels"))
            kernels[key].check = False
        kernel = kernels[key]

        def call(k: Any = kernel, a: Any = args) -> None:
            k(**a)

        variants += [(f"spf {label}", 1, call), (f"scipy {label}", 1, ref)]
    ctx.rt.set_threads(1)
    rounds = max(3, ctx.cfg.spmv_rounds // 10)
    times, load = measure(ctx, variants, rounds, warmup=1)
    ms = {code: 1e3 * median(ts) for (code, _), ts in times.items()}
    sec.line(f"### Conversions, uniform random {n:,} x {n:,}, {nnz:,} COO entries, 1 thread\n")
    sec.line(load_note(load) + "\n")
    rows = []
    for label, src, dst, _, _, what, target in cases:
        spf_ms, ref_ms = ms[f"spf {label}"], ms[f"scipy {label}"]
        rows.append([label, f"{spf_ms:.1f}", what, f"{ref_ms:.1f}", f"{spf_ms / ref_ms:.2f}"])
        if target:
            sec.target(
                f"convert({src.name}, {dst.name}) <= 1.0x scipy {what} ({nnz:,} entries, 1 thread)",
                f"{spf_ms / ref_ms:.2f}x",
                spf_ms <= ref_ms,
            )
    sec.table(["conversion", "spf ms", "scipy", "scipy ms", "spf / scipy"], rows, "llrlr")
    sec.data["convert_median_ms"] = ms


def run(ctx: Context) -> Section:
    sec = Section("formats")
    ctx.log("formats: SpMV per format")
    _spmv(ctx, sec)
    ctx.log("formats: conversions")
    _conversions(ctx, sec)
    ctx.log("formats: SELL inspector")
    sell_inspector(ctx, sec)
    return sec

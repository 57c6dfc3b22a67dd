"""The ``hand C fused`` rows of ``spf bench --only fused``: the ceiling of the fused lower
solve and ``y = A·x`` on this machine.

Written by hand in C, on the same matrix (``rowptr``, ``col``, ``diag`` and the values, 32-bit
indices), each row's arithmetic in the serial kernels' order (so the same bits):

* ``hand C fused in order`` (one thread): solve row ``i``, then every product row whose last
  column is ``i`` or less, in increasing order; no plan, no barrier. The product's rows,
  independent of each other, fill the stalls of the solve's chain (each row waits on the
  division of the row before), and read the rows of ``A`` the solve read a grid row earlier;
* ``hand C fused parts``: spf's coarse plan of the fused loop (its coarse levels and parts,
  copied to 32-bit), one parallel region, a ``#pragma omp for`` per coarse level, each part
  its solve rows and then its product rows in two loops (no test of the node's kernel per
  node; a part's product rows read only solve rows of earlier levels or of the part);
* ``hand C fused parts interleaved``: the same parts, each part's rows in the plan's order
  (a product row right after the solve row that completes it,
  :mod:`spf.runtime.interleave`), the node's kernel tested per node.

Neither pays a kernel call's costs (argument checks, the plan's fingerprint), so the
distance from spf's fused rows to them is what spf's executor and call add.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spf.bench.common import Context, Variant, load_c

FUSED_C = r"""
#include <stdint.h>
static inline void solve_row(int32_t i, const int32_t *restrict rowptr,
                             const int32_t *restrict col, const int32_t *restrict diag,
                             const double *restrict a, const double *restrict b,
                             double *restrict x)
{
  double s = b[i];
  const int32_t d = diag[i];
  for (int32_t k = rowptr[i]; k < d; k++)
    s -= a[k] * x[col[k]];
  x[i] = s / a[d];
}
static inline void product_row(int32_t i, const int32_t *restrict rowptr,
                               const int32_t *restrict col, const double *restrict a,
                               const double *restrict x, double *restrict y)
{
  double s = y[i];
  for (int32_t k = rowptr[i]; k < rowptr[i + 1]; k++)
    s += a[k] * x[col[k]];
  y[i] = s;
}
/* x = (D + L)^-1 b, then y += A x, row by row: product row p runs once the solve has
   passed its last column (columns sorted within a row). */
void hand_fused_in_order(int32_t n, const int32_t *restrict rowptr, const int32_t *restrict col,
                         const int32_t *restrict diag, const double *restrict a,
                         const double *restrict b, double *restrict x, double *restrict y)
{
  int32_t p = 0;
  for (int32_t i = 0; i < n; i++) {
    solve_row(i, rowptr, col, diag, a, b, x);
    while (p < n && (rowptr[p + 1] == rowptr[p] || col[rowptr[p + 1] - 1] <= i))
      product_row(p++, rowptr, col, a, x, y);
  }
  for (; p < n; p++)
    product_row(p, rowptr, col, a, x, y);
}
/* A coarse plan: coarse level c runs the parts cptr[c] .. cptr[c + 1] - 1 in parallel, part
   q the solve rows order[pptr[q]] .. order[mid[q] - 1], then the product rows
   order[mid[q]] - n .. order[pptr[q + 1] - 1] - n. */
/* The same parts, each part's nodes in the plan's order: node o < n is solve row o, else
   product row o - n. */
void hand_fused_interleaved(int32_t n, int32_t levels, const int32_t *restrict cptr,
                            const int32_t *restrict pptr, const int32_t *restrict order,
                            const int32_t *restrict rowptr, const int32_t *restrict col,
                            const int32_t *restrict diag, const double *restrict a,
                            const double *restrict b, double *restrict x, double *restrict y)
{
  #pragma omp parallel
  for (int32_t c = 0; c < levels; c++) {
    #pragma omp for schedule(static)
    for (int32_t q = cptr[c]; q < cptr[c + 1]; q++)
      for (int32_t t = pptr[q]; t < pptr[q + 1]; t++) {
        const int32_t o = order[t];
        if (o < n)
          solve_row(o, rowptr, col, diag, a, b, x);
        else
          product_row(o - n, rowptr, col, a, x, y);
      }
  }
}
void hand_fused_parts(int32_t n, int32_t levels, const int32_t *restrict cptr,
                      const int32_t *restrict pptr, const int32_t *restrict mid,
                      const int32_t *restrict order, const int32_t *restrict rowptr,
                      const int32_t *restrict col, const int32_t *restrict diag,
                      const double *restrict a, const double *restrict b, double *restrict x,
                      double *restrict y)
{
  #pragma omp parallel
  for (int32_t c = 0; c < levels; c++) {
    #pragma omp for schedule(static)
    for (int32_t q = cptr[c]; q < cptr[c + 1]; q++) {
      for (int32_t t = pptr[q]; t < mid[q]; t++)
        solve_row(order[t], rowptr, col, diag, a, b, x);
      for (int32_t t = mid[q]; t < pptr[q + 1]; t++)
        product_row(order[t] - n, rowptr, col, a, x, y);
    }
  }
}
"""
FUSED_CDEF = """
void hand_fused_interleaved(int32_t n, int32_t levels, const int32_t *cptr, const int32_t *pptr,
                            const int32_t *order, const int32_t *rowptr, const int32_t *col,
                            const int32_t *diag, const double *a, const double *b, double *x,
                            double *y);
void hand_fused_in_order(int32_t n, const int32_t *rowptr, const int32_t *col,
                         const int32_t *diag, const double *a, const double *b, double *x,
                         double *y);
void hand_fused_parts(int32_t n, int32_t levels, const int32_t *cptr, const int32_t *pptr,
                      const int32_t *mid, const int32_t *order, const int32_t *rowptr,
                      const int32_t *col, const int32_t *diag, const double *a,
                      const double *b, double *x, double *y);
"""


def by_kernel(order: np.ndarray, partptr: np.ndarray) -> np.ndarray:
    """``order`` with each part's nodes (``order[partptr[q]:partptr[q + 1]]``) sorted, so
    its solve rows come first: a part of the interleaved plan runs each product row after
    the solve rows of the part it reads, which then all come before it."""
    part = np.repeat(np.arange(len(partptr) - 1), np.diff(partptr))
    out: np.ndarray = order[np.lexsort((order, part))]
    return out


def kernel_split(order: np.ndarray, partptr: np.ndarray, n: int) -> np.ndarray:
    """Per part of a fused plan (its nodes ``order[partptr[q]:partptr[q + 1]]``, solve nodes
    first: :func:`by_kernel`), the first position of a product node (``>= n``)."""
    if not len(order):
        return partptr[1:].copy()
    counts = np.add.reduceat((order >= n).astype(np.int64), partptr[:-1])
    mid: np.ndarray = partptr[1:] - counts
    return mid


def hand_fused(
    ctx: Context,
    plan: Any,
    args: dict[str, Any],
    b: np.ndarray,
    want: tuple[np.ndarray, np.ndarray],
) -> list[Variant]:
    """The ``hand C fused in order`` variant (one thread), ``hand C fused parts`` and
    ``hand C fused parts interleaved`` at each of ``ctx.threads`` on the coarse levels of
    ``plan``, each checked bitwise against ``want`` (x, y)."""
    ffi, lib, _ = load_c(FUSED_C, FUSED_CDEF, "bench_hand_fused", str(ctx.work))
    n = int(args["N"])
    parts = plan.parts
    partptr = np.asarray(plan.part_ptr)[: parts + 1].astype(np.int64)
    interleaved = np.asarray(plan.coarse_order)
    order = by_kernel(interleaved, partptr)
    mid = kernel_split(order, partptr, n)
    fb = ffi.from_buffer
    as32 = [np.ascontiguousarray(args[k], dtype=np.int32) for k in ("rowptr", "col", "diag")]
    csr = [fb("int32_t[]", v) for v in as32]
    x, y = np.zeros(n), np.zeros(n)
    values = [fb("double[]", np.asarray(args["A"])), fb("double[]", b)]
    out_xy = [fb("double[]", x), fb("double[]", y)]
    coarse = [
        np.asarray(plan.coarse_ptr)[: plan.coarse_levels + 1].astype(np.int32),
        partptr.astype(np.int32),
        mid.astype(np.int32),
        order.astype(np.int32),
    ]
    plan_c = [fb("int32_t[]", v) for v in coarse]
    as_planned = interleaved.astype(np.int32)
    plan_i = [plan_c[0], plan_c[1], fb("int32_t[]", as_planned)]

    def in_order() -> None:
        y[:] = 0.0
        lib.hand_fused_in_order(n, *csr, *values, *out_xy)

    def by_parts() -> None:
        y[:] = 0.0
        lib.hand_fused_parts(n, plan.coarse_levels, *plan_c, *csr, *values, *out_xy)

    def in_plan_order() -> None:
        y[:] = 0.0
        lib.hand_fused_interleaved(n, plan.coarse_levels, *plan_i, *csr, *values, *out_xy)

    made: list[Variant] = [("hand C fused in order", 1, in_order)]
    made += [("hand C fused parts", t, by_parts) for t in ctx.threads]
    made += [("hand C fused parts interleaved", t, in_plan_order) for t in ctx.threads]
    for code, t, call in made:
        ctx.rt.set_threads(t)
        x[:] = 0.0
        call()
        if not (np.array_equal(x, want[0]) and np.array_equal(y, want[1])):
            raise SystemExit(f"fused: {code} differs from the two serial kernels")
    return made

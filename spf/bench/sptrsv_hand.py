"""The ``hand C levels`` rows of ``spf bench --only sptrsv``: the ceiling of a level-scheduled
forward solve on this machine.

A level-scheduled solve written by hand in C with OpenMP, on the same matrix and the same
levels as spf's plan: the rows' segments copied once into level order (``rowptr``, ``col``
and the values: what a plan's part-ordered copies hold, :mod:`spf.runtime.copies`), 32-bit
indices, one parallel region, a ``#pragma omp for schedule(static)`` per level (one
contiguous chunk of the level's rows per thread, one barrier per level). It pays none of a
kernel call's costs (no argument checks, no checksum of the values), so the distance from
``spf wavefront auto`` to it is what spf's executor and call add, and its own speed-up over
serial spf is what this machine allows a level-scheduled solve of that matrix.

``hand C levels, prefetch``: the same loop asking the cache for the elements of the row 32
positions ahead in its level (its columns' ``u``, its own ``f`` and ``u``), as spf's
executor of copies does on large vectors (:mod:`spf.codegen.prefetch`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spf.bench.common import Context, Variant, load_c

LEVELS_C = r"""
#include <stdint.h>
/* Forward solve L u = f by levels on level-ordered copies: position p of level lv
   (levelptr[lv] <= p < levelptr[lv + 1]) is row order[p], its entries
   prow[p] .. prow[p + 1] - 1 of pcol / pval, the diagonal last. AHEAD(p, end): what runs
   before row p (nothing, or the prefetches below). */
#define LEVELS(AHEAD)                                               \
  _Pragma("omp parallel")                                           \
  for (int32_t lv = 0; lv < nlev; lv++) {                           \
    _Pragma("omp for schedule(static)")                             \
    for (int32_t p = levelptr[lv]; p < levelptr[lv + 1]; p++) {     \
      AHEAD(p, levelptr[lv + 1])                                    \
      const int32_t i = order[p];                                   \
      double s = f[i];                                              \
      const int32_t end = prow[p + 1] - 1;                          \
      for (int32_t k = prow[p]; k < end; k++)                       \
        s -= pval[k] * u[pcol[k]];                                  \
      u[i] = s / pval[end];                                         \
    }                                                               \
  }
#define NOTHING(p, last)
/* Row p + 32's elements (its columns' u, its own f and u) asked for at row p, within the
   level, as spf's executor of copies does on large vectors. */
#define PREFETCH(p, last)                                           \
  if (p + 32 < last) {                                              \
    const int32_t q = p + 32;                                       \
    __builtin_prefetch(&u[order[q]], 1, 3);                         \
    __builtin_prefetch(&f[order[q]], 0, 3);                         \
    for (int32_t k = prow[q]; k < prow[q + 1]; k++)                 \
      __builtin_prefetch(&u[pcol[k]], 0, 3);                        \
  }
#define ARGS int32_t nlev, const int32_t *restrict levelptr,         \
  const int32_t *restrict order, const int32_t *restrict prow,       \
  const int32_t *restrict pcol, const double *restrict pval,         \
  const double *restrict f, double *restrict u

void hand_levels(ARGS) { LEVELS(NOTHING) }
void hand_levels_prefetch(ARGS) { LEVELS(PREFETCH) }
"""
LEVELS_CDEF = """
void hand_levels(int32_t nlev, const int32_t *levelptr, const int32_t *order,
                 const int32_t *prow, const int32_t *pcol, const double *pval,
                 const double *f, double *u);
void hand_levels_prefetch(int32_t nlev, const int32_t *levelptr, const int32_t *order,
                          const int32_t *prow, const int32_t *pcol, const double *pval,
                          const double *f, double *u);
"""


def hand_levels(
    ctx: Context, plan: Any, args: dict[str, Any], f: np.ndarray, want: np.ndarray
) -> tuple[list[Variant], str]:
    """The ``hand C levels`` variants at each of ``ctx.threads`` on the levels of ``plan``
    (its ``levelptr`` and ``order``), checked bitwise against ``want``; and the build
    command."""
    ffi, lib, command = load_c(LEVELS_C, LEVELS_CDEF, "bench_hand_levels", str(ctx.work))
    order = np.asarray(plan.order).astype(np.int32)
    levelptr = np.asarray(plan.levelptr).astype(np.int32)
    rowptr = np.asarray(args["rowptr"]).astype(np.int64)
    lens = (rowptr[1:] - rowptr[:-1])[order]
    prow = np.zeros(len(order) + 1, dtype=np.int32)
    np.cumsum(lens, out=prow[1:])
    kmap = np.repeat(rowptr[order] - prow[:-1], lens) + np.arange(int(prow[-1]))
    pcol = np.asarray(args["col"])[kmap].astype(np.int32)
    pval = np.ascontiguousarray(np.asarray(args["L"])[kmap])
    u = np.zeros(len(f))
    fb = ffi.from_buffer
    buffers = (fb("int32_t[]", levelptr), fb("int32_t[]", order), fb("int32_t[]", prow),
               fb("int32_t[]", pcol), fb("double[]", pval), fb("double[]", f),
               fb("double[]", u))  # fmt: skip
    nlev = len(levelptr) - 1

    def call() -> None:
        lib.hand_levels(nlev, *buffers)

    def ahead() -> None:
        lib.hand_levels_prefetch(nlev, *buffers)

    out: list[Variant] = []
    for code, fn in (("hand C levels", call), ("hand C levels, prefetch", ahead)):
        for t in ctx.threads:
            ctx.rt.set_threads(t)
            u[:] = 0.0
            fn()
            if not np.array_equal(u, want):
                raise SystemExit(f"sptrsv: {code} (the hand-written solve) differs from serial")
            out.append((code, t, fn))
    return out, command

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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spf.bench.common import Context, Variant, load_c

LEVELS_C = r"""
#include <stdint.h>
/* Forward solve L u = f by levels on level-ordered copies: position p of level lv
   (levelptr[lv] <= p < levelptr[lv + 1]) is row order[p], its entries
   prow[p] .. prow[p + 1] - 1 of pcol / pval, the diagonal last. */
void hand_levels(int32_t nlev, const int32_t *restrict levelptr, const int32_t *restrict order,
                 const int32_t *restrict prow, const int32_t *restrict pcol,
                 const double *restrict pval, const double *restrict f, double *restrict u)
{
  #pragma omp parallel
  for (int32_t lv = 0; lv < nlev; lv++) {
    #pragma omp for schedule(static)
    for (int32_t p = levelptr[lv]; p < levelptr[lv + 1]; p++) {
      const int32_t i = order[p];
      double s = f[i];
      const int32_t end = prow[p + 1] - 1;
      for (int32_t k = prow[p]; k < end; k++)
        s -= pval[k] * u[pcol[k]];
      u[i] = s / pval[end];
    }
  }
}
"""
LEVELS_CDEF = """
void hand_levels(int32_t nlev, const int32_t *levelptr, const int32_t *order,
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

    out: list[Variant] = []
    for t in ctx.threads:
        ctx.rt.set_threads(t)
        u[:] = 0.0
        call()
        if not np.array_equal(u, want):
            raise SystemExit("sptrsv: the hand-written level-scheduled solve differs from serial")
        out.append(("hand C levels", t, call))
    return out, command

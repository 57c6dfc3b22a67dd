"""The node-wide and part-wide loops of :func:`spf.runtime.chains.join` and of
:func:`spf.runtime.interleave.interleave` in fixed C (:func:`build_chain_scan`).

Joining a coarse plan's levels along chains needs, besides the generated pass over the
dependences (:mod:`spf.analysis.chain_pass`), loops that numpy ran as whole-array steps:
each node's part (a repeat of the parts' numbers and a scatter through the order), each
cap's new levels (a Python loop over the parts and chains) and the joined order (a repeat,
a range and a gather). On 2-D Poisson 1M (2,012 parts) they, with the per-node needs'
gathers an earlier pass needed, took ~45 ms of a solve's ~50 ms join on a 2-core AVX2 host,
most of it the fresh arrays' page faults and the Python loop; here each is one loop reading
the order once, writing no array but its result (docs/inspection.md, "Coarse levels joined
along chains in a solve"). The same values as :mod:`spf.runtime.chains`' numpy and Python
(``tests/unit/runtime/test_chain_scan.py``). Fixed C, not generated (spf's statements
cannot write through the order's positions): built once per cache directory and flags,
beside the chain pass, and kept loaded for the process. A fused loop's interleaved parts
(:func:`spf.runtime.interleave.interleave`: the moved nodes, the new order, the work's prefix
sums and the positions a cut may fall before) are rebuilt here too, and its coarse levels cut
by rows (:func:`spf.runtime.coarse.split`), for a loop large enough to be joined, whose join
compiles this library anyway (``tests/unit/runtime/test_interleave.py``,
``test_split_rows.py``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import cffi
import numpy as np

from spf.runtime.build import load_once

if TYPE_CHECKING:
    from spf.runtime.coarse import Parts

PROTOTYPES = (
    "void spf_chain_parts32(const int64_t *partptr, int64_t lo, int64_t hi, const int32_t *order, "
    "int32_t *part)",
    "void spf_chain_parts64(const int64_t *partptr, int64_t lo, int64_t hi, const int64_t *order, "
    "int32_t *part)",
    "int64_t spf_chain_groups(const int64_t *ptr, int64_t levels, int64_t chains, "
    "const int64_t *need, const int64_t *need_low, int64_t cap, int64_t *out, int64_t *last, "
    "int64_t *cur, int64_t *held)",
    "int64_t spf_interleave32(int64_t n, const int64_t *partptr, int64_t parts, "
    "const int64_t *levelpos, int64_t levels, const int32_t *order, const int64_t *pos_of, "
    "const int64_t *last_pos, const int64_t *last_key, const uint8_t *is_free, "
    "const int64_t *work, double weight, int32_t *out, int64_t *moved, double *wsum, "
    "int64_t *allowed, int64_t *bound)",
    "int64_t spf_interleave64(int64_t n, const int64_t *partptr, int64_t parts, "
    "const int64_t *levelpos, int64_t levels, const int64_t *order, const int64_t *pos_of, "
    "const int64_t *last_pos, const int64_t *last_key, const uint8_t *is_free, "
    "const int64_t *work, double weight, int64_t *out, int64_t *moved, double *wsum, "
    "int64_t *allowed, int64_t *bound)",
    "int64_t spf_split_rows32(int64_t n, const int32_t *order, const int64_t *levelptr, "
    "int64_t levels, const int64_t *wsum, int64_t groups, int64_t extent, const uint8_t *is_free, "
    "int64_t threads, int64_t *ptr, int64_t *partptr, int32_t *out, int64_t *largest, "
    "int64_t *work)",
    "int64_t spf_split_rows64(int64_t n, const int64_t *order, const int64_t *levelptr, "
    "int64_t levels, const int64_t *wsum, int64_t groups, int64_t extent, const uint8_t *is_free, "
    "int64_t threads, int64_t *ptr, int64_t *partptr, int64_t *out, int64_t *largest, "
    "int64_t *work)",
    "void spf_search_allowed(const double *wsum, const int64_t *allowed, int64_t count, "
    "const double *target, int64_t targets, int64_t *j)",
    "void spf_gather_runs32(const int32_t *order, const int64_t *start, const int64_t *size, "
    "int64_t count, int32_t *out)",
    "void spf_gather_runs64(const int64_t *order, const int64_t *start, const int64_t *size, "
    "int64_t count, int64_t *out)",
)

SOURCE = r"""#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* part[order[j]] = p, for every position j of every part p of [lo, hi). */
#define PARTS(NAME, T)                                                                     \
void NAME(const int64_t *restrict partptr, int64_t lo, int64_t hi,                        \
          const T *restrict order, int32_t *restrict part)                                \
{                                                                                          \
  for (int64_t p = lo; p < hi; p++)                                                        \
    for (int64_t j = partptr[p]; j < partptr[p + 1]; j++)                                  \
      part[order[j]] = (int32_t)p;                                                         \
}
PARTS(spf_chain_parts32, int32_t)
PARTS(spf_chain_parts64, int64_t)

/* spf.runtime.chains.groups: each part's new level under cap. last holds (levels + 1) rows
   of chains entries (row c: each chain's new level of its last part before coarse level c),
   cur and held chains entries each. -1 when a need points at a coarse level not before its
   part's (no row for it yet), else 0. */
int64_t spf_chain_groups(const int64_t *restrict ptr, int64_t levels, int64_t chains,
                         const int64_t *restrict need, const int64_t *restrict need_low,
                         int64_t cap, int64_t *restrict out, int64_t *restrict last,
                         int64_t *restrict cur, int64_t *restrict held)
{
  for (int64_t t = 0; t < chains; t++) {
    cur[t] = -1;
    held[t] = 0;
    last[t] = -1;
  }
  for (int64_t c = 0; c < levels; c++) {
    int64_t *row = last + (c + 1) * chains;
    memcpy(row, last + c * chains, (size_t)chains * sizeof(int64_t));
    const int64_t s = ptr[c];
    for (int64_t p = s; p < ptr[c + 1]; p++) {
      const int64_t t = p - s;
      int64_t lo = cur[t];
      if (held[t] >= cap || lo < 0)
        lo += 1;
      if (need[p]) {
        if (need[p] > c)
          return -1;
        const int64_t *before = last + need[p] * chains;
        for (int64_t u = t + 1; u < chains; u++)
          if (before[u] >= lo)
            lo = before[u] + 1;
      }
      if (need_low[p]) {
        if (need_low[p] > c)
          return -1;
        const int64_t *before = last + need_low[p] * chains;
        for (int64_t u = 0; u < t; u++)
          if (before[u] >= lo)
            lo = before[u] + 1;
      }
      if (lo == cur[t]) {
        held[t] += 1;
      } else {
        cur[t] = lo;
        held[t] = 1;
      }
      out[p] = lo;
      row[t] = lo;
    }
  }
  return 0;
}

/* spf.runtime.interleave.interleave up to its cut, over n nodes (n >= 1) of a plan of parts
   partptr (parts + 1 entries) and levels starting at positions levelpos (levels + 1): the
   free nodes with a source (last_pos >= 0), by their last source's position (stable: a
   counting sort), each moved right after that source when every source at that source's
   level lies in one run of consecutive rows of its part that holds no free node and that
   level is before the node's own. Writes the new order into out, the moved nodes in their
   order into moved, the prefix sums of the work (a moved node's times weight) into wsum
   (n + 1), the positions a cut may fall before into allowed (in order, position n last),
   each level's first new position into bound (levels + 1); returns the number of moved
   nodes (0: nothing written but moved), with the number of allowed positions stored in
   allowed[n + 1], or -1 when memory runs out. */
#define INTERLEAVE(NAME, T)                                                                \
int64_t NAME(int64_t n, const int64_t *restrict partptr, int64_t parts,                    \
             const int64_t *restrict levelpos, int64_t levels, const T *restrict order,    \
             const int64_t *restrict pos_of, const int64_t *restrict last_pos,             \
             const int64_t *restrict last_key, const uint8_t *restrict is_free,            \
             const int64_t *restrict work, double weight, T *restrict out,                 \
             int64_t *restrict moved, double *restrict wsum, int64_t *restrict allowed,    \
             int64_t *restrict bound)                                                      \
{                                                                                          \
  int64_t *frees = malloc((size_t)(n + 1) * sizeof(int64_t));                              \
  int64_t *count = calloc((size_t)(n + 1), sizeof(int64_t));                               \
  int64_t *mlp = malloc((size_t)n * sizeof(int64_t));                                      \
  uint8_t *gone = calloc((size_t)n, 1);                                                    \
  if (!frees || !count || !mlp || !gone) {                                                 \
    free(frees); free(count); free(mlp); free(gone);                                       \
    return -1;                                                                             \
  }                                                                                        \
  frees[0] = 0;                                                                            \
  for (int64_t i = 0; i < n; i++) {                                                        \
    frees[i + 1] = frees[i] + (is_free[i] != 0);                                           \
    if (is_free[i] && last_pos[i] >= 0)                                                    \
      count[last_pos[i] + 1]++;                                                            \
  }                                                                                        \
  for (int64_t i = 0; i < n; i++)                                                          \
    count[i + 1] += count[i];                                                              \
  int64_t cands = count[n];                                                                \
  for (int64_t i = 0; i < n; i++) /* the candidates by last source, stable */              \
    if (is_free[i] && last_pos[i] >= 0)                                                    \
      moved[count[last_pos[i]]++] = i;                                                     \
  int64_t kept = 0, p = 0, c = 0;                                                          \
  for (int64_t k = 0; k < cands; k++) {                                                    \
    const int64_t node = moved[k], lp = last_pos[node];                                    \
    while (p + 1 <= parts && partptr[p + 1] <= lp)                                         \
      p++;                                                                                 \
    while (c + 1 <= levels && levelpos[c + 1] <= lp)                                       \
      c++;                                                                                 \
    const int64_t first = c * (n + 1) - last_key[node];                                    \
    if (first < partptr[p] || first > lp)                                                  \
      continue;                                                                            \
    const int64_t low = (int64_t)order[first], high = (int64_t)order[lp];                  \
    if (high - low != lp - first || frees[high + 1] != frees[low])                         \
      continue;                                                                            \
    if (pos_of[node] < levelpos[c + 1])                                                    \
      continue;                                                                            \
    mlp[kept] = lp;                                                                        \
    moved[kept++] = node;                                                                  \
  }                                                                                        \
  if (kept == 0) {                                                                         \
    free(frees); free(count); free(mlp); free(gone);                                       \
    return 0;                                                                              \
  }                                                                                        \
  for (int64_t k = 0; k < kept; k++)                                                       \
    gone[pos_of[moved[k]]] = 1;                                                            \
  int64_t q = 0, k = 0, lv = 0, nallowed = 0, chained = -1;                                \
  double sum = 0.0;                                                                        \
  wsum[0] = 0.0;                                                                           \
  for (int64_t at = 0; at <= n; at++) {                                                    \
    while (lv <= levels && levelpos[lv] == at)                                             \
      bound[lv++] = q;                                                                     \
    if (at == n)                                                                           \
      break;                                                                               \
    if (!gone[at]) { /* the node stays: a cut may fall before it unless it continues a     \
                        run of consecutive rows of a kernel that is not free */            \
      const int64_t node = (int64_t)order[at];                                             \
      int open = 1;                                                                        \
      if (!is_free[node]) {                                                                \
        open = !(chained >= 0 && node == chained + 1);                                     \
        chained = node;                                                                    \
      }                                                                                    \
      if (open)                                                                            \
        allowed[nallowed++] = q;                                                           \
      out[q++] = (T)node;                                                                  \
      sum += (double)work[node];                                                           \
      wsum[q] = sum;                                                                       \
    }                                                                                      \
    while (k < kept && mlp[k] == at) { /* never a cut before a moved node */               \
      const int64_t node = moved[k++];                                                     \
      if (!is_free[node])                                                                  \
        chained = node;                                                                    \
      out[q++] = (T)node;                                                                  \
      sum += (double)work[node] * weight;                                                  \
      wsum[q] = sum;                                                                       \
    }                                                                                      \
  }                                                                                        \
  allowed[nallowed++] = n;                                                                 \
  allowed[n + 1] = nallowed;                                                               \
  free(frees); free(count); free(mlp); free(gone);                                         \
  return kept;                                                                             \
}
INTERLEAVE(spf_interleave32, int32_t)
INTERLEAVE(spf_interleave64, int64_t)

/* spf.runtime.coarse._split_by_rows: each level of order (levelptr, levels + 1 entries) cut
   by row into at most threads parts, the nodes of kernel g (node g * extent + row) of a
   level in [first[g], first[g + 1]); a cut of a kernel that is not free moved to the end of
   the run of consecutive rows it falls inside; each cut at the least row whose work below
   (wsum, n + 1 entries) reaches k / threads of the level's, or the row before when that is
   nearer. Writes ptr (levels + 1), partptr (parts + 1), the nodes part by part into out,
   each level's largest part's work and each part's work; returns the number of parts, or
   -1 when memory runs out. */
#define SPLIT_ROWS(NAME, T)                                                                \
static int64_t NAME##_first(const T *order, int64_t lo, int64_t hi, int64_t target)        \
{                                                                                          \
  while (lo < hi) {                                                                        \
    const int64_t mid = lo + (hi - lo) / 2;                                                \
    if ((int64_t)order[mid] >= target)                                                     \
      hi = mid;                                                                            \
    else                                                                                   \
      lo = mid + 1;                                                                        \
  }                                                                                        \
  return lo;                                                                               \
}                                                                                          \
static int64_t NAME##_at(const T *order, const int64_t *first, const uint8_t *is_free,     \
                         int64_t g, int64_t extent, int64_t row)                           \
{                                                                                          \
  const int64_t lo = first[g], hi = first[g + 1];                                          \
  int64_t q = NAME##_first(order, lo, hi, g * extent + row);                               \
  if (!is_free[g] && q > lo && q < hi && (int64_t)order[q] == (int64_t)order[q - 1] + 1) { \
    const int64_t run = (int64_t)order[q - 1] - (q - 1) + 1;                               \
    int64_t a = q, b = hi;                                                                 \
    while (a < b) {                                                                        \
      const int64_t mid = a + (b - a) / 2;                                                 \
      if ((int64_t)order[mid] - mid >= run)                                                \
        b = mid;                                                                           \
      else                                                                                 \
        a = mid + 1;                                                                       \
    }                                                                                      \
    q = a;                                                                                 \
  }                                                                                        \
  return q;                                                                                \
}                                                                                          \
int64_t NAME(int64_t n, const T *restrict order, const int64_t *restrict levelptr,         \
             int64_t levels, const int64_t *restrict wsum, int64_t groups, int64_t extent, \
             const uint8_t *restrict is_free, int64_t threads, int64_t *restrict ptr,      \
             int64_t *restrict partptr, T *restrict out, int64_t *restrict largest,        \
             int64_t *restrict work)                                                       \
{                                                                                          \
  int64_t *first = malloc((size_t)(groups + 1) * sizeof(int64_t));                         \
  int64_t *pos = malloc((size_t)(threads + 1) * (size_t)groups * sizeof(int64_t));         \
  int64_t *cand = malloc((size_t)2 * (size_t)groups * sizeof(int64_t));                    \
  if (!first || !pos || !cand) {                                                           \
    free(first); free(pos); free(cand);                                                    \
    return -1;                                                                             \
  }                                                                                        \
  int64_t parts = 0, offset = 0;                                                           \
  ptr[0] = 0;                                                                              \
  for (int64_t c = 0; c < levels; c++) {                                                   \
    const int64_t lo = levelptr[c], hi = levelptr[c + 1];                                  \
    for (int64_t g = 0; g <= groups; g++)                                                  \
      first[g] = NAME##_first(order, lo, hi, g * extent);                                  \
    const int64_t total = wsum[hi] - wsum[lo];                                             \
    for (int64_t g = 0; g < groups; g++) {                                                 \
      pos[g] = first[g];                                                                   \
      pos[threads * groups + g] = first[g + 1];                                            \
    }                                                                                      \
    for (int64_t k = 1; k < threads; k++) {                                                \
      const int64_t share = total * k / threads;                                           \
      int64_t low = 0, high = extent;                                                      \
      while (low < high) { /* the least row whose work below reaches the share */          \
        const int64_t mid = low + (high - low) / 2;                                        \
        int64_t below = 0;                                                                 \
        for (int64_t g = 0; g < groups; g++)                                               \
          below += wsum[NAME##_at(order, first, is_free, g, extent, mid)] - wsum[first[g]]; \
        if (below >= share)                                                                \
          high = mid;                                                                      \
        else                                                                               \
          low = mid + 1;                                                                   \
      }                                                                                    \
      int64_t after = 0, before = 0;                                                       \
      const int64_t back = low > 0 ? low - 1 : 0;                                          \
      for (int64_t g = 0; g < groups; g++) {                                               \
        cand[g] = NAME##_at(order, first, is_free, g, extent, low);                        \
        cand[groups + g] = NAME##_at(order, first, is_free, g, extent, back);              \
        after += wsum[cand[g]] - wsum[first[g]];                                           \
        before += wsum[cand[groups + g]] - wsum[first[g]];                                 \
      }                                                                                    \
      const int nearer = share - before < after - share;                                   \
      for (int64_t g = 0; g < groups; g++)                                                 \
        pos[k * groups + g] = nearer ? cand[groups + g] : cand[g];                         \
    }                                                                                      \
    for (int64_t k = 1; k <= threads; k++)                                                 \
      for (int64_t g = 0; g < groups; g++)                                                 \
        if (pos[k * groups + g] < pos[(k - 1) * groups + g])                               \
          pos[k * groups + g] = pos[(k - 1) * groups + g];                                 \
    int64_t most = 0;                                                                      \
    for (int64_t k = 0; k < threads; k++) {                                                \
      int64_t size = 0, w = 0;                                                             \
      for (int64_t g = 0; g < groups; g++) {                                               \
        const int64_t a = pos[k * groups + g], b = pos[(k + 1) * groups + g];              \
        memcpy(out + offset + size, order + a, (size_t)(b - a) * sizeof(T));               \
        size += b - a;                                                                     \
        w += wsum[b] - wsum[a];                                                            \
      }                                                                                    \
      if (k == 0 || w > most)                                                              \
        most = w;                                                                          \
      if (size > 0) {                                                                      \
        partptr[parts] = offset;                                                           \
        work[parts++] = w;                                                                 \
        offset += size;                                                                    \
      }                                                                                    \
    }                                                                                      \
    largest[c] = most;                                                                     \
    ptr[c + 1] = parts;                                                                    \
  }                                                                                        \
  partptr[parts] = offset;                                                                 \
  free(first); free(pos); free(cand);                                                      \
  return parts;                                                                            \
}
SPLIT_ROWS(spf_split_rows32, int32_t)
SPLIT_ROWS(spf_split_rows64, int64_t)

/* For each target, the first index j of allowed[0 .. count) whose wsum is at least the
   target (numpy's searchsorted, side left, over wsum[allowed]), clipped to [1, count - 1]. */
void spf_search_allowed(const double *restrict wsum, const int64_t *restrict allowed,
                        int64_t count, const double *restrict target, int64_t targets,
                        int64_t *restrict j)
{
  for (int64_t t = 0; t < targets; t++) {
    int64_t lo = 0, hi = count;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (wsum[allowed[mid]] < target[t])
        lo = mid + 1;
      else
        hi = mid;
    }
    j[t] = lo < 1 ? 1 : (lo > count - 1 ? count - 1 : lo);
  }
}

/* The runs order[start[q] .. start[q] + size[q]) one after the other into out. */
#define GATHER(NAME, T)                                                                    \
void NAME(const T *restrict order, const int64_t *restrict start,                         \
          const int64_t *restrict size, int64_t count, T *restrict out)                   \
{                                                                                          \
  for (int64_t q = 0; q < count; q++) {                                                    \
    memcpy(out, order + start[q], (size_t)size[q] * sizeof(T));                            \
    out += size[q];                                                                        \
  }                                                                                        \
}
GATHER(spf_gather_runs32, int32_t)
GATHER(spf_gather_runs64, int64_t)
"""


def in_halves(run: Callable[[int, int], object], cut: int, end: int) -> None:
    """``run(0, cut)`` on this thread and ``run(cut, end)`` at once on a thread of its own
    (C that releases the GIL, over two ranges that write disjoint entries), the second's
    exception raised here. A thread of its own, not spf's pool: the caller may be a pool
    worker whose peers all wait on the same kind of call. On 2-D Poisson 1M the chain pass
    in halves took 0.68-0.77x its time whole (two cores that share their memory bus)."""
    failed: list[BaseException] = []

    def other() -> None:
        try:
            run(cut, end)
        except BaseException as err:
            failed.append(err)

    worker = threading.Thread(target=other, name="spf-chain-half", daemon=True)
    worker.start()
    try:
        run(0, cut)
    finally:
        worker.join()
    if failed:
        raise failed[0]


MAX_TABLE = 1 << 24
"""The most entries (coarse levels + 1 times chains) of :meth:`ChainScan.groups`' table of
each chain's last new level; a plan needing more is not joined (its parts per coarse level
are at most its threads in every plan spf makes: 1,008 x 2 on 2-D Poisson 1M)."""


class ChainScan:
    """The loaded :data:`SOURCE`."""

    def __init__(self, path: str) -> None:
        ffi = cffi.FFI()
        ffi.cdef(";".join(PROTOTYPES) + ";")
        self._ffi = ffi
        self._lib = ffi.dlopen(path)
        self._buffer = ffi._backend.from_buffer  # ffi.from_buffer minus a Python frame
        self._int32 = ffi.typeof("int32_t[]")
        self._int64 = ffi.typeof("int64_t[]")
        self._uint8 = ffi.typeof("uint8_t[]")
        self._float64 = ffi.typeof("double[]")

    def _order(self, order: np.ndarray) -> tuple[object, str]:
        """``order`` as a C buffer and the suffix of the functions for its width (a plan's
        order is ``int32`` or ``int64``; another type would be read as the wrong width)."""
        if order.dtype == np.int32:
            return self._buffer(self._int32, order, False), "32"
        if order.dtype != np.int64:
            raise TypeError(f"spf: a plan's order must be int32 or int64, not {order.dtype}")
        return self._buffer(self._int64, order, False), "64"

    def _i32(self, a: np.ndarray, writable: bool = False) -> object:
        return self._buffer(self._int32, a, writable)

    def _i64(self, a: np.ndarray, writable: bool = False) -> object:
        return self._buffer(self._int64, a, writable)

    def parts(self, partptr: np.ndarray, parts: int, order: np.ndarray, nodes: int) -> np.ndarray:
        """Each node's part (``int32``; :func:`~spf.runtime.chains.chain_parts`): ``order``
        C-contiguous ``int32`` or ``int64``, a permutation of ``nodes``, ``partptr``
        ``int64``. In two halves at once, cut at half the nodes."""
        part = np.empty(nodes, dtype=np.int32)
        got, width = self._order(order)
        fn = getattr(self._lib, f"spf_chain_parts{width}")
        reads, into = (self._i64(partptr), got), self._i32(part, True)
        cut = int(np.searchsorted(partptr[: parts + 1], nodes // 2))  # half the nodes
        in_halves(lambda lo, hi: fn(reads[0], lo, hi, reads[1], into), cut, parts)
        return part

    def groups(
        self, ptr: np.ndarray, levels: int, need: np.ndarray, need_low: np.ndarray, cap: int
    ) -> np.ndarray | None:
        """:func:`spf.runtime.chains.groups` (``need``/``need_low`` per part, ``int64``);
        None where its table would exceed :data:`MAX_TABLE` entries."""
        parts = int(ptr[levels])
        chains = int(np.diff(ptr[: levels + 1]).max()) if levels else 0
        if (levels + 1) * chains > MAX_TABLE:
            return None
        out = np.empty(parts, dtype=np.int64)
        last = np.empty((levels + 1) * max(chains, 1), dtype=np.int64)
        cur, held = np.empty(max(chains, 1), dtype=np.int64), np.empty(max(chains, 1), np.int64)
        reads = self._i64(ptr), levels, chains, self._i64(need), self._i64(need_low), cap
        writes = (self._i64(a, True) for a in (out, last, cur, held))
        if self._lib.spf_chain_groups(*reads, *writes) < 0:
            raise ValueError("spf: a part needs a coarse level not before its own")
        return out

    def interleave(
        self, parts: Parts, pos_of: np.ndarray, last: tuple[np.ndarray, np.ndarray],
        free: np.ndarray, work: np.ndarray, weight: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:  # fmt: skip
        """:func:`spf.runtime.interleave.interleave` up to its cut (``spf_interleave``): the
        new order, the moved nodes, the work's prefix sums, the positions a cut may fall
        before and each level's first position; None where no node moves. ``pos_of``,
        ``last``, ``work`` ``int64``, ``free`` ``bool``, one entry per node."""
        n = len(parts.order)
        order = np.ascontiguousarray(parts.order)
        got, width = self._order(order)
        out = np.empty(n, dtype=order.dtype)
        moved = np.empty(n, dtype=np.int64)
        wsum = np.empty(n + 1, dtype=np.float64)
        allowed = np.empty(n + 2, dtype=np.int64)
        bound = np.empty(parts.levels + 1, dtype=np.int64)
        partptr = np.ascontiguousarray(parts.partptr[: parts.parts + 1], dtype=np.int64)
        levelpos = np.ascontiguousarray(partptr[parts.ptr[: parts.levels + 1]])
        flags = np.ascontiguousarray(free, dtype=np.uint8)
        reads = (
            self._i64(partptr), parts.parts, self._i64(levelpos), parts.levels, got,
            *(self._i64(np.ascontiguousarray(a, dtype=np.int64)) for a in (pos_of, *last)),
            self._buffer(self._uint8, flags, False),
            self._i64(np.ascontiguousarray(work, dtype=np.int64)),
        )  # fmt: skip
        into = self._buffer(self._int32 if width == "32" else self._int64, out, True)
        writes = into, self._i64(moved, True), self._f64(wsum, True), self._i64(allowed, True)
        fn = getattr(self._lib, f"spf_interleave{width}")
        kept = int(fn(n, *reads, float(weight), *writes, self._i64(bound, True)))
        if kept < 0:
            raise MemoryError("spf: no memory to interleave a fused loop's parts")
        if kept == 0:
            return None
        return out, moved[:kept].copy(), wsum, allowed[: int(allowed[n + 1])], bound

    def split_rows(
        self, order: np.ndarray, levelptr: np.ndarray, levels: int, wsum: np.ndarray,
        free: tuple[bool, ...], extent: int, threads: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]:  # fmt: skip
        """:func:`spf.runtime.coarse._split_by_rows` (``spf_split_rows``): (ptr, partptr, the
        nodes part by part, the number of parts, each level's largest part's work, each
        part's work). ``order`` C-contiguous ``int32`` or ``int64``, ``wsum`` ``int64``."""
        n = len(order)
        got, width = self._order(order)
        out = np.empty(n, dtype=order.dtype)
        ptr = np.empty(levels + 1, dtype=np.int64)
        partptr = np.empty(levels * threads + 1, dtype=np.int64)
        largest = np.empty(levels, dtype=np.int64)
        work = np.empty(levels * threads, dtype=np.int64)
        flags = np.asarray(free, dtype=np.uint8)
        reads = (
            got, self._i64(np.ascontiguousarray(levelptr[: levels + 1], dtype=np.int64)), levels,
            self._i64(wsum), len(free), extent,
            self._buffer(self._uint8, flags, False), threads,
        )  # fmt: skip
        into = self._buffer(self._int32 if width == "32" else self._int64, out, True)
        writes = self._i64(ptr, True), self._i64(partptr, True), into
        fn = getattr(self._lib, f"spf_split_rows{width}")
        parts = int(fn(n, *reads, *writes, self._i64(largest, True), self._i64(work, True)))
        if parts < 0:
            raise MemoryError("spf: no memory to cut a fused loop's coarse levels")
        return ptr, partptr[: parts + 1].copy(), out, parts, largest, work[:parts].copy()

    def search_allowed(
        self, wsum: np.ndarray, allowed: np.ndarray, targets: np.ndarray
    ) -> np.ndarray:
        """Per target, numpy's ``searchsorted(wsum[allowed], target)`` clipped to ``[1,
        len(allowed) - 1]``, without gathering ``wsum[allowed]``."""
        flat = np.ascontiguousarray(targets, dtype=np.float64).ravel()
        j = np.empty(len(flat), dtype=np.int64)
        self._lib.spf_search_allowed(
            self._f64(wsum), self._i64(allowed), len(allowed), self._f64(flat), len(flat),
            self._i64(j, True),
        )  # fmt: skip
        return j.reshape(np.shape(targets))

    def _f64(self, a: np.ndarray, writable: bool = False) -> object:
        return self._buffer(self._float64, a, writable)

    def gather(
        self, order: np.ndarray, start: np.ndarray, size: np.ndarray, nodes: int
    ) -> np.ndarray:
        """The runs ``order[start[q] : start[q] + size[q]]`` one after the other
        (``nodes`` in all)."""
        out = np.empty(nodes, dtype=order.dtype)
        got, width = self._order(order)
        into = self._buffer(self._int32 if width == "32" else self._int64, out, True)
        run = getattr(self._lib, f"spf_gather_runs{width}")
        run(got, self._i64(start), self._i64(size), len(start), into)
        return out


def build_chain_scan(flags: Sequence[str] | None, cache_dir: str | None) -> ChainScan:
    """:data:`SOURCE` built with ``flags`` (None: spf's default flags) into ``cache_dir``
    (a cached library runs no compiler) and loaded, once per process for each cache
    directory and flags."""
    return load_once(SOURCE, "spf_chain_scan", flags, cache_dir, ChainScan)

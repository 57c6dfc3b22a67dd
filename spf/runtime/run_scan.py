"""A coarse plan's runs found, sorted and cut in fixed C (:func:`build_run_scan`).

:func:`spf.runtime.coarse_runs.find_runs` needs the nodes where the coarse level changes
from one node to the next. numpy finds them in three passes (a compare of the two shifted
views into a fresh boolean array, its count and its positions); the coarse levels were
written by the pass milliseconds before and are read from memory, so the scan here reads
them once: sixteen neighbouring pairs at a time, their differences or'ed together (a
vector loop), the pairs looked at one by one only where one differs, the starts and keys
written as they are found and the scan given up once there are more runs than the caller
takes. The O(runs) and O(levels x threads) work after it, which numpy did in some fifty
calls on small arrays fetched from memory, is one loop each here: the runs' stable
counting sort by key (:meth:`RunScan.sorted`), the cuts and the parts of
:func:`spf.runtime.coarse_runs.split_runs` around its reach stage (:meth:`RunScan.cuts`,
:meth:`RunScan.parts`) and the count of breaks among the copies' samples
(:meth:`RunScan.sampled`, :func:`spf.runtime.copies.pays`). The same values
(``tests/unit/runtime/test_coarse_runs.py``; docs/inspection.md, "The runs found and cut in
C"). The functions are fixed C, not generated (spf's statements cannot write through a
running count): built once per cache directory and flags, beside the stages that sort by
runs (:func:`spf.runtime.plan.compile_wavefront`), and kept loaded for the process."""

from __future__ import annotations

from collections.abc import Sequence

import cffi
import numpy as np

from spf.runtime.build import load_once
from spf.runtime.coarse_runs import Runs

PROTOTYPES = (
    "int64_t spf_run_starts(const int32_t *clev, int64_t n, int64_t *starts, int32_t *keys, "
    "int64_t cap)",
    "int64_t spf_sort_runs(const int32_t *keys, const int64_t *start, int64_t runs, int64_t n, "
    "int64_t levels, int64_t *size, int64_t *levelruns, int64_t *perm, int64_t *first, "
    "int64_t *pos, int64_t *at)",
    "int64_t spf_run_cuts(const int64_t *ws, int64_t nws, const int64_t *levelruns, "
    "int64_t levels, int64_t threads, const int64_t *top, const int64_t *perm, int64_t *cut, "
    "int64_t *unsure, int64_t *run, int64_t *share)",
    "int64_t spf_run_parts(const int64_t *ws, int64_t nws, const int64_t *pos, "
    "const int64_t *levelruns, int64_t levels, int64_t threads, const int64_t *cut, "
    "int64_t *ptr, int64_t *partptr, int64_t *largest, int64_t *work)",
    "int64_t spf_run_breaks(const int64_t *first, const int64_t *pos, int64_t runs, int64_t *out)",
    "int64_t spf_sampled_breaks(const int64_t *breaks, int64_t count, int64_t samples, int64_t n)",
)

SOURCE = r"""#include <stdint.h>
#include <stdlib.h>

/* The first node of each run of equal values of clev[0 .. n) (n >= 1, cap >= 1), in
   order, into starts[0 .. cap), and the run's value into keys: the number of runs, or
   cap + 1 as soon as there are more than cap. Sixteen neighbouring pairs at a time: their
   differences or'ed (a vector loop at -O2), the pairs looked at one by one only where one
   differs. */
int64_t spf_run_starts(const int32_t *restrict clev, int64_t n, int64_t *restrict starts,
                       int32_t *restrict keys, int64_t cap)
{
  int64_t runs = 1, i = 1;
  starts[0] = 0;
  keys[0] = clev[0];
  for (; i + 16 <= n; i += 16) {
    int32_t differ = 0;
    for (int j = 0; j < 16; j++)
      differ |= clev[i + j] ^ clev[i + j - 1];
    if (differ)
      for (int j = 0; j < 16; j++)
        if (clev[i + j] != clev[i + j - 1]) {
          if (runs == cap)
            return cap + 1;
          starts[runs] = i + j;
          keys[runs++] = clev[i + j];
        }
  }
  for (; i < n; i++)
    if (clev[i] != clev[i - 1]) {
      if (runs == cap)
        return cap + 1;
      starts[runs] = i;
      keys[runs++] = clev[i];
    }
  return runs;
}

/* The runs beginning at start[0 .. runs) (increasing, n nodes in all) of values keys[],
   sorted stably by value (a counting sort; each value below levels): size[q] the nodes of
   run q, levelruns[c] the runs of a value below c (levels + 1 entries), perm[r] the run
   at place r of the sorted runs, first[r] its first node, pos[r] its first position in
   the order of the sorted nodes (runs + 1 entries) and at[q] run q's. 0; -1 when a value
   is below 0 or not below levels (nothing written), -2 when memory runs out. */
int64_t spf_sort_runs(const int32_t *restrict keys, const int64_t *restrict start, int64_t runs,
                      int64_t n, int64_t levels, int64_t *restrict size,
                      int64_t *restrict levelruns, int64_t *restrict perm,
                      int64_t *restrict first, int64_t *restrict pos, int64_t *restrict at)
{
  for (int64_t q = 0; q < runs; q++)
    if (keys[q] < 0 || keys[q] >= levels)
      return -1;
  int64_t *next = malloc((size_t)(levels > 0 ? levels : 1) * sizeof(int64_t));
  if (next == NULL)
    return -2;
  for (int64_t c = 0; c <= levels; c++)
    levelruns[c] = 0;
  for (int64_t q = 0; q < runs; q++) {
    size[q] = (q + 1 < runs ? start[q + 1] : n) - start[q];
    levelruns[keys[q] + 1]++;
  }
  for (int64_t c = 0; c < levels; c++) {
    levelruns[c + 1] += levelruns[c];
    next[c] = levelruns[c];
  }
  for (int64_t q = 0; q < runs; q++)
    perm[next[keys[q]]++] = q;
  free(next);
  pos[0] = 0;
  for (int64_t r = 0; r < runs; r++) {
    int64_t q = perm[r];
    first[r] = start[q];
    at[q] = pos[r];
    pos[r + 1] = pos[r] + size[q];
  }
  return 0;
}

/* The cuts of spf.runtime.coarse_runs.split_runs: for each of the levels (runs
   levelruns[c] .. levelruns[c + 1]) and share k = 1 .. threads - 1, the target
   ws[s] + (ws[e] - ws[s]) * k / threads (ws: the work before each run, nws = runs + 1
   entries, from 0), the first run boundary q reaching it (a binary search of all of ws,
   as numpy's searchsorted), and, the target falling inside run q - 1, that run or the
   next: the run (a cut before it) when the share in it is below half its work, else the
   next; cut[c * (threads - 1) + k - 1] gets it. Where the run must be read to know
   (below half, and with top[] (each run's largest work of a node, in node order, run r
   of the sorted runs being perm[r]) the half within that of the share), the cut gets
   the run and unsure[], run[] and share[] get its place in cut[], the run and the share
   in it, for the reach stage. The number of those. */
int64_t spf_run_cuts(const int64_t *restrict ws, int64_t nws, const int64_t *restrict levelruns,
                     int64_t levels, int64_t threads, const int64_t *restrict top,
                     const int64_t *restrict perm, int64_t *restrict cut,
                     int64_t *restrict unsure, int64_t *restrict run, int64_t *restrict share)
{
  int64_t asked = 0, at = 0;
  for (int64_t c = 0; c < levels; c++) {
    int64_t low = ws[levelruns[c]], span = ws[levelruns[c + 1]] - low;
    for (int64_t k = 1; k < threads; k++, at++) {
      int64_t target = low + span * k / threads;
      int64_t lo = 0, hi = nws;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ws[mid] < target)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (ws[lo < nws - 1 ? lo : nws - 1] <= target) {
        cut[at] = lo;
        continue;
      }
      int64_t r = lo - 1, in = target - ws[r], whole = ws[r + 1] - ws[r];
      int before = 2 * in < whole;
      cut[at] = before ? r : r + 1;
      if (before && (top == NULL || whole <= 2 * (in + top[perm[r]] - 1))) {
        unsure[asked] = at;
        run[asked] = r;
        share[asked++] = in;
      }
    }
  }
  return asked;
}

/* spf.runtime.coarse.cut_parts of the levels' runs cut at cut[] (threads - 1 a level, as
   spf_run_cuts writes them), in runs: each level's boundaries (its first run, the cuts,
   its end) made nondecreasing, a part between each two that differ. ptr[c] the parts
   before level c (levels + 1 entries), partptr[p] part p's first position (pos[] of its
   first run; then pos[runs]), work[p] its work, largest[c] the work of level c's largest
   part (0 for a level of none). The number of parts. */
int64_t spf_run_parts(const int64_t *restrict ws, int64_t nws, const int64_t *restrict pos,
                      const int64_t *restrict levelruns, int64_t levels, int64_t threads,
                      const int64_t *restrict cut, int64_t *restrict ptr,
                      int64_t *restrict partptr, int64_t *restrict largest,
                      int64_t *restrict work)
{
  int64_t parts = 0;
  ptr[0] = 0;
  for (int64_t c = 0; c < levels; c++) {
    int64_t lo = levelruns[c], most = 0;
    for (int64_t k = 0; k < threads; k++) {
      int64_t hi = k + 1 < threads ? cut[c * (threads - 1) + k] : levelruns[c + 1];
      if (hi > lo) {
        work[parts] = ws[hi] - ws[lo];
        partptr[parts++] = pos[lo];
        if (ws[hi] - ws[lo] > most)
          most = ws[hi] - ws[lo];
        lo = hi;
      }
    }
    largest[c] = most;
    ptr[c + 1] = parts;
  }
  partptr[parts] = pos[nws - 1];
  return parts;
}

/* spf.runtime.coarse_runs.breaks: the last position of each sorted run (first[] its
   first node, pos[] its first position, runs + 1 entries) followed by a run that does not
   begin at the node after it. The number of them. */
int64_t spf_run_breaks(const int64_t *restrict first, const int64_t *restrict pos, int64_t runs,
                       int64_t *restrict out)
{
  int64_t count = 0;
  for (int64_t r = 0; r + 1 < runs; r++)
    if (first[r + 1] != first[r] + (pos[r + 1] - pos[r]))
      out[count++] = pos[r + 1] - 1;
  return count;
}

/* spf.runtime.copies._sampled: how many of breaks[0 .. count) (0 <= b <= n - 2) are among
   the samples of numpy's linspace(0, n - 2, samples) as int64 (samples >= 2, n - 2 >=
   samples - 1): sample j is j times the double (n - 2) / (samples - 1), truncated, the last
   n - 2; a break can only equal the sample of the least j whose exact product reaches it,
   or the next. */
int64_t spf_sampled_breaks(const int64_t *restrict breaks, int64_t count, int64_t samples,
                           int64_t n)
{
  int64_t last = samples - 1, span = n - 2, hits = 0;
  double step = (double)span / (double)last;
  for (int64_t k = 0; k < count; k++) {
    int64_t b = breaks[k], j = (b * last + (span - 1)) / span;
    int hit = 0;
    for (int t = 0; t < 2; t++) {
      if (j > last)
        j = last;
      hit |= (j >= last ? n - 2 : (int64_t)((double)j * step)) == b;
      j++;
    }
    hits += hit;
  }
  return hits;
}
"""


class RunScan:
    """The loaded :data:`SOURCE` (:class:`spf.runtime.coarse_runs.Scan`)."""

    def __init__(self, path: str) -> None:
        ffi = cffi.FFI()
        ffi.cdef(";".join(PROTOTYPES) + ";")
        self._ffi = ffi
        self._lib = ffi.dlopen(path)
        self._starts = self._lib.spf_run_starts
        self._sort = self._lib.spf_sort_runs
        self._cuts = self._lib.spf_run_cuts
        self._parts = self._lib.spf_run_parts
        self._breaks = self._lib.spf_run_breaks
        self._sampled = self._lib.spf_sampled_breaks
        self._buffer = ffi._backend.from_buffer  # ffi.from_buffer minus a Python frame
        self._int32 = ffi.typeof("int32_t[]")
        self._int64 = ffi.typeof("int64_t[]")

    def starts(self, clev: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The first node of each run of ``clev`` (a C-contiguous ``int32`` array of at
        least one node), as ``int64``, and each run's value, or None when there are more
        than ``cap`` runs (``cap >= 1``)."""
        first = np.empty(cap, dtype=np.int64)
        keys = np.empty(cap, dtype=np.int32)
        buffer, i32 = self._buffer, self._int32
        into = buffer(self._int64, first, True), buffer(i32, keys, True)
        runs = int(self._starts(buffer(i32, clev, False), len(clev), *into, cap))
        if runs > cap:
            return None
        return first[:runs].copy(), keys[:runs].copy()  # not n / MIN_RUN entries kept

    def sorted(self, keys: np.ndarray, start: np.ndarray, n: int, levels: int) -> Runs | None:
        """The runs beginning at ``start`` (from :meth:`starts`: increasing, ``n`` nodes in
        all) of values ``keys``, sorted by value, stable, as
        :func:`spf.runtime.coarse_runs.find_runs` sorts them with numpy; None when a value
        is not in ``[0, levels)``."""
        runs = len(start)
        size, perm, first, at = (np.empty(runs, dtype=np.int64) for _ in range(4))
        pos = np.empty(runs + 1, dtype=np.int64)
        levelruns = np.empty(levels + 1, dtype=np.int64)
        buffer, i64 = self._buffer, self._int64
        outs = [buffer(i64, a, True) for a in (size, levelruns, perm, first, pos, at)]
        read = buffer(self._int32, keys, False), buffer(i64, start, False)
        got = self._sort(*read, runs, n, levels, *outs)
        if got == -2:
            raise MemoryError("spf: no memory for the sort of a coarse plan's runs")
        if got < 0:
            return None
        return Runs(first, pos, levelruns, start, size, at, perm)

    def cuts(
        self, runs: Runs, ws: np.ndarray, threads: int, top: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The cuts of :func:`spf.runtime.coarse_runs.split_runs` (``threads - 1`` per
        coarse level, in runs), those that the rows of a run must settle already set to
        the cut before that run, and for those their places in the cuts, their runs and
        their shares in those runs (``spf_run_cuts``)."""
        levels = len(runs.levelruns) - 1
        cut = np.empty(levels * (threads - 1), dtype=np.int64)
        unsure, run, share = (np.empty(len(cut), dtype=np.int64) for _ in range(3))
        buffer, i64, null = self._buffer, self._int64, self._ffi.NULL
        tops = (null, null)
        if top is not None:
            tops = buffer(i64, top, False), buffer(i64, runs.perm, False)
        read = buffer(i64, ws, False), len(ws), buffer(i64, runs.levelruns, False)
        outs = [buffer(i64, a, True) for a in (cut, unsure, run, share)]
        asked = self._cuts(*read, levels, threads, *tops, *outs)
        return cut, unsure[:asked], run[:asked], share[:asked]

    def parts(
        self, runs: Runs, ws: np.ndarray, threads: int, cut: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The parts of the coarse levels of ``runs`` cut at ``cut`` (from :meth:`cuts`),
        as :func:`spf.runtime.coarse.cut_parts` makes them, in positions: (ptr, partptr,
        largest, breaks, each part's work), the breaks :func:`spf.runtime.coarse_runs.breaks`
        (the work is what :func:`spf.runtime.chains.join` sums along a chain: from the runs'
        prefix sums here, not summed again over the nodes there)."""
        levels, count = len(runs.levelruns) - 1, len(runs.first)
        ptr = np.empty(levels + 1, dtype=np.int64)
        partptr = np.empty(levels * threads + 1, dtype=np.int64)
        largest = np.empty(levels, dtype=np.int64)
        work = np.empty(levels * threads, dtype=np.int64)
        buffer, i64 = self._buffer, self._int64
        read = [buffer(i64, a, False) for a in (ws, runs.pos, runs.levelruns)]
        outs = [buffer(i64, a, True) for a in (ptr, partptr, largest, work)]
        cuts = buffer(i64, cut, False)
        parts = self._parts(read[0], len(ws), *read[1:], levels, threads, cuts, *outs)
        breaks = np.empty(max(count - 1, 0), dtype=np.int64)
        into = buffer(i64, breaks, True)
        found = self._breaks(buffer(i64, runs.first, False), read[1], count, into)
        kept = partptr[: parts + 1].copy(), largest, breaks[:found].copy(), work[:parts].copy()
        return ptr, *kept

    def sampled(self, samples: int, breaks: np.ndarray, n: int) -> int:
        """:func:`spf.runtime.copies._sampled` (``samples >= 2``, ``breaks`` a C-contiguous
        ``int64`` array of positions ``0 ... n - 2``, ``n - 2 >= samples - 1``)."""
        got = self._buffer(self._int64, breaks, False)
        return int(self._sampled(got, len(breaks), samples, n))


def build_run_scan(flags: Sequence[str] | None, cache_dir: str | None) -> RunScan:
    """:data:`SOURCE` built with ``flags`` (None: spf's default flags) into ``cache_dir``
    (a cached library runs no compiler) and loaded, once per process for each cache
    directory and flags."""
    return load_once(SOURCE, "spf_run_scan", flags, cache_dir, RunScan)

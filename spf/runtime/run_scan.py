"""The first node of each run of a loop's coarse levels, found in C (:func:`build_run_scan`).

:func:`spf.runtime.coarse_runs.find_runs` needs the nodes where the coarse level changes
from one node to the next. numpy finds them in three passes (a compare of the two shifted
views into a fresh boolean array, its count and its positions); the coarse levels were
written by the pass milliseconds before and are read from memory, so the scan here reads
them once: sixteen neighbouring pairs at a time, their differences or'ed together (a
vector loop), the pairs looked at one by one only where one differs, the starts written
as they are found and the scan given up once there are more runs than the caller takes.
The same starts (``tests/unit/runtime/test_coarse_runs.py``). The function is fixed C, not
generated (spf's statements cannot write through a running count): built once per cache
directory and flags, beside the stages that sort by runs
(:func:`spf.runtime.plan.compile_wavefront`), and kept loaded for the process."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import cffi
import numpy as np

from spf.runtime.build import build
from spf.runtime.coarse_runs import Runs

PROTOTYPES = (
    "int64_t spf_run_starts(const int32_t *clev, int64_t n, int64_t *starts, int32_t *keys, "
    "int64_t cap)",
    "int64_t spf_sort_runs(const int32_t *keys, const int64_t *start, int64_t runs, int64_t n, "
    "int64_t levels, int64_t *size, int64_t *levelruns, int64_t *perm, int64_t *first, "
    "int64_t *pos, int64_t *at)",
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


_BUILT: dict[tuple[str, tuple[str, ...] | None], RunScan] = {}
_LOCK = threading.Lock()


def build_run_scan(flags: Sequence[str] | None, cache_dir: str | None) -> RunScan:
    """:data:`SOURCE` built with ``flags`` (None: spf's default flags) into ``cache_dir``
    (a cached library runs no compiler) and loaded, once per process for each cache
    directory and flags."""
    key = (str(cache_dir), None if flags is None else tuple(flags))
    with _LOCK:
        got = _BUILT.get(key)
        if got is None:
            path = build(
                SOURCE,
                name="spf_run_scan",
                openmp=False,
                cflags=flags,
                cache_dir=cache_dir,
            ).path
            got = _BUILT[key] = RunScan(str(path))
    return got

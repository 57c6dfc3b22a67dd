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

PROTOTYPE = "int64_t spf_run_starts(const int32_t *clev, int64_t n, int64_t *starts, int64_t cap)"

SOURCE = r"""#include <stdint.h>

/* The first node of each run of equal values of clev[0 .. n) (n >= 1, cap >= 1), in
   order, into starts[0 .. cap): the number of runs, or cap + 1 as soon as there are more
   than cap. Sixteen neighbouring pairs at a time: their differences or'ed (a vector loop
   at -O2), the pairs looked at one by one only where one differs. */
int64_t spf_run_starts(const int32_t *restrict clev, int64_t n, int64_t *restrict starts,
                       int64_t cap)
{
  int64_t runs = 1, i = 1;
  starts[0] = 0;
  for (; i + 16 <= n; i += 16) {
    int32_t differ = 0;
    for (int j = 0; j < 16; j++)
      differ |= clev[i + j] ^ clev[i + j - 1];
    if (differ)
      for (int j = 0; j < 16; j++)
        if (clev[i + j] != clev[i + j - 1]) {
          if (runs == cap)
            return cap + 1;
          starts[runs++] = i + j;
        }
  }
  for (; i < n; i++)
    if (clev[i] != clev[i - 1]) {
      if (runs == cap)
        return cap + 1;
      starts[runs++] = i;
    }
  return runs;
}
"""


class RunScan:
    """The loaded :data:`SOURCE`: ``scan(clev, cap)`` gives the first node of each run of
    ``clev`` (a C-contiguous ``int32`` array of at least one node), as ``int64``, or None
    when there are more than ``cap`` runs (``cap >= 1``)."""

    def __init__(self, path: str) -> None:
        ffi = cffi.FFI()
        ffi.cdef(PROTOTYPE + ";")
        self._ffi = ffi
        self._lib = ffi.dlopen(path)
        self._fn = self._lib.spf_run_starts
        self._buffer = ffi._backend.from_buffer  # ffi.from_buffer minus a Python frame
        self._int32 = ffi.typeof("int32_t[]")
        self._int64 = ffi.typeof("int64_t[]")

    def __call__(self, clev: np.ndarray, cap: int) -> np.ndarray | None:
        out = np.empty(cap, dtype=np.int64)
        keys = self._buffer(self._int32, clev, False)
        runs = int(self._fn(keys, len(clev), self._buffer(self._int64, out, True), cap))
        if runs > cap:
            return None
        return out[:runs].copy()  # not the whole n / MIN_RUN entries kept with the runs


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

"""The node-wide and part-wide loops of :func:`spf.runtime.chains.join` in fixed C
(:func:`build_chain_scan`).

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
beside the chain pass, and kept loaded for the process."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import cffi
import numpy as np

from spf.runtime.build import load_once

PROTOTYPES = (
    "void spf_chain_parts32(const int64_t *partptr, int64_t lo, int64_t hi, const int32_t *order, "
    "int32_t *part)",
    "void spf_chain_parts64(const int64_t *partptr, int64_t lo, int64_t hi, const int64_t *order, "
    "int32_t *part)",
    "int64_t spf_chain_groups(const int64_t *ptr, int64_t levels, int64_t chains, "
    "const int64_t *need, const int64_t *need_low, int64_t cap, int64_t *out, int64_t *last, "
    "int64_t *cur, int64_t *held)",
    "void spf_gather_runs32(const int32_t *order, const int64_t *start, const int64_t *size, "
    "int64_t count, int32_t *out)",
    "void spf_gather_runs64(const int64_t *order, const int64_t *start, const int64_t *size, "
    "int64_t count, int64_t *out)",
)

SOURCE = r"""#include <stdint.h>
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

"""A plan's part-ordered copies of the row segments (:mod:`spf.analysis.local_copies`).

``inspect(copies=...)`` decides whether a coarse plan runs on copies (``plan.copies`` names
the arrays copied); the copies themselves are built on the plan's first call that runs them,
from that call's arrays, and kept with the plan when those are the plan's own (a checked
call's, or an unchecked call's whose contents match the plan's fingerprint, compared once
there; an unchecked call on other arrays of the plan's sizes gets copies for itself only):

* per pointer ``P`` (CSR's ``rowptr``): ``P_part``, the prefix sums of the rows' lengths in
  the plan's position order (``coarse_order``), and ``kmap``, where each copied entry comes
  from (``kmap[P_part[pos] + t] = P[order[pos]] + t``);
* the index UFs read at ``k`` (``col``): gathered once, as the pattern is the plan's;
* the values read at ``k`` (``L``): gathered again whenever a call's values differ from
  those last gathered (an XXH3 checksum of the values, read at memory speed, per call), so a
  plan stays valid when the values change and the pattern does not.

A copy is padded to its original's length (the executor's declared extents) with the
original's first entries, which no row reads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from spf.errors import ArgumentError
from spf.runtime.checksum import checksums

if TYPE_CHECKING:
    from spf.analysis.local_copies import CopySpec


RUN_WORK = 12
"""``inspect(copies=None)`` copies when the parts' rows run in stretches of consecutive rows
(runs) holding fewer than this many units of work (entries) on average. Each run of a part
opens fresh cache lines and prefetch streams of the segments, which the copies save: on one
thread, on the 1M-row triangles of ``spf bench --only sptrsv`` (a loaded 2-core machine,
minima of 25 interleaved runs), 20-50 ns per run (the levels plan of 2-D Poisson, one-row
runs of 3 entries: 3.3-3.6 -> 1.7-1.8 serial solves; the 12-level random triangle, runs of
3.2 entries: 1.4-1.8 -> 1.15-1.35; the coarse plan of Poisson, runs of 28 entries: no
gain, 1.2-1.6 either way).
Against it every call reads the values once more, for their checksum (~0.1 ns a byte, on
one thread): at 2 threads the copies pay below about 12 entries per run."""


MIN_WORK = 1 << 18
"""``inspect(copies=None)`` does not copy the rows of loops of less work (entries) than
this: their segments stay in cache and the copies' per-call costs (the values' checksum,
the longer argument list) only add. On the SuiteSparse lower triangles of ``spf bench``
(1k-47k rows, 4k-100k entries; one thread, medians of 41 interleaved runs, loaded machine)
the executor of copies took 1.2-1.7x the time of the executor without them."""

HASH_WORK = 0.2
"""What a call on copies pays per copied value for the values' hash, in units of work (a
row's dependence, :mod:`spf.runtime.coarse`), as ``inspect(strategy="auto")`` counts it
(:func:`hash_work`): XXH3 read the 16 MB of values of the 1M-row random triangle of ``spf
bench --only sptrsv`` in 0.6 ms in cache and ~1.5 ms from memory, on one core, where the
serial solve took ~8 ms for its 2M units: 0.08-0.19 units a value; about the larger. Measured
again at load 4.5-11 (issue 31): 0.59-0.62 ms alone (200 calls), 0.7-1.2 ms interleaved with
solves of ~7 ms thread CPU time (0.09-0.17 units a value); hashing the two halves on two
threads took longer (0.66-2.4 ms, docs/inspection.md), and reading the values where they
lie instead of copying them cost more than the hash (0.5-2 ms a call)."""

NARROW_LIMIT = 2**31 - 1
"""A plan's copies run on the executor of 32-bit plan arrays (``order``, the level and part
pointers, the pointer copies: :func:`spf.analysis.local_copies.copy_executor`) when its
positions and each pointer's entries stay below this; otherwise on the 64-bit one."""

SAMPLES = 1 << 14
"""How many neighbouring pairs of positions :func:`pays` looks at (evenly spaced)."""


Sampled = Callable[[int, np.ndarray, int], int]
""":func:`_sampled` in C (:meth:`spf.runtime.run_scan.RunScan.sampled`)."""


def pays(
    order: np.ndarray, work: int, breaks: np.ndarray | None = None, sampled: Sampled | None = None
) -> bool:
    """Whether copies pay for parts that run the rows ``order`` (``work`` in all, at least
    :data:`MIN_WORK`): runs of consecutive rows averaging fewer than :data:`RUN_WORK` units
    of work, the share of positions where a run ends estimated from :data:`SAMPLES` evenly
    spaced positions (O(1) in the rows: a pass over ``order`` cost ~0.1 solve of the
    inspector). ``breaks``: those positions, sorted, when the caller knows them (parts sorted
    by their runs, :attr:`spf.runtime.coarse.Parts.breaks`): the same samples are looked up
    among them instead of read from ``order`` (scattered reads of a large array), by
    ``sampled`` when given (the same count in C: ~15 numpy calls over Poisson's ~7,000
    breaks took ~0.015 serial solves of its inspection)."""
    n = len(order)
    if n < 2 or work < MIN_WORK:
        return False
    samples = min(SAMPLES, n - 1)
    if breaks is None:  # distinct without np.unique (1.7 ms on 16k samples): the step is 1+
        at = np.linspace(0, n - 2, num=samples, dtype=np.int64)
        ends = int(np.count_nonzero(order[at + 1] != order[at] + 1))
    elif sampled is not None and samples > 1 and breaks.dtype == np.int64:
        ends = sampled(samples, np.ascontiguousarray(breaks), n)
    else:
        ends = _sampled(samples, breaks, n)
    runs = 1 + ends * (n - 1) / samples
    return work < RUN_WORK * runs


def _sampled(samples: int, breaks: np.ndarray, n: int) -> int:
    """How many of ``breaks`` (positions ``0 <= b <= n - 2``) are among the ``samples``
    positions ``np.linspace(0, n - 2, num=samples, dtype=np.int64)`` (each ``trunc(j *
    step)`` of the float ``step = (n - 2) / (samples - 1) >= 1``, the last ``n - 2``),
    looked up where the sample equal to a break can only be: the least ``j`` whose exact
    ``j * step`` reaches ``b`` (integer arithmetic), or the next. A sample equals ``b`` when
    its float product lies in ``[b, b + 1)``; the exact product of another ``j`` lies at
    least ``1 / (samples - 1)`` from an integer unless it is one, far more than the float's
    error (under ``n * 2**-51``: 1e-6 at 2**31 rows), so only an exact product in
    ``[b, b + 1]`` can give ``b``: ``j`` or ``j + 1``. The samples looked at are computed as
    ``np.linspace`` computes them (:func:`_samples_at`): the 16k samples are never built
    (~0.06 ms of fresh pages on Poisson 1M) nor searched (``np.searchsorted``: ~0.1 ms on
    its ~7,000 breaks)."""
    last = samples - 1
    if last == 0 or len(breaks) == 0:  # one sample: linspace's 0
        return int(np.count_nonzero(breaks == 0)) if last == 0 else 0
    span = n - 2  # at least last: the samples increase by 1 or more
    breaks = np.asarray(breaks, dtype=np.int64)  # b * last needs 64 bits
    j = (breaks * last + (span - 1)) // span  # ceil(b / exact step)
    np.minimum(j, last, out=j)
    step = span / last  # linspace's step: the float quotient of the span by the gaps
    hit = _samples_at(j, last, step, n) == breaks
    j += 1
    np.minimum(j, last, out=j)
    hit |= _samples_at(j, last, step, n) == breaks
    return int(np.count_nonzero(hit))


def _samples_at(j: np.ndarray, last: int, step: float, n: int) -> np.ndarray:
    """The samples ``j`` (0 or more; ``last`` for any past it) of ``np.linspace(0, n - 2,
    num=last + 1, dtype=np.int64)``, as it computes them: ``j`` as a float times ``step``,
    floored (truncated: they are not negative), and ``n - 2`` for the last."""
    got: np.ndarray = (j * step).astype(np.int64)
    got[j >= last] = n - 2
    return got


def hash_work(spec: CopySpec, args: Mapping[str, object], n: int) -> float:
    """The values' hash of one call on copies of ``spec``'s segments of ``args`` (``n``
    rows), in units of work: :data:`HASH_WORK` per entry of each copied data space."""
    entries = 0
    for seg in spec.segments:
        ptr = args.get(seg.pointer)
        if isinstance(ptr, np.ndarray) and ptr.ndim == 1 and len(ptr) > n:
            entries += max(int(ptr[n]), 0) * len(seg.data)
    return HASH_WORK * entries


def row_lengths(spec: CopySpec, args: Mapping[str, object], n: int) -> str | None:
    """Why the rows of ``args`` cannot be copied (a pointer missing, or a row shorter than
    the statements need), None when they can (O(rows))."""
    for seg in spec.segments:
        ptr = args.get(seg.pointer)
        if not isinstance(ptr, np.ndarray) or ptr.ndim != 1 or len(ptr) < n + 1:
            return f"{seg.pointer!r} is not given as an array of {n + 1} entries"
        if seg.need and n and int(np.diff(ptr[: n + 1]).min()) < seg.need:
            return (
                f"a row of {seg.pointer!r} holds fewer than the {seg.need} entries the "
                "statements read at its end"
            )
    return None


@dataclass
class Copies:
    """The copies of one plan: the index copies (by the executor's names), per pointer the
    map ``kmap``, and per copied data space its buffer and the checksum of the values it
    holds."""

    spec: CopySpec
    arrays: dict[str, np.ndarray]
    kmap: dict[str, np.ndarray]
    values: dict[str, tuple[np.ndarray, tuple[str, tuple[int, ...], int] | None]]
    reach: dict[str, int]
    """Per pointer, the end of its furthest row."""
    narrow: bool = False
    """``arrays`` holds the plan's arrays and the pointer copies in 32 bits
    (:data:`NARROW_LIMIT`): the executor that reads them declares them ``int32``."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(
        cls,
        spec: CopySpec,
        order: np.ndarray,
        args: Mapping[str, object],
        plan_arrays: Mapping[str, np.ndarray],
    ) -> Copies:
        """The index copies of the segments of ``args`` in position order ``order``
        (O(rows + entries)), with the plan's arrays the executor reads (``plan_arrays``, by
        the executor's names), all in 32 bits where they fit (:attr:`narrow`); the values
        are gathered by :meth:`refresh`."""
        n = len(order)
        arrays: dict[str, np.ndarray] = {}
        kmaps: dict[str, np.ndarray] = {}
        values: dict[str, tuple[np.ndarray, tuple[str, tuple[int, ...], int] | None]] = {}
        reaches: dict[str, int] = {}
        for seg in spec.segments:
            ptr = np.asarray(args[seg.pointer])[: n + 1].astype(np.int64, copy=False)
            starts = ptr[order]
            lens = ptr[order + 1] - starts
            if n and (int(lens.min()) < 0 or int(starts.min()) < 0):
                raise ArgumentError(
                    f"{seg.pointer!r} decreases or holds a negative entry: its rows cannot be "
                    "copied; check the index arrays"
                )
            prow = np.empty(n + 1, dtype=np.int64)
            prow[0] = 0
            np.cumsum(lens, out=prow[1:])
            total = int(prow[n])
            reach = int((starts + lens).max()) if n else 0
            wide = np.int64 if max(reach, total) >= 2**31 else np.int32  # int32: half the bytes
            kmap: np.ndarray = np.arange(total, dtype=wide)
            kmap += np.repeat((starts - prow[:-1]).astype(wide), lens)
            arrays[seg.copy] = prow
            kmaps[seg.pointer] = kmap
            for uf, copy in seg.ufs:
                arrays[copy] = _gathered(uf, np.asarray(args[uf]), kmap, reach, None)
            for ds, _ in seg.data:
                values[ds] = (np.empty(0), None)
            reaches[seg.pointer] = reach
        narrow = max([n, *(int(arrays[s.copy][n]) for s in spec.segments)]) < NARROW_LIMIT
        index = np.int32 if narrow else np.int64
        for name, a in plan_arrays.items():
            arrays[name] = a.astype(index, copy=False)
        for s in spec.segments:
            arrays[s.copy] = arrays[s.copy].astype(index, copy=False)
        return cls(spec, arrays, kmaps, values, reaches, narrow)

    def refresh(self, args: Mapping[str, object]) -> dict[str, np.ndarray]:
        """The value copies for the values of ``args``, gathered again where they differ from
        those last gathered (call with :attr:`lock` held)."""
        out: dict[str, np.ndarray] = {}
        for seg in self.spec.segments:
            for ds, copy in seg.data:
                now = args.get(ds)
                if not isinstance(now, np.ndarray):
                    raise ArgumentError(f"give {ds!r} as an array (the plan copies its rows)")
                buf, seen = self.values[ds]
                key = (str(now.dtype), now.shape, checksums([now])[0])
                if key != seen or buf.shape != now.shape:
                    buf = _gathered(ds, now, self.kmap[seg.pointer], self.reach[seg.pointer], buf)
                    self.values[ds] = (buf, key)
                out[copy] = buf
        return out


def _gathered(
    name: str, src: np.ndarray, kmap: np.ndarray, reach: int, buf: np.ndarray | None
) -> np.ndarray:
    """``src`` at ``kmap`` (whose entries lie below ``reach``), padded to ``src``'s length
    with its first entries (into ``buf`` when it fits)."""
    flat = np.ascontiguousarray(src).reshape(-1)
    if reach > len(flat) or len(kmap) > len(flat):
        raise ArgumentError(
            f"the rows reach past the end of {name!r} ({len(flat)} entries): its pointer "
            "array does not match it"
        )
    if buf is None or buf.shape != flat.shape or buf.dtype != flat.dtype:
        buf = np.empty_like(flat)
    m = len(kmap)
    np.take(flat, kmap, out=buf[:m], mode="clip")  # in bounds: no buffered copy
    buf[m:] = flat[: len(flat) - m]
    return buf.reshape(src.shape)

"""Checksums of argument arrays (a plan's fingerprint, a remembered fact's key), in parallel
and once per array per call.

:func:`checksums` takes the 64-bit XXH3 hash of each array's bytes (the ``xxhash``
package: it reads memory about as fast as a sum does, ~20x zlib's CRC-32 here: 24 MB, the
level seal and index arrays of a 1M-row Poisson plan, in ~2.5 ms against ~46 ms, minima of
interleaved runs on the shared 2-core machine). Without ``xxhash`` installed it takes the
CRC-32 of each array in pieces of at most :data:`PIECE` bytes, on a small thread pool
(``zlib.crc32`` releases the GIL on large buffers), and folds the pieces' CRCs into one
number. The number depends only on the bytes (the pieces are cut at fixed offsets), so
equal contents give equal checksums in any process with the same hash.

:func:`shared` opens a scope (one ``inspect`` or one call) inside which the checksum of an
array already taken is reused: the fingerprint of a plan and the key of a remembered fact
over the same index array read its bytes once. Arrays are recognised by the array object
(its ``id``, the object itself held by the scope so that no other array takes that ``id``
while it lasts): reading an array's address through ``__array_interface__`` cost ~2-9 us,
more than hashing the index arrays of a small matrix. Inside one call nothing writes the
index arrays.
"""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

import numpy as np

T = TypeVar("T")

if TYPE_CHECKING:
    from types import TracebackType


def _xxhash(name: str) -> Callable[[memoryview], int] | None:
    """The ``xxhash`` package's function ``name`` (an integer digest of a buffer), or None
    without the package (a dependency; CRC-32 then)."""
    try:
        import xxhash
    except ImportError:
        return None
    digest: Callable[[memoryview], int] = getattr(xxhash, name)
    return digest


_XXH3 = _xxhash("xxh3_64_intdigest")
xxh3 = _XXH3
"""XXH3-64 of a C-contiguous buffer as it is (one C call), or None without ``xxhash``."""
xxh64 = _xxhash("xxh64_intdigest")
"""XXH64 of a C-contiguous buffer as it is (one C call), or None without ``xxhash``: slower
than XXH3 per byte, but scalar code (:mod:`spf.runtime.known` uses it for small arrays)."""

PIECE = 1 << 22
"""Bytes per piece (4 MiB): large enough that a piece's thread hand-off costs nothing
against its CRC, small enough that two cores share a 16 MB index array."""

PREFETCH_BYTES = 1 << 20
""":func:`prefetch` hands arrays of at least this many bytes in all to a worker thread
(1 MiB: XXH3 reads it in ~0.1 ms, several times a thread hand-off); fewer are hashed where
they are needed."""

_PREFIX = "spf-crc"
"""The names of the pool's threads start so."""
_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()
_SCOPE = threading.local()


def _forked() -> None:
    # a forked child has none of the parent's threads: the parent's pool would queue jobs
    # no thread runs (and its lock may have been held by one of them)
    global _POOL_LOCK
    _POOL.clear()
    _POOL_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forked)


def _pool() -> ThreadPoolExecutor:
    with _POOL_LOCK:
        if not _POOL:
            workers = min(8, os.cpu_count() or 1)
            _POOL.append(ThreadPoolExecutor(workers, thread_name_prefix=_PREFIX))
        return _POOL[0]


def _bytes(a: np.ndarray) -> memoryview:
    return np.ascontiguousarray(a).data.cast("B")


Memo = dict[int, tuple[np.ndarray, int]]
"""A scope's checksums: ``id(array) -> (array, checksum)`` (the array held, so its ``id``
names no other array while the scope lasts)."""


def _known(memo: Memo | None, a: np.ndarray) -> int | None:
    if memo is None:
        return None
    got = memo.get(id(a))
    return got[1] if got is not None and got[0] is a else None


def checksums(arrays: Sequence[np.ndarray]) -> list[int]:
    """The checksum of each array (0 when empty): the XXH3 hash of its bytes, or without
    ``xxhash`` the CRC-32 of its bytes when it fits one piece, else the CRC-32 of its
    pieces' CRCs."""
    memo: Memo | None = getattr(_SCOPE, "memo", None)
    out: list[int | None] = [None] * len(arrays)
    jobs: list[tuple[int, memoryview]] = []
    for i, a in enumerate(arrays):
        if (known := _known(memo, a)) is not None:
            out[i] = known
        elif a.size == 0:
            out[i] = 0
        elif _XXH3 is not None:
            out[i] = digest = int(_XXH3(_bytes(a)))
            if memo is not None:
                memo[id(a)] = (a, digest)
        else:
            data = _bytes(a)
            jobs += [(i, data[at : at + PIECE]) for at in range(0, len(data), PIECE)]
    if len(jobs) == 1 or threading.current_thread().name.startswith(_PREFIX):
        # on one of the pool's own threads (a job that hashes): the pieces here, since a
        # job that waits for the pool's other jobs may wait for itself (a one-worker pool)
        crcs = [zlib.crc32(job[1]) for job in jobs]
    elif jobs:
        crcs = list(_pool().map(lambda job: zlib.crc32(job[1]), jobs))
    else:
        crcs = []
    pieces: dict[int, list[int]] = {}
    for (i, _), crc in zip(jobs, crcs, strict=True):
        pieces.setdefault(i, []).append(crc)
    for i, got in pieces.items():
        value = got[0] if len(got) == 1 else zlib.crc32(np.array(got, dtype="<u4").tobytes())
        out[i] = value
        if memo is not None:
            memo[id(arrays[i])] = (arrays[i], value)
    return [int(v) for v in out if v is not None]


def prefetch(arrays: Sequence[np.ndarray]) -> Callable[[], None]:
    """Start the checksums of ``arrays`` on a worker thread and return what waits for them
    and records them in the caller's :func:`shared` scope (where :func:`checksums` then
    finds them). For a caller about to run C code that releases the GIL (a generated
    inspector stage): the hashes run beside it instead of after it, on a core the stage
    leaves free. Arrays already in the scope, fewer than :data:`PREFETCH_BYTES` in all, or
    without ``xxhash`` (whose CRC-32 pieces use the same pool), are left to
    :func:`checksums`; nothing may write the arrays until the returned call has run."""
    memo: Memo | None = getattr(_SCOPE, "memo", None)
    todo = [a for a in arrays if a.size and _known(memo, a) is None]
    if _XXH3 is None or memo is None or sum(a.nbytes for a in todo) < PREFETCH_BYTES:
        return _nothing
    hashed = _XXH3
    job = _pool().submit(lambda: [int(hashed(_bytes(a))) for a in todo])

    def join() -> None:
        for a, value in zip(todo, job.result(), strict=True):
            memo[id(a)] = (a, value)

    return join


def submit(fn: Callable[[], T]) -> Future[T]:
    """Run ``fn`` on spf's worker threads (those of the checksums): for a caller that runs
    C code releasing the GIL on its own thread meanwhile (two inspector passes at once)."""
    return _pool().submit(fn)


def _nothing() -> None:
    return None


def digest(a: np.ndarray) -> int:
    """The checksum of one C-contiguous array, as :func:`checksums` gives it, at the cost of
    one call: the XXH3 hash reads the array's buffer as it is (no view, no scope)."""
    if _XXH3 is not None and a.size:
        return int(_XXH3(a))  # type: ignore[arg-type]  # any C-contiguous buffer
    return checksums([a])[0]


def record_checksum(a: np.ndarray, value: int) -> None:
    """Record ``value``, the checksum of ``a`` as :func:`checksums` gives it (taken on
    another thread by :func:`digest`, e.g. by the thread that just wrote ``a``), in the
    caller's :func:`shared` scope, where :func:`checksums` then finds it; outside a scope,
    nothing. Nothing may write ``a`` after its checksum was taken."""
    memo: Memo | None = getattr(_SCOPE, "memo", None)
    if memo is not None:
        memo[id(a)] = (a, value)


class _Shared:
    """The context of :func:`shared` (a class, not a generator: entered on every call of a
    kernel with a plan, where contextlib's machinery cost a few microseconds)."""

    __slots__ = ("owner",)

    def __init__(self) -> None:
        self.owner = False

    def __enter__(self) -> None:
        if getattr(_SCOPE, "memo", None) is None:
            _SCOPE.memo = {}
            self.owner = True

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.owner:
            _SCOPE.memo = None
            self.owner = False


def shared() -> _Shared:
    """A scope in which each array's checksum is taken once (nested scopes share it)."""
    return _Shared()

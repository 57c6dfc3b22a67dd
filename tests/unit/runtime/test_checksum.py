"""spf.runtime.checksum: checksums of argument arrays (XXH3, or without ``xxhash`` CRC-32 in
pieces on a thread pool), equal for equal bytes and different when one byte changes (arrays
of one piece and of several), and taken once per array inside a ``shared()`` scope (a plan's
fingerprint and the fact keys of the same call)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import xxhash  # a dependency of spf (pyproject.toml): never skipped

from spf.runtime import checksum


@pytest.fixture(params=["xxh3", "crc32"])
def hashed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each of the two hashes: XXH3 (``xxhash``, a dependency) and the CRC-32 fallback."""
    if request.param == "xxh3":
        monkeypatch.setattr(checksum, "_XXH3", checksum._xxhash("xxh3_64_intdigest"))
    else:
        monkeypatch.setattr(checksum, "_XXH3", None)
    return str(request.param)


@pytest.mark.parametrize("size", [0, 1, 1000, (checksum.PIECE // 8) * 3 + 5])
def test_equal_bytes_give_equal_checksums_and_a_changed_byte_another(
    size: int, hashed: str
) -> None:
    a = np.random.default_rng(size).integers(0, 1 << 40, size)
    b = a.copy()
    assert checksum.checksums([a]) == checksum.checksums([b])
    if size:
        b[size // 2] += 1
        assert checksum.checksums([a]) != checksum.checksums([b])


def test_one_piece_is_the_crc32_of_the_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checksum, "_XXH3", None)
    a = np.arange(1000, dtype=np.int32)
    assert checksum.checksums([a]) == [zlib.crc32(a.tobytes())]


def test_with_xxhash_the_checksum_is_the_xxh3_of_the_bytes() -> None:
    a = np.arange(3_000_000, dtype=np.int64)  # several CRC pieces: one hash all the same
    assert checksum.checksums([a]) == [xxhash.xxh3_64_intdigest(a.tobytes())]


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the buffers hashed from now on (XXH3, or the CRC-32 fallback's pieces),
    in whichever thread."""
    calls: list[int] = []
    digest = checksum._XXH3 or zlib.crc32

    def counted(data: memoryview, *rest: int) -> int:
        calls.append(len(data))
        return digest(data, *rest)

    if checksum._XXH3 is None:
        monkeypatch.setattr(checksum.zlib, "crc32", counted)
    else:
        monkeypatch.setattr(checksum, "_XXH3", counted)
    return calls


def test_a_scope_takes_each_arrays_checksum_once(
    monkeypatch: pytest.MonkeyPatch, hashed: str
) -> None:
    calls = counting(monkeypatch)
    a, b = np.arange(10_000), np.arange(5, dtype=np.int32)
    with checksum.shared():
        first = checksum.checksums([a, b])
        with checksum.shared():  # a nested scope shares the outer one
            again = checksum.checksums([b, a])
    assert again == first[::-1]
    assert sorted(calls) == sorted([a.nbytes, b.nbytes])
    calls.clear()
    checksum.checksums([a])  # outside a scope: taken again (the array may have changed)
    assert calls == [a.nbytes]


def test_views_of_one_buffer_are_told_apart(hashed: str) -> None:
    a = np.arange(20)
    with checksum.shared():
        halves = checksum.checksums([a[:10], a[::2], a[10:]])
    assert len(set(halves)) == 3


def test_prefetched_checksums_are_recorded_in_the_scope_and_not_taken_again(
    monkeypatch: pytest.MonkeyPatch, hashed: str
) -> None:
    a, b = np.arange(checksum.PREFETCH_BYTES // 8), np.arange(7, dtype=np.int32)
    want = checksum.checksums([a, b])
    calls = counting(monkeypatch)
    with checksum.shared():
        join = checksum.prefetch([a, b])
        join()
        assert checksum.checksums([b, a]) == want[::-1]
    assert sorted(calls) == sorted([a.nbytes, b.nbytes])  # once each, in either thread
    calls.clear()
    checksum.prefetch([a])()  # outside a scope: nothing to record it in, nothing hashed
    assert calls == []


def test_small_arrays_are_not_handed_to_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    b = np.arange(7, dtype=np.int32)
    calls = counting(monkeypatch)
    with checksum.shared():
        checksum.prefetch([b])()  # under PREFETCH_BYTES: left to checksums()
        assert calls == []
        checksum.checksums([b])
    assert calls == [b.nbytes]


def test_crc_pieces_taken_on_a_pool_thread_do_not_wait_for_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # without xxhash an array of several pieces is CRC'd piece by piece on the pool; a job
    # of that very pool (the wavefront inspector's worker hashing its levels) takes them
    # itself: with one worker, waiting for the pool would wait for itself for ever
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(checksum, "_XXH3", None)
    a = np.arange(checksum.PIECE // 8 * 3 + 5, dtype=np.int64)
    want = checksum.checksums([a])
    one = ThreadPoolExecutor(1, thread_name_prefix=checksum._PREFIX)
    monkeypatch.setattr(checksum, "_POOL", [one])
    try:
        assert checksum.submit(lambda: checksum.digest(a)).result(timeout=60) == want[0]
    finally:
        one.shutdown(wait=False)

"""A warm ``spf.einsum(...).compile()`` allocates few containers (issue 33: the tensor
bench's warm sorted SpGEMM ran a full pass of the garbage collector owed by the rest of the
process, because the warm compile alone allocated more containers than the young
generation's threshold): the formula's key is written as text (spf.runtime.key_text),
equal UFs and sets are pickled once (spf.index_notation.shared_values), and an entry this
process wrote or read is not unpickled again (spf.index_notation.decoded)."""

from __future__ import annotations

import functools
import gc
import pickle
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.index_notation.remembered as remembered
import spf.kernels
from spf.formats import BCSR, CSR
from spf.index_notation.decoded import DecodedEntries
from spf.index_notation.shared_values import shared_values
from spf.runtime.key_text import key_text
from spf.runtime.warm import UnkeyableError, _key
from spf.sets.uf import UF

if TYPE_CHECKING:
    from pathlib import Path


def _old_key(value: object) -> str:
    """The key's text as remembered.py printed it before key_text (every dict's items
    sorted)."""

    def unordered(v: object) -> object:
        if not isinstance(v, tuple):
            return v
        items = tuple(unordered(x) for x in v)
        if items and isinstance(items[0], str) and items[0].endswith("dict"):
            return (items[0], *sorted(items[1:], key=repr))
        return items

    return repr(unordered(_key(value, set())))


@pytest.fixture(autouse=True)
def _one_team() -> Iterator[None]:
    """The same group of phases in every compile (see test_einsum_remembered)."""
    import os

    from spf.runtime.threads import ENV, set_adaptive

    previous, env = set_adaptive(False), os.environ.get(ENV)
    os.environ[ENV] = "0"
    try:
        yield
    finally:
        set_adaptive(previous)
        if env is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = env


def _formulas() -> list[object]:
    return [
        spf.kernels.spgemm_csr().formula,
        spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR).formula,
        spf.einsum("y(i) = A(i,j) * x(j)", A=CSR).formula,
        spf.einsum("y(i) = A(i,j) * x(j)", A=CSR, index_dtype="int64").formula,
        spf.einsum("y(i) = A(i,j) * x(j)", A=BCSR(2, 2)).formula,
        spf.einsum("y(i) = A(i,j) * x(j)", A=BCSR(2, 3)).formula,
    ]


def test_the_key_text_tells_apart_what_the_key_tells_apart() -> None:
    first, again = _formulas(), _formulas()
    for a, b in zip(first, again, strict=True):
        assert key_text(a) == key_text(b)
    for a in first:
        for b in first:
            assert (key_text(a) == key_text(b)) == (_old_key(a) == _old_key(b))
    assert len({key_text(f) for f in first}) == len(first)


def test_the_key_text_refuses_what_the_key_refuses() -> None:
    from spf.sparse import csr_args

    assert key_text(csr_args) == "('function', 'spf.sparse.csr_args')"
    assert key_text({"b": 1, "a": (2, {3})}) == key_text({"a": (2, {3}), "b": 1})
    assert key_text({"a": 1}) != key_text({"a": "1"}) != key_text({"a": (1,)})
    for foreign in (lambda: 1, functools.partial(print, 1), np.zeros(2)):
        with pytest.raises(UnkeyableError):
            _key(foreign, set())
        with pytest.raises(UnkeyableError):
            key_text(foreign)


def test_the_formula_key_allocates_few_containers() -> None:
    f = spf.kernels.spgemm_csr().formula
    key_text(f)
    gc.collect()
    gc.disable()
    try:
        before = gc.get_count()[0]
        key_text(f)
        after = gc.get_count()[0]
    finally:
        gc.enable()
    assert after - before < 100  # the tuples of _key and their sorting: 430-800


def test_equal_ufs_and_sets_are_pickled_once() -> None:
    def uf() -> UF:
        return UF("rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}")

    a, b = uf(), uf()
    assert a is not b
    copied = shared_values([(a, "x"), {"k": b}])
    assert isinstance(copied, list)
    assert copied[0][0] is copied[1]["k"] is a
    again = pickle.loads(pickle.dumps(copied))
    assert again[0][0] is again[1]["k"]
    for other in (
        UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}"),
        UF("rowptr", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v <= NNZ}"),
        UF("rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v < NNZ}"),
        UF("rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
           monotonic="nondecreasing"),
    ):  # fmt: skip
        out = shared_values([uf(), other])
        assert out[0] is not out[1]
        assert out[1] == other
        assert out[0] != other


def test_decoded_entries_keep_the_latest() -> None:
    kept = DecodedEntries(limit=2)
    for n in range(3):
        kept.put(str(n), {"n": n})
    assert kept.get("0") is None
    assert kept.get("2") == {"n": 2}
    assert len(kept) == 2


def _csr(seed: int) -> sp.csr_array:
    a = sp.random_array((30, 30), density=0.2, format="csr", rng=seed)
    a.indptr, a.indices = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    return a


def test_a_warm_compile_in_the_same_process_unpickles_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remembered._DECODED.clear()
    spf.kernels.spgemm_csr().compile(cache_dir=str(tmp_path))
    loads = remembered.LOADS

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a warm compile unpickled the entry this process wrote")

    monkeypatch.setattr(remembered.pickle, "loads", refused)
    kernel = spf.kernels.spgemm_csr().compile(cache_dir=str(tmp_path))
    assert loads + 1 == remembered.LOADS
    a, b = _csr(1), _csr(2)
    got = kernel(**spf.sparse.csr_args(a, prefix="A_"), **spf.sparse.csr_args(b, prefix="B_"))
    want = a @ b
    want.sort_indices()
    assert np.array_equal(got["rowptr"], want.indptr)
    assert np.array_equal(got["col"], want.indices)
    assert np.allclose(got["A"], want.data)


def test_an_entry_read_from_disk_is_decoded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spf.kernels.spgemm_csr().compile(cache_dir=str(tmp_path))
    remembered._DECODED.clear()  # as a fresh interpreter finds it
    calls = []
    real = pickle.loads

    def counted(blob: bytes) -> object:
        calls.append(len(blob))
        return real(blob)

    monkeypatch.setattr(remembered.pickle, "loads", counted)
    loads = remembered.LOADS
    for _ in range(2):
        spf.kernels.spgemm_csr().compile(cache_dir=str(tmp_path))
    assert len(calls) == 1
    assert loads + 2 == remembered.LOADS  # both loaded the entry (none compiled again)


def test_a_warm_sparse_compile_runs_no_young_collection(tmp_path: Path) -> None:
    """After a cold compile (which ends in a collection of the young generations: spf._gc),
    a fresh einsum of the same formula and its warm compile stay below the young
    generation's default threshold (700 net container allocations): no collection, so none
    of the passes the rest of the process owes lands in it (before: ~1,100-1,300)."""
    keep = [spf.kernels.spgemm_csr().compile(cache_dir=str(tmp_path))]
    passes: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    previous = gc.get_threshold()
    gc.collect(1)
    gc.set_threshold(700, previous[1], previous[2])
    gc.callbacks.append(seen)
    try:
        start = gc.get_count()[0]
        again = spf.kernels.spgemm_csr()
        keep.append(again.compile(cache_dir=str(tmp_path)))
        grown = gc.get_count()[0] - start
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*previous)
    print(f"young passes {passes}, count grown by {grown}")
    assert passes == []
    assert grown < 600

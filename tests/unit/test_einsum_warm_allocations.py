"""A warm ``spf.einsum(...).compile()`` allocates few containers (issue 33: the tensor
bench's warm sorted SpGEMM ran a full pass of the garbage collector owed by the rest of the
process, because the warm compile alone allocated more containers than the young
generation's threshold): the formula's key is written as text (spf.runtime.key_text)."""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator

import numpy as np
import pytest

import spf
import spf.kernels
from spf.formats import BCSR, CSR
from spf.runtime.key_text import key_text
from spf.runtime.warm import UnkeyableError, _key


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
    assert after - before < 100  # the tuples of _key and their sorting: ~800

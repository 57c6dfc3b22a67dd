"""gauss_seidel_csr's sorted-rows test as one compare across its row split at ``diag(i)``
(spf.codegen.split_pairs): the same results and the same errors as the separate tests.

Each checked call runs twice, on the kernel as printed and on one compiled with the split
reads turned off (the checked loops as before), on the same arrays: valid inputs give
bitwise equal results, and broken ones (rows unsorted left or right of the diagonal, a
duplicate next to it, ``col(diag(i)) != i``, ``diag(i)`` outside its row, values out of
range) the same ArgumentError, naming the same fact. Every array is a view into a larger
buffer whose guard bytes must stay untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError
from spf.analysis import memo
from spf.codegen import split_pairs
from spf.runtime import compile as compile_module
from spf.runtime import warm

GUARD = 16


@pytest.fixture(scope="module", params=["int32", "int64"])
def kernels(request: pytest.FixtureRequest) -> tuple[str, Any, Any]:
    dtype = request.param
    new = spf.kernels.gauss_seidel_csr(index_dtype=dtype).compile()
    assert "spf_split_col" in new.source
    with pytest.MonkeyPatch.context() as mp:  # generated again, nothing kept
        mp.setattr(split_pairs, "plan", lambda *args: None)
        mp.setattr(compile_module, "_GENERATED", {})
        mp.setattr(compile_module, "_read_generated", lambda *args: None)
        mp.setattr(compile_module, "_write_generated", lambda *args: None)
        mp.setattr(warm, "warm_key", lambda *args, **kwargs: None)
        mp.setattr(memo, "remembered", lambda ir, key, run: run())
        old = spf.kernels.gauss_seidel_csr(index_dtype=dtype).compile()
    assert "spf_split_col" not in old.source
    return dtype, new, old


def _matrix(n: int, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    m = sp.random_array((n, n), density=min(1.0, 4 / n), rng=rng, format="csr")
    return sp.csr_array(m + sp.eye_array(n) * (n + 1.0))


def _guarded(a: Any, fill: Any) -> tuple[Any, Any]:
    """``a`` copied into the middle of a larger buffer of ``fill``: (the buffer, the view)."""
    buf = np.full(a.size + 2 * GUARD, fill, dtype=a.dtype)
    view = buf[GUARD : GUARD + a.size]
    view[:] = a
    return buf, view


def _call(kernel: Any, args: dict[str, Any], n: int) -> tuple[str | None, Any]:
    """The error message (None) and ``x`` of a checked call on guarded copies of ``args``."""
    bufs = {}
    views = {}
    for name in ("A", "rowptr", "col", "diag"):
        bufs[name], views[name] = _guarded(np.asarray(args[name]), 77)
    bufs["b"], views["b"] = _guarded(np.linspace(1.0, 2.0, n), -5.0)
    bufs["x"], views["x"] = _guarded(np.zeros(n), -7.0)
    before = {k: b.copy() for k, b in bufs.items()}
    error = None
    try:
        kernel(**views, N=n, NNZ=int(args["NNZ"]), check=True)
    except ArgumentError as e:
        error = str(e)
    for k, b in bufs.items():
        assert np.array_equal(b[:GUARD], before[k][:GUARD]), k
        assert np.array_equal(b[GUARD + views[k].size :], before[k][GUARD + views[k].size :]), k
        if k != "x":
            assert np.array_equal(b, before[k]), k
    return error, views["x"].copy()


def _same(kernels: tuple[str, Any, Any], args: dict[str, Any], n: int) -> str | None:
    _, new, old = kernels
    e_new, x_new = _call(new, args, n)
    e_old, x_old = _call(old, args, n)
    assert e_new == e_old
    if e_new is None:
        assert np.array_equal(x_new, x_old)
    return e_new


def test_valid_rows_give_the_unchecked_results(kernels: tuple[str, Any, Any]) -> None:
    dtype, new, _ = kernels
    for n, seed in ((1, 0), (2, 1), (50, 2), (700, 3)):
        args = spf.sparse.gauss_seidel_args(_matrix(n, seed), dtype)
        assert _same(kernels, args, n) is None
        x0, x1 = np.zeros(n), np.zeros(n)
        b = np.linspace(1.0, 2.0, n)
        new(x=x0, b=b, **args, check=True)
        new(x=x1, b=b, **args, check=False)
        assert np.array_equal(x0, x1)


def _cases(args: dict[str, Any], n: int) -> list[tuple[str, dict[str, Any]]]:
    rowptr, col, diag = args["rowptr"], args["col"], args["diag"]
    out = []

    def put(what: str, name: str, at: int, value: int) -> None:
        a = {**args, name: args[name].copy()}
        a[name][at] = value
        out.append((what, a))

    for i in range(n):
        d, s, e = int(diag[i]), int(rowptr[i]), int(rowptr[i + 1])
        if d - s >= 2:
            put("left unsorted", "col", s, int(col[s + 1]))
        if d - s >= 1:
            put("duplicate left of the diagonal", "col", d - 1, i)
            put("left entry right of the diagonal", "col", d - 1, min(n - 1, i + 1))
        if e - d >= 3:
            put("right unsorted", "col", d + 2, int(col[d + 1]))
        if e - d >= 2:
            put("duplicate right of the diagonal", "col", d + 1, i)
            put("right entry left of the diagonal", "col", d + 1, max(0, i - 1))
        put("diagonal column wrong", "col", d, (i + 1) % n)
        put("diagonal column out of range", "col", d, n)
        put("negative column at the diagonal", "col", d, -1)
        if e - s >= 2:
            put("column out of range", "col", e - 1, n + 3)
            put("negative column", "col", s, -2)
        if d + 1 < e and (i + 1 == n or d + 1 < int(diag[i + 1])):
            put("diagonal moved right", "diag", i, d + 1)
        if d - 1 >= s and (i == 0 or d - 1 > int(diag[i - 1])):
            put("diagonal moved left", "diag", i, d - 1)
        if i + 1 < n and e < int(diag[i + 1]):
            put("diagonal outside its row", "diag", i, e)
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_broken_rows_raise_what_the_separate_tests_raise(
    kernels: tuple[str, Any, Any], seed: int
) -> None:
    n = 12
    args = spf.sparse.gauss_seidel_args(_matrix(n, 10 + seed), kernels[0])
    raised = 0
    for what, bad in _cases(args, n):
        error = _same(kernels, bad, n)
        raised += error is not None
        assert error is not None or what.startswith("diagonal moved"), what
    assert raised > 20


def test_random_damage_raises_what_the_separate_tests_raise(
    kernels: tuple[str, Any, Any],
) -> None:
    rng = np.random.default_rng(7)
    for trial in range(60):
        n = int(rng.integers(2, 30))
        args = spf.sparse.gauss_seidel_args(_matrix(n, 100 + trial), kernels[0])
        bad = {**args, "col": args["col"].copy(), "diag": args["diag"].copy()}
        for _ in range(int(rng.integers(1, 4))):
            name = "col" if rng.random() < 0.8 else "diag"
            at = int(rng.integers(0, bad[name].size))
            bad[name][at] = int(rng.integers(-2, n + 2))
        _same(kernels, bad, n)


def test_a_broken_pair_is_caught_after_the_contents_were_remembered(
    kernels: tuple[str, Any, Any],
) -> None:
    dtype, new, _ = kernels
    n = 40
    args = spf.sparse.gauss_seidel_args(_matrix(n, 5), dtype)
    b = np.ones(n)
    for _ in range(2):  # the second call finds the contents remembered as verified
        new(x=np.zeros(n), b=b, **args, check=True)
    i = next(i for i in range(n) if args["diag"][i] + 1 < args["rowptr"][i + 1])
    col = args["col"].copy()
    col[args["diag"][i] + 1] = i  # a duplicate of the diagonal's column right of it
    with pytest.raises(ArgumentError, match="col"):
        new(x=np.zeros(n), b=b, **{**args, "col": col}, check=True)

"""Prepared calls (``kernel.prepare``, spf.runtime.prepared): the matrix's arrays bound once,
the free data spaces per call. Results equal the keyword call's bit for bit and scipy's; what
a checked call refuses is refused when preparing; a free array of the wrong look is refused
on every call, also when it is an array passed before and changed since."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf.sparse
from spf import ArgumentError, kernels

if TYPE_CHECKING:
    from pathlib import Path


def _matrix(n: int = 57, m: int = 43, seed: int = 0) -> Any:
    return sp.random_array((n, m), density=0.2, rng=np.random.default_rng(seed), format="csr")


def _x(m: int, seed: int = 1) -> Any:
    return np.random.default_rng(seed).standard_normal(m)


@pytest.fixture(scope="module")
def csr(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return kernels.spmv_csr().compile(cache_dir=tmp_path_factory.mktemp("prepared"))


def test_prepared_spmv_equals_the_keyword_call_and_scipy(csr: Any) -> None:
    a = _matrix()
    args = spf.sparse.csr_args(a)
    call = csr.prepare(["y", "x"], **args)
    assert call.names == ("y", "x")
    assert call.params == {"M": 43, "N": 57, "NNZ": a.nnz}
    for seed in range(3):  # new x each call, and the same y again (its buffer remembered)
        x = _x(43, seed)
        y, want = np.full(57, 0.5), np.full(57, 0.5)
        call(y, x)
        csr(y=want, x=x, check=False, **args)
        assert np.array_equal(y, want)
        np.testing.assert_allclose(y, 0.5 + a @ x, rtol=1e-13, atol=1e-13)
        call(y=y, x=x)  # by name: y += A @ x again
        np.testing.assert_allclose(y, 0.5 + 2 * (a @ x), rtol=1e-13, atol=1e-13)


def test_prepared_call_of_a_parallel_kernel(tmp_path: Path) -> None:
    comp = kernels.spmv_csr()
    comp.stmt(0).parallelize("i")
    k = comp.compile(cache_dir=tmp_path)
    a = _matrix(300, 200, seed=3)
    call = k.prepare(["y", "x"], **spf.sparse.csr_args(a))
    x, y = _x(200), np.zeros(300)
    call(y, x)
    np.testing.assert_allclose(y, a @ x, rtol=1e-13, atol=1e-13)
    assert k.last_threads is not None


def test_free_arrays_of_the_wrong_look_are_refused_each_call(csr: Any) -> None:
    a = _matrix()
    call = csr.prepare(["y", "x"], **spf.sparse.csr_args(a))
    y, x = np.zeros(57), _x(43)
    call(y, x)
    with pytest.raises(ArgumentError, match=r"x: expected shape \(43,\)"):
        call(y, x[:40])
    with pytest.raises(ArgumentError, match="expected dtype float64"):
        call(y, x.astype(np.float32))
    ro = np.zeros(57)
    ro.flags.writeable = False
    with pytest.raises(ArgumentError, match="read-only"):
        call(ro, x)
    with pytest.raises(ArgumentError, match="not C-contiguous"):
        call(np.zeros(114)[::2], x)
    with pytest.raises(ArgumentError, match=r"expected 2 array\(s\) \(y, x\), got 1"):
        call(y)
    with pytest.raises(ArgumentError, match="all by position or all by name"):
        call(y, x=x)
    y.flags.writeable = False  # the array passed before, changed since
    with pytest.raises(ArgumentError, match="read-only"):
        call(y, x)
    y.flags.writeable = True
    x.shape = (43, 1)
    with pytest.raises(ArgumentError, match="x: expected 1-d"):
        call(y, x)


def test_what_a_checked_call_refuses_is_refused_when_preparing(csr: Any) -> None:
    a = _matrix()
    args = spf.sparse.csr_args(a)
    bad = {**args, "col": args["col"].copy()}
    bad["col"][3] = 1000
    with pytest.raises(ArgumentError, match=r"col\[3\] = 1000 is outside the declared range"):
        csr.prepare(["y", "x"], **bad)
    csr.prepare(["y", "x"], check=False, **args)  # nothing run: nothing to refuse
    with pytest.raises(ArgumentError, match="'z' is not a data space"):
        csr.prepare(["z"], **args)
    with pytest.raises(ArgumentError, match="'col' is not a data space"):
        csr.prepare(["col"], **args)
    with pytest.raises(ArgumentError, match="'x' is named free and also bound"):
        csr.prepare(["y", "x"], x=_x(43), **args)
    with pytest.raises(ArgumentError, match="distinct names"):
        csr.prepare(["y", "y"], **args)
    with pytest.raises(ArgumentError, match=r"a list of names"):
        csr.prepare("y", **args)
    no_nnz = {k: v for k, v in args.items() if k not in ("A", "NNZ")}
    with pytest.raises(ArgumentError, match=r"parameter\(s\) NNZ do not follow"):
        csr.prepare(["y", "A", "x"], **no_nnz)


def test_bound_output_is_not_changed_by_preparing(csr: Any) -> None:
    a = _matrix()
    args = spf.sparse.csr_args(a)
    y = np.full(57, 3.0)
    call = csr.prepare(["x"], y=y, **args)  # the checked run writes a copy of y
    assert np.all(y == 3.0)
    x = _x(43)
    call(x)
    np.testing.assert_allclose(y, 3.0 + a @ x, rtol=1e-13, atol=1e-13)


def test_blocked_data_space_passed_flat(tmp_path: Path) -> None:
    a = _matrix(12, 10, seed=5)
    args = spf.sparse.bcsr_args(a, 2, 2)
    k = kernels.spmv(spf.formats.BCSR(2, 2)).compile(cache_dir=tmp_path)
    call = k.prepare(["A"], y=np.zeros(12), x=_x(10), **{n: v for n, v in args.items() if n != "A"})
    flat = np.ascontiguousarray(args["A"]).reshape(-1)
    call(flat)  # the declared [NNZB, 2, 2] read from the same elements
    call(args["A"])

"""spf.formats.tune's prepared call (``fres.prepare()``: the converted arrays bound once) and
SELL(C, 1)'s chunk kernel (spf.formats.tune_kernels.spmv_sell_chunks, plain and vectorised as
SELLV(C)): results bitwise those of the kernels they replace, and equal to scipy's."""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.sparse
from spf.formats.builtin import SELL
from spf.formats.spmv import spmv_computation
from spf.formats.tune_kernels import SIMD_CFLAGS, chunk_args, spmv_sell_chunks

if TYPE_CHECKING:
    from pathlib import Path

# the SIMD chunk kernels against the generic SELL kernel built with spf's own -O3
pytestmark = pytest.mark.default_flags

ROOMY = 120.0  # room to compile every candidate on a cold build cache and a busy machine


def _matrix(n: int, m: int, seed: int) -> Any:
    """Random entries, rows 0 and n // 2 empty, one row much longer than the others."""
    rng = np.random.default_rng(seed)
    a = sp.lil_array(sp.random_array((n, m), density=0.1, rng=rng))
    a[n // 3, :] = rng.standard_normal(m)
    a[0, :] = 0.0
    a[n // 2, :] = 0.0
    return sp.csr_array(a)


@pytest.mark.parametrize("c", [1, 4, 8])
@pytest.mark.parametrize("n", [1, 7, 61, 64])
def test_sell_chunk_kernels_equal_the_generic_sell_kernel_bitwise(c: int, n: int) -> None:
    """The kernels depend on ``c`` only: they build into the run's shared cache (tests/conftest.py),
    once for the four sizes (each size's own cache compiled all five again)."""
    a = _matrix(n, 37, seed=n + c) if n > 2 else sp.csr_array(np.arange(1.0, 38.0)[None, :])
    args = spf.sparse.format_args(a, SELL(c, 1), "int32")
    x = np.random.default_rng(2).standard_normal(37)
    want = np.zeros(n)
    spmv_computation(SELL(c, 1), "int32").compile()(y=want, x=x, **args)
    np.testing.assert_allclose(want, a @ x, rtol=1e-12, atol=1e-12)
    for vector, cflags in ((False, None), (True, SIMD_CFLAGS)):
        for parallel in (False, True):
            comp = spmv_sell_chunks(c, "int32", vector=vector)
            if parallel:
                comp.stmt("spmv").parallelize("ch")  # legal: chunks write distinct rows
            k = comp.compile(cflags=cflags)
            y = np.zeros(n)
            k(y=y, x=x, **chunk_args(args, c))
            assert np.array_equal(y, want), (vector, parallel)


def test_sell_chunk_loop_is_a_fixed_unit_stride_loop_over_the_chunk() -> None:
    source = spmv_sell_chunks(8, "int32").codegen("c")
    body = source[source.index("void spmv_sell8_chunks_generated(") :]
    assert re.search(r"for \(int64_t r = 0; r (<= 7|< 8); r\+\+\)\s*\{\s*spf_tile\[r\] \+=", body)
    simd = spmv_sell_chunks(8, "int32", vector=True).codegen("c")
    assert "#pragma omp simd" in simd


SPACES = [
    ["CSR"],
    {"BCSR": [(3, 3)]},
    {"SELL": [(8, 1)]},
    {"SELLV": [(4,)]},
    {"SELL": [(4, 8)]},
    {"CSRP": [(1,)], "schedules": ["parallel"]},
]


@pytest.mark.parametrize("space", SPACES, ids=lambda s: "-".join(k for k in s if k != "schedules"))
def test_prepared_result_equals_the_result_call_and_scipy(space: Any, tmp_path: Path) -> None:
    a = _matrix(61, 47, seed=4)
    fres = spf.formats.tune(a, budget=ROOMY, space=space, threads=2, seed=0, max_padding=100.0,
                            record_dir=tmp_path)  # fmt: skip
    family = next(k for k in space if k != "schedules")
    assert fres.candidate.startswith(family)
    spmv = fres.prepare()
    for seed in range(2):
        x = np.random.default_rng(seed).standard_normal(47)
        y = np.zeros(61)
        spmv(x, y)
        assert np.array_equal(y, fres(x))
        np.testing.assert_allclose(y, a @ x, rtol=1e-12, atol=1e-12)
        spmv(x, y)  # y += A @ x
        np.testing.assert_allclose(y, 2 * (a @ x), rtol=1e-12, atol=1e-12)
    with pytest.raises(spf.ArgumentError, match=r"x.*shape \(47,\)"):
        spmv(np.zeros(48), np.zeros(61))


def test_sellv_in_the_history_and_replayed_from_its_record(tmp_path: Path) -> None:
    a = _matrix(70, 70, seed=6)
    space = {"SELL": [(4, 1)], "SELLV": [(4,)], "schedules": ["serial", "parallel"]}
    fres = spf.formats.tune(a, budget=ROOMY, space=space, threads=2, seed=0, record_dir=tmp_path)
    labels = {h["candidate"]: h["status"] for h in fres.history}
    assert labels.keys() >= {"SELL(4, 1) serial", "SELLV(4) serial", "SELLV(4) parallel"}
    assert labels["SELLV(4) parallel"] in ("measured", "chosen")
    assert fres.format.name == "SELL4_1"
    again = spf.formats.tune(a, budget=ROOMY, space=space, threads=2, seed=0, record_dir=tmp_path)
    assert again.reused
    assert again.candidate == fres.candidate
    x = np.ones(70)
    np.testing.assert_allclose(again(x), a @ x, rtol=1e-12, atol=1e-12)


def test_a_padded_prepared_call_refuses_what_the_others_refuse(tmp_path: Path) -> None:
    """A format padded to whole blocks (BCSR) copies ``x`` into its own buffer: it checks
    ``x`` and ``y`` as the unpadded prepared calls do (a float64 ``x``, a writeable float64
    ``y``) instead of casting them or raising numpy's error after the C call."""
    a = _matrix(61, 47, seed=4)
    fres = spf.formats.tune(a, budget=ROOMY, space={"BCSR": [(3, 3)]}, threads=1, seed=0,
                            max_padding=100.0, record_dir=tmp_path)  # fmt: skip
    assert fres.kernel_shape != fres.shape
    spmv = fres.prepare()
    x = np.ones(47)
    read_only = np.zeros(61)
    read_only.flags.writeable = False
    bad = {
        "y": [np.zeros(61, dtype=np.int64), np.zeros(61, dtype=np.float32), read_only],
        "x": [x + 1j, x.astype(np.float32), np.array([None] * 47)],
    }
    for name, values in bad.items():
        for value in values:
            args = (x, value) if name == "y" else (value, np.zeros(61))
            with pytest.raises(spf.ArgumentError, match=rf"{name} must be a .*float64 array"):
                spmv(*args)


def test_a_padded_prepared_call_from_two_threads_at_once() -> None:
    """The padded call's buffers are its calling thread's: two threads inside the C call at
    once (held there until both have copied their ``x`` in) each read their own ``x`` (they
    shared one buffer, so one of them read the other's)."""
    from spf.formats.tuner import _padded

    inside = threading.Barrier(2, timeout=30)

    def doubled(xp: np.ndarray, yp: np.ndarray) -> None:  # y += 2 x, once both are in
        inside.wait()
        yp[:] += 2.0 * xp[: len(yp)]

    spmv = _padded(doubled, (5, 5), (6, 6))
    got: dict[int, np.ndarray] = {}

    def run(t: int) -> None:
        y = np.zeros(5)
        spmv(np.full(5, float(t + 1)), y)
        got[t] = y

    workers = [threading.Thread(target=run, args=(t,)) for t in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for t in range(2):
        np.testing.assert_array_equal(got[t], np.full(5, 2.0 * (t + 1)))

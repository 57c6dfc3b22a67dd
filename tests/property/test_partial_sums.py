"""Partial sums (``stmt.partial_sums``) on random CSR rows: the generated SpMV and lower
solve add each row in the order the command promises (entry ``t`` into sum ``t mod
count``, pairwise at the end, rows shorter than ``min_trip`` in order), bitwise, for row
lengths around every boundary (0, ``count``, ``min_trip``, one more, many)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import scipy.sparse as sps
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spf import kernels
from spf.sparse import csr_args, gauss_seidel_args

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMS = [(2, 2), (4, 5), (8, 9)]


@functools.cache
def spmv(count: int, min_trip: int) -> Any:
    comp = kernels.spmv_csr()
    comp.stmt(0).partial_sums("k", count, min_trip)
    return comp.compile()


@functools.cache
def solve(count: int, min_trip: int) -> Any:
    comp = kernels.trsv_diag_csr()
    comp.stmt("s1").partial_sums("k", count, min_trip)
    return comp.compile()


def in_order(first: float, products: list[float], count: int, min_trip: int, sign: int) -> float:
    """``first + sign * sum(products)`` added as the command says."""
    if len(products) < min_trip:
        acc = first
        for p in products:
            acc = acc + p if sign > 0 else acc - p
        return acc
    sums = [first] + [0.0] * (count - 1)
    for t, p in enumerate(products):
        sums[t % count] = sums[t % count] + p if sign > 0 else sums[t % count] - p
    while len(sums) > 1:
        sums = [a + b for a, b in zip(sums[::2], sums[1::2], strict=True)]
    return sums[0]


@st.composite
def rows(draw: st.DrawFn) -> tuple[list[int], int, int]:
    """Row lengths around the boundaries of a form, the form's index, and a seed."""
    form = draw(st.sampled_from(range(len(FORMS))))
    count, min_trip = FORMS[form]
    near = [0, 1, count - 1, count, min_trip - 1, min_trip, min_trip + 1, 2 * min_trip + 3, 40]
    lengths = draw(st.lists(st.sampled_from(near), min_size=1, max_size=12))
    return lengths, form, draw(st.integers(0, 2**16))


@PROPERTY
@given(case=rows())
def test_spmv_rows_in_the_promised_order(case: tuple[list[int], int, int]) -> None:
    lengths, form, seed = case
    count, min_trip = FORMS[form]
    rng = np.random.default_rng(seed)
    m = 41
    cols = [np.sort(rng.choice(m, size=min(k, m), replace=False)) for k in lengths]
    ptr = np.concatenate([[0], np.cumsum([len(c) for c in cols])])
    a = sps.csr_array(
        (rng.standard_normal(int(ptr[-1])), np.concatenate([[], *cols]).astype(np.int32), ptr),
        shape=(len(lengths), m),
    )
    x, y0 = rng.standard_normal(m), rng.standard_normal(len(lengths))
    y = y0.copy()
    spmv(count, min_trip)(y=y, x=x, **csr_args(a))
    for i in range(len(lengths)):
        lo, hi = int(a.indptr[i]), int(a.indptr[i + 1])
        products = [float(a.data[k]) * float(x[a.indices[k]]) for k in range(lo, hi)]
        assert y[i] == in_order(float(y0[i]), products, count, min_trip, 1), i


@PROPERTY
@given(case=rows())
def test_solve_rows_in_the_promised_order(case: tuple[list[int], int, int]) -> None:
    lengths, form, seed = case
    count, min_trip = FORMS[form]
    rng = np.random.default_rng(seed)
    n = len(lengths) + 41  # 41 rows of a diagonal alone, then rows of the drawn lengths
    dense = np.zeros((n, n))
    for i in range(n):
        left = lengths[i - 41] if i >= 41 else 0
        cols = rng.choice(i, size=min(left, i), replace=False) if i else []
        dense[i, cols] = rng.standard_normal(len(cols))
        dense[i, i] = 1.0 + np.abs(dense[i]).sum()
    a = sps.csr_array(dense)
    a.sort_indices()
    b = rng.standard_normal(n)
    x = np.zeros(n)
    solve(count, min_trip)(x=x, b=b, **gauss_seidel_args(a))
    want = np.zeros(n)
    for i in range(n):
        lo, hi = int(a.indptr[i]), int(a.indptr[i + 1])
        d = lo + int(np.flatnonzero(a.indices[lo:hi] == i)[0])
        products = [float(a.data[k]) * float(want[a.indices[k]]) for k in range(lo, d)]
        want[i] = in_order(float(b[i]), products, count, min_trip, -1) / float(a.data[d])
    np.testing.assert_array_equal(x, want)

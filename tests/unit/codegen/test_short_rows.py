"""sptrsv_csr's row bound ``col(k) <= i - 1`` tested with the range in one compare over its
row loop that stops before the diagonal (``rowptr(i+1) - 1``; spf.codegen.row_pairs with
row_blocks.shape's ``short`` rows): the same results and errors as the checked loops.

Each checked call runs on the kernel as printed and on one compiled without the fused reads,
on the same arrays, each a view into a larger buffer whose guard bytes must stay untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.codegen import row_pairs
from spf.testing import compiled_without, same_checked_calls


@pytest.fixture(scope="module", params=["int32", "int64"])
def kernels(request: pytest.FixtureRequest) -> tuple[str, Any, Any]:
    dtype = request.param
    new = spf.kernels.sptrsv_csr(index_dtype=dtype).compile()
    assert "spf_bound_col" in new.source
    old = compiled_without(lambda: spf.kernels.sptrsv_csr(index_dtype=dtype), row_pairs)
    assert "spf_bound_col" not in old.source
    return dtype, new, old


def _lower(n: int, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    m = sp.random_array((n, n), density=min(1.0, 4 / n), rng=rng, format="csr")
    low = sp.csr_array(sp.tril(m, -1) + sp.eye_array(n) * (n + 1.0))
    low.sort_indices()
    return low


def _same(kernels: tuple[str, Any, Any], args: dict[str, Any], n: int) -> str | None:
    """The same error text or ``u`` from the kernel as printed and the one without the
    fused reads, on guarded copies of ``args``."""
    _, new, old = kernels
    arrays = {name: (args[name], 77) for name in ("L", "rowptr", "col")}
    arrays["f"] = (np.linspace(1.0, 2.0, n), -5.0)
    arrays["u"] = (np.zeros(n), -7.0)
    return same_checked_calls(new, old, arrays, "u", N=n, NNZ=int(args["NNZ"]))


def test_valid_rows_give_the_unchecked_results(kernels: tuple[str, Any, Any]) -> None:
    dtype, new, _ = kernels
    for n, seed in ((1, 0), (2, 1), (60, 2), (900, 3)):
        args = spf.sparse.sptrsv_args(_lower(n, seed), dtype)
        assert _same(kernels, args, n) is None
        u0, u1, f = np.zeros(n), np.zeros(n), np.linspace(1.0, 2.0, n)
        new(u=u0, f=f, **args, check=True)
        new(u=u1, f=f, **args, check=False)
        assert np.array_equal(u0, u1)


def test_broken_rows_raise_what_the_checked_loops_raise(kernels: tuple[str, Any, Any]) -> None:
    n = 14
    args = spf.sparse.sptrsv_args(_lower(n, 11), kernels[0])
    rowptr, col = args["rowptr"], args["col"]
    raised = 0
    for i in range(n):
        s, e = int(rowptr[i]), int(rowptr[i + 1])
        for name, at, value in [
            ("col", s, i),  # an entry left of the diagonal at it (or the diagonal moved)
            ("col", s, min(n - 1, i + 1)),
            ("col", e - 1, max(0, i - 1)),  # the diagonal's column wrong
            ("col", s, n),
            ("col", e - 1, -1),
            ("rowptr", i + 1, s - 1),
            ("rowptr", i + 1, int(rowptr[-1]) + 1),
            ("rowptr", i, -1),
        ]:
            bad = {**args, name: args[name].copy()}
            bad[name][at] = value
            raised += _same(kernels, bad, n) is not None
        late = {**args, "col": col.copy(), "rowptr": rowptr.copy()}
        late["col"][0], late["rowptr"][n] = n + 2, int(rowptr[n]) + 1
        raised += _same(kernels, late, n) is not None
    assert raised > 6 * n


def test_random_damage_raises_what_the_checked_loops_raise(
    kernels: tuple[str, Any, Any],
) -> None:
    rng = np.random.default_rng(8)
    for trial in range(60):
        n = int(rng.integers(2, 30))
        args = spf.sparse.sptrsv_args(_lower(n, 200 + trial), kernels[0])
        bad = {**args, "col": args["col"].copy(), "rowptr": args["rowptr"].copy()}
        for _ in range(int(rng.integers(1, 4))):
            name = "col" if rng.random() < 0.8 else "rowptr"
            at = int(rng.integers(0, bad[name].size))
            bad[name][at] = int(rng.integers(-2, n + 2))
        _same(kernels, bad, n)


def test_values_at_the_ends_of_the_index_type_raise_what_the_checked_loops_raise(
    kernels: tuple[str, Any, Any],
) -> None:
    """``col(k) <= i - 1`` tested from its fixed bottom (``(uint64_t)col(k) >= i``): values
    at the ends of int32/int64, around 0, ``i`` and ``N``, in a row's entries left of the
    diagonal and at it, give the same results or error texts as the checked loops, and no
    write outside the arrays."""
    dtype = kernels[0]
    n = 12
    args = spf.sparse.sptrsv_args(_lower(n, 4), dtype)
    rowptr = args["rowptr"]
    info = np.iinfo(dtype)
    ends = [int(info.min), int(info.min) + 1, int(info.max) - 1, int(info.max), -2, -1, 0, n]
    raised = 0
    for i in range(n):
        s, e = int(rowptr[i]), int(rowptr[i + 1])
        for at in sorted({s, e - 2, e - 1} - {s - 1}):
            for value in [*ends, i - 1, i, i + 1]:
                bad = {**args, "col": args["col"].copy()}
                bad["col"][at] = value
                error = _same(kernels, bad, n)
                if not 0 <= value < n:
                    assert error is not None
                    if at < e - 1:  # (at the diagonal, a fact tested before the loops)
                        assert f"col[{at}] = {value}" in error
                raised += error is not None
    assert raised > 8 * n


def test_a_row_of_no_room_raises_what_the_checked_loops_raise(
    kernels: tuple[str, Any, Any],
) -> None:
    """Row 0's interval ``[0, -1]`` is empty (``room`` 0): any entry left of its diagonal,
    in range or not, breaks ``col(k) <= i - 1`` or the range, as in the checked loops."""
    dtype = kernels[0]
    info = np.iinfo(dtype)
    for value in (0, 1, 2, -1, 3, int(info.min), int(info.max)):
        args = {
            "rowptr": np.array([0, 2, 3, 5], dtype=dtype),
            "col": np.array([value, 0, 1, 0, 2], dtype=dtype),
            "L": np.array([0.5, 4.0, 5.0, 0.25, 6.0]),
            "NNZ": 5,
        }
        error = _same(kernels, args, 3)
        assert error is not None
        if not 0 <= value < 3:
            assert f"col[0] = {value}" in error

"""A checked SpAdd (``C(i,j) = A(i,j) + B(i,j)``, a union merge of CSR rows) verifies the
ordering facts of ``A`` and ``B`` once a phase, in its loops: the union's cursors each pass
over every position of their rows, in the ``both`` body or in their own one-sided body, and
both test the pair the cursor just reached (spf.analysis.fact_plan.union_sides). Rows out of
order or with a repeated column, in ``A`` only, in ``B`` only, or where ``A`` and ``B`` share
the column, are refused on every path (the single pass; the two phases on two threads and,
where the single pass's bound does not fit, on one), and by the filling phase alone, with the
error naming the broken fact. A single pass that falls back to the two phases hashes its
inputs once (spf.index_notation.verified)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import CSR
from spf.testing import fixed_team

SPADD = "C(i,j) = A(i,j) + B(i,j)"
FACT = r"{m}_rowptr\(i\) <= k1 < k2 < {m}_rowptr\(i\+1\) => {m}_col\(k1\) < {m}_col\(k2\)"

# (A's row 1, B's row 1, the operand whose fact is broken: "AB" both, either one reported)
ROWS = [
    ([2, 1], [3], "A"),  # A out of order, B elsewhere
    ([1, 1], [3], "A"),  # A repeats a column
    ([3], [2, 1], "B"),
    ([0], [2, 2], "B"),
    ([2, 2], [2], "A"),  # A repeats the column B holds
    ([3, 1], [3], "A"),  # A out of order after the column B holds
    ([2], [2, 2], "B"),
    ([1, 4, 0], [4], "A"),
    ([3, 1], [3, 1], "AB"),  # both out of order at shared columns: the both body's pairs
    ([1, 2, 2], [2, 2], "AB"),  # both repeat a shared column
    ([2, 2], [2, 2, 3], "AB"),
    ([4, 0], [4, 0], "AB"),
]

_KERNELS: dict[str, Any] = {}


def _names(broken: str) -> str:
    """The error's pattern: the fact of each operand in ``broken``, any one of them."""
    return "|".join(FACT.format(m=m) for m in broken)


def _kernel(dtype: str) -> Any:
    """One compiled SpAdd per index type (module-wide: the calls never remember a failure)."""
    if dtype not in _KERNELS:
        _KERNELS[dtype] = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR, index_dtype=dtype).compile()
    return _KERNELS[dtype]


def _args(acol: list[int], bcol: list[int], dtype: str) -> dict[str, Any]:
    """Three rows of five columns: rows 0 and 2 sorted, row 1 ``acol`` / ``bcol``."""
    out: dict[str, Any] = {"I": 3, "J": 5}
    for m, row, first, last in (("A", acol, [0, 3], [1, 4]), ("B", bcol, [1, 3], [0, 2])):
        cols = [*first, *row, *last]
        ptr = [0, len(first), len(first) + len(row), len(cols)]
        out |= {m: np.arange(1.0, len(cols) + 1), f"{m}_col": np.array(cols, dtype),
                f"{m}_rowptr": np.array(ptr, dtype)}  # fmt: skip
    return out


def test_the_union_kernels_check_the_ordering_facts_in_their_loops() -> None:
    # before: the single pass and the filling phase checked both in a pass of their own
    # before the loops ("each call"), the sizing phase in its loops: twice per two phases
    k = _kernel("int32")
    single = k.single.kernel
    for kernel in (single, k.symbolic, k.numeric):
        costs = {c.fact: c.how for c in kernel.check_cost}
        ordering = [f for f in costs if "k2" in f]
        assert len(ordering) == 2, costs
        assert all(costs[f] == "in loop" for f in ordering), (kernel, costs)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("path", ["single", "two", "two, one thread"])
@pytest.mark.parametrize(("acol", "bcol", "broken"), ROWS)
def test_a_checked_spadd_refuses_a_broken_row_on_every_path(
    acol: list[int], bcol: list[int], broken: str, path: str, dtype: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    k = _kernel(dtype)
    args = _args(acol, bcol, dtype)
    if path == "two, one thread":  # the single pass's bound (A_NNZ + B_NNZ + 1) does not fit
        cap = args["A_col"].size + args["B_col"].size + 1
        limit = cap * (np.dtype(dtype).itemsize + 8) - 1
        monkeypatch.setattr("spf.formats.sizing.memory_limit", lambda: limit)
    fell_back: list[bool] = []  # each single pass that returned (the checked one raises)
    run = k.single.run

    def spy(*a: Any) -> Any:
        got = run(*a)
        fell_back.append(got is None)
        return got

    monkeypatch.setattr(k.single, "run", spy)
    with fixed_team(2 if path == "two" else 1):
        with pytest.raises(spf.ArgumentError, match=_names(broken)):
            k(**args)
        k(check=False, **args)  # unchecked: runs (its result is not CSR's)
    assert fell_back == {"single": [False], "two": [], "two, one thread": [True, True]}[path]


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize(("acol", "bcol", "broken"), ROWS)
def test_the_filling_phase_alone_refuses_a_broken_row(
    acol: list[int], bcol: list[int], broken: str, team: int
) -> None:
    # the sizing phase refuses them first in a call; the filling phase's own checks are
    # proved here, on row pointers the sizing phase computed unchecked
    k = _kernel("int32")
    args = _args(acol, bcol, "int32")
    ptr = np.empty(4, np.int32)
    sizing = {a.name for a in k.symbolic.arguments}
    k.symbolic(check=False, **{n: v for n, v in args.items() if n in sizing}, C_rowptr=ptr)
    nnz = int(ptr[-1])
    fill = {n: v for n, v in args.items() if n in {a.name for a in k.numeric.arguments}}
    fill |= {"C_rowptr": ptr, "C_col": np.empty(nnz, np.int32), "C": np.empty(nnz)}
    if "C_NNZ" in {a.name for a in k.numeric.arguments}:
        fill["C_NNZ"] = nnz
    with fixed_team(team), pytest.raises(spf.ArgumentError, match=_names(broken)):
        k.numeric(check=True, **fill)


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_sorted_rows_with_shared_columns_pass_on_every_path(team: int, dtype: str) -> None:
    # the checks in the both body pass on sorted rows whatever they share
    k = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR, index_dtype=dtype).compile()
    a = sp.random_array((60, 40), density=0.3, format="csr", rng=1)
    b = sp.csr_array(a.copy())
    b.data = b.data * 2.0 + 1.0
    c = sp.random_array((60, 40), density=0.3, format="csr", rng=2)
    for x, y in ((a, b), (a, c), (c, a)):
        args = {**spf.sparse.csr_args(x, dtype, prefix="A_"),
                **spf.sparse.csr_args(y, dtype, prefix="B_")}  # fmt: skip
        with fixed_team(team):
            got = k(**args)
        want = sp.csr_array(x + y)
        want.sort_indices()
        assert np.array_equal(got["rowptr"], want.indptr)
        assert np.array_equal(got["col"], want.indices)
        assert np.allclose(got["A"], want.data)


def test_a_fallback_to_the_two_phases_hashes_the_inputs_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # before: the single pass's look hashed the four index arrays, then the two phases'
    # look hashed them again
    from spf.index_notation import verified

    hashed: list[int] = []
    real = verified.hasher

    def counting(nbytes: int) -> Any:
        h = real(nbytes)

        def one(a: Any) -> Any:
            hashed.append(nbytes)
            return h(a)

        return one

    k = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR, index_dtype="int32").compile()
    args = _args([1, 2], [2, 4], "int32")
    cap = args["A_col"].size + args["B_col"].size + 1
    monkeypatch.setattr("spf.formats.sizing.memory_limit", lambda: cap * 12 - 1)
    monkeypatch.setattr(verified, "hasher", counting)
    with fixed_team(1):
        first = k(**args)  # checked, verified
        assert len(hashed) == 4, hashed
        again = k(**args)  # the same inputs: known on the two phases' path
        assert len(hashed) == 8, hashed
    assert k.compiled() == ("two", "single")
    assert np.array_equal(first["col"], again["col"])
    want = sp.csr_array((args["A"], args["A_col"], args["A_rowptr"]), shape=(3, 5)) + sp.csr_array(
        (args["B"], args["B_col"], args["B_rowptr"]), shape=(3, 5)
    )
    assert np.array_equal(first["col"], want.indices)
    assert np.allclose(first["A"], want.data)

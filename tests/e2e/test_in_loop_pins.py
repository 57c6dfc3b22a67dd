"""A fact checked inside the loops covers only the points its statement visits: an iterator
pinned to one value (a p2p executor's position ``i_pos = 0``) keeps every other constraint
on it (``i = order_i(i_pos)``), so such a check covers one row, not all of them, and the fact
is tested before the loops instead (review of lev12: a checked p2p call at 2 threads accepted
a row violating DIAGONAL_LAST and computed with a stale value)."""

from __future__ import annotations

import numpy as np
import pytest

from spf import ArgumentError, kernels
from spf.runtime import threads


def _triangle(n: int, bad_row: int, index_dtype: str) -> dict[str, object]:
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        c = sorted(set(rng.integers(0, i, size=min(i, 3)).tolist())) if i else []
        rows.append([*c, i])
    rows[bad_row] = [*rows[bad_row][:-1], bad_row, bad_row]  # the diagonal twice: not last
    rowptr = np.zeros(n + 1, dtype=index_dtype)
    for i, c in enumerate(rows):
        rowptr[i + 1] = rowptr[i] + len(c)
    col = np.array([c for row in rows for c in row], dtype=index_dtype)
    L = rng.uniform(0.5, 1.0, len(col))
    L[rowptr[1:] - 1] += 3
    return {"L": L, "rowptr": rowptr, "col": col, "N": n, "NNZ": len(col)}


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("team", [1, 2])
def test_a_checked_p2p_call_refuses_a_row_whose_diagonal_is_not_last(
    index_dtype: str, team: int
) -> None:
    comp = kernels.sptrsv_csr(index_dtype=index_dtype)
    comp.wavefront("i", method="p2p")
    k = comp.compile()
    args = _triangle(300, 150, index_dtype)
    assert "in loop" not in {c.how for c in k.check_cost if "col(k) < i" in c.fact}
    plan = k.inspect(check=False, strategy="wavefront", **args)
    u, f = np.full(300, 7.0), np.ones(300)
    previous = threads.set_adaptive(False)
    try:
        with threads.openmp_threads(team), pytest.raises(ArgumentError, match="col\\(k\\) < i"):
            k(u=u, f=f, plan=plan, check=True, **args)
    finally:
        threads.set_adaptive(previous)

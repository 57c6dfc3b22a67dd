"""A fact a checked call tests inside the loops never keeps an access in bounds
(spf.analysis.in_loop_safety, docs/backends/c.md "Facts at linear cost").

A fact that fails in the loops only raises a flag: the loops run on and the call is refused
afterwards. So an access whose bounds proof uses a fact, and a bounds obligation's own
access, must have their fact tested before the loops. Each kernel here writes (or reads)
through an index that only the fact keeps in bounds; the arrays are views into a buffer whose
guard zones must stay untouched when the call is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import spf
from spf.testing import fixed_team

SORTED = "forall i, k1, k2: {m}_rowptr(i) <= k1 < k2 < {m}_rowptr(i+1) => {m}_col(k1) < {m}_col(k2)"
ROW_A = "0 <= i < N && A_rowptr(i) <= p < A_rowptr(i+1)"
ROW_B = "0 <= i < N && B_rowptr(i) <= q < B_rowptr(i+1)"
BOTH = f"{{[i,p,q]: {ROW_A} && B_rowptr(i) <= q < B_rowptr(i+1) && A_col(p) = B_col(q)}}"
OFFSET = "$w$(A_col(p) - A_col(A_rowptr(i))) += $A$(p);"
"""In bounds (0 <= index < M) only because A's rows are sorted: the first column is the
row's smallest."""
GUARD = 20


def _operands(comp: spf.Computation, dtype: str, names: str) -> None:
    comp.add_data_space("w", "double", shape=("M",))
    for m in names:
        comp.add_data_space(m, "double", shape=(f"{m}_NNZ",))
        comp.declare_uf(
            f"{m}_rowptr",
            domain="{[i]: 0 <= i <= N}",
            range=f"{{[v]: 0 <= v <= {m}_NNZ}}",
            monotonic="nondecreasing",
            dtype=dtype,
        )
        comp.declare_uf(
            f"{m}_col", domain=f"{{[k]: 0 <= k < {m}_NNZ}}", range="{[v]: 0 <= v < M}", dtype=dtype
        )
        comp.assume(SORTED.format(m=m))


def union_kernel(dtype: str, parallel: bool) -> spf.Kernel:
    """A union merge of A's and B's rows whose A-only side writes ``w`` at the column's
    offset from the row's first."""
    comp = spf.Computation(f"offset_union_{dtype}_{int(parallel)}")
    comp.add_data_space("y", "double", shape=("N",))
    _operands(comp, dtype, "AB")
    both = comp.add_stmt(
        spf.Stmt("$y$(i) += $A$(p) * $B$(q);", BOTH, "{[i,p,q] -> [0,i,1,p,0,q,0]}")
    )
    left = comp.add_stmt(spf.Stmt(OFFSET, f"{{[i,p]: {ROW_A}}}", "{[i,p] -> [0,i,1,p,1,0,0]}"))
    right = comp.add_stmt(
        spf.Stmt("$y$(i) += $B$(q);", f"{{[i,q]: {ROW_B}}}", "{[i,q] -> [0,i,1,q,2,0,0]}")
    )
    both.coiterate("p", "q", left=left, right=right)
    if parallel:
        both.parallelize("i", reduction="atomic")
    return comp.compile()


def plain_kernel(dtype: str, parallel: bool) -> spf.Kernel:
    """The same write in a plain loop over A's rows."""
    comp = spf.Computation(f"offset_rows_{dtype}_{int(parallel)}")
    _operands(comp, dtype, "A")
    s = comp.add_stmt(spf.Stmt(OFFSET, f"{{[i,p]: {ROW_A}}}", "{[i,p] -> [i,p]}"))
    if parallel:
        s.parallelize("i", reduction="atomic")
    return comp.compile()


def guarded(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(buffer, view)``: a zeroed view of ``n`` elements with guard zones either side."""
    buf = np.zeros(n + 2 * GUARD)
    return buf, buf[GUARD : GUARD + n]


def untouched(buf: np.ndarray) -> bool:
    return not np.any(buf[:GUARD]) and not np.any(buf[-GUARD:])


def first(kernel: spf.Kernel, text: str) -> str:
    """Where ``kernel`` tests the fact whose text contains ``text`` (``check_cost``)."""
    (cost,) = [c for c in kernel.check_cost if text in c.fact]
    return str(cost.first) if cost.first else str(cost.how)


ROWS = [[1, 4], [9, 0]]  # row 1 out of order: column 0 is 9 below the row's "first"


def row_args(dtype: str, rows: list[list[int]], m: str) -> dict[str, Any]:
    cols = [c for r in rows for c in r]
    ptr = np.cumsum([0, *map(len, rows)])
    return {
        m: np.ones(len(cols)),
        f"{m}_col": np.array(cols, dtype),
        f"{m}_rowptr": ptr.astype(dtype),
    }


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("shape", ["union", "plain"])
def test_a_fact_an_access_needs_is_tested_before_the_loops(
    shape: str, dtype: str, team: int
) -> None:
    # the review's t11/t12: A's sortedness was tested in the loops (a flag, the call
    # refused after them), and row [9, 0] wrote w[-9] first; now it is tested before the
    # loops and nothing outside w is touched. B's sortedness, which no access needs, stays
    # in the union's loops
    kernel = (union_kernel if shape == "union" else plain_kernel)(dtype, team == 2)
    buf, w = guarded(10)
    args: dict[str, Any] = {"N": 2, "M": 10, "w": w, **row_args(dtype, ROWS, "A")}
    if shape == "union":
        args |= {"y": np.zeros(2), **row_args(dtype, [[3], [5]], "B")}
    with fixed_team(team), pytest.raises(spf.ArgumentError, match=r"A_col\(k1\) < A_col\(k2\)"):
        kernel(**args)
    assert untouched(buf), np.nonzero(buf)[0] - GUARD
    assert not np.any(w)  # refused before the loops: the output untouched too
    assert first(kernel, "A_col(k1)") != "in loop", str(kernel.check_cost)
    if shape == "union":
        assert first(kernel, "B_col(k1)") == "in loop", str(kernel.check_cost)
    args["A_col"] = np.array([1, 4, 0, 9], dtype)  # sorted: accepted, the same kernel
    with fixed_team(team):
        kernel(**args)
    assert untouched(buf)
    assert (w[0], w[3], w[9]) == (2, 1, 1)


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_bounds_obligation_is_tested_before_its_access(dtype: str, team: int) -> None:
    # x(col(k) + 1) with col in 0 .. M-1 is in bounds only if col(k) < M - 1: a bounds
    # obligation, which was tested in the loops while x(M) was written
    comp = spf.Computation(f"shifted_{dtype}_{team}")
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.declare_uf("rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
                    monotonic="nondecreasing", dtype=dtype)  # fmt: skip
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}", dtype=dtype)
    s = comp.add_stmt(
        spf.Stmt(
            "$x$(col(k) + 1) += $A$(k);",
            "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}",
            "{[i,k] -> [i,k]}",
        )
    )
    if team == 2:
        s.parallelize("i", reduction="atomic")
    kernel = comp.compile()
    buf, x = guarded(10)
    args = {"N": 2, "M": 10, "x": x, "A": np.ones(3), "col": np.array([0, 2, 9], dtype),
            "rowptr": np.array([0, 2, 3], dtype)}  # fmt: skip
    with fixed_team(team), pytest.raises(spf.ArgumentError, match=r"\(col\(k\) \+ 1\) < M"):
        kernel(**args)
    assert untouched(buf), np.nonzero(buf)[0] - GUARD
    assert not np.any(x)
    assert first(kernel, "(col(k) + 1) < M") != "in loop", str(kernel.check_cost)


def test_sptrsv_tests_its_diagonal_obligation_before_the_loops() -> None:
    # L(rowptr(i+1) - 1) reads L[-1] when the first row is empty: the obligation 0 <= k
    # was tested in the loops, after the read (triangular=False: no assumption implies it)
    kernel = spf.kernels.sptrsv_csr(triangular=False).compile()
    assert first(kernel, "=> 0 <= k") == "before loops", str(kernel.check_cost)
    args = {"u": np.zeros(2), "L": np.array([1.0]), "f": np.ones(2),
            "rowptr": np.array([0, 0, 1], np.int32), "col": np.array([1], np.int32)}  # fmt: skip
    with pytest.raises(spf.ArgumentError, match="0 <= k"):
        kernel(**args)


SPADD_FILL = """
import numpy as np, spf
from spf.formats import CSR
from spf.testing import fixed_team
k = spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR, index_dtype="{dtype}").compile()
names = {{a.name for a in k.numeric.arguments}}
t = np.dtype("{dtype}")
args = {{"I": 1, "J": 2, "A": np.ones(1), "A_col": np.array([0], t),
        "A_rowptr": np.array([0, 1], t), "B": np.ones(1), "B_col": np.array([1], t),
        "B_rowptr": np.array([0, 1], t)}}
big = 1_000_000
fill = {{n: v for n, v in args.items() if n in names}}
fill |= {{"C_rowptr": np.array([0, big], t), "C_col": np.zeros(big, t), "C": np.zeros(big),
         "C_NNZ": big}}
for cost in k.numeric.check_cost:
    if "C_rowptr(t+1)" in cost.fact:
        print("placed", cost.how)
try:
    with fixed_team({team}):
        k.numeric(check=True, **fill)
    print("accepted")
except spf.ArgumentError as e:
    print("refused", str(e)[:120])
"""


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_spadd_filling_phase_refuses_row_pointers_past_the_workspace(dtype: str, team: int) -> None:
    # the review's t9: C_rowptr(t+1) <= C_rowptr(t) + J bounds the filling phase's read of
    # its column workspace; tested in the loops, a row of 10^6 entries read past it and
    # the process died (SIGSEGV). Run in a child process, so that a crash fails this test
    # alone
    code = textwrap.dedent(SPADD_FILL.format(dtype=dtype, team=team))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, timeout=300
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "placed each call" in done.stdout, done.stdout
    assert "refused the assumption 'forall t: 0 <= t < I => C_rowptr(t+1)" in done.stdout


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_an_assumption_that_implies_an_obligation_is_tested_before_the_loops(
    dtype: str, team: int
) -> None:
    # review of inloopsafe: sortedness in its adjacent form lets the fact prover imply the
    # access's bounds obligation (then tested nowhere) while the assumption itself stayed
    # in the loops: row [9, 0] wrote w[-9] before the refusal
    comp = spf.Computation(f"implied_obligation_{dtype}_{team}")
    comp.add_data_space("w", "double", shape=("M",))
    comp.add_data_space("A", "double", shape=("A_NNZ",))
    comp.declare_uf(
        "A_rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= A_NNZ}",
        monotonic="nondecreasing",
        dtype=dtype,
    )
    comp.declare_uf("A_col", domain="{[k]: 0 <= k < A_NNZ}", range="{[v]: 0 <= v < M}", dtype=dtype)
    comp.assume("forall i, k: A_rowptr(i) <= k < A_rowptr(i+1) - 1 => A_col(k) < A_col(k+1)")
    s = comp.add_stmt(
        spf.Stmt(
            "$w$(A_col(p) - A_col(A_rowptr(i))) += $A$(p);",
            "{[i,p]: 0 <= i < N && A_rowptr(i) <= p < A_rowptr(i+1)}",
            "{[i,p] -> [i,p]}",
        )
    )
    if team == 2:
        s.parallelize("i", reduction="atomic")
    kernel = comp.compile()
    assert first(kernel, "A_col(k) < A_col(k+1)") != "in loop", str(kernel.check_cost)
    buf, w = guarded(10)
    args: dict[str, Any] = {"N": 2, "M": 10, "w": w, **row_args(dtype, ROWS, "A")}
    with fixed_team(team), pytest.raises(spf.ArgumentError, match=r"A_col\(k\) < A_col\(k\+1\)"):
        kernel(**args)
    assert untouched(buf), np.nonzero(buf)[0] - GUARD
    args["A_col"] = np.array([1, 4, 0, 9], dtype)
    with fixed_team(team):
        kernel(**args)
    assert untouched(buf)
    assert (w[0], w[3], w[9]) == (2, 1, 1)


def test_an_order_fault_found_in_the_loops_claims_no_replaced_value() -> None:
    # a monotonic index array without a declared domain is order-checked in the loops;
    # its values are in range, so the message must not say one was replaced (review)
    comp = spf.Computation("order_in_loop_text")
    comp.add_data_space("w", "double", shape=("NNZ",))
    comp.declare_uf("rowptr", range="{[v]: 0 <= v <= M}", monotonic="nondecreasing", dtype="int32")
    comp.assume("rowptr(N) <= NNZ")
    comp.add_stmt(
        spf.Stmt(
            "$w$(k) += 1;",
            "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}",
            "{[i,k] -> [i,k]}",
        )
    )
    kernel = comp.compile()
    buf, w = guarded(5)
    args = {"N": 2, "NNZ": 5, "M": 100, "w": w, "rowptr": np.array([0, 100, 5], np.int32)}
    with pytest.raises(spf.ArgumentError, match="nondecreasing") as err:
        kernel(**args)
    assert "nearest bound" not in str(err.value)
    assert untouched(buf)

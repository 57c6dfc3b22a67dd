"""Checked calls whose facts read an index array the kernel's loops do not range-test first
(audit 24): a fact tested before the loops ("each call") reads such an array as it is, and
an access whose bounds the fact implies through that array's declared range was read out
of bounds. A checked call must refuse a value out of its UF's declared range that a fact
before the loops reads, before anything is read through it; and gauss_seidel_csr's rows
that test their row pointer and diagonal themselves (spf.codegen.split_pairs) must not skip
the passes that the fact loops before them rely on.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import scipy.sparse as sp

import spf
from spf.testing import guarded_call

BIG = 1.0e300
"""The guard value around ``x``: a read past its end shows in ``y``."""


def _bounded_by_other(name: str, statement: str) -> spf.Computation:
    """``y(k) += x(col(k))`` where only an assumption bounds ``col``: ``0 <= col(k) <=
    cap(k)``, ``cap`` declared in ``[0, M)``; ``col(k) < M`` (the bounds of ``x(col(k))``)
    follows from them and is not tested on its own."""
    comp = spf.Computation(name)
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_data_space("z", "double", shape=("M",))
    comp.declare_uf("col", domain="{[k]: 0 <= k < N}", range="{[v]: 0 <= v}")
    comp.declare_uf("cap", domain="{[k]: 0 <= k < N}", range="{[v]: 0 <= v < M}")
    comp.assume("forall k: 0 <= k < N => 0 <= col(k) <= cap(k)")
    comp.add_stmt(spf.Stmt(statement, "{[k]: 0 <= k < N}", "{[k] -> [0,k,0]}"))
    return comp


def _arrays(col: list[int], cap: list[int]) -> dict[str, tuple[object, object]]:
    return {
        "y": (np.zeros(len(col)), 0.0),
        "x": (np.arange(3.0), BIG),
        "z": (np.ones(3), BIG),
        "col": (np.array(col, np.int32), 0),
        "cap": (np.array(cap, np.int32), 0),
    }


def test_implied_bounds_through_a_range_only_a_fact_reads() -> None:
    """``cap`` is read by the assumption only (the range pass tests it whole and its
    fallback reran the fact reading it as it is): a ``cap`` out of range let ``col(k) = 5``
    read ``x[5]`` of 3 entries. Before the fix the call passed with ``y[0] = 1e300``."""
    kernel = _bounded_by_other("audit24_cap_fact", "$y$(k) += $x$(col(k));").compile()
    assert "implied" in str(kernel.check_cost)  # col(k) < M: not tested on its own
    error, y = guarded_call(kernel, _arrays([1, 2], [2, 2]), "y", N=2, M=3)
    assert error is None
    assert y.tolist() == [1.0, 2.0]
    error, y = guarded_call(kernel, _arrays([5, 1], [5, 1]), "y", N=2, M=3)
    assert error is not None
    assert error.startswith("cap: cap[0] = 5 is outside"), error
    assert "inside the kernel's loops" not in error, error  # refused before them
    assert not np.any(y == BIG)


def test_implied_bounds_through_a_range_the_loops_test_later() -> None:
    """``cap`` read by the statement too (tested where the loops read it, after ``x(col(k))``
    in the same statement): the call was refused, but only after reading ``x[5]`` and
    adding it to ``y[0]``; now it is refused before the loops, ``y`` untouched."""
    comp = _bounded_by_other("audit24_cap_read", "$y$(k) += $x$(col(k)) + $z$(cap(k));")
    kernel = comp.compile()
    error, y = guarded_call(kernel, _arrays([1, 2], [2, 2]), "y", N=2, M=3)
    assert error is None
    assert y.tolist() == [2.0, 3.0]
    error, y = guarded_call(kernel, _arrays([5, 1], [5, 1]), "y", N=2, M=3)
    assert error is not None
    assert error.startswith("cap: cap[0] = 5 is outside"), error
    assert "inside the kernel's loops" not in error, error  # nothing was written
    assert y.tolist() == [0.0, 0.0]


def test_split_rows_keep_the_passes_that_facts_before_the_loops_read() -> None:
    """gauss_seidel_csr with a fact checked before the loops over ``diag(i) <= k <
    diag(i+1)``: the rows that test ``rowptr`` and ``diag`` themselves skipped the passes
    over them, so that fact's loop ran to ``diag(1) = 2**31 - 1`` reading ``col`` far past
    its end (a crash, here in a child process). Now the passes run first and refuse it."""
    script = textwrap.dedent(
        """
        import numpy as np, scipy.sparse as sp, spf, spf.sparse
        comp = spf.kernels.gauss_seidel_csr()
        comp.assume("forall i, k: diag(i) <= k < diag(i+1) => col(k) >= i - 5")
        kernel = comp.compile()
        a = spf.sparse.gauss_seidel_args(sp.csr_array(np.array(
            [[4.0, 1, 0], [1, 4, 1], [0, 1, 4]])))
        x = np.zeros(3)
        kernel(x=x, b=np.ones(3), **a)
        assert np.allclose(x, [0.25, 0.1875, 0.203125]), x
        a["diag"][1] = 2**31 - 1
        try:
            kernel(x=np.zeros(3), b=np.ones(3), **a)
        except spf.errors.ArgumentError as e:
            print(e)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.startswith("diag: diag[1] = 2147483647 is outside"), done.stdout


def test_fact_read_ranges_keep_results() -> None:
    """The kernels of the tests above on arguments in range: the unchecked results."""
    rng = np.random.default_rng(24)
    comp = _bounded_by_other("audit24_cap_ok", "$y$(k) += $x$(col(k)) + $z$(cap(k));")
    kernel = comp.compile()
    for n in (1, 5, 40):
        cap = rng.integers(0, 7, n).astype(np.int32)
        col = (cap * rng.random(n)).astype(np.int32)
        x, z = rng.random(7), rng.random(7)
        y = np.zeros(n)
        kernel(y=y, x=x, z=z, col=col, cap=cap, N=n, M=7)
        assert np.array_equal(y, x[col] + z[cap])
    gs = spf.kernels.gauss_seidel_csr()
    gs.assume("forall i, k: diag(i) <= k < diag(i+1) => col(k) >= i - 5")
    a = sp.random_array((30, 30), density=0.1, random_state=rng) + sp.eye_array(30) * 8
    args = spf.sparse.gauss_seidel_args(sp.csr_array(sp.triu(sp.tril(a, 5), -4)))
    x, x_ref = np.zeros(30), np.zeros(30)
    b = rng.random(30)
    gs.compile()(x=x, b=b, **args)
    spf.kernels.gauss_seidel_csr().compile()(x=x_ref, b=b, **args, check=False)
    assert np.array_equal(x, x_ref)

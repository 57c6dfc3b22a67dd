"""UFs of two or more arguments are row-major index arrays (an ELL ``col[N][W]``): the macro
linearizes with the extents of the declared domain, the kernel checks the trailing extents."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf import ArgumentError, CodegenError, Computation, Stmt

if TYPE_CHECKING:
    from pathlib import Path


def ell() -> Computation:
    comp = Computation("ell")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "W"))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf("col", arity=2, domain="{[i, w]: 0 <= i < N && 0 <= w < W}",
                    range="{[v]: 0 <= v < M}")  # fmt: skip
    comp.add_stmt(
        Stmt("$y$(i) += $A$(i, w) * $x$(col(i, w));", "{[i, w]: 0 <= i < N && 0 <= w < W}")
    )
    return comp


def test_two_argument_uf_runs_like_numpy(tmp_path: Path) -> None:
    comp = ell()
    for target in ("c", "cuda", "hls", "mpi"):
        assert "#define col(t0, t1) col[(t0) * W + (t1)]" in comp.codegen(target)
    k = comp.compile(cache_dir=tmp_path)
    rng = np.random.default_rng(3)
    col = rng.integers(0, 7, (5, 3)).astype(np.int32)
    A, x, y = rng.random((5, 3)), rng.random(7), np.zeros(5)
    k(y=y, A=A, x=x, col=col)
    np.testing.assert_allclose(y, (A * x[col]).sum(axis=1))
    y2 = np.zeros(5)
    comp.interpret(y=y2, A=A, x=x, col=col)
    np.testing.assert_allclose(y2, y)
    with pytest.raises(ArgumentError, match=r"row-major array of shape \(any, 3\)"):
        k(y=y, A=A, x=x, col=np.zeros((5, 4), dtype=np.int32))
    with pytest.raises(ArgumentError, match=r"col\[0, 0\] = 7 is outside the declared range"):
        k(y=y, A=A, x=x, col=np.full((5, 3), 7, dtype=np.int32))


def test_three_argument_uf_extents_come_from_the_domain() -> None:
    comp = Computation("t")
    comp.add_data_space("y", "double", shape=("N",))
    comp.declare_uf("g", arity=3, domain="{[i, j, k]: 0 <= i < N && 0 <= j < 2 && 0 <= k <= K}",
                    range="{[v]: 0 <= v < N}")  # fmt: skip
    comp.add_stmt(Stmt("$y$(g(i, 1, 0)) = 1.0;", "{[i]: 0 <= i < N}"))
    assert "#define g(t0, t1, t2) g[((t0) * (int64_t) 2 + (t1)) * (K + 1) + (t2)]" in comp.codegen()


def test_multi_argument_uf_without_extents_is_a_codegen_error() -> None:
    comp = Computation("g2")
    comp.add_data_space("y", "double", shape=("N",))
    comp.declare_uf("g", arity=2)
    comp.add_stmt(Stmt("$y$(i) = 1.0;", "{[i, j]: 0 <= i < N && 0 <= j < g(i, i)}"))
    with pytest.raises(CodegenError, match=r"UF 'g' of arity 2 .*declare its domain"):
        comp.codegen()
    comp = Computation("g3")
    comp.add_data_space("y", "double", shape=("N",))
    comp.declare_uf("g", arity=2, domain="{[i, j]: 0 <= i < N && j >= 0}")
    comp.add_stmt(Stmt("$y$(i) = 1.0;", "{[i, j]: 0 <= i < N && 0 <= j < g(i, i)}"))
    with pytest.raises(CodegenError, match="gives index 1 no upper bound"):
        comp.codegen()

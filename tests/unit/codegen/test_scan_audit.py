"""Scanner and self-check cases found by differential fuzzing (UF bounds beside other nests):
each is generated, compiled and run against a Python count of its domain."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf import CodegenError, Computation, Stmt
from spf.codegen.loop_ast import Bind, Block, For, If, Node
from spf.codegen.scan import Scanner
from spf.codegen.verify import verify

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def _csr_rows(comp: Computation) -> None:
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )


def test_a_strided_uf_loop_beside_a_nest_with_a_hole(tmp_path: Path) -> None:
    """The self-check's shift of a strided loop on a path with no points: isl calls the
    empty set a singleton, and its sample point has no coordinates (a raw isl error)."""
    comp = Computation("strided_beside")
    comp.add_data_space("y", "double", shape=("N",))
    _csr_rows(comp)
    comp.add_stmt(
        Stmt(
            "$y$(i) += k;",
            "{[i,k]: 0 <= i < N && exists(a: i = 3a + 1) && rowptr(i) <= k < rowptr(i+1)"
            " && k % 2 = 1}",
            "{[i,k]->[0,i,0,k,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$y$(i) += 100 * k;",
            "{[i,k]: 0 <= i < N && i != 2 && 0 <= k <= i}",
            "{[i,k]->[0,i,0,k,2]}",
        )
    )
    rowptr = np.array([0, 2, 6, 6, 9, 12], dtype=np.int32)
    n = len(rowptr) - 1
    y = np.zeros(n)
    comp.compile(openmp=False, cache_dir=tmp_path)(y=y, rowptr=rowptr, N=n, NNZ=int(rowptr[-1]))
    want = np.zeros(n)
    for i in range(n):
        if i % 3 == 1:
            want[i] += sum(k for k in range(rowptr[i], rowptr[i + 1]) if k % 2 == 1)
        if i != 2:
            want[i] += sum(100 * k for k in range(i + 1))
    assert y.tolist() == want.tolist()


def test_a_uf_value_one_statement_needs_is_not_read_beside_the_others(tmp_path: Path) -> None:
    """``f(k)`` (defined for ``0 <= k <= N``) is bound in a ``k`` loop that a row loop
    (``k`` up to ``NNZ``) shares, and isl's branch for the first statement tests ``f(k)``
    itself: the read is guarded by ``k <= N`` (it was read at every ``k`` of the row, out
    of bounds, and the self-check refused the loops as a scanner bug)."""
    comp = Computation("shared_k")
    comp.add_data_space("y", "double", shape=("N",))
    _csr_rows(comp)
    comp.declare_uf("f", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= N}")
    comp.add_stmt(
        Stmt(
            "$y$(i) += j;",
            "{[i,k,j]: 0 <= i < N && 0 <= k <= i && j = f(k) && j < N}",
            "{[i,k,j]->[0,i,0,k,0,j,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$y$(i) += 100 * k;",
            "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}",
            "{[i,k]->[0,i,0,k,1]}",
        )
    )
    rowptr = np.array([0, 7, 8, 8, 20], dtype=np.int32)
    n = len(rowptr) - 1
    f = np.array([3, 0, 4, 1, 2], dtype=np.int32)
    y = np.zeros(n)
    kernel = comp.compile(openmp=False, cache_dir=tmp_path)
    kernel(y=y, rowptr=rowptr, f=f, N=n, NNZ=int(rowptr[-1]))
    want = np.zeros(n)
    for i in range(n):
        want[i] += sum(int(f[k]) for k in range(i + 1) if f[k] < n)
        want[i] += sum(100 * k for k in range(rowptr[i], rowptr[i + 1]))
    assert y.tolist() == want.tolist()


def _skewed_reads() -> Computation:
    """Two statements sharing ``i`` and ``k``; the second's ``f(k)``, skewed, is
    ``f(i + f(i))`` where the first one's ``k = f(i)`` runs, past the end of ``f``."""
    comp = Computation("excused")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("z", "double", shape=("N",))
    comp.declare_uf("f", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= N}")
    comp.add_stmt(
        Stmt(
            "$y$(i) += k;",
            "{[i,k]: 0 <= i < N && (i < 2 || i >= N - 2) && k = f(i)}",
            "{[i,k]->[0,i,0,k,1]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$z$(i) += 10 * j;",
            "{[i,k,j]: 0 <= i < N && i != 2 && i - 2 <= k <= i && k >= 0 && exists(b: k = 2b)"
            " && 0 <= k <= N && 0 <= j < N && j = f(k)}",
            "{[i,k,j]->[0,i,0,k,0,j,0]}",
        )
    )
    comp.stmt(1).skew("i", "k", -1)
    return comp


def test_a_value_read_beside_statements_that_do_not_need_it(tmp_path: Path) -> None:
    """``f(i + f(i))`` is read in a scope that also runs the first statement: the read is
    guarded (the first statement alone runs where it fails). It was read unguarded, past
    the end of ``f`` (a checked call reported it after the fact; check=False read it)."""
    comp = _skewed_reads()
    kernel = comp.compile(openmp=False, cache_dir=tmp_path)
    for n in (3, 5):
        f = np.full(n + 1, n, dtype=np.int32)
        f[::2] = 0
        y, z = np.zeros(n), np.zeros(n)
        kernel(y=y, z=z, f=f, N=n)  # check=True: a read past the end raises ArgumentError
        y2, z2 = np.zeros(n), np.zeros(n)
        comp.interpret(y=y2, z=z2, f=f, N=n)
        assert (y.tolist(), z.tolist()) == (y2.tolist(), z2.tolist())


def test_no_self_comparison_is_left_in_a_guard(tmp_path: Path) -> None:
    """isl's guard ``f_i == k``, with ``k`` fixed to ``f_i`` where the call is, printed as
    ``f_i == f_i``: a self-comparison, which gcc warns of and the HLS build (C++,
    ``-Werror``) refused (CompileError)."""
    comp = Computation("selfcmp")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("z", "double", shape=("N",))
    comp.declare_uf("f", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= N}")
    comp.add_stmt(
        Stmt(
            "$y$(i) += j;",
            "{[i,k,j]: 0 <= i < N && i = f(i) && 0 <= k < N && f(k) = i && j = f(k)}",
            "{[i,k,j]->[0,i,1,k,1,j,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$z$(i) += k;",
            "{[i,k]: 0 <= i < N && f(i+1) <= i && k = f(i)}",
            "{[i,k]->[0,i,1,k,3]}",
        )
    )
    assert "f_i == f_i" not in comp.codegen("hls")
    n = 5
    f = np.array([0, 0, 2, 1, 4, 3], dtype=np.int32)
    y, z = np.zeros(n), np.zeros(n)
    comp.compile(target="hls", cache_dir=tmp_path)(y=y, z=z, f=f, N=n)
    y2, z2 = np.zeros(n), np.zeros(n)
    comp.interpret(y=y2, z=z2, f=f, N=n)
    assert (y.tolist(), z.tolist()) == (y2.tolist(), z2.tolist())


def _unguarded(n: Node) -> Node | None:
    if isinstance(n, If) and isinstance(n.then, Bind) and n.orelse is not None:
        return n.then
    return None


def _mutate(n: Node, fn: Callable[[Node], Node | None]) -> Node:
    new = fn(n)
    if new is not None:
        return new
    if isinstance(n, Block):
        return Block(tuple(_mutate(i, fn) for i in n.items))
    if isinstance(n, (For, Bind)):
        return replace(n, body=_mutate(n.body, fn))
    if isinstance(n, If):
        orelse = None if n.orelse is None else _mutate(n.orelse, fn)
        return If(n.cond, _mutate(n.then, fn), orelse)
    return n


def test_a_read_past_the_uf_is_not_excused_by_a_statement_that_reads_another_call() -> None:
    """The same loops with that read unguarded: the self-check let them pass because the
    first statement's domain calls ``f`` too (as ``f(i)``, which says nothing of where
    ``f(i + f(i))`` lies); now it refuses them."""
    ir = _skewed_reads().ir
    body = Scanner(ir).scan()
    wrong = _mutate(body, _unguarded)
    assert wrong != body
    verify(ir, body)
    with pytest.raises(CodegenError, match=r"read f\(i \+ f\(i\)\) outside the UF's domain"):
        verify(ir, wrong)


def test_a_constant_extent_multiplies_in_64_bits(tmp_path: Path) -> None:
    """``B(col(k), j)`` with ``B`` of shape ``(R, 70000)``: the body reads ``col[k]`` as an
    ``int32_t``, and ``col[k] * 70000`` in int arithmetic overflows from ``col[k] = 30679``
    on (a negative offset: out of bounds); the constant extent is an ``int64_t``."""
    comp = Computation("wide_rows")
    comp.add_data_space("B", "double", shape=("R", 70000))
    comp.add_data_space("y", "double", shape=("NNZ",))
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < R}")
    comp.add_stmt(Stmt("$y$(k) = $B$(col(k), 69999);", "{[k]: 0 <= k < NNZ}"))
    assert "#define B(t0, t1) B[(t0) * (int64_t) 70000 + (t1)]" in comp.codegen()
    col = np.array([2, 0, 1, 2], dtype=np.int32)
    B = np.arange(3 * 70000, dtype=np.float64).reshape(3, 70000)
    y = np.zeros(4)
    comp.compile(openmp=False, cache_dir=tmp_path)(B=B, y=y, col=col, NNZ=4, R=3)
    assert y.tolist() == B[col, 69999].tolist()

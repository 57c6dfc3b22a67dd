"""The scanner leaves the 2d+1 schedule's constant positions out of isl's AST builds.

A position where every statement of a build holds one and the same integer orders nothing
there; isl carried each through every projection of its AST build (BLIS's packed GEMM: an
inner build of eleven positions, six of them 0, took twice as long). The first position of
a build stays (isl separates a statement's pieces at it: without it the full and partial
tiles of a tiled, vectorised loop shared one nest and its guards), and so does every
position where the statements differ.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import TYPE_CHECKING

import islpy as isl
import numpy as np

from spf import Computation, Stmt, kernels
from spf.analysis import memo
from spf.codegen import ast_build
from spf.codegen.scan import _common_constants

if TYPE_CHECKING:
    import pytest


def test_common_constants_are_the_positions_every_set_fixes_alike() -> None:
    sets = [
        isl.Set("[N] -> { [0, i, 0, 2, j] : 0 <= i, j < N }"),
        isl.Set("[N] -> { [0, i, 1, 2, j] : 0 <= i < N and j = 3 }"),
    ]
    assert _common_constants(sets, 1) == {3: 2}  # 2 differs, 4 is fixed in one only
    assert _common_constants(sets, 0) == {0: 0, 3: 2}
    one = [isl.Set("{ [0, i, 5] : 0 <= i < 4 }")]
    assert _common_constants(one, 1) == {2: 5}


def record_builds(monkeypatch: pytest.MonkeyPatch) -> list[isl.UnionMap]:
    seen: list[isl.UnionMap] = []
    build = isl.AstBuild.node_from_schedule_map

    def node_from_schedule_map(self: isl.AstBuild, umap: isl.UnionMap) -> isl.AstNode:
        seen.append(umap)
        return build(self, umap)

    monkeypatch.setattr(isl.AstBuild, "node_from_schedule_map", node_from_schedule_map)
    return seen


def shared_fixed_positions(umap: isl.UnionMap) -> list[int]:
    """Positions after the first where every map of ``umap`` has one and the same value."""
    maps: list[isl.Map] = []
    umap.foreach_map(maps.append)
    ranges = [m.range() for m in maps]
    found = []
    for k in range(1, ranges[0].dim(isl.dim_type.set)):
        vals = [r.plain_get_val_if_fixed(isl.dim_type.set, k) for r in ranges]
        if all(v.is_int() for v in vals) and len({v.to_python() for v in vals}) == 1:
            found.append(k)
    return found


def tiled_gemm(name: str = "gemm") -> Computation:
    comp = Computation.from_ir(dataclasses.replace(kernels.gemm().ir, name=name))
    s = comp.stmt(0)
    s.tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")
    s.vectorize("j1", 4)
    return comp


def test_no_build_is_given_a_position_all_its_statements_fix_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = record_builds(monkeypatch)
    memo.clear()  # every computation scanned again, its code not recalled
    ast_build.clear()  # every build made again, none recalled
    for comp in [tiled_gemm(), kernels.sptrsv_csr(), kernels.blur2d()]:
        comp.codegen()
    assert len(seen) > 3
    for umap in seen:
        assert shared_fixed_positions(umap) == [], str(umap)


def test_partial_tiles_keep_their_own_nest_and_the_kernel_its_results() -> None:
    comp = Computation("fill")
    comp.add_data_space("buf", "double", shape=("N", "M"))
    comp.add_stmt(Stmt("$buf$(i, j) = 3 * i + j;", "{[i, j]: 0 <= i < N && 0 <= j < M}"))
    s = comp.stmt(0)
    s.tile("i", "j", 4, 16, "i0", "j0", "i1", "j1")
    s.vectorize("j1", 8)
    assert comp.codegen().count("for (int64_t i0 = ") > 1  # full tiles apart from the last
    kernel = comp.compile()
    for n, m in [(1, 1), (4, 16), (5, 17), (9, 40)]:
        buf = np.zeros((n, m))
        kernel(buf=buf, N=n, M=m)
        assert np.array_equal(buf, 3 * np.arange(n)[:, None] + np.arange(m)[None, :]), (n, m)


def test_an_equal_build_is_recalled_not_made_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two tiled GEMMs under new names (no generated code remembered for them) scan equal
    segments: isl builds them once."""
    seen = record_builds(monkeypatch)
    ast_build.clear()
    names = [f"gemm_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    codes = []
    for name in names:
        codes.append(tiled_gemm(name).codegen())
        if len(codes) == 1:
            made = len(seen)
            assert made >= 1
    assert len(seen) == made
    assert codes[1] == codes[0].replace(f"{names[0]}(", f"{names[1]}(")

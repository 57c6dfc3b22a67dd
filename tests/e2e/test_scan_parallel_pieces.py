"""End to end: full/partial tile separation never takes a piece out of a parallel loop.

``split``, ``tile`` and ``vectorize`` make codegen scan a statement in pieces (full tiles and
full vectors apart from the partial ones). Where a loop outside those is ``parallel``, the
piece of its last (partial) iteration used to become a loop of its own after the ``omp
parallel for``, run by one thread. Each test checks the generated C (every statement call
inside an ``omp parallel for`` loop, full vectors still with constant bounds) and runs it
against numpy on sizes that leave partial tiles, vectors and strips.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from spf import Computation, Stmt, kernels

if TYPE_CHECKING:
    from pathlib import Path

# vectorised pieces, built as users build them (spf's -O3)
pytestmark = pytest.mark.default_flags

Array = np.ndarray[Any, Any]


@pytest.fixture(scope="module")
def cache(shared_cache: Path) -> Path:
    return shared_cache


def block_end(code: str, start: int) -> int:
    """The index just after the ``{ ... }`` block that opens at or after ``start``."""
    depth, k = 0, code.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(code[k], 0)
        k += 1
        if depth == 0:
            return k


def parallel_regions(code: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the loop after each ``#pragma omp parallel for``."""
    return [
        (m.start(), block_end(code, m.end()))
        for m in re.finditer(r"#pragma omp parallel for", code)
    ]


def function_body(source: str, func: str) -> str:
    """The source from the function holding the loops: ``<func>_spf_faults`` when the kernel
    has a fault record (heap buffers, run-time index arrays), else ``<func>`` itself."""
    head = f"void {func}_spf_faults("
    return source[source.index(head if head in source else f"void {func}(") :]


def assert_calls_in_parallel_loops(source: str, func: str, stmts: list[str]) -> None:
    body = function_body(source, func)
    regions = parallel_regions(body)
    assert regions, "no parallel loop"
    calls = [m.start() for s in stmts for m in re.finditer(rf"\b{s}\(", body)]
    assert calls
    outside = [
        body[c : body.index("\n", c)] for c in calls if not any(a < c < b for a, b in regions)
    ]
    assert not outside, f"statement calls outside the parallel loop: {outside}"


def fill() -> Computation:
    comp = Computation("fill2")
    comp.add_data_space("buf", "int32_t", shape=("N", "M"))
    comp.add_stmt(
        Stmt(
            "$buf$(i,j) = 3*i + j;",
            "{[i,j]: 0 <= i < N && 0 <= j < M}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    return comp


SIZES = [(9, 13), (5, 200), (3, 1), (0, 7), (7, 0), (4, 64), (17, 130), (1, 9)]


def run_fill(comp: Computation, cache: Path) -> None:
    kernel = comp.compile(cache_dir=str(cache))
    assert_calls_in_parallel_loops(kernel.source, "fill2", ["s0"])
    assert "#pragma omp simd" in kernel.source  # the full vectors are still apart
    for n, m in SIZES:
        guard = np.full(n * m + 16, -1, dtype=np.int32)
        buf = guard[8 : 8 + n * m].reshape(n, m)
        kernel(buf=buf, N=n, M=m)
        assert np.array_equal(buf, 3 * np.arange(n)[:, None] + np.arange(m)[None, :]), (n, m)
        assert np.all(guard[:8] == -1)
        assert np.all(guard[8 + n * m :] == -1)


def test_parallel_tile_loop_keeps_its_partial_tiles(cache: Path) -> None:
    comp = fill()
    s = comp.stmt(0)
    s.tile("i", "j", 4, 16, "i0", "j0", "i1", "j1")
    s.parallelize("i0")
    s.vectorize("j1", 8)
    run_fill(comp, cache)


def test_parallel_strip_loop_inside_a_serial_loop(cache: Path) -> None:
    comp = fill()
    s = comp.stmt(0)
    s.split("j", 32, "j0", "j1")
    s.parallelize("j0")
    s.vectorize("j1", 8)
    run_fill(comp, cache)


def test_serial_loops_still_separate_their_partial_tiles() -> None:
    comp = fill()
    s = comp.stmt(0)
    s.tile("i", "j", 4, 16, "i0", "j0", "i1", "j1")
    s.vectorize("j1", 8)
    # no parallel loop: the partial tiles of i0 are scanned in a nest of their own
    assert comp.codegen().count("for (int64_t i0 = ") > 1


def column_strip_blur(width: int) -> Computation:
    """The blur in column strips (``j0`` parallel), fused by a two-row shift, ``bx`` folded
    to three rows, both stages vectorized."""
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    strip = f"j = {width}*j0 + j1 && 0 <= j1 < {width}"
    s0.set_schedule(f"{{[i,j] -> [0,j0,0,i,0,j1,0]: {strip}}}")
    s1.set_schedule(f"{{[i,j] -> [0,j0,0,i+2,1,j1,0]: {strip}}}")
    s0.parallelize("j0")
    s0.storage_fold("i", 3)
    s0.vectorize("j1", 8)
    s1.vectorize("j1", 8)
    return comp


def test_blur_column_strips_run_every_strip_in_parallel(cache: Path) -> None:
    comp = column_strip_blur(24)
    comp.check_legality()
    kernel = comp.compile(cache_dir=str(cache))
    assert_calls_in_parallel_loops(kernel.source, "blur2d", ["s0", "s1"])
    assert "j11 <= 7" in kernel.source
    rng = np.random.default_rng(5)
    for n, m in [(11, 13), (6, 50), (3, 3), (20, 74), (5, 26), (4, 27)]:
        img = rng.random((n, m))
        bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
        want = (bx[:-2] + bx[1:-1] + bx[2:]) / 3
        out = np.full((n - 2, m - 2), -1.0)
        kernel(out=out, img=img)
        assert np.allclose(out, want), (n, m)


def test_vector_loops_ask_for_their_width() -> None:
    comp = fill()
    comp.stmt(0).vectorize("j", 4)
    code = comp.codegen()
    assert "#pragma omp simd simdlen(4)\n" in code  # gcc's own choice may be narrower
    assert code.count("#pragma omp simd") == 1  # the scalar remainder has no pragma


@pytest.mark.parametrize("rows", [1, 4, 7, 64])
def test_blur_row_strips_with_a_line_buffer_per_strip(cache: Path, rows: int) -> None:
    """The benchmark's schedule (spf.bench.blur): row strips in parallel, ``bx`` computed at
    the strip into a three-row buffer allocated per strip, both stages fused in one vector
    loop; bitwise what numpy computes in the same order."""
    from spf.bench.blur import schedule

    comp = schedule(rows)
    comp.check_legality()
    kernel = comp.compile(cache_dir=str(cache))
    assert "bx" not in kernel.signature
    assert_calls_in_parallel_loops(kernel.source, "blur2d", ["s0", "s1"])
    body = function_body(kernel.source, "blur2d")
    region = parallel_regions(body)[0]
    assert region[0] < body.index("bx_rows = ") < region[1]  # allocated in each strip
    vector_loop = body[body.index("#pragma omp simd") :].split("for (")[1]  # to the next loop
    assert "s0(" in vector_loop  # bx and out in one vector loop
    assert "s1(" in vector_loop
    rng = np.random.default_rng(rows)
    for n, m in [(11, 13), (6, 50), (3, 3), (70, 27), (5, 10), (4, 3), (130, 9)]:
        img = rng.random((n, m))
        bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
        want = (bx[:-2] + bx[1:-1] + bx[2:]) / 3
        out = np.full((n - 2, m - 2), -1.0)
        kernel(out=out, img=img)
        assert np.array_equal(out, want), (n, m)

"""End to end: packing (``cache_read``, Layer III) compiled with gcc and interpreted, against
numpy: BLIS-style packed GEMM (odd sizes leaving partial tiles, random legal tile sizes),
matrix-vector with a packed vector and a transposed packed panel, a pack of a whole
dimension, and the JSON round trip of a packed computation.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import spf
from spf import Computation, kernels

# vectorised micro-kernels, built as users build them (spf's -O3)
pytestmark = pytest.mark.default_flags

GEMM_SIZES = [(1, 1, 1), (1, 3, 9), (7, 5, 3), (37, 70, 29), (64, 64, 64), (45, 130, 67)]


def _order(s: spf.Stmt, names: tuple[str, ...]) -> None:
    for pos, name in enumerate(names):
        if s.loops[pos] != name:
            s.interchange(s.loops[pos], name)


def packed_gemm(
    mr: int, nr: int, kc: int, mc: int, nc: int, vec: int = 4, parallel: str = "j2"
) -> Computation:
    """BLIS's loops (``j0, k0, i0, j2, i2, k1, i3, j3``), B packed at ``k0`` in slivers,
    A at ``i0`` in row panels (allocated per ``i0`` to run ``i0`` in parallel), the
    micro-kernel vectorized and unrolled."""
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.split("j", nc, "j0", "jj")
    s.split("jj", nr, "j2", "j3")
    s.split("k", kc, "k0", "k1")
    s.split("i", mc, "i0", "ii")
    s.split("ii", mr, "i2", "i3")
    _order(s, ("j0", "k0", "i0", "j2", "i2", "k1", "i3", "j3"))
    s.cache_read("B", "k0", layout=["j2", "k1", "j3"])
    comp.cache_read("A", at=(s, "i0"), layout=["i2", "k1", "i3"])
    if parallel == "i0":
        comp.buffer("A_pack_buf").allocate_at(s, "i0")
    if nr % vec == 0:
        s.vectorize("j3", vec)
        s.unroll("i3", mr)
    s.parallelize(parallel)
    return comp


def run_gemm(comp: Computation, n: int, k: int, m: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-1, 1, (n, k)), rng.uniform(-1, 1, (k, m))
    c0 = rng.uniform(-1, 1, (n, m))
    c = c0.copy()
    comp.compile()(C=c, A=a, B=b)
    np.testing.assert_allclose(c, c0 + a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.slow  # run first (tests/conftest.py): among the longest in the suite
@pytest.mark.parametrize("parallel", ["j2", "i0"])
def test_packed_gemm_odd_sizes(parallel: str) -> None:
    comp = packed_gemm(mr=3, nr=8, kc=16, mc=6, nc=24, parallel=parallel)
    text = comp.loop_structure()
    assert "B_pack_copy" in text
    assert "A_pack_copy" in text
    src = comp.codegen()
    assert "A_pack(i2_, k1_, i3_) * B_pack(j2_, k1_, j3_)" in src
    for n, k, m in GEMM_SIZES:
        run_gemm(comp, n, k, m)


def test_packed_gemm_interpreted_matches() -> None:
    comp = packed_gemm(mr=2, nr=4, kc=3, mc=4, nc=8)
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (7, 5)), rng.uniform(-1, 1, (5, 9))
    c = np.zeros((7, 9))
    comp.interpret(C=c, A=a, B=b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.slow  # run first (tests/conftest.py): among the longest in the suite
@pytest.mark.parametrize("seed", range(4))
def test_packed_gemm_random_tile_sizes(seed: int) -> None:
    rnd = random.Random(seed)
    mr, nr, kc = rnd.choice([1, 2, 3, 4]), rnd.choice([2, 4, 8]), rnd.choice([1, 5, 8, 16])
    mc, nc = mr * rnd.choice([1, 2, 3]), nr * rnd.choice([1, 2, 5])
    comp = packed_gemm(
        mr, nr, kc, mc, nc, vec=rnd.choice([2, 4]), parallel=rnd.choice(["j2", "i0"])
    )
    comp.check_legality()
    for _ in range(2):
        n, k, m = rnd.randint(1, 40), rnd.randint(1, 40), rnd.randint(1, 40)
        run_gemm(comp, n, k, m, seed)


def test_default_layout_is_the_inner_loops_the_element_uses() -> None:
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")  # i0 j0 i1 j1 k
    copy = s.cache_read("A", "j0")  # A(i, k): loops i1, k
    assert copy.name == "A_pack_copy"
    assert comp.buffer("A_pack_buf").shape == (4, "K")
    assert comp.data_spaces["A_pack"].shape == (4, "K")
    for n, k, m in [(9, 7, 17), (4, 1, 8), (1, 2, 1)]:
        run_gemm(comp, n, k, m)


def test_matvec_packed_vector_and_transposed_panel() -> None:
    comp = kernels.dense_mv()  # y[i] += A[i, j] * x[j]
    s = comp.stmt(0)
    s.tile("i", "j", 5, 6, "i0", "j0", "i1", "j1")
    s.interchange("i0", "j0")  # j0 i0 i1 j1
    s.cache_read("x", "j0")  # x(j): the 6 elements of the j tile, once per j0
    s.cache_read("A", "i0", layout=["j1", "i1"], scope="stack")  # a transposed 6 x 5 panel
    assert comp.buffer("x_pack_buf").shape == (6,)
    assert comp.buffer("A_pack_buf").shape == (6, 5)
    rng = np.random.default_rng(2)
    for n, m in [(1, 1), (5, 6), (11, 13), (23, 4)]:
        a, x, y0 = rng.random((n, m)), rng.random(m), rng.random(n)
        y = y0.copy()
        comp.compile()(y=y, A=a, x=x)
        np.testing.assert_allclose(y, y0 + a @ x, rtol=1e-12)
        y = y0.copy()
        comp.interpret(y=y, A=a, x=x)
        np.testing.assert_allclose(y, y0 + a @ x, rtol=1e-12)


def test_pack_after_a_producer_in_the_same_loop() -> None:
    """A statement writing the data space earlier in the same iteration runs before the
    copy: the copy sees its values."""
    comp = Computation("scaled")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    s0 = comp.add_stmt(spf.Stmt("$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}"))
    s1 = comp.add_stmt(spf.Stmt("$y$(i) += $x$(i);", "{[i]: 0 <= i < N}"))
    s0.split("i", 4, "i0", "i1")
    s1.split("i", 4, "i0", "i1")
    s1.after(s0, "i0")
    s1.cache_read("x", "i0")
    rng = np.random.default_rng(5)
    x0, y0 = rng.random(10), rng.random(10)
    x, y = x0.copy(), y0.copy()
    comp.compile()(x=x, y=y)
    np.testing.assert_allclose(y, y0 + 2 * x0)
    np.testing.assert_allclose(x, 2 * x0)


def test_packed_computation_round_trips_through_json() -> None:
    comp = packed_gemm(mr=2, nr=4, kc=3, mc=4, nc=8, parallel="i0")
    again = Computation.from_json(comp.to_json())
    assert again.codegen() == comp.codegen()
    assert "cache_read" in comp.trace.as_python()
    run_gemm(again, 9, 7, 10)


def test_trace_replays_the_packing() -> None:
    comp = packed_gemm(mr=2, nr=4, kc=3, mc=4, nc=8, parallel="i0")
    fresh = comp.trace.replay(kernels.gemm())
    assert fresh.codegen() == comp.codegen()


def _pack_per_k0(level: str) -> Computation:
    """A packed at ``k0`` (loops ``i0, k0, j, i1, k1``), its buffer allocated at ``level``."""
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.split("i", 4, "i0", "i1").split("k", 4, "k0", "k1").interchange("i1", "k0")
    comp.cache_read("A", at=(s, "k0"))
    comp.buffer("A_pack_buf").allocate_at(s, level)
    return comp


def test_buffer_allocated_in_a_loop_the_scanner_splits_is_refused() -> None:
    # the scanner runs the copy for every k0 in one loop and the reader's partial last k
    # tile in another loop over the same k0: a fresh buffer there would read garbage
    with pytest.raises(spf.CodegenError, match="splits that loop into several loops"):
        _pack_per_k0("k0").codegen("c")
    comp = _pack_per_k0("i0")  # one iteration of i0 stays in one loop
    comp.stmt(0).parallelize("i0")
    rng = np.random.default_rng(3)
    A, B = rng.random((13, 11)), rng.random((11, 17))
    C = np.zeros((13, 17))
    comp.compile()(C=C, A=A, B=B)
    assert np.allclose(C, A @ B)

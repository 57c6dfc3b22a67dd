"""End to end: scheduled computations generated, compiled with gcc and run.

EXAMPLES.md's tiling (odd size, partial tiles, parallel tile loop), ordering and illegal
schedule examples; then differential tests: seeded random sequences of tile / split /
interchange / shift / skew / reverse / parallelize on dense_mv, gemm, spmv_csr (split/tile of
the row loop), blur2d and jacobi2d. A legal schedule must compute exactly what numpy does;
an illegal one must be refused by ``codegen``; the trace replayed (as Python and from JSON)
on a fresh kernel must rebuild the same schedule. One compile cache serves the session.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import Computation, IllegalScheduleError, Stmt, kernels
from spf.schedule import ROOT, trace_of
from spf.sparse import csr_args

if TYPE_CHECKING:
    from pathlib import Path

    from spf.runtime import Kernel

Array = np.ndarray[Any, Any]


@pytest.fixture(scope="session")
def cache(shared_cache: Path) -> Path:
    return shared_cache


def build(comp: Computation, cache: Path, check: bool = True) -> Kernel:
    """``comp.compile`` into the session's cache."""
    return comp.compile(cache_dir=str(cache), check=check)


def fill() -> Computation:
    comp = Computation("fill")
    comp.add_data_space("buf", "int32_t", shape=("N", "N"))
    comp.add_stmt(
        Stmt("$buf$(i,j) = 7;", "{[i,j]: 0 <= i < N && 0 <= j < N}", "{[i,j]->[0,i,0,j,0]}")
    )
    return comp


# ------------------------------------------------------------------------ EXAMPLES.md
TILED = "for i0 [parallel]:\n  for j0:\n    for i1:\n      for j1:\n        s0"


@pytest.mark.parametrize("n", [9, 1, 2, 0])
def test_tiling_with_an_odd_size(cache: Path, n: int) -> None:
    comp = fill()
    s = comp.stmt(0)
    s.tile("i", "j", 2, 2, "i0", "j0", "i1", "j1").parallelize("i0")
    assert comp.loop_structure() == TILED
    kernel = build(comp, cache)
    guard = np.full(n * n + 16, -1, dtype=np.int32)
    buf = guard[8 : 8 + n * n].reshape(n, n)
    kernel(buf=buf, N=n)
    assert np.all(buf == 7)
    assert np.all(guard[:8] == -1)
    assert np.all(guard[8 + n * n :] == -1)


def test_tiling_example_interpreted() -> None:
    comp = fill()
    comp.stmt(0).tile("i", "j", 2, 2, "i0", "j0", "i1", "j1").parallelize("i0")
    buf = np.zeros((9, 9), dtype=np.int32)
    comp.interpret(buf=buf, N=9)
    assert np.all(buf == 7)


def test_tile_of_a_skewed_nest(cache: Path) -> None:
    rng = np.random.default_rng(6)
    A, x = rng.random((7, 5)), rng.random(5)
    comp = kernels.dense_mv()
    comp.stmt(0).skew("i", "j", 1).tile("i", "j", 3, 4, "i0", "j0", "i1", "j1")
    comp.check_legality()
    y = np.zeros(7)
    build(comp, cache)(y=y, A=A, x=x)
    assert np.allclose(y, A @ x)


def test_tiling_example_as_written(cache: Path) -> None:
    comp = fill()
    comp.stmt(0).tile("i", "j", 2, 2, "i0", "j0", "i1", "j1").parallelize("i0")
    buf = np.zeros((9, 9), dtype=np.int32)
    build(comp, cache)(buf=buf, N=9)
    assert np.all(buf == 7)


def four() -> Computation:
    comp = Computation("order")
    for k in range(4):
        comp.add_data_space(f"b{k}", "int32_t", shape=(10, 10))
    for k in range(4):
        comp.add_stmt(Stmt(f"$b{k}$(i,j) = {k + 1};", "{[i,j]: 0 <= i < 10 && 0 <= j < 10}"))
    return comp


def test_ordering_at_a_loop_level(cache: Path) -> None:
    comp = four()
    s0, s1, s2, s3 = comp.stmts
    s1.after(s0, "i")
    s2.after(s1, "j")
    s3.after(s2, "i")
    assert comp.loop_structure() == (
        "for i:\n  for j:\n    s0\n  for j:\n    s1\n    s2\n  for j:\n    s3"
    )
    bufs = {f"b{k}": np.zeros((10, 10), dtype=np.int32) for k in range(4)}
    build(comp, cache)(**bufs)
    for k in range(4):
        assert np.all(bufs[f"b{k}"] == k + 1)


def wave() -> Computation:
    comp = Computation("wave")
    comp.add_data_space("A", "int64_t", shape=(10, 10))
    comp.add_stmt(
        Stmt(
            "$A$(i,j) = $A$(i-1,j-1) + $A$(i,j) + $A$(i-1,j+1);",
            "{[i,j]: 1 <= i < 9 && 1 <= j < 8}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    return comp


def test_an_illegal_schedule_is_refused(cache: Path) -> None:
    comp = wave()
    comp.stmt(0).tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    with pytest.raises(IllegalScheduleError, match=r"flow dependence on 'A'.*'j0'"):
        comp.codegen("c")
    with pytest.raises(IllegalScheduleError):
        comp.compile(cache_dir=str(cache))
    code = comp.codegen("c", check=False)
    assert "for (int64_t j1" in code
    build(comp, cache, check=False)  # builds, on the user's responsibility


def test_wave_untiled_and_skewed_stays_legal(cache: Path) -> None:
    ref = wave()
    want = np.arange(100, dtype=np.int64).reshape(10, 10) % 7
    expect = want.copy()
    ref.interpret(A=expect)
    comp = wave()
    comp.stmt(0).skew("i", "j", 1).interchange("i", "j")  # a wavefront: legal
    comp.check_legality()
    got = want.copy()
    build(comp, cache)(A=got)
    assert np.array_equal(got, expect)


def test_blur_fused_with_a_shift(cache: Path) -> None:
    rng = np.random.default_rng(3)
    img = rng.random((9, 11))
    bx_ref = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    out_ref = (bx_ref[:-2] + bx_ref[1:-1] + bx_ref[2:]) / 3
    unshifted = kernels.blur2d()
    unshifted.stmt("s1").after("s0", "i")  # out row i needs bx rows i+1, i+2: too early
    with pytest.raises(IllegalScheduleError):
        unshifted.check_legality()
    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2).after("s0", "i")
    comp.check_legality()
    assert comp.loop_structure() == "for i:\n  for j:\n    s0\n  for j:\n    s1"
    out, bx = np.zeros((7, 9)), np.zeros((9, 9))
    build(comp, cache)(out=out, bx=bx, img=img)
    assert np.allclose(out, out_ref)
    assert np.allclose(bx, bx_ref)


@pytest.mark.default_flags  # a vectorised schedule, built as users build it (-O3)
def test_unroll_and_vectorize_compile(cache: Path) -> None:
    rng = np.random.default_rng(4)
    A, B = rng.random((5, 7)), rng.random((7, 9))
    comp = kernels.gemm()
    comp.stmt(0).unroll("k", 4).vectorize("j", 4)
    code = comp.codegen()
    assert "#pragma GCC unroll 4" in code
    assert "#pragma omp simd" in code
    C = np.zeros((5, 9))
    build(comp, cache)(C=C, A=A, B=B)
    assert np.allclose(C, A @ B)


# ------------------------------------------------------------------------ differential
def _dense_mv(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Array]]:
    A, x = rng.random((7, 5)), rng.random(5)
    return {"y": np.zeros(7), "A": A, "x": x}, {"y": A @ x}


def _gemm(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Array]]:
    A, B = rng.random((5, 4)), rng.random((4, 6))
    return {"C": np.zeros((5, 6)), "A": A, "B": B}, {"C": A @ B}


def _blur2d(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Array]]:
    img = rng.random((7, 9))
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    out = (bx[:-2] + bx[1:-1] + bx[2:]) / 3
    return {"out": np.zeros((5, 7)), "bx": np.zeros((7, 7)), "img": img}, {"out": out, "bx": bx}


def _jacobi2d(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Array]]:
    A = rng.random((8, 8))
    B = np.zeros((8, 8))
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
    return {"B": np.zeros((8, 8)), "A": A}, {"B": B}


def _spmv_csr(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Array]]:
    A = sp.random(11, 7, density=0.3, format="csr", random_state=np.random.RandomState(5))
    x = rng.random(7)
    return {"y": np.zeros(11), "x": x, **csr_args(A)}, {"y": A @ x}


DATA: dict[str, Callable[[np.random.Generator], tuple[dict[str, Any], dict[str, Array]]]] = {
    "dense_mv": _dense_mv,
    "gemm": _gemm,
    "blur2d": _blur2d,
    "jacobi2d": _jacobi2d,
    "spmv_csr": _spmv_csr,
}


def random_command(comp: Computation, rng: random.Random, tag: int) -> None:
    """One random loop command on a random statement (parallelize only where legal)."""
    s = rng.choice(comp.stmts)
    n = len(s.loops)

    def ref(d: int) -> str | int:
        return d if rng.random() < 0.3 else s.loops[d]

    kind = rng.choice(["split", "tile", "interchange", "shift", "skew", "reverse", "parallelize"])
    if kind == "tile" and n >= 2:
        d = rng.randrange(n - 1)
        sizes = rng.choice([2, 3]), rng.choice([2, 4])
        s.tile(ref(d), ref(d + 1), *sizes, f"a{tag}", f"b{tag}", f"c{tag}", f"d{tag}")
    elif kind == "interchange" and n >= 2:
        a, b = rng.sample(range(n), 2)
        s.interchange(ref(a), ref(b))
    elif kind == "skew" and n >= 2:
        a, b = sorted(rng.sample(range(n), 2))
        s.skew(ref(a), ref(b), rng.choice([1, 2, -1]))
    elif kind == "shift":
        s.shift(ref(rng.randrange(n)), rng.choice([-2, -1, 1, 3]))
    elif kind == "reverse":
        s.reverse(ref(rng.randrange(n)))
    elif kind == "parallelize":
        d = rng.randrange(n)
        if comp.is_parallel_legal(s, d):
            s.parallelize(ref(d))
    else:
        s.split(ref(rng.randrange(n)), rng.choice([2, 3, 4]), f"a{tag}", f"b{tag}")


def random_schedule(name: str, seed: int) -> Computation:
    comp: Computation = getattr(kernels, name)()
    rng = random.Random(zlib.crc32(f"{name}/{seed}".encode()))
    if name == "spmv_csr":  # the row loop only: k's bounds are UF calls of i
        s = comp.stmt(0)
        if seed % 2:
            s.split("i", rng.choice([2, 3, 4]), "i0", "i1")
        else:
            s.tile("i", "k", rng.choice([2, 3]), rng.choice([2, 4]), "i0", "k0", "i1", "k1")
        if rng.random() < 0.7:
            s.parallelize("i0")
        return comp
    for tag in range(rng.randint(1, 4)):
        random_command(comp, rng, tag)
    return comp


def state(comp: Computation) -> list[tuple[str, str, dict[str, tuple[str, ...]]]]:
    return [(s.name, str(s.schedule), s.tags) for s in comp.stmts]


CASES = [(name, seed) for name in DATA for seed in range(6)]


@pytest.mark.parametrize(("name", "seed"), CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_random_schedule_matches_the_unscheduled_kernel(name: str, seed: int, cache: Path) -> None:
    comp = random_schedule(name, seed)
    # the trace rebuilds the schedule: as Python on a fresh kernel, and through JSON
    fresh: Computation = getattr(kernels, name)()
    exec(trace_of(comp).as_python(), {"comp": fresh, "spf": spf, "ROOT": ROOT})
    assert state(fresh) == state(comp)
    back = Computation.from_json(comp.to_json())
    assert state(back) == state(comp)
    assert trace_of(back) == trace_of(comp)
    try:
        comp.check_legality()
    except IllegalScheduleError:
        with pytest.raises(IllegalScheduleError):
            comp.codegen()
        return
    args, want = DATA[name](np.random.default_rng(seed))
    interpreted = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    comp.interpret(**interpreted)  # the schedule's own instance order, no codegen involved
    kernel = build(comp, cache)
    kernel(**args)
    for key, value in want.items():
        assert np.allclose(interpreted[key], value), (key, trace_of(comp).as_python())
        assert np.allclose(args[key], value), (key, trace_of(comp).as_python())


def test_random_schedules_are_mostly_legal() -> None:
    legal = 0
    for name, seed in CASES:
        try:
            random_schedule(name, seed).check_legality()
            legal += 1
        except IllegalScheduleError:
            pass
    assert legal >= len(CASES) * 2 // 3

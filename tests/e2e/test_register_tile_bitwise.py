"""The register tile keeps the source's floating-point order: bitwise what gcc computes.

A loop ``n`` around a short constant-trip nest accumulating into targets that do not change
across ``n`` gets a register tile (``spf_tile``, unroll-and-jam's scalar replacement). The
tile used to start from zero and add its sums to memory after ``n``, which reassociates
every target's reduction (API §15: no default schedule may). Each cell now starts from its
target's value and takes the updates in the source's order, so the kernel equals, bit for
bit, gcc's ``-O1 -fno-fast-math`` build of the same loop nest written in C, for short loops,
an empty ``n``, ``-=`` and ``*=``, a target that ignores one tile loop, GEMM's tiled and
unrolled micro-kernel, and a target two cells share (no tile then).
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import spf
from spf import Computation, Stmt

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc"),
    # the register tile against gcc's own -O1 build: the kernel itself at spf's -O3
    pytest.mark.default_flags,
]

Array = np.ndarray[Any, Any]
GCC_FLAGS = ["-O1", "-fno-fast-math", "-std=c99"]


@dataclass(frozen=True)
class Case:
    build: Callable[[], Computation]
    c_source: str
    """The same loop nest in C: ``void ref(int64_t M, double *out, const double *in)``."""
    out: str
    inp: str
    shapes: Callable[[int], tuple[tuple[int, ...], tuple[int, ...]]]
    tiled: bool
    """Whether spf keeps the targets in a register tile (else they stay in memory)."""


def one(
    name: str, stmt: Stmt, out: tuple[str | int, ...], inp: tuple[str | int, ...]
) -> Computation:
    comp = Computation(name)
    comp.add_data_space("y", "double", shape=out)
    comp.add_data_space("x", "double", shape=inp)
    comp.add_stmt(stmt)
    return comp


def short_inner() -> Computation:
    """``y[i] += x[j][i]^2`` for ``i < 4``: the tile is the four targets, kept across ``j``."""
    return one(
        "short_inner",
        Stmt(
            "$y$(i) += $x$(j, i) * $x$(j, i);",
            "{[j,i]: 0 <= j < M && 0 <= i < 4}",
            "{[j,i] -> [0,j,0,i,0]}",
        ),
        (4,),
        ("M", 4),
    )


def minus() -> Computation:
    return one(
        "minus",
        Stmt("$y$(i) -= $x$(j, i);", "{[j,i]: 0 <= j < M && 0 <= i < 3}", "{[j,i] -> [0,j,0,i,0]}"),
        (3,),
        ("M", 3),
    )


def times() -> Computation:
    return one(
        "times",
        Stmt("$y$(i) *= $x$(j, i);", "{[j,i]: 0 <= j < M && 0 <= i < 5}", "{[j,i] -> [0,j,0,i,0]}"),
        (5,),
        ("M", 5),
    )


def ignores_a_loop() -> Computation:
    """``y[i] += x[n][i][k]``: cells indexed by ``i`` only, each taking its ``k`` updates in
    order."""
    return one(
        "ignores_a_loop",
        Stmt(
            "$y$(i) += $x$(n, i, k);",
            "{[n,i,k]: 0 <= n < M && 0 <= i < 3 && 0 <= k < 2}",
            "{[n,i,k] -> [0,n,0,i,0,k,0]}",
        ),
        (3,),
        ("M", 3, 2),
    )


def shared_target() -> Computation:
    """``y[i + k] += x[n][i][k]``: two cells would share an element, so no tile."""
    return one(
        "shared_target",
        Stmt(
            "$y$(i + k) += $x$(n, i, k);",
            "{[n,i,k]: 0 <= n < M && 0 <= i < 3 && 0 <= k < 3}",
            "{[n,i,k] -> [0,n,0,i,0,k,0]}",
        ),
        (5,),
        ("M", 3, 3),
    )


def gemm_micro() -> Computation:
    """``C += A·A`` (``M x M``) with a 4 x 4 register tile: ``i`` and ``j`` split by 4, the
    loops ordered ``i0, j0, k, i1, j1`` and the tile loops unrolled."""
    comp = Computation("gemm_micro")
    comp.add_data_space("y", "double", shape=("M", "M"))
    comp.add_data_space("x", "double", shape=("M", "M"))
    s = comp.add_stmt(
        Stmt(
            "$y$(i, j) += $x$(i, k) * $x$(k, j);",
            "{[i,j,k]: 0 <= i < M && 0 <= j < M && 0 <= k < M}",
            "{[i,j,k] -> [0,i,0,j,0,k,0]}",
        )
    )
    s.split("i", 4, "i0", "i1")
    s.split("j", 4, "j0", "j1")
    for pos, name in enumerate(("i0", "j0", "k", "i1", "j1")):
        if s.loops[pos] != name:
            s.interchange(s.loops[pos], name)
    s.unroll("i1", 4)
    s.unroll("j1", 4)
    return comp


HEADER = "#include <stdint.h>\nvoid ref(int64_t M, double *restrict y, const double *restrict x)\n"
CASES = {
    "short_inner": Case(
        short_inner,
        HEADER + "{ for (int64_t j = 0; j < M; j++) for (int i = 0; i < 4; i++)"
        " y[i] += x[j * 4 + i] * x[j * 4 + i]; }",
        "y",
        "x",
        lambda m: ((4,), (m, 4)),
        tiled=True,
    ),
    "minus": Case(
        minus,
        HEADER + "{ for (int64_t j = 0; j < M; j++) for (int i = 0; i < 3; i++)"
        " y[i] -= x[j * 3 + i]; }",
        "y",
        "x",
        lambda m: ((3,), (m, 3)),
        tiled=True,
    ),
    "times": Case(
        times,
        HEADER + "{ for (int64_t j = 0; j < M; j++) for (int i = 0; i < 5; i++)"
        " y[i] *= x[j * 5 + i]; }",
        "y",
        "x",
        lambda m: ((5,), (m, 5)),
        tiled=True,
    ),
    "ignores_a_loop": Case(
        ignores_a_loop,
        HEADER + "{ for (int64_t n = 0; n < M; n++) for (int i = 0; i < 3; i++)"
        " for (int k = 0; k < 2; k++) y[i] += x[(n * 3 + i) * 2 + k]; }",
        "y",
        "x",
        lambda m: ((3,), (m, 3, 2)),
        tiled=True,
    ),
    "shared_target": Case(
        shared_target,
        HEADER + "{ for (int64_t n = 0; n < M; n++) for (int i = 0; i < 3; i++)"
        " for (int k = 0; k < 3; k++) y[i + k] += x[(n * 3 + i) * 3 + k]; }",
        "y",
        "x",
        lambda m: ((5,), (m, 3, 3)),
        tiled=False,
    ),
    "gemm_micro": Case(
        gemm_micro,
        HEADER + "{ for (int64_t i = 0; i < M; i++) for (int64_t j = 0; j < M; j++)"
        " for (int64_t k = 0; k < M; k++) y[i * M + j] += x[i * M + k] * x[k * M + j]; }",
        "y",
        "x",
        lambda m: ((m, m), (m, m)),
        tiled=True,
    ),
}


def values(shape: tuple[int, ...], seed: int, near_one: bool) -> Array:
    """Values whose sums round differently in another order (magnitudes 1e-8 .. 1e8)."""
    rng = np.random.default_rng(seed)
    if near_one:
        return 1.0 + rng.standard_normal(shape) * 1e-3
    return rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 8, size=shape)


def gcc_reference(case: Case, tmp: Path) -> Callable[..., None]:
    src = tmp / "ref.c"
    src.write_text(case.c_source)
    lib = tmp / "libref.so"
    subprocess.run(
        ["gcc", *GCC_FLAGS, "-shared", "-fPIC", str(src), "-o", str(lib)],
        check=True,
        capture_output=True,
    )
    fn = ctypes.CDLL(str(lib)).ref
    fn.restype = None
    fn.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    return fn


@pytest.mark.parametrize("name", list(CASES))
def test_register_tile_is_bitwise_gccs_order(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    comp = case.build()
    kernel = comp.compile(cache_dir=str(tmp_path / "spf"))
    assert ("spf_tile" in kernel.source) == case.tiled
    ref = gcc_reference(case, tmp_path)
    for m in (0, 1, 5, 9, 37):
        out_shape, in_shape = case.shapes(m)
        y0 = values(out_shape, m, near_one=False)
        x = values(in_shape, m + 1, near_one=name == "times")
        got, want = y0.copy(), y0.copy()
        kernel(**{case.out: got, case.inp: x, "M": m})
        ref(m, want.ctypes.data, x.ctypes.data)
        assert got.tobytes() == want.tobytes(), (name, m)


def test_an_empty_reduction_loop_leaves_negative_zero_alone(tmp_path: Path) -> None:
    """With no iteration of ``j`` the targets keep their bits (a zero-filled tile added at
    the end turned ``-0.0`` into ``0.0``)."""
    kernel = short_inner().compile(cache_dir=str(tmp_path))
    y = np.full(4, -0.0)
    kernel(y=y, x=np.zeros((0, 4)))
    assert np.signbit(y).all()


def test_the_register_tile_survives_for_gemms_bench_schedule() -> None:
    """The benchmark's BLIS-style schedule still keeps its 6 x 32 (or 6 x 8) tile of ``C``
    in ``spf_tile``, loaded from ``C`` before the ``k1`` loop."""
    from spf.bench.gemm import schedule

    source = schedule().codegen()
    assert "spf_tile[i3][j30][j31] = s0_target(" in source
    assert "= spf_tile[i3][j30][j31];" in source
    assert spf.kernels.gemm().codegen().count("spf_tile") == 0

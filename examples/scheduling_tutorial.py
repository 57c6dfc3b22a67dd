"""The scheduling tutorial (docs/scheduling.md) as one script: Tiramisu's blur and GEMM.

Layer I is the algorithm (``spf.kernels.blur2d`` and ``spf.kernels.gemm``); Layer II
schedules: the blur tiled with parallel tile rows, fused into one nest with a shift, computed
per tile with ``compute_at``, inlined; GEMM tiled, its reduction split and moved out of the
vector loop, vectorized and parallelized; a wavefront made tileable by skewing. Layer III
folds the fused blur's temporary to three rows; Layer IV adds copies around it. Every
schedule is checked against the dependences, compiled, run and compared with the
interpreter or numpy.
"""

from __future__ import annotations

import time

import numpy as np

import spf
from spf import kernels


def blur_tiled() -> spf.Computation:
    """Both blur nests tiled 32x32 with the tile rows in parallel."""
    comp = kernels.blur2d()
    for s in comp.stmts:
        s.tile("i", "j", 32, 32, "i0", "j0", "i1", "j1").parallelize("i0")
    return comp


def blur_fused() -> spf.Computation:
    """One nest: ``out`` runs two rows behind ``bx`` (shift), inside the same ``j`` loop."""
    comp = kernels.blur2d()
    bx, out = comp.stmt("s0"), comp.stmt("s1")
    out.shift("i", 2).after(bx, "j")
    return comp


def blur_compute_at() -> spf.Computation:
    """Tiramisu's blur schedule: ``out`` tiled, ``bx`` computed per tile (with a halo)."""
    comp = kernels.blur2d()
    bx, out = comp.stmts
    out.tile("i", "j", 32, 32, "i0", "j0", "i1", "j1")
    bx.compute_at(out, "j0")
    return comp


def blur_inlined() -> spf.Computation:
    """``bx`` substituted into ``out``: one statement, no temporary."""
    comp = kernels.blur2d()
    comp.stmt("s0").inline()
    return comp


def blur_folded() -> spf.Computation:
    """Layer III: the fused blur keeps only three rows of ``bx`` (a stack buffer)."""
    comp = blur_fused()
    comp.stmt("s0").storage_fold("i", 3)
    return comp


def blur_staged() -> spf.Computation:
    """Layer IV: copies in and out around the two passes (no-ops in C)."""
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    copy_in, copy_out = comp.host_to_device("img"), comp.device_to_host("out")
    copy_in.then(s0, spf.ROOT).then(s1, spf.ROOT).then(copy_out, spf.ROOT)
    return comp


def gemm_tiled() -> spf.Computation:
    """Tiramisu's GEMM schedule: tile, split k, interchange, vectorize, parallelize."""
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.tile("i", "j", 32, 32, "i0", "j0", "i1", "j1").split("k", 8, "k0", "k1")
    s.interchange("j1", "k0").interchange("j1", "k1")
    s.parallelize("i0").vectorize("j1", 8)
    return comp


def wave(tiled: bool) -> spf.Computation:
    """``A(i,j) = A(i-1,j-1) + A(i,j) + A(i-1,j+1)``, optionally skewed and tiled."""
    comp = spf.Computation("wave")
    comp.add_data_space("A", "int64_t", shape=(10, 10))
    s = comp.add_stmt(
        spf.Stmt(
            "$A$(i,j) = $A$(i-1,j-1) + $A$(i,j) + $A$(i-1,j+1);",
            "{[i,j]: 1 <= i < 9 && 1 <= j < 8}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    if tiled:
        s.skew("i", "j", 1, "i", "jj").tile("i", "jj", 4, 4, "i0", "j0", "i1", "j1")
    return comp


def check_blur() -> None:
    img = np.random.default_rng(0).random((70, 90))
    want = np.zeros((68, 88))
    kernels.blur2d().interpret(out=want, bx=np.zeros((70, 88)), img=img)
    print(kernels.blur2d().layers())
    for make in (blur_tiled, blur_fused, blur_compute_at, blur_inlined, blur_folded, blur_staged):
        comp = make()
        print(f"{make.__name__}:\n{comp.trace.as_python()}")
        kernel = comp.compile()
        args = {"bx": np.zeros((70, 88))} if "bx" in [a.name for a in kernel.arguments] else {}
        got = np.zeros((68, 88))
        kernel(out=got, img=img, N=70, M=90, **args)
        assert np.allclose(got, want)
    print(blur_folded().layers().data)
    print(blur_staged().layers().communication)
    bad = blur_fused()
    bad.stmt("s0").parallelize("i")
    try:
        bad.check_legality()
    except spf.IllegalScheduleError as err:
        print("refused as expected:", str(err)[:100], "...")
    else:
        raise AssertionError("parallel rows of the fused blur were accepted")


def check_gemm() -> None:
    comp = gemm_tiled()
    print(f"GEMM loops: {comp.stmt(0).loops}")
    t0 = time.perf_counter()
    kernel = comp.compile()
    print(f"GEMM generated and compiled in {time.perf_counter() - t0:.2f} s")
    rng = np.random.default_rng(1)
    for n, m, k in ((100, 90, 70), (64, 64, 64), (1, 33, 9)):
        A, B, C = rng.random((n, k)), rng.random((k, m)), np.zeros((n, m))
        kernel(C=C, A=A, B=B)
        assert np.allclose(C, A @ B), (n, m, k)


def check_wave() -> None:
    A = np.arange(100, dtype=np.int64).reshape(10, 10)
    want = A.copy()
    wave(tiled=False).compile()(A=want)
    wave(tiled=True).compile()(A=A)
    assert (want == A).all()


if __name__ == "__main__":
    check_blur()
    check_gemm()
    check_wave()
    print("scheduling tutorial: OK")

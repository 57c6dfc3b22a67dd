"""The second half of ``make demo``: schedules, data layout, a format change and backends.

Each part builds a computation, schedules it with spf's commands, generates code, runs it and
checks the result against numpy or scipy (any mismatch raises):

* the two-stage blur fused with ``shift`` + ``after`` and its temporary folded to 3 rows
  (``storage_fold``: Layer III), with ``layers()`` written out;
* DGEMM tiled, interchanged and vectorized, timed against numpy (OpenBLAS at spf's thread
  count);
* CSR -> SELL-8-sigma (:mod:`spf.formats`): generated inspector and executor vs scipy;
* C imported with ``spf.from_c``: a matrix-vector loop nest, rows parallelized, vs numpy;
* the backends: HLS C simulation of a pipelined GEMM, CUDA (``nvcc`` build when present, CPU
  emulation always) of a tiled transpose, and MPI C (compiled with ``mpicc`` when present).
"""

from __future__ import annotations

import shutil
import time
from typing import TYPE_CHECKING, Any

import numpy as np

import spf
from spf import demo_timing, kernels
from spf.demo_timing import Timing, median_ms
from spf.runtime import threads

if TYPE_CHECKING:
    from pathlib import Path


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise AssertionError(f"demo: {what} differs from the reference")


def blur(out: Path) -> None:
    """Fused blur with bx folded to 3 rows: bx is no longer a kernel argument."""
    comp = kernels.blur2d()
    s_bx, s_out = comp.stmts
    s_out.shift("i", 2).after(s_bx, "i")
    s_bx.storage_fold("i", 3)
    print("two-stage blur, fused (shift + after), bx folded to 3 rows:")
    print("  " + comp.loop_structure().replace("\n", "\n  "))
    kernel = comp.compile()
    print(f"  kernel arguments: {', '.join(a.name for a in kernel.arguments)}")
    rng = np.random.default_rng(2)
    img = rng.random((301, 203))
    res = np.zeros((299, 201))
    kernel(out=res, img=img)
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    _check(np.allclose(res, (bx[:-2] + bx[1:-1] + bx[2:]) / 3), "blur")
    (out / "blur_fused.c").write_text(kernel.source)
    (out / "blur_layers.txt").write_text(str(comp.layers()) + "\n")


_IMPORTED_C = """
#define N 400
void mv(double A[N][N], double x[N], double y[N]) {
  for (int i = 0; i < N; i++) {
    y[i] = 0.0;
    for (int j = 0; j < N; j++)
      y[i] += A[i][j] * x[j];
  }
}
"""


def imported_c(out: Path) -> None:
    """A C function imported with ``spf.from_c``, its rows run in parallel, vs numpy."""
    comp = spf.from_c(_IMPORTED_C)
    for s in comp.stmts:
        s.parallelize("i")
    print("C imported with spf.from_c (y = A x), rows in parallel:")
    print("  " + comp.loop_structure().replace("\n", "\n  "))
    kernel = comp.compile()
    rng = np.random.default_rng(4)
    a, x, y = rng.random((400, 400)), rng.random(400), np.zeros(400)
    kernel(A=a, x=x, y=y)
    _check(np.allclose(y, a @ x), "imported C matrix-vector product")
    (out / "imported_mv.c").write_text(kernel.source)


def gemm() -> Timing:
    """The benchmark's DGEMM schedule (register tile, k blocking, vectors, parallel column
    tiles: :func:`spf.bench.gemm.schedule`), timed against numpy's OpenBLAS at the same
    thread count (OpenMP's)."""
    from spf.bench.gemm import CFLAGS, schedule

    comp = schedule()
    print("DGEMM scheduled with spf commands:")
    print("  " + comp.trace.as_python().replace("\n", "\n  "))
    kernel = comp.compile(cflags=CFLAGS)
    n = 512
    rng = np.random.default_rng(3)
    a, b = rng.random((n, n)), rng.random((n, n))
    c = np.zeros((n, n))
    kernel(C=c, A=a, B=b)
    _check(np.allclose(c, a @ b), "GEMM")
    ours, seen = demo_timing.recording(kernel, lambda: kernel(C=c, A=a, B=b, check=False))
    team = threads.default_team()
    # timed one after the other: OpenBLAS's spinning threads and OpenMP's slow each other
    # down badly when their calls are interleaved on few cores
    time.sleep(0.5)  # let OpenMP's worker threads stop spinning before OpenBLAS runs
    with demo_timing.blas_threads(team) as blas:
        blas_ms = median_ms({"numpy": lambda: a @ b}, repeat=7)["numpy"]
    ours_ms = median_ms({"spf": ours}, repeat=7)["spf"]
    return Timing(
        "DGEMM n = 512 (C += A B)",
        "numpy A @ B (OpenBLAS)",
        ours_ms,
        blas_ms,
        tuple(seen[1:]),
        team,
        blas,
    )


def sell_spmv(a: Any) -> list[Timing]:
    """CSR -> SELL-8-32 through spf's generated inspector; executor vs scipy."""
    from spf.formats import sell

    fmt = sell(8, 32)
    print(f"CSR -> SELL-8-32 as an SPF relation: {fmt.relation}")
    mat = fmt.inspect_matrix(a)
    kernel = fmt.scheduled_executor().compile()
    x = np.random.default_rng(4).random(a.shape[1])
    y = np.zeros(a.shape[0])
    kernel(y=y, x=x, **mat.args())
    _check(np.allclose(y, a @ x, equal_nan=True), "SELL SpMV")
    print(f"  fill ratio {mat.fill_ratio:.3f}; executor matches scipy")

    def ours() -> None:
        y[:] = 0.0
        kernel(y=y, x=x, check=False, **mat.args())

    return demo_timing.against_one_thread(
        kernel,
        "SELL-8-32 SpMV (y = A x)",
        "scipy A @ x (CSR)",
        ours,
        lambda: a @ x,
        parallel="#pragma omp parallel" in kernel.source,
    )


def backends(out: Path) -> None:
    """HLS C simulation, CUDA (nvcc + emulation) and MPI C from the same API."""
    comp = kernels.gemm()
    comp.stmt(0).interchange("j", "k").pipeline("j")
    k = comp.compile(target="hls", hls_bounds={"N": 64, "M": 64, "K": 64})
    rng = np.random.default_rng(5)
    a, b = rng.random((20, 30)), rng.random((30, 25))
    c = np.zeros((20, 25))
    k(C=c, A=a, B=b)
    _check(np.allclose(c, a @ b), "HLS C simulation of GEMM")
    (out / "gemm_hls.cpp").write_text(k.source)
    print("HLS: pipelined GEMM, C simulation matches numpy (gemm_hls.cpp)")

    t = spf.Computation("transpose")
    t.add_data_space("B", "float", shape=("N", "N"))
    t.add_data_space("A", "float", shape=("N", "N"))
    s = t.add_stmt(spf.Stmt("$B$(j,i) = $A$(i,j);", "{[i,j]: 0 <= i < N && 0 <= j < N}"))
    s.tile_gpu("i", "j", 16, 16)
    source = t.codegen("cuda")
    (out / "transpose.cu").write_text(source)
    if shutil.which("nvcc"):
        from spf.runtime.cuda import build_nvcc

        build_nvcc(source, name="transpose")
    ke = t.compile(target="cuda", emulate=True)
    m = rng.random((37, 37)).astype(np.float32)
    mt = np.zeros_like(m)
    ke(B=mt, A=m)
    _check(np.array_equal(mt, m.T), "emulated CUDA transpose")
    built = "built with nvcc, " if shutil.which("nvcc") else ""
    print(f"CUDA: tile_gpu transpose {built}emulated on the CPU: matches numpy (transpose.cu)")

    d = spf.Computation("dscale")
    d.add_data_space("a", "double", shape=(4, 8))
    st = d.add_stmt(
        spf.Stmt(
            "$a$(i,j) = 2.0 * $a$(i,j) + q;",
            "{[q,i,j]: 0 <= q < P && 0 <= i < 4 && 0 <= j < 8}",
        )
    )
    st.distribute("q")
    (out / "dscale_mpi.c").write_text(d.codegen("mpi"))
    print(
        "MPI: distributed loop bound to the rank (dscale_mpi.c; run: python -m spf.mpi -n 2 "
        "examples/mpi_blur.py)"
    )

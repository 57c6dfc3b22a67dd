"""spf's CUDA kernels on a real GPU: checked against scipy/numpy, timed against CuPy.

    python benchmarks/cuda_gpu.py            # on a machine with a CUDA GPU, nvcc and CuPy
    python benchmarks/cuda_gpu.py --emulate  # the correctness half on the CPU (no GPU)

Correctness: CSR SpMV one row per thread (int32 and int64 indices, an empty matrix, one row,
empty rows, odd sizes leaving partial blocks, the SuiteSparse matrices when present), the
tiled transpose and the shared-memory GEMM, through each route that is there: ``nvcc`` (the
whole ``.cu`` built by nvcc) and ``cupy`` (kernels by NVRTC, host part by g++ behind the
bridge).

Device arrays: the same SpMV checks with every array already on the device (CuPy arrays;
under ``--emulate``, numpy arrays behind ``__cuda_array_interface__`` and
``__array_interface__`` at the same address, as the emulator's device memory is host memory
and an emulated kernel takes nothing else), with check=True and check=False, and with host
and device arrays mixed.

Timing (GPU only; medians of interleaved repeats, so quote ratios): the kernel alone, timed
with CUDA events around each launch (spf through a CuPy runtime that records them; CuPy's
cuSPARSE SpMV, cuBLAS DGEMM and transpose copy on device-resident arrays), a whole call
from numpy arrays (spf's call allocates, copies in, launches, copies out and frees; CuPy's
the same: ``cp.asarray`` of each input, the product, ``.get()``), and a whole call on
arrays already on the device (spf's call on CuPy arrays, check=False: no allocation and no
copy, a device synchronization before and after; CuPy's ``A @ x`` and a synchronization),
wall clock per call over 20 calls back to back.
"""

from __future__ import annotations

import argparse
import importlib
import operator
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

import spf
from spf.kernels import spmv_csr
from spf.runtime.cuda import NVCC_FLAGS, gpu_arch_flags
from spf.sparse import csr_args, read_matrix_market

SUITESPARSE = Path(__file__).resolve().parents[2] / "shared" / "data" / "suitesparse"
ROWS = []  # (what, measured, competitor, ratio)


def spmv(rows_per_block: int = 128, index_dtype: str = "int32") -> spf.Computation:
    comp = spmv_csr(index_dtype=index_dtype)
    comp.stmts[0].split("i", rows_per_block, "i0", "i1").gpu(("i0",), ("i1",))
    return comp


def transpose(tile: int = 32) -> spf.Computation:
    comp = spf.Computation("transpose")
    comp.add_data_space("B", "float", shape=("N", "N"))
    comp.add_data_space("A", "float", shape=("N", "N"))
    s = comp.add_stmt(
        spf.Stmt(
            "$B$(j,i) = $A$(i,j);", "{[i,j]: 0 <= i < N && 0 <= j < N}", "{[i,j]->[0,i,0,j,0]}"
        )
    )
    s.tile_gpu("i", "j", tile, tile)
    return comp


def gemm(tile: int = 16) -> spf.Computation:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import cuda_gemm

    return cuda_gemm.build(tile)


def random_csr(
    n: int, m: int, per_row: int, rng: np.random.Generator, empty: bool = True
) -> sp.csr_array:
    lengths = rng.integers(0, 2 * per_row + 1, size=n)
    if empty and n > 4:
        lengths[:: max(n // 5, 1)] = 0
    rowptr = np.concatenate([[0], np.cumsum(lengths)])
    col = rng.integers(0, max(m, 1), size=int(rowptr[-1])) if m else np.zeros(0, np.int64)
    A = sp.csr_array((rng.standard_normal(col.size), col, rowptr), shape=(n, m))
    A.sum_duplicates()
    A.sort_indices()
    return A


def poisson(k: int) -> sp.csr_array:
    t = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(k, k))
    e = sp.eye_array(k)
    return sp.csr_array(sp.kron(t, e) + sp.kron(e, t))


class OnDevice:
    """A numpy array presented as device memory (``__cuda_array_interface__``): what the
    emulator, whose device memory is host memory, runs on in place of a CuPy array."""

    def __init__(self, host: np.ndarray[Any, Any]) -> None:
        self.host = host

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        a = self.host
        return {
            "shape": a.shape,
            "typestr": a.dtype.str,
            "data": (a.ctypes.data, False),
            "version": 3,
            "strides": None,
        }

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """The same memory as numpy sees it: an emulated kernel takes host memory only."""
        return self.host.__array_interface__


def device_kit(label: str) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """``(to_device, to_host)`` for a route: CuPy on a GPU, :class:`OnDevice` emulated."""
    if label == "emulate":
        return OnDevice, operator.attrgetter("host")
    import cupy

    return cupy.asarray, cupy.asnumpy


def check_device_arrays(
    label: str, k: Any, matrices: list[tuple[str, Any]], rng: np.random.Generator
) -> None:
    """SpMV on device arrays (all on the device, checked and not; y alone on the device)."""
    to_device, to_host = device_kit(label)
    for what, A in matrices:
        A = sp.csr_array(A)
        x = rng.standard_normal(A.shape[1])
        y0 = rng.standard_normal(A.shape[0])
        want = y0 + A @ x
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        args = csr_args(A, index_dtype="int32")
        dev = {n: to_device(v) if isinstance(v, np.ndarray) else v for n, v in args.items()}
        for check in (True, False):
            yd = to_device(y0.copy())
            k(y=yd, x=to_device(x), check=check, **dev)
            assert np.allclose(to_host(yd), want, rtol=1e-10, atol=1e-12 * scale), (
                f"SpMV {label} on device arrays, check={check}, {what}"
            )
        yd = to_device(y0.copy())
        k(y=yd, x=x, **args)
        assert np.allclose(to_host(yd), want, rtol=1e-10, atol=1e-12 * scale), (
            f"SpMV {label}, y on the device, the rest on the host, {what}"
        )
    print(f"  SpMV {label:>8} on device arrays: {len(matrices)} matrices match scipy", flush=True)


def check_routes(routes: list[dict[str, Any]]) -> None:
    rng = np.random.default_rng(7)
    matrices = [
        ("empty 0x4", random_csr(0, 4, 3, rng)),
        ("one row", random_csr(1, 9, 3, rng, empty=False)),
        ("1000x700 with empty rows", random_csr(1000, 700, 6, rng)),
        ("4099x4099 (partial block)", random_csr(4099, 4099, 9, rng)),
    ]
    if SUITESPARSE.is_dir():
        for path in sorted(SUITESPARSE.glob("*.mtx")):
            matrices.append((path.stem, read_matrix_market(path)))
    for route in routes:
        label = route["label"]
        opts = {k: v for k, v in route.items() if k != "label"}
        for index_dtype in ("int32", "int64"):
            k = spmv(128, index_dtype).compile(target="cuda", **opts)
            for what, A in matrices:
                A = sp.csr_array(A)
                x = rng.standard_normal(A.shape[1])
                y = rng.standard_normal(A.shape[0])
                want = y + A @ x
                args = csr_args(A, index_dtype=index_dtype)
                k(y=y, x=x, **args)
                scale = max(1.0, float(np.abs(want).max(initial=0.0)))
                assert np.allclose(y, want, rtol=1e-10, atol=1e-12 * scale), (
                    f"SpMV {label} {index_dtype} {what}"
                )
            print(
                f"  SpMV {label:>8} {index_dtype}: {len(matrices)} matrices match scipy", flush=True
            )
            if index_dtype == "int32":
                check_device_arrays(label, k, matrices, rng)
        t = transpose(32).compile(target="cuda", **opts)
        for n in (0, 1, 31, 33, 1000):
            A = rng.random((n, n), dtype=np.float32)
            B = np.full((n, n), np.nan, dtype=np.float32)
            t(A=A, B=B)
            assert np.array_equal(B, A.T), f"transpose {label} n={n}"
        g = gemm(16).compile(target="cuda", **opts)
        for n, m, kk in ((1, 1, 1), (37, 29, 41), (100, 130, 17)):
            A, B, C = rng.random((n, kk)), rng.random((kk, m)), np.zeros((n, m))
            g(A=A, B=B, C=C)
            np.testing.assert_allclose(C, A @ B, rtol=1e-10, err_msg=f"gemm {label}")
        print(f"  transpose and GEMM {label}: match numpy (partial tiles included)", flush=True)


def median_interleaved(fns: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    for fn in fns.values():  # warm-up
        fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            samples[name].append(fn())
    return {name: statistics.median(v) for name, v in samples.items()}


def wall(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


HAND_CSR = r"""
extern "C" __global__ void csr_scalar(int n, const int *rp, const int *ci, const double *v,
                                      const double *x, double *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double s = y[i];
    for (int k = rp[i]; k < rp[i + 1]; ++k) s += v[k] * x[ci[k]];
    y[i] = s;
  }
}
extern "C" __global__ void csr_vector(int n, const int *rp, const int *ci, const double *v,
                                      const double *x, double *y) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (row >= n) return;
  double s = 0.0;
  for (int k = rp[row] + lane; k < rp[row + 1]; k += 32) s += v[k] * x[ci[k]];
  for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
  if (lane == 0) y[row] += s;
}
"""


class Gpu:
    """CuPy (and torch, for its cuSPARSE SpMV) with CUDA-event timers; ``timed`` is a GPU
    runtime for spf kernels that records events around each launch."""

    def __init__(self) -> None:
        import cupy

        from spf.runtime.gpu import CupyRuntime

        self.cp: Any = cupy
        cp = cupy

        class Timed(CupyRuntime):
            def __init__(self) -> None:
                super().__init__()
                self.events: list[tuple[Any, Any, int]] = []
                self.repeat = 1

            def launch(
                self, module: Any, kernel: str, grid: Any, block: Any, args: Any, params: int
            ) -> None:
                start, end = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                for _ in range(self.repeat):  # back to back, like the other kernels' timings
                    super().launch(module, kernel, grid, block, args, params)
                end.record()
                self.events.append((start, end, self.repeat))

            def take(self) -> float:
                cp.cuda.runtime.deviceSynchronize()
                total = sum(cp.cuda.get_elapsed_time(s, e) / r for s, e, r in self.events) / 1e3
                self.events.clear()
                return float(total)

        self.timed = Timed()
        self.hand = cp.RawModule(code=HAND_CSR)
        try:
            import torch

            self.torch: Any = torch if torch.cuda.is_available() else None
        except ImportError:
            self.torch = None

    def events(self, fn: Callable[[], object], times: int = 1) -> float:
        """Seconds per call of ``fn`` run ``times`` times back to back between two events."""
        start, end = self.cp.cuda.Event(), self.cp.cuda.Event()
        start.record()
        for _ in range(times):
            fn()
        end.record()
        end.synchronize()
        return float(self.cp.cuda.get_elapsed_time(start, end)) / 1e3 / times

    def spf_kernel(self, kernel: Any, repeat: int = 20, **args: Any) -> float:
        """Seconds per launch of an spf kernel's launches, each run ``repeat`` times back to
        back (outputs are then wrong: timing only)."""
        self.timed.repeat = repeat
        try:
            kernel(
                **{k: (v.copy() if k in ("y", "C") else v) for k, v in args.items()}, check=False
            )
        finally:
            self.timed.repeat = 1
        return self.timed.take()


def spmv_rows(
    gpu: Gpu, what: str, matrix: sp.csr_array, repeats: int, rng: np.random.Generator
) -> None:
    A = matrix
    cp, csp = gpu.cp, importlib.import_module("cupyx.scipy.sparse")
    n = A.shape[0]
    args = csr_args(A, index_dtype="int32")
    x, y0 = rng.standard_normal(A.shape[1]), rng.standard_normal(n)
    want = y0 + A @ x
    Ad = csp.csr_matrix(
        (cp.asarray(A.data), cp.asarray(A.indices), cp.asarray(A.indptr)), shape=A.shape
    )
    xd, yd = cp.asarray(x), cp.asarray(y0)
    kernels = {rpb: spmv(rpb).compile(target="cuda", gpu=gpu.timed) for rpb in (32, 128, 256)}
    nvcc = spmv(128).compile(target="cuda", gpu="nvcc")
    y = y0.copy()
    kernels[128](y=y, x=x, **args, check=False)
    gpu.timed.take()
    assert np.allclose(y, want)
    scalar, vector = gpu.hand.get_function("csr_scalar"), gpu.hand.get_function("csr_vector")
    hand_args = (np.int32(n), Ad.indptr, Ad.indices, Ad.data, xd, yd)
    fns: dict[str, Callable[[], float]] = {
        f"spf kernel, {rpb} rows/block": partial(gpu.spf_kernel, k, y=y0, x=x, **args)
        for rpb, k in kernels.items()
    }
    fns["hand CUDA scalar CSR"] = partial(
        gpu.events, lambda: scalar(((n + 127) // 128,), (128,), hand_args), 20
    )
    fns["hand CUDA vector CSR"] = partial(
        gpu.events, lambda: vector(((32 * n + 127) // 128,), (128,), hand_args), 20
    )
    fns["CuPy A @ x (cuSPARSE), 1 call"] = partial(gpu.events, lambda: Ad @ xd, 1)
    fns["CuPy A @ x, 20 back to back"] = partial(gpu.events, lambda: Ad @ xd, 20)
    if gpu.torch is not None:
        t = gpu.torch
        At = t.sparse_csr_tensor(
            t.as_tensor(A.indptr, device="cuda"),
            t.as_tensor(A.indices, device="cuda"),
            t.as_tensor(A.data, device="cuda"),
            size=A.shape,
        )
        xt = t.as_tensor(x, device="cuda")
        assert np.allclose(t.mv(At, xt).cpu().numpy() + y0, want)
        fns["torch.mv (cuSPARSE), 20 back to back"] = partial(gpu.events, lambda: t.mv(At, xt), 20)

    def cupy_call() -> None:
        M = csp.csr_matrix(
            (cp.asarray(A.data), cp.asarray(A.indices), cp.asarray(A.indptr)), shape=A.shape
        )
        _ = cp.asnumpy(M @ cp.asarray(x)) + y0

    fns["spf call from numpy (nvcc)"] = partial(
        wall, lambda: nvcc(y=y0.copy(), x=x, **args, check=False)
    )
    fns["CuPy call from numpy"] = partial(wall, cupy_call)
    # arrays already on the device: spf's call uses them in place (no allocation, no copy)
    on_device = {n: cp.asarray(v) if isinstance(v, np.ndarray) else v for n, v in args.items()}
    yd_check = cp.asarray(y0)
    nvcc(y=yd_check, x=xd, **on_device)  # check=True: the index arrays copied for the check
    assert np.allclose(cp.asnumpy(yd_check), want), f"SpMV {what} on device arrays"
    y_dev = cp.asarray(y0)  # accumulates over the timing calls: timing only

    def device_calls(fn: Callable[[], object], times: int = 20) -> float:
        cp.cuda.runtime.deviceSynchronize()
        t0 = time.perf_counter()
        for _ in range(times):
            fn()
        cp.cuda.runtime.deviceSynchronize()
        return (time.perf_counter() - t0) / times

    fns["spf call on device arrays (nvcc)"] = partial(
        device_calls, lambda: nvcc(y=y_dev, x=xd, **on_device, check=False)
    )
    fns["CuPy A @ x on device, synchronized"] = partial(device_calls, lambda: Ad @ xd)
    med = median_interleaved(fns, repeats)
    nbytes = A.nnz * 12 + n * (4 + 16) + A.shape[1] * 8
    print(f"\nSpMV {what}: {n} rows, {A.nnz} nonzeros (at least {nbytes / 1e6:.0f} MB moved)")
    for name, sec in med.items():
        print(f"  {name:<40} {sec * 1e3:9.3f} ms  {nbytes / sec / 1e9:7.1f} GB/s")
    best = min(med[f"spf kernel, {rpb} rows/block"] for rpb in kernels)
    cusparse = med.get("torch.mv (cuSPARSE), 20 back to back", med["CuPy A @ x, 20 back to back"])
    ROWS.append((f"SpMV {what}: kernel vs cuSPARSE", best, cusparse))
    ROWS.append((f"SpMV {what}: kernel vs hand scalar CSR", best, med["hand CUDA scalar CSR"]))
    ROWS.append(
        (
            f"SpMV {what}: call from numpy",
            med["spf call from numpy (nvcc)"],
            med["CuPy call from numpy"],
        )
    )
    ROWS.append(
        (
            f"SpMV {what}: call on device arrays",
            med["spf call on device arrays (nvcc)"],
            med["CuPy A @ x on device, synchronized"],
        )
    )


def gemm_rows(gpu: Gpu, repeats: int, rng: np.random.Generator) -> None:
    kernels = {tile: gemm(tile).compile(target="cuda", gpu=gpu.timed) for tile in (16, 32)}
    for n in (1024, 2048):
        A, B = rng.random((n, n)), rng.random((n, n))
        Ad, Bd = gpu.cp.asarray(A), gpu.cp.asarray(B)
        C = np.zeros((n, n))
        kernels[16](A=A, B=B, C=C, check=False)
        gpu.timed.take()
        np.testing.assert_allclose(C, A @ B, rtol=1e-9)
        zeros = np.zeros((n, n))
        fns: dict[str, Callable[[], float]] = {
            f"spf kernel, tile {tile}": partial(gpu.spf_kernel, k, A=A, B=B, C=zeros)
            for tile, k in kernels.items()
        }
        fns["CuPy A @ B (cuBLAS DGEMM)"] = partial(gpu.events, partial(operator.matmul, Ad, Bd), 5)
        med = median_interleaved(fns, max(repeats // 2, 3))
        print(f"\nDGEMM {n}^3:")
        for name, sec in med.items():
            print(f"  {name:<40} {sec * 1e3:9.3f} ms  {2 * n**3 / sec / 1e12:7.2f} TFLOP/s")
        best = min(med[f"spf kernel, tile {tile}"] for tile in kernels)
        ROWS.append((f"DGEMM {n}: kernel vs cuBLAS", best, med["CuPy A @ B (cuBLAS DGEMM)"]))


def transpose_rows(gpu: Gpu, repeats: int, rng: np.random.Generator) -> None:
    kernels = {tile: transpose(tile).compile(target="cuda", gpu=gpu.timed) for tile in (16, 32)}
    n = 8192
    A = rng.random((n, n), dtype=np.float32)
    Ad = gpu.cp.asarray(A)
    B = np.zeros_like(A)
    kernels[32](A=A, B=B, check=False)
    gpu.timed.take()
    assert np.array_equal(B, A.T)
    fns: dict[str, Callable[[], float]] = {
        f"spf kernel, tile {tile}": partial(gpu.spf_kernel, k, A=A, B=B)
        for tile, k in kernels.items()
    }
    fns["CuPy ascontiguousarray(A.T)"] = partial(
        gpu.events, lambda: gpu.cp.ascontiguousarray(Ad.T), 5
    )
    med = median_interleaved(fns, repeats)
    print(f"\ntranspose float32 {n}^2:")
    for name, sec in med.items():
        print(f"  {name:<40} {sec * 1e3:9.3f} ms  {8 * n * n / sec / 1e9:7.1f} GB/s")
    best = min(med[f"spf kernel, tile {tile}"] for tile in kernels)
    ROWS.append((f"transpose {n}: kernel vs CuPy", best, med["CuPy ascontiguousarray(A.T)"]))


def first_call_rows(rng: np.random.Generator) -> None:
    """Build (nvcc, empty cache) and first call of a kernel nobody built before in this run:
    nvcc's default target (PTX compiled by the driver at load) against spf's default, which
    adds the GPU's own target (``spf.runtime.cuda.gpu_arch_flags``)."""
    A = poisson(300)
    args = csr_args(A, index_dtype="int32")
    x = rng.standard_normal(A.shape[1])
    print(
        f"\nCold build and first call (SpMV, fresh spf cache; GPU target flags: {gpu_arch_flags()}):"
    )
    for rpb, label, flags in (
        (64, "no GPU target (PTX)", list(NVCC_FLAGS)),
        (96, "spf's default flags", None),
    ):
        with tempfile.TemporaryDirectory() as cache:
            comp = spmv(rpb)
            t0 = time.perf_counter()
            k = comp.compile(target="cuda", gpu="nvcc", nvcc_flags=flags, cache_dir=cache)
            t1 = time.perf_counter()
            k(y=np.zeros(A.shape[0]), x=x, **args)
            t2 = time.perf_counter()
            k(y=np.zeros(A.shape[0]), x=x, **args)
            t3 = time.perf_counter()
        print(
            f"  {label:<22} compile {t1 - t0:6.2f} s, first call {(t2 - t1) * 1e3:7.1f} ms, "
            f"second call {(t3 - t2) * 1e3:6.1f} ms"
        )


def bench(quick: bool) -> None:
    gpu = Gpu()
    repeats = 5 if quick else 11
    rng = np.random.default_rng(3)
    for what, A in (
        ("Poisson 1000^2", poisson(1000)),
        ("random 200k rows, ~10/row", random_csr(200_000, 200_000, 10, rng, empty=False)),
        ("random 2M rows, ~16/row", random_csr(2_000_000, 2_000_000, 16, rng, empty=False)),
    ):
        spmv_rows(gpu, what, sp.csr_array(A), repeats, rng)
    gemm_rows(gpu, repeats, rng)
    transpose_rows(gpu, repeats, rng)
    first_call_rows(rng)
    print("\n| What | spf | other | spf / other |\n|---|---|---|---|")
    for what, mine, theirs in ROWS:
        print(f"| {what} | {mine * 1e3:.3f} ms | {theirs * 1e3:.3f} ms | {mine / theirs:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--emulate", action="store_true", help="check on the CPU only")
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-bench", action="store_true", help="checks only")
    a = parser.parse_args()
    if a.emulate:
        check_routes([{"label": "emulate", "emulate": True}])
        return
    smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    print(smi.stdout.strip() or smi.stderr.strip())
    print(f"nvcc: {os.popen('nvcc --version | tail -2').read().strip()}")
    t0 = time.perf_counter()
    check_routes([{"label": "nvcc", "gpu": "nvcc"}, {"label": "cupy", "gpu": "cupy"}])
    print(f"checks took {time.perf_counter() - t0:.1f} s", flush=True)
    if not a.no_bench:
        bench(a.quick)


if __name__ == "__main__":
    main()

"""MKL's sparse inspector-executor SpMV and triangular solve through ctypes (``pip install
mkl``), when installed.

``mkl_sparse_d_create_csr`` on the caller's CSR arrays, ``mkl_sparse_set_mv_hint`` (many
calls expected) and ``mkl_sparse_optimize`` (the inspector), then ``mkl_sparse_d_mv`` with
``alpha = beta = 1`` (``y += A·x``, the executor). MKL is switched to its GNU threading layer
first, so it runs on the same libgomp as spf's kernels; its thread count is set with
``MKL_Set_Num_Threads``. ``sparse_dot_mkl`` is not used: it rebuilds the handle on every call,
which is not the inspector-executor interface this comparison is about.

What the inspector builds, from the bytes MKL allocates for the handle (``MKL_Mem_Stat``
around create + optimize, :attr:`MklCsr.handle_bytes`; oneMKL 2026.2): about 24 bytes per
nonzero plus 5 per row for a general matrix (two copies of values and 4-byte column
indices), but about 20.5 per nonzero for a matrix whose entries lie on diagonals (Poisson:
21.4): one of the two copies drops the column indices. The diagonals are found per small
block of rows, not for the whole matrix: rows 0..N/2 on offsets {0, +-1, +-1000} and the
rest on {0, +-2, +-2000}, or the two patterns alternating every 100 rows, cost the same
bytes per nonzero as one set of five diagonals (whole-matrix DIA would store ten). Entries
jittered off the diagonals by up to 3 columns take 24.9 bytes per nonzero again (no
diagonal copy); with 40% of the diagonals' entries dropped, 13.4 (one copy with indices).
The speed follows the bytes: on 1M-row matrices with five entries per row, MKL IE's time
over the hand-written CSR loop's (1 thread, medians of interleaved runs, noisy machine) was
0.83 on Poisson and 0.79 on the two-halves matrix, but 0.96-0.99 with the entries
jittered and 0.90-0.95 on five random columns per row within the band: the diagonal copy
is why MKL IE beats CSR on Poisson (8 bytes read per entry instead of 12), not prefetching
or a better CSR loop. ``spf.formats.BDIA(R)`` is that representation as a spf format.

:class:`MklTrsv`: a lower-triangular CSR matrix (diagonal stored) described as triangular,
lower, non-unit, ``mkl_sparse_set_sv_hint`` then ``mkl_sparse_optimize`` (the inspector), then
``mkl_sparse_d_trsv`` (``L·u = f``, the executor).
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import time
from collections.abc import Callable
from typing import Any

_NON_TRANSPOSE = 10
_GENERAL = 20
_TRIANGULAR = 23
_LOWER = 40
_NON_UNIT = 50
_LAYER_GNU = 3  # MKL_THREADING_GNU (0 Intel, 1 sequential, 2 PGI)


class _Descr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("mode", ctypes.c_int), ("diag", ctypes.c_int)]


def mkl_bytes(lib: Any) -> int:
    """Bytes MKL's memory manager holds now (``MKL_Mem_Stat``): the difference around
    ``mkl_sparse_optimize`` is the size of what the inspector built."""
    lib.MKL_Mem_Stat.restype = ctypes.c_int64
    buffers = ctypes.c_int()
    return int(lib.MKL_Mem_Stat(ctypes.byref(buffers)))


def load_mkl() -> tuple[Any, str] | tuple[None, str]:
    """(libmkl_rt, where) or (None, why not)."""
    lib_dir = os.path.join(sys.prefix, "lib")
    names = [os.path.join(lib_dir, "libmkl_rt.so.3"), os.path.join(lib_dir, "libmkl_rt.so"),
             "libmkl_rt.so.3", "libmkl_rt.so"]  # fmt: skip
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.MKL_Set_Threading_Layer(_LAYER_GNU)
        return lib, name
    return None, "libmkl_rt not found (pip install mkl)"


class MklCsr:
    """One CSR matrix (int32 indices) as an optimized MKL handle."""

    def __init__(self, lib: Any, args: dict[str, Any], calls: int = 1000) -> None:
        self.lib = lib
        n, m = int(args["N"]), int(args["M"])
        self.keep = (args["rowptr"], args["col"], args["A"])
        rp, col, a = self.keep
        if rp.dtype.itemsize != 4 or col.dtype.itemsize != 4:
            raise ValueError("MKL LP64 interface needs int32 indices")
        p_int = ctypes.POINTER(ctypes.c_int32)
        self.handle = ctypes.c_void_p()
        self.descr = _Descr(_GENERAL, 0, 0)
        before = mkl_bytes(lib)
        rp_p = rp.ctypes.data_as(p_int)
        end_p = ctypes.cast(rp.ctypes.data + 4, p_int)
        status = lib.mkl_sparse_d_create_csr(
            ctypes.byref(self.handle), 0, n, m, rp_p, end_p, col.ctypes.data_as(p_int),
            a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
        )  # fmt: skip
        self._ok(status, "create_csr")
        t0 = time.perf_counter()
        self._ok(lib.mkl_sparse_set_mv_hint(self.handle, _NON_TRANSPOSE, self.descr, calls), "hint")
        self._ok(lib.mkl_sparse_optimize(self.handle), "optimize")
        self.optimize_s = time.perf_counter() - t0
        self.handle_bytes = mkl_bytes(lib) - before
        """What MKL allocated for the handle and its optimized form (bytes)."""
        lib.mkl_sparse_d_mv.argtypes = [
            ctypes.c_int, ctypes.c_double, ctypes.c_void_p, _Descr,
            ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p,
        ]  # fmt: skip

    @staticmethod
    def _ok(status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"MKL {what} failed with status {status}")

    def mv(self, x: Any, y: Any) -> None:
        """``y += A·x``."""
        status = self.lib.mkl_sparse_d_mv(
            _NON_TRANSPOSE, 1.0, self.handle, self.descr, x.ctypes.data, 1.0, y.ctypes.data
        )
        if status != 0:
            self._ok(status, "d_mv")

    def bound_mv(self, x: Any, y: Any) -> Callable[[], int]:
        """``y += A·x`` on these two arrays as a call of no arguments returning MKL's status:
        the C function with its arguments converted once (a Python caller's cheapest call,
        so that a comparison times MKL, not ``x.ctypes.data`` and ctypes' conversions)."""
        return functools.partial(
            self.lib.mkl_sparse_d_mv, _NON_TRANSPOSE, 1.0, self.handle, self.descr,
            x.ctypes.data, 1.0, y.ctypes.data,
        )  # fmt: skip

    def warm_up(self, x: Any, y: Any, calls: int = 1000) -> float:
        """Run the executor ``calls`` times (``y`` is overwritten with sums); returns the
        seconds taken. MKL's first calls on a handle can be slow: on the loaded 2-core
        machine (2026-11-29) the first ~550 calls on ``west0067`` (299 entries) took 32 ms
        each, the rest 3.8 us, while ``karate`` ran 4 us from the first call; a comparison
        with MKL's executor times it after these calls (the hint's count by default)."""
        t0 = time.perf_counter()
        for _ in range(calls):
            self.mv(x, y)
        return time.perf_counter() - t0

    def close(self) -> None:
        if self.handle:
            self.lib.mkl_sparse_destroy(self.handle)
            self.handle = ctypes.c_void_p()


class MklTrsv:
    """One lower-triangular CSR matrix (int32 indices, diagonal stored) as an MKL handle
    optimized for triangular solves."""

    def __init__(self, lib: Any, args: dict[str, Any], calls: int = 1000) -> None:
        self.lib = lib
        n = int(args["N"])
        self.keep = (args["rowptr"], args["col"], args["L"])
        rp, col, a = self.keep
        if rp.dtype.itemsize != 4 or col.dtype.itemsize != 4:
            raise ValueError("MKL LP64 interface needs int32 indices")
        p_int = ctypes.POINTER(ctypes.c_int32)
        self.handle = ctypes.c_void_p()
        self.descr = _Descr(_TRIANGULAR, _LOWER, _NON_UNIT)
        status = lib.mkl_sparse_d_create_csr(
            ctypes.byref(self.handle), 0, n, n, rp.ctypes.data_as(p_int),
            ctypes.cast(rp.ctypes.data + 4, p_int), col.ctypes.data_as(p_int),
            a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
        )  # fmt: skip
        MklCsr._ok(status, "create_csr")
        t0 = time.perf_counter()
        MklCsr._ok(lib.mkl_sparse_set_sv_hint(self.handle, _NON_TRANSPOSE, self.descr, calls),
                   "sv hint")  # fmt: skip
        MklCsr._ok(lib.mkl_sparse_optimize(self.handle), "optimize")
        self.optimize_s = time.perf_counter() - t0
        lib.mkl_sparse_d_trsv.argtypes = [
            ctypes.c_int, ctypes.c_double, ctypes.c_void_p, _Descr, ctypes.c_void_p,
            ctypes.c_void_p,
        ]  # fmt: skip

    def solve(self, f: Any, u: Any) -> None:
        """``u = L^-1 f``."""
        status = self.lib.mkl_sparse_d_trsv(
            _NON_TRANSPOSE, 1.0, self.handle, self.descr, f.ctypes.data, u.ctypes.data
        )
        if status != 0:
            MklCsr._ok(status, "d_trsv")

    def bound_solve(self, f: Any, u: Any) -> Callable[[], int]:
        """``u = L^-1 f`` on these two arrays as a call of no arguments returning MKL's
        status (:meth:`MklCsr.bound_mv`)."""
        return functools.partial(
            self.lib.mkl_sparse_d_trsv, _NON_TRANSPOSE, 1.0, self.handle, self.descr,
            f.ctypes.data, u.ctypes.data,
        )  # fmt: skip

    def close(self) -> None:
        if self.handle:
            self.lib.mkl_sparse_destroy(self.handle)
            self.handle = ctypes.c_void_p()

"""PolyBench linear-algebra BLAS kernels: gemm, gemver, gesummv, symm, syr2k, syrk, trmm."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from spf.bench.polybench.kernel import Args, Kernel, computation, grid

if TYPE_CHECKING:
    import spf


def gemm() -> spf.Computation:
    """``C = alpha*A*B + beta*C``."""
    return computation(
        "gemm",
        {"C": ("NI", "NJ"), "A": ("NI", "NK"), "B": ("NK", "NJ")},
        [
            ("$C$(i, j) *= beta;", "[i,j]: 0 <= i < NI && 0 <= j < NJ", "[0,i,0,j,0,0,0]"),
            (
                "$C$(i, j) += alpha * $A$(i, k) * $B$(k, j);",
                "[i,k,j]: 0 <= i < NI && 0 <= k < NK && 0 <= j < NJ",
                "[0,i,1,k,0,j,0]",
            ),
        ],
        constants=("alpha", "beta"),
    )


def _gemm_in(s: Mapping[str, int]) -> Args:
    ni, nj, nk = s["NI"], s["NJ"], s["NK"]
    return {"alpha": 1.5, "beta": 1.2, "C": grid((ni, nj), 1), "A": grid((ni, nk), 2),
            "B": grid((nk, nj), 3)}  # fmt: skip


def _gemm_ref(a: Args) -> None:
    C, A, B, alpha, beta = a["C"], a["A"], a["B"], a["alpha"], a["beta"]
    for i in range(a["NI"]):
        for j in range(a["NJ"]):
            C[i, j] *= beta
        for k in range(a["NK"]):
            for j in range(a["NJ"]):
                C[i, j] += alpha * A[i, k] * B[k, j]


def gemver() -> spf.Computation:
    """Vector multiplication and matrix addition."""
    nn = "0 <= i < N && 0 <= j < N"
    return computation(
        "gemver",
        {n: ("N", "N") if n == "A" else ("N",)
         for n in ("A", "u1", "v1", "u2", "v2", "w", "x", "y", "z")},
        [
            ("$A$(i, j) = $A$(i, j) + $u1$(i) * $v1$(j) + $u2$(i) * $v2$(j);", f"[i,j]: {nn}",
             "[0,i,0,j,0]"),
            ("$x$(i) = $x$(i) + beta * $A$(j, i) * $y$(j);", f"[i,j]: {nn}", "[1,i,0,j,0]"),
            ("$x$(i) = $x$(i) + $z$(i);", "[i]: 0 <= i < N", "[2,i,0,0,0]"),
            ("$w$(i) = $w$(i) + alpha * $A$(i, j) * $x$(j);", f"[i,j]: {nn}", "[3,i,0,j,0]"),
        ],
        constants=("alpha", "beta"),
    )  # fmt: skip


def _gemver_in(s: Mapping[str, int]) -> Args:
    n = s["N"]
    args: Args = {"alpha": 1.5, "beta": 1.2, "A": grid((n, n), 1)}
    for k, name in enumerate(("u1", "v1", "u2", "v2", "w", "x", "y", "z")):
        args[name] = grid((n,), k + 2)
    return args


def _gemver_ref(a: Args) -> None:
    n, A, x, w = a["N"], a["A"], a["x"], a["w"]
    u1, v1, u2, v2, y, z = (a[k] for k in ("u1", "v1", "u2", "v2", "y", "z"))
    for i in range(n):
        for j in range(n):
            A[i, j] = A[i, j] + u1[i] * v1[j] + u2[i] * v2[j]
    for i in range(n):
        for j in range(n):
            x[i] = x[i] + a["beta"] * A[j, i] * y[j]
    for i in range(n):
        x[i] = x[i] + z[i]
    for i in range(n):
        for j in range(n):
            w[i] = w[i] + a["alpha"] * A[i, j] * x[j]


def gesummv() -> spf.Computation:
    """``y = alpha*A*x + beta*B*x`` through ``tmp``."""
    return computation(
        "gesummv",
        {"A": ("N", "N"), "B": ("N", "N"), "tmp": ("N",), "x": ("N",), "y": ("N",)},
        [
            ("$tmp$(i) = 0.0;", "[i]: 0 <= i < N", "[0,i,0,0,0]"),
            ("$y$(i) = 0.0;", "[i]: 0 <= i < N", "[0,i,1,0,0]"),
            ("$tmp$(i) = $A$(i, j) * $x$(j) + $tmp$(i);", "[i,j]: 0 <= i < N && 0 <= j < N",
             "[0,i,2,j,0]"),
            ("$y$(i) = $B$(i, j) * $x$(j) + $y$(i);", "[i,j]: 0 <= i < N && 0 <= j < N",
             "[0,i,2,j,1]"),
            ("$y$(i) = alpha * $tmp$(i) + beta * $y$(i);", "[i]: 0 <= i < N", "[0,i,3,0,0]"),
        ],
        constants=("alpha", "beta"),
    )  # fmt: skip


def _gesummv_in(s: Mapping[str, int]) -> Args:
    n = s["N"]
    return {"alpha": 1.5, "beta": 1.2, "A": grid((n, n), 1), "B": grid((n, n), 2),
            "tmp": grid((n,), 3), "x": grid((n,), 4), "y": grid((n,), 5)}  # fmt: skip


def _gesummv_ref(a: Args) -> None:
    A, B, tmp, x, y = a["A"], a["B"], a["tmp"], a["x"], a["y"]
    for i in range(a["N"]):
        tmp[i] = 0.0
        y[i] = 0.0
        for j in range(a["N"]):
            tmp[i] = A[i, j] * x[j] + tmp[i]
            y[i] = B[i, j] * x[j] + y[i]
        y[i] = a["alpha"] * tmp[i] + a["beta"] * y[i]


def symm() -> spf.Computation:
    """``C = alpha*A*B + beta*C``, ``A`` symmetric (lower half stored), through ``temp2``."""
    mn = "0 <= i < M && 0 <= j < N"
    return computation(
        "symm",
        {"C": ("M", "N"), "A": ("M", "M"), "B": ("M", "N")},
        [
            ("$temp2$ = 0.0;", f"[i,j]: {mn}", "[0,i,0,j,0,0,0]"),
            ("$C$(k, j) += alpha * $B$(i, j) * $A$(i, k);", f"[i,j,k]: {mn} && 0 <= k < i",
             "[0,i,0,j,1,k,0]"),
            ("$temp2$ += $B$(k, j) * $A$(i, k);", f"[i,j,k]: {mn} && 0 <= k < i",
             "[0,i,0,j,1,k,1]"),
            ("$C$(i, j) = beta * $C$(i, j) + alpha * $B$(i, j) * $A$(i, i) + alpha * $temp2$;",
             f"[i,j]: {mn}", "[0,i,0,j,2,0,0]"),
        ],
        constants=("alpha", "beta"),
        local={"temp2": ()},
    )  # fmt: skip


def _symm_in(s: Mapping[str, int]) -> Args:
    m, n = s["M"], s["N"]
    return {"alpha": 1.5, "beta": 1.2, "C": grid((m, n), 1), "A": grid((m, m), 2),
            "B": grid((m, n), 3)}  # fmt: skip


def _symm_ref(a: Args) -> None:
    C, A, B, alpha, beta = a["C"], a["A"], a["B"], a["alpha"], a["beta"]
    for i in range(a["M"]):
        for j in range(a["N"]):
            temp2 = 0.0
            for k in range(i):
                C[k, j] += alpha * B[i, j] * A[i, k]
                temp2 += B[k, j] * A[i, k]
            C[i, j] = beta * C[i, j] + alpha * B[i, j] * A[i, i] + alpha * temp2


def syr2k() -> spf.Computation:
    """``C = alpha*A*B^T + alpha*B*A^T + beta*C`` on the lower triangle."""
    return computation(
        "syr2k",
        {"C": ("N", "N"), "A": ("N", "M"), "B": ("N", "M")},
        [
            ("$C$(i, j) *= beta;", "[i,j]: 0 <= i < N && 0 <= j <= i", "[0,i,0,j,0,0,0]"),
            ("$C$(i, j) += $A$(j, k) * alpha * $B$(i, k) + $B$(j, k) * alpha * $A$(i, k);",
             "[i,k,j]: 0 <= i < N && 0 <= k < M && 0 <= j <= i", "[0,i,1,k,0,j,0]"),
        ],
        constants=("alpha", "beta"),
    )  # fmt: skip


def _syr2k_in(s: Mapping[str, int]) -> Args:
    n, m = s["N"], s["M"]
    return {"alpha": 1.5, "beta": 1.2, "C": grid((n, n), 1), "A": grid((n, m), 2),
            "B": grid((n, m), 3)}  # fmt: skip


def _syr2k_ref(a: Args) -> None:
    C, A, B, alpha, beta = a["C"], a["A"], a["B"], a["alpha"], a["beta"]
    for i in range(a["N"]):
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(a["M"]):
            for j in range(i + 1):
                C[i, j] += A[j, k] * alpha * B[i, k] + B[j, k] * alpha * A[i, k]


def syrk() -> spf.Computation:
    """``C = alpha*A*A^T + beta*C`` on the lower triangle."""
    return computation(
        "syrk",
        {"C": ("N", "N"), "A": ("N", "M")},
        [
            ("$C$(i, j) *= beta;", "[i,j]: 0 <= i < N && 0 <= j <= i", "[0,i,0,j,0,0,0]"),
            ("$C$(i, j) += alpha * $A$(i, k) * $A$(j, k);",
             "[i,k,j]: 0 <= i < N && 0 <= k < M && 0 <= j <= i", "[0,i,1,k,0,j,0]"),
        ],
        constants=("alpha", "beta"),
    )  # fmt: skip


def _syrk_in(s: Mapping[str, int]) -> Args:
    n, m = s["N"], s["M"]
    return {"alpha": 1.5, "beta": 1.2, "C": grid((n, n), 1), "A": grid((n, m), 2)}


def _syrk_ref(a: Args) -> None:
    C, A, alpha, beta = a["C"], a["A"], a["alpha"], a["beta"]
    for i in range(a["N"]):
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(a["M"]):
            for j in range(i + 1):
                C[i, j] += alpha * A[i, k] * A[j, k]


def trmm() -> spf.Computation:
    """``B = alpha*A^T*B``, ``A`` unit lower triangular."""
    mn = "0 <= i < M && 0 <= j < N"
    return computation(
        "trmm",
        {"A": ("M", "M"), "B": ("M", "N")},
        [
            ("$B$(i, j) += $A$(k, i) * $B$(k, j);", f"[i,j,k]: {mn} && i < k < M",
             "[0,i,0,j,0,k,0]"),
            ("$B$(i, j) = alpha * $B$(i, j);", f"[i,j]: {mn}", "[0,i,0,j,1,0,0]"),
        ],
        constants=("alpha",),
    )  # fmt: skip


def _trmm_in(s: Mapping[str, int]) -> Args:
    m, n = s["M"], s["N"]
    return {"alpha": 1.5, "A": grid((m, m), 1), "B": grid((m, n), 2)}


def _trmm_ref(a: Args) -> None:
    A, B = a["A"], a["B"]
    for i in range(a["M"]):
        for j in range(a["N"]):
            for k in range(i + 1, a["M"]):
                B[i, j] += A[k, i] * B[k, j]
            B[i, j] = a["alpha"] * B[i, j]


KERNELS = (
    Kernel("gemm", gemm, _gemm_in, _gemm_ref, ("C",), {"NI": 5, "NJ": 7, "NK": 9}),
    Kernel("gemver", gemver, _gemver_in, _gemver_ref, ("A", "w", "x"), {"N": 7}),
    Kernel("gesummv", gesummv, _gesummv_in, _gesummv_ref, ("tmp", "y"), {"N": 7}),
    Kernel("symm", symm, _symm_in, _symm_ref, ("C",), {"M": 5, "N": 7}),
    Kernel("syr2k", syr2k, _syr2k_in, _syr2k_ref, ("C",), {"N": 7, "M": 5}),
    Kernel("syrk", syrk, _syrk_in, _syrk_ref, ("C",), {"N": 7, "M": 5}),
    Kernel("trmm", trmm, _trmm_in, _trmm_ref, ("B",), {"M": 5, "N": 7}),
)

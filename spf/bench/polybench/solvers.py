"""PolyBench linear-algebra solvers: cholesky, durbin, gramschmidt, lu, ludcmp, trisolv."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from spf.bench.deps import ludcmp
from spf.bench.polybench.kernel import Args, Kernel, computation, grid

if TYPE_CHECKING:
    import spf


def _spd(n: int) -> np.ndarray:
    """A symmetric positive definite ``n x n`` matrix: ``M*M^T + n*I``."""
    m = grid((n, n), 1)
    return np.ascontiguousarray(m @ m.T + n * np.eye(n))


def _dominant(n: int, k: int) -> np.ndarray:
    """A diagonally dominant ``n x n`` matrix (LU without pivoting is stable)."""
    return np.ascontiguousarray(grid((n, n), k) + n * np.eye(n))


def cholesky() -> spf.Computation:
    """In-place Cholesky factorisation of the lower triangle of ``A``."""
    return computation(
        "cholesky",
        {"A": ("N", "N")},
        [
            ("$A$(i, j) -= $A$(i, k) * $A$(j, k);",
             "[i,j,k]: 0 <= i < N && 0 <= j < i && 0 <= k < j", "[0,i,0,j,0,k,0]"),
            ("$A$(i, j) = $A$(i, j) / $A$(j, j);", "[i,j]: 0 <= i < N && 0 <= j < i",
             "[0,i,0,j,1,0,0]"),
            ("$A$(i, i) -= $A$(i, k) * $A$(i, k);", "[i,k]: 0 <= i < N && 0 <= k < i",
             "[0,i,1,k,0,0,0]"),
            ("$A$(i, i) = sqrt($A$(i, i));", "[i]: 0 <= i < N", "[0,i,2,0,0,0,0]"),
        ],
    )  # fmt: skip


def _cholesky_ref(a: Args) -> None:
    A = a["A"]
    for i in range(a["N"]):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[j, k]
            A[i, j] = A[i, j] / A[j, j]
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = np.sqrt(A[i, i])


def durbin() -> spf.Computation:
    """Levinson-Durbin: solve the Toeplitz system of ``r`` into ``y``; scalars ``alpha``,
    ``beta``, ``sum`` and the row ``z`` are locals."""
    kk = "1 <= k < N"
    return computation(
        "durbin",
        {"r": ("N",), "y": ("N",)},
        [
            ("$y$(0) = -$r$(0);", "[]", "[0,0,0,0,0]"),
            ("$beta$ = 1.0;", "[]", "[1,0,0,0,0]"),
            ("$alpha$ = -$r$(0);", "[]", "[2,0,0,0,0]"),
            ("$beta$ = (1.0 - $alpha$ * $alpha$) * $beta$;", f"[k]: {kk}", "[3,k,0,0,0]"),
            ("$sum$ = 0.0;", f"[k]: {kk}", "[3,k,1,0,0]"),
            ("$sum$ += $r$(k - i - 1) * $y$(i);", f"[k,i]: {kk} && 0 <= i < k", "[3,k,2,i,0]"),
            ("$alpha$ = -($r$(k) + $sum$) / $beta$;", f"[k]: {kk}", "[3,k,3,0,0]"),
            ("$z$(i) = $y$(i) + $alpha$ * $y$(k - i - 1);", f"[k,i]: {kk} && 0 <= i < k",
             "[3,k,4,i,0]"),
            ("$y$(i) = $z$(i);", f"[k,i]: {kk} && 0 <= i < k", "[3,k,5,i,0]"),
            ("$y$(k) = $alpha$;", f"[k]: {kk}", "[3,k,6,0,0]"),
        ],
        local={"alpha": (), "beta": (), "sum": (), "z": ("N",)},
    )  # fmt: skip


def _durbin_in(s: Mapping[str, int]) -> Args:
    n = s["N"]
    return {"r": 0.5 ** np.arange(1, n + 1, dtype=np.float64), "y": np.zeros(n)}


def _durbin_ref(a: Args) -> None:
    r, y, n = a["r"], a["y"], a["N"]
    z = [0.0] * n
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta = (1.0 - alpha * alpha) * beta
        total = 0.0
        for i in range(k):
            total += r[k - i - 1] * y[i]
        alpha = -(r[k] + total) / beta
        for i in range(k):
            z[i] = y[i] + alpha * y[k - i - 1]
        for i in range(k):
            y[i] = z[i]
        y[k] = alpha


def gramschmidt() -> spf.Computation:
    """QR decomposition of ``A`` (``M x N``) by modified Gram-Schmidt; ``nrm`` a local."""
    kj = "0 <= k < N && k < j < N"
    return computation(
        "gramschmidt",
        {"A": ("M", "N"), "R": ("N", "N"), "Q": ("M", "N")},
        [
            ("$nrm$ = 0.0;", "[k]: 0 <= k < N", "[0,k,0,0,0,0,0]"),
            ("$nrm$ += $A$(i, k) * $A$(i, k);", "[k,i]: 0 <= k < N && 0 <= i < M",
             "[0,k,1,i,0,0,0]"),
            ("$R$(k, k) = sqrt($nrm$);", "[k]: 0 <= k < N", "[0,k,2,0,0,0,0]"),
            ("$Q$(i, k) = $A$(i, k) / $R$(k, k);", "[k,i]: 0 <= k < N && 0 <= i < M",
             "[0,k,3,i,0,0,0]"),
            ("$R$(k, j) = 0.0;", f"[k,j]: {kj}", "[0,k,4,j,0,0,0]"),
            ("$R$(k, j) += $Q$(i, k) * $A$(i, j);", f"[k,j,i]: {kj} && 0 <= i < M",
             "[0,k,4,j,1,i,0]"),
            ("$A$(i, j) = $A$(i, j) - $Q$(i, k) * $R$(k, j);", f"[k,j,i]: {kj} && 0 <= i < M",
             "[0,k,4,j,2,i,0]"),
        ],
        local={"nrm": ()},
    )  # fmt: skip


def _gramschmidt_in(s: Mapping[str, int]) -> Args:
    m, n = s["M"], s["N"]
    a = grid((m, n), 1) + np.eye(m, n) * m
    return {"A": np.ascontiguousarray(a), "R": np.zeros((n, n)), "Q": np.zeros((m, n))}


def _gramschmidt_ref(a: Args) -> None:
    A, R, Q, m, n = a["A"], a["R"], a["Q"], a["M"], a["N"]
    for k in range(n):
        nrm = 0.0
        for i in range(m):
            nrm += A[i, k] * A[i, k]
        R[k, k] = np.sqrt(nrm)
        for i in range(m):
            Q[i, k] = A[i, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = 0.0
            for i in range(m):
                R[k, j] += Q[i, k] * A[i, j]
            for i in range(m):
                A[i, j] = A[i, j] - Q[i, k] * R[k, j]


def lu() -> spf.Computation:
    """In-place LU decomposition of ``A`` without pivoting."""
    return computation(
        "lu",
        {"A": ("N", "N")},
        [
            ("$A$(i, j) -= $A$(i, k) * $A$(k, j);",
             "[i,j,k]: 0 <= i < N && 0 <= j < i && 0 <= k < j", "[0,i,0,j,0,k,0]"),
            ("$A$(i, j) = $A$(i, j) / $A$(j, j);", "[i,j]: 0 <= i < N && 0 <= j < i",
             "[0,i,0,j,1,0,0]"),
            ("$A$(i, j) -= $A$(i, k) * $A$(k, j);",
             "[i,j,k]: 0 <= i < N && i <= j < N && 0 <= k < i", "[0,i,1,j,0,k,0]"),
        ],
    )  # fmt: skip


def _lu_ref(a: Args) -> None:
    A, n = a["A"], a["N"]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[k, j]
            A[i, j] = A[i, j] / A[j, j]
        for j in range(i, n):
            for k in range(i):
                A[i, j] -= A[i, k] * A[k, j]


def _ludcmp_in(s: Mapping[str, int]) -> Args:
    n = s["N"]
    return {"A": _dominant(n, 1), "b": grid((n,), 2), "x": np.zeros(n), "y": np.zeros(n),
            "w": np.zeros(())}  # fmt: skip


def _ludcmp_ref(a: Args) -> None:
    A, b, x, y, n = a["A"], a["b"], a["x"], a["y"], a["N"]
    w = 0.0
    for i in range(n):
        for j in range(i):
            w = A[i, j]
            for k in range(j):
                w -= A[i, k] * A[k, j]
            A[i, j] = w / A[j, j]
        for j in range(i, n):
            w = A[i, j]
            for k in range(i):
                w -= A[i, k] * A[k, j]
            A[i, j] = w
    for i in range(n):
        w = b[i]
        for j in range(i):
            w -= A[i, j] * y[j]
        y[i] = w
    for i in range(n - 1, -1, -1):
        w = y[i]
        for j in range(i + 1, n):
            w -= A[i, j] * x[j]
        x[i] = w / A[i, i]
    a["w"][()] = w


def trisolv() -> spf.Computation:
    """Forward substitution ``L*x = b``."""
    return computation(
        "trisolv",
        {"L": ("N", "N"), "x": ("N",), "b": ("N",)},
        [
            ("$x$(i) = $b$(i);", "[i]: 0 <= i < N", "[0,i,0,0,0]"),
            ("$x$(i) -= $L$(i, j) * $x$(j);", "[i,j]: 0 <= i < N && 0 <= j < i", "[0,i,1,j,0]"),
            ("$x$(i) = $x$(i) / $L$(i, i);", "[i]: 0 <= i < N", "[0,i,2,0,0]"),
        ],
    )


def _trisolv_ref(a: Args) -> None:
    L, x, b = a["L"], a["x"], a["b"]
    for i in range(a["N"]):
        x[i] = b[i]
        for j in range(i):
            x[i] -= L[i, j] * x[j]
        x[i] = x[i] / L[i, i]


KERNELS = (
    Kernel("cholesky", cholesky, lambda s: {"A": _spd(s["N"])}, _cholesky_ref, ("A",),
           {"N": 7}),
    Kernel("durbin", durbin, _durbin_in, _durbin_ref, ("y",), {"N": 9}),
    Kernel("gramschmidt", gramschmidt, _gramschmidt_in, _gramschmidt_ref, ("A", "R", "Q"),
           {"M": 7, "N": 5}),
    Kernel("lu", lu, lambda s: {"A": _dominant(s["N"], 1)}, _lu_ref, ("A",), {"N": 7}),
    Kernel("ludcmp", ludcmp, _ludcmp_in, _ludcmp_ref, ("A", "x", "y", "w"), {"N": 7}),
    Kernel("trisolv", trisolv,
           lambda s: {"L": _dominant(s["N"], 1), "x": np.zeros(s["N"]), "b": grid((s["N"],), 2)},
           _trisolv_ref, ("x",), {"N": 9}),
)  # fmt: skip

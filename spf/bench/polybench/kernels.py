"""PolyBench linear-algebra kernels: 2mm, 3mm, atax, bicg, doitgen, mvt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from spf.bench.polybench.kernel import Args, Kernel, StmtSpec, computation, grid

if TYPE_CHECKING:
    import spf


def _product(out: str, a: str, b: str, n: str, m: str, k: str, pos: int) -> list[StmtSpec]:
    """``out = a*b`` (``n x k`` times ``k x m``) at root position ``pos``."""
    dom = f"0 <= i < {n} && 0 <= j < {m}"
    return [
        (f"${out}$(i, j) = 0.0;", f"[i,j]: {dom}", f"[{pos},i,0,j,0,0,0]"),
        (f"${out}$(i, j) += ${a}$(i, k) * ${b}$(k, j);", f"[i,j,k]: {dom} && 0 <= k < {k}",
         f"[{pos},i,0,j,1,k,0]"),
    ]  # fmt: skip


def mm2() -> spf.Computation:
    """``D = alpha*A*B*C + beta*D`` through ``tmp``."""
    ij, il = "0 <= i < NI && 0 <= j < NJ", "0 <= i < NI && 0 <= j < NL"
    return computation(
        "mm2",
        {"tmp": ("NI", "NJ"), "A": ("NI", "NK"), "B": ("NK", "NJ"), "C": ("NJ", "NL"),
         "D": ("NI", "NL")},
        [
            ("$tmp$(i, j) = 0.0;", f"[i,j]: {ij}", "[0,i,0,j,0,0,0]"),
            ("$tmp$(i, j) += alpha * $A$(i, k) * $B$(k, j);", f"[i,j,k]: {ij} && 0 <= k < NK",
             "[0,i,0,j,1,k,0]"),
            ("$D$(i, j) *= beta;", f"[i,j]: {il}", "[1,i,0,j,0,0,0]"),
            ("$D$(i, j) += $tmp$(i, k) * $C$(k, j);", f"[i,j,k]: {il} && 0 <= k < NJ",
             "[1,i,0,j,1,k,0]"),
        ],
        constants=("alpha", "beta"),
    )  # fmt: skip


def _mm2_in(s: Mapping[str, int]) -> Args:
    ni, nj, nk, nl = s["NI"], s["NJ"], s["NK"], s["NL"]
    return {"alpha": 1.5, "beta": 1.2, "tmp": grid((ni, nj), 1), "A": grid((ni, nk), 2),
            "B": grid((nk, nj), 3), "C": grid((nj, nl), 4), "D": grid((ni, nl), 5)}  # fmt: skip


def _mm2_ref(a: Args) -> None:
    tmp, A, B, C, D = (a[k] for k in ("tmp", "A", "B", "C", "D"))
    for i in range(a["NI"]):
        for j in range(a["NJ"]):
            tmp[i, j] = 0.0
            for k in range(a["NK"]):
                tmp[i, j] += a["alpha"] * A[i, k] * B[k, j]
    for i in range(a["NI"]):
        for j in range(a["NL"]):
            D[i, j] *= a["beta"]
            for k in range(a["NJ"]):
                D[i, j] += tmp[i, k] * C[k, j]


def mm3() -> spf.Computation:
    """``G = (A*B)*(C*D)`` through ``E`` and ``F``."""
    return computation(
        "mm3",
        {"E": ("NI", "NJ"), "A": ("NI", "NK"), "B": ("NK", "NJ"), "F": ("NJ", "NL"),
         "C": ("NJ", "NM"), "D": ("NM", "NL"), "G": ("NI", "NL")},
        _product("E", "A", "B", "NI", "NJ", "NK", 0)
        + _product("F", "C", "D", "NJ", "NL", "NM", 1)
        + _product("G", "E", "F", "NI", "NL", "NJ", 2),
    )  # fmt: skip


def _mm3_in(s: Mapping[str, int]) -> Args:
    ni, nj, nk, nl, nm = s["NI"], s["NJ"], s["NK"], s["NL"], s["NM"]
    return {"E": grid((ni, nj), 1), "A": grid((ni, nk), 2), "B": grid((nk, nj), 3),
            "F": grid((nj, nl), 4), "C": grid((nj, nm), 5), "D": grid((nm, nl), 6),
            "G": grid((ni, nl), 7)}  # fmt: skip


def _mm3_ref(a: Args) -> None:
    for out, x, y, n, m, kk in (("E", "A", "B", "NI", "NJ", "NK"),
                                ("F", "C", "D", "NJ", "NL", "NM"),
                                ("G", "E", "F", "NI", "NL", "NJ")):  # fmt: skip
        res, X, Y = a[out], a[x], a[y]
        for i in range(a[n]):
            for j in range(a[m]):
                res[i, j] = 0.0
                for k in range(a[kk]):
                    res[i, j] += X[i, k] * Y[k, j]


def atax() -> spf.Computation:
    """``y = A^T*(A*x)`` through ``tmp``."""
    return computation(
        "atax",
        {"A": ("M", "N"), "x": ("N",), "y": ("N",), "tmp": ("M",)},
        [
            ("$y$(i) = 0.0;", "[i]: 0 <= i < N", "[0,i,0,0,0]"),
            ("$tmp$(i) = 0.0;", "[i]: 0 <= i < M", "[1,i,0,0,0]"),
            ("$tmp$(i) = $tmp$(i) + $A$(i, j) * $x$(j);", "[i,j]: 0 <= i < M && 0 <= j < N",
             "[1,i,1,j,0]"),
            ("$y$(j) = $y$(j) + $A$(i, j) * $tmp$(i);", "[i,j]: 0 <= i < M && 0 <= j < N",
             "[1,i,2,j,0]"),
        ],
    )  # fmt: skip


def _atax_in(s: Mapping[str, int]) -> Args:
    m, n = s["M"], s["N"]
    return {"A": grid((m, n), 1), "x": grid((n,), 2), "y": grid((n,), 3), "tmp": grid((m,), 4)}


def _atax_ref(a: Args) -> None:
    A, x, y, tmp = a["A"], a["x"], a["y"], a["tmp"]
    for i in range(a["N"]):
        y[i] = 0.0
    for i in range(a["M"]):
        tmp[i] = 0.0
        for j in range(a["N"]):
            tmp[i] = tmp[i] + A[i, j] * x[j]
        for j in range(a["N"]):
            y[j] = y[j] + A[i, j] * tmp[i]


def bicg() -> spf.Computation:
    """``s = A^T*r`` and ``q = A*p`` (BiCG sub-kernel)."""
    nm = "0 <= i < N && 0 <= j < M"
    return computation(
        "bicg",
        {"A": ("N", "M"), "s": ("M",), "q": ("N",), "p": ("M",), "r": ("N",)},
        [
            ("$s$(i) = 0.0;", "[i]: 0 <= i < M", "[0,i,0,0,0]"),
            ("$q$(i) = 0.0;", "[i]: 0 <= i < N", "[1,i,0,0,0]"),
            ("$s$(j) = $s$(j) + $r$(i) * $A$(i, j);", f"[i,j]: {nm}", "[1,i,1,j,0]"),
            ("$q$(i) = $q$(i) + $A$(i, j) * $p$(j);", f"[i,j]: {nm}", "[1,i,1,j,1]"),
        ],
    )


def _bicg_in(s: Mapping[str, int]) -> Args:
    n, m = s["N"], s["M"]
    return {"A": grid((n, m), 1), "s": grid((m,), 2), "q": grid((n,), 3), "p": grid((m,), 4),
            "r": grid((n,), 5)}  # fmt: skip


def _bicg_ref(a: Args) -> None:
    A, s, q, p, r = (a[k] for k in ("A", "s", "q", "p", "r"))
    for i in range(a["M"]):
        s[i] = 0.0
    for i in range(a["N"]):
        q[i] = 0.0
        for j in range(a["M"]):
            s[j] = s[j] + r[i] * A[i, j]
            q[i] = q[i] + A[i, j] * p[j]


def doitgen() -> spf.Computation:
    """Multi-resolution analysis: ``A(r, q, :) = A(r, q, :)*C4`` through the local ``sum``."""
    rq = "0 <= r < NR && 0 <= q < NQ && 0 <= p < NP"
    return computation(
        "doitgen",
        {"A": ("NR", "NQ", "NP"), "C4": ("NP", "NP")},
        [
            ("$sum$(p) = 0.0;", f"[r,q,p]: {rq}", "[0,r,0,q,0,p,0,0,0]"),
            ("$sum$(p) += $A$(r, q, s) * $C4$(s, p);", f"[r,q,p,s]: {rq} && 0 <= s < NP",
             "[0,r,0,q,0,p,1,s,0]"),
            ("$A$(r, q, p) = $sum$(p);", f"[r,q,p]: {rq}", "[0,r,0,q,1,p,0,0,0]"),
        ],
        local={"sum": ("NP",)},
    )  # fmt: skip


def _doitgen_in(s: Mapping[str, int]) -> Args:
    return {"A": grid((s["NR"], s["NQ"], s["NP"]), 1), "C4": grid((s["NP"], s["NP"]), 2)}


def _doitgen_ref(a: Args) -> None:
    A, C4, n = a["A"], a["C4"], a["NP"]
    for r in range(a["NR"]):
        for q in range(a["NQ"]):
            acc = [0.0] * n
            for p in range(n):
                acc[p] = 0.0
                for s in range(n):
                    acc[p] += A[r, q, s] * C4[s, p]
            for p in range(n):
                A[r, q, p] = acc[p]


def mvt() -> spf.Computation:
    """``x1 += A*y_1`` and ``x2 += A^T*y_2``."""
    nn = "0 <= i < N && 0 <= j < N"
    return computation(
        "mvt",
        {"x1": ("N",), "x2": ("N",), "y_1": ("N",), "y_2": ("N",), "A": ("N", "N")},
        [
            ("$x1$(i) = $x1$(i) + $A$(i, j) * $y_1$(j);", f"[i,j]: {nn}", "[0,i,0,j,0]"),
            ("$x2$(i) = $x2$(i) + $A$(j, i) * $y_2$(j);", f"[i,j]: {nn}", "[1,i,0,j,0]"),
        ],
    )


def _mvt_in(s: Mapping[str, int]) -> Args:
    n = s["N"]
    return {"x1": grid((n,), 1), "x2": grid((n,), 2), "y_1": grid((n,), 3),
            "y_2": grid((n,), 4), "A": grid((n, n), 5)}  # fmt: skip


def _mvt_ref(a: Args) -> None:
    A, x1, x2, y1, y2 = (a[k] for k in ("A", "x1", "x2", "y_1", "y_2"))
    for i in range(a["N"]):
        for j in range(a["N"]):
            x1[i] = x1[i] + A[i, j] * y1[j]
    for i in range(a["N"]):
        for j in range(a["N"]):
            x2[i] = x2[i] + A[j, i] * y2[j]


KERNELS = (
    Kernel("2mm", mm2, _mm2_in, _mm2_ref, ("tmp", "D"), {"NI": 5, "NJ": 7, "NK": 9, "NL": 3}),
    Kernel("3mm", mm3, _mm3_in, _mm3_ref, ("E", "F", "G"),
           {"NI": 5, "NJ": 7, "NK": 9, "NL": 3, "NM": 5}),
    Kernel("atax", atax, _atax_in, _atax_ref, ("y", "tmp"), {"M": 5, "N": 7}),
    Kernel("bicg", bicg, _bicg_in, _bicg_ref, ("s", "q"), {"N": 7, "M": 5}),
    Kernel("doitgen", doitgen, _doitgen_in, _doitgen_ref, ("A",), {"NR": 3, "NQ": 5, "NP": 7}),
    Kernel("mvt", mvt, _mvt_in, _mvt_ref, ("x1", "x2"), {"N": 7}),
)  # fmt: skip

"""PolyBench stencils: adi, fdtd-2d, heat-3d, jacobi-1d, jacobi-2d, seidel-2d."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from spf.bench.polybench.kernel import Args, Kernel, StmtSpec, computation, grid

if TYPE_CHECKING:
    import spf

#: ADI's coefficients, computed in order from ``N`` and ``TSTEPS`` (locals of the kernel).
_ADI_COEFFS = (
    ("DX", "1.0 / (double)N"),
    ("DY", "1.0 / (double)N"),
    ("DT", "1.0 / (double)TSTEPS"),
    ("B1", "2.0"),
    ("B2", "1.0"),
    ("mul1", "$B1$ * $DT$ / ($DX$ * $DX$)"),
    ("mul2", "$B2$ * $DT$ / ($DY$ * $DY$)"),
    ("a", "-$mul1$ / 2.0"),
    ("b", "1.0 + $mul1$"),
    ("c", "$a$"),
    ("d", "-$mul2$ / 2.0"),
    ("e", "1.0 + $mul2$"),
    ("f", "$d$"),
)


def _adi_sweep(pos: str, y: str, m: tuple[str, str, str]) -> list[StmtSpec]:
    """One ADI half step at schedule prefix ``pos``: tridiagonal solves along ``j`` writing
    ``y`` (``v`` from ``u`` for the column sweep, ``u`` from ``v`` for the row sweep); ``m``
    are the coefficient names ``(lower, diagonal, upper)`` of the solve."""
    lo, di, up = m
    ti = "1 <= t <= TSTEPS && 1 <= i < N - 1"
    tij = f"[t,i,j]: {ti} && 1 <= j < N - 1"
    col = y == "v"
    at0, atn = ("0, i", "N - 1, i") if col else ("i, 0", "i, N - 1")
    jj = "N - 1 - j"  # the backward solve: j = 1 .. N-2 visits rows (columns) N-2 .. 1
    out, nxt = (f"{jj}, i", "N - j, i") if col else (f"i, {jj}", "i, N - j")
    xs = (("$u$(j, i - 1)", "$u$(j, i)", "$u$(j, i + 1)") if col else
          ("$v$(i - 1, j)", "$v$(i, j)", "$v$(i + 1, j)"))  # fmt: skip
    other = ("$d$", "$f$") if col else ("$a$", "$c$")
    den = f"(${lo}$ * $p$(i, j - 1) + ${di}$)"
    return [
        (f"${y}$({at0}) = 1.0;", f"[t,i]: {ti}", f"[{pos},i,0,0,0]"),
        ("$p$(i, 0) = 0.0;", f"[t,i]: {ti}", f"[{pos},i,1,0,0]"),
        (f"$q$(i, 0) = ${y}$({at0});", f"[t,i]: {ti}", f"[{pos},i,2,0,0]"),
        (f"$p$(i, j) = -${up}$ / {den};", tij, f"[{pos},i,3,j,0]"),
        (f"$q$(i, j) = (-{other[0]} * {xs[0]} + (1.0 + 2.0 * {other[0]}) * {xs[1]} - "
         f"{other[1]} * {xs[2]} - ${lo}$ * $q$(i, j - 1)) / {den};", tij, f"[{pos},i,3,j,1]"),
        (f"${y}$({atn}) = 1.0;", f"[t,i]: {ti}", f"[{pos},i,4,0,0]"),
        (f"${y}$({out}) = $p$(i, {jj}) * ${y}$({nxt}) + $q$(i, {jj});", tij,
         f"[{pos},i,5,j,0]"),
    ]  # fmt: skip


def adi() -> spf.Computation:
    """Alternating-direction implicit solver of 2-d heat diffusion (column then row
    tridiagonal sweeps per time step); the coefficients are locals."""
    p = len(_ADI_COEFFS)
    stmts: list[StmtSpec] = [
        (f"${name}$ = {value};", "[]", f"[{pos},0,0,0,0,0,0]")
        for pos, (name, value) in enumerate(_ADI_COEFFS)
    ]
    stmts += _adi_sweep(f"{p},t,0", "v", ("a", "b", "c"))
    stmts += _adi_sweep(f"{p},t,1", "u", ("d", "e", "f"))
    return computation(
        "adi",
        dict.fromkeys(("u", "v", "p", "q"), ("N", "N")),
        stmts,
        sizes=("N", "TSTEPS"),
        local={name: () for name, _ in _ADI_COEFFS},
    )


def _adi_in(s: Mapping[str, int]) -> Args:
    n = s["N"]
    i, j = np.indices((n, n))
    return {"u": np.ascontiguousarray((i + n - j) / n, dtype=np.float64),
            "v": np.zeros((n, n)), "p": np.zeros((n, n)), "q": np.zeros((n, n))}  # fmt: skip


def _adi_ref(a: Args) -> None:
    n, steps, u, v, p, q = a["N"], a["TSTEPS"], a["u"], a["v"], a["p"], a["q"]
    dx = 1.0 / float(n)
    dy = 1.0 / float(n)
    dt = 1.0 / float(steps)
    mul1 = 2.0 * dt / (dx * dx)
    mul2 = 1.0 * dt / (dy * dy)
    ca, cb, cd, ce = -mul1 / 2.0, 1.0 + mul1, -mul2 / 2.0, 1.0 + mul2
    cc, cf = ca, cd
    for _ in range(1, steps + 1):
        for i in range(1, n - 1):
            v[0, i] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = v[0, i]
            for j in range(1, n - 1):
                p[i, j] = -cc / (ca * p[i, j - 1] + cb)
                q[i, j] = (-cd * u[j, i - 1] + (1.0 + 2.0 * cd) * u[j, i] - cf * u[j, i + 1]
                           - ca * q[i, j - 1]) / (ca * p[i, j - 1] + cb)  # fmt: skip
            v[n - 1, i] = 1.0
            for j in range(n - 2, 0, -1):
                v[j, i] = p[i, j] * v[j + 1, i] + q[i, j]
        for i in range(1, n - 1):
            u[i, 0] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = u[i, 0]
            for j in range(1, n - 1):
                p[i, j] = -cf / (cd * p[i, j - 1] + ce)
                q[i, j] = (-ca * v[i - 1, j] + (1.0 + 2.0 * ca) * v[i, j] - cc * v[i + 1, j]
                           - cd * q[i, j - 1]) / (cd * p[i, j - 1] + ce)  # fmt: skip
            u[i, n - 1] = 1.0
            for j in range(n - 2, 0, -1):
                u[i, j] = p[i, j] * u[i, j + 1] + q[i, j]


def fdtd_2d() -> spf.Computation:
    """2-d finite-difference time domain: fields ``ex``, ``ey``, ``hz``, source ``fict``."""
    t = "0 <= t < TMAX"
    return computation(
        "fdtd_2d",
        {"ex": ("NX", "NY"), "ey": ("NX", "NY"), "hz": ("NX", "NY"), "fict": ("TMAX",)},
        [
            ("$ey$(0, j) = $fict$(t);", f"[t,j]: {t} && 0 <= j < NY", "[0,t,0,j,0,0,0]"),
            ("$ey$(i, j) = $ey$(i, j) - 0.5 * ($hz$(i, j) - $hz$(i - 1, j));",
             f"[t,i,j]: {t} && 1 <= i < NX && 0 <= j < NY", "[0,t,1,i,0,j,0]"),
            ("$ex$(i, j) = $ex$(i, j) - 0.5 * ($hz$(i, j) - $hz$(i, j - 1));",
             f"[t,i,j]: {t} && 0 <= i < NX && 1 <= j < NY", "[0,t,2,i,0,j,0]"),
            ("$hz$(i, j) = $hz$(i, j) - 0.7 * ($ex$(i, j + 1) - $ex$(i, j) + $ey$(i + 1, j) - "
             "$ey$(i, j));", f"[t,i,j]: {t} && 0 <= i < NX - 1 && 0 <= j < NY - 1",
             "[0,t,3,i,0,j,0]"),
        ],
    )  # fmt: skip


def _fdtd_in(s: Mapping[str, int]) -> Args:
    nx, ny, tmax = s["NX"], s["NY"], s["TMAX"]
    return {"ex": grid((nx, ny), 1), "ey": grid((nx, ny), 2), "hz": grid((nx, ny), 3),
            "fict": np.arange(tmax, dtype=np.float64)}  # fmt: skip


def _fdtd_ref(a: Args) -> None:
    ex, ey, hz, fict, nx, ny = (a[k] for k in ("ex", "ey", "hz", "fict", "NX", "NY"))
    for t in range(a["TMAX"]):
        for j in range(ny):
            ey[0, j] = fict[t]
        for i in range(1, nx):
            for j in range(ny):
                ey[i, j] = ey[i, j] - 0.5 * (hz[i, j] - hz[i - 1, j])
        for i in range(nx):
            for j in range(1, ny):
                ex[i, j] = ex[i, j] - 0.5 * (hz[i, j] - hz[i, j - 1])
        for i in range(nx - 1):
            for j in range(ny - 1):
                hz[i, j] = hz[i, j] - 0.7 * (ex[i, j + 1] - ex[i, j] + ey[i + 1, j] - ey[i, j])


def _heat(x: str) -> str:
    """The heat-3d update of the point ``(i, j, k)`` from data space ``x``."""
    c = f"${x}$(i, j, k)"
    return (f"0.125 * (${x}$(i + 1, j, k) - 2.0 * {c} + ${x}$(i - 1, j, k)) + "
            f"0.125 * (${x}$(i, j + 1, k) - 2.0 * {c} + ${x}$(i, j - 1, k)) + "
            f"0.125 * (${x}$(i, j, k + 1) - 2.0 * {c} + ${x}$(i, j, k - 1)) + {c}")  # fmt: skip


def heat_3d() -> spf.Computation:
    """3-d heat equation, Jacobi style between ``A`` and ``B``."""
    dom = "[t,i,j,k]: 1 <= t <= TSTEPS && 1 <= i < N - 1 && 1 <= j < N - 1 && 1 <= k < N - 1"
    return computation(
        "heat_3d",
        {"A": ("N", "N", "N"), "B": ("N", "N", "N")},
        [
            (f"$B$(i, j, k) = {_heat('A')};", dom, "[0,t,0,i,0,j,0,k,0]"),
            (f"$A$(i, j, k) = {_heat('B')};", dom, "[0,t,1,i,0,j,0,k,0]"),
        ],
    )


def _heat_ref(a: Args) -> None:
    n = a["N"]
    for _ in range(a["TSTEPS"]):
        for dst, x in ((a["B"], a["A"]), (a["A"], a["B"])):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    for k in range(1, n - 1):
                        c = x[i, j, k]
                        dst[i, j, k] = (0.125 * (x[i + 1, j, k] - 2.0 * c + x[i - 1, j, k])
                                        + 0.125 * (x[i, j + 1, k] - 2.0 * c + x[i, j - 1, k])
                                        + 0.125 * (x[i, j, k + 1] - 2.0 * c + x[i, j, k - 1])
                                        + c)  # fmt: skip


def jacobi_1d() -> spf.Computation:
    """1-d Jacobi: three-point averages, ``A`` to ``B`` and back, per time step."""
    dom = "[t,i]: 0 <= t < TSTEPS && 1 <= i < N - 1"
    return computation(
        "jacobi_1d",
        {"A": ("N",), "B": ("N",)},
        [
            ("$B$(i) = 0.33333 * ($A$(i - 1) + $A$(i) + $A$(i + 1));", dom, "[0,t,0,i,0]"),
            ("$A$(i) = 0.33333 * ($B$(i - 1) + $B$(i) + $B$(i + 1));", dom, "[0,t,1,i,0]"),
        ],
    )


def _jacobi_1d_ref(a: Args) -> None:
    A, B, n = a["A"], a["B"], a["N"]
    for _ in range(a["TSTEPS"]):
        for i in range(1, n - 1):
            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1])
        for i in range(1, n - 1):
            A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1])


def _five(x: str) -> str:
    return (f"0.2 * (${x}$(i, j) + ${x}$(i, j - 1) + ${x}$(i, 1 + j) + ${x}$(1 + i, j) + "
            f"${x}$(i - 1, j))")  # fmt: skip


def jacobi_2d() -> spf.Computation:
    """2-d Jacobi: five-point averages, ``A`` to ``B`` and back, per time step."""
    dom = "[t,i,j]: 0 <= t < TSTEPS && 1 <= i < N - 1 && 1 <= j < N - 1"
    return computation(
        "jacobi_2d",
        {"A": ("N", "N"), "B": ("N", "N")},
        [
            (f"$B$(i, j) = {_five('A')};", dom, "[0,t,0,i,0,j,0]"),
            (f"$A$(i, j) = {_five('B')};", dom, "[0,t,1,i,0,j,0]"),
        ],
    )


def _jacobi_2d_ref(a: Args) -> None:
    n = a["N"]
    for _ in range(a["TSTEPS"]):
        for dst, x in ((a["B"], a["A"]), (a["A"], a["B"])):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    dst[i, j] = 0.2 * (x[i, j] + x[i, j - 1] + x[i, 1 + j] + x[1 + i, j]
                                       + x[i - 1, j])  # fmt: skip


def seidel_2d() -> spf.Computation:
    """2-d Gauss-Seidel: nine-point averages in place."""
    nine = " + ".join(f"$A$(i + {di}, j + {dj})" for di in (-1, 0, 1) for dj in (-1, 0, 1))
    return computation(
        "seidel_2d",
        {"A": ("N", "N")},
        [(f"$A$(i, j) = ({nine}) / 9.0;",
          "[t,i,j]: 0 <= t < TSTEPS && 1 <= i < N - 1 && 1 <= j < N - 1", "[0,t,0,i,0,j,0]")],
    )  # fmt: skip


def _seidel_ref(a: Args) -> None:
    A, n = a["A"], a["N"]
    for _ in range(a["TSTEPS"]):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                total = A[i - 1, j - 1]
                for di, dj in ((-1, 0), (-1, 1), (0, -1), (0, 0), (0, 1), (1, -1), (1, 0), (1, 1)):
                    total = total + A[i + di, j + dj]
                A[i, j] = total / 9.0


def _one(s: Mapping[str, int]) -> Args:
    return {"A": grid((s["N"], s["N"]), 1)}


KERNELS = (
    Kernel("adi", adi, _adi_in, _adi_ref, ("u", "v", "p", "q"), {"N": 7, "TSTEPS": 3}),
    Kernel("fdtd-2d", fdtd_2d, _fdtd_in, _fdtd_ref, ("ex", "ey", "hz"),
           {"TMAX": 3, "NX": 5, "NY": 7}),
    Kernel("heat-3d", heat_3d, lambda s: {"A": grid((s["N"],) * 3, 1), "B": grid((s["N"],) * 3, 2)},
           _heat_ref, ("A", "B"), {"N": 5, "TSTEPS": 3}),
    Kernel("jacobi-1d", jacobi_1d, lambda s: {"A": grid((s["N"],), 1), "B": grid((s["N"],), 2)},
           _jacobi_1d_ref, ("A", "B"), {"N": 9, "TSTEPS": 3}),
    Kernel("jacobi-2d", jacobi_2d,
           lambda s: {"A": grid((s["N"], s["N"]), 1), "B": grid((s["N"], s["N"]), 2)},
           _jacobi_2d_ref, ("A", "B"), {"N": 7, "TSTEPS": 3}),
    Kernel("seidel-2d", seidel_2d, _one, _seidel_ref, ("A",), {"N": 7, "TSTEPS": 3}),
)  # fmt: skip

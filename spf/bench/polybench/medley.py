"""PolyBench data-mining and medley kernels: correlation, covariance, deriche,
floyd-warshall, nussinov."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from spf.bench.polybench.kernel import Args, Kernel, StmtSpec, computation, grid

if TYPE_CHECKING:
    import spf


def _mean(pos: int) -> list[StmtSpec]:
    """``mean(j)`` = column means of ``data`` at root position ``pos``."""
    return [
        ("$mean$(j) = 0.0;", "[j]: 0 <= j < M", f"[{pos},j,0,0,0]"),
        ("$mean$(j) += $data$(i, j);", "[j,i]: 0 <= j < M && 0 <= i < N", f"[{pos},j,1,i,0]"),
        ("$mean$(j) = $mean$(j) / float_n;", "[j]: 0 <= j < M", f"[{pos},j,2,0,0]"),
    ]


def correlation() -> spf.Computation:
    """Correlation matrix ``corr`` of the ``M`` columns of ``data`` (``N`` rows)."""
    ji, ij = "[j,i]: 0 <= j < M && 0 <= i < N", "[i,j]: 0 <= i < N && 0 <= j < M"
    upper = "0 <= i < M - 1 && i < j < M"
    return computation(
        "correlation",
        {"data": ("N", "M"), "corr": ("M", "M"), "mean": ("M",), "stddev": ("M",)},
        [
            *_mean(0),
            ("$stddev$(j) = 0.0;", "[j]: 0 <= j < M", "[1,j,0,0,0]"),
            ("$stddev$(j) += ($data$(i, j) - $mean$(j)) * ($data$(i, j) - $mean$(j));", ji,
             "[1,j,1,i,0]"),
            ("$stddev$(j) = $stddev$(j) / float_n;", "[j]: 0 <= j < M", "[1,j,2,0,0]"),
            ("$stddev$(j) = sqrt($stddev$(j));", "[j]: 0 <= j < M", "[1,j,3,0,0]"),
            ("$stddev$(j) = $stddev$(j) <= 0.1 ? 1.0 : $stddev$(j);", "[j]: 0 <= j < M",
             "[1,j,4,0,0]"),
            ("$data$(i, j) -= $mean$(j);", ij, "[2,i,0,j,0]"),
            ("$data$(i, j) = $data$(i, j) / (sqrt(float_n) * $stddev$(j));", ij, "[2,i,0,j,1]"),
            ("$corr$(i, i) = 1.0;", "[i]: 0 <= i < M - 1", "[3,i,0,0,0,0,0]"),
            ("$corr$(i, j) = 0.0;", f"[i,j]: {upper}", "[3,i,1,j,0,0,0]"),
            ("$corr$(i, j) += $data$(k, i) * $data$(k, j);", f"[i,j,k]: {upper} && 0 <= k < N",
             "[3,i,1,j,1,k,0]"),
            ("$corr$(j, i) = $corr$(i, j);", f"[i,j]: {upper}", "[3,i,1,j,2,0,0]"),
            ("$corr$(M - 1, M - 1) = 1.0;", "[]", "[4,0,0,0,0,0,0]"),
        ],
        constants=("float_n",),
    )  # fmt: skip


def _stats_in(s: Mapping[str, int]) -> Args:
    n, m = s["N"], s["M"]
    data = grid((n, m), 1)
    data[:, m // 2] = 0.25  # a constant column: its deviation is below eps
    return {"float_n": float(n), "data": data, "mean": np.zeros(m), "stddev": np.zeros(m)}


def _correlation_in(s: Mapping[str, int]) -> Args:
    return {**_stats_in(s), "corr": np.zeros((s["M"], s["M"]))}


def _mean_ref(a: Args) -> None:
    data, mean = a["data"], a["mean"]
    for j in range(a["M"]):
        mean[j] = 0.0
        for i in range(a["N"]):
            mean[j] += data[i, j]
        mean[j] = mean[j] / a["float_n"]


def _correlation_ref(a: Args) -> None:
    data, corr, mean, stddev, n, m = (a[k] for k in ("data", "corr", "mean", "stddev", "N", "M"))
    _mean_ref(a)
    for j in range(m):
        stddev[j] = 0.0
        for i in range(n):
            stddev[j] += (data[i, j] - mean[j]) * (data[i, j] - mean[j])
        stddev[j] = stddev[j] / a["float_n"]
        stddev[j] = math.sqrt(stddev[j])
        stddev[j] = 1.0 if stddev[j] <= 0.1 else stddev[j]
    for i in range(n):
        for j in range(m):
            data[i, j] -= mean[j]
            data[i, j] = data[i, j] / (math.sqrt(a["float_n"]) * stddev[j])
    for i in range(m - 1):
        corr[i, i] = 1.0
        for j in range(i + 1, m):
            corr[i, j] = 0.0
            for k in range(n):
                corr[i, j] += data[k, i] * data[k, j]
            corr[j, i] = corr[i, j]
    corr[m - 1, m - 1] = 1.0


def covariance() -> spf.Computation:
    """Covariance matrix ``cov`` of the ``M`` columns of ``data`` (``N`` rows)."""
    upper = "0 <= i < M && i <= j < M"
    return computation(
        "covariance",
        {"data": ("N", "M"), "cov": ("M", "M"), "mean": ("M",)},
        [
            *_mean(0),
            ("$data$(i, j) -= $mean$(j);", "[i,j]: 0 <= i < N && 0 <= j < M", "[1,i,0,j,0]"),
            ("$cov$(i, j) = 0.0;", f"[i,j]: {upper}", "[2,i,0,j,0,0,0]"),
            ("$cov$(i, j) += $data$(k, i) * $data$(k, j);", f"[i,j,k]: {upper} && 0 <= k < N",
             "[2,i,0,j,1,k,0]"),
            ("$cov$(i, j) = $cov$(i, j) / (float_n - 1.0);", f"[i,j]: {upper}",
             "[2,i,0,j,2,0,0]"),
            ("$cov$(j, i) = $cov$(i, j);", f"[i,j]: {upper}", "[2,i,0,j,3,0,0]"),
        ],
        constants=("float_n",),
    )  # fmt: skip


def _covariance_in(s: Mapping[str, int]) -> Args:
    args = _stats_in(s)
    del args["stddev"]
    return {**args, "cov": np.zeros((s["M"], s["M"]))}


def _covariance_ref(a: Args) -> None:
    data, cov, mean, n, m = (a[k] for k in ("data", "cov", "mean", "N", "M"))
    _mean_ref(a)
    for i in range(n):
        for j in range(m):
            data[i, j] -= mean[j]
    for i in range(m):
        for j in range(i, m):
            cov[i, j] = 0.0
            for k in range(n):
                cov[i, j] += data[k, i] * data[k, j]
            cov[i, j] = cov[i, j] / (a["float_n"] - 1.0)
            cov[j, i] = cov[i, j]


#: Deriche's coefficients (``a5..a8`` equal ``a1..a4``, ``c1 = c2 = 1``), computed in order.
_COEFFS = (
    ("k", "(1.0 - exp(-alpha)) * (1.0 - exp(-alpha)) / "
          "(1.0 + 2.0 * alpha * exp(-alpha) - exp(2.0 * alpha))"),
    ("a1", "$k$"),
    ("a2", "$k$ * exp(-alpha) * (alpha - 1.0)"),
    ("a3", "$k$ * exp(-alpha) * (alpha + 1.0)"),
    ("a4", "-$k$ * exp(-2.0 * alpha)"),
    ("b1", "pow(2.0, -alpha)"),
    ("b2", "-exp(-2.0 * alpha)"),
)  # fmt: skip


def _sweep(
    pos: int, outer: str, inner: str, src: str, dst: str, causal: bool, x: str, y: str
) -> list[StmtSpec]:
    """One recursive-filter sweep of Deriche's edge detector at root position ``pos``.

    ``outer``/``inner`` are the loop variables (``i``/``j`` for rows, ``j``/``i`` for
    columns); the sweep runs forward (``causal``) or backward over ``inner``; ``x``/``y``
    name the scalar histories (``xm``/``ym`` and so on).
    """
    size = {"i": "W", "j": "H"}
    lo = f"0 <= {outer} < {size[outer]}"
    idx = inner if causal else f"{size[inner]} - 1 - {inner}"
    at = f"{idx}, {outer}" if outer == "j" else f"{outer}, {idx}"
    dom = f"[{outer},{inner}]: {lo} && 0 <= {inner} < {size[inner]}"
    hist = (f"{x}1", f"{y}1", f"{y}2") if causal else (f"{x}1", f"{x}2", f"{y}1", f"{y}2")
    stmts: list[StmtSpec] = [
        (f"${h}$ = 0.0;", f"[{outer}]: {lo}", f"[{pos},{outer},{n},0,0]")
        for n, h in enumerate(hist)
    ]
    body = len(hist)
    if causal:
        value = f"$a1$ * ${src}$({at}) + $a2$ * ${x}1$ + $b1$ * ${y}1$ + $b2$ * ${y}2$"
        updates = [f"${x}1$ = ${src}$({at});", f"${y}2$ = ${y}1$;", f"${y}1$ = ${dst}$({at});"]
    else:
        value = f"$a3$ * ${x}1$ + $a4$ * ${x}2$ + $b1$ * ${y}1$ + $b2$ * ${y}2$"
        updates = [f"${x}2$ = ${x}1$;", f"${x}1$ = ${src}$({at});", f"${y}2$ = ${y}1$;",
                   f"${y}1$ = ${dst}$({at});"]  # fmt: skip
    for n, text in enumerate([f"${dst}$({at}) = {value};", *updates]):
        stmts.append((text, dom, f"[{pos},{outer},{body},{inner},{n}]"))
    return stmts


def deriche() -> spf.Computation:
    """Deriche's recursive edge detector on a ``W x H`` image (double precision); the
    coefficients and the filters' scalar histories are locals."""
    wh = "[i,j]: 0 <= i < W && 0 <= j < H"
    stmts: list[StmtSpec] = [
        (f"${name}$ = {value};", "[]", f"[{pos},0,0,0,0]")
        for pos, (name, value) in enumerate(_COEFFS)
    ]
    p = len(_COEFFS)
    stmts += _sweep(p, "i", "j", "imgIn", "y1", True, "xm", "ym")
    stmts += _sweep(p + 1, "i", "j", "imgIn", "y2", False, "xp", "yp")
    stmts.append(("$imgOut$(i, j) = $y1$(i, j) + $y2$(i, j);", wh, f"[{p + 2},i,0,j,0]"))
    stmts += _sweep(p + 3, "j", "i", "imgOut", "y1", True, "tm", "ym")
    stmts += _sweep(p + 4, "j", "i", "imgOut", "y2", False, "tp", "yp")
    stmts.append(("$imgOut$(i, j) = $y1$(i, j) + $y2$(i, j);", wh, f"[{p + 5},i,0,j,0]"))
    scalars = [name for name, _ in _COEFFS]
    scalars += ["xm1", "ym1", "ym2", "xp1", "xp2", "yp1", "yp2", "tm1", "tp1", "tp2"]
    return computation(
        "deriche",
        dict.fromkeys(("imgIn", "imgOut", "y1", "y2"), ("W", "H")),
        stmts,
        constants=("alpha",),
        local=dict.fromkeys(scalars, ()),
    )


def _deriche_in(s: Mapping[str, int]) -> Args:
    w, h = s["W"], s["H"]
    img = ((313 * np.arange(w)[:, None] + 991 * np.arange(h)[None, :]) % 65536) / 65535.0
    return {"alpha": 0.25, "imgIn": np.ascontiguousarray(img), "imgOut": np.zeros((w, h)),
            "y1": np.zeros((w, h)), "y2": np.zeros((w, h))}  # fmt: skip


def _add(out: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """``out = x + y`` element by element, rows outer."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = x[i, j] + y[i, j]


def _deriche_ref(a: Args) -> None:
    alpha, w, h = a["alpha"], a["W"], a["H"]
    img_in, img_out, y1, y2 = a["imgIn"], a["imgOut"], a["y1"], a["y2"]
    ea = math.exp(-alpha)
    k = (1.0 - ea) * (1.0 - ea) / (1.0 + 2.0 * alpha * ea - math.exp(2.0 * alpha))
    a1, a2, a3 = k, k * ea * (alpha - 1.0), k * ea * (alpha + 1.0)
    a4, b1, b2 = -k * math.exp(-2.0 * alpha), math.pow(2.0, -alpha), -math.exp(-2.0 * alpha)
    for i in range(w):
        xm1 = ym1 = ym2 = 0.0
        for j in range(h):
            y1[i, j] = a1 * img_in[i, j] + a2 * xm1 + b1 * ym1 + b2 * ym2
            xm1, ym2, ym1 = img_in[i, j], ym1, y1[i, j]
    for i in range(w):
        xp1 = xp2 = yp1 = yp2 = 0.0
        for j in range(h - 1, -1, -1):
            y2[i, j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2
            xp2, xp1, yp2, yp1 = xp1, img_in[i, j], yp1, y2[i, j]
    _add(img_out, y1, y2)
    for j in range(h):
        tm1 = ym1 = ym2 = 0.0
        for i in range(w):
            y1[i, j] = a1 * img_out[i, j] + a2 * tm1 + b1 * ym1 + b2 * ym2
            tm1, ym2, ym1 = img_out[i, j], ym1, y1[i, j]
    for j in range(h):
        tp1 = tp2 = yp1 = yp2 = 0.0
        for i in range(w - 1, -1, -1):
            y2[i, j] = a3 * tp1 + a4 * tp2 + b1 * yp1 + b2 * yp2
            tp2, tp1, yp2, yp1 = tp1, img_out[i, j], yp1, y2[i, j]
    _add(img_out, y1, y2)


def floyd_warshall() -> spf.Computation:
    """All-pairs shortest paths, in place in ``path``."""
    return computation(
        "floyd_warshall",
        {"path": ("N", "N")},
        [(
            "$path$(i, j) = min($path$(i, j), $path$(i, k) + $path$(k, j));",
            "[k,i,j]: 0 <= k < N && 0 <= i < N && 0 <= j < N",
            "[0,k,0,i,0,j,0]",
        )],
    )  # fmt: skip


def _floyd_in(s: Mapping[str, int]) -> Args:
    n = s["N"]
    i, j = np.indices((n, n))
    path = (i * j % 7 + 1).astype(np.float64)
    path[(i + j) % 13 == 0] = 999.0
    path[(i + j) % 7 == 0] = 999.0
    return {"path": np.ascontiguousarray(path)}


def _floyd_ref(a: Args) -> None:
    path, n = a["path"], a["N"]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                via = path[i, k] + path[k, j]
                path[i, j] = path[i, j] if path[i, j] < via else via


def nussinov() -> spf.Computation:
    """Nussinov's RNA folding: ``table(r, j)`` for rows ``r = N-1 .. 0`` (loop ``i`` runs
    ``r = N-1-i``), ``match`` = 1 where two bases pair (``seq`` values sum to 3)."""
    row = "(N - 1 - i)"
    tri = "0 <= i < N && N - i <= j < N"
    cell = f"$table$({row}, j)"
    return computation(
        "nussinov",
        {"seq": ("N",), "table": ("N", "N")},
        [
            (f"{cell} = max({cell}, $table$({row}, j - 1));", f"[i,j]: {tri}",
             "[0,i,0,j,0,0,0]"),
            (f"{cell} = max({cell}, $table$(N - i, j));", f"[i,j]: {tri} && i >= 1",
             "[0,i,0,j,1,0,0]"),
            (f"{cell} = max({cell}, $table$(N - i, j - 1) + "
             f"($seq$({row}) + $seq$(j) == 3.0 ? 1.0 : 0.0));",
             f"[i,j]: {tri} && i >= 1 && {row} < j - 1", "[0,i,0,j,2,0,0]"),
            (f"{cell} = max({cell}, $table$(N - i, j - 1));",
             f"[i,j]: {tri} && i >= 1 && {row} >= j - 1", "[0,i,0,j,3,0,0]"),
            (f"{cell} = max({cell}, $table$({row}, k) + $table$(k + 1, j));",
             f"[i,j,k]: {tri} && N - i <= k < j", "[0,i,0,j,4,k,0]"),
        ],
    )  # fmt: skip


def _nussinov_in(s: Mapping[str, int]) -> Args:
    n = s["N"]
    return {"seq": ((np.arange(n) * 7 + 1) % 4).astype(np.float64), "table": np.zeros((n, n))}


def _nussinov_ref(a: Args) -> None:
    seq, table, n = a["seq"], a["table"], a["N"]

    def best(x: float, y: float) -> float:
        return x if x > y else y

    for r in range(n - 1, -1, -1):
        for j in range(r + 1, n):
            table[r, j] = best(table[r, j], table[r, j - 1])
            if r + 1 < n:
                table[r, j] = best(table[r, j], table[r + 1, j])
                match = 1.0 if seq[r] + seq[j] == 3.0 else 0.0
                if r < j - 1:
                    table[r, j] = best(table[r, j], table[r + 1, j - 1] + match)
                else:
                    table[r, j] = best(table[r, j], table[r + 1, j - 1])
            for k in range(r + 1, j):
                table[r, j] = best(table[r, j], table[r, k] + table[k + 1, j])


KERNELS = (
    Kernel("correlation", correlation, _correlation_in, _correlation_ref,
           ("data", "corr", "mean", "stddev"), {"M": 5, "N": 7}),
    Kernel("covariance", covariance, _covariance_in, _covariance_ref, ("data", "cov", "mean"),
           {"M": 5, "N": 7}),
    Kernel("deriche", deriche, _deriche_in, _deriche_ref, ("imgOut", "y1", "y2"),
           {"W": 7, "H": 5}),
    Kernel("floyd-warshall", floyd_warshall, _floyd_in, _floyd_ref, ("path",), {"N": 9}),
    Kernel("nussinov", nussinov, _nussinov_in, _nussinov_ref, ("table",), {"N": 11}),
)  # fmt: skip

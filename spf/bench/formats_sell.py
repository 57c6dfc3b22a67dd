"""The SELL-C-sigma inspector synthesized from the SELL relation against the hand-written one.

``spf.formats.sell(C, sigma).inspect`` runs ``convert(CSR, SELL(C, sigma))`` (one generated
kernel, called to size and then to fill). The reference is the inspector spf had before,
written by hand: a numpy ``lexsort`` for ``perm`` (and its inverse) and the two spf kernels
``SellFormat.lengths()`` and ``SellFormat.fill()``, with the same allocations. Both build the
same arrays (checked first) from the CSR arrays of the 2-D Poisson matrix (equal rows) and of
a uniform random matrix (rows of uneven length, so sorting and padding matter), each at
``check=False`` (the inspection work alone) and ``check=True`` (the default: arguments
validated). Part of the ``formats`` section.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import spf.sparse
from spf.bench.common import Context, Section, Variant, load_note, measure, median
from spf.formats import SellFormat, sell

sp: Any = importlib.import_module("scipy.sparse")

LAYOUTS = ((8, 1), (8, 32))


class HandInspector:
    """The hand-written inspector (``spf.formats.sell`` before the synthesis): numpy sort,
    then ``lengths`` and ``fill``, compiled once."""

    def __init__(self, fmt: SellFormat, cache_dir: str) -> None:
        self.fmt = fmt
        self.lengths = fmt.lengths().compile(cache_dir=cache_dir)
        self.fill = fmt.fill().compile(cache_dir=cache_dir)

    def __call__(self, args: dict[str, Any], check: bool) -> dict[str, Any]:
        fmt = self.fmt
        rowptr, col, a, n = args["rowptr"], args["col"], args["A"], args["N"]
        nnz, nc = args["NNZ"], -(-n // fmt.C)
        perm, iperm = fmt.permutation(rowptr)
        cl = np.zeros(nc, dtype=rowptr.dtype)
        cs = np.zeros(nc + 1, dtype=rowptr.dtype)
        extra: dict[str, Any] = {"perm": perm} if fmt.sigma > 1 else {}
        self.lengths(rowptr=rowptr, cl=cl, cs=cs, N=n, NC=nc, check=check, **extra)
        nv = int(cs[-1])
        val, scol = np.zeros(nv), np.zeros(nv, dtype=rowptr.dtype)
        self.fill(rowptr=rowptr, cs=cs, A=a, col=col, val=val, scol=scol, N=n, NC=nc,
                  NNZ=nnz, NV=nv, check=check, **extra)  # fmt: skip
        return {"cl": cl, "cs": cs, "val": val, "scol": scol, "perm": perm, "iperm": iperm}


def _matrices(ctx: Context) -> list[tuple[str, Any]]:
    g = ctx.cfg.poisson_grid
    n = g * g
    rng = np.random.default_rng(2)
    random = sp.random_array((n, n), density=5.0 / n, rng=rng, format="csr")
    return [(f"Poisson {g}x{g}", spf.sparse.poisson2d(g)), (f"random {n:,}, 5/row", random)]


def sell_inspector(ctx: Context, sec: Section) -> None:
    """Time both inspectors on each matrix and layout; one interleaved run per matrix."""
    cache = str(ctx.work / "kernels")
    rounds = max(5, ctx.cfg.spmv_rounds // 10)
    rows: list[list[str]] = []
    for label, matrix in _matrices(ctx):
        args = spf.sparse.csr_args(matrix)
        shape = (args["N"], args["M"])
        variants: list[Variant] = []
        for c, sigma in LAYOUTS:
            fmt = sell(c, sigma)
            hand = HandInspector(fmt, cache)
            for check in (False, True):
                built = fmt.inspect(args["rowptr"], args["col"], args["A"], shape, check=check)
                ref = hand(args, check)
                for key, value in ref.items():
                    if not np.array_equal(getattr(built, key), value):
                        raise SystemExit(f"formats: SELL({c}, {sigma}) inspector differs in {key}")
                tag = f"SELL({c}, {sigma}) check={check}"

                def synth(f: Any = fmt, ck: bool = check, a: Any = args) -> None:
                    f.inspect(a["rowptr"], a["col"], a["A"], (a["N"], a["M"]), check=ck)

                def by_hand(h: Any = hand, ck: bool = check, a: Any = args) -> None:
                    h(a, ck)

                variants += [(f"synth {tag}", 1, synth), (f"hand {tag}", 1, by_hand)]
        ctx.rt.set_threads(1)
        times, load = measure(ctx, variants, rounds)
        ms = {code: 1e3 * median(ts) for (code, _), ts in times.items()}
        sec.data.setdefault("sell_inspector_median_ms", {})[label] = ms
        sec.line(f"### SELL inspector from the relation vs by hand, {label}, 1 thread\n")
        sec.line(load_note(load) + "\n")
        for c, sigma in LAYOUTS:
            for check in (False, True):
                tag = f"SELL({c}, {sigma}) check={check}"
                s_ms, h_ms = ms[f"synth {tag}"], ms[f"hand {tag}"]
                rows.append([label, tag, f"{s_ms:.2f}", f"{h_ms:.2f}", f"{s_ms / h_ms:.2f}"])
                if not check:
                    sec.target(
                        f"SELL({c}, {sigma}) inspector from the relation <= 1.0x the hand-written "
                        f"one ({label}, 1 thread)",
                        f"{s_ms / h_ms:.2f}x",
                        s_ms <= h_ms,
                    )
    sec.table(["matrix", "inspector", "synthesized ms", "hand-written ms", "ratio"], rows,
              "llrrr")  # fmt: skip

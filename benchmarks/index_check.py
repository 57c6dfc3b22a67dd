"""Cost of the range check of a run-time index array (``add_data_space(..., index=True)``)
in an int32 max-reduction loop over 1M rows (the shape of the SELL conversion's chunk-width
loop), and whether gcc vectorizes that loop (``-fopt-info-vec``).

Run it against any spf tree (``PYTHONPATH=<tree> python benchmarks/index_check.py``) to
compare before and after; timings are medians of interleaved repeats, reported, not
asserted. ``--no-range``: the same loop without a declared range (no check), the floor.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import spf

N = 1 << 20


def computation(checked: bool) -> spf.Computation:
    """PHASE 0 fills the index array ``len``; PHASE 1 (timed) is ``w = max(w, len(i))``."""
    c = spf.Computation("maxlen_checked" if checked else "maxlen_plain")
    c.add_data_space("src", "int32_t", shape=("N",))
    c.add_data_space("len", "int32_t", shape=("N",), index=True)
    if checked:
        c.declare_uf("len", range="{[v]: 0 <= v <= M}")
    c.add_data_space("w", "int32_t", shape=(1,))
    c.add_stmt(spf.Stmt("$len$(i) = $src$(i);", "{[i]: 0 <= i < N && PHASE = 0}"))
    c.add_stmt(
        spf.Stmt("$w$(0) = max($w$(0), len(i));", "{[i]: 0 <= i < N && PHASE = 1 && M >= 0}")
    )
    return c


def vec_report(source: str) -> list[str]:
    """gcc's -fopt-info-vec lines about the max-reduction loop (the one calling ``s1``)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.c"
        path.write_text(source)
        lines = source.splitlines()
        loop = next(n for n, line in enumerate(lines, 1) if line.strip() == "s1(i);") - 2
        flags = ["-std=c99", "-O3", "-march=native", "-fopenmp", "-fopt-info-vec-all"]
        out = subprocess.run(
            ["gcc", *flags, "-c", "-o", "/dev/null", str(path)],
            capture_output=True, text=True, check=False,
        ).stderr  # fmt: skip
    pattern = re.compile(
        rf"k\.c:{loop}:\d+: (optimized|missed): (loop vectorized|.*not vectorized)"
    )
    return sorted({line.split(": ", 1)[1] for line in out.splitlines() if pattern.search(line)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    kernels = {name: computation(name == "checked").compile() for name in ("checked", "no range")}
    src = np.random.default_rng(0).integers(0, 1000, N).astype(np.int32)
    calls = {}
    for name, k in kernels.items():
        a = {"N": N, "M": 1000, "PHASE": 0, "src": src, "len": np.zeros(N, np.int32)}
        a["w"] = np.zeros(1, np.int32)
        k(**a, check=False)
        a["PHASE"] = 1
        k(**a, check=False)
        assert a["w"][0] == src.max()
        calls[name] = a
    times: dict[str, list[float]] = {name: [] for name in kernels}
    for _ in range(args.repeats):
        for name, k in kernels.items():
            start = time.perf_counter()
            for _ in range(20):
                k(**calls[name], check=False)
            times[name].append((time.perf_counter() - start) / 20)
    print(f"spf from {spf.__file__}, N = {N}")
    for name in kernels:
        print(f"  {name:9} median {np.median(times[name]) * 1e3:.3f} ms per call")
    print(
        f"  ratio checked / no range: {np.median(times['checked']) / np.median(times['no range']):.1f}"
    )
    for line in vec_report(kernels["checked"].source):
        print(f"  gcc, checked loop: {line}")


if __name__ == "__main__":
    main()

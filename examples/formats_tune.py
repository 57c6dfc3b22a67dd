"""Choosing a storage format for SpMV with spf.formats.tune (docs/formats_tune.md).

Two matrices: a 2-D Poisson stencil (five diagonals: DIA and BDIA store it without index
arrays) and a random matrix with one dense row (ELL would pad every row to it, so it is
pruned before anything is compiled). For each, the search measures the surviving formats
against CSR, checks every kernel against scipy, and prints the history; a second call with the
same pattern returns the recorded choice without measuring.
"""

from __future__ import annotations

import tempfile
import time

import numpy as np
import scipy.sparse as sp

import spf

# A small space keeps this script quick (each format's kernel is compiled once, then cached);
# leave space out to search every built-in format and both schedules.
SPACE = {"CSR": [()], "DIA": [()], "ELL": [()], "SELL": [(8, 1)], "schedules": ["serial"]}


def dense_row(n: int) -> sp.csr_array:
    m = sp.lil_array(sp.random_array((n, n), density=0.01, rng=np.random.default_rng(1)))
    m[n // 3, :] = 1.0
    return sp.csr_array(m)


def show(name: str, matrix: sp.csr_array, records: str) -> None:
    fres = spf.formats.tune(matrix, budget=8.0, space=SPACE, seed=0, record_dir=records)
    f = fres.features
    print(f"{name}: {f.n}x{f.m}, nnz {f.nnz}, rows {f.row_mean:.1f} mean / {f.row_max} max "
          f"(cv {f.row_cv:.2f}), {f.diagonals} diagonals")  # fmt: skip
    for h in fres.history:
        measured = f"{h['time'] * 1e6:8.1f} us" if h["time"] is not None else " " * 11
        print(f"  {h['candidate']:<18} {h['status']:<12} {measured}  {h['reason'] or ''}")
    print(f"  chosen {fres.format.name} {fres.schedule}: {fres.speedup:.2f}x CSR "
          f"(shared machines make this noisy), conversion "
          f"{fres.conversion_time / fres.time:.0f} SpMVs")  # fmt: skip
    x = np.random.default_rng(2).standard_normal(f.m)
    assert np.allclose(fres(x), matrix @ x)
    t0 = time.perf_counter()
    again = spf.formats.tune(matrix, budget=8.0, space=SPACE, seed=0, record_dir=records)
    assert again.reused
    assert again.format is fres.format
    print(f"  reused the record in {1e3 * (time.perf_counter() - t0):.0f} ms")


def main() -> None:
    with tempfile.TemporaryDirectory() as records:
        show("poisson 60x60", sp.csr_array(spf.sparse.poisson2d(60)), records)
        show("one dense row", dense_row(2000), records)


if __name__ == "__main__":
    main()

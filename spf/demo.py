"""What ``make demo`` runs: the pipeline as far as it is built.

Today that is the UF-aware set layer on the CSR SpMV domain: parse, print, transform,
decide emptiness with UF facts, and enumerate the iteration space of a real index array,
checked against the number of nonzeros. Later issues grow this into build, schedule,
generate, compile and run.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import spf

SPMV = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"


def _section(title: str) -> None:
    print(f"\n== {title}")


def _random_csr(n: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, size=n)  # empty rows included
    rowptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    col = rng.integers(0, m, size=int(rowptr[-1])).astype(np.int32)
    return rowptr, col


def _read_mtx_pattern(path: Path) -> tuple[int, int, np.ndarray, np.ndarray]:
    """Rows, columns, rowptr and col of a Matrix Market coordinate file (pattern only)."""
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith("%")]
    n, m, nnz = (int(x) for x in lines[0].split()[:3])
    entries = np.array([[int(t) for t in ln.split()[:2]] for ln in lines[1 : 1 + nnz]])
    rows, cols = entries[:, 0] - 1, entries[:, 1] - 1
    order = np.lexsort((cols, rows))
    rowptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int32)
    return n, m, rowptr, cols[order].astype(np.int32)


def main() -> None:
    """Print the demo; raise if any check fails."""
    _section("a CSR SpMV iteration domain with uninterpreted functions")
    dom = spf.Set(SPMV)
    print(f"text      : {SPMV}")
    print(f"canonical : {dom}")
    print(f"params    : {sorted(dom.params)}   UF calls: {list(dom.uf_calls)}")
    assert spf.Set(str(dom)) == dom, "canonical text must parse back equal"

    _section("transformations rewrite UF arguments")
    sched = spf.Relation("{[i,k,j] -> [0,i,0,k,0,j,0]}")
    shift = spf.Relation("{[i,k,j] -> [ii,k,j]: ii = i + 1}")
    tile = spf.Relation("{[i,k,j] -> [i0,i1,k,j]: i = 4*i0 + i1 && 0 <= i1 < 4}")
    for name, rel in (("schedule", sched), ("shift i", shift), ("tile i by 4", tile)):
        print(f"{name:12}: {rel.apply(dom)}")
    print(f"compose     : {sched.compose(shift.inverse())}")

    _section("emptiness with UF facts: can two different rows share a nonzero?")
    two = (
        "{[i,ip,k]: 0 <= i < ip < N && rowptr(i) <= k < rowptr(i+1) && "
        "rowptr(ip) <= k < rowptr(ip+1)}"
    )
    rowptr_uf = spf.UF("rowptr", domain="{[i]: 0 <= i <= N}", monotonic="nondecreasing")
    plain, declared = spf.Set(two), spf.Set(two, ufs={"rowptr": rowptr_uf})
    print(f"without declarations: empty = {plain.is_empty()}")
    print(f"rowptr nondecreasing: empty = {declared.is_empty()}  (rows are disjoint)")
    assert not plain.is_empty()
    assert declared.is_empty()

    _section("enumerating the domain on concrete index arrays")
    rowptr, col = _random_csr(9, 7, seed=1)
    _check_points(dom, "random 9x7", 9, 7, rowptr, col)
    mtx = Path(__file__).resolve().parents[2] / "shared/data/suitesparse/karate.mtx"
    if mtx.exists():
        n, m, rowptr, col = _read_mtx_pattern(mtx)
        _check_points(dom, mtx.name, n, m, rowptr, col)
    print("\ndemo OK")


def _check_points(
    dom: spf.Set, label: str, n: int, m: int, rowptr: np.ndarray, col: np.ndarray
) -> None:
    t0 = time.perf_counter()
    pts = dom.points(params={"N": n, "M": m}, ufs={"rowptr": rowptr, "col": col})
    ms = 1e3 * (time.perf_counter() - t0)
    want = [(i, k, int(col[k])) for i in range(n) for k in range(rowptr[i], rowptr[i + 1])]
    print(f"{label:12}: {len(pts)} points (nnz = {int(rowptr[-1])}) in {ms:.0f} ms")
    assert pts == want, f"{label}: enumerated points differ from the CSR arrays"


if __name__ == "__main__":
    main()

"""The CSR SpMV variants :func:`spf.formats.tune` adds to the formats (docs/formats_tune.md,
"CSR kernels"): the same CSR arrays, scheduled or built another way.

* ``CSRP(q)``: the rows cut into ``q`` parts per thread of about ``NNZ / parts`` entries each
  (:func:`row_parts`), the parts run in parallel. OpenMP's static schedule of the row loop
  gives every thread as many *rows*; on a matrix whose long rows gather in one place (a
  power law, an arrow) one thread then gets most of the entries. MKL's inspector balances
  the threads by entries; this is that partition as an spf computation
  (:func:`spmv_csr_parts`): a loop ``p`` over the parts, the rows ``part(p) <= i <
  part(p+1)`` inside it. ``parallelize("p")`` is checked by spf's legality check like any
  schedule: it is legal because ``part`` is declared nondecreasing (two parts then never
  share a row, so never write the same ``y(i)``).
* ``CSRV``: CSR's own SpMV built with :data:`GATHER_CFLAGS`: gcc may then reassociate the
  row's sum and vectorises the inner loop with gathers of ``x(col(k))`` (AVX-512: eight
  entries per instruction). The schedule is CSR's; the reassociation changes only the
  rounding, and the tuner compares every candidate with scipy's ``A @ x`` within round-off.
* ``CSRPV(q)``: both.

SELL(C, 1)'s SpMV is built here too (:func:`spmv_sell_chunks`): the generic SpMV over the
format's relation bounds the loop over a chunk's ``C`` rows by a minimum of three terms
(``C``, the rows left before ``N``, the slots left before ``NV``) recomputed per column, so
gcc does not vectorise it. Here the chunks that hold ``C`` rows of the matrix (``NF = N //
C`` of them) run a loop of exactly ``C`` rows, unit stride in ``val``, ``scol`` and ``y``
(spf keeps the chunk's ``C`` sums in a local tile across its columns), and the last, partial
chunk runs in a second statement. ``SELLV(C)`` is that kernel with the row loop vectorised
(``vectorize("r", C)``: ``#pragma omp simd``) and built with :data:`SIMD_CFLAGS`: gathers of
``x(scol(k))``. Neither reorders a sum: the results are bitwise those of the generic kernel.
"""

from __future__ import annotations

import platform
from typing import Any

import numpy as np

from spf.computation import Computation, Stmt
from spf.dtypes import index_name

__all__ = [
    "GATHER_CFLAGS",
    "SIMD_CFLAGS",
    "chunk_args",
    "parts_args",
    "row_parts",
    "spmv_csr_parts",
    "spmv_sell_chunks",
]

GATHER_CFLAGS: tuple[str, ...] = (
    "-O3",
    "-march=native",
    "-fno-trapping-math",
    "-fno-signed-zeros",
    "-fassociative-math",
    "-ffp-contract=fast",
    *(("-mtune-ctrl=use_gather",) if platform.machine() in ("x86_64", "AMD64") else ()),
)
"""spf's ``-O3 -march=native`` plus what gcc needs to vectorise a floating-point sum
(reassociation, no signed zeros or traps) and fused multiply-adds; on x86-64 also
``-mtune-ctrl=use_gather``: gcc 12 tunes recent Intel cores to assemble a gather from
scalar loads (the gather instruction's microcode mitigation made it slow on some), which
loses the gain; the tuner measures whether the gathers pay on this machine and matrix."""

SIMD_CFLAGS: tuple[str, ...] = (
    "-std=c99",
    "-O3",
    "-march=native",
    *(("-mtune-ctrl=use_gather",) if platform.machine() in ("x86_64", "AMD64") else ()),
)
"""spf's default flags (no reassociation, no fused multiply-add) and, on x86-64, the gather
instructions gcc 12 avoids on recent Intel cores (see :data:`GATHER_CFLAGS`): for a loop
that ``#pragma omp simd`` vectorises without reordering any sum (``SELLV``)."""


def spmv_csr_parts(index_dtype: str | None = None) -> Computation:
    """``y(i) += A(k) * x(col(k))`` over ``{[p, i, k]: 0 <= p < NP && part(p) <= i <
    part(p+1) && rowptr(i) <= k < rowptr(i+1)}``: CSR's SpMV with its rows in ``NP`` parts
    (the arrays of :func:`parts_args`), unscheduled; ``parallelize("p")`` runs the parts in
    parallel. ``index_dtype``: the three index arrays' type (None: int32)."""
    dtype = index_name(index_dtype) if index_dtype is not None else "int32"
    comp = Computation("spmv_csr_parts_generated")
    for name, extent in (("y", "N"), ("A", "NNZ"), ("x", "M")):
        comp.add_data_space(name, "double", shape=(extent,))
    comp.declare_uf("part", domain="{[t]: 0 <= t <= NP}", range="{[v]: 0 <= v <= N}",
                    monotonic="nondecreasing", dtype=dtype)  # fmt: skip
    comp.declare_uf("rowptr", domain="{[t]: 0 <= t <= N}", range="{[v]: 0 <= v <= NNZ}",
                    monotonic="nondecreasing", dtype=dtype)  # fmt: skip
    comp.declare_uf("col", domain="{[t]: 0 <= t < NNZ}", range="{[v]: 0 <= v < M}",
                    dtype=dtype)  # fmt: skip
    comp.add_stmt(
        Stmt(
            "$y$(i) += $A$(k) * $x$(col(k));",
            "{[p, i, k]: 0 <= p < NP && part(p) <= i < part(p+1) && rowptr(i) <= k < rowptr(i+1)}",
            "{[p, i, k] -> [0, p, 0, i, 0, k, 0]}",
            name="spmv",
        )
    )
    return comp


def row_parts(rowptr: Any, parts: int) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Row boundaries ``part[0] = 0 <= part[1] <= ... <= part[parts] = N`` cutting CSR's rows
    into ``parts`` runs of about ``NNZ / parts`` entries: part ``p`` starts at the first row
    whose entries begin at or after ``p * NNZ / parts`` (a part may be empty; none holds more
    than its share plus one row)."""
    rp = np.asarray(rowptr, dtype=np.int64)
    n, nnz = rp.size - 1, int(rp[-1]) if rp.size else 0
    targets = (np.arange(parts + 1, dtype=np.int64) * nnz) // max(parts, 1)
    bounds = np.searchsorted(rp[:-1], targets, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, n
    return np.minimum(np.maximum.accumulate(bounds), n)


def parts_args(args: dict[str, Any], parts: int) -> dict[str, Any]:
    """CSR's arguments (``spf.sparse.csr_args``) with ``part`` (:func:`row_parts`, in the
    index arrays' dtype) and ``NP`` for :func:`spmv_csr_parts`."""
    rowptr = args["rowptr"]
    return {**args, "part": row_parts(rowptr, parts).astype(rowptr.dtype), "NP": int(parts)}


def spmv_sell_chunks(
    c: int, index_dtype: str | None = None, *, vector: bool = False
) -> Computation:
    """``y(C*ch + r) += val(cs(ch) + C*w + r) * x(scol(cs(ch) + C*w + r))`` over the chunks
    ``0 <= ch < NF`` that hold ``C`` rows (``0 <= w < cl(ch)``, ``0 <= r < C``: statement
    ``spmv``), then over the rows ``C*NF <= i < N`` of the last, partial chunk (statement
    ``last``, when ``NF < NC``): SELL(``c``, 1)'s SpMV on the arrays of :func:`chunk_args`.
    ``vector=True`` vectorises the row loop of ``spmv`` (``vectorize("r", c)``)."""
    dtype = index_name(index_dtype) if index_dtype is not None else "int32"
    comp = Computation(f"spmv_sell{c}_chunks{'_simd' if vector else ''}_generated")
    for name, extent in (("y", "N"), ("val", "NV"), ("x", "M")):
        comp.add_data_space(name, "double", shape=(extent,))
    comp.declare_uf("cs", domain="{[t]: 0 <= t <= NC}", range="{[v]: 0 <= v <= NV}",
                    monotonic="nondecreasing", dtype=dtype)  # fmt: skip
    comp.declare_uf("cl", domain="{[t]: 0 <= t < NC}", range="{[v]: 0 <= v <= M}", dtype=dtype)
    comp.declare_uf("scol", domain="{[t]: 0 <= t < NV}", range="{[v]: 0 <= v < M}", dtype=dtype)
    for name, chunk, first, rows, order in (
        ("spmv", "ch", "0 <= ch < NF", f"0 <= r < {c}", "0, ch, 0, w, 0, r, 0"),
        ("last", "NF", "NF < NC", f"0 <= r < N - {c}*NF", "1, w, 0, r, 0, 0, 0"),
    ):
        k = f"cs({chunk}) + {c}*w + r"
        loops = "ch, w, r" if chunk == "ch" else "w, r"
        comp.add_stmt(
            Stmt(
                f"$y$({c}*{chunk} + r) += $val$({k}) * $x$(scol({k}));",
                f"{{[{loops}]: {first} && 0 <= w < cl({chunk}) && {rows}}}",
                f"{{[{loops}] -> [{order}]}}",
                name=name,
            )
        )
    if vector:
        comp.stmt("spmv").vectorize("r", c)
    return comp


def chunk_args(args: dict[str, Any], c: int) -> dict[str, Any]:
    """SELL(``c``, 1)'s arguments (``spf.sparse.sell_args``) with ``NF``, the chunks that
    hold ``c`` rows of the matrix, for :func:`spmv_sell_chunks`."""
    return {**args, "NF": int(args["N"]) // c}

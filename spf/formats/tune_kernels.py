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
"""

from __future__ import annotations

import platform
from typing import Any

import numpy as np

from spf.computation import Computation, Stmt
from spf.dtypes import index_name

__all__ = ["GATHER_CFLAGS", "parts_args", "row_parts", "spmv_csr_parts"]

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

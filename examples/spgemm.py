"""Sparse outputs: C = A·B in CSR with spf.kernels.spgemm_csr() (docs/formats.md).

The pattern of C is computed at run time: a symbolic phase sizes C (its row pointers), the
caller-side wrapper allocates C's arrays, a numeric phase fills them using dense per-row
workspaces, each phase parallel over rows. Also shows a run-time index array: one
Computation that builds CSR row pointers from COO rows and uses them as a UF right away.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import spf


def spgemm() -> None:
    a = sp.csr_array(spf.sparse.poisson2d(60))
    product = spf.kernels.spgemm_csr()
    print(product.numeric.loop_structure())
    out = product.compile()(
        **spf.sparse.csr_args(a, prefix="A_"), **spf.sparse.csr_args(a, prefix="B_")
    )
    c = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=(out["N"], out["M"]))
    want = sp.csr_array(a @ a)
    want.sort_indices()
    assert np.array_equal(c.indptr, want.indptr)
    assert np.array_equal(c.indices, want.indices)  # columns sorted within rows
    assert abs(c - want).max() < 1e-12
    print(f"C = A·A: {c.nnz} nonzeros, matches scipy")


def rowptr_from_coo() -> None:
    comp = spf.Computation("rowsum")
    comp.declare_uf("row", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}")
    comp.add_data_space("cnt", "int32_t", shape=("N",))
    comp.add_data_space("rowptr", "int32_t", shape=("N+1",), index=True)
    comp.declare_uf("rowptr", range="{[v]: 0 <= v <= NNZ}", monotonic="nondecreasing")
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$cnt$(i) = 0;", "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt("$cnt$(row(k)) += 1;", "{[k]: 0 <= k < NNZ}"))
    comp.add_stmt(spf.Stmt("$rowptr$(0) = 0;", "{[z]: z = 0}"))
    comp.add_stmt(spf.Stmt("$rowptr$(i+1) = $rowptr$(i) + $cnt$(i);", "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt("$y$(i) = 0;", "{[i]: 0 <= i < N}"))
    comp.add_stmt(
        spf.Stmt("$y$(i) += $A$(k);", "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}")
    )
    comp.stmt("s5").parallelize("i")  # the rows only read rowptr
    rng = np.random.default_rng(0)
    n, nnz = 100, 700
    row = np.sort(rng.integers(0, n, nnz)).astype(np.int32)
    vals = rng.random(nnz)
    rowptr, y = np.zeros(n + 1, np.int32), np.zeros(n)
    comp.compile()(N=n, NNZ=nnz, row=row, cnt=np.zeros(n, np.int32), rowptr=rowptr, A=vals, y=y)
    assert np.array_equal(rowptr, np.concatenate([[0], np.cumsum(np.bincount(row, minlength=n))]))
    assert np.allclose(y, np.bincount(row, weights=vals, minlength=n))
    print("rowptr built and used as a UF in one Computation: matches numpy")


if __name__ == "__main__":
    spgemm()
    rowptr_from_coo()

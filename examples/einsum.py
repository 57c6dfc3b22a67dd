"""Sparse tensor algebra from index notation with spf.einsum (docs/einsum.md).

Each formula becomes an ordinary spf Computation over its operands' format relations:
SpMV and SpAdd on scipy matrices (the sum into a CSR output, built in two phases), and
MTTKRP on a CSF tensor converted from coordinate lists by spf.formats.convert. Every result
is checked against numpy / scipy.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import spf
from spf.formats import COO, CSF, CSR


def spmv_and_spadd() -> None:
    a = sp.random_array((400, 300), density=0.02, format="csr", rng=1)
    b = sp.random_array((400, 300), density=0.02, format="csr", rng=2)
    spmv = spf.einsum("y(i) = A(i,j) * x(j) + 0.5 * z(i)", A=CSR)
    print(spmv.loop_structure())
    x, z, y = np.ones(300), np.arange(400.0), np.zeros(400)
    spmv.compile()(y=y, x=x, z=z, **spf.sparse.csr_args(a, prefix="A_"))
    assert np.allclose(y, a @ x + 0.5 * z)
    print("y = A x + 0.5 z: matches scipy")

    spadd = spf.einsum("C(i,j) = A(i,j) - 2 * B(i,j)", A=CSR, B=CSR, C=CSR)
    print(spadd.numeric.loop_structure())
    out = spadd.compile()(
        **spf.sparse.csr_args(a, prefix="A_"), **spf.sparse.csr_args(b, prefix="B_")
    )
    c = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=(out["N"], out["M"]))
    want = sp.csr_array(a - 2 * b)
    want.sort_indices()
    assert np.array_equal(c.indptr, want.indptr)
    assert np.array_equal(c.indices, want.indices)
    assert np.allclose(c.data, want.data)
    print(f"C = A - 2B in CSR: {out['NNZ']} entries, columns sorted, matches scipy")


def mttkrp() -> None:
    shape, rank = (60, 50, 40), 8
    rng = np.random.default_rng(0)
    coords = np.stack([rng.integers(0, n, 3000) for n in shape])  # duplicates are summed
    values = rng.random(3000)
    csf = spf.formats.convert(COO(3), CSF(3)).compile()(
        **spf.sparse.coo_tensor_args(coords, values, shape)
    )
    print(f"CSF: {csf['NNZ1']} slices, {csf['NNZ2']} fibers, {csf['NNZ']} entries")
    comp = spf.einsum("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", B=CSF(3))
    comp.stmt("s1").parallelize("B_p1")  # slices write disjoint rows of A
    print(comp.loop_structure())
    c, d, a = rng.random((shape[1], rank)), rng.random((shape[2], rank)), np.zeros((shape[0], rank))
    operand = {("B" if k == "A" else f"B_{k}"): v for k, v in csf.items()}
    comp.compile()(A=a, C=c, D=d, **operand)
    dense = np.zeros(shape)
    np.add.at(dense, tuple(coords), values)
    assert np.allclose(a, np.einsum("ikl,kj,lj->ij", dense, c, d))
    print("MTTKRP on CSF: matches numpy")


if __name__ == "__main__":
    spmv_and_spadd()
    mttkrp()

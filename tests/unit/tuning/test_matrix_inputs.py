"""``spf tune --matrix``: the index arrays made from the matrix have the dtype the kernel
declares, so that a kernel with 64-bit index arrays (a C file's ``long *``) runs on them."""

from __future__ import annotations

import numpy as np

import spf
from spf.tuning.inputs import kernel_args


def test_matrix_index_arrays_take_the_kernels_declared_dtype() -> None:
    """csr_args' default (int32) went to a kernel declaring int64 UFs: the compiled call then
    refused them ("convert it with col.astype(np.int64)"), which --matrix gives no way to do."""
    m = spf.sparse.poisson2d(3)
    for kernel, want in (
        (spf.kernels.spmv_csr(index_dtype="int64"), np.int64),
        (spf.kernels.spmv_csr(), np.int32),
        (spf.kernels.spmv_coo(index_dtype="int64"), np.int64),
        (spf.kernels.sptrsv_csr(index_dtype="int64"), np.int64),
    ):
        args = kernel_args(kernel, m, {}, seed=0)
        for uf in kernel.ufs:
            assert args[uf].dtype == want, (kernel.name, uf, args[uf].dtype)

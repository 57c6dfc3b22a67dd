"""``spf.einsum``: sparse tensor algebra from index notation (docs/einsum.md).

``spf.einsum("y(i) = A(i,j) * x(j)", A=spf.formats.CSR)`` parses the formula
(:mod:`spf.index_notation.parse`), distributes it into products with their summed indices
(:mod:`spf.index_notation.expand`), binds every sparse operand's format relation to the formula's
indices (:mod:`spf.index_notation.operands`), orders the loops and lowers each product to an
iteration domain over the formats' relations (:mod:`spf.index_notation.formula`), and builds an
ordinary spf Computation: printable, schedulable, checked and compiled like any other
(:mod:`spf.index_notation.build`). A sparse output is built in two phases, sizing then filling
(:mod:`spf.index_notation.sparse_output`), like ``spf.kernels.spgemm_csr()``.
"""

from __future__ import annotations

from collections.abc import Mapping

from spf._gc import with_fewer_collections
from spf.dtypes import index_name
from spf.errors import ArgumentError
from spf.index_notation.build import Einsum
from spf.index_notation.formula import bind
from spf.index_notation.kernel import EinsumKernel
from spf.index_notation.pairwise import warn_pairwise
from spf.index_notation.sparse_output import SparseEinsum, SparseEinsumKernel, build_sparse

__all__ = ["Einsum", "EinsumKernel", "SparseEinsum", "SparseEinsumKernel", "einsum"]


def _index_dtype(index_dtype: object) -> str:
    return index_name(index_dtype)


@with_fewer_collections
def einsum(
    expr: str,
    /,
    *,
    sizes: Mapping[str, str] | None = None,
    index_dtype: str = "int32",
    name: str | None = None,
    parallel: bool = True,
    **formats: object,
) -> Einsum | SparseEinsum:
    """The computation of the index-notation formula ``expr``.

    ``formats`` gives the sparse tensors' formats by name (``A=spf.formats.CSR``); every
    other tensor is a dense numpy array. ``sizes`` renames index extents (default: the index
    in capitals, ``i`` -> ``I``); ``index_dtype`` is the type of every sparse operand's
    index arrays (``"int32"`` or ``"int64"``); ``name`` names the computation (default
    ``einsum_<output>``). A dense or scalar output gives an :class:`Einsum` (a
    Computation); a sparse output an :class:`SparseEinsum` (two Computations, sizing and
    filling; with ``parallel`` their row loops run in parallel).

    >>> import numpy as np, scipy.sparse as sp, spf
    >>> comp = einsum("y(i) = A(i,j) * x(j)", A=spf.formats.CSR)
    >>> print(comp.loop_structure())
    for i:
      s0
      for A_k:
        s1
    >>> A = sp.csr_array(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> y = np.zeros(2)
    >>> comp.compile()(y=y, x=np.ones(2), **spf.sparse.csr_args(A, prefix="A_"))
    >>> y
    array([3., 3.])
    """
    if not isinstance(parallel, bool):
        raise ArgumentError(f"einsum: parallel must be True or False, got {parallel!r}")
    f = bind(expr, formats, sizes, _index_dtype(index_dtype))
    warn_pairwise(f)
    label = name or f"einsum_{f.output.name}"
    if not label.isidentifier():
        raise ArgumentError(f"einsum: name must be a C identifier, got {label!r}")
    if f.out_format() is not None:
        return build_sparse(f, label, parallel=parallel)
    return Einsum.build(f, label)

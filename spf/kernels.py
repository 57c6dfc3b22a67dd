"""Ready-made kernels (docs/api.md): each function returns a fresh :class:`Computation`.

Names of data spaces, UFs and symbolic constants are fixed, so a kernel can be scheduled,
generated and called by name; ``spf.sparse`` turns a ``scipy.sparse`` matrix into the keyword
arguments of the matching sparse kernel. Every kernel carries its default 2d+1 identity
schedule only; users schedule it further.

>>> comp = spmv_csr()
>>> [s.loops for s in comp.stmts]
[('i', 'k', 'j')]
>>> list(comp.data_spaces)
['y', 'A', 'x']

Sparse kernels take a keyword-only ``index_dtype`` (``"int32"``, the default, or ``"int64"``):
the element type their index arrays (UFs) are declared with, to match
``spf.sparse.csr_args(matrix, index_dtype=...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from spf.computation import Computation, Stmt
from spf.dtypes import index_name
from spf.errors import ArgumentError
from spf.formats.builtin import builtin
from spf.formats.format import Format
from spf.formats.spmv import spmv_computation

if TYPE_CHECKING:
    from spf.index_notation.sparse_output import SparseEinsum as SpGEMM
    from spf.index_notation.sparse_output import SparseEinsumKernel as SpGEMMKernel

_SPARSE_OUTPUT = {"SpGEMM": "SparseEinsum", "SpGEMMKernel": "SparseEinsumKernel"}
"""Names this module re-exports from :mod:`spf.index_notation.sparse_output`, loaded on
first use (:func:`__getattr__`): index notation's modules cost ~15 ms of ``import spf``
that the other kernels never need."""


def __getattr__(name: str) -> Any:
    """``SpGEMM`` and ``SpGEMMKernel``, imported when first asked for."""
    if name in _SPARSE_OUTPUT:
        from spf.index_notation import sparse_output

        value = getattr(sparse_output, _SPARSE_OUTPUT[name])
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "SPGEMM",
    "SpGEMM",
    "SpGEMMKernel",
    "blur2d",
    "dense_mv",
    "gauss_seidel_csr",
    "gemm",
    "ilu0_csr",
    "jacobi2d",
    "spgemm_csr",
    "spmm_csr",
    "spmtv_csr",
    "spmv",
    "spmv_bcsr",
    "spmv_coo",
    "spmv_csc",
    "spmv_csr",
    "sptrsv_csr",
    "trsv_diag_csr",
]

_INDEX_DTYPES = ("int32", "int64")


_index_dtype = index_name


def _declare_ptr(comp: Computation, name: str, n: str, nnz: str, dtype: str) -> None:
    """A compressed pointer array ``name[0..n]`` with values in ``0..nnz``, nondecreasing."""
    comp.declare_uf(
        name,
        domain=f"{{[i]: 0 <= i <= {n}}}",
        range=f"{{[v]: 0 <= v <= {nnz}}}",
        monotonic="nondecreasing",
        dtype=dtype,
    )


def _declare_idx(comp: Computation, name: str, nnz: str, extent: str, dtype: str) -> None:
    """An index array ``name[0..nnz-1]`` with values in ``0..extent-1``."""
    comp.declare_uf(
        name,
        domain=f"{{[k]: 0 <= k < {nnz}}}",
        range=f"{{[v]: 0 <= v < {extent}}}",
        dtype=dtype,
    )


# ====================================================================================== dense
def dense_mv() -> Computation:
    """Dense matrix-vector product ``y += A·x``.

    ``y[i] += A[i, j] * x[j]`` for ``0 <= i < N``, ``0 <= j < M``; data spaces ``y[N]``,
    ``A[N, M]``, ``x[M]``; loops ``i, j``.

    >>> import numpy as np
    >>> A = np.arange(6.0).reshape(2, 3); x = np.ones(3); y = np.zeros(2)
    >>> dense_mv().interpret(y=y, A=A, x=x)
    >>> y
    array([ 3., 12.])
    """
    comp = Computation("dense_mv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(
        Stmt(
            "$y$(i) += $A$(i, j) * $x$(j);",
            "{[i,j]: 0 <= i < N && 0 <= j < M}",
            "{[i,j] -> [0,i,0,j,0]}",
        )
    )
    return comp


def gemm() -> Computation:
    """Dense matrix-matrix product ``C += A·B``.

    ``C[i, j] += A[i, k] * B[k, j]`` for ``0 <= i < N``, ``0 <= j < M``, ``0 <= k < K``;
    data spaces ``C[N, M]``, ``A[N, K]``, ``B[K, M]``; loops ``i, j, k``.

    >>> import numpy as np
    >>> A = np.eye(2); B = np.arange(4.0).reshape(2, 2); C = np.zeros((2, 2))
    >>> gemm().interpret(C=C, A=A, B=B)
    >>> C
    array([[0., 1.],
           [2., 3.]])
    """
    comp = Computation("gemm")
    comp.add_data_space("C", "double", shape=("N", "M"))
    comp.add_data_space("A", "double", shape=("N", "K"))
    comp.add_data_space("B", "double", shape=("K", "M"))
    comp.add_stmt(
        Stmt(
            "$C$(i, j) += $A$(i, k) * $B$(k, j);",
            "{[i,j,k]: 0 <= i < N && 0 <= j < M && 0 <= k < K}",
            "{[i,j,k] -> [0,i,0,j,0,k,0]}",
        )
    )
    return comp


# ===================================================================================== sparse
def _format_spmv(fmt: str, name: str, index_dtype: str) -> Computation:
    """The SpMV of built-in format ``fmt`` (:meth:`spf.Format.spmv`) named ``name``, its
    statement ``s0``, without the format's ordering facts (entries in any order)."""
    return spmv_computation(
        builtin(fmt), _index_dtype(index_dtype), name=name, stmt=None, facts=False
    )


def spmv_csr(*, index_dtype: str = "int32") -> Computation:
    """Sparse matrix-vector product ``y += A·x``, ``A`` in CSR.

    ``y[i] += A[k] * x[j]`` over
    ``{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}`` (loops
    ``i, k, j``); data spaces ``y[N]``, ``A[NNZ]``, ``x[M]``; UFs ``rowptr`` (``N+1``
    nondecreasing values in ``0..NNZ``) and ``col`` (``NNZ`` values in ``0..M-1``, any order).

    >>> import numpy as np
    >>> y = np.zeros(2)
    >>> spmv_csr().interpret(y=y, A=np.array([1.0, 2.0, 3.0]), x=np.array([1.0, 10.0]),
    ...                      rowptr=np.array([0, 2, 3]), col=np.array([0, 1, 1]), NNZ=3)
    >>> y
    array([21., 30.])
    """
    return _format_spmv("CSR", "spmv_csr", index_dtype)


def spmv(fmt: Format, *, index_dtype: str | None = None) -> Computation:
    """Sparse matrix-vector product ``y += A·x`` over any :class:`spf.Format`.

    Generated from the format's storage relation: one statement
    ``y(i) += A(position) * x(j)`` over :meth:`Format.scan` (the relation's variables, the
    ones fixed by equalities computed from the loops), loops in :attr:`Format.loops` order.
    Data spaces ``y[shape[0]]``, the value array, ``x[shape[1]]``; the format's UFs (declared
    ``index_dtype`` when given) and facts. ``spf.sparse.format_args(matrix, fmt)`` gives its
    arguments.

    >>> import numpy as np
    >>> from spf.formats import CSR
    >>> y = np.zeros(2)
    >>> spmv(CSR).interpret(y=y, A=np.array([1.0, 2.0, 3.0]), x=np.array([1.0, 10.0]),
    ...                     rowptr=np.array([0, 2, 3]), col=np.array([0, 1, 1]), NNZ=3)
    >>> y
    array([21., 30.])
    """
    if not isinstance(fmt, Format):
        raise ArgumentError(f"spmv: expected an spf.Format (spf.formats.CSR, ...), got {fmt!r}")
    return fmt.spmv(index_dtype)


def spmtv_csr(*, index_dtype: str = "int32") -> Computation:
    """Transposed sparse matrix-vector product ``y += A^T·x``, ``A`` (``N`` by ``M``) in CSR.

    ``y[j] += A[k] * x[i]`` over
    ``{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}`` (loops
    ``i, k, j``); data spaces ``y[M]``, ``A[NNZ]``, ``x[N]``; UFs as in :func:`spmv_csr`, so
    ``spf.sparse.csr_args(A)`` gives its arguments. Row ``i`` scatters into ``y(col(k))``:
    the row loop carries reduction dependences only, so it runs in parallel with
    ``parallelize("i", reduction="atomic")`` or ``reduction="privatize"``
    (docs/scheduling.md).

    >>> import numpy as np
    >>> y = np.zeros(2)
    >>> spmtv_csr().interpret(y=y, A=np.array([1.0, 2.0, 3.0]), x=np.array([1.0, 10.0]),
    ...                       rowptr=np.array([0, 2, 3]), col=np.array([0, 1, 1]), NNZ=3)
    >>> y
    array([ 1., 32.])
    """
    dtype = _index_dtype(index_dtype)
    comp = Computation("spmtv_csr")
    comp.add_data_space("y", "double", shape=("M",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("N",))
    _declare_ptr(comp, "rowptr", "N", "NNZ", dtype)
    _declare_idx(comp, "col", "NNZ", "M", dtype)
    comp.add_stmt(
        Stmt(
            "$y$(j) += $A$(k) * $x$(i);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0,i,0,k,0,j,0]}",
        )
    )
    return comp


def spmv_coo(*, index_dtype: str = "int32") -> Computation:
    """Sparse matrix-vector product ``y += A·x``, ``A`` in COO (coordinate) form.

    ``y[i] += A[k] * x[j]`` over ``{[k,i,j]: 0 <= k < NNZ && i = row(k) && j = col(k)}``
    (loops ``k, i, j``); data spaces ``y[N]``, ``A[NNZ]``, ``x[M]``; UFs ``row`` (values in
    ``0..N-1``) and ``col`` (values in ``0..M-1``), entries in any order, duplicates summed.

    >>> import numpy as np
    >>> y = np.zeros(2)
    >>> spmv_coo().interpret(y=y, A=np.array([1.0, 2.0]), x=np.array([1.0, 10.0]),
    ...                      row=np.array([1, 0]), col=np.array([0, 1]), NNZ=2)
    >>> y
    array([20.,  1.])
    """
    return _format_spmv("COO", "spmv_coo", index_dtype)


def spmv_csc(*, index_dtype: str = "int32") -> Computation:
    """Sparse matrix-vector product ``y += A·x``, ``A`` in CSC.

    ``y[i] += A[k] * x[j]`` over
    ``{[j,k,i]: 0 <= j < M && colptr(j) <= k < colptr(j+1) && i = row(k)}`` (loops
    ``j, k, i``); data spaces ``y[N]``, ``A[NNZ]``, ``x[M]``; UFs ``colptr`` (``M+1``
    nondecreasing values in ``0..NNZ``) and ``row`` (``NNZ`` values in ``0..N-1``).

    >>> import numpy as np
    >>> y = np.zeros(2)
    >>> spmv_csc().interpret(y=y, A=np.array([1.0, 2.0, 3.0]), x=np.array([1.0, 10.0]),
    ...                      colptr=np.array([0, 1, 3]), row=np.array([0, 0, 1]), NNZ=3)
    >>> y
    array([21., 30.])
    """
    return _format_spmv("CSC", "spmv_csc", index_dtype)


def spmv_bcsr(R: int, C: int, *, index_dtype: str = "int32") -> Computation:  # noqa: N803
    """Sparse matrix-vector product ``y += A·x``, ``A`` in block CSR with ``RxC`` blocks.

    ``R`` and ``C`` are baked in (the computation is named ``spmv_bcsr_<R>x<C>``). Block
    ``k`` of block row ``i`` sits at block column ``j = bcol(k)`` and is stored row-major at
    ``A[k*R*C : (k+1)*R*C]``:
    ``y[R*i + ii] += A[R*C*k + C*ii + jj] * x[C*j + jj]`` over
    ``{[i,k,j,ii,jj]: 0 <= i < NB && browptr(i) <= k < browptr(i+1) && j = bcol(k)
    && 0 <= ii < R && 0 <= jj < C}`` (loops ``i, k, j, ii, jj``); data spaces ``y[NB*R]``,
    ``A[NNZB*R*C]``, ``x[MB*C]``; UFs ``browptr`` and ``bcol``.

    >>> import numpy as np
    >>> y = np.zeros(2)
    >>> spmv_bcsr(2, 1).interpret(y=y, A=np.array([1.0, 2.0, 3.0, 4.0]),
    ...     x=np.array([1.0, 10.0]), browptr=np.array([0, 2]), bcol=np.array([0, 1]),
    ...     NB=1, MB=2, NNZB=2)
    >>> y
    array([31., 42.])
    """
    for what, value in (("R", R), ("C", C)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ArgumentError(
                f"spmv_bcsr: block size {what} must be a positive int, got {value!r}"
            )
    R, C = int(R), int(C)  # noqa: N806 (a numpy int, as spf.sparse.bcsr_args takes)
    dtype = _index_dtype(index_dtype)
    comp = Computation(f"spmv_bcsr_{R}x{C}")
    comp.add_data_space("y", "double", shape=(f"NB*{R}",))
    comp.add_data_space("A", "double", shape=(f"NNZB*{R * C}",))
    comp.add_data_space("x", "double", shape=(f"MB*{C}",))
    _declare_ptr(comp, "browptr", "NB", "NNZB", dtype)
    _declare_idx(comp, "bcol", "NNZB", "MB", dtype)
    comp.add_stmt(
        Stmt(
            f"$y$({R}*i + ii) += $A$({R * C}*k + {C}*ii + jj) * $x$({C}*j + jj);",
            "{[i,k,j,ii,jj]: 0 <= i < NB && browptr(i) <= k < browptr(i+1) && j = bcol(k)"
            f" && 0 <= ii < {R} && 0 <= jj < {C}}}",
            "{[i,k,j,ii,jj] -> [0,i,0,k,0,j,0,ii,0,jj,0]}",
        )
    )
    return comp


TRIANGULAR = "forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i"
"""Every entry of row ``i`` of a lower-triangular CSR matrix lies in a column ``<= i``: what
lets ``wavefront("i")`` order the solve (rows depend on earlier rows only)."""

DIAGONAL_LAST = "forall i, k: rowptr(i) <= k < rowptr(i+1) - 1 => col(k) < i"
"""Every entry of row ``i`` but its last lies left of the diagonal (the diagonal is stored
last, as ``sptrsv_csr`` requires): what proves that a row never reads its own ``u(i)`` while
it updates it, so the generated row loop reads ``u(col(k))`` without a compare against ``i``
per entry (:mod:`spf.codegen.apart`)."""


DIAGONAL_STORED = "forall i, k: k = rowptr(i+1) - 1 => col(k) = i"
"""The entry before row ``i + 1``'s first is in column ``i``: row ``i``'s last entry is its
diagonal, and no row is empty (an empty row ``i > 0`` would end at row ``i - 1``'s last
entry, in column ``i - 1``; an empty first row fails the division's bounds obligation
``0 <= k``). One test per row, in the loops on new contents, where the division reads the
row's last entry; its point ``i = -1`` (``rowptr(0) = 0``, in effect), which no row visits,
before them (:func:`spf.analysis.fact_plan.in_loop_cover`)."""


def sptrsv_csr(*, index_dtype: str = "int32", triangular: bool = True) -> Computation:
    """Sparse lower-triangular solve ``u = L⁻¹·f``, ``L`` in CSR.

    Columns of each row sorted, the diagonal stored last (``spf.sparse.sptrsv_args`` checks
    this); no column of row ``i`` lies above ``i`` (:data:`TRIANGULAR`) and every entry but
    the row's last lies left of it (:data:`DIAGONAL_LAST`) and the last is the diagonal
    (:data:`DIAGONAL_STORED`: no row is empty): assumptions the kernel checks
    (``triangular=False`` leaves all three out, and with them what they prove: row ``i`` is
    then divided by ``L(rowptr(i+1) - 1)`` as written). Three
    statements inside the row loop ``i``::

        s0: u[i] = f[i]                                  {[i]: 0 <= i < N}
        s1: u[i] -= L[k] * u[j]      {[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)-1
                                                 && j = col(k)}
        s2: u[i] = u[i] / L[k]       {[i,k]: 0 <= i < N && k = rowptr(i+1)-1}

    The main statement is ``s1`` (loops ``i, k, j``); data spaces ``u[N]``, ``L[NNZ]``,
    ``f[N]``; UFs ``rowptr`` and ``col``.

    >>> import numpy as np
    >>> u = np.zeros(2)
    >>> sptrsv_csr().interpret(u=u, L=np.array([2.0, 1.0, 4.0]), f=np.array([2.0, 9.0]),
    ...                        rowptr=np.array([0, 1, 3]), col=np.array([0, 0, 1]), NNZ=3)
    >>> u
    array([1., 2.])
    """
    dtype = _index_dtype(index_dtype)
    comp = Computation("sptrsv_csr")
    comp.add_data_space("u", "double", shape=("N",))
    comp.add_data_space("L", "double", shape=("NNZ",))
    comp.add_data_space("f", "double", shape=("N",))
    _declare_ptr(comp, "rowptr", "N", "NNZ", dtype)
    _declare_idx(comp, "col", "NNZ", "N", dtype)
    if triangular:
        comp.assume(TRIANGULAR)
        comp.assume(DIAGONAL_LAST)
        comp.assume(DIAGONAL_STORED)
    comp.add_stmt(Stmt("$u$(i) = $f$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    comp.add_stmt(
        Stmt(
            "$u$(i) -= $L$(k) * $u$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) - 1 && j = col(k)}",
            "{[i,k,j] -> [0,i,1,k,0,j,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$u$(i) = $u$(i) / $L$(k);",
            "{[i,k]: 0 <= i < N && k = rowptr(i+1) - 1}",
            "{[i,k] -> [0,i,2,k,0]}",
        )
    )
    return comp


_DIAG_FACTS = (
    "forall i: rowptr(i) <= diag(i) < rowptr(i+1)",
    "forall i: col(diag(i)) = i",
    "forall i, k: rowptr(i) <= k < diag(i) => col(k) < i",
    "forall i, k: diag(i) < k < rowptr(i+1) => i < col(k)",
    "forall i, k: rowptr(i) <= k < rowptr(i+1) - 1 => col(k) < col(k+1)",
)
"""What ``gauss_seidel_csr`` and ``ilu0_csr`` assume about their index arrays: ``diag(i)``
lies inside row ``i`` and points at its diagonal entry, the entries before it are left of the
diagonal (lower part), those after it right of it (upper part), and columns are sorted
(adjacent entries suffice: the check costs O(NNZ))."""


def _diag_csr(comp: Computation, dtype: str) -> None:
    """The UFs and assumptions of a square CSR matrix with a ``diag`` pointer array."""
    _declare_ptr(comp, "rowptr", "N", "NNZ", dtype)
    _declare_idx(comp, "col", "NNZ", "N", dtype)
    comp.declare_uf(
        "diag",
        domain="{[i]: 0 <= i < N}",
        range="{[v]: 0 <= v < NNZ}",
        monotonic="increasing",
        dtype=dtype,
    )
    for fact in _DIAG_FACTS:
        comp.assume(fact)


def gauss_seidel_csr(*, index_dtype: str = "int32") -> Computation:
    """One forward Gauss-Seidel sweep ``x = D⁻¹·(b - L·x - U·x)`` in place, ``A`` in CSR.

    Rows are visited in order; row ``i`` reads the new ``x[j]`` of the rows before it and the
    old ``x[j]`` of the rows after it. ``A`` is square with sorted columns and every diagonal
    entry stored; ``diag(i)`` is the position of ``A[i, i]`` in row ``i``
    (``spf.sparse.gauss_seidel_args`` builds and checks it). Four statements inside the row
    loop ``i``::

        s0: x[i] = b[i]                                   {[i]: 0 <= i < N}
        s1: x[i] -= A[k] * x[j]     {[i,k,j]: 0 <= i < N && rowptr(i) <= k < diag(i)
                                                && j = col(k)}
        s2: x[i] -= A[k] * x[j]     {[i,k,j]: 0 <= i < N && diag(i) < k < rowptr(i+1)
                                                && j = col(k)}
        s3: x[i] = x[i] / A[k]      {[i,k]: 0 <= i < N && k = diag(i)}

    The PLDI'19 loop (Mohammadi et al., ``gs_csr``) sums the whole row, diagonal included,
    into a scalar and multiplies by a precomputed inverse diagonal; this kernel uses the
    ``diag`` pointer of the same paper's ILU0 instead, so it needs no temporary and no extra
    argument, and ``x[i]`` is never read inside its own row. Data spaces ``x[N]``, ``A[NNZ]``,
    ``b[N]``; UFs ``rowptr``, ``col`` and ``diag`` (strictly increasing); the assumptions
    (``comp.assumptions``) say that ``diag(i)`` lies in row ``i`` with ``col(diag(i)) = i``,
    that entries before it are left of the diagonal and entries after it right of it, and
    that columns are sorted. Rows cannot be empty (each holds its diagonal).

    >>> import numpy as np
    >>> x = np.zeros(2)
    >>> gauss_seidel_csr().interpret(x=x, A=np.array([2.0, 1.0, 1.0, 4.0]),
    ...     b=np.array([2.0, 9.0]), rowptr=np.array([0, 2, 4]), col=np.array([0, 1, 0, 1]),
    ...     diag=np.array([0, 3]), NNZ=4)
    >>> x
    array([1., 2.])
    """
    dtype = _index_dtype(index_dtype)
    comp = Computation("gauss_seidel_csr")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("b", "double", shape=("N",))
    _diag_csr(comp, dtype)
    comp.add_stmt(Stmt("$x$(i) = $b$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    comp.add_stmt(
        Stmt(
            "$x$(i) -= $A$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < diag(i) && j = col(k)}",
            "{[i,k,j] -> [0,i,1,k,0,j,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$x$(i) -= $A$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && diag(i) < k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0,i,2,k,0,j,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$x$(i) = $x$(i) / $A$(k);",
            "{[i,k]: 0 <= i < N && k = diag(i)}",
            "{[i,k] -> [0,i,3,k,0]}",
        )
    )
    return comp


def trsv_diag_csr(
    *, upper: bool = False, unit: bool = False, index_dtype: str = "int32"
) -> Computation:
    """Triangular solve ``x = T⁻¹·b`` with a triangular part ``T`` of a square CSR matrix
    ``A`` that has a ``diag`` pointer (as ``gauss_seidel_csr``'s and ``ilu0_csr``'s):
    the lower part (``D + L``, entries left of ``diag(i)`` and the diagonal) or with
    ``upper`` the upper one (``D + U``); ``unit`` takes the diagonal as 1 (not read): after
    ``ilu0_csr`` the two solves ``unit=True`` then ``upper=True`` apply ``(LU)⁻¹``.

    The lower solve runs rows ``i`` in order; the upper solve runs its loop ``t`` over
    rows ``i = N - 1 - t`` (last row first)::

        s0: x[i] = b[i]                                      {[i]: 0 <= i < N}
        s1: x[i] -= A[k] * x[j]    {[i,k,j]: 0 <= i < N && rowptr(i) <= k < diag(i)
                                               && j = col(k)}       (upper: diag(i) < k)
        s2: x[i] = x[i] / A[k]     {[i,k]: 0 <= i < N && k = diag(i)}    (not with unit)

    Data spaces ``x[N]``, ``A[NNZ]``, ``b[N]``; UFs and assumptions those of
    ``gauss_seidel_csr`` (``spf.sparse.gauss_seidel_args`` gives its index arrays).

    >>> import numpy as np
    >>> x = np.zeros(2)
    >>> trsv_diag_csr(upper=True).interpret(x=x, A=np.array([2.0, 1.0, 1.0, 4.0]),
    ...     b=np.array([4.0, 8.0]), rowptr=np.array([0, 2, 4]), col=np.array([0, 1, 0, 1]),
    ...     diag=np.array([0, 3]), NNZ=4)
    >>> x
    array([1., 2.])
    """
    dtype = _index_dtype(index_dtype)
    comp = Computation(f"trsv_{'upper' if upper else 'lower'}{'_unit' if unit else ''}_csr")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("b", "double", shape=("N",))
    _diag_csr(comp, dtype)
    row, it = ("N - 1 - t", "t") if upper else ("i", "i")
    part = f"diag({row}) < k < rowptr({row} + 1)" if upper else f"rowptr({row}) <= k < diag({row})"
    comp.add_stmt(
        Stmt(f"$x$({row}) = $b$({row});", f"{{[{it}]: 0 <= {it} < N}}", f"{{[{it}] -> [0,{it},0]}}")
    )
    comp.add_stmt(
        Stmt(
            f"$x$({row}) -= $A$(k) * $x$(j);",
            f"{{[{it},k,j]: 0 <= {it} < N && {part} && j = col(k)}}",
            f"{{[{it},k,j] -> [0,{it},1,k,0,j,0]}}",
        )
    )
    if not unit:
        comp.add_stmt(
            Stmt(
                f"$x$({row}) = $x$({row}) / $A$(k);",
                f"{{[{it},k]: 0 <= {it} < N && k = diag({row})}}",
                f"{{[{it},k] -> [0,{it},2,k,0]}}",
            )
        )
    return comp


def ilu0_csr(*, index_dtype: str = "int32") -> Computation:
    """Incomplete LU factorization without fill-in, ILU(0), in place on ``A`` in CSR.

    Afterwards the strictly lower part of ``A`` holds ``L`` (unit diagonal not stored) and
    the rest ``U``, on ``A``'s sparsity pattern: ``L·U`` equals ``A`` on every stored
    entry. ``A`` is square with sorted columns and every diagonal entry stored; ``diag(i)``
    is the position of ``A[i, i]`` (``spf.sparse.ilu0_args`` builds and checks it). The
    row-by-row (IKJ) algorithm of the PLDI'19 ILU0 relations (Mohammadi et al.)::

        for i, for k in rowptr(i) .. diag(i)-1:               (entries left of the diagonal)
          s0: A[k] = A[k] / A[d]          d = diag(col(k))
          for j1 in k+1 .. rowptr(i+1)-1, j2 in diag(col(k))+1 .. rowptr(col(k)+1)-1
                  with col(j1) = col(j2):
          s1: A[j1] -= A[k] * A[j2]

    ``s0``: ``{[i,k,d]: 0 <= i < N && rowptr(i) <= k < diag(i) && d = diag(col(k))}``;
    ``s1`` (loops ``i, k, j1, j2``): ``{[i,k,j1,j2]: 0 <= i < N && rowptr(i) <= k < diag(i)
    && k < j1 < rowptr(i+1) && diag(col(k)) < j2 < rowptr(col(k)+1) && col(j1) = col(j2)}``.
    Data space ``A[NNZ]``; UFs ``rowptr``, ``col`` and ``diag`` with the assumptions of
    ``gauss_seidel_csr``. ``dependences()`` finds the 7 dependences PLDI'19 reports as
    satisfiable: ``s0`` of one row never touches what ``s0`` or ``s1`` of another row does,
    which takes PLDI'19's co-monotonicity ``i1 < i2 => diag(i1) < rowptr(i2)``; spf derives
    it from ``diag(i) < rowptr(i+1)`` and the monotonicity of ``rowptr``.

    >>> import numpy as np
    >>> A = np.array([4.0, 2.0, 2.0, 5.0])
    >>> ilu0_csr().interpret(A=A, rowptr=np.array([0, 2, 4]), col=np.array([0, 1, 0, 1]),
    ...                      diag=np.array([0, 3]), N=2, NNZ=4)
    >>> A
    array([4. , 2. , 0.5, 4. ])
    """
    dtype = _index_dtype(index_dtype)
    comp = Computation("ilu0_csr")
    comp.add_data_space("A", "double", shape=("NNZ",))
    _diag_csr(comp, dtype)
    comp.add_stmt(
        Stmt(
            "$A$(k) = $A$(k) / $A$(d);",
            "{[i,k,d]: 0 <= i < N && rowptr(i) <= k < diag(i) && d = diag(col(k))}",
            "{[i,k,d] -> [0,i,0,k,0,d,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$A$(j1) -= $A$(k) * $A$(j2);",
            "{[i,k,j1,j2]: 0 <= i < N && rowptr(i) <= k < diag(i) && k < j1 < rowptr(i+1)"
            " && diag(col(k)) < j2 < rowptr(col(k)+1) && col(j1) = col(j2)}",
            "{[i,k,j1,j2] -> [0,i,0,k,1,j1,0,j2,0]}",
        )
    )
    return comp


def spmm_csr(*, index_dtype: str = "int32") -> Computation:
    """Sparse times dense matrix product ``C += A·B``, ``A`` (``NxM``) in CSR, ``B`` ``MxK``.

    ``C[i, c] += A[k] * B[j, c]`` over
    ``{[i,k,j,c]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && 0 <= c < K}``
    (loops ``i, k, j, c``); data spaces ``C[N, K]``, ``A[NNZ]``, ``B[M, K]``; UFs ``rowptr``
    and ``col``.

    >>> import numpy as np
    >>> C = np.zeros((1, 2))
    >>> spmm_csr().interpret(C=C, A=np.array([2.0]), B=np.array([[1.0, 2.0], [3.0, 4.0]]),
    ...                      rowptr=np.array([0, 1]), col=np.array([1]), NNZ=1)
    >>> C
    array([[6., 8.]])
    """
    dtype = _index_dtype(index_dtype)
    comp = Computation("spmm_csr")
    comp.add_data_space("C", "double", shape=("N", "K"))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("B", "double", shape=("M", "K"))
    _declare_ptr(comp, "rowptr", "N", "NNZ", dtype)
    _declare_idx(comp, "col", "NNZ", "M", dtype)
    comp.add_stmt(
        Stmt(
            "$C$(i, c) += $A$(k) * $B$(j, c);",
            "{[i,k,j,c]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && 0 <= c < K}",
            "{[i,k,j,c] -> [0,i,0,k,0,j,0,c,0]}",
        )
    )
    return comp


# ===================================================================== sparse outputs (SpGEMM)
SPGEMM = "C(i,j) = A(i,k) * B(k,j)"
"""SpGEMM in index notation: :func:`spgemm_csr` is this formula with CSR operands."""


def spgemm_csr(*, index_dtype: str = "int32", parallel: bool = True) -> SpGEMM:
    """Sparse times sparse ``C = A·B`` in CSR whose pattern is computed at run time.

    It is ``spf.einsum("C(i,j) = A(i,k) * B(k,j)", A=CSR, B=CSR, C=CSR)`` with the extents
    named ``N`` (rows of ``A``), ``K`` and ``M`` (columns of ``B``): a symbolic phase
    (``.symbolic``) counts the columns of each row of ``C`` in a dense marker workspace and
    prefix-sums them into ``C_rowptr``; a numeric phase (``.numeric``) accumulates each row
    in a dense workspace row, sorts its columns and gathers them (docs/einsum.md). With
    ``parallel`` both row loops are parallel (each thread has its own workspaces). The
    kernel takes ``A_rowptr, A_col, A, B_rowptr, B_col, B, N, K, M`` (what
    ``spf.sparse.csr_args(A, prefix="A_")`` and ``(B, prefix="B_")`` give, sizes included)
    and returns ``{"rowptr", "col", "A", "N", "M", "NNZ"}`` of ``C``: columns sorted
    within each row, no duplicates.

    >>> import numpy as np
    >>> k = spgemm_csr(parallel=False).compile()
    >>> out = k(A_rowptr=np.array([0, 2, 2], np.int32), A_col=np.array([0, 1], np.int32),
    ...         A=np.array([2.0, 3.0]), B_rowptr=np.array([0, 1, 2], np.int32),
    ...         B_col=np.array([1, 1], np.int32), B=np.array([5.0, 7.0]), N=2, K=2, M=2)
    >>> out["rowptr"].tolist(), out["col"].tolist(), out["A"].tolist()
    ([0, 1, 1], [1], [31.0])
    """
    from spf.index_notation import einsum
    from spf.index_notation.sparse_output import SparseEinsum

    if not isinstance(parallel, bool):
        raise ArgumentError(f"spgemm_csr: parallel must be True or False, got {parallel!r}")
    csr = builtin("CSR")
    comp = einsum(
        SPGEMM, A=csr, B=csr, C=csr, sizes={"i": "N", "k": "K", "j": "M"},
        index_dtype=_index_dtype(index_dtype), name="spgemm_csr", parallel=parallel,
    )  # fmt: skip
    assert isinstance(comp, SparseEinsum)
    return comp


def spgemm_symbolic(*, index_dtype: str = "int32") -> Computation:
    """The symbolic phase of :func:`spgemm_csr` (serial): ``C_rowptr`` (``N+1``), C's row
    pointers, counted with a marker workspace ``mark`` and prefix-summed."""
    return spgemm_csr(index_dtype=index_dtype, parallel=False).symbolic


def spgemm_numeric(*, index_dtype: str = "int32") -> Computation:
    """The numeric phase of :func:`spgemm_csr` (serial): ``C_col``, ``C`` (``C_NNZ`` each)
    from ``C_rowptr``, row by row through the dense workspaces ``acc``, ``mark``, ``lst``,
    columns sorted before they are gathered."""
    return spgemm_csr(index_dtype=index_dtype, parallel=False).numeric


# ==================================================================================== stencils
def blur2d() -> Computation:
    """Separable 3x3 box blur of an ``NxM`` image (two statements, Halide's classic example).

    ::

        s0: bx[i, j] = (img[i, j] + img[i, j+1] + img[i, j+2]) / 3   0 <= i < N,   0 <= j < M-2
        s1: out[i, j] = (bx[i, j] + bx[i+1, j] + bx[i+2, j]) / 3     0 <= i < N-2, 0 <= j < M-2

    Data spaces ``out[N-2, M-2]``, ``bx[N, M-2]`` (the intermediate), ``img[N, M]``; both
    statements have loops ``i, j``; ``s1`` runs after all of ``s0``.

    >>> import numpy as np
    >>> img = np.arange(12.0).reshape(3, 4)
    >>> out = np.zeros((1, 2)); bx = np.zeros((3, 2))
    >>> blur2d().interpret(out=out, bx=bx, img=img)
    >>> out
    array([[5., 6.]])
    """
    comp = Computation("blur2d")
    comp.add_data_space("out", "double", shape=("N-2", "M-2"))
    comp.add_data_space("bx", "double", shape=("N", "M-2"))
    comp.add_data_space("img", "double", shape=("N", "M"))
    comp.add_stmt(
        Stmt(
            "$bx$(i, j) = ($img$(i, j) + $img$(i, j+1) + $img$(i, j+2)) / 3.0;",
            "{[i,j]: 0 <= i < N && 0 <= j < M - 2}",
            "{[i,j] -> [0,i,0,j,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$out$(i, j) = ($bx$(i, j) + $bx$(i+1, j) + $bx$(i+2, j)) / 3.0;",
            "{[i,j]: 0 <= i < N - 2 && 0 <= j < M - 2}",
            "{[i,j] -> [1,i,0,j,0]}",
        )
    )
    return comp


def jacobi2d() -> Computation:
    """One 5-point Jacobi sweep on an ``NxN`` grid.

    ``B[i, j] = 0.2 * (A[i, j] + A[i-1, j] + A[i+1, j] + A[i, j-1] + A[i, j+1])`` for
    ``1 <= i, j < N-1`` (loops ``i, j``); data spaces ``B[N, N]``, ``A[N, N]``; the border of
    ``B`` is left untouched.

    >>> import numpy as np
    >>> A = np.arange(9.0).reshape(3, 3); B = np.zeros((3, 3))
    >>> jacobi2d().interpret(B=B, A=A)
    >>> float(B[1, 1])
    4.0
    """
    comp = Computation("jacobi2d")
    comp.add_data_space("B", "double", shape=("N", "N"))
    comp.add_data_space("A", "double", shape=("N", "N"))
    comp.add_stmt(
        Stmt(
            "$B$(i, j) = 0.2 * ($A$(i, j) + $A$(i-1, j) + $A$(i+1, j) + $A$(i, j-1) "
            "+ $A$(i, j+1));",
            "{[i,j]: 1 <= i < N - 1 && 1 <= j < N - 1}",
            "{[i,j] -> [0,i,0,j,0]}",
        )
    )
    return comp

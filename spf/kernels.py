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

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spf.computation import Computation, Stmt
from spf.dtypes import numpy_name
from spf.errors import ArgumentError, SpfError
from spf.formats.format import Format

if TYPE_CHECKING:
    import numpy as np

    from spf.computation.products import CompiledKernel

__all__ = [
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
]

_INDEX_DTYPES = ("int32", "int64")


def _index_dtype(index_dtype: object) -> str:
    """``"int32"`` or ``"int64"`` from any spelling :mod:`spf.dtypes` accepts."""
    name: object = index_dtype
    with contextlib.suppress(SpfError):
        name = numpy_name(index_dtype, what="index_dtype")
    if name not in _INDEX_DTYPES:
        raise SpfError(
            f"index_dtype must be 'int32' or 'int64' (or 'int32_t', np.int32, ...), "
            f"got {index_dtype!r}"
        )
    return str(name)


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
def _sparse_mv(name: str) -> Computation:
    """A computation with the data spaces of a sparse ``y += A·x``: ``y[N]``, ``A[NNZ]``,
    ``x[M]`` (the nonzeros in one flat array)."""
    comp = Computation(name)
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    return comp


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
    dtype = _index_dtype(index_dtype)
    comp = _sparse_mv("spmv_csr")
    _declare_ptr(comp, "rowptr", "N", "NNZ", dtype)
    _declare_idx(comp, "col", "NNZ", "M", dtype)
    comp.add_stmt(
        Stmt(
            "$y$(i) += $A$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0,i,0,k,0,j,0]}",
        )
    )
    return comp


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
        raise SpfError(f"spmv: expected an spf.Format (spf.formats.CSR, ...), got {fmt!r}")
    if len(fmt.coords) != 2:
        raise SpfError(
            f"spmv({fmt.name}): a matrix format has two coordinates, "
            f"{fmt.name} has [{', '.join(fmt.coords)}]"
        )
    dtype = None if index_dtype is None else _index_dtype(index_dtype)
    i, j = fmt.coords
    comp = Computation(f"spmv_{fmt.name.lower()}_generated")
    comp.add_data_space("y", "double", shape=(fmt.shape[0],))
    comp.add_data_space(fmt.value, "double", shape=fmt.value_shape)
    comp.add_data_space("x", "double", shape=(fmt.shape[1],))
    fmt.declare(comp, dtype)
    loops = ", ".join(fmt.loops)
    sched = ", ".join(f"0, {v}" for v in fmt.loops)
    comp.add_stmt(
        Stmt(
            f"$y$({i}) += ${fmt.value}$({', '.join(fmt.positions)}) * $x$({j});",
            fmt.scan(),
            f"{{[{loops}] -> [{sched}, 0]}}",
            name="spmv",
        )
    )
    return comp


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
    dtype = _index_dtype(index_dtype)
    comp = _sparse_mv("spmv_coo")
    _declare_idx(comp, "row", "NNZ", "N", dtype)
    _declare_idx(comp, "col", "NNZ", "M", dtype)
    comp.add_stmt(
        Stmt(
            "$y$(i) += $A$(k) * $x$(j);",
            "{[k,i,j]: 0 <= k < NNZ && i = row(k) && j = col(k)}",
            "{[k,i,j] -> [0,k,0,i,0,j,0]}",
        )
    )
    return comp


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
    dtype = _index_dtype(index_dtype)
    comp = _sparse_mv("spmv_csc")
    _declare_ptr(comp, "colptr", "M", "NNZ", dtype)
    _declare_idx(comp, "row", "NNZ", "N", dtype)
    comp.add_stmt(
        Stmt(
            "$y$(i) += $A$(k) * $x$(j);",
            "{[j,k,i]: 0 <= j < M && colptr(j) <= k < colptr(j+1) && i = row(k)}",
            "{[j,k,i] -> [0,j,0,k,0,i,0]}",
        )
    )
    return comp


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
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SpfError(f"spmv_bcsr: block size {what} must be a positive int, got {value!r}")
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


def sptrsv_csr(*, index_dtype: str = "int32", triangular: bool = True) -> Computation:
    """Sparse lower-triangular solve ``u = L⁻¹·f``, ``L`` in CSR.

    Columns of each row sorted, the diagonal stored last (``spf.sparse.sptrsv_args`` checks
    this); no column of row ``i`` lies above ``i`` (:data:`TRIANGULAR`, an assumption the
    kernel checks; ``triangular=False`` leaves it out, and with it what it proves). Three
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
_PRODUCT = "{[i,k,l]: 0 <= i < N && Ap(i) <= k < Ap(i+1) && Bp(Aj(k)) <= l < Bp(Aj(k)+1)}"


def _spgemm_inputs(comp: Computation, dtype: str) -> None:
    """``A`` (``NxK``: ``Ap``, ``Aj``) and ``B`` (``KxM``: ``Bp``, ``Bj``) in CSR."""
    _declare_ptr(comp, "Ap", "N", "ANNZ", dtype)
    _declare_idx(comp, "Aj", "ANNZ", "K", dtype)
    _declare_ptr(comp, "Bp", "K", "BNNZ", dtype)
    _declare_idx(comp, "Bj", "BNNZ", "M", dtype)


def spgemm_symbolic(*, index_dtype: str = "int32") -> Computation:
    """The symbolic phase of ``C = A·B`` in CSR: ``Cp`` (``N+1``), C's row pointers.

    Row ``i`` marks each column ``Bj(l)`` it reaches in the workspace ``mark`` (holding
    ``i + 1`` once marked, so no reset is needed) and counts the new ones into ``Cp(i+1)``
    (``s0``, ``s1``, loop ``i``); a prefix sum turns the counts into pointers (``s2``,
    ``s3``). ``mark`` is a workspace of loop ``i``, so the row loop may run in parallel."""
    dtype = _index_dtype(index_dtype)
    ctype = f"{dtype}_t"
    comp = Computation("spgemm_symbolic")
    _spgemm_inputs(comp, dtype)
    comp.add_data_space("Cp", ctype, shape=("N+1",))
    comp.add_local("mark", ctype, ("M",))
    comp.add_stmt(Stmt("$Cp$(i+1) = 0;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0,0,0,0,0]}"))
    comp.add_stmt(
        Stmt(
            "if ($mark$(Bj(l)) != i + 1) { $mark$(Bj(l)) = i + 1; $Cp$(i+1) += 1; }",
            _PRODUCT,
            "{[i,k,l]->[0,i,1,k,0,l,0]}",
        )
    )
    comp.add_stmt(Stmt("$Cp$(0) = 0;", "{[z]: z = 0 && N >= 0}", "{[z]->[1,0,0,0,0,0,0]}"))
    comp.add_stmt(Stmt("$Cp$(i+1) += $Cp$(i);", "{[i]: 0 <= i < N}", "{[i]->[2,i,0,0,0,0,0]}"))
    comp.stmt("s1").workspace("mark", "i")
    return comp


def spgemm_numeric(*, index_dtype: str = "int32") -> Computation:
    """The numeric phase of ``C = A·B`` in CSR: ``Cj``, ``Cx`` (``CNNZ`` each) from ``Cp``.

    Row ``i`` accumulates ``Ax(k) * Bx(l)`` into the dense workspace row ``acc`` at column
    ``Bj(l)``, listing each column the first time it is reached (workspaces ``mark``,
    ``lst`` and ``len``; ``lst`` and ``len`` are run-time index arrays local to the
    function), then gathers the listed columns and their sums into ``Cj``, ``Cx`` at
    ``Cp(i) .. Cp(i+1)-1``. Columns are in first-reached order (not sorted), as scipy's
    own product leaves them."""
    dtype = _index_dtype(index_dtype)
    ctype = f"{dtype}_t"
    comp = Computation("spgemm_numeric")
    _spgemm_inputs(comp, dtype)
    _declare_ptr(comp, "Cp", "N", "CNNZ", dtype)
    comp.add_data_space("Ax", "double", shape=("ANNZ",))
    comp.add_data_space("Bx", "double", shape=("BNNZ",))
    comp.add_data_space("Cj", ctype, shape=("CNNZ",))
    comp.add_data_space("Cx", "double", shape=("CNNZ",))
    comp.add_local("mark", ctype, ("M",))
    comp.add_local("acc", "double", ("M",))
    for name, extent in (("lst", "M"), ("len", 1)):
        comp.add_local(name, ctype, (extent,), index=True)
        comp.declare_uf(name, range="{[v]: 0 <= v < M}")
    comp.add_stmt(Stmt("$len$(0) = 0;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0,0,0,0,0]}"))
    comp.add_stmt(
        Stmt(
            "if ($mark$(Bj(l)) != i + 1) { $mark$(Bj(l)) = i + 1; $lst$(len(0)) = Bj(l); "
            "$len$(0) += 1; $acc$(Bj(l)) = 0; } $acc$(Bj(l)) += $Ax$(k) * $Bx$(l);",
            _PRODUCT,
            "{[i,k,l]->[0,i,1,k,0,l,0]}",
        )
    )
    comp.add_stmt(
        Stmt(
            "$Cj$(p) = lst(p - Cp(i)); $Cx$(p) = $acc$(lst(p - Cp(i)));",
            "{[i,p]: 0 <= i < N && Cp(i) <= p < Cp(i+1)}",
            "{[i,p]->[0,i,2,p,0,0,0]}",
        )
    )
    for name in ("mark", "acc", "lst", "len"):
        comp.stmt("s1").workspace(name, "i")
    return comp


@dataclass(frozen=True)
class SpGEMM:
    """``C = A·B`` in CSR as two Computations: ``symbolic`` sizes ``C`` (its row pointers
    ``Cp``), ``numeric`` fills ``Cj``/``Cx``. Both are ordinary Computations (printable,
    schedulable); :meth:`compile` builds both and returns a :class:`SpGEMMKernel`, whose call
    allocates ``C``'s arrays once ``Cp`` gives their size and returns them in a dict."""

    symbolic: Computation
    numeric: Computation
    index_dtype: str

    def compile(self, **options: Any) -> SpGEMMKernel:
        """Compile both phases (``options`` as for ``Computation.compile``)."""
        return SpGEMMKernel(
            self.symbolic.compile(**options), self.numeric.compile(**options), self.index_dtype
        )


class SpGEMMKernel:
    """``kernel(Ap=, Aj=, Ax=, Bp=, Bj=, Bx=, N=, K=, M=)`` -> ``{"Cp", "Cj", "Cx"}``."""

    def __init__(self, symbolic: CompiledKernel, numeric: CompiledKernel, index_dtype: str) -> None:
        self.symbolic, self.numeric, self.index_dtype = symbolic, numeric, index_dtype

    ARGUMENTS = ("Ap", "Aj", "Ax", "Bp", "Bj", "Bx", "N", "K", "M")

    def __call__(
        self, *positional: object, check: bool = True, **args: Any
    ) -> dict[str, np.ndarray]:
        import numpy as np

        if positional:
            raise ArgumentError.positional(
                "spgemm_csr kernel", len(positional), "kernel", self.ARGUMENTS
            )
        missing = sorted(set(self.ARGUMENTS) - set(args))
        unknown = sorted(set(args) - set(self.ARGUMENTS))
        if missing or unknown:
            raise ArgumentError(
                "spgemm_csr kernel: "
                + (f"missing argument(s) {', '.join(missing)}" if missing else "")
                + ("; " if missing and unknown else "")
                + (f"unknown argument(s) {', '.join(unknown)}" if unknown else "")
                + "; expected Ap, Aj, Ax (A, N x K), Bp, Bj, Bx (B, K x M), N, K, M"
            )
        sizes = {}
        for name in ("Aj", "Bj"):
            value = args[name]
            if not hasattr(value, "shape") or len(value.shape) != 1:
                raise ArgumentError(f"spgemm_csr kernel: {name} must be a 1-d array")
            sizes[name] = int(value.shape[0])
        ints = {k: args[k] for k in ("Ap", "Aj", "Bp", "Bj", "N", "K", "M")}
        common = {**ints, "ANNZ": sizes["Aj"], "BNNZ": sizes["Bj"]}
        n = args["N"]
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ArgumentError(f"spgemm_csr kernel: N must be an int >= 0, got {n!r}")
        rows = getattr(args["Ap"], "shape", None)
        if rows is not None and len(rows) == 1 and rows[0] < int(n) + 1:  # before allocating
            raise ArgumentError(
                f"spgemm_csr kernel: N = {n} but Ap has {rows[0]} entries (A's row pointers, "
                f"N + 1 of them); pass N = len(Ap) - 1"
            )
        cp = np.empty(int(n) + 1, dtype=self.index_dtype)
        self.symbolic(check=check, Cp=cp, **common)
        nnz = int(cp[-1])
        cj = np.empty(nnz, dtype=self.index_dtype)
        cx = np.empty(nnz)
        self.numeric(
            check=check, Cp=cp, CNNZ=nnz, Ax=args["Ax"], Bx=args["Bx"], Cj=cj, Cx=cx, **common
        )
        return {"Cp": cp, "Cj": cj, "Cx": cx}


def spgemm_csr(*, index_dtype: str = "int32", parallel: bool = True) -> SpGEMM:
    """Sparse times sparse ``C = A·B`` in CSR whose pattern is computed at run time.

    A symbolic phase (:func:`spgemm_symbolic`) counts the columns of each row of ``C`` in a
    dense marker workspace and prefix-sums them into ``Cp``; a numeric phase
    (:func:`spgemm_numeric`) accumulates each row in a dense workspace row and gathers it
    into ``Cj``/``Cx``. With ``parallel`` both row loops are parallel (each thread has its
    own workspaces). Returns a :class:`SpGEMM`; ``spgemm_csr().compile()(Ap=..., ...)``
    returns ``{"Cp", "Cj", "Cx"}`` (columns of a row in first-reached order).

    >>> import numpy as np
    >>> k = spgemm_csr(parallel=False).compile()
    >>> out = k(Ap=np.array([0, 2, 2], np.int32), Aj=np.array([0, 1], np.int32),
    ...         Ax=np.array([2.0, 3.0]), Bp=np.array([0, 1, 2], np.int32),
    ...         Bj=np.array([1, 1], np.int32), Bx=np.array([5.0, 7.0]), N=2, K=2, M=2)
    >>> out["Cp"].tolist(), out["Cj"].tolist(), out["Cx"].tolist()
    ([0, 1, 1], [1], [31.0])
    """
    if not isinstance(parallel, bool):
        raise SpfError(f"spgemm_csr: parallel must be True or False, got {parallel!r}")
    dtype = _index_dtype(index_dtype)
    symbolic, numeric = spgemm_symbolic(index_dtype=dtype), spgemm_numeric(index_dtype=dtype)
    if parallel:
        symbolic.stmt("s0").parallelize("i")
        numeric.stmt("s0").parallelize("i")
    return SpGEMM(symbolic, numeric, dtype)


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

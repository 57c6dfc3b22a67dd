"""A sparse output built in one pass, into arrays of an upper bound's size (serial runs).

The two phases of :mod:`spf.index_notation.sparse_output` (sizing, then filling) traverse
the operands twice so that every row knows where it starts, which lets rows run in
parallel. A call that runs on one thread needs no such thing: like scipy's
``csr_plus_csr`` (and, for products, its symbolic pass made unnecessary), the **single**
pass fills the rows in order, each starting where the previous one ended, into
``C_col``/``C`` of ``C_CAP`` entries, an upper bound of the output's size the caller
allocates (``numpy.empty``: pages never written are never touched), and writes the row
pointers as it goes; the caller then trims the arrays to the ``C_rowptr(I)`` entries
written (views, or copies where fewer than half the slots were used, as scipy's
``prune``):

* **union** (``C(i,j) = A(i,j) + B(i,j)``, :mod:`spf.index_notation.union`): the merge's
  three bodies write each visit's column and value straight into the output at a cursor
  ``at(0)``; the row ends with ``C_rowptr(i+1) = at(0)``. The bound is ``A_NNZ + B_NNZ +
  1``: a merge's every step consumes an entry of one of the operands, so the cursor stays
  below it (it saturates at ``C_CAP - 1`` all the same, keeping every write inside the
  arrays whatever the operands hold);
* **products** (SpGEMM ``C(i,j) = A(i,k) * B(k,j)`` and every other sparse output): the
  filling phase's row (products into the dense row ``acc``, columns listed in ``lst``,
  sorted) with the row's end ``C_rowptr(i+1) = C_rowptr(i) + len(0)`` written before its
  sort and gather, which then read it exactly as the filling phase reads the sizing
  phase's. The bound is the number of products (each lists at most one column): a pass
  ``bound`` over the operands' positions counts them, far cheaper than the sizing
  phase's marks.

Which runs is the kernel's choice at each call (:class:`SparseEinsumKernel`): the single
pass when the row loop would run on one thread (``parallel=False``, or an OpenMP team of
one) and the bound fits the index type, the two phases otherwise. The results are the
same arrays, bit for bit: the same additions in the same order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from spf.computation import Computation, Stmt
from spf.index_notation.build import declare_operands
from spf.index_notation.union import add_union, union_of

if TYPE_CHECKING:
    from spf.computation.products import CompiledKernel
    from spf.index_notation.formula import Formula, Term
    from spf.index_notation.sparse_output import Compressed, SparseEinsum
    from spf.index_notation.union import Union

__all__ = ["CAP", "SinglePass", "build_single", "has_single"]

CAP = "CAP"
"""The suffix of the single pass's size parameter: ``C_CAP``, the length of the arrays the
caller allocates for the output's columns and values."""


def cap_name(c: Compressed) -> str:
    """``C_CAP``: the size parameter of ``c``'s arrays in the single pass."""
    return f"{c.name}_{CAP}"


def declare_output(comp: Computation, f: Formula, c: Compressed) -> None:
    """The output's arrays, ``C_CAP`` entries long, and its row pointers."""
    dt, cap = f.index_dtype, cap_name(c)
    comp.add_data_space(c.array(c.ptr), f"{dt}_t", shape=(f"{f.extents[c.outer]} + 1",))
    comp.add_data_space(c.array(c.idx), f"{dt}_t", shape=(cap,))
    comp.add_data_space(c.name, "double", shape=(cap,))


def fill_union_single(comp: Computation, f: Formula, c: Compressed, u: Union) -> None:
    """The union merge's bodies writing at the cursor ``at(0)`` (module docstring)."""
    o, ptr, cap = c.outer, c.array(c.ptr), cap_name(c)
    taken = {*f.tensors, *f.extents, o, *u.cursors}
    at = "at"
    while at in taken:
        at += "_"
    comp.add_local(
        at, f"{f.index_dtype}_t", ("1",), index=True, range=f"{{[v]: 0 <= v < {cap}}}",
        trusted=True,
    )  # fmt: skip
    comp.add_stmt(
        Stmt(
            f"${at}$(0) = 0; ${ptr}$(0) = 0;",
            f"{{[z]: z = 0 && {f.extents[o]} >= 0}}",
            "{[z] -> [-1, z, 0]}",
        )
    )
    put = (
        f"${c.array(c.idx)}$({at}(0)) = {{}}; ${c.name}$({at}(0)) = {{}}; "
        f"${at}$(0) += {at}(0) < {cap} - 1;"
    )
    add_union(comp, u, 1, [put.format(k, v) for k, v in zip(u.keys, u.values, strict=True)])
    comp.add_stmt(
        Stmt(
            f"${ptr}$({o} + 1) = {at}(0);",
            f"{{[{o}]: 0 <= {o} < {f.extents[o]}}}",
            f"{{[{o}] -> [0, {o}, 2, 0, 0, 0, 0]}}",
        )
    )


def has_single(f: Formula, c: Compressed, terms: list[Term]) -> bool:
    """Whether ``f``'s sparse output has a single pass (:func:`build_single`)."""
    return union_of(terms, c.outer, c.inner) is not None


def build_single(f: Formula, c: Compressed, terms: list[Term], name: str) -> Computation | None:
    """The single pass of ``f`` (module docstring), or None where it has none."""
    u = union_of(terms, c.outer, c.inner)
    if u is None:
        return None
    comp = Computation(f"{name}_single")
    declare_operands(comp, f, output=False, ordered=frozenset(u.operands))
    declare_output(comp, f, c)
    fill_union_single(comp, f, c, u)
    return comp


def _trim(a: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    """The first ``n`` entries of ``a``: a view, or a copy where that leaves more than half
    of ``a`` unused (scipy's ``_prune_array``), so a result never holds on to more than
    twice its memory."""
    return a[:n].copy() if n < a.size // 2 else a[:n]


class SinglePass:
    """The compiled single pass of a :class:`SparseEinsum` and when to run it."""

    def __init__(self, comp: SparseEinsum, kernel: CompiledKernel) -> None:
        self.comp, self.kernel = comp, kernel
        self._names = {a.name for a in kernel.arguments}
        c = comp.output
        u = union_of(list(comp.terms), c.outer, c.inner)
        self._operands = () if u is None else u.operands

    def _serial(self) -> bool:
        """Whether the two phases' row loops would run on one thread."""
        if not self.comp.parallel:
            return True
        from spf.runtime.threads import GOVERNOR

        return GOVERNOR.team() == 1

    def capacity(self, given: dict[str, Any]) -> int | None:
        """The output's upper bound (module docstring), or None where the operands are
        missing (the two phases then say what is)."""
        if any(x not in given for x in self._operands):
            return None
        return sum(int(np.size(given[x])) for x in self._operands) + 1

    def run(
        self, given: dict[str, Any], rows: int, check: bool
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
        """The output's row pointers, columns and values from the single pass, or None
        where the two phases should run instead: more than one thread, or a bound that
        does not fit the index type or this machine's memory."""
        from spf.formats.sizing import memory_limit

        if not self._serial():
            return None
        cap = self.capacity(given)
        f, c = self.comp.formula, self.comp.output
        dtype = np.dtype(f.index_dtype)
        if cap is None or cap > np.iinfo(dtype).max or cap * (dtype.itemsize + 8) > memory_limit():
            return None
        ptr, col, val = np.empty(rows + 1, dtype), np.empty(cap, dtype), np.empty(cap)
        args = {k: v for k, v in given.items() if k in self._names}
        args.update({c.array(c.ptr): ptr, c.array(c.idx): col, c.name: val, cap_name(c): cap})
        self.kernel(check=check, **args)
        nnz = int(ptr[-1])
        return ptr, _trim(col, nnz), _trim(val, nnz)

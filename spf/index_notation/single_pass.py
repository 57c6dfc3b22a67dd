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
* **products** (SpGEMM ``C(i,j) = A(i,k) * B(k,j)`` and the other sparse outputs): the
  filling phase's row (products into the dense row ``acc``, its ``len(0)`` columns listed
  in ``lst`` and sorted), then gathered at the cursor, and the row's end; a row that
  needs no sort (an output format without the order fact, or columns that come in order)
  adds its products straight into the output at the cursor instead (:func:`fill_direct`:
  no dense row, no list, no gather). The bound
  (:func:`sized_by`) is the number of products (each lists at most one column), which a
  pass ``bound`` over the operands' positions counts, far cheaper than the sizing phase's
  marks; or, where every column comes from one operand's fiber of the row (SDDMM into
  CSR) or the intersection of two (``A(i,j) * B(i,j)``), that operand's size (the
  smaller one's) plus one. Where several products intersect, there is no single pass.

Which runs is the kernel's choice at each call (:class:`SparseEinsumKernel`): the single
pass when the row loop would run on one thread (``parallel=False``, or an OpenMP team of
one) and the bound fits the index type and this machine's memory, the two phases
otherwise. The results are the same arrays, bit for bit: the same additions in the same
order. Each path is compiled when a call first takes it (``SparseEinsum.compile`` compiles
the one the row loop's team selects then), and remembered on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from spf.computation import Computation, Stmt
from spf.index_notation.build import declare_operands, schedule
from spf.index_notation.union import add_union, union_of

if TYPE_CHECKING:
    from spf.computation.products import CompiledKernel
    from spf.index_notation.formula import Formula, Term
    from spf.index_notation.sparse_output import Compressed, SparseEinsum
    from spf.index_notation.union import Union

__all__ = [
    "CAP",
    "SinglePass",
    "build_bound",
    "build_single",
    "has_single",
    "own_names",
    "phases_of",
    "sized_by",
]

CAP = "CAP"
"""The suffix of the single pass's size parameter: ``C_CAP``, the length of the arrays the
caller allocates for the output's columns and values."""


def cap_name(c: Compressed) -> str:
    """``C_CAP``: the size parameter of ``c``'s arrays in the single pass."""
    return f"{c.name}_{CAP}"


def own_names(c: Compressed) -> set[str]:
    """The arguments of the single pass and its bound that the kernel passes itself
    (``C_CAP``, ``C_bound``), not the caller."""
    return {cap_name(c), c.array("bound")}


def declare_output(comp: Computation, f: Formula, c: Compressed) -> None:
    """The output's arrays, ``C_CAP`` entries long, and its row pointers."""
    dt, cap = f.index_dtype, cap_name(c)
    comp.add_data_space(c.array(c.ptr), f"{dt}_t", shape=(f"{f.extents[c.outer]} + 1",))
    comp.add_data_space(c.array(c.idx), f"{dt}_t", shape=(cap,))
    comp.add_data_space(c.name, "double", shape=(cap,))


def _cursor(
    comp: Computation, f: Formula, c: Compressed, taken: set[str], start: str = ""
) -> tuple[str, str]:
    """The cursor ``at`` (a run-time index array below ``C_CAP``, set to 0 with
    ``C_rowptr(0)`` before the rows, in one statement with the C text ``start``) and the C
    text that writes a column ``{}`` and a value ``{}`` at it and advances it (saturating
    at ``C_CAP - 1``: every write stays inside the arrays whatever the operands hold)."""
    from spf.index_notation.sparse_output import once_var

    cap, ptr, z = cap_name(c), c.array(c.ptr), once_var(f)
    at = "at"
    while at in taken:
        at += "_"
    comp.add_local(
        at, f"{f.index_dtype}_t", ("1",), index=True, range=f"{{[v]: 0 <= v < {cap}}}",
        trusted=True,
    )  # fmt: skip
    comp.add_stmt(
        Stmt(
            f"${at}$(0) = 0; ${ptr}$(0) = 0; {start}".rstrip(),
            f"{{[{z}]: {z} = 0 && {f.extents[c.outer]} >= 0}}",
            f"{{[{z}] -> [-2, {z}, 0]}}",
        )
    )
    put = (
        f"${c.array(c.idx)}$({at}(0)) = {{}}; ${c.name}$({at}(0)) = {{}}; "
        f"${at}$(0) += {at}(0) < {cap} - 1;"
    )
    return at, put


def _row_end(
    comp: Computation, f: Formula, c: Compressed, at: str, pos: int, end: str = ""
) -> None:
    """``C_rowptr(o+1) = at(0)`` (and the C text ``end``) at position ``pos`` of row ``o``,
    after its entries."""
    o = c.outer
    comp.add_stmt(
        Stmt(
            f"${c.array(c.ptr)}$({o} + 1) = {at}(0); {end}".rstrip(),
            f"{{[{o}]: 0 <= {o} < {f.extents[o]}}}",
            f"{{[{o}] -> [0, {o}, {pos}, 0, 0, 0, 0]}}",
        )
    )


def gather_at_cursor(
    comp: Computation, f: Formula, c: Compressed, listed: str, a: str, pos: int,
    start: str = "", end: str = "",
) -> None:  # fmt: skip
    """The row's ``len(0)`` sorted columns (``listed``) and their values in ``acc``
    written at the cursor, at position ``pos`` of row ``o``; then the row's end. The C
    texts ``start`` and ``end`` run with the cursor's setting before the rows and with each
    row's end (one statement fewer each to scan and check than statements of their own)."""
    o = c.outer
    at, put = _cursor(comp, f, c, {*f.tensors, *f.extents, o, a}, start)
    comp.add_stmt(
        Stmt(
            put.format(f"{listed}({a})", f"$acc$({listed}({a}))"),
            f"{{[{o}, {a}]: 0 <= {o} < {f.extents[o]} && 0 <= {a} < len(0)}}",
            f"{{[{o}, {a}] -> [0, {o}, {pos}, {a}, 0, 0, 0]}}",
        )
    )
    _row_end(comp, f, c, at, pos + 1, end)


def fill_direct(comp: Computation, f: Formula, c: Compressed, terms: list[Term]) -> None:
    """The products of a row accumulated straight into the output at the cursor, for a
    row whose columns need no sort (the output's format does not assume their order, or
    they come in order). The first product to reach column ``n`` in row ``o`` gives it the
    next slot (``C_col(at) = n``, ``C(at) = 0``) and keeps the slot in ``pos(n)``; every
    product then adds into ``C(pos(n))``. Column ``n`` has a slot in the row when
    ``pos(n)`` lies between the row's start ``C_rowptr(o)`` and the cursor and that slot
    holds ``n`` (a slot of an earlier row lies below the start, as the cursor only grows;
    ``pos(n) < at(0)`` covers a row with no slot yet; the slot test covers ``pos``'s
    initial zeros in a row starting at 0, all rows before it empty, whose slot 0 may hold
    another column). No mark, no dense row of values, no column list, no gather: one workspace, an
    index a column, read once a product (scipy's ``A @ B`` keeps a dense row of values and
    a linked list of its columns, after a sizing pass). The additions are the filling
    phase's, in its order (0, then each product), so the values are the same bit for bit.
    On the random 200k-row SpGEMM, in C with the output's pages already touched:
    0.53-0.68x the time of the marks, the dense row and the gather; on Poisson 0.62-0.75x
    (11 interleaved rounds each, loaded machine)."""
    o, n, dt = c.outer, c.inner, f.index_dtype
    cap, ptr, idx = cap_name(c), c.array(c.ptr), c.array(c.idx)
    from spf.index_notation.sparse_output import _add_term, _fresh

    at, put = _cursor(comp, f, c, {*f.tensors, *f.extents, o})
    pos = _fresh("pos", {*comp.data_spaces, *f.extents})  # an index may be named pos
    comp.add_local(
        pos, f"{dt}_t", (f.extents[n],), index=True, range=f"{{[v]: 0 <= v < {cap}}}",
        trusted=True,
    )  # fmt: skip
    for k, t in enumerate(terms, 1):
        j = t.at(n)
        slot = f"{pos}({j})"
        has = f"{slot} >= ${ptr}$({o}) && {slot} < {at}(0) && ${idx}$({slot}) == {j}"
        first = f"${pos}$({j}) = {at}(0); {put.format(j, 0)}"
        _add_term(comp, t, f"if (!({has})) {{ {first} }} ${c.name}$({slot}) += {t.value};", k)
    _row_end(comp, f, c, at, len(terms) + 1)


def fill_union_single(comp: Computation, f: Formula, c: Compressed, u: Union) -> None:
    """The union merge's bodies writing at the cursor ``at(0)`` (module docstring)."""
    at, put = _cursor(comp, f, c, {*f.tensors, *f.extents, c.outer, *u.cursors})
    add_union(comp, u, 1, [put.format(k, v) for k, v in zip(u.keys, u.values, strict=True)])
    _row_end(comp, f, c, at, 2)


def sized_by(f: Formula, c: Compressed, terms: list[Term]) -> tuple[str, tuple[str, ...]] | None:
    """How the single pass of ``f``'s sparse output is bounded, or None where it has none:
    ``("sum", operands)`` for a union (its operands' sizes added), ``("min", operands)``
    where the only product lists the columns of one operand's sorted fiber of the row, or
    of the intersection of two (the output holds no more entries than the smaller), and
    ``("bound", ())`` for other products without merges (the count of their instances:
    :func:`build_bound`). An intersection among several products has none (a count of its
    instances would not be cheap)."""
    from spf.index_notation.sparse_output import _in_order

    u = union_of(terms, c.outer, c.inner)
    if u is not None:
        return "sum", u.operands
    fibers = _in_order(f, c, terms)
    if fibers:
        return "min", tuple(sorted(fibers))
    return ("bound", ()) if all(t.merge is None for t in terms) else None


def has_single(f: Formula, c: Compressed, terms: list[Term]) -> bool:
    """Whether ``f``'s sparse output has a single pass (:func:`sized_by`)."""
    return sized_by(f, c, terms) is not None


def phases_of(f: Formula, c: Compressed, terms: list[Term]) -> tuple[str, ...]:
    """The Computations a compile of ``f``'s sparse output builds, by their
    :class:`SparseEinsum` attribute names, in the order its kernel takes them."""
    how = sized_by(f, c, terms)
    if how is None:
        return ("symbolic", "numeric")
    return ("symbolic", "numeric", "single", *(("bound",) if how[0] == "bound" else ()))


def build_single(f: Formula, c: Compressed, terms: list[Term], name: str) -> Computation | None:
    """The single pass of ``f`` (module docstring), or None where it has none."""
    from spf.index_notation.sparse_output import _numeric

    if not has_single(f, c, terms):
        return None
    u = union_of(terms, c.outer, c.inner)
    if u is None:
        return _numeric(f, c, terms, name, parallel=False, single=True)
    comp = Computation(f"{name}_single")
    declare_operands(comp, f, output=False, ordered=frozenset(u.operands))
    declare_output(comp, f, c)
    fill_union_single(comp, f, c, u)
    return comp


def build_bound(f: Formula, c: Compressed, terms: list[Term], name: str) -> Computation | None:
    """The count of the products' instances (``C_bound(0)``), the single pass's bound
    where it is a sum of products; None for a union (whose bound is its operands' sizes).
    Each product's count is a loop adding 1 over its domain, which the compiler closes
    into a sum of the innermost loop's trip counts (SpGEMM: ``B_rowptr(k+1) -
    B_rowptr(k)`` for each entry of ``A``)."""
    how = sized_by(f, c, terms)
    if how is None or how[0] != "bound":
        return None
    from spf.index_notation.sparse_output import once_var

    comp = Computation(f"{name}_bound")
    declare_operands(comp, f, output=False)
    out = c.array("bound")
    comp.add_data_space(out, "int64_t", shape=("1",))
    z = once_var(f)
    comp.add_stmt(Stmt(f"${out}$({z}) = 0;", f"{{[{z}]: {z} = 0}}", f"{{[{z}] -> [-1, {z}, 0]}}"))
    for pos, t in enumerate(terms):
        comp.add_stmt(Stmt(f"${out}$(0) += 1;", t.domain, schedule(pos, t.loops)))
    return comp


def _trim(a: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    """The first ``n`` entries of ``a``: a view, or a copy where that leaves more than half
    of ``a`` unused (scipy's ``_prune_array``), so a result never holds on to more than
    twice its memory. (Shrinking ``a`` in place with ``ndarray.resize(refcheck=False)`` was
    tried: no faster, and it frees memory under any reference a later change might keep.)"""
    return a[:n].copy() if n < a.size // 2 else a[:n]


class SinglePass:
    """The compiled single pass of a :class:`SparseEinsum` (and the count of its products,
    ``bound``, for a sum of products) and when to run it."""

    def __init__(
        self, comp: SparseEinsum, kernel: CompiledKernel, bound: CompiledKernel | None
    ) -> None:
        self.comp, self.kernel, self.bound = comp, kernel, bound
        self._names = {a.name for a in kernel.arguments}
        self._bound_names = set() if bound is None else {a.name for a in bound.arguments}
        c = comp.output
        self._how = sized_by(comp.formula, c, list(comp.terms)) or ("bound", ())

    def _serial(self) -> bool:
        """Whether the two phases' row loops would run on one thread."""
        from spf.index_notation.sparse_output import _serial

        return _serial(self.comp.parallel)

    def capacity(self, given: dict[str, Any], check: bool) -> int | None:
        """The output's upper bound (module docstring), or None where the operands are
        missing (the two phases then say what is)."""
        if self.bound is not None:
            c = self.comp.output
            count = np.zeros(1, np.int64)
            args = {k: v for k, v in given.items() if k in self._bound_names}
            self.bound(check=check, **args, **{c.array("bound"): count})
            return int(count[0]) + 1
        how, operands = self._how
        if any(x not in given for x in operands):
            return None
        sizes = [int(np.size(given[x])) for x in operands]
        return (sum(sizes) if how == "sum" else min(sizes)) + 1

    def run(
        self, given: dict[str, Any], rows: int, check: bool
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
        """The output's row pointers, columns and values from the single pass, or None
        where the two phases should run instead: more than one thread, or a bound that
        does not fit the index type or this machine's memory."""
        from spf.formats.sizing import memory_limit

        if not self._serial():
            return None
        cap = self.capacity(given, check)
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

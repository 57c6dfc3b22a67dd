"""A sparse output, built in two phases like ``spf.kernels.spgemm_csr()``.

The output's format must be compressed along one index (CSR: rows ``i``, columns ``j``;
CSC: the other way round), and that index is the outermost loop of every product. Both
phases run row by row (``o``) with dense per-row workspaces (``stmt.workspace``, so the
row loop may run in parallel):

* **symbolic** (sizing): every product instance marks its column ``n`` in ``mark`` (holding
  ``o + 1`` once marked) and counts the new ones into ``C_rowptr(o+1)``; a prefix sum turns
  the counts into row pointers. The products of a row may come from several terms
  (``A(i,j) + B(i,j)``): their union is what gets counted. For the union of two rows of
  distinct columns (below) the first row's columns are only marked and counted, the
  second's unmarked ones counted (a sum in a register): no branch (scipy's ``A + B``
  merges into arrays of ``nnz(A) + nnz(B)`` entries instead, without sizing).
* **numeric** (filling), once the caller has allocated ``C_col`` and ``C`` with the size the
  row pointers give: every product instance adds its value into the dense row ``acc`` at
  ``n``, listing each column the first time (``lst``); then the row's columns are sorted
  and gathered into ``C_col``/``C`` at ``C_rowptr(o) ..``. A row of ``L`` columns is
  rank-sorted in place (each column compared with the whole list, padded to a multiple of
  :data:`LANES`, in vectors; in cache) when ``L`` is small, otherwise radix-sorted
  in two counting passes, base ``sqrt(EN)`` (``EN`` the extent of the columns, ``O(L +
  sqrt(EN))`` steps); when the only
  product scans one operand's sorted fiber of the row (``O(i,j) = S(i,j) * ...``) the list
  is in order already and no sort runs. Nor does one where the output's format does not
  assume its rows' order (:func:`sorted_output`: CSR's relation without CSR's fact): the
  row's columns are gathered in the order the products first reach them.

A sum of two sorted operands (``A(i,j) + B(i,j)``, both CSR) is instead filled by one union
merge of each pair of rows (:mod:`spf.index_notation.union`; sized by marks, above), and a
product of two (``A(i,j) * B(i,j)``) is an intersection merge in both phases
(:mod:`spf.index_notation.coiterate`), whose columns come in order.

:class:`SparseEinsum` holds both Computations; its kernel returns the output's arrays in a
dict named as its format names them (``rowptr``, ``col``, ``A`` and the sizes ``N``,
``M``, ``NNZ``).
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spf._gc import with_fewer_collections
from spf.computation import Computation, Stmt
from spf.errors import ArgumentError
from spf.index_notation.build import declare_operands
from spf.index_notation.formula import Formula, Term, lower
from spf.index_notation.kernel import ExtentPlan, resolve_extents
from spf.index_notation.union import Union, add_union, union_of
from spf.index_notation.verified import Key, PathKey, VerifiedInputs

if TYPE_CHECKING:
    from collections.abc import Callable

    from spf.computation.products import CompiledKernel
    from spf.formats.format import Format
    from spf.index_notation.single_pass import SinglePass
    from spf.runtime.compile import UnitKind

LANES = 16
"""The rank sort pads a row's keys to a multiple of this many (the widest vector of int32
lanes, AVX-512): its inner loop then runs in whole vectors, no remainder."""

__all__ = [
    "Compressed",
    "SparseEinsum",
    "SparseEinsumKernel",
    "build_sparse",
    "compressed_output",
    "output_size",
    "sorted_output",
]


@dataclass(frozen=True)
class Compressed:
    """The output ``name`` in ``fmt``, compressed along index ``outer`` (pointer array
    ``ptr``) with the coordinates of index ``inner`` in ``idx``."""

    name: str
    fmt: Format
    outer: str
    inner: str
    ptr: str
    idx: str

    def array(self, what: str) -> str:
        """The computation's name of the output's array ``what`` (``C_rowptr``)."""
        return self.name if what == self.fmt.value else f"{self.name}_{what}"


def compressed_output(f: Formula, fmt: Format) -> Compressed:
    """The output of ``f`` as a :class:`Compressed`, or :class:`ArgumentError`."""
    from spf.formats.convert import _compressed

    out = f.output
    found = None
    if len(fmt.coords) == 2 and len(fmt.positions) == 1 and len(fmt.value_shape) == 1:
        found = _compressed(fmt)
    if found is None:
        raise ArgumentError(
            f"einsum {f.text!r}: the output {out.name} is in {fmt.name}; a sparse output "
            "is built row by row in a compressed matrix format (CSR, CSC, or one whose "
            "relation reads ptr(i) <= k < ptr(i+1) && j = idx(k)); build it in CSR and "
            "convert it (spf.formats.convert), or make the output dense"
        )
    if f.assignment.accumulate:
        raise ArgumentError(
            f"einsum {f.text!r}: '+=' into the sparse output {out.name}: its pattern changes, "
            f"so einsum returns new arrays; write {out.name}2(...) = {out.name}(...) + ... "
            f"with {out.name} as an operand"
        )
    return Compressed(
        out.name, fmt, out.indices[found.outer], out.indices[found.inner], found.ptr, found.idx
    )


def _fresh(base: str, taken: set[str]) -> str:
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def once_var(f: Formula) -> str:
    """The iterator of a statement that runs once (``{[z]: z = 0}``): ``z``, unless the
    formula names a tensor, an index or an extent so (a dense operand ``z(i)``)."""
    return _fresh("z", {*f.tensors, *f.extents, *f.extents.values()})


def _row_schedule(top: int, loops: tuple[str, ...], pos: int) -> str:
    """``[top, o, pos, v2, 0, ..., vn, 0]``: the loops of a statement inside row ``o``."""
    rest = "".join(f", {v}, 0" for v in loops[1:])
    return f"{{[{', '.join(loops)}] -> [{top}, {loops[0]}, {pos}{rest}]}}"


def _terms(f: Formula, c: Compressed) -> list[Term]:
    terms = [lower(f, m) for m in f.monomials]
    for t in terms:
        if t.loops[0] != c.outer:
            iterating = [u.operand for u in t.uses if u.iterates(c.outer)]
            one = len(iterating) == 1
            raise ArgumentError(
                f"einsum {f.text!r}: the sparse output {c.name} is built along {c.outer}, "
                f"but {' and '.join(iterating)} {'iterates' if one else 'iterate'} "
                f"{c.outer} from {'its' if one else 'their'} storage; give "
                f"{'it' if one else 'them'} a format whose {c.outer} is a dense level (CSR "
                f"rows), or make {c.name} dense"
            )
    return terms


def _declare_index(
    comp: Computation,
    name: str,
    shape: tuple[str, ...],
    rng: str,
    dtype: str,
) -> None:
    """The row workspace ``name``, a run-time index array with values in ``rng``.

    The statements keep its values in ``rng`` whatever the operands hold, so its reads are
    not range-checked (``add_local(..., trusted=True)``): a row lists each column it reaches
    once (``mark``), columns that are read from the operands' index arrays (checked with
    ``check=True``) or from a loop's bounds, so the list holds at most ``EN`` values below
    ``EN``, and the sort's ranks, digits, counts and slots are counts of that list. A union
    merge's list length saturates at ``EN - 1`` (operands with repeated columns, an ordering
    fact the call checks while the loops run, could otherwise make a row longer than
    ``EN``)."""
    rng_set = f"{{[v]: {rng}}}"
    comp.add_local(name, f"{dtype}_t", shape, index=True, range=rng_set, trusted=True)


def _symbolic(
    f: Formula, c: Compressed, terms: list[Term], name: str, parallel: bool
) -> Computation:
    comp = Computation(f"{name}_symbolic")
    u = union_of(terms, c.outer, c.inner)
    # the union's count relies on each row's columns being distinct (the ordering facts)
    declare_operands(comp, f, output=False, ordered=_merged(terms, u))
    o, n = c.outer, c.inner
    eo, en = f.extents[o], f.extents[n]
    ptr = c.array(c.ptr)
    comp.add_data_space(ptr, f"{f.index_dtype}_t", shape=(f"{eo} + 1",))
    comp.add_stmt(
        Stmt(f"${ptr}$({o} + 1) = 0;", f"{{[{o}]: 0 <= {o} < {eo}}}", f"{{[{o}] -> [0, {o}, 0]}}")
    )
    comp.add_local("mark", f"{f.index_dtype}_t", (en,))
    if terms:
        _workspaces(comp, ["mark"], o)
    mark = "if ($mark$({n}) != {o} + 1) {{ $mark$({n}) = {o} + 1; ${ptr}$({o} + 1) += 1; }}"
    marks = [mark] * len(terms)
    if u is not None:  # two rows of distinct columns: all of the first, the second's unmarked
        marks = [
            "$mark$({n}) = {o} + 1; ${ptr}$({o} + 1) += 1;",
            "${ptr}$({o} + 1) += $mark$({n}) != {o} + 1;",
        ]
    for pos, (t, text) in enumerate(zip(terms, marks, strict=True), 1):
        _add_term(comp, t, text.format(n=t.at(n), o=o, ptr=ptr), pos)
    z = once_var(f)
    comp.add_stmt(
        Stmt(f"${ptr}$(0) = 0;", f"{{[{z}]: {z} = 0 && {eo} >= 0}}", f"{{[{z}] -> [1, {z}, 0]}}")
    )
    comp.add_stmt(
        Stmt(
            f"${ptr}$({o} + 1) += ${ptr}$({o});",
            f"{{[{o}]: 0 <= {o} < {eo}}}",
            f"{{[{o}] -> [2, {o}, 0]}}",
        )
    )
    if parallel:
        comp.stmts[0].parallelize(o)  # s0 unless a tensor is named s0
    return comp


def _merged(terms: list[Term], union: Union | None) -> frozenset[str]:
    """The operands whose ordering facts a merge of ``terms`` (or their ``union``) relies
    on."""
    merged = {x for t in terms if t.merge is not None for x in t.merge.operands}
    return frozenset(merged | set(union.operands if union is not None else ()))


def _add_term(comp: Computation, t: Term, source: str, pos: int) -> None:
    """Product ``t``'s statement in row ``o`` at position ``pos``, its merge insisted on."""
    stmt = comp.add_stmt(Stmt(source, t.domain, _row_schedule(0, t.loops, pos)))
    if t.merge is not None:
        stmt.coiterate(*t.merge.loops)


def _in_order(f: Formula, c: Compressed, terms: list[Term]) -> set[str]:
    """``{operand}`` when the only product reaches the column through that operand's sorted
    fiber of the row (its format assumes the order): the column list is sorted, without
    duplicates, as it is produced. Otherwise empty."""
    if len(terms) != 1:
        return set()
    t = terms[0]
    users = [u for u in t.uses if u.iterates(c.inner)]
    # a fiber "of the row" is located by the row: an operand without the row's index
    # (Y(j,i) = v(j) * x(i)) gives every row the same fiber, which bounds no row's sum
    of_row = all(c.outer in u.indices for u in users)
    if t.merge is not None and t.merge.index == c.inner and t.loops[:-2] == (c.outer,):
        # the merge visits the common columns in order
        return set(t.merge.operands) if of_row else set()
    if len(users) != 1 or not users[0].fmt.ordered or not of_row:
        return set()
    u = users[0]
    closure = u.closure(c.inner)
    if any(v in u.indices and v != c.outer for v in closure):
        # the fiber is located by another index too (D(i,j) * B(j,k): B's row j), which
        # runs inside the output's row: the row gathers several fibers, in no order
        return set()
    n = t.loops.index(c.inner)
    ordered = list(t.loops[:n]) == [c.outer, *(v for v in closure if v != c.outer)]
    return {u.operand} if ordered else set()


def sorted_output(c: Compressed) -> bool:
    """Whether the output's rows must come out sorted: its format has ``assume`` facts
    (CSR's and CSC's: columns strictly increasing within a row; any fact counts, the rows
    are then sorted as before). A format with the same relation and no facts gets each
    row's columns in the order the products first reach them (no sort, as scipy's ``A @ B``
    leaves its rows unsorted)."""
    return bool(c.fmt.ordered)


def _numeric(
    f: Formula, c: Compressed, terms: list[Term], name: str, parallel: bool, single: bool = False
) -> Computation:
    """The filling phase; with ``single``, the single pass of a sum of products
    (:mod:`spf.index_notation.single_pass`): the same rows, of ``len(0)`` columns each,
    gathered at a cursor into arrays of ``C_CAP`` entries."""
    comp = Computation(f"{name}_{'single' if single else 'numeric'}")
    in_order = _in_order(f, c, terms)
    sorts = not in_order and sorted_output(c)
    u = union_of(terms, c.outer, c.inner)
    declare_operands(comp, f, output=False, ordered=frozenset(in_order) | _merged(terms, u))
    o, n = c.outer, c.inner
    eo, en = f.extents[o], f.extents[n]
    dt = f.index_dtype
    ptr = c.array(c.ptr)
    if single:
        from spf.index_notation.single_pass import declare_output

        declare_output(comp, f, c)
    else:
        nnz = f"{c.name}_NNZ"
        comp.declare_uf(
            ptr, domain=f"{{[t]: 0 <= t <= {eo}}}", range=f"{{[v]: 0 <= v <= {nnz}}}",
            monotonic="nondecreasing", dtype=dt,
        )  # fmt: skip
        comp.assume(f"forall t: 0 <= t < {eo} => {ptr}(t+1) <= {ptr}(t) + {en}")
        comp.add_data_space(c.array(c.idx), f"{dt}_t", shape=(nnz,))
        comp.add_data_space(c.name, "double", shape=(nnz,))
    if _filled_without_row(comp, (f, c, terms), u, parallel, direct=single and not sorts):
        return comp
    comp.add_local("mark", f"{dt}_t", (en,))
    comp.add_local("acc", "double", (en,))
    for local, shape in (("lst", en), ("len", "1"), ("srt", f"{en} + 1"))[: 3 if sorts else 2]:
        # srt (like the radix sort's tmp) has a slot past the end: a full row's last
        # counting slot is EN. The single pass bounds its loops over a row by len(0): a
        # full row has EN columns (lst then has a slot past the end too). A list to sort
        # is padded in place to whole vectors with the sentinel EN (_sort)
        shape = f"{en} + 1" if single and local == "lst" else shape
        below = "<=" if single and local == "len" else "<"
        if local == "lst" and sorts:
            shape, below = f"{en} + {LANES}", "<="
        _declare_index(comp, local, (shape,), f"0 <= v {below} {en}", dt)
    if sorts:
        _declare_sort(comp, en, dt)
    # a single pass that sorts clears the length at each row's end instead (its first
    # row finds the workspace's zero): one statement fewer (see gather_at_cursor)
    merged = single and sorts
    taken = {o, n, *f.extents, *f.tensors}  # loops of the row's list: no tensor's names
    a, p = _fresh("a", taken), _fresh("p", taken)
    v, lane = _fresh("v", taken), _fresh("l", taken)
    if not merged:
        rows0 = f"{{[{o}]: 0 <= {o} < {eo}}}"
        comp.add_stmt(Stmt("$len$(0) = 0;", rows0, f"{{[{o}] -> [0, {o}, 0]}}"))
    if sorts:  # the sort's padding of short rows, written whole before the row's
        # columns overwrite its start (written just before the sort reads it as vectors,
        # the loads would stall on the stores in flight)
        comp.assume(f"{en} >= 0")  # an extent: lst has LANES slots at least
        pad = f"{{[{o}, {a}]: 0 <= {o} < {eo} && 0 <= {a} < {LANES} && {en} >= 1}}"
        comp.add_stmt(
            Stmt(f"$lst$({a}) = {en} - 1;", pad, f"{{[{o}, {a}] -> [0, {o}, 0, {a} + 1, 0]}}")
        )
    rows_only = ("thr", "base", "bits")  # computed once, before the row loop
    _workspaces(comp, [w for w, d in comp.data_spaces.items() if d.role == "local"
                       and w not in rows_only], o)  # fmt: skip
    for pos, t in enumerate(terms, 1):
        at = t.at(n)
        first = f"$mark$({at}) = {o} + 1; $lst$(len(0)) = {at}; $len$(0) += 1; $acc$({at}) = 0;"
        src = f"if ($mark$({at}) != {o} + 1) {{ {first} }} $acc$({at}) += {t.value};"
        _add_term(comp, t, src, pos)
    rows = f"0 <= {o} < {eo}"
    length = "len(0)" if single else f"{ptr}({o}+1) - {ptr}({o})"
    top = len(terms) + 1
    if not sorts:  # in order already, or a format that does not assume the order
        sorted_list = "lst"
    else:
        sorted_list = "srt"
        top = _sort(
            comp, (o, a, n, v, lane), rows, length, en, dt, top, once=not merged, z=once_var(f)
        )
    if single:
        _gather_single(comp, f, c, (sorted_list, a), top, merged)
        return comp
    gather = f"${c.array(c.idx)}$({p}) = {sorted_list}({p} - {ptr}({o})); "
    gather += f"${c.name}$({p}) = $acc$({sorted_list}({p} - {ptr}({o})));"
    comp.add_stmt(
        Stmt(
            gather,
            f"{{[{o}, {p}]: {rows} && {ptr}({o}) <= {p} < {ptr}({o}+1)}}",
            _row_schedule(0, (o, p), top),
        )
    )
    if parallel:
        comp.stmts[0].parallelize(o)  # s0 unless a tensor is named s0
    return comp


def _filled_without_row(
    comp: Computation, output: tuple[Formula, Compressed, list[Term]], u: Union | None,
    parallel: bool, *, direct: bool,
) -> bool:  # fmt: skip
    """Whether ``comp``'s rows were filled without the dense row and its sort: by the union
    merge ``u`` (:func:`_fill_by_union`), or, in the single pass of rows that need no sort
    (``direct``), by the products straight into the output
    (:func:`spf.index_notation.single_pass.fill_direct`)."""
    f, c, terms = output
    if u is not None:
        _fill_by_union(comp, c, u, f, parallel)
        return True
    if direct:
        from spf.index_notation.single_pass import fill_direct

        fill_direct(comp, f, c, terms)
        return True
    return False


def _gather_single(
    comp: Computation, f: Formula, c: Compressed, listed: tuple[str, str], top: int,
    merged: bool,
) -> None:  # fmt: skip
    """The single pass's gather of the row's ``listed`` columns (list, loop variable) at
    the cursor, at position ``top``; where ``merged``, the sort's thresholds are set with
    the cursor and the row's length cleared at its end (no statements of their own)."""
    from spf.index_notation.single_pass import gather_at_cursor

    if merged:
        en = f.extents[c.inner]
        start = _thresholds(en, once_var(f))
        gather_at_cursor(comp, f, c, *listed, top, start, "$len$(0) = 0;")
    else:
        gather_at_cursor(comp, f, c, *listed, top)


def _fill_by_union(comp: Computation, c: Compressed, u: Union, f: Formula, parallel: bool) -> None:
    """Row ``o`` of the output listed in the union's (sorted) order into the row
    workspaces ``lst`` (columns) and ``val`` (values), then copied to its place: no mark,
    no sort. (Written straight to ``C`` through a cursor, the rows' writes could not be
    proved disjoint, and the row loop could not run in parallel.)"""
    o, ptr, en, dt = c.outer, c.array(c.ptr), f.extents[c.inner], f.index_dtype
    taken = {*f.tensors, *f.extents, o, *u.cursors}
    lst, length, val, p = (_fresh(x, taken) for x in ("lst", "len", "val", "p"))
    _declare_index(comp, lst, (en,), f"0 <= v < {en}", dt)
    _declare_index(comp, length, ("1",), f"0 <= v < {en}", dt)
    comp.add_local(val, "double", (en,))
    rows = f"0 <= {o} < {f.extents[o]}"
    comp.add_stmt(Stmt(f"${length}$(0) = 0;", f"{{[{o}]: {rows}}}", f"{{[{o}] -> [0, {o}, 0]}}"))
    _workspaces(comp, [lst, length, val], o)
    # the length saturates at the last slot (EN - 1): in range by construction, so its reads
    # are not range-checked; only operands with repeated columns (which the ordering check
    # reports) could list more than EN columns in a row, and they overwrite the last slot
    put = (
        f"${lst}$({length}(0)) = {{}}; ${val}$({length}(0)) = {{}}; "
        f"${length}$(0) += {length}(0) < {en} - 1;"
    )
    add_union(comp, u, 1, [put.format(k, v) for k, v in zip(u.keys, u.values, strict=True)])
    at = f"{p} - {ptr}({o})"
    comp.add_stmt(
        Stmt(
            f"${c.array(c.idx)}$({p}) = {lst}({at}); ${c.name}$({p}) = ${val}$({at});",
            f"{{[{o}, {p}]: {rows} && {ptr}({o}) <= {p} < {ptr}({o}+1)}}",
            f"{{[{o}, {p}] -> [0, {o}, 2, {p}, 0, 0, 0]}}",
        )
    )
    if parallel:
        comp.stmts[0].parallelize(o)  # s0 unless a tensor is named s0


def _workspaces(comp: Computation, names: list[str], o: str) -> None:
    """``names`` row workspaces of row loop ``o``, declared on its first statement ``s0``
    as soon as it exists: each command compares the computation's fingerprint, whose cost
    grows with the statements already there."""
    for ws in names:
        comp.stmts[0].workspace(ws, o)


def _declare_sort(comp: Computation, en: str, dt: str) -> None:
    """The locals of :func:`_sort`: the thresholds computed once, and the row workspaces."""
    _declare_index(comp, "thr", ("1",), f"0 <= v <= {en}", dt)
    _declare_index(comp, "base", ("1",), f"0 <= v <= {en} + 1", dt)
    _declare_index(comp, "bits", ("1",), "0 <= v <= 32", dt)
    # a short row ranks its padded list in whole blocks of LANES lanes
    _declare_index(comp, "rnk", (f"{en} + {LANES}",), f"0 <= v <= {en}", dt)
    for counts in ("cnt", "cnt2"):  # the low and the high digits' counts
        _declare_index(comp, counts, (f"{en} + 2",), f"0 <= v <= {en}", dt)
    _declare_index(comp, "dig", (en,), f"0 <= v <= {en}", dt)
    _declare_index(comp, "tmp", (f"{en} + 1",), f"0 <= v < {en}", dt)


def _thresholds(en: str, z: str) -> str:
    """The C text setting :func:`_sort`'s thresholds ``thr``, ``bits`` and ``base`` (at
    ``z``, of a statement whose domain is ``z = 0``) from the column extent ``en``."""
    return (
        f"$thr$({z}) = (int64_t)fmin((double){en}, sqrt(32.0 * sqrt((double){en}))); "
        f"$bits$({z}) = (int64_t)ceil(log2((double){en} + 1.0) / 2.0); "
        f"$base$({z}) = (int64_t)1 << bits({z});"
    )


def _sort(
    comp: Computation,
    names: tuple[str, str, str, str, str],
    rows: str,
    length: str,
    en: str,
    dt: str,
    top: int,
    once: bool = True,
    z: str = "z",
) -> int:
    """Statements sorting row ``o``'s column list ``lst`` (``L`` entries) into ``srt``, at
    schedule positions ``top`` on; returns the next free position. The thresholds are set
    by a statement of their own before the row loop (``once``), or else by the caller
    (:func:`_thresholds`, in a statement of its own before the rows).

    A short row (``L <= thr``, ``thr = sqrt(32 sqrt(EN))``, computed once before the row
    loop: 119 columns at ``EN`` = 200k) is rank-sorted: its list is padded with ``EN - 1``
    (no column is above it) to ``LP`` entries, a multiple of :data:`LANES`; then, a block
    of ``LANES`` lanes at a time, every column ``b`` of the row adds ``lst(b) < lst(a)``
    to the rank of each lane ``a`` of the block (a broadcast, a compare and an add per
    ``LANES`` ranks: the block's ranks stay in vector registers, no sum across lanes), and
    each lane goes to its rank, leaving ``rnk(a)`` at zero for the next row (the workspace
    starts filled with zeros: no pass clearing it). A padding lane's rank is ``L``, or
    ``L - 1`` where the row's last column is ``EN - 1`` itself: it writes ``EN - 1`` past
    the row's columns or over the same value. In cache, on the rows of the random
    200k-row SpGEMM, that takes 0.55-0.8 of the time of the rank sort it replaced (each
    column's rank a sum across the lanes of each block of the list, ``L**2 / LANES``
    sums), and beats the radix sort below up to 96-128 columns (the threshold was
    ``sqrt(16 sqrt(EN))``, 84 there). A longer one is radix-sorted in two stable counting
    passes over the digits of its columns in base ``base = 2**bits >= sqrt(EN + 1)`` (low
    digit into ``tmp``, then high digit into ``srt``; a mask and a shift, no division):
    one pass over the columns counts both digits (into ``cnt`` and ``cnt2``), one over the
    digits prefix-sums both counts, then each pass moves every column to its slot, ``O(L +
    sqrt(EN))`` in all (five statements)."""
    o, a, q, v, lane = names
    if once:
        comp.add_stmt(Stmt(_thresholds(en, z), f"{{[{z}]: {z} = 0}}", f"{{[{z}] -> [-1, {z}, 0]}}"))
    short = f"{rows} && {length} <= thr(0)"
    padded = f"{LANES} * floor(({length} + {LANES - 1}) / {LANES})"
    comp.add_stmt(
        Stmt(
            f"$lst$({a}) = {en} - 1;",
            f"{{[{o}, {a}]: {short} && {LANES} < {length} <= {a} < {padded}}}",
            _row_schedule(0, (o, a), top),
        )
    )
    # the ranks of a block of LANES lanes (an inner loop of a constant LANES iterations:
    # whole vectors, no remainder) over every column of the row
    slot = f"{LANES} * {v} + {lane}"
    comp.add_stmt(
        Stmt(
            f"$rnk$({slot}) += lst({a}) < lst({slot});",
            f"{{[{o}, {v}, {a}, {lane}]: {short} && 0 <= {v} && {LANES} * {v} < {length} && "
            f"0 <= {a} < {length} && 0 <= {lane} < {LANES}}}",
            _row_schedule(0, (o, v, a, lane), top + 1),
        )
    )
    comp.add_stmt(
        Stmt(
            f"$srt$(rnk({a})) = lst({a}); $rnk$({a}) = 0;",
            f"{{[{o}, {a}]: {short} && 0 <= {a} < {padded}}}",
            _row_schedule(0, (o, a), top + 2),
        )
    )
    long = f"{rows} && {length} > thr(0)"
    digits = f"{{[{o}, {q}]: {long} && 0 <= {q} <= base(0)}}"
    prefix = f"{{[{o}, {q}]: {long} && 1 <= {q} <= base(0)}}"
    entries = f"{{[{o}, {a}]: {long} && 0 <= {a} < {length}}}"
    low, high = "& (base(0) - 1)", ">> bits(0)"
    steps = (
        ("$cnt$({q}) = 0; $cnt2$({q}) = 0;", digits, q),
        (
            "$dig$({a}) = lst({a}) {high}; $cnt2$(dig({a}) + 1) += 1; "
            "$dig$({a}) = lst({a}) {low}; $cnt$(dig({a}) + 1) += 1;",
            entries,
            a,
        ),
        ("$cnt$({q}) += cnt({q} - 1); $cnt2$({q}) += cnt2({q} - 1);", prefix, q),
        ("$tmp$(cnt(dig({a}))) = lst({a}); $cnt$(dig({a})) += 1;", entries, a),
        (
            "$dig$({a}) = tmp({a}) {high}; $srt$(cnt2(dig({a}))) = tmp({a}); "
            "$cnt2$(dig({a})) += 1;",
            entries,
            a,
        ),
    )
    pos = top + 3
    for text, domain, var in steps:
        src_text = text.format(q=q, a=a, low=low, high=high)
        comp.add_stmt(Stmt(src_text, domain, _row_schedule(0, (o, var), pos)))
        pos += 1
    return pos


@dataclass(frozen=True)
class SparseEinsum:
    """A formula with a sparse output: ``symbolic`` (sizing) and ``numeric`` (filling)
    Computations, both printable and schedulable, each built when first used (and the
    single pass, ``single`` and ``bound``); :meth:`compile` builds the group of them a
    first call runs, the other when a call first needs it (or, where none was used, loads
    each group's kernels compiled before for the same formula without building them,
    :mod:`spf.index_notation.remembered`)."""

    formula: Formula
    output: Compressed
    terms: tuple[Term, ...]
    name: str
    parallel: bool

    @functools.cached_property
    def symbolic(self) -> Computation:
        """The sizing phase: ``C_rowptr`` from the operands."""
        return _symbolic(self.formula, self.output, list(self.terms), self.name, self.parallel)

    @functools.cached_property
    def numeric(self) -> Computation:
        """The filling phase: ``C_col`` and ``C`` once ``C_rowptr`` is known."""
        return _numeric(self.formula, self.output, list(self.terms), self.name, self.parallel)

    @functools.cached_property
    def single(self) -> Computation | None:
        """The single pass into an upper bound's arrays that serial calls run instead of
        the two phases (:mod:`spf.index_notation.single_pass`), or None where the formula
        has none."""
        from spf.index_notation.single_pass import build_single

        return build_single(self.formula, self.output, list(self.terms), self.name)

    @functools.cached_property
    def bound(self) -> Computation | None:
        """The single pass's bound where it is a sum of products (the count of their
        instances), else None."""
        from spf.index_notation.single_pass import build_bound

        return build_bound(self.formula, self.output, list(self.terms), self.name)

    def compile(self, **options: Any) -> SparseEinsumKernel:
        """The kernel (``options`` as for ``Computation.compile``). A call runs either the
        two phases (``symbolic`` + ``numeric``) or the single pass (``single`` + ``bound``
        where it has one): of an einsum whose Computations were not touched, only the group
        the first call is expected to run is compiled now (the single pass where the row
        loop would run on one thread: ``parallel=False`` or an OpenMP team of one), the
        other on its first use (:class:`SparseEinsumKernel`), each remembered on its own
        (:mod:`spf.index_notation.remembered`). A touched one is compiled whole now, as it
        stands."""
        from spf.index_notation.single_pass import phases_of

        target = options.pop("target", "c")
        fname = options.pop("name", None)
        check = options.pop("check", True)
        untouched = not set(PHASES) & set(self.__dict__)
        together = target == "c" and not any(
            _runs_wavefront(c) for p in PHASES if (c := self.__dict__.get(p)) is not None
        )
        used = phases_of(self.formula, self.output, list(self.terms))
        groups = {g: tuple(p for p in GROUPS[g] if p in used) for g in GROUPS}
        build = _GroupBuild(self, (target, fname, check), options, together, untouched)
        kernel = SparseEinsumKernel(self, build, has_single="single" in used)
        if not untouched:  # compiled as it stands now, whatever is done to it later
            for g in GROUPS:
                if groups[g]:
                    kernel.group(g)
            return kernel
        kernel.group("single" if "single" in used and _serial(self.parallel) else "two")
        return kernel


PHASES = ("symbolic", "numeric", "single", "bound")
"""The Computations of a :class:`SparseEinsum`, by attribute name."""

GROUPS = {"two": ("symbolic", "numeric"), "single": ("single", "bound")}
"""The phases a call runs together: the two phases, or the single pass (and its bound)."""

KIND: UnitKind = "sparse_output"
"""How the phases are built (:func:`spf.runtime.compile.optimisation_flags`: ``-O2``)."""

_LIBRARY = {"two": "phases", "single": "onepass"}
"""The suffix of each group's library when its phases are built in one translation unit."""


def _serial(parallel: bool) -> bool:
    """Whether a row loop of ``parallel`` phases would run on one thread now."""
    if not parallel:
        return True
    from spf.runtime.threads import GOVERNOR

    return GOVERNOR.team() == 1


@dataclass(frozen=True)
class _GroupBuild:
    """What compiling one group of a :class:`SparseEinsum`'s phases needs, fixed when
    :meth:`SparseEinsum.compile` ran: ``call`` (target, function name, check), the other
    ``options``, whether the phases go in one translation unit (``together``) and whether
    no Computation had been touched (``untouched``: the group is then remembered, and one
    compiled after ``compile()`` is built afresh, as the formula gives it)."""

    comp: SparseEinsum
    call: tuple[str, str | None, bool]
    options: dict[str, Any]
    together: bool
    untouched: bool

    @with_fewer_collections
    def __call__(self, group: str) -> list[CompiledKernel]:
        """The kernels of ``group``'s phases (``"two"`` or ``"single"``), in order: built,
        generated and compiled with fewer collections of Python's garbage collector, as
        ``Computation.compile`` is (spf._gc; sorted SpGEMM's single pass: 49 collections,
        0.07-0.09 s of CPU, against 2 and 0.006 s, measured on the shared machine)."""
        from spf.codegen.program import c_function_name
        from spf.index_notation.remembered import load_or_compile
        from spf.index_notation.single_pass import phases_of

        comp, (target, fname, check) = self.comp, self.call
        used = phases_of(comp.formula, comp.output, list(comp.terms))
        phases = [p for p in GROUPS[group] if p in used]
        base = c_function_name(fname or comp.name)
        library = f"{base}_{_LIBRARY[group]}" if self.together else None
        options = dict(self.options)

        def compile_() -> list[CompiledKernel]:
            from spf.runtime.compile import compile_kernels, optimisation_flags

            comps = [c for p in phases if (c := self._phase(p)) is not None]
            if library is not None:
                # one translation unit, one compiler run for the group's phases (the C
                # sources and kernels are those of separate compiles; spf.runtime.combine)
                parts = [(c.ir, fname, check) for c in comps]
                return list(compile_kernels(parts, library, kind=KIND, **options))
            call = {"target": target, "name": fname, "check": check, **options}
            if target == "c":  # a phase that runs a wavefront: compiled on its own
                call["cflags"] = optimisation_flags(options.get("cflags"), KIND)
            return [c.compile(**call) for c in comps]

        names = tuple(f"{comp.name}_{p}" for p in phases)
        return load_or_compile(
            comp.formula, (names, comp.parallel), self.call, options, compile_,
            remember=self.untouched, library=library, kind=KIND,
        )  # fmt: skip

    def _phase(self, phase: str) -> Computation | None:
        """The Computation of ``phase``: the one the einsum holds, or, for an untouched
        einsum's phase it holds now (touched after ``compile()``), one built afresh."""
        comp = self.comp
        if self.untouched and phase in comp.__dict__:
            built: Computation | None = getattr(type(comp), phase).func(comp)
            return built
        found: Computation | None = getattr(comp, phase)
        return found


def _runs_wavefront(comp: Computation) -> bool:
    """Whether a loop of ``comp`` was scheduled as a wavefront (its compile builds an
    inspector and an executor: ``Computation.compile``)."""
    return any(t.startswith("wavefront(") for s in comp.stmts for ts in s.tags.values() for t in ts)


def build_sparse(f: Formula, name: str, *, parallel: bool) -> SparseEinsum:
    """The two phases of ``f`` (see the module docstring), built when first used."""
    fmt = f.out_format()
    assert fmt is not None
    c = compressed_output(f, fmt)
    terms = _terms(f, c)
    from spf.index_notation.names import check_output

    check_output(f, c, union=union_of(terms, c.outer, c.inner) is not None)
    return SparseEinsum(f, c, tuple(terms), name, parallel)


def output_size(f: Formula, c: Compressed, ptr: np.ndarray[Any, Any]) -> int:
    """The number of entries of the output whose row pointers the sizing phase left in
    ``ptr``; :class:`ArgumentError` where they overflowed their index type (a pointer
    decreases: every row adds at most the column extent) or the arrays would not fit in
    this machine's memory (the arrow matrix times its transpose: 46500**2 entries)."""
    from spf.formats.sizing import memory_limit

    if ptr.size > 1 and bool((ptr[1:] < ptr[:-1]).any()):
        raise ArgumentError(
            f"{f.where()}: {c.name} has more entries than its {f.index_dtype} row pointers "
            "can count (they overflowed); build it with spf.einsum(..., index_dtype='int64') "
            "and int64 index arrays"
        )
    nnz = int(ptr[-1])
    need = nnz * (ptr.dtype.itemsize + 8)
    if need > memory_limit():
        raise ArgumentError(
            f"{f.where()}: {c.name} has {nnz:,} entries; its arrays ({need / 2**30:.1f} GiB) "
            "would not fit in this machine's memory"
        )
    return nnz


class SparseEinsumKernel:
    """``kernel(**operands)`` -> dict of the output's arrays and sizes (see the module
    docstring); arguments as for :class:`~spf.index_notation.kernel.EinsumKernel`.

    It compiles each group of phases (:data:`GROUPS`) when first needed (``compile``: a
    callable from a group's name to its kernels), once, under a lock: ``symbolic`` and
    ``numeric`` are the two phases' kernels, ``single`` the single pass (None where the
    formula has none)."""

    def __init__(
        self,
        comp: SparseEinsum,
        compile: Callable[[str], list[CompiledKernel]],
        *,
        has_single: bool,
    ) -> None:
        self.comp = comp
        self._compile = compile
        self._has_single = has_single
        self._groups: dict[str, list[CompiledKernel]] = {}
        self._single: SinglePass | None = None
        self._two_names: list[set[str]] = []
        self._lock = threading.Lock()
        self._plan = ExtentPlan.of(comp.formula)
        self._verified = VerifiedInputs()
        """The inputs checked calls verified, per path: a checked call on them runs the
        phases unchecked (:mod:`spf.index_notation.verified`)."""
        self._index_names: dict[str, tuple[str, ...]] = {}

    def group(self, name: str) -> list[CompiledKernel]:
        """The kernels of group ``name`` (``"two"``, ``"single"``), compiled on first use."""
        found = self._groups.get(name)
        if found is not None:
            return found
        with self._lock:
            found = self._groups.get(name)
            if found is None:
                found = self._compile(name)
                if name == "single":
                    from spf.index_notation.single_pass import SinglePass

                    self._single = SinglePass(self.comp, found[0], found[1] if found[1:] else None)
                else:
                    self._two_names = [{a.name for a in k.arguments} for k in found]
                self._groups[name] = found
        return found

    def compiled(self) -> tuple[str, ...]:
        """The groups compiled so far."""
        return tuple(g for g in GROUPS if g in self._groups)

    @property
    def symbolic(self) -> CompiledKernel:
        """The sizing phase's kernel."""
        return self.group("two")[0]

    @property
    def numeric(self) -> CompiledKernel:
        """The filling phase's kernel."""
        return self.group("two")[1]

    @property
    def single(self) -> SinglePass | None:
        """The single pass, or None where the formula has none."""
        if not self._has_single:
            return None
        self.group("single")
        return self._single

    @property
    def _names(self) -> list[set[str]]:
        """The two phases' argument names (compiles them)."""
        self.group("two")
        return self._two_names

    def _known(self, given: set[str], mine: set[str]) -> bool:
        """Whether every name in ``given`` is an argument: checked against the single
        pass's (less its own ``C_CAP`` and ``C_bound``) while the two phases are not
        compiled; where that does not settle it, against the two phases' (compiling them,
        as the error names what they take)."""
        if "two" not in self._groups and self._has_single:
            from spf.index_notation.single_pass import own_names

            own = own_names(self.comp.output)
            names = {a.name for k in self.group("single") for a in k.arguments} - own
            if given <= names - mine:
                return True
        n0, n1 = self._names
        return not (given - n0 - n1)

    def __call__(self, *positional: object, check: bool = True, **args: Any) -> dict[str, Any]:
        from spf.formats.sizing import memory_limit

        f, c = self.comp.formula, self.comp.output
        ptr, idx = c.array(c.ptr), c.array(c.idx)
        mine = {ptr, idx, c.name, f"{c.name}_NNZ"}
        if positional:
            takes = sorted((self._names[0] | self._names[1]) - mine)
            raise ArgumentError.positional(f"{f.where()} kernel", len(positional), "kernel", takes)
        given = resolve_extents(f, args, self._plan)
        known = self._known(set(given), mine) and not set(args) & mine
        unknown = [] if known else sorted(
            (set(given) - self._names[0] - self._names[1]) | (set(args) & mine)
        )  # fmt: skip
        if unknown:
            takes = sorted((self._names[0] | self._names[1]) - mine)
            raise ArgumentError(
                f"{f.where()}: unknown argument(s) {', '.join(unknown)}; it takes "
                f"{', '.join(takes)} (and the operands' prefixed sizes) and returns "
                f"{c.name}'s arrays"
            )
        eo = f.extents[c.outer]
        if eo not in given:
            raise ArgumentError(
                f"{f.where()}: the extent {eo} of {c.outer} is unknown; pass {eo}=... or an "
                "operand that has it"
            )
        dtype = np.dtype(f.index_dtype)
        rows = int(given[eo])
        if rows < 0 or (rows + 1) * dtype.itemsize > memory_limit():
            raise ArgumentError(
                f"{f.where()}: {eo} = {rows} would make {c.name}'s {rows + 1} row pointers "
                f"{'negative' if rows < 0 else 'larger than this machine memory'}; pass the "
                f"operands' real extent ({eo} is the length of their row pointers minus one)"
            )
        try:  # a row workspace too large: an error naming it (a try costs nothing otherwise)
            hashed: dict[tuple[str, ...], Key | None] = {}  # the inputs' keys, hashed once a call
            if self._has_single and _serial(self.comp.parallel):
                assert self.single is not None
                key, known = self._look("single", given, check, hashed)
                done = self.single.run(given, rows, check and not known)
                if done is not None:
                    if key is not None and not known:
                        self._verified.add(key)  # reached only when every check passed
                    return self._result(given, *done)
            key, known = self._look("two", given, check, hashed)
            check = check and not known
            out_ptr = np.empty(rows + 1, dtype=dtype)
            sizing = {k: v for k, v in given.items() if k in self._names[0]}
            self.symbolic(check=check, **sizing, **{ptr: out_ptr})
            nnz = output_size(f, c, out_ptr)
            col, val = np.empty(nnz, dtype=dtype), np.empty(nnz)
            fill = {k: v for k, v in given.items() if k in self._names[1]}
            fill.update({ptr: out_ptr, idx: col, c.name: val})
            if f"{c.name}_NNZ" in self._names[1]:
                fill[f"{c.name}_NNZ"] = nnz
            self.numeric(check=check, **fill)
            if key is not None and check:
                self._verified.add(key)  # reached only when every check passed
            return self._result(given, out_ptr, col, val)
        except MemoryError as err:
            from spf.index_notation.workspaces import workspace_error

            found = workspace_error(f, c, given, err)
            if found is None:
                raise
            raise found from err

    def _look(
        self, group: str, given: dict[str, Any], check: bool,
        hashed: dict[tuple[str, ...], Key | None],
    ) -> tuple[PathKey | None, bool]:  # fmt: skip
        """For a call of ``group``'s phases: the key of the inputs a checked call's checks
        depend on, and whether a checked call verified them before
        (:meth:`~spf.index_notation.verified.VerifiedInputs.look`); ``(None, False)`` for an
        unchecked call or inputs that are not remembered. ``hashed``: the call's keys so
        far (a fallback from the single pass hashes its inputs once)."""
        if not check:
            return None, False
        index = self._index_names.get(group)
        if index is None:
            index = self._index_names[group] = self._index_arrays(group)
        if not index:
            return None, False
        return self._verified.look(group, given, index, hashed)

    def _index_arrays(self, group: str) -> tuple[str, ...]:
        """The index arrays (UF arguments) the caller passes to ``group``'s kernels, whose
        contents and the parameter values are all its checks depend on; empty where a
        kernel writes an array the call does not allocate itself (a touched phase's: its
        checks would then depend on where that array is)."""
        from spf.index_notation.single_pass import own_names

        c = self.comp.output
        mine = {c.array(c.ptr), c.array(c.idx), c.name, *own_names(c)}
        args = [a for k in self.group(group) for a in k.arguments]
        if any(a.kind != "param" and not a.const and a.name not in mine for a in args):
            return ()
        return tuple(sorted({a.name for a in args if a.kind == "uf"} - mine))

    def _result(
        self, given: dict[str, Any], ptr: np.ndarray[Any, Any], col: np.ndarray[Any, Any],
        val: np.ndarray[Any, Any],
    ) -> dict[str, Any]:  # fmt: skip
        f, c = self.comp.formula, self.comp.output
        result: dict[str, Any] = {c.ptr: ptr, c.idx: col, c.fmt.value: val}
        for extent, v in zip(c.fmt.shape, f.output.indices, strict=True):
            result[extent] = int(given[f.extents[v]]) if f.extents[v] in given else None
        result["NNZ"] = int(col.size)
        return result

    def __repr__(self) -> str:
        return f"SparseEinsumKernel({self.comp.formula.text!r})"

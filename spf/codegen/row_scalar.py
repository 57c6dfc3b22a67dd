"""Row scalars: one data-space element a loop body writes again and again, kept in a local.

A sparse triangular solve's row writes ``x(i) = b(i)``, then ``x(i) -= A(k) * x(j)`` for
each entry, then ``x(i) = x(i) / A(d)``. Printed as written, every update loads ``x(i)``
again after storing it, because ``x(j)`` may be ``x(i)`` (``restrict`` says nothing about
two elements of one array): the row's chain of operations waits on a store-to-load forward
per entry, where a careful C programmer keeps the row's value in a local and stores it once.

:func:`find` looks for such an element in a *region* (the body of a loop, of a ``Bind`` or a
branch of an ``If``): a data space whose every write in the region goes to one element
``D(I)``, ``I`` fixed over the region (its variables bound outside it), written at least
once unconditionally (so the final store adds no write the loop did not make) and by more
than one statement instance (a statement in an inner loop or several statements). The
printer then declares ``spf_row``, prints those statements with ``D(I)`` replaced by it, and
stores it into ``D(I)`` at the region's end. A read of ``D`` at another index ``J`` inside
the region may still be ``D(I)`` at run time; the printer reads it as ``J == I ? spf_row :
D(J)`` (a test that is almost never true), what the loop in memory would have held there.
Every operation is the same, on the same values, in the same order: the results are
bitwise those of the statements printed as macros.

Regions with anything the local could escape through are left alone: tagged loops
(parallel, vector, reduction: a local declared outside them would be shared; a loop of
partial sums runs in order and is kept, its first sum the local), buffers,
merges, Layer IV operations (a wavefront's flags), statements that are not plain
assignments, data spaces stored in a buffer, workspaces and index arrays.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.codegen.loop_ast import Alloc, Bind, Block, Call, For, If, Merge, Node, walk
from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.codegen.program import Program, StmtMacro

NAME = "spf_row"
"""The local's name (``spf_`` names are reserved: :func:`spf.clang.reserved_reason`)."""

PREV = "spf_prev"
"""The local that holds the element the loop's previous iteration stored (:func:`prev_open_lines`),
``PREV_at0``, ``PREV_at1``, ... its index."""

_OPS = frozenset({"=", "+=", "-=", "*=", "/="})


@dataclass(frozen=True)
class RowScalar:
    """Element ``space(index)`` of a region, held in :data:`NAME` of type ``ctype``."""

    space: str
    index: tuple[cx.Expr, ...]
    ctype: str
    load: bool
    """The region starts by loading the element (its first access is not a plain
    assignment that every run of the region makes)."""

    def element(self) -> cx.Access:
        return cx.Access(self.space, self.index)

    def open_lines(self) -> list[str]:
        init = f" = {cx.to_c(self.element())}" if self.load else ""
        return [f"{self.ctype} {NAME}{init};"]

    def close_lines(self) -> list[str]:
        return [f"{cx.to_c(self.element())} = {NAME};"]


def prev_open_lines(row: RowScalar) -> list[str]:
    """Before a loop whose body keeps ``row``: the local that will hold the element the
    previous iteration stored, and its index, none yet (``INT64_MIN``: no array index)."""
    at = [f"int64_t {PREV}_at{d} = INT64_MIN;" for d in range(len(row.index))]
    return [f"{row.ctype} {PREV} = 0;", *at]


def prev_keep_lines(row: RowScalar) -> list[str]:
    """At the end of an iteration, after the element is stored: what it stored, where."""
    at = [f"{PREV}_at{d} = {cx.to_c(e)};" for d, e in enumerate(row.index)]
    return [f"{PREV} = {NAME};", *at]


def reads_elsewhere(row: RowScalar, macros: dict[str, StmtMacro], region: Node) -> bool:
    """Whether a statement of ``region`` reads ``row``'s data space at an index other than
    the element's (a solve's ``x(col(k))``): only then does the previous iteration's value
    have a read to serve."""
    for n in (c for c in walk(region) if isinstance(c, Call)):
        macro = macros[n.stmt]
        if not touches(macro, row.space):
            continue
        for s in expanded(macro, n):
            if not isinstance(s, cx.Assign):
                return False
            value = [s.value, *_indices(s.target)]
            if any(a.space == row.space and a.indices != row.index
                   for e in value for a in _accesses(e)):  # fmt: skip
                return True
    return False


def writes_space(macros: dict[str, StmtMacro], n: Node, space: str) -> bool:
    """Whether ``n`` may write data space ``space``: a statement that assigns an element
    of it, one that is not plain assignments and touches it, a Layer IV operation, a
    buffer or a merge (their contents are not looked into)."""
    if isinstance(n, (Alloc, Merge)):
        return True
    if isinstance(n, Block):
        return any(writes_space(macros, item, space) for item in n.items)
    if isinstance(n, (Bind, For)):
        return writes_space(macros, n.body, space)
    if isinstance(n, If):
        rest = n.orelse is not None and writes_space(macros, n.orelse, space)
        return rest or writes_space(macros, n.then, space)
    macro = macros[n.stmt]  # a statement call
    if macro.operation is not None:
        return True
    if not touches(macro, space):
        return False
    assigns = _assigns(n, macro)
    return assigns is None or any(target == space for _, target, _, _ in assigns)


def expanded(macro: StmtMacro, call: Call) -> tuple[cx.Stmt, ...]:
    """The statement's body at ``call`` (its parameters replaced by the call's values)."""
    from spf.codegen.c import loop_tree

    values = {p: loop_tree(a) for p, a in zip(macro.params, call.args, strict=True)}
    return tuple(_subst_stmt(s, values) for s in macro.body)


def _subst_stmt(s: cx.Stmt, values: dict[str, cx.Expr]) -> cx.Stmt:
    if isinstance(s, cx.Assign):
        return cx.Assign(cx.substitute(s.target, values), s.op, cx.substitute(s.value, values))
    return s  # not a plain assignment: such a statement makes the region ineligible


def touches(macro: StmtMacro, space: str) -> bool:
    """Whether the statement reads or writes data space ``space``."""
    return any(a.space == space for a in cx.accesses(macro.body))


@dataclass
class _Scan:
    """What one walk of a region found."""

    bound: set[str]
    writes: dict[str, set[tuple[cx.Expr, ...]]]
    writers: dict[str, int]
    unconditional: set[str]
    nested: set[str]
    opaque: set[str]
    first: dict[str, bool]
    """Per data space, whether its first access in the region is a plain assignment made
    on every run of the region (no load needed)."""
    ok: bool = True


def find(program: Program, macros: dict[str, StmtMacro], region: Node) -> RowScalar | None:
    """The element of ``region`` to keep in a local (the first data space by name when
    several qualify), or None."""
    scan = _Scan(set(), {}, {}, set(), set(), set(), {})
    _walk(region, macros, scan, top=True, inner=False)
    if not scan.ok:
        return None
    data = {d.name: d for d in program.data}
    ctypes = {a.name: a.ctype for a in program.signature.args if a.kind == "data"}
    for space in sorted(scan.writes):
        indices = scan.writes[space]
        d = data.get(space)
        if (
            len(indices) != 1
            or space in scan.opaque
            or space not in scan.unconditional
            or not (scan.writers[space] > 1 or space in scan.nested)
            or d is None
            or d.buffer is not None
            or d.offset is not None
            or d.macro is not None
            or any(o.buffer == space for o in program.data)
            or space not in ctypes
        ):
            continue
        (index,) = indices
        if any(v in scan.bound for v in _names(index)):
            continue  # the element changes inside the region
        return RowScalar(space, index, ctypes[space], not scan.first.get(space, False))
    return None


def _names(index: tuple[cx.Expr, ...]) -> Iterator[str]:
    for e in index:
        for n in cx.nodes(e):
            if isinstance(n, cx.Name):
                yield n.name


def _walk(n: Node, macros: dict[str, StmtMacro], scan: _Scan, *, top: bool, inner: bool) -> None:
    """Scan ``n``; ``top``: reached from the region's start through blocks and binds only
    (runs whenever the region runs); ``inner``: inside a loop of the region."""
    if not scan.ok:
        return
    if isinstance(n, Block):
        for item in n.items:
            _walk(item, macros, scan, top=top, inner=inner)
    elif isinstance(n, Bind):
        scan.bound.add(n.var)
        _walk(n.body, macros, scan, top=top, inner=inner)
    elif isinstance(n, For):
        if any(not t.startswith("sums(") for t in n.tags):  # partial sums run in order
            scan.ok = False
            return
        scan.bound.add(n.var)
        _walk(n.body, macros, scan, top=False, inner=True)
    elif isinstance(n, If):
        _walk(n.then, macros, scan, top=False, inner=inner)
        if n.orelse is not None:
            _walk(n.orelse, macros, scan, top=False, inner=inner)
    elif isinstance(n, Call):
        _call(n, macros[n.stmt], scan, top=top, inner=inner)
    elif isinstance(n, (Alloc, Merge)):
        scan.ok = False


_Assign = tuple[frozenset[str], str | None, tuple[cx.Expr, ...], str]
"""One assignment of a statement at a call: the data spaces its value and its target's
indices read, the data space it writes (None: not an element), the target's indices, its
operator."""

_ASSIGNS: dict[int, tuple[Call, StmtMacro, tuple[_Assign, ...] | None]] = {}
""":func:`_assigns` by the call's ``id`` (the entry keeps the call, so the ``id`` is not
reused while it is there): every region around a call walks it (:func:`find` runs once per
loop, on the loop's body), and a statement's body substituted at the call is the same each
time."""


def _assigns(call: Call, macro: StmtMacro) -> tuple[_Assign, ...] | None:
    """The assignments of ``macro``'s body at ``call``, or None when one is not a plain
    assignment (``=``, ``+=``, ...)."""
    hit = _ASSIGNS.get(id(call))
    if hit is not None and hit[0] is call and hit[1] is macro:
        return hit[2]
    out: tuple[_Assign, ...] | None = None
    if all(isinstance(s, cx.Assign) and s.op in _OPS for s in macro.body):
        found: list[_Assign] = []
        for s in expanded(macro, call):
            assert isinstance(s, cx.Assign)
            read = {a.space for e in (s.value, *_indices(s.target)) for a in _accesses(e)}
            target = s.target
            if isinstance(target, cx.Access):
                found.append((frozenset(read), target.space, target.indices, s.op))
            else:
                found.append((frozenset(read), None, (), s.op))
        out = tuple(found)
    if len(_ASSIGNS) >= 4096:
        _ASSIGNS.clear()
    _ASSIGNS[id(call)] = (call, macro, out)
    return out


def _call(call: Call, macro: StmtMacro, scan: _Scan, *, top: bool, inner: bool) -> None:
    if macro.operation is not None:
        scan.ok = False
        return
    assigns = _assigns(call, macro)
    if assigns is None:
        scan.opaque |= {a.space for a in cx.accesses(macro.body)}
        return
    seen: set[str] = set()
    for read, space, indices, op in assigns:
        if space is None:
            scan.opaque |= read
            continue
        for r in read | {space}:
            if r not in scan.first:  # the region's first access of r
                scan.first[r] = r == space and op == "=" and space not in read and top
        scan.writes.setdefault(space, set()).add(indices)
        if space not in seen:
            seen.add(space)
            scan.writers[space] = scan.writers.get(space, 0) + 1
        if top:
            scan.unconditional.add(space)
        if inner:
            scan.nested.add(space)


def _indices(e: cx.Expr) -> tuple[cx.Expr, ...]:
    return e.indices if isinstance(e, cx.Access) else (e,)


def _accesses(e: cx.Expr) -> Iterator[cx.Access]:
    for n in cx.nodes(e):
        if isinstance(n, cx.Access):
            yield n


def call_lines(
    row: RowScalar, macro: StmtMacro, call: Call, prev: bool = False, into: str | None = None
) -> list[str]:
    """The statement at ``call`` with ``row``'s element read and written as the local; a
    read of the data space elsewhere that may land on the element reads the local there
    (:func:`_replace`), and, with ``prev`` (the loop keeps :data:`PREV`), one that lands on
    the element the previous iteration stored reads :data:`PREV`. ``into``: the update
    accumulates into that local instead (a partial sum, :mod:`spf.codegen.partial_sums`),
    which needs every read of the data space kept from the element by the facts."""
    apart = _apart(row, macro, call)
    out: list[str] = []
    for s in expanded(macro, call):
        assert isinstance(s, cx.Assign)
        value = _replace(s.value, row, apart, prev)
        target = _replace(s.target, row, apart, False)
        if into is not None:
            if target != cx.Name(NAME) or any(n == cx.Name(NAME) for n in cx.nodes(value)):
                raise CodegenError(
                    f"partial_sums: statement {call.stmt} reads {row.space} where no fact "
                    f"keeps it from the element it accumulates into ({cx.to_c(s.value)}); "
                    "partial sums would read a partial value there"
                )
            target = cx.Name(into)
        out += cx.stmt_lines((cx.Assign(target, s.op, value),))
    return out


def _apart(row: RowScalar, macro: StmtMacro, call: Call) -> set[tuple[cx.Expr, ...]]:
    """The indices at which ``macro`` reads ``row``'s data space at ``call`` that its facts
    keep away from ``row``'s element (:attr:`~spf.codegen.program.StmtMacro.apart`): no
    store of the local before those reads."""
    from spf.codegen.c import loop_tree

    if not any(space == row.space for space, _, _ in macro.apart):
        return set()
    values = {p: loop_tree(a) for p, a in zip(macro.params, call.args, strict=True)}
    out = set()
    for space, written, read in macro.apart:
        at = tuple(cx.substitute(e, values) for e in written)
        if space == row.space and at == row.index:
            out.add(tuple(cx.substitute(e, values) for e in read))
    return out


def _same(indices: tuple[cx.Expr, ...], other: tuple[cx.Expr, ...]) -> cx.Expr:
    """``indices == other``, component by component."""
    same = [cx.Binary("==", a, b) for a, b in zip(indices, other, strict=True)]
    cond = same[0]
    for extra in same[1:]:
        cond = cx.Binary("&&", cond, extra)
    return cond


def _replace(e: cx.Expr, row: RowScalar, apart: set[tuple[cx.Expr, ...]], prev: bool) -> cx.Expr:
    """``e`` with ``row``'s element as the local, and each other read of the data space
    ``D(J)`` as ``J == I ? spf_row : D(J)`` (what memory would hold there: the region
    writes ``D`` at ``I`` alone), unless the statement's facts keep ``J`` from ``I``
    (``apart``). With ``prev``, ``D(J)`` itself is read as ``J == spf_prev_at ? spf_prev :
    D(J)``: the value the loop's previous iteration stored there, from a register rather
    than through a store-to-load forward (a solve's chain of rows, each waiting on the
    row before: :func:`prev_open_lines`)."""
    if isinstance(e, cx.Access):
        indices = tuple(_replace(i, row, apart, prev) for i in e.indices)
        out: cx.Expr = cx.Access(e.space, indices, e.macro)
        if e.space != row.space:
            return out
        if indices == row.index:
            return cx.Name(NAME)
        if prev:
            at = tuple(cx.Name(f"{PREV}_at{d}") for d in range(len(indices)))
            out = cx.Ternary(_same(indices, at), cx.Name(PREV), out)
        if indices in apart:
            return out
        expect = cx.Call("__builtin_expect", (_same(indices, row.index), cx.Num("0")))
        return cx.Ternary(expect, cx.Name(NAME), out)
    if isinstance(e, cx.Call):
        return cx.Call(e.func, tuple(_replace(a, row, apart, prev) for a in e.args))
    if isinstance(e, cx.Index):
        return cx.Index(_replace(e.base, row, apart, prev), _replace(e.index, row, apart, prev))
    if isinstance(e, cx.Unary):
        return cx.Unary(e.op, _replace(e.operand, row, apart, prev))
    if isinstance(e, cx.Cast):
        return cx.Cast(e.ctype, _replace(e.operand, row, apart, prev))
    if isinstance(e, cx.Binary):
        return cx.Binary(
            e.op, _replace(e.left, row, apart, prev), _replace(e.right, row, apart, prev)
        )
    if isinstance(e, cx.Ternary):
        return cx.Ternary(*(_replace(x, row, apart, prev) for x in (e.cond, e.then, e.other)))
    return e

"""spf's own loop AST: what the scanner produces and the printers consume.

Expressions: ``Int``, ``Var`` (:class:`spf.cexpr.Name`), ``UFRead`` (an index-array read
``col(k)``) and ``Op``. ``Int`` keeps an integer (interval and linear-form arithmetic reads
it), ``Op`` the loop-only operations ``floord``, ``min``, ``max``, ``neg`` and ``select``, and
``UFRead`` arguments that are loop expressions: :func:`spf.codegen.c.loop_tree` turns them
into :mod:`spf.cexpr` nodes.
Statements: ``For``, ``If``, ``Block``, ``Bind`` (a UF value read once into a local),
``Call`` (one statement instance, with the values of its domain iterators) and ``Merge``
(two cursors co-iterating sorted coordinate lists, :mod:`spf.codegen.merge`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from spf.cexpr import Name

# ----------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Int:
    value: int


Var = Name
"""A variable: the C tree's own name node (:class:`spf.cexpr.Name`), so a loop-AST variable
is the C expression it prints as."""


@dataclass(frozen=True, slots=True)
class UFRead:
    uf: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Op:
    """``op`` is one of ``+ - * neg floord / % min max select == != < <= > >= && ||``.

    ``floord(a, b)`` is floor division by a positive constant; ``/`` and ``%`` are C's (isl
    emits them only where the dividend is known non-negative); ``select(c, a, b)`` is ``?:``.
    """

    op: str
    args: tuple[Expr, ...]


Expr = Int | Var | UFRead | Op


# ----------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Block:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class For:
    var: str
    init: Expr
    cond: Expr
    step: int
    body: Node
    position: int
    """Schedule position (0-based) this loop scans."""
    tags: tuple[str, ...] = ()
    """``parallel``, ``vector(8)``, ``unroll(4)`` ... (printers decide what they mean)."""


@dataclass(frozen=True, slots=True)
class If:
    cond: Expr
    then: Node
    orelse: Node | None = None


@dataclass(frozen=True, slots=True)
class Bind:
    """``const idx var = uf(args);`` followed by ``body`` (the scope of ``var``)."""

    var: str
    uf: str
    args: tuple[Expr, ...]
    body: Node


@dataclass(frozen=True, slots=True)
class Call:
    stmt: str
    args: tuple[Expr, ...]
    """Values of the statement's domain iterators, in domain order."""


@dataclass(frozen=True, slots=True)
class Alloc:
    """Buffer ``buffer`` (a :class:`~spf.codegen.program.BufferDecl` of the program) exists
    for the duration of ``body`` (``buffer.allocate_at(stmt, level)``): printers declare or
    allocate it before ``body`` and release it after."""

    buffer: str
    body: Node


@dataclass(frozen=True, slots=True)
class Cursor:
    """One side of a :class:`Merge`: positions ``init <= var < end`` of a list whose
    coordinate at position ``var`` is ``key`` (strictly increasing in ``var``)."""

    var: str
    init: Expr
    end: Expr
    key: Expr
    position: int
    """Schedule position (0-based) of the loop the cursor replaces."""


@dataclass(frozen=True, slots=True)
class Merge:
    """Co-iteration of two sorted coordinate lists in O(len(left) + len(right)): the
    cursors advance together by coordinate; ``both`` runs where their keys are equal
    (intersection), ``left_only`` / ``right_only`` (a union when either is given) where
    one list has a coordinate the other lacks, each in increasing coordinate order. The
    bodies read the cursors' variables; ``left_only`` never reads ``right.var`` (nor
    ``right_only`` ``left.var``)."""

    left: Cursor
    right: Cursor
    both: Node
    left_only: Node | None = None
    right_only: Node | None = None

    @property
    def is_union(self) -> bool:
        return self.left_only is not None or self.right_only is not None

    def bodies(self) -> tuple[Node, ...]:
        """``both``, then ``left_only`` and ``right_only`` where given."""
        return tuple(b for b in (self.both, self.left_only, self.right_only) if b is not None)

    def map_bodies(self, fn: Callable[[Node], Node]) -> Merge:
        """The same merge with ``fn`` applied to each body."""
        return replace(
            self,
            both=fn(self.both),
            left_only=None if self.left_only is None else fn(self.left_only),
            right_only=None if self.right_only is None else fn(self.right_only),
        )


def cursor_exprs(c: Cursor) -> tuple[Expr, ...]:
    return (c.init, c.end, c.key)


def map_cursor(c: Cursor, fn: Callable[[Expr], Expr | None]) -> Cursor:
    return replace(c, init=map_expr(c.init, fn), end=map_expr(c.end, fn), key=map_expr(c.key, fn))


Node = Block | For | If | Bind | Call | Alloc | Merge


@dataclass(frozen=True)
class Function:
    """The scanned program: a loop tree plus UF values bound before any loop."""

    body: Node
    stmts: tuple[str, ...] = field(default=())


# ----------------------------------------------------------------------------- walkers


def expr_vars(e: Expr) -> Iterator[str]:
    """Variable names used by an expression."""
    if isinstance(e, Var):
        yield e.name
    elif isinstance(e, (Op, UFRead)):
        for a in e.args:
            yield from expr_vars(a)


def node_exprs(n: Node) -> Iterator[Expr]:
    """Every expression directly or indirectly under ``n``."""
    if isinstance(n, Block):
        for item in n.items:
            yield from node_exprs(item)
    elif isinstance(n, For):
        yield n.init
        yield n.cond
        yield from node_exprs(n.body)
    elif isinstance(n, If):
        yield n.cond
        yield from node_exprs(n.then)
        if n.orelse is not None:
            yield from node_exprs(n.orelse)
    elif isinstance(n, Bind):
        yield from n.args
        yield from node_exprs(n.body)
    elif isinstance(n, Alloc):
        yield from node_exprs(n.body)
    elif isinstance(n, Merge):
        yield from (*cursor_exprs(n.left), *cursor_exprs(n.right))
        for b in n.bodies():
            yield from node_exprs(b)
    else:
        yield from n.args


def uses(n: Node, name: str) -> bool:
    return any(name in set(expr_vars(e)) for e in node_exprs(n))


def map_expr(e: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rewrite bottom-up: ``fn`` returns a replacement or None to keep the node."""
    if isinstance(e, Op):
        e = Op(e.op, tuple(map_expr(a, fn) for a in e.args))
    elif isinstance(e, UFRead):
        e = UFRead(e.uf, tuple(map_expr(a, fn) for a in e.args))
    new = fn(e)
    return e if new is None else new


def map_node(
    n: Node, fn: Callable[[Expr], Expr | None], stmts: Mapping[str, str] | None = None
) -> Node:
    """Apply :func:`map_expr` to every expression under ``n``; ``stmts`` renames the
    statements called (:func:`rename_calls`)."""
    if isinstance(n, Block):
        return Block(tuple(map_node(i, fn, stmts) for i in n.items))
    if isinstance(n, For):
        body = map_node(n.body, fn, stmts)
        return replace(n, init=map_expr(n.init, fn), cond=map_expr(n.cond, fn), body=body)
    if isinstance(n, If):
        orelse = None if n.orelse is None else map_node(n.orelse, fn, stmts)
        return If(map_expr(n.cond, fn), map_node(n.then, fn, stmts), orelse)
    if isinstance(n, Bind):
        args = tuple(map_expr(a, fn) for a in n.args)
        return Bind(n.var, n.uf, args, map_node(n.body, fn, stmts))
    if isinstance(n, Alloc):
        return Alloc(n.buffer, map_node(n.body, fn, stmts))
    if isinstance(n, Merge):
        cursors = replace(n, left=map_cursor(n.left, fn), right=map_cursor(n.right, fn))
        return cursors.map_bodies(lambda b: map_node(b, fn, stmts))
    stmt = n.stmt if stmts is None else stmts.get(n.stmt, n.stmt)
    return Call(stmt, tuple(map_expr(a, fn) for a in n.args))


def rename_calls(n: Node, stmts: Mapping[str, str]) -> Node:
    """``n`` with the statements it calls renamed by ``stmts`` (the rest unchanged)."""
    return map_node(n, lambda e: None, stmts)


def substitute(n: Node, values: Mapping[str, Expr]) -> Node:
    """Replace variables by expressions."""
    if not values:
        return n
    return map_node(n, lambda e: values.get(e.name) if isinstance(e, Var) else None)


def conjunction(parts: Sequence[Expr]) -> Expr:
    """``parts[0] && parts[1] && ...`` as nested two-operand ``&&`` (what the printers and
    the self-check read); ``1`` when there are none."""
    out = parts[0] if parts else Int(1)
    for p in parts[1:]:
        out = Op("&&", (out, p))
    return out


def upper_bound(n: For) -> Expr | None:
    """The largest value of ``n.var`` its condition allows, as an expression (None when the
    condition is not a conjunction of ``var < e`` / ``var <= e``)."""
    bounds: list[Expr] = []
    stack = [n.cond]
    while stack:
        c = stack.pop()
        if not isinstance(c, Op):
            return None
        if c.op == "&&":
            stack.extend(c.args)
            continue
        if c.op not in ("<", "<=") or c.args[0] != Var(n.var):
            return None
        bound = c.args[1]
        bounds.append(Op("-", (bound, Int(1))) if c.op == "<" else bound)
    if not bounds:
        return None
    out = bounds[0]
    for b in bounds[1:]:
        out = Op("min", (out, b))
    return out


def walk(n: Node) -> Iterator[Node]:
    """Every node under ``n`` (pre-order)."""
    yield n
    if isinstance(n, Block):
        for item in n.items:
            yield from walk(item)
    elif isinstance(n, (For, Bind, Alloc)):
        yield from walk(n.body)
    elif isinstance(n, If):
        yield from walk(n.then)
        if n.orelse is not None:
            yield from walk(n.orelse)
    elif isinstance(n, Merge):
        for b in n.bodies():
            yield from walk(b)


def substitute_expr(e: Expr, name: str, new: str) -> Expr:
    """Rename variable ``name`` to ``new`` in one expression."""
    return map_expr(e, lambda x: Var(new) if isinstance(x, Var) and x.name == name else None)

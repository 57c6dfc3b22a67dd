"""spf's own loop AST: what the scanner produces and the printers consume.

Expressions: ``Int``, ``Var``, ``UFRead`` (an index-array read ``col(k)``) and ``Op``.
Statements: ``For``, ``If``, ``Block``, ``Bind`` (a UF value read once into a local) and
``Call`` (one statement instance, with the values of its domain iterators).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

# ----------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Int:
    value: int


@dataclass(frozen=True, slots=True)
class Var:
    name: str


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


Node = Block | For | If | Bind | Call | Alloc


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


def map_node(n: Node, fn: Callable[[Expr], Expr | None]) -> Node:
    """Apply :func:`map_expr` to every expression under ``n``."""
    if isinstance(n, Block):
        return Block(tuple(map_node(i, fn) for i in n.items))
    if isinstance(n, For):
        return replace(
            n, init=map_expr(n.init, fn), cond=map_expr(n.cond, fn), body=map_node(n.body, fn)
        )
    if isinstance(n, If):
        orelse = None if n.orelse is None else map_node(n.orelse, fn)
        return If(map_expr(n.cond, fn), map_node(n.then, fn), orelse)
    if isinstance(n, Bind):
        return Bind(n.var, n.uf, tuple(map_expr(a, fn) for a in n.args), map_node(n.body, fn))
    if isinstance(n, Alloc):
        return Alloc(n.buffer, map_node(n.body, fn))
    return Call(n.stmt, tuple(map_expr(a, fn) for a in n.args))


def substitute(n: Node, values: Mapping[str, Expr]) -> Node:
    """Replace variables by expressions."""
    if not values:
        return n
    return map_node(n, lambda e: values.get(e.name) if isinstance(e, Var) else None)


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


def substitute_expr(e: Expr, name: str, new: str) -> Expr:
    """Rename variable ``name`` to ``new`` in one expression."""
    return map_expr(e, lambda x: Var(new) if isinstance(x, Var) and x.name == name else None)

"""Syntax tree of set and relation text, as the parser produces it.

Every node carries ``span = (start, end)``: offsets into the parsed text (end exclusive), so
that later stages (affinity checks, unknown names, arity) can point at the offending part with
a caret. Nodes are plain frozen dataclasses; the parser (``parse.py``) builds them and
``convert.py`` turns them into the isl-backed representation.
"""

from __future__ import annotations

from dataclasses import dataclass

Span = tuple[int, int]


# ----------------------------------------------------------------------------- expressions
@dataclass(frozen=True, kw_only=True, slots=True)
class Num:
    """An integer literal (non-negative; negation is ``Neg``)."""

    value: int
    span: Span


@dataclass(frozen=True, kw_only=True, slots=True)
class Name:
    """A bare identifier: tuple variable, existential variable or symbolic constant."""

    name: str
    span: Span


@dataclass(frozen=True, kw_only=True, slots=True)
class Call:
    """``f(e1, ..., en)``: an uninterpreted-function call (``floor`` is ``Floor``);
    ``f(e1, ..., en)[c]`` is component ``c`` of a UF that returns a tuple."""

    name: str
    args: tuple[Expr, ...]
    span: Span
    name_span: Span
    component: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Neg:
    """``-e``."""

    operand: Expr
    span: Span


@dataclass(frozen=True, kw_only=True, slots=True)
class BinOp:
    """``left op right`` with ``op`` in ``+ - * / %``.

    ``2i`` (a coefficient written before a name, call or parenthesis) is ``BinOp('*')``.
    ``/`` is only meaningful inside ``floor``; the converter rejects it elsewhere.
    """

    op: str
    left: Expr
    right: Expr
    span: Span
    op_span: Span


@dataclass(frozen=True, kw_only=True, slots=True)
class Floor:
    """``floor(e)`` (``e`` is normally ``a / c``); ``ceil(e)`` is ``Floor`` with ``ceil=True``."""

    operand: Expr
    span: Span
    ceil: bool = False


Expr = Num | Name | Call | Neg | BinOp | Floor


# ----------------------------------------------------------------------------- formulas
@dataclass(frozen=True, kw_only=True, slots=True)
class Compare:
    """One comparison ``left op right``, op in ``= != < <= > >=`` (``==`` is given as ``=``).

    A chain ``0 <= i < N`` is parsed into ``And`` of the consecutive pairs.
    """

    op: str
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True, kw_only=True, slots=True)
class Bool:
    """``true`` / ``false`` (also what an empty constraint list means)."""

    value: bool
    span: Span


@dataclass(frozen=True, kw_only=True, slots=True)
class And:
    items: tuple[Formula, ...]
    span: Span


@dataclass(frozen=True, kw_only=True, slots=True)
class Or:
    items: tuple[Formula, ...]
    span: Span


@dataclass(frozen=True, kw_only=True, slots=True)
class Exists:
    """``exists(a, b: body)`` or ``exists a, b : body``."""

    names: tuple[Name, ...]
    body: Formula
    span: Span


Formula = Compare | Bool | And | Or | Exists


# ----------------------------------------------------------------------------- top level
@dataclass(frozen=True, kw_only=True, slots=True)
class Piece:
    """One part ``[params] -> { [in] -> [out] : formula }`` (a braced part, or one of the
    ``;``-separated parts inside braces, as isl prints unions; those share the params).

    ``out_tuple`` is None for a set; ``formula`` is None when there is no ``:`` part;
    ``params`` is None when there is no ``[N, M] ->`` prefix.
    """

    params: tuple[Name, ...] | None
    in_tuple: tuple[Expr, ...]
    out_tuple: tuple[Expr, ...] | None
    formula: Formula | None
    span: Span
    in_span: Span
    out_span: Span | None


@dataclass(frozen=True, kw_only=True, slots=True)
class Document:
    """The whole text: one or more pieces joined by ``union`` (or ``||`` between braces)."""

    pieces: tuple[Piece, ...]
    text: str

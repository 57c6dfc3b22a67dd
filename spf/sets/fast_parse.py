"""A recursive-descent reader of the set language for text that is well formed.

:func:`spf.sets.parse.parse_document` parses with lark (LALR) and then walks lark's tree
into :mod:`spf.sets.syntax` nodes; both run in pure Python and cost ~0.5 ms for a typical
set, which a cold wavefront compile pays for a few hundred texts. :func:`read` builds the
same nodes (spans included) in one pass over the tokens, at a fraction of the cost, for the
text it fully understands; on anything else (a syntax error, a construct the walker rejects,
nesting deeper than the walker's ``MAX_DEPTH`` or the reader's own recursion, a number too
long for ``int``) it returns None and the caller parses with lark, so every error, its
message and its caret come from one place.

It follows ``parse._GRAMMAR`` rule by rule (the comments name the rules) and the walker
``parse._Builder`` node by node. A node's *span* is what lark's ``propagate_positions``
gives the rule's tree (parentheses included); a parenthesis passes its contents' node on
with its own span, and whether that is a formula or an expression is decided where it is
used, as the walker decides. tests/unit/sets/test_fast_parse.py checks it against lark on a
corpus and on random token strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, NoReturn, TypeAlias, cast

from spf.sets import syntax

__all__ = ["read"]

_TOKENS: Final = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*)|([0-9]+)|(<=|>=|==|!=|<|>|=)|(->|&&|\|\||[-+*/%{}\[\](),;:])|(\S)"
)
"""``parse._GRAMMAR``'s terminals, longest first (a name, a number, a comparison, an
operator), or any other character but white space (which lark rejects)."""

_KINDS: Final = (None, "NAME", "NUMBER", "CMP", None, None)
"""A token's kind by the group that matched it (None: an operator is its own kind)."""

_KEYWORDS: Final = frozenset(
    {"union", "or", "and", "exists", "true", "false", "floor", "ceil", "mod"}
)
"""Words that are keywords, never names (lark's lexer gives them their own terminals)."""

_NESTING: Final = 120
"""Deepest recursion of the reader (deeper text is left to lark)."""

_Token: TypeAlias = tuple[str, str, int, int]
"""``(kind, text, start, end)``: kind is the operator or keyword itself, ``NAME``, ``NUMBER``,
``CMP`` or ``$END``."""

_Node: TypeAlias = "tuple[syntax.Expr | syntax.Formula, syntax.Span, bool, int]"
"""A rule's result: its syntax node, the span of its tree, whether the node is a formula, and
its height: how much deeper than the node itself the walker's deepest step below it is (the
walker fails past ``MAX_DEPTH``; :meth:`_Reader.deep` leaves such text to lark)."""


class _UnreadError(Exception):
    """The text is not read here (lark parses it)."""


def _stop() -> NoReturn:
    raise _UnreadError


def read(text: str, max_depth: int) -> syntax.Document | None:
    """The document ``text`` parses to, or None when lark has to parse it (``max_depth``:
    the walker's ``MAX_DEPTH``)."""
    try:
        tokens = _tokens(text)
    except _UnreadError:
        return None
    try:
        return _Reader(text, tokens, max_depth).document()
    except (_UnreadError, RecursionError):
        return None


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    for found in _TOKENS.finditer(text):
        group = found.lastindex
        if group == 5:  # a character no token starts with
            _stop()
        value = found.group()
        kind = _KINDS[group or 0] or value
        if kind == "NAME" and value in _KEYWORDS:
            kind = value  # a keyword is its own kind
        out.append((kind, value, found.start(), found.end()))
    out.append(("$END", "", len(text), len(text)))
    return out


class _Reader:
    """One pass over the tokens of one text."""

    def __init__(self, text: str, tokens: list[_Token], max_depth: int) -> None:
        self.text = text
        self.tokens = tokens
        self.at = 0
        self.max_depth = max_depth

    # --------------------------------------------------------------------- tokens
    def peek(self) -> str:
        return self.tokens[self.at][0]

    def take(self, kind: str | None = None) -> _Token:
        token = self.tokens[self.at]
        if kind is not None and token[0] != kind:
            _stop()
        self.at += 1
        return token

    @staticmethod
    def expr(node: _Node) -> syntax.Expr:
        """``node``'s expression, where the walker wants one (a formula there: lark's)."""
        if node[2]:
            _stop()
        return cast("syntax.Expr", node[0])

    @staticmethod
    def formula(node: _Node) -> syntax.Formula:
        """``node``'s formula, where the walker wants one (an expression there: lark's)."""
        if not node[2]:
            _stop()
        return cast("syntax.Formula", node[0])

    def deep(self, height: int) -> None:
        """Text the walker, entering its top at depth 1, finds too deep is lark's."""
        if 1 + height > self.max_depth:
            _stop()

    # --------------------------------------------------------------------- top level
    def document(self) -> syntax.Document:
        """``start: piece ((union | || | or) piece)*``."""
        pieces = self.piece()
        while self.peek() in ("union", "||", "or"):
            self.take()
            pieces += self.piece()
        self.take("$END")
        return syntax.Document(pieces=tuple(pieces), text=self.text)

    def piece(self) -> list[syntax.Piece]:
        """``piece: params? { part (; part)* }``: one Piece per part (``_Builder._pieces``)."""
        start = self.tokens[self.at][2]
        params: tuple[syntax.Name, ...] | None = None
        if self.peek() == "[":
            self.take()
            names: list[syntax.Name] = []
            if self.peek() == "NAME":
                names.append(self.name(self.take()))
                while self.peek() == ",":
                    self.take()
                    names.append(self.name(self.take("NAME")))
            self.take("]")
            self.take("->")
            params = tuple(names)
        self.take("{")
        parts = [self.part(params)]
        while self.peek() == ";":
            self.take()
            parts.append(self.part(params))
        end = self.take("}")[3]
        if len(parts) == 1:  # the piece's span, braces and parameters included
            parts[0] = syntax.Piece(
                params=parts[0].params, in_tuple=parts[0].in_tuple,
                out_tuple=parts[0].out_tuple, formula=parts[0].formula, span=(start, end),
                in_span=parts[0].in_span, out_span=parts[0].out_span,
            )  # fmt: skip
        return parts

    def part(self, params: tuple[syntax.Name, ...] | None) -> syntax.Piece:
        """``part: tuple (-> tuple)? (: disj)? | : disj -> bare`` (``_Builder._part``)."""
        if self.peek() == ":":
            colon = self.take()[2]
            node = self.disj()
            self.deep(node[3])
            return syntax.Piece(
                params=params, in_tuple=(), out_tuple=None, formula=self.formula(node),
                span=(colon, node[1][1]), in_span=(colon, colon), out_span=None,
            )  # fmt: skip
        fixed: list[syntax.Formula] = []
        ins, in_span = self.tuple(fixed)
        outs: tuple[syntax.Expr, ...] | None = None
        out_span: syntax.Span | None = None
        end = in_span[1]
        if self.peek() == "->":
            self.take()
            outs, out_span = self.tuple(fixed)
            end = out_span[1]
        formula: syntax.Formula | None = None
        if self.peek() == ":":
            self.take()
            node = self.disj()
            self.deep(node[3])
            formula, end = self.formula(node), node[1][1]
        span = (in_span[0], end)
        if fixed:
            items = (*fixed, formula) if formula is not None else tuple(fixed)
            formula = syntax.And(items=items, span=span)
        return syntax.Piece(
            params=params, in_tuple=ins, out_tuple=outs, formula=formula, span=span,
            in_span=in_span, out_span=out_span,
        )  # fmt: skip

    def tuple(self, fixed: list[syntax.Formula]) -> tuple[tuple[syntax.Expr, ...], syntax.Span]:
        """``tuple: [ (entry (, entry)*)? ]``."""
        start = self.take("[")[2]
        entries: list[syntax.Expr] = []
        if self.peek() != "]":
            entries.append(self.entry(fixed))
            while self.peek() == ",":
                self.take()
                entries.append(self.entry(fixed))
        end = self.take("]")[3]
        return tuple(entries), (start, end)

    def entry(self, fixed: list[syntax.Formula]) -> syntax.Expr:
        """``?entry: sum | sum CMP sum -> fixed``: the name ``i`` of ``i = e``, whose
        equality goes to ``fixed`` (``_Builder._tuple``)."""
        left = self.sum(0)
        self.deep(left[3])
        if self.peek() != "CMP":
            return self.expr(left)
        op = self.take()[1]
        right = self.sum(0)
        self.deep(right[3])
        name = self.expr(left)
        if not isinstance(name, syntax.Name) or op not in ("=", "=="):
            _stop()
        value = self.expr(right)
        fixed.append(syntax.Compare(op="=", left=name, right=value, span=(left[1][0], right[1][1])))
        return name

    # --------------------------------------------------------------------- formulas
    def disj(self, nesting: int = 0) -> _Node:
        """``?disj: conj ((|| | or) conj)*`` -> Or."""
        if nesting > _NESTING:
            _stop()
        first = self.conj(nesting + 1)
        if self.peek() not in ("||", "or"):
            return first
        items = [first]
        while self.peek() in ("||", "or"):
            self.take()
            items.append(self.conj(nesting + 1))
        span = (first[1][0], items[-1][1][1])
        value = syntax.Or(items=tuple(self.formula(i) for i in items), span=span)
        return value, span, True, 1 + max(i[3] for i in items)

    def conj(self, nesting: int) -> _Node:
        """``?conj: unit ((&& | and) unit)*`` -> And."""
        first = self.unit(nesting)
        if self.peek() not in ("&&", "and"):
            return first
        items = [first]
        while self.peek() in ("&&", "and"):
            self.take()
            items.append(self.unit(nesting))
        span = (first[1][0], items[-1][1][1])
        value = syntax.And(items=tuple(self.formula(i) for i in items), span=span)
        return value, span, True, 1 + max(i[3] for i in items)

    def unit(self, nesting: int) -> _Node:
        """``?unit: chain | exists ... | true | false``."""
        kind = self.peek()
        if kind == "exists":
            return self.exists(nesting)
        if kind in ("true", "false"):
            token = self.take()
            span = (token[2], token[3])
            return syntax.Bool(value=kind == "true", span=span), span, True, 0
        return self.chain(nesting)

    def chain(self, nesting: int) -> _Node:
        """``?chain: sum (CMP sum)*`` -> Compare, or And of the consecutive Compares."""
        first = self.sum(nesting)
        if self.peek() != "CMP":
            return first
        nodes, ops = [first], []
        while self.peek() == "CMP":
            ops.append(self.take()[1])
            nodes.append(self.sum(nesting))
        exprs = [self.expr(n) for n in nodes]
        compares = tuple(
            syntax.Compare(
                op="=" if op == "==" else op,
                left=exprs[k],
                right=exprs[k + 1],
                span=(nodes[k][1][0], nodes[k + 1][1][1]),
            )
            for k, op in enumerate(ops)
        )
        span = (first[1][0], nodes[-1][1][1])
        height = 2 + max(n[3] for n in nodes)
        if len(compares) == 1:
            return compares[0], span, True, height
        return syntax.And(items=compares, span=span), span, True, height

    def exists(self, nesting: int) -> _Node:
        """``exists (binding (, binding)* : disj)`` or ``exists NAME (, NAME)* : disj``
        (``_Builder._exists``)."""
        start = self.take("exists")[2]
        names: list[syntax.Name] = []
        defined: list[syntax.Formula] = []
        height = 0
        if self.peek() == "(":
            self.take()
            height = self.binding(names, defined, nesting)
            while self.peek() == ",":
                self.take()
                height = max(height, self.binding(names, defined, nesting))
            self.take(":")
            node = self.disj(nesting + 1)
            end = self.take(")")[3]
        else:
            names.append(self.name(self.take("NAME")))
            while self.peek() == ",":
                self.take()
                names.append(self.name(self.take("NAME")))
            self.take(":")
            node = self.disj(nesting + 1)
            end = node[1][1]
        body = self.formula(node)
        span = (start, end)
        if defined:
            body = syntax.And(items=(*defined, body), span=span)
        value = syntax.Exists(names=tuple(names), body=body, span=span)
        return value, span, True, max(height, 1 + node[3])

    def binding(self, names: list[syntax.Name], defined: list[syntax.Formula], nesting: int) -> int:
        """``binding: NAME (CMP sum)?``: isl's ``e0 = floor(i/2)`` defines the name; the
        height it adds to its ``exists``."""
        token = self.take("NAME")
        name = self.name(token)
        names.append(name)
        if self.peek() != "CMP":
            return 0
        op = self.take()[1]
        value = self.sum(nesting)
        if op not in ("=", "=="):
            _stop()
        span = (token[2], value[1][1])
        defined.append(syntax.Compare(op="=", left=name, right=self.expr(value), span=span))
        return 2 + value[3]

    # --------------------------------------------------------------------- expressions
    def sum(self, nesting: int) -> _Node:
        """``?sum: term ((+ | -) term)*`` -> left-nested BinOps."""
        return self.binary(nesting, _SUM, self.term)

    def term(self, nesting: int) -> _Node:
        """``?term: factor ((* | / | % | mod) factor)*``."""
        return self.binary(nesting, _TERM, self.factor)

    def binary(self, nesting: int, ops: frozenset[str], operand: Callable[[int], _Node]) -> _Node:
        """``_Builder._binary``: the k-th of ``count`` operands is entered ``count - k``
        levels below the chain (the first ``count - 1``)."""
        first = operand(nesting)
        if self.peek() not in ops:
            return first
        nodes = [first]
        result = self.expr(first)
        start = first[1][0]
        while self.peek() in ops:
            op = self.take()
            right = operand(nesting)
            nodes.append(right)
            result = syntax.BinOp(
                op="%" if op[0] == "mod" else op[1],
                left=result,
                right=self.expr(right),
                span=(start, right[1][1]),
                op_span=(op[2], op[3]),
            )
        count = len(nodes)
        height = max(count - max(k, 1) + n[3] for k, n in enumerate(nodes))
        return result, (start, nodes[-1][1][1]), False, height

    def factor(self, nesting: int) -> _Node:
        """``?factor: - factor -> neg | NUMBER target -> coef | primary``."""
        kind = self.peek()
        if kind == "-":
            start = self.take()[2]
            operand = self.factor(nesting)
            span = (start, operand[1][1])
            return syntax.Neg(operand=self.expr(operand), span=span), span, False, 1 + operand[3]
        if kind == "NUMBER":
            number = self.number(self.take())
            if self.peek() not in _TARGET:
                return number, number.span, False, 0
            target = self.target(nesting)
            span = (number.span[0], target[1][1])
            value = syntax.BinOp(
                op="*", left=number, right=self.expr(target), span=span, op_span=number.span
            )
            return value, span, False, 1 + target[3]
        return self.target(nesting)

    def target(self, nesting: int) -> _Node:
        """``?target: NAME | call | paren | floor``."""
        kind = self.peek()
        if kind == "NAME":
            token = self.take()
            if self.peek() == "(":
                return self.call(token, nesting)
            name = self.name(token)
            return name, name.span, False, 0
        if kind == "(":  # paren: its contents' node, with the parentheses' span
            start = self.take()[2]
            inner = self.disj(nesting + 1)
            end = self.take(")")[3]
            return inner[0], (start, end), inner[2], 1 + inner[3]
        if kind in ("floor", "ceil"):
            start = self.take()[2]
            self.take("(")
            operand = self.sum(nesting + 1)
            end = self.take(")")[3]
            span = (start, end)
            value = syntax.Floor(operand=self.expr(operand), span=span, ceil=kind == "ceil")
            return value, span, False, 1 + operand[3]
        _stop()

    def call(self, name: _Token, nesting: int) -> _Node:
        """``call: NAME ( sum (, sum)* ) component?``, ``component: [ NUMBER ]``."""
        self.take("(")
        nodes = [self.sum(nesting + 1)]
        while self.peek() == ",":
            self.take()
            nodes.append(self.sum(nesting + 1))
        end = self.take(")")[3]
        component: int | None = None
        if self.peek() == "[":
            self.take()
            component = self.number(self.take("NUMBER")).value
            end = self.take("]")[3]
        span = (name[2], end)
        value = syntax.Call(
            name=name[1], args=tuple(self.expr(n) for n in nodes), span=span,
            name_span=(name[2], name[3]), component=component,
        )  # fmt: skip
        return value, span, False, 1 + max(n[3] for n in nodes)

    @staticmethod
    def name(token: _Token) -> syntax.Name:
        if token[0] != "NAME":
            _stop()
        return syntax.Name(name=token[1], span=(token[2], token[3]))

    @staticmethod
    def number(token: _Token) -> syntax.Num:
        try:
            value = int(token[1])
        except ValueError:  # more digits than int() converts: the walker says so
            _stop()
        return syntax.Num(value=value, span=(token[2], token[3]))


_SUM: Final = frozenset({"+", "-"})
_TERM: Final = frozenset({"*", "/", "%", "mod"})
_TARGET: Final = frozenset({"NAME", "(", "floor", "ceil"})
"""Tokens that start a ``target``: after a number, a coefficient (``2i``, ``3f(k)``)."""

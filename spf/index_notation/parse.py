"""Index notation as text: ``"C(i,j) = A(i,k) * B(k,j)"`` to a small syntax tree.

Grammar (whitespace anywhere between tokens)::

    assignment := access ("=" | "+=") expr
    expr       := term (("+" | "-") term)*
    term       := factor ("*" factor)*
    factor     := ("-" | "+") factor | number | access | "(" expr ")"
    access     := name ["(" [name ("," name)*] ")"]

A name without parentheses is a scalar (a 0-d tensor). Every error is a
:class:`~spf.errors.ParseError` whose caret points at the offending token and which says what
was expected there.

>>> parse("y(i) = A(i,j) * x(j)").rhs
Mul(factors=(Access(name='A', indices=('i', 'j'), span=(7, 13)), \
Access(name='x', indices=('j',), span=(16, 20))))
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from spf.errors import ParseError

__all__ = ["Access", "Add", "Assignment", "Const", "Expr", "Mul", "Neg", "parse"]

_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<op>\+=|[-+*=(),])|(?P<bad>\S))"
)


@dataclass(frozen=True)
class Access:
    """``name(indices)``; ``span`` is its place in the text."""

    name: str
    indices: tuple[str, ...]
    span: tuple[int, int]


@dataclass(frozen=True)
class Const:
    """A scalar constant."""

    value: float
    text: str


@dataclass(frozen=True)
class Neg:
    """``-operand``."""

    operand: Expr


@dataclass(frozen=True)
class Add:
    """``terms[0] ± terms[1] ± ...``; ``signs[n]`` is ``+1`` or ``-1``."""

    terms: tuple[Expr, ...]
    signs: tuple[int, ...]


@dataclass(frozen=True)
class Mul:
    """``factors[0] * factors[1] * ...``."""

    factors: tuple[Expr, ...]


Expr = Access | Const | Neg | Add | Mul


@dataclass(frozen=True)
class Assignment:
    """``output = rhs`` (``accumulate``: ``+=``) and the text it was read from."""

    output: Access
    accumulate: bool
    rhs: Expr
    text: str


@dataclass(frozen=True)
class _Tok:
    kind: str  # "num", "name", "op", "end"
    text: str
    start: int
    end: int


def _tokens(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # only trailing whitespace is left
            break
        kind = m.lastgroup
        assert kind is not None
        start = m.start(kind)
        if kind == "bad":
            raise ParseError(
                f"einsum: unexpected character {m.group(kind)!r}; index notation uses names, "
                "numbers, '(', ')', ',', '+', '-', '*', '=' and '+='",
                text=text,
                span=(start, start + 1),
            )
        toks.append(_Tok(kind, m.group(kind), start, m.end()))
        pos = m.end()
    toks.append(_Tok("end", "", len(text), len(text)))
    return toks


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.at = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.at]

    def fail(self, expected: str, tok: _Tok | None = None) -> ParseError:
        t = tok or self.tok
        found = "the end of the formula" if t.kind == "end" else repr(t.text)
        return ParseError(
            f"einsum: expected {expected}, found {found}",
            text=self.text,
            span=(t.start, max(t.end, t.start + 1)),
        )

    def take(self, op: str) -> bool:
        if self.tok.kind == "op" and self.tok.text == op:
            self.at += 1
            return True
        return False

    def assignment(self) -> Assignment:
        if self.tok.kind != "name":
            raise self.fail("the output tensor, e.g. 'y(i)' or 's'")
        out = self.access()
        if self.take("+="):
            accumulate = True
        elif self.take("="):
            accumulate = False
        else:
            raise self.fail("'=' or '+=' after the output")
        rhs = self.expr()
        if self.tok.kind != "end":
            raise self.fail("'+', '-', '*' or the end of the formula")
        return Assignment(out, accumulate, rhs, self.text)

    def expr(self) -> Expr:
        terms = [self.term()]
        signs = [1]
        while self.tok.kind == "op" and self.tok.text in "+-" and self.tok.text != "+=":
            signs.append(1 if self.tok.text == "+" else -1)
            self.at += 1
            terms.append(self.term())
        return terms[0] if len(terms) == 1 else Add(tuple(terms), tuple(signs))

    def term(self) -> Expr:
        factors = [self.factor()]
        while self.take("*"):
            factors.append(self.factor())
        return factors[0] if len(factors) == 1 else Mul(tuple(factors))

    def factor(self) -> Expr:
        tok = self.tok
        if self.take("-"):
            return Neg(self.factor())
        if self.take("+"):
            return self.factor()
        if tok.kind == "num":
            value = float(tok.text)
            if not math.isfinite(value):
                raise ParseError(
                    f"einsum: the constant {tok.text} is too large for a double",
                    text=self.text,
                    span=(tok.start, tok.end),
                )
            self.at += 1
            return Const(value, tok.text)
        if tok.kind == "name":
            return self.access()
        if self.take("("):
            inner = self.expr()
            if not self.take(")"):
                raise self.fail("')' closing the parenthesis")
            return inner
        raise self.fail("a tensor like 'A(i,j)', a number or '('")

    def access(self) -> Access:
        name = self.tok
        self.at += 1
        if not self.take("("):
            return Access(name.text, (), (name.start, name.end))
        indices: list[str] = []
        seen: dict[str, _Tok] = {}
        if not self.take(")"):
            while True:
                tok = self.tok
                if tok.kind != "name":
                    raise self.fail(f"an index name in {name.text}(...)")
                if tok.text in seen:
                    raise ParseError(
                        f"einsum: index {tok.text!r} appears twice in {name.text}(...); each "
                        "index names one dimension of a tensor (a diagonal is not index notation "
                        "here: extract it first)",
                        text=self.text,
                        span=(tok.start, tok.end),
                    )
                seen[tok.text] = tok
                indices.append(tok.text)
                self.at += 1
                if self.take(")"):
                    break
                if not self.take(","):
                    raise self.fail(f"',' or ')' in {name.text}(...)")
        end = self.toks[self.at - 1].end
        return Access(name.text, tuple(indices), (name.start, end))


def parse(text: str) -> Assignment:
    """Parse one index-notation assignment (see the module docstring)."""
    if not isinstance(text, str):
        raise ParseError(f"einsum: the formula must be a string, got {type(text).__name__}")
    if not text.strip():
        raise ParseError("einsum: the formula is empty; write e.g. 'y(i) = A(i,j) * x(j)'")
    try:
        return _Parser(text).assignment()
    except RecursionError:
        raise ParseError(
            "einsum: the formula nests too deeply (parentheses or signs) to parse; "
            "write it with fewer nested levels"
        ) from None

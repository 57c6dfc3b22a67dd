"""The value of a ``#if``/``#elif`` condition, as cpp computes it (C11 6.10.1).

The preprocessor hands over the condition with ``defined`` replaced and macros expanded;
what is left are integer literals, names (which cpp reads as 0), parentheses and C's
operators. Arithmetic is on signed 64-bit integers (``intmax_t``) with C's truncating ``/``
and ``%``; an unsigned literal (``1u``), whose arithmetic wraps, and a character literal are
refused rather than guessed, and so is anything else (a cast, a call, ``sizeof``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from spf.frontend.c_ints import c_div, c_integer

_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)\b|([A-Za-z_]\w*)|"
    r"(<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>!~&|^?:()])|(\S))"
)
_BINARY: dict[str, int] = {
    "*": 10, "/": 10, "%": 10, "+": 9, "-": 9, "<<": 8, ">>": 8, "<": 7, "<=": 7, ">": 7,
    ">=": 7, "==": 6, "!=": 6, "&": 5, "^": 4, "|": 3, "&&": 2, "||": 1,
}  # fmt: skip
"""Binary operators and their precedence (higher binds tighter); ``?:`` is below them all."""
_BITS = 64


class NotConstantError(ValueError):
    """The condition is not an integer constant expression this module evaluates."""


def if_value(text: str) -> int:
    """The value of the (expanded) condition ``text``."""
    toks = _tokens(text)
    if not toks:
        raise NotConstantError("the condition is empty")
    parser = _Parser(toks)
    value = parser.conditional()
    if parser.k < len(toks):
        raise NotConstantError(f"unexpected {toks[parser.k][1]!r}")
    return value


def _tokens(text: str) -> list[tuple[str, str | int]]:
    out: list[tuple[str, str | int]] = []
    for m in _TOKEN.finditer(text.rstrip()):
        number, suffix, name, op, other = m.groups()
        if number is not None:
            if "u" in suffix.lower():
                raise NotConstantError(f"{number}{suffix} is unsigned (its arithmetic wraps)")
            out.append(("num", _integer(number)))
        elif name is not None:
            out.append(("num", 0))  # a name that is no macro is 0 in #if
        elif op is not None:
            out.append(("op", op))
        else:
            raise NotConstantError(f"{other!r} cannot appear in #if")
    return out


def _integer(text: str) -> int:
    """A decimal, hexadecimal (``0x1f``) or octal (``010`` is 8) literal's value."""
    value = c_integer(text)
    if value is None:
        raise NotConstantError(f"{text} is not an integer literal")
    return _wrap(value)


def _wrap(value: int) -> int:
    """``value`` as a signed 64-bit integer (cpp's ``intmax_t``)."""
    value &= (1 << _BITS) - 1
    return value - (1 << _BITS) if value >> (_BITS - 1) else value


def _apply(op: str, a: int, b: int, evaluated: bool) -> int:
    """``a op b``; ``evaluated`` is False in an operand ``&&``/``||``/``?:`` skips, where a
    division by zero is no error (its value is not used)."""
    if op in ("/", "%"):
        if b == 0:
            if not evaluated:
                return 0
            raise NotConstantError(f"division by zero ('{op} 0')")
        q, r = c_div(a, b)  # C truncates toward 0
        return _wrap(q) if op == "/" else _wrap(r)
    if op in ("<<", ">>"):
        if not 0 <= b < _BITS:
            if not evaluated:
                return 0
            raise NotConstantError(f"shift by {b}")
        return _wrap(a << b) if op == "<<" else a >> b
    table = {
        "*": lambda: a * b, "+": lambda: a + b, "-": lambda: a - b, "<": lambda: int(a < b),
        "<=": lambda: int(a <= b), ">": lambda: int(a > b), ">=": lambda: int(a >= b),
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "&": lambda: a & b,
        "^": lambda: a ^ b, "|": lambda: a | b,
    }  # fmt: skip
    return _wrap(table[op]())


class _Parser:
    """Precedence climbing over the tokens. Every operand is parsed; ``skipped`` counts the
    enclosing operands that ``&&``, ``||`` or ``?:`` do not evaluate (a constant expression
    has no side effects: only their errors are not raised)."""

    def __init__(self, toks: list[tuple[str, str | int]]) -> None:
        self.toks = toks
        self.k = 0
        self.skipped = 0

    def operand(self, run: bool, parse: Callable[[], int]) -> int:
        """``parse()`` as an operand that is evaluated only where ``run`` holds."""
        self.skipped += not run
        try:
            return parse()
        finally:
            self.skipped -= not run

    def peek(self) -> str | None:
        if self.k < len(self.toks) and self.toks[self.k][0] == "op":
            return str(self.toks[self.k][1])
        return None

    def take(self, op: str) -> None:
        if self.peek() != op:
            found = repr(self.toks[self.k][1]) if self.k < len(self.toks) else "the end"
            raise NotConstantError(f"expected {op!r}, found {found}")
        self.k += 1

    def conditional(self) -> int:
        cond = self.binary(1)
        if self.peek() != "?":
            return cond
        self.k += 1
        yes = self.operand(bool(cond), self.conditional)
        self.take(":")
        no = self.operand(not cond, self.conditional)
        return yes if cond else no

    def binary(self, least: int) -> int:
        left = self.unary()
        while (op := self.peek()) in _BINARY and _BINARY[op] >= least:
            self.k += 1
            level = _BINARY[op] + 1
            run = {"&&": bool(left), "||": not left}.get(op, True)
            right = self.operand(run, functools.partial(self.binary, level))
            if op == "&&":
                left = int(bool(left) and bool(right))
            elif op == "||":
                left = int(bool(left) or bool(right))
            else:
                left = _apply(op, left, right, not self.skipped)
        return left

    def unary(self) -> int:
        if self.k >= len(self.toks):
            raise NotConstantError("the condition ends early")
        kind, tok = self.toks[self.k]
        self.k += 1
        if kind == "num":
            return int(tok)
        if tok == "(":
            value = self.conditional()
            self.take(")")
            return value
        if tok in ("-", "+", "!", "~"):
            v = self.unary()
            return {"-": _wrap(-v), "+": v, "!": int(not v), "~": _wrap(~v)}[str(tok)]
        raise NotConstantError(f"unexpected {tok!r}")


__all__ = ["NotConstantError", "if_value"]

"""Parameter expressions (``N``, ``N - 2``, ``NB*R``) as fast Python evaluators.

Used for data-space extents: parsed once with the set grammar, evaluated per call with
exact integer arithmetic (``floor(e/c)`` and ``e % c`` are mathematical floor and modulo).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from spf.errors import ArgumentError, ParseError
from spf.sets import syntax as ast
from spf.sets.parse import parse_document

Evaluator = Callable[[Mapping[str, int]], int]


def compile_expr(text: str) -> tuple[Evaluator, frozenset[str]]:
    """An evaluator of the integer expression ``text`` and the names it uses.

    >>> fn, names = compile_expr("2*N - floor(M/2)")
    >>> fn({"N": 5, "M": 7}), sorted(names)
    (7, ['M', 'N'])
    """
    try:
        doc = parse_document(f"{{[{text}]}}")
    except ParseError as err:
        raise ParseError(f"bad expression {text!r}: {err.message}", text=text) from err
    items = doc.pieces[0].in_tuple
    if len(doc.pieces) != 1 or len(items) != 1:
        raise ParseError(f"expected one expression, got {text!r}", text=text)
    names: set[str] = set()
    fn = _build(items[0], doc.text, names)
    return fn, frozenset(names)


def _build(e: ast.Expr, text: str, names: set[str]) -> Evaluator:
    if isinstance(e, ast.Num):
        value = e.value
        return lambda env: value
    if isinstance(e, ast.Name):
        name = e.name
        names.add(name)

        def lookup(env: Mapping[str, int]) -> int:
            try:
                return int(env[name])
            except KeyError:
                raise ArgumentError(f"no value for {name!r}") from None

        return lookup
    if isinstance(e, ast.Neg):
        inner = _build(e.operand, text, names)
        return lambda env: -inner(env)
    if isinstance(e, ast.Floor) and isinstance(e.operand, ast.BinOp) and e.operand.op == "/":
        num = _build(e.operand.left, text, names)
        den = _build(e.operand.right, text, names)
        if e.ceil:
            return lambda env: -((-num(env)) // den(env))
        return lambda env: num(env) // den(env)
    if isinstance(e, ast.BinOp) and e.op in "+-*%":
        left, right = _build(e.left, text, names), _build(e.right, text, names)
        ops: dict[str, Callable[[int, int], int]] = {
            "+": lambda a, b: a + b,
            "-": lambda a, b: a - b,
            "*": lambda a, b: a * b,
            "%": lambda a, b: a % b,
        }
        op = ops[e.op]
        return lambda env: op(left(env), right(env))
    raise ParseError(
        "only integers, names, + - * %, floor(e/c) and ceil(e/c) are allowed here",
        text=text,
        span=e.span,
    )

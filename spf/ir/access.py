"""Access relations: from index expressions of a statement to ``Relation`` objects (the
model and the IR builder, :mod:`spf.ir.build`, both derive a statement's accesses with it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spf.errors import ParseError, VerifyError
from spf.ir.reading import iterator_names as iterator_names
from spf.sets import UF, Relation, Set
from spf.sets import syntax as ast
from spf.sets.parse import parse_document


def access_relation(
    domain: Set, indices: Sequence[str], ufs: Mapping[str, UF], where: str
) -> Relation:
    """``{[iterators] -> [indices]}``; ``min``/``max`` in an index become pieces. An index
    that is a bare symbolic constant (``A(N)``) is written as an equality: in a tuple, a
    name that is not an iterator would be a fresh variable (any index at all)."""
    its = iterator_names(domain)
    if not any(_has_minmax(idx) or _is_constant_name(idx, its) for idx in indices):
        text = f"{{[{', '.join(its)}] -> [{', '.join(indices)}]}}"
        try:
            return Relation(text, ufs=dict(ufs))
        except ParseError as err:
            raise VerifyError(
                f"{where}: bad index expression in {list(indices)}: {err.message}"
            ) from err
    outs = [f"_o{k}" for k in range(len(indices))]
    cases: list[list[str]] = [[]]
    for out, idx in zip(outs, indices, strict=True):
        cases = [[*c, piece] for c in cases for piece in _index_pieces(out, idx, where)]
    head = f"[{', '.join(its)}] -> [{', '.join(outs)}]"
    texts = [f"{{{head} : {' && '.join(c)}}}" if c else f"{{{head}}}" for c in cases]
    try:
        return Relation(" union ".join(texts), ufs=dict(ufs))
    except ParseError as err:
        raise VerifyError(
            f"{where}: bad index expression in {list(indices)}: {err.message}"
        ) from err


def _is_constant_name(idx: str, its: Sequence[str]) -> bool:
    name = idx.strip()
    return name.isidentifier() and name not in its


def _index_pieces(out: str, idx: str, where: str) -> list[str]:
    """Constraints ``out = idx`` as a list of alternative conjunctions (min/max split)."""
    try:
        doc = parse_document(f"{{[{idx}]}}")
    except ParseError as err:
        raise VerifyError(f"{where}: cannot read index expression {idx!r}: {err.message}") from err
    (expr,) = doc.pieces[0].in_tuple
    return [" && ".join([f"{out} = {value}", *conds]) for value, conds in _cases(expr, doc.text)]


def _cases(e: ast.Expr, text: str) -> list[tuple[str, list[str]]]:
    """(value text, conditions) alternatives of an expression with min/max calls."""
    if isinstance(e, ast.Call) and e.name in ("min", "max") and len(e.args) == 2:
        out = []
        for a, ca in _cases(e.args[0], text):
            for b, cb in _cases(e.args[1], text):
                op_a, op_b = ("<=", "<") if e.name == "min" else (">=", ">")
                out.append((a, [*ca, *cb, f"({a}) {op_a} ({b})"]))
                out.append((b, [*ca, *cb, f"({b}) {op_b} ({a})"]))
        return out
    if isinstance(e, ast.BinOp):
        return [
            (f"({a}) {e.op} ({b})", [*ca, *cb])
            for a, ca in _cases(e.left, text)
            for b, cb in _cases(e.right, text)
        ]
    if isinstance(e, ast.Neg):
        return [(f"-({a})", c) for a, c in _cases(e.operand, text)]
    return [(text[e.span[0] : e.span[1]], [])]


def _has_minmax(idx: str) -> bool:
    doc = parse_document(f"{{[{idx}]}}")
    return any(
        isinstance(node, ast.Call) and node.name in ("min", "max")
        for node in _walk(doc.pieces[0].in_tuple[0])
    )


def _walk(e: ast.Expr) -> list[ast.Expr]:
    out: list[ast.Expr] = [e]
    if isinstance(e, ast.Call):
        for a in e.args:
            out += _walk(a)
    elif isinstance(e, ast.BinOp):
        out += _walk(e.left) + _walk(e.right)
    elif isinstance(e, (ast.Neg, ast.Floor)):
        out += _walk(e.operand)
    return out

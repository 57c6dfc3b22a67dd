"""``switch`` on an integer with constant ``case`` labels becomes an ``if``/``else if`` chain
before the function is read (docs/import_c.md).

Each label runs its statements and those of the labels after it up to the first ``break``
(fallthrough repeats the statements it falls into); labels that run the same statements share
one condition (``k == 2 || k == 3``); ``default`` and the labels that fall into its statements
are the final ``else``. What has no ``if`` form is refused with its position: a ``break`` that
depends on a condition, a label inside a nested block, statements before the first label,
labels that are not integer constants, and a value used twice."""

from __future__ import annotations

from typing import Any

from spf.frontend.c_ints import c_div
from spf.frontend.cparse import INT_LITERALS, Source, c_ast, c_integer
from spf.frontend.rewrite import clone, located, map_statements

_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)
_INT_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}


def lower_switches(src: Source, body: Any) -> None:
    """Replace, in place, every ``switch`` under ``body`` by its ``if`` chain."""

    def one(node: Any) -> list[Any] | None:
        return [_Lowering(src, node).chain()] if isinstance(node, c_ast.Switch) else None

    map_statements(body, one)


class _Lowering:
    def __init__(self, src: Source, node: Any) -> None:
        self.src = src
        self.node = node
        body = node.stmt
        items = list(body.block_items or []) if isinstance(body, c_ast.Compound) else [body]
        for item in items:
            if not isinstance(item, c_ast.Case | c_ast.Default):
                raise src.error(
                    item,
                    "a statement before the first case label of a switch (it never runs)",
                    "start the switch body with a case or default label",
                )
        self.labels = items
        self.values = [self._value(label) for label in items]

    def _value(self, label: Any) -> int | None:
        for sub in label.stmts or []:
            self._no_nested_label(sub)
        if isinstance(label, c_ast.Default):
            return None
        value = _constant(label.expr)
        if value is None:
            raise self.src.error(
                label.expr,
                "a case label that is not an integer constant",
                "case labels must be integer constants (literals or #defined numbers)",
            )
        return value

    def _no_nested_label(self, node: Any) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, c_ast.Switch):
                continue  # its labels are its own (already lowered when nested)
            if isinstance(n, c_ast.Case | c_ast.Default):
                raise self.src.error(
                    n,
                    "a case label inside a block nested in the switch body",
                    "put every case label at the top level of the switch body",
                )
            stack.extend(child for _, child in n.children())

    def chain(self) -> Any:
        seen: dict[int, Any] = {}
        for label, value in zip(self.labels, self.values, strict=True):
            if value is not None and value in seen:
                raise self.src.error(label, f"case {value} appears twice in the switch")
            if value is not None:
                seen[value] = label
        groups: dict[int | None, list[int | None]] = {}  # first label with statements -> values
        for k, value in enumerate(self.values):
            groups.setdefault(self._run_start(k), []).append(value)
        default = next((self._run_start(k) for k, v in enumerate(self.values) if v is None), -1)
        out: Any = None
        arms = [
            (start, vals)
            for start, vals in groups.items()
            if start != default and (start is not None or default not in (-1, None))
        ]  # labels that run nothing need an arm only to keep them from the default
        if default != -1 and default is not None:
            out = self._block(default)
        for start, vals in reversed(arms):
            cond = self._condition([v for v in vals if v is not None])
            out = located(c_ast.If(cond, self._block(start), out), self.labels[0])
        return out if out is not None else located(c_ast.EmptyStatement(), self.node)

    def _run_start(self, k: int) -> int | None:
        """The first label from ``k`` on with statements (None: ``k`` runs none)."""
        for j in range(k, len(self.labels)):
            if self.labels[j].stmts:
                return j
        return None

    def _block(self, start: int | None) -> Any:
        """The statements that label ``start`` runs, up to the first ``break``."""
        out: list[Any] = []
        for label in self.labels[start or 0 :] if start is not None else []:
            for item in label.stmts or []:
                ended, kept = self._until_break(item)
                out.extend(kept)
                if ended:
                    return located(c_ast.Compound(out), label)
        return located(c_ast.Compound(out), self.node)

    def _until_break(self, item: Any) -> tuple[bool, list[Any]]:
        """``(ends with break, the statements before it)`` of one item of a case."""
        if isinstance(item, c_ast.Break):
            return True, []
        if isinstance(item, c_ast.Compound):
            kept: list[Any] = []
            for sub in item.block_items or []:
                ended, more = self._until_break(sub)
                kept.extend(more)
                if ended:
                    return True, [located(c_ast.Compound(kept), item)]
            return False, [clone(item)]
        self._no_conditional_break(item)
        return False, [clone(item)]

    def _no_conditional_break(self, node: Any) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, _LOOPS):
                continue  # a break there leaves the loop (refused where loops are read)
            if isinstance(n, c_ast.Break):
                raise self.src.error(
                    n,
                    "a break under a condition inside a switch case",
                    "end each case with an unconditional break, or move the condition into "
                    "the case's statements",
                )
            stack.extend(child for _, child in n.children())

    def _condition(self, values: list[int]) -> Any:
        cond: Any = None
        for v in values:
            lit = (
                c_ast.Constant("int", str(v))
                if v >= 0
                else c_ast.UnaryOp("-", c_ast.Constant("int", str(-v)))
            )
            test = c_ast.BinaryOp("==", clone(self.node.cond), lit)
            cond = test if cond is None else c_ast.BinaryOp("||", cond, test)
        return located(cond, self.node.cond)


def _constant(node: Any) -> int | None:
    """The value of an integer constant expression, or None."""
    if isinstance(node, c_ast.Constant):
        text = node.value.rstrip("uUlL")
        if node.type == "char" and len(text) == 3 and text[0] == text[-1] == "'":
            return ord(text[1])
        if node.type not in INT_LITERALS:
            return None
        return c_integer(text)
    if isinstance(node, c_ast.Cast):
        return _constant(node.expr)
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+", "~"):
        v = _constant(node.expr)
        if v is None:
            return None
        return -v if node.op == "-" else ~v if node.op == "~" else v
    if isinstance(node, c_ast.BinaryOp):
        a, b = _constant(node.left), _constant(node.right)
        if a is None or b is None:
            return None
        if node.op in _INT_OPS:
            return int(_INT_OPS[node.op](a, b))
        if node.op in ("/", "%") and b != 0:
            q, r = c_div(a, b)
            return q if node.op == "/" else r
    return None

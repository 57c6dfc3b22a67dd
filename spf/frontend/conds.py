"""Affine conditions as small boolean trees: comparisons joined by ``&&``/``||``, negated by De
Morgan's laws (an ``else`` branch is the complement), printed in spf's set syntax."""

from __future__ import annotations

from dataclasses import dataclass

_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "!=", "!=": "="}


@dataclass(frozen=True)
class Cmp:
    """``lhs op rhs`` over affine texts (``op`` in ``< <= > >= = !=``)."""

    lhs: str
    op: str
    rhs: str

    def text(self) -> str:
        return f"{self.lhs} {self.op} {self.rhs}"


@dataclass(frozen=True)
class Junction:
    """A conjunction (``all_of``) or disjunction of conditions."""

    all_of: bool
    parts: tuple[Cond, ...]

    def text(self) -> str:
        sep = " && " if self.all_of else " || "
        inner = [
            p.text() if isinstance(p, Cmp) or p.all_of == self.all_of else f"({p.text()})"
            for p in self.parts
        ]
        return sep.join(inner) if inner else ("0 = 0" if self.all_of else "0 = 1")


Cond = Cmp | Junction


def conj(parts: list[Cond]) -> Cond:
    flat: list[Cond] = []
    for p in parts:
        flat.extend(p.parts if isinstance(p, Junction) and p.all_of else (p,))
    return flat[0] if len(flat) == 1 else Junction(True, tuple(flat))


def disj(parts: list[Cond]) -> Cond:
    flat: list[Cond] = []
    for p in parts:
        flat.extend(p.parts if isinstance(p, Junction) and not p.all_of else (p,))
    return flat[0] if len(flat) == 1 else Junction(False, tuple(flat))


def negate(c: Cond) -> Cond:
    """The complement of ``c``."""
    if isinstance(c, Cmp):
        return Cmp(c.lhs, _NEGATE[c.op], c.rhs)
    parts = [negate(p) for p in c.parts]
    return disj(parts) if c.all_of else conj(parts)


def domain_text(conds: list[Cond]) -> str:
    """The constraint text of a conjunction (wrapped in parentheses where it is a
    disjunction, so that ``&&`` binds as meant)."""
    out = []
    for c in conds:
        t = c.text()
        out.append(f"({t})" if isinstance(c, Junction) and not c.all_of else t)
    return " && ".join(out)

"""A sparse operand's format, renamed for one use in a formula.

``A(i,k)`` with ``A`` in CSR reads the format's relation
``{[i, j] -> [k]: rowptr(i) <= k < rowptr(i+1) && j = col(k)}`` with its coordinates
renamed to the formula's indices (``i``, ``k``), its storage and hidden variables to loop
names of their own (``A_k``), its index arrays and sizes prefixed with the operand's name
(``A_rowptr``, ``A_col``, ``A_NNZ``), its extents renamed to the indices' extents (``N``
to ``I``, ``M`` to ``K``) and its value array to the operand's name (``A``).

>>> from spf.formats import CSR
>>> use = SparseUse.of("A", CSR, ("i", "k"), {"i": "I", "k": "K"}, "A")
>>> use.body
'A_rowptr(i) <= A_k < A_rowptr(i+1) && k = A_col(A_k)'
>>> use.iterates("k"), use.iterates("i")
(True, False)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.errors import ArgumentError

if TYPE_CHECKING:
    from spf.formats.format import Format

__all__ = ["SparseUse", "rename"]

_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def rename(text: str, mapping: Mapping[str, str]) -> str:
    """``text`` with every identifier in ``mapping`` replaced (all at once)."""
    return _IDENT.sub(lambda m: mapping.get(m.group(), m.group()), text)


def _body(fmt: Format) -> str:
    """The conjunction of ``fmt``'s storage relation (after ``exists ...:``)."""
    text = fmt.storage
    if ":" not in text:
        return ""
    body = text[text.index(":") + 1 : text.rindex("}")]
    if fmt.exists:
        body = body.split(":", 1)[1]
    return body.strip()


def size_names(
    operand: str, fmt: Format, indices: tuple[str, ...], extents: Mapping[str, str]
) -> dict[str, str]:
    """``fmt``'s size names renamed for ``operand``: a plain extent of a coordinate becomes
    its index's extent (``N`` -> ``I``), every other size gets the operand's prefix
    (``NNZ`` -> ``A_NNZ``)."""
    out: dict[str, str] = {}
    for extent, index in zip(fmt.shape, indices, strict=True):
        if not extent.isidentifier():
            continue
        new = extents[index]
        if out.get(extent, new) != new:
            raise ArgumentError(
                f"einsum: {operand}'s format {fmt.name} uses the extent {extent} for two "
                f"dimensions, but {operand}'s indices have the extents {out[extent]} and {new}; "
                "give them the same extent (sizes=) or use another format"
            )
        out[extent] = new
    for s in fmt.sizes:
        out.setdefault(s, f"{operand}_{s}")
    for e in (*fmt.shape, *fmt.value_shape):
        for name in _IDENT.findall(e):
            if name not in fmt.ufs and not name.isdigit():
                out.setdefault(name, f"{operand}_{name}")
    return out


@dataclass(frozen=True)
class SparseUse:
    """One use of a sparse operand (see the module docstring).

    ``body``: the renamed storage conjunction; ``loops``: its variables in the format's scan
    order (renamed); ``defined``: variable -> the expression fixing it; ``deps``: variable ->
    the variables its bounds or definition read; ``value``: the value access
    (``A(A_k)``); ``coords``: index of each coordinate; ``open_bounds``: bounds the
    formula must add for coordinates whose extent is not a plain size (BCSR's ``2*NB``)."""

    operand: str
    fmt: Format
    indices: tuple[str, ...]
    body: str
    loops: tuple[str, ...]
    defined: Mapping[str, str]
    deps: Mapping[str, frozenset[str]]
    value: str
    open_bounds: tuple[str, ...]
    names: Mapping[str, str]

    @classmethod
    def of(
        cls,
        operand: str,
        fmt: Format,
        indices: tuple[str, ...],
        extents: Mapping[str, str],
        prefix: str,
    ) -> SparseUse:
        """The use ``operand(indices)`` of format ``fmt``; ``prefix`` names its loops."""
        names: dict[str, str] = dict(size_names(operand, fmt, indices, extents))
        names.update({uf: f"{operand}_{uf}" for uf in fmt.ufs})
        names.update(zip(fmt.coords, indices, strict=True))
        for v in (*fmt.positions, *fmt.exists):
            names[v] = f"{prefix}_{v}"
        deps = {names[v]: frozenset(names[u] for u in used) for v, used in fmt._deps.items()}
        defined = {names[v]: rename(e, names) for v, e in fmt._defined.items()}
        opened = tuple(
            f"0 <= {index} < {extents[index]}"
            for extent, index in zip(fmt.shape, indices, strict=True)
            if not extent.isidentifier()
        )
        value = f"${operand}$({', '.join(names[p] for p in fmt.positions)})"
        return cls(
            operand=operand,
            fmt=fmt,
            indices=indices,
            body=rename(_body(fmt), names),
            loops=tuple(names[v] for v in fmt.loops),
            defined=defined,
            deps=deps,
            value=value,
            open_bounds=opened,
            names=names,
        )

    def iterates(self, index: str) -> bool:
        """Whether this use produces ``index`` from its storage (``k = A_col(A_k)``) rather
        than locating it (a CSR row, read by ``A_rowptr(i)``)."""
        return index in self.defined

    def closure(self, var: str) -> list[str]:
        """The variables ``var`` needs (its dependences, transitively), in scan order."""
        need: set[str] = set()
        todo = [var]
        while todo:
            v = todo.pop()
            for u in self.deps.get(v, ()):
                if u not in need:
                    need.add(u)
                    todo.append(u)
        return [v for v in self.loops if v in need]

    def located_before(self, index: str) -> set[str]:
        """The indices this use must know before it can iterate ``index`` (CSR: the row
        before the column)."""
        return {v for v in self.closure(index) if v in self.indices and not self.iterates(v)}

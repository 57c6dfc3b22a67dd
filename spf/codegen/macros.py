"""Function-like macros of generated code as records, printed once.

The stages that route a UF argument's reads (the checked reads of
:mod:`spf.codegen.arg_checks`, the plain reads after the range pass of
:mod:`spf.codegen.range_pass`, the each-call block of :mod:`spf.codegen.each_call`) return
:class:`Define` records rather than lines, so that a printer can pick the macros of one UF
by name (:func:`of_ufs`) and print them with :func:`define_lines`. A macro's body is a C
tree (:mod:`spf.cexpr`) printed by the one precedence printer; a use of the macro prints as
a call, so its body is printed as an operand that binds like one (``((int64_t) g[t0])``).

>>> from spf import cexpr as cx
>>> d = Define("col", uf_params(1), cx.Index(cx.Name("col"), uf_index(1, ())), undef=True)
>>> define_lines([d])
['#undef col', '#define col(t0) col[t0]']
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.clang import C_ATOM
from spf.codegen.unit import Chunk

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable


@dataclass(frozen=True, slots=True)
class Define:
    """``#define name(params) body``, after ``#undef name`` when ``undef`` (the macro
    replaces one defined earlier in the translation unit)."""

    name: str
    params: tuple[str, ...]
    body: cx.Expr
    undef: bool = False

    def lines(self) -> list[str]:
        head = f"#define {self.name}({', '.join(self.params)})"
        text = f"{head} {cx.to_c_at(self.body, C_ATOM)}"
        return [f"#undef {self.name}", text] if self.undef else [text]


def define_lines(defines: Iterable[Define]) -> list[str]:
    """The lines of ``defines``, in order."""
    return [line for d in defines for line in d.lines()]


def define_chunk(defines: Iterable[Define]) -> Chunk:
    """The lines of ``defines`` at file scope, noting the macros they leave defined."""
    defines = list(defines)
    return Chunk(tuple(define_lines(defines)), macros=tuple(d.name for d in defines))


def of_ufs(defines: Iterable[Define], names: Collection[str]) -> list[Define]:
    """The macros among ``defines`` that are named like one of the UFs ``names`` (the
    macros reading those index arrays)."""
    return [d for d in defines if d.name in names]


def uf_params(arity: int) -> tuple[str, ...]:
    """The parameters ``t0, t1, ...`` of a UF's read macro."""
    return tuple(f"t{k}" for k in range(arity))


@functools.cache
def uf_index(arity: int, inner: tuple[str, ...]) -> cx.Expr:
    """The row-major offset of a UF read ``g(t0, t1, ...)`` in its array: ``t0`` for one
    argument, ``t0 * W + t1`` for a 2-argument UF whose second axis has extent ``W``
    (``inner``: :attr:`spf.codegen.signature.Arg.inner`). Remembered: every printer of a
    kernel asks for the same few."""
    from spf.codegen.program import linear_index

    return linear_index(tuple(cx.Param(t) for t in uf_params(arity)), ("", *inner))


def uf_element(array: str, arity: int, inner: tuple[str, ...]) -> cx.Expr:
    """The entry ``array[offset]`` a UF read ``g(t0, ...)`` loads (:func:`uf_index`)."""
    return cx.Index(cx.Name(array), uf_index(arity, inner))


def as_int64(e: cx.Expr) -> cx.Expr:
    """``(int64_t) e``: an index array's entry in the type of the loop arithmetic."""
    return cx.Cast("int64_t", e)

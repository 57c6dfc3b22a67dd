"""The generated function's signature (API.md section 7), shared by printers and runtimes.

Order: symbolic constants (``int64_t``, sorted), then UF arrays (``const int32_t*`` or
``const int64_t*``, sorted), then data spaces in declaration order (``const`` when only
read). Data-space extents are parameter expressions; the runtime checks arrays against them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from spf.clang import NUMPY_OF_C
from spf.errors import CodegenError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from spf.sets import UF

ArgKind = Literal["param", "uf", "data"]


@dataclass(frozen=True, kw_only=True)
class Arg:
    """One argument of the generated function."""

    name: str
    kind: ArgKind
    ctype: str
    """Element C type (``double``; ``int32_t`` for a UF; ``int64_t`` for a parameter)."""
    const: bool = False
    """Only read by the function (``const`` pointer)."""
    shape: tuple[int | str, ...] | None = None
    """Extents of a data space as ints or parameter expressions (None: unknown)."""
    rank: int | None = None
    uf: UF | None = None
    """The declaration of a UF argument (its facts are checked with ``check=True``)."""

    @property
    def dtype(self) -> str:
        """numpy dtype name of the elements (or of the parameter)."""
        return NUMPY_OF_C[self.ctype]

    def c_decl(self) -> str:
        """The C parameter declaration (``const double *restrict x``)."""
        if self.kind == "param":
            return f"{self.ctype} {self.name}"
        const = "const " if self.const else ""
        return f"{const}{self.ctype} *restrict {self.name}"


@dataclass(frozen=True, kw_only=True)
class Signature:
    """Name and arguments of the generated function."""

    function: str
    args: tuple[Arg, ...]

    def c_prototype(self) -> str:
        """``void spmv(int64_t N, ..., double *restrict y)``."""
        params = ", ".join(a.c_decl() for a in self.args) or "void"
        return f"void {self.function}({params})"

    def arg(self, name: str) -> Arg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)


def check_statement_names(stmts: Iterable[str], others: Mapping[str, Iterable[str]]) -> None:
    """Refuse a statement whose name is also a data space, UF, buffer or symbolic constant:
    the generated code defines a macro for the statement and one (or a C parameter) for the
    other. ``others`` maps a kind (``"data space"``) to its names."""
    for stmt in stmts:
        for kind, names in others.items():
            if stmt in names:
                raise CodegenError(
                    f"statement {stmt} has the name of a {kind}; the generated code would "
                    f"define {stmt} twice: name the statement otherwise "
                    f"(Stmt(..., name=...))"
                )

"""Declarations of the imported C function: element types (typedefs resolved), array extents,
and what each name is (symbolic constant, by-value float scalar, array, local scalar)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spf.frontend.cparse import Source, c_ast

_INTEGER = {
    ("int",): "int32_t",
    ("signed",): "int32_t",
    ("signed", "int"): "int32_t",
    ("unsigned",): "uint32_t",
    ("unsigned", "int"): "uint32_t",
    ("short",): "int16_t",
    ("short", "int"): "int16_t",
    ("signed", "short"): "int16_t",
    ("signed", "short", "int"): "int16_t",
    ("short", "signed"): "int16_t",
    ("unsigned", "short"): "uint16_t",
    ("unsigned", "short", "int"): "uint16_t",
    ("short", "unsigned"): "uint16_t",
    ("long",): "int64_t",
    ("long", "int"): "int64_t",
    ("long", "long"): "int64_t",
    ("long", "long", "int"): "int64_t",
    ("unsigned", "long"): "uint64_t",
    ("unsigned", "long", "long"): "uint64_t",
    ("char",): "int8_t",
    ("signed", "char"): "int8_t",
    ("unsigned", "char"): "uint8_t",
}
_NAMED = {
    "double": "double",
    "float": "float",
    "int8_t": "int8_t",
    "int16_t": "int16_t",
    "int32_t": "int32_t",
    "int64_t": "int64_t",
    "uint8_t": "uint8_t",
    "uint16_t": "uint16_t",
    "uint32_t": "uint32_t",
    "uint64_t": "uint64_t",
    "size_t": "uint64_t",
    "ptrdiff_t": "int64_t",
}
FLOATING = frozenset({"double", "float"})


def is_integer(ctype: str) -> bool:
    return ctype not in FLOATING


@dataclass(frozen=True)
class Var:
    """One declared variable: ``base`` is its element C type, ``dims`` its extents (a C
    expression node, or None where unknown: ``A[]`` and pointers), ``role`` one of ``param``
    (function parameter), ``local`` (declared in the body) or ``global`` (file scope)."""

    name: str
    base: str
    dims: tuple[Any, ...]
    role: str
    node: Any

    @property
    def rank(self) -> int:
        return len(self.dims)


class Types:
    """Typedef resolution over the file's ``typedef`` declarations."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.typedefs: dict[str, Any] = {}
        for ext in src.ast.ext:
            if isinstance(ext, c_ast.Typedef) and ext.name not in _NAMED and ext.name != "bool":
                self.typedefs[ext.name] = ext.type

    def var(self, decl: Any, role: str) -> Var:
        """The :class:`Var` of a ``c_ast.Decl``."""
        dims: list[Any] = []
        base = self._walk(decl.type, dims, decl, 0)
        return Var(decl.name, base, tuple(dims), role, decl)

    def _walk(self, t: Any, dims: list[Any], decl: Any, depth: int) -> str:
        if depth > 32:
            raise self.src.error(decl, f"type of {decl.name!r} is too deeply nested")
        if isinstance(t, c_ast.ArrayDecl):
            dims.append(t.dim)
            return self._walk(t.type, dims, decl, depth + 1)
        if isinstance(t, c_ast.PtrDecl):
            dims.append(None)
            return self._walk(t.type, dims, decl, depth + 1)
        if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
            return self.base(t.type.names, decl, dims, depth)
        if isinstance(t, c_ast.Typename | c_ast.TypeDecl) and t.type is not None:
            return self._walk(t.type, dims, decl, depth + 1)
        if isinstance(t, c_ast.IdentifierType):
            return self.base(t.names, decl, dims, depth)
        what = type(t).__name__.replace("Decl", "").lower() or "this"
        raise self.src.error(
            decl,
            f"{decl.name or 'this declaration'!s}: {what} types are not supported",
            "spf imports arrays and scalars of arithmetic types",
        )

    def base(self, names: list[str], decl: Any, dims: list[Any], depth: int) -> str:
        words = tuple(n for n in names if n not in ("const", "volatile", "restrict", "register"))
        if len(words) == 1 and words[0] in _NAMED:
            return _NAMED[words[0]]
        if len(words) == 1 and words[0] in self.typedefs:
            return self._walk(self.typedefs[words[0]], dims, decl, depth + 1)
        if words in _INTEGER:
            return _INTEGER[words]
        if words == ("long", "double"):
            raise self.src.error(decl, "long double is not supported", "use double")
        raise self.src.error(
            decl,
            f"{getattr(decl, 'name', None) or 'declaration'}: unsupported type "
            f"{' '.join(names) or '?'}",
            "use double, float or an integer type",
        )

    def cast_type(self, typename: Any) -> str:
        """The C type text of a cast ``(double)e``, typedefs resolved (scalars only)."""
        dims: list[Any] = []
        base = self._walk(typename.type, dims, typename, 0)
        if dims:
            raise self.src.error(
                typename, "pointer casts are not supported", "cast to a scalar type"
            )
        return base


def integer_scalars(body: Any, types: Types) -> set[str]:
    """The integer scalars declared under ``body`` (locals, loop variables)."""
    from spf.frontend.cparse import nodes

    out: set[str] = set()
    for n in nodes(body):
        if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl):
            var = types.var(n, "local")
            if not var.rank and is_integer(var.base):
                out.add(n.name)
    return out

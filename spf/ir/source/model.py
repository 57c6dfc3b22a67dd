"""The public result types of statement-source parsing: :class:`Access` (one data-space access
with its index texts and source span) and :class:`ParsedSource` (a parsed block's accesses,
reductions, UF calls, names and locals, with the typed tree it renders to C through
:mod:`.render_c` and to Python through :mod:`.to_python` and :mod:`.runtime`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from spf import cexpr as cx
from spf.ir.source.render_c import Build, CTreeBuilder
from spf.ir.source.runtime import _compile_python
from spf.ir.source.to_python import _PyWriter

if TYPE_CHECKING:
    from spf.ir.source.tree import _Assign, _Expr, _Ref, _Stmt


@dataclass(frozen=True)
class Access:
    """One data-space access of a statement."""

    data_space: str
    indices: tuple[str, ...]
    """Index expressions in spf's set syntax (``"i + 1"``, ``"col(k)"``, ``"floor(i/2)"``)."""
    span: tuple[int, int]
    """``(start, end)`` offsets of the (first) occurrence in the source."""


@dataclass(frozen=True)
class ParsedSource:
    """A parsed statement source; build it with :func:`parse_source`."""

    text: str
    reads: tuple[Access, ...]
    writes: tuple[Access, ...]
    reductions: tuple[Access, ...]
    """Writes done by ``+=``/``-=``/``++``/``--``, ``*=``/``/=``, ``m = max(m, e)``/``min``
    (or the spelled-out ``x = x + e``), where that element (same data space and indices) is
    used nowhere else in the block and always with the same kind of operator; other elements
    of the data space may be read (``u(i) -= L(k) * u(col(k))`` reduces ``u(i)``)."""
    uf_calls: tuple[tuple[str, tuple[str, ...]], ...]
    names: frozenset[str]
    """Iterator and parameter names used (not data spaces, UFs, locals or functions)."""
    locals: tuple[tuple[str, str], ...]
    """``(name, C type)`` of the local temporaries, in declaration order."""
    stmt: str = field(default="", compare=False)
    body: tuple[_Stmt, ...] = field(default=(), repr=False, compare=False)

    def render_c(
        self,
        access: Build,
        uf: Build,
        rename: Mapping[str, str] | None = None,
        *,
        calls: Mapping[str, str] | None = None,
    ) -> str:
        """C text of the block, one statement per line (:func:`spf.cexpr.stmt_lines`).

        Each data-space access becomes the C tree ``access(name, index trees)``, each UF call
        ``uf(name, argument trees)`` (:mod:`spf.cexpr`; ``source_access`` of
        :mod:`.render_c` writes ``$A$(i)``); ``rename`` renames iterators, parameters and
        locals, ``calls`` the functions called (code generation calls ``min``/``max`` by the
        names of its own macros, ``spf_min``/``spf_max``, so that users may name data spaces
        ``min``); an index ``floor(e/c)`` becomes an integer floor division expression.
        """
        builder = CTreeBuilder(rename=rename, calls=calls, access=access, uf=uf)
        return "\n".join(cx.stmt_lines(builder.stmts(self.body)))

    def assignment_value(
        self, access: Build, uf: Build, params: Collection[str] = ()
    ) -> tuple[Access, cx.Expr] | None:
        """For a block that is one plain assignment ``$t$(...) = e;``: the written access
        and the C tree of ``e`` (built like :meth:`render_c`; the names ``params`` as
        :class:`~spf.cexpr.Param`, which :func:`spf.cexpr.substitute` replaces); else None."""
        from spf.ir.source.tree import _Assign, _Ref

        if len(self.body) != 1 or len(self.writes) != 1:
            return None
        (stmt,) = self.body
        if not isinstance(stmt, _Assign) or stmt.op != "=" or not isinstance(stmt.target, _Ref):
            return None
        builder = CTreeBuilder(params=params, access=access, uf=uf)
        return self.writes[0], builder.expr(stmt.value)

    def reduction_tree(self, *, spelled: bool = False) -> tuple[Access, _Ref, str, _Expr] | None:
        """For a block that is one accumulation ``$y$(...) op= e;`` (op ``+= -= *=``) whose
        ``e`` does not read ``y``: the written access, its node, ``op`` and the node of ``e``;
        else None. Code generation keeps such a target in a register across a loop.
        ``spelled``: also ``/=`` and ``y = y + e`` / ``e + y`` / ``y - e`` / ``y * e`` /
        ``e * y`` / ``y / e`` (as ``y op= e``; atomic updates need that form)."""
        from dataclasses import fields, is_dataclass

        from spf.ir.source.tree import _Assign, _Ref

        if len(self.body) != 1 or len(self.writes) != 1:
            return None
        (stmt,) = self.body
        if not isinstance(stmt, _Assign) or not isinstance(stmt.target, _Ref):
            return None
        op, value = _spelled_update(stmt) if spelled else (stmt.op, stmt.value)
        if op not in (("+=", "-=", "*=", "/=") if spelled else ("+=", "-=", "*=")):
            return None
        target = stmt.target.ds

        def reads_target(node: object) -> bool:
            if isinstance(node, _Ref) and node.ds == target:
                return True
            if isinstance(node, tuple):
                return any(reads_target(x) for x in node)
            if is_dataclass(node) and not isinstance(node, type):
                return any(reads_target(getattr(node, f.name)) for f in fields(node))
            return False

        if reads_target(value):
            return None
        return self.writes[0], stmt.target, op, value

    def functions(self) -> frozenset[str]:
        """The C functions the block calls by their source names (math functions such as
        ``sqrt``, ``min``/``max``): neither data spaces nor UFs, nor named constants."""
        from dataclasses import fields, is_dataclass

        from spf.ir.source.tree import _Call

        found: set[str] = set()

        def visit(node: object) -> None:
            if isinstance(node, _Call) and node.args:
                found.add(node.func)
            if isinstance(node, tuple):
                for x in node:
                    visit(x)
            elif is_dataclass(node) and not isinstance(node, type):
                for f in fields(node):
                    visit(getattr(node, f.name))

        visit(self.body)
        return frozenset(found)

    def to_python(self) -> Callable[[dict[str, int], dict[str, Any], dict[str, Any]], None]:
        """``fn(env, arrays, ufs)`` that runs one statement instance (C semantics).

        ``env`` maps iterators and parameters to ints, ``arrays`` data spaces to numpy arrays
        (0-d for scalars), ``ufs`` UF names to integer arrays. Integer ``/`` and ``%``
        truncate, an index ``floor(e/c)`` floors, stores convert to the array's dtype, and
        every index is bounds-checked (``SpfError`` naming the data space or UF and the
        index). Single-precision (``float``) arithmetic runs in double and is rounded where
        C converts (casts, ``float`` locals, stores), so it may differ from C in the last bit.
        """
        return _compile_python(_PyWriter(self).source(), self.stmt)


def _spelled_update(stmt: _Assign) -> tuple[str, _Expr]:
    """``("+=", e)`` for ``y = y + e`` / ``e + y`` (also ``-``, ``*``, ``/``: ``y`` on the
    left for ``-`` and ``/``); ``stmt``'s own operator and value otherwise."""
    from spf.ir.source.tree import _Binary

    value = stmt.value
    if stmt.op == "=" and isinstance(value, _Binary):
        if value.op in ("+", "-", "*", "/") and value.left == stmt.target:
            return f"{value.op}=", value.right
        if value.op in ("+", "*") and value.right == stmt.target:
            return f"{value.op}=", value.left
    return stmt.op, value

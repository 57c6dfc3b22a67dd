"""A first pass over the function: every declaration (file scope, parameters, body), the
loop variables, how often each name is assigned, and which integer arrays serve as indices
(in subscripts, loop headers, conditions, ``int j = col[k];``) and so become UFs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spf.frontend.cparse import Source, c_ast, error_at, nodes
from spf.frontend.decls import Types, Var, is_integer
from spf.frontend.exprs import Scope
from spf.frontend.pointers import root, roots
from spf.frontend.rewrite import c_name, identifiers

_INCREMENTS = ("p++", "p--", "++", "--")


@dataclass
class _Found:
    variables: dict[str, Var] = field(default_factory=dict)
    iterators: set[str] = field(default_factory=set)
    written: dict[str, int] = field(default_factory=dict)
    index_use: set[str] = field(default_factory=set)
    strict_index: set[str] = field(default_factory=set)  # subscripts and loop headers
    scalar_sources: dict[str, set[str]] = field(default_factory=dict)  # x = a[..] -> {a}
    pointer_of: dict[str, str] = field(default_factory=dict)  # p = &a[k] -> a
    through: dict[str, int] = field(default_factory=dict)  # element writes p[i] = ...


def survey(
    src: Source, fn: Any, types: Types, keep: frozenset[str], forced_ufs: set[str]
) -> tuple[Scope, dict[str, int]]:
    """Every name of the function classified (see :class:`Scope`), plus how many times each
    name is assigned outside its declaration."""
    found = _Found()
    _declarations(src, fn, types, found)
    for node in nodes(fn.body):
        _visit(src, types, node, found)
    found.strict_index.update(subscripted_arrays(fn.body))
    found.index_use.update(found.strict_index)
    _check_iterators(src, found)
    _follow_pointers(found)
    variables, written = found.variables, found.written
    for name, arrays in found.scalar_sources.items():
        var = variables.get(name)
        if var is not None and var.rank == 0 and is_integer(var.base) and written[name] == 1:
            found.index_use.update(arrays)
    consts: set[str] = set(keep)
    fconsts: set[str] = set()
    for name, var in variables.items():
        if var.rank == 0 and var.role != "local" and not written.get(name):
            (consts if is_integer(var.base) else fconsts).add(name)
    ufs = {
        n
        for n in found.index_use | forced_ufs
        if n in variables and variables[n].rank and is_integer(variables[n].base)
    }
    for n in list(ufs):
        if written.get(n) and n not in forced_ufs and n not in found.strict_index:
            ufs.discard(n)  # used only in data-dependent if conditions: a data array
    for n in forced_ufs:
        if n in variables and not is_integer(variables[n].base):
            raise src.error(variables[n].node, f"ufs= names {n!r}, which is not an integer array")
    scope = Scope(src, types, variables, consts, fconsts, ufs, found.iterators)
    scope.pointer_roots = roots(found.pointer_of)
    return scope, written


def _add(src: Source, found: _Found, var: Var) -> None:
    old = found.variables.get(var.name)
    if old is None:
        found.variables[var.name] = var
    elif old.base != var.base or old.rank != var.rank or old.role != var.role:
        raise src.error(
            var.node,
            f"{var.name!r} is declared twice with different types",
            "give each variable one name",
        )


def _declarations(src: Source, fn: Any, types: Types, found: _Found) -> None:
    """File-scope variables the function reads or writes (one it does not use, such as
    ``extern int verbose;``, is no kernel argument), then the parameters (which hide
    file-scope names)."""
    used = identifiers(fn)
    for ext in src.ast.ext:
        if (
            isinstance(ext, c_ast.Decl)
            and not isinstance(ext.type, c_ast.FuncDecl)
            and ext.name in used
        ):
            _add(src, found, types.var(ext, "global"))
    params = fn.decl.type.args.params if fn.decl.type.args is not None else []
    for p in params:
        if isinstance(p, c_ast.Typename):
            continue  # (void)
        if isinstance(p, c_ast.EllipsisParam) or not getattr(p, "name", None):
            raise src.error(p, "unnamed or variadic parameters are not supported")
        var = types.var(p, "param")
        found.variables.pop(var.name, None)
        _add(src, found, var)


def _visit(src: Source, types: Types, node: Any, found: _Found) -> None:
    if isinstance(node, c_ast.Decl) and node.name:
        _declaration(src, types, node, found)
    elif isinstance(node, c_ast.For):
        _loop_header(node, found)
    elif isinstance(node, c_ast.If):
        found.index_use.update(array_names(node.cond))
    elif isinstance(node, c_ast.Assignment):
        _count(found, node.lvalue)
        target = found.variables.get(getattr(node.lvalue, "name", None) or "")
        if isinstance(node.lvalue, c_ast.ID) and target is not None and target.rank:
            _points(found, target.name, node.rvalue)  # p = &a[k];
        elif isinstance(node.lvalue, c_ast.ID):  # j = col[k]; (an integer local: see survey)
            found.scalar_sources.setdefault(node.lvalue.name, set()).update(
                array_names(node.rvalue)
            )
    elif isinstance(node, c_ast.UnaryOp) and node.op in _INCREMENTS:
        _count(found, node.expr)


def _declaration(src: Source, types: Types, node: Any, found: _Found) -> None:
    if isinstance(node.type, c_ast.FuncDecl):
        raise src.error(node, "function declarations inside the body are not supported")
    if "static" in (node.storage or []) and "const" not in (node.quals or []):
        name = c_name(node.name)  # an inlined callee's local: its C name
        raise src.error(
            node,
            f"static local {name!r} keeps its value from one call to the next, which a "
            "kernel's locals do not",
            "declare it without static if every call starts afresh, or pass it as an array "
            "parameter that carries the value between calls",
        )
    var = types.var(node, "local")
    old = found.variables.get(var.name)
    if old is not None and old.role != "local":
        raise src.error(node, f"local {var.name!r} shadows a parameter or global", "rename it")
    _add(src, found, var)
    if var.rank == 0 and is_integer(var.base) and node.init is not None:
        found.index_use.update(array_names(node.init))  # int j = col[k];
    if var.rank and node.init is not None:
        _points(found, var.name, node.init)  # double *p = &a[k];


def _loop_header(node: Any, found: _Found) -> None:
    init = node.init
    if isinstance(init, c_ast.DeclList):
        found.iterators.update(d.name for d in init.decls)
    elif isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
        found.iterators.add(init.lvalue.name)
    for part in (node.init, node.cond, node.next):
        found.strict_index.update(array_names(part))


def _count(found: _Found, target: Any) -> None:
    base = _base(target)
    if isinstance(base, c_ast.ID):
        found.written[base.name] = found.written.get(base.name, 0) + 1
        if base is not target:
            found.through[base.name] = found.through.get(base.name, 0) + 1


def _points(found: _Found, name: str, value: Any) -> None:
    def is_array(n: str) -> bool:
        var = found.variables.get(n)
        return n in found.pointer_of or (var is not None and var.rank > 0)

    target = root(value, is_array)
    if target is not None and target != name:
        found.pointer_of[name] = target


def _follow_pointers(found: _Found) -> None:
    """What is written or used as an index through a pointer alias counts for the array it
    points into."""
    final = roots(found.pointer_of)

    def mapped(names: set[str]) -> set[str]:
        return {final.get(n, n) for n in names}

    for p, target in final.items():
        moved = found.through.get(p, 0)
        if moved:
            found.written[target] = found.written.get(target, 0) + moved
            found.written[p] -= moved
    found.index_use = mapped(found.index_use)
    found.strict_index = mapped(found.strict_index)
    for name, arrays in found.scalar_sources.items():
        found.scalar_sources[name] = mapped(arrays)


def _check_iterators(src: Source, found: _Found) -> None:
    for it in sorted(found.iterators):
        var = found.variables.get(it)
        if var is None:
            raise error_at(src, None, f"loop variable {it!r} is not declared", "declare it as int")
        if var.rank or not is_integer(var.base) or var.role != "local":
            raise src.error(var.node, f"loop variable {it!r} must be a local integer variable")


def _base(node: Any) -> Any:
    """What ``node``'s subscripts apply to (``A[i][j]``: the node ``A``; ``node`` itself when
    it is no subscript)."""
    while isinstance(node, c_ast.ArrayRef):
        node = node.name
    return node


def subscripted_arrays(node: Any) -> set[str]:
    """Names of the arrays subscripted inside some subscript of ``node`` (``x[col[k]]``:
    ``col``), in one walk: asking :func:`array_names` of every subscript walked a subscript
    nested ``d`` deep ``d`` times (``x[x[x[...]]]``)."""
    out: set[str] = set()
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        n, inside = stack.pop()
        if n is None:
            continue
        if isinstance(n, c_ast.ArrayRef):
            base = _base(n)
            if inside and isinstance(base, c_ast.ID):
                out.add(base.name)
            stack.append((n.name, inside))
            stack.append((n.subscript, True))
            continue
        stack.extend((child, inside) for _, child in n.children())
    return out


def array_names(node: Any) -> set[str]:
    """Names of the arrays subscripted anywhere in ``node``."""
    out: set[str] = set()
    if node is None:
        return out
    for n in nodes(node):
        base = _base(n) if isinstance(n, c_ast.ArrayRef) else None
        if isinstance(base, c_ast.ID):
            out.add(base.name)
    return out

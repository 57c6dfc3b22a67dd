"""``from_c``: the imported function as a Computation, built by a list of recorded calls that
also print as the Python that builds it (``spf import file.c``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spf.computation import Computation, Stmt
from spf.errors import ParseError, SpfError, UndeclaredError
from spf.frontend import args
from spf.frontend.conds import domain_text
from spf.frontend.cparse import Source, error_at, function, parse
from spf.frontend.decls import Types, Var, integer_scalars, is_integer
from spf.frontend.do_once import lower_do_once
from spf.frontend.exprs import NotAffineError, Scope
from spf.frontend.file_consts import substitute_file_constants
from spf.frontend.guards import lower_early_returns
from spf.frontend.increments import candidates, split_increments
from spf.frontend.induction import Inductions
from spf.frontend.inline import inline_calls
from spf.frontend.pointers import lower_derefs
from spf.frontend.preprocess import BUILTIN_MACROS as _BUILTIN
from spf.frontend.private import private_loops
from spf.frontend.rewrite import identifiers, rename_reserved_locals
from spf.frontend.scopes import rename_shadowing_locals
from spf.frontend.survey import survey
from spf.frontend.switch import lower_switches
from spf.frontend.walk import Record, Walker

if TYPE_CHECKING:
    import os

_UF_DTYPE = {"int32_t": "int32", "uint32_t": "int32", "int64_t": "int64", "uint64_t": "int64"}


@dataclass(frozen=True)
class Call:
    """One recorded call on the Computation (``add_stmt`` takes the Stmt's arguments)."""

    method: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
    node: Any = None

    def python(self, var: str) -> str:
        args = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        if self.method == "add_stmt":
            return f"{var}.add_stmt(spf.Stmt({', '.join(args)}))"
        return f"{var}.{self.method}({', '.join(args)})"

    def apply(self, comp: Computation) -> None:
        if self.method == "add_stmt":
            comp.add_stmt(Stmt(*self.args, **dict(self.kwargs)))
        else:
            getattr(comp, self.method)(*self.args, **dict(self.kwargs))


@dataclass(frozen=True)
class Translation:
    """The Computation imported from C and the calls that built it."""

    name: str
    calls: tuple[Call, ...]
    comp: Computation

    def as_python(self, var: str = "comp") -> str:
        """Python that rebuilds the Computation (``import spf`` first)."""
        lines = ["import spf", "", f"{var} = spf.Computation({self.name!r})"]
        lines += [c.python(var) for c in self.calls]
        return "\n".join(lines)


def translate(
    source: str | os.PathLike[str],
    function_name: str | None = None,
    params: Iterable[str] | None = None,
    ufs: Mapping[str, Any] | None = None,
    shapes: Mapping[str, Any] | None = None,
) -> Translation:
    """The :class:`Translation` of ``function_name`` in ``source`` (see ``spf.from_c``)."""
    text, path = args.source_text(source)
    function_name = args.function_name(function_name)
    keep = frozenset(args.names(params, "params"))
    uf_fields = args.uf_fields(ufs)
    shape_of: dict[str, Any] = args.shape_map(shapes)
    try:
        src = parse(text, keep)
    except ParseError as err:
        if path is None and args.looks_like_file(text) and "syntax error" in err.message:
            detail = err.message.removeprefix("from_c: ")
            raise ParseError(
                f"from_c: there is no file {text.strip()!r}, so it was read as C text: {detail}"
            ) from None
        raise
    substitute_file_constants(src)
    fn = function(src, function_name)
    lower_do_once(src)
    lower_early_returns(src)
    inline_calls(src, fn)
    rename_shadowing_locals(src.ast, fn)
    lower_switches(src, fn.body)
    lower_derefs(fn.body)
    types = Types(src)
    split_increments(src, fn.body, integer_scalars(fn.body, types))
    rename_reserved_locals(fn, identifiers(src.ast))
    _check_params(src, fn, types, keep)
    scope, written = survey(src, fn, types, keep, set(uf_fields))
    inductions = Inductions(src, scope, candidates(src, fn.body, scope))
    _check_named(scope, uf_fields, "ufs= names index arrays of the function")
    _check_named(scope, shape_of, "shapes= names arrays of the function")
    walker = Walker(scope, written, inductions)
    records = walker.run(fn.body)
    _check_reached(src, scope, records)
    calls: list[Call] = []
    _declare(calls, src, scope, records, uf_fields, shape_of, walker.facts + scope.facts)
    _mark_private(calls, private_loops(fn.body, scope.vars, scope.iterators))
    comp = Computation(fn.decl.name)
    for call in calls:
        try:
            call.apply(comp)
        except ParseError as err:
            raise _located(src, call, err.message) from None
        except SpfError as err:
            raise _located(src, call, str(err)) from None
    return Translation(fn.decl.name, tuple(calls), comp)


def _mark_private(calls: list[Call], loops: Mapping[str, str]) -> None:
    """``add_local(..., private=loop)`` for the locals private to a loop (spf.frontend.private),
    except a local one of whose statements runs at a single value of the loop (for given
    outer loops): code generation takes such an instance out of the loop (``if (i == 0) t =
    a; else t = b;``), where it could not share the iteration's copy. Kept shared, the local
    has the C's meaning (the import privatizes only locals each iteration writes first); a
    parallel schedule of the loop is then refused, naming it."""
    stmts = [c for c in calls if c.method == "add_stmt"]
    for k, call in enumerate(calls):
        name = call.args[0]
        if call.method == "add_local" and name in loops:
            if any(f"${name}$" in c.args[0] and _pinned(c.args[1], loops[name]) for c in stmts):
                continue
            kwargs = (*call.kwargs, ("private", loops[call.args[0]]))
            calls[k] = Call(call.method, call.args, kwargs, call.node)


def _pinned(domain: str, loop: str) -> bool:
    """Whether ``domain`` (``{[i, j]: ...}``) holds at most one value of ``loop`` for each
    value of the loops around it: two points differing there and agreeing outside do not
    exist."""
    import re

    from spf.sets import Set

    m = re.fullmatch(r"\{\[([^\]]*)\](?::(.*))?\}", domain, re.S)
    if m is None:
        return False
    iters = [v.strip() for v in m.group(1).split(",") if v.strip()]
    if loop not in iters:
        return False
    cond = m.group(2) or "0 = 0"
    inner = iters[iters.index(loop) :]
    twin = {v: f"{v}__twin" for v in inner}
    other = re.sub(r"\b[A-Za-z_]\w*\b", lambda w: twin.get(w.group(), w.group()), cond)
    both = [*iters, *twin.values()]
    text = f"{{[{', '.join(both)}]: ({cond}) && ({other}) && {twin[loop]} != {loop}}}"
    try:
        return Set(text).is_empty()
    except (SpfError, ValueError):
        return False


def _check_named(scope: Scope, given: Mapping[str, Any], hint: str) -> None:
    """Every name in ``given`` (``ufs=``/``shapes=``) is an array of the function."""
    arrays = [n for n, v in scope.vars.items() if v.rank]
    for name in given:
        if name not in arrays:
            raise UndeclaredError("array", name, arrays, hint)


def _check_params(src: Source, fn: Any, types: Types, keep: frozenset[str]) -> None:
    """Every name in ``params=`` is an object-like ``#define`` of the source (kept symbolic)
    or an integer scalar parameter of the function (symbolic already)."""
    declared = [p for p in (fn.decl.type.args.params if fn.decl.type.args else ()) if p.name]
    ints = [p.name for p in declared if _integer_scalar(types, p)]
    defines = {n for n, m in src.pre.macros.items() if m.params is None} - set(_BUILTIN)
    known = sorted(defines | src.pre.kept | set(ints))
    for name in sorted(keep - src.pre.kept - set(ints)):
        listing = ", ".join(p.name for p in declared) or "none"
        raise UndeclaredError(
            "parameter",
            name,
            known,
            f"params= names the #define sizes of the source to keep symbolic (its integer "
            f"parameters are symbolic already); {name!r} is neither a #define of the source "
            f"nor an integer parameter of {fn.decl.name} (its parameters: {listing})",
        )


def _integer_scalar(types: Types, decl: Any) -> bool:
    try:
        var = types.var(decl, "param")
    except ParseError:
        return False  # a parameter of a type spf does not import: the survey says so
    return var.rank == 0 and is_integer(var.base)


def _check_reached(src: Source, scope: Scope, records: list[Record]) -> None:
    """No statement reads an integer local bound by an assignment it does not follow."""
    for r in records:
        for name in sorted(scope.bound_only):
            if f"${name}$" in r.source:
                raise src.error(
                    r.node,
                    f"{name!r} is read before its assignment (a value from an earlier iteration)",
                    "assign it before every use, in the same block",
                )


def _located(src: Source, call: Call, message: str) -> ParseError:
    what = (
        f"statement {call.args[0]!r}"
        if call.method == "add_stmt"
        else f"{call.method}{call.args!r}"
    )
    return (
        src.error(call.node, f"spf rejected {what}: {message}")
        if call.node is not None
        else error_at(src, None, f"spf rejected {what}: {message}")
    )


def _declare(
    calls: list[Call],
    src: Source,
    scope: Scope,
    records: list[Record],
    uf_fields: dict[str, dict[str, Any]],
    shape_of: dict[str, Any],
    implied: list[tuple[str, Any]],
) -> None:
    """Record the calls: constants, UFs, data spaces, locals, extent facts, the facts the
    loops imply (``implied``: a symbolic step is positive), statements."""
    used = "\n".join(r.source for r in records)
    for name in sorted(scope.consts):
        var = scope.vars.get(name)
        calls.append(Call("add_constant", (name,), node=var.node if var else None))
    for name in sorted(scope.fconsts):
        var = scope.vars[name]
        calls.append(Call("add_constant", (name, var.base), node=var.node))
    for name in sorted(scope.ufs):
        calls.append(_declare_uf(src, scope, name, uf_fields.get(name, {}), shape_of.get(name)))
    facts: list[tuple[str, Any]] = []
    for name, var in scope.vars.items():
        if (
            name in scope.ufs
            or name in scope.iterators
            or name in scope.consts
            or name in scope.fconsts
        ):
            continue
        if f"${name}$" not in used and (
            var.role != "param" or var.rank == 0 or (None in var.dims and name not in shape_of)
        ):
            continue  # unused: a parameter array is kept (the C signature) when its shape is known
        shape = _shape(src, scope, var, shape_of.get(name), facts)
        if var.role == "local":
            calls.append(Call("add_local", (name, var.base, shape), node=var.node))
        else:
            calls.append(
                Call("add_data_space", (name, var.base), (("shape", shape or None),), node=var.node)
            )
    for fact, node in facts + implied:
        if all(c.args != (fact,) for c in calls):
            calls.append(Call("assume", (fact,), node=node))
    for r in records:
        tup = f"[{', '.join(r.iters)}]"
        conds = domain_text(list(r.conds))
        domain = f"{{{tup}: {conds}}}" if conds else f"{{{tup}}}"
        calls.append(Call("add_stmt", (r.source, domain, _schedule(r)), node=r.node))


def _schedule(r: Record) -> str:
    """The 2d+1 schedule of ``r``; a downward loop ``i`` keeps its name as the schedule
    dimension ``i = -i_`` (``i_`` being the domain's ``i``), so it runs downward as ``i``."""
    ins: list[str] = []
    eqs: list[str] = []
    for v in r.iters:
        if v not in r.down:
            ins.append(v)
            continue
        fresh = f"{v}_"
        while fresh in r.iters or fresh in ins:
            fresh += "_"
        ins.append(fresh)
        eqs.append(f"{v} + {fresh} = 0")
    where = f": {' && '.join(eqs)}" if eqs else ""
    return f"{{[{', '.join(ins)}] -> [{', '.join(r.schedule)}]{where}}}"


def _declare_uf(src: Source, scope: Scope, name: str, given: dict[str, Any], shape: Any) -> Call:
    """``declare_uf`` of index array ``name``: arity and dtype from its C declaration, domain
    from its extents, then what ``ufs=`` gives."""
    var = scope.vars[name]
    dtype = _UF_DTYPE.get(var.base)
    if dtype is None:
        raise src.error(
            var.node,
            f"index array {name!r} has element type {var.base}",
            "declare index arrays int, int32_t, long or int64_t",
        )
    fields: dict[str, Any] = {"arity": var.rank, "dtype": dtype}
    domain = _uf_domain(scope, var, shape)
    if domain is not None:
        fields["domain"] = domain
    fields.update({k: v for k, v in given.items() if v is not None})
    fields = {k: (str(v) if k in ("domain", "range") else v) for k, v in fields.items()}
    return Call("declare_uf", (name,), tuple(fields.items()), node=var.node)


def _uf_domain(scope: Scope, var: Var, given: Any) -> str | None:
    """The domain of an index array from its extents (``int col[n][w]``: ``{[a0, a1]: 0 <= a0
    < n && 0 <= a1 < w}``), or None where they are unknown (a pointer without ``shapes=``)."""
    if given is not None:
        extents = [str(e) for e in (given if isinstance(given, tuple | list) else (given,))]
    else:
        if None in var.dims:
            return None
        scope.iters, scope.aliases = (), {}
        try:
            extents = [scope.affine(d) for d in var.dims]
        except NotAffineError:
            return None
    if len(extents) != var.rank:
        return None
    names = [f"a{k}" for k in range(var.rank)]
    cons = " && ".join(f"0 <= {n} < {e}" for n, e in zip(names, extents, strict=True))
    return f"{{[{', '.join(names)}]: {cons}}}"


def _shape(
    src: Source, scope: Scope, var: Var, given: Any, facts: list[tuple[str, Any]]
) -> tuple[Any, ...]:
    if given is not None:
        shape = tuple(given) if isinstance(given, tuple | list) else (given,)
        if len(shape) != var.rank:
            raise src.error(
                var.node,
                f"shapes[{var.name!r}] has {len(shape)} extents but "
                f"{var.name!r} has {var.rank} dimension(s)",
            )
        return shape
    out: list[Any] = []
    scope.iters, scope.aliases = (), {}
    for dim in var.dims:
        if dim is None:
            raise src.error(
                var.node,
                f"the extent of {var.name!r} is unknown (a pointer or [])",
                f"pass shapes={{{var.name!r}: (...)}} with one extent per dimension",
            )
        try:
            text = scope.affine(dim)
        except NotAffineError as err:
            raise src.error(dim, f"extent of {var.name!r} is not affine ({err.why})") from None
        try:
            value: Any = int(text)
        except ValueError:
            value = text
            facts.append((f"{text} >= 0", var.node))  # an empty array is an array (nnz = 0)
        else:
            if value < 0:
                raise src.error(dim, f"extent {value} of {var.name!r} is negative")
        out.append(value)
    return tuple(out)

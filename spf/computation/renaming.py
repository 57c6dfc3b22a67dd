"""Renaming data spaces and cloning computations (IEGenLib's ``replaceDataSpaceName`` and
``getUniquelyNamedClone``; docs/inlining.md).

Both work on the lossless JSON form of a computation (:mod:`spf.computation.serialize`),
the one place that lists every name a computation holds: the data spaces (and the UF of a
run-time index array, which shares its name), the return values, each statement's source
(re-rendered from its parsed form, so ``$A$(i)`` and undelimited uses are renamed alike),
its access relations, the buffers, placements and workspaces, the operations, the trace's
commands that name a data space, buffer or statement, and the snapshots that
``pdfg_history`` replays from. The renamed JSON is built into a computation; an in-place
rename then moves that state into the original object, so the user's ``Stmt`` and
``Buffer`` objects stay valid.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from spf import cexpr as cx
from spf.clang import check_reserved
from spf.errors import ArgumentError, SpfError, UndeclaredError, VerifyError
from spf.ir.source.render_c import source_access

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.ir.source import ParsedSource

_COUNTER = itertools.count()
"""Numbers the prefixes of :func:`uniquely_named_clone` in this process."""

_TEXT_ARGS = ("relation", "index")
"""Trace command fields holding set or expression text (they may call an index array)."""
_STMT_ARGS = ("other", "consumer", "stmt")
"""Trace command fields naming a statement (``After.other``, ``ComputeAt.consumer``,
``AllocateAt.stmt``)."""


class _Names:
    """What a rename maps: data spaces (index arrays' UFs too), statements, buffers."""

    def __init__(
        self,
        spaces: Mapping[str, str],
        stmts: Mapping[str, str] | None = None,
        buffers: Mapping[str, str] | None = None,
    ) -> None:
        self.spaces = dict(spaces)
        self.stmts = dict(stmts or {})
        self.buffers = dict(buffers or {})
        moved = [re.escape(n) for n in self.spaces]
        self._calls = re.compile(rf"\b({'|'.join(moved)})(\s*\()") if moved else None

    def space(self, name: str) -> str:
        return self.spaces.get(name, name)

    def stmt(self, name: str) -> str:
        return self.stmts.get(name, name)

    def buffer(self, name: str) -> str:
        return self.buffers.get(name, name)

    def target(self, name: str | None) -> str | None:
        """An operation's target: a data space or a buffer."""
        if name is None:
            return None
        return self.spaces.get(name, self.buffers.get(name, name))

    def text(self, text: str) -> str:
        """Set, relation or expression text with index-array calls renamed."""
        if self._calls is None:
            return text
        return self._calls.sub(lambda m: self.spaces[m.group(1)] + m.group(2), text)


# ----------------------------------------------------------------------------- entry points
def replace_data_space_name(comp: Computation, old: str, new: str) -> None:
    """Rename data space ``old`` of ``comp`` to ``new`` everywhere, in place."""
    if not isinstance(old, str) or old not in comp.data_spaces:
        raise UndeclaredError(
            "data space", str(old), comp.data_spaces, hint=f"replace_data_space_name in {comp.name}"
        )
    if not isinstance(new, str) or not new.isidentifier() or new.startswith("__"):
        raise VerifyError(
            f"replace_data_space_name({old!r}, {new!r}): {new!r} is not a C identifier"
        )
    if new == old:
        return
    _check_free(comp, {old: new}, f"replace_data_space_name({old!r}, {new!r})")
    names = _Names({old: new})
    fresh = _rebuild(comp, names)
    _move_into(comp, fresh, names)


def clone(comp: Computation, prefix: str | None = None) -> Computation:
    """A copy of ``comp``; with ``prefix``, every data space (locals, parameters and
    run-time index arrays included), statement and buffer renamed ``prefix + name``."""
    from spf.computation.checkpoints import copy_log

    if prefix is None:
        names = _Names({})
    else:
        if not isinstance(prefix, str) or not (prefix + "x").isidentifier():
            raise ArgumentError(f"clone: prefix must start a C identifier, got {prefix!r}")
        names = _Names(
            {n: prefix + n for n in comp.data_spaces},
            {s.name: prefix + s.name for s in comp.stmts},
            {b: prefix + b for b in comp.buffers},
        )
        _check_free(comp, names.spaces, f"clone(prefix={prefix!r})", names)
    fresh = _rebuild(comp, names)
    copy_log(comp, fresh, lambda text: _renamed_json(text, names))
    return fresh


def uniquely_named_clone(comp: Computation) -> Computation:
    """:func:`clone` with a prefix ``_c<n>_`` that no name of ``comp`` starts with and that
    no earlier clone of this process used."""
    taken = {*comp.data_spaces, *comp.ufs, *comp.params, *comp.buffers}
    taken |= {s.name for s in comp.stmts}
    while True:
        prefix = f"_c{next(_COUNTER)}_"
        if not any(name.startswith(prefix) for name in taken):
            return clone(comp, prefix)


# ----------------------------------------------------------------------------- checks
def _check_free(
    comp: Computation, spaces: Mapping[str, str], where: str, names: _Names | None = None
) -> None:
    """``SpfError`` when a new name is taken by something the rename keeps (a UF, a
    symbolic constant, an iterator; with one data space renamed, also a statement, a buffer
    or another data space)."""
    kept = _kept_names(comp, spaces, everything=names is not None)
    renames = [("data space", o, n) for o, n in spaces.items()]
    if names is not None:
        renames += [("statement", o, n) for o, n in names.stmts.items()]
        renames += [("buffer", o, n) for o, n in names.buffers.items()]
    for kind, old, new in renames:
        check_reserved(kind, new, in_macros=True)
        if new in kept:
            raise VerifyError(
                f"{where}: the new name {new!r} of {kind} {old!r} is already {kept[new]} "
                f"of {comp.name}; choose another name"
            )


def _kept_names(comp: Computation, spaces: Mapping[str, str], everything: bool) -> dict[str, str]:
    """The names a rename keeps, with what each one names (``everything``: every data
    space, statement and buffer is renamed too)."""
    kept = {name: "a UF" for name in comp.ufs if name not in comp.data_spaces}
    kept.update(dict.fromkeys(comp.params, "a symbolic constant"))
    for s in comp.stmts:
        for it in (*s.loops, *s.domain.tuple_vars):
            kept.setdefault(it, f"a loop or iterator of statement {s.name}")
    if not everything:
        kept.update({s.name: "a statement" for s in comp.stmts})
        kept.update(dict.fromkeys(comp.buffers, "a buffer"))
        kept.update({n: "a data space" for n in comp.data_spaces if n not in spaces})
    return kept


# ----------------------------------------------------------------------------- JSON
def _rebuild(comp: Computation, names: _Names) -> Computation:
    from spf.computation.serialize import from_json

    return from_json(_renamed_json(comp.to_json(), names))


def _renamed_json(text: str, names: _Names) -> str:
    data = json.loads(text)
    _rename_data(data, names)
    return json.dumps(data, indent=1)


def _rename_data(data: dict[str, Any], names: _Names) -> None:
    """Rename every name ``names`` maps in the JSON form ``data`` (in place)."""
    ranks = {ds["name"]: ds["rank"] for ds in data["data_spaces"]}
    arities = {uf["name"]: uf["arity"] for uf in data["ufs"]}
    for ds in data["data_spaces"]:
        ds["name"] = names.space(ds["name"])
    for uf in data["ufs"]:
        uf["name"] = names.space(uf["name"])
        for key in ("domain", "range"):
            if uf[key] is not None:
                uf[key] = names.text(uf[key])
    data["return_values"] = [names.space(n) for n in data["return_values"]]
    data["assumptions"] = [names.text(t) for t in data.get("assumptions", [])]
    for s in data["stmts"]:
        s["source"] = _source(s["source"], s["name"], ranks, arities, names)
        _rename_stmt(s, names)
    for op in data.get("operations", []):
        _rename_stmt(op, names)
        op["target"] = names.target(op["target"])
        op["index"] = [names.text(e) for e in op["index"]]
        op["count"], op["peer"] = names.text(op["count"]), _opt(names.text, op["peer"])
        where = op.get("placement")
        if isinstance(where, dict):
            where["schedules"] = {
                names.stmt(n): names.text(r) for n, r in where["schedules"].items()
            }
    _rename_layout(data, names)
    for entry in data.get("trace", []):
        _rename_command(entry, names)


def _rename_stmt(s: dict[str, Any], names: _Names) -> None:
    """The fields statements and operations share."""
    s["name"] = names.stmt(s["name"])
    for key in ("domain", "schedule", "current_schedule"):
        s[key] = names.text(s[key])
    for key in ("reads", "writes"):
        if key in s:
            s[key] = [[names.space(d), names.text(r)] for d, r in s[key]]
    s["tags"] = {loop: [names.text(t) for t in tags] for loop, tags in s["tags"].items()}


def _rename_layout(data: dict[str, Any], names: _Names) -> None:
    for b in data.get("buffers", []):
        b["name"] = names.buffer(b["name"])
        if b["allocation"] is not None:
            b["allocation"][0] = names.stmt(b["allocation"][0])
    data["workspaces"] = [
        [names.space(n), names.stmt(st), loop, fill]
        for n, st, loop, fill in data.get("workspaces", [])
    ]
    for p in data.get("placements", []):
        p["data_space"] = names.space(p["data_space"])
        p["buffer"] = names.buffer(p["buffer"])
        p["stmt"] = names.stmt(p["stmt"])
        index = p["index"]
        p["index"] = names.text(index) if isinstance(index, str) else [names.text(e) for e in index]
        p["exprs"] = [names.text(e) for e in p["exprs"]]


def _rename_command(entry: dict[str, Any], names: _Names) -> None:
    """A trace entry: its statement and the fields of its command that name things."""
    entry["stmt"] = names.stmt(entry["stmt"])
    args = entry["args"]
    for key, value in list(args.items()):
        if not isinstance(value, (str, list)):
            continue
        if key == "data_space" or (key == "name" and entry["command"] == "CacheRead"):
            args[key] = names.space(value) if isinstance(value, str) else value
        elif key == "buffer" and isinstance(value, str):
            args[key] = names.buffer(value)
        elif key in _STMT_ARGS and isinstance(value, str):
            args[key] = names.stmt(value)
        elif key in _TEXT_ARGS:
            args[key] = (
                names.text(value) if isinstance(value, str) else [names.text(v) for v in value]
            )


def _source(
    text: str, stmt: str, ranks: Mapping[str, int | None], arities: Mapping[str, int], names: _Names
) -> str:
    """A statement's source with the renamed data spaces (and index-array calls), rendered
    from its parsed form; unchanged when it uses none of them."""
    from spf.ir.source import parse_source

    if not names.spaces:
        return text
    parsed = parse_source(text, data_spaces=ranks, ufs=arities, stmt=stmt)
    used = {a.data_space for a in (*parsed.reads, *parsed.writes)}
    used |= {n for n, _ in parsed.uf_calls}
    if not used & set(names.spaces):
        return text

    lexical = _LEXICAL.sub(lambda m: _token(m, names), text)
    new_ranks = {names.space(n): r for n, r in ranks.items()}
    new_arities = {names.space(n): a for n, a in arities.items()}
    try:
        again = parse_source(lexical, data_spaces=new_ranks, ufs=new_arities, stmt=stmt)
    except SpfError:
        again = None
    if again is not None and _uses(again, None) == _uses(parsed, names):
        return lexical  # the same text but the names: formatting and comments kept

    def access(name: str, index: tuple[cx.Expr, ...]) -> cx.Expr:
        return source_access(names.space(name), index)

    def call(name: str, args: tuple[cx.Expr, ...]) -> cx.Expr:
        return cx.Call(names.space(name), args)

    return parsed.render_c(access, call)


_LEXICAL = re.compile(
    r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|//[^\n]*|/\*.*?\*/)"""  # literals, comments
    r"|(?<![.\w])(?<!->)([A-Za-z_]\w*)",  # an identifier that is not a member
    re.S,
)


def _token(m: re.Match[str], names: _Names) -> str:
    name = m.group(2)
    return m.group(0) if name is None else names.spaces.get(name, name)


def _uses(parsed: ParsedSource, names: _Names | None) -> object:
    """The accesses and UF calls of a parsed source (renamed by ``names``)."""

    def space(n: str) -> str:
        return n if names is None else names.space(n)

    def text(t: str) -> str:
        return t if names is None else names.text(t)

    accesses = [
        [(space(a.data_space), tuple(text(i) for i in a.indices)) for a in group]
        for group in (parsed.reads, parsed.writes, parsed.reductions)
    ]
    calls = [(space(n), tuple(text(a) for a in args)) for n, args in parsed.uf_calls]
    return accesses, calls


def _opt(fn: Callable[[str], str], value: str | None) -> str | None:
    return None if value is None else fn(value)


# ----------------------------------------------------------------------------- in place
def _move_into(comp: Computation, fresh: Computation, names: _Names) -> None:
    """Give ``comp`` the state of ``fresh`` (its renamed twin), keeping the user's
    statement and buffer objects (their state replaced) and ``comp``'s result cache."""
    from spf.computation.checkpoints import rewrite
    from spf.schedule.trace import set_trace, trace_of

    old_stmts = {s.name: s for s in comp.stmts}
    stmts = []
    for s in fresh._stmts:
        keep = old_stmts.get(s.name)
        if keep is not None and type(keep) is type(s):
            vars(keep).clear()
            vars(keep).update(vars(s))
            s = keep
        s._comp = comp
        stmts.append(s)
    fresh._stmts = stmts
    old_buffers = comp.buffers
    for name, b in list(fresh._layout.buffers.items()):
        keep_b = old_buffers.get(name)
        if keep_b is not None:
            vars(keep_b).update(vars(b))
            fresh._layout.buffers[name] = b = keep_b
        b._comp = comp
    state = {k: v for k, v in vars(fresh).items() if k != "_memo"}
    extra = {k: v for k, v in vars(comp).items() if k not in state and k != "_memo"}
    memo = comp._memo
    vars(comp).clear()
    vars(comp).update(state)
    vars(comp).update(extra)
    comp._memo = memo
    set_trace(comp, trace_of(fresh))
    rewrite(comp, lambda text: _renamed_json(text, names))

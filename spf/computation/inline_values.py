"""By-value parameters an inlined callee uses as symbolic constants (``append_computation``).

A by-value parameter ``k`` of a function Computation may bound its loops
(``{[i]: 0 <= i < k}``): there ``k`` is a symbolic constant, not the local ``append_computation``
assigns the argument to. Inlining substitutes the argument for it in the callee's domains,
schedules, local shapes and assumptions, so it never becomes a new symbolic constant (a kernel
argument) of the caller. Only an argument that is a symbolic constant itself can be
substituted: an integer literal or an affine expression of the caller's symbolic constants
(``8``, ``n``, ``n - 1``); anything else is refused, naming the parameter.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from spf.errors import ArgumentError, SpfError
from spf.sets import Relation, Set

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.data_space import DataSpace

_INT = re.compile(r"^-?\d+$")
_BOUND = re.compile(r"\bexists\s*\(?\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*\)?\s*:")
"""``exists e, f:`` (or ``exists (e, f):``): the names a set's text binds itself."""
_WORD = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*\b(?!\s*\()")  # a name, not a UF call's


def substitute_names(text: str, values: Mapping[str, str]) -> str:
    """``text`` with every name in ``values`` (not a UF call) replaced by its value."""
    return _WORD.sub(lambda m: values.get(m.group(0), m.group(0)), text)


def constant_uses(
    callee: Computation, params: Sequence[DataSpace], bound: Collection[str]
) -> dict[str, str]:
    """The by-value ``params`` the callee uses as symbolic constants, each with where it is
    first used (``the domain of s0``); ``bound``: the data spaces bound to caller data
    spaces (their shapes are the caller's)."""
    names = {p.name for p in params if not p.pointer}
    uses: dict[str, str] = {}

    def note(found: Collection[str], where: str) -> None:
        for name in sorted(names & set(found)):
            uses.setdefault(name, where)

    for stmt in callee.stmts:
        note(stmt.domain.params, f"the domain of {stmt.name}")
        note(stmt.schedule.params, f"the schedule of {stmt.name}")
    for ds in callee.data_spaces.values():
        if ds.name not in bound:
            for extent in ds.shape or ():
                if isinstance(extent, str):
                    note(set(_WORD.findall(extent)), f"the shape of {ds.name}")
    for uf in callee.ufs.values():
        for s in (uf.domain, uf.range):
            if s is not None:
                note(s.params, f"the declaration of UF {uf.name}")
    for fact in callee.assumptions:
        note(fact.params, f"the assumption {fact.text!r}")
    return uses


def constant_values(
    caller: Computation,
    callee: Computation,
    params: Sequence[DataSpace],
    args: Sequence[str],
    bound: Collection[str],
    outer_its: Collection[str],
    where: str,
) -> dict[str, str]:
    """``{parameter: "(argument)"}`` for the by-value parameters the callee uses as symbolic
    constants; raises ``ArgumentError`` for an argument that cannot be substituted."""
    uses = constant_uses(callee, params, bound)
    values: dict[str, str] = {}
    for p, arg in zip(params, args, strict=True):
        if p.name not in uses or not isinstance(arg, str):
            continue
        use = uses[p.name]
        writer = next((t.name for t in callee.stmts if any(d == p.name for d, _ in t.writes)), None)
        if writer is not None:
            raise ArgumentError(
                f"{where}: by-value parameter {p.name!r} of {callee.name} bounds {use} and "
                f"{writer} assigns it: the loop would run to its value at the call while the "
                f"statements read the assigned one; copy it into a local of {callee.name} "
                "and assign that instead"
            )
        if use.startswith("the declaration of UF"):
            raise ArgumentError(
                f"{where}: by-value parameter {p.name!r} of {callee.name} appears in "
                f"{use}; a UF declared with a by-value parameter cannot be inlined: declare "
                f"it with a symbolic constant of {callee.name} instead"
            )
        problem = _why_not_constant(caller, arg.strip(), outer_its)
        if problem is not None:
            raise ArgumentError(
                f"{where}: by-value parameter {p.name!r} of {callee.name} is a symbolic "
                f"constant of {use} (a loop bound); its argument is substituted there, so it "
                "must be an integer literal or an affine expression of the symbolic constants "
                f"of {caller.name} (e.g. '8', 'n' or 'n - 1'), got {arg.strip()!r}: {problem}"
            )
        values[p.name] = f"({arg.strip()})"
    return values


def _why_not_constant(caller: Computation, arg: str, outer_its: Collection[str]) -> str | None:
    """Why ``arg`` is not a symbolic-constant expression of ``caller`` (None: it is)."""
    if _INT.match(arg):
        return None
    probe_var = "_spf_argument"
    try:
        probe = Set(f"{{[{probe_var}]: {probe_var} = {arg}}}")
    except SpfError:
        return "it is not an affine integer expression"
    if probe.uf_calls:
        return f"it calls a UF ({', '.join(probe.uf_calls)})"
    known = set(caller.params)
    for name in sorted(probe.params):
        if name in outer_its:
            return f"{name!r} is an iterator of the surrounding domain, not a constant"
        ds = caller.data_spaces.get(name)
        if ds is not None and not (
            ds.role == "parameter" and not ds.pointer and ds.dtype.lstrip("u").startswith("int")
        ):
            return (
                f"{name!r} is a data space of {caller.name}, whose value statements may "
                "change; pass a symbolic constant"
            )
        if ds is not None and any(any(d == name for d, _ in t.writes) for t in caller.stmts):
            return f"{name!r} is assigned by a statement of {caller.name}, so it is no constant"
        if ds is None and name not in known and name not in caller.constants:
            return f"{name!r} is no symbolic constant of {caller.name} (yet)"
        if name in caller.buffers:
            return f"{name!r} is a buffer of {caller.name}"
        if caller.constant_type(name) in ("double", "float"):
            return f"{name!r} is a {caller.constant_type(name)} constant; bounds are integers"
    return None


def substituted_set(s: Set, values: Mapping[str, str], names: Mapping[str, str]) -> Set:
    """``s`` with the constants in ``values`` substituted and its variables renamed by
    ``names`` (the statement's iterators to their prefixed names, so that an argument's name
    is not captured by one of them); ``s`` itself when it uses none of the constants."""
    if not set(values) & s.params:
        return s
    text = str(s)
    out = Set(substitute_names(text, {**_fresh_bound(text), **names, **values}), s.ufs or None)
    _check_gone(out, values, s)
    return out


def substituted_relation(
    r: Relation, values: Mapping[str, str], names: Mapping[str, str]
) -> Relation:
    """``r`` with the constants in ``values`` substituted and its variables renamed by
    ``names`` (as for :func:`substituted_set`)."""
    if not set(values) & r.params:
        return r
    text = str(r)
    out = Relation(substitute_names(text, {**_fresh_bound(text), **names, **values}), r.ufs or None)
    _check_gone(out, values, r)
    return out


def _fresh_bound(text: str) -> dict[str, str]:
    """The names ``text`` binds with ``exists``, each to a fresh name, so that an argument's
    name substituted into the text is not captured by one of them."""
    bound = [n.strip() for m in _BOUND.finditer(text) for n in m.group(1).split(",")]
    return {name: f"_spf_b{k}_{name}" for k, name in enumerate(bound)}


def _check_gone(out: Set | Relation, values: Mapping[str, str], s: Set | Relation) -> None:
    brought = {w for v in values.values() for w in _WORD.findall(v)}  # the arguments' names
    left = sorted(set(values) & out.params - brought)
    if left:  # a name bound inside the text (an existential) shadowed the constant
        raise ArgumentError(
            f"append_computation: could not substitute the argument for {left[0]!r} in {s}"
        )


__all__ = [
    "constant_uses",
    "constant_values",
    "substitute_names",
    "substituted_relation",
    "substituted_set",
]

"""Transformation relations on a schedule's output space, and naming their results.

``rebuild`` writes ``T = {[q0, ..., qn] -> [outputs] : conditions}`` over the old schedule's
outputs (``q<k>``, spf-internal names), composes ``T . schedule`` and then names the
outputs: each loop by its loop name, constants and loops shown as expressions unnamed.
When a loop name equals an input name of the schedule (``shift("i", 1)`` keeps the name
``i`` for ``i + 1``) the input is renamed (``{[i_, j] -> [0, i, 0, j, 0] : i = i_ + 1}``);
a loop equal to the input of its name stays unnamed (``{[i, j] -> [0, i, 0, j, 0]}``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from spf.errors import InternalError
from spf.schedule.commands import INTERNAL_PREFIX
from spf.sets import Relation
from spf.sets.body import Body, canonical, slot_values
from spf.sets.linear import basic_constraints, tsym

Tags = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class State:
    """One statement's schedule and loop tags (by loop name)."""

    schedule: Relation
    tags: Tags = field(default_factory=dict)


def is_constant(text: str) -> bool:
    """True for a schedule entry that is an integer constant (``0``, ``-1``)."""
    return text.lstrip("-").isdigit()


def loops_of(schedule: Relation) -> tuple[tuple[int, ...], tuple[str, ...], tuple[str | None, ...]]:
    """Output positions of the loops (entries that are not constants), their names as shown
    (``i`` or ``i + 1``), and their names as names (None for a loop shown as an expression)."""
    outs = schedule.out_vars
    positions = tuple(k for k, v in enumerate(outs) if not is_constant(v))
    names = tuple(outs[k] for k in positions)
    params = schedule.params
    labels = tuple(n if n.isidentifier() and n not in params else None for n in names)
    return positions, names, labels


def set_constants(schedule: Relation, values: Mapping[int, int]) -> Relation:
    """``schedule`` (padded with ``0`` as needed) with the constants at ``values``' positions
    replaced."""
    width = max([schedule.out_arity, *(p + 1 for p in values)])
    padded = schedule.pad_outputs(width)
    positions, _, labels = loops_of(padded)
    outs: list[tuple[str, str | int]] = [
        ("const", values[k]) if k in values else ("pass", k) for k in range(width)
    ]
    return rebuild(padded, labels, positions, outs, [])


def rebuild(
    old: Relation,
    labels: Sequence[str | None],
    positions: Sequence[int],
    outs: Sequence[tuple[str, str | int]],
    conds: Sequence[str],
) -> Relation:
    """``T . old`` for ``T``'s ``outs`` (``("pass", k)``: old output ``k``; ``("const",
    c)``; ``("name", n)``: a new loop ``n`` defined by ``conds``; ``("expr", e)``: an
    unnamed output) and name the result's outputs. ``labels`` / ``positions`` are the old
    loops' names and output positions."""
    ins = [f"{INTERNAL_PREFIX}q{k}" for k in range(old.out_arity)]
    items: list[str] = []
    wanted: list[str | None] = []
    for kind, v in outs:
        if kind == "pass":
            k = int(v)
            items.append(ins[k])
            wanted.append(labels[positions.index(k)] if k in positions else None)
        elif kind == "const":
            items.append(str(v))
            wanted.append(None)
        elif kind == "name":
            items.append(str(v))
            wanted.append(str(v))
        else:
            items.append(str(v))
            wanted.append(None)
    where = f" : {' && '.join(conds)}" if conds else ""
    t = Relation(f"{{[{', '.join(ins)}] -> [{', '.join(items)}]{where}}}")
    return name_outputs(t.compose(old), wanted)


def name_outputs(rel: Relation, wanted: Sequence[str | None]) -> Relation:
    """``rel`` with output ``k`` named ``wanted[k]`` (unnamed where None: it must be fixed
    by the inputs, a constant or an expression)."""
    body = rel._body
    n_in = rel.in_arity
    if len(wanted) != rel.out_arity:
        raise InternalError(
            f"spf bug: {len(wanted)} names for the {rel.out_arity} outputs of {rel}"
        )
    names: list[str | None] = [*body.names[:n_in], *([None] * len(wanted))]
    probe = Body(tuple(names), n_in, body.hidden, body.terms, body.iset)
    per = [
        slot_values(probe, basic_constraints(b, probe.dim_syms()))[0]
        for b in body.iset.get_basic_sets()
    ]
    used = {n for n in names if n} | set(body.hidden) | set(body.params())
    used |= {w for w in wanted if w}
    for k, want in enumerate(wanted):
        if want is None:
            continue
        pos = n_in + k
        if want in names[:n_in]:
            j = names.index(want)
            if per and all(v.get(pos) == tsym(j).aff() for v in per):
                continue  # the loop is that input: shown by its name, unnamed
            fresh = want + "_"
            while fresh in used:
                fresh += "_"
            names[j] = fresh
            used.add(fresh)
        names[pos] = want
    new = Relation._make(
        canonical(Body(tuple(names), n_in, body.hidden, body.terms, body.iset)), rel.ufs
    )
    shown = new.out_vars
    for k, want in enumerate(wanted):
        if want is not None and shown[k] != want:
            raise InternalError(f"spf bug: output {k} of {new} should be the loop {want!r}")
    return new

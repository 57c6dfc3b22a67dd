"""The interpreter's unions: the statements of a union merge (``stmt.coiterate(i, j, left=,
right=)``) run as the generated merge runs them (docs/coiteration.md).

A union's ``left`` statement runs at the positions ``[outer, i]`` of its domain that no
position of the other list matches (``both`` has no instance ``[outer, i, *]``), ``right``
likewise, and all three in increasing coordinate order. The schedule walk lists their
instances by their own schedules; :func:`union_runner` takes over at the first instance of
a group under each value of the outer iterators and runs the whole merge there, in the
merge's order (the other instances under that value are then skipped). Intersections need
nothing: their instances and order are the nest's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spf.errors import CodegenError
from spf.sets.affine import Aff, Atom, Call, Sym

if TYPE_CHECKING:
    from spf.analysis.coiteration import Group
    from spf.ir import ComputationIR
    from spf.runtime.walk import Instance

Run = Callable[["Instance"], None]


def union_runner(
    ir: ComputationIR, params: Mapping[str, int], ufs: Mapping[str, Any], run: Run
) -> Run:
    """``run``, with the union merges of ``ir`` run in merge order."""
    from spf.analysis.coiteration import NotMergeableError, groups

    try:
        unions = [g for g in groups(ir, auto=False, prove=False) if g.is_union]
    except NotMergeableError as err:
        raise CodegenError(f"interpret({ir.name}): {err}") from None
    if not unions:
        return run
    stmts = ir.parsed_stmts
    order = {s.name: k for k, s in enumerate(stmts)}
    member = {name: g for g in unions for name in g.stmts}
    done: set[tuple[str, tuple[int, ...]]] = set()

    def merged(instance: Instance) -> None:
        time, number, point = instance
        g = member.get(stmts[number].name)
        if g is None:
            run(instance)
            return
        outer = _outer_values(ir, g, stmts[number].name, point)
        if (g.stmt, outer) in done:
            return
        done.add((g.stmt, outer))
        for name, values in _merge(ir, g, outer, params, ufs):
            run((time, order[name], values))

    return merged


def _outer_values(ir: ComputationIR, g: Group, stmt: str, point: Sequence[int]) -> tuple[int, ...]:
    if stmt != g.stmt:  # a branch: [outer..., position]
        return tuple(point[:-1])
    names = ir.parsed_stmt(stmt).domain.tuple_vars
    values = dict(zip(names, point, strict=True))
    return tuple(values[v] for v in g.shape.outer_vars)


def _merge(
    ir: ComputationIR,
    g: Group,
    outer: tuple[int, ...],
    params: Mapping[str, int],
    ufs: Mapping[str, Any],
) -> list[tuple[str, tuple[int, ...]]]:
    """The instances of the group under ``outer``, in the merge's order."""
    shape = g.shape
    env = {**params, **dict(zip(shape.outer_vars, outer, strict=True))}
    a, b = shape.left, shape.right
    lo1, hi1 = _range(a.lower, a.upper, env, ufs)
    lo2, hi2 = _range(b.lower, b.upper, env, ufs)
    out: list[tuple[str, tuple[int, ...]]] = []

    def emit(name: str | None, point: tuple[int, ...]) -> None:
        if name is not None and ir.parsed_stmt(name).domain.contains(point, params, ufs):
            out.append((name, point))

    left = None if g.left is None else g.left.stmt
    right = None if g.right is None else g.right.stmt
    j1, j2 = lo1, lo2
    while j1 < hi1 and j2 < hi2:
        k1, k2 = _key(a.key, j1, ufs), _key(b.key, j2, ufs)
        if k1 == k2:
            at = {**env, a.var: j1, b.var: j2}
            emit(shape.stmt, tuple(at[v] for v in shape.tuple_vars))
        elif k1 < k2:
            emit(left, (*outer, j1))
        else:
            emit(right, (*outer, j2))
        j1, j2 = j1 + (k1 <= k2), j2 + (k2 <= k1)
    for j in range(j1, hi1):  # one list ran out: the rest of the other (a union's)
        emit(left, (*outer, j))
    for j in range(j2, hi2):
        emit(right, (*outer, j))
    return out


def _range(
    lower: Sequence[Aff],
    upper: Sequence[Aff],
    env: Mapping[str, int],
    ufs: Mapping[str, Any],
) -> tuple[int, int]:
    return (
        max(evaluate(e, env, ufs) for e in lower),
        min(evaluate(e, env, ufs) for e in upper),
    )


def _key(key: Aff, position: int, ufs: Mapping[str, Any]) -> int:
    call = key.as_atom()
    assert isinstance(call, Call)
    (arg,) = call.args
    name = arg.as_sym()
    assert name is not None
    return evaluate(key, {name.name: position}, ufs)


def evaluate(e: Aff, env: Mapping[str, int], ufs: Mapping[str, Any]) -> int:
    """The integer value of a domain expression (``+``, ``*``, ``floor``, UF calls read from
    the arrays ``ufs``)."""
    from spf.sets.calls import call_parts

    def value(a: Atom) -> int:
        if isinstance(a, Sym):
            return int(env[a.name])
        if isinstance(a, Call):
            name, args, component = call_parts(a.aff())
            index = [evaluate(x, env, ufs) for x in args]
            if component is not None:
                index.append(component)
            values = ufs[name]
            return int(values(*index) if callable(values) else values[tuple(index)])
        raise CodegenError(f"interpret: cannot evaluate the merge bound {e}")

    got = e.evaluate(value)
    if got.denominator == 1:
        return int(got)
    raise CodegenError(f"interpret: cannot evaluate the merge bound {e}")

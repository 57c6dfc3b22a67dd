"""``append_computation``: inline a function Computation into a caller (IEGenLib's
``appendComputation``, docs/inlining.md).

The callee's data spaces and iterators get a fresh prefix ``_i<N>_``; pointer parameters are
replaced by the caller's data space given as argument; by-value parameters become locals
assigned from the argument (a literal or a data space) before the callee's statements; the
callee's statements are nested under the surrounding domain and schedule. Callee data spaces
not bound to an argument (locals, by-value parameters, return values) become locals of the
caller's generated function. A by-value parameter the callee uses as a symbolic constant (a
loop bound) has its argument substituted there (:mod:`spf.computation.inline_values`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.clang import NUMPY_OF_C
from spf.computation.access import iterator_names
from spf.computation.inline_values import (
    constant_values,
    substitute_names,
    substituted_relation,
    substituted_set,
)
from spf.computation.statement import Stmt
from spf.errors import (
    ArgumentError,
    ArityError,
    IllegalScheduleError,
    ScheduleError,
    SpfError,
)
from spf.ir.source.render_c import source_access
from spf.sets import Relation, Set

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.data_space import DataSpace

_LITERAL = re.compile(r"^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)[fF]?$")


@dataclass(frozen=True)
class AppendResult:
    """What ``append_computation`` returns."""

    tuple_position: int
    """The last value used at the position the callee was placed at (append the next
    statement after it)."""
    return_values: list[str]
    """The callee's return values, renamed for the caller."""


def append_computation(
    caller: Computation,
    callee: Computation,
    domain: str | Set,
    schedule: str | Relation,
    args: Sequence[str] | Mapping[str, str] = (),
) -> AppendResult:
    where = f"append_computation({callee.name})"
    if callee is caller:
        raise ArgumentError(
            f"{where}: {caller.name} cannot be appended into itself: a function calling "
            "itself (recursion) cannot be inlined; to add a second copy of its statements, "
            f"append a copy of it ({caller.name}.clone())"
        )
    _check_inlinable(callee, where)
    _check_callee_order(callee, where)
    outer = domain if isinstance(domain, Set) else Set(domain)
    outer_sched = schedule if isinstance(schedule, Relation) else Relation(schedule)
    if outer_sched.in_arity != outer.arity:
        raise ArityError(f"{where}: schedule {outer_sched} does not take the domain's tuples")
    outer_fn = outer_sched.as_function(list(iterator_names(outer)))
    if outer_fn is None or not outer_fn or not outer_fn[-1].lstrip("-").isdigit():
        raise ScheduleError(
            f"{where}: the surrounding schedule {outer_sched} must be a function ending in a "
            "constant position (2d+1 form), e.g. {[t] -> [0, t, 0]}"
        )
    if isinstance(args, Mapping):
        params, args = _by_name(caller, callee, args, where)
    else:
        params = [ds for ds in callee.data_spaces.values() if ds.role == "parameter"]
    if len(args) != len(params):
        raise ArityError(
            f"{where}: {callee.name} takes {len(params)} argument(s) "
            f"({', '.join(p.name for p in params)}), got {len(args)}"
        )
    bound = {p.name for p in params if p.pointer}
    its = list(iterator_names(outer))
    values = constant_values(caller, callee, params, args, bound, its, where)
    with _all_or_nothing(caller, where):
        return _append(caller, callee, outer, outer_fn, params, args, values, where)


def _append(
    caller: Computation,
    callee: Computation,
    outer: Set,
    outer_fn: tuple[str, ...],
    params: list[DataSpace],
    args: Sequence[str],
    values: Mapping[str, str],
    where: str,
) -> AppendResult:
    """The additions to ``caller`` (undone by the caller's ``_all_or_nothing`` if one is
    refused)."""
    prefix = _fresh_prefix(caller)
    rename, assigns = _bind_arguments(caller, callee, params, args, prefix, values, where)
    _check_index_arrays(caller, callee, rename, where)
    for name, ctype in callee.constants.items():  # declared constants keep their names
        if name not in caller.constants:
            caller.add_constant(name, ctype)
        elif caller.constants[name] != ctype:
            raise ArgumentError(
                f"{where}: {callee.name} declares the constant {name!r} as {ctype}, "
                f"{caller.name} as {caller.constants[name]}; declare it alike in both"
            )
    for uf in callee.ufs.values():
        if uf.name not in caller.ufs:
            caller.declare_uf(
                uf.name,
                arity=uf.arity,
                domain=uf.domain,
                range=uf.range,
                monotonic=uf.monotonic,
                dtype=uf.dtype,
                out_arity=uf.out_arity,
                inverse=uf.inverse,
            )
    known = {str(f) for f in caller.assumptions}
    for fact in callee.assumptions:  # about UFs and constants, which keep their names
        text = substitute_names(str(fact), values) if set(values) & fact.params else str(fact)
        if text not in known:
            caller.assume(text)
    plan = _Plan(caller, callee, outer, outer_fn, prefix, rename, values, where)
    position = plan.place(assigns)
    returns = [rename.get(r, prefix + r) for r in callee.return_values]
    return AppendResult(tuple_position=position, return_values=returns)


def _by_name(
    caller: Computation, callee: Computation, args: Mapping[str, str], where: str
) -> tuple[list[DataSpace], list[str]]:
    """``args`` given as ``{callee data space: caller argument}``: the callee's data spaces
    it names (arrays of any role bound by reference, as pointer parameters are; so is a 0-d
    one the callee writes, unless it is a by-value parameter, so the caller sees the result;
    another 0-d one by value) and their arguments, in the callee's order."""
    unknown = sorted(set(args) - set(callee.data_spaces))
    if unknown:
        raise ArgumentError(
            f"{where}: {callee.name} has no data space {unknown[0]!r} to bind (its data "
            f"spaces: {', '.join(callee.data_spaces) or 'none'})"
        )
    written = {d for s in callee.stmts for d, _ in s.writes}
    params = []
    for name, ds in callee.data_spaces.items():
        if name in args:
            result = name in written and ds.role != "parameter"
            array = ds.pointer or bool(ds.rank) or result
            params.append(dataclasses.replace(ds, pointer=array))
    return params, [args[p.name] for p in params]


@contextmanager
def _all_or_nothing(caller: Computation, where: str) -> Iterator[None]:
    """Undo every addition to ``caller`` (data spaces, UFs, constants, assumptions,
    statements) when the block raises: a refused call adds nothing."""
    saved = (
        dict(caller._data),
        dict(caller._ufs),
        dict(caller._constants),
        list(caller._assumptions),
        list(caller._stmts),
        vars(caller).get("_inline_count"),
    )
    try:
        yield
    except BaseException as err:
        caller._data, caller._ufs, caller._constants = saved[0], saved[1], saved[2]
        caller._assumptions, caller._stmts = saved[3], saved[4]
        if saved[5] is None:
            vars(caller).pop("_inline_count", None)
        else:
            caller._inline_count = saved[5]  # type: ignore[attr-defined]
        if isinstance(err, SpfError):
            err.add_note(f"During: {where} (nothing was added to {caller.name})")
        raise


def _check_inlinable(callee: Computation, where: str) -> None:
    """The callee holds statements only: an operation (a barrier, a host/device copy, a
    send or receive) has no source to inline and would be lost."""
    from spf.computation.operations import OperationStmt

    for s in callee.stmts:
        if isinstance(s, OperationStmt):
            raise ArgumentError(
                f"{where}: {callee.name} has the operation {s.name} ({s.describe()}), which "
                "cannot be inlined (it would be dropped); append a computation without it "
                "and add the operation to the caller after the call"
            )


def _check_callee_order(callee: Computation, where: str) -> None:
    """The callee's current schedules become the caller's program order: they must keep the
    callee's meaning. A fusion of sparse kernels kept for a wavefront (or run as one) breaks
    dependences that only the wavefront's inspector orders; inlined, that order would be
    the program's and the broken dependences would be lost."""
    from spf.analysis.dependences import broken_until_run_time

    dep = broken_until_run_time(callee.ir)
    if dep is not None:
        raise IllegalScheduleError(
            f"{where}: the schedule of {callee.name} runs kernels fused into one loop in an "
            f"order that breaks the {dep.kind} dependence on {dep.data_space!r} from "
            f"{dep.source} to {dep.sink}, which only a wavefront orders at run time; inlined, "
            "that order would become the program's: append the kernels before fusing them, "
            "and fuse them in the caller"
        )
    try:
        callee.check_legality()
    except IllegalScheduleError as err:
        raise IllegalScheduleError(
            f"{where}: the schedule of {callee.name} is not legal, and inlined it would become "
            f"the program's order: {err}"
        ) from None


def _check_index_arrays(
    caller: Computation, callee: Computation, rename: Mapping[str, str], where: str
) -> None:
    """A run-time index array the callee computes is read through its UF, whose calls keep
    their name: it must be bound (by name) to the caller's index array of that name."""
    for name, ds in callee.data_spaces.items():
        if ds.index and rename[name] != name:
            raise ArgumentError(
                f"{where}: {callee.name} computes the run-time index array {name!r} "
                f"(index=True) and reads it as the UF {name}(...), which keeps its name: "
                f"declare {name!r} in {caller.name} (add_data_space or add_local with "
                f"index=True) and bind it by name, args={{{name!r}: {name!r}, ...}}"
            )


def _fresh_prefix(caller: Computation) -> str:
    taken = set(caller.data_spaces) | {s.name for s in caller.stmts}
    n = getattr(caller, "_inline_count", 0)
    while any(name.startswith(f"_i{n}_") for name in taken):
        n += 1
    caller._inline_count = n + 1  # type: ignore[attr-defined]
    return f"_i{n}_"


def _bind_arguments(
    caller: Computation,
    callee: Computation,
    params: list[DataSpace],
    args: Sequence[str],
    prefix: str,
    values: Mapping[str, str],
    where: str,
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Data-space renaming for the callee and the ``(local, value)`` assignments (``values``:
    the by-value parameters also substituted as symbolic constants, whose argument may be
    an expression of the caller's symbolic constants)."""
    rename: dict[str, str] = {}
    assigns: list[tuple[str, str]] = []
    for p, arg in zip(params, args, strict=True):
        if not isinstance(arg, str):
            raise ArgumentError(f"{where}: argument for {p.name!r} must be text, got {arg!r}")
        arg = arg.strip()
        if p.pointer:
            if not p.rank and not callee.data_spaces[p.name].pointer:
                _check_scalar_result(caller, callee, p, arg, where)
            if arg not in caller.data_spaces:
                raise ArgumentError(
                    f"{where}: {p.name!r} is passed by reference ({p.type_text}); its argument "
                    f"must be a data space of {caller.name} "
                    f"(known: {', '.join(sorted(caller.data_spaces)) or 'none'}), got {arg!r}"
                )
            _check_element_type(caller, p, arg, where)
            rename[p.name] = arg
        elif (
            p.name in values
            or _LITERAL.match(arg)
            or (arg in caller.data_spaces and _scalar(caller, arg))
        ):
            assigns.append((prefix + p.name, arg))
        else:
            raise ArgumentError(
                f"{where}: argument for by-value parameter {p.name!r} must be a numeric "
                f"literal or a 0-d data space of {caller.name}, got {arg!r}"
            )
    for name in callee.data_spaces:
        rename.setdefault(name, prefix + name)
    return rename, assigns


def _check_element_type(caller: Computation, p: DataSpace, arg: str, where: str) -> None:
    """A data space bound by reference holds the elements the callee's statements store:
    C refuses a ``double*`` parameter given an ``int`` array, and so does inlining (its
    statements would store converted values)."""
    theirs, ours = p.ctype.removesuffix("*").strip(), caller.data_spaces[arg].ctype
    if NUMPY_OF_C.get(theirs, theirs) != NUMPY_OF_C.get(ours, ours):
        raise ArgumentError(
            f"{where}: {p.name!r} holds {theirs} elements ({p.type_text}), but its argument "
            f"{arg!r} of {caller.name} holds {ours}; pass a data space of {theirs}"
        )


def _check_scalar_result(
    caller: Computation, callee: Computation, p: DataSpace, arg: str, where: str
) -> None:
    """A 0-d data space the callee writes is bound by reference: its argument must be a 0-d
    data space of the caller, which receives the result."""
    target = caller.data_spaces.get(arg)
    if target is None or target.rank:
        got = "an array" if target is not None else f"not a data space of {caller.name}"
        raise ArgumentError(
            f"{where}: {callee.name} writes the 0-d data space {p.name!r}, so it is bound by "
            f"reference and {caller.name} receives its value: its argument must be a 0-d data "
            f"space of {caller.name} (e.g. add_data_space('r', {p.ctype!r})), got {arg!r} "
            f"({got}); to keep it a local of the call, leave {p.name!r} out of the arguments"
        )


def _extent(extent: int | str, values: Mapping[str, str]) -> int | str:
    """A callee local's extent with the by-value parameters in ``values`` substituted."""
    if isinstance(extent, int):
        return extent
    text = substitute_names(extent, values)
    number = text.strip("() ")
    return int(number) if number.isdigit() else text


def _scalar(caller: Computation, name: str) -> bool:
    return caller.data_spaces[name].rank == 0


class _Plan:
    """Places the callee's statements under the surrounding domain and schedule."""

    def __init__(
        self,
        caller: Computation,
        callee: Computation,
        outer: Set,
        outer_fn: tuple[str, ...],
        prefix: str,
        rename: Mapping[str, str],
        values: Mapping[str, str],
        where: str,
    ) -> None:
        self.caller, self.callee, self.outer = caller, callee, outer
        self.outer_fn, self.prefix, self.rename, self.where = outer_fn, prefix, rename, where
        self.values = values
        self.outer_its = list(iterator_names(outer))
        self.base = int(outer_fn[-1])

    def place(self, assigns: list[tuple[str, str]]) -> int:
        """Add locals, assignments and statements; the last position value used."""
        for name, ds in self.callee.data_spaces.items():
            new = self.rename[name]
            if new in self.caller.data_spaces:
                continue  # bound to a caller data space
            if ds.private is not None:  # the callee's loop, under its prefixed name
                ds = dataclasses.replace(ds, private=self.prefix + ds.private)
            if self.values and ds.shape:
                shape = tuple(_extent(d, self.values) for d in ds.shape)
                ds = dataclasses.replace(ds, shape=shape)
            self.caller._add_local(new, ds)
        firsts = [self._first(stmt) for stmt in self.callee.stmts]
        offset = 0
        last = self.base
        for local, value in assigns:
            self._add(f"${local}$ = {self._value(value)};", "{[]}", "{[] -> [0]}", offset)
            last = self.base + offset
            offset += 1
        # the callee's first position starts at 0 or later here: a negative one would run
        # before the assignments above and the caller's statements placed before the call
        offset -= min([0, *firsts])
        for stmt, first in zip(self.callee.stmts, firsts, strict=True):
            self._add_callee_stmt(stmt, offset)
            last = max(last, self.base + offset + first)
        return last

    def _first(self, stmt: Stmt) -> int:
        """The constant first position of a callee statement's schedule."""
        first = stmt.schedule.as_function(list(iterator_names(stmt.domain)))
        if first is None or not first[0].lstrip("-").isdigit():
            raise ScheduleError(
                f"{self.where}: statement {stmt.name} of {self.callee.name} needs a 2d+1 "
                f"schedule that is a function starting with a constant, got {stmt.schedule}"
            )
        return int(first[0])

    def _value(self, value: str) -> str:
        return f"${value}$" if value in self.caller.data_spaces else value

    def _add_callee_stmt(self, stmt: Stmt, offset: int) -> None:
        its = list(iterator_names(stmt.domain))
        new_its = [self.prefix + it for it in its]
        source = stmt.parsed.render_c(
            lambda n, ix: source_access(self.rename[n], ix),
            cx.Call,
            dict(zip(its, new_its, strict=True)),
        )
        renamed = dict(zip(its, new_its, strict=True))
        domain = substituted_set(stmt.domain, self.values, renamed)
        named = Set(f"{{[{', '.join(new_its)}]}}").intersect(domain) if its else domain
        sched = substituted_relation(stmt.schedule, self.values, renamed).as_function(new_its)
        assert sched is not None
        self._add(source, named, sched, offset, inner_its=new_its)

    def _add(
        self,
        source: str,
        domain: str | Set,
        sched: str | Sequence[str],
        offset: int,
        inner_its: Sequence[str] = (),
    ) -> None:
        inner = domain if isinstance(domain, Set) else Set(domain)
        full = self.outer.product(inner) if inner.arity else self.outer
        its = [*self.outer_its, *inner_its]
        if isinstance(sched, str):
            inner_out = Relation(sched).as_function([]) or ("0",)
        else:
            inner_out = tuple(sched)
        head = list(self.outer_fn[:-1])
        first = f"{self.base + offset} + ({inner_out[0]})"
        out = [*head, first, *inner_out[1:]]
        rel = f"{{[{', '.join(its)}] -> [{', '.join(out)}]}}"
        full = Set(f"{{[{', '.join(its)}]}}").intersect(full) if its else full
        self.caller.add_stmt(Stmt(source, full, rel))

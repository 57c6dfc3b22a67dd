"""The two computations derived from a row-distributed one (API.md §19).

* The **local computation** is the original with every distributed statement's domain
  restricted to ``row_lo <= i < row_hi``: the executor runs it on runs of the rank's rows
  (those that need no ghost while messages travel, then the rest), on the rank's arrays with
  the index arrays renumbered into the compact ghost buffers.
* The **inspector** has, for each access through an index array to a distributed vector
  ``x(j)`` (``j = col(k)``), a statement over the same domain that marks the entries it
  touches, ``dist_mark_x(j) = 1``, and, for a read, one that flags the rows touching an entry
  another rank owns, ``dist_halo(i) = dist_halo(i) | dist_far_x(j)``: the image of the rank's
  iterations under the access, and the rows whose computation must wait for the exchange.
  Statements after those mark the entries rows with ghosts read, ``dist_near_x(j) =
  dist_near_x(j) | dist_halo(i)``: rows without ghosts read the caller's vector in place, so
  the rank's own entries among these (and, for a vector also indexed by the loop, the rows
  with ghosts themselves) are all the compact buffer needs besides the ghosts.
  It is compiled like any computation, so a call with ``check=True`` checks the index arrays
  against their declarations (``rowptr`` nondecreasing, ``col`` inside ``0 .. M-1``).

Both are IR values built with :mod:`spf.ir.build` (``spf.Computation.from_ir`` makes either
a computation), so this package never needs the user-facing ``Computation``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.analysis.memo import HasIR, as_ir
from spf.errors import CodegenError
from spf.ir import ComputationIR, apply, build
from spf.ir.data import uf_fields
from spf.schedule.commands import Parallelize
from spf.schedule.tags import reduction_option

if TYPE_CHECKING:
    from spf.distributed.analysis import Layout

LO, HI = "row_lo", "row_hi"
"""The parameters bounding the rows one call of the local function runs."""

HALO = "dist_halo"
PHASE = "dist_phase"
"""The parameter selecting which phase's statements one call of the local function runs
(only when the computation has more than one phase, spf.distributed.phases)."""


def mark_name(data: str) -> str:
    return f"dist_mark_{data}"


def far_name(data: str) -> str:
    return f"dist_far_{data}"


def near_name(data: str) -> str:
    return f"dist_near_{data}"


def uf_arguments(ir: ComputationIR, name: str, **changed: object) -> dict[str, object]:
    """The keyword arguments of ``declare_uf`` that declare ``ir``'s UF ``name`` again,
    with ``changed`` fields."""
    fields: dict[str, object] = {
        **uf_fields(next(u for u in ir.ufs if u.name == name)),
        **changed,
    }
    del fields["name"]
    return fields


def restricted_domain(domain: str, loop: str | None, phase: int | None, extra: str = "") -> str:
    """``domain`` with the rows ``row_lo <= loop < row_hi`` (a loop given), the phase and
    the constraints ``extra``."""
    if ";" in domain:
        raise CodegenError(
            f"distribute_rows: the domain {domain} is a union; write one statement per part"
        )
    body = domain.rstrip()
    if not body.endswith("}"):
        raise CodegenError(f"distribute_rows: cannot read the domain {domain}")
    parts = [] if loop is None else [f"{LO} <= {loop} && {loop} < {HI}"]
    if phase is not None:
        parts.append(f"{PHASE} = {phase}")
    if extra:
        parts.append(extra)
    if not parts:
        return domain
    more = " && ".join(parts)
    head, sep, _ = body[:-1].partition(":")
    if not sep:
        return f"{head.rstrip()} : {more} }}"
    return f"{body[:-1].rstrip()} && {more} }}"


def local_computation(comp: ComputationIR | HasIR, layout: Layout) -> ComputationIR:
    """The original (a computation's IR, or a computation, for its IR) restricted to rows
    ``row_lo .. row_hi - 1`` (see the module docstring)."""
    ir = as_ir(comp, "distribute_rows")
    taken = {*ir.data_space_table, *ir.uf_decls, *ir.params} & {LO, HI, PHASE}
    if taken:
        raise CodegenError(
            f"distribute_rows: {ir.name} already uses the name {min(taken)}, which the "
            "distributed executor needs for its row bounds; rename it"
        )
    local = build.declarations(ir, f"{ir.name}_local")
    phase_of = {name: n for n, p in enumerate(layout.phases) for name in p.stmts}
    remote = {g.stmt: g.data for g in layout.accesses if g.write}
    for s in ir.stmts:
        loop = layout.loop if s.name in layout.stmts else None
        phase = phase_of[s.name] if len(layout.phases) > 1 else None
        domain = restricted_domain(s.domain, loop, phase)
        local = build.add_stmt(local, s.source, domain, s.current_schedule, name=s.name)
        for tagged, tags in s.tags:
            if "parallel" in tags:  # with its reduction option (atomic, privatize)
                option = reduction_option(tags)
                if option == "privatize" and s.name in remote:
                    raise CodegenError(
                        f"distribute_rows: {s.name} accumulates into {remote[s.name]} through "
                        f"an index array in loop {tagged}, parallelized with "
                        "reduction='privatize': per-thread copies span the declared extent, "
                        "but a rank holds only its entries and ghosts of it; use "
                        f"parallelize({tagged!r}, reduction='atomic')"
                    )
                local = apply(Parallelize(loop=tagged, reduction=option), local, s.name)
    return local


def inspector_computation(comp: ComputationIR | HasIR, layout: Layout) -> ComputationIR:
    """The marking inspector of a computation (its IR, or the computation, for its IR; see
    the module docstring)."""
    ir = as_ir(comp, "distribute_rows")
    insp = _inspector_declarations(ir, layout)
    stmts = {s.name: s for s in ir.stmts}
    for n, g in enumerate(layout.accesses):
        domain = stmts[g.stmt].domain
        mark = f"${mark_name(g.data)}$({g.index}) = 1;"
        insp = build.add_stmt(insp, mark, domain, name=f"mark{n}")
        if not g.write:
            halo = f"${HALO}$({layout.loop})"
            source = f"{halo} = {halo} | ${far_name(g.data)}$({g.index});"
            insp = build.add_stmt(insp, source, domain, name=f"halo{n}")
    for n, g in enumerate(layout.accesses):  # after every halo flag is final
        if not g.write:
            near, halo = f"${near_name(g.data)}$({g.index})", f"${HALO}$({layout.loop})"
            domain = stmts[g.stmt].domain
            insp = build.add_stmt(insp, f"{near} = {near} | {halo};", domain, name=f"near{n}")
    return insp


def _inspector_declarations(ir: ComputationIR, layout: Layout) -> ComputationIR:
    """The inspector before its statements: the UFs the distributed statements use, the
    symbolic constants, the halo flags and the marks."""
    insp = build.computation(f"{ir.name}_inspector")
    used: set[str] = set()
    for s in ir.stmts:
        if s.name in layout.stmts:
            used |= {u.name for u in ir.ufs if u.name in s.domain or u.name in s.source}
    for u in ir.ufs:
        if u.name in used:
            insp = build.declare_uf(insp, u.name, **uf_arguments(ir, u.name))
    for name, ctype in ir.constants:
        insp = build.add_constant(insp, name, ctype)
    bound = _row_bound(layout)
    if layout.ghost_reads:
        insp = build.add_data_space(insp, HALO, "int8_t", (bound,))
    for name in (*layout.ghost_reads, *layout.remote_writes):
        insp = build.add_data_space(insp, mark_name(name), "int8_t", (layout.extent[name],))
    for name in layout.ghost_reads:
        insp = build.add_data_space(insp, far_name(name), "int8_t", (layout.extent[name],))
    for name in layout.ghost_reads:
        insp = build.add_data_space(insp, near_name(name), "int8_t", (layout.extent[name],))
    return insp


def _row_bound(layout: Layout) -> str:
    if layout.bound is not None:
        return layout.bound
    for name in layout.owned:
        return layout.extent[name]
    raise CodegenError(
        f"distribute_rows: loop {layout.loop} has no parameter upper bound ({layout.loop} < N) "
        "and indexes no distributed vector directly; bound it by a parameter"
    )


__all__ = [
    "HI",
    "LO",
    "PHASE",
    "far_name",
    "inspector_computation",
    "local_computation",
    "mark_name",
    "near_name",
    "restricted_domain",
    "uf_arguments",
]

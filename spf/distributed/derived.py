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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.computation.computation import Computation, _fields
from spf.computation.statement import Stmt
from spf.errors import CodegenError

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


def _declarations(comp: Computation, into: Computation, ufs: set[str] | None = None) -> None:
    """UFs and constants of ``comp`` declared again in ``into``."""
    for name, uf in comp.ufs.items():
        if ufs is None or name in ufs:
            into.declare_uf(name, **_fields(uf))
    for name, ctype in comp.constants.items():
        into.add_constant(name, ctype)


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


def with_declarations(comp: Computation, into: Computation) -> Computation:
    """``into`` with ``comp``'s data spaces, UFs, constants and assumptions declared."""
    for name, ds in comp.data_spaces.items():
        ctype = ds.ctype + ("*" if ds.pointer else "")
        if ds.role == "local":
            into.add_local(
                name, ctype, ds.shape if ds.shape is not None else (), private=ds.private
            )
        else:
            into.add_data_space(name, ctype, shape=ds.shape, index=ds.index)
    _declarations(comp, into)
    for fact in comp.assumptions:
        into.assume(fact.text)
    return into


def local_computation(comp: Computation, layout: Layout) -> Computation:
    """The original restricted to rows ``row_lo .. row_hi - 1`` (see the module docstring)."""
    taken = {*comp.data_spaces, *comp.ufs, *comp.params, *comp.constants} & {LO, HI, PHASE}
    if taken:
        raise CodegenError(
            f"distribute_rows: {comp.name} already uses the name {min(taken)}, which the "
            "distributed executor needs for its row bounds; rename it"
        )
    local = with_declarations(comp, Computation(f"{comp.name}_local"))
    phase_of = {name: n for n, p in enumerate(layout.phases) for name in p.stmts}
    for s in comp.stmts:
        loop = layout.loop if s.name in layout.stmts else None
        phase = phase_of[s.name] if len(layout.phases) > 1 else None
        domain = restricted_domain(str(s.domain), loop, phase)
        stmt = local.add_stmt(Stmt(s.source, domain, str(s.schedule), name=s.name))
        for tagged, tags in s.tags.items():
            if "parallel" in tags:
                stmt.parallelize(tagged)
    return local


def inspector_computation(comp: Computation, layout: Layout) -> Computation:
    """The marking inspector (see the module docstring)."""
    insp = Computation(f"{comp.name}_inspector")
    ufs: set[str] = set()
    for s in comp.stmts:
        if s.name in layout.stmts:
            ufs |= {n for n in comp.ufs if n in str(s.domain) or n in s.source}
    _declarations(comp, insp, ufs)
    bound = _row_bound(layout)
    if layout.ghost_reads:
        insp.add_data_space(HALO, "int8_t", shape=(bound,))
    for name in (*layout.ghost_reads, *layout.remote_writes):
        insp.add_data_space(mark_name(name), "int8_t", shape=(layout.extent[name],))
    for name in layout.ghost_reads:
        insp.add_data_space(far_name(name), "int8_t", shape=(layout.extent[name],))
    for name in layout.ghost_reads:
        insp.add_data_space(near_name(name), "int8_t", shape=(layout.extent[name],))
    stmts = {s.name: s for s in comp.stmts}
    for n, g in enumerate(layout.accesses):
        domain = str(stmts[g.stmt].domain)
        insp.add_stmt(Stmt(f"${mark_name(g.data)}$({g.index}) = 1;", domain, name=f"mark{n}"))
        if not g.write:
            halo = f"${HALO}$({layout.loop})"
            insp.add_stmt(
                Stmt(
                    f"{halo} = {halo} | ${far_name(g.data)}$({g.index});",
                    domain,
                    name=f"halo{n}",
                )
            )
    for n, g in enumerate(layout.accesses):  # after every halo flag is final
        if not g.write:
            near, halo = f"${near_name(g.data)}$({g.index})", f"${HALO}$({layout.loop})"
            domain = str(stmts[g.stmt].domain)
            insp.add_stmt(Stmt(f"{near} = {near} | {halo};", domain, name=f"near{n}"))
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
    "with_declarations",
]

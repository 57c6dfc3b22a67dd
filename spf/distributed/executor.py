"""The executor of a row-distributed computation: one C + MPI translation unit.

It holds the local function (:func:`spf.distributed.derived.local_computation`, generated
by the C printer) and the executor, ``void <name>(MPI_Comm comm, <plan>, <local args>)``,
which for one call

1. posts ``MPI_Irecv`` of each ghost-read vector's ghosts into its compact buffer (after the
   rank's own entries), packs the entries the neighbours need and posts ``MPI_Isend``;
2. copies the rank's own entries in front of the ghosts, and zeroes the replicated
   accumulators (their values on entry are added back at the end);
3. runs the local function on the runs of rows that read no ghost, while messages travel;
4. ``MPI_Waitall``, then runs the rows that read ghosts;
5. sends what rows wrote through an index array into other ranks' entries to their owners,
   which add it to theirs (in neighbour order: the same sum on every run);
6. ``MPI_Allreduce`` sums the accumulators over the ranks.

The plan (counts, displacements, the local indices to send, the runs of rows) is made once
per index-array content by :mod:`spf.distributed.plan`; this module only prints C.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from spf.codegen.mpi import MPI_TYPES, TAG
from spf.distributed.derived import HI, LO, PHASE

if TYPE_CHECKING:
    from spf.codegen.signature import Arg, Signature
    from spf.distributed.analysis import Layout

COMM = "comm"

PLAN_ARRAYS = ("scnt", "sdsp", "sidx", "rcnt", "rdsp")
"""Per exchanged vector ``x``: ``spf_x_scnt[p]`` entries sent to rank ``p`` from
``spf_x_sbuf + spf_x_sdsp[p]``, packed from local indices ``spf_x_sidx``; ``spf_x_rcnt[p]``
ghosts received from ``p`` at ``x + spf_x_nown + spf_x_rdsp[spf_p]``."""


def plan_args(layout: Layout, ctypes: dict[str, str]) -> list[tuple[str, str]]:
    """``(C declaration, name)`` of the plan arguments, in order."""
    out: list[tuple[str, str]] = [("int64_t spf_P", "spf_P")]
    for name in (*layout.ghost_reads, *layout.remote_writes):
        for arr in PLAN_ARRAYS:
            out.append((f"const int64_t *spf_{name}_{arr}", f"spf_{name}_{arr}"))
        out.append((f"int64_t spf_{name}_nown", f"spf_{name}_nown"))
        out.append((f"{ctypes[name]} *spf_{name}_sbuf", f"spf_{name}_sbuf"))
        const = "const " if name in layout.ghost_reads and name not in layout.copy_back else ""
        out.append((f"{const}{ctypes[name]} *spf_{name}_user", f"spf_{name}_user"))
    for runs in ("inner", "outer"):
        out.append((f"int64_t spf_n{runs}", f"spf_n{runs}"))
        out.append((f"const int64_t *spf_{runs}", f"spf_{runs}"))
    return out


def executor_args(local: Signature, layout: Layout) -> list[Arg]:
    """The local function's arguments without the row bounds; the exchanged vectors are
    the executor's to write (their compact buffers)."""
    exchanged = {*layout.ghost_reads, *layout.remote_writes}
    return [
        replace(a, const=False) if a.name in exchanged else a
        for a in local.args
        if a.name not in (LO, HI, PHASE)
    ]


def prototype(name: str, local: Signature, layout: Layout, comm_type: str = "MPI_Comm") -> str:
    ctypes = {a.name: a.ctype for a in local.args}
    decls = [f"{comm_type} {COMM}", *(d for d, _ in plan_args(layout, ctypes))]
    decls += [a.c_decl() for a in executor_args(local, layout)]
    return f"void {name}({', '.join(decls)})"


def _runs(local: Signature, which: str, phase: int) -> list[str]:
    """Call the local function on each run of rows in ``spf_<which>`` (phase ``phase``)."""
    lo, hi = f"spf_{which}[2 * spf_r]", f"spf_{which}[2 * spf_r + 1]"
    return [
        f"for (int64_t spf_r = 0; spf_r < spf_n{which}; spf_r++)",
        f"  {_call(local, lo, hi, phase)}",
    ]


def _call(local: Signature, lo: str, hi: str, phase: int) -> str:
    values = {LO: lo, HI: hi, PHASE: str(phase)}
    args = ", ".join(values.get(a.name, a.name) for a in local.args)
    return f"{local.function}({args});"


def _phases(local: Signature, layout: Layout, reductions: list[Arg]) -> list[str]:
    """The phases in order: rows without ghosts, the wait before the first phase reading
    ghosts, rows with ghosts; each phase's accumulations summed over the ranks after it."""
    body: list[str] = []
    by_name = {r.name: r for r in reductions}
    reading = {g.stmt for g in layout.accesses if not g.write}
    waited = False
    for k, phase in enumerate(layout.phases):
        mine = [by_name[n] for n in phase.reductions if n in by_name]
        for r in mine:
            count = _count(r)
            body += [
                f"{r.ctype} spf_{r.name}_in{k}[{count}];",
                f"for (int spf_q = 0; spf_q < {count}; spf_q++) {{ spf_{r.name}_in{k}[spf_q] = "
                f"{r.name}[spf_q]; {r.name}[spf_q] = 0; }}",
            ]
        if phase.replicated:
            body.append(f"/* phase {k}: {', '.join(phase.stmts)} on every rank */")
            body.append(_call(local, "0", "0", k))
        else:
            body.append(f"/* phase {k}: rows that read no ghost, while the messages travel */")
            body += _runs(local, "inner", k)
            if not waited and reading & set(phase.stmts):
                body += ["MPI_Waitall(spf_nreq, spf_req, MPI_STATUSES_IGNORE);", "spf_nreq = 0;"]
                waited = True
            body.append(f"/* phase {k}: rows that read ghosts */")
            body += _runs(local, "outer", k)
        for r in mine:
            count = _count(r)
            body += [
                f"/* {r.name}: the sum over the ranks, added to its value before phase {k} */",
                f"MPI_Allreduce(MPI_IN_PLACE, {r.name}, {count}, {MPI_TYPES[r.ctype]}, MPI_SUM, "
                f"{COMM});",
                f"for (int spf_q = 0; spf_q < {count}; spf_q++) {r.name}[spf_q] = "
                f"spf_{r.name}_in{k}[spf_q] + {r.name}[spf_q];",
            ]
    if not waited:
        body += ["MPI_Waitall(spf_nreq, spf_req, MPI_STATUSES_IGNORE);", "spf_nreq = 0;"]
    return body


def executor_source(name: str, local_source: str, local: Signature, layout: Layout) -> str:
    """The translation unit: the local function, then the executor (module docstring)."""
    ctypes = {a.name: a.ctype for a in local.args}
    reductions = [a for a in local.args if a.name in layout.reductions]
    lines = ["", "#include <mpi.h>", "#include <string.h>", "", prototype(name, local, layout)]
    lines.append("{")
    body: list[str] = []
    body.append(f"const int64_t spf_nreq_max = 2 * spf_P * {max(1, len(layout.ghost_reads))};")
    body.append(
        "MPI_Request *spf_req = (MPI_Request *)malloc((size_t)spf_nreq_max * sizeof(MPI_Request));"
    )
    body.append(f"if (spf_req == NULL) {{ MPI_Abort({COMM}, 1); return; }}")
    body.append("int spf_nreq = 0;")
    for tag, x in enumerate(layout.ghost_reads):
        t, mt = ctypes[x], MPI_TYPES[ctypes[x]]
        p = f"spf_{x}_"
        body += [
            f"/* ghosts of {x}: receive into {x}[{p}nown ..], pack and send what others need */",
            "for (int64_t spf_p = 0; spf_p < spf_P; spf_p++)",
            f"  if ({p}rcnt[spf_p] > 0)",
            f"    MPI_Irecv({x} + {p}nown + {p}rdsp[spf_p], (int){p}rcnt[spf_p], {mt}, (int)spf_p, "
            f"{TAG + tag}, {COMM}, &spf_req[spf_nreq++]);",
            f"for (int64_t spf_q = 0; spf_q < {p}sdsp[spf_P - 1] + {p}scnt[spf_P - 1]; spf_q++)",
            f"  {p}sbuf[spf_q] = {p}user[{p}sidx[spf_q]];",
            "for (int64_t spf_p = 0; spf_p < spf_P; spf_p++)",
            f"  if ({p}scnt[spf_p] > 0)",
            f"    MPI_Isend({p}sbuf + {p}sdsp[spf_p], (int){p}scnt[spf_p], {mt}, (int)spf_p, "
            f"{TAG + tag}, {COMM}, &spf_req[spf_nreq++]);",
            f"memcpy({x}, {p}user, (size_t){p}nown * sizeof({t}));",
        ]
    for y in layout.remote_writes:
        t, p = ctypes[y], f"spf_{y}_"
        total = f"{p}rdsp[spf_P - 1] + {p}rcnt[spf_P - 1]"
        body += [
            f"/* {y}: the rank's entries, then zeroed slots for other ranks' entries */",
            f"memcpy({y}, {p}user, (size_t){p}nown * sizeof({t}));",
            f"memset({y} + {p}nown, 0, (size_t)({total}) * sizeof({t}));",
        ]
    body += _phases(local, layout, reductions)
    for tag, y in enumerate(layout.remote_writes):
        t, mt, p = ctypes[y], MPI_TYPES[ctypes[y]], f"spf_{y}_"
        body += [
            f"/* {y}: send the sums into other ranks' entries to their owners; add theirs */",
            "for (int64_t spf_p = 0; spf_p < spf_P; spf_p++)",
            f"  if ({p}rcnt[spf_p] > 0)",
            f"    MPI_Isend({y} + {p}nown + {p}rdsp[spf_p], (int){p}rcnt[spf_p], {mt}, (int)spf_p, "
            f"{TAG + 64 + tag}, {COMM}, &spf_req[spf_nreq++]);",
            "for (int64_t spf_p = 0; spf_p < spf_P; spf_p++)",
            f"  if ({p}scnt[spf_p] > 0)",
            f"    MPI_Irecv({p}sbuf + {p}sdsp[spf_p], (int){p}scnt[spf_p], {mt}, (int)spf_p, "
            f"{TAG + 64 + tag}, {COMM}, &spf_req[spf_nreq++]);",
            "MPI_Waitall(spf_nreq, spf_req, MPI_STATUSES_IGNORE);",
            "spf_nreq = 0;",
            f"memcpy({p}user, {y}, (size_t){p}nown * sizeof({t}));",
            f"for (int64_t spf_q = 0; spf_q < {p}sdsp[spf_P - 1] + {p}scnt[spf_P - 1]; spf_q++)",
            f"  {p}user[{p}sidx[spf_q]] += {p}sbuf[spf_q];",
        ]
    for x in layout.copy_back:
        body += [
            f"/* {x}: the rank's entries, written by the phases, back to the caller's {x} */",
            f"memcpy(spf_{x}_user, {x}, (size_t)spf_{x}_nown * sizeof({ctypes[x]}));",
        ]
    body.append("free(spf_req);")
    lines += [f"  {line}" for line in body]
    lines.append("}")
    return local_source + "\n".join(lines) + "\n"


def _count(arg: Arg) -> int:
    count = 1
    for extent in arg.shape or ():
        count *= int(extent)
    return count


__all__ = ["executor_args", "executor_source", "plan_args", "prototype"]

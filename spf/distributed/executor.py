"""The executor of a row-distributed computation: one C + MPI translation unit.

It holds the local function (:func:`spf.distributed.derived.local_computation`, generated
by the C printer) and the executor, ``int <name>(MPI_Comm comm, <agreement>, <plan>, <local
args>)``, which for one call

1. packs what the neighbours need and copies what step 3 says into its own buffers; when
   given this rank's agreement integers (a repeated call, :mod:`spf.distributed.kernel`),
   makes their ``MPI_Allreduce(MAX)`` and returns 1, before any message or any write the
   caller sees, when some rank's call differs (the caller then settles it as a first call
   does: an error on every rank, or a new plan on every rank);
2. posts ``MPI_Irecv`` of each ghost-read vector's ghosts into its compact buffer (after the
   rank's own entries), packs the entries the neighbours need and posts ``MPI_Isend``;
3. copies into the compact buffer the rank's own entries that rows reading ghosts touch
   (those the inspector marked, and the rows themselves for a vector also indexed by the
   loop, ``layout.rowwise``): rows without ghosts read and write the caller's array itself,
   so no call copies the rank's whole block; and zeroes the replicated accumulators (their
   values on entry are added back at the end);
4. runs the local function on the runs of rows that read no ghost, while messages travel;
5. ``MPI_Waitall``, then runs the rows that read ghosts;
6. sends what rows wrote through an index array into other ranks' entries to their owners,
   which add it to theirs (in neighbour order: the same sum on every run);
7. ``MPI_Allreduce`` sums the accumulators over the ranks.

The plan (counts, displacements, the local indices to send, the runs of rows) is made once
per index-array content by :mod:`spf.distributed.plan`; this module only prints C.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from spf.codegen.mpi import MPI_TYPES, TAG
from spf.distributed.arguments import AGREEMENT
from spf.distributed.derived import HI, LO, PHASE

if TYPE_CHECKING:
    from spf.codegen.signature import Arg, Signature
    from spf.distributed.analysis import Layout

COMM = "comm"

PLAN_ARRAYS = ("scnt", "sdsp", "sidx", "rcnt", "rdsp")
"""Per exchanged vector ``x``: ``spf_x_scnt[p]`` entries sent to rank ``p`` from
``spf_x_sbuf + spf_x_sdsp[p]``, packed from local indices ``spf_x_sidx``; ``spf_x_rcnt[p]``
ghosts received from ``p`` at ``x + spf_x_nown + spf_x_rdsp[spf_p]``; for a ghost-read vector,
``spf_x_nnear`` pairs ``[lo, hi)`` of local indices in ``spf_x_near``: the rank's entries
rows with ghosts touch, the only ones copied into the compact buffer."""


def plan_args(layout: Layout, ctypes: dict[str, str]) -> list[tuple[str, str]]:
    """``(C declaration, name)`` of the plan arguments, in order."""
    out: list[tuple[str, str]] = [
        ("const int64_t *spf_agree", "spf_agree"),
        ("int64_t *spf_top", "spf_top"),
        ("int64_t spf_P", "spf_P"),
    ]
    for name in (*layout.ghost_reads, *layout.remote_writes):
        for arr in PLAN_ARRAYS:
            out.append((f"const int64_t *spf_{name}_{arr}", f"spf_{name}_{arr}"))
        out.append((f"int64_t spf_{name}_nown", f"spf_{name}_nown"))
        out.append((f"{ctypes[name]} *spf_{name}_sbuf", f"spf_{name}_sbuf"))
        const = "const " if name in layout.ghost_reads and name not in layout.copy_back else ""
        out.append((f"{const}{ctypes[name]} *spf_{name}_user", f"spf_{name}_user"))
        if name in layout.ghost_reads:
            out.append((f"int64_t spf_{name}_nnear", f"spf_{name}_nnear"))
            out.append((f"const int64_t *spf_{name}_near", f"spf_{name}_near"))
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


def prototype(
    name: str,
    local: Signature,
    layout: Layout,
    comm_type: str = "MPI_Comm",
    restrict: bool = True,
) -> str:
    ctypes = {a.name: a.ctype for a in local.args}
    decls = [f"{comm_type} {COMM}", *(d for d, _ in plan_args(layout, ctypes))]
    decls += [a.c_decl(restrict) for a in executor_args(local, layout)]
    return f"int {name}({', '.join(decls)})"


def _runs(local: Signature, layout: Layout, which: str, phase: int) -> list[str]:
    """Call the local function on each run of rows in ``spf_<which>`` (phase ``phase``);
    rows without ghosts read and write the caller's ghost-read vectors in place."""
    lo, hi = f"spf_{which}[2 * spf_r]", f"spf_{which}[2 * spf_r + 1]"
    ctypes = {a.name: a.ctype for a in local.args}
    direct = {x: f"({ctypes[x]} *)spf_{x}_user" for x in layout.ghost_reads if which == "inner"}
    return [
        f"for (int64_t spf_r = 0; spf_r < spf_n{which}; spf_r++)",
        f"  {_call(local, lo, hi, phase, direct)}",
    ]


def _call(
    local: Signature, lo: str, hi: str, phase: int, instead: dict[str, str] | None = None
) -> str:
    values = {LO: lo, HI: hi, PHASE: str(phase), **(instead or {})}
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
            body += _runs(local, layout, "inner", k)
            if not waited and reading & set(phase.stmts):
                body += ["MPI_Waitall(spf_nreq, spf_req, MPI_STATUSES_IGNORE);", "spf_nreq = 0;"]
                waited = True
            body.append(f"/* phase {k}: rows that read ghosts */")
            body += _runs(local, layout, "outer", k)
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
    body.append(f"if (spf_req == NULL) {{ MPI_Abort({COMM}, 1); return -1; }}")
    body.append("int spf_nreq = 0;")
    for x in layout.ghost_reads:
        t, p = ctypes[x], f"spf_{x}_"
        body += [
            f"/* {x}: pack what the neighbours need; copy the own entries rows with ghosts read */",
            f"for (int64_t spf_q = 0; spf_q < {p}sdsp[spf_P - 1] + {p}scnt[spf_P - 1]; spf_q++)",
            f"  {p}sbuf[spf_q] = {p}user[{p}sidx[spf_q]];",
        ]
        lo, hi = f"{p}near[2 * spf_q]", f"{p}near[2 * spf_q + 1]"
        body += [
            f"for (int64_t spf_q = 0; spf_q < {p}nnear; spf_q++)",
            f"  memcpy({x} + {lo}, {p}user + {lo}, (size_t)({hi} - {lo}) * sizeof({t}));",
        ]
    for y in layout.remote_writes:
        t, p = ctypes[y], f"spf_{y}_"
        total = f"{p}rdsp[spf_P - 1] + {p}rcnt[spf_P - 1]"
        body += [
            f"/* {y}: the rank's entries, then zeroed slots for other ranks' entries */",
            f"memcpy({y}, {p}user, (size_t){p}nown * sizeof({t}));",
            f"memset({y} + {p}nown, 0, (size_t)({total}) * sizeof({t}));",
        ]
    fields = (AGREEMENT - 2) // 2  # a status, a stale flag, then each field's max and -min
    differ = " || ".join(
        ["spf_top[0] != 0", "spf_top[1] != 0"]
        + [f"spf_top[{2 + n}] != -spf_top[{2 + fields + n}]" for n in range(fields)]
    )
    body += [
        "/* a repeated call: agree with the other ranks before anything is sent */",
        "if (spf_agree != NULL) {",
        f"  MPI_Allreduce(spf_agree, spf_top, {AGREEMENT}, MPI_INT64_T, MPI_MAX, {COMM});",
        f"  if ({differ}) {{ free(spf_req); return 1; }}  /* some rank's call differs */",
        "}",
    ]
    for tag, x in enumerate(layout.ghost_reads):
        mt, p = MPI_TYPES[ctypes[x]], f"spf_{x}_"
        body += [
            f"/* ghosts of {x}: receive into {x}[{p}nown ..], send what others need */",
            "for (int64_t spf_p = 0; spf_p < spf_P; spf_p++)",
            f"  if ({p}rcnt[spf_p] > 0)",
            f"    MPI_Irecv({x} + {p}nown + {p}rdsp[spf_p], (int){p}rcnt[spf_p], {mt}, (int)spf_p, "
            f"{TAG + tag}, {COMM}, &spf_req[spf_nreq++]);",
            "for (int64_t spf_p = 0; spf_p < spf_P; spf_p++)",
            f"  if ({p}scnt[spf_p] > 0)",
            f"    MPI_Isend({p}sbuf + {p}sdsp[spf_p], (int){p}scnt[spf_p], {mt}, (int)spf_p, "
            f"{TAG + tag}, {COMM}, &spf_req[spf_nreq++]);",
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
        lo, hi = "spf_outer[2 * spf_r]", "spf_outer[2 * spf_r + 1]"
        body += [
            f"/* {x}: the entries rows with ghosts wrote, back to the caller's {x} */",
            "for (int64_t spf_r = 0; spf_r < spf_nouter; spf_r++)",
            f"  memcpy(spf_{x}_user + {lo}, {x} + {lo}, (size_t)({hi} - {lo}) * "
            f"sizeof({ctypes[x]}));",
        ]
    body += ["free(spf_req);", "return 0;"]
    lines += [f"  {line}" for line in body]
    lines.append("}")
    return local_source + "\n".join(lines) + "\n"


def _count(arg: Arg) -> int:
    count = 1
    for extent in arg.shape or ():
        count *= int(extent)
    return count


__all__ = ["executor_args", "executor_source", "plan_args", "prototype"]

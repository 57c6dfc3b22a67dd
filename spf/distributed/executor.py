"""The executor of a row-distributed computation: one C + MPI translation unit.

It holds the local function (:func:`spf.distributed.derived.local_computation`, generated
by the C printer) and the executor, ``int <name>(MPI_Comm comm, <mode>, <agreement>, <plan>,
<local args>)``, which for one call

1. posts ``MPI_Irecv`` of each ghost-read vector's ghosts into its compact buffer (after the
   rank's own entries), first, so that a neighbour's send finds it posted; then packs what
   the neighbours need and posts ``MPI_Isend`` of it;
2. in ``spf_mode`` 1 (a call while the communicator is *armed*,
   :mod:`spf.distributed.protocol`) sends this rank's agreement integers to every other
   rank and receives theirs (``MPI_Isend``/``MPI_Irecv``, tag ``AGREE_TAG``), completed at
   the *verdict point*, the executor's first synchronisation (the wait for the ghosts, or a
   reduction's sum if one comes first), where their maximum is the verdict: no collective
   of its own, and a rank waits only for the others to have *posted* their call;
3. copies into the compact buffer the rank's own entries that rows reading ghosts touch
   (those the inspector marked, and the rows themselves for a vector also indexed by the
   loop, ``layout.rowwise``), after the messages were posted, so that the copy overlaps
   their transfer: rows without ghosts read and write the caller's array itself, so no
   call copies the rank's whole block unless all its rows read ghosts;
4. sets up the buffers of vectors written through an index array (the rank's entries, then
   zeroed slots for other ranks' entries) and zeroes the replicated accumulators (their
   values on entry are added back at the end);
5. runs the local function on the runs of rows that read no ghost, while messages travel;
6. ``MPI_Waitall`` of the receives (the ghosts, the agreement; the sends are waited for only
   before returning, so a rank's rows never wait for a neighbour to have taken what it sent,
   one scheduling round less on a loaded machine); in mode 1, when some rank's call differs
   (the agreement's verdict, the same on every rank), saves the accumulators (entry values
   and partial sums) in ``spf_keep``, puts the entry values back and returns 1; the caller
   settles it and, for a new plan, calls again in mode 2, which skips the work done before
   the verdict point (it holds under the new plan: a rank whose call repeats keeps its
   ghosts and rows) and takes the accumulators back from ``spf_keep``; then runs the rows
   that read ghosts;
7. sends what rows wrote through an index array into other ranks' entries to their owners,
   which add it to theirs (in neighbour order: the same sum on every run);
8. ``MPI_Allreduce`` sums the accumulators over the ranks.

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
    from collections.abc import Callable

    from spf.codegen.signature import Arg, Signature
    from spf.distributed.analysis import Layout
    from spf.distributed.prefix import Lowered

COMM = "comm"
AGREE_TAG = TAG + 128
"""The tag of the agreement integers each rank sends every other rank (mode 1, and a
drain, :mod:`spf.distributed.protocol`)."""

PLAN_ARRAYS = ("scnt", "sdsp", "sidx", "rcnt", "rdsp")
"""Per exchanged vector ``x``: ``spf_x_scnt[p]`` entries sent to rank ``p`` from
``spf_x_sbuf + spf_x_sdsp[p]``, packed from local indices ``spf_x_sidx``; ``spf_x_rcnt[p]``
ghosts received from ``p`` at ``x + spf_x_nown + spf_x_rdsp[spf_p]``; for a ghost-read vector,
``spf_x_nnear`` pairs ``[lo, hi)`` of local indices in ``spf_x_near``: the rank's entries
rows with ghosts touch, the only ones copied into the compact buffer."""


def plan_args(
    layout: Layout, ctypes: dict[str, str], split: Lowered | None = None
) -> list[tuple[str, str]]:
    """``(C declaration, name)`` of the plan arguments, in order."""
    out: list[tuple[str, str]] = [
        ("int64_t spf_mode", "spf_mode"),
        ("const int64_t *spf_agree", "spf_agree"),
        ("int64_t *spf_top", "spf_top"),
        ("unsigned char *spf_keep", "spf_keep"),
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
            out.append((f"int64_t spf_{name}_nsrun", f"spf_{name}_nsrun"))
            out.append((f"const int64_t *spf_{name}_srun", f"spf_{name}_srun"))
        if name in layout.shifted:  # a window: ghosts received apart, then placed
            out.append((f"const int64_t *spf_{name}_gpos", f"spf_{name}_gpos"))
            out.append((f"{ctypes[name]} *spf_{name}_stage", f"spf_{name}_stage"))
            out.append((f"int64_t spf_{name}_nown_runs", f"spf_{name}_nown_runs"))
            out.append((f"const int64_t *spf_{name}_own", f"spf_{name}_own"))
    for runs in ("inner", "outer"):
        out.append((f"int64_t spf_n{runs}", f"spf_n{runs}"))
        out.append((f"const int64_t *spf_{runs}", f"spf_{runs}"))
    if split is not None:  # each row with ghosts: its first iteration that reads one
        out.append((f"const {split.ctype} *spf_split", "spf_split"))
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
    split: Lowered | None = None,
) -> str:
    ctypes = {a.name: a.ctype for a in local.args}
    decls = [f"{comm_type} {COMM}", *(d for d, _ in plan_args(layout, ctypes, split))]
    decls += [a.c_decl(restrict) for a in executor_args(local, layout)]
    return f"int {name}({', '.join(decls)})"


CHUNK = 4096
"""Rows run before the wait call ``MPI_Testall`` after every this many rows: a message
larger than the eager limit moves only while its sender is inside MPI (without a
single-copy transport), so a rank busy with its rows would leave its peer waiting."""


def _chunked(call: Callable[[str, str], str], which: str, progress: bool) -> list[str]:
    """The loop over the runs of rows in ``spf_<which>``; with ``progress``, each run in
    chunks of ``CHUNK`` rows, the pending messages progressed after each."""
    lo, hi = f"spf_{which}[2 * spf_r]", f"spf_{which}[2 * spf_r + 1]"
    head = f"for (int64_t spf_r = 0; spf_r < spf_n{which}; spf_r++)"
    if not progress:
        return [head, f"  {call(lo, hi)}"]
    start, end = f"spf_{which}[spf_r * 2]", f"spf_{which}[spf_r * 2 + 1]"
    return [
        head,
        f"  for (int64_t spf_c = {start}; spf_c < {end}; spf_c += {CHUNK}) {{",
        f"    {call('spf_c', f'spf_min(spf_c + {CHUNK}, {hi})')}",
        "    if (spf_nreq > 0) {",
        "      int spf_done = 0;",
        "      MPI_Testall(spf_nreq, spf_req, &spf_done, MPI_STATUSES_IGNORE);",
        "      if (spf_done) spf_nreq = 0;",
        "    } else if (spf_nsreq > 0) {",
        "      int spf_done = 0;",
        "      MPI_Testall(spf_nsreq, spf_sreq, &spf_done, MPI_STATUSES_IGNORE);",
        "      if (spf_done) spf_nsreq = 0;",
        "    }",
        "  }",
    ]


def _runs(
    local: Signature, layout: Layout, which: str, phase: int, progress: bool = False
) -> list[str]:
    """Call the local function on each run of rows in ``spf_<which>`` (phase ``phase``);
    rows without ghosts read and write the caller's ghost-read vectors in place."""
    ctypes = {a.name: a.ctype for a in local.args}
    direct = {
        x: f"({ctypes[x]} *)spf_{x}_user"
        for x in layout.ghost_reads
        if which == "inner" and x not in layout.shifted
    }
    return _chunked(lambda lo, hi: _call(local, lo, hi, phase, direct), which, progress)


def _call(
    local: Signature, lo: str, hi: str, phase: int, instead: dict[str, str] | None = None
) -> str:
    values = {LO: lo, HI: hi, PHASE: str(phase), **(instead or {})}
    args = ", ".join(values.get(a.name, a.name) for a in local.args)
    return f"{local.function}({args});"


class _Verdict:
    """Where the verdict point is in the body being printed, and the accumulators saved
    before it (their slots in ``spf_keep``: entry values, then partial sums)."""

    def __init__(self) -> None:
        self.done = False
        self.saved: list[tuple[str, str, int]] = []  # (entry copy, accumulator, offset)
        self.size = 0

    def before(self, lines: list[str]) -> list[str]:
        """Work before the verdict point is skipped when resuming (mode 2): it was done."""
        if self.done or not lines:
            return lines
        return ["if (spf_mode != 2) {", *(f"  {line}" for line in lines), "}"]

    def point(self, waited: bool) -> list[str]:
        """The verdict point: the wait (unless just made) and, in mode 1, the check."""
        if self.done:
            return []
        self.done = True
        lines = [] if waited else [_WAIT, "spf_nreq = 0;"]
        keep = []
        for copy, acc, off in self.saved:
            keep += [
                f"  memcpy(spf_keep + {off}, {copy}, sizeof({copy}));",
                f"  memcpy(spf_keep + {off} + sizeof({copy}), {acc}, sizeof({copy}));",
                f"  memcpy({acc}, {copy}, sizeof({copy}));",
            ]
        a = AGREEMENT
        return [
            *lines,
            "if (spf_mode == 1) {",
            f"  for (int spf_q = 0; spf_q < {a}; spf_q++) {{",
            "    spf_top[spf_q] = spf_agree[spf_q];",
            "    for (int64_t spf_p = 1; spf_p <= spf_P; spf_p++)",
            f"      if (spf_p != spf_me + 1 && spf_top[{a} * spf_p + spf_q] > spf_top[spf_q])",
            f"        spf_top[spf_q] = spf_top[{a} * spf_p + spf_q];",
            "  }",
            "}",
            f"if (spf_mode == 1 && ({_differ()})) {{  /* some rank's call differs */",
            *keep,
            f"  {_SEND_WAIT}",
            "  free(spf_req);",
            "  return 1;",
            "}",
        ]

    def save(self, r: Arg, k: int) -> list[str]:
        """Zero accumulator ``r`` for phase ``k`` (its entry value kept); resuming, take
        both back from ``spf_keep``."""
        count, copy = _count(r), f"spf_{r.name}_in{k}"
        zero = (
            f"for (int spf_q = 0; spf_q < {count}; spf_q++) {{ {copy}[spf_q] = "
            f"{r.name}[spf_q]; {r.name}[spf_q] = 0; }}"
        )
        lines = [f"{r.ctype} {copy}[{count}];"]
        if self.done:
            return [*lines, zero]
        off = self.size
        self.saved.append((copy, r.name, off))
        self.size += 2 * 8 * count
        return [
            *lines,
            f"if (spf_mode != 2) {{ {zero} }}",
            f"else {{ memcpy({copy}, spf_keep + {off}, sizeof({copy})); "
            f"memcpy({r.name}, spf_keep + {off} + sizeof({copy}), sizeof({copy})); }}",
        ]


_WAIT = "MPI_Waitall(spf_nreq, spf_req, MPI_STATUSES_IGNORE);"
_SEND_WAIT = "MPI_Waitall(spf_nsreq, spf_sreq, MPI_STATUSES_IGNORE);"


def _differ() -> str:
    """C: the agreement's result says some rank's call differs (a status, a stale plan, a
    rank that only drained, or a field whose maximum is not minus its minimum)."""
    fields = (AGREEMENT - 3) // 2
    return " || ".join(
        ["spf_top[0] != 0", "spf_top[1] != 0", "spf_top[2] != 0"]
        + [f"spf_top[{3 + n}] != -spf_top[{3 + fields + n}]" for n in range(fields)]
    )


def keep_size(local: Signature, layout: Layout) -> int:
    """Bytes of ``spf_keep``: the accumulators saved at the verdict point."""
    return _phases(local, layout, [a for a in local.args if a.name in layout.reductions])[1]


def _split_runs(split: Lowered, before_wait: bool) -> list[str]:
    return _chunked(lambda lo, hi: split.call(lo, hi, before_wait), "outer", before_wait)


def _phases(
    local: Signature, layout: Layout, reductions: list[Arg], split: Lowered | None = None
) -> tuple[list[str], int]:
    """The phases in order: rows without ghosts, the wait before the first phase reading
    ghosts, rows with ghosts; each phase's accumulations summed over the ranks after it;
    the verdict point at the first wait or sum. Also the bytes ``spf_keep`` needs."""
    body: list[str] = []
    by_name = {r.name: r for r in reductions}
    reading = {g.stmt for g in layout.accesses if not g.write}
    verdict = _Verdict()
    waited = False
    for k, phase in enumerate(layout.phases):
        mine = [by_name[n] for n in phase.reductions if n in by_name]
        for r in mine:
            body += verdict.save(r, k)
        if phase.replicated:
            body += verdict.before(
                [
                    f"/* phase {k}: {', '.join(phase.stmts)} on every rank */",
                    _call(local, "0", "0", k),
                ]
            )
        else:
            body += verdict.before(
                [f"/* phase {k}: rows that read no ghost, while the messages travel */",
                 *_runs(local, layout, "inner", k, progress=not waited)]
            )  # fmt: skip
            cut = split is not None and split.split.phase == k
            if cut:
                assert split is not None
                body += verdict.before(
                    ["/* rows that read ghosts: up to their first ghost */",
                     *_split_runs(split, before_wait=True)]
                )  # fmt: skip
            if not waited and reading & set(phase.stmts):
                body += [_WAIT, "spf_nreq = 0;", *verdict.point(waited=True)]
                body += _place(layout)
                waited = True
            if cut:
                assert split is not None
                body += ["/* rows that read ghosts: the rest */", *_split_runs(split, False)]
            else:
                body += verdict.before(
                    [f"/* phase {k}: rows that read ghosts */", *_runs(local, layout, "outer", k)]
                )
        for r in mine:
            count = _count(r)
            body += verdict.point(waited=False)
            body += [
                f"/* {r.name}: the sum over the ranks, added to its value before phase {k} */",
                f"MPI_Allreduce(MPI_IN_PLACE, {r.name}, {count}, {MPI_TYPES[r.ctype]}, MPI_SUM, "
                f"{COMM});",
                f"for (int spf_q = 0; spf_q < {count}; spf_q++) {r.name}[spf_q] = "
                f"spf_{r.name}_in{k}[spf_q] + {r.name}[spf_q];",
            ]
    if not waited:
        body += [_WAIT, "spf_nreq = 0;"]
    body += verdict.point(waited=True)
    return body, verdict.size


def executor_source(
    name: str, local_source: str, local: Signature, layout: Layout, split: Lowered | None = None
) -> str:
    """The translation unit: the local function (and, with ``split``, the function of the
    phase whose rows with ghosts split at their first ghost, :mod:`spf.distributed.prefix`),
    then the executor (module docstring)."""
    ctypes = {a.name: a.ctype for a in local.args}
    reductions = [a for a in local.args if a.name in layout.reductions]
    lines = ["", "#include <mpi.h>", "#include <string.h>", "#ifdef _OPENMP", "#include <omp.h>",
             "#endif", ""]  # fmt: skip
    lines.append(prototype(name, local, layout, split=split))
    lines.append("{")
    body: list[str] = []
    nreq = f"2 * spf_P * {max(1, len(layout.ghost_reads)) + 1}"  # + the agreement
    body.append(f"const int64_t spf_nreq_max = {nreq};")
    body.append(
        "MPI_Request *spf_req = (MPI_Request *)malloc(2 * (size_t)spf_nreq_max * "
        "sizeof(MPI_Request));"
    )
    body.append(f"if (spf_req == NULL) {{ MPI_Abort({COMM}, 1); return -1; }}")
    body.append("int spf_nreq = 0;")
    body += [
        "/* the sends' requests: waited for only before returning, so that the rows wait for",
        "   what they read, not for the neighbours to have taken what this rank sent */",
        "MPI_Request *spf_sreq = spf_req + spf_nreq_max;",
        "int spf_nsreq = 0;",
    ]
    body.append("int spf_me = 0;")
    body += [
        "/* the team this call's parallel regions start with (kernel.last_threads) */",
        "#ifdef _OPENMP",
        f"spf_top[(spf_P + 1) * {AGREEMENT}] = omp_get_max_threads();",
        "#else",
        f"spf_top[(spf_P + 1) * {AGREEMENT}] = 1;",
        "#endif",
    ]
    for tag, x in enumerate(layout.ghost_reads):
        mt, p = MPI_TYPES[ctypes[x]], f"spf_{x}_"
        into = f"{p}stage" if x in layout.shifted else f"{x} + {p}nown"
        body += [
            f"/* ghosts of {x}: receive into {x}[{p}nown ..] (posted first, so that a peer's "
            "send matches at once); pack what the neighbours need and send it */",
            "for (int64_t spf_p = 0; spf_p < spf_P; spf_p++)",
            f"  if ({p}rcnt[spf_p] > 0)",
            f"    MPI_Irecv({into} + {p}rdsp[spf_p], (int){p}rcnt[spf_p], {mt}, (int)spf_p, "
            f"{TAG + tag}, {COMM}, &spf_req[spf_nreq++]);",
            *_pack(x, ctypes[x]),
            "for (int64_t spf_p = 0; spf_p < spf_P; spf_p++)",
            f"  if ({p}scnt[spf_p] > 0)",
            f"    MPI_Isend({p}sbuf + {p}sdsp[spf_p], (int){p}scnt[spf_p], {mt}, (int)spf_p, "
            f"{TAG + tag}, {COMM}, &spf_sreq[spf_nsreq++]);",
        ]
    a = AGREEMENT
    body += [
        "/* armed: this rank's agreement integers to every other rank, theirs into spf_top "
        "(row 1 + p); the verdict, their maximum, comes at the first wait */",
        "if (spf_mode == 1) {",
        f"  MPI_Comm_rank({COMM}, &spf_me);",
        "  for (int64_t spf_p = 0; spf_p < spf_P; spf_p++)",
        "    if (spf_p != spf_me) {",
        f"      MPI_Irecv(spf_top + {a} * (1 + spf_p), {a}, MPI_INT64_T, (int)spf_p, "
        f"{AGREE_TAG}, {COMM}, &spf_req[spf_nreq++]);",
        f"      MPI_Isend(spf_agree, {a}, MPI_INT64_T, (int)spf_p, {AGREE_TAG}, {COMM}, "
        "&spf_sreq[spf_nsreq++]);",
        "    }",
        "}",
    ]
    for x in layout.ghost_reads:
        t, p = ctypes[x], f"spf_{x}_"
        lo, hi = f"{p}near[2 * spf_q]", f"{p}near[2 * spf_q + 1]"
        if x in layout.shifted:
            body += [
                f"/* {x}: the rank's entries into its window (while the messages travel) */",
                f"for (int64_t spf_q = 0; spf_q < {p}nown_runs; spf_q++)",
                f"  memcpy({x} + {p}own[3 * spf_q], {p}user + {p}own[3 * spf_q + 1], "
                f"(size_t)({p}own[3 * spf_q + 2] - {p}own[3 * spf_q + 1]) * sizeof({t}));",
            ]
            continue
        body += [
            f"/* {x}: copy the own entries rows with ghosts read (while the messages travel) */",
            f"for (int64_t spf_q = 0; spf_q < {p}nnear; spf_q++)",
            f"  memcpy({x} + {lo}, {p}user + {lo}, (size_t)({hi} - {lo}) * sizeof({t}));",
        ]
    for y in layout.remote_writes:
        t, p = ctypes[y], f"spf_{y}_"
        total = f"{p}rdsp[spf_P - 1] + {p}rcnt[spf_P - 1]"
        body += [
            f"/* {y}: the rank's entries, then zeroed slots for other ranks' entries (resuming,"
            " the buffer holds the sums made before the verdict point) */",
            "if (spf_mode != 2) {",
            f"  memcpy({y}, {p}user, (size_t){p}nown * sizeof({t}));",
            f"  memset({y} + {p}nown, 0, (size_t)({total}) * sizeof({t}));",
            "}",
        ]
    body += _phases(local, layout, reductions, split)[0]
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
    body += [_SEND_WAIT, "free(spf_req);", "return 0;"]
    lines += [f"  {line}" for line in body]
    lines.append("}")
    functions = local_source + ("" if split is None else split.source)
    return functions + "\n".join(lines) + "\n"


def _place(layout: Layout) -> list[str]:
    """C: the ghosts of each window-read vector, received apart, to their window slots."""
    lines = []
    for x in layout.shifted:
        p = f"spf_{x}_"
        lines += [
            f"/* {x}: the ghosts to their places in the window */",
            f"for (int64_t spf_q = 0; spf_q < {p}rdsp[spf_P - 1] + {p}rcnt[spf_P - 1]; spf_q++)",
            f"  {x}[{p}gpos[spf_q]] = {p}stage[spf_q];",
        ]
    return lines


def _pack(x: str, ctype: str) -> list[str]:
    """C: the send buffer of ghost-read vector ``x``, by runs (``spf_x_nsrun`` of them, a
    ``memcpy`` each) or, when the plan found them too short (``spf_x_nsrun`` < 0), entry by
    entry (:meth:`spf.distributed.plan.ExchangePlan.send_runs`)."""
    p = f"spf_{x}_"
    lo, hi = f"{p}srun[2 * spf_q]", f"{p}srun[2 * spf_q + 1]"
    return [
        f"if ({p}nsrun >= 0) {{",
        "  int64_t spf_d = 0;",
        f"  for (int64_t spf_q = 0; spf_q < {p}nsrun; spf_q++) {{",
        f"    memcpy({p}sbuf + spf_d, {p}user + {lo}, (size_t)({hi} - {lo}) * sizeof({ctype}));",
        f"    spf_d += {hi} - {lo};",
        "  }",
        "} else {",
        f"  for (int64_t spf_q = 0; spf_q < {p}sdsp[spf_P - 1] + {p}scnt[spf_P - 1]; spf_q++)",
        f"    {p}sbuf[spf_q] = {p}user[{p}sidx[spf_q]];",
        f"}}  /* {x}: packed */",
    ]


def _count(arg: Arg) -> int:
    count = 1
    for extent in arg.shape or ():
        count *= int(extent)
    return count


__all__ = ["AGREE_TAG", "executor_args", "executor_source", "keep_size", "plan_args", "prototype"]

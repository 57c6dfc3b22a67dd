"""The C + MPI printer: a ``Program`` -> one translation unit (docs/backends/c.md, target "mpi").

The C printer (:class:`~spf.codegen.c.CPrinter`) does the statements and loops; this printer
adds what distributed memory needs:

* **Signature.** The communicator comes first: ``void f(MPI_Comm comm, <the C signature>)``.
  Every rank calls the function with its own local arrays (the data spaces are rank-local).
* **Rank binding.** A loop tagged ``distribute`` is not a loop: rank ``r`` runs the one
  iteration whose variable equals ``r`` (``const int64_t q = spf_rank;``), guarded by the loop's
  bounds (a rank outside them runs nothing). Accesses inside it index the rank's local arrays.
  The scanner keeps a distributed loop of one iteration (``P == 1``, or ``q = 0`` split off a
  range that starts at 1 for other statements) as a loop ``q = v .. v``
  (:func:`spf.codegen.scan.hoist_kept_loops`), so it is bound the same way: only rank ``v``
  runs it. A send or receive outside every distributed loop is refused.
* **Communication** (``comp.send``/``comp.receive``: :class:`~spf.codegen.program.Operation`
  on a statement macro). A send is ``MPI_Isend``, a receive ``MPI_Irecv``, of ``count``
  elements starting at ``&buffer(index)``, to/from rank ``peer``, with one tag on ``comm``:
  the k-th message a rank sends to a peer matches the k-th receive that peer posts from it
  (MPI's non-overtaking order), so sends and receives pair up in schedule order. Requests are
  collected and completed with ``MPI_Waitall``:

  - before a statement that touches (reads or writes) a buffer with an operation that may
    still be pending (statements are analysed in schedule order; a loop body is analysed with
    what earlier iterations may leave pending);
  - before a barrier (``comp.barrier_at``, printed as ``MPI_Barrier(comm)``);
  - before the function returns.

  Each completed receive is checked against its count (``MPI_Get_count``), and an MPI error
  of a request (a truncated message) is read: ranks that pass different counts abort the job
  with the operation, the peer and both counts, instead of keeping unwritten or truncated
  entries (mpi4py's communicators return errors rather than abort).

  Nothing blocks between the posting of the operations of one exchange, so the supported
  pattern cannot deadlock: every rank runs the same program, and each send's matching receive
  is posted by the peer before the peer's next wait (send and receive of one exchange are
  scheduled next to each other, before the statements that use the received data). Operations
  of one exchange must touch disjoint elements (MPI forbids writing a buffer that is still
  being sent or received). The ``count`` elements from ``index`` are consecutive in memory,
  in row-major order (two whole rows: ``count = 2*W`` from ``(i, 0)``); the operation's
  access relation is that run (:mod:`spf.computation.regions`). Statements between the
  posting and the wait that touch other data overlap with the communication. A barrier is
  collective: every rank of ``comm`` must reach it as often as the others (run with as many
  ranks as the distributed loop has iterations).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.codegen import faults
from spf.codegen.c import (
    PRELUDE,
    PRELUDE_MACROS,
    CPrinter,
    check_stack_buffers,
    expr,
    loop_tree,
    on_heap,
    stack_elements,
    uses_bool,
)
from spf.codegen.loop_ast import Alloc, Bind, Block, Call, Expr, For, If, Merge, Node, walk
from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.codegen.program import Operation, Program, StmtMacro
    from spf.codegen.signature import Signature
    from spf.codegen.unit import TranslationUnit

_WORD = re.compile(r"[A-Za-z_]\w*")

COMM = "comm"
"""Name of the communicator argument (first argument of the generated function)."""

MPI_TYPES = {
    "double": "MPI_DOUBLE",
    "float": "MPI_FLOAT",
    "int": "MPI_INT",
    "long": "MPI_LONG",
    "char": "MPI_CHAR",
    "bool": "MPI_C_BOOL",
    "int8_t": "MPI_INT8_T",
    "int16_t": "MPI_INT16_T",
    "int32_t": "MPI_INT32_T",
    "int64_t": "MPI_INT64_T",
    "uint8_t": "MPI_UINT8_T",
    "uint16_t": "MPI_UINT16_T",
    "uint32_t": "MPI_UINT32_T",
    "uint64_t": "MPI_UINT64_T",
}
"""MPI datatype of each element C type a data space may have."""

REQUESTS = "spf_mpi_requests"
"""The type of a call's pending requests: declared in a unit (:data:`MPI_RUNTIME`) only when
the function sends, receives or meets at a barrier (:class:`spf.runtime.mpi.MPIKernel`
agrees with the other ranks before calling such a function)."""

TAG = 2747
"""The message tag of every spf message (the communicator separates programs)."""

MPI_RUNTIME = f"""\
#include <limits.h>
#include <stdio.h>

/* What a posted request must deliver: a receive its count of elements (count -1: a send). */
typedef struct {{
  const char *op;
  MPI_Datatype type;
  int count;
  int peer;
}} spf_mpi_expect;

/* Pending non-blocking requests of one call (completed by spf_mpi_waitall). */
typedef struct {{
  MPI_Request *req;
  spf_mpi_expect *expect;
  int n;
  int cap;
  int size;
  MPI_Comm comm;
}} spf_mpi_requests;

/* A completed request: MPI's error, or a receive of another count than this rank posted
   (its peer sent fewer elements: the ranks disagree on a parameter of the count), aborts the
   job with what differs instead of leaving entries unwritten or truncated. */
static inline void spf_mpi_done(spf_mpi_requests *r, const spf_mpi_expect *e, MPI_Status *st,
                                int failed)
{{
  int got = 0;
  if (failed && st->MPI_ERROR != MPI_SUCCESS && st->MPI_ERROR != MPI_ERR_PENDING) {{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(st->MPI_ERROR, text, &len);
    fprintf(stderr, "spf: %s (rank %d): %s; the ranks disagree on the count of a message "
            "(pass every rank the same parameters)\\n", e->op, e->peer, text);
    MPI_Abort(r->comm, 1);
  }}
  if (e->count < 0)
    return;
  MPI_Get_count(st, e->type, &got);
  if (got != e->count) {{
    fprintf(stderr, "spf: %s: received %d elements from rank %d, where this rank receives %d; "
            "the ranks disagree on the count of a message (pass every rank the same "
            "parameters)\\n", e->op, got, e->peer, e->count);
    MPI_Abort(r->comm, 1);
  }}
}}

static inline void spf_mpi_waitall(spf_mpi_requests *r)
{{
  if (r->n > 0) {{
    MPI_Status *st = (MPI_Status *)malloc((size_t)r->n * sizeof(MPI_Status));
    int rc = MPI_Waitall(r->n, r->req, st != NULL ? st : MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS && (st == NULL || rc != MPI_ERR_IN_STATUS)) {{
      char text[MPI_MAX_ERROR_STRING];
      int len = 0;
      MPI_Error_string(rc, text, &len);
      fprintf(stderr, "spf: a message of this call failed: %s\\n", text);
      MPI_Abort(r->comm, 1);
    }}
    if (st != NULL)
      for (int i = 0; i < r->n; i++)
        spf_mpi_done(r, &r->expect[i], &st[i], rc != MPI_SUCCESS);
    free(st);
  }}
  r->n = 0;
}}

/* A slot for one more request; -1 only when no memory could be had at all. */
static inline int spf_mpi_slot(spf_mpi_requests *r)
{{
  if (r->n == r->cap) {{
    int cap = r->cap > 0 ? 2 * r->cap : 64;
    MPI_Request *grown = (MPI_Request *)realloc(r->req, (size_t)cap * sizeof(MPI_Request));
    if (grown != NULL)
      r->req = grown;
    spf_mpi_expect *more =
        grown == NULL ? NULL
                      : (spf_mpi_expect *)realloc(r->expect, (size_t)cap * sizeof(spf_mpi_expect));
    if (more != NULL) {{
      r->expect = more;
      r->cap = cap;
    }} else {{
      spf_mpi_waitall(r); /* out of memory: complete what is posted, reuse the slots */
      if (r->cap == 0)
        return -1;
    }}
  }}
  return r->n++;
}}

/* Post one request (a slot's, or waited for at once when there is no memory for one). */
static inline void spf_mpi_post(spf_mpi_requests *r, int send, const char *op, void *buf, int n,
                                MPI_Datatype type, int64_t peer)
{{
  int slot = spf_mpi_slot(r);
  spf_mpi_expect e = {{op, type, send ? -1 : n, (int)peer}};
  MPI_Request one;
  MPI_Request *req = slot >= 0 ? &r->req[slot] : &one;
  if (send)
    MPI_Isend(buf, n, type, (int)peer, {TAG}, r->comm, req);
  else
    MPI_Irecv(buf, n, type, (int)peer, {TAG}, r->comm, req);
  if (slot >= 0) {{
    r->expect[slot] = e;
  }} else {{
    MPI_Status st;
    int rc = MPI_Wait(&one, &st);
    if (rc != MPI_SUCCESS)
      st.MPI_ERROR = rc; /* a single completion leaves the field to the caller */
    spf_mpi_done(r, &e, &st, rc != MPI_SUCCESS);
  }}
}}

static inline int spf_mpi_check(spf_mpi_requests *r, const char *op, int64_t count, int64_t peer)
{{
  if (count > INT_MAX) {{
    fprintf(stderr, "spf: %s: count %lld exceeds INT_MAX\\n", op, (long long)count);
    MPI_Abort(r->comm, 1);
  }}
  if (peer < 0 || peer >= r->size) {{
    fprintf(stderr, "spf: %s: peer rank %lld is outside the communicator (size %d)\\n", op,
            (long long)peer, r->size);
    MPI_Abort(r->comm, 1);
  }}
  return count > 0 ? (int)count : 0;
}}

static inline void spf_mpi_isend(spf_mpi_requests *r, const char *op, const void *buf,
                                 int64_t count, MPI_Datatype type, int64_t peer)
{{
  spf_mpi_post(r, 1, op, (void *)buf, spf_mpi_check(r, op, count, peer), type, peer);
}}

static inline void spf_mpi_irecv(spf_mpi_requests *r, const char *op, void *buf,
                                 int64_t count, MPI_Datatype type, int64_t peer)
{{
  spf_mpi_post(r, 0, op, buf, spf_mpi_check(r, op, count, peer), type, peer);
}}

static inline void spf_mpi_barrier(spf_mpi_requests *r)
{{
  spf_mpi_waitall(r);
  MPI_Barrier(r->comm);
}}
"""


def mpi_prototype(signature: Signature, comm_type: str = "MPI_Comm", restrict: bool = True) -> str:
    """``void f(MPI_Comm comm, <C arguments>)`` (``comm_type`` replaces ``MPI_Comm``, e.g. for a
    cffi declaration of the same function, which also leaves out ``restrict``)."""
    args = [f"{comm_type} {COMM}", *(a.c_decl(restrict) for a in signature.args)]
    return f"void {signature.function}({', '.join(args)})"


class MPIPrinter(CPrinter):
    """C + MPI: rank-bound distributed loops, non-blocking point-to-point, barriers."""

    unit_target = "mpi"
    row_scalars = False
    prefetches = False
    shareable = False  # MPI_RUNTIME declares a request type

    def __init__(self, program: Program) -> None:
        super().__init__(program)
        self.ops = {s.name: s.operation for s in program.stmts if s.operation is not None}
        # the memory a name lives in: a data space stored in a buffer lives in the buffer
        self.storage = {b.name: b.name for b in program.buffers}
        self.storage.update({d.name: d.buffer or d.name for d in program.data})
        self.touch = {
            s.name: frozenset(self.storage[n] for n in s.names if n in self.storage)
            for s in program.stmts
            if s.operation is None
        }
        self.pending: set[str] = set()
        """Buffers with an operation that may not have completed at the current point."""
        self._distributed_depth = 0

    # ------------------------------------------------------------------ translation unit

    def unit(self) -> TranslationUnit:
        made = super().unit()
        return replace(made, agreed=self._agreed()) if self.ops else made

    def _agreed(self) -> tuple[str, ...]:
        """The parameters that decide which ranks post which operations: those of the loop
        bounds and conditions around each send, receive and barrier, and of its peer (a
        rank passing another value would skip a message its peer waits for)."""
        params = {a.name for a in self.p.signature.args if a.kind == "param"}
        found: set[str] = set()

        def words(e: Expr) -> frozenset[str]:
            return frozenset(_WORD.findall(expr(e))) & params

        def visit(n: Node, guards: frozenset[str]) -> None:
            if isinstance(n, Call):
                op = self.ops.get(n.stmt)
                if op is not None:
                    found.update(guards, *(words(a) for a in n.args))
                    if op.peer is not None:
                        found.update(frozenset(_WORD.findall(cx.to_c(op.peer))) & params)
                return
            kids, conds = _scoped(n)
            inner = guards.union(*(words(c) for c in conds))
            for kid in kids:
                visit(kid, inner)

        visit(self.p.body, frozenset())
        return tuple(sorted(found))

    def print(self) -> str:
        self._check()
        check_stack_buffers(self.p.buffers, "mpi")
        self.out.line("#include <mpi.h>")
        self.out.raw(PRELUDE)
        if uses_bool(self.p):
            self.out.line("#include <stdbool.h>")
        self.out.macros(PRELUDE_MACROS)
        self.out.chunk(faults.NOTE)
        if self.ops:
            self.out.raw(MPI_RUNTIME)
        self._macros()
        self.out.line("")
        self.out.line(mpi_prototype(self.p.signature))
        self.out.function(self.p.signature.function, mpi_prototype(self.p.signature))
        with self.out.braces():
            self._function_body()
        return self.out.text()

    def _function_body(self) -> None:
        for a in self.p.signature.args:
            self.out.line(f"(void){a.name};")
        self.out.line("int spf_rank = 0;")
        self.out.line("int spf_size = 1;")
        self.out.line(f"MPI_Comm_rank({COMM}, &spf_rank);")
        self.out.line(f"MPI_Comm_size({COMM}, &spf_size);")
        self.out.line("(void)spf_rank;")
        self.out.line("(void)spf_size;")
        recorded = self._fault_record()
        heap = self._function_arrays()
        if self.ops:
            self.out.line(f"spf_mpi_requests spf_mpi = {{NULL, NULL, 0, 0, spf_size, {COMM}}};")
        self.node(self.p.body)
        if self.ops:
            self.out.line("spf_mpi_waitall(&spf_mpi);")
            self.out.line("free(spf_mpi.req);")
            self.out.line("free(spf_mpi.expect);")
        if recorded:
            self._fault_abort()
        if heap:
            self.out.line(self._free().strip())

    def _function_arrays(self) -> list[tuple[str, str, str]]:
        """Declare the function's locals and the buffers it owns (a failed allocation
        aborts the job); returns the heap arrays (freed at the end)."""
        heap = self._heap()  # locals and the buffers the function owns on the heap
        aligned = self._aligned()
        for name, ctype, _ in self.p.locals:
            size = stack_elements(self.p, name)
            if size is not None:  # a scalar or a small fixed array: on the stack
                self.out.line(f"{ctype} {name}[{size}] = {{0}};")
                self.out.line(f"(void){name};")
        for name, ctype, count in heap:
            if name in aligned:
                self._aligned_alloc(name, ctype, count, aligned[name])
                continue
            self.out.line(
                f"{ctype} *restrict {name} = ({ctype} *)calloc((size_t)({count}), sizeof({ctype}));"
            )
        if heap:
            names = " || ".join(f"!{n}{'_raw' if n in aligned else ''}" for n, _, _ in heap)
            self.out.line(f"if ({names}) {{ {self._free()}MPI_Abort({COMM}, 1); return; }}")
        for b in self.p.buffers:  # the function's stack buffers (C arrays)
            if not b.argument and not b.allocated_at and not on_heap(b):
                self.buffer_open(b)
        return heap

    def _fault_record(self) -> bool:
        """Declare the function's fault record (spf.codegen.faults) when it can fault."""
        if not faults.needed(self.p, self.heap_names()):
            return False
        self.out.line(f"int64_t spf_fault[{faults.FAULT_WORDS}] = {{0}};")
        if self.p.index_arrays:
            self.out.line("uint64_t spf_bad = 0, spf_bad_all = 0;")
            self.out.line("(void)spf_bad; (void)spf_bad_all;")
            for line in faults.range_locals(self.p):
                self.out.line(line)
        return True

    def _fault_abort(self) -> None:
        """A process of an MPI program has no caller to report to: a fault aborts the job."""
        if self.p.index_arrays:
            stored = {d.name for d in self.p.data if d.buffer is None}
            for line in faults.rescan(self.p, stored):
                self.out.line(line)
        self.out.line(f"if (spf_fault[0]) MPI_Abort({COMM}, 1);  /* a run-time fault */")

    def _check(self) -> None:
        for a in self.p.signature.args:
            if a.name in (COMM, "spf_rank", "spf_size", "spf_mpi"):
                raise CodegenError(
                    f"target mpi: argument {a.name!r} of {self.p.signature.function} clashes "
                    f"with the communicator or a generated name; rename it"
                )
        for name, op in self.ops.items():
            if op.kind not in ("send", "receive", "barrier"):
                raise CodegenError(
                    f"target mpi: operation {name} is a {op.kind}, which only target cuda "
                    "performs; remove it or generate for cuda"
                )
            if op.kind != "barrier" and op.ctype not in MPI_TYPES:
                raise CodegenError(
                    f"target mpi: {op.kind} {name} moves elements of type {op.ctype}, which has "
                    f"no MPI datatype here; use one of {', '.join(MPI_TYPES)}"
                )

    def _macros(self) -> None:
        full = self.p
        self.p = replace(full, stmts=tuple(s for s in full.stmts if s.operation is None))
        try:
            super()._macros()
        finally:
            self.p = full
        for s in full.stmts:
            if s.operation is not None:
                self.out.line(f"#define {s.name}({', '.join(s.params)}) {_op_text(s)}")
                self.out.macros([s.name])

    # ------------------------------------------------------------------ loop tree

    def node(self, n: Node) -> None:
        if isinstance(n, Call):
            self._call(n)
        elif isinstance(n, For):
            self._loop(n)
        elif isinstance(n, If):
            self._if(n)
        else:
            super().node(n)

    def _call(self, n: Call) -> None:
        op = self.ops.get(n.stmt)
        if op is not None and op.kind != "barrier" and self._distributed_depth == 0:
            raise CodegenError(
                f"target mpi: {op.kind} {n.stmt} is not inside a distributed loop, so every "
                "rank would run all of its iterations; keep the first loop of the operation "
                "distributed (comp.send/comp.receive distribute it)"
            )
        if op is None:
            self._wait_if(self.touch[n.stmt])
            super().node(n)
            return
        self.out.line(f"{n.stmt}({', '.join(expr(a) for a in n.args)});")
        if op.kind == "barrier":
            self.pending.clear()
        elif op.buffer is not None:
            self.pending.add(self.storage.get(op.buffer, op.buffer))

    def _loop(self, n: For) -> None:
        self._wait_if(self._touched(n))
        if "distribute" in n.tags:
            self._distributed(n)
            return
        ops = self._ops_under(n.body)
        if ops and any(t == "parallel" or t.startswith("gpu") for t in n.tags):
            name = next(iter(ops))
            raise CodegenError(
                f"target mpi: operation {name} is inside loop {n.var!r}, which is tagged "
                f"{', '.join(n.tags)}; MPI calls cannot run in parallel threads, so schedule "
                "the operation outside that loop"
            )
        # an iteration may start with what earlier iterations left pending
        self.pending |= {
            self.storage.get(b, b) for s in ops if (b := _buffer(self.ops[s])) is not None
        }
        start = set(self.pending)
        super().node(n)
        self.pending = start

    def _distributed(self, n: For) -> None:
        if self._distributed_depth:
            raise CodegenError(
                f"target mpi: loop {n.var!r} is distributed inside another distributed loop; "
                "ranks form one dimension, so distribute one loop of each statement"
            )
        before = set(self.pending)
        var, init = cx.Name(n.var), loop_tree(n.init)
        cond = cx.Binary("&&", cx.Binary(">=", var, init), loop_tree(n.cond))
        if n.step != 1:
            offset = cx.Binary("%", cx.Binary("-", var, init), cx.Num(str(n.step)))
            cond = cx.Binary("&&", cond, cx.Binary("==", offset, cx.Num("0")))
        with self.out.braces():
            self.out.line(f"const int64_t {n.var} = spf_rank;  /* distributed loop {n.var} */")
            self.out.line(f"if ({cx.to_c(cond)})")
            with self.out.braces():
                self._distributed_depth += 1
                try:
                    self.node(n.body)
                finally:
                    self._distributed_depth -= 1
        self.pending |= before  # ranks outside the loop's bounds skip the body

    def _if(self, n: If) -> None:
        before = set(self.pending)
        self.out.line(f"if ({expr(n.cond)})")
        with self.out.braces():
            self.node(n.then)
        after = self.pending
        self.pending = set(before)
        if n.orelse is not None:
            self.out.line("else")
            with self.out.braces():
                self.node(n.orelse)
        self.pending |= after

    # ------------------------------------------------------------------ analysis

    def _wait_if(self, touched: frozenset[str] | set[str]) -> None:
        if self.pending & touched:
            self.out.line("spf_mpi_waitall(&spf_mpi);")
            self.pending.clear()

    def _touched(self, n: Node) -> set[str]:
        out: set[str] = set()
        for m in walk(n):
            if isinstance(m, Call) and m.stmt in self.touch:
                out |= self.touch[m.stmt]
        return out

    def _ops_under(self, n: Node) -> list[str]:
        return [m.stmt for m in walk(n) if isinstance(m, Call) and m.stmt in self.ops]


def _scoped(n: Node) -> tuple[list[Node], list[Expr]]:
    """The nodes under ``n`` and the expressions that decide whether they run."""
    if isinstance(n, For):
        return [n.body], [n.init, n.cond]
    if isinstance(n, If):
        return [n.then, *([] if n.orelse is None else [n.orelse])], [n.cond]
    if isinstance(n, Block):
        return list(n.items), []
    if isinstance(n, (Bind, Alloc)):
        return [n.body], []
    if isinstance(n, Merge):
        return list(n.bodies()), []
    return [], []


def _buffer(op: Operation) -> str | None:
    return None if op.kind == "barrier" else op.buffer


def _op_text(s: StmtMacro) -> str:
    """The C call an operation's macro expands to."""
    op = s.operation
    assert op is not None
    if op.kind == "barrier":
        return "spf_mpi_barrier(&spf_mpi)"
    if op.buffer is None or op.peer is None:
        raise CodegenError(
            f"target mpi: {op.kind} {s.name} has no {'buffer' if op.buffer is None else 'peer'}"
        )
    index = ", ".join(cx.to_c_arg(i) for i in op.index)
    call = "spf_mpi_isend" if op.kind == "send" else "spf_mpi_irecv"
    count, peer = cx.Cast("int64_t", op.count), cx.Cast("int64_t", op.peer)
    return (
        f'{call}(&spf_mpi, "{op.kind} {s.name}", &{op.buffer}({index}), {cx.to_c(count)}, '
        f"{MPI_TYPES[op.ctype]}, {cx.to_c(peer)})"
    )


def unit_mpi(program: Program) -> TranslationUnit:
    """The MPI translation unit of ``program`` with its record (:mod:`spf.codegen.unit`)."""
    return MPIPrinter(program).unit()


def print_mpi(program: Program) -> str:
    """One C + MPI translation unit (see the module docstring for what it does)."""
    return unit_mpi(program).source


__all__ = [
    "COMM",
    "MPI_TYPES",
    "REQUESTS",
    "MPIPrinter",
    "mpi_prototype",
    "print_mpi",
    "unit_mpi",
]

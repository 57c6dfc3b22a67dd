"""The C99 + OpenMP printer: a ``Program`` -> one translation unit (docs/backends/c.md)."""

from __future__ import annotations

import contextlib
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.cexpr import to_c
from spf.clang import NUMPY_OF_C
from spf.codegen import (
    checked_call,
    each_call,
    faults,
    flat_pairs,
    injective_marks,
    lane_reads,
    prefetch,
    row_blocks,
    row_pairs,
    split_pairs,
)
from spf.codegen.arg_checks import fact_check_lines, read_key
from spf.codegen.each_call import stmt_macro_chunk
from spf.codegen.emitter import Emitter
from spf.codegen.loop_ast import (
    Alloc,
    Bind,
    Block,
    Call,
    Expr,
    For,
    If,
    Int,
    Merge,
    Node,
    Op,
    UFRead,
    Var,
    expr_vars,
    walk,
)
from spf.codegen.macros import Define, define_chunk, of_ufs, uf_element, uf_params
from spf.codegen.partial_sums import sums_for
from spf.codegen.reductions import (
    THREADS_MACROS,
    THREADS_PRELUDE,
    atomic_call,
    reduction_for,
    reduction_loops,
)
from spf.codegen.register_tile import tile_cells
from spf.codegen.row_scalar import NAME as ROW_NAME
from spf.codegen.row_scalar import (
    RowScalar,
    expanded,
    prev_keep_lines,
    prev_open_lines,
    reads_elsewhere,
    touches,
    writes_space,
)
from spf.codegen.row_scalar import call_lines as row_lines
from spf.codegen.row_scalar import find as find_row
from spf.errors import CodegenError, InternalError
from spf.schedule.tags import reduction_option, sums_option

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from spf.analysis.fact_plan import InLoopCheck
    from spf.codegen.arg_checks import BoundKey
    from spf.codegen.program import BufferDecl, Program, StmtMacro
    from spf.codegen.row_blocks import RowBlocks
    from spf.codegen.row_pairs import RowPairs
    from spf.codegen.unit import TranslationUnit

WORKSPACE_PRELUDE = """\
#define spf_ws_stride(n) ((((int64_t)(n)) + 63) / 64 * 64)
#ifdef _OPENMP
#include <omp.h>
#define spf_thread_id() ((int64_t)omp_get_thread_num())
#define spf_thread_count() ((int64_t)omp_get_max_threads())
#else
#define spf_thread_id() ((int64_t)0)
#define spf_thread_count() ((int64_t)1)
#endif
"""
WORKSPACE_MACROS = ("spf_ws_stride", "spf_thread_id", "spf_thread_count")
"""The macros :data:`WORKSPACE_PRELUDE` defines."""

PRELUDE = """\
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
"""
PRELUDE_MACROS = ("spf_floord", "spf_min", "spf_max")
"""The macros :data:`PRELUDE` defines."""


def uses_bool(p: Program) -> bool:
    """Whether an argument, local array or buffer of ``p`` has the element type ``bool``, or
    a statement declares or casts to it (``(bool)(x - 0.5)``), which C (before C23) takes
    from ``<stdbool.h>`` (C++, the CUDA and HLS targets, has it)."""
    types = [a.ctype for a in p.signature.args]
    types += [ctype for _, ctype, _ in p.locals] + [b.ctype for b in p.buffers]
    for s in p.stmts:
        types += _body_types(s.body)
    return any(re.search(r"\bbool\b", t) for t in types)


def _body_types(body: Sequence[cx.Stmt]) -> list[str]:
    """The C types ``body`` declares or casts to."""
    out = [e.ctype for top in cx.stmt_exprs(body) for e in cx.nodes(top) if isinstance(e, cx.Cast)]
    for s in body:
        if isinstance(s, cx.Decl):
            out.append(s.ctype)
        elif isinstance(s, cx.IfStmt):
            out += _body_types(s.then) + _body_types(s.other or ())
        elif isinstance(s, cx.BlockStmt):
            out += _body_types(s.body)
    return out


_INFIX = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"}


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def int_literal(value: int) -> str:
    """C text of an integer constant of the generated int64_t arithmetic; a constant outside
    int64 is a ``CodegenError`` (C would wrap it or reject it), not silently wrong code."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise CodegenError(
            f"the constant {value} does not fit in int64_t, the type of the generated loop "
            "arithmetic; use bounds and parameters within -2**63 .. 2**63 - 1"
        )
    if value == INT64_MIN:  # the literal 9223372036854775808 itself does not fit
        return f"({INT64_MIN + 1} - 1)"
    return str(value)


def expr(e: Expr) -> str:
    """C text of a loop-AST expression (parenthesised where C's precedence needs it)."""
    return to_c(loop_tree(e))


def loop_tree(e: Expr) -> cx.Expr:
    """A loop-AST expression as a C tree (:mod:`spf.cexpr`)."""
    if isinstance(e, Int):
        return cx.Num(int_literal(e.value))
    if isinstance(e, Var):
        return e
    if isinstance(e, UFRead):
        return cx.Call(e.uf, tuple(loop_tree(a) for a in e.args))
    args = tuple(loop_tree(a) for a in e.args)
    if e.op == "neg":
        return cx.Unary("-", args[0])
    if e.op in _INFIX and len(args) == 2:
        return cx.Binary(e.op, args[0], args[1])
    if e.op == "select":
        return cx.Ternary(args[0], args[1], args[2])
    if e.op in ("floord", "min", "max"):
        return cx.Call(f"spf_{e.op}", args[:2])
    raise InternalError(f"spf bug: unknown operation {e.op}")


class CPrinter:
    """Prints statement macros, access macros, UF macros and the function."""

    pragma_parallel = "#pragma omp parallel for"
    pragma_simd = "#pragma omp simd"

    def __init__(self, program: Program) -> None:
        self.p = program
        self.out = Emitter()
        self.macros = {s.name: s for s in program.stmts}
        self._data = {d.name: d for d in program.data}
        self._ctypes = {a.name: a.ctype for a in program.signature.args if a.kind == "data"}
        self._acc: str | None = None  # statement accumulating into spf_acc in this loop
        self._acc_name = "spf_acc"  # the accumulator it adds to (partial_sums: one of several)
        self._tile: tuple[str, str] | None = None  # (statement, spf_tile cell) in a tile loop
        self._simd: str | None = None  # the enclosing loop printed with the simd pragma
        self._reducing: str | None = None  # the option of the enclosing reduction loop
        self._fact_checks: dict[str, list[InLoopCheck]] = {}  # stmt -> checks (checked fn)
        self._fact_values: dict[BoundKey, str] = {}  # UF values bound in scope (fact checks)
        self._fact_flags = False  # fact checks set bits of spf_facts (no parallel region)
        self._row: RowScalar | None = None  # the element kept in spf_row (row_scalar)
        self._prev: RowScalar | None = None  # the row the loop being printed keeps spf_prev of
        self._row_prev = False  # spf_row's region reads spf_prev (row_scalar.prev_open_lines)
        self._one_thread = False  # in the body of a wavefront's rows loop (_prev_of)
        self._blocks: RowBlocks | None = None  # row loop run in pre-checked blocks
        self._pairs: RowPairs | None = None  # row loop whose reads test their pairs
        self._row_first: tuple[str, list[str]] | None = None  # lines opening each row
        self._before: tuple[For, list[str]] | None = None  # lines before a loop (split_pairs)
        self._dense: dict[str, int | None] = {}  # dense monotonic UFs (checked function)
        self._hashed = False  # the checked function hashes its index arrays (arg_checks.hashes)
        self._takes_record = False  # the unchecked function takes a fault record (faults)
        self._plain_body: list[str] = []  # the unchecked function's body as printed
        self._ahead = True  # print the prefetches a loop asks for (not in checked functions)

    target = "c"
    """The target name used in messages."""

    omp_pragmas = True
    """:attr:`pragma_parallel` and :attr:`pragma_simd` are OpenMP pragmas (a target whose
    are comments says False)."""

    unit_target = "c"
    """The target of the unit's record (:meth:`unit`)."""

    shareable = True
    """The unit's file scope holds only the functions and macros the printer notes
    (:attr:`spf.codegen.unit.TranslationUnit.shareable`)."""

    row_scalars = True
    """Keep an element a loop body writes again and again in a local
    (:mod:`spf.codegen.row_scalar`); printers of other targets leave their loops as
    written."""

    prefetches = True
    """Print the prefetches of the rows ahead that a wavefront executor's loop asks for
    (:mod:`spf.codegen.prefetch`, GCC's ``__builtin_prefetch``); printers of other targets
    leave them out."""

    arg_checks = False
    """Also print the checked function (:mod:`spf.codegen.arg_checks`) when the kernel reads
    index arrays (``print_c(..., arg_checks=True)``)."""

    def unit(self) -> TranslationUnit:
        """The translation unit and its record (:mod:`spf.codegen.unit`)."""
        self.print()
        return self.out.unit(self.unit_target, shareable=self.shareable)

    def pragma(self, text: str, *, parallel: bool) -> None:
        """Print :attr:`pragma_parallel` or :attr:`pragma_simd` (``text``), noted as an
        OpenMP pragma where they are one (:attr:`omp_pragmas`)."""
        if self.omp_pragmas:
            self.out.omp(text, parallel=parallel)
        else:
            self.out.line(text)

    def print(self) -> str:
        from spf.codegen import range_pass

        self._check_operations()
        check_stack_buffers(self.p.buffers, self.target)
        self.out.raw(PRELUDE)
        if uses_bool(self.p):
            self.out.line("#include <stdbool.h>")
        self.out.macros(PRELUDE_MACROS)
        if any(option == "privatize" for _, option in reduction_loops(self.p)):
            self.out.raw(THREADS_PRELUDE)
            self.out.macros(THREADS_MACROS)
        if self.p.workspaces:
            self.out.raw(WORKSPACE_PRELUDE)
            self.out.macros(WORKSPACE_MACROS)
        self._macros()
        self.out.line("")
        heap = self.heap_names()
        sig = self.p.signature
        checked = self.arg_checks and any(a.kind == "uf" for a in sig.args)
        ranged = range_pass.ranged(self.p) if checked else frozenset()
        lanes = lane_reads.lanes(self.p, ranged) if checked else frozenset()
        if ranged or lanes:  # a build of the fallback alone (spf.codegen.range_pass) skips these
            self.out.line(f"#ifndef {range_pass.READS_MACRO}")
        record = faults.needed(self.p, heap)
        if record:  # the body takes the call's fault record
            if not self.p.index_arrays:  # else printed with the index macros
                self.out.chunk(faults.NOTE)
            self.out.line(faults.prototype(sig))
            self.out.function(sig.function + faults.FAULTS_SUFFIX, faults.prototype(sig))
            mark = self.out.count()
            self._body_block()
            self._plain_body = self.out.since(mark)
            for line in faults.wrapper(sig):
                self.out.line(line)
            self.out.function(sig.function, sig.c_prototype())
            names = [name for name, *_ in self.p.index_arrays]
            self.out.line(faults.names_function(sig.function, names, heap))
            self.out.function(
                sig.function + faults.NAMES_SUFFIX, faults.names_prototype(sig.function)
            )
        else:
            self.out.line(sig.c_prototype())
            self.out.function(sig.function, sig.c_prototype())
            mark = self.out.count()
            self._body_block()
            self._plain_body = self.out.since(mark)
        if ranged or lanes:
            self.out.line("#endif")
        if checked:
            self._checked_function(ranged, lanes, record)
        return self.out.text()

    def _checked_function(
        self, ranged: frozenset[str], lanes: frozenset[str], fault_record: bool
    ) -> None:
        """The same loops with every UF argument read checked (spf.codegen.arg_checks); with
        index arrays the range pass tests whole (``ranged``: spf.codegen.range_pass) or the
        loops test without a branch (``lanes``: spf.codegen.lane_reads), the checked reads go
        to a fallback function, printed for a build of its own (the first call that needs it
        builds it), and the checked function reads those arrays as they are or clamped."""
        from spf.codegen import arg_checks as ac
        from spf.codegen import range_pass

        dense, zero = ac.dense_monotonic(self.p), ac.zero_based(self.p)
        sig = self.p.signature
        self._hashed = ac.hashes(self.p, fault_record=fault_record, parallel=self.out.parallel)
        self._takes_record = fault_record
        self.out.line("")
        self.out.chunk(ac.read_functions(self.p, dense, zero, self._hashed))
        if self.p.each_call is not None and self.p.each_call.ranges:
            self.out.chunk(each_call.IN_RANGE)
        self.out.chunk(define_chunk(ac.checked_macros(self.p, dense)))
        self.out.chunk(ac.peek_functions(self.p, zero))
        if ranged or lanes:
            self.out.line(f"#ifdef {range_pass.READS_MACRO}")
            self.out.line(range_pass.reads_declaration(self.p))
            self._checked_loops(range_pass.READS_SUFFIX, dense, zero, frozenset())
            self.out.line("#else")
        if ranged:
            self.out.chunk(range_pass.OPAQUE)
            self.out.chunk(define_chunk(range_pass.raw_macros(self.p, ranged)))
        if lanes:
            self.out.chunk(lane_reads.functions(self.p, lanes))
        self._checked_loops(ac.CHECKED_SUFFIX, dense, zero, ranged, lanes)
        program = self.p
        self.out.function(
            sig.function + ac.FACTS_SUFFIX, ac.facts_prototype(program.signature.function)
        )
        self.out.line(
            ac.facts_function(
                program.signature.function,
                {**dense, **dict.fromkeys(ac.prechecked(program))},
                zero,
                program.in_loop_facts,
                ac.overlaps_in_c(program),
                before_loops(program),
                program.implied_facts,
                self._hashed,
            )
        )
        if ranged or lanes:
            self.out.line("#endif")

    def _checked_loops(
        self,
        suffix: str,
        dense: dict[str, int | None],
        zero: frozenset[str],
        ranged: frozenset[str],
        lanes: frozenset[str] = frozenset(),
    ) -> None:
        """One checked function ``<function><suffix>``: the bounds, the tests before the
        loops (and the range pass over ``ranged``, read as they are in the loops), the loops
        with their checks (those of ``lanes`` without a branch, spf.codegen.lane_reads)."""
        from spf.codegen import arg_checks as ac
        from spf.codegen import range_pass

        program = self.p
        self.p = replace(program, body=ac.unordered_reads(program, dense))
        self._fact_checks = ac.checks_by_stmt(program)
        self._fact_flags = bool(self._fact_checks) and ac.serial(program)
        if suffix == ac.CHECKED_SUFFIX and ac.serial(program):
            params = {s.name: s.params for s in program.stmts}
            self._pairs = row_pairs.plan(self.p, self._fact_checks, params)
            if self._pairs is None:
                self._pairs = split_pairs.plan(self.p, self._fact_checks, params)
            if self._pairs is None:
                self._blocks = row_blocks.plan(self.p, self._fact_checks, params)
            else:
                self.out.chunk(row_pairs.helper_chunk(self._pairs))
            self._dense = dense
        prototype = ac.checked_prototype_of(self.p.signature, suffix)
        self.out.line(prototype)
        self.out.function(self.p.signature.function + suffix, prototype)
        known = suffix != range_pass.READS_SUFFIX
        guard = self._pairs.guard if self._pairs is not None else None
        head: list[str] = []
        if guard is not None:
            assert self._pairs is not None
            init, end = expr(self._pairs.init), expr(self._pairs.end)
            head = split_pairs.guard_head(self._pairs, init, end)
        guarded = frozenset() if guard is None else frozenset({guard.ptr, guard.diag})
        first = ac.bound_locals(
            program, zero, known=known, hashed=self._hashed, head=head, guarded=guarded
        )
        if ranged:
            first += range_pass.pass_lines(program, ranged)
        first, last = first + self._each_call_lines(dense, ranged), []
        first += injective_marks.mark_lines(program, program.marks)
        if self._fact_flags:
            first, last = first + ac.fact_flag_lines(True), ac.fact_flag_lines(False)
        if lanes:
            first += lane_reads.first_lines(program, lanes)
            last = lane_reads.last_lines(program, lanes) + last
        shared = (
            suffix == ac.CHECKED_SUFFIX
            and not self._fact_checks
            and self._pairs is None
            and self._blocks is None
            and not lanes
            and not last
            and checked_call.reads_raw(program, dense, ranged)
        )
        mark = self.out.count()
        self._ahead = False  # a prefetch's reads would go through the checks
        try:
            self._body_block(first, last)
        finally:
            self.p = program
            self._fact_checks, self._fact_values = {}, {}
            self._blocks = self._pairs = None
            self._ahead = True
        if shared and checked_call.same_loops(self.out.since(mark), len(first), self._plain_body):
            self.out.replace_since(mark, [])  # the unchecked function runs the same loops
            with self.out.braces():
                for line in first:
                    self.out.line(line)
                self.out.line(checked_call.call_line(program, self._takes_record))

    def _each_call_lines(self, dense: dict[str, int | None], ranged: frozenset[str]) -> list[str]:
        """The each-call facts' check loops, run before the kernel's (spf.codegen.each_call);
        the UFs in ``ranged`` are read as they are after them."""
        from spf.codegen import arg_checks as ac
        from spf.codegen import range_pass

        each = self.p.each_call
        if each is None:
            return []
        sub = CPrinter(each.program)
        sub.node(each.program.body)
        self.out.take_notes(sub.out)
        ours = ac.checked_macros(self.p, dense) + range_pass.raw_macros(self.p, ranged)
        whole = ac.prechecked(self.p)
        flagged = each_call.flagged_reads(self.p, each, whole | ranged, ac.zero_based(self.p))
        raw = frozenset(d.name for d in flagged)
        flat = flat_pairs.plan(each.program, whole, ranged, raw)
        body = sub.out.lines() if flat is None else flat_pairs.lines(flat, expr)
        return each_call.each_call_lines(each, body, of_ufs(ours, each.compared), flagged)

    def _body_block(self, first: list[str] | None = None, last: list[str] | None = None) -> None:
        """The function's body in braces: ``first`` lines, the locals, the loops, ``last``
        lines, then the index-fault rescan and the heap's release."""
        with self.out.braces():
            for line in first or ():
                self.out.line(line)
            self._locals()
            heap = self._heap()
            self._open_heap(heap)
            self._workspace_setup()
            for b in self.p.buffers:
                if not b.argument and not b.allocated_at and not on_heap(b):
                    self.buffer_open(b)
            self.node(self.p.body)
            for line in last or ():
                self.out.line(line)
            if self.p.index_arrays:  # the first entry of each flagged index array
                in_loops = {b.name for b in self.p.buffers if b.allocated_at}
                stored = {d.name for d in self.p.data if d.buffer not in in_loops}
                for line in faults.rescan(self.p, stored):
                    self.out.line(line)
            if heap:
                self.out.line(self._free().strip())

    def _locals(self) -> None:
        """The arguments marked used, index-fault flags and stack locals."""
        for a in self.p.signature.args:
            self.out.line(f"(void){a.name};")
        if self.p.index_arrays:  # index faults flagged by the reads (spf.codegen.faults)
            self.out.line("uint64_t spf_bad = 0, spf_bad_all = 0;")
            self.out.line("(void)spf_bad; (void)spf_bad_all;")
            for line in faults.range_locals(self.p):
                self.out.line(line)
        for name, ctype, _ in self.p.locals:
            size = stack_elements(self.p, name)
            if size is not None:  # a scalar or a small fixed array: on the stack
                self.out.line(f"{ctype} {name}[{size}] = {{0}};")
                self.out.line(f"(void){name};")

    def _open_heap(self, heap: list[tuple[str, str, str]]) -> None:
        """Allocate the function-level heap arrays; a failed allocation is recorded in the
        fault record (spf.codegen.faults) and the function returns at once."""
        aligned = self._aligned()
        for name, ctype, count in heap:
            if name in aligned:
                self._aligned_alloc(name, ctype, count, aligned[name])
                continue
            self.out.line(
                f"{ctype} *restrict {name} = ({ctype} *)calloc((size_t)({count}), sizeof({ctype}));"
            )
        for k, (name, ctype, count) in enumerate(heap):
            pointer = f"{name}_raw" if name in aligned else name
            self.out.line(faults.alloc_failed(k, pointer, ctype, count))
        if heap:
            names = " || ".join(
                f"!{name}{'_raw' if name in aligned else ''}" for name, _, _ in heap
            )
            self.out.line(f"if ({names}) {{ {self._free()}return; }}")

    def _workspace_setup(self) -> None:
        """Fill every thread's copy of each workspace (``stmt.workspace``) and point the
        function level (one thread) at the first copy."""
        for name, count, fill in self.p.workspaces:
            if fill not in ("0", "0.0"):
                self.out.line(
                    f"for (int64_t spf_f = 0; spf_f < spf_thread_count() * {count}; spf_f++) "
                    f"{name}[spf_f] = {fill};"
                )
            self.out.line(f"const int64_t spf_ws_{name} = 0;")
            self.out.line(f"(void)spf_ws_{name};")

    def _workspace_bases(self) -> None:
        """In a parallel loop's body: each workspace is the running thread's copy."""
        for name, count, _ in self.p.workspaces:
            self.out.line(f"const int64_t spf_ws_{name} = spf_thread_id() * {count};")
            self.out.line(f"(void)spf_ws_{name};")

    def _heap(self) -> list[tuple[str, str, str]]:
        """Function-level heap arrays: locals and ``local`` buffers not ``allocate_at``-ed."""
        out = [loc for loc in self.p.locals if stack_elements(self.p, loc[0]) is None]
        for b in self.p.buffers:
            if not b.allocated_at and on_heap(b):
                out.append((b.name, b.ctype, self.count(b)))
        return out

    def heap_names(self) -> list[str]:
        """The heap arrays whose allocation can fail, numbered as the fault record numbers
        them: the function-level ones, then the ``local`` buffers allocated in a loop."""
        inner = [b.name for b in self.p.buffers if b.allocated_at and on_heap(b)]
        return [name for name, _, _ in self._heap()] + inner

    def _free(self) -> str:
        aligned = self._aligned()
        return "".join(
            f"free({name}{'_raw' if name in aligned else ''}); " for name, _, _ in self._heap()
        )

    def _aligned(self) -> dict[str, bool]:
        """``local`` buffers (whether zero-filled): heap arrays aligned to 64 bytes (a cache
        line, an AVX-512 vector), as packed tiles (``cache_read``) need for aligned loads."""
        return {b.name: b.zeroed for b in self.p.buffers if on_heap(b)}

    def _aligned_alloc(self, name: str, ctype: str, count: str, zeroed: bool) -> None:
        """``name``: zero-filled like ``calloc`` (``malloc``'s bytes for a buffer written
        before it is read: a packed copy), at the first 64-byte boundary of a block 64 bytes
        longer (``<name>_raw``, which is what is freed)."""
        size = f"(size_t)({count}) * sizeof({ctype}) + 64"
        alloc = f"calloc({size}, 1)" if zeroed else f"malloc({size})"
        self.out.line(f"char *{name}_raw = (char *){alloc};")
        self.out.line(
            f"{ctype} *restrict {name} = ({ctype} *)({name}_raw + "
            f"((64 - (uintptr_t){name}_raw % 64) % 64));"
        )

    @staticmethod
    def count(b: BufferDecl) -> str:
        """C expression of the number of elements of ``b``."""
        return " * ".join(f"({e})" for e in b.extents) or "1"

    def buffer_open(self, b: BufferDecl) -> None:
        """Declare a buffer the function owns (``stack``/``shared`` of constant size: a C
        array; ``local``, or ``stack``/``shared`` sized by parameters: a heap array, freed
        by :meth:`buffer_close`; see :func:`on_heap`)."""
        count = self.count(b)
        if on_heap(b):
            self._aligned_alloc(b.name, b.ctype, count, b.zeroed)
            number = self.heap_names().index(b.name)
            self.out.line(faults.alloc_failed(number, f"{b.name}_raw", b.ctype, count))
        elif all(e.isdigit() for e in b.extents):
            # zero-filled like a heap buffer's calloc: a local stored here reads zeros
            # where nothing was written yet (a packed tile is written before it is read)
            zero = " = {0}" if b.private or b.zeroed else ""
            self.out.line(f"{b.ctype} {b.name}[{max(1, eval_product(b.extents))}]{zero};")
        else:  # a variable-length array (never of length 0)
            self.out.line(f"{b.ctype} {b.name}[({count}) > 0 ? ({count}) : 1];")
        self.out.line(f"(void){b.name};")

    def buffer_close(self, b: BufferDecl) -> None:
        if on_heap(b):
            self.out.line(f"free({b.name}_raw);")

    def _check_operations(self) -> None:
        for s in self.p.stmts:
            op = s.operation
            if op is not None and op.kind in ("send", "receive"):
                raise CodegenError(
                    f"statement {s.name} is a {op.kind} operation (comp.{op.kind}): target "
                    f"{self.target!r} runs one process and cannot communicate; generate it "
                    'with target "mpi"'
                )

    def operation(self, n: Call) -> None:
        """Print a Layer IV operation: in C (one memory, one thread of control) barriers and
        host/device copies are no-ops, printed as comments."""
        op = self.macros[n.stmt].operation
        assert op is not None
        if op.kind in _FLAG_OPS:  # a wavefront executor's flag: a macro like a statement
            self.out.line(f"{n.stmt}({', '.join(expr(a) for a in n.args)});")
            return
        what = op.kind.replace("_", " ")
        target = f" {op.buffer}" if op.buffer else ""
        self.out.line(f"/* {n.stmt}: {what}{target} (nothing to do in C) */")

    def _macros(self) -> None:
        for name, arity in self.p.ufs:
            element = uf_element(name, arity, self.p.signature.arg(name).inner)
            self.out.chunk(define_chunk([Define(name, uf_params(arity), element)]))
        for d in self.p.data:
            dims = [f"t{k}" for k in range(d.rank)]
            self.out.line(f"#define {d.macro or d.name}({', '.join(dims)}) {self.p.access(d)}")
            self.out.macros([d.macro or d.name])
        self._index_macros()
        flags = [s for s in self.p.stmts if s.operation and s.operation.kind in _FLAG_OPS]
        if flags:
            self.out.line(_FLAG_MACROS)
            self.out.macros([*_FLAG_OPS.values(), "spf_post_add"])
        for s in flags:
            op = s.operation
            assert op is not None
            index = ", ".join(cx.to_c_arg(i) for i in op.index)
            count = f", {cx.to_c_arg(op.count)}" if op.kind == "wait" else ""
            counter = op.buffer in {name for name, _, _ in self.p.locals}
            macro = "spf_post_add" if op.kind == "post" and counter else _FLAG_OPS[op.kind]
            call = f"{macro}(&{op.buffer}({index}){count})"
            self.out.line(f"#define {s.name}({', '.join(s.params)}) {call}")
            self.out.macros([s.name])
        self.out.chunk(stmt_macro_chunk(self.p.stmts))

    def _index_macros(self) -> None:
        """Run-time index arrays read as UFs: ``rowptr(i)`` is the element, checked against
        the declared range when there is one (a value outside reads as the lowest one and
        flags the fault the call reports, spf.codegen.faults)."""
        if not self.p.index_arrays:
            return
        self.out.chunk(faults.NOTE)
        for ctype in faults.INDEX_TYPES:
            self.out.chunk(faults.index_in(ctype))
        data = {d.name: d for d in self.p.data}
        for number, (name, rank, *_) in enumerate(self.p.index_arrays):
            dims = [f"t{k}" for k in range(rank)]
            element = faults.index_read(self.p, number, self.p.access(data[name]))
            self.out.line(f"#define {name}({', '.join(dims)}) {element}")
            self.out.macros([name])

    def node(self, n: Node) -> None:
        if isinstance(n, Block):
            for item in n.items:
                self.node(item)
        elif isinstance(n, For):
            self._for(n)
        elif isinstance(n, If):
            self.out.line(f"if ({expr(n.cond)})")
            with self.out.braces():
                self._region(n.then)
            if n.orelse is not None:
                self.out.line("else")
                with self.out.braces():
                    self._region(n.orelse)
        elif isinstance(n, Bind):
            self._bind(n)
        elif isinstance(n, Alloc):
            decl = next(b for b in self.p.buffers if b.name == n.buffer)
            with self.out.braces():
                self.buffer_open(decl)
                if on_heap(decl):  # a failed allocation skips the body (recorded)
                    self.out.line(f"if ({decl.name}_raw)")
                with self.out.braces():
                    self.node(n.body)
                self.buffer_close(decl)
        elif isinstance(n, Call):
            self._stmt_call(n)
        elif isinstance(n, Merge):
            from spf.codegen.merge_print import print_merge

            print_merge(self.out, n, self.node)

    def _region(self, n: Node) -> None:
        """Print ``n``, the body of a loop, a bind or a branch, with the element its
        statements keep writing held in a local when there is one
        (:mod:`spf.codegen.row_scalar`)."""
        row = self._row_of(n)
        if row is None:
            self.node(n)
            return
        prev, self._prev = self._prev is not None and row == self._prev, None
        with self.out.braces():
            for line in row.open_lines():
                self.out.line(line)
            self._row, self._row_prev = row, prev
            try:
                self.node(n)
            finally:
                self._row, self._row_prev = None, False
            for line in row.close_lines():
                self.out.line(line)
            for line in prev_keep_lines(row) if prev else ():
                self.out.line(line)

    def _row_of(self, n: Node) -> RowScalar | None:
        """The row scalar of region ``n`` (:func:`spf.codegen.row_scalar.find`), or None."""
        if not self.row_scalars or self._row is not None or self._acc is not None:
            return None
        if self._tile is not None or self._reducing is not None:
            return None
        return find_row(self.p, self.macros, n)

    def _prev_of(self, n: For, alone: bool = False) -> RowScalar | None:
        """The row scalar of loop ``n``'s body when the loop keeps the element each
        iteration stored (:func:`spf.codegen.row_scalar.prev_open_lines`; with
        :attr:`row_scalars`): a loop outside any simd loop whose body reads
        the row's data space elsewhere, and either untagged outside any parallel region
        (the serial kernels), or one whose iterations one thread runs in order inside a
        wavefront executor: an untagged loop in the body of a rows loop (a coarse level's
        part, a pipeline part) or, ``alone``, the rows loop of a run of narrow levels under
        ``omp single``; else None.

        Inside the executor the local still holds what memory holds at its index. Every
        write of the row's data space in the loop's body is the kept element's (the
        region's row scalar; a branch beside it writes none of it), an iteration's element
        is its row's, ``D(order(pos))``, and each row is one position of the plan: so the
        element this thread stored in an earlier iteration of this loop is written by no
        other iteration. Another thread writing it before this thread reads it would race
        with this thread's store, which the wavefront's legality (a plan's parts of a level
        are independent; the plan check proves it) rules out, and this thread writes it
        again only in a region that stores the new value in the local too. So every read
        that takes ``spf_prev`` gets the bits memory would give: results stay bitwise those
        of the serial loop. A generic ``parallel`` loop keeps none: nothing proves its
        iterations' writes apart."""
        if self._simd is not None:
            return None
        executor = alone or self._one_thread
        if not alone and (n.tags or (self.out.parallel and not executor)):
            return None
        found = self._prev_region(n.body) if executor else None
        row, region = found if found is not None else (self._row_of(n.body), n.body)
        if row is None or not reads_elsewhere(row, self.macros, region):
            return None
        return row

    def _prev_region(self, n: Node) -> tuple[RowScalar, Node] | None:
        """The row scalar :meth:`_region` finds first below ``n`` (``n`` itself, the body of
        a ``Bind``, a block's only item, the branch of an ``If`` whose other branch writes
        none of its data space: an executor's row ``D(order(pos))`` lies below the bind of
        its position's row, a fused loop's below the test of which kernel the row is), and
        its region."""
        row = self._row_of(n)
        if row is not None:
            return row, n
        if isinstance(n, Bind):
            return self._prev_region(n.body)
        if isinstance(n, Block) and len(n.items) == 1:
            return self._prev_region(n.items[0])
        if isinstance(n, If):
            found = self._prev_region(n.then)
            if found is None or n.orelse is None:
                return found
            return None if writes_space(self.macros, n.orelse, found[0].space) else found
        return None

    def _bind(self, n: Bind) -> None:
        """``const int64_t var = uf(args);`` (once per block), then its scope, where the
        fact checks of the checked function use the value instead of loading it again."""
        value = UFRead(n.uf, n.args)
        bind = f"const int64_t {n.var} = {expr(value)};"
        earlier = self.out.bound(n.var)
        key = read_key(n.uf.removeprefix("spf_v_"), n.args) if self._fact_checks else None
        outer = self._fact_values.get(key) if key is not None else None
        if key is not None:
            self._fact_values[key] = n.var
        if earlier == value:  # bound to the same value earlier in this block
            self._region(n.body)
        elif earlier is not None:
            with self.out.braces():  # another value under the same name: a new block
                self.out.line(bind)
                self.out.bind(n.var, value)
                self._region(n.body)
        else:
            self.out.line(bind)
            self.out.bind(n.var, value)
            self._region(n.body)
        if key is not None:
            if outer is None:
                del self._fact_values[key]
            else:
                self._fact_values[key] = outer

    def _stmt_call(self, n: Call) -> None:
        """One statement instance (or Layer IV operation); in the checked function, after
        the facts checked where it runs (spf.codegen.arg_checks)."""
        args = ", ".join(expr(a) for a in n.args)
        for check in self._fact_checks.get(n.stmt, ()):
            params = self.macros[n.stmt].params
            values = self._fact_values
            for line in fact_check_lines(check, params, n.args, values, self._fact_flags):
                self.out.line(line)
        if self.macros[n.stmt].operation is not None:
            self.operation(n)
        elif self._tile is not None and self._tile[0] == n.stmt:
            red = self.macros[n.stmt].reduction
            assert red is not None
            self.out.line(f"{self._tile[1]} {red.op} {n.stmt}_value({args});")
        elif self._reducing == "atomic":
            atomic_call(self, n)
        elif self._row is not None and touches(self.macros[n.stmt], self._row.space):
            into = self._acc_name if self._acc == n.stmt and self._acc_name != ROW_NAME else None
            for line in row_lines(self._row, self.macros[n.stmt], n, self._row_prev, into):
                self.out.line(line)
        elif self._acc == n.stmt:
            red = self.macros[n.stmt].reduction
            if red is not None:
                self.out.line(f"{self._acc_name} {red.op} {n.stmt}_value({args});")
            else:  # an update whose value reads its data space apart (partial_sums)
                (update,) = expanded(self.macros[n.stmt], n)
                assert isinstance(update, cx.Assign)
                self.out.line(f"{self._acc_name} {update.op} {cx.to_c(update.value)};")
        else:
            self.out.line(f"{n.stmt}({args});")

    def accumulate(self, stmt: str, name: str, body: Callable[[], None]) -> None:
        """Print ``body`` with statement ``stmt``'s accumulation into the local ``name``."""
        outer = self._acc, self._acc_name
        self._acc, self._acc_name = stmt, name
        try:
            body()
        finally:
            self._acc, self._acc_name = outer

    def before_last(self, body: Callable[[], None]) -> None:
        """Print ``body``, iterations of a row's loop that are never its last: a sorted
        lower row reads the row before (``spf_prev``) in its last iteration alone
        (:meth:`_peeled`), so these read memory."""
        prev, self._row_prev = self._row_prev, False
        try:
            body()
        finally:
            self._row_prev = prev

    def plain_for(self, n: For) -> None:
        """Loop ``n`` as it is, without the forms :meth:`_for` may pick for it."""
        self._plain_for(n)

    def region(self, n: Node) -> None:
        """``n``, the body of a loop, a bind or a branch (:meth:`_region`)."""
        self._region(n)

    def _sums_for(self, n: For, sums: tuple[int, int]) -> None:
        """Loop ``n`` tagged ``sums(count,min_trip)`` (:mod:`spf.codegen.partial_sums`):
        its one statement accumulates into ``spf_acc`` (an element that stays the same
        across ``n``) or into the row scalar ``spf_row`` (a solve's row), and the others
        sums; else ``CodegenError`` naming the loop."""
        call = self._single_call(n)
        macro = None if call is None else self.macros[call.stmt]
        inner = [m.var for m in walk(n.body) if isinstance(m, For)]
        if inner:
            raise CodegenError(
                f"partial_sums: loop {n.var} holds loop {inner[0]} (the loop of partial sums "
                "was split or tiled after the command?); partial sums go on the innermost "
                f"loop of the accumulation: give partial_sums({inner[0]!r}) after the split"
            )
        if call is None or macro is None or self._acc is not None or self._reducing:
            stmts = ", ".join(sorted({c.stmt for c in walk(n) if isinstance(c, Call)}))
            raise CodegenError(
                f"partial_sums: loop {n.var} (statements {stmts}) is not one accumulation "
                "into an element that stays the same across it (y(i) += e in the k loop of "
                "row i); put partial_sums on such a loop, alone in it"
            )
        if self._holds(macro):
            assert self._row is not None
            body = macro.body[0] if len(macro.body) == 1 else None
            op = body.op if isinstance(body, cx.Assign) else ""
            sums_for(self, n, call, sums, (op, self._row.ctype, ROW_NAME))
            return
        found = self._sums_target(n, call)
        if found is None:
            raise CodegenError(
                f"partial_sums: loop {n.var} of {call.stmt} does not accumulate into one "
                "element across the loop (y(i) += e, i fixed in the loop)"
            )
        target, op, ctype = found
        with self.out.braces():
            self.out.line(f"{ctype} spf_acc = {target};")
            sums_for(self, n, call, sums, (op, ctype, "spf_acc"))
            self.out.line(f"{target} = spf_acc;")

    def _sums_target(self, n: For, call: Call) -> tuple[str, str, str] | None:
        """The element ``call`` accumulates into across loop ``n`` (C text), its operator and
        C type: the reduction's (``<stmt>_target``), or, for an update whose value reads its
        data space elsewhere (a solve's row, printed where no row scalar holds it: MPI, a
        CUDA program's host code), the statement's own target, the legality check having
        proved those reads apart from it; None when the element changes across ``n``."""
        macro = self.macros[call.stmt]
        red = macro.reduction
        inside = {n.var, *_bound_in(n)}
        if red is not None:
            if _target_varies(macro, call, inside):
                return None
            return f"{call.stmt}_target({_target_args(macro, call)})", red.op, red.ctype
        body = expanded(macro, call)
        if len(body) != 1 or not isinstance(body[0], cx.Assign):
            return None
        target = body[0].target
        if not isinstance(target, cx.Access) or target.space not in self._ctypes:
            return None
        names = {m.name for m in cx.nodes(target) if isinstance(m, cx.Name)}
        if names & inside:
            return None
        return cx.to_c(target), body[0].op, self._ctypes[target.space]

    def _single_call(self, n: For) -> Call | None:
        """The one statement call in loop ``n``'s body (through binds), or None."""
        body: Node = n.body
        while isinstance(body, Bind):
            body = body.body
        if isinstance(body, Block) and len(body.items) == 1:
            body = body.items[0]
        return body if isinstance(body, Call) else None

    def _invariant_reduction(self, n: For) -> Call | None:
        """The single statement call of loop ``n`` when it accumulates into an element that
        does not change across ``n`` (it then lives in a register: gcc cannot keep it there
        itself once OpenMP outlining drops ``restrict``)."""
        if n.tags or self._acc is not None or self._reducing is not None:
            return None
        body = self._single_call(n)
        if body is None:
            return None
        macro = self.macros[body.stmt]
        red = macro.reduction
        if red is None or self._holds(macro):
            return None
        return None if _target_varies(macro, body, {n.var, *_bound_in(n)}) else body

    def _holds(self, macro: StmtMacro) -> bool:
        """Whether the statement touches the element held in ``spf_row`` (it is then
        printed by :func:`~spf.codegen.row_scalar.call_lines`, never as an accumulation)."""
        return self._row is not None and touches(macro, self._row.space)

    def _tile_nest(self, n: For) -> tuple[list[tuple[str, int]], Call] | None:
        """Loops ``n`` encloses as a perfect nest of constant-trip loops (``var`` from 0 to a
        constant) around one ``+=``/``-=``/``*=`` reduction whose target does not change
        across ``n``: the loops that index the tile's cells (``[(var, trip), ...]`` outer
        first, :func:`~spf.codegen.register_tile.tile_cells`) and the call. The targets of
        one ``n`` iteration then fit a small local array (``spf_tile``) that gcc keeps in
        registers across ``n``: unroll-and-jam's scalar replacement (a register tile)."""
        if n.tags or self._acc is not None or self._tile is not None or self._reducing:
            return None
        loops: list[tuple[str, int]] = []
        body: Node = n.body
        while True:
            if isinstance(body, Block) and len(body.items) == 1:
                body = body.items[0]
            if not isinstance(body, For):
                break
            cond = body.cond
            if not (body.init == Int(0) and body.step == 1 and isinstance(cond, Op)
                    and cond.op in ("<", "<=") and cond.args[0] == Var(body.var)
                    and isinstance(cond.args[1], Int)):  # fmt: skip
                return None
            if reduction_option(body.tags) is not None:
                return None  # a reduction loop's updates go to memory (atomic or copies)
            loops.append((body.var, cond.args[1].value + (cond.op == "<=")))
            body = body.body
        if not loops or not isinstance(body, Call):
            return None
        macro = self.macros[body.stmt]
        red = macro.reduction
        if red is None or red.op not in ("+=", "-=", "*=") or macro.operation is not None:
            return None
        size = 0 if self._holds(macro) else 1  # 0: it touches the element in spf_row
        for _, trip in loops:
            size *= trip
        if not 1 < size <= 512 or _target_varies(macro, body, {n.var}):
            return None
        if red.indices is None or self._data[red.data_space].buffer is not None:
            return None  # a buffer may hold two elements in one place
        args = dict(zip(macro.params, body.args, strict=True))
        cells = tile_cells(red.indices, args, loops)
        return None if cells is None else (cells, body)

    def _tile_for(self, n: For, loops: list[tuple[str, int]], call: Call) -> None:
        macro = self.macros[call.stmt]
        red = macro.reduction
        assert red is not None
        dims = "".join(f"[{trip}]" for _, trip in loops)
        cell = "spf_tile" + "".join(f"[{var}]" for var, _ in loops)

        def nest(line: str) -> None:
            with contextlib.ExitStack() as stack:
                for var, trip in loops:
                    self.out.line(f"for (int64_t {var} = 0; {var} < {trip}; {var}++)")
                    stack.enter_context(self.out.indented())
                self.out.line(line)

        args = _target_args(macro, call)
        self.out.line("{")
        with self.out.indented():
            self.out.line(f"{red.ctype} spf_tile{dims};")
            nest(f"{cell} = {call.stmt}_target({args});")  # the source's order: see
            self._tile = (call.stmt, cell)  # spf.codegen.register_tile
            try:
                self._plain_for(n)
            finally:
                self._tile = None
            nest(f"{call.stmt}_target({args}) = {cell};")
        self.out.line("}")

    def _for(self, n: For) -> None:
        if self._before is not None and n is self._before[0]:
            for line in self._before[1]:
                self.out.line(line)
        if self._blocks is not None and n is self._blocks.outer:
            self._blocked_for(n, self._blocks)
            return
        if self._pairs is not None and n is self._pairs.outer:
            self._paired_for(n, self._pairs)
            return
        sums = sums_option(n.tags)
        if sums is not None:
            self._sums_for(n, sums)
            return
        tile = self._tile_nest(n)
        if tile is not None:
            self._tile_for(n, *tile)
            return
        call = self._invariant_reduction(n)
        if call is not None:
            red = self.macros[call.stmt].reduction
            assert red is not None
            macro = self.macros[call.stmt]
            args = _target_args(macro, call)
            target = f"{call.stmt}_target({args})"
            self.out.line("{")
            with self.out.indented():
                self.out.line(f"{red.ctype} spf_acc = {target};")
                self.accumulate(call.stmt, "spf_acc", lambda: self._plain_for(n))
                self.out.line(f"{target} = spf_acc;")
            self.out.line("}")
            return
        self._plain_for(n)

    def _blocked_for(self, n: For, blocks: RowBlocks) -> None:
        """The checked function's row loop ``n`` in blocks of rows, each pre-checked, then
        run unchecked or, failing, checked (:mod:`spf.codegen.row_blocks`)."""
        self._blocks = None
        part = replace(n, init=Var("spf_b0"), cond=Op("<", (Var(n.var), Var("spf_b1"))))
        with self.out.braces():
            self.out.line(f"const int64_t spf_rb_0 = {expr(blocks.init)};")
            self.out.line(f"const int64_t spf_rb_end = {expr(blocks.end)};")
            for line in row_blocks.head_lines(blocks, "spf_rb_0", "spf_rb_end"):
                self.out.line(line)
            self.out.line(
                "for (int64_t spf_b0 = spf_rb_0; spf_b0 < spf_rb_end; spf_b0 += spf_rb_rows)"
            )
            with self.out.braces():
                self.out.line(
                    "const int64_t spf_b1 = spf_rb_end - spf_b0 > spf_rb_rows ? "
                    "spf_b0 + spf_rb_rows : spf_rb_end;"
                )
                for line in row_blocks.pass_lines(blocks):
                    self.out.line(line)
                self.out.line("if (spf_ok)")
                with self.out.braces():
                    self._fast_rows(part, blocks)
                self.out.line("else")
                with self.out.braces():
                    self._for(part)

    def _paired_for(self, n: For, pairs: RowPairs) -> None:
        """The checked function's row loop ``n`` with each fused array's range and pair
        tests in its read (:mod:`spf.codegen.row_pairs`)."""
        self._pairs = None
        checks = self._fact_checks
        kept = {s: [c for c in cs if c not in pairs.replaced] for s, cs in checks.items()}
        guard = pairs.guard
        if guard is None and any(f.bound is not None or f.split is not None for f in pairs.fused):
            self.out.line("int64_t spf_x;")
        if guard is None:
            self.out.line(f"if ({row_pairs.whole(pairs, expr(pairs.init), expr(pairs.end))})")
        else:  # split_pairs.guard_head: spf_fused is that test
            self.out.line("if (spf_fused)")
        with self.out.braces():
            for line in row_pairs.open_lines(pairs):
                self.out.line(line)
            rows = row_pairs.row_lines(pairs)
            if guard is not None:
                for line in split_pairs.guard_open_lines(pairs, expr(pairs.init)):
                    self.out.line(line)
                rows = split_pairs.guard_row_lines(pairs) + rows
            self._fact_checks, self._row_first = kept, (n.var, rows)
            second = pairs.second
            self._before = None if second is None else (second, row_pairs.mid_lines(pairs))
            try:
                self._for(n)
            finally:
                self._fact_checks, self._row_first, self._before = checks, None, None
            for line in row_pairs.close_lines(pairs, self.p, self._dense):
                self.out.line(line)
        self.out.line("else")
        with self.out.braces():
            self._for(n)

    def _fast_rows(self, part: For, blocks: RowBlocks) -> None:
        """A block's rows once its passes passed: the ranged index arrays read as they are,
        the pair facts counted at each row's start instead of tested at each entry."""
        for line in row_blocks.raw_lines(blocks):
            self.out.line(line)
        checks = self._fact_checks
        self._fact_checks = {
            s: [c for c in cs if c not in blocks.replaced] for s, cs in checks.items()
        }
        self._row_first = (part.var, row_blocks.row_count_lines(blocks))
        try:
            self._for(part)
        finally:
            self._fact_checks, self._row_first = checks, None
        for line in row_blocks.verdict_lines(blocks):
            self.out.line(line)
        for line in row_blocks.restore_lines(blocks, self.p, self._dense):
            self.out.line(line)

    def _plain_for(self, n: For) -> None:
        if "wavefront_levels" in n.tags:  # one region for all levels (spf.analysis.executor)
            self.out.omp("#pragma omp parallel", parallel=True)
            with self.out.braces():
                self._fault_scope(lambda: self._emit_for(n))
            return
        self._emit_for(n)

    def _emit_for(self, n: For) -> None:
        self._check_tags(n)
        simd = self._simd
        if "parallel" in n.tags and reduction_option(n.tags) is not None:
            reduction_for(self, n)
            return
        if "wavefront_rows" in n.tags:  # the implicit barrier of omp for ends each level
            one = [t[17:-1] for t in n.tags if t.startswith("wavefront_single(")]
            if one:  # a run of narrow levels: one thread runs it in order, then one barrier
                self.out.line(f"if ({one[0]})")
                with self.out.braces():
                    self.out.omp("#pragma omp single", parallel=False)
                    self.loop_only(n, simd, alone=True)
                self.out.line("else")
                with self.out.braces():
                    self.out.omp("#pragma omp for schedule(static)", parallel=False)
                    self.loop_only(n, simd)
                return
            # a coarse level's parts, dealt round robin: part r to thread r % team (one part
            # per thread as schedule(static) gives it; a "levels" plan cuts a large level
            # into several parts per thread: spf.runtime.level_parts)
            self.out.omp("#pragma omp for schedule(static, 1)", parallel=False)
        elif "wavefront_p2p" in n.tags:  # in level order, each thread's chunks in increasing
            self.out.omp("#pragma omp parallel for schedule(static, 64)", parallel=True)
        elif "parallel" in n.tags:
            self.pragma(self.pragma_parallel, parallel=True)
        elif any(t.startswith("vector") for t in n.tags):
            self.pragma(self._simd_pragma(n.tags), parallel=False)
            simd = simd or n.var
        else:  # GCC takes no unroll pragma next to an OpenMP one (either order)
            for t in n.tags:
                if t.startswith("unroll(") and t.endswith(")") and t[7:-1].isdigit():
                    self.out.line(f"#pragma GCC unroll {t[7:-1]}")
        self.loop_only(n, simd)

    def loop_only(self, n: For, simd: str | None = None, alone: bool = False) -> None:
        """The ``for`` statement of ``n`` and its body, without a pragma (``simd``: the
        enclosing vector loop inside the body; ``alone``: a wavefront's rows loop that one
        thread runs whole, :meth:`_prev_of`)."""
        simd = simd or self._simd
        end = _peel_end(n) if self._row_prev and simd is None else None
        if end is not None:  # only the last iteration's reads read the row before's local
            self._peeled(n, end)
            return
        prev = self._prev_of(n, alone) if simd is None else None
        if prev is None:
            self._loop_text(n, simd, None)
            return
        with self.out.braces():  # the element the previous iteration stored, in a local
            for line in prev_open_lines(prev):
                self.out.line(line)
            self._loop_text(n, simd, prev)

    def _peeled(self, n: For, end: Expr) -> None:
        """Loop ``n`` (``var < end``, step 1) inside a region whose reads may read the
        previous iteration's element from ``spf_prev``: its last iteration tests its reads,
        the others read memory. In a lower solve's sorted row (rows in increasing order) the
        column before the row's own is the last entry left of the diagonal: one compare a
        row, where a compare an entry cost loops whose rows never read the row before up to
        13% (Gauss-Seidel's on bayer10) and gave the solves no more. Reading memory is
        always right: the local only saves the wait on the store. (An upper solve's rows run
        last first, and the row before is its first entry right of the diagonal: tested at
        each entry's read or at the first as well, it did not pay on the lower solves.)"""
        first, last = f"spf_first_{n.var}", f"spf_end_{n.var}"
        with self.out.braces():
            self.out.line(f"const int64_t {first} = {expr(n.init)};")
            self.out.line(f"const int64_t {last} = {expr(end)};")
            self.out.line(f"if ({first} < {last})")
            with self.out.braces():
                cond = Op("<", (Var(n.var), Op("-", (Var(last), Int(1)))))
                most = replace(n, init=Var(first), cond=cond)
                self._row_prev = False
                try:
                    self._loop_text(most, None, None)
                finally:
                    self._row_prev = True
                with self.out.braces():
                    self.out.line(f"const int64_t {n.var} = {last} - 1;")
                    self.node(n.body)

    def _loop_text(self, n: For, simd: str | None, prev: RowScalar | None) -> None:
        """The ``for`` statement of ``n`` and its body (:meth:`loop_only`); ``prev``: the
        row scalar whose element the loop keeps in ``spf_prev``."""
        step = f"{n.var}++" if n.step == 1 else f"{n.var} += {n.step}"
        self.out.line(f"for (int64_t {n.var} = {expr(n.init)}; {expr(n.cond)}; {step})")
        outer, self._simd = self._simd, simd
        first, self._row_first = self._row_first, None
        try:
            with self.out.braces():
                if first is not None and first[0] == n.var:  # a block's row (row_blocks)
                    for line in first[1]:
                        self.out.line(line)
                for line in self._prefetch_lines(n):
                    self.out.line(line)
                tagged = {"parallel", "wavefront_rows", "wavefront_p2p"} & set(n.tags)
                one = self._one_thread
                if tagged:
                    self._workspace_bases()  # each thread's own copy
                    self._one_thread = tagged == {"wavefront_rows"}  # one thread an iteration
                self._prev = prev
                try:
                    if tagged:
                        self._fault_scope(lambda: self._region(n.body))
                    else:
                        self._region(n.body)
                finally:
                    self._prev, self._one_thread = None, one
        finally:
            self._simd = outer

    def _prefetch_lines(self, n: For) -> list[str]:
        """The prefetches of the rows ahead that loop ``n`` asks for (:mod:`spf.codegen.prefetch`),
        none in a checked function."""
        if not (self.prefetches and self._ahead and n.tags):
            return []
        ufs = {name for name, arity in self.p.ufs if arity == 1}
        data = {
            d.name: (d.macro or d.name, d.extents[0])
            for d in self.p.data
            if d.rank == 1 and len(d.extents) == 1 and d.buffer is None and d.offset is None
        }
        return prefetch.lines(n, ufs, data, expr)

    def _fault_scope(self, body: Callable[[], None]) -> None:
        """Print ``body`` (run by one thread of a parallel region) with its own index fault
        flags, ORed into the function's once it is done (no shared write in the loops)."""
        if not self.p.index_arrays:
            body()
            return
        self.out.line("uint64_t spf_bad = 0;")
        body()
        self.out.line("if (spf_bad) __atomic_fetch_or(&spf_bad_all, spf_bad, __ATOMIC_RELAXED);")

    def _check_tags(self, n: For) -> None:
        """Refuse tags of statements that share loop ``n`` when the compiler would reject
        their pragmas together: two unroll factors, a parallel loop inside a simd loop."""
        factors = sorted({t[7:-1] for t in n.tags if t.startswith("unroll(")}, key=int)
        stmts = ", ".join(sorted({c.stmt for c in walk(n) if isinstance(c, Call)}))
        if len(factors) > 1:
            raise CodegenError(
                f"loop {n.var} shared by statements {stmts} is unrolled by "
                f"{' and '.join(factors)}; a loop has one unroll factor: unroll it by the "
                "same factor in every statement that shares it"
            )
        omp = self.omp_pragmas
        if omp and "parallel" in n.tags and self._simd is not None:
            raise CodegenError(
                f"loop {n.var} (statements {stmts}) is parallel but lies inside the vector "
                f"loop {self._simd}; OpenMP allows no parallel loop inside a simd loop: "
                "parallelize a loop outside the vector loop, or vectorize an innermost loop"
            )

    def _simd_pragma(self, tags: tuple[str, ...]) -> str:
        """``#pragma omp simd simdlen(w)`` for a loop tagged ``vector(w)``: without
        ``simdlen``, gcc picks its tuning's preferred width (128 bits for ``-march=native``
        on AMD Zen), so ``vectorize(loop, 8)`` of doubles ran on 2-wide vectors."""
        widths = [t[7:-1] for t in tags if t.startswith("vector(") and t.endswith(")")]
        pragma = self.pragma_simd
        if self.p.index_arrays and pragma == CPrinter.pragma_simd:
            pragma += " reduction(|:spf_bad)"  # the index fault flags of the lanes
        if self.pragma_simd != CPrinter.pragma_simd or not widths or not widths[0].isdigit():
            return pragma
        return f"{pragma} simdlen({widths[0]})"


_FLAG_OPS = {"wait": "spf_wait_flag", "post": "spf_post_flag"}
_FLAG_MACROS = (
    "#define spf_wait_flag(p, n) do { while (__atomic_load_n((p), __ATOMIC_ACQUIRE) < (n)) { } "
    "} while (0)\n#define spf_post_flag(p) __atomic_store_n((p), 1, __ATOMIC_RELEASE)\n"
    "#define spf_post_add(p) __atomic_fetch_add((p), 1, __ATOMIC_RELEASE)"
)
"""Point-to-point flags of a wavefront executor (``method="p2p"``): a wait spins until the
value reaches its count (1 for a predecessor's flag; 0 for a ``pending`` counter that starts
at minus the number of incoming push edges), with acquire ordering so that the results are
visible; a post sets the iteration's own flag (an argument) or adds one to a counter (a
local of the executor), with release ordering after the iteration's results are written."""

STACK_LOCAL_ELEMENTS = 4096
"""Locals of at most this many elements with a constant size live on the stack."""

STACK_BUFFER_BYTES = 1 << 20
"""The largest ``stack``/``shared`` buffer of constant size spf puts on the C stack (1 MiB):
well under the 8 MiB stack of a Linux main thread (``ulimit -s``) and the smaller stacks
OpenMP worker threads may get (``OMP_STACKSIZE``; every thread running a parallel loop holds
its own copy of a buffer allocated inside it), and leaving room for the several buffers and
the callers' frames one stack holds. A larger one is refused at code generation; an overflow
would be a segfault, not an error."""


def on_heap(b: BufferDecl) -> bool:
    """Whether the function allocates buffer ``b`` on the heap (64-byte aligned, freed when
    its scope ends, a failed allocation reported as a fault): every ``local`` buffer, and a
    ``stack``/``shared`` one whose size depends on parameters (a variable-length C array
    could be any size and overflow the stack: a ``cache_read`` tile over a whole dimension,
    a row buffer of ``M`` elements)."""
    if b.argument:
        return False
    return b.scope == "local" or not all(e.isdigit() for e in b.extents)


def check_stack_buffers(buffers: Sequence[BufferDecl], target: str) -> None:
    """``CodegenError`` for a ``stack``/``shared`` buffer of constant size above
    :data:`STACK_BUFFER_BYTES` (it would overflow a thread's stack)."""
    for b in buffers:
        if b.argument or on_heap(b):
            continue
        size = max(1, eval_product(b.extents)) * _element_bytes(b.ctype)
        if size > STACK_BUFFER_BYTES and b.private:
            raise CodegenError(
                f"target {target!r}: local {b.name!r} private to a loop (add_local(..., "
                f"private=...)) takes {size} bytes per copy, more than the "
                f"{STACK_BUFFER_BYTES} bytes (1 MiB) spf puts on a C stack (each iteration's "
                "copy is a C array in the loop body; an overflow is a segfault): make it "
                "smaller, or drop private= (one heap array for the whole function)"
            )
        if size > STACK_BUFFER_BYTES:
            raise CodegenError(
                f"target {target!r}: buffer {b.name!r} ({b.scope}, {' x '.join(b.extents)} "
                f"{b.ctype}) takes {size} bytes, more than the {STACK_BUFFER_BYTES} bytes "
                "(1 MiB) spf puts on a C stack (8 MiB for a main thread, often less for "
                "OpenMP threads; an overflow is a segfault): declare it with scope='local' "
                "(heap memory, 64-byte aligned; cache_read(..., scope='local'), the default) "
                "or 'global' (a kernel argument), or make the tile smaller"
            )


def _element_bytes(ctype: str) -> int:
    """``sizeof`` of a C element type spf generates."""
    import numpy as np

    return int(np.dtype(NUMPY_OF_C[ctype]).itemsize)


def stack_elements(program: Program, local: str) -> int | None:
    """The number of elements of ``program``'s local ``local`` when its count is a constant
    no larger than :data:`STACK_LOCAL_ELEMENTS` (:attr:`Program.local_sizes`), else None
    (allocated on the heap)."""
    size = dict(program.local_sizes).get(local)
    return None if size is None or size > STACK_LOCAL_ELEMENTS else max(1, size)


def eval_product(extents: tuple[str, ...]) -> int:
    out = 1
    for e in extents:
        out *= int(e)
    return out


def _peel_end(n: For) -> Expr | None:
    """``E`` when loop ``n`` runs ``var`` from its start while ``var < E`` by steps of one,
    ``E`` free of ``var``, untagged; else None."""
    c = n.cond
    if n.tags or n.step != 1 or not isinstance(c, Op) or c.op != "<" or len(c.args) != 2:
        return None
    if c.args[0] != Var(n.var) or n.var in set(expr_vars(c.args[1])):
        return None
    return c.args[1]


def _bound_in(n: For) -> set[str]:
    """The names binds in loop ``n``'s body bind (down to its first statement call)."""
    out: set[str] = set()
    body: Node = n.body
    while isinstance(body, Bind):
        out.add(body.var)
        body = body.body
    return out


def _target_varies(macro: StmtMacro, call: Call, names: set[str]) -> bool:
    """Whether the accumulation target of ``call`` (a reduction) uses any of ``names``."""
    red = macro.reduction
    assert red is not None
    return any(
        param in red.uses and names & set(expr_vars(arg))
        for param, arg in zip(macro.params, call.args, strict=True)
    )


def _target_args(macro: StmtMacro, call: Call) -> str:
    """Arguments of ``<stmt>_target(...)`` for ``call``: the ones the target uses (``0`` for
    the rest, which the target macro ignores)."""
    red = macro.reduction
    assert red is not None
    return ", ".join(
        expr(a) if p in red.uses else "0" for p, a in zip(macro.params, call.args, strict=True)
    )


PRINTER_OPTIONS = ("arg_checks",)
"""``arg_checks=True``: also print the checked function (:mod:`spf.codegen.arg_checks`)."""


def before_loops(program: Program) -> tuple[int, ...]:
    """The facts the checked function tests before its loops: the each-call facts
    (spf.codegen.each_call) and the injectivity facts (spf.codegen.injective_marks)."""
    each = program.each_call.facts if program.each_call is not None else ()
    return tuple(sorted({*each, *(m.fact for m in program.marks)}))


def print_c(program: Program, *, arg_checks: bool = False) -> str:
    return unit_c(program, arg_checks=arg_checks).source


def unit_c(program: Program, *, arg_checks: bool = False) -> TranslationUnit:
    """The C translation unit of ``program`` with its record (:mod:`spf.codegen.unit`)."""
    printer = CPrinter(program)
    printer.arg_checks = arg_checks
    return printer.unit()

"""The per-call fault record of a C kernel: run-time faults reported to the caller.

A kernel ``f`` that reads run-time index arrays (``add_data_space(..., index=True)``) or
allocates arrays on the heap (locals, ``local`` buffers, workspaces) is printed as
``f_spf_faults``, which takes the arguments of ``f`` plus ``int64_t *spf_fault``
(:data:`FAULT_WORDS` words, zeroed by the caller), and ``f`` itself calls it with a record
of its own (C callers of ``f`` get the old behaviour: nothing out of bounds, no report).
The checked function (:mod:`spf.codegen.arg_checks`) writes the same record. The record is
the call's own, so two threads running one kernel at once never see each other's faults.

``spf_fault`` receives ``[kind, number, index, value]`` of the first fault:

* :data:`FAULT_INDEX`: a run-time index array (``number`` among ``Program.index_arrays``)
  held ``value`` at the flat (row-major) ``index``, outside the UF's declared range. The
  reads clamp and flag without a branch (:func:`index_in`: a value outside the range reads
  as the lowest one and ORs a bit into the local ``spf_bad``; a read of an ordered array
  also ORs its :func:`mark_bit`), so a loop reading an index
  array still vectorizes (each parallel loop body, and a wavefront executor's region, has
  its own ``spf_bad``, ORed into the function's ``spf_bad_all`` once done; a simd loop
  takes ``reduction(|:spf_bad)``); after the loops, a set bit has the array scanned for
  its first entry outside the range (``index`` -1 when the entry changed since it was
  read);
* :data:`FAULT_INDEX_ORDER`: a run-time index array whose UF declares an order
  (``monotonic``) broke it at the flat ``index`` (which holds ``value``), found by the scan
  of the array the kernel runs after its loops (:func:`order_check`);
* :data:`FAULT_ALLOC`: ``calloc`` of the heap array ``number`` (among the names
  ``f_spf_fault_names`` lists) for ``index`` elements of ``value`` bytes each failed; the
  function returns (or skips the buffer's loop body) without touching memory.

``f_spf_fault_names`` returns ``<index arrays>;<heap arrays>`` (comma-separated names).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.codegen.unit import Chunk, Function

if TYPE_CHECKING:
    from spf.codegen.program import Program
    from spf.codegen.signature import Signature

FAULTS_SUFFIX = "_spf_faults"
"""``f`` + this: the function with the fault record."""
NAMES_SUFFIX = "_spf_fault_names"
"""``f`` + this: the names the record's ``number`` refers to."""
FAULT_WORDS = 4
FAULT_INDEX = 3
FAULT_ALLOC = 4
FAULT_INDEX_ORDER = 9
"""Kinds 1, 2 and 5 to 8 are the checked function's (:mod:`spf.codegen.arg_checks`)."""
FAULT_ARG = "int64_t *restrict spf_fault"

_NOTE_TEXT = """\
#ifndef SPF_FAULT_NOTE
#define SPF_FAULT_NOTE
static void spf_fault_note(int64_t *f, int64_t kind, int64_t uf, int64_t at, int64_t v)
  __attribute__((cold, noinline, unused));
static void spf_fault_note(int64_t *f, int64_t kind, int64_t uf, int64_t at, int64_t v)
{
  int64_t none = 0;
  if (__atomic_compare_exchange_n(&f[0], &none, kind, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
  {
    f[1] = uf;
    f[2] = at;
    f[3] = v;
  }
}
#endif
"""
NOTE = Chunk(
    tuple(_NOTE_TEXT.rstrip("\n").split("\n")),
    functions=(
        Function(
            "spf_fault_note",
            "void spf_fault_note(int64_t *f, int64_t kind, int64_t uf, int64_t at, int64_t v)",
            static=True,
        ),
    ),
    macros=("SPF_FAULT_NOTE",),
)
"""Records the first fault of a call (any thread)."""

INDEX_TYPES = ("int32_t", "int64_t")
"""Element types of run-time index arrays (spf.computation.index_arrays)."""


def index_in(ctype: str) -> Chunk:
    """``spf_index_in_<ctype>``: the branch-free range check of an index array read. A value
    outside ``l .. h`` reads as ``r`` (the range's lowest value) and ORs ``1 << bit`` into
    ``*bad`` (the caller's local ``spf_bad``). Bounds and result have the element's own
    type (:func:`range_locals`): comparing an ``int32_t`` with ``int64_t`` bounds, or
    returning ``int64_t``, halved the vector width of the loop, or kept gcc from
    vectorizing an ``int32_t`` max reduction over it at all."""
    name = f"spf_index_in_{ctype}"
    prototype = (
        f"{ctype} {name}({ctype} v, {ctype} l, {ctype} h, {ctype} r, uint64_t bit, uint64_t *bad)"
    )
    lines = (
        f"static inline {prototype}",
        "{",
        "  const int out = (v < l) | (v > h);",
        "  *bad |= (uint64_t)out << bit;",
        "  return out ? r : v;",
        "}",
    )
    return Chunk(lines, functions=(Function(name, prototype, static=True),))


def range_locals(program: Program) -> list[str]:
    """The function's first lines for the checks: each index array's range in its element
    type, ``spf_il_<n>`` .. ``spf_ih_<n>``, and ``spf_ir_<n>``, the value a read outside it
    returns. An ``int32_t`` range saturates to the type's; a range holding no ``int32_t``
    value (or empty) becomes ``INT32_MAX .. INT32_MIN``, which every value is outside."""
    out = []
    for n, (name, _, lo, hi) in enumerate(program.index_arrays):
        if lo is None or hi is None:
            continue
        ctype = element_type(program, name)
        if ctype == "int64_t":
            out.append(f"const int64_t spf_il_{n} = {lo}, spf_ih_{n} = {hi}, spf_ir_{n} = {lo};")
        else:
            sat = "(int32_t)spf_max((int64_t)INT32_MIN, spf_min((int64_t)INT32_MAX, (int64_t)({})))"
            out.append(
                f"const int spf_ie_{n} = ({lo}) > ({hi}) || ({lo}) > INT32_MAX || "
                f"({hi}) < INT32_MIN;"
            )
            out.append(f"const int32_t spf_ir_{n} = {sat.format(lo)};")
            out.append(f"const int32_t spf_il_{n} = spf_ie_{n} ? INT32_MAX : spf_ir_{n};")
            out.append(f"const int32_t spf_ih_{n} = spf_ie_{n} ? INT32_MIN : {sat.format(hi)};")
        out.append(f"(void)spf_il_{n}; (void)spf_ih_{n}; (void)spf_ir_{n};")
    return out


def element_type(program: Program, name: str) -> str:
    """The C element type of index array ``name`` (``int64_t`` when unknown)."""
    for a in program.signature.args:
        if a.name == name and a.ctype in INDEX_TYPES:
            return a.ctype
    for local, ctype, _ in program.locals:
        if local == name and ctype in INDEX_TYPES:
            return ctype
    return "int64_t"


def checked_read(program: Program, number: int, element: str) -> str:
    """The C expression reading ``element`` of index array ``number`` with its range check
    (against the bounds :func:`range_locals` declares)."""
    name = program.index_arrays[number][0]
    ctype = element_type(program, name)
    bounds = f"spf_il_{number}, spf_ih_{number}, spf_ir_{number}"
    return f"spf_index_in_{ctype}({element}, {bounds}, {bit(number)}, &spf_bad)"


def bit(number: int) -> int:
    """The ``spf_bad`` bit of index array ``number``'s range faults (bits 0 .. 31, the last
    one shared)."""
    return min(number, 31)


RANGE_BITS = "0xffffffffu"
"""The ``spf_bad`` bits of range faults; bits 32 .. 63 mark reads of ordered arrays."""


def mark_bit(number: int) -> int:
    """The ``spf_bad`` bit that a read of ordered index array ``number`` sets (bits 32 ..
    63, the last one shared): :func:`order_check` scans only arrays the call read."""
    return 32 + min(number, 31)


def index_read(program: Program, number: int, element: str) -> str:
    """The C expression of a read (as a UF) of ``element`` of index array ``number``: range
    checked when the UF declares a range (:func:`checked_read`), and marked as read when it
    declares an order (:func:`mark_bit`)."""
    _, _, lo, hi = program.index_arrays[number]
    if lo is not None and hi is not None:
        element = checked_read(program, number, element)
    if any(n == number for n, *_ in program.index_order):
        element = f"(spf_bad |= (uint64_t)1 << {mark_bit(number)}, {element})"
    return element


def needed(program: Program, heap: list[str]) -> bool:
    """Whether the kernel gets a fault record: it reads index arrays or allocates."""
    return bool(program.index_arrays) or bool(heap)


def prototype(sig: Signature, restrict: bool = True) -> str:
    """The C prototype of the function with the fault record (``restrict``: see
    :meth:`~spf.codegen.signature.Arg.c_decl`)."""
    fault = FAULT_ARG if restrict else "int64_t *spf_fault"
    params = ", ".join([*(a.c_decl(restrict) for a in sig.args), fault])
    return f"void {sig.function}{FAULTS_SUFFIX}({params})"


def names_prototype(function: str) -> str:
    return f"const char *{function}{NAMES_SUFFIX}(void)"


def wrapper(sig: Signature) -> list[str]:
    """``f`` itself: the function with a record of its own."""
    names = ", ".join([*(a.name for a in sig.args), "spf_fault"])
    return [
        sig.c_prototype(),
        "{",
        f"  int64_t spf_fault[{FAULT_WORDS}] = {{0}};",
        f"  {sig.function}{FAULTS_SUFFIX}({names});",
        "}",
    ]


def names_function(function: str, index_arrays: list[str], heap: list[str]) -> str:
    return f'{names_prototype(function)} {{ return "{",".join(index_arrays)};{",".join(heap)}"; }}'


def alloc_failed(number: int, pointer: str, ctype: str, count: str) -> str:
    """The C statement recording that the allocation of heap array ``number`` (whose block
    ``pointer`` points to) failed."""
    return (
        f"if (!{pointer}) spf_fault_note(spf_fault, {FAULT_ALLOC}, {number}, "
        f"(int64_t)({count}), (int64_t)sizeof({ctype}));"
    )


def rescan(program: Program, in_scope: set[str]) -> list[str]:
    """After the loops, when ``spf_bad`` has a bit set: find each flagged index array's first
    entry outside its range (``in_scope``: the arrays the function's end can still read);
    then the :func:`order_check` of the ordered ones."""
    from spf.codegen.program import linearize

    if all(lo is None or hi is None for _, _, lo, hi in program.index_arrays):
        return order_check(program, in_scope)  # no read is range-checked (trusted locals)
    data = {d.name: d for d in program.data}
    out = [f"if ((spf_bad | spf_bad_all) & {RANGE_BITS})", "{"]
    out.append(f"  uint64_t spf_b = (spf_bad | spf_bad_all) & {RANGE_BITS};")
    for n, (name, rank, lo, hi) in enumerate(program.index_arrays):
        if lo is None or hi is None:
            continue
        d = data[name]
        mask = f"(spf_b >> {bit(n)} & 1)"
        if name not in in_scope or (not d.extents and rank):
            out.append(f"  if {mask} spf_fault_note(spf_fault, {FAULT_INDEX}, {n}, -1, 0);")
            continue
        dims = [f"t{k}" for k in range(rank)]
        out.append(f"  if {mask}")
        out.append("  {")
        out.append("    int spf_found = 0;")
        indent = "    "
        for k, extent in enumerate(d.extents[:rank]):
            out.append(f"{indent}for (int64_t t{k} = 0; !spf_found && t{k} < ({extent}); t{k}++)")
            indent += "  "
        out.append(f"{indent}{{")
        macro = d.macro or d.name
        out.append(f"{indent}  const int64_t spf_v = (int64_t){macro}({', '.join(dims)});")
        out.append(f"{indent}  if (spf_v < ({lo}) || spf_v > ({hi}))")
        at = linearize(dims, tuple(d.extents[:rank]))
        out.append(
            f"{indent}  {{ spf_fault_note(spf_fault, {FAULT_INDEX}, {n}, {at}, spf_v); "
            "spf_found = 1; }"
        )
        out.append(f"{indent}}}")
        out.append(f"    if (!spf_found) spf_fault_note(spf_fault, {FAULT_INDEX}, {n}, -1, 0);")
        out.append("  }")
    out.append("}")
    return out + order_check(program, in_scope)


def order_check(program: Program, in_scope: set[str]) -> list[str]:
    """After the loops: each run-time index array whose UF declares an order
    (:attr:`Program.index_order`) and that the call read as a UF (its :func:`mark_bit`) is
    scanned for the first entry out of that order, over its UF's domain within the array
    (``in_scope``: the arrays the function's end can still read; an array no statement read
    may hold anything, e.g. in a phase of a conversion that does not compute it). The
    analysis trusted the order (disjoint rows, parallel loops), so a broken one makes the
    call's outputs invalid; the reads themselves never left their range."""
    data = {d.name: d for d in program.data}
    out: list[str] = []
    for number, monotonic, first, last in program.index_order:
        name = program.index_arrays[number][0]
        d = data[name]
        if name not in in_scope or not d.extents:
            continue
        macro = d.macro or d.name
        bad = ">=" if monotonic == "increasing" else ">"
        start = f"spf_max((int64_t)({first}), (int64_t)0) + 1"
        read = f"((spf_bad | spf_bad_all) >> {mark_bit(number)} & 1)"
        out.append(f"if (!spf_fault[0] && {read}) /* {name} is {monotonic} */")
        out.append(
            f"  for (int64_t t0 = {start}; t0 <= (int64_t)({last}) && t0 < (int64_t)"
            f"({d.extents[0]}); t0++)"
        )
        out.append(f"    if ((int64_t){macro}(t0 - 1) {bad} (int64_t){macro}(t0))")
        out.append(
            f"    {{ spf_fault_note(spf_fault, {FAULT_INDEX_ORDER}, {number}, t0, "
            f"(int64_t){macro}(t0)); break; }}"
        )
    return out

"""In-loop argument checks of a C kernel: the UF facts tested where the indices are loaded.

With the C printer's option ``arg_checks=True`` (what ``Computation.compile`` asks for), the
translation unit of a kernel ``f`` also holds ``f_spf_checked``: the same arguments plus
``const int64_t *spf_bounds`` and ``int64_t *spf_fault``, and the same loops, except that every
read of an index array (a UF argument) goes through ``spf_read_<uf>``, which

* compares the value with the UF's declared range (``spf_bounds[3 * n]`` .. ``[3 * n + 1]``
  for the ``n``-th UF argument, filled by the caller for the call's parameters; an empty
  range is refused by the caller before the call); a value
  outside it is replaced by the nearest bound before anything uses it, so no access goes out
  of bounds, and the first such fault is recorded in ``spf_fault``;
* for a monotonic UF whose reads cover one run of indices (see :func:`dense_monotonic`),
  compares the entry with the one before it (from index ``spf_bounds[3 * n + 2] + 1``, the
  domain's lowest index plus one): every pair of neighbours the kernel reads is then ordered.

The word after the UFs' bounds is 1 for a call on index arrays whose contents a checked
call verified (:func:`known_lines`): the function then only tests that no written array
overlaps another and runs ``f``. ``spf_fault`` (:data:`FAULT_WORDS` int64) receives
``[kind, UF number, index, value]`` of the first fault (kind :data:`FAULT_RANGE` or
:data:`FAULT_ORDER`; 0: none). ``f_spf_checked_facts`` returns ``<UFs whose monotonicity
the loops check>;<zero-based UFs>`` (comma-separated names); the caller checks the other
monotonic UFs separately (:mod:`spf.runtime.checks`), and
the range of a zero-based UF whose lowest value is above 0 for the call's parameters. A call
with ``check=True`` (:class:`~spf.runtime.kernel.Kernel`) runs ``f_spf_checked``;
``check=False`` runs ``f``.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from spf import cexpr as cx
from spf.codegen import contents_hash, faults
from spf.codegen.contents_hash import HASH
from spf.codegen.contents_hash import NAME as HASH_NAME
from spf.codegen.faults import NOTE
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
    conjunction,
    cursor_exprs,
)
from spf.codegen.loop_ast import expr_vars as _expr_vars
from spf.codegen.macros import Define, as_int64, uf_element, uf_index, uf_params
from spf.codegen.unit import Chunk, Function
from spf.errors import InternalError
from spf.sets.affine import Aff, Sym
from spf.sets.affine import Call as AffCall

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from spf.analysis.fact_plan import InLoopCheck
    from spf.codegen.program import Program
    from spf.codegen.signature import Arg, Signature
    from spf.ir import ComputationIR

CHECKED_SUFFIX = "_spf_checked"
"""``f`` + this: the checked function."""
FACTS_SUFFIX = "_spf_checked_facts"
"""``f`` + this: the UFs whose monotonicity the checked function verifies."""
BOUNDS_PER_UF = 4
"""``spf_bounds`` words per UF argument: lowest value, highest value, lowest domain index,
and the entries the kernel may read (from index 0; -1 when the domain does not say)."""
FAULT_WORDS = faults.FAULT_WORDS
"""``spf_fault``: kind, UF number (among the UF arguments), index (linearised), value (the
record :mod:`spf.codegen.faults` describes, which index faults and allocations share)."""
FAULT_RANGE = 1
FAULT_ORDER = 2
FAULT_RANGE_BEFORE = 7
FAULT_ORDER_BEFORE = 8
"""The same faults found by the test of a :func:`prechecked` UF, before the loops: nothing
was written."""
FAULT_OVERLAP = 6
"""``[6, written argument, other argument, 0]`` (positions among the array arguments): two
arrays share memory and one is written (the arguments are ``restrict``); nothing ran."""
FAULT_NEW_CONTENTS = 12
"""``[12, 0, 0, hash]``: a call that asked the function to hash its index arrays
(:func:`known_lines`, word 2) passed contents whose hash is not the verified one; nothing
ran (the caller checks them, then stores the hash)."""
KNOWN_HASHED = 2
"""The known-contents word's value that asks for the hash test (:func:`known_lines`)."""

EXTRA_ARGS = "const int64_t *restrict spf_bounds, int64_t *restrict spf_fault"


def checked_prototype(program: Program) -> str:
    """The C prototype of the checked function."""
    return checked_prototype_of(program.signature)


def checked_prototype_of(
    sig: Signature, suffix: str = CHECKED_SUFFIX, restrict: bool = True
) -> str:
    """The C prototype of the checked function of a kernel with signature ``sig`` (named
    ``<function><suffix>``; ``restrict``: see :meth:`~spf.codegen.signature.Arg.c_decl`)."""
    extra = EXTRA_ARGS if restrict else "const int64_t *spf_bounds, int64_t *spf_fault"
    params = ", ".join([*(a.c_decl(restrict) for a in sig.args), extra])
    return f"void {sig.function}{suffix}({params})"


def facts_prototype(function: str) -> str:
    return f"const char *{function}{FACTS_SUFFIX}(void)"


def dense_monotonic(program: Program) -> dict[str, int | None]:
    """The monotonic UF arguments whose reads all cover one run of consecutive indices, each
    with the offset of the reads that need no order check (None: every read needs one).

    Reading ``u(v + c)`` for the constants ``c`` of a contiguous set (``rowptr(i)`` and
    ``rowptr(i + 1)``), directly in the body of one step-1 loop over ``v`` whose bounds use
    parameters only, loads every index from the loop's first plus the smallest ``c`` to its
    last plus the largest: comparing each loaded entry with the one before it then orders
    every two entries the kernel reads. The reads at any ``c`` but the smallest already
    compare every neighbouring pair, so with two offsets or more the smallest one's reads
    skip the comparison. Any other read (in a statement's text, a loop bound, under a
    condition or an inner loop, at another index) leaves the UF to the separate check.
    """
    params = {a.name for a in program.signature.args if a.kind == "param"}
    wanted = {
        a.name
        for a in program.signature.args
        if a.kind == "uf" and a.uf is not None and a.uf.monotonic is not None
    } - prechecked(program)
    if not wanted:
        return {}
    reads: dict[str, list[tuple[int, int] | None]] = {u: [] for u in wanted}
    _collect(program.body, None, params, reads)
    for s in program.stmts:
        for u in wanted & s.calls:  # a read in the statement's own text
            reads[u].append(None)
    out: dict[str, int | None] = {}
    for u in sorted(wanted):
        found = reads[u]
        if not found or any(r is None for r in found):
            continue
        loops = {r[0] for r in found if r is not None}
        offsets = sorted({r[1] for r in found if r is not None})
        if len(loops) == 1 and offsets == list(range(offsets[0], offsets[-1] + 1)):
            out[u] = offsets[0] if len(offsets) > 1 else None
    return out


def unordered_reads(program: Program, dense: dict[str, int | None]) -> Node:
    """``program.body`` with the reads that need no order check (:func:`dense_monotonic`)
    renamed to ``spf_v_<uf>``: the range check only."""
    skip = {u: c for u, c in dense.items() if c is not None}
    if not skip:
        return program.body

    def visit(n: Node, loop: For | None) -> Node:
        if isinstance(n, Block):
            return Block(tuple(visit(i, loop) for i in n.items))
        if isinstance(n, For):
            return replace(n, body=visit(n.body, n))
        if isinstance(n, If):
            orelse = None if n.orelse is None else visit(n.orelse, None)
            return If(n.cond, visit(n.then, None), orelse)
        if isinstance(n, Bind):
            uf = n.uf
            if uf in skip and _offset(n.args, loop) == skip[uf]:
                uf = f"spf_v_{uf}"
            return Bind(n.var, uf, n.args, visit(n.body, loop))
        if isinstance(n, Alloc):
            return Alloc(n.buffer, visit(n.body, loop))
        if isinstance(n, Merge):
            return n.map_bodies(lambda b: visit(b, None))
        return n

    return visit(program.body, None)


def _collect(
    n: Node,
    loop: For | None,
    params: set[str],
    reads: dict[str, list[tuple[int, int] | None]],
) -> None:
    """Record each read of a wanted UF: ``(id of its loop, offset)``, or None when it is not
    of the dense form. ``loop`` is the enclosing loop whose body ``n`` is directly in."""
    if isinstance(n, Block):
        for item in n.items:
            _collect(item, loop, params, reads)
    elif isinstance(n, For):
        for e in (n.init, n.cond):
            _expr_reads(e, reads)
        _collect(n.body, n if _simple(n, params) else None, params, reads)
    elif isinstance(n, If):
        _expr_reads(n.cond, reads)
        _collect(n.then, None, params, reads)
        if n.orelse is not None:
            _collect(n.orelse, None, params, reads)
    elif isinstance(n, Bind):
        _bind_reads(n, loop, reads)
        _collect(n.body, loop, params, reads)
    elif isinstance(n, Call):
        for e in n.args:
            _expr_reads(e, reads)
    elif isinstance(n, Merge):  # bounds and keys: not of the dense form
        for e in (*cursor_exprs(n.left), *cursor_exprs(n.right)):
            _expr_reads(e, reads)
        _collect(Block(n.bodies()), None, params, reads)
    else:  # Alloc: the body runs once per entry, as in place
        _collect(n.body, loop, params, reads)


def _bind_reads(n: Bind, loop: For | None, reads: dict[str, list[tuple[int, int] | None]]) -> None:
    for e in n.args:
        _expr_reads(e, reads)
    if n.uf in reads:
        offset = _offset(n.args, loop)
        reads[n.uf].append(None if offset is None or loop is None else (id(loop), offset))


def _simple(n: For, params: set[str]) -> bool:
    """A step-1 loop whose bounds use parameters only (no UF read)."""
    return (
        n.step == 1
        and set(_expr_vars(n.init)) <= params
        and isinstance(n.cond, Op)
        and n.cond.op in ("<", "<=")
        and n.cond.args[0] == Var(n.var)
        and set(_expr_vars(n.cond.args[1])) <= params
        and not _has_read(n.init)
        and not _has_read(n.cond)
    )


def _offset(args: tuple[Expr, ...], loop: For | None) -> int | None:
    """``c`` when ``args`` is ``(loop.var + c,)``."""
    if loop is None or len(args) != 1:
        return None
    e, v = args[0], Var(loop.var)
    if e == v:
        return 0
    if isinstance(e, Op) and e.op in ("+", "-") and len(e.args) == 2:
        a, b = e.args
        if a == v and isinstance(b, Int):
            return b.value if e.op == "+" else -b.value
        if e.op == "+" and b == v and isinstance(a, Int):
            return a.value
    return None


def _has_read(e: Expr) -> bool:
    if isinstance(e, UFRead):
        return True
    return isinstance(e, Op) and any(_has_read(a) for a in e.args)


def _expr_reads(e: Expr, reads: dict[str, list[tuple[int, int] | None]]) -> None:
    """A read inside an expression (a loop bound, a condition): not of the dense form."""
    if isinstance(e, UFRead):
        if e.uf in reads:
            reads[e.uf].append(None)
        for a in e.args:
            _expr_reads(a, reads)
    elif isinstance(e, Op):
        for a in e.args:
            _expr_reads(a, reads)


def prechecked(program: Program) -> frozenset[str]:
    """The monotonic one-argument UFs whose domain is declared over the kernel's parameters:
    the checked function tests them whole before its loops (:func:`precheck_lines`: the
    order of neighbours and the range of the two ends, which then bound every entry; one
    pass the compiler vectorizes), and its loops read them as they are."""
    params = {a.name for a in program.signature.args if a.kind == "param"}
    out = set()
    for a in program.signature.args:
        uf = a.uf if a.kind == "uf" else None
        if uf is None or uf.monotonic is None or uf.arity != 1 or uf.domain is None:
            continue
        if uf.domain.params <= params:
            out.add(a.name)
    return frozenset(out)


def precheck_lines(
    program: Program, head: Sequence[str] = (), guarded: frozenset[str] = frozenset()
) -> list[str]:
    """The test of each :func:`prechecked` UF: entries ``first .. entries - 1`` of its
    declared domain (``spf_bounds``) in order and the two ends in range; else the first
    entry at fault is recorded (:func:`read_functions`' ``spf_scan_<uf>``) and the function
    returns before anything is written. ``head``: lines before the tests; the tests of the
    UFs ``guarded`` run only ``if (!spf_guarded)`` (the fused loop tests them in each row
    instead, :func:`spf.codegen.split_pairs.guard_row_lines`, and comes back here when one
    fails: then rows before it were written)."""
    out = list(head)
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    checked = prechecked(program)
    for n, a in enumerate(ufs):
        if a.name not in checked:
            continue
        worse = ">=" if a.uf is not None and a.uf.monotonic == "increasing" else ">"
        base = BOUNDS_PER_UF * n
        x = a.name
        out += [
            *(
                [f"if (!spf_guarded && spf_bounds[{base + 3}] > spf_first_{n})"]
                if x in guarded
                else []
            ),
            *([] if x in guarded else [f"if (spf_bounds[{base + 3}] > spf_first_{n})"]),
            "{",
            f"  const int64_t spf_end = spf_bounds[{base + 3}], spf_hi = spf_bounds[{base + 1}];",
            f"  int spf_bad = (int64_t){x}[spf_first_{n}] < spf_lo_{n} || "
            f"(int64_t){x}[spf_end - 1] > spf_hi;",
            f"  for (int64_t spf_t = spf_first_{n}; spf_t + 1 < spf_end; spf_t++)",
            f"    spf_bad |= {x}[spf_t] {worse} {x}[spf_t + 1];",
            "  if (spf_bad)",
            f"  {{ spf_scan_{x}({x}, spf_first_{n}, spf_end, spf_lo_{n}, spf_hi, spf_fault); "
            "return; }",
            "}",
        ]
    return out


def zero_based(program: Program) -> frozenset[str]:
    """The UF arguments whose declared range holds no negative value: their loops test
    ``v`` against ``[0, hi]`` with one unsigned comparison, no subtraction (a call whose
    lowest value is above 0 has the range checked before it instead)."""
    out = set()
    for a in program.signature.args:
        rng = a.uf.array_uf().range if a.kind == "uf" and a.uf is not None else None
        if rng is not None and rng.is_subset("{[spf_v]: spf_v >= 0}"):
            out.add(a.name)
    return frozenset(out)


def read_functions(
    program: Program, dense: dict[str, int | None], zero: frozenset[str], hashed: bool = True
) -> Chunk:
    """The fault recorder, the contents hash where the checked function ``hashed`` its index
    arrays (:func:`hashes`) and, per UF argument, ``spf_read_<uf>`` (the checks) and for a
    monotonic UF checked in the loops ``spf_value_<uf>`` (the range only). The range test
    is one unsigned comparison: ``v - lo > hi - lo`` (modulo 2**64), or ``v > hi`` for a
    :func:`zero_based` UF (``lim`` is ``hi - lo`` or ``hi``)."""
    lines: list[str] = []
    functions: list[Function] = []
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    whole = prechecked(program)
    for n, a in enumerate(ufs):
        mono = a.uf.monotonic if a.uf is not None else None
        if a.name in whole:  # tested before the loops (precheck_lines): read as it is
            lines += _prechecked_functions(a, n, mono == "increasing")
            functions += [_read_function("read", a), _scan_function(a)]
            continue
        if a.name not in dense and unranged(a):  # the widest bounds: nothing to test
            lines += _plain_read(a)
            functions.append(_read_function("read", a))
            continue
        variants = [("read", a.name in dense)] + ([("value", False)] if a.name in dense else [])
        for kind, ordered in variants:
            functions.append(_read_function(kind, a))
            lines.append(f"static inline {functions[-1].prototype}")
            lines.append("{")
            lines.append("  int64_t v = (int64_t)a[t];")
            if a.name in zero:
                test, hi = "(uint64_t)v > lim", "(int64_t)lim"
            else:
                test, hi = "(uint64_t)v - (uint64_t)lo > lim", "(int64_t)((uint64_t)lo + lim)"
            lines.append(f"  if (__builtin_expect({test}, 0))")
            lines.append(
                f"  {{ spf_fault_note(f, {FAULT_RANGE}, {n}, t, v); v = v < lo ? lo : {hi}; }}"
            )
            if ordered:
                bad = ">=" if mono == "increasing" else ">"
                lines.append(
                    f"  if (t > first && __builtin_expect((int64_t)a[t - 1] {bad} "
                    "(int64_t)a[t], 0))"
                )
                lines.append(f"    spf_fault_note(f, {FAULT_ORDER}, {n}, t, (int64_t)a[t]);")
            else:
                lines.append("  (void)first;")
            lines.append("  return v;")
            lines.append("}")
    digest = HASH if hashed else Chunk(())
    return Chunk(
        (*NOTE.lines, *digest.lines, *([""] if lines else []), *lines),
        functions=(*NOTE.functions, *digest.functions, *functions),
        macros=(*NOTE.macros, *digest.macros),
    )


def _read_function(kind: str, a: Arg) -> Function:
    """``spf_<kind>_<uf>``, a checked read of UF argument ``a`` (``static inline``)."""
    return _helper(a, kind, "int64_t", "int64_t t, int64_t lo, uint64_t lim, " + _FIRST_F)


def _scan_function(a: Arg) -> Function:
    """``spf_scan_<uf>``, the scan of a :func:`prechecked` UF argument ``a`` (``static``)."""
    return _helper(a, "scan", "void", "int64_t first, int64_t end, int64_t lo, int64_t hi, " + _F)


_F = "int64_t *restrict f"
_FIRST_F = "int64_t first, " + _F


def _helper(a: Arg, kind: str, result: str, params: str) -> Function:
    """The ``static`` helper ``spf_<kind>_<uf>`` of UF argument ``a``: its C parameters are
    the argument's entries (``a``) and then ``params``."""
    name = f"spf_{kind}_{a.name}"
    return Function(name, f"{result} {name}(const {a.ctype} *restrict a, {params})", static=True)


def unranged(a: Arg) -> bool:
    """A UF argument with no declared range (nor one the accesses its values index need):
    its bounds are the widest (:meth:`~spf.runtime.checks.UFCheck.loop_bounds`), so a read
    has nothing to test, e.g. an index array a fact check only compares."""
    uf = a.uf
    return uf is not None and uf.range is None and uf.array_uf().range is None


def _plain_read(a: Arg) -> list[str]:
    """``spf_read_<uf>`` of an :func:`unranged` UF: the entry as it is."""
    return [
        f"static inline {_read_function('read', a).prototype}",
        "{ (void)lo; (void)lim; (void)first; (void)f; return (int64_t)a[t]; }",
    ]


def _prechecked_functions(a: Arg, n: int, strict: bool) -> list[str]:
    """``spf_read_<uf>`` of a :func:`prechecked` UF (the entry as it is) and
    ``spf_scan_<uf>``, which records its first entry out of range or out of order."""
    worse = ">=" if strict else ">"
    scan = _scan_function(a).prototype
    return [
        *_plain_read(a),
        f"static {scan} __attribute__((cold));",
        f"static {scan}",
        "{",
        "  for (int64_t t = first; t < end; t++)",
        "  {",
        "    const int64_t v = (int64_t)a[t];",
        f"    if (v < lo || v > hi) {{ spf_fault_note(f, {FAULT_RANGE_BEFORE}, {n}, t, v); "
        "return; }",
        f"    if (t > first && (int64_t)a[t - 1] {worse} v)",
        f"    {{ spf_fault_note(f, {FAULT_ORDER_BEFORE}, {n}, t, v); return; }}",
        "  }",
        "}",
    ]


def checked_macros(program: Program, dense: dict[str, int | None]) -> list[Define]:
    """The macros that route every UF argument read through its check (each replacing
    the UF's plain read macro)."""
    out = []
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    for n, a in enumerate(ufs):
        arity = a.uf.array_uf().arity if a.uf is not None else 1
        params, index = uf_params(arity), uf_index(arity, a.inner)
        bounds = [cx.Name(b) for b in (f"spf_lo_{n}", f"spf_lim_{n}", f"spf_first_{n}")]
        args = (cx.Name(a.name), index, *bounds, cx.Name("spf_fault"))
        out.append(Define(a.name, params, cx.Call(f"spf_read_{a.name}", args), undef=True))
        if a.name in dense:
            out.append(Define(f"spf_v_{a.name}", params, cx.Call(f"spf_value_{a.name}", args)))
    return out


def bound_locals(
    program: Program,
    zero: frozenset[str],
    known: bool = True,
    hashed: bool = True,
    head: Sequence[str] = (),
    guarded: frozenset[str] = frozenset(),
) -> list[str]:
    """The checked function's first lines: each UF's bounds as locals (loop invariants the
    compiler keeps in registers; a load through ``spf_bounds`` could not be hoisted past the
    fault recorder's call), then the tests before the loops, and with ``known`` the way to
    the unchecked function (:func:`known_lines`, ``hashed`` as there: not in the range
    pass's fallback, which no call on known contents reaches and whose own build has no
    unchecked function); ``head`` and ``guarded`` as :func:`precheck_lines` takes them."""
    out = []
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    for n, a in enumerate(ufs):
        base = BOUNDS_PER_UF * n
        lim = f"(uint64_t)spf_bounds[{base + 1}]"
        if a.name not in zero:
            lim += f" - (uint64_t)spf_lo_{n}"
        out.append(
            f"const int64_t spf_lo_{n} = spf_bounds[{base}], spf_first_{n} = "
            f"spf_bounds[{base + 2}];"
        )
        out.append(f"const uint64_t spf_lim_{n} = {lim};")
        out.append(f"(void)spf_lo_{n}; (void)spf_lim_{n}; (void)spf_first_{n};")
    out.append("(void)spf_fault;")
    way = known_lines(program, hashed) if known else []
    return out + overlap_lines(program) + way + precheck_lines(program, head, guarded)


def hashes(program: Program, *, fault_record: bool, parallel: bool) -> bool:
    """Whether the checked function of ``program`` hashes its index arrays itself
    (:func:`known_lines`, :mod:`spf.codegen.contents_hash`): only where its kernel can take
    that way (``spf.runtime.kernel.Kernel._hashed``): index arrays, none of them written,
    no ``fault_record`` (:func:`spf.codegen.faults.needed`), no OpenMP ``parallel`` region
    in the unit, and the overlap test in C (:func:`overlaps_in_c`). Elsewhere the hash would
    be C that gcc compiles for nothing (0.03-0.06 s of CPU a unit, measured on the shared
    machine: MTTKRP's parallel slices, the sparse outputs' passes with a fault record)."""
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    return (
        bool(ufs)
        and all(a.const for a in ufs)
        and not fault_record
        and not parallel
        and overlaps_in_c(program)
    )


def known_lines(program: Program, hashed: bool = True) -> list[str]:
    """The checked function's way to the unchecked one: a call on index arrays whose
    contents a checked call verified (spf.runtime.known) sets ``spf_bounds``' word after the
    UFs' (:data:`BOUNDS_PER_UF` each); the function then runs the unchecked loops once the
    overlap test (before this) passed. With the word :data:`KNOWN_HASHED`, the function
    first hashes each index array (:mod:`spf.codegen.contents_hash`, the bytes the next
    words give, one per UF after the verified contents' hash) and runs the unchecked loops
    only when the hash is the verified one; other contents record
    :data:`FAULT_NEW_CONTENTS` with their hash and return before anything is written.
    Without ``hashed`` (:func:`hashes`) the word's value 1 alone is read (the kernel keys
    its calls in Python: spf.runtime.known), and no hash is printed."""
    sig = program.signature
    ufs = [a.name for a in sig.args if a.kind == "uf"]
    word = BOUNDS_PER_UF * len(ufs)
    call = ", ".join(a.name for a in sig.args)
    feeds = " ".join(
        f"{HASH_NAME}(spf_hs, {uf}, (uint64_t)spf_bounds[{word + 2 + n}]);"
        for n, uf in enumerate(ufs)
    )
    run = f"if (spf_bounds[{word}]) {{ {sig.function}({call}); return; }}"
    if not hashed:
        return [run]
    return [
        f"if (spf_bounds[{word}] == {KNOWN_HASHED})",
        "{",
        f"  uint64_t spf_hs[{contents_hash.STATE_WORDS}]; {contents_hash.START}(spf_hs, 0);",
        f"  {feeds}",
        f"  const uint64_t spf_h = {contents_hash.END}(spf_hs);",
        f"  if (spf_h != (uint64_t)spf_bounds[{word + 1}])",
        f"  {{ spf_fault_note(spf_fault, {FAULT_NEW_CONTENTS}, 0, 0, (int64_t)spf_h); return; }}",
        "}",
        run,
    ]


def overlaps_in_c(program: Program) -> bool:
    """Whether the checked function verifies that no written array overlaps another: every
    data space has a declared shape (a UF's extent comes with ``spf_bounds``)."""
    data = [a for a in program.signature.args if a.kind == "data"]
    return any(not a.const for a in data) and all(a.shape is not None for a in data)


def overlap_lines(program: Program) -> list[str]:
    """The checked function's test that no written array shares memory with another
    argument, over the bytes the kernel may touch: a data space's declared shape, a UF's
    entries up to its declared domain (``spf_bounds``; a UF without one is not compared).
    An overlap records :data:`FAULT_OVERLAP` and returns before anything is written."""
    if not overlaps_in_c(program):
        return []
    arrays = [a for a in program.signature.args if a.kind != "param"]
    ufs = [a for a in arrays if a.kind == "uf"]
    starts, sizes = [], []
    for a in arrays:
        starts.append(f"(uintptr_t){a.name}")
        if a.kind == "uf":
            entries = f"spf_bounds[{BOUNDS_PER_UF * ufs.index(a) + 3}]"
            sizes.append(f"({entries} < 0 ? 0 : (uintptr_t){entries} * sizeof({a.ctype}))")
        else:
            extents = " * ".join(f"(uintptr_t)({e})" for e in a.shape or ()) or "1"
            sizes.append(f"{extents} * sizeof({a.ctype})")
    count = len(arrays)
    written = [k for k, a in enumerate(arrays) if a.kind == "data" and not a.const]
    out = [
        f"const uintptr_t spf_at[{count}] = {{{', '.join(starts)}}};",
        f"const uintptr_t spf_size[{count}] = {{{', '.join(sizes)}}};",
        f"static const int spf_written[{len(written)}] = {{{', '.join(map(str, written))}}};",
        f"for (int spf_k = 0; spf_k < {len(written)}; spf_k++)",
        "{",
        "  const int spf_w = spf_written[spf_k];",
        "  if (!spf_size[spf_w]) continue;",
        f"  for (int spf_o = 0; spf_o < {count}; spf_o++)",
        "    if (spf_o != spf_w && spf_size[spf_o] && spf_at[spf_w] < spf_at[spf_o] + "
        "spf_size[spf_o] && spf_at[spf_o] < spf_at[spf_w] + spf_size[spf_w])",
        f"    {{ spf_fault_note(spf_fault, {FAULT_OVERLAP}, spf_w, spf_o, 0); return; }}",
        "}",
    ]
    return out


def implied_text(implied: tuple[tuple[int, tuple[int, ...]], ...]) -> str:
    """``2:0.1.4,3:0.1.4``: each implied fact and the facts it follows from."""
    return ",".join(f"{n}:{'.'.join(map(str, by))}" for n, by in implied)


def parse_implied(text: str) -> dict[int, tuple[int, ...]]:
    """What :func:`implied_text` wrote."""
    out: dict[int, tuple[int, ...]] = {}
    for item in filter(None, text.split(",")):
        n, _, by = item.partition(":")
        out[int(n)] = tuple(int(b) for b in by.split(".") if b)
    return out


def facts_function(
    function: str,
    dense: dict[str, int | None],
    zero: frozenset[str],
    in_loop: frozenset[int] = frozenset(),
    overlap: bool = False,
    each_call: tuple[int, ...] = (),
    implied: tuple[tuple[int, tuple[int, ...]], ...] = (),
    hashed: bool = True,
) -> str:
    """``<monotonic UFs the loops order-check>;<zero-based UFs>;<facts the loops check>;
    <overlap>;<each-call facts tested before the loops>;<implied facts>;hash`` (comma-separated
    names, then fact numbers, then ``overlap`` when the function tests that no written array
    overlaps another, then fact numbers, then ``fact:by.by`` for each fact not checked
    because the facts ``by`` imply it, :func:`implied_text`, then ``hash`` where the function
    hashes its index arrays itself, ``hashed``: :func:`known_lines`)."""
    facts = ",".join(str(n) for n in sorted(in_loop))
    text = f"{','.join(sorted(dense))};{','.join(sorted(zero))};{facts}"
    text += ";overlap" if overlap else ";"
    text += ";" + ",".join(map(str, each_call))
    text += ";" + implied_text(implied) + (";hash" if hashed else ";")
    return f'{facts_prototype(function)} {{ return "{text}"; }}'


# -------------------------------------------------------------------------- facts in loops
FAULT_FACT = 5
"""``spf_fault`` kind of a fact the loops found broken: ``[5, fact number, first variable,
second variable]`` (the caller finds the first violating point itself)."""


def plan_fact_checks(ir: ComputationIR, program: Program, proved: bool = True) -> Program:
    """``program`` with the facts its statements check in the loops
    (:func:`spf.analysis.fact_plan.in_loop_plan`): the assumptions and the bounds
    obligations over index arrays the kernel takes as arguments, less those an access
    needs to stay in bounds (:func:`spf.analysis.in_loop_safety.safe_in_loop`, from the
    bounds proof of ``ir``; ``proved=False``: codegen made none, and every fact is tested
    before the loops), less the tests another fact's test at the same statement makes
    redundant (:mod:`spf.analysis.dominated_checks`)."""
    from spf.analysis.bounds import analyze_bounds
    from spf.analysis.dominated_checks import drop_dominated
    from spf.analysis.fact_plan import in_loop_plan, kernel_facts, plan_facts
    from spf.analysis.in_loop_safety import safe_in_loop
    from spf.codegen.each_call import plan_each_call, ranges_needed
    from spf.codegen.injective_marks import plan_marks

    facts = kernel_facts(ir, [o.text for o in program.obligations])
    args = {a.name for a in program.signature.args if a.kind == "uf"}
    plans = [p for p in plan_facts(facts, ir.uf_decls, sorted(ir.params)) if p.checked.ufs <= args]
    stmts = [s.name for s in program.stmts if s.operation is None]
    candidates = [p for p in plans if p.number < len(ir.facts)] if proved else []
    checks, covered, rests = in_loop_plan(ir, stmts, candidates, facts)
    implied = {p.number: p.implied_by for p in plans if p.implied_by}
    if covered:
        covered = safe_in_loop(ir, analyze_bounds(ir), covered, implied, program.obligations)
    each = plan_each_call(ir, program, plans, covered, rests)
    # a fact the loops test but for one point stays there only if that point is tested
    # before them; otherwise it is tested whole before them, as any fact the loops miss
    missed = {n for n in covered & rests.keys() if each is None or n not in each.facts}
    if missed:
        covered -= missed
        each = plan_each_call(ir, program, plans, covered, rests)
    checks = drop_dominated(c for c in checks if c.fact in covered)
    if each is not None and each.compared:
        each = replace(each, ranges=ranges_needed(ir, facts, each.compared))
    return replace(
        program,
        fact_checks=checks,
        in_loop_facts=covered,
        each_call=each,
        implied_facts=tuple(implied.items()),
        marks=plan_marks(program, plans, covered),
    )


def checks_by_stmt(program: Program) -> dict[str, list[InLoopCheck]]:
    out: dict[str, list[InLoopCheck]] = {}
    for c in program.fact_checks:
        out.setdefault(c.stmt, []).append(c)
    return out


def peek_functions(program: Program, zero: frozenset[str]) -> Chunk:
    """``spf_peek_<uf>(...)`` for each UF the fact checks read: the value clamped to the
    declared range like a checked read, but not recorded (the loops' own reads record a
    value out of range; a check only needs a safe index for the read it is the argument
    of); and ``spf_raw_<uf>(...)``, the value as it is (what a check compares)."""
    used = {_uf_name(f) for c in program.fact_checks for f in _calls(c)}
    out: list[str] = []
    functions: list[Function] = []
    macros: list[str] = []
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    for n, a in enumerate(ufs):
        if a.name not in used:
            continue
        test = "(uint64_t)v > lim" if a.name in zero else "(uint64_t)v - (uint64_t)lo > lim"
        functions.append(_helper(a, "clamp", "int64_t", "int64_t t, int64_t lo, uint64_t lim"))
        out.append(
            f"static inline {functions[-1].prototype} {{ const int64_t v = (int64_t)a[t]; "
            f"return {test} ? lo : v; }}"
        )
        arity = a.uf.array_uf().arity if a.uf is not None else 1  # f(i)[c] is f(i, c)
        params, index = uf_params(arity), uf_index(arity, a.inner)
        bounds = (cx.Name(f"spf_lo_{n}"), cx.Name(f"spf_lim_{n}"))
        peek = cx.Call(f"spf_clamp_{a.name}", (cx.Name(a.name), index, *bounds))
        raw = as_int64(uf_element(a.name, arity, a.inner))
        out += Define(f"spf_peek_{a.name}", params, peek).lines()
        out += Define(f"spf_raw_{a.name}", params, raw).lines()
        macros += [f"spf_peek_{a.name}", f"spf_raw_{a.name}"]
    return Chunk(tuple(out), functions=tuple(functions), macros=tuple(macros))


def _calls(c: InLoopCheck) -> list[Aff]:
    from spf.analysis.fact_plan import uf_calls

    return uf_calls((*c.guard, *c.conclusion))


def _uf_name(call: Aff) -> str:
    """The UF a call reads (a tuple-valued UF's component reads the UF's array)."""
    a = call.as_atom()
    assert isinstance(a, AffCall)
    return a.base


BoundKey = tuple[Any, ...]
"""A UF read normalised (:func:`read_key`): the key of a value bound in scope."""


def read_key(uf: str, args: tuple[Expr, ...]) -> BoundKey | None:
    """``uf(args)`` with each argument as a sorted linear form (None: not linear)."""
    keys = []
    for a in args:
        k = _linear(a)
        if k is None:
            return None
        keys.append(tuple(sorted(k.items(), key=repr)))
    return (uf, tuple(keys))


def _linear(e: Expr) -> dict[Any, int] | None:
    """``e`` as ``{atom: coefficient}`` (atom ``()`` for the constant; a variable name; a
    :func:`read_key`), or None."""
    if isinstance(e, Int):
        return {(): e.value}
    if isinstance(e, Var):
        return {e.name: 1}
    if isinstance(e, UFRead):
        key = read_key(e.uf, e.args)
        return None if key is None else {key: 1}
    if e.op == "neg":
        inner = _linear(e.args[0])
        return None if inner is None else {k: -v for k, v in inner.items()}
    if e.op in ("+", "-") and len(e.args) == 2:
        a, b = _linear(e.args[0]), _linear(e.args[1])
        if a is None or b is None:
            return None
        sign = 1 if e.op == "+" else -1
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, 0) + sign * v
        return {k: v for k, v in out.items() if v}
    if e.op == "*" and len(e.args) == 2:
        a, b = _linear(e.args[0]), _linear(e.args[1])
        if a is None or b is None:
            return None
        for const, other in ((a, b), (b, a)):
            if set(const) <= {()}:
                c = const.get((), 0)
                return {k: c * v for k, v in other.items() if c * v}
    return None


def fact_check_lines(
    check: InLoopCheck,
    params: tuple[str, ...],
    args: tuple[Expr, ...],
    bound: dict[BoundKey, str],
    flags: bool = False,
) -> list[str]:
    """The C lines testing ``check`` at one statement instance: the statement's iterators
    ``params`` take the call's ``args``; a UF value ``bound`` in scope is used as it is
    (no second load), any other is a clamped peek. ``flags``: the function has no parallel
    region, so a failure sets the fact's bit of the local ``spf_facts`` (recorded once, after
    the loops: no call inside them); else it is recorded at once with its point."""
    from spf.codegen.c import expr

    env = dict(zip(params, args, strict=True))
    guard = [_condition(t, env, bound) for t in check.guard]
    holds = conjunction([_condition(t, env, bound) for t in check.conclusion])
    fails = Op("==", (holds, Int(0)))
    cond = conjunction([*guard, fails])
    if flags:
        bit = f"((uint64_t)1 << {min(check.fact, FACT_BITS - 1)})"
        if _peeks(cond):  # a peek is safe behind its guard only
            return [f"if ({expr(cond)}) spf_facts |= {bit};"]
        return [f"spf_facts |= (uint64_t)({expr(cond)}) * {bit};"]
    point = [_expr(p, env, bound) for p in check.point[:2]]
    point += [Int(0)] * (2 - len(point))
    where = ", ".join(f"(int64_t)({expr(p)})" for p in point)
    return [
        f"if (__builtin_expect({expr(cond)}, 0))",
        f"  spf_fault_note(spf_fault, {FAULT_FACT}, {check.fact}, {where});",
    ]


FACT_BITS = 64
"""Facts numbered ``FACT_BITS - 1`` and above share the last bit of ``spf_facts``."""


def fact_bits(checks: Iterable[InLoopCheck]) -> int:
    """The bits of ``spf_facts`` the in-loop ``checks`` set when they fail."""
    bits = 0
    for check in checks:
        bits |= 1 << min(check.fact, FACT_BITS - 1)
    return bits


def fact_flag_lines(first: bool) -> list[str]:
    """The declaration (``first``) or the final record of ``spf_facts``: the lowest fact
    whose bit is set, without a point (the caller finds the first violating one)."""
    if first:
        return ["uint64_t spf_facts = 0;"]
    return [
        "if (spf_facts)",
        f"  spf_fault_note(spf_fault, {FAULT_FACT}, __builtin_ctzll(spf_facts), -1, 0);",
    ]


def serial(program: Program) -> bool:
    """No parallel region in the function (a local the loops OR into is then safe)."""
    from spf.codegen.loop_ast import walk

    tags = {"parallel", "wavefront_levels", "wavefront_rows", "wavefront_p2p"}
    return not any(isinstance(n, For) and tags & set(n.tags) for n in walk(program.body))


def _peeks(e: Expr) -> bool:
    if isinstance(e, UFRead):
        return True
    return isinstance(e, Op) and any(_peeks(a) for a in e.args)


def _condition(term: tuple[bool, Aff], env: dict[str, Expr], bound: dict[BoundKey, str]) -> Expr:
    """``e >= 0`` / ``e = 0`` written ``lhs >= rhs`` with positive terms on both sides."""
    eq, e = term
    left = Aff({a: c for a, c in e.coeffs.items() if c > 0}, max(e.const, Fraction(0)))
    right = Aff({a: -c for a, c in e.coeffs.items() if c < 0}, max(-e.const, Fraction(0)))
    lhs = _expr(left, env, bound)
    rhs = _expr(right, env, bound)
    return Op("==" if eq else ">=", (lhs, rhs))


def _sign(t: Aff) -> int:
    """The sign of a one-term expression's coefficient."""
    c = t.const if t.is_constant() else next(iter(t.coeffs.values()))
    return (c > 0) - (c < 0)


def _expr(e: Aff, env: dict[str, Expr], bound: dict[BoundKey, str], nested: bool = False) -> Expr:
    """An expression of the analysis as a loop-AST expression of the call's values. A
    UF value not bound in scope is read as it is (``spf_raw_<uf>``: its index lies in the
    domain the guard established, and the value is only compared) unless it is the argument
    of another read (``nested``): then it is clamped to the declared range
    (``spf_peek_<uf>``), so that the outer read stays inside its array."""
    if e.is_integer():
        return Int(int(e))
    if len(e.coeffs) + bool(e.const) > 1:
        terms = [Aff({a: c}, Fraction(0)) for a, c in e.coeffs.items()]
        if e.const:
            terms.append(Aff({}, e.const))
        terms.sort(key=lambda t: (t.is_constant(), str(t)))  # the constant last
        out = _expr(terms[0], env, bound, nested)
        for t in terms[1:]:
            negative = _sign(t) < 0
            term = _expr(-t if negative else t, env, bound, nested)
            out = Op("-" if negative else "+", (out, term))
        return out
    if not e.coeffs:
        raise InternalError(f"spf bug: cannot print {e} in a fact check")
    ((atom, coeff),) = e.coeffs.items()
    if coeff != 1:
        rest = Aff.atom(atom)
        if coeff == -1:
            return Op("neg", (_expr(rest, env, bound, nested),))
        if coeff.denominator == 1:
            return Op("*", (Int(int(coeff)), _expr(rest, env, bound, nested)))
    elif isinstance(atom, Sym):
        return env.get(atom.name, Var(atom.name))
    elif isinstance(atom, AffCall):
        args = tuple(_expr(a, env, bound, True) for a in atom.args)
        name = atom.base
        key = read_key(name, args)
        if key is not None and key in bound:
            return Var(bound[key])
        return UFRead(f"spf_{'peek' if nested else 'raw'}_{name}", args)
    raise InternalError(f"spf bug: cannot print {e} in a fact check")

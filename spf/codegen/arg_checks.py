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

``spf_fault`` (:data:`FAULT_WORDS` int64) receives ``[kind, UF number, index, value]`` of the
first fault (kind :data:`FAULT_RANGE` or :data:`FAULT_ORDER`; 0: none). ``f_spf_checked_facts``
returns ``<UFs whose monotonicity the loops check>;<zero-based UFs>`` (comma-separated
names); the caller checks the other monotonic UFs separately (:mod:`spf.runtime.checks`), and
the range of a zero-based UF whose lowest value is above 0 for the call's parameters. A call
with ``check=True`` (:class:`~spf.runtime.kernel.Kernel`) runs ``f_spf_checked``;
``check=False`` runs ``f``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from spf.codegen import faults
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
    cursor_exprs,
)
from spf.codegen.loop_ast import expr_vars as _expr_vars

if TYPE_CHECKING:
    from spf.codegen.program import Program
    from spf.codegen.signature import Signature

CHECKED_SUFFIX = "_spf_checked"
"""``f`` + this: the checked function."""
FACTS_SUFFIX = "_spf_checked_facts"
"""``f`` + this: the UFs whose monotonicity the checked function verifies."""
BOUNDS_PER_UF = 3
"""``spf_bounds`` words per UF argument: lowest value, highest value, lowest domain index."""
FAULT_WORDS = faults.FAULT_WORDS
"""``spf_fault``: kind, UF number (among the UF arguments), index (linearised), value (the
record :mod:`spf.codegen.faults` describes, which index faults and allocations share)."""
FAULT_RANGE = 1
FAULT_ORDER = 2

EXTRA_ARGS = "const int64_t *restrict spf_bounds, int64_t *restrict spf_fault"


def checked_prototype(program: Program) -> str:
    """The C prototype of the checked function."""
    return checked_prototype_of(program.signature)


def checked_prototype_of(sig: Signature) -> str:
    """The C prototype of the checked function of a kernel with signature ``sig``."""
    params = ", ".join([*(a.c_decl() for a in sig.args), EXTRA_ARGS])
    return f"void {sig.function}{CHECKED_SUFFIX}({params})"


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
    }
    if not wanted:
        return {}
    reads: dict[str, list[tuple[int, int] | None]] = {u: [] for u in wanted}
    _collect(program.body, None, params, reads)
    for s in program.stmts:
        text = " ".join([*s.lines, *(r.target + r.value for r in (s.reduction, s.update) if r)])
        for u in wanted:
            if re.search(rf"\b{re.escape(u)}\s*\(", text):
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


def read_functions(program: Program, dense: dict[str, int | None], zero: frozenset[str]) -> str:
    """The fault recorder and, per UF argument, ``spf_read_<uf>`` (the checks) and for a
    monotonic UF checked in the loops ``spf_value_<uf>`` (the range only), as C text. The
    range test is one unsigned comparison: ``v - lo > hi - lo`` (modulo 2**64), or
    ``v > hi`` for a :func:`zero_based` UF (``lim`` is ``hi - lo`` or ``hi``)."""
    lines = [NOTE]
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    for n, a in enumerate(ufs):
        mono = a.uf.monotonic if a.uf is not None else None
        variants = [("read", a.name in dense)] + ([("value", False)] if a.name in dense else [])
        for kind, ordered in variants:
            lines.append(
                f"static inline int64_t spf_{kind}_{a.name}(const {a.ctype} *restrict a, "
                "int64_t t, int64_t lo, uint64_t lim, int64_t first, int64_t *restrict f)"
            )
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
    return "\n".join(lines) + "\n"


def checked_macros(program: Program, dense: dict[str, int | None]) -> list[str]:
    """``#undef``/``#define`` lines that route every UF argument read through its check."""
    out = []
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    for n, a in enumerate(ufs):
        arity = a.uf.array_uf().arity if a.uf is not None else 1
        params = ", ".join(f"t{k}" for k in range(arity))
        index = "t0"
        for k, extent in enumerate(a.inner, start=1):
            index = f"({index}) * ({extent}) + (t{k})"
        bounds = f"spf_lo_{n}, spf_lim_{n}, spf_first_{n}, spf_fault"
        out.append(f"#undef {a.name}")
        out.append(f"#define {a.name}({params}) spf_read_{a.name}({a.name}, ({index}), {bounds})")
        if a.name in dense:
            out.append(
                f"#define spf_v_{a.name}({params}) spf_value_{a.name}({a.name}, ({index}), "
                f"{bounds})"
            )
    return out


def bound_locals(program: Program, zero: frozenset[str]) -> list[str]:
    """The checked function's first lines: each UF's bounds as locals (loop invariants the
    compiler keeps in registers; a load through ``spf_bounds`` could not be hoisted past the
    fault recorder's call)."""
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
    return out


def facts_function(function: str, dense: dict[str, int | None], zero: frozenset[str]) -> str:
    """``<monotonic UFs the loops order-check>;<zero-based UFs>`` (comma-separated names)."""
    text = f"{','.join(sorted(dense))};{','.join(sorted(zero))}"
    return f'{facts_prototype(function)} {{ return "{text}"; }}'

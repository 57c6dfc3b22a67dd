"""One test per entry for a sparse row's range and sorted-pairs checks (issue 28, item 1).

A checked function (:mod:`spf.codegen.arg_checks`) tests, in the innermost loop of a
sparse row (CSR's ``k`` from ``U(i)`` to ``U(i + 1)``), each index value it reads against
its UF's range (``col(k)``: a compare and a branch) and a neighbouring-pairs fact on the
values just loaded (sorted rows: ``col(k - 1) < col(k)`` inside a row: a second load, two
compares and a branch). Where such a fact has gap ``m`` of 0 or 1 (``V(k) - V(k - 1) >= m``)
over the one index array ``V`` the row loop reads at ``k``, both tests are one: the value
``v`` must lie in ``[prev + m, hi]`` (``[lo, hi]`` at the row's first entry), which is one
unsigned comparison, ``hi - v < room``, where ``room`` is ``hi - prev + 1 - m`` after each
entry and ``hi - lo + 1`` at each row's start (:func:`helper_chunk` says why it is exact).
Only a value that fails it takes the slow path, which tells the two apart exactly as the
separate tests do: out of range, the fault is recorded and the value clamped (the same
record and clamp as ``spf_read_<uf>``); in range, the fact's bits of ``spf_facts`` are set
when the value breaks the pair with the row's previous one (the error then names the first
violating point, found by the fact's own check loop, as before). Results are bitwise those
of the unchecked function (same statements, same order).

Measured on the loaded 2-core machine (C time of the checked function over the unchecked
one, 21 interleaved batches, medians; ``spmv(CSR)``, before -> after): int64 ``cryg2500``
1.49 -> 1.28, ``arrow`` 1.35 -> 1.06, ``bcsstk13`` 1.36 -> 1.23, ``jagmesh7`` 1.73 -> 1.53,
``bayer10`` 1.27 -> 1.23; int32 (against :mod:`spf.codegen.row_blocks`' blocks) ``bayer10``
1.30 -> 1.23, ``pushpull`` 1.26 -> 1.16, ``jagmesh7`` 1.43 -> 1.29, ``dense-row 50k`` 1.28
-> 0.81. The blocks then apply only where this does not (:func:`plan` returns None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.codegen import row_blocks
from spf.codegen.arg_checks import FAULT_RANGE, checked_macros, zero_based
from spf.codegen.loop_ast import Bind, For, Var, walk
from spf.codegen.unit import Chunk, Function

if TYPE_CHECKING:
    from spf.analysis.fact_plan import InLoopCheck
    from spf.codegen.program import Program


@dataclass(frozen=True)
class Fused:
    """Index array ``uf`` (C type ``ctype``, number ``n`` among the UF arguments, ``zero``:
    its range test is ``v <= hi`` unsigned), read once per entry of the row loop, whose
    neighbouring-pairs fact ``pair`` is tested with its range."""

    uf: str
    ctype: str
    n: int
    zero: bool
    pair: row_blocks.Pair


@dataclass(frozen=True)
class RowPairs:
    """The loop over rows ``outer`` and the index arrays whose reads test their pairs."""

    outer: For
    fused: tuple[Fused, ...]

    @property
    def replaced(self) -> frozenset[InLoopCheck]:
        """The in-loop checks the fused reads replace."""
        return frozenset(c for f in self.fused for c in f.pair.checks)


def plan(
    program: Program,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
) -> RowPairs | None:
    """The fused reads of ``program``'s checked row loop, or None where they do not apply:
    the loops must have CSR's shape (:func:`spf.codegen.row_blocks.shape`) and each pair
    fact a gap of 0 or 1 over an index array the row loop reads once per entry, first thing
    in its body (so that every entry updates ``room``, in order)."""
    shape = row_blocks.shape(program, checks, params)
    if shape is None:
        return None
    loop = next(n for n in walk(shape.outer.body) if isinstance(n, For))
    ranged = {name: (ctype, n) for name, ctype, n in shape.ranged}
    first = _first_reads(loop)
    reads = [r.uf.removeprefix("spf_v_") for r in row_blocks._reads(loop.body)]
    zero = zero_based(program)
    out = []
    for p in shape.pairs:
        if p.uf not in ranged or p.gap not in (0, 1) or reads.count(p.uf) != 1:
            return None
        if p.uf not in first or sum(q.uf == p.uf for q in shape.pairs) != 1:
            return None
        ctype, n = ranged[p.uf]
        out.append(Fused(p.uf, ctype, n, p.uf in zero, p))
    return RowPairs(shape.outer, tuple(out)) if out else None


def _first_reads(loop: For) -> set[str]:
    """The index arrays the chain of ``Bind`` opening ``loop``'s body reads at its
    variable (each read once per iteration, before anything else)."""
    out, body = set(), loop.body
    while isinstance(body, Bind):
        if body.args == (Var(loop.var),):
            out.add(body.uf)
        body = body.body
    return out


def helper_chunk(pairs: RowPairs) -> Chunk:
    """``spf_pair_<uf>`` per fused array: the read, its one test and the slow path.

    Why one test is exact: ``[lo, hi]`` is the range the read's own test accepts
    (``spf_read_<uf>``: ``(uint64_t)v <= lim`` from 0, or ``(uint64_t)v - lo <= lim``),
    ``top`` is ``hi``, and the fused loop runs only where that range is one interval of
    int64 values of fewer than ``2**64`` (:func:`whole`; else the checked loops run). With
    ``prev`` in ``[lo, hi]`` (or ``lo - 1`` at a row's start) and ``room = hi - prev + 1 - m``
    (``hi - lo + 1`` at the start: never more), ``(uint64_t)(hi - v) < room`` holds exactly
    for ``prev + m <= v <= hi``: for ``v <= hi`` the difference is exact, and for ``v > hi``
    it wraps to ``2**64 - (v - hi) >= hi - lo + 1`` (``v - lo < 2**64``). So a value in range
    that fails it breaks the pair (at a row's start none fails), and the slow path tells the
    range apart only. A value out of range (recorded, clamped: the clamped value may lie
    outside ``[lo, hi]``) leaves ``room`` as it was, so the next values are still tested
    against ``[lo, hi]`` (their facts are not reported: the first fault is)."""
    lines: list[str] = []
    functions = []
    for f in pairs.fused:
        name = f"spf_pair_{f.uf}"
        proto = (
            f"int64_t {name}(const {f.ctype} *restrict a, int64_t t, int64_t lo, uint64_t lim, "
            "int64_t top, uint64_t *restrict room, uint64_t bits, uint64_t *restrict facts, "
            "int64_t *restrict f)"
        )
        functions.append(Function(name, proto, static=True))
        if f.zero:
            test, hi = "(uint64_t)v > lim", "(int64_t)lim"
        else:
            test, hi = "(uint64_t)v - (uint64_t)lo > lim", "(int64_t)((uint64_t)lo + lim)"
        lines += [
            f"static inline {proto}",
            "{",
            "  int64_t v = (int64_t)a[t];",
            "  if (__builtin_expect((uint64_t)top - (uint64_t)v >= *room, 0))",
            "  {",
            f"    if ({test})",
            f"    {{ spf_fault_note(f, {FAULT_RANGE}, {f.n}, t, v); return v < lo ? lo : {hi}; }}",
            "    *facts |= bits;",
            "  }",
            f"  *room = (uint64_t)top - (uint64_t)v + {1 - f.pair.gap};",
            "  return v;",
            "}",
        ]
    return Chunk(tuple(lines), functions=tuple(functions))


def whole(pairs: RowPairs) -> str:
    """The C condition under which the fused loop runs: each fused array's accepted range
    is one interval ``[lo, hi]`` of int64 values, ``hi - lo + 1 < 2**64``."""
    out = []
    for f in pairs.fused:
        lim = f"spf_lim_{f.n}"
        if f.zero:
            out.append(f"{lim} <= (uint64_t)INT64_MAX")
        else:
            top = f"(uint64_t)INT64_MAX - (uint64_t)spf_lo_{f.n}"
            out.append(f"({lim} <= {top} && {lim} != UINT64_MAX)")
    return " && ".join(out)


def open_lines(pairs: RowPairs) -> list[str]:
    """Before the fused row loop: each fused array's ``top`` (``hi``), ``span``
    (``hi - lo + 1``) and ``room``, and its read macro through ``spf_pair_<uf>``."""
    out = []
    for f in pairs.fused:
        n, lo, lim = f.n, f"spf_lo_{f.n}", f"spf_lim_{f.n}"
        top = f"(int64_t){lim}" if f.zero else f"(int64_t)((uint64_t){lo} + {lim})"
        out += [
            f"const int64_t spf_top_{n} = {top};",
            f"const uint64_t spf_span_{n} = {lim} + 1;",
            f"uint64_t spf_room_{n} = spf_span_{n};",
            f"#undef {f.uf}",
            f"#define {f.uf}(t0) spf_pair_{f.uf}({f.uf}, t0, {lo}, {lim}, spf_top_{n}, "
            f"&spf_room_{n}, (uint64_t){f.pair.bits}ULL, &spf_facts, spf_fault)",
        ]
    return out


def row_lines(pairs: RowPairs) -> list[str]:
    """At each row's start: no previous entry, the whole range."""
    return [f"spf_room_{f.n} = spf_span_{f.n};" for f in pairs.fused]


def close_lines(pairs: RowPairs, program: Program, dense: dict[str, int | None]) -> list[str]:
    """After the row loop: the fused arrays' checked read macros again."""
    names = {f.uf for f in pairs.fused}
    return [line for d in checked_macros(program, dense) if d.name in names for line in d.lines()]

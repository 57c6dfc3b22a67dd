"""The range pass of a checked function: index arrays tested whole before the loops.

The checked function ``f_spf_checked`` (:mod:`spf.codegen.arg_checks`) tests every value
its loops read from an index array against the UF's declared range, where the value is
read: a compare and a branch per read, which costs more than the read itself in a tight
loop (a scatter or a gather, a column loop) and keeps the compiler from vectorizing it. For
each :func:`ranged` UF (one argument, a declared range and a domain over the kernel's
parameters, not monotonic: those are tested whole already, :func:`~spf.codegen.arg_checks.
prechecked`), the checked function first runs one branch-free pass over the entries its
declared domain covers, one unsigned comparison per entry in the array's own width (the
compiler vectorizes it), and then

* all in range: runs its loops reading those arrays as they are, with every other check
  (facts, the other UFs' reads) unchanged;
* any out of range: returns with :data:`FAULT_READS` in its fault record, before its loops
  ran; the caller (:class:`~spf.runtime.kernel.Kernel`) then calls ``f_spf_checked_reads``
  with the same arguments, the loops with every read checked, which reports the first value
  the kernel actually reads out of range, exactly as before (an entry the kernel never reads
  is still not an error: that call then completes).

The fallback is printed in the same unit between ``#ifdef`` :data:`READS_MACRO` and
``#else``, and everything the unit exports otherwise outside it: the kernel's build leaves
it out (gcc compiled the sorted SpGEMM's single pass and bound about 0.13 s faster without
their fallbacks, a fourth of its compiler time), and the first call that needs it builds
the same text with that macro defined, the fallback alone (:mod:`spf.runtime.reads_fallback`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from spf import cexpr as cx
from spf.codegen.arg_checks import BOUNDS_PER_UF, checked_prototype_of, prechecked
from spf.codegen.macros import Define, as_int64, uf_element, uf_params
from spf.codegen.range_reads import pass_pays
from spf.codegen.unit import Chunk, Function

if TYPE_CHECKING:
    from spf.codegen.program import Program
    from spf.codegen.signature import Arg

READS_SUFFIX = "_spf_checked_reads"
"""``f`` + this: the checked function with every index read checked (the fallback)."""
READS_MACRO = "SPF_CHECKED_READS"
"""Defined (``-D``) by the fallback's own build: the unit then defines the fallback alone."""
FAULT_READS = 11
"""The fault kind the checked function records when its range pass found a value out of
range: the caller runs the fallback (its loops have not run; the record holds nothing else)."""
_INT64 = np.iinfo(np.int64)


def ranged(program: Program) -> frozenset[str]:
    """The UF arguments the range pass tests: one argument, one value, a declared range,
    a declared domain over the kernel's parameters, not monotonic, not tested whole, and
    read only where a pass before the loops costs less than the tests where it is read
    (:func:`spf.codegen.range_reads.pass_pays`)."""
    params = {a.name for a in program.signature.args if a.kind == "param"}
    whole = prechecked(program)
    out = set()
    for a in program.signature.args:
        uf = a.uf if a.kind == "uf" else None
        if uf is None or a.name in whole or uf.monotonic is not None or a.inner:
            continue
        if uf.arity != 1 or uf.out_arity != 1 or uf.range is None or uf.domain is None:
            continue
        if uf.domain.params <= params and uf.range.params <= params:
            out.add(a.name)
    return pass_pays(program, frozenset(out))


def reads_declaration(program: Program) -> str:
    """The fallback's declaration, ``noinline`` and ``cold``: it runs only when an entry is
    out of range, mostly for arguments that are then refused, so it is optimized for size
    (which also compiles faster)."""
    prototype = checked_prototype_of(program.signature, READS_SUFFIX)
    return f"{prototype} __attribute__((noinline, cold));"


OPAQUE = Chunk(
    ('static inline int64_t spf_opaque(int64_t v) { __asm__("" : "+r"(v)); return v; }',),
    functions=(Function("spf_opaque", "int64_t spf_opaque(int64_t v)", static=True),),
)
"""The value as it is, through an empty ``asm`` the compiler cannot see into: no
instruction, but a loop that reads a ranged array is not vectorized, as it was not with the
checked read (gcc vectorizes a sparse row's loop with emulated gathers once the branch is
gone, which is slower on short rows: int64 ``spmv(CSR)`` took 1.7-2.1x its unchecked
call)."""


def raw_macros(program: Program, names: frozenset[str]) -> list[Define]:
    """The macros that read the UFs ``names`` as they are (through :data:`OPAQUE`, printed
    once before them), each replacing the UF's checked read macro."""
    out = []
    for a in program.signature.args:
        if a.kind == "uf" and a.name in names:
            read = cx.Call("spf_opaque", (as_int64(uf_element(a.name, 1, ())),))
            out.append(Define(a.name, uf_params(1), read, undef=True))
    return out


def pass_lines(program: Program, names: frozenset[str]) -> list[str]:
    """The range pass over the UFs ``names``; any value out of range records
    :data:`FAULT_READS` and returns (the caller runs the fallback)."""
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    out = ["int spf_out = 0;"]
    for n, a in enumerate(ufs):
        if a.name in names:
            out += _one(a, n)
    out += ["if (spf_out)", f"{{ spf_fault[0] = {FAULT_READS}; return; }}"]
    return out


def in_type(a: Arg, n: int) -> tuple[str, str]:
    """The C expressions of UF argument ``a``'s (number ``n``) declared bounds clamped to
    its type's values."""
    info = np.iinfo(a.dtype)
    lo, hi = f"spf_bounds[{BOUNDS_PER_UF * n}]", f"spf_bounds[{BOUNDS_PER_UF * n + 1}]"
    if info.min > _INT64.min:
        lo = f"({lo} < {info.min}LL ? {info.min}LL : {lo})"
    if info.max < _INT64.max:
        hi = f"({hi} > {info.max}LL ? {info.max}LL : {hi})"
    return lo, hi


def unsigned_type(a: Arg) -> str:
    """The unsigned C type of UF argument ``a``'s width."""
    return f"uint{np.iinfo(a.dtype).bits}_t"


def _one(a: Arg, n: int) -> list[str]:
    """``spf_out`` set when an entry ``first .. entries - 1`` of ``a`` is out of range, in
    ``a``'s own unsigned width: ``(u)(v - lo) > (u)(hi - lo)`` with the bounds clamped to
    the type (a range beyond it: every entry is out)."""
    unsigned = unsigned_type(a)
    base = BOUNDS_PER_UF * n
    lo, hi = in_type(a, n)
    x = a.name
    return [
        "{",
        f"  const int64_t spf_end = spf_bounds[{base + 3}], spf_l = {lo}, spf_h = {hi};",
        f"  if (spf_l > spf_h) spf_out |= spf_end > spf_first_{n};",
        "  else",
        "  {",
        f"    const {unsigned} spf_b = ({unsigned})spf_l, "
        f"spf_w = ({unsigned})((uint64_t)spf_h - (uint64_t)spf_l);",
        f"    for (int64_t spf_t = spf_first_{n}; spf_t < spf_end; spf_t++)",
        f"      spf_out |= ({unsigned})(({unsigned}){x}[spf_t] - spf_b) > spf_w;",
        "  }",
        "}",
    ]

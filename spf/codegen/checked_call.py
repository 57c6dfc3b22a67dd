"""A checked function whose loops are the unchecked function's calls that function instead.

The checked function (:mod:`spf.codegen.arg_checks`) prints the kernel's loops a second time
with every index-array read going through its check. Where every test runs before the
loops (the range pass over the ranged arrays, :mod:`spf.codegen.range_pass`; the whole-array
test of the prechecked monotonic ones, :func:`~spf.codegen.arg_checks.prechecked`; the
each-call facts, :mod:`spf.codegen.each_call`) and no fact is tested inside them, that
second copy reads every index array as it is (``spf_opaque`` is no instruction): the same
text, the same values, the same index-fault and allocation records as the unchecked
function's loops. The checked function then calls the unchecked one after its tests
(:func:`call_line`; with the call's fault record where the kernel has one) instead of
printing the loops again, and gcc compiles them once: sorted SpGEMM's single pass and its
bound, unsorted SpGEMM's, MTTKRP's (a CSF tensor's ranged coordinates and prechecked
pointers); with the hash left out where it cannot be used, a fifth to a quarter of gcc's
time of their first calls (docs/backends/c.md, "Accesses are checked").
The unchecked function's machine code is unchanged, and a checked call runs it: as fast as
an unchecked call once its tests passed. A kernel with any check inside its loops (SpMV's
sorted rows, SpAdd's merges, a dense monotonic UF's order) keeps its checked copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.codegen import faults
from spf.codegen.arg_checks import prechecked, unranged

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spf.codegen.program import Program


def reads_raw(program: Program, dense: dict[str, int | None], ranged: frozenset[str]) -> bool:
    """Whether the checked loops of ``program`` read every index array (UF argument) as it
    is: each is ranged (tested whole by the range pass), prechecked, or has no range to test
    (:func:`~spf.codegen.arg_checks.unranged`), and none is ordered in the loops
    (``dense``). The caller also requires that no fact is tested in the loops."""
    whole = prechecked(program)
    for a in program.signature.args:
        if a.kind != "uf":
            continue
        if a.name in dense:
            return False
        if a.name not in ranged and a.name not in whole and not unranged(a):
            return False
    return True


def call_line(program: Program, fault_record: bool) -> str:
    """The statement that runs the unchecked function on the checked function's arguments
    (``<f>_spf_faults`` with its fault record where the kernel has one: the same records
    the loops would have written)."""
    sig = program.signature
    names = [a.name for a in sig.args]
    if fault_record:
        return f"{sig.function}{faults.FAULTS_SUFFIX}({', '.join([*names, 'spf_fault'])});"
    return f"{sig.function}({', '.join(names)});"


def same_loops(checked: Sequence[str], first: int, plain: Sequence[str]) -> bool:
    """Whether the checked function's body as printed (``checked``: its braces, its
    ``first`` lines of tests, then the loops) holds, after those lines, the unchecked
    function's body ``plain`` line for line (the loops, their locals, the index-fault
    rescan and the heap's release, the closing brace)."""
    if len(checked) < first + 2 or len(plain) < 2 or checked[0] != plain[0]:
        return False
    return list(checked[first + 1 :]) == list(plain[1:])

"""Ranges of run-time index arrays that declare none: derived from the accesses they bound.

A run-time index array (``add_data_space(..., index=True)``) gets its values while the kernel
runs, so an access its values subscript or bound (``rowptr(i) <= k < rowptr(i+1)``, then
``A(k)``) cannot be checked on the arguments before the call. With a declared range the
bounds proof uses it and every read of the array is checked against it (clamped and flagged,
:mod:`spf.codegen.faults`). Without one, :func:`settle_index_obligations` looks for the
range the accesses need: ``0 <= v <= E`` for the extents ``E`` of the data spaces the
unproved accesses index (``k < rowptr(i+1)`` and ``A(k)`` of extent ``NNZ``: ``v <= NNZ``),
tightened to ``v <= E - 1`` where that does not prove them (a direct subscript ``x(p(k))``).
When the proof goes through with it, that range is what the generated code checks where it
reads the values (the same in-loop check as a declared one): an access stays in bounds for
any values, and a value outside the range is reported by the call. Otherwise the computation
is refused as before, with a message that says which range to declare.

The derived ranges are not facts: the dependence analysis does not use them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from spf.analysis.memo import remembered
from spf.errors import CodegenError, SpfError
from spf.ir.reading import data_space

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from spf.analysis.bounds import BoundsReport, Obligation
    from spf.ir import ComputationIR

_TIGHTENINGS = 2
"""Proof attempts: every bound ``v <= E``, then ``v <= E - 1`` where that was not enough."""


def settle_index_obligations(ir: ComputationIR, report: BoundsReport) -> BoundsReport:
    """``report`` without the obligations over run-time index arrays that the ranges of
    :func:`implied_ranges` prove; ``CodegenError`` for one that no range proves (no check
    before the call can see the values)."""
    index = _index_arrays(ir)
    over = [o for o in report.obligations if _calls(o, index)]
    if not over:
        return report
    implied = implied_ranges(ir)
    for o in over:
        name = next(n for n in index if _calls(o, [n]))
        if name not in implied:
            raise CodegenError(
                f"statement {o.stmt}: the access {o.access} to {o.data_space!r} stays in "
                f"bounds only if the values of the run-time index array {name!r} do "
                f"({o.text}), which no check before the call can see, and no range of its "
                f"values of the form 0 <= v <= (an extent) proves it; declare the range its "
                f"values have, e.g. add_data_space({name!r}, ..., index=True, range='{{[v]: "
                f"0 <= v <= NNZ}}'), so the proof uses it and the kernel checks each value it "
                "reads"
            )
    left = tuple(o for o in report.obligations if o not in over)
    return replace(report, obligations=left)


def implied_ranges(ir: ComputationIR) -> dict[str, str]:
    """For the computation ``ir`` (``comp.ir``), the range (set text ``{[v]: ...}``) derived for
    each run-time index array that declares none and whose values bound an access no other proof
    keeps in bounds; an array no derived range helps is left out (remembered by ``ir.fingerprint``:
    :mod:`spf.analysis.memo`; the caller gets a copy: the remembered ranges decide the checks
    of every later compile of an equal computation, in this process and, through the kernels
    remembered on disk, in later ones)."""
    return dict(remembered(ir, ("implied_ranges",), lambda: _derive(ir)))


def _derive(ir: ComputationIR) -> dict[str, str]:
    from spf.analysis.bounds import bounds_report

    declared = {u.name: u for u in ir.ufs}
    lacking = [n for n in _index_arrays(ir) if declared[n].range is None]
    report = bounds_report(ir)
    needing = {n: [o for o in report.obligations if _calls(o, [n])] for n in lacking}
    needing = {n: obs for n, obs in needing.items() if obs}
    tight: set[tuple[str, str]] = set()
    ranges: dict[str, str] = {}
    left: list[Obligation] = []
    for _ in range(_TIGHTENINGS):
        found = {n: _candidate(n, ir, obs, tight) for n, obs in needing.items()}
        ranges = {n: r for n, r in found.items() if r is not None}
        if not ranges:
            return {}
        try:
            obligations = bounds_report(_with_ranges(ir, ranges)).obligations
        except SpfError:
            return {}
        left = [o for o in obligations if _calls(o, list(ranges))]
        if not left:
            return ranges
        for o in left:
            for n in ranges:
                if _calls(o, [n]):
                    tight |= {(n, e) for e in _extents(ir, o)}
    failed = {n for o in left for n in ranges if _calls(o, [n])}
    return {n: r for n, r in ranges.items() if n not in failed}


def _candidate(
    name: str, ir: ComputationIR, obligations: Iterable[Obligation], tight: set[tuple[str, str]]
) -> str | None:
    """``{[v]: 0 <= v && v <= E1 && ...}`` over the extents of the accessed data spaces."""
    bounds = []
    for o in obligations:
        for e in _extents(ir, o):
            bound = f"v <= ({e}) - 1" if (name, e) in tight else f"v <= {e}"
            if bound not in bounds:
                bounds.append(bound)
    if not bounds:
        return None
    return f"{{[v]: 0 <= v && {' && '.join(bounds)}}}"


def _extents(ir: ComputationIR, o: Obligation) -> list[str]:
    """The extents the obligation's conclusion bounds an index by (``k < NNZ``: ``NNZ``)."""
    ds = data_space(ir, o.data_space)
    shape = [str(e) for e in (ds.shape or ())] if ds is not None else []
    out = []
    for part in o.conclusion.split(" && "):
        head, sep, tail = part.rpartition(" < ")
        if not sep or not head:
            continue
        extent = tail.strip()
        bare = extent[1:-1] if extent.startswith("(") and extent.endswith(")") else extent
        if bare in shape or extent in shape:
            out.append(bare)
    return out


def _with_ranges(ir: ComputationIR, ranges: Mapping[str, str]) -> ComputationIR:
    """``ir`` with the index arrays ``ranges`` names declaring those ranges (a new value:
    its sets parse again with the new declarations)."""
    ufs = tuple(replace(u, range=ranges[u.name]) if u.name in ranges else u for u in ir.ufs)
    return replace(ir, ufs=ufs)


def _index_arrays(ir: ComputationIR) -> list[str]:
    return [ds.name for ds in ir.data_spaces if ds.index]


def _calls(o: Obligation, names: Iterable[str]) -> bool:
    """Whether the obligation's fact calls one of the UFs ``names``."""
    return any(re.search(rf"\b{re.escape(n)}\s*\(", o.text) for n in names)

"""Timings of the UF-aware set layer: parse, apply, compose, emptiness (median ms).

Each operation's median is printed beside issue 17's target (0.3 ms) and IEGenLib's
published C++ figure where one exists.

The CSR SpMV domain, the forward-solve dependence set and a tiling relation; later changes
must not regress these.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING

import spf
from spf.bench.common import Context, Section
from spf.sets.memo import clear_all

if TYPE_CHECKING:
    from collections.abc import Callable

SPMV = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
FSOLVE = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && j < i}"
# flow dependence of u between two instances of the forward solve's update, carried by i
FSOLVE_DEP = (
    "{[i,k,j,ip,kp,jp]: 0 <= i < ip < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && "
    "j < i && rowptr(ip) <= kp < rowptr(ip+1) && jp = col(kp) && jp < ip && i = jp}"
)
TWO_ROWS = (
    "{[i,ip,k]: 0 <= i < ip < N && rowptr(i) <= k < rowptr(i+1) && rowptr(ip) <= k < rowptr(ip+1)}"
)
TARGET_MS = 0.3
"""Issue 17's target for each set operation on these forms (median)."""
IEGENLIB_MS: dict[str, str] = {}
"""IEGenLib's published C++ time per operation (ms), where one is published."""
NOTES = (
    "*repeat*: the operation again on the same objects (what a schedule search or a "
    "notebook does): parse results, isl objects parsed from text and sympy conversions are "
    "remembered. *cold*: the memo tables of `spf.sets` emptied and the operands built "
    "afresh before each timed call: the cost on inputs never seen before (only the "
    "dimension-permutation maps, keyed by tuple widths alone, stay).",
    "IEGenLib C++: no published per-operation timings were found (searched: IEGenLib's "
    "repository and documentation, and web pages on IEGenLib and the SPF Computation API), "
    "so the column says n/a rather than giving an estimate. The only IEGenLib figures at "
    "hand are issue 17's: IEGenLib's C++ takes 1.8 ms for the whole SpMV code generation, "
    "and spf's set operations of that time (1-7 ms each) were 60-900x IEGenLib's.",
)
SCHEDULE = "{[i,k,j] -> [0,i,0,k,0,j,0]}"
TILE = "{[i,k,j] -> [i0,i1,k,j]: i = 4*i0 + i1 && 0 <= i1 < 4}"
SHIFT = "{[i,k,j] -> [ii,k,j]: ii = i + 1}"


Case = tuple[str, "Callable[[], Callable[[], object]]"]
"""(operation, setup): ``setup()`` builds the operands and returns the call to time."""


def median_ms(setup: Callable[[], Callable[[], object]], repeat: int, *, cold: bool) -> float:
    """Median ms of one call; ``cold`` empties the memo tables and rebuilds the operands
    before each call (neither is timed)."""
    fn = setup()
    fn()  # warm up (first isl / sympy calls pay one-time costs)
    times = []
    for _ in range(repeat):
        if cold:
            clear_all(shapes=False)
            fn = setup()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def cases() -> list[Case]:
    """The timed operations on the SpMV, forward-solve and tiling forms."""

    def ufs() -> dict[str, spf.UF]:
        return {
            "rowptr": spf.UF("rowptr", domain="{[i]: 0 <= i <= N}", monotonic="nondecreasing"),
            "col": spf.UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}"),
        }

    def apply(rel: str, s: str) -> Callable[[], Callable[[], object]]:
        def setup() -> Callable[[], object]:
            r, d = spf.Relation(rel), spf.Set(s)
            return lambda: r.apply(d)

        return setup

    def compose(a: str, b: str, invert: bool) -> Callable[[], Callable[[], object]]:
        def setup() -> Callable[[], object]:
            r1, r2 = spf.Relation(a), spf.Relation(b)
            return (lambda: r1.compose(r2.inverse())) if invert else (lambda: r1.compose(r2))

        return setup

    def empty(text: str, declared: bool) -> Callable[[], Callable[[], object]]:
        def setup() -> Callable[[], object]:
            return spf.Set(text, ufs=ufs() if declared else None).is_empty

        return setup

    def printed(text: str) -> Callable[[], object]:
        s = spf.Set(text)
        return lambda: str(s)

    return [
        ("parse SpMV domain", lambda: lambda: spf.Set(SPMV)),
        ("parse forward-solve domain", lambda: lambda: spf.Set(FSOLVE)),
        ("parse tiling relation", lambda: lambda: spf.Relation(TILE)),
        ("str(SpMV domain)", lambda: printed(SPMV)),
        ("apply schedule to SpMV", apply(SCHEDULE, SPMV)),
        ("apply tiling to SpMV", apply(TILE, SPMV)),
        ("apply shift to forward solve", apply(SHIFT, FSOLVE)),
        ("compose schedule . shift^-1", compose(SCHEDULE, SHIFT, True)),
        ("compose tiling . shift", compose(TILE, SHIFT, False)),
        ("is_empty SpMV domain", empty(SPMV, False)),
        ("is_empty forward-solve dependence", empty(FSOLVE_DEP, True)),
        ("is_empty two CSR rows (empty)", empty(TWO_ROWS, True)),
    ]


def run(ctx: Context) -> Section:
    repeat = 5 if ctx.cfg.quick else 30
    warm = {name: median_ms(setup, repeat, cold=False) for name, setup in cases()}
    cold = {name: median_ms(setup, repeat, cold=True) for name, setup in cases()}
    clear_all()
    sec = Section("sets")
    sec.line("### Set layer (median ms)\n")
    rows = [
        [
            name,
            f"{warm[name]:.3f}",
            f"{cold[name]:.3f}",
            f"{TARGET_MS:.1f}",
            _met(warm[name]) + " / " + _met(cold[name]),
            IEGENLIB_MS.get(name, "n/a"),
        ]
        for name in warm
    ]
    header = ["operation", "repeat ms", "cold ms", "target ms", "met (repeat / cold)"]
    sec.table([*header, "IEGenLib C++ ms"], rows)
    for note in NOTES:
        sec.line(note)
        sec.line()
    for label, got in (("repeated", warm), ("cold", cold)):
        worst = max(got, key=got.__getitem__)
        sec.target(
            f"every set operation <= {TARGET_MS} ms (median, {label})",
            f"worst {got[worst]:.3f} ms ({worst})",
            got[worst] <= TARGET_MS,
        )
    sec.data["median_ms"] = warm
    sec.data["cold_median_ms"] = cold
    sec.data["target_ms"] = TARGET_MS
    return sec


def _met(ms: float) -> str:
    return "yes" if ms <= TARGET_MS else "no"

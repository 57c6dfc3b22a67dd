"""The candidates :func:`spf.formats.tune` considers: formats with their parameters times a
few schedules, the padding rule that prunes them and the bytes-moved model that orders them.

A space is a dict from a format family to the parameter tuples to try::

    {"CSR": [()], "SELL": [(8, 1), (4, 32)], "BCSR": [(2, 2)], "schedules": ["serial"]}

Families: ``CSR``, ``CSC``, ``DIA``, ``ELL`` (no parameters), ``SELL`` (``(C, sigma)``),
``BCSR`` (``(r, c)``), ``BDIA`` (``(R,)``), and CSR's kernel variants
(:mod:`spf.formats.tune_kernels`): ``CSRV`` (the inner loop vectorised by gathers),
``CSRP`` and ``CSRPV`` (``(q,)``: ``q`` parts of equal entries per thread), and SELL's
vectorised kernel ``SELLV`` (``(C,)``: SELL(C, 1)'s arrays, the row loop of each chunk
vectorised; SELL(C, 1) itself runs the same kernel without the pragma). The optional
``"schedules"`` entry lists the schedules to try (``"serial"``, ``"parallel"``; both by
default). A list of family names takes each family with its default parameters
(:data:`DEFAULT_SPACE`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from spf.errors import ArgumentError
from spf.formats.builtin import BCSR, BDIA, SELL, builtin
from spf.formats.spmv import spmv_computation
from spf.formats.tune_kernels import (
    GATHER_CFLAGS,
    SIMD_CFLAGS,
    row_parts,
    spmv_csr_parts,
    spmv_sell_chunks,
)

if TYPE_CHECKING:
    from spf.computation import Computation
    from spf.formats.features import MatrixFeatures
    from spf.formats.format import Format

__all__ = [
    "DEFAULT_SPACE",
    "SCHEDULES",
    "Candidate",
    "candidates",
    "checked_candidate",
    "default_space",
]

DEFAULT_SPACE: Mapping[str, tuple[tuple[int, ...], ...]] = {
    "CSR": ((),),
    "CSC": ((),),
    "DIA": ((),),
    "ELL": ((),),
    "SELL": ((4, 1), (8, 1), (8, 32)),
    "BCSR": ((2, 2), (3, 3), (4, 4)),
    "BDIA": ((8,), (32,)),
    "CSRV": ((),),
    "CSRP": ((1,), (4,)),
    "CSRPV": ((1,),),
    "SELLV": ((4,), (8,)),
}
"""The space searched when ``space=None``."""

CSR_VARIANTS = frozenset({"CSRV", "CSRP", "CSRPV"})
"""Families stored as CSR whose SpMV is built another way (:mod:`spf.formats.tune_kernels`)."""
KERNEL_VARIANTS = CSR_VARIANTS | {"SELLV"}
"""Families named after their kernel rather than their format (the result's ``format`` is
CSR, or SELL(C, 1) for SELLV)."""
_PARTS = frozenset({"CSRP", "CSRPV"})

SCHEDULES = ("serial", "parallel")
_ARITY = {"CSR": 0, "CSC": 0, "DIA": 0, "ELL": 0, "SELL": 2, "BCSR": 2, "BDIA": 1, "CSRV": 0,
          "CSRP": 1, "CSRPV": 1, "SELLV": 1}  # fmt: skip

# The loop over rows (or row blocks / chunks) each family's SpMV runs in parallel, after the
# interchanges that bring it outermost; None: no legal row-parallel loop (CSC scatters into y
# from every column; SELL with sigma > 1 writes y through the row permutation ``perm``, which
# spf cannot prove one-to-one).
_PARALLEL: dict[str, tuple[tuple[tuple[str, str], ...], str] | None] = {
    "CSR": ((), "i"),
    "CSC": None,
    "DIA": ((("d", "p"),), "p"),
    "ELL": ((), "p"),
    "SELL": ((), "ch"),
    "BCSR": ((), "ib"),
    "BDIA": ((), "b"),
    "CSRV": ((), "i"),
    "CSRP": ((), "p"),
    "CSRPV": ((), "p"),
    "SELLV": ((), "ch"),
}

BANDWIDTH = 8e9
"""Bytes per second one thread is assumed to stream (a rough constant: measurements decide)."""
PARALLEL_OVERHEAD_S = 5e-6
"""Assumed cost of starting and ending one OpenMP parallel region."""


def default_space() -> dict[str, list[tuple[int, ...]]]:
    """A fresh copy of :data:`DEFAULT_SPACE` to restrict or extend."""
    return {family: list(params) for family, params in DEFAULT_SPACE.items()}


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One format (``family`` with ``params``) under one schedule."""

    family: str
    params: tuple[int, ...]
    schedule: str

    @property
    def label(self) -> str:
        """``"SELL(8, 1) parallel"``."""
        return f"{self.format_label} {self.schedule}"

    @property
    def format_label(self) -> str:
        args = ", ".join(str(p) for p in self.params)
        return f"{self.family}({args})" if self.params else self.family

    @functools.cached_property
    def format(self) -> Format:
        """The storage format (CSR for CSR's kernel variants, SELL(C, 1) for SELLV)."""
        return format_of(*_stored_as(self.family, self.params))

    @property
    def cflags(self) -> tuple[str, ...] | None:
        """The compiler flags of this candidate's kernel (None: spf's default)."""
        if self.family == "SELLV":
            return SIMD_CFLAGS
        return GATHER_CFLAGS if self.family in ("CSRV", "CSRPV") else None

    def parts(self, team: int) -> int | None:
        """Row parts of a ``CSRP``/``CSRPV`` kernel on ``team`` threads (None: no parts)."""
        return self.params[0] * max(team, 1) if self.family in _PARTS else None

    @property
    def chunks(self) -> int | None:
        """``C`` of a candidate run by :func:`~spf.formats.tune_kernels.spmv_sell_chunks`
        (SELL(C, 1), SELLV(C)); None for the others."""
        if self.family == "SELLV" or (self.family == "SELL" and self.params[1] == 1):
            return self.params[0]
        return None

    def computation(self, index_dtype: str) -> Computation:
        """The SpMV over this format with this candidate's schedule applied."""
        if self.family in _PARTS:
            comp = spmv_csr_parts(index_dtype)
        elif self.chunks is not None:
            comp = spmv_sell_chunks(self.chunks, index_dtype, vector=self.family == "SELLV")
        else:
            comp = spmv_computation(self.format, index_dtype)
        plan = _PARALLEL[self.family]
        if self.schedule == "parallel" and plan is not None:
            stmt = comp.stmt("spmv")
            for a, b in plan[0]:
                stmt.interchange(a, b)
            stmt.parallelize(plan[1])
        return comp


def format_of(family: str, params: Sequence[int]) -> Format:
    """The built-in :class:`Format` of ``family`` with ``params``."""
    if family == "SELL":
        return SELL(params[0], params[1])
    if family == "BCSR":
        return BCSR(params[0], params[1])
    if family == "BDIA":
        return BDIA(params[0])
    return builtin(family)


def _serial_reason(c: Candidate) -> str | None:
    if c.family in _PARTS:
        same = {"CSRP": "CSR", "CSRPV": "CSRV"}[c.family]
        return f"{c.family} cuts the rows for threads: serial, it is {same}'s kernel"
    return None


def _parallel_reason(c: Candidate) -> str | None:
    if _PARALLEL[c.family] is None:
        return f"{c.family} has no row loop that runs in parallel without a reduction"
    if c.family == "SELL" and c.params[1] > 1:
        return "SELL with sigma > 1 writes y through the row permutation perm (not one-to-one)"
    return None


def normalize_space(
    space: Mapping[str, object] | Sequence[str] | None,
) -> tuple[dict[str, list[tuple[int, ...]]], tuple[str, ...]]:
    """``(families -> parameter tuples, schedules)`` from a ``space=`` argument, checked."""
    if space is None:
        return default_space(), SCHEDULES
    if isinstance(space, str) or not isinstance(space, (Mapping, Sequence)):
        raise ArgumentError(
            "formats.tune: space must be a dict {family: [parameter tuples]} or a list of "
            f"family names ({', '.join(_ARITY)}), got {space!r}"
        )
    if not isinstance(space, Mapping):
        space = {name: DEFAULT_SPACE.get(str(name), ()) for name in space}
    schedules: tuple[str, ...] = SCHEDULES
    out: dict[str, list[tuple[int, ...]]] = {}
    for family, params in space.items():
        if family == "schedules":
            schedules = _schedules(params)
            continue
        if family not in _ARITY:
            raise ArgumentError(
                f"formats.tune: unknown format family {family!r} in space; "
                f"known: {', '.join(_ARITY)} (and 'schedules')"
            )
        out[family] = [_params(family, p) for p in _sequence(params, family)]
    if not any(out.values()):
        raise ArgumentError("formats.tune: space names no format to try")
    return out, schedules


def _sequence(value: object, what: str) -> Sequence[object]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ArgumentError(f"formats.tune: space[{what!r}] must be a list, got {value!r}")
    return value


def _schedules(value: object) -> tuple[str, ...]:
    names = tuple(str(v) for v in _sequence(value, "schedules"))
    bad = [n for n in names if n not in SCHEDULES]
    if bad or not names:
        raise ArgumentError(
            f"formats.tune: space['schedules'] must list some of {', '.join(SCHEDULES)}, "
            f"got {value!r}"
        )
    return names


def checked_candidate(family: object, params: object, schedule: object) -> Candidate:
    """The candidate ``family(params) schedule`` as a record stores it, checked as
    ``space=`` is: ``ArgumentError`` for an unknown family or schedule or bad parameters."""
    if not isinstance(family, str) or family not in _ARITY:
        raise ArgumentError(f"formats.tune: unknown format family {family!r}")
    if schedule not in SCHEDULES:
        raise ArgumentError(f"formats.tune: unknown schedule {schedule!r}")
    if not isinstance(params, list):
        raise ArgumentError(f"formats.tune: parameters {params!r} are not a list")
    return Candidate(family, _params(family, params), str(schedule))


def _params(family: str, value: object) -> tuple[int, ...]:
    params = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    arity = _ARITY[family]
    if len(params) != arity or any(
        isinstance(p, bool) or not isinstance(p, int) or p < 1 for p in params
    ):
        one = "(q,)" if family in _PARTS else "(R,)"
        one = "(C,)" if family == "SELLV" else one
        what = {0: "()", 1: one, 2: "(C, sigma)" if family == "SELL" else "(r, c)"}[arity]
        raise ArgumentError(
            f"formats.tune: {family} parameters must be {what} with positive ints, got {value!r}"
        )
    if family == "SELL" and params[1] > 1 and params[1] % params[0]:
        raise ArgumentError(f"formats.tune: SELL sigma ({params[1]}) must be 1 or a multiple of C")
    return params


def footprint_bytes(f: MatrixFeatures, family: str, params: tuple[int, ...]) -> int:
    """Bytes of the data spaces of this format's SpMV: the values (padding included) and
    ``x`` and ``y`` (BCSR: padded to whole blocks). This is what the PDFG of the SpMV priced
    for the format's sizes (``comp.pdfg(params=...)`` with ``N``, ``W``, ``NV``, ``NNZB``,
    ``ND``, ``NS`` ... of this pattern) gives as its data nodes' bytes, read here from the
    pattern without building the graph (tests/unit/formats/test_tune_model_pdfg.py checks
    the two agree)."""
    rows, cols = f.n, f.m
    family, params = _stored_as(family, params)
    if family == "BCSR":
        rows, cols = -(-f.n // params[0]) * params[0], -(-f.m // params[1]) * params[1]
    return 8 * (f.stored(family, *params) + rows + cols)


def predicted_bytes(f: MatrixFeatures, family: str, params: tuple[int, ...], isz: int) -> int:
    """Bytes one SpMV moves in this format: the priced data spaces
    (:func:`footprint_bytes`: values with their padding, ``x``, ``y``), ``y`` written back,
    and the index arrays (uninterpreted functions: the PDFG draws no data node for them)."""
    parts = params[0] + 1 if family in _PARTS else 0  # per thread: a rough count
    family, params = _stored_as(family, params)
    stored = f.stored(family, *params)
    vectors = footprint_bytes(f, family, params) - 8 * stored + 8 * f.n
    if family == "CSR":
        index = f.nnz + f.n + 1 + parts
    elif family == "CSC":
        index = f.nnz + f.m + 1
    elif family == "ELL":
        index = stored
    elif family == "DIA":
        index = f.diagonals
    elif family == "SELL":
        nv, nc = f.sell_slots(params[0], params[1])
        index = nv + 2 * nc + 1 + (f.n if params[1] > 1 else 0)  # scol, cl, cs, perm
    elif family == "BCSR":
        index = f.blocks(params[0], params[1]) + -(-f.n // params[0]) + 1
    else:  # BDIA
        index = f.block_diagonals(params[0]) + -(-f.n // params[0]) + 1
    return 8 * stored + isz * index + vectors


def _stored_as(family: str, params: tuple[int, ...]) -> tuple[str, tuple[int, ...]]:
    """The family and parameters whose arrays ``family`` stores (CSR for CSR's variants,
    SELL(C, 1) for SELLV(C))."""
    if family == "SELLV":
        return "SELL", (params[0], 1)
    return ("CSR", ()) if family in CSR_VARIANTS else (family, params)


def imbalance(f: MatrixFeatures, family: str, params: tuple[int, ...], team: int) -> float:
    """How much longer than an even share the busiest of ``team`` threads runs a row-parallel
    CSR kernel: ``team`` times its entries over ``NNZ`` (1: even). OpenMP's static schedule
    gives each thread as many rows (``CSR``, ``CSRV``); ``CSRP``'s parts as many entries, up
    to a row (:func:`~spf.formats.tune_kernels.row_parts`). 1 for the other families (their
    padding already evens the rows out, or their model ignores it)."""
    if team <= 1 or f.nnz == 0 or family not in ("CSR", *CSR_VARIANTS):
        return 1.0
    if family in _PARTS:
        bounds = row_parts(f.indptr, params[0] * team)
        bounds = bounds[:: params[0]]  # a thread's parts are consecutive (static schedule)
    else:
        per = -(-f.n // team)
        bounds = np.minimum(np.arange(team + 1, dtype=np.int64) * per, f.n)
    counts = np.diff(np.asarray(f.indptr, dtype=np.int64)[bounds])
    return float(team * counts.max() / f.nnz)


@dataclasses.dataclass
class Planned:
    """A candidate with its predicted cost, or the reason it was pruned."""

    candidate: Candidate
    predicted_bytes: int = 0
    predicted_s: float = 0.0
    pruned: str | None = None


def candidates(
    f: MatrixFeatures,
    families: Mapping[str, Sequence[tuple[int, ...]]],
    schedules: Sequence[str],
    *,
    index_dtype: str,
    threads: int,
    max_padding: float,
) -> list[Planned]:
    """Every candidate of the space, those that survive the pruning first, cheapest
    predicted first; pruned ones after, each with its reason."""
    isz = 4 if index_dtype == "int32" else 8
    limit = 2**31 - 1 if index_dtype == "int32" else 2**63 - 1
    cache: dict[tuple[str, tuple[int, ...]], tuple[int, int]] = {}
    out: list[Planned] = []
    for family, plist in families.items():
        for params in plist:
            for schedule in schedules:
                c = Candidate(family, tuple(params), schedule)
                if (family, c.params) not in cache:
                    kind, kept = _stored_as(family, c.params)
                    stored = f.stored(kind, *kept)
                    cache[family, c.params] = (stored, predicted_bytes(f, family, c.params, isz))
                stored, nbytes = cache[family, c.params]
                plan = Planned(c, nbytes)
                team = threads if schedule == "parallel" else 1
                plan.predicted_s = nbytes / (BANDWIDTH * team) * imbalance(
                    f, family, c.params, team
                ) + (PARALLEL_OVERHEAD_S if schedule == "parallel" else 0.0)
                plan.pruned = _pruned(c, f, stored, limit, threads, max_padding)
                out.append(plan)
    return sorted(out, key=lambda p: (p.pruned is not None, p.predicted_s, p.candidate.label))


def _pruned(
    c: Candidate, f: MatrixFeatures, stored: int, limit: int, threads: int, max_padding: float
) -> str | None:
    if c.schedule == "parallel":
        if threads <= 1:
            return "parallel schedule with one thread"
        reason = _parallel_reason(c)
        if reason:
            return reason
    elif _serial_reason(c):
        return _serial_reason(c)
    padding = stored - f.nnz
    if padding > max_padding * max(f.nnz, 1):
        return (
            f"padding: {c.format_label} stores {stored} slots for {f.nnz} entries "
            f"({padding / max(f.nnz, 1):.1f}x nnz of padding > max_padding = {max_padding})"
        )
    if stored > limit:
        return f"{stored} stored slots do not fit the index dtype"
    return None

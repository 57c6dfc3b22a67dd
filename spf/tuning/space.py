"""The search space of :func:`spf.tune`: command kinds and their parameters.

A space is a dict from a command kind to the list of its parameters (docs/tune.md):

=================  =============================================  ==========================
key                parameters                                     applied to
=================  =============================================  ==========================
``compute_at``     ``["thread", rows, ...]`` row strips of a      producer-consumer pairs
                   pipeline (``"thread"``: one per thread)
``fission``        ``[True]`` (loops of its own for the main      the main statement
                   statement inside the outermost loop)
``interchange``    ``[True]`` (try swapping two dense loops)      the main nest's dense loops
``tile``           ``[(ti, tj), ...]`` tile sizes                 two adjacent dense loops
``split``          ``[factor, ...]``                              the outermost loop
``skew``           ``[(tt, tx), ...]`` time x space tiles         time-stepped stencils
``blocking``       ``[(mc, kc, nc, mr, nr), ...]`` BLIS blockings  GEMM-like statements
``cache_read``     ``[True]`` or data-space names to pack         at the outer tile loop
``vectorize``      ``[width, ...]``                               the innermost loop
``unroll``         ``[factor, ...]``                              the innermost loop
``parallelize``    ``[None, "atomic", "privatize"]`` reductions   the outermost loop
``wavefront``      every method of ``comp.wavefront``             the outermost loop
``threads``        ``[None, 1, 2, ...]`` OpenMP threads           parallel candidates
``candidates``     callables ``f(comp)`` or trace data            tried first, as given
=================  =============================================  ==========================

``space=`` entries replace the default's; an empty list (or ``None``/``False``) removes a
kind; a key not listed above is an ``SpfError``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spf.errors import ArgumentError
from spf.schedule.commands import WAVEFRONT_METHODS
from spf.schedule.tags import REDUCTION_OPTIONS
from spf.tuning.blocking import BLOCKINGS, native_isa

STAGES = (
    "compute_at",
    "fission",
    "interchange",
    "tiling",
    "cache_read",
    "vectorize",
    "unroll",
    "parallel",
)
"""The order in which a candidate's commands are applied (one option per stage, or none)."""


def cores() -> int:
    """The CPUs this process may run on (``os.sched_getaffinity``: ``taskset`` or a
    container's cpuset leave fewer than ``os.cpu_count``), the team OpenMP starts by default."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_space() -> dict[str, list[Any]]:
    """The default space (a fresh dict)."""
    n = cores()
    return {
        "compute_at": ["thread", 64],
        "fission": [True],
        "interchange": [True],
        "tile": [(16, 16), (32, 32), (64, 64), (32, 128), (8, 256)],
        "split": [64],
        "skew": [(16, 16), (8, 8), (32, 32), (4, 4)],
        "blocking": list(BLOCKINGS[native_isa()]),
        "cache_read": [True],
        "vectorize": [4, 8],
        "unroll": [2, 4, 8],
        "parallelize": [None, *REDUCTION_OPTIONS],
        "wavefront": list(WAVEFRONT_METHODS),
        "threads": list(dict.fromkeys([None, 1, n // 2 if n >= 4 else None])),
        "candidates": [],
    }


KINDS = tuple(default_space())


@dataclass(frozen=True)
class Step:
    """One command of a candidate: ``kind`` (a space key) and its parameter; ``loops``
    names the loops it acts on (filled in when the nest is known)."""

    kind: str
    param: Any = None
    loops: tuple[str, ...] = ()

    def key(self) -> tuple[str, str, tuple[str, ...]]:
        return (self.kind, repr(self.param), self.loops)


@dataclass(frozen=True)
class Candidate:
    """A schedule to try: its steps in stage order and the OpenMP thread count (None: the
    default team); ``extra`` is the index of a user candidate from ``space["candidates"]``;
    ``main`` the statement whose nest the steps schedule when it is not the first main
    nest's (``""``: the first, :func:`spf.tuning.nest.main_stmts`); ``before`` a candidate
    of another nest applied first (a chain: the best of one nest, then moves of another)."""

    steps: tuple[Step, ...] = ()
    threads: int | None = None
    extra: int | None = None
    main: str = ""
    before: Candidate | None = None

    def key(self) -> tuple[object, ...]:
        own = (tuple(s.key() for s in self.steps), self.threads, self.extra)
        if not self.main and self.before is None:
            return own
        return (*own, self.main, None if self.before is None else self.before.key())

    @property
    def parallel(self) -> bool:
        kinds = ("parallelize", "wavefront", "blocking", "compute_at")
        own = any(s.kind in kinds for s in self.steps)
        return own or (self.before is not None and self.before.parallel)

    def chain(self) -> tuple[Candidate, ...]:
        """The candidates applied in order: ``before``'s chain, then this one."""
        return (*(() if self.before is None else self.before.chain()), self)

    def describe(self) -> str:
        """A one-line summary, e.g. ``tile(i,j 32x32) parallelize(i0) threads=2``; a second
        main nest's steps after its statement (``s2: interchange(j,k)``), a chain's joined
        by ``then``."""
        if self.extra is not None:
            text = f"candidates[{self.extra}]"
        else:
            text = " then ".join(c._steps_text() for c in self.chain())
        return text if self.threads is None else f"{text} threads={self.threads}"

    def _steps_text(self) -> str:
        parts = []
        for s in self.steps:
            p = "" if s.param is None or s.param is True else f" {_show(s.param)}"
            parts.append(f"{s.kind}({','.join(s.loops)}{p})")
        text = " ".join(parts) or "default schedule"
        return f"{self.main}: {text}" if self.main else text


def _show(param: object) -> str:
    if isinstance(param, tuple):
        return "x".join(str(p) for p in param)
    return str(param)


@dataclass(frozen=True)
class Space:
    """A checked space: parameter lists per kind, and the user's extra candidates."""

    options: Mapping[str, tuple[Any, ...]]
    candidates: tuple[Callable[[Any], object] | Sequence[Mapping[str, Any]], ...] = field(
        default=()
    )
    cflags: tuple[str, ...] | None = None  # the compiler flags of every candidate (None: spf's)

    def get(self, kind: str) -> tuple[Any, ...]:
        return self.options.get(kind, ())


def make_space(
    space: Mapping[str, Any] | None, threads: int | None, cflags: Sequence[str] | None = None
) -> Space:
    """The default space updated with ``space``; ``threads`` fixes the thread count;
    ``cflags`` the compiler flags every candidate and the default are built with."""
    if space is not None and not isinstance(space, Mapping):
        raise ArgumentError(
            f"tune: space must be a dict of command kind -> parameter list, got "
            f"{type(space).__name__}; e.g. space={{'tile': [(32, 32)], 'unroll': []}}"
        )
    merged: dict[str, Any] = default_space()
    for key, value in (space or {}).items():
        if key not in merged:
            raise ArgumentError(f"tune: unknown space key {key!r}; known: {', '.join(KINDS)}")
        merged[key] = [] if value is None or value is False else value
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ArgumentError(f"tune: threads must be an int >= 1 or None, got {threads!r}")
        merged["threads"] = [threads]
    options: dict[str, tuple[Any, ...]] = {}
    for key, value in merged.items():
        if key == "candidates":
            continue
        if not isinstance(value, (list, tuple)):
            raise ArgumentError(f"tune: space[{key!r}] must be a list of parameters, got {value!r}")
        options[key] = tuple(_check(key, v) for v in value)
    extra = merged["candidates"]
    if not isinstance(extra, (list, tuple)) or not all(
        callable(c) or isinstance(c, (list, tuple)) for c in extra
    ):
        raise ArgumentError(
            "tune: space['candidates'] must be a list of functions f(comp) that schedule a "
            "copy of the computation, or of recorded trace data (lists of entries)"
        )
    if not options.get("threads"):
        options["threads"] = (None,)
    return Space(options=options, candidates=tuple(extra), cflags=_cflags(cflags))


def _cflags(cflags: object) -> tuple[str, ...] | None:
    if cflags is None:
        return None
    if (
        isinstance(cflags, str)
        or not isinstance(cflags, Sequence)
        or not all(isinstance(f, str) for f in cflags)
    ):
        raise ArgumentError(
            f"tune: cflags must be a list of compiler flags (e.g. ['-O3', '-march=native', "
            f"'-ffp-contract=fast']), got {cflags!r}"
        )
    return tuple(cflags)


def _positive(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


_VALID: dict[str, Callable[[Any], bool]] = {
    "tile": lambda v: isinstance(v, (list, tuple)) and len(v) == 2
    and all(_positive(x, 1) for x in v),
    "split": lambda v: _positive(v, 2),
    "skew": lambda v: isinstance(v, (list, tuple)) and len(v) == 2
    and all(_positive(x, 1) for x in v),
    "blocking": lambda v: isinstance(v, (list, tuple)) and len(v) == 5
    and all(_positive(x, 1) for x in v),
    "vectorize": lambda v: _positive(v, 2),
    "unroll": lambda v: _positive(v, 2),
    "threads": lambda v: v is None or _positive(v, 1),
    "parallelize": lambda v: v is None or v in REDUCTION_OPTIONS,
    "wavefront": lambda v: v in WAVEFRONT_METHODS,
    "interchange": lambda v: v is True,
    "fission": lambda v: v is True,
    "compute_at": lambda v: v == "thread" or _positive(v, 1),
    "cache_read": lambda v: v is True or isinstance(v, str),
}  # fmt: skip


def _check(kind: str, value: Any) -> Any:
    """One parameter of ``kind``, checked (``SpfError`` naming the kind otherwise)."""
    if not _VALID[kind](value):
        raise ArgumentError(
            f"tune: space[{kind!r}] has a bad parameter {value!r}; {_EXPECTED[kind]}"
        )
    if kind in ("tile", "blocking", "skew"):
        return tuple(int(x) for x in value)
    return value


_EXPECTED = {
    "tile": "expected (ti, tj), two positive ints",
    "split": "expected an int factor >= 2",
    "skew": "expected (tt, tx), two positive ints (time steps x rows of a tile)",
    "blocking": "expected (mc, kc, nc, mr, nr), five positive ints (BLIS's cache blocks and "
    "register tile)",
    "vectorize": "expected an int width >= 2",
    "unroll": "expected an int factor >= 2",
    "threads": "expected None (OpenMP's default) or an int >= 1",
    "parallelize": f"expected None or one of {', '.join(REDUCTION_OPTIONS)}",
    "wavefront": f"expected one of {', '.join(WAVEFRONT_METHODS)}",
    "interchange": "expected True",
    "fission": "expected True",
    "compute_at": 'expected "thread" (one row strip per thread) or an int number of rows >= 1',
    "cache_read": "expected True (every array the nest reads) or a data-space name",
}

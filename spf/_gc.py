"""Fewer passes of Python's cyclic garbage collector while spf analyses and generates code.

The analysis (dependences, the emptiness engine, code generation and its checks) allocates
millions of short-lived containers and few cycles: with the default threshold (a young
collection every 700 net allocations) a cold ``wavefront("i")`` + ``compile()`` of
Gauss-Seidel or ILU(0) ran ~150 collections, 5-8% of its time, nearly all finding nothing.
Inside :func:`fewer_collections` the young generation holds :data:`YOUNG` objects before a
collection (cyclic garbage is still collected, in fewer, larger passes); the older
generations' thresholds are left as they are. The threshold is process-wide: other threads
see it while a call is inside (reentrant, counted); the caller's threshold is restored when
the last one leaves, unless it was changed meanwhile. A threshold of 0 (collection off) or
above :data:`YOUNG` is left alone.

The young passes inside move their survivors (most of what codegen allocates is alive
until it ends) into the middle generation, ten passes' worth before it is walked: up to
~200k objects, 20-40 ms of CPU on the shared machine. Left alone, that pass ran at the tenth
young pass after the call, often inside the next call: a warm ``compile()`` of 5-10 ms
measured up to 63 ms (the tensor bench's warm rows). So when the last caller leaves and
young passes ran inside, the young and middle generations are collected there
(``gc.collect(1)``): the call that made the survivors walks them, once, where the later pass
would have walked them (about the same work in all: the objects that die between the two
points are walked now and would not have been; the survivors move to the old generation as
they would have). A call in which no young pass ran (a warm ``compile()``) collects nothing.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
from typing import TYPE_CHECKING, Final, ParamSpec, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["YOUNG", "fewer_collections", "with_fewer_collections"]

P = ParamSpec("P")
R = TypeVar("R")

YOUNG: Final = 20_000
"""Net allocations of container objects between young collections inside
:func:`fewer_collections` (Python's default: 700)."""

_LOCK = threading.Lock()
_inside = 0
_saved: tuple[int, int, int] | None = None
"""The threshold to restore (None: left alone, as it was 0 or above :data:`YOUNG`)."""
_young_at_entry = 0
"""Young passes so far (``gc.get_stats()[0]``) when the first caller entered: a larger
count at the last exit means young passes ran inside."""


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with the young generation's threshold raised to :data:`YOUNG`."""
    global _inside, _saved, _young_at_entry
    with _LOCK:
        if _inside == 0:
            now = gc.get_threshold()
            _saved = None
            if 0 < now[0] < YOUNG:
                _saved = (now[0], now[1], now[2])
                gc.set_threshold(YOUNG, now[1], now[2])
                _young_at_entry = _young_passes()
        _inside += 1
    try:
        yield
    finally:
        now_collect = False
        with _LOCK:
            _inside -= 1
            if _inside == 0 and _saved is not None:
                if gc.get_threshold()[0] == YOUNG:  # not changed meanwhile
                    gc.set_threshold(*_saved)
                    now_collect = gc.isenabled() and _young_passes() > _young_at_entry
                _saved = None
        if now_collect:  # outside the lock: a finaliser the pass runs may call spf again
            gc.collect(1)  # this call's survivors, walked here (docstring)


def _young_passes() -> int:
    return int(gc.get_stats()[0]["collections"])


def with_fewer_collections(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run inside :func:`fewer_collections` (``Computation.wavefront``, ``codegen``
    and ``compile``)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with fewer_collections():
            return fn(*args, **kwargs)

    return wrapper

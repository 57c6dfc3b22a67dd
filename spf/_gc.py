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


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with the young generation's threshold raised to :data:`YOUNG`."""
    global _inside, _saved
    with _LOCK:
        if _inside == 0:
            now = gc.get_threshold()
            _saved = None
            if 0 < now[0] < YOUNG:
                _saved = (now[0], now[1], now[2])
                gc.set_threshold(YOUNG, now[1], now[2])
        _inside += 1
    try:
        yield
    finally:
        with _LOCK:
            _inside -= 1
            if _inside == 0 and _saved is not None:
                if gc.get_threshold()[0] == YOUNG:  # not changed meanwhile
                    gc.set_threshold(*_saved)
                _saved = None


def with_fewer_collections(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run inside :func:`fewer_collections` (``Computation.wavefront``, ``codegen``
    and ``compile``)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with fewer_collections():
            return fn(*args, **kwargs)

    return wrapper

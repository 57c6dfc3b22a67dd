"""A cheap, complete fingerprint of a :class:`~spf.computation.computation.Computation`.

``Computation.version`` compares the fingerprint with the one it saw last and counts the
changes, so every mutation path (a scheduling command, an effect, a PDFG operation, a tag
set directly, ``from_json``, ...) bumps the version without having to call anything: the
fingerprint walks every attribute of the computation, its statements, buffers and layout,
and the result caches (:mod:`spf.analysis.cache`) key on it. Sets and relations are
immutable and keyed by their cached text; other values by their structure.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from spf.sets.set_like import _SetLike

if TYPE_CHECKING:
    from spf.computation.computation import Computation

_SKIP = frozenset({"_comp", "_memo"})
"""Back references and the cache bookkeeping itself."""

_BY_IDENTITY = frozenset({"_parsed"})
"""State derived from other fields (``_parsed``: the statement's source), keyed by which
object it is (replacing it is a change) rather than walked."""

_ATOMS = (str, int, float, bool, type(None))


def value_key(value: object) -> object:
    """A hashable value that changes whenever ``value``'s observable state does."""
    return _key(value, set())


def _key(value: object, path: set[int]) -> object:
    """:func:`value_key`; ``path`` holds the ids of the containers being walked (a value met
    again inside itself is a back reference, keyed by its type)."""
    if isinstance(value, _ATOMS):
        return value
    if isinstance(value, _SetLike):
        return (type(value).__name__, str(value), _uf_key(value))
    ident = id(value)
    if ident in path:
        return ("cycle", type(value).__name__)
    path.add(ident)
    try:
        return _compound_key(value, path)
    finally:
        path.discard(ident)


def _compound_key(value: object, path: set[int]) -> object:
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, *(_key(v, path) for v in value))
    if isinstance(value, dict):
        return ("dict", *((_key(k, path), _key(v, path)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return ("set", *sorted(repr(_key(v, path)) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (type(value).__name__, *(_key(getattr(value, f.name), path) for f in fields))
    if hasattr(value, "__dict__"):
        attrs = vars(value)
        return (
            type(value).__name__,
            *(
                (k, id(v) if k in _BY_IDENTITY else _key(v, path))
                for k, v in attrs.items()
                if k not in _SKIP
            ),
        )
    return (type(value).__name__, repr(value))


def _uf_key(value: _SetLike) -> tuple[str, ...]:
    """The UF declarations a set carries (they decide emptiness, not its text)."""
    ufs: dict[str, Any] = value._ufs
    if not ufs:
        return ()
    return tuple(repr(u) for _, u in sorted(ufs.items()))


def state_key(comp: Computation) -> object:
    """The fingerprint of ``comp``: every attribute, its statements, buffers and trace length."""
    from spf.schedule.trace import trace_of

    trace = trace_of(comp)
    return (value_key(comp), id(trace), len(trace._entries))


class Memo:
    """The results remembered for one computation.

    ``results`` holds whole-computation results (the legality verdict, generated sources,
    the IR snapshot) of the current ``version`` and is emptied when it changes. The
    dependences are remembered by value, across computations (:mod:`spf.analysis.memo`,
    keyed by the IR's fingerprint), and so is the work of statement pairs
    (:mod:`spf.analysis.dependences`): it survives changes that leave its inputs alone (a
    schedule change re-checks only the pairs of the statements it moved)."""

    def __init__(self) -> None:
        self.key: object = None
        self.version = 0
        self.results: dict[object, Any] = {}

    def refresh(self, comp: Computation) -> int:
        """Compare ``comp``'s fingerprint with the last one seen; a change bumps the version
        and forgets the whole-computation results."""
        key = state_key(comp)
        if key != self.key:
            self.key = key
            self.version += 1
            self.results.clear()
        return self.version

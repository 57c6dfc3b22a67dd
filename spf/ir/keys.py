"""Keys of values by their observable state: what a memo may key a result on.

:func:`value_key` turns a value (sets and relations by their text and UF declarations,
tuples, dicts, dataclasses and plain objects by their structure) into a hashable key that
changes whenever the value's observable state does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from spf.sets.set_like import _SetLike

__all__ = ["value_key"]

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

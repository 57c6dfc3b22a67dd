"""The text of a value's key, written without building the key: what a remembered einsum
hashes (:mod:`spf.index_notation.remembered`).

``repr(_unordered(_key(value, set())))`` (:func:`spf.runtime.warm._key`, with every dict's
items sorted) builds a tuple for every container it walks and a generator for each of
their items, then a second tree of tuples to sort the dicts' items, and prints it: 430
to 800 container allocations for ``spgemm_csr()``'s formula (the collector's count; fewer
where the free lists hold tuples), with the rest of a warm ``compile()`` more than the young
generation's threshold (700), so that a compile that loads a remembered kernel in
milliseconds ran a collection of Python's garbage collector, and at times the full pass
owed by the rest of the process (the tensor bench's warm sorted SpGEMM: 126 ms, of it 123 ms
one full pass). :func:`key_text` walks the same values in the same order and writes their
text into one list of strings (strings are not containers: the collector does not count
them): it makes a few dozen containers for a formula (that list, the set of the path, the
items of a dict or a set sorted by their texts as the tuples were, a dataclass's field
names), where the tuples made about 430.

It keys exactly what :func:`~spf.runtime.warm._key` keys, with the same
:class:`~spf.runtime.warm.UnkeyableError` for a value it cannot key faithfully; two values
have the same text when their keys print the same.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import TYPE_CHECKING

from spf.runtime.warm import _ATOMS, _SKIP, UnkeyableError, _spf_function
from spf.sets.set_like import _SetLike

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["key_text"]


def key_text(value: object) -> str:
    """The text of ``value``'s key (the module docstring); :class:`UnkeyableError` where
    it cannot be keyed."""
    out: list[str] = []
    _write(value, set(), out)
    return "".join(out)


def _write(value: object, path: set[int], out: list[str]) -> None:
    if isinstance(value, _ATOMS):
        out.append(repr(value))
        return
    if isinstance(value, _SetLike):
        source = value._source  # the parsed text decides the set with its UFs: no printing
        out.append(f"({type(value).__name__!r}, {str(value) if source is None else source!r}, (")
        for _, uf in sorted(value._ufs.items()):
            _write(uf, path, out)
            out.append(", ")
        out.append("))")
        return
    ident = id(value)
    if ident in path:
        out.append(f"('cycle', {type(value).__qualname__!r})")
        return
    path.add(ident)
    try:
        _compound(value, path, out)
    finally:
        path.discard(ident)


def _compound(value: object, path: set[int], out: list[str]) -> None:
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if isinstance(value, type):
        out.append(f"('class', {f'{value.__module__}.{value.__qualname__}'!r})")
        return
    if _spf_function(value):
        name = f"{value.__module__}.{value.__qualname__}"  # type: ignore[attr-defined]
        out.append(f"('function', {name!r})")
        return
    out.append(f"({kind!r}")
    if isinstance(value, (tuple, list)):
        for v in value:
            out.append(", ")
            _write(v, path, out)
    elif isinstance(value, dict):
        _sorted(((k, v) for k, v in value.items()), path, out, kind.endswith("dict"))
    elif isinstance(value, (set, frozenset)):
        _sorted(((v,) for v in value), path, out, True)
    else:
        _object(value, kind, path, out)
    out.append(")")


def _object(value: object, kind: str, path: set[int], out: list[str]) -> None:
    """The parts of ``value``, of type ``kind``, that is not a container."""
    if dataclasses.is_dataclass(value):
        if not kind.startswith("spf."):
            raise UnkeyableError(kind)
        names = [f.name for f in dataclasses.fields(value)]
        extra = [k for k in getattr(value, "__dict__", {}) if k not in names and k not in _SKIP]
        for n in [*names, *extra]:
            _pair(n, getattr(value, n), path, out)
    elif isinstance(value, functools.partial):
        for part in (value.func, value.args, value.keywords):
            out.append(", ")
            _write(part, path, out)
    elif isinstance(value, enum.Enum):
        out.append(f", {value.name!r}")
    else:
        attrs = getattr(value, "__dict__", None)
        if (
            attrs is None
            or not kind.startswith("spf.")  # a function, a foreign object: not keyed
            or any(vars(c).get("__slots__") for c in type(value).__mro__)
        ):
            raise UnkeyableError(kind)
        for k, v in attrs.items():
            if k not in _SKIP:
                _pair(k, v, path, out)


def _pair(name: str, value: object, path: set[int], out: list[str]) -> None:
    out.append(f", ({name!r}, ")
    _write(value, path, out)
    out.append(")")


def _sorted(
    items: Iterable[tuple[object, ...]], path: set[int], out: list[str], order: bool
) -> None:
    """Each of ``items`` (a dict's pairs, a set's members) as a tuple's text, sorted by
    those texts where ``order`` (a dict's items are filled in set order by the formats'
    analyses, which differs from one interpreter to the next)."""
    texts = []
    for item in items:
        part: list[str] = []
        if len(item) == 1:
            _write(item[0], path, part)
        else:
            part.append("(")
            for k, v in enumerate(item):
                part.append(", " if k else "")
                _write(v, path, part)
            part.append(")")
        texts.append("".join(part))
    for text in sorted(texts) if order else texts:
        out.append(", ")
        out.append(text)

"""``from_c``'s arguments checked before any C is read: ``source`` as C text or a file (a
``pathlib.Path``, or a ``str`` naming an existing ``.c``/``.h`` file), and ``function``,
``params``, ``ufs`` and ``shapes`` of the types the API names; anything else is an
``ArgumentError`` that names the argument and shows the expected form."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from spf.errors import ArgumentError, ParseError
from spf.sets import UF

_UF_FIELDS = ("domain", "range", "monotonic", "dtype")
_SUFFIXES = (".c", ".h")


def source_text(source: object) -> tuple[str, str | None]:
    """``(C text, file name or None)`` of ``source``."""
    if isinstance(source, os.PathLike):
        return _read(Path(os.fspath(source))), os.fspath(source)
    if not isinstance(source, str):
        raise ArgumentError(
            f"from_c: source must be C text (str), a pathlib.Path or the name of a .c/.h file, "
            f"got {type(source).__name__}"
        )
    if looks_like_file(source) and Path(source).is_file():
        return _read(Path(source)), source
    return source, None


def looks_like_file(text: str) -> bool:
    """``text`` could name a C file: one line ending in ``.c`` or ``.h``."""
    return "\n" not in text and text.strip().endswith(_SUFFIXES) and len(text) < 4096


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ParseError(f"from_c: cannot read {os.fspath(path)!r}: {err}") from None


def function_name(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ArgumentError(
        f"from_c: function= is the name of a C function (str) or None, got {value!r}"
    )


def names(value: object, what: str) -> list[str]:
    """The names of ``params=`` (an iterable of identifiers, not one string)."""
    if value is None:
        return []
    example = f"{what}=['N', 'M']"
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ArgumentError(f"from_c: {what}= must be a list of names ({example}), got {value!r}")
    out = list(value)
    for name in out:
        if not isinstance(name, str) or not name.isidentifier():
            raise ArgumentError(
                f"from_c: {what}= must be a list of names ({example}); {name!r} is not a C name"
            )
    return out


def uf_fields(ufs: object) -> dict[str, dict[str, Any]]:
    """``ufs=`` as ``{name: {field: value}}`` (each entry an ``spf.UF``, a dict of its fields
    or None)."""
    example = "ufs={'rowptr': {'monotonic': 'nondecreasing'}}"
    if ufs is None:
        return {}
    if not isinstance(ufs, Mapping):
        raise ArgumentError(
            f"from_c: ufs= must be a dict from index-array name to an spf.UF or a dict of UF "
            f"fields ({', '.join(_UF_FIELDS)}), e.g. {example}; got a {type(ufs).__name__}"
        )
    out: dict[str, dict[str, Any]] = {}
    for name, decl in ufs.items():
        if not isinstance(name, str):
            raise ArgumentError(f"from_c: ufs= keys are index-array names, got {name!r}")
        if isinstance(decl, UF):
            out[name] = {f: getattr(decl, f) for f in _UF_FIELDS}
        elif isinstance(decl, Mapping):
            unknown = [k for k in decl if k not in _UF_FIELDS]
            if unknown:
                raise ArgumentError(
                    f"from_c: ufs[{name!r}] has unknown field(s) {unknown!r}; the fields are "
                    f"{', '.join(_UF_FIELDS)}"
                )
            out[name] = dict(decl)
        elif decl is None:
            out[name] = {}
        else:
            raise ArgumentError(
                f"from_c: ufs[{name!r}] must be an spf.UF or a dict of UF fields "
                f"({', '.join(_UF_FIELDS)}), got {decl!r}"
            )
    return out


def shape_map(shapes: object) -> dict[str, tuple[int | str, ...]]:
    """``shapes=`` as ``{name: extents}`` (one extent alone stands for a 1-d shape)."""
    example = "shapes={'x': ('n',), 'A': ('n', 'm')}"
    if shapes is None:
        return {}
    if not isinstance(shapes, Mapping):
        raise ArgumentError(
            f"from_c: shapes= must be a dict from array name to its extents, e.g. {example}; "
            f"got a {type(shapes).__name__}"
        )
    out: dict[str, tuple[int | str, ...]] = {}
    for name, given in shapes.items():
        if not isinstance(name, str):
            raise ArgumentError(f"from_c: shapes= keys are array names, got {name!r}")
        extents = tuple(given) if isinstance(given, tuple | list) else (given,)
        for e in extents:
            if isinstance(e, bool) or not isinstance(e, int | str):
                raise ArgumentError(
                    f"from_c: shapes[{name!r}] must be extents (ints or parameter expressions "
                    f"as str), e.g. {example}; got {given!r}"
                )
        out[name] = extents
    return out


def shape_options(items: Sequence[str]) -> dict[str, tuple[int | str, ...]]:
    """The command line's ``--shape x=n --shape A=n,m`` (``spf import``, ``spf tune``) as
    ``from_c``'s ``shapes``.

    >>> shape_options(["x=n", "A=4, m"])
    {'x': ('n',), 'A': (4, 'm')}
    """
    shapes: dict[str, tuple[int | str, ...]] = {}
    for item in items:
        name, eq, extents = item.partition("=")
        if not eq or not name or not extents:
            raise ArgumentError(f"--shape expects NAME=EXT,EXT (e.g. x=n), got {item!r}")
        shapes[name.strip()] = tuple(_extent(e) for e in extents.split(","))
    return shapes


def _extent(text: str) -> int | str:
    """An ``--shape`` extent: an integer (``-3`` too, which ``from_c`` refuses by name) or
    the expression of a parameter (``n``)."""
    try:
        return int(text)
    except ValueError:
        return text.strip()

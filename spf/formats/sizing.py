"""Sizes of a conversion call, checked before anything is allocated.

A conversion kernel allocates the destination's arrays and its scratch from the size
arguments (``N``, ``NNZ``, ...) and from sizes it computes (``W``, ``NV``, ``NNZB``). Before
it does:

* :func:`check_ties`: every size the source's arrays record must agree with them (``NNZ``
  with the length of ``A``, ``N`` with that of ``rowptr``: its UF's declared domain reaches
  ``N``), else :class:`~spf.errors.ArgumentError` naming the size, its value and the array;
* :func:`allocate`: the arrays one step allocates, all of them together, must fit in this
  machine's memory (:func:`memory_limit`), else ``ArgumentError`` naming the size that
  makes the largest of them (a bare ``MemoryError``, numpy's ``ValueError`` for an array
  too big, or the operating system killing the process once calloc'ed pages are touched
  are what the unchecked allocation would give).
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError
from spf.sets import Set

if TYPE_CHECKING:
    from spf.formats.convert import Conversion

__all__ = ["allocate", "check_ties", "extent", "memory_limit"]

_TERM = re.compile(r"(?:(\d+)\s*\*\s*)?([A-Za-z_]\w*)|(\d+)")
_DTYPES = {"double": np.float64, "int32_t": np.int32, "int64_t": np.int64}


def extent(expr: object, sizes: Mapping[str, int]) -> int:
    """The value of an extent: an int, or a sum of sizes, multiples of sizes and integers
    (``"N + 1"``, ``"2*NB"``, ``"NNZ"``)."""
    if isinstance(expr, int):
        return expr
    total = 0
    for term in str(expr).split("+"):
        m = _TERM.fullmatch(term.strip())
        if m is None:
            raise ArgumentError(f"cannot evaluate the extent {expr!r}")  # a synthesis bug
        if m.group(3) is not None:
            total += int(m.group(3))
        else:
            total += int(m.group(1) or 1) * sizes[m.group(2)]
    return total


def _names(expr: object) -> list[str]:
    return [m.group(2) for m in _TERM.finditer(str(expr)) if m.group(2)]


@functools.cache
def memory_limit() -> int:
    """Bytes this process may allocate at most: the machine's memory, or the cgroup's limit
    when that is lower."""
    try:
        limit = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):  # pragma: no cover - every Linux and macOS has both
        limit = 1 << 62
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            limit = min(limit, int(text))
    return limit


def _bytes(n: int) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _label(conv: Conversion) -> str:
    return f"convert({conv.src.name} -> {conv.dst.name})"


def _dtype(conv: Conversion, name: str) -> np.dtype[Any]:
    ds = conv.data_spaces.get(name)
    ctype = ds.ctype if ds is not None else f"{conv.index_dtype}_t"
    # not np.dtype(_DTYPES.get(ctype, default)): mypy resolves np.dtype's overloads against
    # that union in ~2.5 s, an eighth of `mypy spf`'s whole run
    known = _DTYPES.get(ctype)
    return np.dtype(known) if known is not None else np.dtype(conv.index_dtype)


def allocate(
    conv: Conversion,
    shapes: Mapping[str, Sequence[object]],
    sizes: Mapping[str, int],
    *,
    derived: Mapping[str, str] | None = None,
) -> dict[str, np.ndarray[Any, Any]]:
    """Zero-filled arrays ``name -> shape`` (extents evaluated with ``sizes``), element types
    from their data spaces, once their total is known to fit (see the module docstring).
    ``derived`` says how a size the kernel computed came about (``{"W": "the longest
    row"}``), for the message."""
    plan: dict[str, tuple[tuple[int, ...], np.dtype[Any]]] = {}
    for name, exprs in shapes.items():
        plan[name] = (tuple(extent(e, sizes) for e in exprs), _dtype(conv, name))
    need = {name: math.prod(dims) * dt.itemsize for name, (dims, dt) in plan.items()}
    total = sum(need.values())
    if total > memory_limit():
        raise _too_big(conv, shapes, sizes, need, derived or {})
    try:
        return {name: np.zeros(dims, dtype=dt) for name, (dims, dt) in plan.items()}
    except (MemoryError, ValueError) as err:
        raise _too_big(conv, shapes, sizes, need, derived or {}) from err


def _too_big(
    conv: Conversion,
    shapes: Mapping[str, Sequence[object]],
    sizes: Mapping[str, int],
    need: dict[str, int],
    derived: Mapping[str, str],
) -> ArgumentError:
    largest = max(need, key=lambda n: need[n])
    names = sorted(
        {n for e in shapes[largest] for n in _names(e) if n in sizes},
        key=lambda n: (-sizes[n], n not in derived, n),
    )
    blamed = ", ".join(f"{n} = {sizes[n]}{f' ({derived[n]})' if n in derived else ''}"
                       for n in names)  # fmt: skip
    extents = " x ".join(str(e) for e in shapes[largest])
    return ArgumentError(
        f"{_label(conv)}: {blamed or 'the sizes'} would make the arrays it allocates "
        f"{_bytes(sum(need.values()))} ({_public(conv, largest)}: {extents}), more than "
        f"this machine's {_bytes(memory_limit())} of memory; check "
        f"{names[0] if names else 'the sizes'}"
        f"{' or convert to another format' if derived else ' (pass the sizes of the matrix)'}"
    )


def _public(conv: Conversion, name: str) -> str:
    """How a message names the array ``name``: the destination's name for it, else
    ``scratch array <name>``."""
    shown = {v: k for k, v in (getattr(conv, "outputs", None) or {}).items()}
    lay = getattr(conv, "layout", None)
    for internal, attr in (("cv_pv", "value"), ("cv_pi", "idx"), ("cv_bv", "value"),
                           ("cv_bi", "idx"), ("cv_bp", "ptr")):  # fmt: skip
        if lay is not None and hasattr(lay, attr):
            shown.setdefault(internal, str(getattr(lay, attr)))
    if name in shown:
        return f"{conv.dst.name}'s {shown[name]}"
    return f"scratch array {name}" if name.startswith("cv_") else name


class Ties:
    """The extents the source's arrays must have for given sizes (:func:`check_ties`),
    from the source format's value shape and its UFs' declared domains."""

    def __init__(self, conv: Conversion) -> None:
        src = conv.src
        self.conv = conv
        self.domains: dict[str, Set] = {}
        for name, uf in src.ufs.items():
            text = str(uf.domain) if uf.domain is not None else src._pointer_domain(name)
            if text is not None:
                self.domains[name] = Set(text)
        self._cache: dict[tuple[int, ...], dict[str, tuple[int, ...]]] = {}

    def need(self, sizes: Mapping[str, int]) -> dict[str, tuple[int, ...]]:
        """Least extents per axis of each UF array (one past its domain's highest index)."""
        key = tuple(sizes[s] for s in sorted(sizes))
        if key not in self._cache:
            out: dict[str, tuple[int, ...]] = {}
            for name, dom in self.domains.items():
                if not dom.params <= set(sizes):
                    continue
                box = dom.bounds(dict(sizes))
                out[name] = tuple(hi + 1 for _, hi in box) if box is not None else ()
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = out
        return self._cache[key]


def check_ties(ties: Ties, args: Mapping[str, Any], sizes: Mapping[str, int]) -> None:
    """``ArgumentError`` for a size that disagrees with the source array recording it."""
    conv = ties.conv
    src = conv.src
    value = args[src.value]
    want = tuple(extent(e, sizes) for e in src.value_shape)
    shape = getattr(value, "shape", None)
    flat = shape is not None and len(shape) == 1 < len(want) and shape[0] == math.prod(want)
    if shape is not None and tuple(shape) != want and not flat:
        names = [n for e in src.value_shape for n in _names(e) if n in sizes]
        raise ArgumentError(
            f"{_label(conv)}: {src.value} has shape {tuple(shape)}, but "
            f"{_given(names, sizes)} {_verb('make', names)} it {want} "
            f"({src.value}[{', '.join(src.value_shape)}]); pass sizes that match the arrays"
        )
    for name, need in ties.need(sizes).items():
        arr = args[name]
        got = getattr(arr, "shape", None)
        if got is None or len(got) != len(need):
            continue  # the kernel's own argument checks word that
        for axis, (have, least) in enumerate(zip(got, need, strict=True)):
            if have < least:
                dom = ties.domains[name]
                used = sorted(dom.params)
                raise ArgumentError(
                    f"{_label(conv)}: {name} has {have} entries{_axis(axis, len(got))}, but "
                    f"{_given(used, sizes)} {_verb('need', used)} at least {least} (its "
                    f"declared domain {dom}); pass sizes that match the arrays"
                )


def _verb(verb: str, names: Sequence[str]) -> str:
    return f"{verb}s" if len(set(names)) == 1 else verb


def _axis(axis: int, rank: int) -> str:
    return f" along axis {axis}" if rank > 1 else ""


def _given(names: Sequence[str], sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{n} = {sizes[n]}" for n in dict.fromkeys(names)) or "the sizes"

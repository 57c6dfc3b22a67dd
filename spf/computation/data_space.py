"""Data spaces: the arrays and scalars statements read and write."""

from __future__ import annotations

import re
from dataclasses import dataclass

from spf.clang import NUMPY_OF_C
from spf.errors import SpfError

_CTYPES = NUMPY_OF_C
_SHAPE_TEXT = re.compile(r"^[A-Za-z0-9_+\-* ()/%]+$")


@dataclass(frozen=True, kw_only=True)
class DataSpace:
    """An array or scalar of one C element type.

    ``shape`` is a tuple of extents (ints or parameter expressions as text) or None when only
    the rank is known (IEGenLib's pointer form ``double*``): then ``rank`` comes from the
    first access and stays fixed.
    """

    name: str
    ctype: str
    shape: tuple[int | str, ...] | None
    rank: int | None
    pointer: bool = False
    role: str = "data"  # "data", "parameter" (function Computations), "return"

    @property
    def dtype(self) -> str:
        """The numpy dtype name of the element type."""
        return _CTYPES[self.ctype]

    @property
    def type_text(self) -> str:
        """The type as declared (``double``, ``double*``)."""
        return self.ctype + ("*" if self.pointer else "")

    def shape_text(self) -> str:
        if self.shape is None:
            return ""
        return "".join(f"[{d}]" for d in self.shape)

    def with_rank(self, rank: int) -> DataSpace:
        return DataSpace(
            name=self.name,
            ctype=self.ctype,
            shape=self.shape,
            rank=rank,
            pointer=self.pointer,
            role=self.role,
        )


def make_data_space(
    name: str, type_text: str, shape: object = None, role: str = "data"
) -> DataSpace:
    """Validate the arguments of ``add_data_space`` and build the ``DataSpace``."""
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
        raise SpfError(f"data space name {name!r} is not a valid C identifier")
    if not isinstance(type_text, str):
        raise SpfError(f"data space {name!r}: type must be a C type name, got {type_text!r}")
    text = type_text.replace(" ", "")
    pointer = text.endswith("*")
    ctype = text.rstrip("*")
    if ctype not in _CTYPES or text.count("*") > 1:
        known = ", ".join(sorted(_CTYPES))
        raise SpfError(
            f"data space {name!r}: unsupported type {type_text!r}; use one of {known} "
            "(optionally with one '*')"
        )
    dims = _shape(name, shape)
    rank = (None if pointer else 0) if dims is None else len(dims)
    return DataSpace(name=name, ctype=ctype, shape=dims, rank=rank, pointer=pointer, role=role)


def _shape(name: str, shape: object) -> tuple[int | str, ...] | None:
    if shape is None:
        return None
    if isinstance(shape, (str, int)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise SpfError(f"data space {name!r}: shape must be a tuple, got {shape!r}")
    out: list[int | str] = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, str)):
            raise SpfError(f"data space {name!r}: extent {d!r} is not an int or expression")
        if isinstance(d, int) and d < 0:
            raise SpfError(f"data space {name!r}: negative extent {d}")
        if isinstance(d, str) and not _SHAPE_TEXT.match(d):
            raise SpfError(f"data space {name!r}: extent {d!r} is not a parameter expression")
        out.append(d if isinstance(d, int) else d.strip())
    return tuple(out)

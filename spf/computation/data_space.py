"""Data spaces: the arrays and scalars statements read and write."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from spf.clang import NUMPY_OF_C
from spf.dtypes import c_type
from spf.errors import ArgumentError, VerifyError

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
    index: bool = False
    """A run-time index array (``add_data_space(..., index=True)``): statements write it
    and later statements read it as the UF of the same name (docs/formats.md)."""
    private: str | None = None
    """A local private to each iteration of this loop (``add_local(..., private="i")``):
    one fresh copy per iteration of the loop and of the loops around it, so it carries no
    dependence across them (docs/assumptions.md, :mod:`spf.analysis.private`)."""
    trusted: bool = False
    """A local run-time index array whose statements keep its values within its declared
    range by construction (``add_local(..., index=True, range=..., trusted=True)``: a
    counting sort's counts and slots): its reads are not range-checked (spf.codegen.faults)."""

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
        return replace(self, rank=rank)


def make_data_space(
    name: str,
    type_text: object,
    shape: object = None,
    role: str = "data",
    index: bool = False,
    private: object = None,
    trusted: bool = False,
) -> DataSpace:
    """Validate the arguments of ``add_data_space`` and build the ``DataSpace``.

    ``type_text`` is any type :func:`spf.dtypes.c_type` accepts (``"double"``, ``"float64"``,
    ``np.float64``), or a C name with one ``*`` (IEGenLib's pointer form)."""
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
        raise VerifyError(f"data space name {name!r} is not a valid C identifier")
    pointer = False
    base = type_text
    if isinstance(type_text, str):
        text = type_text.replace(" ", "")
        pointer = text.endswith("*")
        if text.count("*") > 1:
            raise VerifyError(
                f"data space {name!r}: unsupported type {type_text!r}; at most one '*' "
                "(IEGenLib's pointer form, e.g. 'double*')"
            )
        base = text.rstrip("*")
    ctype = c_type(base, what=f"data space {name!r}")
    dims = _shape(name, shape)
    rank = (None if pointer else 0) if dims is None else len(dims)
    if index:
        _check_index(name, ctype, pointer, dims)
    if private is not None:
        _check_private(name, private, index, dims)
    return DataSpace(
        name=name,
        ctype=ctype,
        shape=dims,
        rank=rank,
        pointer=pointer,
        role=role,
        index=index,
        private=private if isinstance(private, str) else None,
        trusted=trusted,
    )


def _check_private(
    name: str, private: object, index: bool, dims: tuple[int | str, ...] | None
) -> None:
    """``add_local(..., private=loop)``: a loop name, for a scalar or a fixed-size array."""
    if not isinstance(private, str) or not private.isidentifier():
        raise VerifyError(
            f"local {name!r}: private= names the loop whose iterations each get their own "
            f"copy (e.g. private='i'), got {private!r}"
        )
    if index:
        raise VerifyError(
            f"local {name!r}: a run-time index array (index=True) cannot be private to a "
            "loop; later statements read it as a UF"
        )
    if dims is None or not all(isinstance(d, int) for d in dims):
        raise VerifyError(
            f"local {name!r}: a private local is a scalar or an array of constant extents "
            f"(one copy per iteration of loop {private!r}), not of shape {dims!r}; give it "
            "integer extents or drop private="
        )


def _check_index(name: str, ctype: str, pointer: bool, dims: tuple[int | str, ...] | None) -> None:
    """A run-time index array holds integers and has a known shape of rank >= 1 (its UF's
    domain)."""
    if ctype not in ("int32_t", "int64_t") or pointer:
        raise VerifyError(
            f"data space {name!r}: an index array (index=True) holds int32_t or int64_t "
            f"values, not {ctype}{'*' if pointer else ''}; declare it 'int32_t' or 'int64_t'"
        )
    if not dims:
        raise VerifyError(
            f"data space {name!r}: an index array (index=True) needs a shape of rank >= 1, "
            "e.g. shape=('N+1',): its extents are the domain of the UF it defines"
        )


def _shape(name: str, shape: object) -> tuple[int | str, ...] | None:
    if shape is None:
        return None
    if isinstance(shape, (str, int)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise ArgumentError(f"data space {name!r}: shape must be a tuple, got {shape!r}")
    out: list[int | str] = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, str)):
            raise ArgumentError(f"data space {name!r}: extent {d!r} is not an int or expression")
        if isinstance(d, int) and d < 0:
            raise VerifyError(f"data space {name!r}: negative extent {d}")
        if isinstance(d, str) and not _SHAPE_TEXT.match(d):
            raise VerifyError(f"data space {name!r}: extent {d!r} is not a parameter expression")
        out.append(d if isinstance(d, int) else d.strip())
    return tuple(out)

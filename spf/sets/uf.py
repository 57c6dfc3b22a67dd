"""Declarations of uninterpreted functions (index arrays)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from spf.dtypes import numpy_name
from spf.errors import ArityError, SpfError

if TYPE_CHECKING:
    from spf.dtypes import TypeLike
    from spf.sets.set_like import Set

Monotonic = Literal["increasing", "nondecreasing"]
_DTYPES = ("int32", "int64")


@dataclass(frozen=True, init=False)
class UF:
    """An index array ``name`` (docs/api.md); immutable and hashable.

    ``domain`` / ``range`` are sets (text accepted), ``monotonic`` is None, ``"increasing"``
    or ``"nondecreasing"``, ``dtype`` ``"int32"`` or ``"int64"``. Declared facts are trusted.

    >>> UF("rowptr", domain="{[i]: 0 <= i <= N}", monotonic="nondecreasing")
    UF('rowptr', domain='{[i] : 0 <= i && i <= N}', monotonic='nondecreasing')
    """

    name: str
    arity: int
    domain: Set | None
    range: Set | None
    monotonic: Monotonic | None
    dtype: str

    def __init__(
        self,
        name: str,
        arity: int = 1,
        domain: str | Set | None = None,
        range: str | Set | None = None,
        monotonic: Monotonic | None = None,
        dtype: TypeLike = "int32",
    ) -> None:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
            raise SpfError(f"UF name {name!r} is not a valid identifier")
        if not isinstance(arity, int) or isinstance(arity, bool) or arity < 1:
            raise ArityError(f"UF {name!r}: arity must be an int >= 1, got {arity!r}")
        if monotonic not in (None, "increasing", "nondecreasing"):
            raise SpfError(
                f"UF {name!r}: monotonic must be None, 'increasing' or 'nondecreasing', "
                f"got {monotonic!r}"
            )
        if monotonic is not None and arity != 1:
            raise ArityError(f"UF {name!r}: only unary UFs can be monotonic (arity {arity})")
        given = dtype
        with contextlib.suppress(SpfError):
            dtype = numpy_name(dtype, what=f"UF {name!r}")
        if dtype not in _DTYPES:
            raise SpfError(
                f"UF {name!r}: dtype must be 'int32' or 'int64' (or 'int32_t', np.int32, "
                f"'int64_t', np.int64), got {given!r}"
            )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "arity", arity)
        object.__setattr__(self, "domain", _as_set(name, "domain", domain, arity))
        object.__setattr__(self, "range", _as_set(name, "range", range, 1))
        object.__setattr__(self, "monotonic", monotonic)
        object.__setattr__(self, "dtype", dtype)

    def __repr__(self) -> str:
        parts = [repr(self.name)]
        if self.arity != 1:
            parts.append(f"arity={self.arity}")
        if self.domain is not None:
            parts.append(f"domain={str(self.domain)!r}")
        if self.range is not None:
            parts.append(f"range={str(self.range)!r}")
        if self.monotonic is not None:
            parts.append(f"monotonic={self.monotonic!r}")
        if self.dtype != "int32":
            parts.append(f"dtype={self.dtype!r}")
        return f"UF({', '.join(parts)})"


def _as_set(name: str, what: str, value: object, arity: int) -> Set | None:
    from spf.sets.set_like import Set

    if value is None:
        return None
    if isinstance(value, str):
        value = Set(value)
    if not isinstance(value, Set):
        raise SpfError(f"UF {name!r}: {what} must be a set text or spf.Set, got {value!r}")
    if value.arity != arity:
        raise ArityError(f"UF {name!r}: {what} {value} has arity {value.arity}, expected {arity}")
    if value.uf_calls:
        raise SpfError(f"UF {name!r}: its {what} may not use UF calls: {value}")
    return value

"""Declarations of uninterpreted functions (index arrays)."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from spf.dtypes import numpy_name
from spf.errors import ArgumentError, ArityError, SpfError, VerifyError

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

    ``out_arity`` > 1 declares a UF that returns a tuple (IEGenLib's tuple-valued UFs),
    called ``f(i)[0]`` ... ``f(i)[out_arity - 1]``; its ``range`` has that arity. Its values
    are an array with one more axis, of extent ``out_arity`` (``f[i][c]``, row-major in C).

    ``inverse="f_inv"`` declares the UF a bijection from its domain onto its range whose
    inverse is the UF ``f_inv``: ``f(f_inv(x))`` simplifies to ``x`` and ``f_inv(f(x))``
    to ``x`` (with ``x`` in the inner call's declared domain). ``f_inv`` takes
    ``out_arity`` arguments and returns ``arity`` values (a tuple when ``arity`` > 1:
    ``tau(tau_inv(k)[0], tau_inv(k)[1])`` is ``k``); :meth:`inverse_uf` declares it.

    >>> tau = UF("tau", arity=2, range="{[k]: 0 <= k < NNZ}", inverse="tau_inv")
    >>> tau.inverse_uf()
    UF('tau_inv', domain='{[k] : 0 <= k && k < NNZ}', out_arity=2, inverse='tau')
    """

    name: str
    arity: int
    domain: Set | None
    range: Set | None
    monotonic: Monotonic | None
    dtype: str
    out_arity: int
    """How many values one call returns (1: a plain index array)."""
    inverse: str | None
    """The name of the inverse UF of a bijection, or None."""

    def __init__(
        self,
        name: str,
        arity: int = 1,
        domain: str | Set | None = None,
        range: str | Set | None = None,
        monotonic: Monotonic | None = None,
        dtype: TypeLike = "int32",
        *,
        out_arity: int | None = None,
        inverse: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
            raise VerifyError(f"UF name {name!r} is not a valid identifier")
        if not isinstance(arity, int) or isinstance(arity, bool) or arity < 1:
            raise ArityError(f"UF {name!r}: arity must be an int >= 1, got {arity!r}")
        if monotonic not in (None, "increasing", "nondecreasing"):
            raise ArgumentError(
                f"UF {name!r}: monotonic must be None, 'increasing' or 'nondecreasing', "
                f"got {monotonic!r}"
            )
        if monotonic is not None and arity != 1:
            raise ArityError(f"UF {name!r}: only unary UFs can be monotonic (arity {arity})")
        given = dtype
        with contextlib.suppress(SpfError):
            dtype = numpy_name(dtype, what=f"UF {name!r}")
        if dtype not in _DTYPES:
            raise ArgumentError(
                f"UF {name!r}: dtype must be 'int32' or 'int64' (or 'int32_t', np.int32, "
                f"'int64_t', np.int64), got {given!r}"
            )
        width = _out_arity(name, out_arity)
        if monotonic is not None and width != 1:
            raise ArityError(f"UF {name!r}: a UF that returns a tuple cannot be monotonic")
        if inverse is not None and (
            not isinstance(inverse, str) or not inverse.isidentifier() or inverse == name
        ):
            raise ArgumentError(
                f"UF {name!r}: inverse must name another UF (e.g. inverse='{name}_inv'), "
                f"got {inverse!r}"
            )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "arity", arity)
        object.__setattr__(self, "domain", _as_set(name, "domain", domain, arity))
        object.__setattr__(self, "range", _as_set(name, "range", range, width))
        object.__setattr__(self, "monotonic", monotonic)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "out_arity", width)
        object.__setattr__(self, "inverse", inverse)

    def array_uf(self) -> UF:
        """The UF of the index array that holds this UF's values: itself when it returns
        one value; for a tuple-valued UF, one more argument (the component, ``0 <= c <
        out_arity``) and the union of the range's components as its range (what generated
        code and argument checks read: ``f(i)[c]`` is ``f[i][c]``).

        >>> UF("coord", domain="{[k]: 0 <= k < NNZ}", range="{[r, c]: 0 <= r < N && "
        ...    "0 <= c < N}", out_arity=2).array_uf()  # doctest: +NORMALIZE_WHITESPACE
        UF('coord', arity=2, domain='{[k, c] : 0 <= c && 0 <= k && c <= 1 && k < NNZ}',
           range='{[v0] : 0 <= v0 && v0 < N}')
        """
        from spf.sets.set_like import Set

        if self.out_arity == 1:
            return self
        width = self.out_arity
        component = Set(f"{{[c]: 0 <= c < {width}}}")
        if self.domain is not None:
            domain = self.domain.product(component)
        else:
            names = ", ".join(f"a{k}" for k in range(self.arity))
            domain = Set(f"{{[{names}, c]: 0 <= c < {width}}}")
        values = None
        for c in range(width):
            part = self.component_range(c)
            values = part if values is None or part is None else values.union(part)
        return UF(
            self.name,
            arity=self.arity + 1,
            domain=domain,
            range=values,
            dtype=self.dtype,
        )

    def component_range(self, c: int) -> Set | None:
        """The values component ``c`` of a tuple-valued UF may take (its range projected),
        or None without a declared range.

        >>> coord = UF("coord", range="{[r, c]: 0 <= r < N && 0 <= c < M}", out_arity=2)
        >>> coord.component_range(1)
        Set('{[v1] : 0 <= v1 && 1 <= N && v1 < M}')
        """
        from spf.sets.set_like import Relation

        if not 0 <= c < self.out_arity:
            raise ArityError(f"UF {self.name!r} returns {self.out_arity} value(s): no {c}")
        if self.range is None or self.out_arity == 1:
            return self.range
        vs = [f"v{k}" for k in range(self.out_arity)]
        return Relation(f"{{[{', '.join(vs)}] -> [{vs[c]}]}}").apply(self.range)

    def inverse_uf(self) -> UF:
        """The declaration of the inverse UF: it takes ``out_arity`` arguments from this
        UF's range and returns ``arity`` values in its domain.

        >>> UF("perm", domain="{[j]: 0 <= j < M}", range="{[v]: 0 <= v < M}",
        ...    inverse="iperm").inverse_uf()  # doctest: +NORMALIZE_WHITESPACE
        UF('iperm', domain='{[v] : 0 <= v && v < M}', range='{[j] : 0 <= j && j < M}',
           inverse='perm')
        """
        if self.inverse is None:
            raise VerifyError(f"UF {self.name!r} declares no inverse (UF(..., inverse=...))")
        return UF(
            self.inverse,
            arity=self.out_arity,
            domain=self.range,
            range=self.domain,
            dtype=self.dtype,
            out_arity=self.arity,
            inverse=self.name,
        )

    def __repr__(self) -> str:
        return self._repr

    @functools.cached_property
    def _repr(self) -> str:
        """The text ``repr`` shows, made once: the fields never change, and the
        fingerprint of a computation (:mod:`spf.ir.keys`) reprs every UF each of its sets
        carries each time it is taken."""
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
        if self.out_arity != 1:
            parts.append(f"out_arity={self.out_arity}")
        if self.inverse is not None:
            parts.append(f"inverse={self.inverse!r}")
        return f"UF({', '.join(parts)})"


def _out_arity(name: str, given: object) -> int:
    """``out_arity`` as given (default 1), checked."""
    if given is None:
        return 1
    if not isinstance(given, int) or isinstance(given, bool) or given < 1:
        raise ArityError(f"UF {name!r}: out_arity must be an int >= 1, got {given!r}")
    return given


def _as_set(name: str, what: str, value: object, arity: int) -> Set | None:
    from spf.sets.set_like import Set

    if value is None:
        return None
    if isinstance(value, str):
        value = Set(value)
    if not isinstance(value, Set):
        raise ArgumentError(f"UF {name!r}: {what} must be a set text or spf.Set, got {value!r}")
    if value.arity != arity:
        hint = ""
        if what == "range" and value.arity > 1:
            hint = f" (a UF that returns a tuple declares out_arity={value.arity})"
        raise ArityError(
            f"UF {name!r}: {what} {value} has arity {value.arity}, expected {arity}{hint}"
        )
    if value.uf_calls:
        raise VerifyError(f"UF {name!r}: its {what} may not use UF calls: {value}")
    return value

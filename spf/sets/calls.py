"""How a UF call is named inside a body and shown to users; tuple-valued UFs.

A UF may return a tuple (IEGenLib's tuple-valued UFs: ``UF("tau_inv", out_arity=2)``),
called as ``tau_inv(k)[0]`` and ``tau_inv(k)[1]``. Inside a body each component is a call
of its own: the term ``("tau_inv[]", (k, 0))``, the UF's arguments followed by the
component as a constant last argument. So, with nothing special elsewhere:

* functional consistency holds per component (equal arguments and the same component give
  equal values; different components are unrelated unless a declared range relates them);
* concrete values are an array of shape ``(domain..., out_arity)``: ``tau_inv[k][0]``, or a
  callable returning the tuple;
* generated C reads ``tau_inv(k, 0)``, the same row-major 2-d array (see ``docs/api.md``).

Users see ``tau_inv(k)[0]``: :func:`call` builds the :class:`~spf.sets.affine.Call` term that
prints that way, whose last argument is the component (so code that reads a call's name and
arguments, like the code generator, sees the 2-d array read); :func:`sympy_call` builds the
same as a sympy applied undefined function, for the few places that still need sympy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import islpy as isl

from spf.sets import affine
from spf.sets.affine import Aff, Call

if TYPE_CHECKING:
    import sympy as sp

    from spf.sets.uf import UF

MARK = "[]"
"""Suffix of the term name of a tuple-valued UF's component (never a valid UF name)."""


def component_name(base: str) -> str:
    """The term name of the components of the tuple-valued UF ``base``."""
    return base + MARK


def is_component(name: str) -> bool:
    """True for the term name of a tuple-valued UF's component."""
    return name.endswith(MARK)


def base_name(name: str) -> str:
    """The UF's own name (``"tau_inv"`` for ``"tau_inv[]"``)."""
    return name[: -len(MARK)] if name.endswith(MARK) else name


def call_args(name: str, args: Sequence[Any]) -> tuple[Any, ...]:
    """The UF's arguments of a term (the component left out)."""
    return tuple(args[:-1]) if is_component(name) else tuple(args)


def component_of(name: str, args: Sequence[Any]) -> int | None:
    """The component a term reads (None for a UF that returns one value)."""
    return int(args[-1]) if is_component(name) else None


def call_signatures(terms: Sequence[tuple[str, Sequence[Any]]]) -> dict[str, tuple[int, bool]]:
    """How a call table calls each UF: its name to ``(number of arguments, returns a
    tuple)``."""
    return {base_name(n): (len(call_args(n, a)), is_component(n)) for n, a in terms}


def inferred_uf(terms: Sequence[tuple[str, Sequence[Any]]], name: str) -> UF:
    """The declaration of the undeclared UF ``name`` as a call table calls it (a
    tuple-valued one as wide as the highest component read, at least 2)."""
    from spf.sets.uf import UF

    found = [(n, args) for n, args in terms if base_name(n) == name]
    components = [c for c in (component_of(n, args) for n, args in found) if c is not None]
    width = max(2, *(c + 1 for c in components)) if components else None
    return UF(name, arity=len(call_args(*found[0])), out_arity=width)


def declaration(name: str, ufs: Mapping[str, UF]) -> UF | None:
    """The declaration of the UF a term calls, if any."""
    return ufs.get(base_name(name))


def value_range(decl: UF, component: int | None) -> isl.Set:
    """The declared range of a call's value: the whole range, or its ``component``."""
    assert decl.range is not None
    iset = decl.range.body_iset()
    if component is None:
        return iset
    width = iset.dim(isl.dim_type.set)
    return iset.project_out(isl.dim_type.set, component + 1, width - component - 1).project_out(
        isl.dim_type.set, 0, component
    )


def call_parts(e: Aff) -> tuple[str, tuple[Aff, ...], int | None]:
    """A UF call as ``(UF name, arguments, component or None)`` (the inverse of
    :func:`call`): ``f(i)[1]`` is ``("f", (i,), 1)``."""
    a = e.as_atom()
    if not isinstance(a, Call):
        raise ValueError(f"not a UF call: {e}")
    if is_component(a.name):
        *args, c = a.args
        return a.base, tuple(args), int(c)
    return a.name, a.args, None


def call_text(a: Call, arg_text: Callable[[Aff], str]) -> str:
    """``f(args)`` or, for a tuple-valued UF's component, ``f(args)[c]``, each argument
    printed by ``arg_text``."""
    name, args, component = call_parts(a.aff())
    text = f"{name}({', '.join(arg_text(x) for x in args)})"
    return text if component is None else f"{text}[{component}]"


def call(name: str, args: Sequence[Aff]) -> Aff:
    """The term ``(name, args)`` as a call: ``f(i)`` or ``f(i)[0]``."""
    return affine.call(name, args)


def sympy_call(name: str, args: Sequence[sp.Expr]) -> sp.Expr:
    """The term ``(name, args)`` as a sympy call (the edge to sympy)."""
    import sympy as sp

    if is_component(name):
        return _component_function(base_name(name))(*args)
    return sp.Function(name)(*args)


def sympy_call_parts(e: sp.Expr) -> tuple[str, tuple[sp.Expr, ...]]:
    """A sympy UF call as its term ``(name, args)`` (the inverse of :func:`sympy_call`)."""
    name = str(type(e).__name__)
    if getattr(type(e), "_kwargs", {}).get("tuple_valued"):
        return component_name(name), tuple(e.args)
    return name, tuple(e.args)


@functools.cache
def _component_function(base: str) -> Any:
    """The sympy function of ``base``'s components (one class per name: sympy compares
    applied functions by their class)."""
    from sympy.core.function import AppliedUndef, UndefinedFunction

    class Component(AppliedUndef):  # type: ignore[misc]  # sympy is untyped
        """``base(args...)[c]`` with ``c`` the last argument."""

        def _sympystr(self, printer: Any) -> str:
            *args, c = self.args
            inner = ", ".join(printer.doprint(a) for a in args)
            return f"{type(self).__name__}({inner})[{c}]"

    return UndefinedFunction(base, bases=(Component,), tuple_valued=True)

"""A read-only view of a set's isl form, for the code generator's scanner.

``uf_view(s, names)`` gives the isl set over ``[tuple | UF values]`` with the tuple dims named
``names`` and the UF-value dims ``__u0 ...``, plus the call table with arguments as
:class:`~spf.sets.affine.Aff` expressions over those names (nested calls refer to
``__u<k>``). Sets with hidden variables have no such view (their UF arguments are not
functions of the tuple).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.errors import ArgumentError, VerifyError
from spf.sets.calls import base_name
from spf.sets.linear import DT, sym, tsym

if TYPE_CHECKING:
    import islpy as isl

    from spf.sets.affine import Aff, Atom
    from spf.sets.set_like import Set


@dataclass(frozen=True)
class UFView:
    iset: isl.Set
    """Dims: the tuple (named as asked), then one per UF call (``__u0 ...``)."""
    terms: tuple[tuple[str, tuple[Aff, ...]], ...]
    """``(uf name, arguments)``; arguments use the tuple names, parameters and ``__u<k>``
    (a tuple-valued UF's component is its last argument: ``f(i)[1]`` reads ``f(i, 1)``, the
    array that holds its values)."""


def uf_view(s: Set, names: Sequence[str]) -> UFView:
    body = s._body
    if body.hidden:
        raise VerifyError(
            f"{s} has hidden variables ({', '.join(body.hidden)}) that UF arguments need; "
            "its UF calls are not functions of its tuple"
        )
    if len(names) != body.n_tuple:
        raise ArgumentError(f"uf_view: {len(names)} names for a {body.n_tuple}-tuple")
    sub: dict[Atom, Aff] = {tsym(k): sym(n).aff() for k, n in enumerate(names)}
    terms = tuple((base_name(f), tuple(a.xreplace(sub) for a in args)) for f, args in body.terms)
    iset = body.iset
    for k, n in enumerate(names):
        iset = iset.set_dim_name(DT.set, k, n)
    return UFView(iset=iset, terms=terms)

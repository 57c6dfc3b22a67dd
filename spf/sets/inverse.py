"""Declared inverse pairs of UFs: ``f(f_inv(x))`` is ``x`` and ``f_inv(f(x))`` is ``x``.

``UF("f", ..., inverse="f_inv")`` declares ``f`` a bijection from its domain onto its range
with inverse ``f_inv`` (IEGenLib's bijective UFs). A call whose arguments are exactly the
values of the inverse at one argument tuple collapses to that tuple: ``f(f_inv(x))`` to
``x``, and for a UF of several arguments, whose inverse returns a tuple,
``tau(tau_inv(k)[0], tau_inv(k)[1])`` to ``k`` and ``tau_inv(tau(i, j))[1]`` to ``j``.

The inner call is made only at arguments in its domain (a call outside its array makes no
point), so when the inner UF's domain is declared the rewrite keeps that as a constraint on
``x``; the value of the inner call then lies in the outer UF's domain by bijectivity.

An ``exists`` variable ``e`` passed to such a UF, ``f(..., e, ...)``, whose value the set
fixes to ``v`` (an expression of the tuple, say) is ``f_inv(v)`` (``f_inv(v)[p]``): it is
replaced by that call, so applying the loop flattening ``{[i, j] -> [k]: k = tau(i, j)}``
gives a set over ``k`` that calls ``tau_inv(k)[0]`` and ``tau_inv(k)[1]`` where ``i`` and
``j`` were (IEGenLib's loop flattening examples), instead of ``exists i, j``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from spf.errors import VerifyError
from spf.sets import affine, calls
from spf.sets.body import Body, canonical, order_terms, reorganize
from spf.sets.emptiness import preimage
from spf.sets.linear import DT, esym, internal_kind, to_isl, usym
from spf.sets.ops import dependent_terms, solve_for

if TYPE_CHECKING:
    from spf.sets.affine import Aff
    from spf.sets.uf import UF


def with_inverses(ufs: Mapping[str, UF]) -> dict[str, UF]:
    """``ufs`` with the declaration of every declared inverse added (``UF.inverse_uf``)
    unless given; a given one must take and return what the inverse does."""
    out = dict(ufs)
    for decl in ufs.values():
        if decl.inverse is None:
            continue
        given = out.get(decl.inverse)
        if given is None:
            out[decl.inverse] = decl.inverse_uf()
        elif (given.arity, given.out_arity) != (decl.out_arity, decl.arity):
            raise VerifyError(
                f"UF {decl.name!r} declares the inverse {decl.inverse!r}, which must take "
                f"{decl.out_arity} argument(s) and return {decl.arity} value(s), but it is "
                f"declared {given}"
            )
    return out


def inverse_pairs(ufs: Mapping[str, UF]) -> dict[str, str]:
    """Each UF of a declared pair to its inverse (both directions)."""
    out: dict[str, str] = {}
    for decl in ufs.values():
        if decl.inverse is not None:
            out[decl.name] = decl.inverse
            out[decl.inverse] = decl.name
    return out


def simplify_inverses(body: Body, ufs: Mapping[str, UF]) -> Body:
    """``body`` with every call of a UF on its inverse's values replaced by the inverse's
    arguments (canonical; ``body`` itself when there is none)."""
    pairs = inverse_pairs(ufs)
    if not pairs:
        return body
    while True:
        found = _collapsible(body, pairs)
        if found is not None:
            body = _collapse(body, *found, ufs)
            continue
        solved = _invertible_hidden(body, pairs)
        if solved is None:
            return body
        body = _name_by_inverse(body, *solved)


def _invertible_hidden(body: Body, pairs: Mapping[str, str]) -> tuple[int, int, str, Aff] | None:
    """``(hidden variable, its position p, inverse name, v)`` for a call ``f(..., e, ...)``
    of a UF with a declared inverse whose value the set fixes to ``v`` (an expression of
    the tuple, the parameters and calls that use no hidden variable): there ``e`` is
    ``f_inv(v)``, or ``f_inv(v)[p]`` for a UF of several arguments."""
    nt, ne = body.n_tuple, len(body.hidden)
    if not ne:
        return None
    free = [
        nt + ne + j
        for j in range(len(body.terms))
        if not any(dependent_terms(body, f"__e{h}") & {j} for h in range(ne))
    ]
    for t, (name, args) in enumerate(body.terms):
        inverse = pairs.get(name)  # a UF returning one value (a component is no inverse)
        if inverse is None:
            continue
        for p, arg in enumerate(args):
            s = arg.as_sym()
            kind = internal_kind(s) if s is not None else None
            if kind is None or kind[0] != "e":
                continue
            value = solve_for(body, nt + ne + t, [*range(nt), *free])
            if value is not None:
                return (
                    kind[1],
                    p,
                    inverse if len(args) == 1 else calls.component_name(inverse),
                    value,
                )
    return None


def _name_by_inverse(body: Body, h: int, p: int, inverse: str, value: Aff) -> Body:
    """``body`` with hidden variable ``h`` replaced by a new call of the inverse at
    ``value`` (its component ``p`` when the inverse returns a tuple)."""
    nt, ne, nu = body.n_tuple, len(body.hidden), len(body.terms)
    args = (value,) if not calls.is_component(inverse) else (value, affine.const(p))
    grown = Body(
        body.names,
        body.n_in,
        body.hidden,
        (*body.terms, (inverse, args)),
        body.iset.insert_dims(DT.set, nt + ne + nu, 1),
    )
    grown = grown.with_iset(grown.iset.intersect(grown.space_set(f"__e{h} = __u{nu}")))
    keep = [k for k in range(ne) if k != h]
    out = reorganize(
        grown,
        tuple_src=list(range(nt)),
        hidden_src=[nt + k for k in keep],
        term_src=list(range(nu + 1)),
        names=body.names,
        hidden=[body.hidden[k] for k in keep],
        n_in=body.n_in,
        subst={esym(h): usym(nu).aff()},
    )
    return canonical(order_terms(out))


def _collapsible(body: Body, pairs: Mapping[str, str]) -> tuple[int, int, Aff] | None:
    """``(outer term, one inner term, value)`` of the first call on its inverse's values."""
    for k, (name, args) in enumerate(body.terms):
        inner_name = pairs.get(calls.base_name(name))
        if inner_name is None:
            continue
        inner = [_inner_term(body, a, inner_name) for a in calls.call_args(name, args)]
        if any(j is None for j in inner):
            continue
        at = {calls.call_args(*body.terms[j]) for j in inner if j is not None}
        components = [calls.component_of(*body.terms[j]) for j in inner if j is not None]
        wanted = list(range(len(inner))) if len(inner) > 1 else [None]
        if len(at) != 1 or components != wanted:
            continue
        (point,) = at
        c = calls.component_of(name, args)
        j = inner[0]
        assert j is not None
        return k, j, point[0 if c is None else c]
    return None


def _inner_term(body: Body, arg: Aff, name: str) -> int | None:
    """The term ``arg`` is the value of, when that term calls the UF ``name``."""
    s = arg.as_sym()
    kind = internal_kind(s) if s is not None else None
    if kind is None or kind[0] != "u" or calls.base_name(body.terms[kind[1]][0]) != name:
        return None
    return kind[1]


def _collapse(body: Body, k: int, j: int, value: Aff, ufs: Mapping[str, UF]) -> Body:
    """``body`` with term ``k`` replaced by ``value`` (the inner term ``j``'s arguments in
    the inner UF's declared domain)."""
    iset = body.iset.intersect(body.space_set(f"__u{k} = {to_isl(value)}"))
    inner = calls.declaration(body.terms[j][0], ufs)
    if inner is not None and inner.domain is not None:
        at = list(calls.call_args(*body.terms[j]))
        iset = iset.intersect(preimage(body, inner.domain.body_iset(), at))
    nt, ne = body.n_tuple, len(body.hidden)
    out = reorganize(
        body.with_iset(iset),
        tuple_src=list(range(nt)),
        hidden_src=list(range(nt, nt + ne)),
        term_src=[t for t in range(len(body.terms)) if t != k],
        names=body.names,
        hidden=body.hidden,
        n_in=body.n_in,
        subst={usym(k): value},
    )
    return canonical(out)

"""Hidden variables are bound variables: their names and their order carry no meaning.

``{[i] : exists a : i = 2a && 0 < f(a)}`` and the same text with ``b`` for ``a`` are one set.
The canonical form keeps the names the user wrote (the printer shows them) and orders hidden
variables by name, so two such bodies differ only by a renaming and reordering of their
hidden variables. This module decides that (``same_up_to_hidden``, used by ``==``), gives a
hash that ignores it (``structure_key``), and turns ``a is_subset b`` for a ``b`` with hidden
variables into emptiness checks (``subset_differences``): a hidden variable of ``b`` that
``b`` determines from its tuple is replaced by that expression (``floor(i/2)``), the others
are identified with hidden variables of ``a`` (every way, up to ``MAX_WITNESS_CHOICES``),
and each choice gives a difference ``a \\ b'`` without hidden variables of ``b``'s own; if
one of them is empty, ``a`` is a subset of ``b`` (the chosen variables are the witnesses).
Incomplete by design (``a`` may need other witnesses), never unsound.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING

from spf.sets import affine
from spf.sets.body import Body, canonical, lift_pair, order_terms, reorganize
from spf.sets.linear import esym, integral
from spf.sets.ops import dependent_terms, solve_for, subtract

if TYPE_CHECKING:
    from spf.sets.affine import Aff, Atom

#: At most this many hidden-variable orders are tried by ``same_up_to_hidden`` (all of them
#: for up to 6 hidden variables) ...
MAX_ORDERS = 720
#: ... and this many identifications by ``subset_differences``, each an emptiness check
#: (beyond, the answer is the sound "not shown").
MAX_WITNESS_CHOICES = 64


def structure_key(body: Body) -> Hashable:
    """What ``hash`` uses: equal for bodies that ``same_up_to_hidden`` calls equal."""
    if not body.hidden:
        return (body.names, body.n_in, body.terms, body.params())
    calls = tuple(sorted((name, len(args)) for name, args in body.terms))
    return (body.names, body.n_in, len(body.hidden), calls, body.params())


def same_up_to_hidden(a: Body, b: Body) -> bool:
    """Structural equality of two canonical bodies, hidden variables compared as bound
    variables (any renaming and order)."""
    if (a.names, a.n_in, len(a.hidden), len(a.terms)) != (
        b.names,
        b.n_in,
        len(b.hidden),
        len(b.terms),
    ) or a.params() != b.params():
        return False
    if not a.hidden:
        return a.terms == b.terms and bool(a.iset.is_equal(b.iset))
    a = order_terms(a)
    perms = itertools.islice(itertools.permutations(range(len(b.hidden))), MAX_ORDERS)
    for perm in perms:
        other = _reorder_hidden(b, perm, a.hidden)
        if other.terms == a.terms and bool(other.iset.is_equal(a.iset)):
            return True
    return False


def _reorder_hidden(body: Body, perm: tuple[int, ...], names: tuple[str, ...]) -> Body:
    """``body`` with hidden variable ``k`` taken from old hidden ``perm[k]`` and named
    ``names[k]``; the calls re-sorted as the canonical form sorts them."""
    nt = body.n_tuple
    moved = reorganize(
        body,
        tuple_src=list(range(nt)),
        hidden_src=[nt + p for p in perm],
        term_src=list(range(len(body.terms))),
        names=body.names,
        hidden=names,
        n_in=body.n_in,
    )
    return order_terms(moved)


def unhide(body: Body) -> Body:
    """``body`` with every hidden variable that the tuple (and the parameters) determine
    replaced by its expression in UF arguments: the same set, fewer hidden variables.

    The expression may use the values of UF calls that do not depend on the variable:
    ``exists m : inter2(i) = m && j = sigma(m)`` is ``j = sigma(inter2(i))``."""
    while body.hidden:
        found = _determined_hidden(body)
        if found is None:
            return body
        k, expr = found
        nt, ne = body.n_tuple, len(body.hidden)
        keep = [j for j in range(ne) if j != k]
        moved = reorganize(
            body,
            tuple_src=list(range(nt)),
            hidden_src=[nt + j for j in keep],
            term_src=list(range(len(body.terms))),
            names=body.names,
            hidden=[body.hidden[j] for j in keep],
            n_in=body.n_in,
            subst={esym(k): expr},
        )
        body = canonical(order_terms(moved))  # a call may now nest one that came later
    return body


def _determined_hidden(body: Body) -> tuple[int, Aff] | None:
    """A hidden variable the set makes a function of the tuple, the parameters and the
    values of calls that do not depend on it, and that expression (tuple-only first)."""
    nt, ne = body.n_tuple, len(body.hidden)
    for with_calls in (False, True):
        for k in range(ne):
            allowed = list(range(nt))
            if with_calls:
                free = set(range(len(body.terms))) - dependent_terms(body, f"__e{k}")
                if not free:
                    continue
                allowed += [nt + ne + j for j in sorted(free)]
            expr = solve_for(body, nt + k, allowed)
            if expr is not None:
                return k, _integer_valued(expr)
    return None


def _integer_valued(expr: Aff) -> Aff:
    """``expr`` written with integer coefficients (``i/2`` where ``i`` is even is
    ``floor(i/2)``)."""
    num, den = integral(expr)
    return expr if den == 1 else affine.floor(num / den)


def subset_differences(a: Body, b: Body) -> Iterator[Body]:
    """Bodies whose emptiness each proves ``a`` a subset of ``b`` (see the module text)."""
    a, b = unhide(a), unhide(b)
    if not b.hidden:
        yield subtract(a, b)
        return
    ea, eb = len(a.hidden), len(b.hidden)
    if ea == 0:
        return
    choices = itertools.islice(itertools.product(range(ea), repeat=eb), MAX_WITNESS_CHOICES)
    for choice in choices:
        yield _difference(a, b, choice)


def _difference(a: Body, b: Body, choice: tuple[int, ...]) -> Body:
    """``a \\ b'`` where ``b'`` is ``b`` with its hidden variable ``k`` equal to ``a``'s
    hidden variable ``choice[k]`` (``b' ⊆ b``), over ``a``'s hidden variables."""
    la, lb = lift_pair(a, b)
    nt, ea = a.n_tuple, len(a.hidden)
    eqs = " and ".join(f"__e{c} = __e{ea + k}" for k, c in enumerate(choice))
    lb = lb.with_iset(lb.iset.intersect(lb.space_set(eqs)))
    subst: dict[Atom, Aff] = {esym(ea + k): esym(c).aff() for k, c in enumerate(choice)}

    def squash(body: Body) -> Body:
        return reorganize(
            body,
            tuple_src=list(range(nt)),
            hidden_src=list(range(nt, nt + ea)),
            term_src=list(range(len(body.terms))),
            names=a.names,
            hidden=a.hidden,
            n_in=a.n_in,
            subst=subst,
        )

    ra, rb = squash(la), squash(lb)
    return canonical(ra.with_iset(ra.iset.subtract(rb.iset)))

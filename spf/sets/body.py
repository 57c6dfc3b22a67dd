"""The representation under ``Set`` and ``Relation``: an isl set plus a table of UF calls.

A :class:`Body` is ``{ t : exists e, u : u_k = f_k(args_k) for all k and iset(t, e, u) }``:

* ``t``: the tuple positions (inputs then outputs for a relation), isl dims ``__t0 ...``;
  each has a user name, or ``None`` for a position written as an expression (``[0, i + 1]``)
  whose value the constraints fix;
* ``e``: hidden variables (``exists``) that some UF argument needs, dims ``__e0 ...``; hidden
  variables no UF argument needs are true isl existentials and not listed;
* ``u``: one dim ``__u0 ...`` per distinct UF call; ``terms[k] = (name, args)`` with the
  arguments as :class:`~spf.sets.affine.Aff` expressions over the internal symbols,
  parameters and earlier ``__u`` (nested calls such as ``perm(col(k))`` are flattened).

UF values are set dimensions placed after the tuple, never isl parameters (unsound in
relations) nor isl existentials (isl eliminates them). Dimensions are addressed by position
internally and named for users only by the printer; every operation returns the canonical
form (see :func:`canonical`).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import islpy as isl

from spf.errors import InternalError
from spf.sets import calls
from spf.sets.linear import (
    DT,
    basic_constraints,
    coefficient,
    esym,
    free_names,
    internal_kind,
    param_names,
    tsym,
    usym,
    with_known_divs,
)
from spf.sets.memo import Table, memo

if TYPE_CHECKING:
    from spf.sets.affine import Aff, Atom, Sym

Term: TypeAlias = "tuple[str, tuple[Aff, ...]]"


@dataclass(frozen=True, eq=False)
class Body:
    """One UF-aware set or relation (immutable; build new ones with the functions below)."""

    names: tuple[str | None, ...]
    n_in: int | None
    hidden: tuple[str, ...]
    terms: tuple[Term, ...]
    iset: isl.Set
    memo: dict[Hashable, Any] = field(default_factory=dict, init=False, compare=False, repr=False)
    """Values derived from the (immutable) fields, computed once: text, symbols, params."""

    def __post_init__(self) -> None:
        want = [s.name for s in self.dim_syms()]
        iset = self.iset
        if iset.dim(DT.set) != len(want):
            raise InternalError(f"spf bug: isl set has {iset.dim(DT.set)} dims, want {want}")
        if iset.has_tuple_id():
            iset = iset.reset_tuple_id()
        for k, name in enumerate(want):
            if iset.get_dim_name(DT.set, k) != name:
                iset = iset.set_dim_name(DT.set, k, name)
        object.__setattr__(self, "iset", iset)

    # --- views
    @property
    def n_tuple(self) -> int:
        return len(self.names)

    def dim_syms(self) -> list[Sym]:
        """Internal symbols of all dims in order: tuple, hidden, UF values."""
        got: list[Sym] | None = self.memo.get("dim_syms")
        if got is None:
            got = (
                [tsym(k) for k in range(len(self.names))]
                + [esym(k) for k in range(len(self.hidden))]
                + [usym(k) for k in range(len(self.terms))]
            )
            self.memo["dim_syms"] = got
        return list(got)

    def params(self) -> frozenset[str]:
        """Symbolic constants used by the constraints or by UF arguments."""
        got: frozenset[str] | None = self.memo.get("params")
        if got is None:
            out = set(param_names(self.iset))
            for _, args in self.terms:
                out |= {n for n in free_names(args) if not n.startswith("__")}
            got = self.memo["params"] = frozenset(out)
        return got

    def with_iset(self, iset: isl.Set) -> Body:
        return Body(self.names, self.n_in, self.hidden, self.terms, iset)

    def space_set(self, text: str, extra_params: Sequence[str] = ()) -> isl.Set:
        """An isl set over this body's dims from constraint text in isl syntax (parsed once
        per body and text)."""
        key = ("space_set", text, tuple(extra_params))
        got: isl.Set | None = self.memo.get(key)
        if got is None:
            params = sorted(self.params() | set(extra_params) | _param_words(text))
            dims = ", ".join(s.name for s in self.dim_syms())
            got = isl_set(f"[{', '.join(params)}] -> {{ [{dims}] : {text} }}")
            self.memo[key] = got
        return got

    def term_expr(self, k: int) -> Aff:
        """Term ``k`` as a call with nested terms substituted (internal symbols)."""
        return call_expr(self.terms, k)

    def needed_syms(self) -> set[str]:
        """Names of internal symbols some UF argument uses."""
        got: frozenset[str] | None = self.memo.get("needed")
        if got is None:
            got = self.memo["needed"] = frozenset(
                free_names(a for _, args in self.terms for a in args)
            )
        return set(got)


@memo(8192)
def isl_set(text: str) -> isl.Set:
    """``isl.Set(text)``, parsed once per text (isl objects are immutable values)."""
    return isl.Set(text)


def call_expr(terms: tuple[Term, ...], k: int) -> Aff:
    """Call ``k`` of a call table as a call expression, nested calls substituted."""
    name, args = terms[k]
    inner = sorted(int(n[3:]) for n in free_names(args) if n.startswith("__u"))
    sub: dict[Atom, Aff] = {usym(j): call_expr(terms, j) for j in inner}
    return calls.call(name, [a.xreplace(sub) for a in args])


def _param_words(text: str) -> set[str]:
    import re

    words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text))
    reserved = {"and", "or", "not", "floor", "ceil", "mod", "min", "max", "true", "false"}
    return {w for w in words - reserved if not w.startswith("__")}


# ----------------------------------------------------------------------------- dim surgery
def permute_dims(
    iset: isl.Set,
    order: Sequence[int | None],
    kinds: tuple[int, int, int] | None = None,
    text: str | None = None,
) -> isl.Set:
    """New dim m = old dim ``order[m]`` (None: a new unconstrained dim); others projected.

    ``kinds`` (numbers of tuple, hidden and UF-value dims of the result) names the new dims
    as a :class:`Body` with those counts names them (saving the renaming afterwards);
    ``text``: the set's text when the caller has it (a body's, :func:`iset_text`: printing
    the set again costs more than the lookup)."""
    key = (iset.to_str() if text is None else text, tuple(order), kinds)
    got = _PERMUTED.get(key)
    if got is None:
        perm = _permutation(iset.dim(DT.set), key[1], kinds)
        got = _PERMUTED.put(key, iset.reset_tuple_id().apply(perm))
    return got


_PERMUTED: Table[tuple[str, tuple[int | None, ...], tuple[int, int, int] | None], isl.Set] = Table(
    8192
)
"""Memo of :func:`permute_dims` by the set's text (operations repeat the same surgery)."""


@memo(4096, shape=True)
def _permutation(
    n: int, order: tuple[int | None, ...], kinds: tuple[int, int, int] | None
) -> isl.Map:
    """The isl map of :func:`permute_dims` (built once per shape), the map that parsing
    ``{ [d0, ..., dn] -> [d<order[0]>, ..., f<m>, ...] }`` gives (input dims ``d<k>``, a
    new output dim ``f<m>``, the others unnamed, or named as ``kinds`` says), built
    through isl's API: one equality per kept dim on the universe of the space. Parsing
    the text cost ~0.4 ms for the 30-40 dims of ILU(0)'s sets, four times as much."""
    space = isl.Space.alloc(isl.DEFAULT_CONTEXT, 0, n, len(order))
    for k in range(n):
        space = space.set_dim_name(DT.in_, k, f"d{k}")
    names: Sequence[str | None]
    if kinds is not None and sum(kinds) == len(order):
        nt, ne, nu = kinds
        names = (
            [f"__t{k}" for k in range(nt)]
            + [f"__e{k}" for k in range(ne)]
            + [f"__u{k}" for k in range(nu)]
        )
    else:
        names = [f"f{m}" if o is None else None for m, o in enumerate(order)]
    for m, name in enumerate(names):
        if name is not None:
            space = space.set_dim_name(DT.out, m, name)
    perm = isl.BasicMap.universe(space)
    for m, o in enumerate(order):
        if o is not None:
            perm = perm.equate(DT.in_, o, DT.out, m)
    return isl.Map.from_basic_map(perm)


def reorganize(
    body: Body,
    *,
    tuple_src: Sequence[int | None],
    hidden_src: Sequence[int | None],
    term_src: Sequence[int],
    names: Sequence[str | None],
    hidden: Sequence[str],
    n_in: int | None,
    subst: Mapping[Atom, Aff] | None = None,
) -> Body:
    """Rebuild ``body`` with dims taken from old positions (global dim indices).

    ``term_src`` lists old term indices; the UF dims follow them. Old dims not listed are
    projected out (existentially); their symbols must not occur in kept UF arguments unless
    ``subst`` replaces them.
    """
    nt, ne = body.n_tuple, len(body.hidden)
    order = list(tuple_src) + list(hidden_src) + [nt + ne + k for k in term_src]
    kinds = (len(tuple_src), len(hidden_src), len(term_src))
    iset = permute_dims(body.iset, order, kinds, iset_text(body))
    old = body.dim_syms()
    new_syms = (
        [tsym(k) for k in range(len(tuple_src))]
        + [esym(k) for k in range(len(hidden_src))]
        + [usym(k) for k in range(len(term_src))]
    )
    sub: dict[Atom, Aff] = {}
    for new, o in zip(new_syms, order, strict=True):
        if o is not None and old[o] != new:
            sub[old[o]] = new.aff()
    first = dict(subst or {})
    terms = tuple(
        (body.terms[k][0], tuple(_renamed(a, first, sub) for a in body.terms[k][1]))
        for k in term_src
    )
    return Body(tuple(names), n_in, tuple(hidden), terms, iset)


def _renamed(arg: Aff, first: Mapping[Atom, Aff], sub: Mapping[Atom, Aff]) -> Aff:
    """A UF argument after ``first`` and then ``sub``."""
    return arg.xreplace(first).xreplace(sub)


def shifted_terms(body: Body, t_off: int, e_off: int, u_off: int) -> tuple[Term, ...]:
    """Terms of ``body`` with its internal symbols renumbered by the given offsets."""
    sub: dict[Atom, Aff] = {}
    for k in range(body.n_tuple):
        sub[tsym(k)] = tsym(k + t_off).aff()
    for k in range(len(body.hidden)):
        sub[esym(k)] = esym(k + e_off).aff()
    for k in range(len(body.terms)):
        sub[usym(k)] = usym(k + u_off).aff()
    return tuple((n, tuple(a.xreplace(sub) for a in args)) for n, args in body.terms)


def product(a: Body, b: Body, n_in: int | None) -> Body:
    """``{ [a.t, b.t] : a and b }`` with both term tables (not yet merged)."""
    pa = a.iset.reset_tuple_id().flat_product(b.iset.reset_tuple_id())
    ta, ea, ua = a.n_tuple, len(a.hidden), len(a.terms)
    tb, eb = b.n_tuple, len(b.hidden)
    base = ta + ea + ua
    order = (
        list(range(ta))
        + [base + k for k in range(tb)]
        + [ta + k for k in range(ea)]
        + [base + tb + k for k in range(eb)]
        + [ta + ea + k for k in range(ua)]
        + [base + tb + eb + k for k in range(len(b.terms))]
    )
    iset = permute_dims(pa, order, (ta + tb, ea + eb, ua + len(b.terms)))
    # a's symbols keep their numbers; b's move past a's in each kind
    b_terms = shifted_terms(b, ta, ea, ua)
    return Body(a.names + b.names, n_in, a.hidden + b.hidden, a.terms + b_terms, iset)


def lift_pair(a: Body, b: Body) -> tuple[Body, Body]:
    """``a`` and ``b`` (same tuple) over one space: hidden vars and terms of both; both
    named as ``a``."""
    la, lb = lift_all([a, b], like=a)
    return la, lb


def lift_all(bodies: Sequence[Body], like: Body | None = None) -> list[Body]:
    """``bodies`` (same tuple) over one space: the hidden vars and terms of all, in order;
    each keeps its tuple's names, or takes those of ``like``."""
    nt = bodies[0].n_tuple
    n_hidden = sum(len(b.hidden) for b in bodies)
    n_terms = sum(len(b.terms) for b in bodies)
    hidden: tuple[str, ...] = ()
    terms: tuple[Term, ...] = ()
    orders: list[list[int | None]] = []
    for b in bodies:
        e0, u0, eb, ub = len(hidden), len(terms), len(b.hidden), len(b.terms)
        terms += shifted_terms(b, 0, e0, u0) if e0 or u0 else b.terms
        hidden += b.hidden
        orders.append(
            list(range(nt))
            + [None] * e0
            + list(range(nt, nt + eb))
            + [None] * (n_hidden - e0 - eb)
            + [None] * u0
            + list(range(nt + eb, nt + eb + ub))
            + [None] * (n_terms - u0 - ub)
        )
    kinds = (nt, n_hidden, n_terms)
    named = [b if like is None else like for b in bodies]
    return [
        Body(n.names, n.n_in, hidden, terms, permute_dims(b.iset, order, kinds, iset_text(b)))
        for b, n, order in zip(bodies, named, orders, strict=True)
    ]


# ----------------------------------------------------------------------------- canonical form
def canonical(body: Body) -> Body:
    """Merge equal calls, drop what constrains nothing, order the calls, name loose slots.

    A pure function of the body's fields: the result is remembered by their value (the isl
    set by its text), since the set operations bring the same intermediate bodies to it
    again and again (measured: about half of its calls in a wavefront's analysis and
    compile)."""
    key = value_key(body)
    found = _CANONICAL.get(key)
    if found is None:
        found = _CANONICAL.put(key, _canonical(body))
    return found


def value_key(body: Body) -> tuple[Hashable, ...]:
    """``body``'s fields as a hashable value (the isl set as its text), computed once."""
    got: tuple[Hashable, ...] | None = body.memo.get("value_key")
    if got is None:
        got = body.memo["value_key"] = (
            body.names,
            body.n_in,
            body.hidden,
            body.terms,
            body.iset.to_str(),
        )
    return got


def iset_text(body: Body) -> str:
    """The text of ``body``'s isl set, printed once per body (:func:`value_key` has it)."""
    return str(value_key(body)[4])


_CANONICAL: Table[tuple[Hashable, ...], Body] = Table(8192)
""":func:`canonical`'s results by :func:`value_key` of its argument."""


def _canonical(body: Body) -> Body:
    body = _merge_duplicates(body)
    while True:
        smaller = _drop_unneeded(body)
        if smaller is body:
            smaller = _free_unused_hidden(body)
        if smaller is body:
            smaller = _share_hidden(body)
            if smaller is body:
                break
            smaller = _merge_duplicates(smaller)
        body = smaller
    if body.iset.is_empty() and (body.terms or body.hidden or body.iset.dim(DT.param)):
        return _empty_like(body)
    body = order_terms(_order_hidden(body))  # the calls' order depends on the hidden order
    iset = with_known_divs(body.iset).drop_unused_params()
    body = body.with_iset(iset)
    return _dedupe_names(_first_occurrence_names(name_loose_slots(body)))


def _hidden_group(body: Body, k: int) -> list[int]:
    """Dims of hidden variable ``k`` and of the calls whose arguments use it (nested too)."""
    nt, ne = body.n_tuple, len(body.hidden)
    used = {f"__e{k}"}
    dims = [nt + k]
    for j, (_, args) in enumerate(body.terms):  # inner calls come first in the table
        if free_names(args) & used:
            used.add(f"__u{j}")
            dims.append(nt + ne + j)
    return dims


def _free_unused_hidden(body: Body) -> Body:
    """Each disjunct leaves free the hidden variables none of its calls constrain.

    In ``exists a, b : (f(a) > i && a = floor(b/2) && 0 <= b < i) || (g(b) > i && ...)``
    the first disjunct constrains ``b`` (inside a floor) but not ``g(b)``: there ``b`` is a
    plain existential, projected out of that disjunct (exactly: no call links it to
    anything). The text each disjunct prints reads back so (isl eliminates such a variable),
    and a variable free in a disjunct can then be shared with another one
    (:func:`_share_hidden`). Returns ``body`` itself when no disjunct changes.
    """
    bsets = body.iset.get_basic_sets()
    if not body.hidden or len(bsets) < 2:
        return body
    nt = body.n_tuple
    groups = [_hidden_group(body, k) for k in range(len(body.hidden))]
    pieces = [isl.Set.from_basic_set(b) for b in bsets]
    changed = False
    for p, piece in enumerate(pieces):
        for k, group in enumerate(groups):
            if _is_cylinder(piece, nt + k) or not all(_is_cylinder(piece, d) for d in group[1:]):
                continue
            piece = piece.project_out(DT.set, nt + k, 1).insert_dims(DT.set, nt + k, 1)
            pieces[p], changed = piece, True
    if not changed:
        return body
    whole = pieces[0]
    for piece in pieces[1:]:
        whole = whole.union(piece)
    return body.with_iset(whole)


def _share_hidden(body: Body) -> Body:
    """One hidden variable where two serve different disjuncts.

    ``{[i] : exists a : 0 < f(a) < i} union {[i] : exists a : f(a) > i}`` reads back with two
    hidden variables (one per part) although one serves both: each disjunct constrains only
    one of them (and the calls on it), so the other's constraints can move onto it, disjunct
    by disjunct, without changing the set. Merges the first such pair; returns ``body``
    itself when there is none.
    """
    ne = len(body.hidden)
    bsets = body.iset.get_basic_sets()
    if ne < 2 or len(bsets) < 2:
        return body
    groups = [_hidden_group(body, k) for k in range(ne)]
    pieces = [isl.Set.from_basic_set(b) for b in bsets]
    free = [[all(_is_cylinder(p, d) for d in g) for g in groups] for p in pieces]
    for keep, gone in itertools.combinations(range(ne), 2):
        if set(groups[keep]) & set(groups[gone]):
            continue
        if not all(f[keep] or f[gone] for f in free):
            continue
        nt, n = body.n_tuple, body.iset.dim(DT.set)
        moved = body.iset.empty(body.iset.get_space())
        for piece, f in zip(pieces, free, strict=True):
            if not f[gone]:  # constraints on ``gone`` move to ``keep`` (free here)
                order: list[int | None] = list(range(n))
                order[nt + keep], order[nt + gone] = nt + gone, None
                piece = permute_dims(piece, order).align_params(moved.get_space())
                moved = moved.align_params(piece.get_space())
            moved = moved.union(piece)
        kept = [j for j in range(ne) if j != gone]
        return reorganize(
            body.with_iset(moved),
            tuple_src=list(range(nt)),
            hidden_src=[nt + j for j in kept],
            term_src=list(range(len(body.terms))),
            names=body.names,
            hidden=[body.hidden[j] for j in kept],
            n_in=body.n_in,
            subst={esym(gone): esym(keep).aff()},
        )
    return body


def _empty_like(body: Body) -> Body:
    """The empty set of the same tuple: no calls, no hidden variables, no parameters."""
    nt = body.n_tuple
    space = isl.Space.set_alloc(isl.DEFAULT_CONTEXT, 0, nt)
    return Body(body.names, body.n_in, (), (), isl.Set.empty(space))


def _order_hidden(body: Body) -> Body:
    """Hidden variables sorted by name (``exists(i, k: ...)`` equals ``exists(k, i: ...)``)."""
    order = sorted(range(len(body.hidden)), key=lambda k: body.hidden[k])
    if order == list(range(len(body.hidden))):
        return body
    nt = body.n_tuple
    return reorganize(
        body,
        tuple_src=list(range(nt)),
        hidden_src=[nt + k for k in order],
        term_src=list(range(len(body.terms))),
        names=body.names,
        hidden=[body.hidden[k] for k in order],
        n_in=body.n_in,
    )


def _first_occurrence_names(body: Body) -> Body:
    """A name sits on the first position that carries it, as the parser puts it.

    ``{[i, j] -> [j, i]}`` inverted is ``{[j, i] -> [i, j]}``: the inputs get the names and
    the outputs, equal to them, stay unnamed (as parsing that text gives).
    """
    if not _may_move_names(body.names):
        return body
    bsets = body.iset.get_basic_sets()
    if not bsets:
        return body
    syms = body.dim_syms()
    names = list(body.names)
    moved: dict[Atom, Aff] = {}
    changed = True
    while changed:
        changed = False
        probe = Body(tuple(names), body.n_in, body.hidden, body.terms, body.iset)
        per_bset = [slot_values(probe, basic_constraints(b, syms))[0] for b in bsets]
        for k, name in enumerate(names):
            if name is not None:
                continue
            targets = {_plain_slot(v.get(k)) for v in per_bset}
            if len(targets) != 1:
                continue
            j = targets.pop()
            if j is not None and j > k and names[j] is not None:
                names[k], names[j] = names[j], None
                moved[tsym(j)] = tsym(k).aff()  # equal everywhere: UF arguments use the named one
                changed = True
                break
    if tuple(names) == body.names:
        return body
    terms = tuple((n, tuple(a.xreplace(moved) for a in args)) for n, args in body.terms)
    # the calls' arguments changed: sort them again (the canonical order is by their text)
    return order_terms(
        _merge_duplicates(Body(tuple(names), body.n_in, body.hidden, terms, body.iset))
    )


def _may_move_names(names: tuple[str | None, ...]) -> bool:
    """Whether some unnamed position has a named one after it: only such a name can move
    (:func:`_first_occurrence_names`), so without one no constraint need be read (schedule
    relations' trailing constants, fully named sets)."""
    seen_named = False
    for name in reversed(names):
        if name is None and seen_named:
            return True
        seen_named = seen_named or name is not None
    return False


def _plain_slot(value: Aff | None) -> int | None:
    """``j`` when ``value`` is exactly the symbol of tuple position ``j``."""
    s = value.as_sym() if value is not None else None
    if s is not None:
        kind = internal_kind(s)
        if kind is not None and kind[0] == "t":
            return kind[1]
    return None


def _dedupe_names(body: Body) -> Body:
    """Named positions and hidden variables get distinct names, none equal to a parameter."""
    used = set(body.params())
    names: list[str | None] = []
    for k, n in enumerate(body.names):
        if n is not None and n in used:
            n = fresh_name(n + "_", k, used)
        if n is not None:
            used.add(n)
        names.append(n)
    hidden: list[str] = []
    for k, h in enumerate(body.hidden):
        if h in used:
            h = fresh_name(h + "_", k, used)
        used.add(h)
        hidden.append(h)
    if tuple(names) == body.names and tuple(hidden) == body.hidden:
        return body
    return Body(tuple(names), body.n_in, tuple(hidden), body.terms, body.iset)


def _merge_duplicates(body: Body) -> Body:
    """Equal calls made one: each call equal to an earlier one is dropped, its value equated
    to the first's and its symbol replaced by the first's in the other calls' arguments.
    Every duplicate of a round goes at once (one intersection, one reorganisation: a union
    of bodies calling the same functions brings one duplicate per call, each of which cost
    both when merged one at a time); a replacement may make two calls equal that were not
    (``f(g(i))`` and ``f(g'(i))``), so rounds repeat until none is found."""
    while True:
        first: dict[tuple[str, tuple[Aff, ...]], int] = {}
        dropped: dict[int, int] = {}
        for k, key in enumerate(body.terms):
            if key in first:
                dropped[k] = first[key]
            else:
                first[key] = k
        if not dropped:
            return body
        same = " and ".join(f"__u{a} = __u{b}" for b, a in dropped.items())
        body = body.with_iset(body.iset.intersect(body.space_set(same)))
        nt, ne = body.n_tuple, len(body.hidden)
        body = reorganize(
            body,
            tuple_src=list(range(nt)),
            hidden_src=list(range(nt, nt + ne)),
            term_src=[k for k in range(len(body.terms)) if k not in dropped],
            names=body.names,
            hidden=body.hidden,
            n_in=body.n_in,
            subst={usym(b): usym(a).aff() for b, a in dropped.items()},
        )


def _is_cylinder(iset: isl.Set, pos: int, text: str | None = None) -> bool:
    """True when the set does not constrain dim ``pos`` (semantically); ``text``: the set's
    text when the caller has it (printing a large set costs more than the lookup)."""
    if not iset.involves_dims(DT.set, pos, 1):
        return True
    key = (iset.to_str() if text is None else text, pos)
    got = _CYLINDER.get(key)
    if got is None:
        got = _CYLINDER.put(key, not _constrains(iset, pos))
    return got


def _constrains(iset: isl.Set, pos: int) -> bool:
    """Whether ``iset``, whose constraints involve dim ``pos``, constrains it (False: it is
    a cylinder along it). One basic set without existential variables that is not empty
    does: each of its constraints holds at each of its points, and one whose coefficient of
    dim ``pos`` is not 0 fails once that coordinate moves far enough, so no constraint of a
    cylinder along ``pos`` involves it (the fast answer of 5 in 6 of a cold Gauss-Seidel
    wavefront compile's questions, ~5x faster than projecting). Otherwise the set is
    compared with its projection."""
    if iset.n_basic_set() == 1:
        (piece,) = iset.get_basic_sets()
        if piece.dim(DT.div) == 0 and not iset.is_empty():
            return True
    cyl = iset.project_out(DT.set, pos, 1).insert_dims(DT.set, pos, 1)
    return not cyl.is_equal(iset)


_CYLINDER: Table[tuple[str, int], bool] = Table(8192)
"""Memo of :func:`_is_cylinder` by the set's text."""


def _drop_unneeded(body: Body) -> Body:
    nt, ne, nu = body.n_tuple, len(body.hidden), len(body.terms)
    needed = body.needed_syms()
    keep_terms = [
        k
        for k in range(nu)
        if f"__u{k}" in needed or not _is_cylinder(body.iset, nt + ne + k, iset_text(body))
    ]
    keep_hidden = [k for k in range(ne) if f"__e{k}" in needed]
    if len(keep_terms) == nu and len(keep_hidden) == ne:
        return body
    return reorganize(
        body,
        tuple_src=list(range(nt)),
        hidden_src=[nt + k for k in keep_hidden],
        term_src=keep_terms,
        names=body.names,
        hidden=[body.hidden[k] for k in keep_hidden],
        n_in=body.n_in,
    )


def order_terms(body: Body) -> Body:
    """Calls sorted by nesting depth, then by their text (the canonical order)."""
    order = list(_term_order(body.terms))
    if order == list(range(len(body.terms))):
        return body
    nt, ne = body.n_tuple, len(body.hidden)
    return reorganize(
        body,
        tuple_src=list(range(nt)),
        hidden_src=list(range(nt, nt + ne)),
        term_src=order,
        names=body.names,
        hidden=body.hidden,
        n_in=body.n_in,
    )


@memo(8192)
def _term_order(terms: tuple[Term, ...]) -> tuple[int, ...]:
    """The canonical order of a call table (it depends on the table alone)."""
    depth: dict[int, int] = {}

    def depth_of(k: int) -> int:
        if k not in depth:
            inner = [int(n[3:]) for n in free_names(terms[k][1]) if n.startswith("__u")]
            depth[k] = 1 + max((depth_of(j) for j in inner), default=0)
        return depth[k]

    for k in range(len(terms)):
        depth_of(k)
    return tuple(sorted(range(len(terms)), key=lambda k: (depth[k], str(call_expr(terms, k)))))


# ----------------------------------------------------------------------------- loose slots
def slot_values(
    body: Body, conj: list[tuple[bool, Aff]]
) -> tuple[dict[int, Aff], list[tuple[bool, Aff]]]:
    """Values of unnamed tuple positions fixed by equalities of one conjunction.

    Returns ``({position: expression}, remaining constraints)``. An expression may use named
    positions, parameters and UF values (not hidden variables nor the position itself);
    constraints used to fix a position are removed and the values substituted in the rest.
    """
    key = (body.names, body.terms, tuple(conj))
    got = _SLOT_VALUES.get(key)
    if got is None:
        got = _SLOT_VALUES.put(key, _slot_values(body, conj))
    return dict(got[0]), list(got[1])


_SLOT_VALUES: Table[
    tuple[tuple[str | None, ...], tuple[Term, ...], tuple[tuple[bool, Aff], ...]],
    tuple[dict[int, Aff], list[tuple[bool, Aff]]],
] = Table(8192)
"""Memo of :func:`slot_values`: it depends only on the names, the calls and the constraints
(canonicalising, naming and printing ask the same question several times per operation)."""


def _slot_values(
    body: Body, conj: list[tuple[bool, Aff]]
) -> tuple[dict[int, Aff], list[tuple[bool, Aff]]]:
    loose = {tsym(k): k for k, n in enumerate(body.names) if n is None}
    values: dict[int, Aff] = {}
    rest = list(conj)
    progress = True
    while progress:
        progress = False
        for idx, (is_eq, e) in enumerate(rest):
            if not is_eq:
                continue
            found = _solvable_slot(body, e, loose, values)
            if found is None:
                continue
            pos, value = found
            values[pos] = value
            rest.pop(idx)
            sub: dict[Atom, Aff] = {tsym(pos): value}
            rest = [(q, x.xreplace(sub)) for q, x in rest]
            values = {p: v.xreplace(sub) for p, v in values.items()}
            progress = True
            break
    return values, rest


def _solvable_slot(
    body: Body, e: Aff, loose: Mapping[Sym, int], values: Mapping[int, Aff]
) -> tuple[int, Aff] | None:
    floors = e.floors()
    for s, pos in loose.items():
        if pos in values:
            continue
        coeff = coefficient(e, s)
        if coeff not in (1, -1) or any(s.name in f.arg.free_names() for f in floors):
            continue
        value = -(e - s * coeff) / coeff
        if _value_ok(body, value, s):
            return pos, value
    return None


def _value_ok(body: Body, value: Aff, slot: Sym) -> bool:
    """No hidden variables, no dependence on ``slot`` (also through UF arguments), and not a
    lone parameter (``[N]`` would read back as a variable named N)."""
    lone = value.as_sym()
    if lone is not None and internal_kind(lone) is None:
        return False
    for s in set(value.symbols()):
        kind = internal_kind(s)
        if kind is None:
            continue
        if kind[0] == "e" or s == slot:
            return False
        if kind[0] == "u":
            call = body.term_expr(kind[1])
            names = call.free_names()
            if slot.name in names or any(n.startswith("__e") for n in names):
                return False
    return True


def name_loose_slots(body: Body) -> Body:
    """Give a name to every unnamed position that some disjunct does not fix."""
    if all(n is not None for n in body.names):
        return body
    syms = body.dim_syms()
    needed = body.needed_syms()  # a position a UF argument uses is shown by name
    unfixed: set[int] = {k for k, n in enumerate(body.names) if n is None and f"__t{k}" in needed}
    bsets = body.iset.get_basic_sets()
    for bset in bsets:
        values, _ = slot_values(body, basic_constraints(bset, syms))
        unfixed |= {k for k, n in enumerate(body.names) if n is None and k not in values}
    if not unfixed:
        return body
    names = list(body.names)
    used = {n for n in names if n is not None} | set(body.hidden) | set(body.params())
    for k in sorted(unfixed):
        name = fresh_name("o" if body.n_in is not None and k >= body.n_in else "t", k, used)
        names[k] = name
        used.add(name)
    return Body(tuple(names), body.n_in, body.hidden, body.terms, body.iset)


def fresh_name(stem: str, k: int, used: set[str]) -> str:
    """``stem<k>``, or with a suffix if taken."""
    name = f"{stem}{k}"
    n = 0
    while name in used:
        n += 1
        name = f"{stem}{k}_{n}"
    return name

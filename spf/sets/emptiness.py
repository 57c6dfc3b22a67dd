"""Emptiness with UF axioms: functional consistency, monotonicity, declared ranges/domains.

isl alone treats UF values as free dimensions, so ``i = j && f(i) < f(j)`` looks satisfiable.
The axioms are added lazily (a counterexample-guided search): take isl's sample point; if it
violates no axiom it defines a UF interpretation and the set is not empty; otherwise split the
set on the axiom of the first violated pair of calls and recurse. Each pair is split at most
once on a path, so the search terminates; it is complete for these axioms. Adding every pair's
axiom up front is exponential (measured: 40,320 pieces for 8 calls), the lazy search splits
only where needed.

What the search derives from a body's *shape* (its tuple and hidden widths, call table and
parameters, not its constraints) is shared by every body of that shape (:func:`shared`):
the constraints of the declarations, the axiom pieces of each pair, the point layout and the
compiled pair check, and the facts' instances (:mod:`spf.sets.facts`). A dependence analysis
tests many sets of one shape: the schedule levels of one statement pair, the same pair under
another schedule, the inspector's projections (measured on ILU(0): 197 searches, 65 shapes).

So are the models the search finds (:func:`_witnesses`): a point that violates no axiom of
its pairs of calls and no instance of the oracle's facts is a model of every set of that
shape, declarations and facts that contains it, since the axioms and the instances depend on
the shape alone. A search first tests whether a model found before lies in its set, and is
then done: the verdict is the one the search would reach (it answers "not empty" exactly
when its set holds such a point, whichever it samples first). On a cold ILU(0) wavefront
5 of the 14 searches that end in a model (the candidate terms the inspector tries in turn,
``x < t`` for the iterators and calls ``t`` of one projection) find one this way.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

import islpy as isl

from spf.sets import calls
from spf.sets.linear import DT, evaluate, param_names, sym, to_isl
from spf.sets.memo import Table, memo
from spf.sets.pointeval import Layout, PairCheck, coordinate

if TYPE_CHECKING:
    from spf.sets.affine import Aff, Atom
    from spf.sets.body import Body
    from spf.sets.uf import UF

Pair = tuple[int, int]
Oracle = Callable[[isl.Point], "isl.Set | None"]
"""Further axioms, added lazily: given a sample point, a set (in the body's space) the
point violates and every model satisfies, or None (see :mod:`spf.sets.facts`). An oracle
whose axioms depend on the body's shape alone says so with a hashable ``witness_key``
attribute naming them (models are then shared, :func:`_witnesses`)."""


def declared_facts(body: Body, ufs: Mapping[str, UF]) -> isl.Set:
    """``body.iset`` restricted by each call's declared range and argument domain (computed
    once per body and declarations; the restriction once per shape)."""
    decls = _used_declarations(body, ufs)
    key = ("declared_facts", decls)
    got: isl.Set | None = body.memo.get(key)
    if got is None:
        table = shared(body)
        found: tuple[isl.Set | None] | None = table.get(key)
        if found is None:
            found = table[key] = (_declared(body, ufs),)
        got = body.iset if found[0] is None else body.iset.intersect(found[0])
        body.memo[key] = got
    return got


def _declared(body: Body, ufs: Mapping[str, UF]) -> isl.Set | None:
    """The set of ``body``'s space where each call's value is in its UF's declared range and
    its arguments in the declared domain (None: no call has a declaration that says so)."""
    out: isl.Set | None = None
    for k, (name, args) in enumerate(body.terms):
        decl = calls.declaration(name, ufs)
        if decl is None:
            continue
        parts = []
        if decl.range is not None:
            values = calls.value_range(decl, calls.component_of(name, args))
            parts.append(preimage(body, values, [sym(f"__u{k}").aff()]))
        if decl.domain is not None:
            at = list(calls.call_args(name, args))
            parts.append(preimage(body, decl.domain.body_iset(), at))
        for part in parts:
            out = part if out is None else out.intersect(part)
    return out


def shared(body: Body) -> dict[Hashable, Any]:
    """The memo of what is derived from ``body``'s shape alone (tuple and hidden widths,
    call table, parameters; not its constraints nor its names): one dict for every body of
    that shape (see the module's docstring)."""
    got: _Shared | None = body.memo.get("shared")
    if got is None:
        key = (body.n_tuple, len(body.hidden), body.terms, body.params())
        got = _SHARED.get(key)
        if got is None:
            got = _SHARED.put(key, _Shared())
        body.memo["shared"] = got
    return got


class _Shared(dict[Hashable, Any]):
    """:func:`shared`'s dict: a cache, pickled empty (a body pickled with a kernel's
    signature does not carry the search's state, some of which cannot be pickled)."""

    def __reduce__(self) -> tuple[type[_Shared], tuple[()]]:
        return (_Shared, ())


_SHARED: Table[Hashable, _Shared] = Table(4096)
""":func:`shared`'s dicts by shape."""


def preimage(body: Body, target: isl.Set, exprs: list[Aff]) -> isl.Set:
    """``{ p in body's space : (exprs evaluated at p) in target }``."""
    params = sorted(body.params() | set(param_names(target)))
    dims = ", ".join(s.name for s in body.dim_syms())
    ma = _multi_aff(
        f"[{', '.join(params)}] -> {{ [{dims}] -> [{', '.join(to_isl(e) for e in exprs)}] }}"
    )
    target = target.reset_tuple_id().align_params(ma.get_space())
    ma = ma.align_params(target.get_space())
    return target.preimage_multi_aff(ma)


@memo(4096)
def _multi_aff(text: str) -> isl.MultiAff:
    """``isl.MultiAff(text)``, parsed once per text."""
    return isl.MultiAff(text)


def axiom_pieces(body: Body, a: int, b: int, ufs: Mapping[str, UF]) -> list[isl.Set]:
    """Disjoint pieces whose union is the axiom relating calls ``a`` and ``b`` of one UF."""
    name, args_a = body.terms[a]
    args_b = body.terms[b][1]
    diffs = [to_isl(x - y) for x, y in zip(args_a, args_b, strict=True)]
    ua, ub = f"__u{a}", f"__u{b}"
    decl = ufs.get(name)
    mono = decl.monotonic if decl is not None else None
    if mono is not None:
        d = diffs[0]
        if mono == "nondecreasing":
            texts = [
                f"{d} < 0 and {ua} <= {ub}",
                f"{d} = 0 and {ua} = {ub}",
                f"{d} > 0 and {ub} <= {ua}",
            ]
        else:  # strictly increasing on integers: f(b) - f(a) >= b - a
            texts = [
                f"{d} < 0 and {ub} - {ua} >= -({d})",
                f"{d} = 0 and {ua} = {ub}",
                f"{d} > 0 and {ua} - {ub} >= {d}",
            ]
    else:
        texts = []
        for c in range(len(diffs)):
            eqs = [f"{diffs[j]} = 0" for j in range(c)]
            texts += [
                " and ".join([*eqs, f"{diffs[c]} < 0"]),
                " and ".join([*eqs, f"{diffs[c]} > 0"]),
            ]
        texts.append(" and ".join([*(f"{x} = 0" for x in diffs), f"{ua} = {ub}"]))
    return [body.space_set(t) for t in texts]


def _pairs(body: Body) -> list[Pair]:
    return [
        (a, b)
        for a, b in itertools.combinations(range(len(body.terms)), 2)
        if body.terms[a][0] == body.terms[b][0]
    ]


def point_env(body: Body, pt: isl.Point) -> dict[Atom, int]:
    """The point's coordinates: each dim's and parameter's symbol to its value."""
    env: dict[Atom, int] = {}
    for k, s in enumerate(body.dim_syms()):
        env[s] = coordinate(pt, DT.set, k)
    for k, name in enumerate(param_names(pt.get_space())):
        env[sym(name)] = coordinate(pt, DT.param, k)
    return env


def violated_pair(
    body: Body, pt: isl.Point, pairs: list[Pair], ufs: Mapping[str, UF]
) -> Pair | None:
    """The first pair of calls whose axiom the sample point violates, if any."""
    env = point_env(body, pt)
    for p in body.params():
        env.setdefault(sym(p), 0)  # a parameter only UF arguments use: any value is a witness
    args = [tuple(evaluate(a, env) for a in t_args) for _, t_args in body.terms]
    vals = [env[sym(f"__u{k}")] for k in range(len(body.terms))]
    for a, b in pairs:
        decl = ufs.get(body.terms[a][0])
        mono = decl.monotonic if decl is not None else None
        if args[a] == args[b]:
            if vals[a] != vals[b]:
                return a, b
            continue
        if mono is None:
            continue
        lo, hi = (a, b) if args[a] < args[b] else (b, a)
        gap = abs(args[a][0] - args[b][0])
        if vals[lo] > vals[hi] or (mono == "increasing" and vals[hi] - vals[lo] < gap):
            return a, b
    return None


def is_empty(
    body: Body,
    ufs: Mapping[str, UF],
    *,
    context: isl.Set | None = None,
    oracle: Oracle | None = None,
) -> bool:
    """True only when no UF interpretation satisfying the declarations makes it non-empty.

    ``context`` (a set in the body's space, e.g. parameter constraints) is intersected up
    front; ``oracle`` supplies further axioms lazily, like the pairs of calls. Without
    either, the verdict is remembered on the (immutable) body per declarations of the UFs it
    calls, as :func:`declared_facts` is.
    """
    if context is None and oracle is None:
        key = ("is_empty", _used_declarations(body, ufs))
        got: bool | None = body.memo.get(key)
        if got is None:
            got = body.memo[key] = _is_empty(body, ufs, None, None)
        return got
    return _is_empty(body, ufs, context, oracle)


def _used_declarations(body: Body, ufs: Mapping[str, UF]) -> tuple[tuple[str, UF], ...]:
    """The declarations of the UFs ``body`` calls, sorted by name (a memo key)."""
    names = {calls.base_name(t[0]) for t in body.terms}
    return tuple(sorted((n, ufs[n]) for n in names if n in ufs))


def layout(body: Body) -> Layout:
    """The columns of ``body``'s points (:mod:`spf.sets.pointeval`), built once per shape."""
    table = shared(body)
    got: Layout | None = table.get("layout")
    if got is None:
        got = table["layout"] = Layout(body)
    return got


def _pair_check(body: Body, pairs: list[Pair], ufs: Mapping[str, UF]) -> PairCheck | None:
    """The compiled pair check of ``body``, built once per shape and declarations; None when
    its arguments are not all integer-affine (then :func:`violated_pair` evaluates them)."""
    key = ("pair_check", _used_declarations(body, ufs))
    table = shared(body)
    got: PairCheck | None = table.get(key)
    if got is None:
        got = table[key] = PairCheck(layout(body), body, pairs, ufs)
    return got if got.compiled else None


def _is_empty(
    body: Body, ufs: Mapping[str, UF], context: isl.Set | None, oracle: Oracle | None
) -> bool:
    base = declared_facts(body, ufs)
    if context is not None:
        base = base.intersect(context.align_params(base.get_space()))
    pairs = _pairs(body)
    models = _witnesses(body, ufs, oracle)
    decided = _decided(base, pairs, oracle, models)
    if decided is not None:
        return decided
    cache: dict[Pair, list[isl.Set]] = {}
    compiled = _pair_check(body, pairs, ufs)
    # pieces still to search, each a set and the axiom piece to add to it when it is taken
    # (a piece left when a model turns up costs nothing); an empty one shows when sampled,
    # most already when the constraints are added (measured: 1441 of ILU(0)'s 1989)
    stack: list[tuple[isl.Set, isl.Set | None, Hashable]] = [(base, None, None)]
    known: dict[Hashable, list[isl.Constraint] | None] = {}  # an axiom piece's constraints
    while stack:
        piece, axiom, key = stack.pop()
        if axiom is not None:
            piece = _constrained(piece, axiom, known, key)
            if piece.plain_is_empty():
                continue
        pt = piece.sample_point()
        if pt.is_void():
            continue
        if compiled is not None:
            bad = compiled.violated_pair(compiled.layout.point(pt))
        else:
            bad = violated_pair(body, pt, pairs, ufs)
        if bad is None:
            extra = oracle(pt) if oracle is not None else None
            if extra is None:
                _remember_model(models, pt)
                return False
            stack.append((piece, extra.align_params(piece.get_space()), None))
            continue
        if bad not in cache:
            key = ("axiom", bad, ufs.get(body.terms[bad[0]][0]))
            table = shared(body)
            if key not in table:
                table[key] = axiom_pieces(body, *bad, ufs)
            cache[bad] = table[key]
        stack.extend((piece, axiom, (bad, j)) for j, axiom in enumerate(cache[bad]))
    return True


_MAX_WITNESSES = 16
"""Models kept per shape, declarations and oracle (the latest found)."""


def _witnesses(body: Body, ufs: Mapping[str, UF], oracle: Oracle | None) -> list[isl.Set] | None:
    """The models found so far (each a one-point set) for ``body``'s shape, the declarations
    of the UFs it calls and the oracle's axioms: each violates no axiom of a pair of calls
    (they depend on the shape and the declarations) and no axiom of the oracle (its
    ``witness_key``). None when the oracle does not name its axioms (no sharing)."""
    if oracle is None:
        which: Hashable = None
    else:
        which = getattr(oracle, "witness_key", None)
        if which is None:
            return None
    key = ("witnesses", _used_declarations(body, ufs), which)
    table = shared(body)
    got: list[isl.Set] | None = table.get(key)
    if got is None:
        got = table[key] = []
    return got


def _decided(
    base: isl.Set, pairs: list[Pair], oracle: Oracle | None, models: list[isl.Set] | None
) -> bool | None:
    """The verdict on ``base`` without a search, or None: with no axiom to add, isl's; not
    empty when it holds one of ``models`` (:func:`_witnesses`)."""
    if not pairs and oracle is None:
        return bool(base.is_empty())
    if models is not None and any(_contains(base, m) for m in models):
        return False
    return None


def _remember_model(models: list[isl.Set] | None, pt: isl.Point) -> None:
    """Keep the model ``pt`` among ``models`` (the latest :data:`_MAX_WITNESSES`)."""
    if models is not None:
        if len(models) >= _MAX_WITNESSES:
            models.pop(0)
        models.append(isl.Set.from_point(pt))


def _contains(base: isl.Set, model: isl.Set) -> bool:
    """Whether the one-point set ``model`` lies in ``base`` (False when their parameters
    differ: a parameter the point does not give is not a point)."""
    try:
        point = model.align_params(base.get_space())
        if point.dim(DT.param) != base.dim(DT.param):
            return False
        return bool(point.is_subset(base.align_params(point.get_space())))
    except isl.Error:
        return False


def _constrained(
    piece: isl.Set,
    axiom: isl.Set,
    known: dict[Hashable, list[isl.Constraint] | None] | None = None,
    key: Hashable = None,
) -> isl.Set:
    """``piece`` restricted to the axiom piece ``axiom`` (one conjunction): its constraints
    added as they are. ``intersect`` would also simplify the result, which on ILU(0)'s
    sets of 30-40 dims cost ~1 ms a time, far more than sampling the unsimplified set
    (measured: the search's isl time 25-30% lower). ``known``: the constraints of the
    axioms met before in this search by ``key`` (an axiom piece is added to many pieces of
    one search, whose spaces are one: aligning and listing them once each saves a third of
    this function's time)."""
    if known is not None and key is not None:
        if key not in known:
            known[key] = _constraints_of(piece, axiom)
        cons = known[key]
    else:
        cons = _constraints_of(piece, axiom)
    if cons is None:
        return piece.intersect(axiom)
    out = piece
    try:
        for c in cons:
            out = out.add_constraint(c)
    except isl.Error:  # spaces that differ beyond their parameters: isl aligns them
        return piece.intersect(axiom)
    return out


def _constraints_of(piece: isl.Set, axiom: isl.Set) -> list[isl.Constraint] | None:
    """The constraints of ``axiom`` in ``piece``'s space, or None when it is not one
    conjunction over the same parameters (then it is intersected)."""
    if len(axiom.get_basic_sets()) != 1:
        return None
    aligned = axiom.align_params(piece.get_space())
    if aligned.dim(DT.param) != piece.dim(DT.param):
        return None
    return list(aligned.get_basic_sets()[0].get_constraints())

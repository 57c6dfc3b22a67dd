"""Facts (``Computation.assume``): trusted, universally quantified constraints over UFs.

A :class:`Fact` is ``forall vars: premise => conclusion``; premise and conclusion are sets
over the tuple ``[vars]`` (UF calls allowed). A fact without variables is a parameter
constraint (``N >= 1``)::

    >>> f = Fact.parse("forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i")
    >>> f.vars, str(f.premise), str(f.conclusion)
    (('i', 'k'), '{[i, k] : k < rowptr(i + 1) && rowptr(i) <= k}', '{[i, k] : col(k) <= i}')

:func:`is_empty_under` decides emptiness using facts lazily, like the functional-consistency
axioms of :mod:`spf.sets.emptiness`: a fact's variables are instantiated by matching its UF
calls against the calls of the set tested (e-matching), and an instance ``not premise or
conclusion`` is added only when the current sample point violates it. An instance whose
conclusion calls a monotonic UF at an argument the set does not call (``diag(c) <
rowptr(c+1)`` in a set without ``rowptr(c+1)``) is carried over to the calls of that UF the
set has, through monotonicity (``c+1 <= b => diag(c) < rowptr(b)``): see :func:`_bridges`.
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import islpy as isl
import numpy as np

from spf.errors import ArgumentError, ParseError, VerifyError
from spf.sets import emptiness
from spf.sets.body import canonical, iset_text, lift_pair
from spf.sets.linear import (
    DT,
    basic_constraints,
    coefficient,
    dnf,
    free_names,
    sym,
    to_isl,
    tsym,
    usym,
)
from spf.sets.memo import Table, memo
from spf.sets.pointeval import LinearSet, Point, Substitution, linear_set
from spf.sets.printer import display_map
from spf.sets.set_like import Set, _SetLike

if TYPE_CHECKING:
    from spf.sets.affine import Aff, Sym
    from spf.sets.body import Body, Term
    from spf.sets.pointeval import Layout
    from spf.sets.uf import UF

if TYPE_CHECKING:
    from spf.sets.affine import Atom

_FORALL = re.compile(r"\s*forall\b")
_MAX_INSTANCES = 4096
"""At most this many instances of all facts are considered for one emptiness test."""


@dataclass(frozen=True, kw_only=True)
class Fact:
    """``forall vars: premise => conclusion`` (immutable, hashable)."""

    text: str
    """The text as the user wrote it."""
    vars: tuple[str, ...]
    """The quantified variables (those written after ``forall`` and free ones used as UF
    arguments), the tuple of ``premise`` and ``conclusion``."""
    premise: Set
    """Where the conclusion must hold (the universe of ``vars`` when none is written)."""
    conclusion: Set
    """What holds there."""

    @property
    def is_parameter_fact(self) -> bool:
        """A constraint on symbolic constants only (no quantified variables, no UF call)."""
        return not self.vars and not self.premise.uf_calls and not self.conclusion.uf_calls

    @functools.cached_property
    def ufs(self) -> frozenset[str]:
        """Names of the UFs the fact calls (computed once: the emptiness search asks often)."""
        calls = (*self.premise.uf_calls, *self.conclusion.uf_calls)
        return frozenset(c.split("(", 1)[0] for c in calls)

    @property
    def params(self) -> frozenset[str]:
        """Symbolic constants the fact uses."""
        return self.premise.params | self.conclusion.params

    def __str__(self) -> str:
        return self.text

    @classmethod
    def parse(
        cls,
        text: str,
        ufs: Mapping[str, UF] | None = None,
        constants: Collection[str] = (),
    ) -> Fact:
        """Parse ``[forall v1, v2:] [premise =>] conclusion`` (set-constraint syntax).

        In a ``forall`` fact, free names used inside UF arguments are quantified too, unless
        they are among ``constants``; other free names are symbolic constants. Bad text
        raises :class:`~spf.errors.ParseError` with a caret.
        """
        if not isinstance(text, str):
            raise ArgumentError(f"an assumption is text, got {type(text).__name__}")
        declared, body_start = _quantifier(text, ufs or {})
        arrow = _arrow(text, body_start)
        if arrow is None:
            parts = [(body_start, len(text))]
        else:
            parts = [(body_start, arrow), (arrow + 2, len(text))]
        for start, end in parts:
            if not text[start:end].strip():
                what = "premise" if len(parts) == 2 and start == body_start else "conclusion"
                raise ParseError(f"assumption: empty {what}", text=text, span=(start, end))
        vs = list(declared)
        sets = [_constraint_set(text, span, vs, ufs) for span in parts]
        implicit = sorted(
            {n for s in sets for n in _uf_argument_names(s)} - set(vs) - set(constants)
        )
        if implicit and declared:
            vs = implicit + vs
            sets = [_constraint_set(text, span, vs, ufs) for span in parts]
        premise = sets[0] if len(sets) == 2 else Set(f"{{[{', '.join(vs)}]}}", ufs or None)
        return cls(text=text, vars=tuple(vs), premise=premise, conclusion=sets[-1])


def _quantifier(text: str, ufs: Mapping[str, UF]) -> tuple[list[str], int]:
    """The variables of a leading ``forall v, w:`` and where the rest starts."""
    m = _FORALL.match(text)
    if m is None:
        return [], 0
    colon = text.find(":", m.end())
    if colon < 0:
        raise ParseError(
            "assumption: expected ':' after the variables of 'forall'",
            text=text,
            span=(len(text), len(text)),
        )
    out: list[str] = []
    pos = m.end()
    for part in text[m.end() : colon].split(","):
        name = part.strip()
        start = pos + (len(part) - len(part.lstrip()))
        span = (start, start + max(1, len(name)))
        if not name.isidentifier() or name.startswith("__"):
            raise ParseError("assumption: expected a variable name", text=text, span=span)
        if name in ufs:
            raise ParseError(
                f"assumption: {name!r} is a UF, not a variable name", text=text, span=span
            )
        if name in out:
            raise ParseError(f"assumption: variable {name!r} twice", text=text, span=span)
        out.append(name)
        pos += len(part) + 1
    return out, colon + 1


def _arrow(text: str, start: int) -> int | None:
    """Offset of the top-level ``=>`` (not part of ``<=``, ``>=``, ``==``)."""
    found: list[int] = []
    for m in re.finditer("=>", text[start:]):
        k = start + m.start()
        if k > 0 and text[k - 1] in "<>=!":
            continue
        found.append(k)
    if len(found) > 1:
        raise ParseError(
            "assumption: more than one '=>'; write 'premise => conclusion'",
            text=text,
            span=(found[1], found[1] + 2),
        )
    return found[0] if found else None


def _constraint_set(
    text: str, span: tuple[int, int], vs: Sequence[str], ufs: Mapping[str, UF] | None
) -> Set:
    prefix = f"{{[{', '.join(vs)}] : "
    inner = text[span[0] : span[1]]
    try:
        found = Set(prefix + inner + "}")
        if not ufs:
            return found
        decls = dict(ufs)
        for call in found.uf_calls:  # UFs not declared yet are inferred, as statements do
            name = call.split("(", 1)[0]
            if name not in decls:
                decls[name] = found.ufs.get(name) or _inferred(found, name)
        return Set(prefix + inner + "}", decls)
    except ParseError as err:
        where = span[0]
        if err.span is not None:
            where = span[0] + min(max(err.span[0] - len(prefix), 0), len(inner))
        message = err.message.split("\n", 1)[0]
        raise ParseError(f"assumption: {message}", text=text, span=(where, where + 1)) from None


def _inferred(s: Set, name: str) -> UF:
    return s.inferred_ufs[name]


def _uf_argument_names(s: Set) -> set[str]:
    """Parameters used inside UF call arguments (they are quantified, not constants)."""
    body = _body(s)
    return {n for n in free_names(a for _, args in body.terms for a in args) if "__" not in n}


def _body(s: _SetLike) -> Body:
    return s._body


def parameter_context(facts: Sequence[Fact]) -> isl.Set | None:
    """The parameter values the parameter facts among ``facts`` allow (``not premise or
    conclusion`` of each, intersected), as an isl parameter set; None when there is none.

    >>> print(parameter_context([Fact.parse("N >= 1")]))
    [N] -> {  : N > 0 }
    """
    context: isl.Set | None = None
    for f in facts:
        if not f.is_parameter_fact:
            continue
        holds = _body(f.conclusion).iset.params()
        premise = _body(f.premise).iset.params()
        allowed = premise.complement().union(holds).coalesce()
        context = allowed if context is None else context.intersect(allowed)
    return context


# ----------------------------------------------------------------------------- run-time checks
def check_domain(fact: Fact, ufs: Mapping[str, UF]) -> Set:
    """The premise where every UF call of the fact is inside its UF's declared domain (the
    points a run-time check visits: elsewhere the index arrays have no values); remembered
    by the fact and the declarations (a cold Gauss-Seidel wavefront compile asks 159 times,
    116 of them again: the fact plans, the prover and the check loops of the executor and
    its inspector stages each ask for the same facts' domains)."""
    key = (id(fact), tuple(sorted(ufs.items())))
    found = _CHECK_DOMAINS.get(key)
    if found is None or found[0] is not fact:  # the fact itself: equal facts may differ
        found = _CHECK_DOMAINS.put(key, (fact, _check_domain(fact, ufs)))  # in their names
    return found[1]


_CHECK_DOMAINS: Table[Hashable, tuple[Fact, Set]] = Table(1024)


def _check_domain(fact: Fact, ufs: Mapping[str, UF]) -> Set:
    premise, _ = lift_pair(_body(fact.premise), _body(fact.conclusion))
    iset = premise.iset
    for name, args in premise.terms:
        decl = ufs.get(name)
        if decl is not None and decl.domain is not None:
            iset = iset.intersect(emptiness.preimage(premise, decl.domain.body_iset(), list(args)))
    body = canonical(premise.with_iset(iset))
    return Set._make(body, {**fact.premise.ufs, **fact.conclusion.ufs, **ufs})


def condition_terms(s: Set) -> list[list[tuple[bool, Aff]]]:
    """``s``'s constraints as conjunctions (one per disjunct) of ``(is_equality, e)`` meaning
    ``e = 0`` / ``e >= 0``, over the tuple names, parameters and UF calls
    (:class:`~spf.sets.affine.Aff`). ``SpfError`` when ``s`` has existential variables.
    Computed once per body (the fact plans and the prover of a cold Gauss-Seidel wavefront
    compile ask 351 times for 37 bodies' terms)."""
    body = _body(s)
    if body.hidden:
        raise VerifyError(f"{s}: a condition with existential variables cannot be evaluated")
    got: tuple[tuple[tuple[bool, Aff], ...], ...] | None = body.memo.get("condition_terms")
    if got is None:
        show = display_map(body)
        got = body.memo["condition_terms"] = tuple(
            tuple((is_eq, e.xreplace(show)) for is_eq, e in conj)
            for conj in dnf(body.iset, body.dim_syms())
        )
    return [list(conj) for conj in got]


def unbounded_var(s: Set) -> str | None:
    """A tuple variable of ``s`` without a lower or an upper bound (None: all bounded)."""
    body = _body(s)
    iset = body.iset
    if iset.is_empty():
        return None
    for k, name in enumerate(body.names):
        if not (iset.dim_has_lower_bound(DT.set, k) and iset.dim_has_upper_bound(DT.set, k)):
            return name or f"position {k}"
    return None


# ----------------------------------------------------------------------------- emptiness
def is_empty_under(s: _SetLike, facts: Sequence[Fact]) -> bool:
    """``s.is_empty()`` that may also use ``facts`` (trusted): True only when provable.

    >>> tri = Fact.parse("forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i")
    >>> s = Set("{[i, k] : 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && col(k) > i}")
    >>> s.is_empty(), is_empty_under(s, [tri])
    (False, True)
    """
    body = _body(s)
    ufs = s.ufs
    key = (  # not the names: equal sets under other names (two statement pairs) share it
        body.n_tuple,
        len(body.hidden),
        body.terms,
        iset_text(body),
        emptiness._used_declarations(body, ufs),
        tuple((f.text, f.vars) for f in facts),
    )
    found = _VERDICTS.get(key)
    if found is None:
        found = _VERDICTS.put(key, _is_empty_under(body, ufs, facts))
    return found


_VERDICTS: Table[object, bool] = Table(16384)
""":func:`is_empty_under`'s verdicts by the set's canonical form but for its names (its
widths, call table and isl set, whose dims are named by position), the declarations of the
UFs it calls and the facts (text and quantified variables): the analysis asks the same
question for many statement pairs, schedule positions and computations (a copy of one, its
executor, its inspector)."""


def _is_empty_under(body: Body, ufs: Mapping[str, UF], facts: Sequence[Fact]) -> bool:
    context: isl.Set | None = None
    quantified: list[Fact] = []
    for f in facts:
        if f.is_parameter_fact:
            ctx = emptiness.preimage(body, _body(f.conclusion).iset, [])
            context = ctx if context is None else context.intersect(ctx)
        else:
            quantified.append(f)
    oracle = _Instances(body, quantified, ufs) if quantified else None
    return emptiness.is_empty(body, ufs, context=context, oracle=oracle)


class _Instances:
    """The instances of facts on one body's calls, generated lazily; the oracle of the
    search. At a point each instance is first tested numerically (:mod:`spf.sets.pointeval`:
    its premise and conclusion at the fact's variables and UF values as rows over the
    body's dims); only an instance the point may violate is built as an isl set (once) and
    tested by isl, which decides. The instances depend on the body's shape alone (not its
    constraints): every body of one shape shares them (:func:`_shared_candidates`), as
    generated and as built."""

    def __init__(self, body: Body, facts: Sequence[Fact], ufs: Mapping[str, UF]) -> None:
        self.body = body
        self.layout = emptiness.layout(body)
        self.candidates = _shared_candidates(body, tuple(facts), ufs)
        self.witness_key = _candidates_key(tuple(facts), ufs)
        """What the instances depend on besides the body's shape: a point that violates
        none of them violates none for any body of that shape (models are shared,
        :func:`spf.sets.emptiness._witnesses`)."""

    def __call__(self, point: isl.Point) -> isl.Set | None:
        """An instance the point violates (a set to intersect with), or None."""
        values = self.layout.point(point)
        here: isl.Set | None = None
        for candidate in self.candidates:
            if candidate.satisfied(values):
                continue
            inst = candidate.instance()
            here = isl.Set.from_point(point) if here is None else here
            if not _contains(inst, here):
                return inst
        return None


def _shared_candidates(body: Body, facts: tuple[Fact, ...], ufs: Mapping[str, UF]) -> _Candidates:
    """The instances of ``facts`` on the calls of ``body``'s shape, shared by its bodies."""
    key = _candidates_key(facts, ufs)
    table = emptiness.shared(body)
    got: _Candidates | None = table.get(key)
    if got is None or got.busy:  # busy: a search inside generating them; it gets its own
        fresh = _Candidates(_generate(body, facts, ufs))
        if got is None:
            table[key] = fresh
        got = fresh
    return got


def _candidates_key(facts: tuple[Fact, ...], ufs: Mapping[str, UF]) -> Hashable:
    """The key of the instances of ``facts`` under ``ufs`` in a shape's table."""
    return ("instances", tuple((f.text, f.vars) for f in facts), tuple(sorted(ufs.items())))


def _generate(body: Body, facts: Sequence[Fact], ufs: Mapping[str, UF]) -> Iterator[_Candidate]:
    """The instances of ``facts`` on ``body``'s calls: matched ones, then the bridges."""
    yield from _matched(body, facts)
    for b in _bridges(body, facts, ufs):
        yield _Candidate(b.build, b.satisfied)


def _matched(body: Body, facts: Sequence[Fact]) -> Iterator[_Candidate]:
    """The instances of ``facts`` whose every call is one of ``body``'s (e-matching), at most
    ``_MAX_INSTANCES``."""
    layout = emptiness.layout(body)
    count = 0
    for f in facts:
        for premise, conclusion in _pieces(f):
            if premise.hidden:
                continue  # existential variables in a fact: not instantiated
            for exprs in _ematches(premise, body.terms):
                count += 1
                if count > _MAX_INSTANCES:
                    return
                match = _Match(layout, premise, conclusion, exprs)
                build = functools.partial(_instance, body, premise, conclusion, exprs)
                yield _Candidate(build, match.satisfied)


class _Candidates:
    """Instances generated lazily and kept: iterating yields those generated so far, then
    generates the rest (each once, whoever iterates; one thread at a time generates: two
    threads analysing at once, e.g. inspecting one kernel, share the shape's table)."""

    def __init__(self, pending: Iterator[_Candidate]) -> None:
        self.pending = pending
        self.seen: list[_Candidate] = []
        self.busy = False
        self.lock = threading.Lock()

    def __iter__(self) -> Iterator[_Candidate]:
        k = 0
        while True:
            if k < len(self.seen):
                yield self.seen[k]
                k += 1
                continue
            with self.lock:
                if k < len(self.seen):  # another thread generated it meanwhile
                    continue
                self.busy = True
                try:
                    candidate = next(self.pending, None)
                finally:
                    self.busy = False
                if candidate is None:
                    return
                self.seen.append(candidate)


class _Candidate:
    """One instance: a numeric test at a point (True only when the point satisfies it)
    and its isl set, built the first time a point may violate it."""

    def __init__(self, build: Callable[[], isl.Set], test: Callable[[Point], bool]) -> None:
        self._build = build
        self.satisfied = test
        self._set: isl.Set | None = None

    def instance(self) -> isl.Set:
        if self._set is None:
            self._set = self._build()
        return self._set


class _Match:
    """The numeric test of one matched instance ``not premise or conclusion``."""

    def __init__(self, layout: Layout, premise: Body, conclusion: Body, exprs: list[Aff]) -> None:
        self.sub = Substitution(layout, exprs)
        self.premise = linear_set(premise)
        self.conclusion = linear_set(conclusion)

    def satisfied(self, point: Point) -> bool:
        if not self.sub.compiled or self.premise is None or self.conclusion is None:
            return False
        return (
            self.sub.holds(self.premise, point) is False
            or self.sub.holds(self.conclusion, point) is True
        )


def _instance(body: Body, premise: Body, conclusion: Body, exprs: list[Aff]) -> isl.Set:
    """``not premise or conclusion`` of one instance, in ``body``'s space."""
    p = emptiness.preimage(body, premise.iset, exprs)
    c = emptiness.preimage(body, conclusion.iset, exprs)
    return p.complement().union(c).coalesce()


# ----------------------------------------------------------------------------- bridges
def _bridges(body: Body, facts: Sequence[Fact], ufs: Mapping[str, UF]) -> Iterator[_Bridge]:
    """Instances of facts whose conclusion calls a monotonic UF ``f`` at an argument ``a``
    the body does not call, carried over to each call ``f(b)`` the body has.

    ``forall i: diag(i) < rowptr(i+1)`` at the body's ``diag(c)`` names ``rowptr(c+1)``,
    which the body lacks; as ``rowptr`` is nondecreasing, ``rowptr(c+1) <= rowptr(b)`` when
    ``c+1 <= b``, so ``c+1 <= b => diag(c) < rowptr(b)`` for each call ``rowptr(b)``
    (PLDI'19's co-monotonicity, derived). In general a conclusion constraint ``g + m·f(a)
    >= 0`` with ``m > 0`` (``f(a)`` bounds from below) holds for ``f(b)`` when ``a <= b``,
    with ``m < 0`` when ``b <= a``; the instance is ``not premise or a not in f's domain or
    the order fails or the carried conclusion``, true in every model. Only pieces whose
    premise does not call ``f(a)`` are used; at most ``_MAX_INSTANCES`` in all.
    """
    monotonic = {n for n, d in ufs.items() if d.monotonic is not None and d.arity == 1}
    if not monotonic:
        return
    count = 0
    for f in facts:
        if not f.ufs & monotonic:
            continue
        for premise, conclusion in _pieces(f):
            if premise.hidden or conclusion.hidden:
                continue
            for spec in _bridge_specs(premise, conclusion, body.terms, frozenset(monotonic)):
                count += 1
                if count > _MAX_INSTANCES:
                    return
                yield _Bridge(body, premise, conclusion, spec, ufs[premise.terms[spec.m][0]])


@dataclass(frozen=True)
class _BridgeSpec:
    """What one bridge says, over the body's dims (see :class:`_Bridge`)."""

    m: int
    """The fact's call missing from the body."""
    a: Aff
    """Its argument."""
    b: Aff
    """The argument of the body's call it is carried over to."""
    exprs: tuple[Aff, ...]
    """The fact's dims (variables, then UF values with call ``m`` the body's call)."""
    side: Aff
    """The conclusion constraint (``>= 0``) over the fact's dims."""
    coeff: int
    """The coefficient of the missing call's value in ``side``."""
    carried: Aff
    """``side`` over the body's dims."""


@memo(4096)
def _bridge_specs(
    premise: Body, conclusion: Body, calls: tuple[Term, ...], monotonic: frozenset[str]
) -> tuple[_BridgeSpec, ...]:
    """The bridges of one fact piece on a call table (remembered: the emptiness tests of
    one analysis share their call tables)."""
    out: list[_BridgeSpec] = []
    for m, sub in _one_unmatched(premise, calls, monotonic):
        out += _piece_bridges(premise, conclusion, m, sub, calls)
    return tuple(out)


def _piece_bridges(
    premise: Body,
    conclusion: Body,
    m: int,
    sub: dict[Atom, Aff],
    calls: tuple[Term, ...],
) -> Iterator[_BridgeSpec]:
    """The bridges of one fact piece whose call ``m`` is missing from ``calls``."""
    name = premise.terms[m][0]
    if premise.iset.involves_dims(DT.set, premise.n_tuple + m, 1):
        return  # the premise itself needs the missing call
    constraint = _single_constraint(conclusion)
    a = premise.terms[m][1][0].xreplace(_rename(premise)).xreplace(sub)
    nvars = premise.n_tuple
    for is_eq, e in constraint or []:
        coeff = int(coefficient(e, usym(m)))
        if coeff == 0:
            continue
        # an equality bounds f(a) from both sides: one bridge per side
        sides = [(e, coeff), (-e, -coeff)] if is_eq else [(e, coeff)]
        for (side, c), k in itertools.product(sides, range(len(calls))):
            if calls[k][0] != name:
                continue
            exprs = [sub[_fvar(j)] for j in range(nvars)]
            exprs += [usym(k).aff() if j == m else sub[_fval(j)] for j in range(len(premise.terms))]
            dims: dict[Atom, Aff] = dict(zip(premise.dim_syms(), exprs, strict=True))
            carried = side.xreplace(dims)
            yield _BridgeSpec(
                m=m, a=a, b=calls[k][1][0], exprs=tuple(exprs), side=side, coeff=c, carried=carried
            )


def _single_constraint(conclusion: Body) -> list[tuple[bool, Aff]] | None:
    """The conclusion's constraints when it is one conjunction (None otherwise; computed
    once per conclusion)."""
    got: tuple[list[tuple[bool, Aff]] | None] | None = conclusion.memo.get("single")
    if got is None:
        bsets = conclusion.iset.get_basic_sets()
        found = basic_constraints(bsets[0], conclusion.dim_syms()) if len(bsets) == 1 else None
        got = conclusion.memo["single"] = (found,)
    return got[0]


class _Bridge:
    """One instance of :func:`_bridges`: the fact's missing call ``m`` carried over to the
    body's call ``k`` of the same UF; checked on a point cheaply before it is built."""

    def __init__(
        self, body: Body, premise: Body, conclusion: Body, spec: _BridgeSpec, decl: UF
    ) -> None:
        self.body, self.premise, self.conclusion, self.decl = body, premise, conclusion, decl
        self.a, self.b, self.exprs = spec.a, spec.b, list(spec.exprs)
        self.side, self.coeff, self.carried = spec.side, spec.coeff, spec.carried
        self._compiled: (
            tuple[tuple[Substitution, np.ndarray, LinearSet, LinearSet | None, Substitution] | None]
            | None
        ) = None

    def satisfied(self, point: Point) -> bool:
        """True when ``point`` (of the body's :class:`~spf.sets.pointeval.Layout`)
        satisfies the instance: by its order, its conclusion, its premise failing or its
        argument outside the UF's domain (False: it may violate it)."""
        test = self._test()
        if test is None:
            return False
        sub, rows, premise, domain, at = test
        a, b, carried = (int(v) for v in rows @ point.values.astype(object))
        if ((a > b) if self.coeff > 0 else (b > a)) or carried >= 0:
            return True
        if sub.holds(premise, point) is False:
            return True
        return domain is not None and at.holds(domain, point) is False

    def _test(
        self,
    ) -> tuple[Substitution, np.ndarray, LinearSet, LinearSet | None, Substitution] | None:
        """What :meth:`satisfied` evaluates, compiled once (None: not integer-affine)."""
        if self._compiled is None:
            layout = emptiness.layout(self.body)
            sub, at = Substitution(layout, self.exprs), Substitution(layout, [self.a])
            rows = [layout.row(e) for e in (self.a, self.b, self.carried)]
            premise = linear_set(self.premise)
            decl_domain = self.decl.domain
            domain = None
            if decl_domain is not None and _body(decl_domain).iset.dim(DT.set) == 1:
                domain = linear_set(_body(decl_domain))  # else calls in it: isl decides
            ok = sub.compiled and at.compiled and premise is not None
            ok = ok and all(r is not None for r in rows)
            ok = ok and (decl_domain is None or domain is not None)
            if not ok or premise is None:
                self._compiled = (None,)
            else:
                matrix = np.array(rows, dtype=object).reshape(3, layout.width)
                self._compiled = ((sub, matrix, premise, domain, at),)
        return self._compiled[0]

    def build(self) -> isl.Set:
        """``not premise or a not in f's domain or the order fails or the conclusion``."""
        body = self.body
        parts = [emptiness.preimage(body, self.premise.iset, self.exprs).complement()]
        a, b = to_isl(self.a), to_isl(self.b)
        parts.append(body.space_set(f"{a} > {b}" if self.coeff > 0 else f"{b} > {a}"))
        if self.decl.domain is not None:
            parts.append(
                emptiness.preimage(body, self.decl.domain.body_iset(), [self.a]).complement()
            )
        held = self.conclusion.space_set(f"{to_isl(self.side)} >= 0")
        parts.append(emptiness.preimage(body, held, self.exprs))
        out = parts[0]
        for part in parts[1:]:
            out = out.union(part.align_params(out.get_space()))
        return out.coalesce()


def _rename(fact: Body) -> dict[Atom, Aff]:
    rename: dict[Atom, Aff] = {tsym(j): _fvar(j).aff() for j in range(fact.n_tuple)}
    rename |= {usym(m): _fval(m).aff() for m in range(len(fact.terms))}
    return rename


@memo(4096)
def _one_unmatched(
    fact: Body, calls: tuple[Term, ...], monotonic: frozenset[str]
) -> tuple[tuple[int, dict[Atom, Aff]], ...]:
    """``(m, sub)``: matches of all of ``fact``'s calls but call ``m`` (of a monotonic UF,
    its argument then fixed) against ``calls``, every variable fixed by ``sub``
    (remembered: the emptiness tests of one dependence share their calls)."""
    return tuple(_one_unmatched_walk(fact, calls, monotonic))


def _one_unmatched_walk(
    fact: Body, calls: tuple[Term, ...], monotonic: frozenset[str]
) -> Iterator[tuple[int, dict[Atom, Aff]]]:
    rename = _rename(fact)
    terms = [(name, [a.xreplace(rename) for a in args]) for name, args in fact.terms]
    nvars = fact.n_tuple

    def walk(
        j: int, sub: dict[Atom, Aff], left: int | None
    ) -> Iterator[tuple[int, dict[Atom, Aff]]]:
        if j == len(terms):
            if left is None or len(terms) < 2:
                return
            if any(sub.get(_fvar(v)) is None for v in range(nvars)):
                return
            arg = terms[left][1][0].xreplace(sub)
            if not any(_is_fact_sym(x) for x in arg.symbols()):
                yield left, sub
            return
        name, args = terms[j]
        for k, (bname, bargs) in enumerate(calls):
            if bname == name and len(bargs) == len(args):
                new = _unify(args, bargs, sub)
                if new is not None:
                    new[_fval(j)] = usym(k).aff()
                    yield from walk(j + 1, new, left)
        if left is None and name in monotonic and len(args) == 1:
            yield from walk(j + 1, sub, j)

    yield from walk(0, {}, None)


@functools.cache
def _pieces(f: Fact) -> list[tuple[Body, Body]]:
    """``(premise, conclusion)`` over one term table; a conclusion that is a conjunction is
    split into one piece per constraint, so that an instance needs only the calls of the
    premise and of that constraint (``rowptr(i) <= diag(i) < rowptr(i+1)`` gives one piece
    without ``rowptr(i+1)``)."""
    premise, conclusion = _body(f.premise), _body(f.conclusion)
    bsets = conclusion.iset.get_basic_sets()
    if len(bsets) != 1 or conclusion.hidden:
        return [lift_pair(premise, conclusion)]
    cons = basic_constraints(bsets[0], conclusion.dim_syms())
    if len(cons) < 2:
        return [lift_pair(premise, conclusion)]
    out = []
    for is_eq, e in cons:
        iset = conclusion.space_set(f"{to_isl(e)} {'=' if is_eq else '>='} 0")
        out.append(lift_pair(premise, canonical(conclusion.with_iset(iset))))
    return out


def _contains(inst: isl.Set, here: isl.Set) -> bool:
    a, b = here.align_params(inst.get_space()), inst.align_params(here.get_space())
    return bool(a.is_subset(b))


@memo(4096)
def _ematches(fact: Body, calls: tuple[Term, ...]) -> tuple[list[Aff], ...]:
    """:func:`_ematch`'s matches, at most ``_MAX_INSTANCES`` (remembered per call table)."""
    return tuple(itertools.islice(_ematch(fact, calls), _MAX_INSTANCES + 1))


def _ematch(fact: Body, calls: tuple[Term, ...]) -> Iterator[list[Aff]]:
    """Each way to map the fact's dims (vars, then UF values) to expressions over ``body``'s
    dims such that every UF call of the fact is a call of ``body``."""
    nvars = fact.n_tuple
    rename: dict[Atom, Aff] = {tsym(j): _fvar(j).aff() for j in range(nvars)}
    rename |= {usym(m): _fval(m).aff() for m in range(len(fact.terms))}
    terms = [(name, [a.xreplace(rename) for a in args]) for name, args in fact.terms]

    def walk(m: int, sub: dict[Atom, Aff]) -> Iterator[dict[Atom, Aff]]:
        if m == len(terms):
            yield sub
            return
        name, args = terms[m]
        for k, (bname, bargs) in enumerate(calls):
            if bname != name or len(bargs) != len(args):
                continue
            new = _unify(args, bargs, sub)
            if new is not None:
                new[_fval(m)] = usym(k).aff()
                yield from walk(m + 1, new)

    for sub in walk(0, {}):
        exprs = [sub.get(_fvar(j)) for j in range(nvars)]
        if any(e is None for e in exprs):
            continue  # a variable no UF argument determines
        yield [*(e for e in exprs if e is not None), *(sub[_fval(m)] for m in range(len(terms)))]


def _fvar(j: int) -> Sym:
    return sym(f"__fv{j}")


def _fval(m: int) -> Sym:
    return sym(f"__fu{m}")


def _unify(
    args: Sequence[Aff], bargs: Sequence[Aff], sub: dict[Atom, Aff]
) -> dict[Atom, Aff] | None:
    """``sub`` extended so that each fact argument equals the body's (None: impossible)."""
    new = dict(sub)
    for a, b in zip(args, bargs, strict=True):
        a = a.xreplace(new)
        unknown = sorted({s.name for s in a.symbols() if _is_fact_sym(s)})
        if not unknown:
            if a != b:
                return None
            continue
        if len(unknown) > 1 or unknown[0].startswith("__fu"):
            return None
        v = sym(unknown[0])
        coeff = coefficient(a, v)
        if coeff not in (1, -1):
            return None
        new[v] = (b - (a - v * coeff)) / coeff
    return new


def _is_fact_sym(s: Sym) -> bool:
    return str(s.name).startswith(("__fv", "__fu"))


__all__ = ["Fact", "is_empty_under"]

"""How a kernel verifies each fact at run time, at what cost (API.md §16, docs/backends/c.md).

A fact ``forall vars: premise => conclusion`` is checked on the points of its *check domain*
(the premise where every UF call it makes is inside the UF's declared domain,
:func:`~spf.sets.facts.check_domain`). Three analyses decide how:

* :func:`adjacent_form`: an ordering over pairs, ``k1 < k2 => col(k1) < col(k2)`` inside one
  row, holds on every pair exactly when it holds on every pair of neighbours ``(k, k + 1)``,
  provided the conclusion is transitive (each of its constraints reads ``g(k2) - g(k1) >= c``
  with ``c >= 0``, or ``g(k2) = g(k1)``) and every pair of the premise is joined by a chain of
  neighbouring pairs of the premise. Both are proved here (the chain with the set algebra),
  and the fact is then checked as ``forall i, k1: <premise at (k1, k1 + 1)> => <conclusion at
  (k1, k1 + 1)>``: linear instead of quadratic in the row length.
* :func:`is_linear`: a check visits no more points than the entries of some index array it
  reads (the point determines the argument of one of its UF calls), so it costs about as
  much as reading that array; otherwise (two free positions in one row, a pair of rows ...)
  it is superlinear, and a kernel verifies it once per content of the arrays it reads.
* :func:`~spf.analysis.injective.injective_form`: a UF one-to-one over an interval
  (``0 <= t1 < t2 < N => perm(t1) != perm(t2)``), a fact over pairs, is checked in one pass
  marking the values seen (:attr:`FactPlan.injective`): linear, not quadratic.
* :func:`in_loop_checks`: a fact whose every point is an instance of some statement of the
  kernel (through a renaming of its variables to the statement's) is checked where those
  statements run, on the index values the loops load anyway (:mod:`spf.codegen.arg_checks`
  prints the checks).

Conditions are conjunctions of ``(is_equality, e)`` meaning ``e = 0`` / ``e >= 0`` over
symbols (variables, parameters) and UF calls (:class:`~spf.sets.affine.Aff`), as
:func:`~spf.sets.facts.condition_terms` gives them.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from spf.analysis.injective import Injective, injective_form
from spf.errors import SpfError
from spf.sets import Set, affine
from spf.sets.affine import Aff, Atom, Call, Sym
from spf.sets.calls import call_text
from spf.sets.facts import Fact, check_domain, condition_terms, is_empty_under
from spf.sets.linear import coefficient, sym
from spf.sets.memo import Table

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.sets import UF

Terms = tuple[tuple[bool, "Aff"], ...]
"""A conjunction: ``(True, e)`` is ``e = 0``, ``(False, e)`` is ``e >= 0``."""


# ------------------------------------------------------------------------------- conditions
def conjunction(s: Set) -> Terms | None:
    """``s``'s constraints as one conjunction (None: several disjuncts or hidden variables)."""
    try:
        disjuncts = condition_terms(s)
    except SpfError:
        return None
    if len(disjuncts) != 1:
        return None
    return tuple(disjuncts[0])


def set_text(names: Sequence[str], terms: Terms) -> str:
    """The set ``{[names] : terms}`` in the set syntax."""
    parts = [_term_text(t) for t in terms]
    head = f"{{[{', '.join(names)}]"
    return f"{head} : {' && '.join(parts)}}}" if parts else f"{head}}}"


def _term_text(term: tuple[bool, Aff]) -> str:
    """One constraint as text (remembered: the sets of one analysis share most of their
    constraints: :func:`is_linear` prints the same pair of copies once per
    variable)."""
    got = _TERM_TEXT.get(term)
    if got is None:
        eq, e = term
        got = _TERM_TEXT.put(term, f"{_affine_text(e)} {'=' if eq else '>='} 0")
    return got


def _affine_text(e: Aff) -> str:
    """``e`` (a sum of integer multiples of names and UF calls, the terms' form) as text the
    set syntax reads, the constant first. Parentheses only where an operand is not a name,
    an integer or a call (``-1 + N + -i``, not ``(-1) + (N) + (-1 * (i))``): the parser's
    time grows with the tokens, and the sets of a plan are long. A floor or a rational
    coefficient is printed whole, in parentheses."""
    parts = [str(int(e.const))] if e.const or not e.coeffs else []
    if e.const.denominator != 1:
        parts = [f"({e.const})"]
    for a, c in e.ordered():
        factor = _operand_text(a)
        if c.denominator != 1:
            parts.append(f"({Aff({a: c}, Fraction(0))})")
        elif c == 1:
            parts.append(factor)
        else:
            parts.append(f"-{factor}" if c == -1 else f"{int(c)}*{factor}")
    return " + ".join(parts)


def _operand_text(a: Atom) -> str:
    if isinstance(a, Sym):
        return a.name
    if isinstance(a, Call):
        return call_text(a, _affine_text)
    return f"({a})"


_TERM_TEXT: Table[tuple[bool, Aff], str] = Table(16384)


def as_set(names: Sequence[str], terms: Terms, ufs: Mapping[str, UF]) -> Set:
    """The set ``{[names] : terms}`` under ``ufs`` (remembered by value: the plans of a
    wavefront's executor and inspector stages build the same sets)."""
    key = (tuple(names), terms, tuple(sorted(ufs.items())))
    got = _AS_SET.get(key)
    if got is None:
        got = _AS_SET.put(key, Set(set_text(names, terms), dict(ufs)))
    return got


_AS_SET: Table[Hashable, Set] = Table(4096)


def rename(terms: Terms, mapping: Mapping[str, Aff]) -> Terms:
    """``terms`` with the variables of ``mapping`` replaced (inside UF arguments too)."""
    subs: dict[Sym, Aff] = {_s(k): v for k, v in mapping.items()}
    out = []
    for eq, e in terms:
        e2 = _replaced(e, subs)
        if e2.is_constant():  # a constant constraint: true ones vanish
            if (e2.const == 0) if eq else (e2.const >= 0):
                continue
            return ((False, affine.const(-1)),)
        out.append((eq, e2))
    return tuple(out)


def _replaced(e: Aff, subs: Mapping[Sym, Aff]) -> Aff:
    """``e`` with ``subs`` replaced; ``e`` itself when it has none of them (remembered: most
    terms keep their variables)."""
    used = tuple(sorted({(s.name, subs[s]) for s in e.symbols() if s in subs}, key=_first))
    if not used:
        return e
    key = (e, used)
    got = _REPLACED.get(key)
    if got is None:
        got = _REPLACED.put(key, e.xreplace(subs))
    return got


_REPLACED: Table[tuple[Aff, tuple[tuple[str, Aff], ...]], Aff] = Table(16384)
""":func:`_replaced`'s results by the term and the replacements of its own variables: the
candidate renamings of a fact tried for each statement (every permutation of its
iterators) replace the same variables of the same terms again and again."""


def _args(call: Aff) -> tuple[Aff, ...]:
    """The arguments of a UF call (a tuple-valued UF's component last)."""
    a = call.as_atom()
    assert isinstance(a, Call)
    return a.args


def _first(item: tuple[str, Aff]) -> str:
    return item[0]


def _s(name: str) -> Sym:
    """The symbol of variable ``name`` as the set algebra writes it (an integer)."""
    return sym(name)


def _symbols(e: Aff) -> set[str]:
    return set(e.free_names())


def fresh(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}{k}", k + 1
    return name


def uf_calls(terms: Terms) -> list[Aff]:
    """The UF calls in ``terms`` (innermost ones included), each once, in a stable order."""
    found: dict[str, Aff] = {}
    for _, e in terms:
        for f in e.calls():
            found.setdefault(str(f), f.aff())
    return [found[k] for k in sorted(found)]


# -------------------------------------------------------------------------- adjacent pairs
@dataclass(frozen=True)
class Adjacent:
    """An ordering over pairs checked on neighbours: ``fact`` checks what ``original`` says
    (its variables are ``original``'s without ``second``, which is ``first + 1``)."""

    original: Fact
    fact: Fact
    first: str
    second: str


def adjacent_form(fact: Fact, ufs: Mapping[str, UF], constants: Sequence[str]) -> Adjacent | None:
    """The fact on neighbouring pairs that is equivalent to ``fact`` (module docstring), or
    None when ``fact`` is not an ordering over pairs this reduction provably covers."""
    concl = conjunction(fact.conclusion)
    premise = conjunction(fact.premise)
    if concl is None or premise is None or len(fact.vars) < 2:
        return None
    domain = check_domain(fact, ufs)
    terms = conjunction(domain)
    if terms is None:
        return None
    names = list(fact.vars)
    for a, b in itertools.permutations(names, 2):
        if not _transitive(concl, a, b):
            continue
        ordered = as_set(names, ((False, _s(b) - _s(a) - 1),), ufs)
        if not domain.is_subset(ordered):
            continue
        if not _chained(names, terms, a, b, ufs):
            continue
        shift = {b: _s(a) + 1}
        kept = [v for v in names if v != b]
        text = _fact_text(kept, rename(premise, shift), rename(concl, shift))
        if text is None:
            continue
        return Adjacent(fact, Fact.parse(text, ufs, constants), a, b)
    return None


def _transitive(concl: Terms, a: str, b: str) -> bool:
    """Every constraint is ``g(b) - g(a) >= c`` (``c >= 0``) or ``g(b) - g(a) = 0`` for an
    additive ``g`` (``g(a, b) + g(b, m) = g(a, m)``), or does not involve ``a`` nor ``b``; and
    at least one relates the two."""
    sa, sb = _s(a), _s(b)
    m = _s(fresh("m", {a, b} | {n for _, e in concl for n in _symbols(e)}))
    relating = False
    for eq, e in concl:
        if not e.has(sa) and not e.has(sb):
            continue
        swapped = e.xreplace({sa: sb.aff(), sb: sa.aff()})
        c = -(e + swapped) / 2
        if not c.is_constant() or (c.const != 0 if eq else c.const < 0):
            return False
        g = e + c
        chain = g + g.xreplace({sa: sb.aff(), sb: m.aff()}) - g.xreplace({sb: m.aff()})
        if chain != 0:
            return False
        relating = True
    return relating


def _chained(names: list[str], terms: Terms, a: str, b: str, ufs: Mapping[str, UF]) -> bool:
    """Each point ``(.., a, b)`` of the check domain has ``(.., m, m + 1)`` in it for every
    ``a <= m < b``: the neighbours chain every pair the fact covers."""
    m = fresh("m", set(names) | {n for _, e in terms for n in _symbols(e)})
    sa, sb, sm = _s(a), _s(b), _s(m)
    space = [*names, m]
    left = (*terms, (False, sm - sa), (False, sb - sm - 1))
    right = rename(terms, {a: sm.aff(), b: sm + 1})
    return as_set(space, left, ufs).is_subset(as_set(space, right, ufs))


def _fact_text(names: list[str], premise: Terms, concl: Terms) -> str | None:
    if any(e.is_constant() for _, e in (*premise, *concl)):
        return None  # a constant constraint left: false (true ones were dropped)

    def text(ts: Terms) -> str:
        return " && ".join(f"{e} {'=' if eq else '>='} 0" for eq, e in ts)

    if not concl:
        return None
    body = f"{text(premise)} => {text(concl)}" if premise else text(concl)
    return f"forall {', '.join(names)}: {body}"


# ------------------------------------------------------------------------------------ cost
def is_linear(domain: Set, terms: Terms, facts: Sequence[Fact]) -> bool:
    """Whether a check over ``domain`` (a fact's check domain; ``terms`` are the conditions
    its points are tested with, whose UF calls count too) visits at most as many points as
    some index array it reads has entries: one UF call's argument determines the point
    (proved with ``facts``, which a kernel checks first)."""
    names = list(domain.tuple_vars)
    own = conjunction(domain)
    if own is None or not names:
        return False
    calls = uf_calls((*own, *terms))
    primed = {v: fresh(f"{v}_", set(names)) for v in names}
    twice = (*own, *rename(own, {v: _s(p).aff() for v, p in primed.items()}))
    space = [*names, *primed.values()]
    for call in calls:
        if not _symbols(call) & set(names):
            continue
        other = call.xreplace({_s(v): _s(p).aff() for v, p in primed.items()})
        same = tuple((True, x - y) for x, y in zip(_args(call), _args(other), strict=True))
        injective = True
        for v in names:
            apart = (False, _s(primed[v]) - _s(v) - 1)
            s = as_set(space, (*twice, *same, apart), domain.ufs)
            if not is_empty_under(s, facts):
                injective = False
                break
        if injective:
            return True
    return False


# --------------------------------------------------------------------------------- in loop
@dataclass(frozen=True)
class InLoopCheck:
    """Check fact ``fact`` (its number among the kernel's facts) at each instance of
    statement ``stmt`` where ``guard`` holds: fail unless ``conclusion`` holds. Both are over
    the statement's iterators (and parameters, UF calls); ``point`` gives the fact's
    variables in terms of them (what a fault records)."""

    stmt: str
    fact: int
    guard: Terms
    conclusion: Terms
    point: tuple[Aff, ...]


@dataclass(frozen=True)
class _Candidate:
    stmt: str
    mapping: dict[str, Aff]  # fact variable -> expression over the statement's iterators
    covered: Set  # the fact's points the statement's instances visit (over the fact's vars)
    domain: Terms  # what the statement's domain states (the guard need not test it)
    pins: Terms  # iterators pinned to one instance (tested by the guard)
    svars: tuple[str, ...]  # the statement's iterators


def in_loop_checks(
    ir: ComputationIR,
    stmts: Sequence[str],
    fact: Fact,
    number: int,
    facts: Sequence[Fact],
    *,
    pairs: tuple[str, str] | None = None,
) -> tuple[InLoopCheck, ...] | None:
    """Checks of ``fact`` inside statements ``stmts`` of ``ir`` that together visit every
    point of its check domain (proved with ``facts``, which hold when this one is checked),
    or None. ``pairs``: ``(first, second)`` of an adjacent form: its first variable is
    mapped one below a statement iterator too, so the pair ``(k - 1, k)`` is tested where
    ``k`` is loaded."""
    found = in_loop_cover(ir, stmts, fact, number, facts, pairs=pairs)
    if found is None or found[1] is not None:
        return None
    return found[0]


def in_loop_cover(
    ir: ComputationIR,
    stmts: Sequence[str],
    fact: Fact,
    number: int,
    facts: Sequence[Fact],
    *,
    pairs: tuple[str, str] | None = None,
) -> tuple[tuple[InLoopCheck, ...], Fact | None] | None:
    """:func:`in_loop_checks`, and where the statements visit every point of the check
    domain but one (for any parameter values and index arrays: every variable fixed by the
    rest's equalities), that point as a fact of its own (``fact`` on that point only, for
    the checked function to test before its loops, :mod:`spf.codegen.each_call`); None
    where the statements leave more. SpTRSV's ``DIAGONAL_STORED`` (``k = rowptr(i+1) - 1
    => col(k) = i``) reaches ``i = -1`` through ``rowptr(0)``, which no row visits: its
    rows are tested where the division reads ``L(rowptr(i+1) - 1)`` and ``i = -1``
    (``rowptr(0) = 0``, in effect) before the loops, where a pass over every row before
    them cost 0.2-0.7x the unchecked solve (docs/backends/c.md)."""
    ufs = ir.uf_decls
    domain = check_domain(fact, ufs)
    dterms = conjunction(domain)
    concl = conjunction(fact.conclusion)
    if dterms is None or concl is None:
        return None
    names = list(fact.vars)
    uncovered = domain
    chosen: list[_Candidate] = []
    for name in stmts:
        stmt = ir.parsed_stmt(name)
        cand = _best_candidate(name, stmt.domain, names, dterms, ufs, pairs)
        if cand is None:
            continue
        if is_empty_under(_intersect(uncovered, cand.covered), facts):
            continue
        chosen.append(cand)
        uncovered = _subtract(uncovered, cand.covered)
        if is_empty_under(uncovered, facts):
            return tuple(_check(c, number, dterms, concl, names, ufs) for c in chosen), None
    rest = conjunction(uncovered) if chosen else None
    if rest is None or not _one_point(rest, names):
        return None
    left = Fact(text=fact.text, vars=fact.vars, premise=uncovered, conclusion=fact.conclusion)
    return tuple(_check(c, number, dterms, concl, names, ufs) for c in chosen), left


def _one_point(terms: Terms, names: Sequence[str]) -> bool:
    """Whether ``terms``' equalities fix every variable of ``names`` (one after another,
    as :func:`_equality` defines an iterator): the set holds at most one point."""
    known: set[str] = set()
    while len(known) < len(names):
        found = _equality(terms, known, list(names))
        if found is None:
            return False
        known.add(found[0])
    return True


def _best_candidate(
    stmt: str,
    sdomain: Set,
    names: list[str],
    dterms: Terms,
    ufs: Mapping[str, UF],
    pairs: tuple[str, str] | None,
) -> _Candidate | None:
    """The renaming of the fact's variables to ``stmt``'s iterators (one statement instance
    per fact point) that shares the most constraints with its domain."""
    sterms = conjunction(sdomain)
    if sterms is None:
        return None
    svars = list(sdomain.tuple_vars)
    if len(svars) < len(names) or any(not v for v in svars):
        return None
    offsets: dict[str, tuple[int, ...]] = dict.fromkeys(names, (0,))
    if pairs is not None:
        offsets[pairs[0]] = (-1, 0)
    own = set(sterms)
    score = _Scorer(names, dterms, own)
    scored: list[tuple[int, int, tuple[str, ...], tuple[int, ...], Terms, Terms]] = []
    # the iterators outside an image depend on which iterators it maps, not their order
    by_set: dict[frozenset[str], tuple[Terms, Terms] | None] = {}
    for image in itertools.permutations(svars, len(names)):
        mapped = frozenset(image)
        if mapped not in by_set:
            found = _defined(sterms, set(mapped), svars)
            if found is None:
                by_set[mapped] = None
            else:
                defined, pins, used = found
                # only the equalities that define an iterator go: any other constraint on a
                # defined (or pinned) iterator still limits the points the statement visits
                # (a p2p executor's i = order(i_pos) with i_pos pinned to 0 visits one i)
                rest = tuple(t for t in sterms if t not in used)
                by_set[mapped] = (rename(rest, defined), pins)  # over the mapped iterators
        got = by_set[mapped]
        if got is None:
            continue
        inner, pins = got
        for shifts in itertools.product(*(offsets[v] for v in names)):
            shared = score(dict(zip(names, zip(image, shifts, strict=True), strict=True)))
            if shared:
                scored.append((-shared, len(scored), image, shifts, inner, pins))
    return _first_candidate(stmt, scored, names, dterms, sterms, svars, ufs)


def _first_candidate(
    stmt: str,
    scored: list[tuple[int, int, tuple[str, ...], tuple[int, ...], Terms, Terms]],
    names: list[str],
    dterms: Terms,
    sterms: Terms,
    svars: list[str],
    ufs: Mapping[str, UF],
) -> _Candidate | None:
    """The first renaming (in the order tried) of the highest score whose guard reads its
    index arrays in bounds (:class:`_SafeCalls`) and whose points form a set: building sets
    costs the most, so they are built best first, until one succeeds (and the points are
    renamed back to the fact's variables only for those tried)."""
    safe = _SafeCalls(sterms, svars, ufs)
    for _, _, image, shifts, inner, pins in sorted(scored, key=lambda c: c[:2]):
        mapping = {v: _s(s) + d for v, s, d in zip(names, image, shifts, strict=True)}
        if not safe.allows(rename(dterms, mapping)):
            continue
        back = {s: _s(v) - d for v, s, d in zip(names, image, shifts, strict=True)}
        covered = _points(names, rename(inner, back), ufs)
        if covered is not None:
            own_terms = tuple(t for t in sterms if t not in pins)
            return _Candidate(stmt, mapping, covered, own_terms, pins, tuple(svars))
    return None


def _points(names: Sequence[str], terms: Terms, ufs: Mapping[str, UF]) -> Set | None:
    """``as_set(names, terms, ufs)``, or None where the terms form no set."""
    try:
        return as_set(names, terms, ufs)
    except SpfError:
        return None


class _SafeCalls:
    """Whether a statement may call a UF at an argument in its guard (auditeinsum): the guard
    reads the check domain's index arrays before anything tests their arguments, so a call
    must be one the statement's loops make themselves, or one whose arguments the statement's
    domain keeps inside the UF's declared domain. Otherwise a renaming that shares a bound
    or two with the statement (``rowptr(i) <= k1`` of a CSR operand ``C`` with ``i`` as the
    entry ``B_k`` of a COO operand in a statement scanning ``B``) reads ``C_rowptr(B_k + 1)``
    out of bounds: a good call refused on what it found there, or a segmentation fault."""

    def __init__(self, sterms: Terms, svars: Sequence[str], ufs: Mapping[str, UF]) -> None:
        self.read = {c for _, e in sterms for c in e.calls()}
        self.sterms, self.svars, self.ufs = sterms, svars, ufs
        self.known: dict[Call, bool] = {}
        self._domain: tuple[Set | None, Mapping[str, UF]] | None = None

    def domain(self) -> tuple[Set | None, Mapping[str, UF]]:
        """The statement's points (None where they form no set) and the UFs without their
        order facts they are built over; built once, for the first call judged."""
        if self._domain is None:
            ranged = {n: _without_order(u) for n, u in self.ufs.items()}
            try:
                points: Set | None = as_set(self.svars, self.sterms, ranged)
            except SpfError:
                points = None
            self._domain = (points, ranged)
        return self._domain

    def allows(self, terms: Terms) -> bool:
        """Whether every UF call of ``terms`` (a renamed check domain) is safe here."""
        return all(self.safe(c) for _, e in terms for c in e.calls())

    def safe(self, call: Call) -> bool:
        if call in self.read:
            return True
        found = self.known.get(call)
        if found is None:
            found = self.known[call] = self._inside(call)
        return found

    def _inside(self, call: Call) -> bool:
        uf = self.ufs.get(call.base)
        if uf is None or call.name != call.base:
            return False
        if uf.domain is None:
            return True
        bounds = conjunction(uf.domain)
        params = uf.domain.tuple_vars
        if bounds is None or len(params) != len(call.args):
            return False
        need = rename(bounds, dict(zip(params, call.args, strict=True)))
        points, ranged = self.domain()
        if points is None:
            return False
        try:
            return points.is_subset(as_set(self.svars, need, ranged))
        except SpfError:
            return False


class _Scorer:
    """How many constraints of ``dterms`` (over the fact's variables ``names``), renamed by
    a candidate mapping, are among ``own`` (a statement's domain): ``sum(t in own for t in
    rename(dterms, mapping))``. A constraint's renaming depends only on where its own
    variables go, so it is worked out once per such choice instead of once per mapping
    (the mappings are every permutation of the statement's iterators and every shift)."""

    def __init__(self, names: Sequence[str], dterms: Terms, own: set[tuple[bool, Aff]]) -> None:
        self.dterms = dterms
        self.own = own
        self.vars = [tuple(v for v in names if e.has(_s(v))) for _, e in dterms]
        self.known: dict[tuple[int, tuple[tuple[str, int], ...]], bool | None] = {}

    def __call__(self, choice: Mapping[str, tuple[str, int]]) -> int:
        """``choice``: each variable's iterator and shift (the mapping ``v -> it + d``)."""
        total = 0
        for j, used in enumerate(self.vars):
            key = (j, tuple(choice[v] for v in used))
            found = self.known[key] if key in self.known else self._term(*key)
            if found is None:  # a false constant: rename() gives the one false constraint
                return int((False, affine.const(-1)) in self.own)
            total += found
        return total

    def _term(self, j: int, where: tuple[tuple[str, int], ...]) -> bool | None:
        """Whether constraint ``j`` renamed is in ``own`` (a true constant, which rename()
        drops, is not); None for a false constant."""
        eq, e = self.dterms[j]
        subs: dict[Sym, Aff] = {
            _s(v): _s(it) + d for v, (it, d) in zip(self.vars[j], where, strict=True)
        }
        renamed = _replaced(e, subs)
        found: bool | None
        if renamed.is_constant():
            holds = (renamed.const == 0) if eq else (renamed.const >= 0)
            found = False if holds else None
        else:
            found = (eq, renamed) in self.own
        self.known[(j, where)] = found
        return found


def _defined(
    sterms: Terms, mapped: set[str], svars: list[str]
) -> tuple[dict[str, Aff], Terms, Terms] | None:
    """Each iterator outside ``mapped`` as an expression of the mapped ones: from the
    domain's equalities (``j = col(k)``), else pinned to a lower bound (``ri = 0`` of a
    block's ``0 <= ri < 4``: the check runs at that one instance; the pin joins the guard),
    with the pins and the equalities that defined an iterator. None when an iterator is
    neither."""
    known = set(mapped)
    out: dict[str, Aff] = {}
    pins: list[tuple[bool, Aff]] = []
    used: list[tuple[bool, Aff]] = []
    while len(known) < len(svars):
        found = _equality(sterms, known, svars)
        if found is not None:
            name, value, _, term = found
            used.append(term)
        else:
            bound = _lower_bound(sterms, known, svars)
            if bound is None:
                return None
            name, value, _ = bound
            pins.append((True, _s(name) - value))
        out[name] = value
        known.add(name)
    for _ in range(len(out)):  # definitions in terms of the mapped iterators only
        defs: dict[Sym, Aff] = {_s(n): d for n, d in out.items()}
        out = {k: e.xreplace(defs) for k, e in out.items()}
    return out, tuple(pins), tuple(used)


def _equality(
    sterms: Terms, known: set[str], svars: list[str]
) -> tuple[str, Aff, bool, tuple[bool, Aff]] | None:
    """An iterator outside ``known`` that one of the domain's equalities defines: its name,
    value, False (not pinned) and the equality."""
    for eq, e in sterms:
        if not eq:
            continue
        free = [v for v in svars if v not in known and e.has(_s(v))]
        if len(free) != 1:
            continue
        v = _s(free[0])
        coeff = coefficient(e, v)
        rest = e - v * coeff
        if coeff in (1, -1) and not rest.has(v):
            return free[0], -rest / coeff, False, (eq, e)
    return None


def _lower_bound(sterms: Terms, known: set[str], svars: list[str]) -> tuple[str, Aff, bool] | None:
    for eq, e in sterms:
        if eq:
            continue
        free = [v for v in svars if v not in known and e.has(_s(v))]
        if len(free) != 1:
            continue
        v = _s(free[0])
        rest = e - v
        if coefficient(e, v) == 1 and not rest.has(v) and not rest.calls() and not rest.floors():
            return free[0], -rest, True
    return None


def _check(
    c: _Candidate,
    number: int,
    dterms: Terms,
    concl: Terms,
    names: list[str],
    ufs: Mapping[str, UF],
) -> InLoopCheck:
    """The guard: the check domain's constraints in the statement's iterators, less those
    the statement's domain implies through the UFs' declared ranges (which the checked
    loops enforce on every value they load; monotonicity is not used, it is only reported),
    shallow UF calls first."""
    own = set(c.domain)
    ranged = {n: _without_order(u) for n, u in ufs.items()}
    guard = [t for t in dict.fromkeys(rename(dterms, c.mapping)) if t not in own]
    for t in list(guard):  # drop what the domain and the rest of the guard imply
        rest = tuple(u for u in guard if u != t)
        try:
            if as_set(c.svars, (*c.domain, *c.pins, *rest), ranged).is_subset(
                as_set(c.svars, (t,), ranged)
            ):
                guard.remove(t)
        except SpfError:
            pass
    guard = [*c.pins, *guard]
    return InLoopCheck(
        c.stmt,
        number,
        tuple(sorted(guard, key=_depth)),
        rename(concl, c.mapping),
        tuple(c.mapping[v] for v in names),
    )


def _without_order(uf: UF) -> UF:
    from spf.sets import UF as _UF

    return _UF(uf.name, uf.arity, uf.domain, uf.range, None, uf.dtype)


def _depth(term: tuple[bool, Aff]) -> int:
    """How deeply UF calls nest in ``term``: a guard tests shallower terms first, so the
    domain of each call is established before the call reads its array."""

    return term[1].call_depth()


def _intersect(a: Set, b: Set) -> Set:
    return a.intersect(b)


def _subtract(a: Set, b: Set) -> Set:
    from spf.sets import ops

    return Set._make(ops.subtract(a._body, b._body), a._merged_ufs(b))


# ------------------------------------------------------------------------------ the plan
def kernel_facts(ir: ComputationIR, obligations: Sequence[str]) -> tuple[Fact, ...]:
    """The facts a kernel of ``ir`` checks, numbered as its checks number them: the
    assumptions, then the bounds obligations (texts, parsed with ``ir``'s UFs)."""
    parsed = (Fact.parse(text, ir.uf_decls, frozenset(ir.params)) for text in obligations)
    return (*ir.facts, *parsed)


class _Linearity:
    """:func:`is_linear` of a plan's check (its domain and conditions, proved with the facts
    before it), worked out when first asked: only a fact checked on each call reads it (one
    checked in the loops or implied by others does not), and the proof builds sets over two
    copies of the check's variables (16 of ten variables on a cold SpTRSV wavefront
    compile, whose facts are checked in the loops). Shared by the copies of a plan
    (:func:`_implied_plan`)."""

    def __init__(
        self, domain: Set, terms: Terms, facts: Sequence[Fact], *, known: bool | None = None
    ) -> None:
        self._args: tuple[Set, Terms, tuple[Fact, ...]] | None = (domain, terms, tuple(facts))
        self._value = False
        if known is not None:  # decided without the proof (an injectivity fact)
            self._args, self._value = None, known

    def value(self) -> bool:
        """The verdict (computed once; the arguments are dropped then)."""
        if self._args is not None:
            self._value = is_linear(*self._args)
            self._args = None
        return self._value


@dataclass(frozen=True)
class FactPlan:
    """How fact number ``number`` is verified: ``checked`` is what the check loops test
    (``fact`` itself, or its :class:`Adjacent` form); :attr:`linear`: see :func:`is_linear`;
    ``implied_by``: the numbers of the facts that imply it (it is then not checked at all,
    :mod:`spf.analysis.fact_prover`), empty when it is checked; ``injective``: what the fact
    says when it is a UF one-to-one over an interval (:mod:`spf.analysis.injective`: checked
    in one pass marking the values seen, so :attr:`linear`)."""

    number: int
    fact: Fact
    checked: Fact
    adjacent: Adjacent | None
    linearity: _Linearity = field(compare=False, repr=False)
    implied_by: tuple[int, ...] = ()
    injective: Injective | None = None

    @property
    def linear(self) -> bool:
        """Whether the check visits at most as many points as an index array it reads has
        entries (:func:`is_linear`), proved on first use."""
        return self.linearity.value()


def plan_facts(
    facts: Sequence[Fact], ufs: Mapping[str, UF], constants: Sequence[str]
) -> tuple[FactPlan, ...]:
    """The plan of each quantified fact of ``facts`` (parameter facts are left out); a fact
    the others imply is marked (:attr:`FactPlan.implied_by`)."""
    from spf.analysis.fact_prover import implied_facts

    implied = implied_facts(facts, ufs, constants)
    out = []
    for n, f in enumerate(facts):
        if f.is_parameter_fact:
            continue
        plan = _plan_fact(n, facts, ufs, constants)
        out.append(_implied_plan(plan, implied[n]) if n in implied else plan)
    return tuple(out)


def _implied_plan(plan: FactPlan, by: tuple[int, ...]) -> FactPlan:
    """``plan`` marked implied by ``by``: one object for the same plan and facts, as
    :func:`_plan_fact` shares plans (an executor's and its inspector's)."""
    key = (id(plan), by)
    found = _MARKED.get(key)
    if found is None or found[0] is not plan:
        found = _MARKED.put(key, (plan, replace(plan, implied_by=by)))
    return found[1]


_MARKED: Table[Hashable, tuple[FactPlan, FactPlan]] = Table(1024)


def _plan_fact(
    n: int, facts: Sequence[Fact], ufs: Mapping[str, UF], constants: Sequence[str]
) -> FactPlan:
    """The plan of ``facts[n]`` (which the facts before it help prove), remembered by the
    texts of those facts and the declarations and constants they use: a wavefront's
    executor and its inspector stages check the same assumptions (their bounds
    obligations, which come after them, differ, as do their UFs and constants)."""
    ufs = declarations_of(facts[: n + 1], ufs)
    used = {p for f in facts[: n + 1] for p in f.params}
    constants = [c for c in constants if c in used]
    key = (
        tuple((f.text, f.vars) for f in facts[: n + 1]),
        tuple(sorted(ufs.items())),
        tuple(constants),
    )
    found = _PLANS.get(key)
    if found is None:
        f = facts[n]
        one_to_one = injective_form(f, ufs)
        adj = adjacent_form(f, ufs, constants) if one_to_one is None else None
        checked = adj.fact if adj is not None else f
        domain = check_domain(checked, ufs)
        terms = conjunction(checked.conclusion) or ()
        known = True if one_to_one is not None else None
        linearity = _Linearity(domain, terms, facts[:n], known=known)
        plan = FactPlan(n, f, checked, adj, linearity, injective=one_to_one)
        found = _PLANS.put(key, plan)
    return found


_PLANS: Table[Hashable, FactPlan] = Table(1024)


def declarations_of(facts: Sequence[Fact], ufs: Mapping[str, UF]) -> dict[str, UF]:
    """The declarations of the UFs ``facts`` call, with those they name in turn (inverses,
    UFs in declared domains and ranges): all a plan reads (an executor declares more UFs,
    its schedule's, than the inspector that checks the same facts)."""
    todo = [name for f in facts for name in f.ufs]
    out: dict[str, UF] = {}
    while todo:
        name = todo.pop()
        decl = ufs.get(name)
        if decl is None or name in out:
            continue
        out[name] = decl
        todo += [decl.inverse] if decl.inverse is not None else []
        for s in (decl.domain, decl.range):
            todo += list(s.ufs) if s is not None else []
    return out


def in_loop_plan(
    ir: ComputationIR, stmts: Sequence[str], plans: Sequence[FactPlan], facts: Sequence[Fact]
) -> tuple[tuple[InLoopCheck, ...], frozenset[int], dict[int, Fact]]:
    """The in-loop checks of every fact of ``plans`` that statements ``stmts`` cover, the
    numbers of those facts (``facts``: all of the kernel's, in order), and for each such
    fact whose statements leave one point of it, that point (:func:`in_loop_cover`), which
    the checked function must test before its loops.

    A union merge's one-sided statements (``stmt.coiterate(..., left=, right=)``) do not
    visit the points their domains claim: each runs only where the other list lacks the
    coordinate (the ``both`` statement runs at the others). So they are left out of the
    ordinary cover; a fact no other statements cover is checked at every advance of a
    side's cursor instead (:func:`_union_checks`), in the side and in ``both``."""
    sides = union_sides(ir, stmts)
    visiting = [name for name in stmts if name not in sides]
    checks: list[InLoopCheck] = []
    covered = set()
    rests: dict[int, Fact] = {}
    for p in plans:
        if p.implied_by:
            continue
        pairs = (p.adjacent.first, p.adjacent.second) if p.adjacent is not None else None
        before = facts[: p.number]
        rest = None
        try:
            cover = in_loop_cover(ir, visiting, p.checked, p.number, before, pairs=pairs)
            found = cover[0] if cover is not None else None
            rest = cover[1] if cover is not None else None
            if found is None and sides:
                found = _union_checks(ir, sides, p, before, pairs)
        except SpfError:
            found = None
        if found is not None:
            checks.extend(found)
            covered.add(p.number)
            if rest is not None:
                rests[p.number] = rest
    return tuple(checks), frozenset(covered), rests


@dataclass(frozen=True)
class UnionSide:
    """A one-sided statement ``stmt`` of a union merge whose ``both`` statement runs at the
    rest of its cursor's positions; ``rename``: each of ``stmt``'s iterators as ``both``'s
    (its outer ones, then its cursor)."""

    stmt: str
    both: str
    rename: dict[str, Aff]


def union_sides(ir: ComputationIR, stmts: Sequence[str]) -> dict[str, UnionSide]:
    """Every one-sided statement of the union merges declared in ``ir`` (``stmt.coiterate(j1,
    j2, left=, right=)``), by name. Its ``rename`` is empty where it cannot stand for its
    cursor's every position (it is then only left out of the cover): the side or its
    ``both`` statement is not among ``stmts``, or the union's statements filter their
    positions (a position may then run in neither)."""
    from spf.analysis.coiteration import NotMergeableError, declared, split_branch, split_domain

    out: dict[str, UnionSide] = {}
    for stmt in ir.parsed_stmts:
        tagged = declared(stmt)
        if tagged is None:
            continue
        j1, j2, left, right = tagged
        for side in (left, right):
            if side is not None:
                out[side] = UnionSide(side, stmt.name, {})  # left out, not covering
        if stmt.name not in stmts:
            continue
        try:
            shape = split_domain(stmt, j1, j2)
            for side, cursor in ((left, shape.left), (right, shape.right)):
                if side is None or side not in stmts:
                    continue
                branch = split_branch(ir.parsed_stmt(side), shape, cursor)
                if shape.filters or branch.filters:
                    continue
                into = (*shape.outer_vars, cursor.var)
                mapping = {a: _s(b).aff() for a, b in zip(branch.tuple_vars, into, strict=True)}
                out[side] = UnionSide(side, stmt.name, mapping)
        except NotMergeableError:
            continue
    return out


def _union_checks(
    ir: ComputationIR,
    sides: Mapping[str, UnionSide],
    plan: FactPlan,
    facts: Sequence[Fact],
    pairs: tuple[str, str] | None,
) -> tuple[InLoopCheck, ...] | None:
    """Checks of ``plan``'s fact at every advance of one union cursor, or None.

    A union merge moves each cursor over every position of its range, one at a time, in
    the ``both`` statement (keys equal) or in its one-sided statement (the other list
    lacks the key, or has ended), whatever the lists hold: sorted or not, with duplicates
    or not (docs/coiteration.md). So the side's domain, all of its range (no filters,
    :func:`union_sides`), is what the side and ``both`` visit together. A fact one side's
    domain covers is checked there and, renamed to ``both``'s iterators, in ``both``: its
    guard (the check domain less what the side's domain implies) holds there as well, as
    ``both``'s domain implies the side's (the same outer part and range, proved here
    rather than assumed)."""
    for side in sides.values():
        if not side.rename:
            continue
        found = in_loop_checks(ir, [side.stmt], plan.checked, plan.number, facts, pairs=pairs)
        if found is None or not _implies(ir, side):
            continue
        return (*found, *(_moved(c, side) for c in found))
    return None


def _implies(ir: ComputationIR, side: UnionSide) -> bool:
    """Whether ``side.both``'s domain implies ``side.stmt``'s (renamed to its iterators)."""
    both = ir.parsed_stmt(side.both).domain
    own = conjunction(ir.parsed_stmt(side.stmt).domain)
    if own is None:
        return False
    names = list(both.tuple_vars)
    return both.is_subset(as_set(names, rename(own, side.rename), both.ufs))


def _moved(check: InLoopCheck, side: UnionSide) -> InLoopCheck:
    """``check`` (in ``side.stmt``) in ``side.both``, over its iterators."""
    subs = {_s(k): v for k, v in side.rename.items()}
    return InLoopCheck(
        side.both,
        check.fact,
        rename(check.guard, side.rename),
        rename(check.conclusion, side.rename),
        tuple(_replaced(e, subs) for e in check.point),
    )

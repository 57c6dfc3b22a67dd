"""Co-iteration: which loops run as one merge of two sorted coordinate lists, and the proof
that they may (docs/coiteration.md).

A statement's two innermost loops ``j1``, ``j2`` are a *merge* when its domain reads ::

    outer(o) && lo1(o) <= j1 < hi1(o) && lo2(o) <= j2 < hi2(o) && c1(j1) = c2(j2) [&& filters]

(``o`` the other iterators; any number of lower and upper bounds; filters are further
constraints on one position, ``col(j1) < i``) and the *keys* ``c1``, ``c2`` are strictly
increasing over the positions' ranges for every ``o``. The nest visits exactly the pairs
of positions whose coordinates are equal; with both lists sorted, one pass of two cursors
finds them all in ``O(len1 + len2)`` (advance the cursor with the smaller coordinate, run
the body where they are equal). It visits them in the nest's order too: for two such pairs,
``a1 < b1`` iff ``c1(a1) < c1(b1)`` iff ``c2(a2) < c2(b2)`` iff ``a2 < b2``, so the merge's
coordinate order is the lexicographic order of ``(j1, j2)``. Instances and their order are
unchanged: dependences and legality are those of the nest.

Strict increase over a range ``[lo, hi)`` follows from the adjacent pairs (``c(j) <
c(j + 1)`` for ``lo <= j < hi - 1``), which is what this module proves: the set of ``j``
whose pair is out of order must be empty under the UF declarations and the ``assume``
facts, directly or through an instance of an ordering fact (adjacent or pairwise, ``forall
i, k: rowptr(i) <= k < rowptr(i+1) - 1 => col(k) < col(k+1)``) whose premise the range
implies.

A *union* (``stmt.coiterate(j1, j2, left=s1, right=s2)``) adds statements over one
position each, ``[o, j1]`` and ``[o, j2]`` with the same outer part and range, that run
where one list has a coordinate the other lacks (``left``: no ``j2`` matches ``j1``), all
three in coordinate order (docs/coiteration.md).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from spf.analysis.dependences import function_of, padded
from spf.errors import SpfError
from spf.ir.reading import is_constant
from spf.sets.affine import Aff, Atom, Call, Num, Sym

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import StmtReading
    from spf.sets import syntax as ast
    from spf.sets.facts import Fact

Constraint = tuple[bool, "Aff"]
"""``(is_equality, e)``: ``e = 0`` or ``e >= 0`` (:func:`spf.sets.facts.condition_terms`)."""

TAG = "coiterate"
"""The tag ``stmt.coiterate`` puts on the first merged loop."""


class NotMergeableError(SpfError):
    """The loops are not a merge (the message says why)."""


@dataclass(frozen=True)
class Side:
    """One cursor: positions ``var`` with ``var >= l`` for each ``l`` in ``lower`` and ``var
    < u`` for each ``u`` in ``upper``, coordinate ``key`` (a UF call of ``var``)."""

    var: str
    lower: tuple[Aff, ...]
    upper: tuple[Aff, ...]
    key: Aff

    def range_text(self) -> str:
        """``k + 1 <= j1 && j1 < rowptr(i + 1)``."""
        lows = [f"{_text(lo)} <= {self.var}" for lo in self.lower]
        return " && ".join([*lows, *(f"{self.var} < {_text(u)}" for u in self.upper)])


@dataclass(frozen=True)
class Shape:
    """A statement's domain split for co-iteration (module docstring)."""

    stmt: str
    tuple_vars: tuple[str, ...]
    outer: tuple[Constraint, ...]
    """The constraints on the other iterators alone."""
    left: Side
    right: Side
    filters: tuple[Constraint, ...]
    """Further constraints on one position (tested where the keys are equal)."""

    @property
    def outer_vars(self) -> tuple[str, ...]:
        return tuple(v for v in self.tuple_vars if v not in (self.left.var, self.right.var))


@dataclass(frozen=True)
class Branch:
    """A union's statement over one position: its name and its filters, over the names of
    the ``both`` statement's iterators."""

    stmt: str
    tuple_vars: tuple[str, ...]
    filters: tuple[Constraint, ...]


@dataclass(frozen=True)
class Group:
    """Statements that run as one merge: ``both`` (where the keys are equal) and, for a
    union, ``left`` / ``right`` (where only one list has the coordinate)."""

    shape: Shape
    position: int
    """Schedule position of the first merged loop (the second is two further in)."""
    prefix: tuple[str, ...]
    """The schedule outputs before it, as functions of the outer iterators."""
    schedule: str
    """The schedule up to the merge, over the outer iterators (the loops around it, with
    their names)."""
    tags: dict[str, tuple[str, ...]]
    """The tags of the outer loops."""
    left: Branch | None = None
    right: Branch | None = None
    declared: bool = False
    """Asked for with ``stmt.coiterate`` (else found by codegen)."""

    @property
    def stmts(self) -> tuple[str, ...]:
        return tuple(b.stmt for b in (self, self.left, self.right) if b is not None)

    @property
    def stmt(self) -> str:
        return self.shape.stmt

    @property
    def is_union(self) -> bool:
        return self.left is not None or self.right is not None


# ----------------------------------------------------------------------------- the tag
def tag_text(partner: str, left: str | None, right: str | None) -> str:
    """``coiterate(q)``, ``coiterate(q, left=s1, right=s2)``."""
    extra = "".join(f", {k}={v}" for k, v in (("left", left), ("right", right)) if v)
    return f"{TAG}({partner}{extra})"


_TAG = re.compile(r"^coiterate\((\w+)(?:, left=(\w+))?(?:, right=(\w+))?\)$")


def parse_tag(tag: str) -> tuple[str, str | None, str | None] | None:
    """``(partner loop, left, right)`` of a ``coiterate`` tag, None for another tag."""
    m = _TAG.match(tag)
    return None if m is None else (m[1], m[2], m[3])


def declared(stmt: StmtReading) -> tuple[str, str, str | None, str | None] | None:
    """``(j1, j2, left, right)`` when ``stmt.coiterate(j1, j2, ...)`` tagged the statement."""
    for loop, tags in stmt.tags.items():
        for t in tags:
            parsed = parse_tag(t)
            if parsed is not None:
                return (loop, *parsed)
    return None


# ----------------------------------------------------------------------------- the domain
def split_domain(stmt: StmtReading, j1: str, j2: str) -> Shape:
    """``stmt``'s domain as a merge of loops ``j1`` and ``j2`` (``NotMergeableError``)."""
    terms = _conjunction(stmt)
    names = stmt.domain.tuple_vars
    for j in (j1, j2):
        if j not in names:
            raise NotMergeableError(f"{j!r} is not an iterator of its domain {stmt.domain}")
    cursors = {j1, j2}
    outer: list[Constraint] = []
    filters: list[Constraint] = []
    keys: list[tuple[Aff, Aff]] = []
    bounds: dict[str, tuple[list[Aff], list[Aff]]] = {j1: ([], []), j2: ([], [])}
    for is_eq, e in terms:
        used = set(e.free_names()) & cursors
        if not used:
            outer.append((is_eq, e))
        elif len(used) == 2:
            keys.append(_key_equality(is_eq, e, j1, j2))
        elif not _add_bound(is_eq, e, used.pop(), bounds):
            filters.append((is_eq, e))
    if len(keys) != 1:
        raise NotMergeableError(
            f"its domain relates {j1} and {j2} by {len(keys) or 'no'} equalities of UF values; "
            f"a merge needs exactly one, c1({j1}) = c2({j2})"
        )
    c1, c2 = keys[0] if _args(keys[0][0]) == (_sym(j1),) else keys[0][::-1]
    sides = []
    for j, key in ((j1, c1), (j2, c2)):
        lower, upper = bounds[j]
        if not lower or not upper:
            raise NotMergeableError(f"loop {j} has no {'lower' if not lower else 'upper'} bound")
        sides.append(Side(j, tuple(lower), tuple(upper), key))
    return Shape(
        stmt=stmt.name,
        tuple_vars=names,
        outer=tuple(outer),
        left=sides[0],
        right=sides[1],
        filters=tuple(filters),
    )


def _conjunction(stmt: StmtReading) -> list[Constraint]:
    from spf.sets.facts import condition_terms

    try:
        conjs = condition_terms(stmt.domain)
    except SpfError as err:
        raise NotMergeableError(f"its domain has existential variables ({err})") from err
    if len(conjs) != 1:
        raise NotMergeableError(f"its domain {stmt.domain} is a union of {len(conjs)} parts")
    return list(conjs[0])


def _sym(name: str) -> Aff:
    return Sym(name).aff()


def _func(call: Aff) -> str:
    """The term name of a UF call (a tuple-valued UF's component: ``f[]``)."""
    a = call.as_atom()
    assert isinstance(a, Call)
    return a.name


def _base(call: Aff) -> str:
    """The UF a call calls."""
    a = call.as_atom()
    assert isinstance(a, Call)
    return a.base


def _args(call: Aff) -> tuple[Aff, ...]:
    a = call.as_atom()
    return a.args if isinstance(a, Call) else ()


def _key_equality(is_eq: bool, e: Aff, j1: str, j2: str) -> tuple[Aff, Aff]:
    """``c1(j1) = c2(j2)`` as the pair ``(c1(j1), c2(j2))``."""
    parts: list[tuple[Atom | None, Num]] = [(None, e.const)] if e.const else []
    parts += e.ordered()
    calls = []
    for a, coeff in parts:
        rest = Aff.atom(a) if a is not None else Aff({}, coeff)
        if abs(coeff) != 1 or not _is_call_of(rest, (j1, j2)):
            break
        calls.append((coeff, rest))
    if not is_eq or len(parts) != 2 or len(calls) != 2 or calls[0][0] == calls[1][0]:
        raise NotMergeableError(
            f"its domain relates {j1} and {j2} by {_constraint_text(is_eq, e)}; a merge needs "
            f"their only relation to be an equality of two UF values, c1({j1}) = c2({j2})"
        )
    return calls[0][1], calls[1][1]


def _is_call_of(e: Aff, names: Sequence[str]) -> bool:
    """A one-argument UF call whose argument is one of ``names``."""
    a = e.as_atom()
    if not isinstance(a, Call) or a.name.endswith("[]") or len(a.args) != 1:
        return False
    s = a.args[0].as_sym()
    return s is not None and s.name in names


def _add_bound(is_eq: bool, e: Aff, j: str, bounds: dict[str, tuple[list[Aff], list[Aff]]]) -> bool:
    """Record ``e`` (= 0 or >= 0) as bounds of ``j`` when it is ``±j + rest`` with ``rest``
    free of ``j``; False otherwise (a filter)."""
    sym = Sym(j)
    plus, minus = sym.aff(), -sym
    with_j = [Aff({a: c}, Fraction(0)) for a, c in e.coeffs.items() if sym in set(a.symbols())]
    if len(with_j) != 1 or with_j[0] not in (plus, minus):
        return False
    rest = e - with_j[0]
    if rest.has(sym):
        return False
    lower, upper = bounds[j]
    value = -rest if with_j[0] == plus else rest  # j = value, or j >= / <= value
    if is_eq or with_j[0] == plus:
        lower.append(value)
    if is_eq or with_j[0] == minus:
        upper.append(value + 1)
    return True


def split_branch(stmt: StmtReading, shape: Shape, side: Side) -> Branch:
    """A union's statement over one position: its iterators are the outer ones of ``shape``
    then the position (any names); its outer part and range must be ``shape``'s."""
    names = stmt.domain.tuple_vars
    outer = shape.outer_vars
    if len(names) != len(outer) + 1:
        raise NotMergeableError(
            f"statement {stmt.name} must have the iterators [{', '.join(outer)}, "
            f"{side.var}] (the outer ones of {shape.stmt}, then the position), not "
            f"[{', '.join(names)}]"
        )
    rename = {Sym(a): _sym(b) for a, b in zip(names, (*outer, side.var), strict=True)}
    bounds: dict[str, tuple[list[Aff], list[Aff]]] = {side.var: ([], [])}
    filters: list[Constraint] = []
    own_outer: list[Constraint] = []
    for is_eq, e in _conjunction(stmt):
        e = e.xreplace(rename)
        if not e.has(Sym(side.var)):
            own_outer.append((is_eq, e))
        elif not _add_bound(is_eq, e, side.var, bounds):
            filters.append((is_eq, e))
    mine = Side(side.var, tuple(bounds[side.var][0]), tuple(bounds[side.var][1]), side.key)
    _same_range(stmt, shape, side, mine, tuple(own_outer))
    return Branch(stmt.name, names, tuple(filters))


def _same_range(
    stmt: StmtReading, shape: Shape, side: Side, mine: Side, own_outer: tuple[Constraint, ...]
) -> None:
    from spf.sets import Set

    names = (*shape.outer_vars, side.var)
    theirs = Set(_set_text(names, (*shape.outer, *_range_terms(side))), ufs=stmt.domain.ufs)
    ours = Set(_set_text(names, (*own_outer, *_range_terms(mine))), ufs=stmt.domain.ufs)
    if not theirs.is_equal(ours):
        raise NotMergeableError(
            f"statement {stmt.name} must run over the range of {side.var} in {shape.stmt} "
            f"({theirs}) apart from filters on the position, not over {ours}"
        )


def _range_terms(side: Side) -> list[Constraint]:
    j = _sym(side.var)
    return [(False, j - lo) for lo in side.lower] + [(False, u - j - 1) for u in side.upper]


def _set_text(names: Sequence[str], terms: Sequence[Constraint]) -> str:
    from spf.sets.printer import format_constraint

    body = " && ".join(format_constraint(q, e, set(names)) for q, e in terms) or "true"
    return f"{{[{', '.join(names)}] : {body}}}"


def outer_domain_text(shape: Shape) -> str:
    """The domain of the statement's outer iterators alone (what the loops around the merge
    scan): ``{[i, k] : 0 <= i && i < N && ...}``."""
    return _set_text(shape.outer_vars, shape.outer)


def _text(e: Aff) -> str:
    from spf.sets.printer import expr_text

    return expr_text(e)


def _constraint_text(is_eq: bool, e: Aff) -> str:
    from spf.sets.printer import format_constraint

    return format_constraint(is_eq, e, set())


# ----------------------------------------------------------------------------- the proof
def unsorted_reason(ir: ComputationIR, shape: Shape, side: Side) -> str | None:
    """None when the facts prove ``side.key`` strictly increasing over the side's range
    for every value of the outer iterators; otherwise what is missing and what to assume."""
    quantified = [f for f in ir.facts if not f.is_parameter_fact]
    for names, terms in _attempts(shape, side):
        pair = _pair_terms(terms, side)
        names = (*names, side.var)
        if _is_empty(ir, names, pair) or any(
            _through_fact(ir, names, pair, side, f) for f in quantified
        ):
            return None
    return (
        f"the facts do not prove that {_base(side.key)}({side.var}) increases strictly over the "
        f"range of loop {side.var} ({side.range_text()}), which a merge needs (a sorted list "
        f"without duplicates); assume it, e.g. comp.assume({_suggestion(shape, side)!r})"
    )


def _suggestion(shape: Shape, side: Side) -> str:
    """An ordering fact that would prove ``side`` sorted: over the whole list when the range
    ends at a pointer ``ptr(e + 1)`` (sorted CSR rows, checked in O(NNZ)), else over the
    range itself."""
    key = _base(side.key)
    for u in side.upper:
        if isinstance(u.as_atom(), Call) and len(_args(u)) == 1:
            ptr = _base(u)
            return f"forall v, k: {ptr}(v) <= k < {ptr}(v + 1) - 1 => {key}(k) < {key}(k + 1)"
    k = side.var
    premise = " && ".join(
        [f"{_text(lo)} <= {k}" for lo in side.lower] + [f"{k} + 1 < {_text(u)}" for u in side.upper]
    )
    over = ", ".join((*sorted(_used_vars(shape, side)), k))
    return f"forall {over}: {premise} => {key}({k}) < {key}({k} + 1)"


def _used_vars(shape: Shape, side: Side) -> set[str]:
    used = {n for b in (*side.lower, *side.upper) for n in b.free_names()}
    return used & set(shape.outer_vars)


def _attempts(shape: Shape, side: Side) -> Iterator[tuple[tuple[str, ...], list[Constraint]]]:
    """The outer iterators and constraints to assume: first those over the iterators the
    range uses only (so the proof is the same whatever loops enclose them: a wavefront
    executor's), then all of them."""
    used = _used_vars(shape, side)
    near = [(q, e) for q, e in shape.outer if set(e.free_names()) & set(shape.outer_vars) <= used]
    yield tuple(v for v in shape.outer_vars if v in used), near
    if len(near) < len(shape.outer):
        yield shape.outer_vars, list(shape.outer)


def _pair_terms(terms: list[Constraint], side: Side) -> list[Constraint]:
    """``terms`` and: ``j`` and ``j + 1`` in the range, ``key(j) >= key(j + 1)``."""
    j = _sym(side.var)
    out = list(terms)
    out += [(False, j - lo) for lo in side.lower]
    out += [(False, u - j - 2) for u in side.upper]
    out.append((False, side.key - Call(_func(side.key), [j + 1]).aff()))
    return out


_EMPTY: dict[tuple[str, tuple[str, ...], str], bool] = {}
"""Emptiness results by (set text, facts, UF declarations): the same proofs recur for the
same kernel (codegen of its wavefront executor, each compile)."""


def _is_empty(ir: ComputationIR, names: Sequence[str], terms: Sequence[Constraint]) -> bool:
    from spf.sets import Set
    from spf.sets.facts import is_empty_under

    text = _set_text(names, terms)
    facts = tuple(f.text for f in ir.facts)
    key = (text, facts, repr(sorted(ir.uf_decls.items())))
    found = _EMPTY.get(key)
    if found is None:
        s = Set(text, ufs=ir.uf_decls)
        found = is_empty_under(s, ir.facts) if facts else s.is_empty()
        if len(_EMPTY) > 4096:
            _EMPTY.clear()
        _EMPTY[key] = found
    return found


def _through_fact(
    ir: ComputationIR,
    names: tuple[str, ...],
    pair: list[Constraint],
    side: Side,
    fact: Fact,
) -> bool:
    """Whether an instance of ``fact`` orders ``key(j) < key(j + 1)`` on the whole range:
    its conclusion contradicts ``pair`` and ``pair`` implies each atom of its premise."""
    from spf.sets.facts import condition_terms

    premise, conclusion = condition_terms(fact.premise), condition_terms(fact.conclusion)
    if len(premise) != 1 or len(conclusion) != 1:
        return False
    fvars = {Sym(v) for v in fact.premise.tuple_vars}
    j = _sym(side.var)
    key = _func(side.key)
    mine = [c for c in _calls(conclusion[0]) if _func(c) == key and len(_args(c)) == 1]
    for x, y in itertools.permutations(mine, 2):
        base = _solve(((_args(x)[0], j), (_args(y)[0], j + 1)), fvars)
        if base is None:
            continue
        for sigma in _instances(base, fvars, premise[0], _calls(pair)):
            concl = [(q, e.xreplace(sigma)) for q, e in conclusion[0]]
            if _is_empty(ir, names, [*pair, *concl]) and all(
                _implied(ir, names, pair, q, e.xreplace(sigma)) for q, e in premise[0]
            ):
                return True
    return False


def _calls(terms: Sequence[Constraint]) -> list[Aff]:
    """The UF calls in ``terms`` (nested ones too, after the call they are in), each once."""
    found: dict[Aff, None] = {}

    def walk(e: Aff) -> None:
        for a in e.atoms():
            if isinstance(a, Call):
                found[a.aff()] = None
                for x in a.args:
                    walk(x)
            elif not isinstance(a, Sym):
                walk(a.arg)

    for _, e in terms:
        walk(e)
    return list(found)


def _solve(pairs: Sequence[tuple[Aff, Aff]], fvars: set[Sym]) -> dict[Sym, Aff] | None:
    """The values of fact variables that make each ``pattern`` (``v + c``) equal its
    ``target``; None when the patterns are not of that form or disagree."""
    out: dict[Sym, Aff] = {}
    for pattern, target in pairs:
        free = set(pattern.symbols()) & fvars
        if len(free) != 1:
            return None
        (v,) = free
        rest = pattern - v
        if rest.has(v):
            return None
        value = target - rest
        if out.setdefault(v, value) != value:
            return None
    return out


_MAX_INSTANCES = 16


def _instances(
    base: dict[Sym, Aff],
    fvars: set[Sym],
    premise: Sequence[Constraint],
    calls: Sequence[Aff],
) -> Iterator[dict[Sym, Aff]]:
    """``base`` completed with values for the other fact variables: each one a value that
    makes a premise call ``f(v + c)`` one of ``calls`` (e-matching)."""
    rest = sorted(fvars - set(base), key=str)
    options: list[list[Aff]] = []
    for v in rest:
        found: dict[Aff, None] = {}
        for pc in _calls(premise):
            if len(_args(pc)) != 1 or not _args(pc)[0].has(v):
                continue
            for c in calls:
                if _func(c) == _func(pc) and len(_args(c)) == 1:
                    solved = _solve(((_args(pc)[0], _args(c)[0]),), {v})
                    if solved is not None:
                        found[solved[v]] = None
        options.append(list(found))
    for values in itertools.islice(itertools.product(*options), _MAX_INSTANCES):
        yield {**base, **dict(zip(rest, values, strict=True))}


def _implied(
    ir: ComputationIR, names: tuple[str, ...], pair: list[Constraint], is_eq: bool, e: Aff
) -> bool:
    """Whether ``pair`` implies ``e = 0`` (``is_eq``) or ``e >= 0``."""
    negations = [(False, e - 1), (False, -e - 1)] if is_eq else [(False, -e - 1)]
    return all(_is_empty(ir, names, [*pair, neg]) for neg in negations)


# ----------------------------------------------------------------------------- the groups
def groups(ir: ComputationIR, *, auto: bool = True, prove: bool = True) -> list[Group]:
    """The merges of the computation ``ir``: those ``stmt.coiterate`` asked for (checked again: a
    ``NotMergeableError`` says what no longer holds) and, with ``auto``, the intersections
    found in statements' domains whose order the facts prove (``prove``: also check the
    asked-for ones' order, as codegen must)."""
    out: list[Group] = []
    taken: set[str] = set()
    for s in ir.parsed_stmts:
        asked = declared(s)
        if asked is None:
            continue
        try:
            group = declared_group(ir, s, *asked, prove=prove)
        except NotMergeableError as err:
            j1, j2 = asked[:2]
            raise NotMergeableError(
                f"statement {s.name}: loops {j1} and {j2} cannot run as the merge "
                f"{tag_text(j2, *asked[2:])} asked for: {err}"
            ) from None
        clash = taken & set(group.stmts)
        if clash:
            raise NotMergeableError(
                f"statement {sorted(clash)[0]} is in two merges (stmt.coiterate); each "
                "statement may be in one"
            )
        taken |= set(group.stmts)
        out.append(group)
    if auto:
        for s in ir.parsed_stmts:
            found = None if s.name in taken else auto_group(ir, s)
            if found is not None:
                taken |= set(found.stmts)
                out.append(found)
    return out


def declared_group(
    ir: ComputationIR,
    stmt: StmtReading,
    j1: str,
    j2: str,
    left: str | None = None,
    right: str | None = None,
    *,
    prove: bool = True,
) -> Group:
    """The merge of loops ``j1``, ``j2`` of ``stmt`` (a union with ``left`` / ``right``),
    checked; ``NotMergeableError`` says what does not hold."""
    shape = split_domain(stmt, j1, j2)
    branches: list[Branch | None] = []
    for name, side in ((left, shape.left), (right, shape.right)):
        if name is None:
            branches.append(None)
            continue
        if name == stmt.name:
            raise NotMergeableError(f"its {side.var} side cannot be the statement itself")
        branches.append(split_branch(ir.parsed_stmt(name), shape, side))
    members = {stmt.name, *(b.stmt for b in branches if b is not None)}
    position, prefix, schedule, tags = _placement(ir, stmt, shape, members)
    for branch in branches:
        if branch is not None:
            _check_branch_schedule(ir, branch, shape, position, prefix)
    if shape.filters and any(branches):
        raise NotMergeableError(
            f"a union's {stmt.name} may constrain {j1} and {j2} only by their ranges and the "
            f"key equality, not by {_constraint_text(*shape.filters[0])}; move the condition "
            "into the statement's source"
        )
    if prove:
        for side in (shape.left, shape.right):
            reason = unsorted_reason(ir, shape, side)
            if reason is not None:
                raise NotMergeableError(reason)
    return Group(shape, position, prefix, schedule, tags, branches[0], branches[1], declared=True)


def auto_group(ir: ComputationIR, stmt: StmtReading) -> Group | None:
    """The merge of ``stmt``'s two innermost loops when its domain is one (an intersection)
    and the facts prove both lists sorted; None otherwise (the loops stay a nest)."""
    loops = stmt.loops
    if len(loops) < 2 or not _has_key_equality(stmt, loops[-2], loops[-1]):
        return None
    try:
        shape = split_domain(stmt, loops[-2], loops[-1])
        position, prefix, schedule, tags = _placement(ir, stmt, shape, {stmt.name})
    except NotMergeableError:
        return None
    if any(unsorted_reason(ir, shape, side) for side in (shape.left, shape.right)):
        return None
    return Group(shape, position, prefix, schedule, tags)


def _has_key_equality(stmt: StmtReading, j1: str, j2: str) -> bool:
    """A cheap look at the domain text: an equality whose sides are UF calls of ``j1`` and
    of ``j2`` (the full split only runs then)."""
    pattern = rf"\w+\({re.escape(j1)}\) = \w+\({re.escape(j2)}\)"
    backward = rf"\w+\({re.escape(j2)}\) = \w+\({re.escape(j1)}\)"
    text = str(stmt.domain)
    return re.search(pattern, text) is not None or re.search(backward, text) is not None


def _placement(
    ir: ComputationIR, stmt: StmtReading, shape: Shape, members: set[str]
) -> tuple[int, tuple[str, ...], str, dict[str, tuple[str, ...]]]:
    """Where the merge sits: the position of its first loop, the schedule outputs before
    it (as functions and as a relation), the tags of the loops around it. The two loops
    must be the statement's innermost, adjacent, scheduled as they are (no command changed
    them), untagged, and no statement outside ``members`` may share them."""
    j1, j2 = shape.left.var, shape.right.var
    width = ir.schedule_width
    outs = function_of(padded(stmt, width), shape.tuple_vars)
    if outs is None or j1 not in outs or j2 not in outs:
        raise NotMergeableError(
            f"its schedule {stmt.schedule} does not run loops {j1} and {j2} as they are in "
            "its domain (a command transformed them)"
        )
    p1, p2 = outs.index(j1), outs.index(j2)
    if p2 != p1 + 2 or not all(is_constant(o) for o in outs[p2 + 1 :]):
        raise NotMergeableError(
            f"loops {j1} and {j2} must be its two innermost loops, {j2} right inside {j1} "
            f"(its schedule is {stmt.schedule})"
        )
    mentioned = {w for o in outs[:p1] for w in re.findall(r"\w+", o)}
    if {j1, j2} & mentioned:
        raise NotMergeableError(f"its outer loops depend on {j1} or {j2} ({stmt.schedule})")
    tags = stmt.tags
    for loop in (j1, j2):
        extra = [t for t in tags.get(loop, ()) if parse_tag(t) is None]
        if extra:
            raise NotMergeableError(
                f"loop {loop} is tagged {', '.join(extra)}; a merge's loops carry no tags"
            )
    for other in ir.parsed_stmts:
        if other.name not in members and _shares(padded(other, width).out_vars, outs, p1):
            raise NotMergeableError(
                f"statement {other.name} shares the loops around {j1} (order it apart with "
                "after, or fuse it elsewhere): a merge holds only its own statements"
            )
    touched = {d for d, _ in (*stmt.reads, *stmt.writes)}
    for ds in ir.data_spaces:
        if ds.private in (j1, j2) and ds.name in touched:
            raise NotMergeableError(
                f"the local {ds.name!r} is private to loop {ds.private}, which a merge does not "
                "run as a loop; make it private to a loop around the merge"
            )
    outer = {loop: ts for loop, ts in tags.items() if loop not in (j1, j2)}
    schedule = _prefix_schedule(str(padded(stmt, width)), p1, shape)
    return p1, tuple(outs[:p1]), schedule, outer


def _prefix_schedule(text: str, p1: int, shape: Shape) -> str:
    """The schedule relation ``text`` cut before output ``p1``, over the outer iterators:
    its outputs there (named as the statement's loops) and the constraints that do not
    involve the merged loops."""
    from spf.sets.parse import parse_document

    piece = parse_document(text).pieces[0]
    assert piece.out_tuple is not None
    outs = [text[e.span[0] : e.span[1]] for e in piece.out_tuple]
    # the relation's own input names: a command may have renamed them (after a shift of
    # loop i the schedule reads {[i_, k, ..] -> [0, i, ..] : i = i_ - 1}), and the kept
    # constraints speak of those, not of the domain's names in shape.tuple_vars
    ins = dict(zip(shape.tuple_vars, (text[a:b] for a, b in _in_spans(piece)), strict=True))
    merged = {ins[shape.left.var], ins[shape.right.var]}
    dropped = merged | {w for o in outs[p1:] for w in _words(o)}
    conjuncts = [] if piece.formula is None else _conjuncts(piece.formula)
    kept = [text[a:b] for a, b in conjuncts if not _words(text[a:b]) & dropped]
    where = f" : {' && '.join(kept)}" if kept else ""
    outer = [ins[v] for v in shape.outer_vars]
    return f"{{[{', '.join(outer)}] -> [{', '.join(outs[:p1])}]{where}}}"


def _in_spans(piece: ast.Piece) -> list[tuple[int, int]]:
    """The spans of the input tuple's entries (plain names: a schedule's inputs)."""
    from spf.sets import syntax

    if not all(isinstance(e, syntax.Name) for e in piece.in_tuple):
        raise NotMergeableError("its schedule's input tuple is not a list of names")
    return [e.span for e in piece.in_tuple]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text))


def _conjuncts(f: ast.Formula) -> list[tuple[int, int]]:
    """The spans of the comparisons of a conjunction."""
    from spf.sets import syntax

    if isinstance(f, syntax.And):
        return [c for item in f.items for c in _conjuncts(item)]
    if isinstance(f, syntax.Compare):
        return [f.span]
    raise NotMergeableError("its schedule is a union of pieces")


def _shares(theirs: Sequence[str], ours: Sequence[str], p1: int) -> bool:
    """Whether a statement scheduled ``theirs`` may run inside the loop at position ``p1``
    of ``ours``: no constant before ``p1`` tells them apart."""
    return all(
        a == b or not (is_constant(a) and is_constant(b))
        for a, b in zip(theirs[: p1 + 1], ours[: p1 + 1], strict=True)
    )


def _check_branch_schedule(
    ir: ComputationIR, branch: Branch, shape: Shape, position: int, prefix: tuple[str, ...]
) -> None:
    """A union's statement runs in the merge: the schedule of ``shape``'s statement before
    the merge, then its position, nothing inside."""
    width = ir.schedule_width
    stmt = ir.parsed_stmt(branch.stmt)
    outs = function_of(padded(stmt, width), branch.tuple_vars)
    rename = dict(zip(branch.tuple_vars, (*shape.outer_vars, "_pos"), strict=True))
    want = (*prefix, "_pos")
    got = (
        None
        if outs is None
        else tuple(re.sub(r"\w+", lambda m: rename.get(m[0], m[0]), o) for o in outs)
    )
    if (
        got is None
        or got[: position + 1] != want
        or not all(is_constant(o) for o in got[position + 1 :])
    ):
        raise NotMergeableError(
            f"statement {branch.stmt} must be scheduled like {shape.stmt} up to the merge "
            f"([{', '.join(prefix)}, <its position>], then constants), not {stmt.schedule}"
        )


def coiterate_tags(
    ir: ComputationIR, stmt: StmtReading, i: str, j: str, left: str | None, right: str | None
) -> dict[str, tuple[str, ...]]:
    """``stmt``'s loop tags once ``stmt.coiterate(i, j, left, right)`` holds: the merge
    checked (:func:`declared_group`), no statement in two merges, the tag on loop ``i``
    (replacing an earlier ``coiterate`` tag); :class:`NotMergeableError` otherwise."""
    try:
        group = declared_group(ir, stmt, i, j, left, right)
    except NotMergeableError as err:
        raise NotMergeableError(
            f"coiterate: loops {i} and {j} of statement {stmt.name} cannot run as one merge: {err}"
        ) from None
    mine = set(group.stmts)
    for g in groups(ir, auto=False, prove=False):
        if g.stmt != stmt.name and mine & set(g.stmts):
            raise NotMergeableError(
                f"coiterate: statement {sorted(mine & set(g.stmts))[0]} already runs in "
                f"the merge of {g.stmt}; a statement is in one merge at most"
            )
    tags = {loop: tuple(t for t in ts if parse_tag(t) is None) for loop, ts in stmt.tags.items()}
    tags[i] = (*tags.get(i, ()), tag_text(j, left, right))
    return {loop: ts for loop, ts in tags.items() if ts}

"""Bounds proofs: every access of every statement instance lies inside its data space.

For a statement with domain ``D`` and an access ``A`` to a data space of shape
``(e_0, ..., e_{r-1})``, the instances that access outside the shape along dimension ``d``
are ``D ∩ A^-1({o : o_d < 0})`` (the lower side) and ``D ∩ A^-1({o : o_d >= e_d})`` (the
upper side). Each side has one of these outcomes:

* *proved*: the set is provably empty (isl for affine parts; declared UF ranges, domains
  and monotonicity for UF parts). It costs nothing at run time.
* *violated*: the set has no UF call, so isl decides it exactly, and the access is outside
  the shape for *every* parameter value at which the statement runs (all sides of all
  dimensions together): a definite bug. :func:`check_bounds` raises ``CodegenError`` naming
  the statement, the access and an offending instance.
* *precondition*: the same, but only for *some* of those parameter values (``r(0)`` with
  ``N = 0``). The report records a :class:`~spf.analysis.preconditions.Precondition`, the
  parameter condition under which the access is in bounds (``N >= 1``): codegen warns
  (:class:`~spf.errors.PreconditionWarning`) and a call with ``check=True`` verifies it.
* *obligation*: the set depends on UF values nothing bounds. The report records a fact in
  the ``assume`` syntax (docs/assumptions.md), ``forall i, k, j: <domain> => 0 <= j < M``,
  that the kernel's argument checks can verify.

Parameter values are those a kernel can be called with (:func:`call_context`): every extent
of every array argument is at least 0 (a call checks the shapes), within the parameter facts
of ``comp.assume``, so an assumption that implies a precondition removes it. An access that
runs only under a condition of the statement body (``(i + 1 < N) ? A(i + 1) : 0``) is never
refused nor made an obligation or a precondition: the proof cannot see the condition, so
such a side is ``unchecked``. Data spaces without a shape (``double*``) are skipped. Results
are cached per (domain, access, shape, context): scheduling commands do not change them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import islpy as isl

from spf.analysis.memo import as_ir, remembered
from spf.analysis.preconditions import Precondition, condition
from spf.analysis.sources import source_tree
from spf.errors import CodegenError, ParseError, SpfError
from spf.ir import OperationIR
from spf.ir.model import ARGUMENT_SCOPES
from spf.ir.reading import (
    buffer_of,
    data_space,
    describe_operation,
    iterator_names,
    storage_of,
)
from spf.sets import Relation, Set
from spf.sets.facts import is_empty_under, parameter_context
from spf.sets.parse import parse_document

if TYPE_CHECKING:
    from spf.analysis.memo import HasIR
    from spf.ir import ComputationIR
    from spf.ir.reading import ParsedStmt
    from spf.ir.source import ParsedSource
    from spf.sets import UF
    from spf.sets.facts import Fact

Side = Literal["lower", "upper"]
Outcome = Literal["proved", "violated", "precondition", "obligation", "unchecked"]


@dataclass(frozen=True, kw_only=True)
class Obligation:
    """What must hold for an access to stay in bounds when no proof exists (a fact in the
    ``comp.assume`` syntax, ``forall <vars>: <premise> => <conclusion>``).

    >>> o = Obligation(stmt="s0", access="x(col(i))", data_space="x", vars=("i",),
    ...                premise="0 <= i && i < N", conclusion="0 <= col(i) && col(i) < M")
    >>> o.text
    'forall i: 0 <= i && i < N => 0 <= col(i) && col(i) < M'
    """

    stmt: str
    """The statement whose instances access."""
    access: str
    """The access as text (``x(col(k))``)."""
    data_space: str
    vars: tuple[str, ...]
    """The quantified variables (the statement's iterators, then access outputs if any)."""
    premise: str
    """Constraint text over ``vars``: the domain (and the access relation when it is not a
    function of the iterators)."""
    conclusion: str
    """Constraint text: the bounds that could not be proved."""

    @property
    def text(self) -> str:
        """The fact in ``assume`` syntax."""
        head = f"forall {', '.join(self.vars)}: " if self.vars else ""
        if self.premise in ("", "true"):
            return f"{head}{self.conclusion}"
        return f"{head}{self.premise} => {self.conclusion}"

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, kw_only=True)
class AccessBounds:
    """The outcome for one access of one statement (every dimension and side)."""

    stmt: str
    access: str
    data_space: str
    kind: Literal["read", "write"]
    outcomes: tuple[tuple[int, Side, Outcome], ...]
    """``(dimension, side, outcome)`` for each dimension and side."""
    reason: str = ""
    """Why some side is unchecked (empty when none is)."""
    by_facts: tuple[tuple[int, Side], ...] = ()
    """``(dimension, side)`` of each side the UF-aware search proved with the quantified
    ``assume`` facts at hand (the UFs' declared ranges and the parameters alone did not
    decide it; whether it needed the facts, and which, :func:`unproved_without` says): a
    fact such a proof uses must hold before the access runs."""

    @property
    def proved(self) -> bool:
        """True when every side of every dimension is proved."""
        return all(o == "proved" for _, _, o in self.outcomes)


@dataclass(frozen=True, kw_only=True)
class Violation:
    """An access proved out of bounds for every parameter value at which it runs."""

    stmt: str
    access: str
    data_space: str
    kind: Literal["read", "write"]
    message: str
    """The full explanation (what ``CodegenError`` says)."""


@dataclass(frozen=True, kw_only=True)
class BoundsReport:
    """What :func:`analyze_bounds` found (``accesses`` in statement order)."""

    accesses: tuple[AccessBounds, ...]
    obligations: tuple[Obligation, ...]
    violations: tuple[Violation, ...]
    preconditions: tuple[Precondition, ...] = ()
    """Parameter conditions that keep accesses in bounds (one per access that is out of
    bounds for some parameter values only)."""

    @property
    def proved(self) -> tuple[AccessBounds, ...]:
        """Accesses proved in bounds on every dimension and side."""
        return tuple(a for a in self.accesses if a.proved)

    @property
    def unchecked(self) -> tuple[AccessBounds, ...]:
        """Accesses with a side no check is possible for (shape not affine)."""
        return tuple(a for a in self.accesses if a.reason)

    def raise_for_violations(self) -> None:
        """``CodegenError`` for the first violation, if any."""
        if self.violations:
            raise CodegenError(self.violations[0].message)


# ----------------------------------------------------------------------------- entry points
def check_bounds(comp: ComputationIR | HasIR) -> BoundsReport:
    """Prove every access of a computation (its IR, ``comp.ir``) in bounds; ``CodegenError``
    for the first access proved out of bounds for every parameter value at which its
    statement runs; the report lists what remains to check at run time (``obligations``
    over index arrays, ``preconditions`` over parameters).

    >>> import spf
    >>> report = check_bounds(spf.kernels.spmv_csr().ir)
    >>> len(report.proved), report.obligations
    (3, ())
    """
    from spf.analysis.index_ranges import settle_index_obligations

    ir = as_ir(comp, "check_bounds")
    report = analyze_bounds(ir)
    report.raise_for_violations()
    # a run-time index array's values exist only once statements wrote them: no check of
    # the arguments can see them, so obligations over them are proved with a range the
    # generated code checks where it reads the values, or refused
    return settle_index_obligations(ir, report)


def analyze_bounds(comp: ComputationIR | HasIR) -> BoundsReport:
    """Like :func:`check_bounds`, without raising: violations are in the report (remembered
    by ``ir.fingerprint``, :mod:`spf.analysis.memo`)."""
    ir = as_ir(comp, "analyze_bounds")
    return remembered(ir, ("bounds",), lambda: bounds_report(ir))


def bounds_report(ir: ComputationIR) -> BoundsReport:
    """:func:`analyze_bounds`, not remembered (of an IR the analysis derived itself)."""
    accesses: list[AccessBounds] = []
    obligations: list[Obligation] = []
    violations: list[Violation] = []
    preconditions: list[Precondition] = []
    context = _context_key(ir)
    for stmt in ir.parsed_stmts:
        for acc in _accesses(ir, stmt):
            extents = _extents(ir, acc.data_space)
            if extents is None:
                continue
            result = _check_access(ir, context, stmt.domain, acc.relation, extents)
            sides, reason = result.sides, result.reason
            if acc.guarded and any(o in _UNPROVED for _, _, o, _ in sides):
                # the body's condition may keep it in bounds: no error, no run-time check
                sides = tuple(
                    (d, sd, "unchecked" if o in _UNPROVED else o, w) for d, sd, o, w in sides
                )
                reason = _GUARDED
            accesses.append(
                AccessBounds(
                    stmt=stmt.name,
                    access=acc.text,
                    data_space=acc.data_space,
                    kind=acc.kind,
                    outcomes=tuple((d, sd, o) for d, sd, o, _ in sides),
                    reason=reason,
                    by_facts=result.by_facts,
                )
            )
            if result.obligation is not None and not acc.guarded:
                vars_, premise, conclusion = result.obligation
                obligations.append(
                    Obligation(
                        stmt=stmt.name,
                        access=acc.text,
                        data_space=acc.data_space,
                        vars=vars_,
                        premise=premise,
                        conclusion=conclusion,
                    )
                )
            if result.condition is not None and not acc.guarded:
                preconditions.append(
                    Precondition.make(
                        result.condition,
                        stmt=stmt.name,
                        access=acc.text,
                        data_space=acc.data_space,
                        kind=acc.kind,
                        example=result.example,
                    )
                )
            violations += [
                Violation(
                    stmt=stmt.name,
                    access=acc.text,
                    data_space=acc.data_space,
                    kind=acc.kind,
                    message=_violation_message(stmt, acc, extents, dim, side, witness),
                )
                for dim, side, outcome, witness in sides
                if outcome == "violated"
            ]
    return BoundsReport(
        accesses=tuple(accesses),
        obligations=tuple(obligations),
        violations=tuple(violations),
        preconditions=tuple(preconditions),
    )


_UNPROVED = ("violated", "precondition", "obligation")

_GUARDED = (
    "the access runs under a condition of the statement body (if, ?:, && or ||) that the "
    "proof cannot see"
)


# ----------------------------------------------------------------------------- the hooks
def _restrict(s: Relation | isl.Set, ir: ComputationIR) -> Relation | isl.Set:
    """``s`` within the parameter values a kernel can be called with: every extent of every
    array argument is at least 0 (no array has a negative extent, and a call checks the
    arrays' shapes). Parameter facts (``comp.assume("N >= 1")``) belong here too."""
    context = _parameter_context(ir)
    if context is None:
        return s
    if isinstance(s, isl.Set):
        return s.intersect_params(context)
    body = s._body  # one parameter constraint added at the isl level (cheap)
    return Relation._make(body.with_iset(body.iset.intersect_params(context)), s.ufs)


Proof = Literal["plain", "facts", ""]
"""How :func:`_provably_empty` proved a set empty: without the quantified facts
(``plain``), by the search that may use them (``facts``: whether it needed them is asked
only where it matters, :func:`unproved_without`), or not at all (empty)."""


def _provably_empty(s: Relation | isl.Set, ir: ComputationIR) -> Proof:
    """Whether ``s`` is provably empty for ``ir``, and how: every emptiness query of the
    bounds proofs goes through here (UF declarations, the parameter context of
    :func:`_restrict`, and the quantified ``assume`` facts over UFs). A plain isl test
    comes first: the set's isl form, each UF call's value a free dim kept within its UF's
    declared range, is empty (a row's positions past ``NNZ`` where ``rowptr`` lies in ``0
    .. NNZ``: most of a sparse output's sides); the UF-aware test decides the rest."""
    restricted = _restrict(s, ir)
    if isinstance(restricted, isl.Set):
        return "plain" if restricted.is_empty() else ""
    body = restricted._body
    first = len(body.names) + len(body.hidden)
    if values_in_ranges(body.iset, first, body.terms, restricted.ufs).is_empty():
        return "plain"
    if not _empty_under(restricted, ir.facts):
        return ""
    return "facts" if any(not f.is_parameter_fact for f in ir.facts) else "plain"


def _empty_under(s: Relation, facts: Sequence[Fact]) -> bool:
    """``s`` (restricted to the call context) is provably empty under ``facts``."""
    return is_empty_under(s, facts) if facts else bool(s.is_empty())


def values_in_ranges(
    iset: isl.Set, first: int, terms: Sequence[tuple[str, object]], ufs: Mapping[str, UF]
) -> isl.Set:
    """``iset`` (a UF-aware set's isl form) with the value of each UF call (dim ``first +
    k`` for the ``k``-th of ``terms``) within its UF's declared range, where the UF returns
    one value and declares a range (what any call's value satisfies): a sufficient test
    of emptiness or inclusion on it holds for the UF-aware set too."""
    n = iset.dim(isl.dim_type.set)
    for k, (name, _) in enumerate(terms):
        decl = ufs.get(name)
        if decl is None or decl.range is None or decl.out_arity != 1:
            continue
        values = decl.range.body_iset().reset_tuple_id()
        if values.dim(isl.dim_type.set) != 1:  # hidden variables or calls: left out
            continue
        values = values.insert_dims(isl.dim_type.set, 0, first + k)
        values = values.add_dims(isl.dim_type.set, n - first - k - 1)
        values = values.align_params(iset.get_space())
        iset = iset.align_params(values.get_space()).intersect(values)
    return iset


def _context_key(ir: ComputationIR) -> object:
    """What proofs depend on besides the statement and the access (cache key part)."""
    return (ir.ufs, _shapes(ir), ir.assumptions)


def _shapes(ir: ComputationIR) -> tuple[tuple[int | str, ...], ...]:
    """The shapes of the kernel's array arguments (a call checks them against the
    parameters): data spaces that are arguments, and argument buffers."""
    shapes: list[tuple[int | str, ...]] = [
        tuple(ds.shape)
        for ds in ir.data_spaces
        if ds.shape and ds.role == "data" and storage_of(ir, ds.name) is None
    ]
    shapes += [tuple(b.shape) for b in ir.buffers if b.scope in ARGUMENT_SCOPES and b.shape]
    return tuple(sorted(set(shapes), key=str))


def call_context(ir: ComputationIR) -> isl.Set | None:
    """The parameter values a kernel of ``ir`` can be called with (None: any): every array
    argument's extent is at least 0, and the parameter facts of ``comp.assume`` hold."""
    return _parameter_context(ir)


def _parameter_context(ir: ComputationIR) -> isl.Set | None:
    """Non-negative array extents, and the parameter facts of ``comp.assume``."""
    extents = _extent_context(_shapes(ir))
    facts = parameter_context(ir.facts)
    if facts is None or extents is None:
        return extents if facts is None else facts
    return extents.intersect(facts)


@functools.cache
def _extent_context(shapes: tuple[tuple[int | str, ...], ...]) -> isl.Set | None:
    conds = sorted({f"{e} >= 0" for shape in shapes for e in shape if not isinstance(e, int)})
    context = None
    for cond in conds:
        try:
            _check_affine(cond[: -len(" >= 0")])
            one = isl.Set(f"[{', '.join(sorted(_words(cond)))}] -> {{ : {cond} }}")
        except (ParseError, SpfError, isl.Error):
            continue
        context = one if context is None else context.intersect(one)
    return context


# ----------------------------------------------------------------------------- one access
@dataclass(frozen=True)
class _Result:
    sides: tuple[tuple[int, Side, Outcome, str], ...]
    """``(dimension, side, outcome, detail)``; detail: the witness text of a violation."""
    obligation: tuple[tuple[str, ...], str, str] | None
    reason: str
    condition: str | None = None
    """The precondition (``assume`` text) of sides out of bounds for some values only."""
    example: str = ""
    """An offending instance outside the precondition."""
    by_facts: tuple[tuple[int, Side], ...] = ()
    """The sides proved only with the quantified facts (:attr:`AccessBounds.by_facts`)."""


_CACHE: dict[object, _Result] = {}
_CACHE_LIMIT = 4096


def _check_access(
    ir: ComputationIR,
    context: object,
    domain: Set,
    rel: Relation,
    extents: tuple[int | str, ...],
) -> _Result:
    key = (domain, rel, extents, context)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _prove(ir, domain, rel, extents)
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = hit
    return hit


def _prove(
    ir: ComputationIR, domain: Set, rel: Relation, extents: tuple[int | str, ...]
) -> _Result:
    its = list(iterator_names(domain))
    outs = _fresh([f"_o{d}" for d in range(len(extents))], its)
    pairs = _pairs(domain, rel)
    sides: list[tuple[int, Side, Outcome, str]] = []
    unproved: list[tuple[int, Side]] = []
    unchecked: list[str] = []
    bad_params: list[isl.Set] = []
    by_facts: list[tuple[int, Side]] = []
    example = ""
    for d, extent in enumerate(extents):
        for side in ("lower", "upper"):
            try:
                bad = _outside(pairs, len(its) + d, side, extent)
            except (ParseError, SpfError, isl.Error):
                sides.append((d, side, "unchecked", ""))
                unchecked.append(f"extent {extent!r} is not affine in the parameters")
                continue
            proof = _provably_empty(bad, ir)
            if proof:
                sides.append((d, side, "proved", ""))
                by_facts += [(d, side)] if proof == "facts" else []
            elif isinstance(bad, isl.Set):  # no UF call: isl's answer is exact
                found = _restrict(bad, ir)
                assert isinstance(found, isl.Set)
                witness = _witness(found, [*its, *outs], len(its))
                example = example or witness
                sides.append((d, side, "violated", witness + _param_condition(found)))
                bad_params.append(found.params())
            else:
                sides.append((d, side, "obligation", ""))
                unproved.append((d, side))
    obligation = _obligation(domain, rel, extents, its, outs, unproved) if unproved else None
    reason = "; ".join(sorted(set(unchecked)))
    cond = _precondition(ir, pairs, bad_params) if bad_params else None
    if cond is None:
        return _Result(tuple(sides), obligation, reason, by_facts=tuple(by_facts))
    partial: Outcome = "precondition"
    sides = [(d, sd, partial if o == "violated" else o, w) for d, sd, o, w in sides]
    return _Result(tuple(sides), obligation, reason, cond, example, tuple(by_facts))


def _precondition(
    ir: ComputationIR, pairs: Relation | isl.Set, bad_params: list[isl.Set]
) -> str | None:
    """The parameter condition keeping the access in bounds, or None when it is out of
    bounds wherever it accesses anything (``pairs``: its UF-free instances and indices)."""
    accessed = _restrict(pairs, ir)
    assert isinstance(accessed, isl.Set)
    run = accessed.params()
    bad = bad_params[0]
    for more in bad_params[1:]:
        bad = bad.union(more)
    context = _parameter_context(ir)
    if context is None:
        context = isl.Set.universe(run.get_space())
    return condition(run, bad, context)


def _pairs(domain: Set, rel: Relation) -> Relation | isl.Set:
    """``{[iterators] -> [outputs] : iterators in domain, outputs = access(iterators)}``: an
    isl set (dims ``__t0 ...``: iterators then outputs) when nothing calls a UF."""
    if not domain.uf_calls and not rel.uf_calls:
        n, width = domain.arity, rel.out_arity
        dom = domain.body_iset().add_dims(isl.dim_type.set, width)
        acc = rel.body_iset()
        for k in range(n + width):
            dom = dom.set_dim_name(isl.dim_type.set, k, f"__t{k}")
            acc = acc.set_dim_name(isl.dim_type.set, k, f"__t{k}")
        return dom.intersect(acc)
    return rel.intersect_domain(domain)


def _outside(
    pairs: Relation | isl.Set, pos: int, side: Side, extent: int | str
) -> Relation | isl.Set:
    """The part of ``pairs`` whose tuple entry ``pos`` is below 0 or not below ``extent``."""
    text = f"__t{pos} < 0" if side == "lower" else f"__t{pos} >= {extent}"
    if side == "upper":
        _check_affine(str(extent))
    if isinstance(pairs, isl.Set):
        params = sorted(set(_param_names(pairs)) | set(_words(str(extent))))
        dims = ", ".join(f"__t{k}" for k in range(pairs.dim(isl.dim_type.set)))
        return pairs.intersect(isl.Set(f"[{', '.join(params)}] -> {{ [{dims}] : {text} }}"))
    body = pairs._body  # one constraint added at the isl level (cheap; no re-canonicalising)
    return Relation._make(body.with_iset(body.iset.intersect(body.space_set(text))), pairs.ufs)


def _param_names(s: isl.Set) -> list[str]:
    return [str(s.get_dim_name(isl.dim_type.param, k)) for k in range(s.dim(isl.dim_type.param))]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text) if w not in ("floor", "ceil")}


@functools.cache
def _check_affine(extent: str) -> None:
    """``ParseError`` unless ``extent`` is an affine expression of parameters."""
    Set(f"{{[_x] : _x < {extent}}}")


def _fresh(wanted: list[str], taken: Iterable[str]) -> list[str]:
    used = set(taken)
    out = []
    for name in wanted:
        while name in used:
            name += "_"
        used.add(name)
        out.append(name)
    return out


# ----------------------------------------------------------------------------- accesses
@dataclass(frozen=True)
class _Access:
    kind: Literal["read", "write"]
    data_space: str
    relation: Relation
    text: str
    guarded: bool
    """True when it runs only under a condition of the statement body."""


def _accesses(ir: ComputationIR, stmt: ParsedStmt) -> list[_Access]:
    """Each distinct access of ``stmt`` (reads first)."""
    from spf.ir.source.guards import guarded_accesses

    out: list[_Access] = []
    seen: set[tuple[str, Relation]] = set()
    op = stmt.record if isinstance(stmt.record, OperationIR) else None
    parsed = source_tree(ir, stmt)
    guarded = frozenset() if op is not None else guarded_accesses(parsed)
    kinds: tuple[tuple[Literal["read", "write"], str], ...] = (
        ("read", "reads"),
        ("write", "writes"),
    )
    for kind, attr in kinds:
        accs = getattr(stmt, attr)
        written = _written(parsed, attr, [ds for ds, _ in accs])
        for k, (ds, rel) in enumerate(accs):
            if (ds, rel) in seen:
                continue
            seen.add((ds, rel))
            index = written[k] if written else None
            if op is not None:
                what = describe_operation(op.kind, op.target, op.index, op.count, op.peer)
                text = f"{ds} in {what}"
            else:
                text = _access_text(ds, rel, stmt, index)
            out.append(_Access(kind, ds, rel, text, (ds, index) in guarded))
    return out


def _written(source: ParsedSource, attr: str, spaces: list[str]) -> list[tuple[str, ...]] | None:
    """The index texts of the accesses as the source writes them, when the source's
    accesses are the statement's (same data spaces in the same order), else None."""
    parsed = getattr(source, attr)
    if [a.data_space for a in parsed] != spaces:
        return None
    return [tuple(a.indices) for a in parsed]


def _access_text(ds: str, rel: Relation, stmt: ParsedStmt, written: tuple[str, ...] | None) -> str:
    """``A(i + 1, j)``: the access as the source writes it, else as a function of the
    iterators, else the relation."""
    exprs = written if written is not None else rel.as_function(list(iterator_names(stmt.domain)))
    if exprs is None:
        return f"{ds} {rel}"
    return f"{ds}({', '.join(exprs)})"


def _extents(ir: ComputationIR, name: str) -> tuple[int | str, ...] | None:
    """The shape of a data space (or a buffer accessed by name), None when unknown or 0-d."""
    ds = data_space(ir, name)
    buffer = buffer_of(ir, name)
    shape: tuple[int | str, ...] | None
    if ds is not None:
        shape = ds.shape
    elif buffer is not None:
        shape = tuple(buffer.shape)
    else:
        return None
    return shape or None


# ----------------------------------------------------------------------------- messages
def _first(s: isl.Set) -> isl.Point:
    """The lexicographically first point of ``s``, or any point when ``s`` has no first
    one (unbounded below)."""
    try:
        return s.lexmin().sample_point()
    except isl.Error:
        return s.sample_point()


def _witness(bad: isl.Set, names: list[str], n_its: int) -> str:
    """An offending instance of a UF-free set over ``[iterators, outputs]``: ``i = 9, j = 0
    with N = 10 (index (10))`` (parameters set to 10 where that works, else any values)."""
    params = _param_names(bad)
    point = None
    for value in (10, 100):
        fixed = bad
        for k in range(len(params)):
            fixed = fixed.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(bad.get_ctx(), value))
        if not fixed.is_empty():
            point = _first(fixed)
            break
    if point is None:  # parameters from any point, then the first instance for them
        any_point = bad.sample_point()
        fixed = bad
        for k in range(len(params)):
            fixed = fixed.fix_val(
                isl.dim_type.param, k, any_point.get_coordinate_val(isl.dim_type.param, k)
            )
        point = _first(fixed)
    coords = [_coord(point, isl.dim_type.set, k) for k in range(len(names))]
    values = [_coord(point, isl.dim_type.param, k) for k in range(len(params))]
    inst = ", ".join(f"{names[k]} = {coords[k]}" for k in range(n_its)) or "its only instance"
    with_params = ", ".join(f"{p} = {v}" for p, v in sorted(zip(params, values, strict=True)))
    index = ", ".join(str(c) for c in coords[n_its:])
    text = inst + (f" with {with_params}" if with_params else "")
    return f"{text} (index ({index}))"


def _param_condition(bad: isl.Set) -> str:
    """``, whenever M <= 0 and N > 0``: the parameter values with a violation."""
    params = bad.params().coalesce()
    if params.plain_is_universe() or not _param_names(params):
        return ""
    text = str(params)
    cond = text[text.find(":") + 1 : text.rfind("}")].strip()
    return f", whenever {cond}" if cond and "exists" not in cond else ""


def _coord(point: isl.Point, kind: isl.dim_type, k: int) -> int:
    return int(point.get_coordinate_val(kind, k).to_python())


def _violation_message(
    stmt: ParsedStmt,
    acc: _Access,
    extents: tuple[int | str, ...],
    dim: int,
    side: Side,
    witness: str,
) -> str:
    shape = ", ".join(str(e) for e in extents)
    bound = "below 0" if side == "lower" else f"at or above its extent {extents[dim]}"
    verb = "reads" if acc.kind == "read" else "writes"
    return (
        f"statement {stmt.name} {verb} {acc.text} outside data space {acc.data_space!r} of "
        f"shape ({shape}): index {dim} can be {bound}, e.g. at {witness}; fix the domain or "
        f"the index, enlarge the data space, or, if those parameter values never occur, say "
        f"so with comp.assume(...) (codegen(check=False) skips this check)"
    )


# ----------------------------------------------------------------------------- obligations
def _obligation(
    domain: Set,
    rel: Relation,
    extents: tuple[int | str, ...],
    its: list[str],
    outs: list[str],
    unproved: list[tuple[int, Side]],
) -> tuple[tuple[str, ...], str, str]:
    """``(vars, premise, conclusion)`` of the fact that the unproved sides hold."""
    exprs = rel.as_function(its)
    if exprs is not None:
        vars_ = tuple(its)
        premise = _constraints(domain, its)
        index = [_paren(e) for e in exprs]
    else:  # not a function of the iterators (min/max pieces): quantify over the outputs
        vars_ = (*its, *outs)
        premise = _constraints(rel.intersect_domain(domain).as_set(), [*its, *outs])
        index = list(outs)
    by_dim: dict[int, list[Side]] = {}
    for d, side in unproved:
        by_dim.setdefault(d, []).append(side)
    parts = []
    for d, sides in sorted(by_dim.items()):
        extent = _paren(str(extents[d]))
        if len(sides) == 2:
            parts.append(f"0 <= {index[d]} < {extent}")
        elif sides[0] == "lower":
            parts.append(f"0 <= {index[d]}")
        else:
            parts.append(f"{index[d]} < {extent}")
    return vars_, premise, " && ".join(parts)


def _constraints(s: Set, names: list[str]) -> str:
    """The constraints of ``s`` as text over ``names`` (its tuple, renamed): pieces joined by
    ``||``."""
    named = Set(f"{{[{', '.join(names)}]}}").intersect(s)
    doc = parse_document(str(named))
    pieces = []
    for piece in doc.pieces:
        if piece.formula is None:
            pieces.append("true")
        else:
            start, end = piece.formula.span
            pieces.append(doc.text[start:end])
    if len(pieces) == 1:
        return pieces[0]
    return " || ".join(f"({p})" for p in pieces)


def _paren(text: str) -> str:
    simple = text.replace("_", "").isalnum() or text.lstrip("-").isdigit()
    return text if simple or _balanced_call(text) else f"({text})"


def _balanced_call(text: str) -> bool:
    """``col(k)``-like: a name applied to one parenthesised group."""
    head, sep, rest = text.partition("(")
    if not sep or not head.isidentifier() or not rest.endswith(")"):
        return False
    depth = 1
    for ch in rest[:-1]:
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return False
    return True


def unproved_without(
    ir: ComputationIR, report: BoundsReport, facts: Sequence[Fact]
) -> tuple[frozenset[str], ...]:
    """The sides of ``report`` (:func:`analyze_bounds` of ``ir``) proved with the quantified
    facts (:attr:`AccessBounds.by_facts`) that ``facts`` (some of ``ir.facts``) do not
    prove, each as the names of the UFs its out-of-bounds set calls (empty when every such
    side is proved): the facts left out are then needed before the access runs. Only those
    sides are proved again (a kernel without them costs nothing here)."""
    wanted = {(a.stmt, a.access, a.data_space, a.kind): a.by_facts for a in report.accesses}
    wanted = {k: v for k, v in wanted.items() if v}
    if not wanted:
        return ()
    out: list[frozenset[str]] = []
    for stmt in ir.parsed_stmts:
        if not any(k[0] == stmt.name for k in wanted):
            continue
        for acc in _accesses(ir, stmt):
            sides = wanted.get((stmt.name, acc.text, acc.data_space, acc.kind), ())
            extents = _extents(ir, acc.data_space) if sides else None
            if not sides or extents is None:
                continue
            pairs = _pairs(stmt.domain, acc.relation)
            width = len(iterator_names(stmt.domain))
            for d, side in sides:
                bad = _restrict(_outside(pairs, width + d, side, extents[d]), ir)
                assert isinstance(bad, Relation)  # a side by facts calls UFs
                if not _empty_under(bad, facts):
                    out.append(frozenset(c.split("(", 1)[0] for c in bad.uf_calls))
    return tuple(out)


def clear_cache() -> None:
    """Forget cached proofs (tests; proofs never go stale, the key holds their inputs)."""
    _CACHE.clear()


__all__: list[str] = [
    "AccessBounds",
    "BoundsReport",
    "Obligation",
    "Violation",
    "analyze_bounds",
    "call_context",
    "check_bounds",
    "clear_cache",
    "unproved_without",
]

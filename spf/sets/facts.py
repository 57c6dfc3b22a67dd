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
conclusion`` is added only when the current sample point violates it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import islpy as isl
import sympy as sp

from spf.errors import ParseError, SpfError
from spf.sets import emptiness
from spf.sets.body import canonical, lift_pair
from spf.sets.linear import DT, basic_constraints, dnf, free_names, sym, to_isl, tsym, usym
from spf.sets.printer import display_map
from spf.sets.set_like import Set, _SetLike

if TYPE_CHECKING:
    from spf.sets.body import Body
    from spf.sets.uf import UF

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

    @property
    def ufs(self) -> frozenset[str]:
        """Names of the UFs the fact calls."""
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
            raise SpfError(f"an assumption is text, got {type(text).__name__}")
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
    from spf.sets.uf import UF

    arity = next(len(args) for n, args in _body(s).terms if n == name)
    return UF(name, arity=arity)


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
    points a run-time check visits: elsewhere the index arrays have no values)."""
    premise, _ = lift_pair(_body(fact.premise), _body(fact.conclusion))
    iset = premise.iset
    for name, args in premise.terms:
        decl = ufs.get(name)
        if decl is not None and decl.domain is not None:
            iset = iset.intersect(emptiness.preimage(premise, decl.domain.body_iset(), list(args)))
    body = canonical(premise.with_iset(iset))
    return Set._make(body, {**fact.premise.ufs, **fact.conclusion.ufs, **ufs})


def condition_terms(s: Set) -> list[list[tuple[bool, sp.Expr]]]:
    """``s``'s constraints as conjunctions (one per disjunct) of ``(is_equality, e)`` meaning
    ``e = 0`` / ``e >= 0``, over the tuple names, parameters and UF calls (sympy functions).
    ``SpfError`` when ``s`` has existential variables."""
    body = _body(s)
    if body.hidden:
        raise SpfError(f"{s}: a condition with existential variables cannot be evaluated")
    show = display_map(body)
    out = []
    for conj in dnf(body.iset, body.dim_syms()):
        out.append([(is_eq, sp.expand(e.xreplace(show))) for is_eq, e in conj])
    return out


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
    context: isl.Set | None = None
    quantified: list[Fact] = []
    for f in facts:
        if f.is_parameter_fact:
            ctx = emptiness.preimage(body, _body(f.conclusion).iset, [])
            context = ctx if context is None else context.intersect(ctx)
        else:
            quantified.append(f)
    oracle = _Instances(body, quantified) if quantified else None
    return emptiness.is_empty(body, ufs, context=context, oracle=oracle)


class _Instances:
    """The instances of facts on one body's calls, built lazily; the oracle of the search."""

    def __init__(self, body: Body, facts: Sequence[Fact]) -> None:
        self.body = body
        self.pending: Iterator[tuple[Body, Body, list[sp.Expr]]] = self._matches(facts)
        self.sets: list[isl.Set] = []

    def _matches(self, facts: Sequence[Fact]) -> Iterator[tuple[Body, Body, list[sp.Expr]]]:
        count = 0
        for f in facts:
            for premise, conclusion in _pieces(f):
                if premise.hidden:
                    continue  # existential variables in a fact: not instantiated
                for exprs in _ematch(premise, self.body):
                    count += 1
                    if count > _MAX_INSTANCES:
                        return
                    yield premise, conclusion, exprs

    def __call__(self, point: isl.Point) -> isl.Set | None:
        """An instance the point violates (a set to intersect with), or None."""
        here = isl.Set.from_point(point)
        for inst in self.sets:
            if not _contains(inst, here):
                return inst
        for premise, conclusion, exprs in self.pending:
            p = emptiness.preimage(self.body, premise.iset, exprs)
            c = emptiness.preimage(self.body, conclusion.iset, exprs)
            inst = p.complement().union(c).coalesce()
            self.sets.append(inst)
            if not _contains(inst, here):
                return inst
        return None


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


def _ematch(fact: Body, body: Body) -> Iterator[list[sp.Expr]]:
    """Each way to map the fact's dims (vars, then UF values) to expressions over ``body``'s
    dims such that every UF call of the fact is a call of ``body``."""
    nvars = fact.n_tuple
    rename = {tsym(j): _fvar(j) for j in range(nvars)}
    rename |= {usym(m): _fval(m) for m in range(len(fact.terms))}
    terms = [(name, [a.xreplace(rename) for a in args]) for name, args in fact.terms]

    def walk(m: int, sub: dict[sp.Symbol, sp.Expr]) -> Iterator[dict[sp.Symbol, sp.Expr]]:
        if m == len(terms):
            yield sub
            return
        name, args = terms[m]
        for k, (bname, bargs) in enumerate(body.terms):
            if bname != name or len(bargs) != len(args):
                continue
            new = _unify(args, bargs, sub)
            if new is not None:
                new[_fval(m)] = usym(k)
                yield from walk(m + 1, new)

    for sub in walk(0, {}):
        exprs = [sub.get(_fvar(j)) for j in range(nvars)]
        if any(e is None for e in exprs):
            continue  # a variable no UF argument determines
        yield [*(e for e in exprs if e is not None), *(sub[_fval(m)] for m in range(len(terms)))]


def _fvar(j: int) -> sp.Symbol:
    return sym(f"__fv{j}")


def _fval(m: int) -> sp.Symbol:
    return sym(f"__fu{m}")


def _unify(
    args: Sequence[sp.Expr], bargs: Sequence[sp.Expr], sub: dict[sp.Symbol, sp.Expr]
) -> dict[sp.Symbol, sp.Expr] | None:
    """``sub`` extended so that each fact argument equals the body's (None: impossible)."""
    new = dict(sub)
    for a, b in zip(args, bargs, strict=True):
        a = sp.expand(a.xreplace(new))
        unknown = [s for s in a.free_symbols if isinstance(s, sp.Symbol) and _is_fact_sym(s)]
        if not unknown:
            if sp.expand(a - b) != 0:
                return None
            continue
        if len(unknown) > 1 or unknown[0].name.startswith("__fu"):
            return None
        v = unknown[0]
        coeff = a.coeff(v)
        if coeff not in (1, -1):
            return None
        new[v] = sp.expand((b - (a - coeff * v)) / coeff)
    return new


def _is_fact_sym(s: sp.Symbol) -> bool:
    return str(s.name).startswith(("__fv", "__fu"))


__all__ = ["Fact", "is_empty_under"]

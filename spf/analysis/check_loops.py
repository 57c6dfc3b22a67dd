"""The loop nest that checks facts at run time, as a small computation (an IR, API.md §16).

Each fact ``forall vars: premise => conclusion`` becomes one statement over its check domain
(the premise where every UF call it makes is inside the UF's declared domain) that counts
the points where the conclusion fails and, in the recording form, keeps the first one in
lexicographic order. :class:`spf.runtime.fact_check.FactChecker` compiles it as a kernel of
its own; :mod:`spf.codegen.each_call` prints it into a kernel's checked function.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from spf.errors import CodegenError
from spf.ir import build
from spf.sets.affine import Aff, Atom, Call, Floor, Sym
from spf.sets.calls import call_text
from spf.sets.facts import Fact, check_domain, condition_terms

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.sets import UF, Set


@dataclass(frozen=True)
class CheckLoops:
    """The check computation (an IR), the stride of its record (fact ``n``'s count at
    ``n * stride``, its first violating point after it) and the record's name."""

    ir: ComputationIR
    stride: int
    record: str


def check_loops(
    name: str,
    facts: Sequence[Fact],
    ufs: Mapping[str, UF],
    *,
    counting: bool = False,
    avoid: frozenset[str] = frozenset(),
) -> CheckLoops:
    """The computation ``name`` checking ``facts``, one statement each. ``counting``: the
    statements only count the violations (``n += !(holds)``: no branch, so the compiler
    vectorizes the loops); else each also records its first violating point. ``avoid``:
    names the record must not take."""
    comp = build.computation(name)
    used: set[str] = set()
    params: set[str] = set()
    domains = []
    for f in facts:
        domain = check_domain(f, ufs)
        check_bounded(f, domain)
        domains.append(domain)
        used |= f.ufs | {c.split("(", 1)[0] for c in domain.uf_calls}
        params |= set(f.params) | domain.params
    indexing = _indexing(facts, domains)
    for name_ in sorted(used):
        decl = ufs.get(name_)
        if decl is None:
            continue
        # a UF whose values the checks only compare is read as it is (no range test:
        # the kernel's own loops test it), so the check loops have no branch to record
        keep = name_ in indexing or decl.monotonic is not None
        comp = build.declare_uf(
            comp,
            name_,
            arity=decl.arity,
            domain=decl.domain,
            range=decl.range if keep else None,
            monotonic=decl.monotonic,
            dtype=decl.dtype,
            out_arity=decl.out_arity,
            inverse=decl.inverse,
        )
        for s in (decl.domain, decl.range):
            if s is not None:
                params |= s.params
    for p in sorted(params):
        comp = build.add_constant(comp, p)
    # counts and first violating points, in one array (a name no fact uses; spf's own
    # ``spf_`` prefix is reserved for generated code, not for data spaces):
    # fact n's count at n * stride, its first violating point after it
    taken = set(comp.params) | {u.name for u in comp.ufs} | {v for f in facts for v in f.vars}
    taken |= avoid
    stride = 1 + max((len(f.vars) for f in facts), default=0)
    record = _fresh("violations", taken)
    comp = build.add_data_space(comp, record, "int64_t", (len(facts) * stride,))
    loops = _shared_loops(domains)
    for n, (f, domain) in enumerate(zip(facts, domains, strict=True)):
        base = n * stride
        point = " ".join(f"${record}$({base + 1 + k}) = {v};" for k, v in enumerate(f.vars))
        source = (
            f"${record}$({base}) += !({condition_c(f.conclusion, branch_free=True)});"
            if counting
            else f"if (!({condition_c(f.conclusion)})) {{ "
            f"if (${record}$({base}) == 0) {{ {point} }} ${record}$({base}) += 1; }}"
        )
        vs = list(domain.tuple_vars)
        # one loop over the first variable for the facts whose first loops have the same
        # bounds (a row's facts read its entries while they are in cache), each fact's own
        # loops inside it: every fact's points still run in lexicographic order (its first
        # point recorded)
        sched = ", ".join([str(loops[n]), vs[0], str(n), *(f"{v}, 0" for v in vs[1:])] if vs
                          else [str(max(loops, default=-1) + 1), "0", str(n)])  # fmt: skip
        comp = build.add_stmt(comp, source, str(domain), f"{{[{', '.join(vs)}] -> [{sched}]}}")
    return CheckLoops(comp, stride, record)


def _shared_loops(domains: Sequence[Set]) -> list[int]:
    """The outermost loop each check domain's first variable is scanned in (-1: it has no
    variable): one loop for the domains whose first variables have the same bounds. Loops
    over different ranges (the levels of a CSF tensor: positions of level 1, fibers of
    level 2, ...) are kept apart: fused, the scanner would split them into a piece per
    overlap of the ranges, each with every fact's guards (three CSF levels' checks: twice
    the code, seven times the scanning time and twice the compiler time of three loops)."""
    keys: list[frozenset[tuple[bool, Aff]] | None] = []
    out = []
    for domain in domains:
        if not domain.tuple_vars:
            out.append(-1)
            continue
        key = _first_loop_bounds(domain)
        if key is None or key not in keys:
            keys.append(key)
            out.append(len(keys) - 1)
        else:
            out.append(keys.index(key))
    return out


def _first_loop_bounds(domain: Set) -> frozenset[tuple[bool, Aff]] | None:
    """The constraints of ``domain`` on its first variable alone, that variable renamed to
    one name (None: a union or hidden variables, whose loops are not compared)."""
    from spf.analysis.fact_plan import conjunction  # not at import: a warm load needs none

    terms = conjunction(domain)
    if terms is None:
        return None
    first, *others = domain.tuple_vars
    var = Sym("__first").aff()
    out = set()
    for eq, e in terms:
        names = e.free_names()
        if first in names and not names.intersection(others):
            out.add((eq, e.xreplace({Sym(first): var})))
    return frozenset(out)


def _c(e: Aff) -> str:
    """C text of an affine expression whose atoms are names and UF calls (a sum's terms
    in the order of their text)."""
    if not e.coeffs:
        if e.const.denominator == 1:
            return str(int(e.const))
    elif len(e.coeffs) == 1 and not e.const:
        ((a, c),) = e.coeffs.items()
        if c == 1:
            return _atom_c(a, e)
        if c.denominator == 1:
            return f"{int(c)} * ({_atom_c(a, e)})"
    else:
        terms = [Aff({a: c}, Fraction(0)) for a, c in e.coeffs.items()]
        if e.const:
            terms.append(Aff({}, e.const))
        return " + ".join(f"({_c(t)})" for t in sorted(terms, key=str))
    raise CodegenError(f"cannot check {e} at run time (only affine expressions and UF calls)")


def _atom_c(a: Atom, e: Aff) -> str:
    if isinstance(a, Sym):
        return a.name
    if isinstance(a, Call):
        return call_text(a, _c)
    raise CodegenError(f"cannot check {e} at run time (only affine expressions and UF calls)")


def condition_c(conclusion: Set, *, branch_free: bool = False) -> str:
    """The conclusion of a fact as a C condition over its variables (UF calls as macros).

    ``branch_free``: every comparison evaluated and combined with ``&`` and ``|`` (0 or 1
    each) instead of ``&&`` and ``||``, which branch after each comparison. The counting form
    takes it: every UF call of a fact lies in its declared domain at each point of the check
    domain (:func:`~spf.sets.facts.check_domain`) and a comparison has no side effect, so
    evaluating them all reads nothing the short-circuit form would not may; a row check
    whose two comparisons branched (``rowptr(i) <= diag(i) < rowptr(i+1)``) kept its loop
    from being vectorized (``ilu0_csr``'s checks on ``zenios``: 19.7 us to 17.7 us a
    checked call, C-level, interleaved, on the loaded 2-core machine)."""
    conj_op, disj_op = (" & ", " | ") if branch_free else (" && ", " || ")
    disjuncts = []
    for conj in condition_terms(conclusion):
        parts = [f"{_c(e)} {'==' if is_eq else '>='} 0" for is_eq, e in conj]
        if branch_free and len(parts) > 1:
            parts = [f"({p})" for p in parts]
        disjuncts.append(conj_op.join(parts) or "1")
    return disj_op.join(f"({d})" for d in disjuncts) or "0"


def _indexing(facts: Sequence[Fact], domains: Sequence[Set]) -> set[str]:
    """The UFs whose values some check uses other than in a comparison: in its check domain
    (a loop bound) or as the argument of another UF call (an index)."""
    out: set[str] = set()
    for f, domain in zip(facts, domains, strict=True):
        for c in domain.uf_calls:  # nested calls included
            out |= set(re.findall(r"(\w+)\s*\(", c))
        for conj in condition_terms(f.conclusion):
            for _, e in conj:
                for fn in _functions(e):
                    for a in fn.args if isinstance(fn, Call) else (fn.arg,):
                        out |= {_function_name(g) for g in _functions(a)}
    return out


def _functions(e: Aff) -> set[Call | Floor]:
    """The UF calls and floors anywhere in ``e``."""
    return {*e.calls(), *e.floors()}


def _function_name(f: Call | Floor) -> str:
    return f.base if isinstance(f, Call) else "floor"


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def check_bounded(fact: Fact, domain: Set) -> None:
    """Every variable needs a lower and an upper bound, else the check loop never ends."""
    from spf.sets.facts import unbounded_var

    var = unbounded_var(domain)
    if var is not None:
        raise CodegenError(
            f"the assumption {fact.text!r} cannot be checked at run time: variable {var!r} "
            "is unbounded; bound it in the premise (e.g. '0 <= k < NNZ => ...') or declare "
            "the domains of the UFs it indexes"
        )

"""Run-time checks of facts (``assume``) on kernel arguments, by generated C.

Each fact ``forall vars: premise => conclusion`` becomes a small spf Computation of its own: one
statement whose domain is the premise (restricted to where every UF call it makes is inside
the UF's declared domain) and whose body counts the points where the conclusion fails and
records the first one in lexicographic order. It is scanned, printed and compiled like any
computation (cached on disk), so the loop over the premise is C, not Python. A fact over
parameters only is evaluated on the parameter values.

:class:`FactChecker` takes any list of facts, e.g. obligations of the form
``forall i, k, j: <domain> => 0 <= j < M`` that a bounds proof could not discharge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError, CodegenError
from spf.sets.calls import call_parts
from spf.sets.facts import Fact, check_domain, condition_terms

if TYPE_CHECKING:
    from spf.runtime.kernel import Kernel
    from spf.sets import UF, Set

if TYPE_CHECKING:
    import sympy as sp
else:
    from spf._lazy import sympy as sp


def _c(e: sp.Expr) -> str:
    """C text of an affine sympy expression whose atoms are names and UF calls."""
    e = sp.expand(e)
    if e.is_Integer:
        return str(int(e))
    if isinstance(e, sp.Symbol):
        return str(e.name)
    if isinstance(e, sp.Add):
        return " + ".join(f"({_c(t)})" for t in sorted(e.args, key=str))
    if isinstance(e, sp.Mul):
        coeff, rest = e.as_coeff_Mul()
        if coeff.is_Integer:
            return f"{int(coeff)} * ({_c(rest)})"
    if isinstance(e, sp.Function) and not isinstance(e, sp.floor):
        name, args, component = call_parts(e)
        call = f"{name}({', '.join(_c(a) for a in args)})"
        return call if component is None else f"{call}[{component}]"
    raise CodegenError(f"cannot check {e} at run time (only affine expressions and UF calls)")


def condition_c(conclusion: Set) -> str:
    """The conclusion of a fact as a C condition over its variables (UF calls as macros)."""
    disjuncts = []
    for conj in condition_terms(conclusion):
        parts = [f"{_c(e)} {'==' if is_eq else '>='} 0" for is_eq, e in conj]
        disjuncts.append(" && ".join(parts) or "1")
    return " || ".join(f"({d})" for d in disjuncts) or "0"


class _QuantifiedCheck:
    """One quantified fact: its check Computation, compiled on first use."""

    def __init__(self, fact: Fact, ufs: Mapping[str, UF], index: int, label: str) -> None:
        from spf.computation.computation import Computation
        from spf.computation.statement import Stmt

        self.fact = fact
        self.label = label
        domain = check_domain(fact, ufs)
        _check_bounded(fact, domain)
        comp = Computation(f"spf_assumption_{index}")
        used = fact.ufs | {c.split("(", 1)[0] for c in domain.uf_calls}
        params = set(fact.params) | domain.params
        for name in sorted(used):
            decl = ufs.get(name)
            if decl is None:
                continue
            comp.declare_uf(
                name,
                arity=decl.arity,
                domain=decl.domain,
                range=decl.range,
                monotonic=decl.monotonic,
                dtype=decl.dtype,
                out_arity=decl.out_arity,
                inverse=decl.inverse,
            )
            for s in (decl.domain, decl.range):
                if s is not None:
                    params |= s.params
        for p in sorted(params):
            comp.add_constant(p)
        nvars = len(fact.vars)
        # The count and the first violating point: names the fact does not use (spf's own
        # ``spf_`` prefix is reserved for generated code, not for data spaces).
        taken = set(comp.params) | set(comp.ufs) | set(fact.vars)
        self.count_name = _fresh("violations", taken)
        self.at_name = _fresh("first_violation", taken)
        n, at = self.count_name, self.at_name
        comp.add_data_space(n, "int64_t", shape=(1,))
        comp.add_data_space(at, "int64_t", shape=(nvars,))
        record = " ".join(f"${at}$({k}) = {v};" for k, v in enumerate(fact.vars))
        source = (
            f"if (!({condition_c(fact.conclusion)})) {{ "
            f"if (${n}$(0) == 0) {{ {record} }} ${n}$(0) += 1; }}"
        )
        comp.add_stmt(Stmt(source, str(domain)))
        self.comp = comp
        self.kernel: Kernel | None = None
        self.params = tuple(sorted(comp.params))
        self.ufs = tuple(sorted(comp.ufs))

    def run(self, params: Mapping[str, Any], ufs: Mapping[str, np.ndarray]) -> None:
        if self.kernel is None:
            from spf.runtime.compile import compile_kernel

            self.kernel = compile_kernel(self.comp, openmp=False, check=False)
        count = np.zeros(1, dtype=np.int64)
        at = np.zeros(max(1, len(self.fact.vars)), dtype=np.int64)
        args: dict[str, object] = {p: params[p] for p in self.params}
        args |= {u: ufs[u] for u in self.ufs}
        args[self.count_name] = count
        args[self.at_name] = at[: len(self.fact.vars)]
        # checked: a compiled kernel's UF ranges are tested inside its loops (not before
        # the call), so the check loop must not trust the index values it reads either
        self.kernel(check=True, **args)
        if count[0]:
            where = ", ".join(f"{v} = {int(x)}" for v, x in zip(self.fact.vars, at, strict=False))
            more = f" ({int(count[0])} violations in all)" if count[0] > 1 else ""
            raise ArgumentError(
                f"{self.label} does not hold for these arguments: it fails first at "
                f"{where}{more}{_with(params)}; fix the index arrays"
                f"{' or drop the assumption' if self.label == assumption_label(self.fact) else ''}"
                " (or call with check=False to skip the checks)"
            )


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def assumption_label(fact: Fact) -> str:
    """How a failed check names an assumption in its message."""
    return f"the assumption {fact.text!r}"


def _with(params: Mapping[str, Any]) -> str:
    text = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f" (with {text})" if text else ""


def _check_bounded(fact: Fact, domain: Set) -> None:
    """Every variable needs a lower and an upper bound, else the check loop never ends."""
    from spf.sets.facts import unbounded_var

    var = unbounded_var(domain)
    if var is not None:
        raise CodegenError(
            f"the assumption {fact.text!r} cannot be checked at run time: variable {var!r} "
            "is unbounded; bound it in the premise (e.g. '0 <= k < NNZ => ...') or declare "
            "the domains of the UFs it indexes"
        )


class FactChecker:
    """Checks ``facts`` on the arguments of a call (``ArgumentError`` for the first one that
    fails). The check functions are generated when the checker is made and compiled on the
    first call that checks. ``labels`` (one per fact) name them in messages; the default is
    ``the assumption '<text>'``."""

    def __init__(
        self,
        facts: Sequence[Fact],
        ufs: Mapping[str, UF],
        labels: Sequence[str] | None = None,
    ) -> None:
        names = list(labels) if labels is not None else [assumption_label(f) for f in facts]
        assert len(names) == len(facts), "FactChecker takes one label per fact"
        self.parameter_facts = tuple(
            (f, n) for f, n in zip(facts, names, strict=True) if f.is_parameter_fact
        )
        quantified = [(f, n) for f, n in zip(facts, names, strict=True) if not f.is_parameter_fact]
        self.quantified = tuple(
            _QuantifiedCheck(f, ufs, k, n) for k, (f, n) in enumerate(quantified)
        )

    def check(self, params: Mapping[str, Any], ufs: Mapping[str, np.ndarray]) -> None:
        for f, label in self.parameter_facts:
            values = {p: int(params[p]) for p in f.params if p in params}
            if not f.conclusion.contains((), params=values):
                raise ArgumentError(
                    f"{label} does not hold{_with(values)}; pass parameters that satisfy it "
                    "(or call with check=False to skip the checks)"
                )
        for q in self.quantified:
            q.run(params, ufs)

"""Declarations behind ``add_constant`` and ``assume`` (docs/assumptions.md).

``assume`` parses a :class:`~spf.sets.facts.Fact` against the computation's declarations
(UFs it calls and has not declared are declared with their arity, as statements do);
:func:`declared_facts` writes the declared UF domains, ranges and monotonicity as facts.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from spf.clang import check_reserved
from spf.computation.computation import _call_arity
from spf.dtypes import c_type
from spf.errors import ArityError, VerifyError
from spf.sets import UF
from spf.sets.facts import Fact

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.sets import Set


def check_constant(comp: Computation, name: str, type_: object) -> str:
    """Validate ``add_constant(name, type)``: a fresh identifier that is not reserved and a
    scalar type in spf's vocabulary (:func:`spf.dtypes.c_type`); returns its C name."""
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
        raise VerifyError(f"add_constant: {name!r} is not a valid C identifier")
    check_reserved("symbolic constant", name, in_macros=True, in_sets=True)
    if isinstance(type_, str) and "*" in type_:
        raise VerifyError(
            f"add_constant({name!r}): a symbolic constant is a scalar, not {type_!r}; "
            "declare arrays with add_data_space"
        )
    type_text = c_type(type_, what=f"symbolic constant {name!r}")
    for what, names in (
        ("data space", comp.data_spaces),
        ("UF", comp.ufs),
        ("buffer", comp.buffers),
    ):
        if name in names:
            raise VerifyError(
                f"add_constant: {name!r} is already declared as a {what}; a symbolic constant "
                "needs a name of its own"
            )
    old = comp.constants.get(name)
    if old is not None and old != type_text:
        raise VerifyError(
            f"add_constant: {name!r} is already declared as a constant of type {old}; "
            f"cannot redeclare it as {type_text}"
        )
    return type_text


def parse_assumption(comp: Computation, text: str) -> tuple[Fact, dict[str, UF]]:
    """The fact of ``comp.assume(text)`` and the UF declarations including the UFs it calls."""
    ufs = comp.ufs
    fact = Fact.parse(text, ufs, comp.params)
    where = f"assumption {text!r}"
    for name in fact.vars:
        if name in comp.data_spaces or name in comp.constants:
            raise VerifyError(
                f"{where}: the quantified variable {name!r} is also a data space or constant; "
                "rename the variable"
            )
    for name in sorted(fact.params):
        if name in comp.data_spaces:
            raise VerifyError(
                f"{where}: {name!r} is a data space; an assumption constrains parameters and "
                "index arrays (UFs) only"
            )
    out = dict(ufs)
    inferred = fact.premise.inferred_ufs | fact.conclusion.inferred_ufs
    for call in (*fact.premise.uf_calls, *fact.conclusion.uf_calls):
        name = call.split("(", 1)[0]
        arity = _call_arity(call)
        if name in comp.data_spaces and comp.data_spaces[name].index:
            raise VerifyError(
                f"{where}: {name!r} is a run-time index array (index=True): its values exist "
                "only once the kernel computed them, so no check before the call can verify "
                f"an assumption about them; declare its range with comp.declare_uf({name!r}, "
                "range=...), which the generated code enforces on every read"
            )
        if name in comp.data_spaces:
            raise VerifyError(f"{where}: {name!r} is a data space, not a UF (index array)")
        decl = out.get(name)
        if decl is None:
            out[name] = inferred.get(name) or UF(name, arity=arity)
        elif decl.arity != arity:
            raise ArityError(
                f"{where}: UF {name!r} takes {decl.arity} argument(s), called as {call}"
            )
    return fact, out


def declared_facts(comp: Computation) -> list[Fact]:
    """The declared UF properties as facts (``forall i: 0 <= i <= N => 0 <= rowptr(i) <=
    NNZ``; monotonicity over two variables)."""
    out: list[Fact] = []
    ufs = comp.ufs
    for name, uf in sorted(ufs.items()):
        vs = [f"_{name}{k}" for k in range(uf.arity)]
        dom = _constraints(uf.domain, vs)
        call = f"{name}({', '.join(vs)})"
        if uf.range is not None:  # a tuple-valued UF's range relates its components
            values = [f"{call}[{c}]" for c in range(uf.out_arity)] if uf.out_arity > 1 else [call]
            rng = _constraints(uf.range, values)
            if rng is not None and dom is not None:
                premise = f"{dom} => " if dom else ""
                out.append(Fact.parse(f"forall {', '.join(vs)}: {premise}{rng}", ufs))
        if uf.monotonic is not None and dom is not None:
            a, b = f"_{name}a", f"_{name}b"
            da, db = _constraints(uf.domain, [a]), _constraints(uf.domain, [b])
            op = "<" if uf.monotonic == "increasing" else "<="
            parts = [p for p in (da, db) if p] + [f"{a} < {b}"]
            out.append(
                Fact.parse(
                    f"forall {a}, {b}: {' and '.join(parts)} => {name}({a}) {op} {name}({b})", ufs
                )
            )
    return out


def _constraints(s: Set | None, names: list[str]) -> str | None:
    """The constraint text of a one-disjunct set with its tuple renamed to ``names``
    ('' for no constraint, None when it cannot be written so)."""
    if s is None:
        return ""
    text = str(s)
    if text.count("{") != 1:
        return None
    m = re.fullmatch(r"\{\[([^\]]*)\](?: : (.*))?\}", text)
    if m is None:
        return None
    tuple_names = [t.strip() for t in m.group(1).split(",") if t.strip()]
    body = m.group(2) or ""
    if len(tuple_names) != len(names) or not all(t.isidentifier() for t in tuple_names):
        return None
    mapping = dict(zip(tuple_names, names, strict=True))
    if not body:
        return ""
    return re.sub(
        r"\b[A-Za-z_][A-Za-z_0-9]*\b",
        lambda w: f"({mapping[w.group(0)]})" if w.group(0) in mapping else w.group(0),
        body,
    )

"""Canonical IEGenLib-style text of a body (what ``str(Set)`` prints).

Deterministic for a given canonical body: one ``{...}`` per disjunct joined by ``union``,
unnamed tuple positions shown by their value (``[i] -> [0, i, 0]``), UF values by their calls
(``k < rowptr(i + 1)``), isl divisions as ``floor(e/c)``, constraints sorted.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from spf.sets.affine import Aff, Sym
from spf.sets.body import Body, slot_values
from spf.sets.calls import call
from spf.sets.linear import basic_constraints, esym, tsym, usym

if TYPE_CHECKING:
    from spf.sets.affine import Atom


def display_map(body: Body, values: dict[int, Aff] | None = None) -> dict[Atom, Aff]:
    """Internal symbol -> what users see: names, UF calls, and the ``values`` of unnamed
    positions (their displays may nest: ``g(t0)`` inside ``f(g(t0))``)."""
    raw: dict[Atom, Aff] = {}
    for k, n in enumerate(body.names):
        raw[tsym(k)] = Sym(n or f"_t{k}").aff()
    for k, v in (values or {}).items():
        raw[tsym(k)] = v
    for k, h in enumerate(body.hidden):
        raw[esym(k)] = Sym(h).aff()
    for k, (name, args) in enumerate(body.terms):
        raw[usym(k)] = call(name, args)
    show: dict[Atom, Aff] = {}
    for key, expr in raw.items():
        for _ in range(len(raw) + 1):  # values never depend on themselves: this terminates
            new = expr.xreplace(raw)
            if new == expr:
                break
            expr = new
        show[key] = expr
    return show


def expr_text(e: Aff) -> str:
    """Text of a displayed expression (deterministic, sympy's text, and it parses back)."""
    return str(e)


def format_constraint(is_eq: bool, e: Aff, tuple_names: set[str]) -> str:
    """``e = 0`` / ``e >= 0`` as text: ``j = col(k)``, ``0 <= i``, ``k < rowptr(i + 1)``."""
    pos: list[Aff] = []
    neg: list[Aff] = []
    const = int(e.const)
    for a, c in e.ordered():
        if c > 0:
            pos.append(Aff({a: c}, Fraction(0)))
        else:
            neg.append(Aff({a: -c}, Fraction(0)))
    lhs, rhs = _sum(neg), _sum(pos)
    if is_eq:
        return _format_equality(pos, neg, const, tuple_names)
    if not neg:
        return f"{-const} <= {expr_text(rhs)}"
    if not pos:
        return f"{expr_text(lhs)} <= {const}"
    if const < 0:
        return f"{expr_text(lhs)} < {expr_text(rhs + const + 1)}"
    return f"{expr_text(lhs)} <= {expr_text(rhs + const)}"


def _sum(terms: list[Aff]) -> Aff:
    out = Aff({}, Fraction(0))
    for t in terms:
        out = out + t
    return out


def _format_equality(pos: list[Aff], neg: list[Aff], const: int, tuple_names: set[str]) -> str:
    def is_var(ts: list[Aff]) -> bool:
        if len(ts) != 1:
            return False
        s = ts[0].as_sym()
        return s is not None and s.name in tuple_names

    if is_var(pos) and not (is_var(neg) and str(neg[0]) < str(pos[0])):
        return f"{pos[0]} = {expr_text(_sum(neg) - const)}"
    if is_var(neg):
        return f"{neg[0]} = {expr_text(_sum(pos) + const)}"
    if not pos:
        pos, neg, const = neg, [], -const
    return f"{expr_text(_sum(pos))} = {expr_text(_sum(neg) - const)}"


def to_text(body: Body) -> str:
    """The canonical text of ``body`` (computed once per body)."""
    text: str | None = body.memo.get("text")
    if text is None:
        text = body.memo["text"] = _to_text(body)
    return text


def _to_text(body: Body) -> str:
    syms = body.dim_syms()
    bsets = body.iset.get_basic_sets()
    if not bsets:
        return "{" + _tuple_text(body, {}, display_map(body)) + " : false}"
    conjs = [basic_constraints(b, syms) for b in bsets]
    pieces = []
    for shown, conj in zip(_constants_shown(body, conjs), conjs, strict=True):
        values, rest = slot_values(shown, conj)
        show = display_map(shown, values)
        tup = _tuple_text(shown, values, show)
        tuple_names = {n for n in shown.names if n is not None}
        parts = sorted(format_constraint(q, e.xreplace(show), tuple_names) for q, e in rest)
        ex = f"exists {', '.join(body.hidden)} : " if body.hidden else ""
        if not parts and not ex:
            pieces.append("{" + tup + "}")
        else:
            pieces.append("{" + tup + " : " + ex + (" && ".join(parts) or "true") + "}")
    return " union ".join(pieces)


def _constants_shown(body: Body, conjs: list[list[tuple[bool, Aff]]]) -> list[Body]:
    """Per disjunct, ``body`` with the names dropped of the positions it shows as constants.

    A named position that some disjuncts fix to a constant and others do not is shown as the
    constant in those disjuncts (``{[i] -> [0] : i < 0} union {[i] -> [j] : 0 <= j < i}``,
    not ``j = 0``): the text reads back with the name from the other disjuncts. Positions a
    UF argument uses, and positions every disjunct fixes, keep their name everywhere.
    """
    if len(conjs) < 2:
        return [body] * len(conjs)
    needed = body.needed_syms()
    dropped: list[set[int]] = [set() for _ in conjs]
    for k, name in enumerate(body.names):
        if name is None or f"__t{k}" in needed:
            continue
        probe = Body(
            (*body.names[:k], None, *body.names[k + 1 :]),
            body.n_in,
            body.hidden,
            body.terms,
            body.iset,
        )
        fixed = [_is_int(slot_values(probe, conj)[0].get(k)) for conj in conjs]
        if all(fixed) or not any(fixed):
            continue
        for d, f in enumerate(fixed):
            if f:
                dropped[d].add(k)
    return [
        Body(
            tuple(None if k in drop else n for k, n in enumerate(body.names)),
            body.n_in,
            body.hidden,
            body.terms,
            body.iset,
        )
        if drop
        else body
        for drop in dropped
    ]


def _is_int(value: Aff | None) -> bool:
    return value is not None and value.is_integer()


def _tuple_text(body: Body, values: dict[int, Aff], show: dict[Atom, Aff]) -> str:
    items = []
    for k, n in enumerate(body.names):
        if n is not None:
            items.append(n)
        elif k in values:
            items.append(expr_text(show[tsym(k)]))
        else:
            items.append("0")  # only in an empty set, where any value will do
    if body.n_in is None:
        return "[" + ", ".join(items) + "]"
    return "[" + ", ".join(items[: body.n_in]) + "] -> [" + ", ".join(items[body.n_in :]) + "]"


def term_texts(body: Body) -> tuple[str, ...]:
    """The UF calls of ``body`` as text, in canonical order; worked out once per body
    (``Set.uf_calls``: a cold Gauss-Seidel wavefront compile asks 823 times, 729 of them
    again for the same body: a fact's UFs, whether it is a parameter fact)."""
    got: tuple[str, ...] | None = body.memo.get("term_texts")
    if got is None:
        show = display_map(body)
        got = body.memo["term_texts"] = tuple(
            expr_text(show[usym(k)]) for k in range(len(body.terms))
        )
    return got


def tuple_texts(body: Body) -> tuple[str, ...]:
    """Each tuple entry as the first disjunct shows it (names, or values of unnamed ones);
    worked out once per body (a body never changes; codegen asks a statement's domain and
    schedule for their tuple names hundreds of times)."""
    got: tuple[str, ...] | None = body.memo.get("tuple_texts")
    if got is None:
        bsets = body.iset.get_basic_sets()
        first = basic_constraints(bsets[0], body.dim_syms()) if bsets else None
        values = slot_values(body, first)[0] if first is not None else {}
        show = display_map(body, values)
        got = body.memo["tuple_texts"] = tuple(
            n if n is not None else expr_text(show[tsym(k)]) if k in values else f"_t{k}"
            for k, n in enumerate(body.names)
        )
    return got


def function_display(body: Body, in_names: list[str], exprs: list[Aff]) -> list[Aff]:
    """Internal expressions over a relation's inputs shown with ``in_names`` and UF calls."""
    assert body.n_in is not None
    names = tuple(in_names) + body.names[body.n_in :]
    return _displayed(body, names, exprs)


def inverse_function_display(body: Body, out_names: list[str], exprs: list[Aff]) -> list[Aff]:
    """Internal expressions over a relation's outputs shown with ``out_names`` and UF calls
    (:func:`~spf.sets.ops.inverse_as_function`'s)."""
    assert body.n_in is not None
    return _displayed(body, body.names[: body.n_in] + tuple(out_names), exprs)


def _displayed(body: Body, names: tuple[str | None, ...], exprs: list[Aff]) -> list[Aff]:
    named = Body(names, body.n_in, body.hidden, body.terms, body.iset)
    show = display_map(named)
    return [e.xreplace(show) for e in exprs]

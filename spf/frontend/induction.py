"""Induction variables (docs/import_c.md): an integer local updated only by ``v += c``,
``v -= c``, ``v++``, ``v--`` or ``v = v + c`` (``c`` an integer constant or an expression of
integer parameters), besides plain assignments ``v = e`` of an affine ``e``, and read in a
subscript or a loop header. Each read becomes the variable's closed form at that point, so
``y[k] = x[i][j]; k++;`` in a nest reads ``y[4*i + j]`` and carries no dependence.

The closed form is followed through the code in order: a plain assignment sets it, an
increment adds to it, and a loop adds ``D * n`` where ``D`` is what one iteration adds and
``n`` the iterations done before (``t - lo`` inside ``for (t = lo; ...; t++)``, the trip
count after it). It exists when ``D`` does not depend on the loop's own counter (otherwise,
as for ``k++`` in a triangular nest, it is quadratic), when no increment is under a
condition, and, after a loop, when the loop's trip count ``hi - lo`` is provably at least
zero. It must be affine where it is read in a subscript or a bound (``k = m*i + j`` is not
when ``m`` is a parameter; ``#define`` the size, or index with ``i`` and ``j``); in a value
it may be any polynomial. Otherwise ``ParseError`` names the variable and says why.

Which locals are induction variables, and the split of ``y[k++] = e;``, are in
:mod:`spf.frontend.increments`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from spf.errors import SpfError
from spf.frontend.conds import Cmp, Cond, Junction
from spf.frontend.cparse import Source, c_ast, nodes
from spf.frontend.increments import increment, writes
from spf.sets import Set

if TYPE_CHECKING:
    import sympy as sp
else:
    from spf._lazy import sympy as sp

if TYPE_CHECKING:
    from spf.frontend.exprs import Scope


# ----------------------------------------------------------------------------- the states
@dataclass(frozen=True)
class State:
    """The closed form of an induction variable at a point: ``value`` (None: unknown, and
    ``why`` says why), ``frozen`` under a condition (an increment there is refused)."""

    value: sp.Expr | None
    why: str = ""
    frozen: bool = False


@dataclass
class _Loop:
    """A loop being walked: the placeholder of each variable's per-iteration term."""

    node: Any
    it: str
    start: Any  # the start value (sympy), None when it is not one affine value
    step: int | None  # None: symbolic
    held: dict[str, sp.Symbol] = field(default_factory=dict)
    reads: list[tuple[str, Any, sp.Expr, bool]] = field(default_factory=list)


@dataclass
class Inductions:
    """Closed forms of the induction variables ``names`` while the walker reads the body."""

    src: Source
    scope: Scope
    names: set[str]
    atoms: dict[str, tuple[str, str]] = field(default_factory=dict)  # symbol: (affine, value)
    loops: list[_Loop] = field(default_factory=list)
    counter: itertools.count[int] = field(default_factory=itertools.count)
    resolved: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)  # filled placeholders
    nonnegative: set[str] = field(default_factory=set)  # placeholders only ever >= 0

    def fail(self, node: Any, name: str, why: str) -> Exception:
        return self.src.error(node, f"induction variable {name!r}: {why}")

    def extent_facts(self) -> list[str]:
        """``n >= 0`` for each symbolic extent of the arrays (what a call guarantees)."""
        from spf.frontend.exprs import NotAffineError

        s = self.scope
        saved = s.iters, s.aliases
        s.iters, s.aliases = (), {}
        out: set[str] = set()
        try:
            for var in s.vars.values():
                for dim in var.dims if var.role != "local" else ():
                    try:
                        text = s.affine(dim) if dim is not None else ""
                    except NotAffineError:
                        continue
                    if text and not text.lstrip("-").isdigit():
                        out.add(f"{text} >= 0")
        finally:
            s.iters, s.aliases = saved
        return sorted(out)

    # ---------- values
    def expr(self, node: Any, states: dict[str, State]) -> sp.Expr:
        """The affine ``node`` as a sympy expression over atoms (NotAffineError else)."""
        from spf.frontend.exprs import NotAffineError

        s = self.scope
        if isinstance(node, c_ast.ID) and node.name in states:
            state = states[node.name]
            if state.value is None:
                raise NotAffineError(node, f"{node.name!r} {state.why}")
            return state.value
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*"):
            left, right = self.expr(node.left, states), self.expr(node.right, states)
            if node.op == "*" and not (left.is_Number or right.is_Number):
                raise NotAffineError(node, "a product of two variables is not affine")
            return (
                left + right if node.op == "+" else left - right if node.op == "-" else left * right
            )
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            inner = self.expr(node.expr, states)
            return -inner if node.op == "-" else inner
        if isinstance(node, c_ast.Cast):
            return self.expr(node.expr, states)
        text = s.affine(node)  # a name, a number, an index array read, e / c, e % c
        if re.fullmatch(r"-?\d+", text):
            return sp.Integer(int(text))
        return self.atom(text, text if isinstance(node, c_ast.ID) else s.value(node))

    def atom(self, affine: str, value: str) -> sp.Symbol:
        sym = sp.Symbol(affine)
        self.atoms[affine] = (affine if affine.isidentifier() else f"({affine})", value)
        return sym

    def text(self, value: sp.Expr, *, affine: bool) -> str:
        """``value`` in spf's set syntax (``affine``) or as statement-source text."""
        terms: list[str] = []
        expanded = sp.expand(value)
        for term in sorted(sp.Add.make_args(expanded), key=sp.default_sort_key):
            coeff, rest = term.as_coeff_Mul()
            factors: list[str] = []
            for base, power in sorted(rest.as_powers_dict().items(), key=str):
                if base == 1:
                    continue
                name = str(base)
                shown = self.atoms.get(name, (name, name))[0 if affine else 1]
                plain = shown.isidentifier() or shown[0] in "(@"  # @: a placeholder
                factors += [shown if plain else f"({shown})"]
                factors += factors[-1:] * (int(power) - 1)
            body = "*".join(factors)
            if not body:
                terms.append(str(coeff))
            elif coeff == 1:
                terms.append(body)
            elif coeff == -1:
                terms.append(f"-{body}")
            else:
                terms.append(f"{coeff}*{body}")
        text = " + ".join(terms) if terms else "0"
        return text.replace("+ -", "- ")

    def read(
        self, name: str, node: Any, states: dict[str, State], *, index: bool, notation: bool
    ) -> str:
        """The text of ``name`` read at ``node``: in set syntax (``notation``) or statement
        source; ``index``: in a subscript or bound, where the closed form must be affine
        (NotAffineError in set syntax, else ParseError, naming the variable)."""
        from spf.frontend.exprs import NotAffineError

        state = states[name]
        if state.value is None:
            raise self.fail(node, name, state.why)
        value = state.value
        if index and not _affine(value, self.placeholders()):
            if notation:
                raise NotAffineError(node, self.why_not_affine(name, value))
            raise self.fail(node, name, self.why_not_affine(name, value))
        for loop in self.loops:
            if loop.held and value.free_symbols & set(loop.held.values()):
                loop.reads.append((name, node, value, index))
        return self.text(value, affine=notation)

    def why_not_affine(self, name: str, value: sp.Expr) -> str:
        known = value.subs(self.resolved)
        pending = {p: sp.Symbol("...") for p in self.placeholders()}
        shown = self.text(known.subs(pending), affine=False)
        return (
            f"its closed form {shown} is not affine in the loop counters, so {name!r} cannot "
            "index an array or bound a loop here"
        )

    def placeholders(self) -> set[sp.Symbol]:
        return {p for loop in self.loops for p in loop.held.values()}

    # ---------- statements
    def assign(self, node: Any, name: str, states: dict[str, State], value: Any) -> State:
        """The state after ``name = value;`` (or the declaration ``int name = value;``)."""
        from spf.frontend.exprs import NotAffineError

        if value is None:
            return State(None, "is read before it is given a value")
        try:
            return State(self.expr(value, states))
        except NotAffineError as err:
            raise self.fail(
                node, name, f"is assigned a value that is not affine ({err.why})"
            ) from None

    def add(self, node: Any, name: str, states: dict[str, State], amount: Any) -> State:
        state = states[name]
        if state.frozen:
            raise self.fail(node, name, "is incremented under a condition; it has no closed form")
        if state.value is None:
            raise self.fail(node, name, state.why)
        from spf.frontend.exprs import NotAffineError

        try:
            return State(state.value + self.expr(amount, {}))
        except NotAffineError as err:
            raise self.fail(node, name, f"is incremented by {err.why}") from None

    # ---------- loops
    def enter(
        self, node: Any, it: str, start: Any, step: int | None, states: dict[str, State]
    ) -> dict[str, State]:
        """The states at the start of an iteration of loop ``node``: each variable the body
        increments holds a placeholder for what the earlier iterations added."""
        loop = _Loop(node, it, None, step)
        from spf.frontend.exprs import NotAffineError

        try:
            loop.start = self.expr(start, states)
        except NotAffineError:
            loop.start = None
        out = dict(states)
        body = node.stmt
        for name, state in states.items():
            updates = [n for n in nodes(body) if writes(n, name)]
            if not updates or state.value is None:
                continue
            if any(increment(w, name) is None for w in updates):  # assigned in the body
                out[name] = State(None, f"is read before it is assigned in loop {it!r}")
                continue
            header = [m for p in (node.cond, node.next) for m in nodes(p)]
            if any(isinstance(m, c_ast.ID) and m.name == name for m in header):
                raise self.fail(
                    node, name, f"bounds loop {it!r} and changes inside it (not a fixed range)"
                )
            key = f"@iv{next(self.counter)}@"
            if all(_nonnegative_literal(increment(w, name)) for w in updates):
                self.nonnegative.add(key)  # k++ or k += 2 only: earlier iterations add >= 0
            held = sp.Symbol(key)
            self.atoms[key] = (key, key[:-1] + "v@")
            loop.held[name] = held
            out[name] = replace(state, value=state.value + held)
        self.loops.append(loop)
        return out

    def leave(
        self,
        states_before: dict[str, State],
        states_after_body: dict[str, State],
        trips: sp.Expr | None,
        why_no_trips: str,
    ) -> tuple[dict[str, State], dict[str, str]]:
        """The states after the loop, and the text each placeholder stands for (in set
        syntax under its key, in statement source under its value key)."""
        loop = self.loops.pop()
        out = dict(states_before)
        fills: dict[str, str] = {}
        count = self._done(loop)
        for name in states_before:
            if name not in loop.held and any(writes(n, name) for n in nodes(loop.node.stmt)):
                out[name] = State(None, f"is assigned inside loop {loop.it!r}")
        for name, held in loop.held.items():
            begin = states_before[name].value
            assert begin is not None
            term, per, bad = self._term(loop, name, held, begin, states_after_body, count)
            affine, value = self.atoms[str(held)]
            fills[affine] = _grouped(self.text(term, affine=True))
            fills[value] = _grouped(self.text(term, affine=False))
            if bad:
                out[name] = State(None, bad)
            elif per == 0:
                out[name] = states_before[name]
            elif trips is None:
                why = f"has no closed form after loop {loop.it!r}, which {why_no_trips}"
                out[name] = State(None, why)
            else:
                out[name] = State(sp.expand(begin + per * trips))
        return out, fills

    def _term(
        self,
        loop: _Loop,
        name: str,
        held: sp.Symbol,
        begin: sp.Expr,
        after_body: dict[str, State],
        count: sp.Expr | None,
    ) -> tuple[sp.Expr, sp.Expr, str]:
        """``(what the earlier iterations added, what one iteration adds, why there is no
        closed form or "")``; a read that needs a missing or non-affine one is refused."""
        end = after_body[name].value
        if end is None:
            raise self.fail(loop.node, name, after_body[name].why)
        per = sp.expand(end - begin - held)
        reads = [r for r in loop.reads if r[0] == name]
        bad = self._bad_per_iteration(loop, per)
        if not bad and per != 0 and count is None:
            bad = f"has no closed form inside loop {loop.it!r} (its start is not one value)"
        if bad:
            if reads:
                raise self.fail(reads[0][1], name, bad)
            self.resolved[held] = sp.Integer(0)
            return sp.Integer(0), per, bad
        term = per * count if per != 0 and count is not None else sp.Integer(0)
        self.resolved[held] = term
        for _, node, value, index in reads:
            full = value.subs(self.resolved)
            if index and not _affine(full, self.placeholders()):
                raise self.fail(node, name, self.why_not_affine(name, full))
        return term, per, ""

    def _done(self, loop: _Loop) -> sp.Expr | None:
        """The iterations before the current one, ``(t - lo) / step``; None when unknown."""
        if loop.start is None or loop.step is None:
            return None
        t = self.atom(loop.it, loop.it)
        diff = t - loop.start if loop.step > 0 else loop.start - t
        if abs(loop.step) == 1:
            return diff
        inner = self.text(diff, affine=True)
        return self.atom(
            f"floor(({inner})/{abs(loop.step)})",
            f"({self.text(diff, affine=False)}) / {abs(loop.step)}",
        )

    def _bad_per_iteration(self, loop: _Loop, per: sp.Expr) -> str:
        names = {str(s) for s in per.free_symbols}
        if any(re.search(rf"(?<![\w@]){re.escape(loop.it)}(?![\w@])", n) for n in names):
            return (
                f"what one iteration of loop {loop.it!r} adds ({self.text(per, affine=False)}) "
                f"depends on {loop.it!r} (a triangular nest): the closed form is quadratic, "
                "not affine"
            )
        if names & {str(p) for p in self.placeholders()}:
            return f"its increments in loop {loop.it!r} have no closed form"
        return ""

    def trips(
        self,
        it: str,
        start: Any,
        bound: Any,
        op: str,
        step: int | None,
        ctx_iters: tuple[str, ...],
        conds: str,
        states: dict[str, State],
        facts: list[str],
    ) -> tuple[sp.Expr | None, str]:
        """The trip count of a loop (``hi - lo``, rounded up by the step) when it is provably
        at least zero, else ``(None, why)``."""
        from spf.frontend.exprs import NotAffineError

        if step is None:
            return None, "has a symbolic step"
        if bound is None:
            return None, "has a bound that is not one affine value (min/max, several bounds)"
        try:
            lo, hi = self.expr(start, states), self.expr(bound, states)
        except NotAffineError as err:
            return None, f"has a bound that is not affine ({err.why})"
        span = (hi - lo if step > 0 else lo - hi) + (1 if op in ("<=", ">=") else 0)
        text = self.text(span, affine=True)
        try:
            empty = Set(
                f"{{[{', '.join(ctx_iters)}]: {' && '.join([*facts, conds, f'{text} < 0'])}}}"
            ).is_empty()
        except SpfError:
            empty = False
        if not empty:
            return None, f"may run fewer than zero times ({text} < 0) as far as spf can prove"
        if abs(step) == 1:
            return span, ""
        return self.atom(
            f"floor(({text} + {abs(step) - 1})/{abs(step)})",
            f"({self.text(span, affine=False)} + {abs(step) - 1}) / {abs(step)}",
        ), ""


def _nonnegative_literal(node: Any) -> bool:
    """Whether ``node`` (an increment's amount) is an integer literal ``>= 0``."""
    from spf.frontend.cparse import c_integer

    if not isinstance(node, c_ast.Constant) or node.type != "int":
        return False
    value = c_integer(node.value)
    return value is not None and value >= 0


def _grouped(text: str) -> str:
    """``text`` parenthesized when it is a sum (a placeholder may be multiplied)."""
    return f"({text})" if " " in text else text


def _affine(value: sp.Expr, placeholders: set[sp.Symbol]) -> bool:
    """Degree at most one (a placeholder counts as degree one), integer coefficients."""
    expanded = sp.expand(value)
    for term in sp.Add.make_args(expanded):
        coeff, rest = term.as_coeff_Mul()
        if not coeff.is_Integer and not (coeff.is_Rational and coeff.q == 1):
            return False
        degree = sum(int(p) for b, p in rest.as_powers_dict().items() if b != 1)
        if degree > 1:
            return False
    return True


def single_bound(node: Any, it: str, step: int | None = None) -> tuple[Any, str]:
    """``(e, op)`` when exactly one conjunct of for loop ``node``'s condition bounds ``it``:
    ``it op e`` (``e op it`` turned around); ``(None, "")`` otherwise. With a constant
    ``step`` of 1 (-1), ``it != e`` is ``it < e`` (``it > e``): the walker accepted it only
    where the loop starts on that side (:mod:`spf.frontend.not_equal`)."""
    turned = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    parts = _conjuncts(node.cond)
    if step in (1, -1):
        ordered = "<" if step == 1 else ">"
        parts = [
            c_ast.BinaryOp(ordered, p.left, p.right)
            if isinstance(p, c_ast.BinaryOp) and p.op == "!=" and _is(p.left, it)
            else c_ast.BinaryOp(turned[ordered], p.left, p.right)
            if isinstance(p, c_ast.BinaryOp) and p.op == "!=" and _is(p.right, it)
            else p
            for p in parts
        ]
    found = [p for p in parts if isinstance(p, c_ast.BinaryOp) and p.op in turned]
    found = [p for p in found if _is(p.left, it) != _is(p.right, it)]
    if len(found) != 1 or len(found) != sum(_mentions(p, it) for p in parts):
        return None, ""
    p = found[0]
    return (p.right, p.op) if _is(p.left, it) else (p.left, turned[p.op])


def _conjuncts(node: Any) -> list[Any]:
    if isinstance(node, c_ast.BinaryOp) and node.op == "&&":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _is(node: Any, name: str) -> bool:
    return isinstance(node, c_ast.ID) and node.name == name


def _mentions(node: Any, name: str) -> bool:
    return any(_is(n, name) for n in nodes(node))


def substitute(cond: Cond, fills: dict[str, str]) -> Cond:
    """``cond`` with each placeholder text replaced."""
    if isinstance(cond, Cmp):
        return Cmp(fill_text(cond.lhs, fills), cond.op, fill_text(cond.rhs, fills))
    assert isinstance(cond, Junction)
    return Junction(cond.all_of, tuple(substitute(p, fills) for p in cond.parts))


def fill_text(text: str, fills: dict[str, str]) -> str:
    """``text`` with each placeholder key replaced by its text."""
    for key, value in fills.items():
        text = text.replace(key, value)
    return text


__all__ = ["Inductions", "State", "fill_text", "single_bound", "substitute"]

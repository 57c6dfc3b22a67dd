"""Exact quasi-affine expressions: the set algebra's own, so that it never needs sympy.

An :class:`Aff` is ``c_1*a_1 + ... + c_n*a_n + c`` with rational coefficients ``c_k`` and
constant ``c`` (:class:`fractions.Fraction`) over atoms:

* :class:`Sym`: an integer symbol (tuple positions, parameters, ``__t0``/``__e0``/``__u0``);
* :class:`Call`: a UF call whose arguments are :class:`Aff` themselves (``col(i + 1)``; the
  term name of a tuple-valued UF's component ends in ``[]`` and its last argument is the
  component, see :mod:`spf.sets.calls`);
* :class:`Floor`: ``floor(e)`` of an expression with a non-integer part.

Every value is in normal form (terms collected, zero coefficients dropped, integer parts
pulled out of floors, as sympy's ``floor`` does), so ``==`` and ``hash`` are structural.
``str`` prints exactly what sympy's ``str`` printed for the same expression (expanded):
terms in sympy's order (symbols by name, then UF calls by name and arguments, then floors,
the constant last; ``1 - i`` for a positive constant and one negative term), rationals as
``-N + 3*col(i)/2``. :func:`to_sympy` and :func:`from_sympy` convert at the edges where
sympy is really needed.

Atoms keep their hash (``hash`` of their name and arguments, which Python salts per process),
so a pickled expression is rebuilt from its fields, never restored with a hash from the
process that pickled it: a fact in a remembered einsum entry
(:mod:`spf.index_notation.remembered`) loaded by another interpreter must find its symbols
in the substitution maps of this one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from fractions import Fraction
from functools import cmp_to_key
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import sympy as sp

Num: TypeAlias = "int | Fraction"
SortKey: TypeAlias = "tuple[Any, ...]"
_ONE_KEY: SortKey = ((1, 0, "Number"), (0, ()), (), 1)
"""sympy's ``S.One.sort_key()``: the exponent part of every key."""


class _Arith:
    """Arithmetic on an atom: it takes part as the expression ``1*atom``."""

    __slots__ = ()

    def aff(self) -> Aff:
        return Aff.atom(self)  # type: ignore[arg-type]

    def __add__(self, other: Operand) -> Aff:
        return self.aff() + other

    __radd__ = __add__

    def __sub__(self, other: Operand) -> Aff:
        return self.aff() - other

    def __rsub__(self, other: Operand) -> Aff:
        return other - self.aff()

    def __neg__(self) -> Aff:
        return -self.aff()

    def __mul__(self, k: Num) -> Aff:
        return self.aff() * k

    __rmul__ = __mul__


class Sym(_Arith):
    """An integer symbol, compared by name."""

    __slots__ = ("_hash", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._hash = hash(("Sym", name))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Aff):
            return other.as_atom() == self
        return isinstance(other, Sym) and other.name == self.name

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Sym], tuple[str]]:
        return Sym, (self.name,)  # the hash is this process's (module docstring)

    def __repr__(self) -> str:
        return self.name

    def key(self) -> SortKey:
        """sympy's ``default_sort_key`` of the symbol."""
        return ((2, 0, "Symbol"), (1, (self.name,)), _ONE_KEY, 1)

    def text(self) -> str:
        return self.name

    def replaced(self, sub: Callable[[Atom], Aff | None]) -> Aff | None:
        """The atom with ``sub`` applied (None: unchanged)."""
        return sub(self)

    def symbols(self) -> Iterator[Sym]:
        yield self


class Call(_Arith):
    """A UF call ``name(args...)``; ``name`` ending in ``[]`` is a tuple-valued UF's
    component, printed ``f(i)[c]`` with ``c`` the last argument."""

    __slots__ = ("_hash", "_key", "args", "name")

    def __init__(self, name: str, args: Iterable[Aff]) -> None:
        self.name = name
        self.args = tuple(args)
        self._hash = hash(("Call", name, self.args))
        self._key: SortKey | None = None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Aff):
            return other.as_atom() == self
        return (
            isinstance(other, Call)
            and other._hash == self._hash
            and other.name == self.name
            and other.args == self.args
        )

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Call], tuple[str, tuple[Aff, ...]]]:
        return Call, (self.name, self.args)  # the hash is this process's (module docstring)

    def __repr__(self) -> str:
        return self.text()

    @property
    def base(self) -> str:
        """The UF's own name (``tau_inv`` for the component term ``tau_inv[]``)."""
        return self.name[:-2] if self.name.endswith("[]") else self.name

    def key(self) -> SortKey:
        """sympy's ``default_sort_key`` of the applied undefined function."""
        if self._key is None:
            args = tuple(a.key() for a in self.args)
            self._key = ((4, 0, self.base), (len(args), args), _ONE_KEY, 1)
        return self._key

    def text(self) -> str:
        if self.name.endswith("[]"):
            *args, c = self.args
            return f"{self.base}({', '.join(map(str, args))})[{c}]"
        return f"{self.name}({', '.join(map(str, self.args))})"

    def replaced(self, sub: Callable[[Atom], Aff | None]) -> Aff | None:
        """The atom with ``sub`` applied (None: unchanged)."""
        got = sub(self)
        if got is not None:
            return got
        args = tuple(a.substituted(sub) for a in self.args)
        if all(new is old for new, old in zip(args, self.args, strict=True)):
            return None
        return Call(self.name, args).aff()

    def symbols(self) -> Iterator[Sym]:
        for a in self.args:
            yield from a.symbols()


class Floor(_Arith):
    """``floor(arg)``; build with :func:`floor` (which keeps the normal form)."""

    __slots__ = ("_hash", "arg")

    def __init__(self, arg: Aff) -> None:
        self.arg = arg
        self._hash = hash(("Floor", arg))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Aff):
            return other.as_atom() == self
        return isinstance(other, Floor) and other._hash == self._hash and other.arg == self.arg

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Floor], tuple[Aff]]:
        return Floor, (self.arg,)  # the hash is this process's (module docstring)

    def __repr__(self) -> str:
        return self.text()

    def key(self) -> SortKey:
        return ((4, 10000, "floor"), (1, (self.arg.key(),)), _ONE_KEY, 1)

    def text(self) -> str:
        return f"floor({self.arg})"

    def replaced(self, sub: Callable[[Atom], Aff | None]) -> Aff | None:
        """The atom with ``sub`` applied (None: unchanged)."""
        got = sub(self)
        if got is not None:
            return got
        arg = self.arg.substituted(sub)
        return None if arg is self.arg else floor(arg)

    def symbols(self) -> Iterator[Sym]:
        yield from self.arg.symbols()


Atom: TypeAlias = Sym | Call | Floor
Operand: TypeAlias = "Aff | Sym | Call | Floor | int | Fraction"


def _integral(atom: Atom) -> bool:
    """True when the atom's value is an integer as sympy knows it (a UF's value is not
    known to be one)."""
    return not isinstance(atom, Call)


def _norm(c: Fraction) -> Num:
    """``c`` as an ``int`` when it is one (integers are the common case, and faster)."""
    return c.numerator if c.denominator == 1 else c


def _num_text(c: Num) -> str:
    return str(c.numerator) if c.denominator == 1 else f"{c.numerator}/{c.denominator}"


class Aff:
    """``sum(coeff * atom) + const`` in normal form (immutable; build with the operators,
    :meth:`atom`, :meth:`const_of` or :func:`sym`)."""

    __slots__ = ("_hash", "_key", "_order", "_text", "coeffs", "const")

    def __init__(self, coeffs: Mapping[Atom, Num], const: Num) -> None:
        """Trusted constructor: ``coeffs`` must have no zero values."""
        self.coeffs: dict[Atom, Num] = dict(coeffs)
        self.const = const
        self._hash: int | None = None
        self._key: SortKey | None = None
        self._text: str | None = None
        self._order: list[tuple[Atom, Num]] | None = None

    # --- construction
    @staticmethod
    def atom(a: Atom, coeff: Num = 1) -> Aff:
        c = _norm(coeff) if isinstance(coeff, Fraction) else coeff
        return Aff({a: c} if c else {}, 0)

    @staticmethod
    def const_of(value: Num) -> Aff:
        return Aff({}, _norm(value) if isinstance(value, Fraction) else value)

    # --- value semantics
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Aff):
            return self.const == other.const and self.coeffs == other.coeffs
        if isinstance(other, (int, Fraction)):
            return not self.coeffs and self.const == other
        if isinstance(other, _Arith):  # an atom equals the expression ``1*atom``
            return self.as_atom() == other
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            atom = self.as_atom()
            if atom is not None:  # equal to the atom itself: the same hash
                self._hash = hash(atom)
            elif not self.coeffs:
                self._hash = hash(self.const)
            else:
                self._hash = hash((frozenset(self.coeffs.items()), self.const))
        return self._hash

    def __reduce__(self) -> tuple[type[Aff], tuple[dict[Atom, Num], Num]]:
        return Aff, (self.coeffs, self.const)  # no cached hash (module docstring)

    def __repr__(self) -> str:
        return f"Aff({str(self)!r})"

    # --- arithmetic
    def __add__(self, other: Operand) -> Aff:
        if isinstance(other, _Arith):
            other = other.aff()
        if not isinstance(other, Aff):
            return Aff(self.coeffs, self.const + other)
        out = dict(self.coeffs)
        for a, c in other.coeffs.items():
            v = out.get(a, 0) + c
            if v:
                out[a] = v
            else:
                out.pop(a, None)
        return Aff(out, self.const + other.const)

    __radd__ = __add__

    def __neg__(self) -> Aff:
        return Aff({a: -c for a, c in self.coeffs.items()}, -self.const)

    def __sub__(self, other: Operand) -> Aff:
        return self + (-other)

    def __rsub__(self, other: Operand) -> Aff:
        return (-self) + other

    def __mul__(self, k: Num | Aff) -> Aff:
        if isinstance(k, Aff):  # only scalars: the product of two expressions is not affine
            if k.is_constant():
                k = k.const
            elif self.is_constant():
                return k * self.const
            else:
                raise ValueError(f"not affine: ({self})*({k})")
        if not k:
            return Aff({}, 0)
        if isinstance(k, Fraction):
            return Aff({a: _norm(c * k) for a, c in self.coeffs.items()}, _norm(self.const * k))
        return Aff({a: c * k for a, c in self.coeffs.items()}, self.const * k)

    __rmul__ = __mul__

    def __truediv__(self, k: Num) -> Aff:
        if k == 1 or k == -1:  # solving for a unit coefficient: the same result, no Fraction
            unit = int(k)
            return Aff(
                {a: _norm(c * unit) if isinstance(c, Fraction) else c * unit
                 for a, c in self.coeffs.items()},
                _norm(self.const * unit) if isinstance(self.const, Fraction) else self.const * unit,
            )  # fmt: skip
        return self * (Fraction(1) / k)

    # --- reading
    def is_constant(self) -> bool:
        return not self.coeffs

    def is_integer(self) -> bool:
        """True for an integer constant (sympy's ``is_Integer``)."""
        return not self.coeffs and self.const.denominator == 1

    def __int__(self) -> int:
        if self.coeffs or self.const.denominator != 1:
            raise ValueError(f"not an integer: {self}")
        return int(self.const)

    def as_atom(self) -> Atom | None:
        """The atom when ``self`` is exactly one atom (coefficient 1, no constant)."""
        if self.const or len(self.coeffs) != 1:
            return None
        ((a, c),) = self.coeffs.items()
        return a if c == 1 else None

    def as_sym(self) -> Sym | None:
        """The symbol when ``self`` is exactly one symbol."""
        a = self.as_atom()
        return a if isinstance(a, Sym) else None

    def coeff(self, a: Atom) -> Num:
        """The coefficient of the atom ``a`` (0 when absent)."""
        return self.coeffs.get(a, 0)

    def atoms(self) -> list[Atom]:
        """The top-level atoms, in printing order."""
        return [a for a, _ in self.ordered()]

    def floors(self) -> set[Floor]:
        """Every floor term, nested ones included."""
        out: set[Floor] = set()
        for a in self.coeffs:
            if isinstance(a, Floor):
                out.add(a)
                out |= a.arg.floors()
            elif isinstance(a, Call):
                for arg in a.args:
                    out |= arg.floors()
        return out

    def calls(self) -> set[Call]:
        """Every UF call, nested ones included."""
        out: set[Call] = set()
        for a in self.coeffs:
            if isinstance(a, Call):
                out.add(a)
                for arg in a.args:
                    out |= arg.calls()
            elif isinstance(a, Floor):
                out |= a.arg.calls()
        return out

    def symbols(self) -> Iterator[Sym]:
        """Every symbol used, nested ones included (may repeat)."""
        for a in self.coeffs:
            yield from a.symbols()

    def free_names(self) -> frozenset[str]:
        return frozenset(s.name for s in self.symbols())

    def has(self, s: Sym) -> bool:
        """Whether the symbol ``s`` occurs anywhere (inside calls and floors too)."""
        return any(x == s for x in self.symbols())

    def call_depth(self) -> int:
        """How deeply UF calls nest (0: none; ``f(g(i))``: 2)."""
        out = 0
        for a in self.coeffs:
            if isinstance(a, Call):
                out = max(out, 1 + max((x.call_depth() for x in a.args), default=0))
            elif isinstance(a, Floor):
                out = max(out, a.arg.call_depth())
        return out

    def denominator(self) -> int:
        """The least common multiple of the coefficients' and constant's denominators."""
        den = self.const.denominator
        for c in self.coeffs.values():
            den = math.lcm(den, c.denominator)
        return den

    def ordered(self) -> list[tuple[Atom, Num]]:
        """``(atom, coeff)`` in sympy's printing order (by the atoms' sort keys)."""
        if self._order is None:
            self._order = sorted(self.coeffs.items(), key=lambda ac: ac[0].key())
        return self._order

    # --- substitution and evaluation
    def substituted(self, sub: Callable[[Atom], Aff | None]) -> Aff:
        """``self`` with every atom ``a`` for which ``sub(a)`` is not None replaced, and
        atoms inside calls and floors substituted too (sympy's ``xreplace``); ``self`` itself
        when nothing changes."""
        changes = [
            (a, c, new) for a, c in self.coeffs.items() if (new := a.replaced(sub)) is not None
        ]
        if not changes:
            return self
        out = dict(self.coeffs)
        const = self.const
        for a, _, _ in changes:
            del out[a]
        for _, c, new in changes:
            for b, d in new.coeffs.items():
                v = out.get(b, 0) + d * c
                if v:
                    out[b] = v
                else:
                    out.pop(b, None)
            const += new.const * c
        return Aff(out, const)

    def xreplace(
        self,
        mapping: Mapping[Sym, Aff] | Mapping[Call, Aff] | Mapping[Floor, Aff] | Mapping[Atom, Aff],
    ) -> Aff:
        """``self`` with the atoms that are keys of ``mapping`` replaced by their values."""
        if not mapping:
            return self
        get = mapping.get
        return self.substituted(lambda a: get(a))  # type: ignore[arg-type]

    def evaluate(self, value: Callable[[Atom], Num]) -> Num:
        """The exact value, with ``value(atom)`` giving each symbol's and call's value
        (floors are evaluated here)."""
        total = self.const
        for a, c in self.coeffs.items():
            if isinstance(a, Floor):
                v: Num = math.floor(a.arg.evaluate(value))
            else:
                v = value(a)
            total += c * v
        return total

    # --- printing
    def key(self) -> SortKey:
        """sympy's ``default_sort_key`` of the expression (orders UF arguments and floors)."""
        if self._key is None:
            self._key = self._compute_key()
        return self._key

    def _compute_key(self) -> SortKey:
        if not self.coeffs:
            return ((1, 0, "Number"), (0, ()), (), self.const)
        if not self.const and len(self.coeffs) == 1:
            ((a, c),) = self.coeffs.items()
            k = a.key()
            return (k[0], k[1], _ONE_KEY, c)
        terms = tuple(_term_key(a, c) for a, c in self._print_order())
        return ((3, 1, "Add"), (len(terms), terms), _ONE_KEY, 1)

    def _print_order(self) -> list[tuple[Atom | None, Num]]:
        """Terms in sympy's ``as_ordered_terms`` order, the constant as ``(None, c)``."""
        terms: list[tuple[Atom | None, Num]] = list(self.ordered())
        if self.const:
            if len(terms) == 1 and self.const > 0 and terms[0][1] < 0:
                return [(None, self.const), *terms]  # sympy's ``1 - i``
            terms.append((None, self.const))
        return terms

    def __str__(self) -> str:
        if self._text is None:
            self._text = self._compute_text()
        return self._text

    def _compute_text(self) -> str:
        if not self.coeffs:
            return _num_text(self.const)
        out = ""
        for k, (a, c) in enumerate(self._print_order()):
            t = _num_text(c) if a is None else _mul_text(a, c)
            if t.startswith("-"):
                out += "-" + t[1:] if k == 0 else " - " + t[1:]
            else:
                out += t if k == 0 else " + " + t
        return out


def _term_key(a: Atom | None, c: Num) -> SortKey:
    if a is None:
        return ((1, 0, "Number"), (0, ()), (), c)
    k = a.key()
    return (k[0], k[1], _ONE_KEY, c)


def _mul_text(a: Atom, c: Num) -> str:
    """sympy's text of ``c*a``: ``i``, ``-i``, ``3*i``, ``i/2``, ``-3*col(i)/2``."""
    body = a.text()
    p, q = c.numerator, c.denominator
    if p == 1:
        num = body
    elif p == -1:
        num = "-" + body
    else:
        num = f"{p}*{body}"
    return num if q == 1 else f"{num}/{q}"


def sym(name: str) -> Aff:
    """The integer symbol ``name`` as an expression."""
    return Aff({Sym(name): 1}, 0)


def const(value: Num) -> Aff:
    """The constant ``value`` as an expression."""
    return Aff({}, _norm(value) if isinstance(value, Fraction) else value)


ZERO = Aff({}, 0)


def call(name: str, args: Iterable[Aff]) -> Aff:
    """The UF call term ``name(args...)`` as an expression."""
    return Aff({Call(name, args): 1}, 0)


def floor(e: Aff) -> Aff:
    """``floor(e)`` in normal form: integer terms (integer multiples of symbols and floors,
    an integer constant) come out; a constant alone is evaluated (sympy's rules)."""
    inner: dict[Atom, Num] = {}
    out: dict[Atom, Num] = {}
    for a, c in e.coeffs.items():
        if c.denominator == 1 and _integral(a):
            out[a] = c
        else:
            inner[a] = c
    whole = e.const if e.const.denominator == 1 else 0
    rest = e.const - whole
    if not inner:
        return Aff(out, whole + math.floor(rest))
    # the floor left may be one pulled out (``floor(j/2 - floor(j/2))``): add, don't replace
    left = Floor(Aff(inner, rest))
    c = out.get(left, 0) + 1
    if c:
        out[left] = c
    else:
        del out[left]
    return Aff(out, whole)


def ceil(e: Aff) -> Aff:
    """``ceil(e)`` as ``-floor(-e)``."""
    return -floor(-e)


def total(items: Iterable[Aff]) -> Aff:
    """The sum of ``items``."""
    out = ZERO
    for e in items:
        out = out + e
    return out


# ----------------------------------------------------------------------------- sympy's order
_CLASS_ORDER = {
    n: k
    for k, n in enumerate(
        (
            "Zero",
            "One",
            "Half",
            "Infinity",
            "NaN",
            "NegativeOne",
            "NegativeInfinity",
            "Integer",
            "Rational",
            "Float",
            "Exp1",
            "Pi",
            "ImaginaryUnit",
            "Symbol",
            "Wild",
            "Pow",
            "Mul",
            "Add",
        )
    )
}
"""The start of sympy's ``ordering_of_classes`` (the classes an expression here can have;
``floor`` and UF calls are not in it, so they compare by class name after these)."""

Node: TypeAlias = "tuple[str, tuple[Any, ...]]"


def term_list(e: Aff) -> list[Aff]:
    """The terms of ``e`` in the order of sympy's ``Add.args`` (the constant first, then
    the terms by sympy's ``Basic.compare``): code generation writes sums in this order, as
    it did when the expressions were sympy's."""
    terms = [Aff({a: c}, 0) for a, c in e.coeffs.items()]
    terms.sort(key=cmp_to_key(lambda x, y: _compare(_node(x), _node(y))))
    return [Aff({}, e.const), *terms] if e.const or not terms else terms


def _number_node(c: Num) -> Node:
    named = {0: "Zero", 1: "One", -1: "NegativeOne"}
    if c.denominator == 1:
        n = int(c)
        return (named[n], ()) if n in named else ("Integer", (n,))
    if c == Fraction(1, 2):
        return "Half", ()
    return "Rational", (c.numerator, c.denominator)


def _atom_node(a: Atom) -> Node:
    if isinstance(a, Sym):
        return "Symbol", (a.name,)
    if isinstance(a, Call):
        return a.base, tuple(_node(x) for x in a.args)
    return "floor", (_node(a.arg),)


def _node(e: Aff) -> Node:
    """``e`` as sympy's tree: ``(class name, hashable content)``."""
    if not e.coeffs:
        return _number_node(e.const)
    if len(e.coeffs) == 1 and not e.const:
        ((a, c),) = e.coeffs.items()
        return _atom_node(a) if c == 1 else ("Mul", (_number_node(c), _atom_node(a)))
    return "Add", tuple(_node(t) for t in term_list(e))


def _compare(x: Node, y: Node) -> int:
    """sympy's ``Basic.compare`` on two trees."""
    if x[0] != y[0]:
        unknown = len(_CLASS_ORDER) + 1
        i, j = _CLASS_ORDER.get(x[0], unknown), _CLASS_ORDER.get(y[0], unknown)
        if i == unknown and j == unknown:
            return (x[0] > y[0]) - (x[0] < y[0])
        return (i > j) - (i < j)
    if len(x[1]) != len(y[1]):
        return (len(x[1]) > len(y[1])) - (len(x[1]) < len(y[1]))
    for a, b in zip(x[1], y[1], strict=True):
        c = _compare(a, b) if isinstance(a, tuple) else (a > b) - (a < b)
        if c:
            return c
    return 0


# ----------------------------------------------------------------------------- sympy edge
def to_sympy(e: Aff) -> sp.Expr:
    """The same expression as sympy (integer symbols, undefined-function calls)."""
    import sympy as sp_

    from spf.sets.calls import sympy_call

    def atom(a: Atom) -> Any:
        if isinstance(a, Sym):
            return sp_.Symbol(a.name, integer=True)
        if isinstance(a, Call):
            return sympy_call(a.name, [to_sympy(x) for x in a.args])
        return sp_.floor(to_sympy(a.arg))

    terms: list[Any] = [sp_.Rational(e.const.numerator, e.const.denominator)]
    for a, c in e.coeffs.items():
        terms.append(sp_.Rational(c.numerator, c.denominator) * atom(a))
    return sp_.expand(sp_.Add(*terms))


def from_sympy(expr: Any) -> Aff:
    """A quasi-affine sympy expression as :class:`Aff` (``ValueError`` for anything else)."""
    import sympy as sp_

    from spf.sets.calls import sympy_call_parts

    if expr.is_Rational:
        r = sp_.Rational(expr)
        return const(Fraction(int(r.p), int(r.q)))
    if isinstance(expr, sp_.Symbol):
        return sym(expr.name)
    if isinstance(expr, sp_.floor):
        return floor(from_sympy(expr.args[0]))
    if isinstance(expr, sp_.Add):
        return total(from_sympy(a) for a in expr.args)
    if isinstance(expr, sp_.Mul):
        out = const(1)
        for a in expr.args:
            out = out * from_sympy(a)
        return out
    if isinstance(expr, sp_.core.function.AppliedUndef):
        name, args = sympy_call_parts(expr)
        return call(name, [from_sympy(a) for a in args])
    raise ValueError(f"not a quasi-affine expression: {expr}")

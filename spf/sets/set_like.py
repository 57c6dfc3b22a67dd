"""The public ``Set`` and ``Relation``: named, immutable, hashable, UF-aware.

>>> s = Set("{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}")
>>> r = Relation("{[i,k] -> [ii,k]: ii = i+1}")
>>> print(r.apply(s))
{[ii, k] : 1 <= ii && ii <= N && k < rowptr(ii) && rowptr(ii - 1) <= k}
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from spf.clang import isl_reserved
from spf.errors import ArgumentError, ArityError, VerifyError
from spf.sets import concrete, emptiness, hidden, ops
from spf.sets import syntax as ast
from spf.sets.calls import call_signatures, inferred_uf
from spf.sets.convert import convert
from spf.sets.inverse import simplify_inverses, with_inverses
from spf.sets.memo import Table, memo
from spf.sets.parse import parse_document
from spf.sets.printer import (
    expr_text,
    function_display,
    inverse_function_display,
    term_texts,
    to_text,
    tuple_texts,
)
from spf.sets.uf import UF

if TYPE_CHECKING:
    import islpy as isl

    from spf.sets.body import Body

_T = TypeVar("_T", bound="_SetLike")


class _SetLike:
    """What ``Set`` and ``Relation`` share: parsing, UF declarations, algebra, printing."""

    __slots__ = ("_body", "_hash", "_source", "_text", "_ufs")
    _is_relation = False

    def __init__(self, text: str, ufs: Mapping[str, UF] | Sequence[UF] | None = None) -> None:
        if not isinstance(text, str):
            raise ArgumentError(
                f"{type(self).__name__}() takes set text, got {type(text).__name__}"
            )
        decls = _decl_map(ufs)
        body = _parsed(text, None if decls is None else tuple(sorted(decls.items())))
        if (body.n_in is not None) != self._is_relation:
            want = "a relation '{[...] -> [...]}'" if self._is_relation else "a set '{[...]}'"
            raise ArgumentError(f"{type(self).__name__} expects {want}, got {text!r}")
        self._init(body, decls or {}, (text, decls is None))

    def _init(
        self, body: Body, ufs: Mapping[str, UF], source: tuple[str, bool] | None = None
    ) -> None:
        self._body = body
        self._ufs = dict(ufs)
        self._text: str | None = None
        self._hash: int | None = None
        self._source = source
        """The text this object was parsed from and whether its UFs were undeclared (None
        for a result of an operation): with the declarations it determines the object, so
        a cache key can use it instead of printing (``spf.runtime.warm``)."""

    @classmethod
    def _make(cls: type[_T], body: Body, ufs: Mapping[str, UF]) -> _T:
        obj = cls.__new__(cls)
        obj._init(simplify_inverses(body, ufs), ufs)
        return obj

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """The fields for pickle, without the cached hash: ``hash`` of text is salted per
        process, so an object loaded by another interpreter computes its own."""
        fields = {n: getattr(self, n) for n in _SetLike.__slots__ if hasattr(self, n)}
        return None, {**fields, "_hash": None}

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} objects are immutable")

    def __setattr__(self, name: str, value: Any) -> None:
        if (name in _SetLike.__slots__ and not hasattr(self, name)) or name in ("_text", "_hash"):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError(f"{type(self).__name__} objects are immutable")

    # --- views
    @property
    def params(self) -> frozenset[str]:
        """Names of the symbolic constants."""
        return self._body.params()

    @property
    def uf_calls(self) -> tuple[str, ...]:
        """The UF calls used, as text (``"rowptr(i + 1)"``), innermost first."""
        return term_texts(self._body)

    @property
    def ufs(self) -> dict[str, UF]:
        """The UF declarations this object carries (declared ones only)."""
        return dict(self._ufs)

    @property
    def inferred_ufs(self) -> dict[str, UF]:
        """A declaration of every UF this object calls: the declared ones, and the others
        as they are called (their arity; for a tuple-valued UF, as wide as the highest
        component read, at least 2).

        >>> Set("{[k]: f(k, 0) < coord(k)[2]}").inferred_ufs
        {'coord': UF('coord', out_arity=3), 'f': UF('f', arity=2)}
        """
        out = {n: d for n, d in self._ufs.items() if n in call_signatures(self._body.terms)}
        for name in sorted(call_signatures(self._body.terms).keys() - out.keys()):
            out[name] = inferred_uf(self._body.terms, name)
        return dict(sorted(out.items()))

    def _names(self, start: int, stop: int) -> tuple[str, ...]:
        """Tuple entries as ``str`` shows them (constants and expressions as their text)."""
        return tuple_texts(self._body)[start:stop]

    # --- algebra helpers
    def _coerce(self: _T, other: object, what: str) -> _T:
        if isinstance(other, str):
            other = type(self)(other, self._ufs or None)
        if not isinstance(other, type(self)):
            raise ArgumentError(
                f"{what}: expected a {type(self).__name__}, got {type(other).__name__}"
            )
        return other

    def _merged_ufs(self, other: _SetLike) -> dict[str, UF]:
        """The declarations of both operands (they must agree, and so must the ways the
        two call each UF: its arity, and whether it returns a tuple)."""
        return self._merged_ufs_all([other])

    def _merged_ufs_all(self, others: Sequence[_SetLike]) -> dict[str, UF]:
        """:meth:`_merged_ufs` of this operand and each of ``others``: every two agree."""
        out = dict(self._ufs)
        sigs = call_signatures(self._body.terms)
        where: dict[str, _SetLike] = dict.fromkeys(sigs, self)
        for other in others:
            for name, decl in other._ufs.items():
                if name in out and out[name] != decl:
                    raise VerifyError(
                        f"conflicting declarations of UF {name!r}: {out[name]} and {decl}"
                    )
                out[name] = decl
            theirs = call_signatures(other._body.terms)
            for name in sorted(sigs.keys() & theirs.keys()):
                if sigs[name] != theirs[name]:
                    raise ArityError(
                        f"UF {name!r} is called as {_signature_text(name, sigs[name])} in "
                        f"{where[name]} but as {_signature_text(name, theirs[name])} in {other}"
                    )
            for name, sig in theirs.items():
                sigs.setdefault(name, sig)
                where.setdefault(name, other)
        return out

    def _check_same_arity(self, other: _SetLike, what: str) -> None:
        a, b = self._body, other._body
        if (a.n_in, a.n_tuple) != (b.n_in, b.n_tuple):
            raise ArityError(f"{what}: arities differ: {self} and {other}")

    def intersect(self: _T, other: _T | str) -> _T:
        """Points in both (positional: ``other``'s tuple is renamed to this one's)."""
        o = self._coerce(other, "intersect")
        self._check_same_arity(o, "intersect")
        return self._make(ops.intersect(self._body, o._body), self._merged_ufs(o))

    def union(self: _T, other: _T | str) -> _T:
        """Points in either."""
        return self.union_all([other])

    def union_all(self: _T, others: Sequence[_T | str]) -> _T:
        """Points in this or any of ``others``: ``union`` of each in turn, made canonical
        once (one at a time, each union merged the calls of all the operands before it
        again: quadratic in the operands).

        >>> Set("{[i]: i = 1}").union_all(["{[i]: i = 3}", "{[i]: i = 5}"]).points()
        [(1,), (3,), (5,)]
        """
        from spf.sets.convert import union_many

        if not others:
            return self
        operands = [self._coerce(o, "union") for o in others]
        for o in operands:
            self._check_same_arity(o, "union")
        body = union_many([self._body, *(o._body for o in operands)])
        return self._make(body, self._merged_ufs_all(operands))

    def hull(self: _T) -> _T:
        """One conjunction that contains every point: the convex hull of the set with its UF
        values as dimensions (isl's ``convex_hull``), a superset whatever the UFs are.

        isl's ``convex_hull`` rather than ``simple_hull``: it is the tightest convex
        superset (``simple_hull`` keeps only constraints of the parts, so the hull of
        ``{[i, j]: 0 <= i < N && j = i} union {[i, j]: 0 <= j < N && i = j + 1}`` loses
        ``j < N``), and the sets spf builds have few parts. It is sound with UFs: the
        constraints on UF values are kept only where every part constrains them (a part
        that does not call ``f`` leaves ``f``'s value free, and so does the hull), so a
        call the hull makes is one every part made.

        >>> Set("{[i]: 0 <= i < 3; [i]: 5 <= i < 7}").hull()
        Set('{[i] : 0 <= i && i <= 6}')
        >>> Set("{[i, k]: 0 <= i < N && (k = col(i) || k = col(i) + 2)}").hull()
        Set('{[i, k] : 0 <= i && col(i) <= k && i < N && k <= col(i) + 2}')
        """
        return self._make(ops.hull(self._body), self._ufs)

    def polyhedral_hull(self: _T) -> _T:
        """One conjunction with neither stride nor existential variable that contains every
        point (isl's ``polyhedral_hull``): equal to the set exactly when the set is one
        convex polyhedron of integer points, without gap or stride.

        >>> Set("{[v]: exists e: v = 2e and 0 <= v < 8}").polyhedral_hull()
        Set('{[v] : 0 <= v && v <= 6}')
        """
        return self._make(ops.polyhedral_hull(self._body), self._ufs)

    def disjuncts(self: _T) -> list[_T]:
        """The conjunctions whose union this is, each as a set or relation of its own (the
        pieces printed between ``union``; one for a conjunction, none for an empty set).

        >>> sorted(str(d) for d in Set("{[i]: 0 <= i < 3; [i]: 5 <= i < 7}").disjuncts())
        ['{[i] : 0 <= i && i <= 2}', '{[i] : 5 <= i && i <= 6}']
        """
        import islpy as isl

        body = self._body
        return [
            self._make(body.with_iset(isl.Set.from_basic_set(b)), self._ufs)
            for b in body.iset.get_basic_sets()
        ]

    def is_empty(self) -> bool:
        """True only when provably empty, using UF functional consistency and declarations."""
        return emptiness.is_empty(self._body, self._ufs)

    def is_subset(self: _T, other: _T | str) -> bool:
        """True only when provably a subset (same reasoning as :meth:`is_empty`)."""
        o = self._coerce(other, "is_subset")
        self._check_same_arity(o, "is_subset")
        if o._body.hidden and self == o:
            return True
        ufs = self._merged_ufs(o)
        return any(
            emptiness.is_empty(d, ufs) for d in hidden.subset_differences(self._body, o._body)
        )

    def is_equal(self: _T, other: _T | str) -> bool:
        """Semantic equality: each is provably a subset of the other.

        ``==`` compares canonical forms (fast, structural: the same constraints up to
        renamed ``exists`` variables); ``is_equal`` also sees one set in two forms, e.g.
        with and without an ``exists`` the tuple determines:

        >>> a = Set("{[i]: exists(a: i = 2a && f(a) > 0)}")
        >>> c = Set("{[i]: f(floor(i/2)) > 0 && i % 2 = 0}")
        >>> a == c, a.is_equal(c)
        (False, True)
        """
        o = self._coerce(other, "is_equal")
        self._check_same_arity(o, "is_equal")
        return self == o or (self.is_subset(o) and o.is_subset(self))

    # --- identity
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _SetLike) or type(other) is not type(self):
            return NotImplemented
        return hidden.same_up_to_hidden(self._body, other._body)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(hidden.structure_key(self._body))
        return self._hash

    def __str__(self) -> str:
        if self._text is None:
            self._text = to_text(self._body)
        return self._text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def body_iset(self) -> isl.Set:
        """The underlying isl set (tuple dims ``__t0 ...``, then hidden and UF-value dims)."""
        return self._body.iset

    def _points(
        self,
        params: Mapping[str, int] | None,
        ufs: Mapping[str, Any] | None,
        fixed: Sequence[int] | None,
    ) -> list[tuple[int, ...]]:
        return concrete.points(self._body, params or {}, ufs or {}, fixed)


class Set(_SetLike):
    """A set of integer tuples whose constraints may call UFs (docs/api.md).

    >>> s = Set("{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}")
    >>> s.arity, sorted(s.params), s.uf_calls
    (3, ['N'], ('col(k)', 'rowptr(i + 1)', 'rowptr(i)'))
    """

    __slots__ = ()

    @property
    def arity(self) -> int:
        return self._body.n_tuple

    @property
    def tuple_vars(self) -> tuple[str, ...]:
        return self._names(0, self._body.n_tuple)

    def bounds(self, params: Mapping[str, int] | None = None) -> list[tuple[int, int]] | None:
        """Smallest and largest value of each tuple entry for the given parameters
        (UF values unconstrained); None when the set is empty; ``SpfError`` if unbounded.

        >>> Set("{[v]: 0 <= v <= NNZ}").bounds({"NNZ": 9})
        [(0, 9)]
        """
        return concrete.bounds(self._body, params or {})

    def product(self, other: Set | str) -> Set:
        """The cartesian product: tuples of this set followed by tuples of ``other``."""
        o = self._coerce(other, "product")
        return Set._make(ops.cartesian(self._body, o._body), self._merged_ufs(o))

    def as_relation(self, n_in: int) -> Relation:
        """This set read as a relation whose first ``n_in`` entries are the inputs."""
        if not 0 <= n_in <= self.arity:
            raise ArityError(f"as_relation: n_in = {n_in} is not within 0..{self.arity}")
        return Relation._make(ops.with_n_in(self._body, n_in), self._ufs)

    def contains(
        self,
        point: Sequence[int],
        params: Mapping[str, int] | None = None,
        ufs: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether the concrete ``point`` is in the set for the given parameters and UFs."""
        point = tuple(int(x) for x in point)
        if len(point) != self.arity:
            raise ArityError(f"point {point} has {len(point)} entries, the set arity {self.arity}")
        return bool(self._points(params, ufs, point))

    def points(
        self, params: Mapping[str, int] | None = None, ufs: Mapping[str, Any] | None = None
    ) -> list[tuple[int, ...]]:
        """All points in lexicographic order (raises ``SpfError`` if unbounded)."""
        return self._points(params, ufs, None)


class Relation(_SetLike):
    """A relation between integer tuples whose constraints may call UFs.

    >>> Relation("{[i,k,j] -> [0,i,0,k,0,j,0]}").out_vars
    ('0', 'i', '0', 'k', '0', 'j', '0')
    """

    __slots__ = ()
    _is_relation = True

    @property
    def in_arity(self) -> int:
        assert self._body.n_in is not None
        return self._body.n_in

    @property
    def out_arity(self) -> int:
        return self._body.n_tuple - self.in_arity

    @property
    def in_vars(self) -> tuple[str, ...]:
        return self._names(0, self.in_arity)

    @property
    def out_vars(self) -> tuple[str, ...]:
        return self._names(self.in_arity, self._body.n_tuple)

    def apply(self, s: Set | str) -> Set:
        """The image of ``s`` under this relation."""
        if isinstance(s, str):
            s = Set(s, self._ufs or None)
        if not isinstance(s, Set):
            raise ArgumentError(f"apply: expected a Set, got {type(s).__name__}")
        if s.arity != self.in_arity:
            raise ArityError(
                f"apply: the relation takes {self.in_arity}-tuples, the set has arity "
                f"{s.arity}: {self} applied to {s}"
            )
        return Set._make(ops.apply(self._body, s._body), self._merged_ufs(s))

    def compose(self, other: Relation | str) -> Relation:
        """``self . other``: apply ``other`` first, then this relation (IEGenLib ``Compose``)."""
        o = self._coerce(other, "compose")
        if o.out_arity != self.in_arity:
            raise ArityError(
                f"compose: {o} produces {o.out_arity}-tuples but {self} takes {self.in_arity}"
            )
        return Relation._make(ops.compose(self._body, o._body), self._merged_ufs(o))

    def inverse(self) -> Relation:
        """The relation with inputs and outputs swapped."""
        return Relation._make(ops.inverse(self._body), self._ufs)

    def pad_outputs(self, width: int) -> Relation:
        """This relation with outputs ``0`` appended up to ``width`` (2d+1 padding).

        >>> Relation("{[i] -> [0, i, 0]}").pad_outputs(5)
        Relation('{[i] -> [0, i, 0, 0, 0]}')
        """
        extra = width - self.out_arity
        if extra <= 0:
            return self
        return Relation._make(ops.append_zeros(self._body, extra), self._ufs)

    def as_set(self) -> Set:
        """The relation as a set of tuples ``[inputs, outputs]`` (isl's ``wrap``)."""
        return Set._make(ops.with_n_in(self._body, None), self._ufs)

    def as_function(self, in_names: Sequence[str] | None = None) -> tuple[str, ...] | None:
        """The outputs as expressions of the inputs (named ``in_names``, default
        ``in_vars``), parameters and UF calls on the inputs, when the relation determines
        each output as one quasi-affine expression; else None.

        >>> Relation("{[i,j] -> [i0, j, 0]: i0 = floor(i/4)}").as_function()
        ('floor(i/4)', 'j', '0')
        >>> Relation("{[i,k] -> [i,k,j]: j = col(k)}").as_function(["a", "b"])
        ('a', 'b', 'col(b)')
        """
        exprs = self.function_exprs(in_names)
        return None if exprs is None else tuple(expr_text(e) for e in exprs)

    def function_exprs(self, in_names: Sequence[str] | None = None) -> list[Any] | None:
        """Like :meth:`as_function`, as :class:`~spf.sets.affine.Aff` expressions."""
        names = list(in_names) if in_names is not None else list(self.in_vars)
        self._check_names(names, self.in_arity, "inputs")
        exprs = ops.as_function(self._body)
        return None if exprs is None else function_display(self._body, names, exprs)

    def inverse_function_exprs(self, out_names: Sequence[str]) -> list[Any] | None:
        """``self.inverse().function_exprs(out_names)`` without building the inverse: the
        inputs as expressions of the outputs (named ``out_names``), parameters and UF
        calls on the outputs, or None when the relation does not determine them so."""
        names = list(out_names)
        self._check_names(names, self.out_arity, "outputs")
        exprs = ops.inverse_as_function(self._body)
        return None if exprs is None else inverse_function_display(self._body, names, exprs)

    @staticmethod
    def _check_names(names: list[str], arity: int, what: str) -> None:
        if len(names) != arity:
            raise ArityError(f"as_function: {len(names)} names for {arity} {what}")

    def domain(self) -> Set:
        """The set of inputs."""
        return Set._make(ops.domain_or_range(self._body, "domain"), self._ufs)

    def range(self) -> Set:
        """The set of outputs."""
        return Set._make(ops.domain_or_range(self._body, "range"), self._ufs)

    def intersect_domain(self, s: Set | str) -> Relation:
        """This relation restricted to inputs in ``s``."""
        return self._restrict(s, outputs=False)

    def intersect_range(self, s: Set | str) -> Relation:
        """This relation restricted to outputs in ``s``."""
        return self._restrict(s, outputs=True)

    def _restrict(self, s: Set | str, *, outputs: bool) -> Relation:
        if isinstance(s, str):
            s = Set(s, self._ufs or None)
        want = self.out_arity if outputs else self.in_arity
        if s.arity != want:
            raise ArityError(f"restricting {self} by {s}: arity {s.arity}, expected {want}")
        ident = Relation._make(ops.identity_on(s._body, self._body, outputs=outputs), s._ufs)
        return self.intersect(ident)

    def contains(
        self,
        point: Sequence[int] | tuple[Sequence[int], Sequence[int]],
        params: Mapping[str, int] | None = None,
        ufs: Mapping[str, Any] | None = None,
    ) -> bool:
        """Membership of a pair ``(input, output)`` (or of the flat tuple of both)."""
        flat = _flatten(point)
        if len(flat) != self._body.n_tuple:
            raise ArityError(f"point {point} does not match {self.in_arity} -> {self.out_arity}")
        return bool(self._points(params, ufs, flat))

    def points(
        self, params: Mapping[str, int] | None = None, ufs: Mapping[str, Any] | None = None
    ) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """All pairs ``(input, output)`` in lexicographic order (raises if unbounded)."""
        n = self.in_arity
        return [(p[:n], p[n:]) for p in self._points(params, ufs, None)]


@memo(4096)
def _parsed(text: str, decls: tuple[tuple[str, UF], ...] | None) -> Body:
    """The canonical body of ``text`` under the declarations ``decls`` (None: undeclared
    UFs, arities inferred). Bodies are immutable, so one parse serves every equal request;
    errors are raised afresh each time (``lru_cache`` does not keep exceptions).

    Under declarations, the body is also remembered by the text and the declarations it
    can read (:func:`_read_declarations`): the same text comes back under the declarations
    of each program that uses it (a wavefront's executor declares more UFs than its
    inspector stages, which check the same assumptions): Gauss-Seidel's cold wavefront
    compile converts 370 texts instead of 451."""
    if decls is None:
        return convert(parse_document(text), None, {})
    key = (text, _read_declarations(text, decls))
    found = _BY_READ_DECLARATIONS.get(key)
    if found is None:
        ufs = dict(decls)
        body = simplify_inverses(convert(parse_document(text), ufs, {}), ufs)
        found = _BY_READ_DECLARATIONS.put(key, body)
    return found


_BY_READ_DECLARATIONS: Table[tuple[str, tuple[tuple[str, UF], ...]], Body] = Table(4096)


def _read_declarations(text: str, decls: tuple[tuple[str, UF], ...]) -> tuple[tuple[str, UF], ...]:
    """The declarations of ``decls`` that converting ``text`` can read: those of the names
    the text spells (whether a name is a UF, its arity and components) and of the inverses
    they declare, in turn (simplifying inverses reads those; a UF's declared domain and
    range call no UF). The others cannot change the body: with the text fixed, the names
    absent from the result are the text's names that ``decls`` leaves undeclared."""
    table = dict(decls)
    names = [n for n in _identifiers(text) if n in table]
    out: dict[str, UF] = {}
    while names:
        decl = table.get(name := names.pop())
        if decl is not None and name not in out:
            out[name] = decl
            names += [decl.inverse] if decl.inverse is not None else []
    return tuple(sorted(out.items()))


@memo(4096)
def _identifiers(text: str) -> frozenset[str]:
    """Every identifier-like word of ``text`` (a superset of the names it uses)."""
    return frozenset(_WORD.findall(text))


_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def expression_params(text: str) -> frozenset[str]:
    """The symbolic constants of the expression ``text``: ``Set("{[_x]: _x = <text>}")``'s
    params, read off the syntax tree when the expression is a sum of distinct names and
    integers (a data space's extent, ``N + 1``: converting it to a set only to read its
    names costs ~5 ms cold), else from that set (which also raises its errors)."""
    got = _EXPRESSION_PARAMS.get(text)
    if got is None:
        names = _summed_names(text)
        got = Set(f"{{[_x]: _x = {text}}}").params if names is None else frozenset(names)
        _EXPRESSION_PARAMS.put(text, got)
    return got


_EXPRESSION_PARAMS: Table[str, frozenset[str]] = Table(1024)


def _summed_names(text: str) -> list[str] | None:
    """The names of ``text`` when it parses as a sum (``+``, ``-``) of integers and distinct
    names that set text may use as constants; None otherwise."""
    (piece,) = parse_document(f"{{[_x]: _x = {text}}}").pieces
    if not isinstance(piece.formula, ast.Compare):
        return None
    names: list[str] = []
    todo: list[ast.Expr] = [piece.formula.right]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name):
            names.append(node.name)
        elif isinstance(node, ast.Neg):
            todo.append(node.operand)
        elif isinstance(node, ast.BinOp) and node.op in ("+", "-"):
            todo += [node.left, node.right]
        elif not isinstance(node, ast.Num):
            return None
    if len(set(names)) != len(names):
        return None
    if any(n == "_x" or n.startswith("__") or isl_reserved(n) for n in names):
        return None
    return names


def _signature_text(name: str, signature: tuple[int, bool]) -> str:
    n, tuple_valued = signature
    args = ", ".join(["_"] * n)
    return f"{name}({args})[...]" if tuple_valued else f"{name}({args})"


def _flatten(point: Any) -> tuple[int, ...]:
    if len(point) == 2 and all(isinstance(p, (tuple, list)) for p in point):
        return tuple(int(x) for x in point[0]) + tuple(int(x) for x in point[1])
    return tuple(int(x) for x in point)


def _decl_map(ufs: Mapping[str, UF] | Sequence[UF] | None) -> dict[str, UF] | None:
    if ufs is None:
        return None
    items = list(ufs.items()) if isinstance(ufs, Mapping) else [(u.name, u) for u in ufs]
    out: dict[str, UF] = {}
    for name, decl in items:
        if not isinstance(decl, UF):
            raise ArgumentError(f"ufs[{name!r}] must be an spf.UF declaration, got {decl!r}")
        if decl.name != name:
            raise ArgumentError(f"ufs key {name!r} names UF {decl.name!r}")
        out[name] = decl
    return with_inverses(out)

"""C expressions of the imported function in spf's two notations: affine text for domains and
subscripts (iterators, symbolic constants, integer literals, index arrays as UF calls
``rowptr(i + 1)``), and statement-source text (``$A$(i, j)``, ``$t$`` for scalars, math calls
kept) with only the parentheses C's precedence needs, so the operation order is unchanged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from spf.clang import C_PREC, MATH_1, MATH_2
from spf.errors import SpfError
from spf.frontend.conds import Cmp, Cond, conj, disj, negate
from spf.frontend.cparse import INT_LITERALS, Source, c_ast, c_integer, nodes
from spf.frontend.pointers import PointerAlias, resolve_partial
from spf.frontend.rewrite import located

if TYPE_CHECKING:
    from spf.frontend.decls import Types, Var
    from spf.frontend.induction import Inductions, State

_CALLS = frozenset(
    [*MATH_1, *MATH_2, *(f + "f" for f in (*MATH_1, *MATH_2)), "abs", "labs", "llabs", "min", "max"]
)
_MIN_MAX = {"min": "min", "max": "max", "MIN": "min", "MAX": "max", "fmin": "min", "fmax": "max"}
_PREC = C_PREC
_CMP = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=", "!=": "!="}
_SWAP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
_INT = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
_NAMED_CONSTANTS = frozenset({"INFINITY", "NAN"})


#: Affine text, or a min/max of such trees: ``("min", [t1, t2])``.
Tree = str | tuple[str, list["Tree"]]


class NotAffineError(SpfError):
    """Internal: an expression outside the affine fragment (``why`` says what, at ``node``).
    The import catches it and reports a located ``ParseError``; it is an ``SpfError`` so that
    one escaping by mistake is still in the family."""

    def __init__(self, node: Any, why: str) -> None:
        super().__init__(why)
        self.node = node
        self.why = why


@dataclass
class Scope:
    """What every name of the function is; ``iters`` are the loops open at this point,
    ``aliases`` integer locals bound once to an affine value (``int j = col[k];``) and
    ``minmax`` those bound to a min/max of affine values (``int hi = min(n, i + 32);``),
    which bounds and conditions read as conjunctions or disjunctions."""

    src: Source
    types: Types
    vars: dict[str, Var]
    consts: set[str]  # integer symbolic constants
    fconsts: set[str]  # by-value floating scalars
    ufs: set[str]  # index arrays
    iterators: set[str]  # every loop variable of the function
    iters: tuple[str, ...] = ()
    aliases: dict[str, str] = field(default_factory=dict)
    bound_only: set[str] = field(default_factory=set)  # aliases assigned in a block, not data
    pointers: dict[str, PointerAlias] = field(default_factory=dict)  # double *p = &a[k];
    pointer_roots: dict[str, str] = field(default_factory=dict)  # every pointer's array
    minmax: dict[str, tuple[Tree, str]] = field(default_factory=dict)  # int hi = min(n, i+32);
    ivs: dict[str, State] = field(default_factory=dict)  # induction variables (k++) here
    inductions: Inductions | None = None
    in_index: int = 0  # > 0 while rendering a subscript of a statement source
    conds: str = ""  # the enclosing loops' and ifs' affine constraints (set text)
    in_bound: bool = False  # a loop condition: a quotient C truncates is a min/max tree
    rendering: bool = False  # inside value(): the expression's own flags below hold
    unsigned_mix: bool = False  # the expression being rendered mixes in unsigned values
    facts: list[tuple[str, Any]] = field(default_factory=list)  # dividends >= 0 assumed

    def data(self, name: str) -> bool:
        return (
            name in self.vars
            and name not in self.ufs
            and name not in self.consts
            and name not in self.fconsts
            and name not in self.iterators
        )

    def fail(self, node: Any, message: str, hint: str = "") -> Exception:
        return self.src.error(node, message, hint)

    # ---------- affine text ----------

    def affine(self, node: Any) -> str:
        """Affine text of ``node`` (``NotAffineError`` when it is outside the fragment); a
        constant is folded (``N - 1`` with ``#define N 3``: ``2``)."""
        text, value = self._aff(node)
        return text if value is None else str(value)

    def _aff(self, node: Any) -> tuple[str, int | None]:
        if isinstance(node, c_ast.Constant):
            m = _INT.fullmatch(node.value) if node.type in INT_LITERALS else None
            if m is None:
                raise NotAffineError(node, f"{node.value} is not an integer")
            value = c_integer(m.group(1))
            if value is None:
                raise NotAffineError(node, f"{node.value} is not an integer")
            return str(value), value
        if isinstance(node, c_ast.ID):
            return self._aff_name(node), None
        if isinstance(node, c_ast.Cast):
            to = " ".join(self.types.cast_type(node.to_type).split())
            if to not in _WIDE_SIGNED:  # (unsigned)(i - 2) < 3u, (double)i / 2: C's meaning
                raise NotAffineError(node, f"a cast to {to} changes the value's arithmetic")
            return self._aff(node.expr)
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            if _unsigned_literal(node.expr):
                raise NotAffineError(node, f"-{node.expr.value} wraps (an unsigned constant)")
            text, sub = self._aff(node.expr)
            if node.op == "+":
                return text, sub
            return (f"-({text})", None if sub is None else -sub)
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*", "/", "%"):
            return self._aff_binary(node)
        if isinstance(node, c_ast.ArrayRef):
            return self._aff_ref(node)
        raise NotAffineError(node, _not_affine(node))

    def _aff_name(self, node: Any) -> str:
        name = node.name
        if name in self.aliases or name in self.minmax or name in self.ivs:
            self._exact_type(node)
        if name in self.aliases:
            return _wrap(self.aliases[name])
        if name in self.minmax:
            why = f"{name!r} is {self.minmax[name][1]}, affine only in a bound or condition"
            raise NotAffineError(node, why)
        if name in self.ivs and self.inductions is not None:
            return _wrap(self.inductions.read(name, node, self.ivs, index=True, notation=True))
        if name in self.iters or name in self.consts:
            return str(name)
        raise NotAffineError(node, self._why_name(name))

    def _aff_ref(self, node: Any) -> tuple[str, int | None]:
        """An index array read, ``rowptr(i + 1)`` (or the scalar a pointer points at)."""
        name, subs = self.chain(node)
        if not subs:  # *p with p = &t
            return self._aff(located(c_ast.ID(name), node))
        if name not in self.ufs:
            raise NotAffineError(node, f"{name!r} is a data array, not an index array")
        args = ", ".join(self.affine(s) for s in subs)
        return f"{name}({args})", None

    def _aff_binary(self, node: Any) -> tuple[str, int | None]:
        for side in (node.left, node.right):
            if _unsigned_literal(side):  # -1 / 3u is 1431655765 in C
                raise NotAffineError(side, f"{side.value} is unsigned: C's arithmetic wraps")
        (lt, lv), (rt, rv) = self._aff(node.left), self._aff(node.right)
        both = lv is not None and rv is not None
        if node.op == "+":
            return f"{lt} + {rt}", (lv + rv if lv is not None and rv is not None else None)
        if node.op == "-":
            right = f"({rt})" if " " in rt else rt
            text = f"{lt} - {right}"
            if (lv is None or rv is None) and self._unsigned(text) and not self._proved(text):
                raise NotAffineError(  # unsigned i: i - 1 >= 0 always holds in C
                    node, f"{text} is unsigned arithmetic, which wraps where it would be < 0"
                )
            return text, (lv - rv if lv is not None and rv is not None else None)
        if node.op == "*":
            if lv is None and rv is None:
                raise NotAffineError(node, "a product of two variables is not affine")
            product = f"{_factor(lt)}*{_factor(rt)}"
            return product, (lv * rv if lv is not None and rv is not None else None)
        if rv is None or rv <= 0:
            raise NotAffineError(node, f"'{node.op}' by a non-constant (or non-positive) divisor")
        if both and lv is not None:  # C truncates toward zero: -3 / 2 is -1, -4 % 3 is -1
            q = abs(lv) // rv * (1 if lv >= 0 else -1)
            value = q if node.op == "/" else lv - rv * q
            return str(value), value
        if not self._nonnegative(lt, node):
            raise NotAffineError(
                node,
                f"C's '{node.op}' truncates toward zero, which spf's floor and modulo match "
                f"only where the dividend {lt} is >= 0, and that is not proved here",
            )
        return (f"floor(({lt})/{rv})" if node.op == "/" else f"({lt}) % {rv}"), None

    def _unsigned(self, expr: str) -> bool:
        """Whether ``expr`` names a variable of an unsigned type (its arithmetic wraps)."""
        for word in re.findall(r"[A-Za-z_]\w*", expr):
            var = self.vars.get(word)
            base = "" if var is None else var.base
            if base.startswith(("unsigned", "uint")) or base in ("size_t", "uintptr_t"):
                return True
        return False

    def _proved(self, expr: str) -> bool:
        """Whether isl proves ``expr >= 0`` wherever the enclosing constraints hold (a
        placeholder of what the earlier iterations of a loop added to an induction variable
        it only increments by constants ``>= 0`` counts as any value ``>= 0``)."""
        from spf.errors import SpfError
        from spf.sets import Set

        where = f"{self.conds} && " if self.conds else ""
        names = list(self.iters)
        for key in sorted(self.inductions.nonnegative if self.inductions else ()):
            if key in expr:  # what earlier iterations added to a counter only incremented
                name = f"_held{key.strip('@')}"
                expr = expr.replace(key, name)
                names.append(name)
                where += f"{name} >= 0 && "
        try:
            return Set(f"{{[{', '.join(names)}]: {where}{expr} < 0}}").is_empty()
        except (SpfError, ValueError):
            return False

    def _nonnegative(self, expr: str, node: Any) -> bool:
        """Whether ``expr`` is ``>= 0`` wherever the enclosing constraints hold (isl), or,
        over integer parameters alone, the kernel may assume it (``comp.assume``, checked
        at each call: C's result differs otherwise); False when neither holds."""
        if self._proved(expr):
            return True
        words = set(re.findall(r"[A-Za-z_]\w*", expr))
        if words <= self.consts and "(" not in expr:
            self.facts.append((f"{expr} >= 0", node))
            return True
        return False

    def _why_name(self, name: str) -> str:
        if name in self.iterators:
            return f"loop variable {name!r} is used outside its loop"
        if name in self.fconsts:
            return f"{name!r} is a floating-point scalar"
        var = self.vars.get(name)
        if var is not None and var.role in ("param", "global") and var.rank == 0:
            kind = "parameter" if var.role == "param" else "file-scope variable"
            return (  # n-- somewhere: not a symbolic constant any more
                f"{kind} {name!r} is assigned in the function, so it is no constant; copy it "
                "into a local variable and assign that"
            )
        if var is not None:
            return f"{name!r} is a variable, not a loop variable or an integer parameter"
        return f"{name!r} is not declared"

    def chain(self, node: Any) -> tuple[str, list[Any]]:
        """``A[i][j]`` -> ``("A", [i, j])``, through pointer aliases (``p[i]`` with
        ``p = &a[k]``: ``("a", [k + i])``; ``s[0]`` with ``s = &t``: ``("t", [])``);
        ParseError unless ``A`` is a declared array."""
        name, subs = resolve_partial(self, node)
        base = node
        while isinstance(base, c_ast.ArrayRef):
            base = base.name
        if not isinstance(base, c_ast.ID):
            raise self.fail(
                node, "only named arrays may be subscripted", "pointer arithmetic is not supported"
            )
        var = self.vars.get(name or "")
        if name is not None and var is not None and base.name in self.pointers and not subs:
            return name, subs  # a pointer at a scalar
        if name is None or var is None or var.rank == 0:
            raise self.fail(base, f"{base.name!r} is not a declared array")
        if len(subs) != var.rank:
            through = f" (through pointer {base.name!r})" if base.name != name else ""
            raise self.fail(
                node,
                f"{name!r} has {var.rank} dimension(s) but is used with "
                f"{len(subs)} subscript(s){through}",
                "subscript every dimension (pointer arithmetic is not supported)",
            )
        return name, subs

    # ---------- conditions ----------

    def cond(self, node: Any) -> Cond:
        """The affine condition of ``node`` (``NotAffineError`` otherwise); ``min``/``max`` in a
        comparison become conjunctions or disjunctions."""
        if isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
            parts = [self.cond(node.left), self.cond(node.right)]
            return conj(parts) if node.op == "&&" else disj(parts)
        if isinstance(node, c_ast.UnaryOp) and node.op == "!":
            return negate(self.cond(node.expr))
        if isinstance(node, c_ast.BinaryOp) and node.op in _CMP:
            return self.compare(node.left, _CMP[node.op], node.right, node)
        raise NotAffineError(node, "not a comparison")

    def compare(self, left: Any, op: str, right: Any, node: Any) -> Cond:
        """``left op right``; ``min``/``max`` anywhere in a sum (``min(a, b) - 1``, nested
        calls) become conjunctions or disjunctions of comparisons."""
        lt, rt = self.tree(left), self.tree(right)
        for literal, other in ((left, rt), (right, lt)):
            if _unsigned_literal(literal) and not (isinstance(other, str) and self._proved(other)):
                raise NotAffineError(  # i - 2 < 3u compares unsigned: false for i < 2
                    literal, f"{literal.value} is unsigned: C compares the other side unsigned"
                )
        return self._cmp(lt, op, rt, node)

    def _cmp(self, left: Tree, op: str, right: Tree, node: Any) -> Cond:
        if isinstance(right, tuple):
            kind, parts = right
            if op in ("=", "!="):
                raise NotAffineError(node, f"'{op}' with {kind}()")
            subs = [self._cmp(left, op, p, node) for p in parts]
            upper = op in ("<", "<=")
            return conj(subs) if upper == (kind == "min") else disj(subs)
        if isinstance(left, tuple):
            return self._cmp(right, _SWAP[op], left, node)
        return Cmp(left, op, right)

    def _picks(self, node: Any) -> str | None:
        """``"max"`` (``"min"``) when the affine ``c ? a : b`` picks the larger (smaller) of
        ``a`` and ``b`` wherever the enclosing constraints hold, as isl proves (``o < 0 ?
        -o : 0`` is ``max(-o, 0)``); else None."""
        from spf.errors import SpfError
        from spf.frontend.conds import domain_text
        from spf.sets import Set

        try:
            cond = self.cond(node.cond)
            a, b = self.affine(node.iftrue), self.affine(node.iffalse)
        except NotAffineError:
            return None
        where = f"{self.conds} && " if self.conds else ""
        yes, no = domain_text([cond]), domain_text([negate(cond)])

        def never(text: str) -> bool:
            try:
                return Set(f"{{[{', '.join(self.iters)}]: {where}{text}}}").is_empty()
            except (SpfError, ValueError):
                return False

        for kind, smaller in (("max", "<"), ("min", ">")):  # c holds where a wins, else b
            larger = ">" if smaller == "<" else "<"
            if never(f"({yes}) && ({a}) {smaller} ({b})") and never(
                f"({no}) && ({a}) {larger} ({b})"
            ):
                return kind
        return None

    def tree(self, node: Any) -> Tree:
        """Affine text, or ``(kind, parts)`` for a min/max lifted out of sums."""
        if isinstance(node, c_ast.ID) and node.name in self.minmax:
            self._exact_type(node)
            return self.minmax[node.name][0]
        kind = _min_max(node)
        if kind is not None:
            args = node.args.exprs if node.args is not None else []
            if len(args) != 2:
                raise NotAffineError(node, f"{kind} takes two arguments")
            return kind, [self.tree(a) for a in args]
        if isinstance(node, c_ast.TernaryOp):
            picked = self._picks(node)
            if picked is not None:
                return picked, [self.tree(node.iftrue), self.tree(node.iffalse)]
        if self.in_bound and isinstance(node, c_ast.BinaryOp) and node.op == "/":
            return self._quotient(node)
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
            left, right = self.tree(node.left), self.tree(node.right)
            if isinstance(left, str) and isinstance(right, str):
                return self.affine(node)
            return _combine(left, node.op, right)
        if isinstance(node, c_ast.UnaryOp) and node.op == "-":
            inner = self.tree(node.expr)
            return self.affine(node) if isinstance(inner, str) else _combine("0", "-", inner)
        return self.affine(node)

    def _quotient(self, node: Any) -> Tree:
        """C's ``e / c`` in a loop bound, exactly: ``floor(e/c)`` where ``e >= 0`` is proved,
        else the quotient truncated toward zero, ``max(floor(e/c), min(ceil(e/c), 0))``
        (floor for ``e >= 0``, ceil below), which bounds take as a conjunction or disjunction
        (``i < (n - 12) / 2`` with ``n = 9`` runs to ``i = -2`` as in C, not ``-3``)."""
        (lt, lv), (_, rv) = self._aff(node.left), self._aff(node.right)
        if rv is None or rv <= 0 or lv is not None or self._proved(lt):
            return self.affine(node)
        down = f"floor(({lt})/{rv})"
        return "max", [down, ("min", [f"floor(({lt} + {rv - 1})/{rv})", "0"])]

    # ---------- statement-source text ----------

    def value(self, node: Any, outer: int = 0) -> str:
        """Statement-source text of expression ``node`` (parenthesized when its precedence is
        below ``outer``)."""
        if self.rendering:
            text, prec = self._val(node)
        else:  # an expression of its own: C's conversions depend on whether it mixes unsigned
            self.rendering, self.unsigned_mix = True, self._has_unsigned(node)
            try:
                text, prec = self._val(node)
            finally:
                self.rendering = self.unsigned_mix = False
        return f"({text})" if prec < outer else text

    def _has_unsigned(self, node: Any) -> bool:
        """Whether ``node`` reads an unsigned variable or array, or has an unsigned literal or
        cast: then an ``int`` loop variable or parameter, which the generated code holds in
        64 bits, is read as an ``int``, so that C converts it to unsigned as the C does
        (``(i - i) * t > -1`` with ``unsigned t`` compares unsigned)."""
        for n in nodes(node):
            if isinstance(n, c_ast.ID) and n.name in self.vars:
                if self.vars[n.name].base.startswith("uint"):
                    return True
            elif isinstance(n, c_ast.Constant) and n.type in INT_LITERALS:
                if "u" in n.value.lower().lstrip("0x"):
                    return True
            elif isinstance(n, c_ast.Cast) and self.types.cast_type(n.to_type).startswith("uint"):
                return True
        return False

    def _val(self, node: Any) -> tuple[str, int]:
        if isinstance(node, c_ast.Constant):
            if node.type in ("char", "string"):
                raise self.fail(node, f"{node.type} literals are not supported")
            return node.value, 16
        if isinstance(node, c_ast.ID):
            return self._name(node), 16
        if isinstance(node, c_ast.ArrayRef):
            name, subs = self.chain(node)
            if not subs:  # *p with p = &t
                return self._val(located(c_ast.ID(name), node))
            self.in_index += 1
            try:
                args = ", ".join(self.value(s) for s in subs)
            finally:
                self.in_index -= 1
            return (f"{name}({args})" if name in self.ufs else f"${name}$({args})"), 16
        if isinstance(node, c_ast.BinaryOp) and node.op in _PREC:
            return self._binary(node)
        if isinstance(node, c_ast.UnaryOp):
            return self._unary(node)
        if isinstance(node, c_ast.Cast):
            ctype = self.types.cast_type(node.to_type)
            return f"({ctype}){self.value(node.expr, 14)}", 14
        if isinstance(node, c_ast.TernaryOp):
            return (
                f"{self.value(node.cond, 4)} ? {self.value(node.iftrue, 3)} : "
                f"{self.value(node.iffalse, 3)}"
            ), 3
        if isinstance(node, c_ast.FuncCall):
            return self._call(node), 16
        if isinstance(node, c_ast.Assignment):
            raise self.fail(
                node, "assignment inside an expression", "assign in a statement of its own"
            )
        raise self.fail(node, f"unsupported expression ({type(node).__name__})")

    def _binary(self, node: Any) -> tuple[str, int]:
        p = _PREC[node.op]
        if node.op in ("/", "%") and self.in_index:
            self._truncation_matches(node)
        return f"{self.value(node.left, p)} {node.op} {self.value(node.right, p + 1)}", p

    def _truncation_matches(self, node: Any) -> None:
        """In a subscript, C's ``/`` and ``%`` (truncating toward zero) must mean what the
        analysis reads (floor and a non-negative remainder): the dividend must be proved
        ``>= 0`` where the statement runs, else ``ParseError`` (``y[(i - n) / 2 + n]`` for
        ``0 <= i < n`` was proved in bounds by floor and wrote ``y[n]``)."""
        try:
            dividend = self.affine(node.left)
        except NotAffineError:
            return  # a data-dependent subscript: no affine reading to disagree with
        if not self._nonnegative(dividend, node):
            if "@" in dividend:  # an induction variable's pending part: show the C instead
                from pycparser.c_generator import CGenerator  # type: ignore[import-untyped]

                dividend = CGenerator().visit(node.left)
            raise self.fail(
                node,
                f"'{node.op}' in a subscript with a dividend {dividend} that may be negative: "
                "C truncates toward zero, the analysis floors",
                "rewrite the subscript so that its dividend is non-negative wherever the "
                "statement runs, or guard the statement with a condition that makes it so",
            )

    def _unary(self, node: Any) -> tuple[str, int]:
        if node.op in ("-", "+", "!", "~"):
            inner = self.value(node.expr, 14)
            sep = " " if inner.startswith(node.op) else ""
            return f"{node.op}{sep}{inner}", 14
        if node.op in ("*", "&"):
            raise self.fail(
                node,
                f"pointer operation '{node.op}'",
                "pointer arithmetic is not supported; subscript arrays instead",
            )
        if node.op in ("p++", "p--", "++", "--"):
            raise self.fail(
                node,
                f"'{node.op.strip('p')}' inside an expression",
                "write the increment as its own statement",
            )
        raise self.fail(node, f"operator {node.op!r} is not supported")

    def _name(self, node: Any) -> str:
        name: str = node.name
        if name in self.aliases:
            return self._declared(name, self.aliases[name])
        if name in self.minmax:
            return self._declared(name, self.minmax[name][1])
        if name in self.ivs and self.inductions is not None:
            index = self.in_index > 0
            text = self.inductions.read(name, node, self.ivs, index=index, notation=False)
            return self._declared(name, text)
        if name in self.iters or name in self.consts or name in self.fconsts:
            return self._counter(name)
        if name in self.iterators:
            raise self.fail(
                node,
                f"loop variable {name!r} is used outside its loop",
                "spf loops own their variables; use the bound instead",
            )
        var = self.vars.get(name)
        if name in self.bound_only:
            raise self.fail(
                node,
                f"{name!r} is used where its assignment does not reach",
                "use it only after its assignment, in the same block",
            )
        if var is not None:
            if var.rank:
                raise self.fail(
                    node,
                    f"array {name!r} used without subscripts",
                    "pointer arithmetic and array aliasing are not supported",
                )
            declared_with = getattr(var.node, "init", None)  # int j = p[i]; p[i] = 0; y[j]
            if self.in_index and var.role == "local" and declared_with is not None:
                raise self.fail(
                    node,
                    f"subscript reads {name!r}, a local whose value spf cannot read as an "
                    "index (it is not one affine value of loop variables, integer parameters "
                    "and index arrays the function does not write)",
                    "subscript with the index array itself (y[p[i]]), assign the local once, "
                    "and keep arrays used as indices read-only",
                )
            return f"${name}$"
        if name in _NAMED_CONSTANTS:
            return name
        raise self.fail(
            node, f"{name!r} is not declared", "declare it, #define it, or name it in params="
        )

    def _counter(self, name: str) -> str:
        """A loop variable or parameter in a statement: the generated code holds integer ones
        in ``int64_t``, so one declared unsigned, or ``int`` in an expression that mixes in
        unsigned values (C converts the ``int`` to unsigned), is read in its C type."""
        var = self.vars.get(name)
        if var is None or self.in_index or name in self.fconsts:
            return name
        if self._unsigned(name) or (
            self.unsigned_mix and var.base in ("int32_t", "int16_t", "int8_t")
        ):
            return f"(({var.base}){name})"
        return name

    def _exact_type(self, node: Any) -> None:
        """An integer local no statement computes is its affine value in sets only where its
        C type keeps that value (signed, 32 or 64 bits): an unsigned or narrower local
        wraps, and C compares it as its type does (``unsigned t = -2; if (t < a[i])`` is
        false), so the condition stays one the generated C evaluates."""
        var = self.vars.get(node.name)
        if var is None or var.base in ("int32_t", "int64_t"):
            return
        text = self.aliases.get(node.name)
        if var.base in ("uint32_t", "uint64_t") and text is not None:
            uf = re.fullmatch(r"([A-Za-z_]\w*)\(.*\)", text)
            array = None if uf is None else self.vars.get(uf.group(1))
            if array is not None and array.base == var.base:
                return  # size_t j = col[k]; of a size_t array: the same value, never < 0
            if self._proved(text):
                return  # unsigned j = i + 1; with i >= 0: the value it stands for
        raise NotAffineError(
            node, f"{node.name!r} is {var.base}, whose arithmetic wraps, not an integer"
        )

    def _declared(self, name: str, text: str) -> str:
        """The value of integer local ``name``, which no statement computes (``int j =
        col[k];``, ``k++``, ``int hi = min(a, b);``), read in a statement: ``text`` converted
        to the local's C type as C's assignment converts it (``unsigned u = a[i];`` then
        ``u / 2`` divides unsigned; ``long l = a[i];`` then ``l * c`` multiplies in 64 bits;
        ``char c = 300;`` wraps). A subscript keeps the plain value of a 32- or 64-bit one: the
        analysis reads it affinely and the bounds check proves it in range (a narrower one
        keeps its cast, which a subscript refuses: its value may wrap inside the range)."""
        var = self.vars.get(name)
        if var is None or (self.in_index and var.base not in _NARROW):
            return _wrap(text)
        operand = text if re.fullmatch(r"[A-Za-z_]\w*|\d+", text) else f"({text})"
        return f"(({var.base}){operand})"

    def _call(self, node: Any) -> str:
        if not isinstance(node.name, c_ast.ID):
            raise self.fail(node, "calls through function pointers are not supported")
        name: str = node.name.name
        args = node.args.exprs if node.args is not None else []
        spf_name = _MIN_MAX.get(name, name) if name in ("MIN", "MAX") else name
        if spf_name not in _CALLS:
            raise self.fail(
                node,
                f"call to {name!r}, which spf cannot model (it may have side effects)",
                "only math.h functions (sqrt, exp, fabs, pow, ...) and min/max may be called",
            )
        return f"{spf_name}({', '.join(self.value(a) for a in args)})"


def _not_affine(node: Any) -> str:
    """Why ``node``, of a kind the affine fragment has no rule for, is not affine."""
    if isinstance(node, c_ast.UnaryOp) and node.op == "sizeof":
        return "sizeof is not read: write the number"
    from pycparser.c_generator import CGenerator

    return f"{CGenerator().visit(node)!r} is not an affine expression"


def _unsigned_literal(node: Any) -> bool:
    return (
        isinstance(node, c_ast.Constant)
        and node.type in INT_LITERALS
        and "u" in node.value.lower().lstrip("0x").lstrip("0123456789abcdef")
    )


def _factor(text: str) -> str:
    """``text`` as an operand of ``*`` (parenthesized unless one name, number or call)."""
    return f"({text})" if " " in text or text.startswith("-") else text


_WIDE_SIGNED = frozenset(
    ("int", "long", "long int", "long long", "long long int", "signed", "signed int",
     "int32_t", "int64_t", "ptrdiff_t", "ssize_t", "intptr_t")
)  # fmt: skip
"""Casts an affine expression keeps its value through (signed, at least 32 bits); any other
cast (unsigned, narrower, floating) leaves the expression to the generated C."""


_NARROW = frozenset(("int8_t", "uint8_t", "int16_t", "uint16_t"))


def _wrap(text: str) -> str:
    """``text`` parenthesized unless it is one name, number or call."""
    return f"({text})" if " " in text else text


def _combine(left: Tree, op: str, right: Tree) -> Tree:
    """``left op right`` (``op`` is ``+`` or ``-``) with min/max lifted outward."""
    if isinstance(left, tuple):
        return left[0], [_combine(p, op, right) for p in left[1]]
    if isinstance(right, tuple):
        kind = right[0] if op == "+" else ("max" if right[0] == "min" else "min")
        return kind, [_combine(left, op, p) for p in right[1]]
    if op == "+":
        return f"{left} + {right}"
    return f"{left} - ({right})" if " " in right else f"{left} - {right}"


def _min_max(node: Any) -> str | None:
    """``"min"``/``"max"`` when ``node`` is such a call (``MIN``, ``fmin`` ... too)."""
    if (
        isinstance(node, c_ast.FuncCall)
        and isinstance(node.name, c_ast.ID)
        and node.name.name in _MIN_MAX
    ):
        return _MIN_MAX[node.name.name]
    return None

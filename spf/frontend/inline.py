"""Calls to functions defined in the same source, inlined before the function is read
(docs/import_c.md), as ``append_computation`` inlines a Computation (API §6).

A function whose body is one ``return e;`` without side effects (``static inline double
sq(double v) { return v * v; }``) is substituted where it is called, each parameter replaced
by its argument (converted to the parameter's type where the types may differ), so it may be
called anywhere, loop bounds included; ``return a < b ? a : b;`` is ``min(a, b)`` (``max``
likewise), so bounds such as ``j < imin(n, i + 32)`` stay affine.

Any other call is inlined where it runs once and unconditionally (a statement, an assignment,
an initializer, an ``if`` condition, a loop start): the callee's names take a fresh prefix
``_i<N>_``; each parameter becomes a local bound to its argument (``int _i0_n = n;``, a
pointer ``double *_i0_x = &y[k];``, which the pointer rules then resolve), the callee's
statements follow, and its final ``return e;`` initializes ``_i0_ret``, which the call's
place then reads. Recursion, a ``return`` before the end of the callee and calls where
evaluation is conditional (``a && f(x)``, the condition or step of a loop) are refused."""

from __future__ import annotations

from typing import Any

from spf.frontend.cparse import Source, c_ast, nodes
from spf.frontend.decls import Types
from spf.frontend.rewrite import (
    clone,
    identifiers,
    located,
    map_nodes,
    map_statements,
    rename,
)

_PURE_FORBIDDEN = (c_ast.Assignment, c_ast.Decl, c_ast.For, c_ast.While, c_ast.DoWhile)


def inline_calls(src: Source, fn: Any) -> None:
    """Inline, in place, the calls of ``fn`` to the other functions of ``src``."""
    _Inliner(src, fn).run()


class _Inliner:
    def __init__(self, src: Source, fn: Any) -> None:
        self.src = src
        self.fn = fn
        self.types = Types(src)
        self.defs = {d.decl.name: d for d in src.ast.ext if isinstance(d, c_ast.FuncDef)}
        self.cyclic = _cyclic(self.defs)
        self.taken = identifiers(src.ast) | set(self.defs)
        self.count = 0
        self.known: dict[str, str] = {}  # C types of the locals inlining declares

    def run(self) -> None:
        self.expand(self.fn.body)

    def expand(self, body: Any) -> None:
        map_statements(body, self.statement)

    # ---------- which calls
    def callee(self, node: Any) -> Any | None:
        """The definition ``node`` calls, when it is a call to a function of the source."""
        if not (isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID)):
            return None
        d = self.defs.get(node.name.name)
        if d is None:
            return None
        if d.decl.name in self.cyclic:
            raise self.src.error(
                node,
                f"recursive call to {d.decl.name!r} ({self.cyclic[d.decl.name]})",
                "spf inlines the calls of the function it reads; write the recursion as loops",
            )
        return d

    def pure(self, d: Any) -> Any | None:
        """The returned expression of ``d`` when its body is one side-effect-free return."""
        items = list(d.body.block_items or [])
        if len(items) != 1 or not isinstance(items[0], c_ast.Return) or items[0].expr is None:
            return None
        expr = items[0].expr
        for n in nodes(expr):
            if isinstance(n, _PURE_FORBIDDEN) or (
                isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--")
            ):
                return None
            callee = self.callee(n)
            if callee is not None and self.pure(callee) is None:
                return None
        return expr

    # ---------- one statement
    def statement(self, s: Any) -> list[Any] | None:
        roots, fixed = _roots(s)
        for holder, attr in fixed:
            for n in nodes(getattr(holder, attr)):
                if self.effectful(n) is not None:
                    raise self.src.error(
                        n,
                        f"a call to {n.name.name!r} in a loop's condition or step",
                        "call it before the loop and use the result",
                    )
        hoisted: list[Any] = []  # first, so that a substituted argument runs once
        for holder, attr in roots:
            hoisted += self.hoist(holder, attr)
        for holder, attr in roots + fixed:
            self.substitute(holder, attr)
        if isinstance(s, c_ast.FuncCall) and self.callee(s) is not None:
            if self.effectful(s) is None:
                return hoisted  # a function without effects, its value unused
            return hoisted + self.inline(s, self.callee(s), keep_result=False)[0]
        return [*hoisted, s] if hoisted else None

    def effectful(self, node: Any) -> Any | None:
        """The definition ``node`` calls when the call runs statements (it is not
        substituted as an expression)."""
        d = self.callee(node)
        return d if d is not None and self.substituted(node, d) is None else None

    def substituted(self, call: Any, d: Any) -> Any | None:
        """The returned expression of ``d`` when ``call`` can be replaced by it: ``d`` is
        pure and each pointer parameter gets an array's name (``&a[k]`` needs a binding)."""
        expr = self.pure(d)
        pointers = [
            a
            for p, a in zip(_params(d), _args(call), strict=False)
            if not isinstance(p.type, c_ast.TypeDecl)
        ]
        if any(_increments(a) for a in _args(call)):
            return None  # the argument's k++ runs once, however often the parameter is used
        return expr if all(isinstance(a, c_ast.ID) for a in pointers) else None

    def substitute(self, holder: Any, attr: str) -> None:
        """Replace the calls of pure functions under ``holder.attr`` by their expressions."""

        def one(node: Any) -> Any | None:
            d = self.callee(node)
            expr = None if d is None else self.substituted(node, d)
            return None if expr is None else self.expression(node, d, expr)

        wrapper = _Statement(getattr(holder, attr))
        map_nodes(wrapper, one)
        setattr(holder, attr, wrapper.node)

    def hoist(self, holder: Any, attr: str) -> list[Any]:
        """The inlined statements of the calls under ``holder.attr`` (in evaluation order),
        each call replaced by the local holding its result."""
        out: list[Any] = []
        for call in _unconditional_calls(getattr(holder, attr), self.effectful, self.src):
            if call is getattr(holder, attr) and isinstance(holder, _Statement):
                continue  # a call statement: inlined by the caller, result dropped
            stmts, result = self.inline(call, self.callee(call), keep_result=True)
            out += stmts

            def swap(node: Any, call: Any = call, result: Any = result) -> Any | None:
                return result if node is call else None

            wrapper = _Statement(getattr(holder, attr))
            map_nodes(wrapper, swap)
            setattr(holder, attr, wrapper.node)
        return out

    # ---------- substitution of a pure function
    def expression(self, call: Any, d: Any, expr: Any) -> Any:
        params = _params(d)
        args = _args(call)
        self._check_arity(call, d, params, args)
        new = clone(expr)
        table = {p.name: self.converted(a, p) for p, a in zip(params, args, strict=True)}
        picked = _min_max(new, params)
        if picked is not None:
            first, second = (table[p.name] for p in params)
            return located(c_ast.FuncCall(c_ast.ID(picked), c_ast.ExprList([first, second])), call)

        def one(node: Any) -> Any | None:
            if isinstance(node, c_ast.ID) and node.name in table:
                return clone(table[node.name])
            return None

        holder = c_ast.Return(new)
        map_nodes(holder, one)
        return located(self.cast(holder.expr, d.decl.type), call)

    def converted(self, arg: Any, param: Any) -> Any:
        """``arg`` as the value of ``param`` (a cast where the types may differ)."""
        if not isinstance(param.type, c_ast.TypeDecl):
            return arg  # an array's name (see substituted)
        return self.cast(arg, param)

    def cast(self, expr: Any, typed: Any) -> Any:
        """``expr`` converted to the type of ``typed`` (a parameter declaration, or a
        function declaration for its return type), unless it has that type already."""
        want = self.types.cast_type(typed)
        if self._type_of(expr) == want:
            return expr
        name = c_ast.IdentifierType([want])
        to = c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, name))
        return c_ast.Cast(to, expr)

    def _type_of(self, expr: Any) -> str | None:
        """The C type of ``expr`` where it is plain to see (else None: a cast is kept)."""
        if isinstance(expr, c_ast.Constant):
            return {"int": "int32_t", "double": "double"}.get(expr.type)
        if isinstance(expr, c_ast.Cast):
            return self.types.cast_type(expr.to_type)
        if isinstance(expr, c_ast.BinaryOp) and expr.op in ("+", "-", "*", "/"):
            left = self._type_of(expr.left)
            return left if left == self._type_of(expr.right) else None
        base = expr
        while isinstance(base, c_ast.ArrayRef):
            base = base.name
        if isinstance(base, c_ast.ID) and base.name in self.known:
            return self.known[base.name]
        if isinstance(base, c_ast.ID):
            for d in nodes(self.fn):
                if isinstance(d, c_ast.Decl) and d.name == base.name:
                    return self.types.var(d, "local").base
        return None

    # ---------- statement-level inlining
    def inline(self, call: Any, d: Any, *, keep_result: bool) -> tuple[list[Any], Any]:
        """The statements that run ``d`` for ``call`` and the expression of its result."""
        params = _params(d)
        args = _args(call)
        self._check_arity(call, d, params, args)
        prefix = self._prefix()
        body = clone(d.body)
        items = list(body.block_items or [])
        ret = items.pop() if items and isinstance(items[-1], c_ast.Return) else None
        ret = ret if keep_result else None  # an unused value (its expression has no effects)
        for n in nodes(c_ast.Compound(items)):
            if isinstance(n, c_ast.Return):
                raise self.src.error(
                    n,
                    f"a return before the end of {d.decl.name!r}, which spf inlines",
                    "end the function with its only return",
                )
        names = {p.name for p in params} | {n.name for n in nodes(body) if _declares(n)}
        names |= {n.init.lvalue.name for n in nodes(body) if _header_assign(n)}
        mapping = {n: prefix + n for n in names}
        binds = []
        for p, a in zip(params, args, strict=True):
            decl = clone(p)
            held = _Statement(a)
            self.substitute(held, "node")  # pure calls in the argument
            decl.init = held.node
            decl.storage = []
            binds.append(located(decl, call))
        block = c_ast.Compound(items)
        result: Any = None
        if ret is not None and ret.expr is not None:
            rtype = d.decl.type.type
            if not isinstance(rtype, c_ast.TypeDecl):
                raise self.src.error(call, f"{d.decl.name!r} returns a pointer", "return a value")
            out = c_ast.Decl("ret", [], None, [], [], clone(rtype), ret.expr, None, ret.coord)
            out.type.declname = "ret"
            block.block_items.append(out)
            mapping["ret"] = prefix + "ret"
            self.known[prefix + "ret"] = self.types.cast_type(d.decl.type)
            result = located(c_ast.ID(prefix + "ret"), call)
        rename(block, mapping)
        for b in binds:
            rename(b.type, mapping)
            b.name = mapping[b.name]
            _declname(b, b.name)
        self.expand(block)
        if keep_result and result is None:
            raise self.src.error(call, f"{d.decl.name!r} returns no value")
        return [*binds, *block.block_items], result

    def _prefix(self) -> str:
        while True:
            prefix = f"_i{self.count}_"
            self.count += 1
            if not any(t.startswith(prefix) for t in self.taken):
                return prefix

    def _check_arity(self, call: Any, d: Any, params: list[Any], args: list[Any]) -> None:
        if len(params) != len(args):
            raise self.src.error(
                call,
                f"{d.decl.name!r} takes {len(params)} argument(s), got {len(args)}",
            )


class _Statement:
    """Holds an expression statement, so that it is the root of its own expression."""

    __slots__ = ("node",)

    def __init__(self, node: Any) -> None:
        self.node = node


def _roots(s: Any) -> tuple[list[tuple[Any, str]], list[tuple[Any, str]]]:
    """``(holder, attribute)`` of the expressions of statement ``s`` that run once before
    it (calls there may be hoisted), and of those that run again (a loop's condition and
    step: only pure calls)."""
    if isinstance(s, c_ast.If):
        return [(s, "cond")], []
    if isinstance(s, c_ast.For):
        return ([(s, "init")] if s.init is not None else []), [
            (s, a) for a in ("cond", "next") if getattr(s, a) is not None
        ]
    if isinstance(s, c_ast.Decl) and s.init is not None:
        return [(s, "init")], []
    if isinstance(s, c_ast.DeclList):
        return [(d, "init") for d in s.decls if d.init is not None], []
    if isinstance(s, c_ast.Return) and s.expr is not None:
        return [(s, "expr")], []
    if isinstance(s, c_ast.Assignment | c_ast.UnaryOp | c_ast.FuncCall | c_ast.BinaryOp):
        return [(_Statement(s), "node")], []
    if isinstance(s, c_ast.Switch):
        return [(s, "cond")], []
    return [], []


def _unconditional_calls(root: Any, callee: Any, src: Source) -> list[Any]:
    """Calls to defined functions under ``root``, arguments first, left to right; a call
    whose evaluation depends on a condition is refused."""
    out: list[Any] = []

    def visit(node: Any, conditional: bool) -> None:
        if node is None:
            return
        if isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
            visit(node.left, conditional)
            visit(node.right, True)
            return
        if isinstance(node, c_ast.TernaryOp):
            visit(node.cond, conditional)
            visit(node.iftrue, True)
            visit(node.iffalse, True)
            return
        for _, child in node.children():
            visit(child, conditional)
        if callee(node) is not None:
            if conditional:
                raise src.error(
                    node,
                    f"a call to {node.name.name!r} that runs only under a condition (&&, || or ?:)",
                    "call it in a statement of its own, under an if",
                )
            out.append(node)

    visit(root, False)
    return out


def _increments(node: Any) -> bool:
    return any(
        isinstance(n, c_ast.UnaryOp) and n.op in ("p++", "p--", "++", "--") for n in nodes(node)
    )


def _params(d: Any) -> list[Any]:
    args = d.decl.type.args
    return [p for p in (args.params if args is not None else []) if isinstance(p, c_ast.Decl)]


def _args(call: Any) -> list[Any]:
    return list(call.args.exprs) if call.args is not None else []


def _declares(n: Any) -> bool:
    return isinstance(n, c_ast.Decl) and bool(n.name)


def _header_assign(n: Any) -> bool:
    return (
        isinstance(n, c_ast.For)
        and isinstance(n.init, c_ast.Assignment)
        and isinstance(n.init.lvalue, c_ast.ID)
    )


def _declname(decl: Any, name: str) -> None:
    t = decl.type
    while not isinstance(t, c_ast.TypeDecl) and getattr(t, "type", None) is not None:
        t = t.type
    if isinstance(t, c_ast.TypeDecl):
        t.declname = name


def _min_max(expr: Any, params: list[Any]) -> str | None:
    """``"min"``/``"max"`` when ``expr`` is ``a < b ? a : b`` (any comparison or order) of
    the two parameters."""
    if len(params) != 2 or not isinstance(expr, c_ast.TernaryOp):
        return None
    c = expr.cond
    if not (isinstance(c, c_ast.BinaryOp) and c.op in ("<", "<=", ">", ">=")):
        return None
    names = [str(getattr(x, "name", "")) for x in (c.left, c.right, expr.iftrue, expr.iffalse)]
    both = sorted(str(p.name) for p in params)
    if sorted(names[:2]) != both or sorted(names[2:]) != both:
        return None
    smaller = (c.op in ("<", "<=")) == (names[2] == names[0])
    return "min" if smaller else "max"


def _cyclic(defs: dict[str, Any]) -> dict[str, str]:
    """The functions on a call cycle, each with the cycle as text (``f -> g -> f``)."""
    calls = {
        name: [
            n.name.name
            for n in nodes(d.body)
            if isinstance(n, c_ast.FuncCall)
            and isinstance(n.name, c_ast.ID)
            and n.name.name in defs
        ]
        for name, d in defs.items()
    }
    out: dict[str, str] = {}

    def walk(name: str, path: list[str]) -> None:
        for nxt in calls[name]:
            if nxt in path:
                ring = path[path.index(nxt) :]
                for k, f in enumerate(ring):  # the cycle told from f
                    out.setdefault(f, " -> ".join([*ring[k:], *ring[:k], f]))
            elif len(path) < len(defs):
                walk(nxt, [*path, nxt])

    for name in defs:
        walk(name, [name])
    return out

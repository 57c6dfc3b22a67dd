"""The converter from pycparser's C syntax tree to the typed tree of :mod:`.tree`: it checks
that the block is one basic block of assignments, local declarations and if/else, resolves each
name as a data space, UF, local, math function or iterator/parameter, checks ranks and arities
and that index expressions are quasi-affine, records every data-space use and UF call with its
source span, and builds the :class:`ParsedSource` (accesses, reductions, names, locals).
"""

from __future__ import annotations

import re
from typing import Any, NoReturn

from pycparser import c_ast  # type: ignore[import-untyped]

from spf.clang import SPF_PREFIXES, reserved_reason
from spf.errors import ArityError, ParseError, UndeclaredError, VerifyError
from spf.ir.source.accesses import _dedup, _reduction_form, _Use
from spf.ir.source.index_text import _const, _itext
from spf.ir.source.lex import _leaf_len, _Lexed, _orig_span
from spf.ir.source.literals import _c_literal, _c_type
from spf.ir.source.model import Access, ParsedSource
from spf.ir.source.tree import (
    _Assign,
    _Binary,
    _Block,
    _Call,
    _Cast,
    _Cond,
    _Decl,
    _Expr,
    _IDiv,
    _If,
    _Num,
    _Ref,
    _Stmt,
    _UFCall,
    _Unary,
    _Var,
)
from spf.ir.source.vocab import (
    _COMPOUND_OPS,
    _CONSTANTS,
    _DS_PREFIX,
    _EXPR_HANDLERS,
    _FUNC_ARITY,
    _LOOP_NODES,
    _PRELUDE_LINES,
    _REDUCTION_FAMILY,
    _VALUE_BINOPS,
    _where,
)


class _Converter:
    """pycparser tree -> typed tree, collecting accesses, UF calls and names."""

    def __init__(
        self,
        text: str,
        lexed: _Lexed,
        data_spaces: dict[str, int | None],
        ufs: dict[str, int],
        stmt: str,
    ) -> None:
        self.text = text
        self.lexed = lexed
        self.data = data_spaces
        self.ufs = ufs
        self.stmt = stmt
        self.where = _where(stmt)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", lexed.c_text)]
        self.scopes: list[dict[str, str]] = []
        self.locals: list[tuple[str, str]] = []
        self.names: dict[str, tuple[int, int]] = {}
        self.inferred_ufs: dict[str, int] = {}
        self.uf_calls: list[tuple[tuple[int, int], str, tuple[str, ...]]] = []
        self.uses: list[_Use] = []
        self.candidates: dict[int, tuple[str, str, tuple[str, ...]]] = {}  # owner -> red.
        self.owner = 0

    # --- positions
    def _cpos(self, node: Any) -> int | None:
        coord = getattr(node, "coord", None)
        if coord is None or not coord.line:
            return None
        line: int = coord.line - _PRELUDE_LINES - 1
        column: int = coord.column or 1
        if not 0 <= line < len(self.line_starts):
            return None
        return self.line_starts[line] + max(0, column - 1)

    def _cspan(self, node: Any) -> tuple[int, int] | None:
        own = self._cpos(node)
        spans = [] if own is None else [(own, own + _leaf_len(node))]
        for _, child in node.children():
            sub = self._cspan(child)
            if sub is not None:
                spans.append(sub)
        if not spans:
            return None
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
        if isinstance(node, c_ast.FuncCall | c_ast.ArrayRef):
            base = self._cspan(node.name)
            if base is not None:
                end = max(end, self._match(base[1]))
        return start, end

    def _match(self, pos: int) -> int:
        """End (exclusive) of the bracket group starting at or after ``pos``."""
        c = self.lexed.c_text
        while pos < len(c) and c[pos].isspace():
            pos += 1
        depth = 0
        for k in range(pos, len(c)):
            if c[k] in "([":
                depth += 1
            elif c[k] in ")]":
                depth -= 1
                if depth <= 0:
                    return k + 1
        return len(c)

    def span(self, node: Any) -> tuple[int, int]:
        found = self._cspan(node)
        if found is None:
            return _orig_span(self.lexed, None, None)
        return _orig_span(self.lexed, found[0], found[1])

    def error(self, message: str, node: Any) -> ParseError:
        return ParseError(f"{self.where}: {message}", text=self.text, span=self.span(node))

    # --- names
    def _ds_name(self, ident: str) -> str | None:
        """The data space an identifier names (delimited or not), else None."""
        if ident.startswith(_DS_PREFIX):
            name = ident[len(_DS_PREFIX) :]
            if name not in self.data:
                hint = f"In {self.where}: declare it with add_data_space before add_stmt"
                if name in self.ufs:
                    hint = (
                        f"In {self.where}: {name!r} is a UF; read it as {name}(...) without $, "
                        "or, to compute it in the computation, declare it "
                        f"add_data_space({name!r}, ..., index=True) instead of declare_uf"
                    )
                raise UndeclaredError("data space", name, self.data, hint=hint)
            return name
        if ident in self.data and self._local_type(ident) is None and ident not in self.ufs:
            return ident  # (a run-time index array undelimited is a UF read)
        return None

    def _local_type(self, name: str) -> str | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _uf_arity(self, name: str) -> int | None:
        if name in self.ufs:
            return self.ufs[name]
        return self.inferred_ufs.get(name)

    # --- statements
    def block(self, node: Any) -> tuple[_Stmt, ...]:
        self.scopes.append({})
        try:
            out: list[_Stmt] = []
            for item in node.block_items or ():
                out.extend(self.statement(item))
            return tuple(out)
        finally:
            self.scopes.pop()

    def statement(self, node: Any) -> list[_Stmt]:
        kind = type(node).__name__
        self.owner += 1
        if kind in _LOOP_NODES:
            raise self.error("a statement is one basic block: no loops/returns", node)
        if isinstance(node, c_ast.Compound):
            return [_Block(self.block(node))]
        if isinstance(node, c_ast.EmptyStatement):
            return []
        if isinstance(node, c_ast.Decl):
            return [self.declaration(node)]
        if isinstance(node, c_ast.If):
            return [self.if_statement(node)]
        if isinstance(node, c_ast.Assignment):
            return [self.assignment(node)]
        if isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "p--", "++", "--"):
            return [self.increment(node)]
        if isinstance(node, c_ast.Pragma):
            raise self.error("preprocessor directives are not allowed in a statement", node)
        if isinstance(node, c_ast.ExprList):
            raise self.error("the comma operator is not allowed; write separate statements", node)
        raise self.error(
            "expected an assignment, a local declaration or an if/else; this expression "
            "statement has no effect",
            node,
        )

    def if_statement(self, node: Any) -> _If:
        cond = self.expr(node.cond)
        then = self._branch(node.iftrue)
        other = None if node.iffalse is None else self._branch(node.iffalse)
        return _If(cond, then, other)

    def _branch(self, node: Any) -> tuple[_Stmt, ...]:
        if isinstance(node, c_ast.Compound):
            return self.block(node)
        self.scopes.append({})
        try:
            return tuple(self.statement(node))
        finally:
            self.scopes.pop()

    def declaration(self, node: Any) -> _Decl:
        name = node.name
        if node.storage or node.funcspec:
            raise self.error(f"local {name!r}: storage classes are not allowed", node)
        if not isinstance(node.type, c_ast.TypeDecl) or not isinstance(
            node.type.type, c_ast.IdentifierType
        ):
            raise self.error(
                f"local {name!r} must be a scalar of arithmetic type (no arrays, pointers or "
                "structs)",
                node,
            )
        ctype = _c_type(node.quals, node.type.type.names)
        if ctype is None:
            raise self.error(f"local {name!r}: unsupported type", node)
        self._check_local_name(name, node)
        init = None
        if node.init is not None:
            if isinstance(node.init, c_ast.InitList):
                raise self.error(f"local {name!r}: initializer lists are not allowed", node.init)
            init = self.expr(node.init)
        self.scopes[-1][name] = ctype
        self.locals.append((name, ctype))
        return _Decl(name, ctype, init)

    def _check_local_name(self, name: str, node: Any) -> None:
        if name.startswith(_DS_PREFIX) or name in self.data:
            shown = name.removeprefix(_DS_PREFIX)
            raise VerifyError(
                f"{self.where}: local {shown!r} has the name of a data space; rename the local"
            )
        if name in self.ufs or name in self.inferred_ufs:
            raise VerifyError(f"{self.where}: local {name!r} has the name of a UF; rename it")
        if name in _FUNC_ARITY or name in _CONSTANTS:
            raise VerifyError(f"{self.where}: local {name!r} hides a C function; rename it")
        why = reserved_reason(name)  # spf's own prefixes aside, which locals may take
        if why is not None and not name.startswith(SPF_PREFIXES):
            # gcc took 'double new', g++ (HLS, CUDA) did not; a header's macro broke both
            raise VerifyError(f"{self.where}: local {name!r} is {why}; rename it")
        if any(name == n for n, _ in self.locals):
            raise VerifyError(f"{self.where}: local {name!r} is declared twice; rename one")
        if name in self.names:
            raise VerifyError(
                f"{self.where}: {name!r} is used before its declaration as a local (or is "
                "also an iterator/parameter); rename the local"
            )

    def assignment(self, node: Any) -> _Assign:
        if node.op != "=" and node.op not in _COMPOUND_OPS:  # pragma: no cover - C has no more
            raise self.error(f"unsupported assignment operator {node.op!r}", node)
        target = self.lvalue(node.lvalue, compound=node.op != "=")
        value = self.expr(node.rvalue)
        if isinstance(target, _Ref):
            family = _REDUCTION_FAMILY.get(node.op) or _reduction_form(target, value)
            if family is not None:
                indices = tuple(_itext(i) for i in target.indices)
                self.candidates[self.owner] = (family, target.ds, indices)
        return _Assign(target, node.op, value)

    def increment(self, node: Any) -> _Assign:
        """``x++`` / ``--x`` as ``x += 1`` / ``x -= 1``."""
        target = self.lvalue(node.expr, compound=True)
        if isinstance(target, _Ref):
            indices = tuple(_itext(i) for i in target.indices)
            self.candidates[self.owner] = ("+", target.ds, indices)
        return _Assign(target, "+=" if "+" in node.op else "-=", _Num("1", 1))

    def lvalue(self, node: Any, compound: bool) -> _Ref | _Var:
        if isinstance(node, c_ast.ID):
            ds = self._ds_name(node.name)
            if ds is not None:
                return self.access(node, ds, [], write=True, also_read=compound)
            if self._local_type(node.name) is not None:
                return _Var(node.name, local=True)
            self._not_assignable(node.name, node)
        if isinstance(node, c_ast.FuncCall | c_ast.ArrayRef):
            base, subs = self._subscripts(node)
            ds = self._ds_name(base.name)
            if ds is not None:
                return self.access(node, ds, subs, write=True, also_read=compound)
            self._not_assignable(base.name, node)
        raise self.error("cannot assign to this expression; assign to a data space or local", node)

    def _not_assignable(self, name: str, node: Any) -> NoReturn:
        if name in self.ufs or name in self.inferred_ufs:
            raise VerifyError(
                f"{self.where}: cannot write to UF {name!r}: UFs are read-only index arrays; "
                "write to a data space instead"
            )
        if isinstance(node, c_ast.ID):
            raise VerifyError(
                f"{self.where}: cannot assign to {name!r}: iterators and parameters are "
                "read-only; declare a local (double t = ...;) or a data space"
            )
        raise UndeclaredError(
            "data space",
            name,
            self.data,
            hint=f"In {self.where}: declare it with add_data_space before add_stmt",
        )

    def _subscripts(self, node: Any) -> tuple[Any, list[Any]]:
        """``A(i, j)`` or ``A[i][j]`` -> (the ID node, index nodes); mixed forms raise."""
        if isinstance(node, c_ast.FuncCall):
            if not isinstance(node.name, c_ast.ID):
                raise self.error("malformed access: write $A$(i, j) or $A$[i][j], not both", node)
            return node.name, list(node.args.exprs) if node.args is not None else []
        subs: list[Any] = []
        while isinstance(node, c_ast.ArrayRef):
            subs.insert(0, node.subscript)
            node = node.name
        if not isinstance(node, c_ast.ID):
            raise self.error("malformed access: write $A$(i, j) or $A$[i][j], not both", node)
        return node, subs

    def access(
        self, node: Any, ds: str, subs: list[Any], *, write: bool, also_read: bool = False
    ) -> _Ref:
        rank = self.data[ds]
        if rank is None:
            self.data[ds] = rank = len(subs)
        if rank != len(subs):
            raise ArityError(
                f"{self.where}: data space {ds!r} has rank {rank} but is accessed with "
                f"{len(subs)} index(es) in {self.text[slice(*self.span(node))]!r}; give "
                f"{rank} index(es)"
            )
        indices = tuple(self.index(s) for s in subs)
        texts = tuple(_itext(i) for i in indices)
        span = self.span(node)
        if write:
            self.uses.append(_Use(ds, texts, span, True, self.owner))
        if also_read or not write:
            self.uses.append(_Use(ds, texts, span, False, self.owner))
        return _Ref(ds, indices)

    # --- expressions (values)
    def expr(self, node: Any) -> _Expr:
        kind = type(node).__name__
        handler = getattr(self, _EXPR_HANDLERS.get(kind, "-"), None)
        if handler is None:
            raise self.error(f"unsupported C construct ({kind}) in a statement", node)
        result: _Expr = handler(node)
        return result

    def _e_constant(self, node: Any) -> _Expr:
        if node.type == "string":
            raise self.error("string literals are not allowed in a statement", node)
        return _Num(node.value, self._literal(node))

    def _literal(self, node: Any) -> int | float:
        try:
            return _c_literal(node.value, node.type)
        except ValueError as err:
            if node.value.startswith("'"):  # a character constant (pycparser types it int)
                raise self.error(str(err), node) from None
            raise self.error(f"malformed number {node.value!r}", node) from None

    def _e_id(self, node: Any) -> _Expr:
        ds = self._ds_name(node.name)
        if ds is not None:
            return self.access(node, ds, [], write=False)
        if self._local_type(node.name) is not None:
            return _Var(node.name, local=True)
        if node.name in _CONSTANTS:
            return _Call(node.name, ())
        return self.plain_name(node)

    def plain_name(self, node: Any) -> _Var:
        name = node.name
        if name in self.ufs or name in self.inferred_ufs:
            raise ArityError(
                f"{self.where}: UF {name!r} takes {self._uf_arity(name)} argument(s) but is "
                f"used without a call; write {name}(...)"
            )
        if name in _FUNC_ARITY:
            raise self.error(f"function {name!r} must be called", node)
        if any(name == n for n, _ in self.locals):
            raise self.error(f"local {name!r} is used outside the block that declares it", node)
        self.names.setdefault(name, self.span(node))
        return _Var(name, local=False)

    def _e_func_call(self, node: Any) -> _Expr:
        base, args = self._subscripts(node)
        name = base.name
        # max(a, b) calls the function even beside a data space named max (written $max$)
        ds = None if name in _FUNC_ARITY else self._ds_name(name)
        if ds is not None:
            return self.access(node, ds, args, write=False)
        if self._local_type(name) is not None:
            raise self.error(f"local {name!r} is not a function", node)
        if name in _FUNC_ARITY and name not in self.ufs:
            self._check_arity(name, _FUNC_ARITY[name], len(args), node)
            return _Call(name, tuple(self.expr(a) for a in args))
        return self.uf_call(node, name, args)

    def _check_arity(self, name: str, want: int, got: int, node: Any) -> None:
        if want != got:
            raise ArityError(
                f"{self.where}: {name!r} takes {want} argument(s) but is called with {got} in "
                f"{self.text[slice(*self.span(node))]!r}"
            )

    def uf_call(self, node: Any, name: str, args: list[Any]) -> _UFCall:
        arity = self._uf_arity(name)
        if arity is not None:
            if arity != len(args):
                raise ArityError(
                    f"{self.where}: UF {name!r} takes {arity} argument(s) but is called with "
                    f"{len(args)} in {self.text[slice(*self.span(node))]!r}"
                )
            converted = tuple(self.index(a) for a in args)
        else:
            try:
                converted = tuple(self.index(a) for a in args)
            except ParseError as err:
                raise ParseError(
                    f"{self.where}: unknown function {name!r} (not a data space, declared UF or "
                    f"math function) is read as a UF call, whose arguments must be affine: "
                    f"{err.message.removeprefix(self.where + ': ')}",
                    text=self.text,
                    span=err.span,
                ) from None
            if any(name == n for n, _ in self.locals) or name in self.names:
                raise self.error(f"{name!r} is not a function", node)
            self.inferred_ufs[name] = len(args)
        texts = tuple(_itext(a) for a in converted)
        self.uf_calls.append((self.span(node), name, texts))
        return _UFCall(name, converted)

    def _e_array_ref(self, node: Any) -> _Expr:
        if self._is_component(node):
            return self.component_call(node)
        base, subs = self._subscripts(node)
        ds = self._ds_name(base.name)
        if ds is not None:
            return self.access(node, ds, subs, write=False)
        hint = f"In {self.where}: only data spaces are indexed with []"
        if base.name in self.ufs or base.name in self.inferred_ufs:
            hint += f"; {base.name!r} is a UF: call it as {base.name}(...)"
        raise UndeclaredError("data space", base.name, self.data, hint=hint)

    def _is_component(self, node: Any) -> bool:
        """``f(k)[c]`` where ``f`` is not a data space (``$A$(i)[j]`` mixes access forms)."""
        call = node.name
        return (
            isinstance(call, c_ast.FuncCall)
            and isinstance(call.name, c_ast.ID)
            and self._ds_name(call.name.name) is None
        )

    def component_call(self, node: Any) -> _UFCall:
        """``f(k)[c]``: component ``c`` (an integer constant) of the tuple-valued UF ``f``."""
        call = node.name
        component = (
            self._literal(node.subscript) if isinstance(node.subscript, c_ast.Constant) else None
        )
        if not isinstance(component, int) or component < 0:
            raise self.error("a UF's component must be an integer constant: f(k)[0]", node)
        args = list(call.args.exprs) if call.args is not None else []
        found = self.uf_call(call, call.name.name, args)
        return _UFCall(found.name, found.args, component)

    def _e_unary_op(self, node: Any) -> _Expr:
        if node.op in ("-", "+", "!", "~"):
            return _Unary(node.op, self.expr(node.expr))
        if node.op in ("p++", "p--", "++", "--"):
            raise self.error("++/-- inside an expression; write it as its own statement", node)
        raise self.error(f"operator {node.op!r} is not allowed (no pointers or sizeof)", node)

    def _e_binary_op(self, node: Any) -> _Expr:
        if node.op not in _VALUE_BINOPS:  # pragma: no cover - pycparser has no other
            raise self.error(f"unsupported operator {node.op!r}", node)
        return _Binary(node.op, self.expr(node.left), self.expr(node.right))

    def _e_ternary_op(self, node: Any) -> _Expr:
        return _Cond(self.expr(node.cond), self.expr(node.iftrue), self.expr(node.iffalse))

    def _e_cast(self, node: Any) -> _Expr:
        decl = node.to_type.type
        if not isinstance(decl, c_ast.TypeDecl) or not isinstance(decl.type, c_ast.IdentifierType):
            raise self.error("only casts to arithmetic types are allowed", node)
        ctype = _c_type(node.to_type.quals, decl.type.names)
        if ctype is None:
            raise self.error("unsupported cast type", node)
        return _Cast(ctype, self.expr(node.expr))

    def _e_assignment(self, node: Any) -> _Expr:
        raise self.error("assignment inside an expression; write one assignment per line", node)

    def _e_expr_list(self, node: Any) -> _Expr:
        raise self.error("the comma operator is not allowed; write separate statements", node)

    # --- index expressions (quasi-affine)
    def index(self, node: Any) -> _Expr:
        kind = type(node).__name__
        if isinstance(node, c_ast.Constant):
            value = self._literal(node) if node.type != "string" else None
            if not isinstance(value, int):
                raise self.error("an index must be an integer expression", node)
            return _Num(str(value), value)
        if isinstance(node, c_ast.ID):
            return self._index_name(node)
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            return _Unary(node.op, self.index(node.expr))
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*", "/", "%"):
            return self._index_binary(node)
        if isinstance(node, c_ast.FuncCall):
            return self._index_call(node)
        if isinstance(node, c_ast.ArrayRef) and self._is_component(node):
            return self.component_call(node)
        if isinstance(node, c_ast.ArrayRef):
            raise self.error(
                "a data space cannot be an index (not affine); declare index arrays as UFs "
                "and call them as f(k)",
                node,
            )
        raise self.error(f"index expression is not quasi-affine ({kind})", node)

    def _index_name(self, node: Any) -> _Expr:
        name = node.name
        if self._ds_name(name) is not None:
            raise self.error(
                f"data space {name.removeprefix(_DS_PREFIX)!r} cannot be used in an index (not "
                "affine); declare index arrays as UFs",
                node,
            )
        if self._local_type(name) is not None:
            raise self.error(
                f"local {name!r} cannot be used in an index: indices are affine in iterators "
                "and parameters, or UF calls",
                node,
            )
        if name in _CONSTANTS:
            raise self.error(f"{name!r} cannot be an index", node)
        return self.plain_name(node)

    def _index_binary(self, node: Any) -> _Expr:
        left, right = self.index(node.left), self.index(node.right)
        if node.op == "*" and _const(left) is None and _const(right) is None:
            raise self.error(
                "index expression is not affine: a product needs a constant factor", node
            )
        if node.op in ("/", "%"):
            den = _const(right)
            if den is None or den <= 0:
                raise self.error(
                    f"index expression is not quasi-affine: '{node.op}' needs a positive "
                    "integer constant on its right",
                    node,
                )
        return _Binary(node.op, left, right)

    def _index_call(self, node: Any) -> _Expr:
        base, args = self._subscripts(node)
        name = base.name
        if self._ds_name(name) is not None:
            raise self.error(
                f"data space {name.removeprefix(_DS_PREFIX)!r} cannot be used in an index (not "
                "affine); declare index arrays as UFs",
                node,
            )
        if name in ("min", "max") and name not in self.ufs:
            self._check_arity(name, 2, len(args), node)
            return _Call(name, tuple(self.index(a) for a in args))
        if name in ("floor", "ceil") and name not in self.ufs:
            self._check_arity(name, 1, len(args), node)
            arg = args[0]
            if not (isinstance(arg, c_ast.BinaryOp) and arg.op == "/"):
                raise self.error(f"an index {name}(...) must be {name}(e/c), c > 0", node)
            num, den = self.index(arg.left), _const(self.index(arg.right))
            if den is None or den <= 0:
                raise self.error(f"in {name}(e/c) c must be a positive integer constant", node)
            return _IDiv(name == "ceil", num, den)
        if name in _FUNC_ARITY and name not in self.ufs:
            raise self.error(f"function {name!r} cannot appear in an index (not affine)", node)
        return self.uf_call(node, name, args)

    # --- result
    def result(self, tree: tuple[_Stmt, ...]) -> ParsedSource:
        clash = sorted(set(self.names) & {n for n, _ in self.locals})
        if clash:
            raise VerifyError(
                f"{self.where}: {clash[0]!r} is both a local and an iterator/parameter (used "
                "outside its block or before its declaration); rename the local"
            )
        uses = sorted(self.uses, key=lambda u: u.span[0])
        reads = _dedup(u for u in uses if not u.write)
        writes = _dedup(u for u in uses if u.write)
        reductions = tuple(w for w in writes if self._is_reduction(w))
        calls: dict[tuple[str, tuple[str, ...]], None] = {}
        for _, name, args in sorted(self.uf_calls, key=lambda c: c[0][0]):
            calls.setdefault((name, args), None)
        return ParsedSource(
            text=self.text,
            reads=reads,
            writes=writes,
            reductions=reductions,
            uf_calls=tuple(calls),
            names=frozenset(self.names),
            locals=tuple(self.locals),
            stmt=self.stmt,
            body=tree,
        )

    def _is_reduction(self, write: Access) -> bool:
        """Every use of the element is the target (and self-read) of one kind of reduction."""
        families = set()
        counts: dict[int, int] = {}
        for use in self.uses:
            if (use.ds, use.indices) != (write.data_space, write.indices):
                continue
            cand = self.candidates.get(use.owner)
            if cand is None or cand[1:] != (use.ds, use.indices):
                return False
            families.add(cand[0])
            counts[use.owner] = counts.get(use.owner, 0) + 1
        return len(families) == 1 and all(c == 2 for c in counts.values())

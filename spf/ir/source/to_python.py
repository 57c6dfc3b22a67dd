"""Python translation of the typed tree for the reference interpreter
(:meth:`ParsedSource.to_python`): ``_PyWriter`` writes the source of ``fn(env, arrays, ufs)``
that fetches iterators, parameters, arrays and UFs, runs the block with C semantics through the
helpers of :mod:`.runtime` (truncating ``/`` and ``%``, checked loads and stores, conversions to
the C type of locals and casts), and ``_py_convert`` names the runtime converter of a C type.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from spf.ir.source.tree import (
    _Assign,
    _Binary,
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
from spf.ir.source.vocab import _CONSTANTS, _QUALIFIERS

if TYPE_CHECKING:
    from spf.ir.source.model import ParsedSource


class _PyWriter:
    """Python source of ``fn(env, arrays, ufs)`` running one statement instance."""

    def __init__(self, parsed: ParsedSource) -> None:
        self.parsed = parsed
        self.local_types = dict(parsed.locals)
        self.lines: list[str] = []
        self.temp = 0

    def source(self) -> str:
        p = self.parsed
        head = ["def _spf_stmt(env, arrays, ufs):"]
        for n in sorted(p.names):
            head.append(f"    v_{n} = _need(env, {n!r}, 'iterator or parameter')")
        spaces = sorted({a.data_space for a in (*p.reads, *p.writes)})
        for ds in spaces:
            head.append(f"    a_{ds} = _need(arrays, {ds!r}, 'data space')")
        for uf in sorted({name for name, _ in p.uf_calls}):
            head.append(f"    u_{uf} = _need(ufs, {uf!r}, 'UF')")
        self.block(p.body, 2)
        body = ["    try:", *self.lines, "        pass", "    except _SpfError:", "        raise"]
        body += [
            "    except (ArithmeticError, TypeError, ValueError) as err:",
            "        _fail(err)",
        ]
        return "\n".join([*head, *body, "    return None", ""])

    def block(self, body: tuple[_Stmt, ...], depth: int) -> None:
        pad = "    " * depth
        for s in body:
            if isinstance(s, _Assign):
                self.assign(s, pad)
            elif isinstance(s, _Decl):
                init = "0" if s.init is None else self.expr(s.init)
                self.lines.append(f"{pad}l_{s.name} = {_py_convert(s.ctype)}({init})")
            elif isinstance(s, _If):
                self.lines.append(f"{pad}if {self.expr(s.cond)}:")
                self.lines.append(f"{pad}    pass")
                self.block(s.then, depth + 1)
                if s.other is not None:
                    self.lines.append(f"{pad}else:")
                    self.lines.append(f"{pad}    pass")
                    self.block(s.other, depth + 1)
            else:
                self.block(s.body, depth)

    def assign(self, s: _Assign, pad: str) -> None:
        value = self.expr(s.value)
        target = s.target
        if isinstance(target, _Var):
            name = f"l_{target.name}"
            if s.op != "=":
                value = _py_binary(s.op[:-1], name, value)
            conv = _py_convert(self.local_types[target.name])
            self.lines.append(f"{pad}{name} = {conv}({value})")
            return
        self.temp += 1
        ix = f"_ix{self.temp}"
        indices = "".join(f"{self.expr(i)}, " for i in target.indices)
        self.lines.append(f"{pad}{ix} = ({indices})")
        arr = f"a_{target.ds}"
        if s.op != "=":
            value = _py_binary(s.op[:-1], f"_ld({arr}, {target.ds!r}, {ix})", value)
        self.lines.append(f"{pad}_st({arr}, {target.ds!r}, {ix}, {value})")

    def expr(self, e: _Expr) -> str:
        if isinstance(e, _Num):
            return _py_number(e.value)
        if isinstance(e, _Var):
            return f"{'l' if e.local else 'v'}_{e.name}"
        if isinstance(e, _Ref):
            indices = "".join(f"{self.expr(i)}, " for i in e.indices)
            return f"_ld(a_{e.ds}, {e.ds!r}, ({indices}))"
        if isinstance(e, _UFCall):  # a component is the last index of the UF's array
            tail = () if e.component is None else (_py_number(e.component),)
            args = "".join(f"{a}, " for a in (*(self.expr(a) for a in e.args), *tail))
            return f"_uf(u_{e.name}, {e.name!r}, ({args}))"
        if isinstance(e, _Call):
            if not e.args:
                return f"_K_{e.func}"
            text = f"_F_{e.func}({', '.join(self.expr(a) for a in e.args)})"
            if e.func in ("min", "max") and any(_is_float(a) for a in e.args):
                return f"float({text})"  # the macro's ?: converts to the common type
            return text
        if isinstance(e, _IDiv):
            num = self.expr(e.num)
            return f"(-((-{num}) // {e.den}))" if e.ceil else f"(({num}) // {e.den})"
        if isinstance(e, _Unary):
            inner = self.expr(e.operand)
            return {"-": f"(-{inner})", "+": f"(+{inner})", "!": f"int(not {inner})"}.get(
                e.op, f"(~{inner})"
            )
        if isinstance(e, _Cast):
            return f"{_py_convert(e.ctype)}({self.expr(e.operand)})"
        if isinstance(e, _Cond):
            text = f"({self.expr(e.then)} if {self.expr(e.cond)} else {self.expr(e.other)})"
            return f"float{text}" if _is_float(e.then) or _is_float(e.other) else text
        return _py_binary(e.op, self.expr(e.left), self.expr(e.right))


def _is_float(e: _Expr) -> bool:
    """True when C types ``e`` as floating point whatever the arrays hold (static part)."""
    if isinstance(e, _Num):
        return isinstance(e.value, float)
    if isinstance(e, _Cast):
        return _py_convert(e.ctype) in ("float", "_f32")
    if isinstance(e, _Call):
        if e.func in ("abs", "labs", "llabs"):  # integer functions (stdlib.h)
            return False
        if e.func in ("min", "max"):
            return any(_is_float(a) for a in e.args)
        return bool(e.args) or e.func in _CONSTANTS
    if isinstance(e, _Unary):
        return e.op in "+-" and _is_float(e.operand)
    if isinstance(e, _Binary):
        return e.op in "+-*/" and (_is_float(e.left) or _is_float(e.right))
    if isinstance(e, _Cond):
        return _is_float(e.then) or _is_float(e.other)
    return False


def _py_binary(op: str, a: str, b: str) -> str:
    if op == "/":
        return f"_div({a}, {b})"
    if op == "%":
        return f"_mod({a}, {b})"
    if op == "&&":
        return f"int(bool({a}) and bool({b}))"
    if op == "||":
        return f"int(bool({a}) or bool({b}))"
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return f"int({a} {op} {b})"
    return f"({a} {op} {b})"


def _py_number(value: int | float) -> str:
    if isinstance(value, int) or math.isfinite(value):
        return repr(value)
    return "_K_NAN" if math.isnan(value) else "_K_INFINITY"


_INT_BITS = {"char": 8, "short": 16, "int": 32, "long": 64}
_FIXED_BITS = {
    "int8_t": 8,
    "int16_t": 16,
    "int32_t": 32,
    "int64_t": 64,
    "ptrdiff_t": 64,
    "intptr_t": 64,
    "size_t": 64,
    "uintptr_t": 64,
}


def _py_convert(ctype: str) -> str:
    """Name of the runtime converter for a C arithmetic type (assignment and casts)."""
    words = [w for w in ctype.split() if w not in _QUALIFIERS]
    if "double" in words:
        return "float"
    if "float" in words:
        return "_f32"
    if words in (["_Bool"], ["bool"]):
        return "_bool"
    name = words[0] if len(words) == 1 else ""
    unsigned = "unsigned" in words or name.startswith("uint") or name in ("size_t", "uintptr_t")
    if name in _FIXED_BITS or name.startswith("uint"):
        bits = _FIXED_BITS.get(name.removeprefix("u"), 64)
    else:
        bits = max([_INT_BITS[w] for w in words if w in _INT_BITS] or [32])
    return f"_{'u' if unsigned else 'i'}{bits}"

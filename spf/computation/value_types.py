"""The C type of a producer's value, for producer-consumer inlining (PDFG ``inline``).

``$t$(i) = e;`` stores ``e`` converted to ``t``'s element type: an ``int32_t`` temporary
truncates ``x(i) * 2.5``, a ``float`` one rounds a double, a ``double`` one turns the integer
``i`` into a value that a later ``t(i) / 2`` divides exactly. Substituting ``e`` for a read
of ``t`` must keep that conversion, so the substituted value is ``(T)(e)`` unless ``e``
already has ``t``'s type. The type of ``e`` is worked out with C's rules (literals, the
accessed data spaces, integer promotion and the usual arithmetic conversions, casts, the
math functions); where a rule is not covered it is unknown, and the cast is kept. A ``bool``
temporary's value is ``(e) != 0`` (what the conversion stores, without naming a type that C99
has only from ``<stdbool.h>`` and C++ spells differently).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.clang import NUMPY_OF_C

if TYPE_CHECKING:
    from spf.computation.computation import Computation

__all__ = ["converted", "value_type"]

_INT = "int32"
"""C's ``int`` (what integer promotion, comparisons and ``!`` give)."""
_ITERATOR = "int64"
"""The type generated code declares loop iterators with."""
_PROMOTED = frozenset({"bool", "int8", "int16", "uint8", "uint16"})
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "&", "|", "^"})
_TRUTH = frozenset({"==", "!=", "<", "<=", ">", ">=", "&&", "||"})
_MATH = frozenset(
    {"sqrt", "cbrt", "exp", "exp2", "log", "log2", "log10", "pow", "sin", "cos", "tan", "asin",
     "acos", "atan", "atan2", "sinh", "cosh", "tanh", "fabs", "floor", "ceil", "round", "trunc",
     "fmod", "fmin", "fmax", "hypot", "erf"}
)  # fmt: skip
_FLOAT_LITERAL = re.compile(r"^[0-9.]+([eE][+-]?\d+)?[fFlL]?$|^0[xX].*[pP].*$")


def converted(comp: Computation, name: str, value: cx.Expr) -> cx.Expr:
    """``value`` as data space ``name`` of ``comp`` stores it: cast to its element type
    unless the value has that type already."""
    ctype = comp.data_spaces[name].ctype.removesuffix("*").strip()
    if value_type(comp, value) == _numpy(ctype):
        return value
    if ctype == "bool":  # (e) != 0 is the value (bool)(e) stores, written without the bool
        # type: C99 has it only from <stdbool.h>, C++ (CUDA, HLS) has no _Bool
        return cx.Binary("!=", value, cx.Num("0"))
    return cx.Cast(ctype, value)


def value_type(comp: Computation, e: cx.Expr) -> str | None:
    """The type of C expression ``e`` (a statement of ``comp``) as a numpy dtype name
    (``"float64"``, ``"int32"``), or None where it is not known."""
    if isinstance(e, (cx.Num, cx.Access, cx.Name, cx.Param, cx.Cast)):
        return _leaf_type(comp, e)
    if isinstance(e, cx.Unary):
        return _INT if e.op == "!" else _promoted(value_type(comp, e.operand))
    if isinstance(e, cx.Binary):
        if e.op in _TRUTH:
            return _INT
        left, right = value_type(comp, e.left), value_type(comp, e.right)
        if e.op in ("<<", ">>"):
            return _promoted(left)
        return _common(left, right) if e.op in _ARITHMETIC else None
    if isinstance(e, cx.Ternary):
        return _common(value_type(comp, e.then), value_type(comp, e.other))
    if isinstance(e, cx.Call):
        return _call(comp, e)
    return None


_Leaf = cx.Num | cx.Access | cx.Name | cx.Param | cx.Cast


def _leaf_type(comp: Computation, e: _Leaf) -> str | None:
    if isinstance(e, cx.Num):
        return _literal(e.text)
    if isinstance(e, cx.Access):
        return _space(comp, e.space)
    if isinstance(e, cx.Param):  # an iterator of the producer
        return _ITERATOR
    if isinstance(e, cx.Cast):
        return _numpy(e.ctype)
    if e.name.startswith("$") and e.name.endswith("$"):
        return _space(comp, e.name.strip("$"))
    if e.name in comp.params or e.name in comp.constants:
        return _numpy(comp.constant_type(e.name))
    return None


def _call(comp: Computation, e: cx.Call) -> str | None:
    uf = comp.ufs.get(e.func)
    if uf is not None:
        return uf.dtype if uf.dtype in NUMPY_OF_C.values() else None
    if e.func in _MATH:
        return "float64"
    if e.func.endswith("f") and e.func[:-1] in _MATH:
        return "float32"
    if e.func in ("min", "max", "spf_min", "spf_max") and len(e.args) == 2:
        return _common(value_type(comp, e.args[0]), value_type(comp, e.args[1]))
    return None


def _literal(text: str) -> str | None:
    t = text.strip().lstrip("+-")
    if _FLOAT_LITERAL.match(t) and not t.isdigit() and not t.lower().startswith("0x"):
        return "float32" if t[-1] in "fF" else "float64" if t[-1] not in "lL" else None
    if t.isdigit() and len(t) <= 9:
        return _INT
    return None


def _space(comp: Computation, name: str) -> str | None:
    ds = comp.data_spaces.get(name)
    return None if ds is None else _numpy(ds.ctype.removesuffix("*").strip())


def _numpy(ctype: str) -> str | None:
    return NUMPY_OF_C.get(ctype)


def _promoted(t: str | None) -> str | None:
    return _INT if t in _PROMOTED else t


def _common(a: str | None, b: str | None) -> str | None:
    """C's usual arithmetic conversions (None: not worked out)."""
    if "float64" in (a, b):
        return "float64"
    if a is None or b is None:
        return None
    if "float32" in (a, b):
        return "float32"
    a, b = _INT if a in _PROMOTED else a, _INT if b in _PROMOTED else b
    if a == b:
        return a
    if a[0] == b[0]:  # both signed or both unsigned: the wider one
        return max(a, b, key=lambda t: int(t.lstrip("uint")))
    return None

"""The C vocabulary shared by the statement-source modules: the reserved-name prefixes, the
typedef prelude the block is parsed inside, the math functions with their arities, named
constants, the pycparser node kinds that are rejected, assignment/operator sets, the type words,
the converter's expression-handler table, the lexical regular expressions, and ``_where`` (the
statement name used in messages).
"""

from __future__ import annotations

import math
import re

from spf.clang import MATH_1, MATH_2

_DS_PREFIX = "__spf_ds_"
_RESERVED = "__spf_"
_FUNC = "__spf_stmt"
C_TYPEDEFS = {
    "int8_t": "signed char",
    "int16_t": "short",
    "int32_t": "int",
    "int64_t": "long long",
    "uint8_t": "unsigned char",
    "uint16_t": "unsigned short",
    "uint32_t": "unsigned int",
    "uint64_t": "unsigned long long",
    "size_t": "unsigned long",
    "ptrdiff_t": "long",
    "intptr_t": "long",
    "uintptr_t": "unsigned long",
    "bool": "_Bool",
}
_TYPEDEFS = C_TYPEDEFS
_PRELUDE = "".join(f"typedef {c} {n};\n" for n, c in _TYPEDEFS.items()) + f"void {_FUNC}(void) {{\n"
_PRELUDE_LINES = _PRELUDE.count("\n")


_FUNC_ARITY: dict[str, int] = {
    **dict.fromkeys(MATH_1, 1),
    **dict.fromkeys([f + "f" for f in MATH_1], 1),
    **dict.fromkeys(MATH_2, 2),
    **dict.fromkeys([f + "f" for f in MATH_2], 2),
    "abs": 1,
    "labs": 1,
    "llabs": 1,
    "min": 2,
    "max": 2,
}
_CONSTANTS = {"INFINITY": math.inf, "NAN": math.nan}
_LOOP_NODES = (
    "For",
    "While",
    "DoWhile",
    "Return",
    "Goto",
    "Label",
    "Switch",
    "Case",
    "Default",
    "Break",
    "Continue",
    "FuncDef",
)
_COMPOUND_OPS = ("+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=")
_REDUCTION_FAMILY = {"+=": "+", "-=": "+", "*=": "*", "/=": "*"}
_VALUE_BINOPS = {
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "<",
    "<=",
    ">",
    ">=",
    "==",
    "!=",
    "&",
    "|",
    "^",
    "&&",
    "||",
}
_INT_WORDS = {"char", "short", "int", "long", "signed", "unsigned", "_Bool"}
_FLOAT_WORDS = {"float", "double"}
_QUALIFIERS = {"const", "volatile", "restrict"}
_EXPR_HANDLERS = {
    "Constant": "_e_constant",
    "ID": "_e_id",
    "FuncCall": "_e_func_call",
    "ArrayRef": "_e_array_ref",
    "UnaryOp": "_e_unary_op",
    "BinaryOp": "_e_binary_op",
    "TernaryOp": "_e_ternary_op",
    "Cast": "_e_cast",
    "Assignment": "_e_assignment",
    "ExprList": "_e_expr_list",
}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DELIMITED = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)\$")
_ERR_POS = re.compile(r"^[^:]*:(\d+):(\d+):\s*(.*)$", re.DOTALL)


def _where(stmt: str) -> str:
    return f"statement {stmt}" if stmt else "statement"

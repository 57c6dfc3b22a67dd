"""Facts about C that several layers need: keywords, element types and their numpy dtypes."""

from __future__ import annotations

C_KEYWORDS = frozenset(
    [
        "auto",
        "break",
        "case",
        "char",
        "const",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "float",
        "for",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "register",
        "restrict",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "typedef",
        "union",
        "unsigned",
        "void",
        "volatile",
        "while",
        "_Bool",
        "_Complex",
        "_Imaginary",
    ]
)
"""C99 keywords (no identifier spf generates may be one)."""

NUMPY_OF_C = {
    "double": "float64",
    "float": "float32",
    "int": "int32",
    "int8_t": "int8",
    "int16_t": "int16",
    "int32_t": "int32",
    "int64_t": "int64",
    "uint8_t": "uint8",
    "uint16_t": "uint16",
    "uint32_t": "uint32",
    "uint64_t": "uint64",
    "long": "int64",
    "char": "int8",
    "bool": "bool",
}
"""Element C types data spaces may have, with the numpy dtype of each."""

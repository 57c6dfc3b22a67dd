"""The constants of ``<math.h>``, ``<float.h>`` and ``<limits.h>`` that numerical C uses
(``M_PI``, ``DBL_MAX``, ``INT_MAX``...), as object-like macros with gcc's values on x86-64
Linux (glibc, LP64), written as C literals: the import drops ``#include`` lines, so these
stand in for the headers. A ``#define`` or ``#undef`` of the source replaces them, as it
would replace a header's.

Floating values are decimal literals that round to the same ``double`` (``float`` with
``F``) as gcc's; integer ones keep C's types (``4294967295U``, ``(-2147483647 - 1)``)."""

from __future__ import annotations

MATH_H = {
    "M_E": "2.7182818284590452354",
    "M_LOG2E": "1.4426950408889634074",
    "M_LOG10E": "0.43429448190325182765",
    "M_LN2": "0.69314718055994530942",
    "M_LN10": "2.30258509299404568402",
    "M_PI": "3.14159265358979323846",
    "M_PI_2": "1.57079632679489661923",
    "M_PI_4": "0.78539816339744830962",
    "M_1_PI": "0.31830988618379067154",
    "M_2_PI": "0.63661977236758134308",
    "M_2_SQRTPI": "1.12837916709551257390",
    "M_SQRT2": "1.41421356237309504880",
    "M_SQRT1_2": "0.70710678118654752440",
}
FLOAT_H = {
    "DBL_MAX": "1.7976931348623157e+308",
    "DBL_MIN": "2.2250738585072014e-308",
    "DBL_EPSILON": "2.2204460492503131e-16",
    "DBL_DIG": "15",
    "DBL_MANT_DIG": "53",
    "FLT_MAX": "3.40282347e+38F",
    "FLT_MIN": "1.17549435e-38F",
    "FLT_EPSILON": "1.19209290e-07F",
    "FLT_DIG": "6",
    "FLT_MANT_DIG": "24",
}
LIMITS_H = {
    "CHAR_BIT": "8",
    "SCHAR_MIN": "(-127 - 1)",
    "SCHAR_MAX": "127",
    "UCHAR_MAX": "255",
    "CHAR_MIN": "(-127 - 1)",
    "CHAR_MAX": "127",
    "SHRT_MIN": "(-32767 - 1)",
    "SHRT_MAX": "32767",
    "USHRT_MAX": "65535",
    "INT_MIN": "(-2147483647 - 1)",
    "INT_MAX": "2147483647",
    "UINT_MAX": "4294967295U",
    "LONG_MIN": "(-9223372036854775807L - 1L)",
    "LONG_MAX": "9223372036854775807L",
    "ULONG_MAX": "18446744073709551615UL",
    "LLONG_MIN": "(-9223372036854775807LL - 1LL)",
    "LLONG_MAX": "9223372036854775807LL",
    "ULLONG_MAX": "18446744073709551615ULL",
}
STANDARD_CONSTANTS: dict[str, str] = {**MATH_H, **FLOAT_H, **LIMITS_H}
"""Name -> C literal text, for every constant above."""

__all__ = ["FLOAT_H", "LIMITS_H", "MATH_H", "STANDARD_CONSTANTS"]

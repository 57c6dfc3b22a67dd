"""Facts about C that several layers need: keywords, element types and their numpy dtypes."""

from __future__ import annotations

import re

from spf.errors import VerifyError

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

C_LATER_KEYWORDS = frozenset(
    [
        *("_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert"),
        *("_Thread_local", "bool", "true", "false", "alignas", "alignof", "static_assert"),
    ]
)
"""C11/C23 keywords (and ``stdbool.h`` names) a newer compiler may treat as keywords."""

CPP_KEYWORDS = frozenset(
    [
        "and",
        "and_eq",
        "asm",
        "bitand",
        "bitor",
        "catch",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "delete",
        "dynamic_cast",
        "explicit",
        "export",
        "friend",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "reinterpret_cast",
        "requires",
        "static_cast",
        "template",
        "this",
        "thread_local",
        "throw",
        "try",
        "typeid",
        "typename",
        "using",
        "virtual",
        "wchar_t",
        "xor",
        "xor_eq",
    ]
)
"""C++ keywords: the CUDA and HLS targets compile as C++."""

MATH_1 = (
    "sqrt",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "floor",
    "ceil",
    "trunc",
    "round",
    "cbrt",
    "fabs",
)
"""``math.h`` functions of one argument that statement sources may call (``sqrtf`` too)."""

MATH_2 = ("pow", "atan2", "hypot", "fmod", "copysign", "fmin", "fmax")
"""``math.h`` functions of two arguments that statement sources may call (``powf`` too)."""

_MATH = [*MATH_1, *MATH_2]

LIBRARY_NAMES = frozenset(
    [*_MATH, *(f + "f" for f in _MATH), "abs", "labs", "llabs", "calloc", "malloc", "free"]
    + ["realloc", "exit", "abort", "NULL", "NAN", "INFINITY", "size_t", "ptrdiff_t"]
    + ["printf", "fprintf", "snprintf", "sprintf", "puts", "fputs", "fflush", "FILE"]
    + [t for t in NUMPY_OF_C if t.endswith("_t")]
)
"""Functions, macros and types of the headers generated code includes (``math.h``,
``stdlib.h``, ``stdint.h``; the ``stdio.h`` ones the MPI and CUDA runtimes call): a data
space or statement macro of that name would replace them."""

HEADER_MACROS = re.compile(
    r"M_(?:E|LOG2E|LOG10E|LN2|LN10|PI|PI_2|PI_4|1_PI|2_PI|2_SQRTPI|SQRT2|SQRT1_2)"
    r"(?:l|f|f32|f64|f128|f32x|f64x)?"  # math constants (g++'s cmath: M_PI, M_PIl, ...)
    r"|U?INT(?:MAX|PTR|_FAST\d+|_LEAST\d+|\d+)_(?:MAX|MIN|WIDTH|C)|U?INTMAX_C"
    r"|(?:PTRDIFF|SIZE|SIG_ATOMIC|WCHAR|WINT)_(?:MAX|MIN|WIDTH)"
    r"|HUGE_VAL\w*|SNAN\w*|FP_[A-Z0-9_]+|MATH_ERR(?:NO|EXCEPT)|math_errhandling|MAXFLOAT"
    r"|EXIT_(?:FAILURE|SUCCESS)|RAND_MAX|MB_CUR_MAX|(?:BIG|LITTLE|PDP)_ENDIAN|BYTE_ORDER"
    r"|W(?:CONTINUED|EXITED|EXITSTATUS|IFCONTINUED|IFEXITED|IFSIGNALED|IFSTOPPED|NOHANG"
    r"|NOWAIT|STOPPED|STOPSIG|TERMSIG|UNTRACED)|FD_(?:CLR|ISSET|SET|SETSIZE|ZERO)|NFDBITS"
    r"|alloca|issubnormal|(?:be|le)(?:16|32|64)toh|hto(?:be|le)(?:16|32|64)"
    r"|(?:S?CHAR|UCHAR|U?SHRT|U?INT|U?LONG|U?LLONG)_(?:MAX|MIN|WIDTH)|CHAR_BIT|MB_LEN_MAX"
    r"|LONG_BIT|WORD_BIT|SSIZE_MAX|PATH_MAX"  # limits.h (the MPI target includes it)
    r"|EOF|BUFSIZ|FILENAME_MAX|FOPEN_MAX|TMP_MAX|L_tmpnam|SEEK_(?:SET|CUR|END)|_IO[FLN]BF"
    r"|stdin|stdout|stderr"  # stdio.h (the MPI and CUDA targets include it)
)
"""Macros of the headers generated code includes (``math.h``/``cmath``, ``stdint.h``/
``cstdint``, ``stdlib.h``; ``limits.h`` and ``stdio.h`` for MPI and CUDA), as glibc and
g++ define them: a symbolic constant named ``HUGE_VAL`` made the parameter
``int64_t HUGE_VAL`` a function declaration and the loop ``i < HUGE_VAL`` unbounded (the
kernel segfaulted); ``M_PI`` or ``INT64_MAX`` were compiler errors."""

_MATH_FAMILIES = (
    "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh",
    "sinh", "tanh", "exp", "exp2", "expm1", "exp10", "pow10", "frexp", "ilogb", "llogb", "ldexp",
    "log", "log10", "log1p", "log2", "logb", "logp1", "log2p1", "log10p1", "modf", "scalbn",
    "scalbln", "scalb", "cbrt", "fabs", "hypot", "pow", "sqrt", "rsqrt", "erf", "erfc", "lgamma",
    "tgamma", "gamma", "ceil", "floor", "nearbyint", "rint", "lrint", "llrint", "round", "lround",
    "llround", "roundeven", "trunc", "fmod", "remainder", "remquo", "drem", "copysign", "nan",
    "nextafter", "nexttoward", "nextup", "nextdown", "fdim", "fmax", "fmin", "fma", "significand",
    "finite", "isinf", "isnan", "j0", "j1", "jn", "y0", "y1", "yn", "sincos", "fmaximum",
    "fminimum", "fmaximum_num", "fminimum_num", "fmaximum_mag", "fminimum_mag", "fmaximum_mag_num",
    "fminimum_mag_num", "fmaxmag", "fminmag", "fromfp", "fromfpx", "ufromfp", "ufromfpx",
    "canonicalize", "getpayload", "setpayload", "setpayloadsig", "totalorder", "totalordermag",
    "acospi", "asinpi", "atanpi", "atan2pi", "cospi", "sinpi", "tanpi", "compoundn", "pown",
    "powr", "rootn", "exp2m1", "exp10m1"
)  # fmt: skip
_STDLIB_FUNCTIONS = (
    "atof", "atoi", "atol", "atoll", "rand", "srand", "rand_r", "random", "srandom", "initstate",
    "setstate", "random_r", "srandom_r", "initstate_r", "setstate_r", "drand48", "erand48",
    "lrand48", "nrand48", "mrand48", "jrand48", "srand48", "seed48", "lcong48", "drand48_r",
    "erand48_r", "lrand48_r", "nrand48_r", "mrand48_r", "jrand48_r", "srand48_r", "seed48_r",
    "lcong48_r", "arc4random", "arc4random_buf", "arc4random_uniform", "reallocarray",
    "aligned_alloc", "posix_memalign", "valloc", "atexit", "at_quick_exit", "on_exit",
    "quick_exit", "getenv", "secure_getenv", "setenv", "unsetenv", "clearenv", "putenv", "system",
    "realpath", "canonicalize_file_name", "bsearch", "qsort", "qsort_r", "div", "ldiv", "lldiv",
    "mblen", "mbtowc", "wctomb", "mbstowcs", "wcstombs", "mkstemp", "mkstemps", "mkostemp",
    "mkostemps", "mkstemp64", "mkstemps64", "mkostemp64", "mkostemps64", "mkdtemp", "mktemp",
    "ecvt", "fcvt", "gcvt", "qecvt", "qfcvt", "qgcvt", "ecvt_r", "fcvt_r", "qecvt_r", "qfcvt_r",
    "select", "pselect", "getloadavg", "rpmatch", "getsubopt", "grantpt", "unlockpt", "ptsname",
    "ptsname_r", "posix_openpt", "getpt", "a64l", "l64a"
)  # fmt: skip
HEADER_FUNCTIONS = re.compile(
    rf"(?:{'|'.join(_MATH_FAMILIES)})(?:f|l|f32|f64|f128|f32x|f64x)?(?:_r)?"
    r"|(?:[fd]|f32x?|f64x?)(?:add|sub|mul|div|sqrt|fma)(?:l|f32x?|f64x?|f128)?"
    rf"|strto\w*|strfrom\w*|{'|'.join(_STDLIB_FUNCTIONS)}"
)
"""Functions the headers generated code includes declare (``math.h``/``cmath`` with glibc's
and g++'s extensions, ``stdlib.h``): a kernel function of that name (a computation named
``div``, ``erf`` or ``y0``) is a conflicting declaration, so it is renamed ``spf_<name>``
(:func:`spf.codegen.program.c_function_name`); a data space or parameter may shadow them."""

SPF_PREFIXES = ("spf_", "_spf_", "__")
"""Prefixes of spf's own names in generated code (``spf_acc``, ``spf_tile``,
``spf_floord``, ``spf_min``, ...) and of its internal names."""


def reserved_reason(name: str) -> str | None:
    """Why ``name`` cannot name anything in generated code (a data space, statement, loop,
    UF, parameter or buffer), or None when it can.

    >>> reserved_reason("int")
    'a C keyword'
    >>> reserved_reason("spf_acc")
    "reserved for spf's own names (prefix 'spf_')"
    >>> reserved_reason("rowptr") is None
    True
    """
    if name in C_KEYWORDS or name in C_LATER_KEYWORDS:
        return "a C keyword"
    if name in CPP_KEYWORDS:
        return "a C++ keyword (the CUDA and HLS targets compile as C++)"
    if name in LIBRARY_NAMES:
        return "a name from the C headers generated code includes"
    if HEADER_MACROS.fullmatch(name):
        return "a macro of the C headers generated code includes"
    for prefix in SPF_PREFIXES:
        if name.startswith(prefix):
            return f"reserved for spf's own names (prefix {prefix!r})"
    return None


# Words of spf's set notation (isl's, in lower case: isl_reserved), which no loop, UF or
# constant may be called.
ISL_RESERVED = frozenset(
    [
        "and",
        "or",
        "not",
        "exists",
        "floor",
        "ceil",
        "mod",
        "min",
        "max",
        "true",
        "false",
        "infty",
        "nan",
        "implies",
        "rat",
        "xor",
        "floord",  # isl's own words too: a symbolic constant named so was an isl syntax error
        "ceild",
    ]
)


def isl_reserved(name: str) -> bool:
    """Whether ``name`` is a word of the set notation: isl reads its words in any case
    (``True``, ``MAX`` and ``Floor`` are ``true``, ``max`` and ``floor`` to it).

    >>> isl_reserved("True"), isl_reserved("rowptr")
    (True, False)
    """
    return name.lower() in ISL_RESERVED


def check_reserved(what: str, name: str, *, in_macros: bool = False, in_sets: bool = False) -> None:
    """Raise ``SpfError`` when :func:`reserved_reason` refuses ``name`` (``what`` names it:
    ``"data space"``, ``"statement"``, ...). ``in_macros``: the name appears inside the
    generated access macros (a data space, UF, buffer or symbolic constant), whose arguments
    are ``t0, t1, ...``: such a name would be replaced by a macro argument. ``in_sets``: the
    name appears in set text (a loop, UF or symbolic constant), where ``min``, ``max``,
    ``floor``, ``mod``... are words of the notation.

    >>> check_reserved("data space", "for")
    Traceback (most recent call last):
    ...
    spf.errors.VerifyError: data space 'for' is a C keyword; pick another name
    """
    why = reserved_reason(name)
    if why is None and in_macros and re.fullmatch(r"t[0-9]+", name):
        why = "the name of a macro argument in generated code (t0, t1, ...)"
    if why is None and in_sets and isl_reserved(name):
        why = "a word of spf's set notation (min, max, floor, mod, ...)"
    if why is not None:
        raise VerifyError(f"{what} {name!r} is {why}; pick another name")


C_PREC = {
    "||": 4,
    "&&": 5,
    "|": 6,
    "^": 7,
    "&": 8,
    "==": 9,
    "!=": 9,
    "<": 10,
    "<=": 10,
    ">": 10,
    ">=": 10,
    "<<": 11,
    ">>": 11,
    "+": 12,
    "-": 12,
    "*": 13,
    "/": 13,
    "%": 13,
}
"""C's binary operators by precedence (higher binds tighter; all left-associative): the one
table of the project's C expression printers (:mod:`spf.cexpr`, the statement-source printer
and the C import)."""

C_COND, C_UNARY, C_ATOM = 3, 15, 16
"""Precedences of ``?:``, of prefix operators and casts, and of names, literals, calls and
subscripts (around :data:`C_PREC`)."""

"""The runtime of the Python that :mod:`.to_python` writes: C integer conversions that wrap,
C division and remainder, single-precision rounding, the math functions with C's inf/nan
results (and their ``f`` variants, ``abs``, the ``min``/``max`` macros), bounds-checked loads,
stores and UF reads that raise :class:`~spf.errors.SpfError` naming the statement, and
``_compile_python`` that compiles (and caches) a statement's function in that namespace.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import numpy as np

from spf.errors import ArgumentError, SpfError, VerifyError
from spf.ir.source.vocab import _where


def _f32(value: Any) -> float:
    with np.errstate(all="ignore"):
        return float(np.float32(value))


@functools.cache
def _int_converter(bits: int, unsigned: bool) -> Callable[[Any], int]:
    """C conversion to an integer type: floats truncate (and must fit), integers wrap."""
    modulus = 1 << bits
    low, high = (0, modulus) if unsigned else (-(modulus >> 1), modulus >> 1)

    def convert(value: Any) -> int:
        try:
            v = int(value)  # truncates toward zero, as C does
        except (ValueError, OverflowError) as err:
            raise ArgumentError(f"cannot convert {value!r} to a {bits}-bit integer") from err
        if isinstance(value, float) and not low <= v < high:  # undefined behaviour in C
            raise ArgumentError(f"cannot convert {value!r} to a {bits}-bit integer: out of range")
        v %= modulus
        if not unsigned and v >= modulus // 2:
            v -= modulus
        return v

    return convert


def _div(a: Any, b: Any) -> Any:
    """C division: truncating for two integers, IEEE for floating point."""
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ArgumentError("integer division by zero")
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _mod(a: Any, b: Any) -> Any:
    """C remainder: the sign of the dividend."""
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ArgumentError("integer remainder by zero")
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    return _safe(math.fmod, np.fmod)(a, b)


def _safe(py: Callable[..., Any], fallback: Any) -> Callable[..., Any]:
    """``py`` with C's results (inf/nan) where Python raises."""

    def call(*args: Any) -> Any:
        try:
            return py(*args)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(fallback(*(np.float64(a) for a in args)))

    return call


def _cround(x: float) -> float:
    r = float(math.trunc(x))
    return r + math.copysign(1.0, x) if abs(x - r) >= 0.5 else r


def _fmin(a: Any, b: Any) -> Any:
    return b if math.isnan(a) else a if math.isnan(b) else min(a, b)


def _fmax(a: Any, b: Any) -> Any:
    return b if math.isnan(a) else a if math.isnan(b) else max(a, b)


def _float_fn(fn: Callable[[Any], Any]) -> Callable[[Any], float]:
    return lambda x: float(fn(x))


_PY_FUNCS: dict[str, Callable[..., Any]] = {
    "sqrt": _safe(math.sqrt, np.sqrt),
    "exp": _safe(math.exp, np.exp),
    "exp2": _safe(lambda x: math.pow(2.0, x), np.exp2),
    "expm1": _safe(math.expm1, np.expm1),
    "log": _safe(math.log, np.log),
    "log2": _safe(math.log2, np.log2),
    "log10": _safe(math.log10, np.log10),
    "log1p": _safe(math.log1p, np.log1p),
    "sin": _safe(math.sin, np.sin),
    "cos": _safe(math.cos, np.cos),
    "tan": _safe(math.tan, np.tan),
    "asin": _safe(math.asin, np.arcsin),
    "acos": _safe(math.acos, np.arccos),
    "atan": _safe(math.atan, np.arctan),
    "sinh": _safe(math.sinh, np.sinh),
    "cosh": _safe(math.cosh, np.cosh),
    "tanh": _safe(math.tanh, np.tanh),
    "floor": _safe(_float_fn(math.floor), np.floor),
    "ceil": _safe(_float_fn(math.ceil), np.ceil),
    "trunc": _safe(_float_fn(math.trunc), np.trunc),
    "round": _safe(_cround, np.round),
    "cbrt": _safe(math.cbrt, np.cbrt),
    "fabs": _safe(math.fabs, np.fabs),
    "pow": _safe(math.pow, np.power),
    "atan2": _safe(math.atan2, np.arctan2),
    "hypot": _safe(math.hypot, np.hypot),
    "fmod": _safe(math.fmod, np.fmod),
    "copysign": _safe(math.copysign, np.copysign),
    "fmin": _fmin,
    "fmax": _fmax,
}


def _c_abs(bits: int) -> Callable[[Any], int]:
    """stdlib.h's ``abs`` (``bits`` 32) or ``labs``/``llabs`` (64): C converts the argument to
    the function's integer type first, so ``abs(1.7)`` is 1 (truncated, as the compiled
    kernel computes it; ``fabs`` keeps the fraction)."""
    convert = _int_converter(bits, unsigned=False)
    return lambda value: abs(convert(value))


def _single(fn: Callable[..., Any]) -> Callable[..., float]:
    """The ``float`` variant (``sqrtf``) of a math function: its arguments converted to
    ``float`` first (as C converts a double passed to ``sqrtf``), its result rounded to
    single precision."""
    return lambda *args: _f32(fn(*(_f32(a) for a in args)))


_PY_FUNCS.update({f"{k}f": _single(fn) for k, fn in list(_PY_FUNCS.items())})
_PY_FUNCS.update(
    {
        "abs": _c_abs(32),  # stdlib.h's: an int argument (a double is converted first)
        "labs": _c_abs(64),
        "llabs": _c_abs(64),
        "min": lambda a, b: a if a < b else b,  # the macro ((a) < (b) ? (a) : (b))
        "max": lambda a, b: a if a > b else b,
    }
)


class _Arrays:
    """Checked element access for one statement's generated Python."""

    def __init__(self, stmt: str) -> None:
        self.where = _where(stmt)

    def need(self, mapping: Mapping[str, Any], key: str, what: str) -> Any:
        try:
            value = mapping[key]
        except KeyError:
            raise ArgumentError(f"{self.where}: no value for {what} {key!r}") from None
        if what != "iterator or parameter" or type(value) is float:
            return value  # a float: a constant declared with a floating type
        try:
            return operator.index(value)
        except TypeError:
            raise ArgumentError(
                f"{self.where}: {what} {key!r} must be an int, got {value!r}"
            ) from None

    def fail(self, err: Exception) -> NoReturn:
        raise ArgumentError(f"{self.where}: cannot evaluate: {err}") from err

    def check(self, arr: Any, name: str, idx: tuple[int, ...], what: str) -> None:
        shape = arr.shape
        if len(idx) != len(shape):
            raise VerifyError(
                f"{self.where}: {what} {name!r} is accessed with {len(idx)} index(es) but its "
                f"array has {len(shape)} dimension(s)"
            )
        for v, n in zip(idx, shape, strict=True):
            if not 0 <= v < n:
                shown = f"{name}({', '.join(str(x) for x in idx)})"
                raise ArgumentError(
                    f"{self.where}: index out of range: {what} {name!r} accessed as {shown}, "
                    f"shape {tuple(shape)}"
                )

    def load(self, arr: Any, name: str, idx: tuple[int, ...]) -> Any:
        self.check(arr, name, idx, "data space")
        return arr[idx].item()

    def store(self, arr: Any, name: str, idx: tuple[int, ...], value: Any) -> None:
        self.check(arr, name, idx, "data space")
        kind = arr.dtype.kind  # a numpy array, or a view of one with its dtype (Watched)
        if kind in "iu":  # C's conversion: an integer wraps (-1 -> uint32 4294967295)
            value = _int_converter(8 * arr.dtype.itemsize, kind == "u")(value)
        try:
            arr[idx] = value
        except (ValueError, OverflowError, TypeError) as err:
            raise ArgumentError(
                f"{self.where}: cannot store {value!r} into data space {name!r}: {err}"
            ) from err

    def uf(self, arr: Any, name: str, idx: tuple[int, ...]) -> int:
        self.check(arr, name, idx, "UF")
        return int(arr[idx])


def _runtime(stmt: str) -> dict[str, Any]:
    """The names the generated Python uses."""
    arrays = _Arrays(stmt)
    ns: dict[str, Any] = {
        "_SpfError": SpfError,
        "_fail": arrays.fail,
        "_need": arrays.need,
        "_ld": arrays.load,
        "_st": arrays.store,
        "_uf": arrays.uf,
        "_div": _div,
        "_mod": _mod,
        "_f32": _f32,
        "_bool": lambda v: int(bool(v)),
        "_K_INFINITY": math.inf,
        "_K_NAN": math.nan,
    }
    for bits in (8, 16, 32, 64):
        ns[f"_i{bits}"] = _int_converter(bits, unsigned=False)
        ns[f"_u{bits}"] = _int_converter(bits, unsigned=True)
    ns.update({f"_F_{k}": fn for k, fn in _PY_FUNCS.items()})
    return ns


@functools.lru_cache(maxsize=512)
def _compile_python(
    source: str, stmt: str
) -> Callable[[dict[str, int], dict[str, Any], dict[str, Any]], None]:
    namespace = _runtime(stmt)
    exec(compile(source, f"<spf {_where(stmt)}>", "exec"), namespace)
    fn: Callable[[dict[str, int], dict[str, Any], dict[str, Any]], None] = namespace["_spf_stmt"]
    return fn

"""One vocabulary of element types, accepted wherever spf takes a type.

A type may be given as

* a C name: ``"double"``, ``"float"``, ``"int"``, ``"long"``, ``"char"``, ``"bool"``,
  ``"int8_t"`` ... ``"uint64_t"`` (kept as written: generated code spells it so);
* a numpy dtype name: ``"float64"``, ``"float32"``, ``"int32"``, ``"int64"``, ``"uint8"`` ...;
* a numpy dtype or scalar type: ``np.float64``, ``np.dtype("int32")``, or ``float`` / ``int``
  / ``bool`` (numpy's meaning: ``float`` is ``float64``, ``int`` is ``int64``).

Text is read as a C name first, so ``"float"`` is C's 32-bit ``float`` and ``"int"`` is C's
``int`` (32 bits), while the Python type ``float`` is numpy's ``float64``.
:func:`c_type` turns any of these into the C name generated code uses; :func:`numpy_name`
into the numpy dtype name arrays must have. Anything else is an :class:`~spf.errors.SpfError`
that names what was being declared and lists the accepted types.

>>> import numpy as np
>>> c_type("float64", what="data space 'y'"), c_type(np.dtype("int32"), what="x")
('double', 'int32_t')
>>> c_type("int", what="x"), numpy_name(np.int64, what="x")
('int', 'int64')
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, TypeAlias

from spf.clang import NUMPY_OF_C
from spf.errors import ArgumentError, SpfError

if TYPE_CHECKING:
    import numpy as np

TypeLike: TypeAlias = "str | type[Any] | np.dtype[Any]"
"""What a type argument may be: a C or numpy name, a numpy dtype or scalar type."""

C_OF_NUMPY = {
    "float64": "double",
    "float32": "float",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "bool": "bool",
}
"""The C name generated code uses for each numpy dtype spf supports."""


def accepted() -> str:
    """The accepted type names, for error messages."""
    return (
        f"C names {', '.join(sorted(NUMPY_OF_C))}; numpy names {', '.join(sorted(C_OF_NUMPY))}; "
        "or a numpy dtype such as np.float64 or np.dtype('int32')"
    )


def c_type(type_: object, *, what: str) -> str:
    """The C element type named by ``type_`` (see the module docstring); ``what`` names the
    declaration in the error message (``"data space 'y'"``)."""
    if isinstance(type_, str):
        text = type_.strip()
        if text in NUMPY_OF_C:
            return text
        if text in C_OF_NUMPY:
            return C_OF_NUMPY[text]
        raise ArgumentError(f"{what}: unsupported type {type_!r}; use one of the {accepted()}")
    name = _numpy_dtype_name(type_)
    if name is None or name not in C_OF_NUMPY:
        raise ArgumentError(f"{what}: unsupported type {type_!r}; use one of the {accepted()}")
    return C_OF_NUMPY[name]


def numpy_name(type_: object, *, what: str) -> str:
    """The numpy dtype name (``"float64"``) of the element type named by ``type_``."""
    return NUMPY_OF_C[c_type(type_, what=what)]


def _numpy_dtype_name(type_: object) -> str | None:
    if type_ is None or isinstance(type_, (bytes, int, float)):
        return None
    import numpy as np

    try:
        dtype: Any = np.dtype(type_)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
    return str(dtype.name)


def index_name(index_dtype: object) -> str:
    """``"int32"`` or ``"int64"`` from any spelling :func:`numpy_name` accepts (the index
    types of spf's kernels and formats)."""
    name: object = index_dtype
    with contextlib.suppress(SpfError):
        name = numpy_name(index_dtype, what="index_dtype")
    if name not in ("int32", "int64"):
        raise ArgumentError(
            f"index_dtype must be 'int32' or 'int64' (or 'int32_t', np.int32, ...), "
            f"got {index_dtype!r}"
        )
    return str(name)

"""C's integer literals and division, read the way C reads them (a leaf module: the
preprocessor's ``#if`` and the parsed source's constant folding both use it)."""

from __future__ import annotations


def c_integer(literal: str) -> int | None:
    """The value of a C integer literal (``10``, ``0x1f``, ``010`` is 8, suffixes ``uUlL``
    dropped), or None when it is not one."""
    text = literal.rstrip("uUlL")
    try:
        if text[:2].lower() == "0x":
            return int(text[2:], 16)
        if len(text) > 1 and text.startswith("0"):
            return int(text, 8)
        return int(text, 10)
    except ValueError:
        return None


def c_div(a: int, b: int) -> tuple[int, int]:
    """C's ``a / b`` and ``a % b`` (``b`` nonzero): the quotient truncated toward zero, the
    remainder of ``a``'s sign (Python's ``//`` and ``%`` round toward minus infinity)."""
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q, a - q * b


__all__ = ["c_div", "c_integer"]

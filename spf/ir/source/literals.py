"""C types and literals: ``_c_type`` normalises the type words of a local declaration or cast
(qualifiers kept) and accepts only arithmetic types, and ``_c_literal`` gives the value of a C
integer, floating-point (``f`` suffix rounded to single precision) or character constant.
"""

from __future__ import annotations

import re

from spf.ir.source.runtime import _f32
from spf.ir.source.vocab import _FLOAT_WORDS, _INT_WORDS, _QUALIFIERS, _TYPEDEFS


def _c_type(quals: list[str], names: list[str]) -> str | None:
    """Normalized C type text (qualifiers kept) if arithmetic, else None."""
    words = list(names)
    base = set(words) - _QUALIFIERS
    if not base:
        return None
    if len(words) == 1 and words[0] in _TYPEDEFS:
        pass
    elif not base <= (_INT_WORDS | _FLOAT_WORDS):
        return None
    return " ".join([*quals, *words])


_INT_SUFFIX = re.compile(r"[uUlL]+$")


def _c_literal(text: str, ctype: str) -> int | float:
    """The value of a C numeric or character constant."""
    if text.startswith("'"):
        body = text[1:-1]
        escapes = {"\\n": 10, "\\t": 9, "\\0": 0, "\\\\": 92, "\\'": 39, '\\"': 34, "\\r": 13}
        return escapes.get(body, ord(body[-1]) if body else 0)
    if ctype in ("float", "double", "long double"):
        t = text.rstrip("fFlL") if not text.lower().startswith("0x") else text.rstrip("lL")
        value = float.fromhex(t.rstrip("fF")) if t.lower().startswith("0x") else float(t)
        return _f32(value) if text[-1] in "fF" and not text.lower().startswith("0x") else value
    t = _INT_SUFFIX.sub("", text)
    if t.lower().startswith("0x"):
        return int(t, 16)
    if t.lower().startswith("0b"):
        return int(t[2:], 2)
    if len(t) > 1 and t.startswith("0"):
        return int(t, 8)
    return int(t)

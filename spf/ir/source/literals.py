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
_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39}
_ESCAPES |= {'"': 34, "?": 63}


def _char_value(text: str) -> int:
    """The value of a C character constant as gcc gives it on x86-64 (an ``int``; ``char``
    is signed, so ``'\\xff'`` is -1): one ASCII character, a simple escape, an octal
    (``'\\101'``) or hex (``'\\x41'``) escape. A multi-character constant (``'ab'``, or a
    non-ASCII character, several bytes in UTF-8) has an implementation-defined value: a
    ``ValueError`` saying so."""
    body = text[1:-1]
    if body.startswith("\\") and len(body) > 1:
        esc = body[1:]
        if esc in _ESCAPES:
            return _ESCAPES[esc]
        if re.fullmatch(r"[0-7]{1,3}", esc):
            value = int(esc, 8)
        elif re.fullmatch(r"x[0-9a-fA-F]+", esc) and int(esc[1:], 16) < 256:
            value = int(esc[1:], 16)
        else:
            raise ValueError(f"unsupported escape in the character constant {text}")
    elif len(body) == 1 and ord(body) < 128:
        value = ord(body)
    else:
        raise ValueError(
            f"the multi-character constant {text} has an implementation-defined value; "
            "write the number"
        )
    return value - 256 if value >= 128 else value


def _c_literal(text: str, ctype: str) -> int | float:
    """The value of a C numeric or character constant."""
    if text.startswith("'"):
        return _char_value(text)
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

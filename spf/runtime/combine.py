"""Several generated C translation units as one, so that one compiler run builds them all.

A wavefront kernel is several generated functions (the executor and the inspector stages,
:mod:`spf.runtime.plan`); compiling them as one translation unit runs the compiler once and
reads the system headers once (measured on Gauss-Seidel's four sources: ~20% less compiler
CPU than four runs, and one process instead of four).

Each part is pasted as it is, between two fences that keep the parts apart:

* before the part, each ``static`` function it defines is renamed by a macro
  (``#define spf_read_col spf_p2_spf_read_col``), so two parts may define helpers of the same
  name (as printers emit them: ``spf_read_col``, ``spf_fault_note``);
* after the part, every macro it defined and every renaming is ``#undef``-ed, so the next
  part starts from a clean preprocessor state (statement macros ``s0``, access macros,
  include guards such as ``SPF_FAULT_NOTE``).

What the parts export (their non-``static`` functions) is left as it is: each part's names
start with its own kernel's function name, and :func:`combine` refuses (returns None) parts
whose exported names are not all distinct, or that declare anything at file scope it does
not know how to keep apart (a type, a variable): such parts are built one by one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
_TOP = re.compile(r"^(?![ \t#{}/*]|$)(.*)$", re.M)
"""A line starting at column 0 with code (not a directive, brace, comment or blank line)."""
_STATIC_FN = re.compile(r"^static\b[^(;={]*?\b(\w+)\s*\(")
_EXPORTED_FN = re.compile(r"^(?:const\s+)?\w+[\s*]+(\w+)\s*\(")


def _file_scope(text: str) -> tuple[list[str], list[str]] | None:
    """The static functions and the exported functions ``text`` defines or declares at file
    scope, or None when something else is declared there (a type, a variable)."""
    statics: list[str] = []
    exported: list[str] = []
    for line in _TOP.findall(text):
        if line.startswith("static"):
            m = _STATIC_FN.match(line)
            if m is None:
                return None  # a static variable: not renamed here
            statics.append(m.group(1))
            continue
        if re.match(r"(?:typedef|struct|union|enum|extern)\b", line):
            return None
        m = _EXPORTED_FN.match(line)
        if m is None:
            return None
        exported.append(m.group(1))
    return statics, exported


def combine(parts: Sequence[str]) -> str | None:
    """One translation unit defining everything each of ``parts`` (generated C sources)
    defines, or None when they cannot share one (see the module's docstring)."""
    out: list[str] = []
    seen: set[str] = set()
    for k, text in enumerate(parts):
        found = _file_scope(text)
        if found is None:
            return None
        statics, exported = (dict.fromkeys(names) for names in found)
        if seen & exported.keys() or any(n in statics for n in seen):
            return None
        seen |= exported.keys()
        renames = [f"#define {name} spf_p{k}_{name}" for name in statics]
        defined = dict.fromkeys([*_DEFINE.findall(text), *statics])
        out += [f"/* ---- part {k} ---- */", *renames, text.rstrip("\n")]
        out += [f"#undef {name}" for name in defined]
    return "\n".join(out) + "\n"

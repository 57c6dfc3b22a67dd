"""Several generated C translation units as one, so that one compiler run builds them all.

A wavefront kernel is several generated functions (the executor and the inspector stages,
:mod:`spf.runtime.plan`); compiling them as one translation unit runs the compiler once and
reads the system headers once (measured on Gauss-Seidel's four sources: ~20% less compiler
CPU than four runs, and one process instead of four).

Each part is pasted as it is, between two fences that keep the parts apart, from what its
record (:class:`~spf.codegen.unit.TranslationUnit`) says it defines; nothing reads the text:

* before the part, each ``static`` function it defines is renamed by a macro
  (``#define spf_read_col spf_p2_spf_read_col``), so two parts may define helpers of the same
  name (as printers emit them: ``spf_read_col``, ``spf_fault_note``);
* after the part, every macro it leaves defined and every renaming is ``#undef``-ed, so the
  next part starts from a clean preprocessor state (statement macros ``s0``, access macros,
  include guards such as ``SPF_FAULT_NOTE``).

What the parts export (their non-``static`` functions) is left as it is: each part's names
start with its own kernel's function name, and :func:`combine` refuses (returns None) parts
whose exported names are not all distinct, or whose file scope holds something it does not
know how to keep apart (a type, a variable: a record that is not ``shareable``): such parts
are built one by one.
"""

from __future__ import annotations

from collections.abc import Sequence

from spf.codegen.unit import TranslationUnit


def combine(parts: Sequence[TranslationUnit]) -> TranslationUnit | None:
    """One translation unit defining everything each of ``parts`` (generated C units)
    defines, or None when they cannot share one (see the module's docstring)."""
    out: list[str] = []
    seen: set[str] = set()
    for k, part in enumerate(parts):
        if not part.shareable:
            return None
        statics, exported = dict.fromkeys(part.statics), dict.fromkeys(part.exported)
        if seen & exported.keys() or any(n in statics for n in seen):
            return None
        seen |= exported.keys()
        renames = [f"#define {name} spf_p{k}_{name}" for name in statics]
        defined = dict.fromkeys([*part.macros, *statics])
        out += [f"/* ---- part {k} ---- */", *renames, part.source.rstrip("\n")]
        out += [f"#undef {name}" for name in defined]
    return TranslationUnit(
        "\n".join(out) + "\n",
        "c",
        functions=tuple(f for part in parts for f in part.functions if not f.static),
        shareable=True,
        openmp=any(part.openmp for part in parts),
        parallel=any(part.parallel for part in parts),
    )

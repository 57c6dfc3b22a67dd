"""From C source to a Computation (docs/import_c.md, API §13).

>>> import spf
>>> comp = spf.from_c('''
... #define N 8
... void scale(double x[N], double a) {
...   for (int i = 0; i < N; i++)
...     x[i] *= a;
... }''')
>>> print(comp.loop_structure())
for i:
  s0
>>> comp.stmt("s0").source
'$x$(i) *= a;'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from spf.frontend.build import Translation, translate

if TYPE_CHECKING:
    import os

    from spf.computation import Computation


def from_c(
    source: str | os.PathLike[str],
    function: str | None = None,
    params: Iterable[str] | None = None,
    ufs: Mapping[str, Any] | None = None,
    shapes: Mapping[str, Any] | None = None,
) -> Computation:
    """The Computation of C function ``function`` (the only one when None) in ``source``
    (C text, a ``pathlib.Path``, or a ``str`` naming an existing ``.c``/``.h`` file).

    One statement per assignment, loop bounds and affine ``if`` conditions as domains,
    textual order and nesting as 2d+1 schedules; arrays are data spaces (``shapes`` gives
    the extents of pointers), integer arrays read in bounds or subscripts are UFs (``ufs``
    adds their ranges and properties: an :class:`spf.UF` or a dict of its fields), integer
    parameters and the macro sizes named in ``params`` are symbolic constants, local
    variables are locals. C as written is read too (docs/import_c.md): induction variables
    become closed forms, calls to functions of the source are inlined, pointer aliases
    resolve to the arrays they point into, ``switch`` is an ``if`` chain, symbolic steps
    are tested in the statements. What spf cannot represent raises ``ParseError`` with the
    line and column; arguments of the wrong type raise ``ArgumentError``.
    """
    return translate(source, function, params, ufs, shapes).comp


__all__ = ["Translation", "from_c", "translate"]

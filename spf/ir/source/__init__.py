"""Statement source: one basic block of C with ``$A$(i)`` data-space accesses
(docs/getting_started.md, docs/backends/c.md).

A statement's ``source`` is parsed with pycparser after a small lexical pass that maps each
``$name$`` to a reserved identifier; the C syntax tree is then checked and turned into a small
typed tree (the private ``_Expr``/``_Stmt`` classes of :mod:`.tree`) that knows which names are data
spaces, UFs, local temporaries, math functions or iterators/parameters. From that tree come the
accesses (with index expressions as text in spf's set syntax), C text for code generation
(:meth:`ParsedSource.render_c`) and a Python function for the reference interpreter
(:meth:`ParsedSource.to_python`).

>>> p = parse_source("$y$(i) += $A$(k) * $x$(col(k));", data_spaces={"y": 1, "A": 1, "x": 1},
...                  ufs={"col": 1})
>>> [(a.data_space, a.indices) for a in p.reads]
[('y', ('i',)), ('A', ('k',)), ('x', ('col(k)',))]
>>> from spf import cexpr as cx
>>> p.render_c(lambda n, ix: cx.Index(cx.Name(n), ix[0]), cx.Call)
'y[i] += A[k] * x[col(k)];'

Notes on index semantics: C's ``e / c`` and ``e % c`` in an index are reported in set syntax as
``floor(e/c)`` and ``e % c``; the two agree with C (which truncates) whenever ``e >= 0``.
"""

from __future__ import annotations

from spf.ir.source.model import Access, ParsedSource
from spf.ir.source.parse import parse_source

__all__ = ["Access", "ParsedSource", "parse_source"]

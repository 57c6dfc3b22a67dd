"""The C source of an IR statement, parsed as ``add_stmt`` parses it.

The IR keeps a statement's source as text; an analysis that needs its structure (the
reductions it performs, the conditions its accesses run under) parses it here with the
ranks of the IR's data spaces and the arities of its UFs, once per source and declarations.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, cast

from spf.ir import StmtIR
from spf.ir.parsed import seeded_source
from spf.ir.source import parse_source

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import ParsedStmt
    from spf.ir.source import ParsedSource


def source_tree(ir: ComputationIR, stmt: ParsedStmt) -> ParsedSource:
    """The parsed C source of ``stmt`` (as ``add_stmt`` parsed it; an operation has none)."""
    seeded = seeded_source(ir, stmt.name)
    if seeded is not None:
        return cast("ParsedSource", seeded)
    source = stmt.source if isinstance(stmt.record, StmtIR) else ""
    ranks = tuple((d.name, d.rank) for d in ir.data_spaces)
    arities = tuple((u.name, u.arity) for u in ir.ufs)
    return _parsed_source(source, ranks, arities, stmt.name)


@functools.lru_cache(maxsize=1024)
def _parsed_source(
    source: str,
    ranks: tuple[tuple[str, int | None], ...],
    arities: tuple[tuple[str, int], ...],
    name: str,
) -> ParsedSource:
    return parse_source(source, data_spaces=dict(ranks), ufs=dict(arities), stmt=name)

"""Two index tuples of one statement that never meet: the statement's domain with them equal
is empty under the computation's facts (:func:`spf.sets.facts.is_empty_under`, the proof the
dependence analysis makes). The row scalar's reads (:mod:`spf.codegen.apart`) and the
legality of partial sums over a solve's row (:mod:`spf.analysis.reductions`) ask it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from spf.errors import SpfError
from spf.ir.reading import iterator_names
from spf.sets.facts import is_empty_under

if TYPE_CHECKING:
    from spf.ir.reading import ParsedStmt
    from spf.sets.facts import Fact


def indices_apart(
    stmt: ParsedStmt, written: Sequence[str], read: Sequence[str], facts: Sequence[Fact]
) -> bool:
    """Whether ``written`` and ``read`` (index expressions in spf's set syntax over
    ``stmt``'s iterators) differ wherever ``stmt`` runs; False where the proof does not
    settle it (other lengths, text the set parser refuses)."""
    if len(written) != len(read):
        return False
    eqs = " && ".join(f"{a} = {b}" for a, b in zip(written, read, strict=True))
    its = ", ".join(iterator_names(stmt.domain))
    try:
        return is_empty_under(stmt.domain.intersect(f"{{[{its}] : {eqs}}}"), facts)
    except SpfError:
        return False

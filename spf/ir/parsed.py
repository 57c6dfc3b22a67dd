"""Sets and relations of a :class:`~spf.ir.model.ComputationIR`, parsed on demand.

The IR stores isl objects as text; a reader that needs one parses it here, with the IR's
UF declarations, and the result is remembered on the IR value (an equal IR built elsewhere
parses again: it is a different object, and parsing is cheap next to the analysis).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

from spf.ir.data import uf_fields
from spf.sets import UF, Relation, Set

if TYPE_CHECKING:
    from spf.ir.model import ComputationIR
    from spf.sets.facts import Fact

_CACHE = "_parsed_texts"
"""The attribute of an IR value that holds its parsed texts."""
_SOURCES = "_parsed_sources"
"""The attribute of an IR value that holds its statements' parsed C sources."""


def uf_decls(ir: ComputationIR) -> dict[str, UF]:
    """The UFs of ``ir`` as :class:`spf.UF` objects, in declaration order."""
    return {u.name: UF(**uf_fields(u)) for u in ir.ufs}


def seed(ir: ComputationIR, values: Iterable[Set | Relation]) -> None:
    """Remember ``values`` as the parsed forms of their texts on ``ir`` (the computation
    an IR is taken from hands over the sets it printed: nothing is parsed again)."""
    found: dict[tuple[str, str], Set | Relation] = ir.__dict__.setdefault(_CACHE, {})
    for value in values:
        kind = "relation" if isinstance(value, Relation) else "set"
        found.setdefault((kind, str(value)), value)


def seed_facts(ir: ComputationIR, facts: tuple[Fact, ...]) -> None:
    """Remember ``facts``, the parsed assumptions of ``ir`` (in order), as ``ir.facts``."""
    assert tuple(f.text for f in facts) == ir.assumptions
    ir.__dict__["facts"] = facts  # the value of the cached_property, as it would compute it


def seed_sources(ir: ComputationIR, sources: Mapping[str, object]) -> None:
    """Remember the parsed C sources of statements of ``ir`` by statement name (handed over
    by the computation it is taken from; the analysis parses a source only without it)."""
    ir.__dict__[_SOURCES] = dict(sources)


def from_computation(ir: ComputationIR) -> bool:
    """Whether ``ir`` was taken from a computation (``comp.ir``: the computation parsed and
    checked its statements and handed over their sources), or derived by spf from one."""
    return _SOURCES in ir.__dict__


def seeded_source(ir: ComputationIR, stmt: str) -> object | None:
    """The parsed source :func:`seed_sources` remembered for ``stmt``, or None."""
    found: dict[str, object] = ir.__dict__.get(_SOURCES, {})
    return found.get(stmt)


def share(source: ComputationIR, derived: ComputationIR) -> None:
    """Let ``derived``, an IR made from ``source`` with the same UF declarations and
    assumptions (``dataclasses.replace`` of other fields), remember what ``source`` has
    parsed: its sets and relations, UFs, facts and statement sources (by statement name:
    a statement whose source changed must be renamed)."""
    assert derived.ufs == source.ufs
    assert derived.assumptions == source.assumptions
    mine = derived.__dict__
    theirs = source.__dict__
    mine.setdefault(_CACHE, {}).update(theirs.get(_CACHE, {}))
    for name in ("uf_decls", "facts", _SOURCES):
        if name in theirs and name not in mine:
            mine[name] = theirs[name]


def parsed(ir: ComputationIR, text: str, kind: Literal["set", "relation"]) -> Set | Relation:
    """``text`` as a ``Set`` or ``Relation`` with the UFs of ``ir``, remembered on ``ir``."""
    found: dict[tuple[str, str], Set | Relation] | None = ir.__dict__.get(_CACHE)
    if found is None:
        found = {}
        ir.__dict__[_CACHE] = found  # a cache beside the frozen fields, as cached_property
    key = (kind, text)
    value = found.get(key)
    if value is None:
        value = Set(text, ufs=ir.uf_decls) if kind == "set" else Relation(text, ufs=ir.uf_decls)
        found[key] = value
    return value

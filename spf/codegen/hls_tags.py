"""Loop directives the HLS source would lose: a ``pipeline``/``unroll``/``vector`` tag on a
loop that code generation removes (isl scans a loop of one iteration, ``j = 2`` or a range
split off to one value, as that value and prints no loop). The pragma would go nowhere, so
the printer warns (:class:`spf.errors.DroppedTagWarning`), naming the statement, the loop
and the tag, instead of dropping it silently."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence

from spf.codegen.loop_ast import Alloc, Bind, Block, Call, For, If, Merge, Node
from spf.errors import DroppedTagWarning

_DIRECTIVES = {"pipeline": "PIPELINE", "unroll": "UNROLL", "vector": "UNROLL"}


def tags_around(body: Node) -> dict[str, set[str]]:
    """Statement name -> the tags of the loops printed around its calls."""
    out: dict[str, set[str]] = {}

    def visit(n: Node | None, tags: frozenset[str]) -> None:
        if n is None:
            return
        if isinstance(n, For):
            visit(n.body, tags | set(n.tags))
        elif isinstance(n, Call):
            out.setdefault(n.stmt, set()).update(tags)
        elif isinstance(n, Block):
            for item in n.items:
                visit(item, tags)
        elif isinstance(n, Bind | Alloc):
            visit(n.body, tags)
        elif isinstance(n, If):
            visit(n.then, tags)
            visit(n.orelse, tags)
        elif isinstance(n, Merge):
            for b in n.bodies():
                visit(b, tags)

    visit(body, frozenset())
    return out


def dropped_tags(
    stmts: Iterable[tuple[str, Mapping[str, tuple[str, ...]]]], body: Node
) -> list[tuple[str, str, str]]:
    """``(statement, loop, tag)`` of each HLS loop directive of ``stmts`` (name and tags by
    loop) that no printed loop around the statement carries."""
    around = tags_around(body)
    out: list[tuple[str, str, str]] = []
    for name, tags in stmts:
        if name not in around:
            continue  # no instance is printed (an empty domain): nothing runs to pipeline
        for loop, loop_tags in tags.items():
            for t in loop_tags:
                if t.split("(", 1)[0] in _DIRECTIVES and t not in around[name]:
                    out.append((name, loop, t))
    return out


def warn_dropped(dropped: Sequence[tuple[str, str, str]], stacklevel: int) -> None:
    """One :class:`DroppedTagWarning` per lost directive."""
    for name, loop, tag in dropped:
        pragma = _DIRECTIVES[tag.split("(", 1)[0]]
        warnings.warn(
            f"statement {name}: loop {loop} is tagged {tag}, but code generation removed "
            f"that loop (it runs a single iteration there), so the HLS source has no "
            f"#pragma HLS {pragma} for it; tag a loop that remains (comp.loop_structure() "
            f"and codegen('hls') show them) or drop the tag",
            DroppedTagWarning,
            stacklevel=stacklevel,
        )

"""isl's AST of one scan segment, remembered by the text of what it is built from.

:meth:`spf.codegen.scan.Scanner._segment` asks isl for the loops of each segment of a
schedule. The same build comes again and again: the inner segment under every leaf of an
outer one that holds the same statements, and the same nest in every computation that
shares it (a kernel under another name, with other data types, or beside other
statements). Over an eighth of the test suite, 2,813 of 4,619 builds, 12 of 22 s CPU, were
such repeats in their process. A build is a pure function of its context, its schedule
map, its options and the names of its iterators, so the AST isl made is kept (least
recently used first out) under their printed text: equal text is an equal build, and two
equal sets that print differently only cost one build more.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import islpy as isl

__all__ = ["MAXSIZE", "build_ast", "clear"]

MAXSIZE = 256
"""ASTs kept."""

_Key = tuple[str, str, str, tuple[str, ...]]
_BUILT: OrderedDict[_Key, isl.AstNode] = OrderedDict()
_LOCK = threading.Lock()


def build_ast(
    context: isl.Set,
    schedule: isl.UnionMap,
    iterators: Sequence[str],
    options: str | None = None,
) -> isl.AstNode:
    """``isl.AstBuild.from_context(context)`` with ``iterators`` named and ``options`` (the
    text of an option map, or None), scanning ``schedule``; the AST of an equal earlier
    build when there was one. An error (isl's, or the budget's) is raised, not kept."""
    key = (str(context), str(schedule), options or "", tuple(iterators))
    with _LOCK:
        node = _BUILT.get(key)
        if node is not None:
            _BUILT.move_to_end(key)
            return node
    build = isl.AstBuild.from_context(context)
    ids = isl.IdList.alloc(isl.DEFAULT_CONTEXT, len(iterators))
    for name in iterators:
        ids = ids.add(isl.Id(name))
    build = build.set_iterators(ids)
    if options:
        build = build.set_options(isl.UnionMap(options))
    node = build.node_from_schedule_map(schedule)
    with _LOCK:
        _BUILT[key] = node
        while len(_BUILT) > MAXSIZE:
            _BUILT.popitem(last=False)
    return node


def clear() -> None:
    """Forget every AST kept."""
    with _LOCK:
        _BUILT.clear()

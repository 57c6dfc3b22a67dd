"""One object for each distinct UF and set in what a remembered einsum pickles.

The phases of a sparse output are built as separate Computations, each with its own UF
declarations and sets: the signatures of ``spgemm_csr()``'s single pass and its bound hold
23 UF objects for 15 distinct ones, each with its domain and range, each set with a dict of
its UFs. Pickled as they are, every copy is unpickled again when a warm ``compile()`` loads
the entry (:mod:`spf.index_notation.remembered`): about 400 containers, which count towards
a collection of Python's garbage collector like any other. UFs and sets are immutable
values, so :func:`shared_values` copies the entry with each of them replaced by the first
one of equal content (their keys' texts, :func:`spf.runtime.key_text.key_text`): pickle
then writes each once and the load builds each once.
"""

from __future__ import annotations

import copy
import gc

from spf.runtime.key_text import key_text
from spf.runtime.warm import UnkeyableError
from spf.sets.set_like import _SetLike
from spf.sets.uf import UF

__all__ = ["shared_values"]

_LEAVES = (str, bytes, int, float, bool, type(None))


def shared_values(value: object) -> object:
    """A deep copy of ``value`` in which equal UFs and sets are one object (the module
    docstring); the UFs and sets themselves are not copied (they are immutable)."""
    first: dict[str, object] = {}
    memo: dict[int, object] = {}
    stack = [value]
    walked: set[int] = set()
    while stack:
        obj = stack.pop()
        if id(obj) in walked or isinstance(obj, _LEAVES):
            continue
        walked.add(id(obj))
        if isinstance(obj, (UF, _SetLike)):
            try:
                text = f"{type(obj).__qualname__}\0{key_text(obj)}"
            except UnkeyableError:
                text = f"id\0{id(obj)}"
            same = first.setdefault(text, obj)
            memo[id(obj)] = same
            if same is not obj:
                continue  # its parts are the first one's
        if type(obj).__module__.startswith("spf.") or type(obj) in (tuple, list, dict, set,
                                                                    frozenset):  # fmt: skip
            stack.extend(x for x in gc.get_referents(obj) if not isinstance(x, type))
    return copy.deepcopy(value, memo)

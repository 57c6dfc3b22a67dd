"""The distributed loop's iterator is a rank's *local* row number (API.md §19).

Each rank runs the computation on its own rows, numbered ``0 .. rows - 1``, with the loop's
extent ``N`` (and every row parameter) set to its count: ``y(i)`` is the rank's entry ``i``
of its block, ``rowptr(i)`` its row ``i``. That is right wherever ``i`` only names a row:
as the index of a distributed vector, an argument of an index array, or in the bounds
``0 <= i < N``. Anywhere else the local number would be read as the global one:
``y(i) = i * 1.0`` wrote 0..4 twice on 2 ranks of 10 rows, ``if (i == 0)`` ran on every
rank's first row and a domain ``1 <= i < N - 1`` left out every rank's first and last row.
:func:`check_row_uses` refuses those uses (CodegenError naming the statement).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from spf.errors import CodegenError

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from spf.distributed.statements import Statement

_WORD = re.compile(r"[A-Za-z_]\w*")


def _without_calls(text: str, names: Collection[str], accesses: bool = True) -> str:
    """``text`` with every call of one of ``names`` (index arrays) and, with ``accesses``,
    every data-space access ``$y$(...)`` taken out, arguments and all (parentheses
    matched)."""
    out: list[str] = []
    pos = 0
    calls = [f"(?<![\\w$]){re.escape(n)}\\s*\\(" for n in names]
    if accesses:
        calls.append(r"\$\w+\$\s*\(")
    if not calls:
        return text
    pattern = re.compile("|".join(calls))
    while (found := pattern.search(text, pos)) is not None:
        out.append(text[pos : found.start()])
        depth, at = 1, found.end()
        while at < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[at], 0)
            at += 1
        pos = at
    out.append(text[pos:])
    return " ".join(out)


def _clauses(domain: str) -> list[str]:
    """The constraints of every disjunct of a set's text (``{[i] : a && b} union ...``)."""
    found: list[str] = []
    for piece in domain.split(" union "):
        body = piece.split(":", 1)[1] if ":" in piece else ""
        found += [c.strip().rstrip("}").strip() for c in body.split("&&")]
    return [c for c in found if c]


def _allowed(clause: str, loop: str, bounds: Collection[str]) -> bool:
    """Whether a constraint on ``loop`` only bounds it to the rank's rows (``0 <= i``,
    ``i < N`` with ``N`` a row parameter) or defines another iterator from it
    (``i = 2*ib + ri``: that iterator is then a local row number too)."""
    text = " ".join(clause.split())
    if text == f"0 <= {loop}" or any(text == f"{loop} < {b}" for b in bounds):
        return True
    sides = text.split(" = ")
    return len(sides) == 2 and sum(loop in _WORD.findall(s) for s in sides) == 1


def _aliases(stmt: Statement, loop: str) -> set[str]:
    """``loop`` and the iterators its domain sets equal to it (DIA's ``i = p``)."""
    names = {loop}
    for clause in _clauses(str(stmt.domain)):
        sides = [s.strip() for s in " ".join(clause.split()).split(" = ")]
        if len(sides) == 2 and loop in sides:
            names |= {s for s in sides if s.isidentifier()}
    return names


def row_vars(s: Statement, loop: str, ufs: Collection[str]) -> set[str] | None:
    """The iterators of ``s`` tied to the rank's rows: ``loop``, and those a constraint
    relates to one of them or to an index array (``k`` of ``rowptr(i) <= k``, ``j`` of
    ``j = col(k)``, BDIA's ``b`` and ``r`` of ``i = 4*b + r``); None when the domain is not
    one conjunction (nothing is concluded)."""
    text = str(s.domain)
    if " union " in text or " or " in text or "exists" in text:
        return None
    clauses = [set(_WORD.findall(c)) for c in _clauses(text)]
    iterators, calls = set(s.domain.tuple_vars), set(ufs)
    found = {loop}
    grew = True
    while grew:
        grew = False
        for words in clauses:
            new = (words & iterators) - found
            if new and words & (found | calls):
                found |= new
                grew = True
    return found


def _check_counts(s: Statement, loop: str, bounds: Collection[str], ufs: Collection[str]) -> None:
    """A row parameter is the rank's count of rows: refused as a value in ``s`` and as a
    bound of an iterator that is not tied to the rows."""
    body = set(_WORD.findall(_without_calls(s.parsed.text, ufs, accesses=False)))
    used = sorted(body & set(bounds))
    if used:
        raise CodegenError(
            f"distribute_rows({loop!r}): {s.name} uses {used[0]} as a value "
            f"({s.source.strip()}); inside the distributed computation {used[0]} is each "
            "rank's own count of rows, not the global one: keep the global value in a scalar "
            "data space"
        )
    if loop not in s.domain.tuple_vars:
        return
    rows = row_vars(s, loop, ufs)
    iterators = set(s.domain.tuple_vars)
    for clause in _clauses(str(s.domain)):
        words = set(_WORD.findall(_without_calls(clause, ufs)))
        if rows is not None and words & set(bounds) and not words & iterators <= rows:
            raise CodegenError(
                f"distribute_rows({loop!r}): the domain of {s.name} bounds "
                f"{', '.join(sorted((words & iterators) - rows))} by {clause!r}; there "
                f"{' and '.join(sorted(words & set(bounds)))} is each rank's own count of "
                "rows, not the global one: bound it by another parameter"
            )


def check_row_uses(
    stmts: Iterable[Statement], loop: str, bounds: Collection[str], ufs: Collection[str]
) -> None:
    """CodegenError for a statement that reads its row number or a row parameter
    (``bounds``: the loop's extent, the owned vectors') as a value, or bounds the row
    otherwise than ``0 <= loop < N`` (or another iterator by a row parameter)."""
    for s in stmts:
        _check_counts(s, loop, bounds, ufs)
        if loop not in s.domain.tuple_vars:
            continue
        for clause in _clauses(str(s.domain)):
            outside = _without_calls(clause, ufs)
            if loop in _WORD.findall(outside) and not _allowed(clause, loop, bounds):
                raise CodegenError(
                    f"distribute_rows({loop!r}): the domain of {s.name} constrains {loop} by "
                    f"{clause!r}; each rank runs its own rows numbered from 0, so only the "
                    f"bounds 0 <= {loop} < {' or '.join(sorted(bounds)) or 'N'} select the "
                    "same rows as one process: keep those, and leave the rows out by the "
                    "values you give them"
                )
        body = _without_calls(s.parsed.text, ufs)
        used = _aliases(s, loop) & set(_WORD.findall(body))
        if used:
            name = sorted(used)[0]
            raise CodegenError(
                f"distribute_rows({loop!r}): {s.name} uses {name} as a value "
                f"({s.source.strip()}); in the distributed loop {name} is the rank's local "
                "row number (from 0 on every rank), not the global one: use it only to index "
                "distributed vectors and index arrays, and pass what depends on the global "
                "row as a distributed vector"
            )


__all__ = ["check_row_uses", "row_vars"]

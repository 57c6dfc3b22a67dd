"""Preconditions the C function's own accesses imply (docs/import_c.md). Declared extents are
only known to be non-negative (``double r[N]``: ``N >= 0``), but C code often reads an element
whenever it runs at all: ``y[0] = -r[0];`` needs ``N >= 1``, and fdtd-2d's ``ey[0][j]``
inside ``for t``, ``for j`` needs ``NX >= 1`` whenever ``TMAX >= 1`` and ``NY >= 1``. For an
access of a statement (no index array involved, not under a condition of the statement's
body) spf computes the parameter values that put it outside its array; when the statement also
runs in bounds for other values, the complement becomes an assumption (a call that breaks it
would make the C access outside its arrays, undefined behaviour), which the compiled kernel
checks when called. An access out of bounds whenever its statement runs is a bug in the C,
left to the bounds check of code generation to report."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import islpy as isl

from spf.computation.access import iterator_names
from spf.computation.source.guards import guarded_accesses
from spf.errors import SpfError
from spf.sets import Set
from spf.sets.facts import parameter_context

if TYPE_CHECKING:
    from spf.computation import Computation
    from spf.computation.statement import Stmt


def access_facts(comp: Computation) -> list[str]:
    """Facts over symbolic constants that the statements' accesses need (see above)."""
    from spf.analysis.bounds import analyze_bounds

    out: list[str] = []
    # only statements that code generation would refuse (its proofs are cached for it)
    refused = {v.stmt for v in analyze_bounds(comp).violations}
    if not refused:
        return out
    context = _context(comp)
    for stmt in comp.stmts:
        if stmt.name not in refused or stmt.domain.uf_calls:
            continue
        try:
            runs = stmt.domain.body_iset().params()
        except isl.Error:
            continue
        guarded = guarded_accesses(stmt.parsed)
        for acc in (*stmt.parsed.reads, *stmt.parsed.writes):
            shape = comp.data_spaces[acc.data_space].shape or ()
            if (acc.data_space, acc.indices) in guarded or len(shape) != len(acc.indices):
                continue
            bad = _outside(stmt, acc.indices, shape)
            if bad is None:
                continue
            ran = runs
            if context is not None:
                bad, ran = bad.intersect(context), runs.intersect(context)
            if bad.is_empty() or ran.is_subset(bad):
                continue  # in bounds, or out of bounds whenever it runs (a bug in the C)
            fact = _text(bad, context, {w for e in shape for w in re.findall(r"\w+", str(e))})
            if fact is not None and fact not in out:
                out.append(fact)
                allowed = bad.complement()
                context = allowed if context is None else context.intersect(allowed)
    return out


def _context(comp: Computation) -> isl.Set | None:
    """Non-negative symbolic extents, and the parameter facts already assumed."""
    context = parameter_context(comp.assumptions)
    for ds in comp.data_spaces.values():
        for e in ds.shape or ():
            if isinstance(e, str):
                try:
                    one = Set(f"{{[]: {e} >= 0}}").body_iset().params()
                except (SpfError, isl.Error):
                    continue
                context = one if context is None else context.intersect(one)
    return context


def _outside(stmt: Stmt, indices: tuple[str, ...], shape: tuple[object, ...]) -> isl.Set | None:
    """The parameter values for which some instance of ``stmt`` indexes outside ``shape``;
    None when that cannot be computed exactly (index arrays, non-affine extents)."""
    its = ", ".join(iterator_names(stmt.domain))
    bad: isl.Set | None = None
    for index, extent in zip(indices, shape, strict=True):
        if "(" in index and not index.startswith("floor"):
            return None  # an index array read: the proofs and run-time checks handle those
        for side in (f"{index} < 0", f"{index} >= {extent}"):
            try:
                part = stmt.domain.intersect(Set(f"{{[{its}]: {side}}}"))
                one = part.body_iset().params()
            except (SpfError, isl.Error):
                return None
            bad = one if bad is None else bad.union(one)
    return None if bad is None else bad.coalesce()


_NEGATED = {"<=": ">", "<": ">=", ">=": "<", ">": "<="}


def _text(bad: isl.Set, context: isl.Set | None, extents: set[str]) -> str | None:
    """Assumption text that excludes ``bad`` (simplified within ``context``): ``premise =>
    conclusion`` with the conclusion on an extent of the access (``TMAX > 0 && NY > 0 => NX >
    0``) where ``bad`` is one conjunction, else the complement as a disjunction."""
    shown = bad.gist(context) if context is not None else bad
    pieces = shown.coalesce().get_basic_sets()
    conj = _conjuncts(pieces[0]) if len(pieces) == 1 else None
    picks = []
    for k, c in enumerate(conj or []):
        m = re.fullmatch(r"(.+?) (<=|<|>=|>|=) (.+)", c)
        if m is not None and set(re.findall(r"[A-Za-z_]\w*", c)) & extents:
            picks.append((m[2] not in ("=", "<=", "<"), k, m))  # "the array is empty" first
    for _, k, m in sorted(picks, key=lambda p: (p[0], p[1])):
        conclusion = _negation(m[1], m[2], m[3], context)
        if conclusion is not None and conj is not None:
            premise = " && ".join(conj[:k] + conj[k + 1 :])
            return f"{premise} => {conclusion}" if premise else conclusion
    allowed = bad.complement()
    allowed = (allowed.gist(context) if context is not None else allowed).coalesce()
    parts = [_conjuncts(p) for p in allowed.get_basic_sets()]
    if not parts or any(p is None for p in parts):
        return None
    texts = [" && ".join(p or []) for p in parts]
    return texts[0] if len(texts) == 1 else " || ".join(f"({t})" for t in texts)


def _negation(left: str, op: str, right: str, context: isl.Set | None) -> str | None:
    """``not (left op right)``; an equality becomes the one strict side ``context`` allows."""
    if op != "=":
        return f"{left} {_NEGATED[op]} {right}"
    for side, other in ((">", "<"), ("<", ">")):
        try:
            below = Set(f"{{[]: {left} {other} {right}}}").body_iset().params()
        except (SpfError, isl.Error):
            return None
        if context is not None and below.intersect(context).is_empty():
            return f"{left} {side} {right}"
    return None


def _conjuncts(piece: isl.BasicSet) -> list[str] | None:
    """The constraints of a parameter conjunction as spf text (None: not plain)."""
    text = str(piece)
    body = text[text.find(":") + 1 : text.rfind("}")].strip() if ":" in text else ""
    if not body or re.search(r"exists|mod|floor|\[", body):
        return None
    return [p.strip() for p in body.split(" and ")]

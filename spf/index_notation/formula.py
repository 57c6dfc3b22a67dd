"""A parsed formula bound to its formats, extents and loop order, and its products lowered
to iteration domains.

* :func:`bind` checks the formula against the formats (every tensor keeps its number of
  indices, a format has one coordinate per index, the output is not read) and names each
  index's extent (``i`` -> ``I`` unless ``sizes`` says otherwise).
* The loop order puts every index after the indices a sparse operand must *locate* before
  it can *iterate* it (a CSR row before its columns; :meth:`SparseUse.located_before`),
  then prefers indices of sparse operands, in order of appearance (output first), and
  dense-only indices last (innermost, where they vectorize). No order exists when two
  operands disagree (``A(i,j) * B(j,i)``, both CSR): :class:`ArgumentError`.
* :func:`lower` turns one product into its loops and domain: an index iterated by one
  sparse operand is scanned through that operand's storage (its positions, then the index
  as the UF value ``A_col(A_k)``); the other operands locate it; an index no operand
  iterates is a dense loop ``0 <= v < V``; an index two operands iterate is an
  intersection merge over their positions, the index replaced by the first one's
  coordinate (:mod:`spf.index_notation.coiterate`); it must be the product's innermost.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass

from spf.clang import isl_reserved
from spf.errors import ArgumentError, CodegenError
from spf.formats.format import Format
from spf.index_notation.coiterate import Merge, intersect
from spf.index_notation.expand import Monomial, children, expand
from spf.index_notation.operands import SparseUse, rename
from spf.index_notation.parse import Access, Assignment, Expr, parse
from spf.index_notation.repeated import refuse_repeated_unordered

__all__ = ["Formula", "Term", "atoms", "bind", "lower"]


@dataclass(frozen=True)
class Formula:
    """A bound formula (see the module docstring)."""

    text: str
    assignment: Assignment
    formats: Mapping[str, Format]
    orders: Mapping[str, int]
    tensors: tuple[str, ...]
    extents: Mapping[str, str]
    monomials: tuple[Monomial, ...]
    order: tuple[str, ...]
    index_dtype: str

    @property
    def output(self) -> Access:
        return self.assignment.output

    def out_format(self) -> Format | None:
        return self.formats.get(self.output.name)

    def where(self) -> str:
        return f"einsum {self.text!r}"


@dataclass(frozen=True)
class Term:
    """One product lowered: ``loops`` (outer first), ``domain`` (set text), ``value`` (the
    C expression of the product), the sparse ``uses`` it reads, the intersection ``merge``
    of its two innermost loops (if any)."""

    monomial: Monomial
    uses: tuple[SparseUse, ...]
    loops: tuple[str, ...]
    domain: str
    value: str
    merge: Merge | None = None

    def at(self, index: str) -> str:
        """The C expression of ``index`` in this product (a merged index is its key)."""
        return self.merge.key if self.merge is not None and self.merge.index == index else index


def _accesses(node: Expr) -> list[Access]:
    if isinstance(node, Access):
        return [node]
    return [a for k in children(node) for a in _accesses(k)]


def _orders(a: Assignment) -> tuple[dict[str, int], tuple[str, ...]]:
    orders: dict[str, int] = {}
    first: dict[str, Access] = {}
    out = a.output
    for acc in (out, *_accesses(a.rhs)):
        if acc.name in orders and orders[acc.name] != len(acc.indices):
            raise ArgumentError(
                f"einsum {a.text!r}: {acc.name} has {len(first[acc.name].indices)} "
                f"index(es) at {first[acc.name].span[0]} and {len(acc.indices)} at "
                f"{acc.span[0]}; a tensor keeps its number of dimensions"
            )
        orders.setdefault(acc.name, len(acc.indices))
        first.setdefault(acc.name, acc)
    if out.name in {acc.name for acc in _accesses(a.rhs)}:
        raise ArgumentError(
            f"einsum {a.text!r}: the output {out.name} is also read on the right; einsum "
            f"writes a fresh output: name it differently (and use '+=' to accumulate)"
        )
    return orders, tuple(first)


def _check_formats(
    text: str, formats: Mapping[str, object], orders: Mapping[str, int], out: Access
) -> dict[str, Format]:
    checked: dict[str, Format] = {}
    for name, fmt in formats.items():
        if name not in orders:
            raise ArgumentError(
                f"einsum {text!r}: a format is given for {name}, which the formula does not "
                f"name; its tensors are {', '.join(orders)}"
            )
        if not isinstance(fmt, Format):
            raise ArgumentError(
                f"einsum {text!r}: the format of {name} must be an spf.Format "
                f"(spf.formats.CSR, spf.formats.CSF(3), ...), got {fmt!r}"
            )
        if len(fmt.coords) != orders[name]:
            raise ArgumentError(
                f"einsum {text!r}: {name} has {orders[name]} index(es) but its format "
                f"{fmt.name} has {len(fmt.coords)} coordinate(s) [{', '.join(fmt.coords)}]"
            )
        checked[name] = fmt
    if out.name in checked and not out.indices:
        raise ArgumentError(f"einsum {text!r}: a scalar output is dense; drop its format")
    return checked


def _extents(
    text: str, indices: list[str], tensors: tuple[str, ...], sizes: Mapping[str, object] | None
) -> dict[str, str]:
    given = dict(sizes or {})
    unknown = sorted(set(given) - set(indices))
    if unknown:
        raise ArgumentError(
            f"einsum {text!r}: sizes names {', '.join(unknown)}, not indices of the formula "
            f"({', '.join(indices)})"
        )
    extents: dict[str, str] = {}
    for v in indices:
        if isl_reserved(v) or v.startswith("__"):
            raise ArgumentError(
                f"einsum {text!r}: index {v} is reserved by spf's set notation (its words, "
                "read in any case, and names starting with '__'); rename the index"
            )
        e = given.get(v, v.upper())
        if not isinstance(e, str) or not e.isidentifier():
            raise ArgumentError(
                f"einsum {text!r}: the extent of index {v} must be a size name, got {e!r}"
            )
        if isl_reserved(e) or e.startswith("__"):
            raise ArgumentError(
                f"einsum {text!r}: index {v}'s extent {e} is reserved by spf's set notation "
                f"(its words, read in any case, and names starting with '__'); name it "
                f"with sizes={{{v!r}: ...}}"
            )
        clash = e in tensors or e in indices or e in extents.values()
        if clash or ("_" in e and e.split("_", 1)[0] in tensors):
            raise ArgumentError(
                f"einsum {text!r}: index {v}'s extent {e} clashes with a tensor, an index or "
                f"another extent; name it with sizes={{{v!r}: ...}}"
            )
        extents[v] = e
    for t in tensors:
        if t in indices:
            raise ArgumentError(f"einsum {text!r}: {t} names both a tensor and an index")
    return extents


def bind(
    text: str,
    formats: Mapping[str, object],
    sizes: Mapping[str, object] | None = None,
    index_dtype: str = "int32",
) -> Formula:
    """Parse ``text`` and bind it (see the module docstring)."""
    a = parse(text)
    orders, tensors = _orders(a)
    checked = _check_formats(text, formats, orders, a.output)
    indices = list(
        dict.fromkeys([*a.output.indices, *(v for x in _accesses(a.rhs) for v in x.indices)])
    )
    extents = _extents(text, indices, tensors, sizes)
    monomials = tuple(expand(a))
    refuse_repeated_unordered(text, checked, monomials)
    if a.accumulate and not monomials:
        raise ArgumentError(
            f"einsum {text!r}: the right-hand side is zero (its products cancel or are "
            f"multiplied by 0), so '+=' would leave {a.output.name} as it is: there is nothing "
            f"to compute; drop the call (or write '=' to zero {a.output.name})"
        )
    f = Formula(text, a, checked, orders, tensors, extents, monomials, (), index_dtype)
    first = _outer(f)
    order = _order(f, indices, first)
    bound = Formula(text, a, checked, orders, tensors, extents, monomials, order, index_dtype)
    from spf.index_notation.names import check_operands

    check_operands(bound)
    return bound


def _outer(f: Formula) -> str | None:
    """The index a sparse output is built along (its rows), which must be outermost."""
    fmt = f.out_format()
    if fmt is None:
        return None
    from spf.index_notation.sparse_output import compressed_output

    return compressed_output(f, fmt).outer


def uses_of(f: Formula, m: Monomial) -> list[SparseUse]:
    """The sparse uses of monomial ``m`` (equal accesses share one use)."""
    uses: dict[tuple[str, tuple[str, ...]], SparseUse] = {}
    count: dict[str, int] = {}
    prefixes = set(f.tensors)  # a second use of A scans A2_k unless a tensor is named A2
    for acc in m.factors:
        fmt = f.formats.get(acc.name)
        key = (acc.name, acc.indices)
        if fmt is None or key in uses:
            continue
        count[acc.name] = count.get(acc.name, 0) + 1
        prefix, n = acc.name, count[acc.name]
        if n > 1:
            while f"{acc.name}{n}" in prefixes:
                n += 1
            prefix = f"{acc.name}{n}"
            prefixes.add(prefix)
        uses[key] = SparseUse.of(acc.name, fmt, acc.indices, f.extents, prefix)
    return list(uses.values())


def _constraints(
    f: Formula, indices: list[str], first: str | None
) -> tuple[dict[str, set[str]], dict[tuple[str, str], str], set[str]]:
    """For each index the indices that must come before it, why, and the indices of
    sparse operands."""
    before: dict[str, set[str]] = {v: set() for v in indices}
    why: dict[tuple[str, str], str] = {}
    sparse_indices: set[str] = set()
    for m in f.monomials:
        for u in uses_of(f, m):
            sparse_indices |= set(u.indices)
            for v in (v for v in u.indices if u.iterates(v)):
                for w in u.located_before(v):
                    before[v].add(w)
                    why[(w, v)] = f"{u.operand} ({u.fmt.name}) iterates {v} inside {w}"
    if first is not None:
        for v in indices:
            if v != first:
                before[v].add(first)
                why.setdefault((first, v), f"the output {f.output.name} is built along {first}")
    return before, why, sparse_indices


def _order(f: Formula, indices: list[str], first: str | None) -> tuple[str, ...]:
    before, why, sparse_indices = _constraints(f, indices, first)
    rank = {v: (0 if v in sparse_indices else 1, n) for n, v in enumerate(indices)}
    ready = [(rank[v], v) for v in indices if not before[v]]
    heapq.heapify(ready)
    done: list[str] = []
    while ready:
        _, v = heapq.heappop(ready)
        done.append(v)
        for w in indices:
            if v in before[w]:
                before[w].discard(v)
                if not before[w]:
                    heapq.heappush(ready, (rank[w], w))
    if len(done) < len(indices):
        stuck = sorted((a, b) for b in indices for a in before[b])
        reasons = "; ".join(dict.fromkeys(why[p] for p in stuck if p in why))
        raise ArgumentError(
            f"einsum {f.text!r}: no loop order scans every sparse operand: {reasons}. Give one "
            "of them a format that iterates its indices in the other order (CSC instead of "
            "CSR, or convert it)"
        )
    return tuple(done)


def _value(m: Monomial, uses: list[SparseUse]) -> str:
    parts: list[str] = []
    for acc in m.factors:
        use = next((u for u in uses if u.operand == acc.name and u.indices == acc.indices), None)
        if use is not None:
            parts.append(use.value)
        elif acc.indices:
            parts.append(f"${acc.name}$({', '.join(acc.indices)})")
        else:
            parts.append(f"${acc.name}$")
    if m.coef != 1.0 or not parts:
        parts.insert(0, repr(m.coef))
    return " * ".join(parts)


def atoms(body: str, subst: Mapping[str, str]) -> list[str]:
    """The conjuncts of ``body`` with ``subst`` applied, tautologies (``x = x``) dropped."""
    out = []
    for atom in (a.strip() for a in body.split("&&")):
        atom = rename(atom, subst)
        sides = [x.strip() for x in atom.split("=")]
        if not (len(sides) == 2 and sides[0] == sides[1]):
            out.append(atom)
    return out


def lower(f: Formula, m: Monomial) -> Term:
    """The loops, domain and value of monomial ``m`` (see the module docstring)."""
    uses = uses_of(f, m)
    wanted = set(f.output.indices) | m.indices() | m.sums
    loops: list[str] = []
    conj: list[str] = []
    merge: Merge | None = None
    for v in (v for v in f.order if v in wanted):
        iterating = [u for u in uses if v in u.indices and u.iterates(v)]
        if merge is not None:
            raise CodegenError(
                f"einsum {f.text!r}: {merge.operands[0]} and {merge.operands[1]} are merged "
                f"along {merge.index}, which must be the innermost index of the product "
                f"{m}, but {v} comes after it; co-iteration merges the innermost loops only. "
                "Split the formula into several einsum calls"
            )
        if len(iterating) > 1:
            merge = intersect(f.text, v, iterating, loops)
            loops += merge.loops
            continue
        if iterating:
            u = iterating[0]
            loops += [x for x in u.closure(v) if x not in loops and x not in f.extents]
            loops.append(v)
            continue
        loops.append(v)
        conj.append(f"0 <= {v} < {f.extents[v]}")
    subst = {merge.index: merge.key} if merge is not None else {}
    for u in uses:
        loops += [x for x in u.loops if x not in loops and x not in subst]
        conj += [*atoms(u.body, subst), *u.open_bounds]
    body = " && ".join(a for a in conj if a)
    domain = f"{{[{', '.join(loops)}]: {body}}}" if body else f"{{[{', '.join(loops)}]}}"
    return Term(m, tuple(uses), tuple(loops), domain, rename(_value(m, uses), subst), merge)

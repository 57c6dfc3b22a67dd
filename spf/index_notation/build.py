"""The Computation of a formula with a dense (or scalar) output.

One statement zeroes the output (for ``=``; ``+=`` keeps it), then one statement per
product accumulates it, each in its own loop nest over the product's domain
(:func:`spf.index_notation.formula.lower`); the zeroing shares the first product's row
loop where that loop is the output's first index over its whole extent (SpMV below: ``s0``
then ``s1`` in each row ``i``, :func:`_zeroed_in_rows`)::

    y(i) = A(i,j) * x(j), A in CSR
      s0: y(i) = 0                      {[i]: 0 <= i < I}
      s1: y(i) += A(A_k) * x(j)         {[i, A_k, j]: 0 <= i < I && A_rowptr(i) <= A_k <
                                          A_rowptr(i+1) && j = A_col(A_k)}

A product of two sparse operands that share an index is one statement over both
operands' positions, scanned as an intersection merge (:mod:`spf.index_notation.coiterate`).

Data spaces: the output, then each tensor in order of appearance (a sparse operand ``A``
is its value array ``A``, its index arrays the UFs ``A_rowptr``, ``A_col``); parameters: the
extents (``I``, ``J``) and the operands' sizes (``A_NNZ``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from spf.computation import Computation, Stmt
from spf.index_notation.formula import Formula, Term, lower
from spf.index_notation.operands import rename, size_names

if TYPE_CHECKING:
    from spf.computation.products import CompiledKernel
    from spf.index_notation.kernel import EinsumKernel

__all__ = ["Einsum", "declare_operands", "schedule", "sparse_aliases"]


def schedule(top: int, loops: tuple[str, ...], inner: int = 0) -> str:
    """The 2d+1 schedule ``[top, v1, 0, v2, ..., 0, vn, inner]`` of ``loops``."""
    if not loops:
        return f"{{[] -> [{top}]}}"
    sched = ", ".join(f"{top}, {v}" if n == 0 else f"0, {v}" for n, v in enumerate(loops))
    return f"{{[{', '.join(loops)}] -> [{sched}, {inner}]}}"


def sparse_aliases(f: Formula) -> tuple[tuple[str, str], ...]:
    """``(A_N, I)``: the extent each sparse operand's prefixed size stands for (what
    ``spf.sparse.csr_args(A, prefix="A_")`` passes), for every access of the operand: one
    read as ``A(i,k)`` and ``A(k,j)`` gives ``(A_N, I)``, ``(A_N, K)``, ``(A_M, K)`` and
    ``(A_M, J)``, so its sizes must agree with both (a square ``A``)."""
    out: dict[tuple[str, str], None] = {}
    for name, fmt in f.formats.items():
        if name == f.output.name:
            continue
        for indices in dict.fromkeys(a.indices for a in _all_accesses(f) if a.name == name):
            for size, new in size_names(name, fmt, indices, f.extents).items():
                if new in f.extents.values():
                    out[(f"{name}_{size}", new)] = None
    return tuple(out)


def _zeroed_in_rows(f: Formula, terms: tuple[Term, ...]) -> bool:
    """Whether the output of ``f`` (``=``) is zeroed row by row inside the first product's
    outermost loop: that loop is the output's first index, a dense loop over its whole
    extent (no sparse operand iterates it: a CSR row). Each row is then zeroed just before
    it is summed into (SpMV's ``y(i)`` starts its row's sum at 0 in a register) instead of
    in a pass of its own over the whole output before the products (one more pass over
    ``y``'s memory: 1.2x the time of the SpMV one writes by hand on a 1M-row matrix)."""
    out = f.output
    if f.assignment.accumulate or not out.indices or not terms:
        return False
    first = terms[0]
    return first.loops[:1] == out.indices[:1] and not any(
        u.iterates(out.indices[0]) for u in first.uses
    )


def _all_accesses(f: Formula) -> list[Any]:
    from spf.index_notation.formula import _accesses

    return [f.output, *_accesses(f.assignment.rhs)]


def declare_operands(
    comp: Computation, f: Formula, *, output: bool = True, ordered: frozenset[str] = frozenset()
) -> None:
    """The output (when ``output``) and every operand's data spaces and UFs, and the facts
    (``assume``: sorted coordinates) of the operands in ``ordered``. A Computation users
    schedule declares them all (they prove, e.g., that the slices of a CSF tensor write
    distinct rows); the phases of a sparse output only those whose order the generated
    code relies on: the others would cost analysis time and a check per call, for results
    that do not depend on them."""
    seen: set[str] = set()
    for acc in _all_accesses(f):
        if acc.name in seen or (acc.name == f.output.name and not output):
            continue
        seen.add(acc.name)
        fmt = f.formats.get(acc.name)
        if fmt is None or acc.name == f.output.name:
            if acc.name == f.output.name and fmt is not None:
                continue
            comp.add_data_space(acc.name, "double", shape=tuple(f.extents[v] for v in acc.indices))
            continue
        names = dict(size_names(acc.name, fmt, acc.indices, f.extents))
        names.update({uf: f"{acc.name}_{uf}" for uf in fmt.ufs})
        comp.add_data_space(
            acc.name, "double", shape=tuple(rename(e, names) for e in fmt.value_shape)
        )
        for uf in fmt.ufs.values():
            dom = uf.domain if uf.domain is not None else fmt._pointer_domain(uf.name)
            comp.declare_uf(
                names[uf.name],
                arity=uf.arity,
                domain=None if dom is None else rename(str(dom), names),
                range=None if uf.range is None else rename(str(uf.range), names),
                monotonic=uf.monotonic,
                dtype=f.index_dtype,
            )
        for fact in fmt.assume if acc.name in ordered else ():
            taken = {*f.tensors, *f.extents.values(), *names.values()}
            comp.assume(
                rename(fact, {**_bound_apart(fact, taken), **{u: names[u] for u in fmt.ufs}})
            )
    for same in _shared_extents(f):
        comp.assume(same)  # each call refuses operands whose shapes differ (resolve_extents)


_FORALL = re.compile(r"\s*forall\s+([\w\s,]+):")


def _bound_apart(fact: str, taken: set[str]) -> dict[str, str]:
    """New names for the quantified variables of ``fact`` (``forall i, k1, k2: ...``, CSR's
    order) that a tensor or size of the formula bears (a dense operand ``k1``): the fact
    would be refused, its variable being also a data space or constant."""
    m = _FORALL.match(fact)
    if m is None:
        return {}
    bound = [v.strip() for v in m.group(1).split(",")]
    out: dict[str, str] = {}
    for v in bound:
        if v in taken:
            new = v
            while new in taken or new in bound or new in out.values():
                new += "_"
            out[v] = new
    return out


def _shared_extents(f: Formula) -> list[str]:
    """``"I = J"`` for two extents that index one dimension of a dense operand read twice
    (``s = D(i,j) * D(j,i)``): the call's shapes make them equal, and saying so spares the
    analysis a precondition (and its warning) on the second access."""
    out: dict[str, None] = {}
    for name in f.tensors:
        if name in f.formats:
            continue
        accesses = {tuple(a.indices) for a in _all_accesses(f) if a.name == name}
        for dims in zip(*accesses, strict=True):
            extents = sorted({f.extents[v] for v in dims})
            for other in extents[1:]:
                out[f"{extents[0]} = {other}"] = None
    return list(out)


class Einsum(Computation):
    """A formula's Computation (dense or scalar output); :meth:`compile` returns an
    :class:`~spf.index_notation.kernel.EinsumKernel`, which also takes the prefixed sizes of the
    sparse operands (``A_N``, ``A_M`` from ``spf.sparse.csr_args(A, prefix="A_")``).

    Its statements are built on first use (printing, scheduling, analysing or compiling
    it): a compile of one never used loads a kernel compiled before for the same formula
    without building them (:mod:`spf.index_notation.remembered`)."""

    formula: Formula
    terms: tuple[Term, ...]

    @classmethod
    def build(cls, f: Formula, name: str) -> Einsum:
        """The Computation of ``f`` named ``name``, its statements built when first used."""
        comp = cls.__new__(cls)
        terms = tuple(lower(f, m) for m in f.monomials)  # refuses what cannot be built, now
        comp.__dict__.update(formula=f, terms=terms, _name=name, _pending=True)
        return comp

    def __getattr__(self, attr: str) -> Any:
        # only reached for what is not set yet: the Computation's state before it is built;
        # a protocol's look-up (copy's ``__deepcopy__``) is no use of it
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        if self.__dict__.pop("_pending", False):
            self._build()
            return getattr(self, attr)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def _build(self) -> None:
        f = self.formula
        Computation.__init__(self, self._name)
        declare_operands(self, f, ordered=frozenset(f.formats))
        out = f.output
        top = 0
        lhs = f"${out.name}$({', '.join(out.indices)})" if out.indices else f"${out.name}$"
        rows = _zeroed_in_rows(f, self.terms)
        if not f.assignment.accumulate:
            loops = out.indices
            bounds = " && ".join(f"0 <= {v} < {f.extents[v]}" for v in loops)
            domain = f"{{[{', '.join(loops)}]: {bounds}}}" if loops else "{[]}"
            self.add_stmt(Stmt(f"{lhs} = 0;", domain, schedule(top, loops)))
            top += not rows
        for n, term in enumerate(self.terms):
            at = ", ".join(term.at(v) for v in out.indices)
            into = f"${out.name}$({at})" if out.indices else lhs
            where = schedule(top, term.loops)
            if rows and n == 0:  # inside the zeroing statement's row loop, after it
                where = where.replace(
                    f"[{top}, {term.loops[0]}, 0", f"[{top}, {term.loops[0]}, 1", 1
                )
            stmt = Stmt(f"{into} += {term.value};", term.domain, where)
            self.add_stmt(stmt)
            if term.merge is not None:
                stmt.coiterate(*term.merge.loops)
            top += 1

    def compile(  # type: ignore[override]
        self, target: str = "c", name: str | None = None, check: bool = True, **options: Any
    ) -> EinsumKernel:
        """Generate, build (cached) and load the kernel; see :class:`EinsumKernel`."""
        from spf.index_notation.kernel import EinsumKernel
        from spf.index_notation.remembered import load_or_compile

        def compile_() -> list[CompiledKernel]:
            return [super(Einsum, self).compile(target, name, check, **options)]

        untouched = "_pending" in self.__dict__
        (kernel,) = load_or_compile(
            self.formula, ((self._name,), False), (target, name, check), options, compile_,
            remember=untouched,
        )  # fmt: skip
        return EinsumKernel(self.formula, kernel)

    def interpret(self, *positional: object, **arrays: Any) -> None:
        """:meth:`Computation.interpret`, taking the operands as the compiled kernel takes
        them: the sparse operands' prefixed sizes (``A_N`` from ``csr_args(A, prefix="A_")``)
        and the extents a dense operand's shape gives."""
        from spf.index_notation.kernel import resolve_extents

        super().interpret(*positional, **resolve_extents(self.formula, arrays))

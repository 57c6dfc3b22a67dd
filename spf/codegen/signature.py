"""The generated function's signature (docs/backends/c.md), shared by printers and runtimes.

Order: symbolic constants (``int64_t``, sorted), then UF arrays (``const int32_t*`` or
``const int64_t*``, sorted), then data spaces in declaration order (``const`` when only
read). Data-space extents are parameter expressions; the runtime checks arrays against them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from spf.clang import NUMPY_OF_C
from spf.errors import CodegenError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    import islpy as isl

    from spf.analysis.preconditions import Precondition
    from spf.sets import UF, Set
    from spf.sets.facts import Fact

ArgKind = Literal["param", "uf", "data"]


@dataclass(frozen=True, kw_only=True)
class Arg:
    """One argument of the generated function."""

    name: str
    kind: ArgKind
    ctype: str
    """Element C type (``double``; ``int32_t`` for a UF; ``int64_t`` for a parameter)."""
    const: bool = False
    """Only read by the function (``const`` pointer)."""
    shape: tuple[int | str, ...] | None = None
    """Extents of a data space as ints or parameter expressions (None: unknown)."""
    rank: int | None = None
    uf: UF | None = None
    """The declaration of a UF argument (its facts are checked with ``check=True``)."""
    inner: tuple[str, ...] = ()
    """Extents of the axes after the first of a multi-argument UF (a row-major index array
    ``g[N][W]`` read as ``g(i, j)``), as parameter expressions; empty for one argument."""

    @property
    def dtype(self) -> str:
        """numpy dtype name of the elements (or of the parameter)."""
        return NUMPY_OF_C[self.ctype]

    def c_decl(self, restrict: bool = True) -> str:
        """The C parameter declaration (``const double *restrict x``; without ``restrict``
        for cffi, which does not take it)."""
        if self.kind == "param":
            return f"{self.ctype} {self.name}"
        const = "const " if self.const else ""
        return f"{const}{self.ctype} *{'restrict ' if restrict else ''}{self.name}"


@dataclass(frozen=True, kw_only=True)
class Signature:
    """Name and arguments of the generated function."""

    function: str
    args: tuple[Arg, ...]
    facts: tuple[Fact, ...] = ()
    """Facts a call with ``check=True`` verifies on the arguments (``assume``; any further
    obligation of the form ``forall vars: premise => conclusion`` may be added)."""
    fact_labels: tuple[str, ...] = ()
    """How messages name each fact (one per fact; empty: ``the assumption '<text>'``)."""
    preconditions: tuple[Precondition, ...] = ()
    """Parameter conditions keeping accesses in bounds that a call with ``check=True``
    verifies (``kernel.preconditions``; spf.runtime.preconditions)."""

    def c_prototype(self, restrict: bool = True) -> str:
        """``void spmv(int64_t N, ..., double *restrict y)`` (``restrict``: see
        :meth:`Arg.c_decl`)."""
        params = ", ".join(a.c_decl(restrict) for a in self.args) or "void"
        return f"void {self.function}({params})"

    def arg(self, name: str) -> Arg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)


def check_statement_names(stmts: Iterable[str], others: Mapping[str, Iterable[str]]) -> None:
    """Refuse a statement whose name is also a data space, UF, buffer or symbolic constant:
    the generated code defines a macro for the statement and one (or a C parameter) for the
    other. ``others`` maps a kind (``"data space"``) to its names."""
    for stmt in stmts:
        for kind, names in others.items():
            if stmt in names:
                raise CodegenError(
                    f"statement {stmt} has the name of a {kind}; the generated code would "
                    f"define {stmt} twice: name the statement otherwise "
                    f"(Stmt(..., name=...))"
                )
            for macro in (f"{stmt}_target", f"{stmt}_value"):  # its reduction's macros
                if macro in names:
                    raise CodegenError(
                        f"{kind} {macro} has the name of a macro the generated code defines "
                        f"for statement {stmt} ({macro}(...)); name the statement (Stmt(..., "
                        f"name=...)) or the {kind} otherwise"
                    )


def uf_inner_extents(uf: UF) -> tuple[str, ...]:
    """The extents of ``uf``'s axes after the first (``("W",)`` for a 2-argument UF with
    domain ``{[i, j]: 0 <= i < N && 0 <= j < W}``): the generated code linearizes
    ``g(i, j)`` to ``g[i * W + j]`` and the kernel checks the array's trailing extents.
    Each is one more than the largest value of that index, which must be an affine
    expression of the symbolic constants; ``CodegenError`` otherwise.

    >>> from spf.sets import UF
    >>> box = "{[i, j, k]: 0 <= i < N && 0 <= j < 2W && 0 <= k <= 3}"
    >>> uf_inner_extents(UF("g", arity=3, domain=box))
    ('2*W', '4')
    """
    if uf.arity == 1:
        return ()
    example = "domain='{[i, j]: 0 <= i < N && 0 <= j < W}'"
    what = (
        f"UF {uf.name!r} of arity {uf.arity} is read as a row-major {uf.arity}-d array "
        "(g(i, j) is g[i * W + j])"
    )
    if uf.domain is None:
        raise CodegenError(f"{what}, which needs its extents: declare its domain, e.g. {example}")
    iset = uf.domain.body_iset()
    out: list[str] = []
    for k in range(1, uf.arity):
        text = _axis_extent(iset, k)
        if text is None:
            raise CodegenError(
                f"{what}; its declared domain {uf.domain} gives index {k} no upper bound that "
                f"is one affine expression of the symbolic constants: declare it, e.g. {example}"
            )
        out.append(text)
    return tuple(out)


def uf_first_extent(uf: UF) -> str | None:
    """One more than the largest first index ``uf``'s declared domain allows, as one affine
    expression of the symbolic constants (``N + 1`` for ``{[i]: 0 <= i <= N}``), or None (no
    domain, or no such expression): the length of the index array's first axis.

    >>> from spf.sets import UF
    >>> uf_first_extent(UF("rowptr", domain="{[i]: 0 <= i <= N}"))
    'N + 1'
    """
    return None if uf.domain is None else _axis_extent(uf.domain.body_iset(), 0)


def _axis_extent(iset: isl.Set, k: int) -> str | None:
    """One more than the largest value of index ``k`` of ``iset`` as one affine expression of
    the symbolic constants (text), or None where there is no such expression."""
    import islpy as isl

    n = iset.dim(isl.dim_type.set)
    one = iset.project_out(isl.dim_type.set, k + 1, n - k - 1).project_out(isl.dim_type.set, 0, k)
    try:
        pieces = one.dim_max(0).get_pieces()
    except isl.Error:
        return None
    return _affine_text(pieces[0][1], 1) if len(pieces) == 1 else None


def uf_range_bounds(uf: UF) -> tuple[str, str] | None:
    """C expressions of the lowest and highest value ``uf``'s declared range allows (one
    affine expression of the symbolic constants each), or None (no range, or not such a
    box).

    >>> from spf.sets import UF
    >>> uf_range_bounds(UF("rowptr", range="{[v]: 0 <= v <= NNZ}"))
    ('0', 'NNZ')
    """
    return None if uf.range is None else set_bounds(uf.range)


def set_bounds(s: Set) -> tuple[str, str] | None:
    """C expressions of the lowest and highest value of the 1-d set ``s`` (one affine
    expression of the symbolic constants each), or None (not such a box).

    >>> from spf.sets import Set
    >>> set_bounds(Set("{[i]: 0 <= i < N + 1}"))
    ('0', 'N')
    """
    import islpy as isl

    iset = s.body_iset()
    if iset.dim(isl.dim_type.set) != 1:
        return None
    out: list[str] = []
    for which in (iset.dim_min, iset.dim_max):
        try:
            pieces = which(0).get_pieces()
        except isl.Error:
            return None
        text = _affine_text(pieces[0][1], 0) if len(pieces) == 1 else None
        if text is None:
            return None
        out.append(text)
    return out[0], out[1]


def _affine_text(aff: object, plus: int) -> str | None:
    """``aff + plus`` as C text over the parameters (None: not integral)."""
    import islpy as isl

    assert isinstance(aff, isl.Aff)
    if aff.get_denominator_val().to_python() != 1:
        return None
    terms: list[tuple[int, str]] = []  # (coefficient, name; "" for the constant)
    for i in range(aff.dim(isl.dim_type.param)):
        c = aff.get_coefficient_val(isl.dim_type.param, i).to_python()
        if c:
            terms.append((c, str(aff.get_dim_name(isl.dim_type.param, i))))
    const = aff.get_constant_val().to_python() + plus
    if const or not terms:
        terms.append((const, ""))
    out = ""
    for k, (c, name) in enumerate(terms):
        size = abs(c) if k else c  # after the first term, the sign is the operator
        text = name if c == 1 and name else f"{size}*{name}" if name else str(size)
        out += text if not k else f" {'-' if c < 0 else '+'} {text}"
    return out

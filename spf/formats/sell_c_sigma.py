"""CSR to SELL-C-sigma: relation, generated inspector, and the SELL SpMV executor.

SELL-C-sigma (Kreutzer et al.) cuts the rows, after sorting them by length within windows
of ``sigma`` rows, into chunks of ``C`` consecutive rows; chunk ``c`` is padded to the length
``cl(c)`` of its longest row and stored column-major, so that entry ``j`` of the chunk's row
``r`` sits at ``cs(c) + C*j + r``. The executor's innermost loop runs over the ``C`` rows of a
chunk: unit stride, fixed trip count, no branch, which is what SIMD units want.

In spf terms (``p = C*c + r`` is a position in the sorted row order, ``perm(p)`` its row and
``iperm`` the inverse permutation)::

    CSR [i, k]  ->  SELL [c, j, r]:   C*c + r = iperm(i)  &&  0 <= r < C  &&  j = k - rowptr(i)

The inspector (:meth:`SellFormat.inspect`) is ``spf.formats.convert(CSR, SELL(C, sigma))``
(:meth:`SellFormat.conversion`): one spf Computation synthesized from the CSR and SELL
relations (:mod:`spf.formats.to_sell`): row lengths, ``perm`` by counting sorts (rows by
decreasing length within each window of ``sigma`` rows, stable), chunk widths
``cl(c) = max over r of len(perm(C*c+r))``, chunk pointers ``cs(c+1) = cs(c) + C*cl(c)``,
and the placement of every entry at its row's cursor; padding keeps value 0 and column 0.

:meth:`SellFormat.lengths`, :meth:`SellFormat.fill` and :meth:`SellFormat.permutation` are
the inspector as it was written by hand before (two spf kernels and a numpy sort); they are
kept as the reference the synthesized one is measured against (``spf bench --only formats``).

The executor (:meth:`SellFormat.executor`) is the SELL SpMV with ``cs``, ``cl``, ``scol``
(and ``iperm``) as UFs. With ``sigma = 1`` rows keep their order and it writes
``y(C*c + r)`` directly; with ``sigma > 1`` it accumulates the chunk's rows in a work vector
``yp`` in sorted order and then gathers ``y(i) += yp(iperm(i))`` (a gather, so both loops are
provably parallel; a scatter through ``perm`` would not be, since spf cannot declare that a
UF is a permutation).
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.computation import Computation, Stmt
from spf.dtypes import numpy_name
from spf.errors import ArgumentError, FormatError, SpfError
from spf.sets import Relation

if TYPE_CHECKING:
    import numpy.typing as npt

    from spf.formats.convert import Conversion
    from spf.formats.format import Format

__all__ = ["SellFormat", "SellMatrix", "sell"]

_CTYPES = {"int32": "int32_t", "int64": "int64_t"}


def sell(C: int, sigma: int = 1, *, index_dtype: object = "int32") -> SellFormat:  # noqa: N803
    """The CSR -> SELL-``C``-``sigma`` transformation (``C`` rows per chunk).

    ``sigma`` (a multiple of ``C``, or 1) is the sorting window; ``index_dtype`` the element
    type of the index arrays (``"int32"`` or ``"int64"``, in any spelling :mod:`spf.dtypes`
    accepts), as for ``spf.kernels``.
    """
    name: object = index_dtype
    with contextlib.suppress(SpfError):
        name = numpy_name(index_dtype, what="sell: index_dtype")
    if not isinstance(name, str) or name not in _CTYPES:
        raise FormatError(f"sell: index_dtype must be 'int32' or 'int64', got {index_dtype!r}")
    return SellFormat(C, sigma, name)


@dataclasses.dataclass(frozen=True)
class SellFormat:
    """SELL-C-sigma: the relation from CSR, the inspector and executor Computations."""

    C: int
    sigma: int = 1
    index_dtype: str = "int32"
    _kernels: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.C, bool) or not isinstance(self.C, int) or self.C < 1:
            raise FormatError(f"sell: C must be a positive integer, got {self.C!r}")
        if isinstance(self.sigma, bool) or not isinstance(self.sigma, int) or self.sigma < 1:
            raise FormatError(f"sell: sigma must be a positive integer, got {self.sigma!r}")
        if self.sigma > 1 and self.sigma % self.C:
            raise FormatError(
                f"sell: sigma ({self.sigma}) must be 1 or a multiple of C ({self.C}), so that "
                "sorting windows do not cut chunks"
            )
        if self.index_dtype not in _CTYPES:
            raise FormatError(
                f"sell: index_dtype must be 'int32' or 'int64', got {self.index_dtype!r}"
            )

    # ------------------------------------------------------------------------- relations
    @property
    def relation(self) -> Relation:
        """CSR iteration space ``[i, k]`` -> SELL iteration space ``[c, j, r]``."""
        c = self.C
        if self.sigma == 1:
            return Relation(
                f"{{[i,k] -> [c,j,r]: {c}*c + r = i && 0 <= r < {c} && j = k - rowptr(i)}}"
            )
        return Relation(
            f"{{[i,k] -> [c,j,r]: {c}*c + r = iperm(i) && 0 <= r < {c} && j = k - rowptr(i)}}"
        )

    @property
    def format(self) -> Format:
        """The SELL storage as a :class:`~spf.formats.format.Format` relation
        (:func:`spf.formats.SELL`): ``spf.kernels.spmv(fmt.format)`` is the SpMV generated
        from it, over :meth:`SellMatrix.format_args`."""
        from spf.formats.builtin import SELL

        return SELL(self.C, self.sigma)

    @property
    def csr_domain(self) -> str:
        """The CSR iteration space the relation maps from."""
        return "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}"

    def _row(self) -> str:
        """The CSR row of sorted position ``C*c + r``."""
        pos = f"{self.C}*c + r"
        return pos if self.sigma == 1 else f"perm({pos})"

    def _declare(self, comp: Computation, name: str, domain: str, rng: str, **kw: Any) -> None:
        comp.declare_uf(
            name, domain=f"{{[t]: {domain}}}", range=f"{{[v]: {rng}}}", dtype=self.index_dtype, **kw
        )

    # ------------------------------------------------------------------------- inspector
    def lengths(self) -> Computation:
        """Hand-written inspector (the bench's reference), part 1: chunk lengths ``cl``
        (max-reduction) and pointers ``cs`` (scan).

        Arguments: ``rowptr[N+1]``, ``cl[NC]`` (zeros in), ``cs[NC+1]`` (``cs[0] = 0`` in),
        ``perm`` (UF, only when ``sigma > 1``), ``N``, ``NC``.
        """
        c, idx = self.C, _CTYPES[self.index_dtype]
        comp = Computation(f"sell{c}_{self.sigma}_lengths")
        comp.add_data_space("rowptr", idx, shape=("N + 1",))
        comp.add_data_space("cl", idx, shape=("NC",))
        comp.add_data_space("cs", idx, shape=("NC + 1",))
        if self.sigma > 1:
            self._declare(comp, "perm", "0 <= t < N", "0 <= v < N")
        row = self._row()
        comp.add_stmt(
            Stmt(
                f"$cl$(c) = max($cl$(c), $rowptr$({row} + 1) - $rowptr$({row}));",
                f"{{[c,r]: 0 <= c < NC && 0 <= r < {c} && {c}*c + r < N}}",
                "{[c,r] -> [0,c,0,r,0]}",
            )
        )
        comp.add_stmt(
            Stmt(
                f"$cs$(c + 1) = $cs$(c) + {c} * $cl$(c);", "{[c]: 0 <= c < NC}", "{[c] -> [1,c,0]}"
            )
        )
        return comp

    def fill(self) -> Computation:
        """Hand-written inspector (the bench's reference), part 2: scatter ``A`` and ``col``
        into the padded ``val`` and ``scol``.

        Arguments: UFs ``rowptr``, ``cs`` (and ``perm``), data ``A[NNZ]``, ``col[NNZ]``,
        ``val[NV]``, ``scol[NV]`` (zeros in: padding stays value 0, column 0).
        """
        c, idx = self.C, _CTYPES[self.index_dtype]
        comp = Computation(f"sell{c}_{self.sigma}_fill")
        comp.add_data_space("A", "double", shape=("NNZ",))
        comp.add_data_space("col", idx, shape=("NNZ",))
        comp.add_data_space("val", "double", shape=("NV",))
        comp.add_data_space("scol", idx, shape=("NV",))
        self._declare(comp, "rowptr", "0 <= t <= N", "0 <= v <= NNZ", monotonic="nondecreasing")
        self._declare(comp, "cs", "0 <= t <= NC", "0 <= v <= NV", monotonic="nondecreasing")
        if self.sigma > 1:
            self._declare(comp, "perm", "0 <= t < N", "0 <= v < N")
        row = self._row()
        slot = f"cs(c) + {c}*k - {c}*rowptr({row}) + r"
        domain = (
            f"{{[c,r,k]: 0 <= c < NC && 0 <= r < {c} && {c}*c + r < N && "
            f"rowptr({row}) <= k < rowptr({row} + 1)}}"
        )
        comp.add_stmt(Stmt(f"$val$({slot}) = $A$(k);", domain, "{[c,r,k] -> [0,c,0,r,0,k,0]}"))
        comp.add_stmt(Stmt(f"$scol$({slot}) = $col$(k);", domain, "{[c,r,k] -> [0,c,0,r,0,k,1]}"))
        return comp

    def permutation(self, rowptr: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        """``perm`` and its inverse ``iperm``: rows by decreasing length within each window.

        The numpy step of the hand-written inspector (a stable sort per window of ``sigma``
        rows); :meth:`inspect` computes ``perm`` in the synthesized conversion.
        """
        n = len(rowptr) - 1
        dt = np.dtype(self.index_dtype)
        if self.sigma == 1 or n == 0:
            ident = np.arange(n, dtype=dt)
            return ident, ident.copy()
        lengths = np.diff(rowptr.astype(np.int64))
        perm = np.lexsort((-lengths, np.arange(n) // self.sigma)).astype(dt)
        iperm = np.empty(n, dtype=dt)
        iperm[perm] = np.arange(n, dtype=dt)
        return perm, iperm

    def conversion(self) -> Conversion:
        """The inspector: ``spf.formats.convert(CSR, SELL(C, sigma))``, one Computation
        synthesized from the two formats' relations (docs/formats.md)."""
        from spf.formats.builtin import builtin
        from spf.formats.convert import convert

        return convert(builtin("CSR"), self.format, index_dtype=self.index_dtype)

    def inspect(
        self,
        rowptr: npt.NDArray[Any],
        col: npt.NDArray[Any],
        A: npt.NDArray[Any],  # noqa: N803
        shape: tuple[int, int],
        *,
        check: bool = True,
        **options: Any,
    ) -> SellMatrix:
        """Run the inspector (:meth:`conversion`, compiled once per format) on CSR arrays;
        ``options`` go to ``Computation.compile``. With ``check`` (as for every kernel) the
        CSR arrays are checked as a kernel's arguments are (columns in range and increasing
        within rows)."""
        dt = np.dtype(self.index_dtype)
        n, m = int(shape[0]), int(shape[1])
        rowptr, col = np.asarray(rowptr), np.asarray(col)
        for name, arr in (("rowptr", rowptr), ("col", col)):
            if arr.dtype != dt:
                raise ArgumentError(
                    f"sell inspector: {name} is {arr.dtype}, this format was made with "
                    f"index_dtype={self.index_dtype!r}"
                )
        if rowptr.shape != (n + 1,):
            raise ArgumentError(f"sell inspector: rowptr must have N+1 = {n + 1} entries")
        nnz = int(rowptr[-1]) if n else 0
        key = repr(sorted(options.items()))
        if key not in self._kernels:
            self._kernels[key] = self.conversion().compile(**options)
        out = self._kernels[key](
            rowptr=rowptr, col=col[:nnz], A=np.ascontiguousarray(A, dtype=np.float64)[:nnz],
            N=n, M=m, NNZ=nnz, check=check,
        )  # fmt: skip
        if self.sigma > 1:
            perm = out["perm"]
            iperm = np.empty(n, dtype=dt)
            iperm[perm] = np.arange(n, dtype=dt)
        else:  # rows keep their order
            perm = np.arange(n, dtype=dt)
            iperm = perm.copy()
        cl, cs, val, scol = out["cl"], out["cs"], out["val"], out["scol"]
        return SellMatrix(self, n, m, nnz, cl, cs, val, scol, perm, iperm)

    def inspect_matrix(self, matrix: Any, *, check: bool = True, **options: Any) -> SellMatrix:
        """:meth:`inspect` on a ``scipy.sparse`` matrix (converted to CSR)."""
        from spf.sparse import csr_args

        args = csr_args(matrix, index_dtype=self.index_dtype)
        return self.inspect(
            args["rowptr"], args["col"], args["A"], (args["N"], args["M"]), check=check, **options
        )

    # -------------------------------------------------------------------------- executor
    def executor(self) -> Computation:
        """SELL SpMV ``y += A·x`` over ``[c, j, r]`` (identity schedule, loops ``c, j, r``).

        Arguments: UFs ``cs``, ``cl``, ``scol`` (and ``iperm``), data ``y[N]``, ``val[NV]``,
        ``x[M]`` (and the work vector ``yp[C*NC]`` when ``sigma > 1``); see
        :meth:`SellMatrix.args`.
        """
        c = self.C
        comp = Computation(f"spmv_sell{c}_{self.sigma}")
        comp.add_data_space("y", "double", shape=("N",))
        if self.sigma > 1:
            comp.add_data_space("yp", "double", shape=(f"{c}*NC",))
        comp.add_data_space("val", "double", shape=("NV",))
        comp.add_data_space("x", "double", shape=("M",))
        self._declare(comp, "cs", "0 <= t <= NC", "0 <= v <= NV", monotonic="nondecreasing")
        self._declare(comp, "cl", "0 <= t < NC", "0 <= v <= M")
        self._declare(comp, "scol", "0 <= t < NV", "0 <= v < M")
        slot = f"cs(c) + {c}*j + r"
        body = f"$val$({slot}) * $x$(scol({slot}))"
        if self.sigma == 1:
            comp.add_stmt(
                Stmt(
                    f"$y$({c}*c + r) += {body};",
                    f"{{[c,j,r]: 0 <= c < NC && 0 <= j < cl(c) && 0 <= r < {c} && {c}*c + r < N}}",
                    "{[c,j,r] -> [0,c,0,j,0,r,0]}",
                    name="spmv",
                )
            )
            return comp
        self._declare(comp, "iperm", "0 <= t < N", f"0 <= v < {c}*NC")
        comp.add_stmt(
            Stmt(
                f"$yp$({c}*c + r) = 0.0;",
                f"{{[c,r]: 0 <= c < NC && 0 <= r < {c}}}",
                "{[c,r] -> [0,c,0,r,0]}",
                name="zero",
            )
        )
        comp.add_stmt(
            Stmt(
                f"$yp$({c}*c + r) += {body};",
                f"{{[c,j,r]: 0 <= c < NC && 0 <= j < cl(c) && 0 <= r < {c}}}",
                "{[c,j,r] -> [0,c,1,j,0,r,0]}",
                name="spmv",
            )
        )
        comp.add_stmt(
            Stmt(
                "$y$(i) += $yp$(iperm(i));", "{[i]: 0 <= i < N}", "{[i] -> [1,i,0]}", name="gather"
            )
        )
        return comp

    def scheduled_executor(self) -> Computation:
        """:meth:`executor` with the schedule the benchmarks use.

        The chunk loop ``c`` (and the gather's ``i``) parallel, the row loop ``r`` vectorized
        ``C`` wide (full chunks get a clean ``omp simd`` loop of ``C`` iterations; the last,
        partial chunk a scalar one).
        """
        comp = self.executor()
        comp.stmt("spmv").parallelize("c").vectorize("r", self.C)
        if self.sigma > 1:
            comp.stmt("gather").parallelize("i")
        return comp


@dataclasses.dataclass
class SellMatrix:
    """A matrix in SELL-C-sigma, as the inspector built it."""

    format: SellFormat
    N: int
    M: int
    NNZ: int
    cl: npt.NDArray[Any]
    cs: npt.NDArray[Any]
    val: npt.NDArray[Any]
    scol: npt.NDArray[Any]
    perm: npt.NDArray[Any]
    iperm: npt.NDArray[Any]
    yp: npt.NDArray[Any] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.yp = np.zeros(len(self.cl) * self.format.C if self.format.sigma > 1 else 0)

    @property
    def NC(self) -> int:  # noqa: N802
        """Number of chunks."""
        return len(self.cl)

    @property
    def NV(self) -> int:  # noqa: N802
        """Stored entries, padding included."""
        return len(self.val)

    @property
    def fill_ratio(self) -> float:
        """Stored entries per nonzero (1.0: no padding)."""
        return self.NV / self.NNZ if self.NNZ else 1.0

    def args(self) -> dict[str, Any]:
        """Keyword arguments of the executor kernel, all but ``x`` and ``y``."""
        out: dict[str, Any] = {
            "cs": self.cs, "cl": self.cl, "scol": self.scol, "val": self.val,
            "N": self.N, "M": self.M, "NC": self.NC, "NV": self.NV,
        }  # fmt: skip
        if self.format.sigma > 1:
            out["iperm"] = self.iperm
            out["yp"] = self.yp
        return out

    def format_args(self) -> dict[str, Any]:
        """Keyword arguments of ``spf.kernels.spmv(self.format.format)`` (the SpMV generated
        from the SELL relation), all but ``x`` and ``y``."""
        out = {k: v for k, v in self.args().items() if k not in ("iperm", "yp")}
        if self.format.sigma > 1:
            out["perm"] = self.perm
        return out

    def to_dense(self) -> npt.NDArray[Any]:
        """The dense matrix these arrays hold (for checks)."""
        c = self.format.C
        dense = np.zeros((self.N, self.M))
        for ch in range(self.NC):
            for r in range(c):
                p = c * ch + r
                if p >= self.N:
                    break
                row = int(self.perm[p])
                for j in range(int(self.cl[ch])):
                    slot = int(self.cs[ch]) + c * j + r
                    dense[row, int(self.scol[slot])] += self.val[slot]
        return dense

"""``convert(src, dst)`` from a format storing its values in a laid-out array (ELL, DIA,
SELL, BCSR): the inspector that lists the stored entries, synthesized from the source
relation.

The source is read through its scan (:meth:`Format.scan`: every slot with its coordinates,
in the relation's loop order); a slot is an entry when it is not padding:

* ELL-like (a row position ``p`` with ``i = p`` and a slot ``w`` per row): the row's true
  length is one past its last slot holding a nonzero value. The ELL arrays do not record
  row lengths, so padding is the run of zero-valued slots at the end of a row: explicit
  zeros before a row's last nonzero are entries (kept), zeros after it are padding;
* any other layout (DIA, SELL, BCSR): a slot holding value 0 is padding. For DIA this is
  what ``scipy.sparse.dia_array.tocoo`` does: explicit zeros inside the band are dropped;
  for BCSR, the zero fill of the blocks goes (and explicit zeros with it).

The coordinates of the result span the source's extents: ``r*NB`` by ``c*MB`` for
``BCSR(r, c)`` (whose arrays do not record ``N`` and ``M``). A flat value array (as
:func:`spf.sparse.bcsr_args` gives) of the right size is read in the relation's shape.

A coordinate destination (COO) is one spf Computation with a size parameter ``PHASE``:
``PHASE = 0`` counts the entries (``NNZ``; for ELL-like sources after the row lengths
``cv_len``), the wrapper allocates ``NNZ + 1`` slots, and ``PHASE = 1`` places every entry
at a running cursor ``cv_at(0)`` (a run-time index array, read through its range ``<= NNZ``)
in scan order. A padding slot is written at the cursor too but does not advance it, so the
next entry (or the one spare slot the wrapper trims) overwrites it: no conditional stores.
A compressed destination (CSR, CSC) is that COO followed by the synthesized COO -> ``dst``
conversion (:func:`spf.formats.convert`), which sorts and sums duplicates.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError, FormatError
from spf.formats.convert import Conversion, ConversionKernel, _compressed, _coordinate
from spf.formats.permutation import check_rows, row_permutation
from spf.formats.phased import PhasedBuilder, PhasedConversion, PhasedKernel

if TYPE_CHECKING:
    from spf.formats.format import Format

__all__ = ["StoredConversion", "StoredConversionKernel", "from_stored", "is_stored"]


def is_stored(fmt: Format) -> bool:
    """``fmt`` keeps its values in a laid-out array (not one entry per position ``k < NNZ``)."""
    return len(fmt.positions) != 1 or fmt.value_shape != ("NNZ",)


def _row_slots(fmt: Format) -> tuple[str, str] | None:
    """``(p, w)`` when ``fmt`` is ELL-like: positions ``[p, w]`` with ``i = p``."""
    if len(fmt.positions) != 2 or fmt.exists:
        return None
    p, w = fmt.positions
    if fmt._defined.get(fmt.coords[0], "").strip() != p or fmt.loops[:2] != (p, w):
        return None
    return p, w


class StoredConversionKernel(PhasedKernel):
    """``kernel(**source arrays and sizes)`` -> the destination's arrays and sizes.

    Two calls of the one compiled kernel, both with the caller's ``check`` (index values
    are checked in the loops that load them): ``PHASE=0`` counts the entries; then, with
    the coordinate and value arrays allocated, ``PHASE=1`` places them. A compressed
    destination then runs its COO conversion on them."""

    conv: StoredConversion

    then: ConversionKernel | None = None

    def _convert(self, *, check: bool, **args: Any) -> dict[str, Any]:
        conv = self.conv
        sizes = self._sizes(args)
        _coordinates_fit(conv, sizes)
        perm = row_permutation(conv.src)
        if check and perm is not None:
            rows = _value(str(conv.src.shape[0]), sizes)
            check_rows(f"convert({conv.src.name} -> {conv.dst.name})", perm, args[perm], rows)
        env: dict[str, Any] = dict(args)
        value = env[conv.src.value]
        shape = tuple(_value(str(e), sizes) for e in conv.src.value_shape)
        flat = isinstance(value, np.ndarray) and value.ndim == 1 < len(shape)
        if flat and value.size == int(np.prod(shape)):  # flat blocks (spf.sparse.bcsr_args)
            env[conv.src.value] = value.reshape(shape)
        self._zeros(env, conv.allocate, sizes)
        entries = dict.fromkeys(("cv_r", "cv_c", "cv_v"), ("NNZ + 1",))
        self._zeros(env, entries, {**sizes, "NNZ": 0})
        self._run(check=check, PHASE=0, NNZ=0, **env)
        nnz = int(env["cv_cnt"][0])
        self._zeros(env, entries, {**sizes, "NNZ": nnz}, {"NNZ": "the slots holding a nonzero"})
        if nnz:
            self._run(check=check, PHASE=1, NNZ=nnz, **env)
        row, col, val = (env[a][:nnz] for a in ("cv_r", "cv_c", "cv_v"))
        n, m = (_value(e, sizes) for e in conv.src.shape)
        if self.then is None:
            r, c, v = conv.coo
            return {r: row, c: col, v: val, "N": n, "M": m, "NNZ": nnz}
        return self.then(row=row, col=col, A=val, N=n, M=m, NNZ=nnz, check=check)


def _coordinates_fit(conv: Conversion, sizes: dict[str, int]) -> None:
    """``ArgumentError`` when a coordinate the source computes (BCSR's ``j = c*bcol(kb) +
    ci``, SELL's ``i = C*ch + r``, BDIA's ``i = R*b + r``), not one it copies from an index
    array (``j = col(p, w)``, already of the index type), can exceed what the conversion's
    index arrays hold: the kernel would store it wrapped (a negative column, silently), as
    the ``spf.sparse`` builders refuse such a shape in int32."""
    src = conv.src
    most = int(np.iinfo(conv.index_dtype).max)
    for coord, ext in zip(src.coords, src.shape, strict=True):
        defined = src._defined.get(coord, coord)
        copied = re.fullmatch(r"\s*(\w+)\(([^()]*)\)\s*", defined)
        if copied is not None and copied.group(1) in src.ufs:
            continue
        n = _value(str(ext), sizes)
        if n - 1 > most:
            what = "row" if coord == src.coords[0] else "column"
            raise ArgumentError(
                f"convert({src.name} -> {conv.dst.name}): {what} {coord} = {defined} reaches "
                f"{n - 1} ({ext} = {n}), more than {conv.index_dtype} index arrays hold; "
                f"convert with index_dtype='int64' (spf.formats.convert(..., "
                f"index_dtype='int64'), the source's index arrays in int64)"
            )


class StoredConversion(PhasedConversion):
    """``convert(src, dst)`` for a laid-out ``src``: one spf Computation listing the entries
    (both phases); :meth:`compile` gives a :class:`StoredConversionKernel`. ``then`` is the
    COO -> ``dst`` conversion run after it (``None``: ``dst`` is coordinate)."""

    kernel_type = StoredConversionKernel
    then: Conversion | None
    coo: tuple[str, str, str]

    def compile(  # type: ignore[override]
        self, target: str = "c", name: str | None = None, check: bool = True, **options: Any
    ) -> StoredConversionKernel:
        """Generate, build (cached) and load the conversion kernel(s) (C only)."""
        kernel = super().compile(target, name, check, **options)
        assert isinstance(kernel, StoredConversionKernel)
        if self.then is not None:
            # every laid-out source shares the COO -> dst kernel (generated once per process)
            key = (self.then.dst, self.index_dtype, target, check, repr(sorted(options.items())))
            if key not in _THEN:
                _THEN[key] = self.then.compile(target, None, check, **options)
            kernel.then = _THEN[key]
        return kernel


_THEN: dict[tuple[object, ...], ConversionKernel] = {}
"""The compiled COO -> ``dst`` kernels of :meth:`StoredConversion.compile`."""


def _terms(expr: str) -> list[tuple[int, str | None]]:
    """``expr`` (``"N"``, ``"2*NB"``, ``"N + 1"``) as ``(factor, size or None)`` terms; empty
    when it is not such a sum."""
    terms: list[tuple[int, str | None]] = []
    for term in str(expr).replace(" ", "").split("+"):
        m = re.fullmatch(r"(?:(\d+)\*)?([A-Za-z_]\w*)|(\d+)", term)
        if m is None:
            return []
        if m.group(3) is not None:
            terms.append((int(m.group(3)), None))
        else:
            terms.append((int(m.group(1) or 1), m.group(2)))
    return terms


def _value(expr: str, sizes: dict[str, int]) -> int:
    """The value of a coordinate extent ``expr`` given the sizes."""
    return sum(f * (sizes[s] if s is not None else 1) for f, s in _terms(expr))


def from_stored(src: Format, dst: Format, index_dtype: str) -> StoredConversion:
    """The conversion ``src -> dst`` for a laid-out ``src`` (see the module docstring)."""
    from spf.formats.builtin import builtin
    from spf.formats.convert import convert

    coo = _coordinate(dst) if not is_stored(dst) else None
    if coo is None and (is_stored(dst) or _compressed(dst) is None):
        raise FormatError(
            f"convert({src.name} -> {dst.name}): from a laid-out format conversions are "
            f"synthesized into coordinate (COO) and compressed (CSR, CSC) formats; convert "
            f"{src.name} to CSR first, then CSR to {dst.name}"
        )
    if dst.shape != ("N", "M") or not all(_terms(e) for e in src.shape):
        raise FormatError(
            f"convert({src.name} -> {dst.name}): conversions out of a laid-out format are "
            f"synthesized into N x M coordinates from sums of size multiples, but {src.name} "
            f"is {src.shape} and {dst.name} is {dst.shape}"
        )
    conv = StoredConversion.start(src, dst, index_dtype)
    conv.then = None if coo is not None else convert(builtin("COO"), dst, index_dtype=index_dtype)
    conv.coo = (coo[0], coo[1], dst.value) if coo is not None else ("row", "col", "A")
    b = PhasedBuilder(conv, src, index_dtype)
    b.order = src.row_order()  # rows in order: into CSR, the COO conversion only copies
    b.data(src.value, tuple(str(e) for e in src.value_shape), "value")
    b.data("cv_cnt", ("1",))
    b.index("cv_at", "1", "0 <= v <= NNZ")
    b.data("cv_r", ("NNZ + 1",))
    b.data("cv_c", ("NNZ + 1",))
    b.data("cv_v", ("NNZ + 1",), "value")
    value = f"${src.value}$({', '.join(src.positions)})"
    keep = f"{value} != 0"
    slots = _row_slots(src)
    if slots is not None:
        p, w = slots
        rows, width = (str(e) for e in src.value_shape)
        b.data("cv_len", (rows,))
        b.range([f"$cv_len$({p}) = 0;"], p, "0", rows)
        b.loop([f"$cv_len$({p}) = {value} != 0 ? {w} + 1 : $cv_len$({p});"],
               f"{{[{p}, {w}]: 0 <= {p} < {rows} && 0 <= {w} < {width}}}", (p, w))  # fmt: skip
        keep = f"{w} < $cv_len$({p})"
    i, j = src.coords
    b.scan([f"$cv_cnt$(0) += {keep} ? 1 : 0;"])
    b.phase = 1
    b.scan(
        [
            f"$cv_r$(cv_at(0)) = {i};",
            f"$cv_c$(cv_at(0)) = {j};",
            f"$cv_v$(cv_at(0)) = {value};",
            f"$cv_at$(0) += {keep} ? 1 : 0;",
        ]
    )
    conv.allocate = conv.shapes(lambda a: a.startswith("cv_") and a not in ("cv_r", "cv_c", "cv_v"))
    return conv

"""Arguments to tune on, made from a Matrix Market file and sizes (``spf tune``).

The matrix fills the index arrays of a kernel whose UFs are CSR (``rowptr, col``), CSC
(``colptr, row``) or COO (``row, col``); a triangular solve (``sptrsv*``) gets the lower
triangle with a dominant diagonal stored last in each row. Every other data space of the
kernel gets an array of its declared shape (extents evaluated with the sizes), filled with
seeded random values.
"""

from __future__ import annotations

import importlib
import math
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError

if TYPE_CHECKING:
    from spf.computation.computation import Computation

_FORMATS = {("col", "rowptr"): "csr", ("colptr", "row"): "csc", ("col", "row"): "coo"}


def _triangular(matrix: Any) -> Any:
    """The lower triangle of ``matrix`` with a dominant diagonal, stored last in each row."""
    sp: Any = importlib.import_module("scipy.sparse")
    m = sp.csr_array(matrix, dtype=float)
    n = min(m.shape)
    m = m[:n, :n]
    lower = sp.tril(m, k=-1, format="csr")
    diag = np.asarray(abs(lower).sum(axis=1)).ravel() + 1.0
    out = sp.csr_array(lower + sp.diags_array(diag))
    out.sort_indices()
    return out


def _declared_index_dtype(comp: Computation) -> str | None:
    """``"int64"`` when an index array of ``comp`` is declared 64-bit (a C file's ``long *``),
    else None (int32, or int64 where the matrix needs it): the compiled kernel takes index
    arrays of the declared dtype only, and ``--matrix`` leaves no way to convert them."""
    from spf.dtypes import numpy_name
    from spf.errors import SpfError

    names = set()
    for uf in comp.ufs.values():
        try:
            names.add(numpy_name(uf.dtype, what=f"UF {uf.name!r}"))
        except SpfError:
            continue
    return "int64" if "int64" in names else None


def matrix_args(comp: Computation, matrix: Any) -> dict[str, Any]:
    """The index arrays, values and sizes of ``matrix`` under ``comp``'s names."""
    from spf import sparse

    fmt = _FORMATS.get(tuple(sorted(comp.ufs)))  # type: ignore[arg-type]
    if fmt is None:
        raise ArgumentError(
            f"{comp.name} has index arrays {', '.join(sorted(comp.ufs)) or '(none)'}; "
            "a matrix fills CSR (rowptr, col), CSC (colptr, row) or COO (row, col) arrays"
        )
    if comp.name.startswith("sptrsv"):
        matrix = _triangular(matrix)
    build = {"csr": sparse.csr_args, "csc": sparse.csc_args, "coo": sparse.coo_args}[fmt]
    args = build(matrix, _declared_index_dtype(comp))
    values = [
        n
        for n, ds in comp.data_spaces.items()
        if ds.shape is not None and tuple(ds.shape) == ("NNZ",)
    ]
    if values and "A" not in comp.data_spaces:
        args[values[0]] = args.pop("A")
    return {
        k: v for k, v in args.items() if k in comp.data_spaces or k in comp.ufs or k in comp.params
    }


def kernel_args(
    comp: Computation,
    matrix: Any = None,
    sizes: Mapping[str, int] | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Keyword arguments for ``comp``: ``matrix`` (scipy.sparse, optional) and ``sizes``
    (symbolic constants) decide the shapes; data are seeded random values."""
    from spf.pdfg.annotate import extent_product

    if matrix is None and comp.ufs:
        raise ArgumentError(
            f"{comp.name} reads index arrays ({', '.join(sorted(comp.ufs))}); give "
            "--matrix FILE.mtx"
        )
    unknown = sorted(set(sizes or {}) - set(comp.params))
    if unknown:
        raise ArgumentError(
            f"--sizes names {', '.join(map(repr, unknown))}, not symbolic constants "
            f"of {comp.name} (its constants: {', '.join(sorted(comp.params)) or 'none'}; "
            "keep a #define of a C file symbolic with --param NAME)"
        )
    args: dict[str, Any] = {} if matrix is None else matrix_args(comp, matrix)
    known = {k: int(v) for k, v in args.items() if k in comp.params}
    known.update(sizes or {})
    rng = np.random.default_rng(seed)
    shapes: dict[str, tuple[list[int], np.dtype[Any]]] = {}
    for name, ds in comp.data_spaces.items():
        if name in args or ds.role != "data":
            continue
        if ds.shape is None:
            raise ArgumentError(f"data space {name!r} of {comp.name} has no declared shape")
        shape = []
        for extent in ds.shape:
            names = set(re.findall(r"[A-Za-z_]\w*", str(extent)))
            value = extent_product((extent,), known) if names <= set(known) else None
            if value is None:
                missing = sorted(p for p in comp.params if p not in known)
                raise ArgumentError(
                    f"the extent {extent!r} of {name!r} needs sizes; give "
                    f"--sizes {','.join(f'{p}=...' for p in missing) or 'NAME=...'}"
                )
            shape.append(value)
        shapes[name] = (shape, np.dtype(ds.dtype))
    _fits_in_memory(comp.name, shapes)
    for name, (shape, dtype) in shapes.items():
        if np.issubdtype(dtype, np.floating):
            args[name] = rng.random(shape).astype(dtype)
        else:
            args[name] = np.zeros(shape, dtype=dtype)
    for p in sorted(comp.params):
        if p in known:
            args[p] = known[p]
    return args


def _fits_in_memory(kernel: str, shapes: Mapping[str, tuple[list[int], np.dtype[Any]]]) -> None:
    """An ``ArgumentError`` when the arrays of ``shapes`` would take more than half of the
    machine's memory (tuning keeps copies of them): refused before numpy allocates them (a
    MemoryError then, or a machine filled up)."""
    total = sum(math.prod(max(0, e) for e in shape) * dtype.itemsize for shape, dtype in
                shapes.values())  # fmt: skip
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # no sysconf: the address space at least
        memory = 2**63
    if total > memory // 2:
        raise ArgumentError(
            f"the arguments of {kernel} at these sizes take {total / 2**30:.3g} GiB, more than "
            f"half of this machine's {memory / 2**30:.3g} GiB of memory; give smaller --sizes"
        )

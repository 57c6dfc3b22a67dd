"""SpMV ``y += A·x`` over any :class:`~spf.formats.format.Format`, generated from its storage
relation (``spf.kernels.spmv`` is this computation; :func:`spf.formats.tune` schedules it)."""

from __future__ import annotations

from spf.computation import Computation, Stmt
from spf.dtypes import index_name
from spf.errors import ArgumentError, FormatError
from spf.formats.format import Format

__all__ = ["spmv_computation"]


def spmv_computation(
    fmt: Format,
    index_dtype: str | None = None,
    *,
    name: str | None = None,
    stmt: str | None = "spmv",
    facts: bool = True,
) -> Computation:
    """One statement ``y(i) += A(position) * x(j)`` over :meth:`Format.scan`, loops in
    :attr:`Format.loops` order; the format's UFs declared ``index_dtype`` when given.

    ``name`` is the computation's (default ``spmv_<format>_generated``), ``stmt`` the
    statement's (None: the default ``s0``); ``facts=False`` leaves the format's ``assume``
    facts out (the ``spf.kernels.spmv_csr`` family accepts unsorted columns)."""
    if not isinstance(fmt, Format):
        raise ArgumentError(f"spmv: expected an spf.Format (spf.formats.CSR, ...), got {fmt!r}")
    if len(fmt.coords) != 2:
        raise FormatError(
            f"spmv({fmt.name}): a matrix format has two coordinates, "
            f"{fmt.name} has [{', '.join(fmt.coords)}]"
        )
    dtype = None if index_dtype is None else index_name(index_dtype)
    i, j = fmt.coords
    comp = Computation(name or f"spmv_{fmt.name.lower()}_generated")
    comp.add_data_space("y", "double", shape=(fmt.shape[0],))
    comp.add_data_space(fmt.value, "double", shape=fmt.value_shape)
    comp.add_data_space("x", "double", shape=(fmt.shape[1],))
    fmt.declare(comp, dtype, facts=facts)
    loops = ", ".join(fmt.loops)
    sched = ", ".join(f"0, {v}" for v in fmt.loops)
    comp.add_stmt(
        Stmt(
            f"$y$({i}) += ${fmt.value}$({', '.join(fmt.positions)}) * $x$({j});",
            fmt.scan(),
            f"{{[{loops}] -> [{sched}, 0]}}",
            name=stmt,
        )
    )
    return comp

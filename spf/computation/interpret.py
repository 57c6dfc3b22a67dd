"""The reference interpreter: every statement instance in schedule order (slow, exact).

Arguments are checked exactly as a compiled kernel checks them (:class:`spf.runtime.binding.
Binder` with ``check=True``: dtypes, ranks, shapes, contiguity, writeability, parameters
inferred from declared shapes, declared UF facts, no written array overlapping another), with
two allowances: an index array may be int32 or int64 whatever its UF declares (the interpreter
does not care; a kernel does), and a local 0-d scalar (a function's parameter or return value)
may be left out (it starts at 0).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.computation.access import iterator_names
from spf.computation.dependences import padded
from spf.errors import SpfError

if TYPE_CHECKING:
    from spf.codegen.signature import Signature
    from spf.computation.computation import Computation

_INDEX_DTYPES = ("int32", "int64")


def interpret(comp: Computation, args: Mapping[str, Any]) -> None:
    """Execute ``comp`` on ``args`` (data spaces, UF arrays and parameters, by name)."""
    from spf.runtime.binding import Binder  # spf.computation does not import spf.runtime

    given = dict(args)
    for name, ds in comp.data_spaces.items():
        if name not in given and ds.rank == 0 and ds.role not in ("data", "local"):
            given[name] = np.zeros((), dtype=ds.dtype)  # a function's scalar parameter
    binder = Binder(_signature(comp, given), context=f"interpret({comp.name})")
    params, values = binder.bind(given, check=True)
    arrays: dict[str, Any] = {}
    ufs: dict[str, Any] = {}
    for d, value in zip(binder.data, values, strict=True):
        if d.is_uf:
            ufs[d.name] = value
        else:  # a kernel also takes shape (1,) for a 0-d space; the interpreter needs 0-d
            arrays[d.name] = value.reshape(()) if d.rank == 0 else value
    arrays.update(_locals(comp, params))
    width = comp.schedule_width()
    instances: list[tuple[tuple[int, ...], int, tuple[int, ...]]] = []
    for order, stmt in enumerate(comp.stmts):
        sched = padded(stmt, width).intersect_domain(stmt.domain)
        try:
            pairs = sched.points(params=params, ufs=ufs)
        except SpfError as err:
            raise SpfError(f"interpret: statement {stmt.name}: {err}") from err
        instances += [(time, order, point) for point, time in pairs]
    instances.sort()
    runners = [s.parsed.to_python() for s in comp.stmts]
    names = [iterator_names(s.domain) for s in comp.stmts]
    for _, order, point in instances:
        env = dict(params)
        env.update(zip(names[order], point, strict=True))
        runners[order](env, arrays, ufs)


def _signature(comp: Computation, args: Mapping[str, Any]) -> Signature:
    """The kernel's signature, each UF taking the index dtype (int32 or int64) passed."""
    from spf.codegen.program import signature
    from spf.sets import UF

    sig = signature(comp, comp.name)
    out = []
    for a in sig.args:
        value = args.get(a.name)
        uf = a.uf
        if uf is not None and isinstance(value, np.ndarray) and value.dtype.name != uf.dtype:
            dtype = value.dtype.name
            if dtype in _INDEX_DTYPES:
                uf = UF(uf.name, uf.arity, uf.domain, uf.range, uf.monotonic, dtype)
                a = dataclasses.replace(a, ctype=f"{dtype}_t", uf=uf)
        out.append(a)
    return dataclasses.replace(sig, args=tuple(out))


def _locals(comp: Computation, params: Mapping[str, int]) -> dict[str, Any]:
    """Zeroed arrays for the computation's own data spaces (as generated code allocates)."""
    from spf.sets.expr import compile_expr

    out: dict[str, Any] = {}
    for name, ds in comp.data_spaces.items():
        if ds.role != "local":
            continue
        shape = tuple(
            d if isinstance(d, int) else compile_expr(d)[0](params) for d in ds.shape or ()
        )
        out[name] = np.zeros(shape, dtype=ds.dtype)
    return out

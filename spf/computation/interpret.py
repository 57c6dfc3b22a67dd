"""The reference interpreter: every statement instance in schedule order (slow, exact)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.computation.access import iterator_names
from spf.computation.dependences import padded
from spf.errors import ArgumentError, SpfError

if TYPE_CHECKING:
    from spf.computation.computation import Computation


def interpret(comp: Computation, args: Mapping[str, Any]) -> None:
    """Execute ``comp`` on ``args`` (data spaces, UF arrays and parameters, by name)."""
    arrays, ufs = _arrays(comp, args)
    params = _params(comp, args, arrays)
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


def _arrays(comp: Computation, args: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    known = set(comp.data_spaces) | set(comp.ufs) | set(comp.params)
    unknown = sorted(set(args) - known)
    if unknown:
        raise ArgumentError(
            f"interpret({comp.name}): unknown argument(s) {', '.join(unknown)}; expected "
            f"{', '.join(sorted(known))}"
        )
    arrays: dict[str, Any] = {}
    written = {ds for s in comp.stmts for ds, _ in s.writes}
    for name, ds in comp.data_spaces.items():
        if name not in args:
            if ds.rank == 0 and ds.role != "data":
                arrays[name] = np.zeros((), dtype=ds.dtype)  # a local scalar
                continue
            raise ArgumentError(f"interpret({comp.name}): missing data space {name!r}")
        value = args[name]
        if not isinstance(value, np.ndarray):
            raise ArgumentError(
                f"interpret({comp.name}): {name!r} must be a numpy array, "
                f"got {type(value).__name__}"
            )
        if ds.rank is not None and value.ndim != ds.rank:
            raise ArgumentError(
                f"interpret({comp.name}): {name!r} has {value.ndim} dimension(s), the data "
                f"space has rank {ds.rank}"
            )
        if not value.flags.writeable and name in written:
            raise ArgumentError(
                f"interpret({comp.name}): {name!r} is written but the array is read-only"
            )
        arrays[name] = value
    ufs: dict[str, Any] = {}
    for name, uf in comp.ufs.items():
        if name not in args:
            raise ArgumentError(f"interpret({comp.name}): missing UF array {name!r}")
        value = np.asarray(args[name])
        if value.dtype.kind not in "iu" or value.ndim != uf.arity:
            raise ArgumentError(
                f"interpret({comp.name}): UF {name!r} must be a {uf.arity}-d integer array, "
                f"got dtype {value.dtype} with {value.ndim} dimension(s)"
            )
        ufs[name] = value
    return arrays, ufs


def _params(
    comp: Computation, args: Mapping[str, Any], arrays: Mapping[str, Any]
) -> dict[str, int]:
    params: dict[str, int] = {}
    for name in sorted(comp.params):
        if name in args:
            value = args[name]
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ArgumentError(f"interpret({comp.name}): parameter {name!r} must be an int")
            params[name] = int(value)
    for name, ds in comp.data_spaces.items():  # parameters that follow from declared shapes
        for axis, extent in enumerate(ds.shape or ()):
            known = isinstance(extent, str) and extent.isidentifier() and extent in params
            if isinstance(extent, str) and extent.isidentifier() and not known and name in arrays:
                params[extent] = int(arrays[name].shape[axis])
    missing = sorted(set(comp.params) - set(params))
    if missing:
        raise ArgumentError(f"interpret({comp.name}): missing parameter(s) {', '.join(missing)}")
    return params

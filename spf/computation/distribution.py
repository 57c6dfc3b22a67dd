"""What ``Computation.distribute_rows`` records (API.md §19), checked against the
declarations: a :class:`spf.distributed.distribution.Distribution`; :mod:`spf.distributed`
analyses and generates the rest."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from spf.distributed.distribution import Distribution
from spf.errors import ArgumentError, ArityError, CodegenError, UndeclaredError

if TYPE_CHECKING:
    from spf.computation.computation import Computation


_EXTENT = r"[A-Za-z_]\w*|\d+\s*\*\s*[A-Za-z_]\w*|[A-Za-z_]\w*\s*\*\s*\d+"
"""A parameter (``N``), or a number of blocks times their size (``2*NB``, ``NB*2``)."""


def check_request(comp: Computation, loop: object, data: object, owner: object) -> Distribution:
    """The arguments of ``distribute_rows``, checked against the declarations."""
    if not isinstance(loop, str) or not loop.isidentifier():
        raise ArgumentError(f"distribute_rows: loop must be an iterator name, got {loop!r}")
    if not any(loop in s.domain.tuple_vars for s in comp.stmts):
        loops = sorted({v for s in comp.stmts for v in s.domain.tuple_vars})
        raise UndeclaredError("loop", loop, loops, f"distribute_rows on {comp.name}")
    if isinstance(data, str | bytes) or not hasattr(data, "items"):
        raise ArgumentError(
            "distribute_rows: data must be a dict of data space name -> distributed dimension, "
            f'e.g. {{"y": 0, "x": 0}}; got {data!r}'
        )
    spaces = comp.data_spaces
    pairs: list[tuple[str, int]] = []
    for name, dim in data.items():
        if name not in spaces:
            raise UndeclaredError("data space", str(name), spaces, "distribute_rows(data=...)")
        shape = spaces[name].shape or ()
        if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < len(shape):
            raise ArityError(
                f"distribute_rows: dimension {dim!r} of data space {name} (shape {shape}) does "
                "not exist; name one of its dimensions by number"
            )
        if len(shape) != 1:
            raise CodegenError(
                f"distribute_rows: data space {name} has {len(shape)} dimensions; only vectors "
                "(one dimension) are distributed here; store it as a vector"
            )
        extent = shape[dim]
        if not isinstance(extent, str) or not re.fullmatch(_EXTENT, extent.strip()):
            raise CodegenError(
                f"distribute_rows: the extent {shape[dim]!r} of data space {name} is not a "
                "parameter; declare it with a symbolic extent (e.g. shape=('N',)), or a "
                "number of blocks times their size (shape=('2*NB',))"
            )
        pairs.append((str(name), dim))
    if not pairs:
        raise ArgumentError("distribute_rows: name at least one data space in data")
    if owner not in ("block", "array"):
        raise ArgumentError(
            f"distribute_rows: owner must be 'block' (contiguous blocks) or 'array' (an owner "
            f"array given at call time), got {owner!r}"
        )
    return Distribution(loop, tuple(pairs), str(owner))


__all__ = ["Distribution", "check_request"]

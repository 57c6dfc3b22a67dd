"""``spf bench --only analysis``: wavefront generation for ILU(0), Gauss-Seidel and SpTRSV
cold, next to the plain ``codegen`` times (API.md §16; :mod:`spf.bench.scale_wavefront`,
which ``spf bench --only scale`` runs as its part ``wavefront``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.bench import scale_wavefront

if TYPE_CHECKING:
    from spf.bench.common import Context, Section


def run(ctx: Context) -> Section:
    return scale_wavefront.run(ctx, "analysis")

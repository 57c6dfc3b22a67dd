"""``spf bench --only scale``: the costs of issue 28 (API.md §16) in one run.

Each part is a module ``spf.bench.scale_<part>`` with ``run(ctx) -> Section``:

* ``checks``: ``check=True`` against ``check=False`` per kernel and matrix (SuiteSparse set and
  synthetic matrices with one dense row), int32 and int64;
* ``convert``: every ``convert`` destination against scipy (or spf's numpy helper where scipy
  has no such format) on the same matrices;
* ``wavefront``: ILU(0), Gauss-Seidel and SpTRSV wavefront generation (``wavefront`` then
  ``compile``) next to plain ``codegen``.

The parts' tables and target verdicts are printed one after the other under ``## scale``.
"""

from __future__ import annotations

import importlib

from spf.bench.common import Context, Section

PARTS: tuple[str, ...] = ("checks", "convert")


def run(ctx: Context) -> Section:
    """Run every part and join their markdown, data and targets into one section."""
    out = Section("scale")
    for part in PARTS:
        ctx.log(f"scale: {part} ...")
        section: Section = importlib.import_module(f"spf.bench.scale_{part}").run(ctx)
        out.line(f"### {part}\n")
        out.markdown.extend(section.markdown)
        out.targets.extend(section.targets)
        out.data[part] = section.data
    return out

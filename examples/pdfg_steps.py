"""The PDFG at every step of a schedule (docs/pdfg.md, "Step by step").

``python examples/pdfg_steps.py [OUT_DIR]`` schedules the blur (fused, its temporary folded
to three rows, vectorized) and the forward solve (a run-time wavefront), prints each command
of their traces, writes the graph after every command as SVG files with an ``index.html``
per schedule into ``OUT_DIR/blur`` and ``OUT_DIR/forward_solve`` (what ``spf dot
pdfg_steps.py:blur_fused_and_folded --steps DIR`` writes; only printed when Graphviz is
missing), and checks that the scheduled blur computes what numpy does. The functions below
also feed the step-by-step pictures in the docs.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np

import spf
from spf import kernels


def blur_fused_and_folded() -> spf.Computation:
    """The blur with its two nests fused (``out`` row ``i`` after ``bx`` row ``i + 2``), the
    temporary ``bx`` folded to the three rows the fused loop keeps alive, and both inner
    loops in vectors of 8."""
    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2)  # out row i - 2 in iteration i ...
    comp.stmt("s1").after("s0", "i")  # ... right after bx row i: one i loop
    comp.stmt("s0").storage_fold("i", 3)  # bx: rows i, i - 1, i - 2 are all it needs
    comp.stmt("s0").vectorize("j", 8)
    comp.stmt("s1").vectorize("j", 8)
    return comp


def forward_solve_wavefront() -> spf.Computation:
    """The sparse lower-triangular solve (``spf.kernels.sptrsv_csr``) with its row loop run
    by dependence levels computed at run time (``comp.wavefront("i")``: a ``wavefront``
    command for each of its three statements)."""
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    return comp


def reference(img: np.ndarray) -> np.ndarray:
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3


def main(out: Path) -> None:
    schedules = {"blur": blur_fused_and_folded, "forward_solve": forward_solve_wavefront}
    for folder, make in schedules.items():
        comp = make()
        history = comp.pdfg_history()
        print(f"== {make.__name__}: {len(history)} steps")
        for (text, _), name in zip(history, history.file_names(), strict=True):
            print(f"  {name:<24} {text}")
        if shutil.which("dot"):
            print("wrote", history.render(out / folder)[-1])
    blur = blur_fused_and_folded()
    print(blur.loop_structure())
    img = np.random.default_rng(0).random((37, 45))
    got = np.zeros((35, 43))
    blur.compile()(out=got, img=img)  # bx is a buffer of the kernel now: no argument
    assert np.allclose(got, reference(img))
    print("the fused, folded, vectorized blur matches numpy on a 37x45 image")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("pdfg_steps"))

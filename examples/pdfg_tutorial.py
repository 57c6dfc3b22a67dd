"""The PDFG tutorial (docs/pdfg.md) as one script: build, inspect, render and transform graphs.

``python examples/pdfg_tutorial.py [OUT_DIR]`` writes the forward solve's PDFG, a
producer-consumer pair before and after ``fuse``, and the blur before and after
``inline("bx")`` as SVG files (DOT files when Graphviz is missing), checks that the
transformed computations still compute the same results, and shows an illegal fusion being
refused with nothing changed. The functions below also feed the pictures in the docs.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np

import spf
from spf import kernels


def forward_solve() -> spf.Computation:
    """Sparse lower-triangular solve in three statements (the PDFG paper's example)."""
    comp = spf.Computation("fs")
    for name in ("u", "f", "l", "diag"):
        comp.add_data_space(name, "double*")
    comp.add_stmt(spf.Stmt("$u$(i) = $f$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0,0,0]}"))
    comp.add_stmt(
        spf.Stmt(
            "$u$(i) -= $l$(k) * $u$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && j < i}",
            "{[i,k,j]->[0,i,1,k,0]}",
        )
    )
    comp.add_stmt(spf.Stmt("$u$(i) /= $diag$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,2,0,0]}"))
    return comp


def producer_consumer() -> spf.Computation:
    """``a = 2x`` in one loop, then ``b = a + 1`` in a second loop."""
    comp = spf.Computation("pc")
    for name in ("a", "b", "x"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(spf.Stmt("$b$(i) = $a$(i) + 1;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    return comp


def producer_consumer_fused() -> spf.Computation:
    """The same pair after the graph operation ``fuse("s0", "s1", "i")``: one loop."""
    comp = producer_consumer()
    comp.pdfg().fuse("s0", "s1", "i")
    return comp


def blur() -> spf.Computation:
    """Tiramisu's and Halide's separable blur: ``bx`` is a temporary between two nests."""
    return kernels.blur2d()


def blur_inlined() -> spf.Computation:
    """The blur after ``pdfg().inline("bx")``: one statement reads ``img`` directly."""
    comp = kernels.blur2d()
    comp.pdfg().inline("bx")
    return comp


def blur_tiled() -> spf.Computation:
    """The blur with both nests tiled 64 x 64: a box for every loop of each statement."""
    comp = kernels.blur2d()
    for stmt in comp.stmts:
        stmt.tile("i", "j", 64, 64, "i0", "j0", "i1", "j1")
    comp.stmt("s0").parallelize("i0")
    comp.stmt("s1").parallelize("i0")
    return comp


def blur_sizes() -> spf.pdfg.PDFG:
    """The blur's graph priced for a 1080 x 1920 image (bytes, footprints, instances)."""
    graph = kernels.blur2d().pdfg(params={"N": 1080, "M": 1920})
    assert isinstance(graph, spf.pdfg.PDFG)
    return graph


def _save(comp: spf.Computation, path: Path) -> Path:
    """Render to ``path.svg`` (or write ``path.dot`` when Graphviz is missing)."""
    if shutil.which("dot"):
        return comp.pdfg().render(path.with_suffix(".svg"))
    return comp.pdfg().write(path.with_suffix(".dot"))


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    fs = forward_solve()
    edge = fs.pdfg().graph.edges["s2", "s1"]
    print(f"forward solve: s2 -> s1 on {edge['data_space']}, carried by {edge['carried_by']}")
    print("wrote", _save(fs, out / "forward_solve"))

    for make in (producer_consumer, producer_consumer_fused):
        comp = make()
        print(f"{make.__name__}:\n{comp.loop_structure()}")
        a, b, x = np.zeros(7), np.zeros(7), np.arange(7.0)
        comp.compile()(a=a, b=b, x=x)
        assert np.allclose(b, 2 * x + 1)
        print("wrote", _save(comp, out / make.__name__))

    img = np.random.default_rng(0).random((8, 11))
    want = np.zeros((6, 9))
    kernels.blur2d().interpret(out=want, bx=np.zeros((8, 9)), img=img)
    for make in (blur, blur_inlined):
        comp = make()
        print(f"{make.__name__}: data spaces {list(comp.data_spaces)}")
        got = np.zeros((6, 9))
        args = {"bx": np.zeros((8, 9))} if "bx" in comp.data_spaces else {}
        comp.compile()(out=got, img=img, **args)
        assert np.allclose(got, want)
        print("wrote", _save(comp, out / make.__name__))

    sized = blur_sizes().graph.nodes["bx"]  # priced: a 1080 x 1920 image
    print(f"bx: {sized['bytes']} bytes, removed by {' or '.join(sized['removable_by'])}")

    comp = blur()  # fusing the blur's two nests as they are would read bx(i+2) too early
    before = comp.to_json()
    try:
        comp.pdfg().fuse("s0", "s1", "i")
    except spf.IllegalScheduleError as err:
        print("refused:", str(err).split(":")[0])
    assert comp.to_json() == before
    print("PDFG tutorial: OK")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/pdfg_tutorial"))

"""A function calling a function, inlined, scheduled and generated (docs/inlining.md).

``smooth(v)`` averages each interior point with its neighbours into a temporary and copies
it back; ``main`` calls it T times on x, then scales x by a factor (a second function). The
inlined copies get prefixed names; by-value parameters and the temporary become locals of
the generated function.
"""

from __future__ import annotations

import numpy as np

import spf


def smooth() -> spf.Computation:
    c = spf.Computation("smooth")
    c.add_parameter("v", "double*")
    c.add_data_space("tmp", "double", shape=("n",))
    c.add_stmt(
        spf.Stmt(
            "$tmp$(i) = ($v$(i-1) + $v$(i) + $v$(i+1)) / 3;",
            "{[i]: 1 <= i < n - 1}",
            "{[i]->[0,i,0]}",
        )
    )
    c.add_stmt(spf.Stmt("$v$(i) = $tmp$(i);", "{[i]: 1 <= i < n - 1}", "{[i]->[1,i,0]}"))
    return c


def scale() -> spf.Computation:
    c = spf.Computation("scale")
    c.add_parameter("v", "double*")
    c.add_parameter("a", "double")
    c.add_stmt(spf.Stmt("$v$(i) = $a$ * $v$(i);", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    return c


def build() -> spf.Computation:
    main = spf.Computation("smooth_then_scale")
    main.add_data_space("x", "double", shape=("n",))
    done = main.append_computation(smooth(), "{[t]: 0 <= t < T}", "{[t]->[0,t,0]}", ["x"])
    main.append_computation(scale(), "{[]}", "{[]->[1]}", ["x", "0.5"])
    print(f"smooth placed up to position {done.tuple_position}; statements:")
    for s in main.stmts:
        print(f"  {s.name}: {s.source.strip()}   schedule {s.schedule}")
    return main


if __name__ == "__main__":
    comp = build()
    print(comp.loop_structure())
    x = np.random.default_rng(0).random(10)
    want = x.copy()
    for _ in range(3):
        tmp = want.copy()
        tmp[1:-1] = (want[:-2] + want[1:-1] + want[2:]) / 3
        want[1:-1] = tmp[1:-1]
    want *= 0.5
    comp.compile()(x=x, n=10, T=3)
    assert np.allclose(x, want), (x, want)
    print("inlined, generated and checked against numpy: OK")

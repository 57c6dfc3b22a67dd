"""``comp.layers()``: Tiramisu Layers I-IV as isl-style text."""

from __future__ import annotations

import spf
from spf import Computation, Layers, Stmt, kernels


def blur() -> Computation:
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    s1.shift("i", 2)
    s1.after(s0, "j")
    s0.storage_fold("i", 3)
    s0.parallelize("j")
    return comp


def test_four_layers_of_a_folded_blur() -> None:
    layers = blur().layers()
    assert isinstance(layers, Layers)
    assert layers.algorithm.splitlines() == [
        "  {s0[i, j] : 0 <= i && 0 <= j && i < N && j < M - 2} : "
        "bx(i, j) = (img(i, j) + img(i, j + 1) + img(i, j + 2)) / 3.0;",
        "  {s1[i, j] : 0 <= i && 0 <= j && i < N - 2 && j < M - 2} : "
        "out(i, j) = (bx(i, j) + bx(i + 1, j) + bx(i + 2, j)) / 3.0;",
    ]
    assert layers.schedule.splitlines() == [
        "  {s0[i, j] -> [0, i, 0, j, 0]}  [j: parallel]",
        "  {s1[i_, j] -> [0, i, 0, j, 1] : i = i_ + 2}",
    ]
    assert layers.data.splitlines() == [
        "  buffer bx_buf[3, M-2] double (local); stores bx",
        "  store_in {bx[t0, t1] -> bx_buf[t0 % 3, t1]}",
        "  write {s0[i, j] -> bx_buf[i % 3, j]}",
        "  read {s0[i, j] -> img[i, j]}",
        "  read {s0[i, j] -> img[i, j + 1]}",
        "  read {s0[i, j] -> img[i, j + 2]}",
        "  write {s1[i, j] -> out[i, j]}",
        "  read {s1[i, j] -> bx_buf[i % 3, j]}",
        "  read {s1[i, j] -> bx_buf[(i + 1) % 3, j]}",
        "  read {s1[i, j] -> bx_buf[(i + 2) % 3, j]}",
    ]
    assert layers.communication == ""
    text = str(layers)
    for head in ("Layer I (algorithm):", "Layer II (schedule):", "Layer III (data):"):
        assert head in text
    assert "Layer IV (communication):\n  (none)" in text


def test_layer_three_shows_allocation_and_partitions() -> None:
    comp = Computation("c")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    s0 = comp.add_stmt(Stmt("$t$(i) = i;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(Stmt("$y$(i) = $t$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,1]}"))
    b = comp.add_buffer("b", (4,), "double", scope="stack").partition(0, 2, "cyclic")
    s0.store_in(b, ["i % 4"])
    b.allocate_at(s0, spf.ROOT)
    data = comp.layers().data.splitlines()
    assert data[0] == (
        "  buffer b[4] double (stack); allocated at the root; partition dim 0 cyclic 2; stores t"
    )
    assert "  read {s1[i] -> b[i % 4]}" in data


def test_layer_four_lists_operations() -> None:
    comp = Computation("m")
    comp.add_data_space("a", "double", shape=(4,))
    comp.add_stmt(Stmt("$a$(i) = q;", "{[q,i]: 0 <= q < P && 0 <= i < 4}"))
    comp.send("{[q]: 0 <= q < P - 1}", "a", [0], 4, "q + 1")
    comp.receive("{[q]: 1 <= q < P}", "a", [0], 4, "q - 1")
    comp.barrier_at("s0", "q")
    lines = comp.layers().communication.splitlines()
    assert lines == [
        "  {s1[q] : 0 <= q && q < P - 1} : send(a(0), count=4, dest=q + 1)",
        "  {s2[q] : 1 <= q && q < P} : receive(a(0), count=4, src=q - 1)",
        "  {s3[q] : 0 <= q && q < P} : barrier",
    ]
    assert "{s1[q] -> [" in comp.layers().schedule
    assert "[q: distribute]" in comp.layers().schedule

"""Layer III / IV of a Computation: buffers, ``store_in``, ``storage_fold``, ``allocate_at``,
``partition``, the operations ``send``/``receive``/``barrier_at``/copies, their checks, the
trace and JSON, and the legality of layouts (storage remapping adds memory-based
dependences: folds below the reuse distance and scalars in parallel loops are refused).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import spf
from spf import (
    ArityError,
    Buffer,
    CodegenError,
    Computation,
    IllegalScheduleError,
    SpfError,
    Stmt,
    UndeclaredError,
    kernels,
)
from spf.cexpr import to_c
from spf.codegen.program import lower


def fused_blur(fold: int | None = None) -> Computation:
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    s1.shift("i", 2)
    s1.after(s0, "j")
    if fold is not None:
        s0.storage_fold("i", fold)
    return comp


def pair(name: str = "p") -> Computation:
    """``t(i) = x(i)``, ``y(i) = t(i) + 1`` in one i loop."""
    comp = Computation(name)
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$(i) = $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(Stmt("$y$(i) = $t$(i) + 1;", "{[i]: 0 <= i < N}", "{[i]->[0,i,1]}"))
    return comp


# ----------------------------------------------------------------------------- buffers
def test_add_buffer_and_lookup() -> None:
    comp = pair()
    b = comp.add_buffer("b", ("N",), "float64", scope="stack")
    assert isinstance(b, Buffer)
    assert (b.dtype, b.shape, b.scope, b.rank, b.argument) == ("double", ("N",), "stack", 1, False)
    assert comp.buffer("b") is b
    assert comp.buffers == {"b": b}
    assert comp.add_buffer("g", (4,), "double").argument


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("t", ("N",), "double"), "already a data space"),
        (("b", ("N",), "double", "texture"), "scope must be one of"),
        (("b", ("N",), "complex"), "unsupported type"),
        (("1b", ("N",), "double"), "not a valid C identifier"),
        (("b", (-1,), "double"), "negative extent"),
    ],
)
def test_add_buffer_rejects(args: tuple[object, ...], match: str) -> None:
    with pytest.raises(SpfError, match=match):
        pair().add_buffer(*args)  # type: ignore[arg-type]


def test_unknown_buffer_lists_the_known_ones() -> None:
    comp = pair()
    comp.add_buffer("b", ("N",), "double")
    with pytest.raises(UndeclaredError, match="known buffers: 'b'"):
        comp.buffer("c")
    with pytest.raises(UndeclaredError, match="unknown buffer 'c'"):
        comp.stmts[0].store_in("c", ["i"])


def test_data_space_cannot_take_a_buffer_name() -> None:
    comp = pair()
    comp.add_buffer("b", ("N",), "double")
    with pytest.raises(SpfError, match="already declared as a buffer"):
        comp.add_data_space("b", "double", shape=("N",))


def test_partition() -> None:
    b = pair().add_buffer("b", ("N", 4), "double")
    assert b.partition(1, 2, "cyclic") is b
    b.partition(0, 1, "complete").partition(1, 4, "block")
    assert [(p.dim, p.factor, p.kind) for p in b.partitions] == [
        (0, 1, "complete"),
        (1, 4, "block"),
    ]
    with pytest.raises(SpfError, match="dim must be"):
        b.partition(2, 2, "cyclic")
    with pytest.raises(SpfError, match="kind must be one of"):
        b.partition(0, 2, "diagonal")
    with pytest.raises(SpfError, match="factor must be a positive int"):
        b.partition(0, 0, "cyclic")


# ----------------------------------------------------------------------------- store_in
def test_store_in_places_the_written_data_space() -> None:
    comp = pair()
    b = comp.add_buffer("b", (2,), "double", scope="stack")
    assert comp.stmts[0].store_in(b, ["i % 2"]) is comp.stmts[0]
    assert comp.storage_of("t") == ("b", ("t0 % 2",))
    assert comp.storage_of("x") is None
    assert b.data_spaces() == ("t",)


def test_store_in_index_follows_the_write_access() -> None:
    comp = Computation("c")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$(i+1) = $a$(i);", "{[i]: 0 <= i < N - 1}"))
    comp.add_buffer("b", ("N",), "double")
    comp.stmts[0].store_in("b", ["N - 1 - i"])  # t(e) lives at N - 1 - (e - 1)
    (exprs,) = [comp.storage_of("t")[1]]  # type: ignore[index]
    rel = spf.Relation(f"{{[t0] -> [{exprs[0]}]}}")
    assert rel.is_equal(spf.Relation("{[t0] -> [N - t0]}"))


def test_store_in_rejects() -> None:
    comp = Computation("c")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("f", "float", shape=("N",))
    s = comp.add_stmt(Stmt("$y$(i) += $A$(i,j);", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    f = comp.add_stmt(Stmt("$f$(i) = 1;", "{[i]: 0 <= i < N}"))
    comp.add_buffer("b", ("M",), "double")
    comp.add_buffer("b2", ("N", "M"), "double")
    with pytest.raises(SpfError, match="not a function of the element"):
        s.store_in("b", ["j"])
    with pytest.raises(ArityError, match="1 dimension"):
        s.store_in("b", ["i", "j"])
    with pytest.raises(SpfError, match="holds float but buffer 'b' holds double"):
        f.store_in("b", ["i"])
    with pytest.raises(SpfError, match="bad index"):
        s.store_in("b", ["i +"])
    with pytest.raises(SpfError, match="list of index expressions"):
        s.store_in("b", "i")
    with pytest.raises(ArityError, match="takes 1-tuples"):
        s.store_in("b", "{[i] -> [i]}")
    assert comp.storage_of("y") is None
    assert len(comp.trace) == 0


def test_store_in_needs_one_written_space() -> None:
    comp = Computation("c")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("b", "double", shape=("N",))
    s = comp.add_stmt(Stmt("$a$(i) = 1; $b$(i) = 2;", "{[i]: 0 <= i < N}"))
    comp.add_buffer("buf", ("N",), "double")
    with pytest.raises(SpfError, match="writes a, b"):
        s.store_in("buf", ["i"])


def test_storage_fold() -> None:
    comp = fused_blur(3)
    (buf,) = comp.buffers.values()
    assert (buf.name, buf.shape, buf.scope) == ("bx_buf", (3, "M-2"), "local")
    with pytest.raises(SpfError, match="no index of 'bx'"):
        kernels.blur2d().stmts[0].tile("i", "j", 2, 2, "i0", "j0", "i1", "j1").storage_fold("i0", 2)
    with pytest.raises(SpfError, match="size must be a positive int"):
        comp.stmts[0].storage_fold("i", 0)


def test_storage_fold_of_a_stored_space_keeps_its_buffer() -> None:
    comp = pair()
    comp.add_buffer("b", ("N",), "double", scope="stack")
    comp.stmts[0].store_in("b", ["i"]).storage_fold("i", 1)
    assert comp.storage_of("t") == ("b", ("t0 % 1",))
    assert list(comp.buffers) == ["b"]


# ----------------------------------------------------------------------------- allocate_at
def test_allocate_at() -> None:
    comp = pair()
    b = comp.add_buffer("b", (), "double", scope="stack")
    comp.stmts[0].store_in(b, [])
    assert b.allocate_at("s0", "i") is b
    assert b.allocation == ("s0", "i")
    with pytest.raises(UndeclaredError, match="unknown loop 'k'"):
        b.allocate_at("s0", "k")
    g = comp.add_buffer("g", (3,), "double")
    with pytest.raises(SpfError, match="kernel argument"):
        g.allocate_at("s0", "i")


def test_allocate_at_must_enclose_every_use() -> None:
    comp = Computation("c")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$(i) = i;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(Stmt("$y$(i) = $t$(i);", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    b = comp.add_buffer("b", ("N",), "double", scope="stack")
    comp.stmts[0].store_in(b, ["i"])
    b.allocate_at("s0", "i")
    with pytest.raises(CodegenError, match="statement s1 uses it outside"):
        comp.codegen(check=False)
    with pytest.raises(IllegalScheduleError, match="allocated inside loop 'i'"):
        comp.check_legality()


# ----------------------------------------------------------------------------- legality
@pytest.mark.parametrize(("fold", "legal"), [(1, False), (2, False), (3, True), (5, True)])
def test_fold_below_the_reuse_distance_is_refused(fold: int, legal: bool) -> None:
    comp = fused_blur(fold)
    if legal:
        comp.check_legality()
    else:
        with pytest.raises(IllegalScheduleError, match=r"illegal data layout.*bx_buf"):
            comp.check_legality()


def test_fold_without_fusion_is_refused() -> None:
    comp = kernels.blur2d()
    comp.stmts[0].storage_fold("i", 3)
    with pytest.raises(IllegalScheduleError, match="still holds the value of 'bx'"):
        comp.codegen()
    comp.codegen(check=False)  # on the user's responsibility


def test_scalar_in_a_parallel_loop() -> None:
    comp = pair()
    b = comp.add_buffer("b", (), "double", scope="stack")
    comp.stmts[0].store_in(b, []).parallelize("i")
    assert not comp.is_parallel_legal("s0", "i")
    with pytest.raises(IllegalScheduleError, match=r"cannot run in parallel.*'b'"):
        comp.check_legality()
    deps = [d for d in comp.dependences() if d.storage]
    assert {d.data_space for d in deps} == {"b"}
    assert all(d.carried_by == ("i",) for d in deps)
    b.allocate_at("s0", "i")  # one scalar per iteration: parallel again
    comp.check_legality()
    assert comp.is_parallel_legal("s0", "i")


def test_injective_layouts_add_no_dependence() -> None:
    comp = pair()
    before = comp.dependences()
    comp.add_buffer("b", ("N",), "double", scope="stack")
    comp.stmts[0].store_in("b", ["N - 1 - i"]).parallelize("i")
    after = comp.dependences()
    assert len(after) == len(before)
    assert not any(d.storage for d in after)
    comp.check_legality()


# ----------------------------------------------------------------------------- operations
def test_send_and_receive() -> None:
    comp = Computation("halo")
    comp.add_data_space("a", "double", shape=(4, 8))
    comp.add_stmt(
        Stmt("$a$(i,j) = 2 * $a$(i,j);", "{[q,i,j]: 0 <= q < P && 0 <= i < 4 && 0 <= j < 8}")
    )
    snd = comp.send("{[q]: 0 <= q < P - 1}", "a", [3, 0], 8, "q + 1")
    rcv = comp.receive("{[q]: 1 <= q < P}", "a", [0, 0], 8, "q - 1")
    assert (snd.kind, snd.target, snd.index, snd.count, snd.peer) == (
        "send",
        "a",
        ("3", "0"),
        "8",
        "q + 1",
    )
    assert snd.tags == {"q": ("distribute",)}
    assert snd in comp.stmts
    assert rcv.writes[0][0] == "a"
    assert snd.reads[0][1].is_equal(spf.Relation("{[q] -> [3, e]: 0 <= e < 8}"))
    program = lower(comp.ir)
    op = program.stmts[1].operation
    assert op is not None
    peer = None if op.peer is None else to_c(op.peer)
    assert (op.kind, op.buffer, tuple(map(to_c, op.index)), to_c(op.count), peer) == (
        "send",
        "a",
        ("3", "0"),
        "8",
        "(q) + 1",
    )
    assert op.ctype == "double"
    with pytest.raises(CodegenError, match='target "mpi"'):
        comp.codegen("c", check=False)
    with pytest.raises(SpfError, match="send operation"):
        comp.interpret(a=np.zeros((4, 8)), P=2)


def test_operation_arguments_are_checked() -> None:
    comp = pair()
    with pytest.raises(UndeclaredError, match="unknown buffer or data space 'z'"):
        comp.send("{[q]: 0 <= q < P}", "z", [0], 1, "q")
    with pytest.raises(ArityError, match="at least one variable"):
        comp.send("{[]}", "x", [0], 1, "0")
    with pytest.raises(ArityError, match="entries; 1 expected"):
        comp.receive("{[q]: 0 <= q < P}", "x", [0, 0], 1, "q")
    with pytest.raises(SpfError, match="bad expression"):
        comp.send("{[q]: 0 <= q < P}", "x", [0], 1, "q +")


def test_copies_are_ordered_by_dependences() -> None:
    comp = pair()
    d2h = comp.device_to_host("y")
    assert d2h.reads[0][1].is_equal(spf.Relation("{[] -> [e]: 0 <= e < N}"))
    # API.md section 10: the first order places the copy and is its meaning (before s1 is
    # legal: the order given says the copy reads y before s1 writes it) ...
    early = pair()
    early.device_to_host("y").before("s1", spf.ROOT)
    early.check_legality()
    # ... and moving it again is checked against that placement
    d2h.after("s1", spf.ROOT)
    comp.check_legality()
    with pytest.raises(IllegalScheduleError, match="flow dependence on 'y' from s1 to s2"):
        comp.reschedule(d2h, "s1")  # the copy would read y before s1 writes it


def test_copy_of_a_buffer_orders_against_the_data_space_in_it() -> None:
    comp = pair()
    b = comp.add_buffer("b", ("N",), "double")
    comp.stmts[0].store_in(b, ["i"])
    h = comp.host_to_device(b)
    assert [d.source for d in comp.dependences() if d.sink == h.name] == ["s0"]


def test_barrier_at() -> None:
    comp = kernels.gemm()
    s = comp.stmts[0]
    bar = comp.barrier_at(s, "j")
    assert bar.kind == "barrier"
    assert bar.domain.arity == 2
    assert comp.loop_structure() == "for i:\n  for j:\n    for k:\n      s0\n    s1"
    root = comp.barrier_at(s, spf.ROOT)
    assert root.domain.arity == 0
    with pytest.raises(UndeclaredError, match="unknown loop 'z'"):
        comp.barrier_at(s, "z")


# ----------------------------------------------------------------------------- trace, JSON
def test_trace_records_layout_commands() -> None:
    comp = pair()
    b = comp.add_buffer("b", (), "double", scope="stack")
    comp.stmts[0].store_in(b, [])
    b.allocate_at("s0", "i")
    text = comp.trace.as_python()
    assert text.splitlines() == [
        'comp.stmt("s0").store_in("b", [])',
        'comp.stmt("s0").computation.buffer("b").allocate_at("s0", \'i\')',
    ]
    fresh = pair()
    fresh.add_buffer("b", (), "double", scope="stack")
    comp.trace.replay(fresh)
    assert fresh.storage_of("t") == ("b", ())
    assert fresh.buffer("b").allocation == ("s0", "i")
    ns = {"comp": pair(), "spf": spf}
    ns["comp"].add_buffer("b", (), "double", scope="stack")  # type: ignore[attr-defined]
    exec(text, ns)
    assert ns["comp"].buffer("b").allocation == ("s0", "i")  # type: ignore[attr-defined]


def test_json_round_trip() -> None:
    comp = fused_blur(3)
    comp.add_buffer("g", ("N",), "float32").partition(0, 2, "cyclic")
    comp.device_to_host("out")
    comp.barrier_at("s1", "i")
    comp.buffer("bx_buf").allocate_at("s0", spf.ROOT)
    text = comp.to_json()
    data = json.loads(text)
    assert [s["name"] for s in data["stmts"]] == ["s0", "s1"]
    assert [o["kind"] for o in data["operations"]] == ["device_to_host", "barrier"]
    again = Computation.from_json(text)
    assert again.to_json() == text
    assert again.storage_of("bx") == comp.storage_of("bx")
    assert again.loop_structure() == comp.loop_structure()
    assert again.buffer("bx_buf").allocation == ("s0", spf.ROOT)
    assert [s.name for s in again.stmts] == [s.name for s in comp.stmts]
    assert again.codegen() == comp.codegen()


def test_store_in_outside_the_buffer_is_refused() -> None:
    comp = kernels.blur2d()
    comp.add_buffer("b", (2, "M-2"), "double", scope="stack")
    with pytest.raises(SpfError, match=r"index \[i % 3, j\] puts elements outside buffer 'b'"):
        comp.stmts[0].store_in("b", ["i % 3", "j"])
    comp.add_buffer("b3", (3, "M"), "double", scope="stack")
    comp.stmts[0].store_in("b3", ["i % 3", "j"])


def test_distributed_statements_have_rank_local_memory() -> None:
    """EXAMPLES.md's dscale: each rank scales its own block, so ``distribute`` is legal; a
    statement that is not distributed runs on every rank and still conflicts."""
    comp = Computation("dscale")
    comp.add_data_space("a", "double", shape=(4, 8))
    s = comp.add_stmt(
        Stmt(
            "$a$(i,j) = 2.0 * $a$(i,j) + q;",
            "{[q,i,j]: 0 <= q < P && 0 <= i < 4 && 0 <= j < 8}",
            "{[q,i,j]->[0,q,0,i,0,j,0]}",
        )
    )
    assert not comp.is_parallel_legal(s, "q")
    s.distribute("q")
    comp.check_legality()
    snd = comp.send("{[q]: 0 <= q < P - 1}", "a", [3, 0], 8, "q + 1")
    comp.check_legality()
    flows = [(d.source, d.sink) for d in comp.dependences() if d.kind == "flow"]
    assert ("s0", snd.name) in flows
    assert all(
        d.relation.is_subset(spf.Relation("{[q,i,j] -> [q]}"))
        for d in comp.dependences()
        if d.sink == snd.name
    )


def test_constant_buffers_are_arguments_written_only_by_the_host() -> None:
    comp = pair()
    c = comp.add_buffer("c", ("N",), "double", scope="constant")
    assert c.argument
    assert "const double *restrict c" in comp.codegen()  # nothing stored in it yet
    comp.stmts[0].store_in(c, ["i"])  # written by a host statement: fine
    assert "double *restrict c" in comp.codegen()
    assert "const double *restrict c" not in comp.codegen()
    gpu = Computation("g")
    gpu.add_data_space("t", "double", shape=("N",))
    gpu.add_data_space("x", "double", shape=("N",))
    s = gpu.add_stmt(Stmt("$t$(i) = $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    w = gpu.add_buffer("w", ("N",), "double", scope="constant")
    s.store_in(w, ["i"])
    s.split("i", 4, "i0", "i1").gpu(("i0",), ("i1",))
    with pytest.raises(SpfError, match="constant"):
        gpu.check_legality()  # a kernel must not write constant memory


def test_folding_twice_resizes_the_implicit_buffer() -> None:
    comp = Computation("c")
    comp.add_data_space("y", "double", shape=("N", "M"))
    comp.add_data_space("t", "double", shape=("N", "M"))
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    s0 = comp.add_stmt(Stmt("$t$(i,j) = i + j;", dom, "{[i,j]->[0,i,0,j,0]}"))
    comp.add_stmt(Stmt("$y$(i,j) = $t$(i,j);", dom, "{[i,j]->[0,i,0,j,1]}"))
    s0.storage_fold("i", 2).storage_fold("j", 1)
    assert comp.buffer("t_buf").shape == (2, 1)
    assert comp.storage_of("t") == ("t_buf", ("t0 % 2", "t1 % 1"))
    again = Computation.from_json(comp.to_json())
    assert again.buffer("t_buf").implicit
    y = np.zeros((3, 4))
    comp.compile()(y=y, N=3, M=4)
    np.testing.assert_array_equal(y, np.add.outer(np.arange(3), np.arange(4)))


def test_parallel_loop_over_a_folded_buffer_names_the_buffer_and_the_fix() -> None:
    """A fold's storage dependence is on the buffer itself ('t_buf'), and the refusal of a
    parallel loop over it said only that: the hint naming allocate_at (given for a cache_read
    buffer) looked for a data space of that name. Following the advice is legal and right."""
    comp = spf.Computation("rowtemp")
    comp.add_data_space("x", "double", shape=("N", "K"))
    comp.add_data_space("y", "double", shape=("N", "K"))
    comp.add_local("t", "double", shape=("N", "K"))
    s0 = comp.add_stmt(
        spf.Stmt("$t$(i, c) = 2.0 * $x$(i, c);", "{[i,c]: 0 <= i < N && 0 <= c < K}")
    )
    s1 = comp.add_stmt(
        spf.Stmt("$y$(i, c) = $t$(i, c) + 1.0;", "{[i,c]: 0 <= i < N && 0 <= c < K}")
    )
    s1.after(s0, "i")
    s0.storage_fold("i", 1)
    s0.parallelize("i")
    with pytest.raises(spf.IllegalScheduleError, match="cannot run in parallel") as err:
        comp.check_legality()
    assert (
        "buffer 't_buf' is one array allocated once per call and shared by every iteration of "
        "loop 'i': give each iteration its own with comp.buffer('t_buf').allocate_at('s0', 'i')"
    ) in str(err.value)
    comp.buffer("t_buf").allocate_at("s0", "i")
    comp.check_legality()
    x, y = np.arange(35.0).reshape(7, 5), np.zeros((7, 5))
    comp.compile()(x=x, y=y)
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_an_allocation_at_a_loop_a_later_split_renamed_names_the_buffer() -> None:
    """allocate_at(s0, 'i') then s0.split('i', ...): check_legality and codegen raised a bare
    "unknown loop 'i'; known loops: 'i0', 'i1'" from the storage check, naming no buffer
    and no allocate_at (codegen(check=False) already said which buffer)."""
    comp = spf.Computation("rowtemp")
    comp.add_data_space("x", "double", shape=("N", "K"))
    comp.add_data_space("y", "double", shape=("N", "K"))
    comp.add_local("t", "double", shape=("N", "K"))
    s0 = comp.add_stmt(
        spf.Stmt("$t$(i, c) = 2.0 * $x$(i, c);", "{[i,c]: 0 <= i < N && 0 <= c < K}")
    )
    s1 = comp.add_stmt(
        spf.Stmt("$y$(i, c) = $t$(i, c) + 1.0;", "{[i,c]: 0 <= i < N && 0 <= c < K}")
    )
    s1.after(s0, "i")
    s0.storage_fold("i", 1)
    comp.buffer("t_buf").allocate_at("s0", "i")
    s0.split("i", 2, "i0", "i1")
    message = r"buffer 't_buf' is allocated at loop 'i' of s0 .*allocate_at\('s0', 'i'\)\), which"
    with pytest.raises(spf.ScheduleError, match=message):
        comp.check_legality()
    with pytest.raises(spf.ScheduleError, match=message):
        comp.codegen()


def test_a_store_in_relation_with_named_tuples_says_the_form_it_takes() -> None:
    """isl's usual spelling {bx[a, b] -> T[a, b]} was refused as "unexpected 'bx'; expected
    '[' or ':'", without the form store_in takes (the statement's iterators, unnamed)."""
    comp = spf.kernels.blur2d()
    t = comp.add_buffer("T", ("N", "M"), "double")
    with pytest.raises(
        spf.ScheduleError,
        match=r"bad index relation .*with unnamed tuples: \{\[i, j\] -> \[\.\.\.\]\}",
    ):
        comp.stmt("s0").store_in(t, "{bx[a,b] -> T[a,b]}")
    comp.stmt("s0").store_in(t, "{[i,j] -> [i,j]}")
    assert comp.storage_of("bx") == ("T", ("t0", "t1"))


@pytest.mark.parametrize("index", [["i"], ["N - 1 - i"], ["2*i"]])
def test_a_copy_of_a_data_space_stored_one_element_per_location_is_accepted(
    index: list[str],
) -> None:
    """A host/device copy reads its whole data space, a region and not one element per
    instance, so the storage check could not tell its elements apart and refused any layout
    of it as reusing storage too early ('s0 writes b into T at a location that still holds
    the value of b that s0 wrote'), even the identity. A layout that gives every element its
    own location cannot reuse one; a fold still can, and stays refused."""

    def build(idx: list[str], extent: str) -> spf.Computation:
        comp = spf.Computation("twice")
        comp.add_data_space("a", "double", shape=("N",))
        comp.add_data_space("b", "double", shape=("N",))
        s0 = comp.add_stmt(spf.Stmt("$b$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
        comp.add_stmt(spf.Stmt("$a$(i) = $b$(i) + 1;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
        s0.store_in(comp.add_buffer("T", (extent,), "double"), idx)
        comp.host_to_device("b")  # after both statements: C prints it as a comment
        return comp

    comp = build(index, "2*N" if index == ["2*i"] else "N")
    a, t = np.arange(9.0), np.zeros(18 if index == ["2*i"] else 9)
    comp.compile()(a=a, T=t)
    np.testing.assert_array_equal(a, 2 * np.arange(9.0) + 1)
    with pytest.raises(spf.IllegalScheduleError, match="reuses storage too early"):
        build(["i % 3"], "3").check_legality()

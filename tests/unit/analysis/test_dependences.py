"""Unit tests of ``Computation.dependences()``, ``check_legality()`` and ``is_parallel_legal()``.

Every expected answer is derived by hand (the derivations are in the comments). The brute-force
tests run the computations on random small CSR patterns: each statement instance's accesses and
schedule time are computed here in plain Python (only ``stmt.domain.points`` comes from spf),
and every concrete dependence (kind, source, sink, data space, schedule position of the first
time difference) must be reported, with the concrete instance pair inside its relation.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from spf import (
    Computation,
    Dependence,
    IllegalScheduleError,
    Relation,
    SpfError,
    Stmt,
    UndeclaredError,
)

DOM1 = "{[i]: 0 <= i < N}"
SPMV_DOMAIN = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
FS_DOMAIN = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && j < i}"
SCALE_DOMAIN = "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}"
JACOBI_DOMAIN = "{[i,j]: 1 <= i < N-1 && 1 <= j < N-1}"
JACOBI_SRC = "$B$(i,j) = 0.2 * ($A$(i,j) + $A$(i-1,j) + $A$(i+1,j) + $A$(i,j-1) + $A$(i,j+1));"
GS_SRC = "$A$(i,j) = 0.25 * ($A$(i-1,j) + $A$(i+1,j) + $A$(i,j-1) + $A$(i,j+1));"
ROWPTR = {"domain": "{[i]: 0 <= i <= N}", "range": "{[v]: 0 <= v <= NNZ}"}
KINDS = ("flow", "anti", "output")

Fact = tuple[str, str, str, str, tuple[str, ...]]
"""(kind, source, sink, data space, carried_by)"""


# ================================================================================ builders
def dense_mv() -> Computation:
    comp = Computation("mv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(Stmt("$y$(i) += $A$(i,j) * $x$(j);", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    return comp


def spmv(*, monotonic: bool = True, given: bool = True) -> Computation:
    comp = Computation("spmv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf("rowptr", monotonic="nondecreasing" if monotonic else None, **ROWPTR)
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    accesses: dict[str, Any] = {}
    if given:
        accesses = {
            "reads": [("y", "{[i,k,j]->[i]}"), ("A", "{[i,k,j]->[k]}"), ("x", "{[i,k,j]->[j]}")],
            "writes": [("y", "{[i,k,j]->[i]}")],
        }
    comp.add_stmt(
        Stmt("$y$(i) += $A$(k) * $x$(j);", SPMV_DOMAIN, "{[i,k,j] -> [0,i,0,k,0,j,0]}", **accesses)
    )
    return comp


def csr_scale(*, monotonic: bool = True) -> Computation:
    """In-place row scaling of a CSR matrix: rows are disjoint only if rowptr is sorted."""
    comp = Computation("scale")
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("d", "double", shape=("N",))
    comp.declare_uf("rowptr", monotonic="nondecreasing" if monotonic else None, **ROWPTR)
    comp.add_stmt(Stmt("$A$(k) *= $d$(i);", SCALE_DOMAIN, "{[i,k] -> [0,i,0,k,0]}"))
    return comp


def forward_solve() -> Computation:
    comp = Computation("fs")
    for d in ("u", "f", "l", "diag"):
        comp.add_data_space(d, "double*")
    comp.add_stmt(Stmt("$u$(i) = $f$(i);", DOM1, "{[i]->[0,i,0,0,0]}"))
    comp.add_stmt(Stmt("$u$(i) -= $l$(k) * $u$(j);", FS_DOMAIN, "{[i,k,j]->[0,i,1,k,0]}"))
    comp.add_stmt(Stmt("$u$(i) /= $diag$(i);", DOM1, "{[i]->[0,i,2,0,0]}"))
    return comp


def jacobi() -> Computation:
    comp = Computation("jacobi")
    comp.add_data_space("B", "double", shape=("N", "N"))
    comp.add_data_space("A", "double", shape=("N", "N"))
    comp.add_stmt(Stmt(JACOBI_SRC, JACOBI_DOMAIN))
    comp.add_stmt(Stmt("$A$(i,j) = $B$(i,j);", JACOBI_DOMAIN))
    return comp


def gauss_seidel() -> Computation:
    comp = Computation("gs")
    comp.add_data_space("A", "double", shape=("N", "N"))
    comp.add_stmt(Stmt(GS_SRC, JACOBI_DOMAIN))
    return comp


def coo() -> Computation:
    comp = Computation("coo")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(Stmt("$y$(row(k)) += $A$(k) * $x$(col(k));", "{[k]: 0 <= k < NNZ}"))
    return comp


def zero_d(domain: str) -> Computation:
    comp = Computation("total")
    comp.add_data_space("t", "double")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$ = 0;", domain))
    comp.add_stmt(Stmt("$t$ += $x$(i);", DOM1))
    return comp


def prefix_sum() -> Computation:
    comp = Computation("prefix")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(Stmt("$a$(i) = $a$(i-1) + $a$(i);", "{[i]: 1 <= i < N}"))
    return comp


def producer_consumer() -> Computation:
    comp = Computation("two")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("b", "double", shape=("N",))
    comp.add_stmt(Stmt("$a$(i) = 1;", DOM1))
    comp.add_stmt(Stmt("$b$(i) = $a$(i);", DOM1))
    return comp


def uf_in_sink() -> Computation:
    """A 1-d statement, then a 2-d one whose domain constrains a UF of its iterators."""
    comp = Computation("ufsink")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$x$(i) = 1;", DOM1))
    comp.add_stmt(Stmt("$x$(i) += 1;", "{[i,k]: 0 <= i < N && k = i + 1 && f(i) < f(k)}"))
    return comp


def mixed_arities() -> Computation:
    comp = Computation("pad")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("s", "double")
    comp.add_stmt(Stmt("$a$(i) = 1;", DOM1))  # [0, i, 0]
    comp.add_stmt(Stmt("$s$ += $a$(i) * $a$(j);", "{[i,j]: 0 <= i < N && 0 <= j < N}"))
    return comp


@functools.cache
def deps_of(name: str) -> tuple[Dependence, ...]:
    """Dependences of a named computation (computed once per test session)."""
    return tuple(BUILDERS[name]().dependences())


BUILDERS: dict[str, Callable[[], Computation]] = {
    "dense_mv": dense_mv,
    "spmv": spmv,
    "spmv_inferred": lambda: spmv(given=False),
    "spmv_not_monotonic": lambda: spmv(monotonic=False),
    "csr_scale": csr_scale,
    "csr_scale_not_monotonic": lambda: csr_scale(monotonic=False),
    "forward_solve": forward_solve,
    "jacobi": jacobi,
    "gauss_seidel": gauss_seidel,
    "coo": coo,
    "zero_d_const": lambda: zero_d("{[0]}"),
    "zero_d_empty": lambda: zero_d("{[]}"),
    "prefix_sum": prefix_sum,
    "producer_consumer": producer_consumer,
    "uf_in_sink": uf_in_sink,
    "mixed_arities": mixed_arities,
}


def facts(deps: Sequence[Dependence]) -> set[Fact]:
    return {(d.kind, d.source, d.sink, d.data_space, d.carried_by) for d in deps}


def levels(deps: Sequence[Dependence]) -> dict[tuple[str, str, str, str], tuple[int, ...]]:
    return {(d.kind, d.source, d.sink, d.data_space): d.levels for d in deps}


def all_kinds(src: str, snk: str, ds: str, by: tuple[str, ...]) -> set[Fact]:
    return {(kind, src, snk, ds, by) for kind in KINDS}


def only(deps: Sequence[Dependence], kind: str, src: str, snk: str, ds: str) -> Dependence:
    (dep,) = [d for d in deps if (d.kind, d.source, d.sink, d.data_space) == (kind, src, snk, ds)]
    return dep


# ================================================================================ hand-derived
def test_dense_mv() -> None:
    # y(i) is read and written by every (i, j): only instances of one row touch it, so j carries
    # flow, anti and output; different rows never share an element of y
    comp = dense_mv()
    deps = comp.dependences()
    assert facts(deps) == all_kinds("s0", "s0", "y", ("j",))
    assert all(d.levels == (3,) for d in deps)
    assert comp.is_parallel_legal("s0", "i")
    assert not comp.is_parallel_legal("s0", "j")
    assert comp.is_parallel_legal("s0", 0)
    assert not comp.is_parallel_legal("s0", 1)
    assert comp.is_parallel_legal(comp.stmt(0), "i")
    flow = only(deps, "flow", "s0", "s0", "y")
    want = Relation("{[i,j] -> [i,jp] : 0 <= i < N && 0 <= j < jp < M}")
    assert flow.relation.is_equal(want), flow.relation


@pytest.mark.parametrize("name", ["spmv", "spmv_inferred", "spmv_not_monotonic"])
def test_spmv(name: str) -> None:
    # y is indexed by i, so two instances touch the same y(i) only within one row: k carries
    # it whether or not rowptr is declared nondecreasing (j = col(k) is a function of k)
    comp = BUILDERS[name]()
    deps = comp.dependences()
    assert facts(deps) == all_kinds("s0", "s0", "y", ("k",))
    assert all(d.levels == (3,) for d in deps)
    assert comp.is_parallel_legal("s0", "i")
    assert not comp.is_parallel_legal("s0", "k")
    assert comp.is_parallel_legal("s0", "j")
    for d in deps:
        assert (d.relation.in_arity, d.relation.out_arity) == (3, 3)


def test_csr_scale_rows_are_disjoint() -> None:
    # A(k) is touched by one (i, k) per k when the rows do not overlap: no dependence at all
    comp = csr_scale()
    assert comp.dependences() == []
    assert comp.is_parallel_legal("s0", "i")
    assert comp.is_parallel_legal("s0", "k")
    comp.check_legality()


def test_csr_scale_without_monotonic_rowptr() -> None:
    # rowptr unconstrained: rows may overlap, so one k may belong to rows i < ip: i carries it
    comp = csr_scale(monotonic=False)
    deps = comp.dependences()
    assert facts(deps) == all_kinds("s0", "s0", "A", ("i",))
    assert all(d.levels == (1,) for d in deps)
    assert not comp.is_parallel_legal("s0", "i")
    assert comp.is_parallel_legal("s0", "k")


# Forward solve, schedules s0 [0,i,0,0,0], s1 [0,i,1,k,0], s2 [0,i,2,0,0]; s0 writes u(i),
# s1 reads u(i), u(j) (j = col(k) < i) and writes u(i), s2 reads and writes u(i):
# flow   s0->s1: u(i) read by s1 in row i (position 2) or as u(j) by a later row (i carries)
# flow   s0->s2, s1->s2: the same row, position 2
# flow   s1->s1: u(i) in a later k of the row (k) or as u(j) in a later row (i)
# flow   s2->s1: u(i) read as u(j) by a later row (i)
# anti   s1->s1: u(i) read, then written by a later k of the row (k); s1->s2: same row
# output s0->s1, s0->s2, s1->s2: same row, position 2; s1->s1: later k of the row
# nothing else: s0 reads only f, a later row never writes an element an earlier row used
FS_FACTS: dict[tuple[str, str, str, str], tuple[tuple[str, ...], tuple[int, ...]]] = {
    ("flow", "s0", "s1", "u"): (("i",), (1, 2)),
    ("flow", "s0", "s2", "u"): ((), (2,)),
    ("flow", "s1", "s1", "u"): (("i", "k"), (1, 3)),
    ("flow", "s1", "s2", "u"): ((), (2,)),
    ("flow", "s2", "s1", "u"): (("i",), (1,)),
    ("anti", "s1", "s1", "u"): (("k",), (3,)),
    ("anti", "s1", "s2", "u"): ((), (2,)),
    ("output", "s0", "s1", "u"): ((), (2,)),
    ("output", "s0", "s2", "u"): ((), (2,)),
    ("output", "s1", "s1", "u"): (("k",), (3,)),
    ("output", "s1", "s2", "u"): ((), (2,)),
}


def test_forward_solve() -> None:
    comp = forward_solve()
    deps = comp.dependences()
    assert facts(deps) == {(*key, by) for key, (by, _) in FS_FACTS.items()}
    assert levels(deps) == {key: lv for key, (_, lv) in FS_FACTS.items()}
    assert len(deps) == len(FS_FACTS)  # one Dependence per (kind, source, sink, data space)
    assert not comp.is_parallel_legal("s1", "i")
    assert not comp.is_parallel_legal("s1", "k")
    assert not comp.is_parallel_legal("s0", "i")  # i is shared by s0, s1 and s2
    assert not comp.is_parallel_legal("s2", "i")
    comp.check_legality()


def test_forward_solve_relations() -> None:
    deps = forward_solve().dependences()
    same_row = Relation("{[i] -> [ip] : 0 <= i < N && ip = i}")
    assert only(deps, "flow", "s0", "s2", "u").relation.is_equal(same_row)
    s2_s1 = Relation(
        "{[i] -> [ip, kp, jp] : 0 <= i < ip < N && rowptr(ip) <= kp < rowptr(ip+1) && "
        "jp = col(kp) && jp = i}"
    )
    assert only(deps, "flow", "s2", "s1", "u").relation.is_equal(s2_s1)


def test_jacobi() -> None:
    # s0 reads A and writes B, s1 (after the whole update) reads B and writes A: within s0
    # nothing is written twice or read after written, so both loops of the update are parallel
    comp = jacobi()
    deps = comp.dependences()
    assert facts(deps) == {("flow", "s0", "s1", "B", ()), ("anti", "s0", "s1", "A", ())}
    assert all(d.levels == (0,) for d in deps)
    for stmt in ("s0", "s1"):
        for loop in ("i", "j"):
            assert comp.is_parallel_legal(stmt, loop), (stmt, loop)
    flow = only(deps, "flow", "s0", "s1", "B").relation
    assert flow.is_equal(Relation("{[i,j] -> [i,j] : 1 <= i < N-1 && 1 <= j < N-1}")), flow
    anti = only(deps, "anti", "s0", "s1", "A").relation
    # A(i,j) of the update's five reads, overwritten by the copy-back of the same element
    assert anti.is_subset(Relation("{[i,j] -> [ip,jp] : -1 <= ip - i <= 1 && -1 <= jp - j <= 1}"))
    assert anti.is_subset(Relation(f"{{[i,j] -> [ip,jp] : {JACOBI_DOMAIN[8:-1]}}}"))
    for pair in (((2, 3), (1, 3)), ((2, 3), (2, 3)), ((2, 3), (2, 4))):
        assert anti.contains(pair, params={"N": 6})
    assert not anti.contains(((2, 3), (3, 4)), params={"N": 6})  # diagonal: not read


def test_gauss_seidel() -> None:
    # in place: A(i-1,j) / A(i,j-1) were written earlier (flow), A(i+1,j) / A(i,j+1) are
    # written later (anti); each carried by i and by j; A(i,j) written once: no output
    comp = gauss_seidel()
    deps = comp.dependences()
    assert facts(deps) == {
        ("flow", "s0", "s0", "A", ("i", "j")),
        ("anti", "s0", "s0", "A", ("i", "j")),
    }
    assert not comp.is_parallel_legal("s0", "i")
    assert not comp.is_parallel_legal("s0", "j")


def test_coo_is_kept_conservatively() -> None:
    # two nonzeros k < kp of the same row update the same y: row values are unknown, so k
    # carries flow, anti and output on y
    comp = coo()
    deps = comp.dependences()
    assert facts(deps) == all_kinds("s0", "s0", "y", ("k",))
    assert not comp.is_parallel_legal("s0", "k")
    want = Relation("{[k] -> [kp] : 0 <= k < kp < NNZ && row(kp) = row(k)}")
    for d in deps:
        assert d.relation.is_equal(want), d.relation


ZERO_D_FACTS = {
    ("flow", "s0", "s1", "t", ()),
    ("output", "s0", "s1", "t", ()),
    *all_kinds("s1", "s1", "t", ("i",)),
}


@pytest.mark.parametrize("domain", ["{[0]}", "{[]}"])
def test_zero_d(domain: str) -> None:
    # t = 0 once, then t += x(i) for every i: s0 before all of s1 (root position), the
    # accumulation carried by i
    comp = zero_d(domain)
    deps = comp.dependences()
    assert facts(deps) == ZERO_D_FACTS
    assert not comp.is_parallel_legal("s1", "i")
    comp.check_legality()


def test_prefix_sum() -> None:
    comp = prefix_sum()
    deps = comp.dependences()
    assert facts(deps) == {("flow", "s0", "s0", "a", ("i",))}  # a(i) written once: no output
    (dep,) = deps
    assert dep.relation.is_equal(Relation("{[i] -> [i + 1] : 1 <= i < N - 1}"))
    assert not comp.is_parallel_legal("s0", "i")


def test_independent_statements() -> None:
    comp = Computation("c")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("b", "double", shape=("N",))
    comp.add_stmt(Stmt("$a$(i) = 2 * $a$(i);", DOM1))
    comp.add_stmt(Stmt("$b$(i) = 3;", DOM1))
    assert comp.dependences() == []
    assert comp.is_parallel_legal("s0", "i")


def test_no_statements() -> None:
    comp = Computation("empty")
    comp.add_data_space("a", "double", shape=("N",))
    assert comp.dependences() == []
    comp.check_legality()


def test_mixed_schedule_arities_are_padded() -> None:
    # s0 [0,i,0] is padded to [0,i,0,0,0]; s1 [1,i,0,j,0] reads a after all of s0 (root
    # position 0: loop-independent) and accumulates s over i and j
    deps = mixed_arities().dependences()
    assert facts(deps) == {
        ("flow", "s0", "s1", "a", ()),
        *all_kinds("s1", "s1", "s", ("i", "j")),
    }
    assert levels(deps)[("flow", "s0", "s1", "a")] == (0,)
    assert levels(deps)[("output", "s1", "s1", "s")] == (1, 3)


def test_parallel_legal_with_mixed_schedule_arities() -> None:
    comp = mixed_arities()
    assert comp.is_parallel_legal("s0", "i")
    assert comp.is_parallel_legal("s0", 0)
    assert not comp.is_parallel_legal("s1", "i")
    assert not comp.is_parallel_legal("s1", "j")


def test_uf_constraint_on_sink_iterators() -> None:
    # s0 writes every x(i) before s1 (root position); s1 (i, i+1) reads and writes x(i) when
    # f(i) < f(i+1), which the UF values allow: flow and output s0 -> s1, loop-independent;
    # s1 touches each x(i) once: nothing within s1
    deps = uf_in_sink().dependences()
    assert facts(deps) == {("flow", "s0", "s1", "x", ()), ("output", "s0", "s1", "x", ())}
    assert all(d.levels == (0,) for d in deps)


def test_dependence_fields() -> None:
    for name in ("forward_solve", "jacobi", "coo"):
        comp = BUILDERS[name]()
        for d in deps_of(name):
            assert d.kind in KINDS
            assert d.data_space in comp.data_spaces
            src, snk = comp.stmt(d.source), comp.stmt(d.sink)
            assert d.relation.in_arity == src.domain.arity
            assert d.relation.out_arity == snk.domain.arity
            assert set(d.carried_by) <= set(src.loops)
            assert d.levels == tuple(sorted(d.levels))
            text = str(d)
            assert d.kind in text
            assert d.source in text
            assert repr(d.data_space) in text


def test_dependences_are_deterministic() -> None:
    a = [str(d) for d in forward_solve().dependences()]
    b = [str(d) for d in forward_solve().dependences()]
    assert a == b


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_dependences_survive_json(name: str) -> None:
    comp = BUILDERS[name]()
    back = Computation.from_json(comp.to_json())
    assert [str(d) for d in back.dependences()] == [str(d) for d in deps_of(name)]


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_original_schedules_are_legal(name: str) -> None:
    BUILDERS[name]().check_legality()


# ================================================================================ legality
def with_schedule(comp: Computation, stmt: int, schedule: str) -> Computation:
    """A copy of ``comp`` whose statement ``stmt`` has another current schedule (through JSON;
    the scheduling commands of API.md section 3 are not implemented yet)."""
    data = json.loads(comp.to_json())
    data["stmts"][stmt]["current_schedule"] = schedule
    return Computation.from_json(json.dumps(data))


def test_reversed_loop_is_illegal() -> None:
    comp = with_schedule(prefix_sum(), 0, "{[i] -> [0, r, 0] : r = -i}")
    assert comp.stmt(0).loops == ("r",)
    with pytest.raises(IllegalScheduleError) as info:
        comp.check_legality()
    message = str(info.value)
    for part in ("flow", "'a'", "s0", "'r'"):
        assert part in message, message


def test_reordered_statements_are_illegal() -> None:
    comp = with_schedule(producer_consumer(), 1, "{[i] -> [-1, i, 0]}")
    with pytest.raises(IllegalScheduleError) as info:
        comp.check_legality()
    message = str(info.value)
    for part in ("flow", "'a'", "s0", "s1"):
        assert part in message, message


def test_fused_statements_are_legal() -> None:
    comp = with_schedule(producer_consumer(), 1, "{[i] -> [0, i, 1]}")
    comp.check_legality()
    deps = comp.dependences()
    assert facts(deps) == {("flow", "s0", "s1", "a", ())}
    assert levels(deps)[("flow", "s0", "s1", "a")] == (2,)
    assert comp.is_parallel_legal("s0", "i")
    assert comp.is_parallel_legal("s1", "i")


def test_fused_with_shift_carries_the_dependence() -> None:
    # s1 reads a(i) one iteration after s0 wrote it: now carried by the shared loop
    comp = with_schedule(producer_consumer(), 1, "{[i] -> [0, ip, 1] : ip = i + 1}")
    comp.check_legality()
    deps = comp.dependences()
    assert facts(deps) == {("flow", "s0", "s1", "a", ("i",))}
    assert not comp.is_parallel_legal("s1", "ip")
    assert not comp.is_parallel_legal("s0", "i")


def test_legality_of_spmv_row_reversal() -> None:
    # rows are independent: reversing i is legal; reversing k is not
    rows = with_schedule(spmv(), 0, "{[i,k,j] -> [0,r,0,k,0,j,0] : r = -i}")
    rows.check_legality()
    ks = with_schedule(spmv(), 0, "{[i,k,j] -> [0,i,0,r,0,j,0] : r = -k}")
    with pytest.raises(IllegalScheduleError, match="'y'"):
        ks.check_legality()


# ================================================================================ bad input
def test_is_parallel_legal_unknown_loop() -> None:
    comp = forward_solve()
    with pytest.raises(UndeclaredError) as info:
        comp.is_parallel_legal("s1", "z")
    assert "'i'" in str(info.value)
    assert "'k'" in str(info.value)
    with pytest.raises(UndeclaredError):
        comp.is_parallel_legal("s1", 2)
    with pytest.raises(UndeclaredError):
        comp.is_parallel_legal("s1", -1)
    with pytest.raises(UndeclaredError):
        comp.is_parallel_legal("s0", "k")  # k is a loop of s1 only
    with pytest.raises(SpfError):
        comp.is_parallel_legal("s1", 1.0)  # type: ignore[arg-type]


def test_is_parallel_legal_unknown_stmt() -> None:
    comp = forward_solve()
    with pytest.raises(UndeclaredError, match="'s2'"):
        comp.is_parallel_legal("s7", "i")


# ================================================================================ brute force
Point = tuple[int, ...]
Access = tuple[str, tuple[int, ...], bool]
"""(data space, element index, is a write)"""


@dataclass(frozen=True)
class StmtModel:
    """A statement's schedule and accesses, written here independently of spf."""

    time: Callable[[Point], tuple[int, ...]]
    loops: Mapping[int, str]
    """Schedule position -> loop name."""
    accesses: Callable[[Point, Mapping[str, np.ndarray]], list[Access]]


def _rd(ds: str, *idx: int) -> Access:
    return (ds, tuple(idx), False)


def _wr(ds: str, *idx: int) -> Access:
    return (ds, tuple(idx), True)


MODELS: dict[str, dict[str, StmtModel]] = {
    "spmv": {
        "s0": StmtModel(
            lambda p: (0, p[0], 0, p[1], 0, p[2], 0),
            {1: "i", 3: "k", 5: "j"},
            lambda p, u: [_rd("y", p[0]), _rd("A", p[1]), _rd("x", p[2]), _wr("y", p[0])],
        )
    },
    "csr_scale": {
        "s0": StmtModel(
            lambda p: (0, p[0], 0, p[1], 0),
            {1: "i", 3: "k"},
            lambda p, u: [_rd("A", p[1]), _rd("d", p[0]), _wr("A", p[1])],
        )
    },
    "forward_solve": {
        "s0": StmtModel(
            lambda p: (0, p[0], 0, 0, 0), {1: "i"}, lambda p, u: [_rd("f", p[0]), _wr("u", p[0])]
        ),
        "s1": StmtModel(
            lambda p: (0, p[0], 1, p[1], 0),
            {1: "i", 3: "k"},
            lambda p, u: [
                _rd("u", p[0]),
                _rd("l", p[1]),
                _rd("u", int(u["col"][p[1]])),
                _wr("u", p[0]),
            ],
        ),
        "s2": StmtModel(
            lambda p: (0, p[0], 2, 0, 0),
            {1: "i"},
            lambda p, u: [_rd("u", p[0]), _rd("diag", p[0]), _wr("u", p[0])],
        ),
    },
    "coo": {
        "s0": StmtModel(
            lambda p: (0, p[0], 0),
            {1: "k"},
            lambda p, u: [
                _rd("y", int(u["row"][p[0]])),
                _rd("A", p[0]),
                _rd("x", int(u["col"][p[0]])),
                _wr("y", int(u["row"][p[0]])),
            ],
        )
    },
    "gauss_seidel": {
        "s0": StmtModel(
            lambda p: (0, p[0], 0, p[1], 0),
            {1: "i", 3: "j"},
            lambda p, u: [
                _rd("A", p[0] - 1, p[1]),
                _rd("A", p[0] + 1, p[1]),
                _rd("A", p[0], p[1] - 1),
                _rd("A", p[0], p[1] + 1),
                _wr("A", p[0], p[1]),
            ],
        )
    },
    "zero_d_const": {
        "s0": StmtModel(lambda p: (0, 0, 0), {}, lambda p, u: [_wr("t")]),
        "s1": StmtModel(
            lambda p: (1, p[0], 0), {1: "i"}, lambda p, u: [_rd("t"), _rd("x", p[0]), _wr("t")]
        ),
    },
}
MODELS["uf_in_sink"] = {
    "s0": StmtModel(lambda p: (0, p[0], 0, 0, 0), {1: "i"}, lambda p, u: [_wr("x", p[0])]),
    "s1": StmtModel(
        lambda p: (1, p[0], 0, p[1], 0),
        {1: "i", 3: "k"},
        lambda p, u: [_rd("x", p[0]), _wr("x", p[0])],
    ),
}
MODELS["spmv_not_monotonic"] = MODELS["spmv"]
MODELS["csr_scale_not_monotonic"] = MODELS["csr_scale"]


@dataclass(frozen=True)
class Concrete:
    """One concrete dependence: a pair of instances and where their times first differ."""

    kind: str
    source: str
    sink: str
    data_space: str
    level: int
    pair: tuple[Point, Point]


def concrete_dependences(
    comp: Computation,
    models: Mapping[str, StmtModel],
    params: Mapping[str, int],
    ufs: Mapping[str, np.ndarray],
) -> list[Concrete]:
    """All concrete dependences of ``comp`` for these parameter and UF values."""
    instances = sorted(
        (models[s.name].time(p), s.name, p)
        for s in comp.stmts
        for p in s.domain.points(params, ufs)
    )
    times = [t for t, _, _ in instances]
    assert len(set(times)) == len(times), "the schedule is not injective"
    accesses = [models[name].accesses(p, ufs) for _, name, p in instances]
    out = []
    for a in range(len(instances)):
        ta, sa, pa = instances[a]
        for b in range(a + 1, len(instances)):
            tb, sb, pb = instances[b]
            level = next(d for d in range(len(ta)) if ta[d] != tb[d])
            for ds, idx, wa in accesses[a]:
                for ds2, idx2, wb in accesses[b]:
                    if ds != ds2 or idx != idx2 or not (wa or wb):
                        continue
                    kind = "output" if wa and wb else "flow" if wa else "anti"
                    out.append(Concrete(kind, sa, sb, ds, level, (pa, pb)))
    return out


def random_csr(seed: int, *, square: bool, sorted_rowptr: bool = True) -> dict[str, Any]:
    """A random small CSR pattern (empty rows likely) as parameters and UF arrays."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 6))
    m = n if square else int(rng.integers(1, 6))
    lengths = rng.integers(0, m + 1, size=n) * (rng.random(n) < 0.8)
    rowptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(rowptr[-1])
    col = rng.integers(0, m, size=nnz).astype(np.int32) if m else np.zeros(0, np.int32)
    if not sorted_rowptr:  # any values in [0, NNZ]: rows may overlap
        rowptr = rng.integers(0, nnz + 1, size=n + 1).astype(np.int32)
    row = rng.integers(0, max(n, 1), size=nnz).astype(np.int32)
    return {
        "params": {"N": n, "M": m, "NNZ": nnz},
        "ufs": {"rowptr": rowptr, "col": col, "row": row},
    }


def check_sound(
    name: str,
    params: Mapping[str, int],
    ufs: Mapping[str, np.ndarray],
    *,
    relations: bool = True,
) -> set[tuple[str, str, str, str, int]]:
    """Every concrete dependence is reported (with ``relations``: its instance pair inside the
    reported relation); returns the (kind, source, sink, data space, level) facts seen."""
    comp = BUILDERS[name]()
    models = MODELS[name]
    deps = deps_of(name)
    seen: set[tuple[str, str, str, str, int]] = set()
    checked: set[tuple[int, tuple[Point, Point]]] = set()
    used = {n: v for n, v in ufs.items() if n in comp.ufs}
    for c in concrete_dependences(comp, models, params, used):
        seen.add((c.kind, c.source, c.sink, c.data_space, c.level))
        key = (c.kind, c.source, c.sink, c.data_space)
        matches = [k for k, d in enumerate(deps) if (d.kind, d.source, d.sink, d.data_space) == key]
        assert matches, f"{c} is not reported for {params} {used}"
        (k,) = matches
        dep = deps[k]
        assert c.level in dep.levels, f"{c}: level {c.level} not in {dep}"
        loop = models[c.source].loops.get(c.level)
        if loop is not None:
            assert loop in dep.carried_by, f"{c}: loop {loop} not in {dep}"
        if relations and (k, c.pair) not in checked:
            checked.add((k, c.pair))
            assert dep.relation.contains(c.pair, params=params, ufs=used), (
                f"{c.pair} not in {dep.relation} for {params} {used}"
            )
    return seen


SEEDS = range(12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "name", ["spmv", "spmv_not_monotonic", "csr_scale", "forward_solve", "coo"]
)
def test_sound_on_random_csr(name: str, seed: int) -> None:
    data = random_csr(seed, square=name == "forward_solve")
    check_sound(name, data["params"], data["ufs"])


@pytest.mark.parametrize("seed", SEEDS)
def test_sound_on_overlapping_rows(seed: int) -> None:
    data = random_csr(seed, square=False, sorted_rowptr=False)
    check_sound("csr_scale_not_monotonic", data["params"], data["ufs"])


@pytest.mark.parametrize("seed", range(6))
def test_sound_uf_in_sink(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6))
    check_sound("uf_in_sink", {"N": n}, {"f": rng.integers(0, 4, size=n + 1)})


@pytest.mark.parametrize("n", [0, 1, 3, 5])
def test_sound_dense(n: int) -> None:
    check_sound("gauss_seidel", {"N": n}, {})
    check_sound("zero_d_const", {"N": n}, {})


@pytest.mark.parametrize(
    ("name", "square", "sorted_rowptr"),
    [
        ("forward_solve", True, True),
        ("spmv", False, True),
        ("csr_scale_not_monotonic", False, False),
        ("coo", False, True),
    ],
)
def test_reported_facts_occur(name: str, square: bool, sorted_rowptr: bool) -> None:
    """Precision: over a few random patterns every reported dependence level occurs."""
    seen: set[tuple[str, str, str, str, int]] = set()
    for seed in range(40):
        data = random_csr(seed, square=square, sorted_rowptr=sorted_rowptr)
        seen |= check_sound(name, data["params"], data["ufs"], relations=False)
    reported = {
        (d.kind, d.source, d.sink, d.data_space, level) for d in deps_of(name) for level in d.levels
    }
    assert reported == seen


# ----------------------------------------------------------------------------- GPU memory


def _tile_comp(scope: str, gpu: bool) -> Computation:
    """``t(j) = x(4*b+j); y(4*b+j) = t(3-j)`` per block ``b``, ``t`` in a ``scope`` buffer."""
    comp = Computation("tiles")
    for name, shape in (("x", ("N",)), ("y", ("N",)), ("t", (4,))):
        comp.add_data_space(name, "double", shape=shape)
    dom = "{[b,j]: 0 <= b && 0 <= j < 4 && 4*b+4 <= N}"
    w = comp.add_stmt(Stmt("$t$(j) = $x$(4*b+j);", dom, "{[b,j]->[0,b,0,j,0]}"))
    r = comp.add_stmt(Stmt("$y$(4*b+j) = $t$(3-j);", dom, "{[b,j]->[0,b,1,j,0]}"))
    w.store_in(comp.add_buffer("tb", (4,), "double", scope=scope), ["j"])
    if gpu:
        for s in (w, r):
            s.gpu(("b",), ("j",))
    return comp


def _carriers(comp: Computation, space: str) -> set[str]:
    return {loop for d in comp.dependences() if d.data_space == space for loop in d.carried_by}


def test_shared_memory_is_private_to_each_block() -> None:
    # in one global array, block b' > b overwrites t: carried by b (output, anti and flow);
    # in shared memory every block has its own t: only the order between the two nests
    assert _carriers(_tile_comp("global", gpu=True), "t") == {"b"}
    shared = _tile_comp("shared", gpu=True)
    assert _carriers(shared, "t") == set()
    flows = [d for d in shared.dependences() if d.data_space == "t" and d.kind == "flow"]
    assert [(d.source, d.sink, d.levels) for d in flows] == [("s0", "s1", (2,))]
    assert flows[0].relation.is_equal(
        Relation(
            "{[b,j] -> [bp,jp] : bp = b and jp = 3 - j and 0 <= b and 0 <= j < 4 and 4*b+4 <= N}"
        )
    )
    shared.check_legality()
    with pytest.raises(IllegalScheduleError, match=r"loop 'b' of s\d cannot run in parallel"):
        _tile_comp("global", gpu=True).check_legality()


def test_gpu_memory_scopes_change_nothing_without_gpu_loops() -> None:
    # on the host a shared or local buffer is one array: the dependences are the global ones
    for scope in ("shared", "local"):
        assert _carriers(_tile_comp(scope, gpu=False), "t") == {"b"}


def test_local_memory_is_private_to_each_thread() -> None:
    # local: each thread j has its own t, so t(3-j) read by thread j is never what thread
    # 3-j wrote (no flow between different threads); t(j) with j = 3-j has no integer
    # solution, so no flow at all survives
    comp = _tile_comp("local", gpu=True)
    assert [d for d in comp.dependences() if d.data_space == "t"] == []


def test_reading_another_threads_local_copy_is_refused() -> None:
    # ...but thread j reads t(3-j), which only thread 3-j wrote: its own copy holds nothing
    with pytest.raises(IllegalScheduleError, match=r"reads 't' \(local memory"):
        _tile_comp("local", gpu=True).check_legality()
    _tile_comp("shared", gpu=True).check_legality()  # in shared memory the block wrote it


def test_shared_reads_must_be_written_earlier_in_the_same_block() -> None:
    # the reader first: it reads t before any thread of its block wrote it
    comp = _tile_comp("shared", gpu=True)
    comp.stmt("s1").set_schedule("{[b,j]->[0,b,0,j,0]}")
    comp.stmt("s0").set_schedule("{[b,j]->[0,b,1,j,0]}")
    with pytest.raises(IllegalScheduleError, match=r"reads 't' \(shared memory"):
        comp.check_legality()


def test_a_buffer_allocated_in_a_loop_carries_nothing_across_it() -> None:
    # t(j) lives in a 4-element buffer: one array, every i overwrites it (carried by i);
    # allocated in each iteration of i, every iteration has its own (i may run in parallel)
    def build(allocate: bool) -> Computation:
        comp = Computation("alloc")
        comp.add_data_space("t", "double", shape=(4,))
        comp.add_data_space("y", "double", shape=("N", 4))
        dom = "{[i,j]: 0 <= i < N && 0 <= j < 4}"
        s0 = comp.add_stmt(Stmt("$t$(j) = 2.0 * i + j;", dom, "{[i,j]->[0,i,0,j,0]}"))
        comp.add_stmt(Stmt("$y$(i,j) = $t$(3-j);", dom, "{[i,j]->[0,i,1,j,0]}"))
        buf = comp.add_buffer("tb", (4,), "double", scope="stack")
        s0.store_in(buf, ["j"])
        if allocate:
            buf.allocate_at(s0, "i")
        comp.stmt("s1").parallelize("i")
        comp.stmt("s0").parallelize("i")
        return comp

    assert "i" in _carriers(build(allocate=False), "t")
    comp = build(allocate=True)
    assert "i" not in _carriers(comp, "t")
    assert comp.is_parallel_legal("s0", "i")
    comp.check_legality()
    with pytest.raises(IllegalScheduleError, match="cannot run in parallel"):
        build(allocate=False).check_legality()


def _distributed_prefix() -> Computation:
    c = Computation("prefix")
    c.add_data_space("A", "double", shape=("N",))
    c.add_stmt(Stmt("$A$(i) = $A$(i-1) + $A$(i);", "{[i]: 1 <= i < N}", "{[i]->[0,i,0]}"))
    c.stmt(0).distribute("i")
    return c


def test_a_distributed_loop_is_an_ordinary_loop_to_targets_without_ranks() -> None:
    """Under MPI each rank has its own arrays, so the analysis keeps only dependences between
    instances on one rank; C, CUDA and HLS run a distributed loop as an ordinary loop over one
    array, so their codegen judges it as one: a distributed prefix sum reversed is refused
    there (it used to compile for C and compute [1, 3, 5, ...]), and runs right unreversed."""
    c = _distributed_prefix()
    c.stmt(0).reverse("i")
    c.check_legality()  # MPI's reading: rank i reads its own A(i - 1)
    for target in ("c", "cuda"):
        with pytest.raises(IllegalScheduleError, match="flow dependence on 'A'"):
            c.codegen(target)
    with pytest.raises(IllegalScheduleError):
        c.compile()
    a = np.arange(1.0, 9.0)
    _distributed_prefix().compile()(A=a)
    assert np.array_equal(a, np.cumsum(np.arange(1.0, 9.0)))


def _tied(writer_first: bool) -> Computation:
    """Two statements with one schedule: their instances run at equal times."""
    c = Computation("tied")
    c.add_data_space("A", "double", shape=("N",))
    c.add_data_space("B", "double", shape=("N",))
    write = Stmt("$A$(i) = $A$(i) + 1;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}", name="w")
    read = Stmt("$B$(i) = $A$(i) * 2;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}", name="r")
    for s in (write, read) if writer_first else (read, write):
        c.add_stmt(s)
    return c


@pytest.mark.parametrize("writer_first", [True, False])
@pytest.mark.parametrize("moved", ["w", "r"])
def test_statements_at_equal_times_depend_in_statement_order(
    writer_first: bool, moved: str
) -> None:
    """Instances of two statements at equal times run in statement order (the interpreter,
    and the generated code, whose scan breaks such ties the same way), so the accesses they
    share there are a loop-independent dependence from the first statement to the second.
    The analysis only looked for a schedule position ordering them and found none: no
    dependence at all, so shifting one of them by an iteration was accepted and changed the
    result. Moving the second statement later, or the first earlier, keeps the order."""
    comp = _tied(writer_first)
    deps = sorted((d.kind, d.source, d.sink, d.carried_by) for d in comp.dependences())
    assert deps == ([("flow", "w", "r", ())] if writer_first else [("anti", "r", "w", ())])
    first = "w" if writer_first else "r"
    for step, legal in ((-1, moved == first), (1, moved != first)):
        comp = _tied(writer_first)
        comp.stmt(moved).shift("i", step)
        if legal:
            comp.check_legality()
        else:
            with pytest.raises(IllegalScheduleError, match="dependence on 'A'"):
                comp.check_legality()


@pytest.mark.parametrize("writer_first", [True, False])
def test_statements_at_equal_times_transformed_alike_stay_legal(writer_first: bool) -> None:
    """Split or reversed alike, tied statements still run in statement order at each time:
    legal, and the kernel computes what the interpreter does (the two-way dependences first
    written for ties refused both as 'source and sink would run at the same time')."""
    for change in ("split", "reverse"):
        comp = _tied(writer_first)
        for name in ("w", "r"):
            if change == "split":
                comp.stmt(name).split("i", 4, "i0", "i1")
            else:
                comp.stmt(name).reverse("i")
        comp.check_legality()
        a, b = np.arange(9.0), np.zeros(9)
        a2, b2 = a.copy(), b.copy()
        _tied(writer_first).interpret(A=a, B=b)
        comp.compile()(A=a2, B=b2)
        np.testing.assert_array_equal(b2, b)


@pytest.mark.parametrize("writer_first", [True, False])
@pytest.mark.parametrize("names", [("w", "r"), ("s10", "s2"), ("b", "a")])
def test_statements_at_equal_times_run_in_statement_order_when_compiled(
    writer_first: bool, names: tuple[str, str], tmp_path: Any
) -> None:
    """isl's AST ordered instances of two statements at one time its own way (the reader
    first here, whatever the names or the order they were added), where the interpreter
    runs statement order: the compiled kernel and ``interpret`` disagreed on an untransformed
    program. The scan breaks such ties by statement order."""
    comp = Computation("tied")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N",))
    write = Stmt("$A$(i) = $A$(i) + 1;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}", name=names[0])
    read = Stmt("$B$(i) = $A$(i) * 2;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}", name=names[1])
    for s in (write, read) if writer_first else (read, write):
        comp.add_stmt(s)
    a, b = np.arange(5.0), np.zeros(5)
    a2, b2 = a.copy(), b.copy()
    comp.interpret(A=a, B=b)
    comp.compile(cache_dir=str(tmp_path))(A=a2, B=b2)
    np.testing.assert_array_equal(b2, b)
    np.testing.assert_array_equal(b, (np.arange(5.0) + writer_first) * 2)

"""The implemented-domain self-check (spf.codegen.verify) refuses wrong loops.

The scanner's loop trees pass it; the same trees with one defect each (a loop one iteration
short or long, a call repeated or dropped, a UF value read at the wrong index, a call whose
instance is not the one its loop point schedules, a loop moved back by its step with its
calls moved forward, a UF value read above the branch that needs it, where it is out of the
UF's domain) are refused with a ``CodegenError`` that
names the latest scheduling command on the statement.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

import spf
from spf.codegen.loop_ast import Bind, Block, Call, For, If, Int, Node, Op, Var, substitute, walk
from spf.codegen.scan import Scanner
from spf.codegen.verify import verify

if TYPE_CHECKING:
    from spf.ir import ComputationIR

Mutation = Callable[[Node], Node | None]


def mutate(n: Node, fn: Mutation) -> Node:
    """``n`` with ``fn`` applied top-down (``fn`` returns a replacement or None)."""
    new = fn(n)
    if new is not None:
        return new
    if isinstance(n, Block):
        return Block(tuple(mutate(i, fn) for i in n.items))
    if isinstance(n, (For, Bind)):
        return replace(n, body=mutate(n.body, fn))
    if isinstance(n, If):
        orelse = None if n.orelse is None else mutate(n.orelse, fn)
        return If(n.cond, mutate(n.then, fn), orelse)
    return n


def _longer(n: Node) -> Node | None:
    if isinstance(n, For) and isinstance(n.cond, Op) and n.cond.args[0] == Var(n.var):
        return replace(n, cond=Op("<=", (Var(n.var), Op("+", (n.cond.args[1], Int(1))))))
    return None


def _shorter(n: Node) -> Node | None:
    if isinstance(n, For) and isinstance(n.cond, Op) and n.cond.args[0] == Var(n.var):
        return replace(n, cond=Op(n.cond.op, (Var(n.var), Op("-", (n.cond.args[1], Int(1))))))
    return None


def _repeated(n: Node) -> Node | None:
    return Block((n, n)) if isinstance(n, Call) else None


def _calls(n: Node, stmt: str) -> bool:
    return isinstance(n, Call) and n.stmt == stmt


def _dropped(n: Node) -> Node | None:
    return Block(()) if isinstance(n, Call) else None


def _next_value(n: Node) -> Node | None:
    if isinstance(n, Bind):
        return replace(n, args=(Op("+", (n.args[0], Int(1))), *n.args[1:]))
    return None


def _swapped(n: Node) -> Node | None:
    if isinstance(n, Call) and len(n.args) >= 2:
        return Call(n.stmt, (n.args[1], n.args[0], *n.args[2:]))
    return None


def _shifted_against_its_schedule(n: Node) -> Node | None:
    """The outermost loop started one step earlier, its body reading ``var + step``: each
    instance still runs once, but at a loop value a whole step before its time (isl shifts
    a strided loop's calls by less than its step, a unit-step loop's by nothing)."""
    if isinstance(n, For):
        moved = substitute(n, {n.var: Op("+", (Var(n.var), Int(n.step)))})
        return replace(moved, init=Op("-", (n.init, Int(n.step))))
    return None


def _read_above_the_branch(n: Node) -> Node | None:
    """A binding at the top of a branch moved above the ``if``."""
    if isinstance(n, If) and isinstance(n.then, Bind) and n.orelse is None:
        b = n.then
        return Bind(b.var, b.uf, b.args, If(n.cond, b.body))
    return None


DEFECTS = {
    "loop_one_longer": _longer,
    "loop_one_shorter": _shorter,
    "call_repeated": _repeated,
    "call_dropped": _dropped,
    "uf_value_of_the_next_index": _next_value,
    "instance_not_the_scheduled_one": _swapped,
    "loop_shifted_against_its_schedule": _shifted_against_its_schedule,
    "uf_read_above_the_branch_that_needs_it": _read_above_the_branch,
}


def split_sptrsv() -> spf.Computation:
    """SpTRSV with its statements split by 4 and 3 under the same loop names."""
    comp = spf.kernels.sptrsv_csr()
    comp.stmt("s0").split("i", 4, "i0", "i1")
    comp.stmt("s2").split("i", 3, "i0", "i1")
    return comp


def rows_beside_a_longer_loop() -> spf.Computation:
    """``t(i)`` for ``0 <= i <= N`` sharing its loop with a row loop over ``rowptr``: the row
    pointers are read in the branch ``i < N``; above it they would be read at ``N + 1``."""
    c = spf.Computation("longer")
    c.declare_uf("rowptr", domain="{[v]: 0 <= v <= N}", range="{[v]: 0 <= v <= NNZ}")
    c.add_data_space("t", "double", shape=("N+1",))
    c.add_data_space("y", "double", shape=("N",))
    c.add_data_space("A", "double", shape=("NNZ",))
    c.add_stmt(spf.Stmt("$t$(i) = 1;", "{[i]: 0 <= i <= N}", "{[i] -> [0,i,0,0]}"))
    c.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(k);",
            "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}",
            "{[i,k] -> [0,i,1,k]}",
        )
    )
    return c


def statements_taking_turns() -> spf.Computation:
    """Three statements that take turns in the iterations of one loop (``i % 3``), which isl
    scans as one loop of step 3 calling ``s0(i)``, ``s1(i + 1)``, ``s2(i + 2)``."""
    c = spf.Computation("turns")
    c.add_data_space("y", "double", shape=("N+1",))
    for k in range(3):
        c.add_stmt(
            spf.Stmt(
                f"$y$(i + 1) = 2 * $y$(i) + {k + 1};",
                f"{{[i]: 0 <= i < N && exists(q: i = 3*q + {k})}}",
                f"{{[i] -> [0, i, {k}]}}",
            )
        )
    return c


KERNELS = {
    "spmv_csr": spf.kernels.spmv_csr,
    "gemm": spf.kernels.gemm,
    "sptrsv": split_sptrsv,
    "rows_beside_a_longer_loop": rows_beside_a_longer_loop,
    "statements_taking_turns": statements_taking_turns,
}


NOT_APPLICABLE = {
    ("gemm", "uf_value_of_the_next_index"),  # gemm reads no UF
    ("gemm", "uf_read_above_the_branch_that_needs_it"),
    ("spmv_csr", "uf_read_above_the_branch_that_needs_it"),  # no branch inside a loop
    ("sptrsv", "uf_read_above_the_branch_that_needs_it"),
    ("rows_beside_a_longer_loop", "instance_not_the_scheduled_one"),  # one iterator each
    ("statements_taking_turns", "instance_not_the_scheduled_one"),
    ("statements_taking_turns", "uf_value_of_the_next_index"),  # reads no UF
    ("statements_taking_turns", "uf_read_above_the_branch_that_needs_it"),
}
CASES = [(k, d) for k in sorted(KERNELS) for d in sorted(DEFECTS) if (k, d) not in NOT_APPLICABLE]


@pytest.fixture(scope="module")
def scanned() -> dict[str, tuple[ComputationIR, Node]]:
    out = {}
    for name, make in KERNELS.items():
        ir = make().ir
        out[name] = (ir, Scanner(ir).scan())
    return out


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_the_scanners_loops_pass(
    scanned: dict[str, tuple[ComputationIR, Node]], kernel: str
) -> None:
    verify(*scanned[kernel])


@pytest.mark.parametrize(("kernel", "defect"), CASES)
def test_loops_with_a_defect_are_refused(
    scanned: dict[str, tuple[ComputationIR, Node]], kernel: str, defect: str
) -> None:
    ir, body = scanned[kernel]
    wrong = mutate(body, DEFECTS[defect])
    assert wrong != body
    with pytest.raises(spf.CodegenError, match=r"^scanner bug: the loops generated for "):
        verify(ir, wrong)


def test_the_refusal_names_the_latest_command_on_the_statement() -> None:
    ir = split_sptrsv().ir
    body = mutate(Scanner(ir).scan(), lambda n: _repeated(n) if _calls(n, "s0") else None)
    with pytest.raises(spf.CodegenError) as err:
        verify(ir, body)
    message = str(err.value)
    assert 'caused by comp.stmt("s0").split("i", 4, "i0", "i1")' in message
    assert "the self-check found: " in message


def test_statements_taking_turns_scan_as_one_shifted_strided_loop(
    scanned: dict[str, tuple[spf.Computation, Node]],
) -> None:
    """The kernel the self-check must accept really has isl's shifted stride: one loop of
    step 3 whose calls run ``i + 1`` and ``i + 2`` (a call at its schedule's time less a
    shift below the step)."""
    _, body = scanned["statements_taking_turns"]
    assert isinstance(body, For)
    assert body.step == 3
    calls = {n.stmt: n.args for n in walk(body) if isinstance(n, Call)}
    assert calls == {
        "s0": (Var("i"),),
        "s1": (Op("+", (Var("i"), Int(1))),),
        "s2": (Op("+", (Var("i"), Int(2))),),
    }


def _shortcuts(
    monkeypatch: pytest.MonkeyPatch, ir: ComputationIR, body: Node
) -> dict[str, list[bool]]:
    """What the two plain-isl tests of :mod:`spf.codegen.verify` answered while verifying
    ``body`` (each a sufficient test: a False leaves the question to the full test)."""
    from spf.codegen import verify as module

    seen: dict[str, list[bool]] = {"times": [], "reads": []}
    for key, name in (("times", "_times_by_construction"), ("reads", "_read_inside_by_bounds")):
        real = getattr(module, name)

        def spy(*args: object, _real: Callable[..., bool] = real, _key: str = key) -> bool:
            seen[_key].append(_real(*args))
            return seen[_key][-1]

        monkeypatch.setattr(module, name, spy)
    with contextlib.suppress(spf.CodegenError):
        verify(ir, body)
    monkeypatch.undo()
    return seen


def test_affine_calls_and_reads_in_loop_bounds_pass_without_the_full_test(
    scanned: dict[str, tuple[ComputationIR, Node]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """gemm's calls invert its schedule, and SpMV's ``rowptr(i)``, ``rowptr(i + 1)`` lie
    in the UF's domain by the row loop's bounds: plain isl proves both, and ``col(k)``
    inside by ``rowptr(i) <= k < rowptr(i + 1)`` with each call a variable within
    ``rowptr``'s declared range."""
    assert _shortcuts(monkeypatch, *scanned["gemm"])["times"] == [True]
    assert _shortcuts(monkeypatch, *scanned["spmv_csr"])["reads"] == [True, True, True]


def test_the_plain_isl_tests_do_not_pass_a_defect(
    scanned: dict[str, tuple[ComputationIR, Node]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call whose instance is not its loop point's, and a row pointer read past the
    UF's domain (above the branch that keeps ``i < N``), fail the plain tests too."""
    ir, body = scanned["gemm"]
    assert _shortcuts(monkeypatch, ir, mutate(body, _swapped))["times"] == [False]
    ir, body = scanned["rows_beside_a_longer_loop"]
    reads = _shortcuts(monkeypatch, ir, mutate(body, _read_above_the_branch))["reads"]
    assert False in reads


def test_quick_tests_do_not_assume_a_domain_of_a_call_in_a_disjunct() -> None:
    """A UF call in a disjunct (C's ``||`` never evaluates it there) says nothing of its
    arguments: the quick subset and read tests must not take its declared domain for the
    whole set (at ``i = N`` the else branch of ``if (i < N && rowptr(i + 1) > 0)`` runs,
    and a read of ``rowptr(i + 1)`` there is out of bounds); the full test refuses both."""
    from spf.codegen.verify import _Path, _read_inside_by_bounds, _same_calls_subset, _subset
    from spf.sets import Set

    r = spf.UF("rowptr", domain="{[x]: 0 <= x <= N}", range="{[v]: 0 <= v <= NNZ}")
    ufs = {"rowptr": r}
    a = Set("{[i] : 0 <= i <= N && (i >= N || rowptr(i + 1) > 0)}", ufs)
    b = Set("{[i] : 0 <= i < N}", ufs)
    assert not a.is_subset(b)
    assert not _same_calls_subset(a, b)
    conds = ("0 <= i && i <= N", "((i >= N) || (rowptr(i + 1) <= 0))")
    path = _Path(("i",), (), conds, ("i + 1",))
    assert not _read_inside_by_bounds(path, ["_a0"], ["_a0 = i + 1"], (), r.domain, ufs)
    reads = Set("{[i, _a0] : " + " && ".join([*conds, "_a0 = i + 1"]) + "}", ufs)
    allowed = Set("{[i]}").product(Set("{[_a0]}").intersect(r.domain))
    assert not reads.is_subset(allowed)
    assert not _subset(reads, allowed)


def test_a_schedule_that_leaves_part_of_the_domain_unmapped_is_named_not_a_scanner_bug() -> None:
    """``set_schedule`` with a relation defined on part of the domain: codegen's self-check
    finds instances no loop runs; the error says the schedule leaves them out (it said
    "scanner bug ... report it to spf's maintainers")."""
    c = spf.Computation("prefix")
    c.add_data_space("A", "double", shape=("N",))
    c.add_stmt(spf.Stmt("$A$(i) = $A$(i-1) + $A$(i);", "{[i]: 1 <= i < N}", "{[i]->[0,i,0]}"))
    c.stmt(0).set_schedule("{[i]->[0,i,0] : i < 5}")
    with pytest.raises(spf.CodegenError, match="gives no time to part of its domain") as err:
        c.codegen("c")
    assert "scanner bug" not in str(err.value)


@pytest.mark.parametrize("name", ["trunc", "exp", "class", "main"])
def test_a_computation_named_like_a_header_function_or_keyword_compiles(name: str) -> None:
    """A computation named ``trunc`` (math.h) gave a raw gcc error ("conflicting types for
    'trunc'"); its C function is named ``spf_trunc`` instead, as ``main`` was."""
    import numpy as np

    c = spf.Computation(name)
    c.add_data_space("y", "double", shape=("N",))
    c.add_stmt(spf.Stmt("$y$(i) = 1.0;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    y = np.zeros(3)
    c.compile()(y=y)
    assert np.array_equal(y, np.ones(3))
    assert f"void spf_{name}(" in c.codegen("c")

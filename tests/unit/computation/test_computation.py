"""Unit tests of ``spf.Computation`` / ``spf.Stmt``: the model, printing, JSON and bad input.

Computations are built by hand as in API.md section 3 and EXAMPLES.md: dense MV, CSR SpMV (with
given and with inferred accesses), the forward solve with ``double*`` spaces, a jacobi stencil
with a copy-back statement, COO SpMV and 0-d statements. Dependences are tested in
``test_dependences.py``, the interpreter in ``tests/e2e/test_interpret.py``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

import spf
from spf import (
    ArityError,
    Computation,
    ParseError,
    Relation,
    Set,
    SpfError,
    Stmt,
    UndeclaredError,
)

DOM1 = "{[i]: 0 <= i < N}"
SPMV_DOMAIN = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
FS_DOMAIN = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && j < i}"
JACOBI_DOMAIN = "{[i,j]: 1 <= i < N-1 && 1 <= j < N-1}"
JACOBI_SRC = "$B$(i,j) = 0.2 * ($A$(i,j) + $A$(i-1,j) + $A$(i+1,j) + $A$(i,j-1) + $A$(i,j+1));"


# ================================================================================ builders
def dense_mv() -> Computation:
    comp = Computation("mv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(Stmt("$y$(i) += $A$(i,j) * $x$(j);", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    return comp


def spmv(*, given: bool = True, monotonic: bool = True) -> Computation:
    """API.md section 3's CSR SpMV; ``given=False`` lets spf infer the accesses."""
    comp = Computation("spmv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing" if monotonic else None,
    )
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    accesses: dict[str, Any] = {}
    if given:
        accesses = {
            "reads": [("y", "{[i,k,j]->[i]}"), ("A", "{[i,k,j]->[k]}"), ("x", "{[i,k,j]->[j]}")],
            "writes": [("y", "{[i,k,j]->[i]}")],
        }
    comp.add_stmt(
        Stmt(
            "$y$(i) += $A$(k) * $x$(j);",
            SPMV_DOMAIN,
            "{[i,k,j] -> [0,i,0,k,0,j,0]}",
            **accesses,
        )
    )
    return comp


def forward_solve() -> Computation:
    """EXAMPLES.md "Forward solve": ``double*`` spaces, UFs declared by use."""
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


def coo() -> Computation:
    comp = Computation("coo")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(Stmt("$y$(row(k)) += $A$(k) * $x$(col(k));", "{[k]: 0 <= k < NNZ}"))
    return comp


def zero_d(domain: str) -> Computation:
    """``t = 0`` over a 0-d domain (``{[0]}`` or ``{[]}``), then ``t += x(i)``."""
    comp = Computation("total")
    comp.add_data_space("t", "double")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$ = 0;", domain))
    comp.add_stmt(Stmt("$t$ += $x$(i);", DOM1))
    return comp


def scale_function() -> Computation:
    """EXAMPLES.md's function Computation ``void scale(double* v, double a)``."""
    comp = Computation("scale")
    comp.add_parameter("v", "double*")
    comp.add_parameter("a", "double")
    comp.add_stmt(Stmt("$v$(i) = $a$ * $v$(i);", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    return comp


BUILDERS: dict[str, Callable[[], Computation]] = {
    "dense_mv": dense_mv,
    "spmv_given": spmv,
    "spmv_inferred": lambda: spmv(given=False),
    "spmv_not_monotonic": lambda: spmv(monotonic=False),
    "forward_solve": forward_solve,
    "jacobi": jacobi,
    "coo": coo,
    "zero_d_const": lambda: zero_d("{[0]}"),
    "zero_d_empty": lambda: zero_d("{[]}"),
    "scale_function": scale_function,
}


# ================================================================================ helpers
Expected = Sequence[tuple[str, str]]


def assert_accesses(got: tuple[tuple[str, Relation], ...], want: Expected) -> None:
    """Same data spaces in the same order, each relation semantically equal."""
    assert [d for d, _ in got] == [d for d, _ in want], got
    for (ds, rel), (_, text) in zip(got, want, strict=True):
        assert rel.is_equal(Relation(text)), f"{ds}: {rel} is not {text}"


def snapshot(comp: Computation) -> tuple[str, int, str, dict[str, Any], dict[str, Any]]:
    return (str(comp), len(comp.stmts), comp.to_json(), comp.data_spaces, comp.ufs)


# ================================================================================ the model
def test_dense_mv_model() -> None:
    comp = dense_mv()
    assert comp.name == "mv"
    assert list(comp.data_spaces) == ["y", "A", "x"]
    assert comp.data_spaces["A"].shape == ("N", "M")
    assert comp.data_spaces["A"].rank == 2
    assert comp.data_spaces["A"].dtype == "float64"
    assert comp.params == frozenset({"N", "M"})
    assert comp.ufs == {}
    (s,) = comp.stmts
    assert s.name == "s0"
    assert comp.stmt("s0") is s
    assert comp.stmt(0) is s
    assert comp.stmt(-1) is s
    assert comp.stmt(s) is s
    assert s.source == "$y$(i) += $A$(i,j) * $x$(j);"
    assert s.domain == Set("{[i,j]: 0 <= i < N && 0 <= j < M}")
    assert s.domain.arity == 2
    # omitted schedule: after every existing statement, at the root
    assert s.schedule.is_equal(Relation("{[i,j] -> [0,i,0,j,0]}"))
    assert s.schedule.out_vars == ("0", "i", "0", "j", "0")
    assert s.loops == ("i", "j")
    assert_accesses(
        s.reads, [("y", "{[i,j]->[i]}"), ("A", "{[i,j]->[i,j]}"), ("x", "{[i,j]->[j]}")]
    )
    assert_accesses(s.writes, [("y", "{[i,j]->[i]}")])
    assert s.computation is comp


@pytest.mark.parametrize("given", [True, False], ids=["given", "inferred"])
def test_spmv_model(given: bool) -> None:
    comp = spmv(given=given)
    (s,) = comp.stmts
    assert s.loops == ("i", "k", "j")
    assert s.schedule.is_equal(Relation("{[i,k,j] -> [0,i,0,k,0,j,0]}"))
    assert_accesses(
        s.reads, [("y", "{[i,k,j]->[i]}"), ("A", "{[i,k,j]->[k]}"), ("x", "{[i,k,j]->[j]}")]
    )
    assert_accesses(s.writes, [("y", "{[i,k,j]->[i]}")])
    assert comp.params == frozenset({"N", "M", "NNZ"})
    assert sorted(comp.ufs) == ["col", "rowptr"]
    assert comp.ufs["rowptr"].monotonic == "nondecreasing"
    assert comp.ufs["rowptr"].domain == Set("{[i]: 0 <= i <= N}")
    assert comp.ufs["col"].range == Set("{[v]: 0 <= v < M}")
    assert sorted(s.domain.uf_calls) == ["col(k)", "rowptr(i + 1)", "rowptr(i)"]


def test_spmv_given_and_inferred_accesses_agree() -> None:
    a, b = spmv(given=True).stmt(0), spmv(given=False).stmt(0)
    for x, y in ((a.reads, b.reads), (a.writes, b.writes)):
        assert [d for d, _ in x] == [d for d, _ in y]
        assert all(r.is_equal(q) for (_, r), (_, q) in zip(x, y, strict=True))


def test_declare_uf_returns_declaration() -> None:
    comp = Computation("c")
    uf = comp.declare_uf("perm", domain="{[i]: 0 <= i < N}", dtype="int64")
    assert isinstance(uf, spf.UF)
    assert comp.ufs["perm"] is uf
    assert uf.dtype == "int64"
    assert comp.declare_uf("perm", domain="{[i]: 0 <= i < N}", dtype="int64") == uf  # idempotent
    comp.ufs.pop("perm")  # a copy: the computation keeps its declaration
    assert "perm" in comp.ufs


def test_forward_solve_model() -> None:
    comp = forward_solve()
    assert [s.name for s in comp.stmts] == ["s0", "s1", "s2"]
    for name in ("u", "f", "l", "diag"):
        ds = comp.data_spaces[name]
        assert ds.pointer
        assert ds.shape is None
        assert ds.rank == 1  # inferred from the first access
        assert ds.type_text == "double*"
    # UFs used in a domain are declared automatically with the arity used
    assert sorted(comp.ufs) == ["col", "rowptr"]
    assert comp.ufs["rowptr"].arity == 1
    assert comp.ufs["rowptr"].monotonic is None
    assert comp.params == frozenset({"N"})
    s0, s1, s2 = comp.stmts
    assert (s0.loops, s1.loops, s2.loops) == (("i",), ("i", "k"), ("i",))
    assert s1.schedule.is_equal(Relation("{[i,k,j]->[0,i,1,k,0]}"))
    assert_accesses(s0.reads, [("f", "{[i]->[i]}")])
    assert_accesses(s0.writes, [("u", "{[i]->[i]}")])
    assert_accesses(
        s1.reads,
        [("u", "{[i,k,j]->[i]}"), ("l", "{[i,k,j]->[k]}"), ("u", "{[i,k,j]->[j]}")],
    )
    assert_accesses(s1.writes, [("u", "{[i,k,j]->[i]}")])
    assert_accesses(s2.reads, [("u", "{[i]->[i]}"), ("diag", "{[i]->[i]}")])
    assert_accesses(s2.writes, [("u", "{[i]->[i]}")])
    assert comp.stmt("s1") is s1
    assert comp.stmt(-1) is s2


def test_jacobi_model() -> None:
    comp = jacobi()
    s0, s1 = comp.stmts
    assert s0.schedule.is_equal(Relation("{[i,j] -> [0,i,0,j,0]}"))
    assert s1.schedule.is_equal(Relation("{[i,j] -> [1,i,0,j,0]}"))  # after s0, at the root
    assert_accesses(
        s0.reads,
        [
            ("A", "{[i,j]->[i,j]}"),
            ("A", "{[i,j]->[i-1,j]}"),
            ("A", "{[i,j]->[i+1,j]}"),
            ("A", "{[i,j]->[i,j-1]}"),
            ("A", "{[i,j]->[i,j+1]}"),
        ],
    )
    assert_accesses(s0.writes, [("B", "{[i,j]->[i,j]}")])
    assert_accesses(s1.reads, [("B", "{[i,j]->[i,j]}")])
    assert_accesses(s1.writes, [("A", "{[i,j]->[i,j]}")])
    assert comp.params == frozenset({"N"})


def test_coo_model() -> None:
    comp = coo()
    (s,) = comp.stmts
    assert sorted(comp.ufs) == ["col", "row"]  # declared by their use in the source
    assert s.loops == ("k",)
    assert s.schedule.is_equal(Relation("{[k] -> [0,k,0]}"))
    assert_accesses(
        s.reads, [("y", "{[k]->[row(k)]}"), ("A", "{[k]->[k]}"), ("x", "{[k]->[col(k)]}")]
    )
    assert_accesses(s.writes, [("y", "{[k]->[row(k)]}")])


@pytest.mark.parametrize("domain", ["{[0]}", "{[]}"])
def test_zero_d_model(domain: str) -> None:
    comp = zero_d(domain)
    t = comp.data_spaces["t"]
    assert t.rank == 0
    assert t.shape is None
    s0, s1 = comp.stmts
    assert s0.domain.arity == len(Set(domain).tuple_vars)
    assert s0.reads == ()
    ((ds, rel),) = s0.writes
    assert ds == "t"
    assert (rel.in_arity, rel.out_arity) == (s0.domain.arity, 0)
    assert s0.schedule.in_arity == s0.domain.arity
    assert s0.schedule.out_vars[0] == "0"
    assert s1.schedule.is_equal(Relation("{[i] -> [1,i,0]}"))
    assert [d for d, _ in s1.reads] == ["t", "x"]
    assert [d for d, _ in s1.writes] == ["t"]


def test_empty_domain_statement_has_no_loops() -> None:
    comp = zero_d("{[]}")
    s0 = comp.stmt(0)
    assert s0.loops == ()
    assert s0.schedule.is_equal(Relation("{[] -> [0]}"))


def test_other_access_spellings() -> None:
    """``$A$[i][j]`` and undelimited names of declared data spaces read the same."""
    comp = Computation("mv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("x", "double", shape=("M",))
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    s0 = comp.add_stmt(Stmt("$y$(i) += $A$(i,j) * $x$(j);", dom))
    s1 = comp.add_stmt(Stmt("$y$[i] += $A$[i][j] * $x$[j];", dom))
    s2 = comp.add_stmt(Stmt("y(i) += A(i,j) * x(j);", dom))
    for s in (s1, s2):
        assert_accesses(s.reads, [(d, str(r)) for d, r in s0.reads])
        assert_accesses(s.writes, [(d, str(r)) for d, r in s0.writes])


def test_local_temporary_is_not_a_data_space() -> None:
    comp = Computation("sq")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    s = comp.add_stmt(Stmt("double t = $x$(i); $y$(i) = t * t;", DOM1))
    assert_accesses(s.reads, [("x", "{[i]->[i]}")])
    assert_accesses(s.writes, [("y", "{[i]->[i]}")])
    assert list(comp.data_spaces) == ["x", "y"]


def test_default_schedule_follows_every_existing_statement() -> None:
    comp = Computation("order")
    comp.add_data_space("a", "double", shape=("N",))
    s0 = comp.add_stmt(Stmt("$a$(i) = 1;", DOM1, "{[i] -> [5,i,0]}"))
    s1 = comp.add_stmt(Stmt("$a$(i) = 2;", DOM1))
    s2 = comp.add_stmt(Stmt("$a$(i) = 3;", "{[i,j]: 0 <= i < N && 0 <= j < N}"))
    assert s0.schedule.is_equal(Relation("{[i] -> [5,i,0]}"))
    assert s1.schedule.is_equal(Relation("{[i] -> [6,i,0]}"))
    assert s2.schedule.is_equal(Relation("{[i,j] -> [7,i,0,j,0]}"))


def test_stmt_before_and_after_add() -> None:
    s = Stmt("$a$(i) = 1;", DOM1)
    assert s.name == "?"
    assert s.loops == ()
    assert s.reads == ()
    assert s.computation is None
    with pytest.raises(SpfError):
        _ = s.schedule
    comp = Computation("c")
    comp.add_data_space("a", "double", shape=("N",))
    assert comp.add_stmt(s) is s
    assert s.name == "s0"
    assert tuple(s.loops) == ("i",)
    assert "s0" in repr(s)
    assert "\n" not in repr(s)


def test_stmt_names() -> None:
    comp = Computation("c")
    comp.add_data_space("a", "double", shape=("N",))
    first = comp.add_stmt(Stmt("$a$(i) = 1;", DOM1, name="s1"))
    second = comp.add_stmt(Stmt("$a$(i) = 2;", DOM1))
    third = comp.add_stmt(Stmt("$a$(i) = 3;", DOM1, name="init"))
    fourth = comp.add_stmt(Stmt("$a$(i) = 4;", DOM1))
    names = [s.name for s in comp.stmts]
    assert names[0] == "s1"
    assert names[2] == "init"
    assert len(set(names)) == 4
    assert all(n.startswith("s") for n in (second.name, fourth.name))
    assert comp.stmt("init") is third
    assert comp.stmt(first.name) is first


def test_params_include_shapes() -> None:
    comp = Computation("c")
    comp.add_data_space("a", "double", shape=("N + 1", "2*M", 3))
    assert comp.params == frozenset({"N", "M"})
    assert comp.data_spaces["a"].rank == 3


def test_data_space_types() -> None:
    comp = Computation("c")
    for ctype, dtype in (
        ("double", "float64"),
        ("float", "float32"),
        ("int32_t", "int32"),
        ("int64_t", "int64"),
        ("uint8_t", "uint8"),
    ):
        comp.add_data_space(f"d_{ctype}", ctype, shape=("N",))
        assert comp.data_spaces[f"d_{ctype}"].dtype == dtype
    comp.add_data_space("p", "float *")
    assert comp.data_spaces["p"].pointer
    assert comp.data_spaces["p"].rank is None  # until the first access
    comp.add_data_space("s", "int64_t")
    assert comp.data_spaces["s"].rank == 0


def test_data_spaces_is_a_copy() -> None:
    comp = dense_mv()
    comp.data_spaces.pop("y")
    assert "y" in comp.data_spaces


def test_redeclaring_same_data_space_is_allowed() -> None:
    comp = dense_mv()
    before = snapshot(comp)
    comp.add_data_space("y", "double", shape=("N",))
    assert snapshot(comp) == before


def test_function_computation() -> None:
    comp = scale_function()
    comp.add_data_space("r", "double")
    comp.add_return_value("r")
    assert comp.return_values == ("r",)
    assert comp.data_spaces["v"].role == "parameter"
    assert comp.data_spaces["a"].rank == 0
    assert comp.data_spaces["v"].rank == 1
    text = str(comp)
    assert "return values: r" in text
    assert "(parameter)" in text
    with pytest.raises(SpfError, match="already a return value"):
        comp.add_return_value("r")


# ================================================================================ printing
SPMV_TEXT = """\
Computation spmv
  parameters: M, N, NNZ
  data spaces:
    y: double[N]
    A: double[NNZ]
    x: double[M]
  UFs:
    UF('col', domain='{[k] : 0 <= k && k < NNZ}', range='{[v] : 0 <= v && v < M}')
    UF('rowptr', domain='{[i] : 0 <= i && i <= N}', range='{[v] : 0 <= v && v <= NNZ}', monotonic='nondecreasing')
  statements:
    s0: $y$(i) += $A$(k) * $x$(j);
      domain:   {[i, k, j] : 0 <= i && i < N && j = col(k) && k < rowptr(i + 1) && rowptr(i) <= k}
      schedule: {[i, k, j] -> [0, i, 0, k, 0, j, 0]}
      reads:    y {[i, k, j] -> [i]}
      reads:    A {[i, k, j] -> [k]}
      reads:    x {[i, k, j] -> [j]}
      writes:   y {[i, k, j] -> [i]}"""


def test_str_golden_spmv() -> None:
    assert str(spmv()) == SPMV_TEXT


def test_str_is_stable() -> None:
    for build in BUILDERS.values():
        assert str(build()) == str(build())


def test_str_lists_every_statement() -> None:
    text = str(forward_solve())
    for name in ("s0", "s1", "s2", "u: double*", "UF('col')", "parameters: N"):
        assert name in text


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_repr_is_one_short_line(name: str) -> None:
    comp = BUILDERS[name]()
    text = repr(comp)
    assert "\n" not in text
    assert len(text) <= 100
    assert repr(comp.name) in text


# ================================================================================ JSON
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_json_round_trip(name: str) -> None:
    comp = BUILDERS[name]()
    text = comp.to_json()
    json.loads(text)  # plain JSON
    back = Computation.from_json(text)
    assert back.to_json() == text
    assert str(back) == str(comp)
    assert [s.name for s in back.stmts] == [s.name for s in comp.stmts]
    assert back.ufs == comp.ufs
    assert back.data_spaces == comp.data_spaces
    assert back.params == comp.params
    assert back.return_values == comp.return_values
    for a, b in zip(comp.stmts, back.stmts, strict=True):
        assert a.loops == b.loops
        assert a.schedule == b.schedule
        assert a.domain == b.domain
    # twice is a fixed point too
    assert Computation.from_json(back.to_json()).to_json() == text


def test_json_round_trip_is_independent() -> None:
    comp = spmv()
    back = Computation.from_json(comp.to_json())
    back.add_data_space("z", "double", shape=("N",))
    back.add_stmt(Stmt("$z$(i) = 0;", DOM1))
    assert len(comp.stmts) == 1
    assert "z" not in comp.data_spaces


def _spmv_json() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(spmv().to_json())
    return data


def _set(path: Sequence[str | int], value: object) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.pop(key)


MALFORMED: dict[str, Callable[[dict[str, Any]], None]] = {
    "no format": _drop("format"),
    "other format": _set(["format"], "spf.computation/999"),
    "no name": _drop("name"),
    "no stmts": _drop("stmts"),
    "stmts not a list": _set(["stmts"], 7),
    "stmt not an object": _set(["stmts", 0], [1, 2]),
    "stmt without source": lambda d: d["stmts"][0].pop("source"),
    "bad domain text": _set(["stmts", 0, "domain"], "{[i,k,j: 0 <= i}"),
    "bad schedule text": _set(["stmts", 0, "schedule"], "{[i,k,j] -> [0,i"),
    "bad current schedule text": _set(["stmts", 0, "current_schedule"], "{[i] -> "),
    "current schedule of another arity": _set(
        ["stmts", 0, "current_schedule"], "{[i,k] -> [0,i,0,k,0]}"
    ),
    "schedule not text": _set(["stmts", 0, "schedule"], 5),
    "access not a pair": _set(["stmts", 0, "writes"], [["y"]]),
    "access to an unknown space": _set(["stmts", 0, "writes"], [["q", "{[i,k,j]->[i]}"]]),
    "accesses that disagree with the source": _set(
        ["stmts", 0, "writes"], [["y", "{[i,k,j]->[k]}"]]
    ),
    "data space not an object": _set(["data_spaces", 0], "y"),
    "bad data space type": _set(["data_spaces", 0, "type"], "complex"),
    "uf not an object": _set(["ufs", 0], "rowptr"),
    "uf with unknown field": _set(["ufs", 0, "bogus"], 1),
    "uf with bad arity": _set(["ufs", 0, "arity"], "x"),
    "bad name": _set(["name"], "not an identifier"),
    "return values not a list": _set(["return_values"], None),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_from_json_malformed_structure(case: str) -> None:
    data = _spmv_json()
    MALFORMED[case](data)
    with pytest.raises(SpfError):
        Computation.from_json(json.dumps(data))


@pytest.mark.parametrize("text", ["", "{not json", "[1, 2", "null", "[]", '"spmv"', "42", "{}"])
def test_from_json_not_a_computation(text: str) -> None:
    with pytest.raises(SpfError):
        Computation.from_json(text)


@pytest.mark.parametrize("value", [None, 42, ["{}"]])
def test_from_json_non_text_argument(value: Any) -> None:
    with pytest.raises(SpfError):
        Computation.from_json(value)


def test_from_json_error_names_the_problem() -> None:
    with pytest.raises(SpfError, match="JSON"):
        Computation.from_json("{not json")


# ================================================================================ bad input
def assert_refused(
    comp: Computation, action: Callable[[Computation], object], error: type[Exception]
) -> pytest.ExceptionInfo[Exception]:
    """``action`` raises ``error`` (an ``SpfError``) and leaves ``comp`` unchanged."""
    assert issubclass(error, SpfError)
    before = snapshot(comp)
    with pytest.raises(error) as info:
        action(comp)
    assert snapshot(comp) == before
    return info


def test_undeclared_data_space() -> None:
    comp = spmv()
    info = assert_refused(comp, lambda c: c.add_stmt(Stmt("$B$(i) = 1;", DOM1)), UndeclaredError)
    message = str(info.value)
    assert "'B'" in message
    for known in ("'A'", "'x'", "'y'"):
        assert known in message
    assert isinstance(info.value, KeyError)


def test_undeclared_data_space_in_given_accesses() -> None:
    comp = spmv()
    stmt = Stmt("$x$(i) = $y$(i);", DOM1, reads=[("zz", "{[i]->[i]}")])
    info = assert_refused(comp, lambda c: c.add_stmt(stmt), UndeclaredError)
    assert "'zz'" in str(info.value)
    assert "'y'" in str(info.value)


@pytest.mark.parametrize("source", ["$y$(i, i) = 1;", "$y$ = 1;", "$x$(0) = $A$(i, 0);"])
def test_access_arity(source: str) -> None:
    info = assert_refused(spmv(), lambda c: c.add_stmt(Stmt(source, DOM1)), ArityError)
    assert isinstance(info.value, ValueError)


def test_access_arity_of_pointer_space_fixed_by_first_access() -> None:
    comp = forward_solve()
    stmt = Stmt("$u$(i, i) = 0;", DOM1)
    assert_refused(comp, lambda c: c.add_stmt(stmt), ArityError)


def test_access_arity_within_one_statement() -> None:
    comp = Computation("c")
    comp.add_data_space("p", "double*")
    stmt = Stmt("$p$(i) = $p$(i, i);", "{[i]: 0 <= i < N}")
    assert_refused(comp, lambda c: c.add_stmt(stmt), ArityError)
    assert comp.data_spaces["p"].rank is None


@pytest.mark.parametrize("source", ["rowptr(i) = 0;", "col(i) += 1;"])
def test_write_to_uf(source: str) -> None:
    info = assert_refused(spmv(), lambda c: c.add_stmt(Stmt(source, DOM1)), SpfError)
    assert "rowptr" in str(info.value) or "col" in str(info.value)


def test_unknown_name_in_access() -> None:
    info = assert_refused(spmv(), lambda c: c.add_stmt(Stmt("$x$(q) = 0;", DOM1)), UndeclaredError)
    assert "'q'" in str(info.value)
    assert "'i'" in str(info.value)  # the known names are listed


def test_unknown_name_in_value() -> None:
    stmt = Stmt("$x$(i) = q * 2;", DOM1)
    assert_refused(spmv(), lambda c: c.add_stmt(stmt), UndeclaredError)


def test_parameter_in_access_is_allowed() -> None:
    comp = spmv()
    s = comp.add_stmt(Stmt("$x$(i) = $y$(N - 1 - i);", "{[i]: 0 <= i < M && i < N}"))
    assert_accesses(s.reads, [("y", "{[i]->[N - 1 - i]}")])


@pytest.mark.parametrize(
    "schedule", ["{[i,j] -> [0,i,0,j,0]}", "{[] -> [0]}", "{[i,j,k] -> [0,i,0]}"]
)
def test_schedule_arity(schedule: str) -> None:
    stmt = Stmt("$x$(i) = 0;", DOM1, schedule)
    assert_refused(spmv(), lambda c: c.add_stmt(stmt), ArityError)


def test_given_access_of_wrong_input_arity() -> None:
    stmt = Stmt("$x$(i) = 0;", DOM1, writes=[("x", "{[i,j]->[i]}")])
    assert_refused(spmv(), lambda c: c.add_stmt(stmt), ArityError)


def test_duplicate_statement_names() -> None:
    comp = spmv()
    comp.add_stmt(Stmt("$x$(i) = 0;", "{[i]: 0 <= i < M}", name="init"))
    for name in ("init", "s0"):
        stmt = Stmt("$x$(i) = 1;", "{[i]: 0 <= i < M}", name=name)
        info = assert_refused(comp, functools.partial(Computation.add_stmt, stmt=stmt), SpfError)
        assert repr(name) in str(info.value)


@pytest.mark.parametrize(
    ("ctype", "shape"),
    [
        ("float", ("N",)),
        ("double*", None),
        ("int32_t", ("N",)),
        ("double", ("M",)),
        ("double", None),
    ],
)
def test_redeclaring_data_space_differently(ctype: str, shape: tuple[str, ...] | None) -> None:
    info = assert_refused(spmv(), lambda c: c.add_data_space("y", ctype, shape=shape), SpfError)
    assert "'y'" in str(info.value)


def test_data_space_named_like_uf() -> None:
    assert_refused(spmv(), lambda c: c.add_data_space("col", "double"), SpfError)
    assert_refused(spmv(), lambda c: c.declare_uf("y"), SpfError)


@pytest.mark.parametrize(
    "stmt",
    [
        Stmt("$x$(i) = 0;", "{[i]: 0 <= i < rowptr(i, i)}"),
        Stmt("$x$(col(i, i)) = 0;", DOM1),
        Stmt("$x$(i) = $A$(rowptr(i, 0));", DOM1),
    ],
    ids=["in domain", "in write index", "in read index"],
)
def test_uf_arity_mismatch(stmt: Stmt) -> None:
    assert_refused(spmv(), lambda c: c.add_stmt(stmt), ArityError)


def test_uf_arity_mismatch_between_statements() -> None:
    """A UF declared by use keeps the arity of its first use."""
    comp = coo()
    stmt = Stmt("$x$(i) = $y$(row(i, i));", DOM1)
    assert_refused(comp, lambda c: c.add_stmt(stmt), ArityError)


def test_uf_redeclared_differently() -> None:
    assert_refused(spmv(), lambda c: c.declare_uf("col", arity=2), SpfError)
    assert_refused(spmv(), lambda c: c.declare_uf("col", monotonic="increasing"), SpfError)


def test_uf_bad_declaration() -> None:
    assert_refused(spmv(), lambda c: c.declare_uf("p", monotonic="sometimes"), SpfError)
    assert_refused(spmv(), lambda c: c.declare_uf("p", arity=0), ArityError)
    assert_refused(spmv(), lambda c: c.declare_uf("p", bogus=1), SpfError)


def test_data_space_used_as_uf() -> None:
    stmt = Stmt("$x$(i) = 0;", "{[i]: 0 <= i < y(3)}")
    assert_refused(spmv(), lambda c: c.add_stmt(stmt), SpfError)


def test_same_stmt_twice() -> None:
    comp = spmv()
    s = comp.stmt(0)
    assert_refused(comp, lambda c: c.add_stmt(s), SpfError)
    other = spmv()
    assert_refused(other, lambda c: c.add_stmt(s), SpfError)
    assert s.computation is comp


def test_add_stmt_needs_a_stmt() -> None:
    assert_refused(spmv(), lambda c: c.add_stmt("$x$(i) = 0;"), SpfError)  # type: ignore[arg-type]


def test_bad_source_is_a_parse_error() -> None:
    info = assert_refused(spmv(), lambda c: c.add_stmt(Stmt("$x$(i) = ;", DOM1)), ParseError)
    assert "^" in str(info.value)


def test_given_accesses_that_mismatch_name_both() -> None:
    comp = spmv()
    stmt = Stmt("$x$(i) = $y$(i);", "{[i]: 0 <= i < M && i < N}", reads=[("y", "{[i]->[i+1]}")])
    info = assert_refused(comp, lambda c: c.add_stmt(stmt), SpfError)
    message = str(info.value)
    assert str(Relation("{[i]->[i+1]}")) in message  # the given relation
    inferred = spmv().add_stmt(Stmt("$x$(i) = $y$(i);", "{[i]: 0 <= i < M && i < N}"))
    assert str(inferred.reads[0][1]) in message  # the relation read from the source


@pytest.mark.parametrize(
    ("reads", "writes"),
    [
        ([("y", "{[i]->[i]}")], [("y", "{[i]->[i]}")]),  # wrong space written
        ([], None),  # a read left out
        ([("y", "{[i]->[i]}"), ("A", "{[i]->[i]}")], None),  # a read too many
        (None, [("x", "{[i]->[0]}")]),  # another element
        (None, []),  # the write left out
    ],
)
def test_given_accesses_mismatch(reads: Expected | None, writes: Expected | None) -> None:
    stmt = Stmt("$x$(i) = $y$(i);", "{[i]: 0 <= i < M && i < N}", reads=reads, writes=writes)
    assert_refused(spmv(), lambda c: c.add_stmt(stmt), SpfError)


def test_given_accesses_equal_but_spelled_differently_are_accepted() -> None:
    comp = spmv()
    s = comp.add_stmt(
        Stmt(
            "$x$(i) = $y$(i);",
            "{[i]: 0 <= i < M && i < N}",
            reads=[("y", "{[a] -> [b] : b = a}")],
            writes=[("x", Relation("{[i] -> [i]}"))],
        )
    )
    assert_accesses(s.reads, [("y", "{[i]->[i]}")])


@pytest.mark.parametrize(
    "build",
    [
        lambda: Stmt("$x$(i) = 0;", "{[i: 0 <= i < N}"),
        lambda: Stmt("$x$(i) = 0;", DOM1, "{[i] -> [0, i"),
        lambda: Stmt("$x$(i) = 0;", DOM1, reads=[("x", "{[i] -> }")]),
    ],
    ids=["domain", "schedule", "access"],
)
def test_bad_set_text_is_a_parse_error(build: Callable[[], Stmt]) -> None:
    with pytest.raises(ParseError):
        build()


@pytest.mark.parametrize(
    "build",
    [
        lambda: Stmt(None, DOM1),  # type: ignore[arg-type]
        lambda: Stmt("$x$(i) = 0;", 3),  # type: ignore[arg-type]
        lambda: Stmt("$x$(i) = 0;", DOM1, 3),  # type: ignore[arg-type]
        lambda: Stmt("$x$(i) = 0;", DOM1, name="not a name"),
        lambda: Stmt("$x$(i) = 0;", DOM1, reads=[("x",)]),  # type: ignore[list-item]
        lambda: Stmt("$x$(i) = 0;", DOM1, reads=[(3, "{[i]->[i]}")]),  # type: ignore[list-item]
    ],
)
def test_bad_stmt_arguments(build: Callable[[], Stmt]) -> None:
    with pytest.raises(SpfError):
        build()


@pytest.mark.parametrize(
    ("name", "ctype", "shape"),
    [
        ("not a name", "double", None),
        ("z", "complex", None),
        ("z", "double**", None),
        ("z", 3, None),
        ("z", "double", (-1,)),
        ("z", "double", (1.5,)),
        ("z", "double", ("N; exit(1)",)),
        ("z", "double", {"N": 1}),
    ],
)
def test_bad_data_space(name: str, ctype: Any, shape: Any) -> None:
    assert_refused(spmv(), lambda c: c.add_data_space(name, ctype, shape=shape), SpfError)


def test_bad_computation_name() -> None:
    with pytest.raises(SpfError):
        Computation("two words")


def test_unknown_statement_lists_known() -> None:
    comp = forward_solve()
    for key in ("s9", 3, -4):
        info = assert_refused(comp, functools.partial(Computation.stmt, key=key), UndeclaredError)
        assert "'s0'" in str(info.value)
        assert "'s2'" in str(info.value)
    assert_refused(comp, lambda c: c.stmt(spmv().stmt(0)), UndeclaredError)


def test_computation_usable_after_refused_statement() -> None:
    comp = forward_solve()
    with pytest.raises(UndeclaredError):
        comp.add_stmt(Stmt("$v$(i) = 0;", DOM1))
    s = comp.add_stmt(Stmt("$f$(i) = 0;", DOM1))
    assert s.name == "s3"
    assert s.schedule.is_equal(Relation("{[i] -> [1, i, 0]}"))

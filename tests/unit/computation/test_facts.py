"""``Computation.add_constant``, ``add_local`` and ``assume`` (API.md section 10)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import spf
from spf import (
    ArityError,
    Computation,
    IllegalScheduleError,
    ParseError,
    SpfError,
    Stmt,
    UndeclaredError,
)

TRIANGULAR = "forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i"


def _carried(comp: Computation) -> set[tuple[str, str, str, tuple[str, ...]]]:
    return {(d.kind, d.source, d.sink, d.carried_by) for d in comp.dependences()}


def _sptrsv_without_assumptions() -> Computation:
    """``kernels.sptrsv_csr`` minus the triangular assumption it declares."""
    data = json.loads(spf.kernels.sptrsv_csr().to_json())
    data["assumptions"] = []
    return Computation.from_json(json.dumps(data))


def test_triangular_fact_removes_the_anti_dependences_across_rows() -> None:
    comp = _sptrsv_without_assumptions()
    before = _carried(comp)
    # s1 reads u(col(k)) of row i, a later row i' = col(k) > i writes it (anti, carried by i)
    assert ("anti", "s1", "s0", ("i",)) in before
    assert ("anti", "s1", "s1", ("i", "k")) in before
    comp.assume(TRIANGULAR)
    after = _carried(comp)
    assert ("anti", "s1", "s0", ("i",)) not in after
    assert ("anti", "s1", "s1", ("i", "k")) not in after
    assert ("anti", "s1", "s1", ("k",)) in after  # within a row it stays
    # the flow dependences (rows read earlier rows) are kept: the fact does not forbid them
    assert ("flow", "s1", "s1", ("i", "k")) in after
    # s2 writes u(i) after row i read it: no longer carried by i, only within the row
    assert ("anti", "s1", "s2", ("i",)) in before
    assert ("anti", "s1", "s2", ()) in after


def _gather() -> Computation:
    """``x(i) = 2 * x(N + idx(i))``: parallel exactly when idx(i) never points below N."""
    comp = Computation("gather")
    comp.add_data_space("x", "double", shape=("2*N",))
    comp.add_stmt(Stmt("$x$(i) = 2 * $x$(N + idx(i));", "{[i]: 0 <= i < N}"))
    return comp


def test_assumption_makes_a_loop_parallel() -> None:
    comp = _gather()
    assert not comp.is_parallel_legal("s0", "i")
    comp.stmt("s0").parallelize("i")
    with pytest.raises(IllegalScheduleError):
        comp.check_legality()
    comp.assume("forall i: 0 <= i < N => idx(i) >= 0")
    assert comp.is_parallel_legal("s0", "i")
    assert comp.dependences() == []
    comp.check_legality()
    assert "#pragma omp parallel for" in comp.codegen()


def test_assumptions_are_listed_printed_and_serialized() -> None:
    comp = _sptrsv_without_assumptions()
    f = comp.assume(TRIANGULAR)
    comp.assume("N >= 1")
    comp.assume(TRIANGULAR)  # the same text twice is one assumption
    assert [a.text for a in comp.assumptions] == [TRIANGULAR, "N >= 1"]
    assert comp.assumptions[0] is f
    assert f.vars == ("i", "k")
    text = str(comp)
    assert "  assumptions:\n    " + TRIANGULAR + "\n    N >= 1\n" in text
    back = Computation.from_json(comp.to_json())
    assert back.assumptions == comp.assumptions
    assert _carried(back) == _carried(comp)


def test_facts_include_declared_uf_properties() -> None:
    comp = _sptrsv_without_assumptions()
    comp.assume("N >= 1")
    texts = [f.text for f in comp.facts()]
    assert texts[0] == "N >= 1"
    assert len(texts) == 4  # col range, rowptr range, rowptr nondecreasing
    mono = comp.facts()[-1]
    assert mono.conclusion.uf_calls == ("rowptr(_rowptra)", "rowptr(_rowptrb)")


def test_assume_declares_the_ufs_it_calls() -> None:
    comp = Computation("c")
    comp.assume("forall i: 0 <= i < N => perm(i) < N")
    assert comp.ufs["perm"].arity == 1
    assert "N" in comp.params


def test_bad_assumptions() -> None:
    comp = _sptrsv_without_assumptions()
    with pytest.raises(ParseError, match=r"\^"):
        comp.assume("forall i: rowptr(i) <= => col(i) > 0")
    with pytest.raises(SpfError, match="'u' is a data space"):
        comp.assume("forall i: u(i) >= 0")
    with pytest.raises(SpfError, match="'L' is a data space"):
        comp.assume("L >= 1")
    with pytest.raises(ArityError, match="UF 'col' takes 1"):
        comp.assume("forall i: col(i, i) >= 0")
    with pytest.raises(SpfError, match="variable 'f'"):
        comp.assume("forall f: 0 <= f < N => col(f) >= 0")
    with pytest.raises(SpfError, match="is text"):
        comp.assume(3)  # type: ignore[arg-type]
    assert comp.assumptions == ()


def test_constant_used_only_in_a_source() -> None:
    comp = Computation("heat")
    comp.add_data_space("DT", "double")
    with pytest.raises(UndeclaredError, match=r"comp.add_constant\('TSTEPS'\)"):
        comp.add_stmt(Stmt("$DT$ = 1.0/(double)TSTEPS;", "{[]}"))
    comp.add_constant("TSTEPS")
    comp.add_constant("SCALE", "double")
    comp.add_stmt(Stmt("$DT$ = SCALE/(double)TSTEPS;", "{[]}"))
    assert comp.params == {"TSTEPS", "SCALE"}
    assert comp.constants == {"TSTEPS": "int64_t", "SCALE": "double"}
    assert "void heat(double SCALE, int64_t TSTEPS, double *restrict DT)" in comp.codegen()
    back = Computation.from_json(comp.to_json())
    assert back.constants == comp.constants
    assert "constant types: SCALE: double" in str(comp)


def test_constant_types_in_any_spelling() -> None:
    comp = Computation("c")
    comp.add_constant("DT", np.float64)
    comp.add_constant("S", "float64")
    comp.add_constant("K", "int32")
    assert comp.constants == {"DT": "double", "S": "double", "K": "int32_t"}


def test_bad_constants() -> None:
    comp = Computation("c")
    comp.add_data_space("x", "double", shape=("N",))
    comp.declare_uf("col")
    for name in ("x", "col"):
        with pytest.raises(SpfError, match="already declared as a"):
            comp.add_constant(name)
    with pytest.raises(SpfError, match="is a scalar"):
        comp.add_constant("T", "double*")
    with pytest.raises(SpfError, match=r"unsupported type 'quad'"):
        comp.add_constant("T", "quad")
    for reserved in ("for", "spf_T", "t0", "min"):
        with pytest.raises(SpfError, match="pick another name"):
            comp.add_constant(reserved)
    with pytest.raises(SpfError, match="not a valid C identifier"):
        comp.add_constant("1T")
    comp.add_constant("T")
    comp.add_constant("T")  # the same declaration again is fine
    with pytest.raises(SpfError, match="cannot redeclare it as double"):
        comp.add_constant("T", "double")
    with pytest.raises(SpfError, match="already declared as a symbolic constant"):
        comp.add_data_space("T", "double")
    with pytest.raises(SpfError, match="already declared as a symbolic constant"):
        comp.declare_uf("T")
    comp.add_constant("ALPHA", "double")
    with pytest.raises(SpfError, match="domains take integer constants only"):
        comp.add_stmt(Stmt("$x$(i) = ALPHA;", "{[i]: 0 <= i < ALPHA}"))


def test_locals_are_not_arguments() -> None:
    comp = Computation("loc")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_local("t", "double")
    comp.add_local("w", "double", shape=("N",))
    comp.add_stmt(Stmt("$w$(i) = $x$(i);", "{[i]: 0 <= i < N}"))
    comp.add_stmt(Stmt("$t$ = $w$(i); $x$(i) = $t$ + 1;", "{[i]: 0 <= i < N}"))
    code = comp.codegen()
    assert "void loc(int64_t N, double *restrict x)" in code
    assert comp.data_spaces["w"].role == "local"
    back = Computation.from_json(comp.to_json())
    assert back.data_spaces == comp.data_spaces
    assert back.codegen() == code


def test_parameters_in_uf_arguments_are_not_quantified() -> None:
    comp = spf.kernels.sptrsv_csr()
    f = comp.assume("forall k: rowptr(N - 1) <= k < rowptr(N) => col(k) = N - 1")
    assert f.vars == ("k",)
    g = comp.assume("forall k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i")
    assert g.vars == ("i", "k")


def test_small_fixed_locals_live_on_the_stack() -> None:
    comp = Computation("loc")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_local("t", "double")
    comp.add_local("v", "double", shape=(4,))
    comp.add_local("w", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$ = 1.0; $v$(2) = 3.0;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(Stmt("$w$(i) = $y$(i) + $t$ + $v$(2);", "{[i]: 0 <= i < N}", "{[i]->[0,i,1]}"))
    comp.add_stmt(Stmt("$y$(i) = 2 * $w$(i);", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    src = comp.codegen()
    assert "double t[1] = {0};" in src
    assert "double v[4] = {0};" in src
    assert "calloc((size_t)((N))" in src
    assert "free(w);" in src
    assert "free(t)" not in src
    y = np.arange(5.0)
    comp.compile()(y=y)
    assert np.array_equal(y, 2 * (np.arange(5.0) + 4.0))
    assert "loc(int64_t N, double *restrict y)" in src  # locals are no arguments


def _reversed_rows(early: bool) -> Computation:
    """A loop carrying a flow dependence, reversed, with ``forall i: rowptr(i) <= rowptr(M)``
    assumed before or after the statement that makes ``M`` a constant."""
    fact = "forall i: rowptr(i) <= rowptr(M)"
    comp = Computation("rows")
    comp.declare_uf(
        "rowptr", domain="{[x]: 0 <= x <= N}", range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )  # fmt: skip
    if early:
        comp.assume(fact)
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(
        Stmt(
            "$x$(i) = $x$(i - 1) + 1;",
            "{[i, k]: 1 <= i < N && rowptr(i) <= k < rowptr(i + 1) && k < M}",
        )
    )
    if not early:
        comp.assume(fact)
    comp.stmt(0).reverse("i")
    return comp


def test_an_assumption_reads_the_same_whenever_it_was_added() -> None:
    """``M`` is a constant of the computation once a statement uses it, so the fact reads
    ``rowptr(i) <= rowptr(M)`` for that ``M`` however the calls were ordered. Before, an
    ``assume`` ahead of the statement quantified ``M`` (rowptr constant: every row empty,
    every schedule legal) while the IR kept the same text: both orders had one fingerprint
    and shared remembered verdicts, so the late one, built second, accepted the illegal
    reversal and computed [0, 1, 1, 1] instead of [0, 1, 2, 3]; a JSON round trip turned
    one into the other."""
    early, late = _reversed_rows(early=True), _reversed_rows(early=False)
    assert early.ir.fingerprint == late.ir.fingerprint
    for comp in (early, late, Computation.from_json(late.to_json())):
        assert [f.vars for f in comp.assumptions] == [("i",)]
        assert [f.vars for f in comp.ir.facts] == [("i",)]
        with pytest.raises(IllegalScheduleError, match="flow dependence on 'x'"):
            comp.check_legality()

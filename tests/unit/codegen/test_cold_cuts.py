"""The shortcuts of a cold compile's checks and scan give the answers of the full work.

* the self-check's plain subset test (``spf.codegen.verify._same_calls_subset``) proves a
  subset through the UFs' declared ranges and domains and refuses what is not one;
* the self-check's test of a call's loop times by construction reads only the iterators
  those times read (a UF value passed as another iterator does not matter) and still
  refuses a loop whose time is not its variable;
* the self-check's plain test of a read inside its UF's domain takes each UF call of the
  path as a variable within the UF's declared range, its arguments within the declared
  domain, and refuses a read that may leave the domain;
* an AST build's context keeps what the dropped parameters imply about the others
  (``spf.codegen.scan._used_context``);
* ``written_level`` with a floor is the level without one, raised to the floor, and the
  pairs of two constant-element accesses are those the composed accesses give.
"""

from __future__ import annotations

import islpy as isl

import spf
import spf.kernels
from spf.analysis.dependences import pair_names, same_element
from spf.codegen.loop_ast import For, Int, Op, UFRead, Var
from spf.codegen.scan import _used_context
from spf.codegen.verify import (
    _calls_as_variables,
    _declared_conds,
    _Path,
    _read_inside_by_bounds,
    _render,
    _same_calls_subset,
    _Site,
    _split_args,
    _subset,
    _times_by_construction,
)
from spf.codegen.written_ufs import _same_element, is_written_index_array, written_level
from spf.sets import Set

ROWPTR = spf.UF(
    "rowptr",
    domain="{[i]: 0 <= i <= N}",
    range="{[v]: 0 <= v <= NNZ}",
    monotonic="nondecreasing",
)
UFS = {"rowptr": ROWPTR}
ROWS = "0 <= i < N && rowptr(i) <= k < rowptr(i + 1)"


def test_same_calls_subset_proves_and_refuses() -> None:
    rows = Set(f"{{[i, k] : {ROWS}}}", UFS)
    wider = Set("{[i, k] : 0 <= i && rowptr(i) <= k < rowptr(i + 1)}", UFS)
    assert _same_calls_subset(rows, wider)
    # i < N follows from rowptr(i + 1)'s declared domain (a call outside it is no instance
    # of spf's sets), as the UF-aware test finds
    assert _same_calls_subset(wider, rows)
    assert wider.is_subset(rows)
    narrower = Set("{[i, k] : 0 <= i < N - 1 && rowptr(i) <= k < rowptr(i + 1)}", UFS)
    assert not _same_calls_subset(rows, narrower)  # row N - 1 is left out
    assert not rows.is_subset(narrower)


def test_plain_superset_uses_the_declared_ranges() -> None:
    rows = Set(f"{{[i, k] : {ROWS}}}", UFS)
    # k < NNZ only through rowptr's range (rowptr(i + 1) <= NNZ)
    assert _same_calls_subset(rows, Set("{[i, k] : 0 <= k < NNZ}", UFS))
    assert not _same_calls_subset(rows, Set("{[i, k] : 0 <= k < NNZ - 1}", UFS))
    assert not _subset(rows, Set("{[i, k] : 0 <= k < NNZ - 1}", UFS))


def _row_site(k_time: str) -> tuple[_Site, tuple[str, ...], tuple[str, ...]]:
    """A call ``s(p, order(p), k)`` under loops ``p`` (position 0) and ``k`` (position 1,
    scheduled at ``k_time``), with its iterators and their schedule."""
    body = Int(0)
    k = For("k", Int(0), Op("<", (Var("k"), Var("N"))), 1, body, 1)
    p = For("p", Int(0), Op("<", (Var("p"), Var("N"))), 1, k, 0)
    site = _Site("s", (p, k), (Var("p"), UFRead("order", (Var("p"),)), Var("k")))
    return site, ("_d0", "_d1", "_d2"), ("_d0", k_time)


def test_times_by_construction_reads_the_iterators_the_times_read() -> None:
    ufs = {"order": spf.UF("order", domain="{[x]: 0 <= x < N}", range="{[v]: 0 <= v < N}")}
    site, its, times = _row_site("_d2")
    assert _times_by_construction(site, _render(site, ufs), its, times)
    site, its, times = _row_site("_d2 + 1")  # k runs one before its time
    assert not _times_by_construction(site, _render(site, ufs), its, times)
    site, its, times = _row_site("_d1")  # the UF value stands in for loop k
    assert not _times_by_construction(site, _render(site, ufs), its, times)


def test_used_context_keeps_what_dropped_parameters_imply() -> None:
    ctx = isl.Set("[N, M, v] -> { : 0 <= v < N and M >= 3 }")
    umap = isl.UnionMap("[N] -> { S[i] -> [i] : 0 <= i < N }")
    got = _used_context(ctx, umap)
    names = [got.get_dim_name(isl.dim_type.param, k) for k in range(got.dim(isl.dim_type.param))]
    assert names == ["N"]
    assert got.is_equal(isl.Set("[N] -> { : N >= 1 }"))  # v's range: N > v >= 0


def test_written_level_floor_is_the_level_raised_to_it() -> None:
    ir = spf.kernels.spgemm_csr().single.ir  # the sort's workspaces: thr, base, len
    width = ir.schedule_width
    levels = []
    for stmt in ir.parsed_stmts:
        for uf in {ds for ds, _ in stmt.reads if is_written_index_array(ir, ds)}:
            full = written_level(ir, stmt, uf, width)
            assert written_level(ir, stmt, uf, width, 0) == max(full, 0)
            levels.append(full)
    assert max(levels) > 0  # both kinds were compared
    assert min(levels) <= 0


def test_constant_elements_pair_every_instance() -> None:
    """The pairs of two constant-element accesses (the sort's ``len(0)``) are the two
    domains' product, as the composed accesses give them; different elements pair none."""
    ir = spf.kernels.spgemm_csr().single.ir
    checked = 0
    for writer in ir.parsed_stmts:
        for reader in ir.parsed_stmts:
            for ds, a in writer.writes:
                for dr, b in reader.reads:
                    if ds != dr or ds != "len":
                        continue
                    xs, ys = pair_names(writer, reader)
                    got = _same_element(writer, a, reader, b, xs, ys)
                    assert got is not None
                    assert got.is_equal(same_element(writer, a, reader, b, xs, ys))
                    checked += 1
    assert checked > 0
    zero, one = spf.Relation("{[i] -> [0]}"), spf.Relation("{[i] -> [1]}")
    stmt = ir.parsed_stmts[0]
    assert _same_element(stmt, zero, stmt, one, ["i"], ["ip"]) is None


COL = spf.UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}")


def _col_read_inside(conds: tuple[str, ...]) -> bool:
    """Whether the plain test proves ``col(k)`` inside its domain under ``conds``."""
    path = _Path(("i", "k"), (), conds, ("k",))
    ufs = {"rowptr": ROWPTR, "col": COL}
    return _read_inside_by_bounds(path, ["_a0"], ["_a0 = k"], (), COL.domain, ufs)


def test_reads_inside_through_the_calls_declared_ranges() -> None:
    """``col(k)`` lies in ``0 <= k < NNZ`` by ``rowptr(i) <= k < rowptr(i + 1)`` with each
    call a variable within ``rowptr``'s range (``0 .. NNZ``) at an argument in its domain;
    one past the row is refused, and so is a row read whose argument may leave the domain."""
    row = ("0 <= i && i < N", "k >= rowptr(i)", "k < rowptr(i + 1)")
    assert _col_read_inside(row)
    assert not _col_read_inside(("0 <= i && i < N", "k >= rowptr(i)", "k <= rowptr(i + 1)"))
    assert not _col_read_inside(("k >= rowptr(i)", "k < N"))
    path = _Path(("i",), (), ("0 <= i && i < N",), ("i + 2",))
    values = ["_a0 = i + 2"]
    assert not _read_inside_by_bounds(path, ["_a0"], values, (), ROWPTR.domain, UFS)
    path = _Path(("i",), (), ("0 <= i && i < N",), ("i + 1",))
    assert _read_inside_by_bounds(path, ["_a0"], ["_a0 = i + 1"], (), ROWPTR.domain, UFS)


def test_calls_become_variables_with_their_declarations() -> None:
    ufs = {"rowptr": ROWPTR, "col": COL}
    got = _calls_as_variables(["k < rowptr(col(k) + 1)", "floor(k/2) < rowptr(col(k) + 1)"], ufs)
    assert got is not None
    conds, variables = got
    assert variables == ["_cv0", "_cv1"]  # col(k), then rowptr(_cv0 + 1): one each
    assert conds[:2] == ["k < _cv1", "floor(k/2) < _cv1"]
    assert conds[2:] == [
        "0 <= (_cv0) && (_cv0) < N",  # col's range on its value, then its domain
        "0 <= (k) && (k) < NNZ",
        "0 <= (_cv1) && (_cv1) <= NNZ",  # rowptr's range, its domain on its argument
        "0 <= (_cv0 + 1) && (_cv0 + 1) <= N",
    ]
    assert _calls_as_variables(["k < g(k)"], ufs) is None  # undeclared
    assert _calls_as_variables(["k < rowptr(k"], ufs) is None  # unclosed
    assert _calls_as_variables(["_cv0 < rowptr(k)"], ufs) is None  # a name like its own
    tup = spf.UF("tau", range="{[a, b]: 0 <= a}", out_arity=2)
    assert _calls_as_variables(["k < tau(k)[0]"], {"tau": tup}) is None
    assert _split_args("a, f(b, c), (d + e)") == ["a", "f(b, c)", "(d + e)"]
    assert _declared_conds(None, ["x"]) == []
    assert _declared_conds(ROWPTR.domain, ["x", "y"]) is None  # another arity

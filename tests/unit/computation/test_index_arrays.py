"""Run-time index arrays: add_data_space(..., index=True) written by statements and read
as a UF by later statements of the same computation (docs/formats.md)."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf.errors import ArgumentError, CodegenError, IllegalScheduleError, SpfError


def _rowsum(declare_range: bool = True) -> spf.Computation:
    """Count the nonzeros per row of a COO matrix, prefix-sum them into rowptr, then sum
    the values of each row over rowptr(i) <= k < rowptr(i+1)."""
    c = spf.Computation("rowsum")
    c.declare_uf("row", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}")
    c.add_data_space("cnt", "int32_t", shape=("N",))
    c.add_data_space("rowptr", "int32_t", shape=("N+1",), index=True)
    if declare_range:
        c.declare_uf("rowptr", range="{[v]: 0 <= v <= NNZ}", monotonic="nondecreasing")
    c.add_data_space("y", "double", shape=("N",))
    c.add_data_space("A", "double", shape=("NNZ",))
    c.add_stmt(spf.Stmt("$cnt$(i) = 0;", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$cnt$(row(k)) += 1;", "{[k]: 0 <= k < NNZ}"))
    c.add_stmt(spf.Stmt("$rowptr$(0) = 0;", "{[z]: z = 0}"))
    c.add_stmt(spf.Stmt("$rowptr$(i+1) = $rowptr$(i) + $cnt$(i);", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$y$(i) = 0;", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$y$(i) += $A$(k);", "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}"))
    return c


def _coo(n: int, nnz: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    row = np.sort(rng.integers(0, max(n, 1), nnz)).astype(np.int32)
    if n > 3:
        row[row == 2] = 3  # an empty row
    return row, rng.random(nnz)


@pytest.mark.parametrize(("n", "nnz"), [(7, 20), (1, 5), (5, 0), (0, 0)])
def test_two_phase_rowptr_matches_numpy(n: int, nnz: int) -> None:
    row, a = _coo(n, nnz)
    kernel = _rowsum().compile()
    y = np.full(n, 7.0)
    cnt = np.zeros(n, np.int32)
    rowptr = np.full(n + 1, 99, np.int32)
    kernel(N=n, NNZ=nnz, row=row, cnt=cnt, rowptr=rowptr, y=y, A=a)
    counts = np.bincount(row, minlength=n)[:n]
    assert np.array_equal(rowptr, np.concatenate([[0], np.cumsum(counts)]))
    assert np.allclose(y, np.bincount(row, weights=a, minlength=n)[:n])


def test_uf_and_data_space_share_one_argument() -> None:
    text = _rowsum().codegen()
    assert "int32_t *restrict rowptr" in text
    assert "const int32_t *restrict rowptr" not in text
    assert "#define spf_ds_rowptr(t0) rowptr[t0]" in text
    assert (
        "#define rowptr(t0) (spf_bad |= (uint64_t)1 << 32, spf_index_in_int32_t(rowptr[t0], "
        "spf_il_0, spf_ih_0, spf_ir_0, 0, &spf_bad))" in text  # nondecreasing: reads are marked
    )


def test_reader_depends_on_writers() -> None:
    c = _rowsum()
    flows = {
        (d.source, d.sink) for d in c.dependences() if d.kind == "flow" and d.data_space == "rowptr"
    }
    assert ("s3", "s5") in flows
    assert ("s2", "s5") in flows


def test_moving_the_reader_before_the_writer_is_refused() -> None:
    c = _rowsum()
    c.stmt("s5").before("s3", spf.ROOT)
    with pytest.raises(IllegalScheduleError, match="rowptr"):
        c.check_legality()


def test_fusing_the_reader_into_the_prefix_sum_is_refused() -> None:
    c = _rowsum()
    c.stmt("s5").after("s3", 0)
    with pytest.raises(IllegalScheduleError, match="rowptr"):
        c.check_legality()


def test_value_out_of_declared_range_is_reported_not_accessed() -> None:
    c = spf.Computation("bad")
    c.add_data_space("p", "int32_t", shape=("N",), index=True)
    c.declare_uf("p", range="{[v]: 0 <= v < N}")
    c.add_data_space("x", "double", shape=("N",))
    c.add_stmt(spf.Stmt("$p$(i) = i + 5;", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$x$(p(i)) = 1.0;", "{[i]: 0 <= i < N}"))
    x = np.zeros(3)
    with pytest.raises(ArgumentError, match="outside the range"):
        c.compile()(N=3, p=np.zeros(3, np.int32), x=x)
    assert x[0] == 1.0  # every bad read went to the lowest value
    assert x[1:].sum() == 0


def test_a_trusted_local_index_array_is_read_without_range_checks() -> None:
    c = spf.Computation("slots")  # p's values are slots the statements keep in range
    c.add_local("p", "int32_t", ("N",), index=True, range="{[v]: 0 <= v < N}", trusted=True)
    _with_stmts(c)
    text = c.codegen()
    assert "spf_index_in_int32_t(p[" not in text
    assert "spf_b =" not in text
    assert spf.Computation.from_json(c.to_json()).codegen() == text
    x, y = np.arange(5.0), np.zeros(5)
    c.compile()(N=5, x=x, y=y)
    assert np.array_equal(y, x[::-1])
    checked = spf.Computation("slots")
    checked.add_local("p", "int32_t", ("N",), index=True, range="{[v]: 0 <= v < N}")
    assert "spf_index_in_int32_t(p[" in _with_stmts(checked).codegen()


def _with_stmts(c: spf.Computation) -> spf.Computation:
    """``c`` (which declares the local index array ``p``) reversing ``x`` into ``y``."""
    c.add_data_space("x", "double", shape=("N",))
    c.add_data_space("y", "double", shape=("N",))
    c.add_stmt(spf.Stmt("$p$(i) = N - 1 - i;", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$y$(p(i)) = $x$(i);", "{[i]: 0 <= i < N}"))
    return c


@pytest.mark.parametrize("kwargs", [{"trusted": True}, {"index": True, "trusted": 1}])
def test_trusted_needs_a_local_index_array(kwargs: dict[str, object]) -> None:
    c = spf.Computation("bad")
    with pytest.raises(SpfError, match="trusted=True"):
        c.add_local("p", "int32_t", ("N",), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("n", "nnz"), [(7, 20), (5, 0), (0, 0)])
def test_without_a_range_the_bounds_are_checked_where_the_values_are_read(n: int, nnz: int) -> None:
    """No range declared: the loop bound rowptr(i) <= k < rowptr(i+1) over A(k) needs
    0 <= rowptr <= NNZ, which the kernel checks where it reads rowptr (not refused)."""
    c = _rowsum(declare_range=False)
    code = c.codegen()
    assert "const int spf_ie_0 = (0) > (NNZ) ||" in code  # rowptr is checked in 0 .. NNZ
    assert "#define rowptr(t0) spf_index_in_int32_t(rowptr[t0], spf_il_0," in code
    row, a = _coo(n, nnz)
    y, rowptr = np.zeros(n), np.zeros(n + 1, np.int32)
    c.compile()(N=n, NNZ=nnz, row=row, cnt=np.zeros(n, np.int32), rowptr=rowptr, y=y, A=a)
    assert np.allclose(y, np.bincount(row, weights=a, minlength=n)[:n])


def test_without_a_range_a_value_outside_the_needed_range_is_reported_not_accessed() -> None:
    c = spf.Computation("perm")
    c.add_data_space("p", "int32_t", shape=("N",), index=True)
    c.add_data_space("src", "int32_t", shape=("N",))
    c.add_data_space("x", "double", shape=("M",))
    c.add_stmt(spf.Stmt("$p$(i) = $src$(i);", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$x$(p(i)) += 1.0;", "{[i]: 0 <= i < N}"))  # needs 0 <= p <= M - 1
    k = c.compile()
    x = np.zeros(3)
    k(src=np.array([0, 2, 2, 1], np.int32), p=np.zeros(4, np.int32), x=x)
    assert x.tolist() == [1.0, 1.0, 2.0]
    x = np.zeros(3)
    with pytest.raises(ArgumentError, match=r"p\[1\] = 3 is outside the range"):
        k(src=np.array([0, 3, 2, -1], np.int32), p=np.zeros(4, np.int32), x=x)
    assert x.tolist() == [3.0, 0.0, 1.0]  # the bad reads went to the lowest value, 0


def test_without_a_range_an_access_no_range_of_the_values_proves_is_refused() -> None:
    c = spf.Computation("offset")
    c.add_data_space("p", "int32_t", shape=("N",), index=True)
    c.add_data_space("x", "double", shape=("N",))
    c.add_stmt(spf.Stmt("$p$(i) = 0;", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$x$(i + p(i)) = 1.0;", "{[i]: 0 <= i < N}"))
    with pytest.raises(CodegenError, match=r"run-time index array 'p'.*declare the range"):
        c.codegen()


def test_writing_a_uf_says_to_declare_index() -> None:
    c = spf.Computation("w")
    c.declare_uf("rowptr", domain="{[i]: 0 <= i <= N}")
    with pytest.raises(SpfError, match="index=True"):
        c.add_stmt(spf.Stmt("$rowptr$(i) = 0;", "{[i]: 0 <= i <= N}"))
    with pytest.raises(SpfError, match="index=True"):
        c.add_data_space("rowptr", "int32_t", shape=("N+1",))
    with pytest.raises(SpfError, match="index=True"):
        c.add_data_space("rowptr", "int32_t", shape=("N+1",), index=True)


@pytest.mark.parametrize(
    ("ctype", "shape", "match"),
    [
        ("double", ("N",), "int32_t or int64_t"),
        ("int32_t", None, "shape"),
        ("int64_t", (), "shape"),
    ],
)
def test_bad_index_declarations(ctype: str, shape: object, match: str) -> None:
    with pytest.raises(SpfError, match=match):
        spf.Computation("b").add_data_space("p", ctype, shape=shape, index=True)


def test_declare_uf_must_agree_with_the_array() -> None:
    c = spf.Computation("a")
    c.add_data_space("p", "int64_t", shape=("N",), index=True)
    with pytest.raises(spf.errors.ArityError):
        c.declare_uf("p", arity=2)
    with pytest.raises(SpfError, match="int64"):
        c.declare_uf("p", dtype="int32")
    assert c.ufs["p"].dtype == "int64"


def test_json_str_layers_pdfg_keep_working() -> None:
    c = _rowsum()
    back = spf.Computation.from_json(c.to_json())
    assert back.data_spaces["rowptr"].index
    assert "index" in back.to_json()
    assert back.codegen() == c.codegen()
    assert "rowptr" in str(c)
    assert "rowptr" in c.layers().data
    dot = c.to_dot()
    assert "rowptr" in dot
    row, a = _coo(6, 11)
    y = np.zeros(6)
    back.compile()(
        N=6, NNZ=11, row=row, cnt=np.zeros(6, np.int32), rowptr=np.zeros(7, np.int32), y=y, A=a
    )
    assert np.allclose(y, np.bincount(row, weights=a, minlength=6))


@pytest.mark.parametrize("target", ["cuda", "hls"])
def test_other_targets_refuse_clearly(target: str) -> None:
    with pytest.raises(CodegenError, match=r"run-time index array 'rowptr'.*target 'c'"):
        _rowsum().codegen(target=target)


def test_interpret_runs_the_rowptr_it_computes() -> None:
    """The interpreter lists the row loop's instances once ``rowptr`` is computed."""
    row, a = _coo(5, 9)
    args = {"N": 5, "NNZ": 9, "row": row, "cnt": np.zeros(5, np.int32),
            "rowptr": np.full(6, 99, np.int32), "y": np.zeros(5), "A": a}  # fmt: skip
    got = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    _rowsum().compile()(**args)
    _rowsum().interpret(**got)
    for name in ("cnt", "rowptr", "y"):
        assert np.array_equal(got[name], args[name]), name


def test_each_call_reads_its_element() -> None:
    c = _rowsum()
    reads = {str(r) for ds, r in c.stmt("s5").reads if ds == "rowptr"}
    assert reads == {"{[i, k] -> [i]}", "{[i, k] -> [i + 1]}"}
    assert c.is_parallel_legal("s5", "i")  # the rows only read rowptr
    assert not c.is_parallel_legal("s3", "i")  # the prefix sum reads what it wrote


def test_assumptions_about_index_arrays_are_refused() -> None:
    c = _rowsum()
    with pytest.raises(SpfError, match=r"run-time index array.*declare its range"):
        c.assume("forall i: 0 <= i < N => rowptr(i) <= rowptr(i + 1)")


def test_constant_argument_read_sees_the_earlier_write() -> None:
    """A flag ``f(0)`` written by one statement and read in the domain of later ones is read
    after the write (regression: a UF read with constant arguments was hoisted to the top of
    the function, so the loops ran on the flag's value on entry)."""
    c = spf.Computation("flagged")
    c.add_data_space("x", "double", shape=("N",))
    c.add_local("f", "int32_t", (1,), index=True)
    c.declare_uf("f", range="{[v]: 0 <= v <= 1}")
    c.add_local("s", "double")
    c.add_stmt(spf.Stmt("$s$ = 0;", "{[z]: z = 0}"))
    c.add_stmt(spf.Stmt("$s$ += $x$(i);", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$f$(z) = $s$ > N ? 1 : 0;", "{[z]: z = 0}"))
    c.add_stmt(spf.Stmt("$x$(i) = 1;", "{[i]: 0 <= i < N && f(0) = 0}"))
    c.add_stmt(spf.Stmt("$x$(i) = 2;", "{[i]: 0 <= i < N && f(0) = 1}"))
    kernel = c.compile()
    for start, want in ((5.0, 2.0), (0.0, 1.0), (5.0, 2.0)):
        x = np.array([start, 1.0])
        kernel(x=x, N=2)
        assert x.tolist() == [want, want], start


def _ordered_rowptr(c: spf.Computation) -> None:
    """Declare the run-time index array rowptr[N+1], 0 .. NNZ, nondecreasing, at once."""
    c.add_data_space(
        "rowptr", "int32_t", shape=("N+1",), index=True, range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )  # fmt: skip


def _rowsum_declared_at_once() -> spf.Computation:
    """_rowsum with the index array's range and order given to add_data_space."""
    c = spf.Computation("rowsum")
    c.declare_uf("row", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}")
    c.add_data_space("cnt", "int32_t", shape=("N",))
    _ordered_rowptr(c)
    c.add_data_space("y", "double", shape=("N",))
    c.add_data_space("A", "double", shape=("NNZ",))
    for s in _rowsum().stmts:
        c.add_stmt(spf.Stmt(s.source, str(s.domain)))
    return c


def test_add_data_space_takes_the_index_arrays_range_and_order() -> None:
    c = _rowsum_declared_at_once()
    assert c.ufs["rowptr"] == _rowsum().ufs["rowptr"]
    assert c.codegen() == _rowsum().codegen()
    row, a = _coo(9, 30, seed=3)
    y, rowptr = np.zeros(9), np.zeros(10, np.int32)
    c.compile()(N=9, NNZ=30, row=row, cnt=np.zeros(9, np.int32), rowptr=rowptr, y=y, A=a)
    assert np.allclose(y, np.bincount(row, weights=a, minlength=9))
    back = spf.Computation.from_json(c.to_json())
    assert back.ufs["rowptr"] == c.ufs["rowptr"]


def test_add_local_takes_the_index_arrays_range_and_order() -> None:
    c = spf.Computation("loc")
    c.add_local("p", "int64_t", shape=("N",), index=True, range="{[v]: 0 <= v < N}")
    assert c.ufs["p"].range is not None
    assert c.ufs["p"].dtype == "int64"
    assert c.data_spaces["p"].role == "local"


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"range": "{[v]: 0 <= v < N}"}, r"range= are properties .*pass index=True"),
        ({"monotonic": "increasing"}, r"monotonic= are properties .*pass index=True"),
    ],
)
def test_index_array_properties_without_index_are_refused(
    fields: dict[str, str], match: str
) -> None:
    c = spf.Computation("n")
    with pytest.raises(SpfError, match=match):
        c.add_data_space("p", "int32_t", shape=("N",), **fields)  # type: ignore[arg-type]
    assert "p" not in c.data_spaces


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"monotonic": "sideways"}, "monotonic must be"),
        ({"range": 5}, "range must be"),
        ({"range": "{[v, w]: 0 <= v < N}"}, "range"),
    ],
)
def test_bad_index_array_properties_are_spf_errors_and_declare_nothing(
    fields: dict[str, object], match: str
) -> None:
    c = spf.Computation("b")
    with pytest.raises(SpfError, match=match):
        c.add_data_space("p", "int32_t", shape=("N",), index=True, **fields)  # type: ignore[arg-type]
    assert "p" not in c.data_spaces
    assert "p" not in c.ufs


def _copied_rowptr(only: str = "") -> spf.Computation:
    """rowptr copied from an argument p, declared nondecreasing, then read as row bounds;
    both statements run only where the condition ``only`` holds (``"PHASE = 1 && "``)."""
    c = spf.Computation("copyrows")
    c.add_data_space("p", "int32_t", shape=("N+1",))
    _ordered_rowptr(c)
    c.add_data_space("A", "double", shape=("NNZ",))
    c.add_data_space("y", "double", shape=("N",))
    c.add_stmt(spf.Stmt("$rowptr$(i) = $p$(i);", f"{{[i]: {only}0 <= i <= N}}"))
    rows = f"{{[i,k]: {only}0 <= i < N && rowptr(i) <= k < rowptr(i+1)}}"
    c.add_stmt(spf.Stmt("$y$(i) += $A$(k);", rows))
    return c


def test_an_index_array_out_of_its_declared_order_is_reported_when_the_kernel_returns() -> None:
    k = _copied_rowptr().compile()
    a = np.arange(6.0)
    y = np.zeros(3)
    k(p=np.array([0, 2, 4, 6], np.int32), rowptr=np.zeros(4, np.int32), A=a, y=y, N=3)
    assert y.tolist() == [1.0, 5.0, 9.0]
    with pytest.raises(ArgumentError, match=r"rowptr\[2\] = 2 breaks it against rowptr\[1\]"):
        k(p=np.array([0, 4, 2, 6], np.int32), rowptr=np.zeros(4, np.int32), A=a, y=y, N=3)
    with pytest.raises(ArgumentError, match="outside the range"):  # the first fault wins
        k(p=np.array([0, 4, 9, 6], np.int32), rowptr=np.zeros(4, np.int32), A=a, y=y, N=3)
    k(p=np.array([0, 0, 0, 0], np.int32), rowptr=np.zeros(4, np.int32), A=a, y=y, N=3)
    k(p=np.array([0], np.int32), rowptr=np.zeros(1, np.int32), A=a[:0], y=y[:0], N=0)


def test_an_increasing_index_array_with_equal_neighbours_is_reported() -> None:
    c = spf.Computation("inc")
    c.add_data_space("p", "int32_t", shape=("N",))
    c.add_data_space(
        "q", "int32_t", shape=("N",), index=True, range="{[v]: 0 <= v < M}", monotonic="increasing"
    )
    c.add_data_space("x", "double", shape=("M",))
    c.add_stmt(spf.Stmt("$q$(i) = $p$(i);", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$x$(q(i)) += 1.0;", "{[i]: 0 <= i < N}"))
    k = c.compile()
    x = np.zeros(4)
    k(p=np.array([0, 1, 3], np.int32), q=np.zeros(3, np.int32), x=x, M=4)
    assert x.tolist() == [1.0, 1.0, 0.0, 1.0]
    with pytest.raises(ArgumentError, match=r"q\[2\] = 1 breaks it against q\[1\]"):
        k(p=np.array([0, 1, 1], np.int32), q=np.zeros(3, np.int32), x=x, M=4)


def test_redeclaring_an_index_array_after_statements_hold_it_is_refused() -> None:
    c = _rowsum(declare_range=False)
    with pytest.raises(SpfError, match=r"statement s0 was added with .*before adding statements"):
        c.declare_uf("rowptr", range="{[v]: 0 <= v <= NNZ}")
    assert c.ufs["rowptr"].range is None


def test_an_ordered_index_array_no_statement_read_is_not_checked() -> None:
    """A phase that neither computes nor reads the array leaves whatever it held."""
    k = _copied_rowptr("PHASE = 1 && ").compile()
    a, y = np.arange(6.0), np.zeros(3)
    garbage = np.array([5, 1, 7, 0], np.int32)
    k(p=np.array([0, 2, 4, 6], np.int32), rowptr=garbage, A=a, y=y, N=3, PHASE=0)
    assert garbage.tolist() == [5, 1, 7, 0]
    with pytest.raises(ArgumentError, match="breaks it against"):
        k(p=np.array([0, 4, 2, 6], np.int32), rowptr=garbage, A=a, y=y, N=3, PHASE=1)


def _rebuilt_order(final_write: bool) -> spf.Computation:
    c = spf.Computation("rebuilt")
    c.add_data_space("x", "double", shape=("N",))
    c.add_data_space("y", "double", shape=("N",))
    c.add_data_space(
        "p", "int32_t", shape=("N",), index=True, range="{[v]: 0 <= v < N}",
        monotonic="increasing",
    )  # fmt: skip
    c.add_stmt(spf.Stmt("$p$(i) = 0;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    c.add_stmt(spf.Stmt("$y$(p(i)) = $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    if final_write:
        c.add_stmt(spf.Stmt("$p$(i) = i;", "{[i]: 0 <= i < N}", "{[i]->[2,i,0]}"))
    return c


def test_an_ordered_index_array_written_after_a_uf_read_is_not_trusted_by_a_schedule() -> None:
    """The declared order of a run-time index array is checked on its final contents only;
    a schedule of a computation that reads it as a UF before writing it again is refused
    (reversing ``y(p(i)) = x(i)`` while ``p`` was all zeros ran as if the writes of ``y``
    were disjoint and left y[0] = 1 instead of 8); in program order it still runs."""
    x = np.arange(1.0, 9.0)
    y = np.zeros(8)
    _rebuilt_order(True).compile()(x=x, y=y, p=np.zeros(8, np.int32))
    assert y[0] == 8.0
    c = _rebuilt_order(True)
    c.stmt(1).reverse("i")
    with pytest.raises(IllegalScheduleError, match="'p' is declared increasing and s1 reads"):
        c.compile()
    c = _rebuilt_order(False)  # written once, before every read: the order covers the reads
    c.stmt(1).reverse("i")
    c.check_legality()

"""spf.einsum: parsing (ParseError with a caret), summation scopes, loop orders chosen from
the formats' relations, the computations built, and the errors for bad formulas, formats
and arguments. Kernels against numpy / pydata sparse: tests/e2e/test_einsum_kernels.py."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.errors import ArgumentError, CodegenError, ParseError
from spf.formats import COO, CSC, CSF, CSR
from spf.index_notation.expand import expand
from spf.index_notation.parse import parse


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("y(i) = ", "expected a tensor", 7),
        ("y(i) == x(i)", "expected a tensor", 6),
        ("y(i) = A(i,i)", "index 'i' appears twice", 11),
        ("y(i = x", "expected ',' or ')'", 4),
        ("y(i) = x(i) / 2", "unexpected character '/'", 12),
        ("y(i) = x(i) y(i)", "expected '+', '-', '*' or the end", 12),
        ("3 = x", "expected the output tensor", 0),
        ("y(i) = (x(i) + 1", "')' closing", 16),
        ("y(i) x(i)", "'=' or '+=' after the output", 5),
    ],
)
def test_bad_formulas_raise_parse_errors_with_a_caret(text: str, message: str, column: int) -> None:
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        spf.einsum(text)
    assert info.value.span is not None
    assert info.value.span[0] == column
    assert str(info.value).splitlines()[-1].index("^") == column + 2


def test_empty_and_non_string_formulas() -> None:
    with pytest.raises(ParseError, match="empty"):
        spf.einsum("  ")
    with pytest.raises(ParseError, match="string"):
        spf.einsum(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("y(i) = A(i,j)*x(j) + 2*z(i)", ["A(i,j)*x(j) summed over j", "2*z(i)"]),
        ("s = x(i) + y(i)", ["x(i) summed over i", "y(i) summed over i"]),
        (
            "y(i) = (A(i,j) + B(i,j)) * x(j)",
            ["A(i,j)*x(j) summed over j", "B(i,j)*x(j) summed over j"],
        ),
        ("y(i) = x(i) - x(i)", []),
        ("C(i,j) = A(i,j) + A(i,j)", ["2*A(i,j)"]),
        ("y(i) = -(a(i) - 3*b(i))", ["-1*a(i)", "3*b(i)"]),
        ("y(i) = x(j)", ["x(j) summed over j"]),
        # a sum's terms are one subexpression however grouped: w(i) is not summed over j
        # (audit27: it was, J times, unless the other terms were parenthesised)
        ("y(i) = A(i,j) + B(i,j) + w(i)", ["A(i,j) summed over j", "B(i,j) summed over j", "w(i)"]),
        (
            "y(i) = (A(i,j) + w(i)) + B(i,j)",
            ["A(i,j) summed over j", "w(i)", "B(i,j) summed over j"],
        ),
        ("y(i) = A(i,j) - A(i,j) + w(i)", ["w(i)"]),
        (
            "s = (x(i) + 1) * (z(i) + 1)",
            [
                "x(i)*z(i) summed over i",
                "x(i) summed over i",
                "z(i) summed over i",
                "1 summed over i",
            ],
        ),
    ],
)
def test_sums_cover_the_smallest_subexpression_holding_their_index(
    text: str, terms: list[str]
) -> None:
    assert [str(m) for m in expand(parse(text))] == terms


def test_loop_orders_follow_the_formats() -> None:
    spmv = spf.einsum("y(i) = A(i,j) * x(j)", A=CSR)
    assert isinstance(spmv, spf.index_notation.Einsum)
    assert [s.loops for s in spmv.stmts] == [("i",), ("i", "A_k", "j")]
    csc = spf.einsum("y(i) = A(i,j) * x(j)", A=CSC)
    assert csc.stmts[1].loops == ("j", "A_k", "i")
    mttkrp = spf.einsum("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", B=CSF(3))
    assert mttkrp.stmts[1].loops[-1] == "j"  # dense-only index innermost
    assert mttkrp.stmts[1].source == "$A$(i, j) += $B$(B_p3) * $C$(k, j) * $D$(l, j);"
    coo = spf.einsum("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", B=COO(3))
    assert coo.stmts[1].loops == ("B_p", "i", "k", "l", "j")
    gemm = spf.einsum("C(i,j) = A(i,k) * B(k,j)")
    assert gemm.stmts[1].loops == ("i", "j", "k")
    accumulate = spf.einsum("y(i) += A(i,j) * x(j)", A=CSR)
    assert len(accumulate.stmts) == 1  # no zeroing for +=


def test_computation_is_an_ordinary_one() -> None:
    comp = spf.einsum("y(i) = A(i,j) * x(j)", A=CSR)
    assert list(comp.data_spaces) == ["y", "A", "x"]
    assert set(comp.ufs) == {"A_rowptr", "A_col"}
    assert comp.is_parallel_legal("s1", "i")
    comp.stmt("s1").parallelize("i")
    comp.check_legality()
    text = comp.codegen()
    assert "#pragma omp parallel for" in text
    assert "A_rowptr(i)" in text
    back = spf.Computation.from_json(comp.to_json())
    assert back.codegen() == text


def test_named_sizes_and_computation_name() -> None:
    comp = spf.einsum("y(i) = A(i,j) * x(j)", A=CSR, sizes={"i": "N", "j": "M"}, name="mv")
    assert comp.name == "mv"
    assert comp.data_spaces["y"].shape == ("N",)
    with pytest.raises(ArgumentError, match="not indices"):
        spf.einsum("y(i) = x(i)", sizes={"q": "Q"})
    with pytest.raises(ArgumentError, match="clashes"):
        spf.einsum("y(i) = x(i)", sizes={"i": "x"})
    with pytest.raises(ArgumentError, match="size name"):
        spf.einsum("y(i) = x(i)", sizes={"i": "1N"})
    with pytest.raises(ArgumentError, match="C identifier"):
        spf.einsum("y(i) = x(i)", name="not a name")


@pytest.mark.parametrize(
    ("text", "formats", "message"),
    [
        ("y(i) = A(i,j) * x(j)", {"B": CSR}, "does not name"),
        ("y(i) = A(i,j) * x(j)", {"A": "CSR"}, "must be an spf.Format"),
        ("y(i) = A(i,j) * x(j)", {"A": CSF(3)}, "has 2 index"),
        ("y(i) = A(i,j) * A(j)", {}, "keeps its number of dimensions"),
        ("y(i) = y(i) * 2", {}, "also read on the right"),
        ("s = x(i)", {"s": CSR}, "has 0 index"),
        ("y(i) = A(i,j) * B(j,i) * x(j)", {"A": CSR, "B": CSR}, "no loop order"),
        ("C(i,j) = A(i,j) * 2", {"A": CSR, "C": COO}, "compressed matrix format"),
        ("C(i,j) += A(i,j)", {"A": CSR, "C": CSR}, "'\\+=' into the sparse output"),
        ("C(i,j) = A(i,j)", {"A": CSR, "C": CSC}, "no loop order"),
        ("y(i) = i(i)", {}, "names both a tensor and an index"),
    ],
)
def test_bad_formats_raise_argument_errors(
    text: str, formats: dict[str, object], message: str
) -> None:
    with pytest.raises(ArgumentError, match=message):
        spf.einsum(text, **formats)


MERGE = "while ({p} < spf_end_{p} && {q} < spf_end_{q})"


@pytest.mark.parametrize(
    ("text", "formats", "cursors"),
    [
        ("s = a(i) * b(i)", {"a": CSF(1), "b": CSF(1)}, ("a_p1", "b_p1")),
        ("C(i,j) = A(i,j) * B(i,j)", {"A": CSR, "B": CSR}, ("A_k", "B_k")),
        ("O(i,j) = S(i,j) * X(i,k) * Y(j,k)", {"S": CSR, "X": CSR, "Y": CSR}, ("X_k", "Y_k")),
    ],
)
def test_two_sparse_operands_sharing_an_index_are_merged_not_guarded(
    text: str, formats: dict[str, spf.Format], cursors: tuple[str, str]
) -> None:
    comp = spf.einsum(text, **formats)
    p, q = cursors
    assert f"for {p} [coiterate({q})]:" in comp.loop_structure()
    assert MERGE.format(p=p, q=q) in comp.codegen()


def test_a_sparse_output_of_an_intersection_is_merged_in_both_phases() -> None:
    comp = spf.einsum("C(i,j) = A(i,j) * B(i,j)", A=CSR, B=CSR, C=CSR)
    for phase in (comp.symbolic, comp.numeric):
        assert MERGE.format(p="A_k", q="B_k") in phase.codegen()
    assert "thr" not in comp.numeric.data_spaces  # no sort: the merge lists columns in order


def test_a_sum_of_two_csr_operands_into_csr_is_a_union_merge() -> None:
    comp = spf.einsum("C(i,j) = A(i,j) - 2 * B(i,j)", A=CSR, B=CSR, C=CSR)
    phase = comp.numeric
    assert "for A_k [coiterate(B_k, left=s2, right=s3)]:" in phase.loop_structure()
    assert MERGE.format(p="A_k", q="B_k") in phase.codegen()
    assert "mark" not in phase.data_spaces  # each column visited once
    assert "thr" not in phase.data_spaces  # in order: no sort
    assert comp.numeric.stmt("s2").source.startswith("$lst$(len(0)) = A_col(A_k);")
    # the list and its length are trusted: the length saturates at the last slot
    text = comp.numeric.codegen()
    assert "spf_ds_len(0) += len(0) < J - 1;" in text
    assert "spf_index_in_int32_t(len[" not in text
    assert "spf_index_in_int32_t(lst[" not in text


def test_the_sizing_of_a_union_marks_the_first_row_and_counts_the_second() -> None:
    # no merge: A's columns are marked (stores only), B's unmarked ones counted (a sum
    # kept in a register), branch-free; a merge's branches follow the columns' order
    comp = spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR)
    sizing = comp.symbolic
    assert "coiterate" not in sizing.loop_structure()
    assert [s.source for s in sizing.stmts[1:3]] == [
        "$mark$(j) = i + 1; $C_rowptr$(i + 1) += 1;",
        "$C_rowptr$(i + 1) += $mark$(j) != i + 1;",
    ]
    # the count is kept in a register (the row's local, spf.codegen.row_scalar) and stored once
    code = sizing.codegen()
    assert "spf_row += mark(B_col_A_k) != i + 1;" in code
    assert "C_rowptr(i + 1) = spf_row;" in code


def test_a_union_merge_of_rows_with_repeated_columns_stays_in_its_workspace() -> None:
    # row 0 of A repeats column 1 six times (J = 3): its union is longer than the row
    # workspace; unchecked, the fill phase stays in bounds (the length saturates), checked,
    # the call reports the ordering fact
    kernel = spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR).compile()
    a = {"A_rowptr": np.array([0, 6, 6], np.int32), "A_col": np.ones(6, np.int32),
         "A": np.ones(6), "A_NNZ": 6}  # fmt: skip
    b = {"B_rowptr": np.array([0, 1, 2], np.int32), "B_col": np.array([2, 0], np.int32),
         "B": np.ones(2), "B_NNZ": 2}  # fmt: skip
    ptr, col, val = np.array([0, 3, 4], np.int32), np.zeros(4, np.int32), np.zeros(4)
    kernel.numeric(check=False, I=2, J=3, C_rowptr=ptr, C_col=col, C=val, C_NNZ=4, **a, **b)
    assert set(col[:3]) <= {0, 1, 2}
    assert col[3] == 0
    with pytest.raises(spf.ArgumentError, match="A_col"):
        kernel(I=2, J=3, **a, **b)


@pytest.mark.parametrize(
    ("text", "formats", "message"),
    [
        ("s = a(i) * b(i) * c(i)", {"a": CSF(1), "b": CSF(1), "c": CSF(1)}, "two lists"),
        ("s = A(i,j) * B(i,j)", {"A": CSF(2), "B": CSF(2)}, "must be the innermost index"),
        ("C(i,j) = A(i,j) * B(i,j)", {"A": COO, "B": COO}, "without an ordering fact"),
        ("C(i,j) = A(i,j) * B(i,j)", {"A": CSR, "B": COO}, "B reads j at the position"),
    ],
)
def test_products_that_are_not_one_merge_are_refused_not_guarded(
    text: str, formats: dict[str, spf.Format], message: str
) -> None:
    with pytest.raises(CodegenError, match=message) as info:
        spf.einsum(text, **formats)
    # two operands: no "all but two of them" (audit16), no loops named "none"
    assert ("all but two" in str(info.value)) == (len(formats) > 2)
    assert "loops none" not in str(info.value)


def test_too_many_products_are_refused() -> None:
    factors = " * ".join(f"(a{n}(i) + b{n}(i))" for n in range(7))
    with pytest.raises(ArgumentError, match="more than 64 products"):
        spf.einsum(f"y(i) = {factors}")


def test_bad_options() -> None:
    with pytest.raises(ArgumentError, match="parallel"):
        spf.einsum("y(i) = x(i)", parallel="yes")  # type: ignore[arg-type]
    with pytest.raises(spf.SpfError, match="index_dtype"):
        spf.einsum("y(i) = A(i,j) * x(j)", A=CSR, index_dtype="float32")


@pytest.fixture(scope="module")
def spmv() -> spf.index_notation.EinsumKernel:
    comp = spf.einsum("y(i) = A(i,j) * x(j)", A=CSR)
    assert isinstance(comp, spf.index_notation.Einsum)
    return comp.compile()


def test_extents_come_from_shapes_and_prefixed_sizes(spmv: spf.index_notation.EinsumKernel) -> None:
    a = sp.random_array((6, 4), density=0.5, format="csr", rng=3)
    x, y = np.arange(4.0), np.zeros(6)
    spmv(y=y, x=x, **spf.sparse.csr_args(a, prefix="A_"))
    assert np.allclose(y, a @ x)
    with pytest.raises(ArgumentError, match=r"J is 4 from A_M but 3 from x\.shape"):
        spmv(y=y, x=np.ones(3), **spf.sparse.csr_args(a, prefix="A_"))
    with pytest.raises(ArgumentError, match=r"indexed x\(j\) but is a 2-d array"):
        spmv(y=y, x=np.ones((4, 1)), **spf.sparse.csr_args(a, prefix="A_"))
    with pytest.raises(ArgumentError, match="A_N must be a non-negative int"):
        spmv(y=y, x=x, **{**spf.sparse.csr_args(a, prefix="A_"), "A_N": -1})


def test_a_call_resolves_its_extents_without_walking_the_formula(
    spmv: spf.index_notation.EinsumKernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel keeps its formula's ExtentPlan: a call reads neither the sparse aliases nor
    the accesses again (they cost ~25 us a call), and resolves what a fresh plan does."""
    import spf.index_notation.kernel as kernel

    a = sp.random_array((5, 3), density=0.6, format="csr", rng=4)
    args = {"y": np.zeros(5), "x": np.arange(3.0), **spf.sparse.csr_args(a, prefix="A_")}
    want = kernel.resolve_extents(spmv.formula, args)
    assert want["I"] == 5
    assert want["J"] == 3
    assert "A_N" not in want

    def walked(*_: object) -> None:
        raise AssertionError("the formula was walked again")

    monkeypatch.setattr(kernel, "sparse_aliases", walked)
    monkeypatch.setattr(kernel, "_rhs", walked)
    spmv(**args)
    assert np.allclose(args["y"], a @ args["x"])
    with pytest.raises(ArgumentError, match=r"J is 3 from A_M but 2 from x\.shape"):
        spmv(**{**args, "x": np.ones(2)})


def test_a_dense_output_is_zeroed_row_by_row_where_its_row_loop_leads_the_product(
    spmv: spf.index_notation.EinsumKernel,
) -> None:
    # SpMV: y(i) zeroed inside the row loop, just before its sum (no pass of its own over y)
    text = spf.einsum("y(i) = A(i,j) * x(j)", A=CSR).loop_structure()
    assert text == "for i:\n  s0\n  for A_k:\n    s1"
    spmm = spf.einsum("Y(i,k) = A(i,j) * X(j,k)", A=CSR).loop_structure()
    assert spmm == "for i:\n  for k:\n    s0\n  for A_k:\n    for k:\n      s1"
    # CSF's rows are iterated from its storage, not a dense loop: zeroed in a nest of its own
    ttv = spf.einsum("A(i,j) = B(i,j,k) * c(k)", B=CSF(3)).loop_structure()
    assert ttv.startswith("for i:\n  for j:\n    s0\nfor B_p1:")
    # every row overwritten, empty ones too, and a matrix with no columns (the products'
    # loops are guarded by J >= 1; the zeroing is not)
    a = sp.csr_array(np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 3.0]]))
    y = np.full(3, np.nan)
    spmv(y=y, x=np.ones(3), **spf.sparse.csr_args(a, prefix="A_"))
    assert np.array_equal(y, [2.0, 0.0, 4.0])
    y = np.full(3, np.nan)
    spmv(y=y, x=np.ones(0), **spf.sparse.csr_args(sp.csr_array((3, 0)), prefix="A_"))
    assert np.array_equal(y, np.zeros(3))


def test_prefix_of_the_args_helpers() -> None:
    a = sp.eye_array(2, format="csr")
    assert list(spf.sparse.csr_args(a, prefix="A_")) == [
        "A", "A_rowptr", "A_col", "A_N", "A_M", "A_NNZ",
    ]  # fmt: skip
    assert "B" in spf.sparse.sptrsv_args(a, prefix="B_")
    assert "T_W" in spf.sparse.ell_args(a, prefix="T_")
    assert "A_colptr" in spf.sparse.format_args(a, spf.formats.CSC, prefix="A_")
    with pytest.raises(ArgumentError, match="operand name followed by '_'"):
        spf.sparse.csr_args(a, prefix="A")


def test_a_sparse_output_whose_row_pointers_overflow_says_to_use_int64() -> None:
    from spf.index_notation.sparse_output import output_size

    comp = spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR)
    assert isinstance(comp, spf.index_notation.SparseEinsum)
    f, c = comp.formula, comp.output
    wrapped = np.array([0, 2**31 - 5, -(2**31) + 3], dtype=np.int32)  # the last row wrapped
    with pytest.raises(ArgumentError, match="index_dtype='int64'"):
        output_size(f, c, wrapped)
    with pytest.raises(ArgumentError, match="would not fit in this machine's memory"):
        output_size(f, c, np.array([0, 2**62], dtype=np.int64))
    assert output_size(f, c, np.array([0, 0, 3], dtype=np.int32)) == 3
    assert output_size(f, c, np.array([0], dtype=np.int32)) == 0


def test_deep_nesting_is_a_parse_error_not_a_recursion_error() -> None:
    with pytest.raises(spf.ParseError, match="nests too deeply"):
        spf.einsum("y(i) = " + "(" * 600 + "x(i)" + ")" * 600)
    with pytest.raises(spf.ParseError, match="nests too deeply"):
        spf.einsum("y(i) = " + "-" * 1200 + "x(i)")


def test_a_constant_too_large_for_a_double_is_a_parse_error() -> None:
    """``1e400`` read as inf, which the generated C then named as an undeclared 'inf'."""
    with pytest.raises(spf.ParseError, match="1e400 is too large for a double"):
        spf.einsum("y(i) = 1e400 * x(i)")


def test_a_sparse_output_along_an_index_an_operand_iterates_is_refused_in_good_grammar() -> None:
    with pytest.raises(ArgumentError, match="but T iterates i from its storage; give it a format"):
        spf.einsum("C(i,k) = T(i,j,k) * v(j)", T=CSF(3), C=CSR)


def test_refusals_name_each_reason_once() -> None:
    """'the output Y is built along k' came twice, 'COO and COO has no ordering fact'."""
    with pytest.raises(ArgumentError) as info:
        spf.einsum("Y(i,k) = 0.5 * w(j) * F(j,k)", F=CSR, Y=CSC)
    assert str(info.value).count("the output Y is built along k") == 1
    with pytest.raises(CodegenError, match=r"A \(COO\) and B \(COO\) both .*; COO has no") as err:
        spf.einsum("C(i,j) = A(i,j) * B(i,j)", A=COO, B=COO)
    assert "COO and COO" not in str(err.value)

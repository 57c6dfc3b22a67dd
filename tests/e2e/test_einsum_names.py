"""spf.einsum with tensor, index and extent names that meet the names it generates: a
sparse operand's index arrays, sizes and position loops (``A_col``, ``A_NNZ``, ``A_k``; a
second use of ``A`` in one product scans positions ``A2_k``), and a sparse output's arrays
and row workspaces (``C_rowptr``, ``C_CAP``, ``mark``). A clash is refused with an
``ArgumentError`` naming it, or avoided (another sparse tensor named ``A2``), never
compiled into a kernel whose loops share a variable (audit16: wrong results, silently)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.errors import ArgumentError
from spf.formats import CSR
from spf.sparse import csr_args


def _dense(n: int, m: int, seed: int) -> np.ndarray:
    return sp.random_array((n, m), density=0.5, format="csr", rng=seed).toarray()


def test_a_second_use_of_a_operand_does_not_share_the_loops_of_an_operand_named_like_it() -> None:
    a, b = _dense(5, 5, 1), _dense(5, 5, 2)
    comp = spf.einsum("C(i,l) = A(i,j) * A(j,k) * A2(k,l)", A=CSR, A2=CSR)
    domains = " ".join(str(s.domain) for s in comp.stmts)
    assert "A2_k" in domains  # A2's positions
    assert "A3_k" in domains  # A's second use skips the name A2
    out = np.zeros((5, 5))
    comp.compile()(C=out, **csr_args(a, prefix="A_"), **csr_args(b, prefix="A2_"))
    assert np.allclose(out, a @ a @ b)


def test_a_sparse_output_of_a_second_use_next_to_an_operand_named_like_it() -> None:
    a, b = _dense(5, 5, 3), _dense(5, 5, 4)
    comp = spf.einsum("C(i,l) = A(i,j) * A(j,k) * A2(k,l)", A=CSR, A2=CSR, C=CSR)
    out = comp.compile()(**csr_args(a, prefix="A_"), **csr_args(b, prefix="A2_"))
    got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=(5, 5)).toarray()
    assert np.allclose(got, a @ a @ b)


@pytest.mark.parametrize(
    ("text", "formats", "sizes", "name"),
    [
        # an index named like an operand's position loop (its extent renamed by sizes)
        ("y(A_k) = A(A_k,j) * x(j)", {"A": CSR}, {"A_k": "Q"}, "A_k"),
        ("y(i) = A(i,A_k) * x(A_k)", {"A": CSR}, {"A_k": "Q"}, "A_k"),
        ("C(i,B_k) = A(i,B_k) + B(i,B_k)", {"A": CSR, "B": CSR}, {"B_k": "Q"}, "B_k"),
        ("C(i,B_k) = A(i,B_k) + B(i,B_k)", {"A": CSR, "B": CSR, "C": CSR}, {"B_k": "Q"}, "B_k"),
        # a dense tensor named like an operand's index array, position loop or size
        ("y(i) = A(i,j) * A_col(j)", {"A": CSR}, None, "A_col"),
        ("y(i) = A(i,j) * A_k(j)", {"A": CSR}, None, "A_k"),
        ("y(i) = A(i,j) * A_NNZ(j)", {"A": CSR}, None, "A_NNZ"),
        ("y(i) = A(i,j) * A_N(i)", {"A": CSR}, None, "A_N"),  # csr_args(prefix="A_")'s A_N
        ("y(i,j) = A(i,j) * A_rowptr(i,j)", {"A": CSR, "A_rowptr": CSR}, None, "A_rowptr"),
        # a sparse output's arrays, sizes and row workspaces
        ("C(i,j) = A(i,j) + B(i,j) * C_CAP(j)", {"A": CSR, "B": CSR, "C": CSR}, None, "C_CAP"),
        (
            "C(i,j) = A(i,j) + B(i,j) * C_rowptr(j)",
            {"A": CSR, "B": CSR, "C": CSR},
            None,
            "C_rowptr",
        ),
        ("C(i,k) = A(i,j) * B(j,k) * mark(k)", {"A": CSR, "B": CSR, "C": CSR}, None, "mark"),
        ("C(i,tmp) = A(i,j) * B(j,tmp)", {"A": CSR, "B": CSR, "C": CSR}, {"tmp": "Q"}, "tmp"),
        ("C(i,k) = A(i,j) * B(j,k)", {"A": CSR, "B": CSR, "C": CSR}, {"k": "mark"}, "mark"),
    ],
)
def test_names_that_meet_generated_ones_are_refused(
    text: str, formats: dict[str, spf.Format], sizes: dict[str, str] | None, name: str
) -> None:
    with pytest.raises(ArgumentError, match=rf"einsum .*\b{name}\b.*rename") as info:
        spf.einsum(text, sizes=sizes, **formats)
    assert text in str(info.value)


@pytest.mark.parametrize(
    ("text", "formats"),
    [
        ("y(i) = A(i,j) * A_x(j)", {"A": CSR}),  # A_x is none of A's names: kept
        ("C(i,j) = A(i,j) + C_old(i,j)", {"A": CSR, "C": CSR}),
        ("C(i,len) = A(i,len) + B(i,len)", {"A": CSR, "B": CSR, "C": CSR}),  # named afresh
    ],
)
def test_names_next_to_generated_ones_are_kept(text: str, formats: dict[str, spf.Format]) -> None:
    comp = spf.einsum(text, **formats)
    assert isinstance(
        comp.codegen() if isinstance(comp, spf.Computation) else comp.numeric.codegen(), str
    )


@pytest.mark.parametrize(
    "text",
    [
        "C(i,j) = A(i,j) * x(j) + B(i,j) * {}(i)",  # a union: its sizing and single pass
        "C(i,k) = A(i,j) * B(j,k) * {}(k)",  # the dense row, its sort and the bound
    ],
)
@pytest.mark.parametrize("name", ["z", "a", "k1", "s0"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_dense_operand_named_like_a_phase_s_own_names(text: str, name: str, threads: int) -> None:
    """A sparse output's phases name their run-once statements' iterator (``z``), the
    padding loop of the row's list (``a``), the quantified variables of the operands'
    ordering facts (CSR's ``k1``, ``k2``) and refer to their first statement (``s0``)
    apart from the formula's tensors: each raised a VerifyError or UndeclaredError."""
    from spf.runtime.threads import openmp_threads

    text = text.format(name)
    a, b = _dense(6, 7, 5), _dense(6, 7, 6)
    x = np.arange(1.0, 8.0)
    if "B(j,k)" in text:
        b = _dense(7, 6, 6)
        v = np.arange(1.0, 7.0)
        want, dense = (a @ b) * v, {name: v}
    else:
        v = np.arange(1.0, 7.0)
        want, dense = a * x + b * v[:, None], {"x": x, name: v}
    kernel = spf.einsum(text, A=CSR, B=CSR, C=CSR).compile()
    with openmp_threads(threads):  # one thread: the single pass; two: both phases
        out = kernel(**dense, **csr_args(a, prefix="A_"), **csr_args(b, prefix="B_"))
    got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=want.shape)
    assert got.has_sorted_indices
    assert np.allclose(got.toarray(), want)


@pytest.mark.parametrize("name", ["I", "J", "A_NNZ"])
def test_a_kernel_named_like_one_of_its_sizes_is_refused_before_gcc(name: str) -> None:
    """The checked variant calls the plain function, whose name a parameter of the same
    name hid: gcc failed ('called object I is not a function'); now a CodegenError."""
    comp = spf.einsum("y(i) = A(i,j) * x(j)", A=CSR, name=name)
    with pytest.raises(
        spf.CodegenError, match=rf"function name {name} is also the name of a symbolic constant"
    ):
        comp.compile()


def test_the_interpreter_takes_the_arguments_the_kernel_takes() -> None:
    """``comp.interpret`` (the reference the docs compare with) refused the operands'
    prefixed sizes (``A_N``, ``A_M``) that ``csr_args(A, prefix="A_")`` passes and the
    compiled kernel takes ('unknown argument(s) A_M, A_N')."""
    a, b = _dense(5, 6, 7), _dense(5, 6, 8)
    comp = spf.einsum("C(i,j) = A(i,j) * B(i,j)", A=CSR, B=CSR)
    got = np.full((5, 6), 3.0)
    comp.interpret(C=got, **csr_args(a, prefix="A_"), **csr_args(b, prefix="B_"))
    assert np.allclose(got, a * b)

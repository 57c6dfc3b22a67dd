"""Generated kernels called the wrong way: positional arguments, constants that only a UF
declaration uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf import ArgumentError, Computation, Stmt, formats, kernels

if TYPE_CHECKING:
    from pathlib import Path


def test_positional_arguments_are_an_argument_error(tmp_path: Path) -> None:
    k = kernels.dense_mv().compile(cache_dir=tmp_path)
    y, A, x = np.zeros(3), np.ones((3, 2)), np.ones(2)
    with pytest.raises(ArgumentError, match=r"got 3 positional argument.*passed by name") as err:
        k(y, A, x)
    assert isinstance(err.value, TypeError)
    assert "dense_mv(M=..., N=..., y=..., A=..., x=...)" in str(err.value)
    with pytest.raises(ArgumentError, match="got 1 positional"):
        k(False, y=y, A=A, x=x)  # check is a keyword too
    k(y=y, A=A, x=x)
    assert y.tolist() == [2.0, 2.0, 2.0]


def test_constant_used_only_by_a_uf_declaration_is_an_argument(tmp_path: Path) -> None:
    comp = Computation("scatter")
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.declare_uf("f", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v < NNZ}")
    comp.add_stmt(Stmt("$A$(f(i)) = 1.0;", "{[i]: 0 <= i < N}"))
    assert comp.params == {"N", "NNZ"}
    k = comp.compile(cache_dir=tmp_path)
    assert k.signature.startswith("void scatter(int64_t N, int64_t NNZ, const int32_t *restrict f")
    A = np.zeros(5)
    k(A=A, f=np.array([4, 0, 2, 0], dtype=np.int32), N=3)
    assert A.tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]
    with pytest.raises(ArgumentError, match="length 3 is too short"):
        k(A=A, f=np.array([4, 0, 2], dtype=np.int32), N=3)


def test_constant_only_in_a_uf_domain_of_a_uf_only_used_in_bounds(tmp_path: Path) -> None:
    comp = Computation("rows")
    comp.add_data_space("y", "double", shape=("M",))
    comp.declare_uf("rp", domain="{[i]: 0 <= i <= R}", range="{[v]: 0 <= v <= M}",
                    monotonic="nondecreasing")  # fmt: skip
    comp.add_stmt(Stmt("$y$(k) += 1.0;", "{[k]: rp(0) <= k < rp(1)}"))
    k = comp.compile(cache_dir=tmp_path)
    y = np.zeros(4)
    k(y=y, rp=np.array([1, 3], dtype=np.int32), R=1)
    assert y.tolist() == [0.0, 1.0, 1.0, 0.0]


def test_interpret_binds_by_name_too() -> None:
    comp = kernels.dense_mv()
    with pytest.raises(ArgumentError, match=r"interpret\(dense_mv\): got 1 positional"):
        comp.interpret(np.zeros(3))


def test_positional_call_of_a_conversion_kernel_lists_the_names() -> None:
    conv = formats.convert(formats.COO, formats.CSR).compile()
    r, c = np.array([1, 0], dtype=np.int32), np.array([0, 1], dtype=np.int32)
    v = np.array([1.0, 2.0])
    with pytest.raises(ArgumentError, match=r"got 6 positional argument.*passed by name") as err:
        conv(r, c, v, 2, 2, 2)
    assert "convert(COO -> CSR)" in str(err.value)
    for name in ("row=...", "col=...", "A=...", "N=...", "M=...", "NNZ=..."):
        assert name in str(err.value)
    out = conv(row=r, col=c, A=v, N=2, M=2, NNZ=2)
    assert out["rowptr"].tolist() == [0, 1, 2]


def test_positional_call_of_a_phased_conversion_kernel_lists_the_names() -> None:
    conv = formats.convert(formats.CSR, formats.ELL).compile()
    with pytest.raises(ArgumentError, match=r"convert\(CSR -> ELL\): got 1 positional.*rowptr"):
        conv(np.zeros(1, dtype=np.int32))


def test_positional_call_of_spgemm_lists_the_names() -> None:
    k = kernels.spgemm_csr(parallel=False).compile()
    with pytest.raises(ArgumentError, match=r"kernel: got 2 positional.*A_rowptr=\.\.\."):
        k(np.zeros(1), np.zeros(1))


def test_positional_call_of_a_wavefront_kernel_and_its_inspector_lists_the_names() -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    k = comp.compile()
    rowptr = np.array([0, 1], dtype=np.int32)
    with pytest.raises(ArgumentError, match=r"got 1 positional.*passed by name.*rowptr=\.\.\."):
        k(rowptr)
    with pytest.raises(ArgumentError, match=r"inspect: got 1 positional.*rowptr=\.\.\."):
        k.inspect(rowptr)


def test_a_wavefront_kernel_takes_its_sizes_from_the_arrays_as_any_kernel() -> None:
    # API §8: N and NNZ follow from u.shape[0] and L.shape[0] (they were required by inspect)
    import scipy.sparse as sp

    from spf import sparse

    n = 40
    m = sp.random(n, n, density=0.1, random_state=1, format="csr")
    low = sp.csr_matrix(sp.tril(m, -1) + 4 * sp.eye(n))
    low.sort_indices()
    a = sparse.csr_args(low)
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    k = comp.compile()
    f, u = np.arange(1.0, n + 1), np.zeros(n)
    arrays = {"f": f, "L": a["A"], "rowptr": a["rowptr"], "col": a["col"]}
    k(u=u, **arrays)
    np.testing.assert_allclose(low @ u, f)
    plan = k.inspect(u=u, **arrays)
    assert plan.level_of.shape == (n,)
    with pytest.raises(ArgumentError, match=r"inspect: give N"):  # no array holds N
        k.inspect(rowptr=a["rowptr"], col=a["col"])


@pytest.mark.parametrize("check", [True, False])
def test_a_proxy_of_an_array_is_an_argument_error_on_every_path(
    tmp_path: Path, check: bool
) -> None:
    """A ``weakref.proxy`` of an array reports ``ndarray`` as its ``__class__`` but has no
    buffer to bind: the full path, the fast paths of calls that look like earlier ones and
    prepared calls (plain, and with a wavefront plan after replayed calls) refuse it naming
    the argument, instead of cffi's ``TypeError`` (or a replay on it)."""
    import weakref

    import scipy.sparse as sps

    from spf.bench.fused import fused_solve_mv
    from spf.sparse import gauss_seidel_args

    m = sps.csr_array(sps.random_array((30, 30), density=0.2, rng=np.random.default_rng(1)))
    k = kernels.spmv_csr().compile(cache_dir=tmp_path)
    x, y = np.ones(30), np.zeros(30)
    csr = {"rowptr": m.indptr, "col": m.indices, "A": m.data}
    for _ in range(3):  # settle the fast paths
        k(y=y, x=x, check=check, **csr)
    with pytest.raises(ArgumentError, match=r"data space 'x', got ProxyType"):
        k(y=y, x=weakref.proxy(x), check=check, **csr)
    call = k.prepare(["y", "x"], check=check, N=30, M=30, **csr)
    for _ in range(3):
        call(y, x)
    with pytest.raises(ArgumentError, match=r"data space 'x', got ProxyType"):
        call(y, weakref.proxy(x))

    fused = fused_solve_mv().compile(cache_dir=tmp_path)
    tri = sps.csr_array(m + sps.eye_array(30) * 31.0).sorted_indices()
    args = gauss_seidel_args(tri)
    plan = fused.inspect(strategy="serial", **{n: v for n, v in args.items() if n != "A"})
    replay = fused.prepare(["x", "y", "b"], plan=plan, **args)
    b = np.ones(30)
    for _ in range(3):
        replay(np.zeros(30), y, b)
    with pytest.raises(ArgumentError, match=r"data space 'y', got ProxyType"):
        replay(np.zeros(30), weakref.proxy(y), b)


def _scaled() -> Computation:
    comp = Computation("scaled")
    comp.add_constant("alpha", "double")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_stmt(Stmt("$y$(i) = alpha * $y$(i);", "{[i]: 0 <= i < N}"))
    return comp


@pytest.mark.parametrize(
    ("alpha", "message"),
    [
        (
            np.complex128(1j),
            r"constant 'alpha' must be a number \(real: it is a double\), got complex128",
        ),
        (
            np.array(2 + 1j),
            r"constant 'alpha' must be a number \(real: it is a double\), got complex128",
        ),
        (
            np.complex64(1),
            r"constant 'alpha' must be a number \(real: it is a double\), got complex64",
        ),
        (10**400, r"constant 'alpha' = 1000.* does not fit a double"),
    ],
    ids=["complex128", "0-d complex array", "complex64", "int 10**400"],
)
def test_floating_constant_refuses_complex_and_huge_values(
    tmp_path: Path, alpha: object, message: str
) -> None:
    """A numpy complex value was cast to its real part (a ComplexWarning and a wrong
    result), a huge int surfaced Python's OverflowError; the interpreter binds the same."""
    comp = _scaled()
    k = comp.compile(cache_dir=tmp_path)
    y = np.ones(3)
    with pytest.raises(ArgumentError, match=message):
        k(y=y, alpha=alpha)
    with pytest.raises(ArgumentError, match=message):
        comp.interpret(y=y, alpha=alpha)
    assert y.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("alpha", [float("nan"), float("inf"), np.float32(2.5)])
def test_interpreter_takes_any_floating_constant_as_the_kernel(
    tmp_path: Path, alpha: float
) -> None:
    """The interpreter scanned its sets with every parameter made an int: NaN and inf
    raised Python's ValueError / OverflowError."""
    comp = _scaled()
    want, got = np.ones(3), np.ones(3)
    comp.compile(cache_dir=tmp_path)(y=want, alpha=alpha)
    comp.interpret(y=got, alpha=alpha)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("alpha", [np.complex128(1j), 10**400, np.bool_(True)])
def test_distributed_floating_constant_refuses_complex_and_huge_values(alpha: object) -> None:
    """The MPI runtime binds its constants with the same rule (``spf.distributed``)."""
    from spf.codegen.signature import Arg
    from spf.distributed.arguments import scalar

    arg = Arg(name="alpha", kind="param", ctype="double")
    assert scalar("k", arg, np.float32(0.5)) == 0.5
    with pytest.raises(
        ArgumentError, match=r"k: constant 'alpha' (= \d+ )?(must be a number \(real|does not fit)"
    ):
        scalar("k", arg, alpha)


def test_uf_domain_reaching_a_negative_index_is_refused(tmp_path: Path) -> None:
    """A declared domain from -1: the loops read ``f[-1]``, before the array's start (the
    checked call read it and ran; the length check started at 0). Refused by every checked
    call, the interpreter's included, naming the domain."""
    comp = Computation("negdom")
    comp.declare_uf("f", domain="{[i]: -1 <= i < N}", range="{[v]: 0 <= v < M}")
    comp.add_data_space("y", "double", shape=("N + 1",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(Stmt("$y$(i + 1) = $x$(f(i));", "{[i]: -1 <= i < N}"))
    k = comp.compile(cache_dir=tmp_path)
    args = {"x": np.arange(5.0), "f": np.array([1, 2, 3], dtype=np.int32), "N": 3, "M": 5}
    message = r"UF 'f' has the declared domain .* which reaches index -1 \(with M=5, N=3\)"
    for _ in range(2):  # the second call looks like the first: the fast path
        y = np.zeros(4)
        with pytest.raises(ArgumentError, match=f"^f: {message}"):
            k(y=y, **args)
        assert not y.any()
    with pytest.raises(ArgumentError, match=message):
        comp.interpret(y=np.zeros(4), **args)


def test_negative_size_named_as_such(tmp_path: Path) -> None:
    """``M=-1`` asked for 'an array of shape (3, -1)'."""
    k = kernels.dense_mv().compile(cache_dir=tmp_path)
    message = r"A: the declared shape \[N, M\] is \(3, -1\) with M=-1, N=3: a negative extent"
    with pytest.raises(ArgumentError, match=message):
        k(y=np.zeros(3), A=np.ones((3, 2)), x=np.ones(2), M=-1)


@pytest.mark.parametrize(
    ("rowptr", "col", "fact"),
    [
        ([0, 1, 2], [0, 0], r"diagonal|rowptr\(i\+1\) - 1 => col\(k\) = i"),
        ([0, 1, 1, 3], [0, 0, 2], r"rowptr\(i\+1\) - 1 => col\(k\) = i.*i = 1"),
        ([0, 0, 1], [1], r"0 <= k.*i = 0|accessed as L\(-1\)"),
    ],
    ids=["row ends left of its diagonal", "empty row", "empty first row"],
)
def test_sptrsv_refuses_a_row_without_its_diagonal(
    tmp_path: Path, rowptr: list[int], col: list[int], fact: str
) -> None:
    """A checked sptrsv_csr call divides row i by its last entry whatever its column: a
    row without its diagonal (singular L) gives a number, not an error."""
    n, nnz = len(rowptr) - 1, len(col)
    k = kernels.sptrsv_csr().compile(cache_dir=tmp_path)
    u = np.zeros(n)
    with pytest.raises(ArgumentError, match=fact):
        k(u=u, f=np.ones(n), L=np.arange(1.0, nnz + 1), rowptr=np.array(rowptr, np.int32),
          col=np.array(col, np.int32), NNZ=nnz)  # fmt: skip
    with pytest.raises(ArgumentError, match=fact):
        kernels.sptrsv_csr().interpret(
            u=u, f=np.ones(n), L=np.arange(1.0, nnz + 1), rowptr=np.array(rowptr),
            col=np.array(col), NNZ=nnz,
        )  # fmt: skip

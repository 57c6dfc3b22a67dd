"""Tensor formats CSF(order) and COO(order) (spf.formats.tensor), spf.sparse.csf_args /
coo_tensor_args, and the conversions between them (spf.formats.to_csf) against numpy and
pydata sparse: duplicates summed, empty tensors, int32 and int64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
import sparse

import spf
from spf.errors import ArgumentError, SpfError
from spf.formats import COO, CSF, CSR, convert
from spf.sparse import coo_tensor_args, csf_args, csr_args


def test_formats_are_relations() -> None:
    csf = CSF(3)
    assert csf is CSF(3)
    assert csf.coords == ("i1", "i2", "i3")
    assert csf.sizes == ("N1", "N2", "N3", "NNZ", "NNZ1", "NNZ2")
    assert set(csf.ufs) == {"pos1", "crd1", "pos2", "crd2", "pos3", "crd3"}
    assert len(csf.assume) == 3  # coordinates increase within every fiber
    assert CSF(1).storage == "{[i1] -> [p1]: pos1(0) <= p1 < pos1(1) && i1 = crd1(p1)}"
    assert COO(2) is spf.formats.COO
    assert COO(3).coords == ("i1", "i2", "i3")
    assert not COO(3).assume  # any order, duplicates allowed
    for bad in (0, -1, 2.0, True):
        with pytest.raises(SpfError, match="order must be an int"):
            CSF(bad)  # type: ignore[arg-type]
    with pytest.raises(SpfError, match="order must be an int"):
        COO(0)


def _random(
    shape: tuple[int, ...], nnz: int, seed: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    coords = (
        np.stack([rng.integers(0, max(d, 1), nnz) for d in shape])
        if nnz
        else np.zeros((len(shape), 0), int)
    )
    return coords, rng.random(nnz)


def _dense(
    coords: np.ndarray[Any, Any], values: np.ndarray[Any, Any], shape: tuple[int, ...]
) -> np.ndarray[Any, Any]:
    out = np.zeros(shape)
    np.add.at(out, tuple(coords), values)
    return out


def _csf_dense(args: dict[str, Any], shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """Walk a CSF tree (numpy only) back to a dense array."""
    out = np.zeros(shape)
    order = len(shape)

    def walk(level: int, parent: int, prefix: tuple[int, ...]) -> None:
        pos, crd = args[f"pos{level}"], args[f"crd{level}"]
        for p in range(pos[parent], pos[parent + 1]):
            if level == order:
                out[(*prefix, crd[p])] += args["A"][p]
            else:
                walk(level + 1, p, (*prefix, crd[p]))

    walk(1, 0, ())
    return out


@pytest.mark.parametrize(
    ("shape", "nnz"), [((5, 4, 3), 30), ((2, 2, 2), 0), ((1, 7), 5), ((9,), 6)]
)
def test_csf_args_sorts_and_sums_duplicates(shape: tuple[int, ...], nnz: int) -> None:
    coords, values = _random(shape, nnz, 1)
    args = csf_args(coords, values, shape)
    assert np.allclose(_csf_dense(args, shape), _dense(coords, values, shape))
    for level in range(1, len(shape) + 1):
        pos, crd = args[f"pos{level}"], args[f"crd{level}"]
        assert pos.dtype == np.int32
        for p in range(len(pos) - 1):  # strictly increasing within every fiber
            assert np.all(np.diff(crd[pos[p] : pos[p + 1]]) > 0)
    assert args["NNZ"] == len(args["A"]) == len({tuple(c) for c in coords.T})
    t = sparse.COO(coords, values, shape=shape)  # pydata sums duplicates the same way
    assert np.allclose(_csf_dense(csf_args(t.coords, t.data, shape, "int64"), shape), t.todense())


def _csf_by_lexsort(coords: Any, values: Any, shape: tuple[int, ...]) -> dict[str, Any]:
    """csf_args as it was built before auditeinsum: ``np.lexsort``, one pass a dimension."""
    c, vals = np.asarray(coords, dtype=np.int64), np.asarray(values, dtype=np.float64)
    perm = np.lexsort(c[::-1])
    c, vals = c[:, perm], vals[perm]
    new = np.ones(c.shape[1], dtype=bool)
    new[1:] = np.any(c[:, 1:] != c[:, :-1], axis=0)
    starts = np.flatnonzero(new)
    vals, c = np.add.reduceat(vals, starts), c[:, starts]
    out: dict[str, Any] = {"A": vals}
    parent, first = np.zeros(1, dtype=np.int64), np.zeros(c.shape[1], dtype=bool)
    first[:1] = True
    for level in range(len(shape)):
        first[1:] |= c[level, 1:] != c[level, :-1]
        nodes = np.flatnonzero(first)
        pos = np.searchsorted(nodes, parent) if level else np.zeros(1, dtype=np.int64)
        out[f"pos{level + 1}"], out[f"crd{level + 1}"] = np.append(pos, len(nodes)), c[level, nodes]
        parent = nodes
    return out


@pytest.mark.parametrize(
    ("shape", "order"),
    [
        ((40, 30, 20), "random"),
        ((40, 30, 20), "sorted"),  # no sort at all
        ((40, 30, 20), "sorted, no duplicates"),  # the values copied, not the caller's
        ((3, 2**40, 2**30), "random"),  # 2**71 positions: lexsort's passes
    ],
)
def test_csf_args_sorts_once_where_a_position_fits_int64(
    shape: tuple[int, ...], order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """auditeinsum: csf_args sorted with ``np.lexsort``, one pass a dimension (3.5 s for 4M
    entries of a 2000^3 tensor); one stable sort of each entry's row-major position gives the
    same order (1.2 s). The arrays are those of the lexsort, bit for bit."""
    rng = np.random.default_rng(7)
    coords = np.array([rng.integers(0, min(n, 6), 400) for n in shape])
    values = rng.random(400)
    if order.startswith("sorted"):
        perm = np.lexsort(coords[::-1])
        coords, values = coords[:, perm], values[perm]
    if order == "sorted, no duplicates":
        keep = np.ones(coords.shape[1], dtype=bool)
        keep[1:] = np.any(coords[:, 1:] != coords[:, :-1], axis=0)
        coords, values = coords[:, keep], values[keep]
    want = _csf_by_lexsort(coords, values, shape)
    fits = np.prod([float(n) for n in shape]) < 2.0**63
    if fits:
        monkeypatch.setattr(np, "lexsort", lambda *a, **k: pytest.fail("lexsort called"))
    got = csf_args(coords, values, shape, "int64")
    for name, array in want.items():
        assert np.array_equal(got[name], array), name
        assert got[name].dtype == array.dtype, name
    assert not np.shares_memory(got["A"], values)


def test_tensor_args_errors() -> None:
    with pytest.raises(ArgumentError, match=r"outside 0\.\.3"):
        csf_args([[0, 4]], [1.0, 2.0], (4,))
    with pytest.raises(ArgumentError, match="2 coordinates but 3 values"):
        csf_args([[0, 1]], [1.0, 2.0, 3.0], (4,))
    with pytest.raises(ArgumentError, match="integers"):
        coo_tensor_args([[0.5, 1.0]], [1.0, 2.0], (4,))
    with pytest.raises(ArgumentError, match="shape"):
        csf_args([[0]], [1.0], 4)
    with pytest.raises(ArgumentError, match="one coordinate array per dimension"):
        csf_args([[0, 1, 2]], [1.0, 2.0, 3.0], (4, 4))
    assert list(csf_args([[0]], [1.0], (2,), prefix="v_")) == [
        "v", "v_pos1", "v_crd1", "v_N1", "v_NNZ",
    ]  # fmt: skip


_CONVERSIONS: dict[tuple[str, str, str], Any] = {}


def _conversion(src: spf.Format, dst: spf.Format, dtype: str = "int32") -> Any:
    key = (src.name, dst.name, dtype)
    if key not in _CONVERSIONS:
        _CONVERSIONS[key] = convert(src, dst, index_dtype=dtype).compile()
    return _CONVERSIONS[key]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(
    ("shape", "nnz"), [((6, 5, 4), 40), ((3, 3, 3), 0), ((1, 1, 1), 3), ((2, 7, 5), 9)]
)
def test_coo_to_csf_matches_csf_args(dtype: str, shape: tuple[int, ...], nnz: int) -> None:
    coords, values = _random(shape, nnz, 2)  # duplicates likely
    out = _conversion(COO(3), CSF(3), dtype)(**coo_tensor_args(coords, values, shape, dtype))
    want = csf_args(coords, values, shape, dtype)
    assert sorted(out) == sorted(want)
    for key, value in want.items():
        if key == "A":
            assert np.allclose(out[key], value)
        elif isinstance(value, np.ndarray):
            assert out[key].dtype == np.dtype(dtype)
            assert np.array_equal(out[key], value), key
        else:
            assert out[key] == value, key


def test_csf_to_coo_round_trip() -> None:
    shape = (4, 6, 3)
    coords, values = _random(shape, 25, 3)
    csf = csf_args(coords, values, shape)
    out = _conversion(CSF(3), COO(3))(**csf)
    assert sorted(out) == ["A", "N1", "N2", "N3", "NNZ", "crd1", "crd2", "crd3"]
    back = np.stack([out["crd1"], out["crd2"], out["crd3"]])
    assert np.allclose(_dense(back, out["A"], shape), _dense(coords, values, shape))


def test_matrix_formats_convert_into_csf() -> None:
    a = sp.random_array((7, 9), density=0.3, format="csr", rng=4)
    out = _conversion(CSR, CSF(2))(**csr_args(a))
    assert np.allclose(_csf_dense(out, (7, 9)), a.toarray())
    assert out["NNZ1"] == len(np.unique(a.tocoo().row))  # empty rows are not stored
    coo = a.tocoo()
    back = _conversion(CSF(2), spf.formats.COO)(**out)
    assert sorted(back) == ["A", "M", "N", "NNZ", "col", "row"]
    again = sp.coo_array((back["A"], (back["row"], back["col"])), shape=(back["N"], back["M"]))
    assert np.allclose(again.toarray(), coo.toarray())


def test_conversion_errors() -> None:
    with pytest.raises(SpfError, match="keeps the order"):
        convert(COO(3), CSF(2))
    with pytest.raises(SpfError, match="into COO\\(order\\) and CSF\\(order\\)"):
        convert(CSF(2), CSR)
    conv = convert(COO(3), CSF(3))
    assert "cv_o0" in conv.data_spaces  # printable, an ordinary Computation
    assert "for t" in conv.loop_structure()


def test_csf_operand_of_order_two_in_einsum() -> None:
    a = sp.random_array((8, 6), density=0.3, format="csr", rng=5)
    a = sp.csr_array(a.toarray() * (np.arange(8) % 2 == 0)[:, None])  # empty rows
    coo = a.tocoo()
    x, y = np.arange(6.0), np.zeros(8)
    comp = spf.einsum("y(i) = A(i,j) * x(j)", A=CSF(2))
    comp.compile()(
        y=y, x=x, **csf_args(np.stack([coo.row, coo.col]), coo.data, a.shape, prefix="A_")
    )
    assert np.allclose(y, a @ x)


def test_tensor_args_refuse_complex_values_as_csr_args_does() -> None:
    """Complex values lost their imaginary parts with a ComplexWarning only."""
    for fn in (csf_args, coo_tensor_args):
        with pytest.raises(ArgumentError, match="complex values are not supported"):
            fn([[0, 1], [1, 0]], np.array([1.0 + 2j, 3.0]), (2, 2))

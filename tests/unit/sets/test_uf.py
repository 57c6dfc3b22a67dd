"""Unit tests of ``spf.UF``, the declaration of an uninterpreted function (index array)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import spf
from spf import UF, ArityError, Set, SpfError, UndeclaredError

CSR2 = "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}"


# ============================================================================ construction
def test_defaults() -> None:
    f = UF("f")
    assert f.name == "f"
    assert f.arity == 1
    assert f.domain is None
    assert f.range is None
    assert f.monotonic is None
    assert f.dtype == "int32"


def test_exported_from_spf() -> None:
    assert spf.UF is UF
    assert spf.sets.UF is UF


def test_all_fields() -> None:
    f = UF(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
        dtype="int64",
    )
    assert isinstance(f.domain, Set)
    assert isinstance(f.range, Set)
    assert f.domain == Set("{[i]: 0 <= i <= N}")
    assert f.range == Set("{[v]: 0 <= v <= NNZ}")
    assert f.monotonic == "nondecreasing"
    assert f.dtype == "int64"


def test_keywords_and_positions() -> None:
    a = UF("g", 2, "{[i,j]: 0 <= i < N && 0 <= j < M}", "{[v]: v >= 0}", None, "int64")
    b = UF(
        name="g",
        arity=2,
        domain="{[i,j]: 0 <= i < N && 0 <= j < M}",
        range="{[v]: v >= 0}",
        dtype="int64",
    )
    assert a == b


def test_domain_and_range_accept_set_objects() -> None:
    dom = Set("{[i]: 0 <= i < N}")
    rng = Set("{[v]: 0 <= v < M}")
    assert UF("col", domain=dom, range=rng) == UF(
        "col", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < M}"
    )
    assert UF("col", domain=dom).domain is dom


@pytest.mark.parametrize("monotonic", [None, "increasing", "nondecreasing"])
def test_monotonic_values(monotonic: str | None) -> None:
    assert UF("f", monotonic=monotonic).monotonic == monotonic  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_dtype_values(dtype: str) -> None:
    assert UF("f", dtype=dtype).dtype == dtype


def test_multi_argument() -> None:
    g = UF("g", arity=3, domain="{[a,b,c]: 0 <= a < 4 && 0 <= b < 4 && 0 <= c < 4}")
    assert g.arity == 3
    assert g.domain is not None
    assert g.domain.arity == 3


# ============================================================================== validation
@pytest.mark.parametrize("name", ["", "1f", "f-g", "f g", "__hidden", 3, None])
def test_bad_names(name: object) -> None:
    with pytest.raises(SpfError):
        UF(name)  # type: ignore[arg-type]


@pytest.mark.parametrize("arity", [0, -1, 1.5, "2", True, None])
def test_bad_arity(arity: object) -> None:
    with pytest.raises(SpfError):
        UF("f", arity=arity)  # type: ignore[arg-type]


def test_bad_arity_is_an_arity_error() -> None:
    with pytest.raises(ArityError, match="'f'"):
        UF("f", arity=0)


@pytest.mark.parametrize("monotonic", ["up", "decreasing", "Increasing", True, 1])
def test_bad_monotonic(monotonic: object) -> None:
    with pytest.raises(SpfError, match="monotonic"):
        UF("f", monotonic=monotonic)  # type: ignore[arg-type]


def test_monotonic_needs_unary() -> None:
    with pytest.raises(ArityError):
        UF("g", arity=2, monotonic="increasing")


@pytest.mark.parametrize("dtype", ["float", "int16", "double", "", None, np.float64])
def test_bad_dtype(dtype: object) -> None:
    with pytest.raises(SpfError, match="dtype"):
        UF("f", dtype=dtype)  # type: ignore[arg-type]


def test_domain_arity_must_match() -> None:
    with pytest.raises(ArityError, match="domain"):
        UF("f", domain="{[i,j]}")
    with pytest.raises(ArityError, match="domain"):
        UF("g", arity=2, domain="{[i]: i >= 0}")


def test_range_must_be_one_dimensional() -> None:
    with pytest.raises(ArityError, match="range"):
        UF("f", range="{[v, w]: v = w}")
    with pytest.raises(ArityError, match="range"):
        UF("g", arity=2, range="{[a, b]}")


def test_domain_and_range_may_not_call_ufs() -> None:
    with pytest.raises(SpfError, match="range"):
        UF("f", range="{[v]: v < g(v)}")
    with pytest.raises(SpfError, match="domain"):
        UF("f", domain="{[i]: 0 <= i < h(0)}")


@pytest.mark.parametrize("value", [3, [0, 1], object()])
def test_domain_and_range_types(value: object) -> None:
    with pytest.raises(SpfError):
        UF("f", range=value)  # type: ignore[arg-type]
    with pytest.raises(SpfError):
        UF("f", domain=value)  # type: ignore[arg-type]


def test_bad_set_text_is_a_parse_error() -> None:
    with pytest.raises(spf.ParseError):
        UF("f", range="{[v]: 0 <= v <")


def test_relation_is_not_a_range() -> None:
    with pytest.raises(SpfError):
        UF("f", range="{[v] -> [w]}")


# ================================================================== identity, immutability
def test_equality_and_hash() -> None:
    a = UF("rowptr", domain="{[i]: 0 <= i <= N}", monotonic="nondecreasing")
    b = UF("rowptr", domain="{[i]: 0 <= i && i <= N}", monotonic="nondecreasing")
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    assert a != UF("rowptr", domain="{[i]: 0 <= i <= N}")
    assert a != UF("rowptr", monotonic="nondecreasing")
    assert UF("f") != UF("g")
    assert UF("f") != UF("f", arity=2)
    assert UF("f") != UF("f", dtype="int64")
    assert UF("f") != "f"


@pytest.mark.parametrize(
    "field", ["name", "arity", "domain", "range", "monotonic", "dtype", "out_arity", "inverse"]
)
def test_frozen(field: str) -> None:
    f = UF("f")
    with pytest.raises(AttributeError):
        setattr(f, field, None)
    assert f == UF("f")


def test_is_a_dataclass_with_the_api_fields() -> None:
    assert [f.name for f in dataclasses.fields(UF)] == [
        "name",
        "arity",
        "domain",
        "range",
        "monotonic",
        "dtype",
        "out_arity",  # extensions of API.md §2: tuple-valued UFs and inverse pairs
        "inverse",
    ]


@pytest.mark.parametrize(
    "uf",
    [
        UF("f"),
        UF("g", arity=2),
        UF(
            "rowptr",
            domain="{[i]: 0 <= i <= N}",
            range="{[v]: 0 <= v <= NNZ}",
            monotonic="nondecreasing",
        ),
        UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}", dtype="int64"),
        UF("perm", monotonic="increasing"),
    ],
)
def test_repr_round_trip(uf: UF) -> None:
    text = repr(uf)
    assert text.startswith("UF(")
    assert eval(text, {"UF": UF}) == uf


def test_repr_golden() -> None:
    assert repr(UF("f")) == "UF('f')"
    assert repr(
        UF(
            "rowptr",
            domain="{[i]: 0 <= i <= N}",
            range="{[v]: 0 <= v <= NNZ}",
            monotonic="nondecreasing",
        )
    ) == (
        "UF('rowptr', domain='{[i] : 0 <= i && i <= N}', range='{[v] : 0 <= v && v <= NNZ}', "
        "monotonic='nondecreasing')"
    )


# ==================================================================== use in Set / Relation
def test_ufs_as_dict_or_list() -> None:
    decls = [UF("rowptr", monotonic="nondecreasing")]
    a = Set(CSR2, decls)
    b = Set(CSR2, {"rowptr": decls[0]})
    assert a.ufs == b.ufs == {"rowptr": decls[0]}
    assert a.is_empty() is b.is_empty() is False


def test_key_must_match_name() -> None:
    with pytest.raises(SpfError, match="rowptr"):
        Set(CSR2, {"rowptr": UF("col")})


def test_only_uf_values_accepted() -> None:
    with pytest.raises(SpfError):
        Set(CSR2, {"rowptr": "nondecreasing"})  # type: ignore[dict-item]


def test_declared_arity_is_checked() -> None:
    with pytest.raises(ArityError, match="rowptr"):
        Set(CSR2, {"rowptr": UF("rowptr", arity=2)})


def test_declaring_ufs_makes_others_undeclared() -> None:
    with pytest.raises(UndeclaredError, match="rowptr"):
        Set(CSR2, {"col": UF("col")})
    with pytest.raises(UndeclaredError, match="col"):
        Set("{[k]: col(k) = 0}", {"rowptr": UF("rowptr")})


def test_empty_declarations_are_given_declarations() -> None:
    # ufs={} means "these are all the UFs": none
    with pytest.raises(UndeclaredError):
        Set(CSR2, {})
    assert Set("{[i]: 0 <= i < N}", {}).arity == 1


def test_monotonic_declaration_is_used() -> None:
    text = "{[i,j]: 0 <= i < j < N && f(j) < f(i)}"
    assert not Set(text).is_empty()
    assert Set(text, [UF("f", monotonic="nondecreasing")]).is_empty()
    assert Set(text, [UF("f", monotonic="increasing")]).is_empty()


def test_strictly_increasing_is_stronger() -> None:
    text = "{[a,b]: a < b && f(b) < f(a) + (b - a)}"
    assert Set(text, [UF("f", monotonic="increasing")]).is_empty()
    assert not Set(text, [UF("f", monotonic="nondecreasing")]).is_empty()


def test_range_declaration_is_used() -> None:
    assert Set("{[i]: f(i) > 10}", [UF("f", range="{[v]: 0 <= v <= 5}")]).is_empty()
    assert Set("{[i]: f(i) > 10}", [UF("f", range="{[v]: 0 <= v <= 10}")]).is_empty()
    assert not Set("{[i]: f(i) > 10}", [UF("f", range="{[v]: 0 <= v <= 11}")]).is_empty()


def test_domain_declaration_is_used() -> None:
    decl = [UF("f", domain="{[i]: 0 <= i < N}")]
    assert Set("{[i]: f(i) > 0 && i < 0}", decl).is_empty()
    assert Set("{[i]: f(i) > 0 && i >= N}", decl).is_empty()
    assert not Set("{[i]: f(i) > 0 && i < N}", decl).is_empty()


def test_multi_argument_domain_is_used() -> None:
    decl = [UF("g", arity=2, domain="{[i,j]: 0 <= i < N && 0 <= j < M}")]
    assert Set("{[i,j]: g(i, j) = 0 && j >= M}", decl).is_empty()
    assert not Set("{[i,j]: g(i, j) = 0 && j < M}", decl).is_empty()


def test_declaration_with_parameter_range_and_enumeration() -> None:
    col = UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    s = Set("{[k,j]: 0 <= k < NNZ && j = col(k)}", [col])
    values = np.array([2, 0, 1], dtype=np.int32)
    assert s.points({"NNZ": 3, "M": 3}, {"col": values}) == [(0, 2), (1, 0), (2, 1)]
    assert s.intersect("{[k,j]: j >= M}").is_empty()


def test_callable_values_bounded_by_declared_range() -> None:
    """With a callable, the declared range bounds the values the enumeration must consider."""
    f = UF("f", range="{[v]: 0 <= v < 4}")
    s = Set("{[i,j]: 0 <= i < 3 && f(i) <= j < 4}", [f])
    assert s.points(ufs={"f": lambda i: i + 1}) == [
        (i, j) for i in range(3) for j in range(i + 1, 4)
    ]


@pytest.mark.parametrize("name", ["floor", "ceil", "min", "max", "mod", "exists", "and", "or"])
def test_reserved_looking_names_never_leak_foreign_errors(name: str) -> None:
    """Names the syntax or isl reserves either work or raise an SpfError, never a bare error."""
    try:
        decl = UF(name)
        Set(f"{{[i]: 0 <= i < 3 && {name}(i) > 0}}", [decl]).is_empty()
    except SpfError:
        pass

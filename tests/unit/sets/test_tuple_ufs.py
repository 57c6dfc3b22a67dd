"""UFs that return tuples (IEGenLib's ``tau_inv(k)[0]``): parse, print, reason per
component, evaluate on arrays with one more axis."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spf import UF, ArityError, Relation, Set

COORD = UF(
    "coord",
    domain="{[k]: 0 <= k < NNZ}",
    range="{[r, c]: 0 <= r < N && 0 <= c < M}",
    out_arity=2,
)
FLATTENED = (
    "{[k]: 0 <= tau_inv(k)[0] < nr && ptr(tau_inv(k)[0]) <= tau_inv(k)[1] < ptr(tau_inv(k)[0]+1)}"
)


def test_components_parse_print_and_read_back() -> None:
    s = Set(FLATTENED)
    assert s.uf_calls == (
        "tau_inv(k)[0]",
        "tau_inv(k)[1]",
        "ptr(tau_inv(k)[0] + 1)",
        "ptr(tau_inv(k)[0])",
    )
    assert "ptr(tau_inv(k)[0]) <= tau_inv(k)[1]" in str(s)
    assert Set(str(s)) == s


def test_functional_consistency_holds_per_component() -> None:
    assert Set("{[i, j]: i = j && f(i)[0] != f(j)[0]}").is_empty()
    assert Set("{[i, j]: i = j && f(i)[1] < f(j)[1]}").is_empty()
    # different components of one call are unrelated
    assert not Set("{[i, j]: i = j && f(i)[0] != f(j)[1]}").is_empty()
    assert not Set("{[i, j]: i != j && f(i)[0] != f(j)[0]}").is_empty()


def test_declared_range_bounds_each_component() -> None:
    assert Set("{[k, i]: 0 <= k < NNZ && i = coord(k)[0] && i >= N}", ufs=[COORD]).is_empty()
    assert Set("{[k, j]: 0 <= k < NNZ && j = coord(k)[1] && j >= M}", ufs=[COORD]).is_empty()
    assert not Set("{[k, j]: 0 <= k < NNZ && j = coord(k)[1] && j >= N}", ufs=[COORD]).is_empty()
    # the declared domain holds for the call's arguments (the component is not one)
    assert Set("{[k]: k >= NNZ && coord(k)[0] >= 0}", ufs=[COORD]).is_empty()


def test_subset_and_apply_keep_components() -> None:
    a = Set("{[k, i, j]: 0 <= k < NNZ && i = coord(k)[0] && j = coord(k)[1]}", ufs=[COORD])
    b = Set("{[k, i, j]: 0 <= k < NNZ && 0 <= i < N && 0 <= j < M}", ufs=[COORD])
    assert a.is_subset(b)
    assert not b.is_subset(a)
    swap = Relation("{[k, i, j] -> [k, j, i]}", ufs=[COORD])
    assert swap.apply(a) == Set(
        "{[k, j, i]: 0 <= k < NNZ && i = coord(k)[0] && j = coord(k)[1]}", ufs=[COORD]
    )


def test_points_read_a_2d_array_or_a_callable_returning_tuples() -> None:
    s = Set("{[k, i, j]: 0 <= k < NNZ && i = coord(k)[0] && j = coord(k)[1] && i < j}")
    coord = np.array([[0, 1], [2, 2], [1, 3], [4, 0]], dtype=np.int64)
    want = [(0, 0, 1), (2, 1, 3)]
    assert s.points({"NNZ": 4}, {"coord": coord}) == want
    assert s.points({"NNZ": 4}, {"coord": lambda k: tuple(coord[k])}) == want
    assert s.points({"NNZ": 0}, {"coord": coord[:0]}) == []
    with pytest.raises(ArityError, match="returns a tuple"):
        s.points({"NNZ": 4}, {"coord": coord[:, 0]})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{[k]: coord(k) >= 0}", "returns a 2-tuple"),
        ("{[k]: coord(k)[2] >= 0}", "component 2 does not exist"),
        ("{[k]: coord(k, k)[0] >= 0}", "takes 1 argument"),
    ],
)
def test_declared_tuple_ufs_are_called_by_component(text: str, message: str) -> None:
    with pytest.raises(ArityError, match=message):
        Set(text, ufs=[COORD])


def test_a_one_value_uf_takes_no_component() -> None:
    with pytest.raises(ArityError, match="returns one value"):
        Set("{[k]: f(k)[0] >= 0}", ufs=[UF("f")])
    with pytest.raises(ArityError, match="both with a component"):
        Set("{[k]: f(k)[0] >= f(k)}")
    with pytest.raises(ArityError, match=r"f\(_\)\[\.\.\.\]"):
        Set("{[k]: f(k) >= 0}").intersect(Set("{[k]: f(k)[0] >= 0}"))


def test_declaration_checks_the_range_arity() -> None:
    with pytest.raises(ArityError, match="out_arity=2"):
        UF("coord", range="{[r, c]: 0 <= r < N}")
    with pytest.raises(ArityError, match="tuple cannot be monotonic"):
        UF("f", out_arity=2, monotonic="increasing")
    with pytest.raises(ArityError, match="out_arity must be"):
        UF("f", out_arity=0)
    assert COORD.component_range(0) == Set("{[v0]: 0 <= v0 < N && 1 <= M}")
    array = COORD.array_uf()
    assert (array.arity, array.out_arity) == (2, 1)
    assert array.domain == Set("{[k, c]: 0 <= k < NNZ && 0 <= c <= 1}")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=0, max_size=6),
    st.sampled_from(["<", "<=", "=", "!="]),
    st.integers(0, 1),
)
def test_points_match_brute_force(values: list[tuple[int, int]], op: str, c: int) -> None:
    """Every point of a set over components is what a plain loop over the array finds."""
    s = Set(f"{{[k, v]: 0 <= k < n && v = g(k)[{c}] && g(k)[0] {op} g(k)[1]}}")
    assert Set(str(s)) == s
    arr = np.array(values, dtype=np.int64).reshape(len(values), 2)
    ops = {"<": np.less, "<=": np.less_equal, "=": np.equal, "!=": np.not_equal}
    want = [(k, int(arr[k, c])) for k in range(len(values)) if ops[op](arr[k, 0], arr[k, 1])]
    assert s.points({"n": len(values)}, {"g": arr}) == want


def test_undeclared_tuple_ufs_are_inferred_from_their_components() -> None:
    s = Set("{[k]: f(k, 0) < coord(k)[2] && 0 <= coord(k)[0]}")
    assert s.inferred_ufs == {"coord": UF("coord", out_arity=3), "f": UF("f", arity=2)}
    declared = UF("coord", range="{[a, b, c]: 0 <= a < N}", out_arity=3)
    assert Set("{[k]: coord(k)[1] > 0}", ufs=[declared]).inferred_ufs == {"coord": declared}
    assert Set("{[k]: coord(k)[0] >= 0}").inferred_ufs["coord"].out_arity == 2

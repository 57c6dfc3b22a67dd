"""Declared inverse pairs (``UF(..., inverse="f_inv")``): ``f(f_inv(x))`` and
``f_inv(f(x))`` collapse to ``x``; IEGenLib's collapsing examples."""

from __future__ import annotations

import numpy as np
import pytest

from spf import UF, Computation, Relation, Set, SpfError, Stmt

G = "{[i]: 0 <= i < G}"
F = [UF(n, domain=G, range=G, inverse=f"{n}_inv") for n in ("f", "g", "h", "k")]
TAU = UF("tau", arity=2, range="{[k]: 0 <= k < NNZ}", inverse="tau_inv")


def test_call_on_the_inverse_collapses_both_ways() -> None:
    want = Set("{[i, j]: i = j && 0 <= j < G}", ufs=F)
    assert Set("{[i, j]: i = f(f_inv(j))}", ufs=F) == want
    assert Set("{[i, j]: i = f_inv(f(j))}", ufs=F) == want
    assert str(want) == "{[i, j] : 0 <= i && i < G && i = j}"


def test_iegenlib_collapsing_examples() -> None:
    """IEGenLib's IEGRONE72CollapsingInverseFuncs: nested pairs collapse to identities."""
    tricky = (
        "{[i,j]:f_inv(f(f(f_inv(-h(g(g_inv(g(m))))))+h(g(g(g_inv"
        "(m+g(x+2f(f_inv(y))-k(k_inv(y)))-g(x+h_inv(h(y)))))))))=0}"
    )
    s = Set(tricky, ufs=F)
    # every pair collapsed and g(x + y) - g(x + y) cancelled; what is left says where the
    # collapsed inner calls are made (IEGenLib, which ignores domains, gives {[i,j]})
    assert s == Set("{[i, j]: 0 <= m < G && 0 <= y < G && 0 <= -h(g(m)) < G}", ufs=F)
    assert not Set("{[i,j]: g(g(g_inv(f_inv(x) - f_inv(f(f_inv(x)))))) = g(0)}", ufs=F).uf_calls
    fgh = F[:3]  # k is a tuple variable here
    r = Relation("{[i,j,k] -> [k,j,i]: g(g_inv(j)) = g_inv(g(i + f(k) - f(j)))}", ufs=fgh)
    both = r.compose(Relation("{[i] -> [i,i,i]}", ufs=fgh))
    assert both == Relation("{[i] -> [i, i, i]: 0 <= i < G}", ufs=fgh)


def test_a_uf_of_two_arguments_has_a_tuple_valued_inverse() -> None:
    assert TAU.inverse_uf() == UF(
        "tau_inv", domain="{[k]: 0 <= k < NNZ}", out_arity=2, inverse="tau"
    )
    s = Set("{[k, i]: i = tau(tau_inv(k)[0], tau_inv(k)[1])}", ufs=[TAU])
    assert s == Set("{[k, i]: i = k && 0 <= k < NNZ}", ufs=[TAU])
    assert Set("{[i, j, k]: k = tau_inv(tau(i, j))[1]}", ufs=[TAU]) == Set(
        "{[i, j, k]: k = j}", ufs=[TAU]
    )
    # components out of order are no inverse: nothing collapses
    swapped = Set("{[k, i]: i = tau(tau_inv(k)[1], tau_inv(k)[0])}", ufs=[TAU])
    assert swapped.uf_calls == (
        "tau_inv(k)[0]",
        "tau_inv(k)[1]",
        "tau(tau_inv(k)[1], tau_inv(k)[0])",
    )


def test_results_of_operations_collapse_too() -> None:
    s = Set("{[i]: 0 <= f(i) < 5}", ufs=F)
    back = Relation("{[i] -> [j]: j = f(i)}", ufs=F)
    there = Relation("{[j] -> [i]: i = f_inv(j)}", ufs=F)
    assert there.compose(back) == Relation("{[i] -> [i]: 0 <= i < G}", ufs=F)
    assert back.apply(s) == Set("{[j]: exists i: j = f(i) && 0 <= j < 5}", ufs=F)


def test_inner_domain_stays_a_constraint() -> None:
    """``f(f_inv(x))`` is made only where ``f_inv(x)`` is: x in f_inv's domain."""
    s = Set("{[x, y]: y = f(f_inv(x))}", ufs=F)
    assert s.contains((2, 2), {"G": 3}, {"f": np.arange(3), "f_inv": np.arange(3)})
    assert not s.contains((3, 3), {"G": 3}, {"f": np.arange(3), "f_inv": np.arange(3)})


def test_undeclared_pairs_do_not_collapse() -> None:
    assert Set("{[i, j]: i = f(f_inv(j))}").uf_calls == ("f_inv(j)", "f(f_inv(j))")


def test_inverse_declarations_must_agree() -> None:
    with pytest.raises(SpfError, match="must name another UF"):
        UF("f", inverse="f")
    with pytest.raises(SpfError, match="must take 1 argument"):
        Set("{[i]: f(i) > 0}", ufs=[UF("f", inverse="g"), UF("g", arity=2)])
    with pytest.raises(SpfError, match="declares no inverse"):
        UF("f").inverse_uf()


def test_computation_declares_the_inverse_and_generates_the_collapsed_loop() -> None:
    comp = Computation("gather_back")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.declare_uf("p", domain="{[i]: 0 <= i < N}", range="{[i]: 0 <= i < N}", inverse="pinv")
    assert comp.ufs["pinv"] == comp.ufs["p"].inverse_uf()
    comp.add_stmt(
        Stmt("$y$(i) = $x$(j);", "{[i, j]: 0 <= i < N && j = p(pinv(i))}", "{[i,j] -> [0,i,0,j,0]}")
    )
    assert str(comp.stmts[0].domain) == "{[i, j] : 0 <= i && i < N && i = j}"
    again = Computation.from_json(comp.to_json())
    assert again.ufs == comp.ufs


def test_loop_flattening_names_the_old_iterators_by_the_inverse() -> None:
    """IEGenLib's LoopFlatteningCSRtoCOO: applying k = tau(i, j) to a CSR nest gives the
    set over k with i and j written tau_inv(k)[0] and tau_inv(k)[1] (and k within tau's
    declared range, the domain of tau_inv)."""
    ufs = [TAU, UF("ptr")]
    csr = Set("{[i,k]: 0 <= i < nr && ptr(i) <= k < ptr(i+1)}", ufs=ufs)
    flat = Relation("{[i,j] -> [k]: k = tau(i,j)}", ufs=ufs).apply(csr)
    assert flat == Set(
        "{[k]: 0 <= tau_inv(k)[0] < nr && ptr(tau_inv(k)[0]) <= tau_inv(k)[1]"
        " < ptr(tau_inv(k)[0] + 1) && 0 <= k < NNZ}",
        ufs=ufs,
    )


def test_loop_flattening_of_a_schedule_tuple() -> None:
    """IEGenLib's LoopFlatteningMoldyn: the flattened loop's bounds through alpha_inv."""
    alpha = UF("alpha", arity=2, inverse="alpha_inv")
    phi = Set("{[0,s,0,i,0]: 0 <= s < Ns && 0 <= i < Nv}", ufs=[alpha])
    flat = Relation("{[0,s,0,i,0] -> [0,e,0]: e = alpha(s,i)}", ufs=[alpha]).apply(phi)
    assert flat == Set(
        "{[0,e,0]: 0 <= alpha_inv(e)[0] < Ns && 0 <= alpha_inv(e)[1] < Nv}", ufs=[alpha]
    )
    assert Set(str(flat), ufs=[alpha]) == flat


def test_apply_through_a_one_argument_inverse() -> None:
    gathered = Relation("{[i] -> [j]: j = f_inv(i)}", ufs=F).apply(Set("{[i]: f(i) > 0}", ufs=F))
    assert gathered == Set("{[j]: 0 <= j < G && f(f(j)) >= 1}", ufs=F)
    values = np.array([1, 2, 0, 4, 3])  # f on 0..4, a permutation; f_inv is its inverse
    inverse = np.argsort(values)
    params, arrays = {"G": 5}, {"f": values, "f_inv": inverse}
    direct = {(int(inverse[i]),) for i in range(5) if values[i] > 0}
    assert len(direct) == 4
    assert set(gathered.points(params, arrays)) == direct

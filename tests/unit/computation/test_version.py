"""``Computation.version`` and the analysis results remembered per version.

Every change to a computation must bump its version (a missed bump would return a stale
dependence list, legality verdict or generated source); analysis itself must not; and a
remembered answer must equal the one a fresh computation computes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from spf import Computation, IllegalScheduleError, Stmt, kernels


def gemm_like() -> Computation:
    comp = Computation("mm")
    for name in ("A", "B", "C"):
        comp.add_data_space(name, "double", shape=("N", "N"))
    comp.add_stmt(Stmt("$C$(i,j) = 0.0;", "{[i,j]: 0 <= i < N && 0 <= j < N}"))
    comp.add_stmt(
        Stmt(
            "$C$(i,j) += $A$(i,k) * $B$(k,j);",
            "{[i,j,k]: 0 <= i < N && 0 <= j < N && 0 <= k < N}",
        )
    )
    return comp


CHANGES: dict[str, Callable[[Computation], object]] = {
    "add_data_space": lambda c: c.add_data_space("D", "double", shape=("N",)),
    "add_parameter": lambda c: c.add_parameter("alpha", "double"),
    "add_return_value": lambda c: c.add_return_value("C"),
    "add_constant": lambda c: c.add_constant("TSTEPS"),
    "add_local": lambda c: c.add_local("tmp", "double"),
    "assume": lambda c: c.assume("N >= 4"),
    "declare_uf": lambda c: c.declare_uf("f", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v}"),
    "add_stmt": lambda c: c.add_stmt(Stmt("$A$(i,i) = 1.0;", "{[i]: 0 <= i < N}")),
    "add_buffer": lambda c: c.add_buffer("buf", ("N",), "double", scope="stack"),
    "partition": lambda c: c.buffer("buf").partition(0, 2, "cyclic"),
    "tile": lambda c: c.stmt("s1").tile("i", "j", 4, 4, "i0", "j0", "i1", "j1"),
    "split": lambda c: c.stmt("s1").split("i", 4, "i0", "i1"),
    "interchange": lambda c: c.stmt("s1").interchange("j", "k"),
    "shift": lambda c: c.stmt("s1").shift("i", 1),
    "skew": lambda c: c.stmt("s1").skew("i", "j", 1),
    "reverse": lambda c: c.stmt("s1").reverse("k"),
    "unroll": lambda c: c.stmt("s1").unroll("k", 2),
    "vectorize": lambda c: c.stmt("s1").vectorize("j", 4),
    "parallelize": lambda c: c.stmt("s0").parallelize("i"),
    "distribute": lambda c: c.stmt("s0").distribute("i"),
    "gpu": lambda c: c.stmt("s0").gpu("i", "j"),
    "pipeline": lambda c: c.stmt("s1").pipeline("k"),
    "set_schedule": lambda c: c.stmt("s1").set_schedule("{[i,j,k] -> [1,i,0,k,0,j,0]}"),
    "after": lambda c: c.stmt("s1").after("s0", "j"),
    "before": lambda c: c.stmt("s0").before("s1", "i"),
    "compute_at": lambda c: c.stmt("s0").compute_at("s1", "j"),
    "store_in": lambda c: c.stmt("s0").store_in("cb", ["i", "j"]),
    "tag set directly": lambda c: c.stmt("s0")._tags.update({"i": ("parallel",)}),
    "fuse": lambda c: c.fuse("s0", "s1", 2),
    "reschedule": lambda c: c.reschedule("s2", "s0"),
    "host_to_device": lambda c: c.host_to_device("A"),
}


SETUP: dict[str, Callable[[Computation], object]] = {
    "partition": lambda c: c.add_buffer("buf", ("N",), "double"),
    "store_in": lambda c: c.add_buffer("cb", ("N", "N"), "double"),
    "reschedule": lambda c: (
        c.add_data_space("D", "double", shape=("N",)),
        c.add_stmt(Stmt("$D$(i) = 1.0;", "{[i]: 0 <= i < N}")),
    ),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_change_bumps_the_version(change: str) -> None:
    comp = gemm_like()
    SETUP.get(change, lambda c: None)(comp)
    before = comp.version
    assert comp.version == before  # looking changes nothing
    CHANGES[change](comp)
    assert comp.version > before, f"{change} did not bump the version"


def test_analysis_does_not_bump_the_version() -> None:
    comp = kernels.spmv_csr()
    before = comp.version
    comp.dependences()
    comp.check_legality()
    comp.codegen("c")
    comp.loop_structure()
    assert comp.version == before


def test_repeated_calls_return_remembered_results() -> None:
    comp = kernels.spmv_csr()
    first = comp.codegen("c")
    assert comp.codegen("c") is first
    assert comp.codegen("c", check=False) == first  # another key, same text
    deps = comp.dependences()
    again = comp.dependences()
    assert again == deps
    assert again is not deps


def test_returned_dependence_lists_are_not_shared_state() -> None:
    comp = gemm_like()
    deps = comp.dependences()
    n = len(deps)
    deps.clear()
    assert len(comp.dependences()) == n


def _shown(comp: Computation) -> list[str]:
    return sorted(f"{d} levels={d.levels} orig={d.original_carried_by}" for d in comp.dependences())


@pytest.mark.parametrize(
    "change",
    ["interchange", "shift", "skew", "reverse", "after", "compute_at", "distribute", "gpu"],
)
def test_remembered_pairs_give_what_a_fresh_computation_gives(change: str) -> None:
    warm = gemm_like()
    warm.dependences()  # fill the per-pair memory, then change
    warm.check_legality()
    CHANGES[change](warm)
    cold = gemm_like()
    CHANGES[change](cold)
    assert _shown(warm) == _shown(cold)
    assert warm.codegen("c", check=False) == cold.codegen("c", check=False)


def test_assumption_changes_the_remembered_dependences() -> None:
    def build() -> Computation:
        comp = Computation("gather")
        comp.add_data_space("x", "double", shape=("N",))
        comp.add_stmt(Stmt("$x$(f(i)) = $x$(f(i)) + 1.0;", "{[i]: 0 <= i < N}"))
        return comp

    comp = build()
    before = _shown(comp)
    comp.assume("forall a, b: f(a) = f(b) => a = b")
    fresh = build()
    fresh.assume("forall a, b: f(a) = f(b) => a = b")
    assert _shown(comp) == _shown(fresh)
    assert len(_shown(comp)) < len(before)


def test_illegal_verdict_is_remembered_and_raised_again() -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").after("s0", "i")  # s1 reads rows s0 has not written yet
    with pytest.raises(IllegalScheduleError) as first:
        comp.check_legality()
    with pytest.raises(IllegalScheduleError) as second:
        comp.check_legality()
    assert str(first.value) == str(second.value)
    comp.stmt("s1").shift("i", 2)
    comp.check_legality()  # the change is seen: legal now


def test_from_json_round_trip_has_its_own_memory() -> None:
    comp = gemm_like()
    comp.stmt("s1").interchange("j", "k")
    again = Computation.from_json(comp.to_json())
    assert _shown(again) == _shown(comp)
    assert again.codegen("c") == comp.codegen("c")


def test_computations_alike_but_for_uf_types_do_not_share_results() -> None:
    """Regression: a remembered padded schedule once carried the UF declarations of another
    computation with the same schedule text (int64 ``rowptr`` in an int32 kernel)."""
    narrow = kernels.spmv_csr(index_dtype="int32")
    narrow.check_legality()
    wide = kernels.spmv_csr(index_dtype="int64")
    wide.check_legality()
    assert "const int64_t *restrict rowptr" in wide.codegen("c")
    assert "const int32_t *restrict rowptr" in narrow.codegen("c")


@pytest.mark.parametrize("effect", ["inline", "compute_at", "storage_fold"])
def test_effects_on_the_blur_bump_the_version_and_stay_exact(effect: str) -> None:
    def apply(comp: Computation) -> None:
        s0 = comp.stmt("s0")
        if effect == "inline":
            s0.inline()
        elif effect == "compute_at":
            s0.compute_at("s1", "i")
        else:
            comp.stmt("s1").shift("i", 2).after(s0, "j")
            s0.storage_fold("i", 3)

    warm = kernels.blur2d()
    warm.codegen("c")
    before = warm.version
    apply(warm)
    assert warm.version > before
    cold = kernels.blur2d()
    apply(cold)
    assert _shown(warm) == _shown(cold)
    assert warm.codegen("c") == cold.codegen("c")


def test_a_remembered_value_takes_one_fingerprint_and_never_outlives_its_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from spf.computation import fingerprint

    comp = gemm_like()
    comp.ir  # noqa: B018 - settle the version
    walks = []
    real = fingerprint.state_key
    monkeypatch.setattr(fingerprint, "state_key", lambda c: walks.append(1) or real(c))
    comp.add_data_space("D", "double", shape=("N",))
    ir = comp.ir
    assert len(walks) == 1  # the IR of the new state: one walk, none after computing
    assert comp.ir is ir
    assert len(walks) == 2

    def changes_while_computing() -> str:
        comp.add_data_space("E", "double", shape=("N",))
        return "value of the state before E"

    assert comp._remembered("probe", changes_while_computing) == "value of the state before E"
    assert comp._remembered("probe", lambda: "value with E") == "value with E"

    def looks_after_changing() -> str:
        comp.add_data_space("F", "double", shape=("N",))
        comp.version  # noqa: B018 - a fingerprint inside: the change is seen
        return "value of the state before F"

    assert comp._remembered("nested", looks_after_changing) == "value of the state before F"
    assert comp._remembered("nested", lambda: "value with F") == "value with F"
    assert "F" in comp.ir.data_space_table

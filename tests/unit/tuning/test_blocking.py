"""The ``blocking`` kind of spf.tune's space: BLIS's packing and register tiles for GEMM-like
statements, found by role, ranked first by the cost model, and the gemm bench's hand schedule
among the candidates (nothing is compiled here)."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf import kernels
from spf.bench import gemm as gemm_bench
from spf.bench.polybench import kernel as polybench
from spf.errors import SpfError
from spf.tuning import blocking, records
from spf.tuning import space as space_module
from spf.tuning.beam import ranked
from spf.tuning.blocking import BLOCKINGS, Block, efficiency, find, lanes, native_isa
from spf.tuning.nest import analyze
from spf.tuning.realize import realize
from spf.tuning.space import make_space


def _square(n: int) -> dict[str, np.ndarray]:
    return {"C": np.zeros((n, n)), "A": np.zeros((n, n)), "B": np.zeros((n, n))}


def test_the_gemm_bench_hand_schedule_is_a_candidate_of_the_default_space() -> None:
    comp = kernels.gemm()
    nest = analyze(comp, _square(64))
    space = make_space(None, None)
    b = gemm_bench.BLOCKINGS[native_isa()]
    hand = (b.mc, b.kc, b.nc, b.mr, b.nr)
    found = [
        c
        for _, c in ranked(nest, space)
        if any(s.kind == "blocking" and s.param == hand for s in c.steps)
    ]
    assert found, "the hand blocking is not among the ranked candidates"
    got = realize(comp, found[0], nest, space)
    want = gemm_bench.schedule(b)
    assert got.trace.as_python() == want.trace.as_python()
    assert records.digest(got) == records.digest(want)
    assert len(comp.trace) == 0


def test_gemm_like_statements_are_found_by_role_in_any_loop_order() -> None:
    assert find(kernels.gemm()) == (Block("s0", "i", "j", "k", "A", "B", None, 8),)
    # PolyBench's gemm: loops i, k, j, and C *= beta first in the i loop (moved out first)
    assert find(polybench("gemm").build()) == (Block("s1", "i", "j", "k", "A", "B", "s0", 8),)
    two = find(polybench("2mm").build())
    assert [(b.stmt, b.a, b.b, b.before) for b in two] == [
        ("s1", "A", "B", "s0"),
        ("s3", "tmp", "C", "s2"),
    ]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("syrk", "A is read twice and the domain is triangular"),
        ("covariance", "statements after it in its nest read cov"),
        ("atax", "no statement has three loops"),
        ("lu", "triangular domains, A read and written"),
    ],
)
def test_statements_that_are_not_gemm_like_get_no_blocking(name: str, why: str) -> None:
    k = polybench(name)
    comp = k.build()
    assert find(comp) == (), why
    nest = analyze(comp, k.arguments())
    kinds = {s.kind for _, c in ranked(nest, make_space(None, None)) for s in c.steps}
    assert "blocking" not in kinds


@pytest.mark.parametrize("isa", sorted(BLOCKINGS))
def test_the_model_measures_blockings_before_other_gemm_candidates(
    isa: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every instruction set's ranking, whichever this host has (an AVX2 host ranked 4 x 12
    # first when ties went to fewer rows, and this test only ever ran on AVX-512 hosts)
    monkeypatch.setattr(blocking, "native_isa", lambda: isa)
    monkeypatch.setattr(space_module, "native_isa", lambda: isa)
    ranks = ranked(analyze(kernels.gemm(), _square(1024)), make_space(None, 1))
    assert ranks[0][1].steps[0].param == BLOCKINGS[isa][0]  # the gemm bench's
    # the blockings whose register tile hides the multiply-add latency (12 accumulators or
    # more) and fits the registers come before every other candidate
    full = [b for b in BLOCKINGS[isa] if efficiency(b, 8) >= 0.45 * lanes(b[4], 8)]
    assert len(full) >= 2
    assert [c.steps[0].kind for _, c in ranks[: len(full)]] == ["blocking"] * len(full)
    assert {c.steps[0].param for _, c in ranks[: len(full)]} == set(full)


def test_a_blocked_candidate_is_parallel_and_takes_no_other_loop_command() -> None:
    nest = analyze(kernels.gemm(), _square(256))
    blocked = [c for _, c in ranked(nest, make_space(None, 2)) if c.steps[0].kind == "blocking"]
    assert len(blocked) == len(BLOCKINGS[native_isa()])
    for c in blocked:
        assert len(c.steps) == 1, c.describe()
        assert c.parallel
        assert c.threads == 2


def test_the_vector_width_divides_the_register_tile() -> None:
    for nr in (4, 8, 12, 16, 32):
        width = lanes(nr, 8)
        assert nr % width == 0
        assert width <= (8 if native_isa() == "avx512" else 4)
    assert lanes(3, 8) == 1


@pytest.mark.parametrize(
    "bad", [[(96, 384, 1536, 6)], [(96, 384, 1536, 6, 0)], [(96, 384, 1536, 6, True)], [96]]
)
def test_a_bad_blocking_is_an_spf_error_that_says_what_is_expected(bad: object) -> None:
    with pytest.raises(SpfError, match=r"space\['blocking'\].*\(mc, kc, nc, mr, nr\)"):
        make_space({"blocking": bad}, None)


def test_cflags_must_be_a_list_of_strings() -> None:
    assert make_space(None, None, ["-O2"]).cflags == ("-O2",)
    with pytest.raises(SpfError, match="cflags must be a list of compiler flags"):
        make_space(None, None, "-O2")
    with pytest.raises(SpfError, match="cflags"):
        spf.tune(kernels.gemm(), _square(8), cflags=[3])  # type: ignore[list-item]


def test_no_blocking_is_offered_for_a_small_product_or_a_narrow_loop() -> None:
    small = analyze(kernels.gemm(), _square(48))  # 48³ < 64³ instances: packing costs more
    assert not any(
        c.steps and c.steps[0].kind == "blocking" for _, c in ranked(small, make_space(None, 1))
    )
    args = {"C": np.zeros((4096, 16)), "A": np.zeros((4096, 64)), "B": np.zeros((64, 16))}
    narrow = ranked(analyze(kernels.gemm(), args), make_space(None, 1))
    widths = {c.steps[0].param[4] for _, c in narrow if c.steps and c.steps[0].kind == "blocking"}
    assert widths
    assert max(widths) <= 16  # no register tile wider than the 16 columns

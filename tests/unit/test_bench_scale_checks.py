"""``spf bench --only scale``, part ``checks``: the table of how each kernel verifies its
facts (``kernel.check_cost``), implied facts named."""

from __future__ import annotations

import spf
from spf.bench.common import Section
from spf.bench.scale_checks import _kept


def test_the_checks_part_lists_how_each_kernel_checks_its_facts() -> None:
    sec = Section("scale_checks")
    gs = spf.kernels.gauss_seidel_csr().compile().check_cost
    _kept(sec, {"gauss_seidel_csr": gs, "spmv_coo": spf.kernels.spmv_coo().compile().check_cost})
    text = "\n".join(sec.markdown)
    (row,) = [line for line in text.splitlines() if "`gauss_seidel_csr`" in line]
    assert "remembered (in loop): 3" in row
    assert "implied: 2" in row
    assert "col(k) < i" in row  # the lower part's fact, named
    (row,) = [line for line in text.splitlines() if "`spmv_coo`" in line]
    assert "no facts" in row


def test_a_two_phase_kernel_lists_the_facts_of_both_phases() -> None:
    from spf.bench.scale_checks import _check_cost

    kernel = spf.kernels.spgemm_csr(parallel=False).compile()
    cost = _check_cost(kernel)
    assert list(cost) == [*kernel.symbolic.check_cost, *kernel.numeric.check_cost]
    assert len(cost) >= 1  # the sorted rows both phases rely on


def test_a_batch_runs_its_calls_with_the_check_it_was_made_for() -> None:
    from spf.bench.scale_checks import _batch, _calls_per_batch

    seen: list[bool] = []
    count = _calls_per_batch(seen.append)
    assert 1 <= count <= 10_000
    assert set(seen) == {False}  # the batch size is found on unchecked calls
    seen.clear()
    _batch(seen.append, True, 3)()
    assert seen == [True, True, True]


def test_the_trials_of_known_contents_are_over_before_the_timing() -> None:
    """The checked calls a case times are those of the way its trials kept (none is a trial
    of the other way): :func:`_settle` runs them out first."""
    from spf.bench.scale_checks import _call, _csr_kernel, _settle, dense_row
    from spf.runtime.kernel import LOOK

    kernel = spf.kernels.spmv_csr(index_dtype="int64").compile()
    args = _csr_kernel("spmv_csr")(dense_row(300, 40), "int64")
    call = _call(kernel, args, "spmv_csr")
    call(True)  # new contents: checked in full and remembered
    slot = kernel._checked_bind(args)[2]
    assert kernel._hashed
    assert not slot.trials.decided(LOOK)
    _settle(call)
    assert slot.trials.decided(LOOK)
    assert slot.bounds is not None  # the look's later calls take the way kept, one C call

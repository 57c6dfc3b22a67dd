"""spf.bench.teams: the thread column says the team a variant's kernels actually ran with."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.teams import Teams
from spf.runtime import threads
from spf.runtime.threads import openmp_threads
from spf.testing import random_lower

if TYPE_CHECKING:
    import pytest


def test_a_row_whose_kernel_ran_fewer_threads_says_so() -> None:
    kernel = SimpleNamespace(last_threads=None)
    teams = Teams()
    code, threads, call = teams.watch("spf wavefront auto", 2, lambda: None, kernel)
    assert (code, threads) == ("spf wavefront auto", 2)
    call()  # no call recorded yet: nothing to say
    assert teams.label(code, 2) == "2"
    kernel.last_threads = 2
    call()
    assert teams.label(code, 2) == "2"
    assert teams.note(code, 2) == ""
    kernel.last_threads = 1
    call()
    assert teams.label(code, 2) == "2 (ran 1: 50%, 2: 50%)"
    assert "ran 2 (ran 1: 50%, 2: 50%)" in teams.note(code, 2)
    assert teams.labels() == {"spf wavefront auto (2)": "2 (ran 1: 50%, 2: 50%)"}
    only = Teams()
    one = only.watch("fused wavefront coarse", 2, lambda: None, SimpleNamespace(last_threads=1))
    one[2]()
    assert only.label("fused wavefront coarse", 2) == "2 (ran 1)"


def test_a_wavefront_kernel_capped_to_one_thread_is_labelled_as_run() -> None:
    comp = spf.kernels.sptrsv_csr()
    comp.wavefront("i", method="auto")
    kernel = comp.compile()
    args = spf.sparse.sptrsv_args(random_lower(300, 0.01, 1))
    plan = kernel.inspect(check=False, strategy="coarse", threads=2, **args)
    u, f = np.zeros(args["N"]), np.ones(args["N"])
    teams = Teams()
    _, _, call = teams.watch("coarse", 2, lambda: kernel(u=u, f=f, plan=plan, **args), kernel)
    with openmp_threads(1):  # the busy-machine cap lowers the team the same way
        call()
    assert teams.label("coarse", 2) == "2 (ran 1)"


def test_a_call_the_governor_capped_says_what_it_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reading behind a capped call goes into the note; a call that ran one thread
    while no cap was in force (a plan run serially) has no governor reason."""
    kernel = SimpleNamespace(last_threads=1)
    teams = Teams()
    _, _, call = teams.watch("fused", 2, lambda: None, kernel)
    monkeypatch.setattr(threads.GOVERNOR, "reading", threads.Reading(None, 0.0, 2.0, 0))
    call()
    assert teams.why("fused", 2) == ""
    monkeypatch.setattr(threads.GOVERNOR, "reading", threads.Reading(0.75, 0.5, 1.25, 1))
    call()
    why = teams.why("fused", 2)
    assert why == (
        "other processes used 0.75 cores of CPU time, 0.50 runnable threads "
        "(median of 1 capped calls' readings)"
    )
    assert why in teams.note("fused", 2)


def test_the_governor_keeps_its_last_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    gov = threads.ThreadGovernor()
    gov.enabled = True  # whatever SPF_ADAPTIVE_THREADS the tests run under
    monkeypatch.setattr(gov, "cpus", [0, 1])
    monkeypatch.setattr(threads, "_busy_seconds", lambda cpus: None)
    monkeypatch.setattr(threads, "_runnable_others", lambda: 1.0)
    assert gov.reading is None
    assert gov.cap() == 1
    assert gov.reading == threads.Reading(None, 1.0, 1.0, 1)

"""The replayed calls' look helper (spf.runtime.plan_look) reads arrays in C while another
thread may reshape them: it holds Python's lock while it reads (cffi calls without it), so
a record is whole and never written past its buffer."""

from __future__ import annotations

import sys
import threading

import numpy as np

from spf.testing import look_helper


def test_records_stay_whole_while_another_thread_reshapes_the_array() -> None:
    same, record = look_helper()
    a = np.zeros(64)
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            a.shape = (4, 4, 4)
            a.shape = (64,)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=flip)
    thread.start()
    broken = 0
    try:
        for _ in range(20_000):
            want = record([a])
            if want is None:  # more dimensions than counted: read in Python this time
                continue
            broken += len(want) != 6 + 2 * want[5]
            same(1, want)
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert broken == 0
    assert same(1, record([a])) == 1
    b = a.reshape(8, 8)
    assert same(1, record([b])) == 1
    moved = record([a])
    a.shape = (8, 8)
    assert same(1, moved) == 0  # reshaped after the record
    assert same(2, record([a, b])) == 1

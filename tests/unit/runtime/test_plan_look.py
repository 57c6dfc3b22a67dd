"""The replayed calls' look helper (spf.runtime.plan_look) reads a call's arguments in C:
while another thread may reshape them it holds Python's lock (cffi calls without it), so a
record is whole and never written past its buffer; a keyword dictionary is read by the
recorded names, whatever its order, and anything else than the recorded objects,
unchanged, reads as changed."""

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
            want = record([a], None)
            if want is None:  # more dimensions than counted: read in Python this time
                continue
            broken += len(want) != 11 + 2 * want[9]
            same(id((a,)), 0, want)
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert broken == 0
    assert same(id((a,)), 0, record([a], None)) == 1
    b = a.reshape(8, 8)
    assert same(id((b,)), 0, record([b], None)) == 1
    moved = record([a], None)
    a.shape = (8, 8)
    assert same(id((a,)), 0, moved) == 0  # reshaped after the record
    assert same(id((a, b)), 0, record([a, b], None)) == 1


def test_a_keyword_call_is_read_by_its_names_in_any_order() -> None:
    same, record = look_helper()
    x, y, n = np.zeros(5), np.ones(5), 12345678901
    names = ("n", "x", "y")
    want = record([n, x, y], names)
    call = {"x": x, "y": y, "n": n}
    assert same(id(call), 1, want) == 1
    call = {"n": n, "y": y, "x": x}
    assert same(id(call), 1, want) == 1
    call = {"n": int(str(n)), "y": y, "x": x}  # another int object of the same value
    assert same(id(call), 1, want) == 1
    for other in (
        {"n": n + 1, "y": y, "x": x},  # another value
        {"n": n, "y": y, "x": x.copy()},  # another array, of the same look
        {"n": n, "y": y},  # an argument less
        {"n": n, "y": y, "x": x, "z": x},  # one more
        {"n": n, "y": x, "x": y},  # swapped
        {"n": float(n), "y": y, "x": x},  # another type
        {"n": n, "y": y, "x": x.reshape(5, 1)},
    ):
        assert same(id(other), 1, want) == 0, other
    y.setflags(write=False)  # changed in place
    assert same(id({"n": n, "y": y, "x": x}), 1, want) == 0
    assert same(id((n, x, y)), 0, want) == 0
    y.setflags(write=True)
    assert same(id((n, x, y)), 0, want) == 1
    assert same(id((n, y, x)), 0, want) == 0


def test_records_refuse_what_they_cannot_hold() -> None:
    _, record = look_helper()
    assert record([1 << 70], None) is None  # past 64 bits
    assert record([1.5], None) is None
    assert record([np.zeros(3).view(np.recarray)], None) is None  # not exactly an ndarray
    assert record([True], None) is None
    assert record([], None) is not None

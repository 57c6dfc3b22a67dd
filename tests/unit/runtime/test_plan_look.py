"""The replayed calls' look helper (spf.runtime.plan_look) reads a call's arguments in C:
while another thread may reshape them it holds Python's lock (cffi calls without it), so a
record is whole and never written past its buffer; a keyword dictionary is read by the
recorded names, whatever its order, and anything else than the recorded objects,
unchanged, reads as changed. A hot call (``HOT_CALL``) reads that look and runs its
recorded C call in one call from Python, only on the recorded arguments."""

from __future__ import annotations

import platform
import sys
import threading
from typing import Any

import cffi
import numpy as np

from spf.runtime.build import build_c
from spf.runtime.plan_look import HOT_CALL, WORD_ABIS, fire_record
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


ADD_C = r"""
#include <stdint.h>
void spf_test_add(int64_t n, const double *restrict a, double *restrict out, int64_t k)
{
  for (int64_t i = 0; i < n; i++)
    out[i] += a[i] * (double)k;
}
void spf_test_scale(int64_t n, double s, double *restrict out)
{
  for (int64_t i = 0; i < n; i++)
    out[i] *= s;
}
"""


def _added() -> tuple[Any, Any]:
    """(ffi, lib) of a small C library: ``spf_test_add`` (64-bit integer and pointer
    arguments) and ``spf_test_scale`` (a double argument)."""
    ffi = cffi.FFI()
    ffi.cdef(
        "void spf_test_add(int64_t n, const double *a, double *out, int64_t k);"
        "void spf_test_scale(int64_t n, double s, double *out);"
    )
    return ffi, ffi.dlopen(str(build_c(ADD_C, name="spf_test_hot_add", openmp=False)))


def test_a_hot_call_runs_its_c_call_only_on_the_recorded_arguments() -> None:
    """``HOT_CALL`` reads the look of the call's arguments and runs the recorded C call
    when they are the recorded ones, unchanged (True); anything else runs nothing (False):
    another object, an array reshaped in place, a dict for a tuple, another argument."""
    _, record = look_helper()
    ffi, lib = _added()
    a, out = np.arange(4.0), np.zeros(4)
    cargs = (4, ffi.from_buffer("double[]", a), ffi.from_buffer("double[]", out), 3)
    given = (a, out)
    fire = fire_record(lib.spf_test_add, cargs, record(list(given), None))
    if platform.machine() not in WORD_ABIS:
        assert fire is None
        return
    assert fire is not None
    assert HOT_CALL
    hot = HOT_CALL[0]
    assert hot(given, False, fire[0]) is True
    np.testing.assert_array_equal(out, 3.0 * a)
    assert hot((a, out), False, fire[0]) is True  # another tuple of the same objects
    np.testing.assert_array_equal(out, 6.0 * a)
    for other in ((a, out.copy()), (a,), (out, a), [a, out], {"a": a, "out": out}, (4, out)):
        assert hot(other, False, fire[0]) is False, other
    out.shape = (2, 2)
    assert hot(given, False, fire[0]) is False  # reshaped in place after the record
    out.shape = (4,)
    np.testing.assert_array_equal(out, 6.0 * a)  # nothing ran meanwhile
    names = ("a", "out")
    fire = fire_record(lib.spf_test_add, cargs, record(list(given), names))
    assert fire is not None
    call = {"out": out, "a": a}
    assert hot(call, True, fire[0]) is True
    np.testing.assert_array_equal(out, 9.0 * a)
    assert hot(given, True, fire[0]) is False  # a tuple where a dict was recorded
    assert hot({"out": out, "a": a, "b": a}, True, fire[0]) is False


def test_a_hot_call_takes_only_word_arguments() -> None:
    """No record for a C function with a ``double`` argument, for arguments other than
    ints and pointers, or without a look record: those calls go through cffi."""
    _, record = look_helper()
    ffi, lib = _added()
    out = np.ones(3)
    want = record([out], None)
    buffer = ffi.from_buffer("double[]", out)
    assert fire_record(lib.spf_test_scale, (3, 2.0, buffer), want) is None
    assert fire_record(lib.spf_test_add, (3, buffer, buffer, 1.5), want) is None
    assert fire_record(lib.spf_test_add, (3, buffer, buffer, 1 << 70), want) is None
    assert fire_record(lib.spf_test_add, (3, buffer, buffer, 1), None) is None
    np.testing.assert_array_equal(out, np.ones(3))
    assert fire_record(lib.spf_test_add, (3, 4, buffer, 1), want) is None  # not a pointer
    assert fire_record(lib.spf_test_add, (3, buffer, buffer), want) is None  # too few

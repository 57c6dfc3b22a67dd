"""The look of a replayed call's arrays read in C (:mod:`spf.runtime.plan_call`).

A replayed ``check=False`` call with a plan whose arguments are the very objects of the
record's last call (``is``) must still see an array changed in place: reshaped, retyped,
made read-only, given other strides or another buffer (``resize(refcheck=False)``). In
Python that is one ``(dtype, shape, flags)`` read per array, several attribute look-ups
and two new objects each, and on the benchmark's small matrices, timed cold in a rotation,
those reads cost more than the C call they guard. Here one C function reads, for every
array of the record, straight from the ``ndarray`` struct: its exact type, buffer address,
dtype object, flags, dimensions and strides, and compares them with the values recorded
when the record took those objects (:func:`record`). The objects are the record's own (it
holds them), so the addresses it reads are those of live arrays.

The helper is compiled once per machine and cached like a kernel (it needs Python's and
NumPy's C headers); where it cannot be built (no headers, no compiler) :func:`looker` is
None and the record reads the look in Python, as before.
"""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import cffi
import numpy as np

from spf.errors import SpfError
from spf.runtime.checksum import submit

if TYPE_CHECKING:
    from concurrent.futures import Future

SOURCE = r"""
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>
#include <stdint.h>

/* per array: object, type, buffer, dtype, flags, ndim, then ndim dimensions and strides.
   cffi calls a function without Python's lock: these take it, so that no other thread
   changes an array's shape (its dimensions' memory) while they read it. */
int64_t spf_look_record(int64_t n, const intptr_t *objs, int64_t *out, int64_t cap)
{
  PyGILState_STATE gil = PyGILState_Ensure();
  int64_t size = 0;
  for (int64_t i = 0; i < n; i++)
    size += 6 + 2 * (int64_t)PyArray_NDIM((PyArrayObject *)objs[i]);
  if (size > cap)  /* an array given more dimensions since the caller counted them */
  {
    PyGILState_Release(gil);
    return -1;
  }
  for (int64_t i = 0; i < n; i++)
  {
    PyArrayObject *a = (PyArrayObject *)objs[i];
    const int nd = PyArray_NDIM(a);
    *out++ = (int64_t)objs[i];
    *out++ = (int64_t)(intptr_t)Py_TYPE((PyObject *)a);
    *out++ = (int64_t)(intptr_t)PyArray_DATA(a);
    *out++ = (int64_t)(intptr_t)PyArray_DESCR(a);
    *out++ = (int64_t)PyArray_FLAGS(a);
    *out++ = (int64_t)nd;
    for (int d = 0; d < nd; d++)
    {
      *out++ = (int64_t)PyArray_DIMS(a)[d];
      *out++ = (int64_t)PyArray_STRIDES(a)[d];
    }
  }
  PyGILState_Release(gil);
  return size;
}

/* 1 when every recorded array still has its recorded look, else 0 */
int spf_look_same(int64_t n, const int64_t *want)
{
  PyGILState_STATE gil = PyGILState_Ensure();
  int same = 1;
  for (int64_t i = 0; i < n && same; i++)
  {
    PyArrayObject *a = (PyArrayObject *)(intptr_t)want[0];
    const int nd = PyArray_NDIM(a);
    if ((int64_t)(intptr_t)Py_TYPE((PyObject *)a) != want[1]
        || (int64_t)(intptr_t)PyArray_DATA(a) != want[2]
        || (int64_t)(intptr_t)PyArray_DESCR(a) != want[3]
        || (int64_t)PyArray_FLAGS(a) != want[4] || (int64_t)nd != want[5])
      same = 0;  /* nd checked before the dimensions: want holds nd pairs */
    want += 6;
    for (int d = 0; d < nd && same; d++, want += 2)
      if ((int64_t)PyArray_DIMS(a)[d] != want[0] || (int64_t)PyArray_STRIDES(a)[d] != want[1])
        same = 0;
  }
  PyGILState_Release(gil);
  return same;
}
"""

CDEF = """
int64_t spf_look_record(int64_t n, intptr_t *objs, int64_t *out, int64_t cap);
int spf_look_same(int64_t n, int64_t *want);
"""

Looker = tuple[Callable[[int, Any], int], Callable[[Sequence[np.ndarray]], Any]]
"""``(same, record)``: ``same(n, want)`` is 1 when the ``n`` arrays ``want`` recorded still
look as they did; ``record(arrays)`` is that ``want`` (a cffi ``int64_t[]``), or None when
another thread gave one of them more dimensions meanwhile (the look is then read in
Python)."""

LOOK_SAME: list[Callable[[int, Any], int]] = []
"""The helper's ``same`` once it is built (what a record's every call runs)."""

_BUILT: list[Looker | None] = []
_BUILDING: list[Future[Looker | None]] = []


def looker(wait: bool = False) -> Looker | None:
    """The compiled look helper, or None: while it is being built (on spf's worker thread,
    started by the first call, so that no call waits for the compiler; ``wait=True``
    waits) and where it cannot be built (the records then read the look in Python)."""
    if _BUILT:
        return _BUILT[0]
    if not _BUILDING:
        _BUILDING.append(submit(_build))
    if not wait and not _BUILDING[0].done():
        return None
    try:
        got = _BUILDING[0].result()
    except Exception:  # any failure of the build: the records read the look in Python
        got = None
    if got is not None and not LOOK_SAME:
        LOOK_SAME.append(got[0])
    _BUILT.append(got)
    return got


def headers() -> bool:
    """Whether Python's C headers are installed (Debian's python3-dev; ``make sysdeps``
    installs it): without them the helper cannot be built, with them it must be."""
    include = sysconfig.get_paths().get("include")
    return include is not None and os.path.exists(os.path.join(include, "Python.h"))


def _build() -> Looker | None:
    """Compile (or find in the cache) and load the helper; None where it cannot be."""
    from spf.runtime.build import build_c

    if not headers():
        return None
    include = sysconfig.get_paths()["include"]
    flags = ["-O2", f"-I{include}", f"-I{np.get_include()}"]
    try:
        path = build_c(SOURCE, name="spf_plan_look", openmp=False, cflags=flags)
        ffi = cffi.FFI()
        ffi.cdef(CDEF)
        lib = ffi.dlopen(str(path))
    except (SpfError, OSError, cffi.FFIError):  # no headers or no compiler
        return None
    fill = lib.spf_look_record

    def record(arrays: Sequence[np.ndarray]) -> Any:
        size = sum(6 + 2 * a.ndim for a in arrays)
        want = ffi.new("int64_t[]", max(size, 1))
        if fill(len(arrays), list(map(id, arrays)), want, size) < 0:
            return None  # reshaped meanwhile by another thread: read in Python this time
        return want

    return lib.spf_look_same, record

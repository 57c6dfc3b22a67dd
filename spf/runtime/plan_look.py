"""The look of a replayed call's arguments read in C (:mod:`spf.runtime.plan_call`).

A replayed ``check=False`` call with a plan whose arguments are the very objects of the
record's last call (``is``) must still see an array changed in place: reshaped, retyped,
made read-only, given other strides or another buffer (``resize(refcheck=False)``). In
Python that is one ``(dtype, shape, flags)`` read per array, several attribute look-ups
and two new objects each, and on the benchmark's small matrices, timed cold in a rotation,
those reads cost more than the C call they guard. Here one C function takes the call's
arguments whole, the keyword dictionary a keyword call received or the tuple of a
prepared call's free arrays, and reads every one: that it is the recorded object (an int:
of the recorded value), and for an array, straight from the ``ndarray`` struct, its exact
type, buffer address, dtype object, flags, dimensions and strides, compared with the
values recorded when the record took those objects (:func:`record`). The objects are the
record's own (it holds them), so the addresses it reads are those of live arrays; a keyword
dictionary's names are compared by address with the record's (a name passed as another
``str`` object of the same text reads as another argument, and the caller reads the
arguments in Python).

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

/* A call's record: n, then n offsets (one per item), then per item at its offset: its key
   (the name it is passed by, a str object, or 0), the object, its kind (0: an int, 1: an
   array), then an int's value, or an array's type, buffer, dtype, flags, ndim and ndim
   (dimension, stride) pairs. cffi calls a function without Python's lock: these take it,
   so that no other thread changes an array's shape (its dimensions' memory) or a dict
   while they read it. */
int64_t spf_look_record(int64_t n, const intptr_t *keys, const intptr_t *objs, int64_t *out,
                        int64_t cap)
{
  PyGILState_STATE gil = PyGILState_Ensure();
  int64_t size = 1 + n;
  for (int64_t i = 0; i < n; i++)
    size += PyLong_CheckExact((PyObject *)objs[i])
              ? 4 : 9 + 2 * (int64_t)PyArray_NDIM((PyArrayObject *)objs[i]);
  if (size > cap)  /* an array given more dimensions since the caller counted them */
  {
    PyGILState_Release(gil);
    return -1;
  }
  int64_t at = 1 + n;
  out[0] = n;
  for (int64_t i = 0; i < n; i++)
  {
    PyObject *o = (PyObject *)objs[i];
    int64_t *w = out + at;
    out[1 + i] = at;
    w[0] = (int64_t)keys[i];
    w[1] = (int64_t)objs[i];
    if (PyLong_CheckExact(o))
    {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow || (v == -1 && PyErr_Occurred()))
      {
        PyErr_Clear();
        PyGILState_Release(gil);
        return -2;  /* an int a record does not hold */
      }
      w[2] = 0;
      w[3] = (int64_t)v;
      at += 4;
      continue;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    const int nd = PyArray_NDIM(a);
    w[2] = 1;
    w[3] = (int64_t)(intptr_t)Py_TYPE(o);
    w[4] = (int64_t)(intptr_t)PyArray_DATA(a);
    w[5] = (int64_t)(intptr_t)PyArray_DESCR(a);
    w[6] = (int64_t)PyArray_FLAGS(a);
    w[7] = (int64_t)nd;
    for (int d = 0; d < nd; d++)
    {
      w[8 + 2 * d] = (int64_t)PyArray_DIMS(a)[d];
      w[9 + 2 * d] = (int64_t)PyArray_STRIDES(a)[d];
    }
    at += 9 + 2 * nd;
  }
  PyGILState_Release(gil);
  return size;
}

/* 1 when object o, given for item w, is what it was: the recorded object (an int: of the
   recorded value), an array unchanged in place */
static int spf_look_item(PyObject *o, const int64_t *w)
{
  if (w[2] == 0)
  {
    if (o == (PyObject *)(intptr_t)w[1])
      return 1;
    if (!PyLong_CheckExact(o))
      return 0;
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
      PyErr_Clear();
    return !overflow && (int64_t)v == w[3];
  }
  if (o != (PyObject *)(intptr_t)w[1])
    return 0;
  PyArrayObject *a = (PyArrayObject *)o;
  const int nd = PyArray_NDIM(a);
  if ((int64_t)(intptr_t)Py_TYPE(o) != w[3] || (int64_t)(intptr_t)PyArray_DATA(a) != w[4]
      || (int64_t)(intptr_t)PyArray_DESCR(a) != w[5] || (int64_t)PyArray_FLAGS(a) != w[6]
      || (int64_t)nd != w[7])
    return 0;  /* nd checked before the dimensions: the record holds nd pairs */
  for (int d = 0; d < nd; d++)
    if ((int64_t)PyArray_DIMS(a)[d] != w[8 + 2 * d]
        || (int64_t)PyArray_STRIDES(a)[d] != w[9 + 2 * d])
      return 0;
  return 1;
}

/* 1 when the call's arguments are the recorded ones, unchanged: the items of the tuple
   `call` in the record's order (by_key 0), or the values of the dict `call` by their
   recorded keys (by_key 1: keys compared by address, so a name passed as another str
   object of the same text is not found, and the caller reads the arguments itself) */
int spf_look_same(intptr_t call, int64_t by_key, const int64_t *want)
{
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *c = (PyObject *)call;
  const int64_t n = want[0];
  int same = 1;
  if (!by_key)
  {
    same = PyTuple_GET_SIZE(c) == n;
    for (int64_t i = 0; i < n && same; i++)
      same = spf_look_item(PyTuple_GET_ITEM(c, i), want + want[1 + i]);
  }
  else if (PyDict_GET_SIZE(c) != n)
    same = 0;
  else
  {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int64_t next = 0;  /* where the last key's successor is looked for first */
    while (same && PyDict_Next(c, &pos, &key, &value))
    {
      int64_t found = -1;
      for (int64_t j = 0; j < n && found < 0; j++)
      {
        const int64_t i = (next + j) % n;
        if (want[want[1 + i]] == (int64_t)(intptr_t)key)
          found = i;
      }
      same = found >= 0 && spf_look_item(value, want + want[1 + found]);
      next = found + 1;
    }
  }
  PyGILState_Release(gil);
  return same;
}
"""

CDEF = """
int64_t spf_look_record(int64_t n, intptr_t *keys, intptr_t *objs, int64_t *out, int64_t cap);
int spf_look_same(intptr_t call, int64_t by_key, int64_t *want);
"""

Looker = tuple[
    Callable[[int, int, Any], int], Callable[[Sequence[object], Sequence[str] | None], Any]
]
"""``(same, record)``: ``record(objs, keys)`` is the record of ``objs`` (exact ``int`` and
``ndarray`` objects; ``keys``: the names they are passed by, or None for a tuple), a cffi
``int64_t[]``, or None when it cannot hold them (an int past 64 bits, another type) or
another thread gave an array more dimensions meanwhile (the look is then read in Python);
``same(id(call), by_key, want)`` is 1 when ``call`` (a tuple of the objects in the
record's order, ``by_key=0``, or a dict of them by the recorded keys, ``by_key=1``, alive
during the call) holds the recorded objects, unchanged. A record holds neither its
objects nor its keys: the caller keeps both alive as long as the record."""

LOOK_SAME: list[Callable[[int, int, Any], int]] = []
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

    def record(objs: Sequence[object], keys: Sequence[str] | None = None) -> Any:
        size = 1 + len(objs)
        for o in objs:
            if type(o) is int:
                size += 4
            elif type(o) is np.ndarray:
                size += 9 + 2 * o.ndim
            else:
                return None
        want = ffi.new("int64_t[]", size)
        names = [0] * len(objs) if keys is None else list(map(id, keys))
        if fill(len(objs), names, list(map(id, objs)), want, size) < 0:
            return None  # reshaped meanwhile by another thread, or an int past 64 bits
        return want

    return lib.spf_look_same, record

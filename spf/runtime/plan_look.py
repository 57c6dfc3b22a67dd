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

The same library loads as a Python extension module too: its ``hot_call`` (:data:`HOT_CALL`)
reads a hot call's look and, when it holds, makes the recorded C call itself (the kernel's
function called on its arguments as 64-bit words, :func:`fire_record`), so that a replayed
serial call is one call from Python with no cffi conversion.

The helper is compiled once per machine and cached like a kernel (it needs Python's and
NumPy's C headers); where it cannot be built (no headers, no compiler) :func:`looker` is
None and the record reads the look in Python, as before.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import platform
import struct
import sysconfig
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import cffi
import numpy as np

from spf.errors import SpfError
from spf.runtime.checksum import submit

if TYPE_CHECKING:
    from concurrent.futures import Future

_TEXT = r"""
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>
#include <stdint.h>
#include <structmember.h>
#ifndef Py_T_OBJECT_EX
#define SPF_T_OBJECT_EX T_OBJECT_EX
#else
#define SPF_T_OBJECT_EX Py_T_OBJECT_EX
#endif

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

/* The names a kernel's C __call__ reads itself (spf_method_call); set when the library
   loads as an extension module. */
static PyObject *spf_str_plan, *spf_str_check, *spf_str_quick, *spf_str_hot, *spf_str_last,
  *spf_str_fire;
static PyTypeObject *spf_ndarray;  /* numpy.ndarray */
#define SPF_RECORD_LINES 16  /* the cache lines of a hot call's record loaded at once */

#if defined(__GNUC__)
#define SPF_PREFETCH(p) __builtin_prefetch((const void *)(p))
#else
#define SPF_PREFETCH(p) ((void)(p))
#endif

/* Start loading what the look of the dict's arrays will read (each array's fields past
   its first cache line, its dimensions and strides), all at once: on a cold cache each is
   a miss, and read one after the other each waits for the one before. */
static void spf_prefetch_arrays(PyObject *kw)
{
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(kw, &pos, &key, &value))
    if (Py_TYPE(value) == spf_ndarray)
    {
      SPF_PREFETCH((const char *)value + 64);
      SPF_PREFETCH(PyArray_DIMS((PyArrayObject *)value));
    }
}

/* 1 when the call's arguments are the recorded ones, unchanged: the items of the tuple
   `call` in the record's order (by_key 0), or the values of the dict `call` by their
   recorded keys (by_key 1: keys compared by address, so a name passed as another str
   object of the same text is not found, and the caller reads the arguments itself;
   by_key 2: the same, the dict holding `plan` and `check` too, which the caller read).
   The caller holds Python's lock. */
static int spf_look_match(PyObject *c, int64_t by_key, const int64_t *want)
{
  const int64_t n = want[0];
  const Py_ssize_t extra = by_key == 2 ? 2 : 0;
  Py_ssize_t skipped = 0;
  int same = 1;
  if (!by_key)
  {
    same = PyTuple_GET_SIZE(c) == n;
    for (int64_t i = 0; i < n && same; i++)
      same = spf_look_item(PyTuple_GET_ITEM(c, i), want + want[1 + i]);
  }
  else if (PyDict_GET_SIZE(c) != n + extra)
    same = 0;
  else
  {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int64_t next = 0;  /* where the last key's successor is looked for first */
    while (same && PyDict_Next(c, &pos, &key, &value))
    {
      if (extra && (key == spf_str_plan || key == spf_str_check))
      {
        skipped++;
        continue;
      }
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
    same = same && skipped == extra;
  }
  return same;
}

/* spf_look_match for cffi, which calls without Python's lock: `call` is alive during the
   call (its id) */
int spf_look_same(intptr_t call, int64_t by_key, const int64_t *want)
{
  PyGILState_STATE gil = PyGILState_Ensure();
  const int same = spf_look_match((PyObject *)call, by_key, want);
  PyGILState_Release(gil);
  return same;
}

/* A hot call's record (fire_record): the kernel function's address, its argument count n,
   its n arguments (64-bit words: integers and addresses), then the look record of the
   call's arguments. */
typedef int64_t spf_w;
static void spf_fire(intptr_t f, int64_t n, const int64_t *a)
{
  switch (n)
  {
@CASES@
  }
}

/* hot_call(call, by_key, record): when the call's arguments (a keyword dict, by_key True,
   or a tuple) are those the record's look holds, unchanged, run the recorded C call
   without Python's lock (as cffi calls it) and return True; else False, having run
   nothing. A Python function (METH_FASTCALL): no cffi conversion of its arguments. */
static PyObject *spf_hot_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
  (void)self;
  if (nargs != 3)
  {
    PyErr_SetString(PyExc_TypeError, "hot_call takes (call, by_key, record)");
    return NULL;
  }
  const int by_key = args[1] == Py_True;
  if (by_key ? !PyDict_CheckExact(args[0]) : !PyTuple_CheckExact(args[0]))
    Py_RETURN_FALSE;
  const int64_t *h = (const int64_t *)PyLong_AsVoidPtr(args[2]);
  if (h == NULL)
    return NULL;  /* not an address (PyLong_AsVoidPtr set the error), or none */
  const int64_t n = h[1];
  if (!spf_look_match(args[0], by_key, h + 2 + n))
    Py_RETURN_FALSE;
  Py_BEGIN_ALLOW_THREADS
  spf_fire((intptr_t)h[0], n, h + 2);
  Py_END_ALLOW_THREADS
  Py_RETURN_TRUE;
}

/* method(call, quick): what stands for `call` (WavefrontKernel's Python __call__) as the
   class's __call__ (spf.runtime.plan_method). An unbound method
   (Py_TPFLAGS_METHOD_DESCRIPTOR), so that a call of a kernel reaches it with the caller's
   keyword dict itself: a keyword call of a serial plan's last arguments, unchanged, runs
   its C call here (spf_method_hot); any other call is `call`'s, with the same arguments.
   `quick`: the class of the kernels' records (spf.runtime.plan_call.Quick), whose `plan`
   and `hot` slots are read at their offsets. */
typedef struct
{
  PyObject_HEAD
  PyObject *call;
  PyObject *quick;
  Py_ssize_t plan_at, hot_at, last_at, direct_at;  /* last_at, direct_at: -1 if none */
} spf_method;

/* whether the weak reference `ref` refers to `obj` (alive) */
static int spf_refers(PyObject *ref, PyObject *obj)
{
  if (!PyWeakref_CheckRef(ref))
    return 0;
#if PY_VERSION_HEX >= 0x030D0000
  PyObject *got = NULL;
  if (PyWeakref_GetRef(ref, &got) < 0)
  {
    PyErr_Clear();
    return 0;
  }
  const int is = got == obj;
  Py_XDECREF(got);
  return is;
#else
  return PyWeakref_GetObject(ref) == obj;
#endif
}

/* a kernel's attribute `_last_threads` set to 1 in its instance dict (no class of a
   kernel defines it: spf.runtime.plan_method.install checks) */
static int spf_ran_one(PyObject *kernel)
{
  PyObject *dict = PyObject_GenericGetDict(kernel, NULL);
  if (dict == NULL)
    return -1;
  PyObject *one = PyLong_FromLong(1);
  const int got = one == NULL ? -1 : PyDict_SetItem(dict, spf_str_last, one);
  Py_XDECREF(one);
  Py_DECREF(dict);
  return got;
}

/* A wavefront kernel's hot call in C, the Python block it stands for being
   WavefrontKernel.__call__'s first: the record of `plan` in the kernel's `_quick` (by id,
   its `plan` weakref that very plan), its `hot` call with a hot_call record (hot[5]: its
   address, nonzero), and the keyword dict `kw` holding the recorded arguments, unchanged
   (besides plan and check=False, which the caller read): then the C call runs without
   Python's lock and both kernels' `_last_threads` become 1. Everything is read straight
   from the dicts and the record's slots (attribute look-ups through the classes cost
   microseconds on a cold cache). Returns 1 when it ran, 0 when it ran nothing (the
   Python call runs instead), -1 on an error. */
/* Whether `_last_threads` may be written straight into `o`'s dict: its class (a user's
   subclass too) sets attributes the generic way and defines no `_last_threads` (a
   property, a slot). */
static int spf_plain(PyObject *o)
{
  PyTypeObject *t = Py_TYPE(o);
  return t->tp_setattro == PyObject_GenericSetAttr && _PyType_Lookup(t, spf_str_last) == NULL;
}

/* A warm call in C: the record `quick` (of the call's plan, found as for a hot call) has
   no hot call and no in-order replay of its own (`direct`: a coarse or levels plan, whose
   team the governor picks per call, in Python), and its last arguments' look recorded in C
   (`last`: (arguments, arrays, record, the record's address)). When the keyword dict `kw`
   holds those arguments, unchanged (plan and check=False besides), the record's
   `fire(kernel, arguments)` runs: what the Python __call__ runs for such a call
   (Quick.run), without its frame, the copy of the keyword dict into its **args, its
   record look-ups and the look's cffi call. Returns 1 when fire ran the call, 0 when it
   did not (then the Python call runs, which decides as before), -1 on an error (raised
   by the call). */
static int spf_method_warm(spf_method *m, PyObject *self, PyObject *quick, PyObject *kw)
{
  if (m->last_at < 0 || m->direct_at < 0)
    return 0;
  PyObject *direct = *(PyObject **)((char *)quick + m->direct_at);
  PyObject *last = *(PyObject **)((char *)quick + m->last_at);
  if (direct != Py_None || last == NULL || !PyTuple_CheckExact(last)
      || PyTuple_GET_SIZE(last) != 4 || !PyLong_CheckExact(PyTuple_GET_ITEM(last, 3)))
    return 0;
  const int64_t *want = (const int64_t *)PyLong_AsVoidPtr(PyTuple_GET_ITEM(last, 3));
  if (want == NULL)
    return 0;  /* 0: no record in C (the look is read in Python) */
  for (int line = 0; line < SPF_RECORD_LINES; line++)
    SPF_PREFETCH((const char *)want + 64 * line);
  if (!spf_look_match(kw, 2, want))
    return 0;
  Py_INCREF(last);  /* the arguments and their record, alive during the call */
  Py_INCREF(quick);
  PyObject *got = PyObject_CallMethodObjArgs(quick, spf_str_fire, self, PyTuple_GET_ITEM(last, 0),
                                             NULL);
  Py_DECREF(quick);
  Py_DECREF(last);
  if (got == NULL)
    return -1;
  const int ran = got == Py_True;
  Py_DECREF(got);
  return ran;
}

static int spf_method_hot(spf_method *m, PyObject *self, PyObject *plan, PyObject *kw)
{
  int ran = 0;
  PyObject *key = NULL, *hot = NULL;
  if (!spf_plain(self))
    return 0;  /* the Python call sets it as the class says */
  spf_prefetch_arrays(kw);  /* loaded while the record is found */
  PyObject *dict = PyObject_GenericGetDict(self, NULL);
  if (dict == NULL)
    goto done;
  PyObject *quicks = PyDict_GetItemWithError(dict, spf_str_quick);  /* borrowed, as below */
  if (quicks == NULL || !PyDict_CheckExact(quicks))
    goto done;
  key = PyLong_FromVoidPtr(plan);
  if (key == NULL)
    goto done;
  PyObject *quick = PyDict_GetItemWithError(quicks, key);
  if (quick == NULL || (PyObject *)Py_TYPE(quick) != m->quick)
    goto done;
  PyObject *ref = *(PyObject **)((char *)quick + m->plan_at);
  PyObject *got = *(PyObject **)((char *)quick + m->hot_at);
  SPF_PREFETCH(got);  /* loaded while the weak reference is read */
  SPF_PREFETCH((const char *)got + 64);
  if (ref == NULL || !spf_refers(ref, plan))
    goto done;  /* another plan at a dead one's address is not its record's */
  if (got == Py_None)
  {
    ran = spf_method_warm(m, self, quick, kw);
    goto done;
  }
  if (got == NULL || !PyTuple_CheckExact(got) || PyTuple_GET_SIZE(got) != 7
      || !PyLong_CheckExact(PyTuple_GET_ITEM(got, 5)))
    goto done;  /* None (no hot call), or one without a hot_call record yet */
  hot = got;
  Py_INCREF(hot);  /* it keeps the record and the buffers the record points into */
  SPF_PREFETCH((const char *)PyTuple_GET_ITEM(hot, 3) - 32);  /* its dict, written last */
  SPF_PREFETCH(PyTuple_GET_ITEM(hot, 3));
  const int64_t *h = (const int64_t *)PyLong_AsVoidPtr(PyTuple_GET_ITEM(hot, 5));
  for (int line = 0; h != NULL && line < SPF_RECORD_LINES; line++)
    SPF_PREFETCH((const char *)h + 64 * line);
  if (h == NULL || !spf_look_match(kw, 2, h + 2 + h[1]))
    goto done;  /* 0: a hot call that cannot have a record; or other arguments */
  if (PyTuple_GET_ITEM(hot, 3) != self && !spf_plain(PyTuple_GET_ITEM(hot, 3)))
    goto done;
  Py_BEGIN_ALLOW_THREADS
  spf_fire((intptr_t)h[0], h[1], h + 2);
  Py_END_ALLOW_THREADS
  PyObject *inner = PyTuple_GET_ITEM(hot, 3);
  ran = spf_ran_one(self) < 0 || (inner != self && spf_ran_one(inner) < 0) ? -1 : 1;
done:
  if (ran == 0)
    PyErr_Clear();  /* whatever failed, the Python call meets it again and says so */
  Py_XDECREF(hot);
  Py_XDECREF(key);
  Py_XDECREF(dict);
  return ran;
}

static PyObject *spf_method_call(PyObject *me, PyObject *args, PyObject *kw)
{
  if (kw != NULL && PyDict_CheckExact(kw) && PyTuple_GET_SIZE(args) == 1)
  {
    PyObject *plan = PyDict_GetItemWithError(kw, spf_str_plan);
    if (plan != NULL && plan != Py_None
        && PyDict_GetItemWithError(kw, spf_str_check) == Py_False)
    {
      const int ran = spf_method_hot((spf_method *)me, PyTuple_GET_ITEM(args, 0), plan, kw);
      if (ran > 0)
        Py_RETURN_NONE;
      if (ran < 0)
        return NULL;
    }
    if (PyErr_Occurred())
      return NULL;
  }
  return PyObject_Call(((spf_method *)me)->call, args, kw);
}

static PyObject *spf_method_get(PyObject *me, PyObject *obj, PyObject *type)
{
  (void)type;
  if (obj == NULL || obj == Py_None)
  {
    Py_INCREF(me);
    return me;
  }
  return PyMethod_New(me, obj);
}

/* the wrapped call's attributes (__doc__, __name__, __wrapped__: what inspect and help
   read) */
static PyObject *spf_method_getattro(PyObject *me, PyObject *name)
{
  static const char *const forwarded[] = {"__doc__", "__name__", "__qualname__", "__module__"};
  PyObject *call = ((spf_method *)me)->call;
  if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0)
  {
    Py_INCREF(call);
    return call;
  }
  for (size_t i = 0; PyUnicode_Check(name) && i < sizeof forwarded / sizeof *forwarded; i++)
    if (PyUnicode_CompareWithASCIIString(name, forwarded[i]) == 0)
      return PyObject_GetAttr(call, name);
  return PyObject_GenericGetAttr(me, name);
}

static int spf_method_traverse(PyObject *me, visitproc visit, void *arg)
{
  Py_VISIT(((spf_method *)me)->call);
  Py_VISIT(((spf_method *)me)->quick);
  return 0;
}

static int spf_method_clear(PyObject *me)
{
  Py_CLEAR(((spf_method *)me)->call);
  Py_CLEAR(((spf_method *)me)->quick);
  return 0;
}

static void spf_method_dealloc(PyObject *me)
{
  PyObject_GC_UnTrack(me);
  spf_method_clear(me);
  Py_TYPE(me)->tp_free(me);
}

/* the offset of the object slot `name` of class `cls` (a __slots__ member), or -1 */
static Py_ssize_t spf_slot_at(PyObject *cls, const char *name)
{
  PyObject *d = PyObject_GetAttrString(cls, name);
  Py_ssize_t at = -1;
  if (d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type)
      && ((PyMemberDescrObject *)d)->d_member->type == SPF_T_OBJECT_EX
      && ((PyMemberDescrObject *)d)->d_common.d_type == (PyTypeObject *)cls)
    at = ((PyMemberDescrObject *)d)->d_member->offset;
  Py_XDECREF(d);
  PyErr_Clear();
  return at;
}

static PyObject *spf_method_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
  PyObject *call, *quick;
  if ((kw != NULL && PyDict_GET_SIZE(kw))
      || !PyArg_UnpackTuple(args, "method", 2, 2, &call, &quick))
  {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "method takes (call, quick)");
    return NULL;
  }
  const Py_ssize_t plan_at = PyType_Check(quick) ? spf_slot_at(quick, "plan") : -1;
  const Py_ssize_t hot_at = PyType_Check(quick) ? spf_slot_at(quick, "hot") : -1;
  if (plan_at < 0 || hot_at < 0)
  {
    PyErr_SetString(PyExc_TypeError, "method: quick must be a class with slots plan and hot");
    return NULL;
  }
  spf_method *me = (spf_method *)type->tp_alloc(type, 0);
  if (me == NULL)
    return NULL;
  Py_INCREF(call);
  Py_INCREF(quick);
  me->call = call;
  me->quick = quick;
  me->plan_at = plan_at;
  me->hot_at = hot_at;
  me->last_at = spf_slot_at(quick, "last");
  me->direct_at = spf_slot_at(quick, "direct");
  return (PyObject *)me;
}

static PyTypeObject spf_method_type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "spf_plan_look.method",
  .tp_basicsize = sizeof(spf_method),
  .tp_dealloc = spf_method_dealloc,
  .tp_call = spf_method_call,
  .tp_getattro = spf_method_getattro,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_METHOD_DESCRIPTOR,
  .tp_doc = "method(call, quick): a wavefront kernel's __call__, its hot keyword calls in C",
  .tp_traverse = spf_method_traverse,
  .tp_clear = spf_method_clear,
  .tp_descr_get = spf_method_get,
  .tp_new = spf_method_new,
};

static PyMethodDef spf_look_methods[] = {
  {"hot_call", (PyCFunction)(void (*)(void))spf_hot_call, METH_FASTCALL,
   "hot_call(call, by_key, record): the recorded C call on the recorded arguments"},
  {NULL, NULL, 0, NULL}};

static struct PyModuleDef spf_look_module = {
  PyModuleDef_HEAD_INIT, "spf_plan_look", NULL, -1, spf_look_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_spf_plan_look(void)
{
  spf_str_plan = PyUnicode_InternFromString("plan");
  spf_str_check = PyUnicode_InternFromString("check");
  spf_str_quick = PyUnicode_InternFromString("_quick");
  spf_str_hot = PyUnicode_InternFromString("hot");
  spf_str_last = PyUnicode_InternFromString("_last_threads");
  spf_str_fire = PyUnicode_InternFromString("fire");
  if (!spf_str_plan || !spf_str_check || !spf_str_quick || !spf_str_hot || !spf_str_last
      || !spf_str_fire      || PyType_Ready(&spf_method_type) < 0)
    return NULL;
  PyObject *numpy = PyImport_ImportModule("numpy");
  if (numpy == NULL)
    return NULL;
  spf_ndarray = (PyTypeObject *)PyObject_GetAttrString(numpy, "ndarray");  /* kept */
  Py_DECREF(numpy);
  if (spf_ndarray == NULL)
    return NULL;
  PyObject *module = PyModule_Create(&spf_look_module);
  if (module == NULL)
    return NULL;
  Py_INCREF(&spf_method_type);
  if (PyModule_AddObject(module, "method", (PyObject *)&spf_method_type) < 0)
  {
    Py_DECREF(&spf_method_type);
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
"""

FIRE_ARGS = 32
"""The most arguments a hot call's C function may take (``spf_fire``'s cases)."""

WORD_ABIS = frozenset({"x86_64", "AMD64", "aarch64", "arm64"})
"""Machines whose C calling convention passes a 64-bit integer and a pointer argument
alike (the same register, or an 8-byte stack slot): there ``spf_fire`` calls a kernel of
such arguments through a function type of ``int64_t`` words (:func:`fire_record`)."""


def _cases(most: int) -> str:
    """``spf_fire``'s switch: one call per argument count, every argument a word."""
    lines = []
    for n in range(most + 1):
        kinds = ", ".join(["spf_w"] * n) or "void"
        given = ", ".join(f"a[{k}]" for k in range(n))
        lines.append(f"    case {n}: ((void (*)({kinds}))f)({given}); break;")
    return "\n".join(lines)


SOURCE = _TEXT.replace("@CASES@", _cases(FIRE_ARGS))

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

HOT_CALL: list[Callable[[object, bool, int], bool]] = []
"""The helper's ``hot_call(call, by_key, record)`` once it is built and loaded as a Python
extension: a hot call's look and its C call in one call from Python (no cffi conversions),
True when it ran, False (nothing run) when the arguments are not the recorded ones. The
record is :func:`fire_record`'s."""

HOT_METHOD: list[Callable[[Callable[..., None], type], Callable[..., None]]] = []
"""The helper's ``method(call, quick)`` once it is loaded as a Python extension: what
stands for a wavefront kernel's Python ``__call__`` ``call`` as its class's ``__call__``,
reading the kernel's records of class ``quick`` (:mod:`spf.runtime.plan_method`)."""

Extension = tuple[Callable[[object, bool, int], bool], Callable[[Callable[..., None], type], Any]]
"""The extension's ``(hot_call, method)``."""

Built = tuple[Looker, Extension | None]
_BUILT: list[Looker | None] = []
_BUILDING: list[Future[Built | None]] = []
_FFI: list[cffi.FFI] = []


def _forked() -> None:
    # a build running on the parent's worker thread never finishes in a forked child
    if _BUILDING and not _BUILDING[0].done():
        _BUILDING.clear()


os.register_at_fork(after_in_child=_forked)


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
        built = _BUILDING[0].result()
    except Exception:  # any failure of the build: the records read the look in Python
        built = None
    got = None if built is None else built[0]
    if got is not None and not LOOK_SAME:
        LOOK_SAME.append(got[0])
        if built is not None and built[1] is not None:
            HOT_CALL.append(built[1][0])
            HOT_METHOD.append(built[1][1])
    _BUILT.append(got)
    return got


def address(want: Any) -> int:
    """The address of the look record ``want`` (a cffi ``int64_t[]`` of the helper's
    ``record``), 0 for None: what the helper's method reads a keyword call's look from
    (:mod:`spf.runtime.plan_method`); the caller keeps ``want`` alive with it."""
    if want is None or not _FFI:
        return 0
    return int(_FFI[0].cast("intptr_t", want))


def fire_record(fn: Any, cargs: tuple[Any, ...], want: Any) -> tuple[int, Any] | None:
    """The record :data:`HOT_CALL` takes for the C call ``fn(*cargs)`` guarded by the look
    record ``want``: ``(its address, the cffi array that holds it)``, the array kept alive
    as long as the address is used (with ``cargs``, whose buffers its words point into).
    None where :data:`HOT_CALL` is not loaded, on a machine outside :data:`WORD_ABIS`, and
    for a function with other than 64-bit integer and pointer arguments, a result, or more
    than :data:`FIRE_ARGS` arguments (the caller then calls ``fn`` through cffi)."""
    if not HOT_CALL or not _FFI or want is None or len(cargs) > FIRE_ARGS:
        return None
    if platform.machine() not in WORD_ABIS or struct.calcsize("P") != 8:
        return None  # the machine's name is the kernel's: a 32-bit Python may run on it
    ffi = _FFI[0]
    kind = ffi.typeof(fn)
    if kind.kind != "function" or kind.ellipsis or kind.result.cname != "void":
        return None
    if len(kind.args) != len(cargs):
        return None
    words = []
    for t, c in zip(kind.args, cargs, strict=True):
        if t.kind == "pointer" and isinstance(c, ffi.CData):
            words.append(int(ffi.cast("intptr_t", c)))
        elif t.kind == "primitive" and t.cname in ("int64_t", "uint64_t"):
            if type(c) is not int:
                return None
            words.append(c)
        else:
            return None
    looked = ffi.sizeof(want) // ffi.sizeof("int64_t")
    n = len(cargs)
    try:
        out = ffi.new("int64_t[]", [int(ffi.cast("intptr_t", fn)), n, *words, *[0] * looked])
    except OverflowError:  # an int past 64 bits
        return None
    ffi.memmove(out + 2 + n, want, looked * ffi.sizeof("int64_t"))
    return int(ffi.cast("intptr_t", out)), out


def headers() -> bool:
    """Whether Python's C headers are installed (Debian's python3-dev; ``make sysdeps``
    installs it): without them the helper cannot be built, with them it must be."""
    include = sysconfig.get_paths().get("include")
    return include is not None and os.path.exists(os.path.join(include, "Python.h"))


def _build() -> Built | None:
    """Compile (or find in the cache) and load the helper, and its ``hot_call`` as a Python
    extension (None where that fails); None where the helper cannot be built."""
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

    for ctype in ("intptr_t", "int64_t", "int64_t[]"):  # parsed here, not in a first call
        ffi.typeof(ctype)
    if not _FFI:
        _FFI.append(ffi)
    return (lib.spf_look_same, record), _extension(path)


def _extension(path: os.PathLike[str] | str) -> Extension | None:
    """The helper's ``hot_call`` and ``method``, its library loaded as the extension module
    ``spf_plan_look`` (not entered in ``sys.modules``); None where it cannot be loaded."""
    loader = importlib.machinery.ExtensionFileLoader("spf_plan_look", str(path))
    spec = importlib.util.spec_from_loader("spf_plan_look", loader)
    if spec is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)
    except Exception:  # any failure to load: the cffi calls stay
        return None
    return module.hot_call, module.method

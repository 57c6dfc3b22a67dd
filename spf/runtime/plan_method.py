"""A wavefront kernel's hot keyword call made in C, from the caller's keyword dictionary
(docs/inspection.md, "Calls with a plan").

A keyword call ``kernel(x=x, ..., plan=plan, check=False)`` of a ``"serial"`` plan's last
arguments, unchanged, is one C call (:data:`~spf.runtime.plan_call.Hot`,
:data:`~spf.runtime.plan_look.HOT_CALL`), but reaching it from Python cost more than the
call on the benchmark's small matrices: the interpreter turns the caller's keyword
dictionary into a vector of names and values, binds them to ``__call__``'s parameters
(``check``, ``plan`` and a new ``**args`` dictionary), runs its frame, and that frame reads
the kernel's record through several objects before the C call. Once the look helper is
loaded as an extension (:data:`~spf.runtime.plan_look.HOT_METHOD`), :func:`install` puts
its ``method`` in place of the class's Python ``__call__``: an unbound method object,
which the interpreter calls with the caller's dictionary as it is, and which reads the
same record in C (the kernel's ``_quick`` entry of that plan, by id and by its weak
reference to that very plan; its ``hot`` call and that call's record of the arguments'
look, with ``plan`` and ``check=False`` besides) and makes the C call, exactly where the
Python block it stands for would. A keyword call of a ``"coarse"`` or ``"levels"``
plan's last arguments, unchanged (a record with no hot call and no in-order replay of its
own, its look recorded in C), is read there too, and the method then runs the record's
``fire`` (:meth:`~spf.runtime.plan_call.Quick.fire`: the governor's team, then the
replay's C call), as the Python ``__call__`` would through ``Quick.run``, without its
frame, the copy of the keyword dictionary into its ``**args``, its record look-ups and the
look's cffi call. Any other call (``check=True``, no plan, positional arguments, other
arguments or arrays changed in place, a serial plan whose last call did not run hot, a
record with no look in C) runs the Python ``__call__`` with the same arguments, which
decides, records and raises as before. ``inspect.signature`` and ``help`` read the Python
``__call__`` through the method's ``__wrapped__``.

It is installed when the first hot call's record is made, or the first record of
unchecked calls whose look the helper read (so never where the helper cannot be built,
and never before a process makes such calls), and stays for the process's life.
"""

from __future__ import annotations

import types

from spf.runtime.plan_call import Quick
from spf.runtime.plan_look import HOT_METHOD

LAST = "_last_threads"
"""The attribute a hot call sets to 1 on its kernels, written straight into their instance
dictionaries by the method: no class of a kernel may define it (a property, a slot)."""


def install(cls: type) -> bool:
    """Make ``cls.__call__`` (a Python function defined on ``cls`` itself) the helper's
    method standing for it, once; whether the helper's method is in place. Not where a
    class of ``cls``'s kernels defines :data:`LAST` or its own attribute setting."""
    if not HOT_METHOD:
        return False
    call = cls.__dict__.get("__call__")
    if isinstance(call, types.FunctionType):
        if any(LAST in c.__dict__ or "__setattr__" in c.__dict__ for c in cls.__mro__[:-1]):
            return False
        setattr(cls, "__call__", HOT_METHOD[0](call, Quick))  # noqa: B010 (mypy)
    return True


def python_call(cls: type) -> types.FunctionType:
    """``cls``'s Python ``__call__``, whether or not :func:`install` replaced it."""
    call = cls.__dict__["__call__"]
    if isinstance(call, types.FunctionType):
        return call
    wrapped: types.FunctionType = call.__wrapped__
    return wrapped

"""Optional heavy modules loaded on first use, so that ``import spf`` stays cheap.

:func:`deferred` puts a lazy module object for a package in ``sys.modules`` (the standard
library's :class:`importlib.util.LazyLoader`) and returns it: the first attribute access
(``sp.Symbol``) runs the package and turns the object into the ordinary module, so later
accesses cost what they always did. A package that is already loaded is returned as it is.
spf's modules bind it with ``from spf._lazy import sympy as sp`` (a plain ``import sympy``
would look at the module's ``__spec__`` and so load it at once)::

    if TYPE_CHECKING:
        import sympy as sp
    else:
        from spf._lazy import sympy as sp
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType


def deferred(name: str) -> ModuleType:
    """The module ``name``, loaded on first attribute access unless it already is loaded."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:  # not installed: fail here, as an import would
        return importlib.import_module(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def is_loaded(name: str) -> bool:
    """True when ``name`` has really been imported (not merely deferred)."""
    module = sys.modules.get(name)
    return module is not None and type(module).__name__ != "_LazyModule"


_DEFERRED = {
    "sympy": "only the set algebra's expression work needs it (~0.2 s to import)",
    "lark": "the set language's parser for the text spf.sets.fast_parse leaves to it (errors, "
    "very deep nesting): ~20 ms to import, which well-formed text never needs",
}
"""The modules deferred here (``from spf._lazy import sympy as sp``), and why."""


def __getattr__(name: str) -> ModuleType:
    """The deferred module ``name`` of :data:`_DEFERRED`, put in ``sys.modules`` when a
    module of spf first binds it (importing this module defers nothing by itself: a process
    whose path never binds sympy has no ``sympy`` in ``sys.modules``)."""
    if name not in _DEFERRED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = deferred(name)
    globals()[name] = module
    return module

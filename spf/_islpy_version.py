"""``import islpy`` without :mod:`importlib.metadata`.

islpy's ``islpy/version.py`` reads its own version with ``importlib.metadata.version(
"islpy")``; importing :mod:`importlib.metadata` (``email``, ``socket``, ``datetime``,
``zipfile``...) is over a third of islpy's import (cachegrind: 293M -> 180M instructions
for ``import islpy``), which every ``import spf`` pays and no wavefront needs. Where that
file is the one this module knows (:data:`KNOWN_SOURCE`, its SHA-256) and the version's
metadata sits in the one ``islpy-*.dist-info`` folder beside the package,
:func:`import_islpy` puts an ``islpy.version`` module with the same values
(``VERSION_TEXT``, ``VERSION_STATUS``, ``VERSION``) in ``sys.modules`` before islpy
imports it, read from that folder's ``METADATA`` as :mod:`importlib.metadata` reads it.
Anything else (another islpy, a layout not like a wheel's, islpy already imported)
imports islpy as it is. ``tests/unit/test_islpy_version.py`` compares the values with
:mod:`importlib.metadata`'s.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import types

KNOWN_SOURCE = "f4a54483b397f6e09a03a12550c7a2021fb30ebc6ccb7bb61fa5509bff8b4d41"
"""SHA-256 of the ``islpy/version.py`` whose values :func:`version_module` reproduces."""


def import_islpy() -> None:
    """Import islpy, with its version module built here where :func:`version_module`
    can (nothing changes once islpy or its version module is loaded)."""
    if "islpy" not in sys.modules and "islpy.version" not in sys.modules:
        module = version_module()
        if module is not None:
            sys.modules["islpy.version"] = module
    import islpy

    module = sys.modules.get("islpy.version")
    if module is not None and getattr(islpy, "version", None) is None:
        islpy.version = module  # what importing the submodule binds on its package


def version_module() -> types.ModuleType | None:
    """An ``islpy.version`` module with the values islpy's own computes, or None where
    the installed islpy is not laid out as this module knows."""
    try:
        spec = importlib.util.find_spec("islpy")
        if spec is None or spec.origin is None or not spec.submodule_search_locations:
            return None
        package = os.path.dirname(spec.origin)
        path = os.path.join(package, "version.py")
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != KNOWN_SOURCE:
                return None
        site = os.path.dirname(package)
        found = [n for n in os.listdir(site) if _is_islpy_info(n)]
        if len(found) != 1:
            return None
        text = _metadata_version(os.path.join(site, found[0], "METADATA"))
    except (OSError, ValueError, ImportError):
        return None
    match = re.match(r"^([0-9.]+)([a-z0-9]*?)$", text or "")
    if text is None or match is None:
        return None
    module = types.ModuleType("islpy.version")
    module.__file__ = path
    module.VERSION_TEXT = text  # type: ignore[attr-defined]
    module.VERSION_STATUS = match.group(2)  # type: ignore[attr-defined]
    module.VERSION = tuple(int(nr) for nr in match.group(1).split("."))  # type: ignore[attr-defined]
    return module


def _is_islpy_info(name: str) -> bool:
    """Whether the folder ``name`` is islpy's ``.dist-info`` (the name's project part
    normalised as the wheel format writes it)."""
    stem, dot, ext = name.rpartition(".")
    return dot == "." and ext == "dist-info" and stem.split("-")[0].lower() == "islpy"


def _metadata_version(path: str) -> str | None:
    """The ``Version:`` field of the core metadata file ``path`` (its header: the lines
    before the first empty one), or None."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                return None
            key, colon, value = line.partition(":")
            if colon and key.strip().lower() == "version":
                return value.strip()
    return None

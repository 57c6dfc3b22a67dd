"""spf's version, in one place: ``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``)."""

from __future__ import annotations

__version__ = "0.1.0"

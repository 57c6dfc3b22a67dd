"""Sphinx configuration for the spf documentation (``make docs``; warnings are errors)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the spf package, when it is not installed
sys.path.insert(0, str(ROOT / "examples"))  # the tutorial scripts the ``pdfg`` directive calls
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "spf"
author = "spf developers"
copyright = "2026, spf developers"
release = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.graphviz",
    "sphinx.ext.viewcode",
    "spf_docs",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "README.md"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
nitpicky = False

graphviz_output_format = "svg"
html_theme = "alabaster"
html_title = "spf"
# Code blocks fit 100-character lines (ruff's line length) without scrolling: at 0.8em of
# alabaster's 17px a monospace character is at most 8.2px wide (DejaVu Sans Mono, 0.602em),
# so 100 of them take 820px, plus the block's and the body's 30px paddings on each side
# (940px), beside the 220px sidebar: 1160px. basic's body_max_width (800px) is lifted.
html_theme_options = {
    "description": "sparse polyhedral computations from Python",
    "page_width": "1180px",
    "sidebar_width": "220px",
    "body_max_width": "none",
    "code_font_size": "0.8em",
}

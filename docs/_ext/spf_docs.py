"""Sphinx extension for the spf docs: the ``pdfg`` directive renders a Computation's PDFG.

In a MyST page::

    ```{pdfg} pdfg_tutorial:forward_solve
    ```

imports ``MODULE`` (the ``examples/`` folder and the repository are on ``sys.path``), calls
``FUNCTION()`` (which returns an ``spf.Computation`` or an ``spf.pdfg.PDFG``) and renders
its DOT text through ``sphinx.ext.graphviz``, so the pictures always match the code.

``{pdfg-steps} MODULE:FUNCTION`` draws ``FUNCTION().pdfg_history()``: one figure per step,
captioned with the step's number and command; ``:steps: 0 2 3`` picks some of them and
``:params: N=1080,M=1920`` prices every step (``pdfg_history(params=...)``: sizes in bytes,
removable temporaries).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, ClassVar

from docutils.parsers.rst import directives
from sphinx.ext.graphviz import figure_wrapper, graphviz
from sphinx.util.docutils import SphinxDirective

if TYPE_CHECKING:
    from docutils.nodes import Node
    from sphinx.application import Sphinx


class PdfgDirective(SphinxDirective):
    """``{pdfg} MODULE:FUNCTION`` with an optional ``:caption:``."""

    required_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {"caption": directives.unchanged}

    def run(self) -> list[Node]:
        import spf
        from spf.pdfg import PDFG

        module_name, _, func_name = self.arguments[0].partition(":")
        result = getattr(importlib.import_module(module_name), func_name)()
        if isinstance(result, spf.Computation):
            result = result.pdfg()
        if not isinstance(result, PDFG):
            raise self.error(f"{self.arguments[0]}() returned neither a Computation nor a PDFG")
        node = graphviz()
        node["code"] = result.to_dot()
        node["options"] = {"docname": self.env.current_document.docname}
        node["alt"] = f"PDFG of {self.arguments[0]}"
        if "caption" not in self.options:
            return [node]
        return [figure_wrapper(self, node, self.options["caption"])]


class PdfgStepsDirective(SphinxDirective):
    """``{pdfg-steps} MODULE:FUNCTION`` with optional ``:steps:`` (step numbers) and
    ``:params:`` (parameter values, as ``spf dot --params`` takes them)."""

    required_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {
        "steps": directives.unchanged,
        "params": directives.unchanged,
    }

    def run(self) -> list[Node]:
        import spf
        from spf.cli import parse_params

        module_name, _, func_name = self.arguments[0].partition(":")
        comp = getattr(importlib.import_module(module_name), func_name)()
        if not isinstance(comp, spf.Computation):
            raise self.error(f"{self.arguments[0]}() did not return a Computation")
        try:
            history = comp.pdfg_history(parse_params(self.options.get("params")))
        except spf.SpfError as err:
            raise self.error(f"{self.arguments[0]}: {err}") from err
        wanted = [int(k) for k in self.options.get("steps", "").split()] or range(len(history))
        figures: list[Node] = []
        for k in wanted:
            if not 0 <= k < len(history):
                raise self.error(f"{self.arguments[0]} has steps 0..{len(history) - 1}, not {k}")
            text, graph = history[k]
            node = graphviz()
            node["code"] = graph.to_dot()
            node["options"] = {"docname": self.env.current_document.docname}
            node["alt"] = f"PDFG of {self.arguments[0]}, step {k}"
            what = "before any command" if k == 0 else f"``{text}``"
            figures.append(figure_wrapper(self, node, f"Step {k}: {what}"))
        return figures


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("pdfg", PdfgDirective)
    app.add_directive("pdfg-steps", PdfgStepsDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

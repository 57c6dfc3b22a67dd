"""The ``spf`` command line.

``spf demo [MATRIX]`` runs the demo; ``spf codegen MODULE:FUNCTION [--target c] [-o FILE]``
prints or writes the generated code of the Computation that ``FUNCTION()`` returns;
``spf dot MODULE:FUNCTION [-o FILE.dot|.svg|.png|.pdf]`` writes its PDFG.

    >>> main(["--help"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    SystemExit: 0
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from spf.errors import SpfError

if TYPE_CHECKING:
    from spf.computation.computation import Computation


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spf", description="spf: sparse polyhedral computations from Python."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser("demo", help="run the demo (the same as `make demo`)")
    demo.add_argument("matrix", nargs="?", help="Matrix Market file (default: 2-D Poisson)")
    demo.add_argument("--out", default="out", help="output folder (default: out)")
    gen = commands.add_parser("codegen", help="generate code for a Computation")
    gen.add_argument("function", help="MODULE:FUNCTION returning a Computation")
    gen.add_argument("--target", default="c", choices=["c", "cuda", "mpi", "hls"])
    gen.add_argument("-o", "--output", help="write to this file (default: stdout)")
    dot = commands.add_parser("dot", help="write the PDFG of a Computation")
    dot.add_argument("function", help="MODULE:FUNCTION returning a Computation")
    dot.add_argument("-o", "--output", help="FILE.dot, .svg, .png or .pdf (default: stdout)")
    return parser


def load(spec: str) -> Computation:
    """Call ``MODULE:FUNCTION`` (e.g. ``spf.kernels:spmv_csr``) and return its Computation."""
    from spf.computation.computation import Computation

    module_name, sep, func_name = spec.partition(":")
    if not sep or not module_name or not func_name:
        raise SpfError(f"expected MODULE:FUNCTION (e.g. spf.kernels:spmv_csr), got {spec!r}")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise SpfError(f"cannot import {module_name!r}: {err}") from err
    finally:
        sys.path.pop(0)
    fn = getattr(module, func_name, None)
    if not callable(fn):
        raise SpfError(f"{module_name} has no function {func_name!r}")
    comp = fn()
    if not isinstance(comp, Computation):
        raise SpfError(f"{spec}() returned {type(comp).__name__}, not an spf.Computation")
    return comp


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``spf`` command with ``argv`` (default: ``sys.argv[1:]``); the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _run(parser, args)
    except SpfError as err:
        print(f"spf {args.command}: {err}", file=sys.stderr)
        return 1


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "demo":
        from spf.demo import main as demo_main  # lazy: the demo pulls in the whole stack

        demo_main([*([args.matrix] if args.matrix else []), "--out", args.out])
        return 0
    if args.command == "codegen":
        text = load(args.function).codegen(args.target)
        _emit(text, args.output)
        return 0
    if args.command == "dot":
        graph = load(args.function).pdfg()
        if args.output and not args.output.endswith(".dot"):
            print(f"wrote {graph.render(args.output)}", file=sys.stderr)
        else:
            _emit(graph.to_dot(), args.output)
        return 0
    parser.print_help()
    return 2


def _emit(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text)
        print(f"wrote {output}", file=sys.stderr)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    sys.exit(main())

"""The ``spf`` command line.

``spf demo`` runs the guided demo (``spf.demo``), the same as ``python -m spf.demo``::

    >>> main(["--help"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    SystemExit: 0
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spf",
        description="spf: sparse polyhedral computations from Python.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("demo", help="run the demo (the same as `python -m spf.demo`)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``spf`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    Example: ``main(["demo"])`` runs :func:`spf.demo.main` and returns 0.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        from spf.demo import main as demo_main  # lazy: the demo pulls in the whole stack

        demo_main()
        return 0
    parser.print_help()
    return 2

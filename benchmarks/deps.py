"""Thin script: `python benchmarks/deps.py [--quick] [--json PATH] [--threads 1 2]`.

Runs the ``deps`` benchmark of :mod:`spf.bench` (``spf bench --only deps``); ``make bench`` runs
them all.
"""

from __future__ import annotations

import sys

from spf.bench import main

if __name__ == "__main__":
    sys.exit(main(["--only", "deps", *sys.argv[1:]]))

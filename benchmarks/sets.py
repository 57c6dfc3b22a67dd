"""Thin script: `python benchmarks/sets.py [--quick] [--json PATH] [--threads 1 2]`.

Runs the ``sets`` benchmark of :mod:`spf.bench` (``spf bench --only sets``); ``make bench`` runs
them all.
"""

from __future__ import annotations

import sys

from spf.bench import main

if __name__ == "__main__":
    sys.exit(main(["--only", "sets", *sys.argv[1:]]))

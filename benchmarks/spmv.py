"""Thin script: `python benchmarks/spmv.py [--quick] [--json PATH] [--threads 1 2]`.

Runs the ``spmv`` benchmark of :mod:`spf.bench` (``spf bench --only spmv``); ``make bench`` runs
them all.
"""

from __future__ import annotations

import sys

from spf.bench import main

if __name__ == "__main__":
    sys.exit(main(["--only", "spmv", *sys.argv[1:]]))

"""Thin script: `python benchmarks/busy.py [--quick] [--json PATH] [--threads 1 2]`.

Runs the ``busy`` benchmark of :mod:`spf.bench` (``spf bench --only busy``): parallel SpMV while
a busy loop holds one core, with fixed and adaptive thread counts. ``make bench`` runs them all.
"""

from __future__ import annotations

import sys

from spf.bench import main

if __name__ == "__main__":
    sys.exit(main(["--only", "busy", *sys.argv[1:]]))

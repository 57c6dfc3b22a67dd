"""``python benchmarks/run.py [--quick] [--only NAME] [--json PATH] [--threads 1 2]``.

The same as ``spf bench`` and ``python -m spf.bench``: every benchmark of :mod:`spf.bench`.
"""

from __future__ import annotations

import sys

from spf.bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``python -m spf.bench``: run spf's benchmarks (see :mod:`spf.bench`)."""

from __future__ import annotations

import sys

from spf.bench import main

sys.exit(main())

"""``python -m spf ...`` runs the ``spf`` command line (the same as the ``spf`` script)."""

from __future__ import annotations

from spf.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Where a test run's CPU went: ``.ci/cpu_report.py FOLDER [N]`` reads the files a run wrote
under ``SPF_TEST_CPU_LOG=FOLDER`` (tests/conftest.py) and prints each process's CPU up to
collection and in all, the tests' CPU summed by file, and the N (25) costliest tests (CPU
seconds of the test's process plus the children it waited for: compilers, MPI jobs, fresh
interpreters). Make's own steps (venv, pip, lint) are not in it."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path


def main(folder: Path, most: int) -> None:
    tests: dict[str, float] = {}
    print("process      configured  collected        end   gc  (CPU s: own + children)")
    for log in sorted(folder.glob("*.tsv")):
        marks: dict[str, float] = {}
        collector = 0.0
        for line in log.read_text().splitlines():
            name, own, children, *rest = line.split("\t")
            if name.startswith("#"):
                marks[name[1:]] = float(own) + float(children)
                collector = float(rest[-1])
            else:
                tests[name] = tests.get(name, 0.0) + float(own) + float(children)
        cells = [f"{marks[m]:10.1f}" if m in marks else f"{'-':>10}" for m in MARKS]
        print(f"{log.stem:12} " + " ".join(cells) + f" {collector:5.1f}")
    by_file: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for name, cpu in tests.items():
        by_file[name.split("::")[0]] += cpu
        counts[name.split("::")[0]] += 1
    print(f"\n{len(tests)} tests: {sum(tests.values()):.1f} s CPU\n\nby file:")
    for name, cpu in sorted(by_file.items(), key=lambda kv: -kv[1])[:most]:
        print(f"{cpu:8.1f} {counts[name]:5d}  {name}")
    print("\ntests:")
    for name, cpu in sorted(tests.items(), key=lambda kv: -kv[1])[:most]:
        print(f"{cpu:8.2f}  {name}")


MARKS = ("configured", "collected", "end")

if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 25)

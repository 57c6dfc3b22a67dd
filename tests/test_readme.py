"""Every Python example in the README runs (in a temporary directory)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel_cache: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPF_CACHE_DIR", str(kernel_cache))
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), {"__name__": "readme"})

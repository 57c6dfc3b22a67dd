"""Writing the PDFG to a path that cannot be a file is an SpfError naming the path."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from spf import SpfError, kernels

if TYPE_CHECKING:
    from pathlib import Path


def test_write_dot_to_a_directory(tmp_path: Path) -> None:
    with pytest.raises(SpfError, match=f"write: '{tmp_path}' is a directory"):
        kernels.dense_mv().write_dot(tmp_path)
    with pytest.raises(SpfError, match="is a directory; give a file path inside it"):
        kernels.dense_mv().pdfg().write(str(tmp_path))


def test_write_into_a_missing_directory(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "g.dot"
    with pytest.raises(SpfError, match=r"the directory '.*/no/such' of '.*g\.dot' does not"):
        kernels.dense_mv().write_dot(str(target))
    assert not target.parent.exists()


def test_render_to_a_directory_or_missing_directory(tmp_path: Path) -> None:
    g = kernels.dense_mv().pdfg()
    with pytest.raises(SpfError, match=f"render: '{tmp_path}' is a directory"):
        g.render(tmp_path)
    with pytest.raises(SpfError, match=r"render: the directory .* does not exist"):
        g.render(tmp_path / "missing" / "g.svg")
    with pytest.raises(SpfError, match=r"render: unsupported format 'txt' .*\.svg, \.png, \.pdf"):
        g.render(tmp_path / "g.txt")


def test_write_needs_a_path() -> None:
    with pytest.raises(SpfError, match="write: expected a file path"):
        kernels.dense_mv().pdfg().write(3)  # type: ignore[arg-type]


def test_write_dot_writes_a_file(tmp_path: Path) -> None:
    kernels.dense_mv().write_dot(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text().startswith("digraph")

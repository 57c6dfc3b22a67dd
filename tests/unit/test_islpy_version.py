"""``spf._islpy_version``: ``import spf`` imports islpy with a version module whose values
are islpy's own (read by ``importlib.metadata``), built without importing that module where
islpy's ``version.py`` is the known one, and islpy's own module anywhere else."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import spf
from spf import _islpy_version

if TYPE_CHECKING:
    import pytest

PROBE = """
import json, sys
import spf, islpy
v = sys.modules["islpy.version"]
print(json.dumps({
    "text": v.VERSION_TEXT, "status": v.VERSION_STATUS, "version": list(v.VERSION),
    "bound": islpy.version is v, "islpy": list(islpy.VERSION), "built": v.__spec__ is None,
    "metadata": "importlib.metadata" in sys.modules,
}))
"""


def _islpy_version_file() -> Path:
    import islpy

    return Path(islpy.__file__).parent / "version.py"


def test_import_spf_gives_islpy_its_own_version_values() -> None:
    root = Path(spf.__file__).parent.parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    own = runpy.run_path(str(_islpy_version_file()))  # islpy's module, through metadata
    assert got["text"] == own["VERSION_TEXT"] == importlib.metadata.version("islpy")
    assert got["status"] == own["VERSION_STATUS"]
    assert tuple(got["version"]) == own["VERSION"] == tuple(got["islpy"])
    assert got["bound"]
    known = hashlib.sha256(_islpy_version_file().read_bytes()).hexdigest()
    assert got["built"] == (known == _islpy_version.KNOWN_SOURCE)
    if got["built"]:
        assert not got["metadata"]  # what the module saves (nothing else of spf's needs it)


def test_an_unknown_version_file_is_left_to_islpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_islpy_version, "KNOWN_SOURCE", "0" * 64)
    assert _islpy_version.version_module() is None


def test_known_file_values_match_metadata() -> None:
    module = _islpy_version.version_module()
    if (
        hashlib.sha256(_islpy_version_file().read_bytes()).hexdigest()
        != _islpy_version.KNOWN_SOURCE
    ):
        assert module is None
        return
    assert module is not None
    assert importlib.metadata.version("islpy") == module.VERSION_TEXT


def test_metadata_version_reads_the_header_only(tmp_path: Path) -> None:
    meta = tmp_path / "METADATA"
    meta.write_text("Metadata-Version: 2.4\nName: islpy\nVersion: 2026.2.2\n\nVersion: 1\n")
    assert _islpy_version._metadata_version(str(meta)) == "2026.2.2"
    meta.write_text("Metadata-Version: 2.4\nName: islpy\n\nVersion: 1\n")
    assert _islpy_version._metadata_version(str(meta)) is None


def test_dist_info_names() -> None:
    assert _islpy_version._is_islpy_info("islpy-2026.2.2.dist-info")
    assert _islpy_version._is_islpy_info("ISLpy-2026.2.dist-info")
    assert not _islpy_version._is_islpy_info("islpy_extra-1.0.dist-info")
    assert not _islpy_version._is_islpy_info("islpy")
    assert not _islpy_version._is_islpy_info("islpy-2026.2.2.egg-info")

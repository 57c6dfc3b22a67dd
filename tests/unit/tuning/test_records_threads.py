"""Records written by several threads of one process at once (``spf.tune`` or
``spf.formats.tune`` called from two threads): every save succeeds and the file is whole.
The temporary file was named by the process id only, so one thread's ``os.replace`` moved
another's half-written file or found it gone (``FileNotFoundError``)."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from spf.formats.tune_record import save_record
from spf.tuning import records

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

BIG = {"history": ["x" * 1000] * 300}  # long enough that the writes overlap


def _hammer(save: Callable[[], Any], threads: int = 4, times: int = 40) -> list[str]:
    errors: list[str] = []

    def work() -> None:
        for _ in range(times):
            try:
                save()
            except Exception as err:  # every failure is the test's finding
                errors.append(repr(err))

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return errors


def test_tune_records_saved_from_threads_at_once_all_succeed(tmp_path: Path) -> None:
    assert _hammer(lambda: records.save("k", dict(BIG), tmp_path)) == []
    assert records.load("k", tmp_path) is not None
    assert [p.name for p in tmp_path.iterdir()] == ["k.json"]  # no temporary file left


def test_formats_records_saved_from_threads_at_once_stay_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    assert _hammer(lambda: save_record(path, dict(BIG))) == []
    assert json.loads(path.read_text()) == BIG
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]

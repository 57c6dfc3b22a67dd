"""Two threads iterating one shape's shared fact instances at once (two inspections of one
kernel, say) each see every instance, generated once, and never step the generator
together ("generator already executing": review of mklkw)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from spf.sets.facts import _Candidate, _Candidates


def _nothing() -> Any:
    return None


def _holds(point: Any) -> bool:
    return True


def test_two_threads_share_the_generated_instances() -> None:
    made: list[int] = []

    def slow() -> Iterator[_Candidate]:
        for n in range(20):
            time.sleep(0.002)  # both threads reach next() while one is inside it
            made.append(n)
            yield _Candidate(_nothing, _holds)

    shared = _Candidates(slow())
    seen: dict[int, list[object]] = {}
    errors: list[BaseException] = []

    def walk(who: int) -> None:
        try:
            seen[who] = list(shared)
        except BaseException as err:  # recorded for the assertion
            errors.append(err)

    threads = [threading.Thread(target=walk, args=(who,)) for who in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert made == list(range(20))
    assert seen[0] == seen[1] == seen[2] == shared.seen

"""Hardware tags on loops and the rules that keep them on the right loops.

Tags live on loop names (``{"i0": ("gpu_block(0)",)}``); transformations carry them along
with renamed loops (:func:`spf.schedule.apply.retag`). After every command the tags of the
statement are validated again, so a later ``interchange`` or ``split`` cannot leave a tag on
a loop where it no longer means what it meant: the command is refused instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spf.errors import ScheduleError

GPU_KINDS = ("gpu_block", "gpu_thread")
EXCLUSIVE = ("parallel", "distribute", "wavefront", *GPU_KINDS)
"""Tags that map a loop to hardware: a loop carries at most one of them."""

KINDS = (
    "parallel",
    "reduction",
    "vector",
    "unroll",
    "sums",
    "pipeline",
    "distribute",
    *GPU_KINDS,
    "wavefront",
    "wavefront_levels",
    "wavefront_rows",
    "wavefront_single",
    "wavefront_p2p",
    "wavefront_prefetch",
    "coiterate",
)
"""Every tag kind a command or the analysis puts on a loop (``parallelize``, ``vectorize``,
``unroll``, ``partial_sums``, ``pipeline``, ``distribute``, ``gpu``, ``wavefront``,
``coiterate``; the ``wavefront_*`` kinds on a wavefront executor's loops,
:mod:`spf.analysis.executor`): code generation reads no other
(:func:`spf.ir.check.check_fields` refuses one in an IR built by hand)."""

MAX_UNROLL = 1024
"""The largest ``unroll`` factor spf accepts. gcc's ``#pragma GCC unroll`` stops at 65534,
but a body copied more than a thousand times only bloats the code (and the compile time):
unroll a split-off inner loop instead."""


REDUCTION_OPTIONS = ("atomic", "privatize")
"""``parallelize(loop, reduction=...)``: ``atomic`` updates of the reduced element, or
per-thread copies of the reduced data space (``privatize``) combined after the loop."""


SUM_COUNTS = (2, 4, 8)
"""``partial_sums(loop, count)``: how many partial sums a loop may accumulate into (added
pairwise at its end: ``(s0 + s1) + (s2 + s3)`` for four)."""


def sums_option(tags: Sequence[str]) -> tuple[int, int] | None:
    """``(count, min_trip)`` for a loop tagged ``"sums(4,16)"``; None without the tag."""
    for t in tags:
        if kind(t) == "sums" and t.endswith(")"):
            count, min_trip = t[len("sums(") : -1].split(",")
            return int(count), int(min_trip)
    return None


def reduction_option(tags: Sequence[str]) -> str | None:
    """``"atomic"`` for the tags ``("parallel", "reduction(atomic)")``; None without one."""
    for t in tags:
        if kind(t) == "reduction" and t.endswith(")"):
            return t[len("reduction(") : -1]
    return None


def kind(tag: str) -> str:
    """``"unroll"`` for ``"unroll(4)"``."""
    return tag.split("(", 1)[0]


def argument(tag: str) -> int | None:
    """``4`` for ``"unroll(4)"``, None for ``"parallel"``."""
    if "(" not in tag or not tag.endswith(")"):
        return None
    text = tag[tag.index("(") + 1 : -1]
    return int(text) if text.lstrip("-").isdigit() else None


def gpu_loops(tags: Mapping[str, Sequence[str]], which: str) -> list[tuple[int, str]]:
    """``(index, loop)`` of the loops tagged ``which(index)`` (``gpu_block``/``gpu_thread``)."""
    out = []
    for loop, ts in tags.items():
        for t in ts:
            if kind(t) == which:
                out.append((argument(t) or 0, loop))
    return sorted(out)


def validate(cmd: str, stmt: str, loops: Sequence[str], tags: Mapping[str, Sequence[str]]) -> None:
    """Raise ``SpfError`` naming ``cmd`` and ``stmt`` when the tags are inconsistent."""
    for loop, ts in tags.items():
        kinds = [kind(t) for t in ts]
        others = [t for t in ts if kind(t) != "sums"]
        if "sums" in kinds and others:
            raise ScheduleError(
                f"{cmd}: loop {loop!r} of statement {stmt} would carry the tags "
                f"{', '.join(ts)}; a loop of partial sums runs in order on one thread, "
                "unrolled by the sums themselves: split off the loop to map it, or drop "
                "partial_sums"
            )
        exclusive = [k for k in kinds if k in EXCLUSIVE]
        if len(exclusive) > 1:
            raise ScheduleError(
                f"{cmd}: loop {loop!r} of statement {stmt} would carry the tags "
                f"{', '.join(ts)}; a loop is mapped to one of {', '.join(EXCLUSIVE)}"
            )
    _check_vector_nesting(cmd, stmt, loops, tags)
    blocks = gpu_loops(tags, "gpu_block")
    threads = gpu_loops(tags, "gpu_thread")
    if not blocks and not threads:
        return
    if not blocks or not threads:
        raise ScheduleError(
            f"{cmd}: statement {stmt} has gpu {'block' if blocks else 'thread'} loops but no "
            f"gpu {'thread' if blocks else 'block'} loops; use gpu(blocks, threads) with both"
        )
    block_depths = [loops.index(loop) for _, loop in blocks]
    thread_depths = [loops.index(loop) for _, loop in threads]
    if not (
        _consecutive(block_depths)
        and _consecutive(thread_depths)
        and block_depths[-1] < thread_depths[0]
    ):
        raise ScheduleError(
            f"{cmd}: the gpu loops of statement {stmt} must be consecutive block loops "
            f"({', '.join(loop for _, loop in blocks)}) outside consecutive thread loops "
            f"({', '.join(loop for _, loop in threads)}), in the order of their indices "
            "(sequential loops may lie between the two groups); the loops would be "
            f"{', '.join(loops)}"
        )


def _check_vector_nesting(
    cmd: str, stmt: str, loops: Sequence[str], tags: Mapping[str, Sequence[str]]
) -> None:
    """A ``parallel`` loop may not lie inside a ``vector`` loop: OpenMP forbids a parallel
    region inside a ``simd`` loop (gcc rejects the code)."""
    vector = None
    for loop in loops:
        kinds = [kind(t) for t in tags.get(loop, ())]
        if "parallel" in kinds and vector is not None:
            raise ScheduleError(
                f"{cmd}: loop {loop!r} of statement {stmt} is parallel but lies inside the "
                f"vector loop {vector!r}; OpenMP allows no parallel loop inside a simd loop: "
                "parallelize a loop outside the vector loop, or vectorize an innermost loop"
            )
        if "vector" in kinds and "parallel" not in kinds:
            vector = vector or loop


def _consecutive(depths: list[int]) -> bool:
    return depths == list(range(depths[0], depths[0] + len(depths)))

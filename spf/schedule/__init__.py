"""Scheduling commands (Tiramisu Layer II) as data, their meaning, and the trace.

``Stmt`` methods (``tile``, ``split``, ``after`` ...) build a command (:mod:`.commands`),
apply it (:mod:`.apply`: a new scattering relation composed from a transformation relation,
or new tags; pure functions that know no Computation) and record it in the computation's
:class:`Trace` (:mod:`.trace`), which prints as Python, replays and serializes
(:mod:`spf.computation.scheduling` applies a command to a statement). Commands that change
domains or the statement list (``compute_at``, ``inline``, ``store_in`` ...) are
:class:`~spf.schedule.commands.Effect` commands defined next to what they change
(:mod:`spf.computation.effects`, :mod:`spf.computation.layout`). Commands do not check
legality (``compute_at`` only checks that the schedule it starts from is legal, since it
makes it the program order); ``Computation.check_legality`` and ``codegen`` do, and
:func:`.trace.blame` names the command to blame.

>>> from spf import kernels
>>> comp = kernels.dense_mv()
>>> s = comp.stmt("s0").split("i", 4, "i0", "i1")
>>> s.loops
('i0', 'i1', 'j')
>>> print(s.schedule)
{[i, j] -> [0, i0, 0, i1, 0, j, 0] : 4*i0 <= i && i <= 4*i0 + 3 && i = 4*i0 + i1}
"""

from __future__ import annotations

from spf.schedule.apply import Context, State, apply_command
from spf.schedule.commands import (
    ROOT,
    After,
    Command,
    Interchange,
    Parallelize,
    PartialSums,
    Reverse,
    Root,
    SetSchedule,
    Shift,
    Skew,
    Split,
    Tile,
    Unroll,
    Vectorize,
)
from spf.schedule.trace import Trace, TraceEntry, set_trace, trace_of

__all__ = [
    "ROOT",
    "After",
    "Command",
    "Context",
    "Interchange",
    "Parallelize",
    "PartialSums",
    "Reverse",
    "Root",
    "SetSchedule",
    "Shift",
    "Skew",
    "Split",
    "State",
    "Tile",
    "Trace",
    "TraceEntry",
    "Unroll",
    "Vectorize",
    "apply_command",
    "set_trace",
    "trace_of",
]

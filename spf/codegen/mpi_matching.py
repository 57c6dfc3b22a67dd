"""Sends and receives that no operation answers (target ``"mpi"``).

A receive posted on rank ``q`` from rank ``p`` waits until ``p`` sends to ``q``: when no send
of the computation goes from ``p`` to ``q`` (an off-by-one in a halo exchange's domains, a
peer written ``q - 1`` on both sides), every rank that posted it waits forever, and
``spf.mpi.run`` can only kill the job after its timeout. A send nothing receives is left
pending (a large one never completes). :func:`check` compares the rank pairs the two sides
post: for each receive, the ``(receiver, sender)`` pairs of its instances must be pairs some
send posts (``(dest, executing rank)``), and each send's pairs must be ones some receive
posts, for every value of the parameters; one that is not is refused naming the operation
and a rank pair left waiting. Only which ranks talk is compared, not how many messages, so
this catches a missing partner, not every mismatch of counts (a receive that gets another
count than it posted aborts the job at run time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.errors import IllegalScheduleError, SpfError
from spf.ir.reading import iterator_names
from spf.sets import Relation, Set

if TYPE_CHECKING:
    import islpy as isl

    from spf.ir import ComputationIR
    from spf.ir.model import OperationIR

__all__ = ["check"]


def check(ir: ComputationIR) -> None:
    """``IllegalScheduleError`` for a send or receive no operation of the other kind answers
    for some parameter values (module docstring)."""
    ops = [o for o in ir.operations if o.kind in ("send", "receive") and o.peer is not None]
    if not ops:
        return
    pairs: dict[str, isl.Set] = {}
    for op in ops:
        found = _pairs(op)
        if found is None:
            return  # a domain or peer the check cannot read (UFs): leave it to run time
        pairs[op.name] = found
    for op in ops:
        other = "receive" if op.kind == "send" else "send"
        answered = [pairs[o.name] for o in ops if o.kind == other]
        left = pairs[op.name]
        for a in answered:
            left = left.subtract(a)
        if left.is_empty():
            continue
        raise IllegalScheduleError(_message(op, other, left))


def _pairs(op: OperationIR) -> isl.Set | None:
    """``{[receiver, sender]}`` of the messages ``op``'s instances post (None when its
    domain or peer uses UFs or does not parse)."""
    try:
        domain = Set(op.domain)
        if domain.uf_calls or not domain.arity:
            return None
        names = iterator_names(domain)
        rank, peer = names[0], op.peer
        pair = f"{peer}, {rank}" if op.kind == "send" else f"{rank}, {peer}"
        rel = Relation(f"{{[{', '.join(names)}] -> [{pair}]}}")
        if rel.uf_calls:
            return None
        return rel.apply(domain).body_iset()
    except SpfError:
        return None


def _message(op: OperationIR, other: str, left: isl.Set) -> str:
    point = left.sample_point()
    space = left.get_space()
    import islpy as isl

    def value(kind: isl.dim_type, k: int) -> int:
        return int(point.get_coordinate_val(kind, k).to_python())

    receiver, sender = value(isl.dim_type.set, 0), value(isl.dim_type.set, 1)
    params = ", ".join(
        f"{space.get_dim_name(isl.dim_type.param, k)} = {value(isl.dim_type.param, k)}"
        for k in range(space.dim(isl.dim_type.param))
    )
    at = f" (with {params})" if params else ""
    what = "waits for a message that" if op.kind == "receive" else "posts a message that"
    return (
        f"statement {op.name}: {op.kind} on {op.domain} with peer {op.peer} {what} no "
        f"{other} answers: e.g. rank {receiver} receiving from rank {sender}{at}; the ranks "
        f"would wait for each other until the job is killed. Make the domains and peers of "
        f"the sends and receives mirror each other (a send on q to q + 1 is received on "
        f"q + 1 from q: receive domain shifted by one, peer q - 1); check=False generates "
        f"it anyway"
    )

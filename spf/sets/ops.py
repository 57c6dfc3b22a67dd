"""Set algebra on bodies: projection with UF arguments, apply, compose, inverse, intersect.

Projecting out a variable that UF arguments use rewrites those arguments through an affine
expression of the remaining variables when the set makes the variable a function of them
(``rowptr(i)`` under ``ii = i + 1`` becomes ``rowptr(ii - 1)``); otherwise the variable stays
as a hidden existential. Everything else is exact isl.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, ParamSpec

import islpy as isl

from spf.sets.body import (
    Body,
    canonical,
    iset_text,
    lift_pair,
    permute_dims,
    product,
    reorganize,
    slot_values,
    value_key,
)
from spf.sets.linear import DT, aff_to_expr, basic_constraints, free_names, internal_kind, tsym
from spf.sets.memo import Table

if TYPE_CHECKING:
    from spf.sets.affine import Aff, Atom

P = ParamSpec("P")


def by_value(fn: Callable[P, Body]) -> Callable[P, Body]:
    """``fn`` (a pure operation on bodies) remembered by the value of its arguments: each
    body as its :func:`~spf.sets.body.value_key`, the rest as they are. The analysis and
    code generation bring equal operands to the same operations many times (a statement's
    schedule inverted for each kernel of a wavefront, the same pair of domains
    intersected for several dependences), each time as bodies built afresh."""
    table: Table[Hashable, Body] = Table(4096)

    @functools.wraps(fn)
    def remembered(*args: P.args, **kwargs: P.kwargs) -> Body:
        key = (
            tuple(value_key(a) if isinstance(a, Body) else a for a in args),
            tuple(sorted(kwargs.items())),
        )
        found = table.get(key)
        if found is None:
            found = table.put(key, fn(*args, **kwargs))
        return found

    return remembered


def solve_for(body: Body, pos: int, allowed: Sequence[int]) -> Aff | None:
    """Dim ``pos`` as one quasi-affine expression of the ``allowed`` dims and parameters,
    when the set makes it a single-valued function of them; else None (remembered by the
    set's text: the dims' names say which symbol each one is)."""
    return _solved(body, pos, tuple(sorted(set(allowed) | {pos})))


def _solved(body: Body, pos: int, keep: tuple[int, ...]) -> Aff | None:
    """:func:`_solve_for` over the dims ``keep`` in that order, remembered by the set's text."""
    key = (iset_text(body), pos, keep)
    got = _SOLVED.get(key)
    if got is None:
        got = _SOLVED.put(key, (_solve_for(body, pos, list(keep)),))
    return got[0]


_SOLVED: Table[tuple[str, int, tuple[int, ...]], tuple[Aff | None]] = Table(8192)


def _solve_for(body: Body, pos: int, keep: list[int]) -> Aff | None:
    st = permute_dims(body.iset, keep, text=iset_text(body))
    q = keep.index(pos)
    m = isl.Map.from_domain(st).move_dims(DT.out, 0, DT.in_, q, 1)
    if not m.is_single_valued():
        return None
    pieces: list[isl.Aff] = []
    m.as_pw_multi_aff().foreach_piece(lambda _dom, ma: pieces.append(ma.get_at(0)))
    syms = body.dim_syms()
    names = [syms[k] for k in keep if k != pos]
    exprs = {aff_to_expr(a, names) for a in pieces}
    if len(exprs) != 1:
        return None
    return exprs.pop()


def dependent_terms(body: Body, symbol: str) -> set[int]:
    """Terms whose value depends on ``symbol`` (directly or through nested calls)."""
    dep: set[int] = set()
    for k, (_, args) in enumerate(body.terms):
        used = free_names(args)
        if symbol in used or any(f"__u{j}" in used for j in dep):
            dep.add(k)
    return dep


def project_tuple(body: Body, drop: Sequence[int], hidden_names: Sequence[str]) -> Body:
    """Remove tuple positions ``drop`` (hidden_names[i] names drop[i] if it must stay hidden).

    The result keeps ``body.n_in`` only if no input position is dropped; callers set it.
    """
    pending = sorted(zip(drop, hidden_names, strict=True))
    while pending:
        # highest position first: lower ones stay valid. A run of positions no UF argument
        # uses is projected in one step (the same as one at a time: none of them changes
        # what the others' arguments need).
        needed = body.needed_syms()
        run = 0
        while run < len(pending) and f"__t{pending[-1 - run][0]}" not in needed:
            run += 1
        if run > 1:
            gone = {p for p, _ in pending[-run:]}
            del pending[-run:]
            body = _drop_tuple(body, gone)
            continue
        pos, hname = pending.pop()
        others = [p for p, _ in pending]
        body = _project_one(body, pos, hname, others)
    return body


def _drop_tuple(body: Body, gone: set[int]) -> Body:
    """``body`` without the tuple positions ``gone`` (none of them used by a UF argument)."""
    nt, ne = body.n_tuple, len(body.hidden)
    keep_t = [k for k in range(nt) if k not in gone]
    return reorganize(
        body,
        tuple_src=keep_t,
        hidden_src=list(range(nt, nt + ne)),
        term_src=list(range(len(body.terms))),
        names=[body.names[k] for k in keep_t],
        hidden=body.hidden,
        n_in=body.n_in,
    )


def _project_one(body: Body, pos: int, hname: str, later: Sequence[int]) -> Body:
    nt, ne, nu = body.n_tuple, len(body.hidden), len(body.terms)
    symbol = f"__t{pos}"
    keep_t = [k for k in range(nt) if k != pos]
    tuple_src: list[int | None] = list(keep_t)
    hidden_src: list[int | None] = list(range(nt, nt + ne))
    hidden = list(body.hidden)
    subst: dict[Atom, Aff] = {}
    if symbol in body.needed_syms():
        final = [k for k in keep_t if k not in later]
        free_u = [nt + ne + k for k in range(nu) if k not in dependent_terms(body, symbol)]
        hid = list(range(nt, nt + ne))
        expr = None
        for allowed in (final + hid, final + hid + free_u, keep_t + hid + free_u):
            expr = solve_for(body, pos, allowed)
            if expr is not None:
                break
        if expr is None:
            hidden_src.append(pos)
            hidden.append(hname)  # canonical() makes names distinct
        else:
            subst[tsym(pos)] = expr
    names = [body.names[k] for k in keep_t]
    return reorganize(
        body,
        tuple_src=tuple_src,
        hidden_src=hidden_src,
        term_src=list(range(nu)),
        names=names,
        hidden=hidden,
        n_in=body.n_in,
        subst=subst,
    )


def _hints(rel: Body) -> list[str | None]:
    """For each output position: its name, or the input name it equals (``[i] -> [0, i]``)."""
    assert rel.n_in is not None
    got: list[str | None] | None = rel.memo.get("hints")
    if got is None:
        got = rel.memo["hints"] = _compute_hints(rel)
    return list(got)


def _compute_hints(rel: Body) -> list[str | None]:
    assert rel.n_in is not None
    out: list[str | None] = list(rel.names[rel.n_in :])
    bsets = rel.iset.get_basic_sets()
    if len(bsets) != 1:
        return out
    values, _ = slot_values(rel, basic_constraints(bsets[0], rel.dim_syms()))
    for k, name in enumerate(out):
        v = values.get(rel.n_in + k)
        s = v.as_sym() if v is not None else None
        if name is None and s is not None and s.name.startswith("__t"):
            src = int(s.name[3:])
            if src < rel.n_in:
                out[k] = rel.names[src]
    return out


def _borrowed(rel: Body, hints: Sequence[str | None], offset: int) -> list[int]:
    """Result positions (``offset`` + output index) whose name ``hints`` borrowed from an
    input the output equals, not a name the relation gave that output itself."""
    assert rel.n_in is not None
    own = rel.names[rel.n_in :]
    return [offset + k for k, h in enumerate(hints) if h is not None and own[k] is None]


def unname_fixed(body: Body, positions: Sequence[int]) -> Body:
    """``body`` with the names at ``positions`` dropped where every disjunct fixes the
    position to a constant or to another named position (``[i, j] -> [c0, c1] : c0 = 0 &&
    c1 = i`` is ``[i, j] -> [0, i]``), as the text the result reads back from writes it. A
    position a UF argument uses, or one fixed to any other expression (``j = col(k)``), keeps
    its name."""
    bsets = body.iset.get_basic_sets()
    if not bsets:
        return body
    needed = body.needed_syms()
    names = list(body.names)
    syms = body.dim_syms()
    changed = False
    for k in positions:
        if names[k] is None or f"__t{k}" in needed:
            continue
        trial = [*names[:k], None, *names[k + 1 :]]
        probe = Body(tuple(trial), body.n_in, body.hidden, body.terms, body.iset)
        values = [slot_values(probe, basic_constraints(b, syms))[0].get(k) for b in bsets]
        if all(_constant_or_copy(v, trial) for v in values):
            names = trial
            changed = True
    if not changed:
        return body
    return canonical(Body(tuple(names), body.n_in, body.hidden, body.terms, body.iset))


def _constant_or_copy(value: Aff | None, names: Sequence[str | None]) -> bool:
    """True for an integer constant or the symbol of a named tuple position."""
    if value is None:
        return False
    if value.is_integer():
        return True
    s = value.as_sym()
    kind = internal_kind(s) if s is not None else None
    return kind is not None and kind[0] == "t" and names[kind[1]] is not None


def _equate(body: Body, pairs: Sequence[tuple[int, int]]) -> Body:
    if not pairs:
        return body
    iset = body.iset
    for a, b in pairs:  # isl's equate: no constraint text to parse
        iset = iset.equate(DT.set, a, DT.set, b)
    return body.with_iset(iset)


def _out_names(hints: Sequence[str | None], taken: set[str]) -> tuple[str | None, ...]:
    names: list[str | None] = []
    for h in hints:
        if h is not None and h not in taken:
            taken.add(h)
            names.append(h)
        else:
            names.append(None)
    return tuple(names)


@by_value
def apply(rel: Body, s: Body) -> Body:
    """Image of ``s`` under ``rel`` (arities already checked)."""
    assert rel.n_in is not None
    nx = rel.n_in
    hints = _hints(rel)
    prod = product(s, rel, None)
    prod = _equate(prod, [(k, nx + k) for k in range(nx)])
    src_names = [n or f"t{k}" for k, n in enumerate(s.names)]
    drop = list(range(2 * nx))
    hidden = src_names * 2
    res = project_tuple(prod, drop, hidden)
    names = _out_names(hints, set())
    out = canonical(Body(names, None, res.hidden, res.terms, res.iset))
    return unname_fixed(out, _borrowed(rel, hints, 0))


@by_value
def compose(r2: Body, r1: Body) -> Body:
    """``r2 . r1``: first r1, then r2 (arities already checked)."""
    assert r1.n_in is not None
    assert r2.n_in is not None
    nx, ny = r1.n_in, r1.n_tuple - r1.n_in
    hints = _hints(r2)
    prod = product(r1, r2, None)
    prod = _equate(prod, [(nx + k, nx + ny + k) for k in range(ny)])
    mid = [r1.names[nx + k] or f"m{k}" for k in range(ny)]
    drop = list(range(nx, nx + 2 * ny))
    res = project_tuple(prod, drop, mid * 2)
    in_names = res.names[:nx]
    names = in_names + _out_names(hints, {n for n in in_names if n})
    out = canonical(Body(names, nx, res.hidden, res.terms, res.iset))
    return unname_fixed(out, _borrowed(r2, hints, nx))


@by_value
def inverse(rel: Body) -> Body:
    """Outputs become inputs."""
    assert rel.n_in is not None
    nx, nt, ne = rel.n_in, rel.n_tuple, len(rel.hidden)
    order = list(range(nx, nt)) + list(range(nx))
    return canonical(
        reorganize(
            rel,
            tuple_src=order,
            hidden_src=list(range(nt, nt + ne)),
            term_src=list(range(len(rel.terms))),
            names=[rel.names[k] for k in order],
            hidden=rel.hidden,
            n_in=nt - nx,
        )
    )


@by_value
def intersect(a: Body, b: Body) -> Body:
    la, lb = lift_pair(a, b)
    return canonical(la.with_iset(la.iset.intersect(lb.iset)))


def hull(body: Body) -> Body:
    """One conjunction containing ``body``: isl's convex hull of the set with the UF values
    as dimensions (see :meth:`spf.Set.hull`)."""
    return canonical(body.with_iset(isl.Set.from_basic_set(body.iset.convex_hull())))


def polyhedral_hull(body: Body) -> Body:
    """The rational hull of ``body`` without its strides: isl's ``polyhedral_hull`` (see
    :meth:`spf.Set.polyhedral_hull`)."""
    return canonical(body.with_iset(isl.Set.from_basic_set(body.iset.polyhedral_hull())))


@by_value
def subtract(a: Body, b: Body) -> Body:
    """``a \\ b``; exact when ``b`` has no hidden variables (callers check)."""
    la, lb = lift_pair(a, b)
    return canonical(la.with_iset(la.iset.subtract(lb.iset)))


@by_value
def domain_or_range(rel: Body, which: str) -> Body:
    """The input (``which='domain'``) or output tuple of a relation as a set."""
    assert rel.n_in is not None
    nt = rel.n_tuple
    drop = list(range(rel.n_in, nt)) if which == "domain" else list(range(rel.n_in))
    names = [n or f"t{k}" for k, n in enumerate(rel.names)]
    res = project_tuple(rel, drop, [names[k] for k in drop])
    if which == "range":
        hints = _hints(rel)
        kept = _out_names(hints, set())
        out = canonical(Body(kept, None, res.hidden, res.terms, res.iset))
        return unname_fixed(out, _borrowed(rel, hints, 0))
    kept = _out_names(rel.names[: rel.n_in], set())
    return canonical(Body(kept, None, res.hidden, res.terms, res.iset))


@by_value
def identity_on(s: Body, rel: Body, *, outputs: bool) -> Body:
    """A relation shaped like ``rel`` whose inputs (or ``outputs``) lie in ``s``."""
    assert rel.n_in is not None
    nx, nt = rel.n_in, rel.n_tuple
    ns, ne = s.n_tuple, len(s.hidden)
    width = nt - ns
    tuple_src: list[int | None] = (
        [*([None] * width), *range(ns)] if outputs else [*range(ns), *([None] * width)]
    )
    names = [s.names[k] if k is not None else f"f{m}" for m, k in enumerate(tuple_src)]
    body = reorganize(
        s,
        tuple_src=tuple_src,
        hidden_src=list(range(ns, ns + ne)),
        term_src=list(range(len(s.terms))),
        names=names,
        hidden=s.hidden,
        n_in=nx,
    )
    return canonical(body)


def cartesian(a: Body, b: Body) -> Body:
    """``a x b`` for two sets."""
    return canonical(product(a, b, None))


def with_n_in(body: Body, n_in: int | None) -> Body:
    """The same tuples read as a set (None) or a relation with ``n_in`` inputs."""
    return canonical(Body(body.names, n_in, body.hidden, body.terms, body.iset))


def as_function(rel: Body) -> list[Aff] | None:
    """Each output as one quasi-affine expression of the inputs, parameters and UF values
    of the inputs (internal symbols), when the relation determines it; else None."""
    assert rel.n_in is not None
    if rel.hidden:
        return None
    nx, nt = rel.n_in, rel.n_tuple
    base = nt
    free_u = [
        base + k
        for k in range(len(rel.terms))
        if not any(dependent_terms(rel, f"__t{p}") & {k} for p in range(nx, nt))
    ]
    out = []
    for pos in range(nx, nt):
        expr = solve_for(rel, pos, [*range(nx), *free_u])
        if expr is None:
            expr = _solved_jointly(rel, pos, [*range(nx), *free_u])
        if expr is None:
            return None
        out.append(expr)
    return out


def _solved_jointly(body: Body, pos: int, allowed: Sequence[int]) -> Aff | None:
    """Dim ``pos`` as one quasi-affine expression of the ``allowed`` dims, read off the
    function from them to *all* other dims. Solving for ``pos`` alone projects the others
    out first, which can leave isl a piecewise answer for what is one expression: the
    parity of a split of a skewed tile loop, ``(floor(i/3) + floor(j/3)) mod 2``, comes out
    as two pieces (0 and 1), while the map to every dim gives it as a single quasi-affine
    expression (:func:`as_function` then accepts a schedule it would otherwise call no
    function)."""
    keep = sorted(set(allowed))
    key = (iset_text(body), pos, tuple(keep))
    got = _JOINTLY.get(key)
    if got is None:
        got = _JOINTLY.put(key, (_solve_jointly(body, pos, keep),))
    return got[0]


_JOINTLY: Table[tuple[str, int, tuple[int, ...]], tuple[Aff | None]] = Table(1024)


def _solve_jointly(body: Body, pos: int, keep: list[int]) -> Aff | None:
    rest = [d for d in range(body.iset.dim(DT.set)) if d not in set(keep)]
    if pos not in rest:
        return None
    st = permute_dims(body.iset, [*keep, *rest], text=iset_text(body))
    m = isl.Map.from_domain(st).move_dims(DT.out, 0, DT.in_, len(keep), len(rest))
    if not m.is_single_valued():
        return None
    at = rest.index(pos)
    # the map to ``pos`` alone; a piece's expression that holds on all of it is the answer
    alone = m.project_out(DT.out, at + 1, len(rest) - at - 1).project_out(DT.out, 0, at)
    pieces: list[isl.Aff] = []
    alone.as_pw_multi_aff().foreach_piece(lambda _dom, ma: pieces.append(ma.get_at(0)))
    m.as_pw_multi_aff().foreach_piece(lambda _dom, ma: pieces.append(ma.get_at(at)))
    syms = body.dim_syms()
    names = [syms[k] for k in keep]
    for aff in pieces:
        graph = isl.Map.from_aff(aff).intersect_domain(alone.domain())
        if alone.is_subset(graph):
            return aff_to_expr(aff, names)
    return None


def inverse_as_function(rel: Body) -> list[Aff] | None:
    """Each input as one quasi-affine expression of the outputs, parameters and UF values of
    the outputs (internal symbols of ``rel``), when the relation determines it; else None.

    :func:`as_function` of :func:`inverse` without building the inverse (its canonical form
    costs more than solving): the same dims are solved for over the same dims in the same
    order (outputs, then the input, then the calls), so isl gives the same expressions."""
    assert rel.n_in is not None
    if rel.hidden:
        return None
    nx, nt = rel.n_in, rel.n_tuple
    on_inputs = set().union(*(dependent_terms(rel, f"__t{p}") for p in range(nx)))
    free_u = [nt + k for k in range(len(rel.terms)) if k not in on_inputs]
    out = []
    for pos in range(nx):
        expr = _solved(rel, pos, (*range(nx, nt), pos, *free_u))
        if expr is None:
            return None
        out.append(expr)
    return out


def append_zeros(rel: Body, extra: int) -> Body:
    """``rel`` with ``extra`` more outputs, each fixed to 0."""
    nt, ne = rel.n_tuple, len(rel.hidden)
    body = reorganize(
        rel,
        tuple_src=[*range(nt), *([None] * extra)],
        hidden_src=list(range(nt, nt + ne)),
        term_src=list(range(len(rel.terms))),
        names=[*rel.names, *([None] * extra)],
        hidden=rel.hidden,
        n_in=rel.n_in,
    )
    if extra:
        zeros = " and ".join(f"__t{k} = 0" for k in range(nt, nt + extra))
        body = body.with_iset(body.iset.intersect(body.space_set(zeros)))
    return canonical(body)

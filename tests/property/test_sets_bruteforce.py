"""Property tests of ``spf.Set`` / ``spf.Relation`` against brute-force enumeration.

Random CSR index arrays (empty rows included) interpret the UFs; the oracle for every domain
and relation is a plain Python loop written independently of spf, and each symbolic result
(apply, compose, inverse, intersect, union, domain, range) must enumerate to exactly the points
the oracle computes. Emptiness and subset answers are checked for soundness against random UF
interpretations consistent with the declarations.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spf import UF, Relation, Set

PROPERTY = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
FEW = settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

Point = tuple[int, ...]
Pair = tuple[Point, Point]


# ================================================================================ CSR data
@dataclass(frozen=True, eq=False)
class CSR:
    """One random sparse matrix pattern plus a permutation of its columns."""

    n: int
    m: int
    rowptr: np.ndarray
    col: np.ndarray
    perm: np.ndarray

    @property
    def nnz(self) -> int:
        return int(self.rowptr[-1])

    @property
    def params(self) -> dict[str, int]:
        return {"N": self.n, "M": self.m, "NNZ": self.nnz}

    @property
    def ufs(self) -> dict[str, np.ndarray]:
        return {"rowptr": self.rowptr, "col": self.col, "perm": self.perm}

    def row(self, i: int) -> range:
        """The k of row i; empty when rowptr(i) or rowptr(i+1) is out of bounds."""
        if i >= 0 and i + 1 <= self.n:
            return range(int(self.rowptr[i]), int(self.rowptr[i + 1]))
        return range(0)

    def __repr__(self) -> str:
        return (
            f"CSR(n={self.n}, m={self.m}, rowptr={self.rowptr.tolist()}, "
            f"col={self.col.tolist()}, perm={self.perm.tolist()})"
        )


def at(values: np.ndarray, *idx: int) -> int | None:
    """``values[idx]`` or None when out of bounds (a call outside the array: not a member)."""
    if len(idx) != values.ndim:
        raise AssertionError("bad oracle")
    if any(i < 0 or i >= n for i, n in zip(idx, values.shape, strict=True)):
        return None
    return int(values[idx])


@st.composite
def csr_matrices(draw: st.DrawFn) -> CSR:
    n = draw(st.integers(0, 7), label="n")
    m = draw(st.integers(0, 6), label="m")
    if m == 0:
        lengths = [0] * n
    else:
        lengths = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n), label="row lengths")
    rowptr = np.array([0, *itertools.accumulate(lengths)], dtype=np.int32)
    nnz = int(rowptr[-1])
    cols = draw(st.lists(st.integers(0, max(m - 1, 0)), min_size=nnz, max_size=nnz), label="col")
    perm = draw(st.permutations(list(range(m))), label="perm")
    return CSR(
        n=n,
        m=m,
        rowptr=rowptr,
        col=np.array(cols, dtype=np.int32),
        perm=np.array(perm, dtype=np.int32),
    )


CSR_DECLS = {
    "rowptr": UF(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    ),
    "col": UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}"),
    "perm": UF("perm", domain="{[j]: 0 <= j < M}", range="{[v]: 0 <= v < M}"),
}


# ============================================================================ domain oracles
def spmv_points(c: CSR) -> set[Point]:
    return {(i, k, int(c.col[k])) for i in range(c.n) for k in c.row(i)}


def csr2_points(c: CSR) -> set[Point]:
    return {(i, k) for i in range(c.n) for k in c.row(i)}


def lower_points(c: CSR) -> set[Point]:
    return {(i, k, j) for (i, k, j) in spmv_points(c) if j < i}


def nested_points(c: CSR) -> set[Point]:
    return {(k, int(c.perm[c.col[k]])) for k in range(c.nnz)}


@dataclass(frozen=True)
class Domain:
    name: str
    text: str
    oracle: Callable[[CSR], set[Point]]

    @property
    def arity(self) -> int:
        return Set(self.text).arity


SPMV = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
DOMAINS = {
    d.name: d
    for d in [
        Domain("spmv", SPMV, spmv_points),
        Domain("csr2", "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}", csr2_points),
        Domain("lower", SPMV[:-1] + " && j < i}", lower_points),
        Domain("nested", "{[k,p]: 0 <= k < NNZ && p = perm(col(k))}", nested_points),
    ]
}


# ========================================================================== relation oracles
def _col_of(x: Point, c: CSR) -> list[Point]:
    i, k = x
    j = at(c.col, k)
    return [] if j is None else [(i, k, j)]


def _gather(x: Point, c: CSR) -> list[Point]:
    q = at(c.perm, x[1])
    return [] if q is None else [(q,)]


@dataclass(frozen=True)
class Rel:
    name: str
    text: str
    image: Callable[[Point, CSR], list[Point]]

    @functools.cached_property
    def arities(self) -> tuple[int, int]:
        r = Relation(self.text)
        return r.in_arity, r.out_arity


RELATIONS = {
    r.name: r
    for r in [
        Rel("shift", "{[i,k] -> [ii,k]: ii = i+1}", lambda x, c: [(x[0] + 1, x[1])]),
        Rel(
            "tile",
            "{[i,k] -> [i0,i1,k]: i = 4*i0 + i1 && 0 <= i1 < 4}",
            lambda x, c: [(x[0] // 4, x[0] % 4, x[1])],
        ),
        Rel(
            "tile_floor",
            "{[i,k] -> [i0,i1,k]: i0 = floor(i/4) && i1 = i - 4*floor(i/4)}",
            lambda x, c: [(x[0] // 4, x[0] % 4, x[1])],
        ),
        Rel("skew", "{[i,k] -> [i,kk]: kk = k + 2i}", lambda x, c: [(x[0], x[1] + 2 * x[0])]),
        Rel("interchange", "{[i,k] -> [k,i]}", lambda x, c: [(x[1], x[0])]),
        Rel("reversal", "{[i,k] -> [r,k]: r = N - 1 - i}", lambda x, c: [(c.n - 1 - x[0], x[1])]),
        Rel("project_k", "{[i,k] -> [k]}", lambda x, c: [(x[1],)]),
        Rel("project_ij", "{[i,k,j] -> [i,j]}", lambda x, c: [(x[0], x[2])]),
        Rel(
            "schedule",
            "{[i,k,j] -> [0,i,0,k,0,j,0]}",
            lambda x, c: [(0, x[0], 0, x[1], 0, x[2], 0)],
        ),
        Rel("uf_col", "{[i,k] -> [i,k,j]: j = col(k)}", _col_of),
        Rel(
            "row_neighbours",
            "{[i,k] -> [i,kp]: rowptr(i) <= kp < rowptr(i+1)}",
            lambda x, c: [(x[0], kp) for kp in c.row(x[0])],
        ),
        Rel("gather", "{[k,p] -> [q]: q = perm(p)}", _gather),
        Rel("interchange3", "{[i,k,j] -> [j,k,i]}", lambda x, c: [(x[2], x[1], x[0])]),
        Rel(
            "split",
            "{[k] -> [k1,k2]: k = 2k1 + k2 && 0 <= k2 < 2}",
            lambda x, c: [(x[0] // 2, x[0] % 2)],
        ),
    ]
}


def image_of(rel: Rel, points: Iterable[Point], c: CSR) -> set[Pair]:
    return {(x, y) for x in points for y in rel.image(x, c)}


# ===================================================================== cached symbolic parts
@functools.cache
def domain_set(name: str) -> Set:
    return Set(DOMAINS[name].text)


@functools.cache
def relation(name: str) -> Relation:
    return Relation(RELATIONS[name].text)


@functools.cache
def applied(dom: str, rel: str) -> tuple[Set, Relation]:
    s, r = domain_set(dom), relation(rel)
    return r.apply(s), r.intersect_domain(s)


@functools.cache
def composed(dom: str, r1: str, r2: str) -> tuple[Relation, Set]:
    s = domain_set(dom)
    comp = relation(r2).compose(relation(r1))
    return comp.intersect_domain(s), comp.apply(s)


APPLY_CASES = [
    (d.name, r.name)
    for d in DOMAINS.values()
    for r in RELATIONS.values()
    if r.arities[0] == d.arity
]
COMPOSE_CASES = [
    (d.name, r1.name, r2.name)
    for d in DOMAINS.values()
    for r1 in RELATIONS.values()
    for r2 in RELATIONS.values()
    if r1.arities[0] == d.arity and r2.arities[0] == r1.arities[1]
]


def enumerate_set(
    s: Set, c: CSR | None = None, ufs: Mapping[str, np.ndarray] | None = None
) -> list[Point]:
    """``s.points`` for the CSR data ``c`` (or for ``ufs`` and no parameters), checked sorted."""
    pts = s.points(c.params, c.ufs) if c is not None else s.points({}, ufs)
    assert pts == sorted(pts), "points are not in lexicographic order"
    assert len(pts) == len(set(pts)), "points repeat"
    return pts


def enumerate_relation(r: Relation, c: CSR) -> list[Pair]:
    pts = r.points(c.params, c.ufs)
    assert pts == sorted(pts), "pairs are not in lexicographic order"
    assert len(pts) == len(set(pts)), "pairs repeat"
    return pts


# ================================================================================ domains
@pytest.mark.parametrize("dom", sorted(DOMAINS))
@PROPERTY
@given(c=csr_matrices())
def test_domain_points(dom: str, c: CSR) -> None:
    s = domain_set(dom)
    assert set(enumerate_set(s, c)) == DOMAINS[dom].oracle(c)


@pytest.mark.parametrize("dom", sorted(DOMAINS))
@FEW
@given(c=csr_matrices())
def test_domain_contains(dom: str, c: CSR) -> None:
    s = domain_set(dom)
    expected = DOMAINS[dom].oracle(c)
    hi = max(c.n, c.nnz, c.m) + 1
    for p in itertools.product(range(-1, hi + 1), repeat=s.arity):
        assert s.contains(p, c.params, c.ufs) == (p in expected), p


# ================================================================================== apply
def neighbours(points: Iterable[Point]) -> set[Point]:
    """The points and every point one step away along one coordinate."""
    out: set[Point] = set()
    for p in points:
        out.add(p)
        for d, step in itertools.product(range(len(p)), (-1, 1)):
            out.add((*p[:d], p[d] + step, *p[d + 1 :]))
    return out


def check_membership(s: Set, expected: set[Point], c: CSR, extra: Iterable[Point] = ()) -> None:
    """``s.contains`` agrees with ``expected`` on it, its neighbours and ``extra``."""
    for p in sorted(neighbours(expected) | set(extra)):
        assert s.contains(p, c.params, c.ufs) == (p in expected), (p, p in expected)


def check_relation_membership(r: Relation, expected: set[Pair], c: CSR) -> None:
    n = r.in_arity
    flat = {x + y for x, y in expected}
    for p in sorted(neighbours(flat)):
        assert r.contains((p[:n], p[n:]), c.params, c.ufs) == (p in flat), (p[:n], p[n:])


@pytest.mark.parametrize(("dom", "rel"), APPLY_CASES)
@FEW
@given(c=csr_matrices())
def test_apply_membership(dom: str, rel: str, c: CSR) -> None:
    """The image and the restricted relation, checked point by point with ``contains``."""
    image, restricted = applied(dom, rel)
    source = DOMAINS[dom].oracle(c)
    pairs = image_of(RELATIONS[rel], source, c)
    check_relation_membership(restricted, pairs, c)
    check_membership(image, {y for _, y in pairs}, c)


@pytest.mark.parametrize(("dom", "rel"), APPLY_CASES)
@FEW
@given(c=csr_matrices())
def test_apply_points(dom: str, rel: str, c: CSR) -> None:
    """``set(r.apply(s).points()) == {y : x in s, (x, y) in r}`` (brute-force image)."""
    image, restricted = applied(dom, rel)
    pairs = image_of(RELATIONS[rel], DOMAINS[dom].oracle(c), c)
    assert set(enumerate_relation(restricted, c)) == pairs
    assert set(enumerate_set(image, c)) == {y for _, y in pairs}


@functools.cache
def _inverse(dom: str, rel: str) -> Relation:
    return applied(dom, rel)[1].inverse()


@functools.cache
def _domain_range(dom: str, rel: str) -> tuple[Set, Set]:
    restricted = applied(dom, rel)[1]
    return restricted.domain(), restricted.range()


@pytest.mark.parametrize(("dom", "rel"), APPLY_CASES)
@FEW
@given(c=csr_matrices())
def test_inverse_membership(dom: str, rel: str, c: CSR) -> None:
    pairs = image_of(RELATIONS[rel], DOMAINS[dom].oracle(c), c)
    check_relation_membership(_inverse(dom, rel), {(y, x) for x, y in pairs}, c)


@pytest.mark.parametrize(("dom", "rel"), APPLY_CASES)
@FEW
@given(c=csr_matrices())
def test_inverse_points(dom: str, rel: str, c: CSR) -> None:
    pairs = image_of(RELATIONS[rel], DOMAINS[dom].oracle(c), c)
    assert set(enumerate_relation(_inverse(dom, rel), c)) == {(y, x) for x, y in pairs}


@pytest.mark.parametrize(("dom", "rel"), APPLY_CASES)
@FEW
@given(c=csr_matrices())
def test_domain_and_range(dom: str, rel: str, c: CSR) -> None:
    """UFs are total functions: ``domain()`` keeps an input whose image calls a UF outside
    the given array (the concrete oracle cannot evaluate that call, the set algebra need not),
    so the domain lies between the inputs with a computable image and the applied-to set."""
    source = DOMAINS[dom].oracle(c)
    pairs = image_of(RELATIONS[rel], source, c)
    dom_set, rng_set = _domain_range(dom, rel)
    check_membership(rng_set, {y for _, y in pairs}, c)
    assert set(enumerate_set(rng_set, c)) == {y for _, y in pairs}
    found = set(enumerate_set(dom_set, c))
    assert {x for x, _ in pairs} <= found <= source


@PROPERTY
@given(c=csr_matrices(), case=st.sampled_from([c for c in APPLY_CASES if c[1] != "schedule"]))
def test_intersect_range_is_a_restriction(c: CSR, case: tuple[str, str]) -> None:
    dom, rel = case
    pairs = image_of(RELATIONS[rel], DOMAINS[dom].oracle(c), c)
    out_arity = RELATIONS[rel].arities[1]
    sub = _restricted_range(dom, rel, out_arity)
    expected = {(x, y) for x, y in pairs if all(0 <= v <= 3 for v in y)}
    check_relation_membership(sub, expected, c)
    assert set(enumerate_relation(sub, c)) == expected


@functools.cache
def _restricted_range(dom: str, rel: str, out_arity: int) -> Relation:
    return applied(dom, rel)[1].intersect_range(_range_box(out_arity))


@functools.cache
def _range_box(arity: int) -> Set:
    names = [f"y{k}" for k in range(arity)]
    cons = " && ".join(f"0 <= {n} <= 3" for n in names) or "true"
    return Set("{[" + ", ".join(names) + "]: " + cons + "}")


# ================================================================================ compose
def _composition(case: tuple[str, str, str], c: CSR) -> set[Pair]:
    dom, r1, r2 = case
    first = image_of(RELATIONS[r1], DOMAINS[dom].oracle(c), c)
    return {(x, z) for x, y in first for z in RELATIONS[r2].image(y, c)}


@PROPERTY
@given(c=csr_matrices(), case=st.sampled_from(COMPOSE_CASES))
def test_compose_membership(c: CSR, case: tuple[str, str, str]) -> None:
    restricted, image = composed(*case)
    expected = _composition(case, c)
    check_relation_membership(restricted, expected, c)
    check_membership(image, {z for _, z in expected}, c)


@PROPERTY
@given(c=csr_matrices(), case=st.sampled_from(COMPOSE_CASES))
def test_compose_points(c: CSR, case: tuple[str, str, str]) -> None:
    """``r2.compose(r1).intersect_domain(s)`` enumerates to the brute-force composition."""
    restricted, image = composed(*case)
    expected = _composition(case, c)
    assert set(enumerate_relation(restricted, c)) == expected
    assert set(enumerate_set(image, c)) == {z for _, z in expected}


# ===================================================================== intersect and union
INTERSECT_CASES: list[tuple[str, str, Callable[[Point, CSR], bool]]] = [
    ("spmv", "{[i,k,j]: k >= 2}", lambda p, c: p[1] >= 2),
    ("spmv", "{[i,k,j]: col(k) < 3}", lambda p, c: int(c.col[p[1]]) < 3),
    ("spmv", "{[i,k,j]: j = i}", lambda p, c: p[2] == p[0]),
    ("spmv", "{[a,b,c]: c >= M - 2}", lambda p, c: p[2] >= c.m - 2),
    ("spmv", "{[i,k,j]: rowptr(i+1) - rowptr(i) >= 2}", lambda p, c: len(c.row(p[0])) >= 2),
    ("spmv", "{[i,k,j]: k = rowptr(i)}", lambda p, c: p[1] == c.rowptr[p[0]]),
    ("spmv", "{[i,k,j]: perm(j) = 0}", lambda p, c: int(c.perm[p[2]]) == 0),
    ("spmv", "{[i,k,j]: exists(a: k = 2a)}", lambda p, c: p[1] % 2 == 0),
    ("spmv", "{[i,k,j]: i % 2 = 1}", lambda p, c: p[0] % 2 == 1),
    ("spmv", "{[i,k,j]: k != 1 && j != 0}", lambda p, c: p[1] != 1 and p[2] != 0),
    ("spmv", "{[i,k,j]: floor(k/3) = 1 or j = 2}", lambda p, c: p[1] // 3 == 1 or p[2] == 2),
    ("csr2", "{[i,k]: col(k) = i}", lambda p, c: int(c.col[p[1]]) == p[0]),
    ("csr2", "{[i,k]: k + 1 = rowptr(i+1)}", lambda p, c: p[1] + 1 == c.rowptr[p[0] + 1]),
    ("csr2", "{[i,k]: k < NNZ - 3}", lambda p, c: p[1] < c.nnz - 3),
    ("csr2", "{[i,k]: perm(col(k)) < perm(i)}", lambda p, c: _perm_lt(p, c)),
    ("lower", "{[i,k,j]: col(k) + 1 = i}", lambda p, c: int(c.col[p[1]]) + 1 == p[0]),
    ("nested", "{[k,p]: p < col(k)}", lambda p, c: p[1] < int(c.col[p[0]])),
    ("nested", "{[k,p]: 0 <= k < 3}", lambda p, c: p[0] < 3),
]


def _perm_lt(p: Point, c: CSR) -> bool:
    i, k = p
    a, b = at(c.perm, int(c.col[k])), at(c.perm, i)
    return a is not None and b is not None and a < b


UNION_CASES: list[tuple[str, str, Callable[[CSR], set[Point]]]] = [
    (
        "spmv",
        "{[i,k,j]: 0 <= i < N && k = rowptr(i) && j = 0}",
        lambda c: {(i, int(c.rowptr[i]), 0) for i in range(c.n)},
    ),
    (
        "spmv",
        "{[i,k,j]: 0 <= k < NNZ && i = 0 && j = col(k)}",
        lambda c: {(0, k, int(c.col[k])) for k in range(c.nnz)},
    ),
    (
        "spmv",
        "{[a,b,c]: 0 <= a < 2 && 0 <= b < 2 && c = a + b}",
        lambda c: {(a, b, a + b) for a in range(2) for b in range(2)},
    ),
    (
        "csr2",
        "{[i,k]: 0 <= i < N && k = rowptr(i+1)}",
        lambda c: {(i, int(c.rowptr[i + 1])) for i in range(c.n)},
    ),
    ("csr2", "{[i,k]: 0 <= i < N && k = -1}", lambda c: {(i, -1) for i in range(c.n)}),
    (
        "nested",
        "{[k,p]: 0 <= k < NNZ && p = col(k)}",
        lambda c: {(k, int(c.col[k])) for k in range(c.nnz)},
    ),
    (
        "lower",
        "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && j > i}",
        lambda c: {p for p in spmv_points(c) if p[2] > p[0]},
    ),
]


@functools.cache
def intersected(index: int) -> Set:
    dom, text, _ = INTERSECT_CASES[index]
    return domain_set(dom).intersect(text)


@functools.cache
def united(index: int) -> Set:
    dom, text, _ = UNION_CASES[index]
    return domain_set(dom).union(text)


@PROPERTY
@given(c=csr_matrices(), index=st.sampled_from(range(len(INTERSECT_CASES))))
def test_intersect_is_set_intersection(c: CSR, index: int) -> None:
    dom, _, keep = INTERSECT_CASES[index]
    expected = {p for p in DOMAINS[dom].oracle(c) if keep(p, c)}
    check_membership(intersected(index), expected, c, neighbours(DOMAINS[dom].oracle(c)))
    assert set(enumerate_set(intersected(index), c)) == expected


@PROPERTY
@given(c=csr_matrices(), index=st.sampled_from(range(len(UNION_CASES))))
def test_union_is_set_union(c: CSR, index: int) -> None:
    dom, _, other = UNION_CASES[index]
    expected = DOMAINS[dom].oracle(c) | other(c)
    check_membership(united(index), expected, c)
    assert set(enumerate_set(united(index), c)) == expected


@functools.cache
def united_all(dom: str) -> tuple[Set, Set]:
    """The domain ``dom`` united with every union case over it at once (``union_all``),
    and one case at a time."""
    texts = [text for d, text, _ in UNION_CASES if d == dom]
    chained = domain_set(dom)
    for text in texts:
        chained = chained.union(text)
    return domain_set(dom).union_all(texts), chained


@PROPERTY
@given(c=csr_matrices(), dom=st.sampled_from(sorted({d for d, _, _ in UNION_CASES})))
def test_union_all_is_the_union_of_every_operand(c: CSR, dom: str) -> None:
    at_once, chained = united_all(dom)
    expected = DOMAINS[dom].oracle(c).union(*(f(c) for d, _, f in UNION_CASES if d == dom))
    check_membership(at_once, expected, c)
    assert set(enumerate_set(at_once, c)) == expected
    assert at_once.is_equal(chained)


# ================================================================= emptiness with CSR data
@dataclass(frozen=True)
class Claim:
    """A set over CSR data with an independent brute-force membership predicate."""

    text: str
    box: Callable[[CSR], Iterable[Point]]
    member: Callable[[Point, CSR], bool]


def _rng(c: CSR) -> range:
    return range(-1, max(c.n, c.nnz, c.m) + 2)


def _box(arity: int) -> Callable[[CSR], Iterable[Point]]:
    return lambda c: itertools.product(_rng(c), repeat=arity)


def _rp(c: CSR, i: int) -> int | None:
    return at(c.rowptr, i)


def _in_row(c: CSR, i: int, k: int) -> bool:
    lo, hi = _rp(c, i), _rp(c, i + 1)
    return lo is not None and hi is not None and lo <= k < hi


CLAIMS = [
    Claim(  # two rows sharing a nonzero: empty by monotonicity
        "{[i,ip,k]: 0 <= i < ip < N && rowptr(i) <= k < rowptr(i+1) "
        "&& rowptr(ip) <= k < rowptr(ip+1)}",
        _box(3),
        lambda p, c: 0 <= p[0] < p[1] < c.n and _in_row(c, p[0], p[2]) and _in_row(c, p[1], p[2]),
    ),
    Claim(  # k beyond NNZ: empty by the declared range of rowptr
        "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && k >= NNZ}",
        _box(2),
        lambda p, c: 0 <= p[0] < c.n and _in_row(c, p[0], p[1]) and p[1] >= c.nnz,
    ),
    Claim(  # column out of range: empty by the declared range of col
        "{[k,j]: 0 <= k < NNZ && j = col(k) && j >= M}",
        _box(2),
        lambda p, c: 0 <= p[0] < c.nnz and p[1] == at(c.col, p[0]) and p[1] >= c.m,
    ),
    Claim(  # a negative permutation value
        "{[k]: 0 <= k < NNZ && perm(col(k)) < 0}",
        _box(1),
        lambda p, c: 0 <= p[0] < c.nnz and (at(c.perm, int(c.col[p[0]])) or 0) < 0,
    ),
    Claim(  # functional consistency through equal arguments
        "{[i,ip]: 0 <= i < N && i = ip && rowptr(i) < rowptr(ip)}",
        _box(2),
        lambda p, c: 0 <= p[0] < c.n and p[0] == p[1] and False,
    ),
    Claim(  # a later row starts no earlier than an earlier row ends
        "{[i,ip]: 0 <= i < ip < N && rowptr(ip) < rowptr(i+1)}",
        _box(2),
        lambda p, c: 0 <= p[0] < p[1] < c.n and int(c.rowptr[p[1]]) < int(c.rowptr[p[0] + 1]),
    ),
    Claim(  # the same column twice in one row (possible: not empty)
        "{[i,k,kp]: 0 <= i < N && rowptr(i) <= k < kp && kp < rowptr(i+1) && col(k) = col(kp)}",
        _box(3),
        lambda p, c: (
            0 <= p[0] < c.n
            and _in_row(c, p[0], p[1])
            and _in_row(c, p[0], p[2])
            and p[1] < p[2]
            and c.col[p[1]] == c.col[p[2]]
        ),
    ),
    Claim(  # an entry in the lower triangle (possible: not empty)
        "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && col(k) < i}",
        _box(2),
        lambda p, c: 0 <= p[0] < c.n and _in_row(c, p[0], p[1]) and int(c.col[p[1]]) < p[0],
    ),
    Claim(  # a dependence-style set: row ip reads a column equal to row i (not empty)
        "{[i,ip,k]: 0 <= i < ip < N && rowptr(ip) <= k < rowptr(ip+1) && col(k) = i}",
        _box(3),
        lambda p, c: 0 <= p[0] < p[1] < c.n and _in_row(c, p[1], p[2]) and c.col[p[2]] == p[0],
    ),
    Claim(  # a non-empty row and an empty row after it, same start (possible)
        "{[i]: 0 <= i < N - 1 && rowptr(i) = rowptr(i+1) && rowptr(i+1) < rowptr(i+2)}",
        _box(1),
        lambda p, c: (
            0 <= p[0] < c.n - 1 and c.rowptr[p[0]] == c.rowptr[p[0] + 1] < c.rowptr[p[0] + 2]
        ),
    ),
]


@functools.cache
def claim_set(index: int) -> Set:
    return Set(CLAIMS[index].text, CSR_DECLS)


@functools.cache
def claim_empty(index: int) -> bool:
    return claim_set(index).is_empty()


def test_claims_that_must_be_empty_are() -> None:
    """Completeness on the cases the declarations decide (the rest may be either)."""
    assert [claim_empty(k) for k in range(6)] == [True] * 6


@PROPERTY
@given(c=csr_matrices(), index=st.sampled_from(range(len(CLAIMS))))
def test_emptiness_is_sound_on_csr_data(c: CSR, index: int) -> None:
    claim = CLAIMS[index]
    found = sorted(p for p in claim.box(c) if claim.member(p, c))
    if found:
        assert not claim_empty(index), f"is_empty() is True but {found[0]} is a member"
    assert enumerate_set(claim_set(index), c) == found


# ===================================================================== random small sets
TERMS_1 = ["i", "j", "f(i)", "f(j)", "f(i + 1)", "f(f(i))", "g(i, j)", "g(j, i)"]
OPS = ["<", "<=", "=", "!=", ">=", ">"]
BOX = "0 <= i <= 4 && 0 <= j <= 4"
F_LEN = 6


@dataclass(frozen=True)
class Atom:
    left: str
    op: str
    right: str
    offset: int

    def text(self) -> str:
        off = (
            f" + {self.offset}"
            if self.offset > 0
            else (f" - {-self.offset}" if self.offset else "")
        )
        return f"{self.left} {self.op} {self.right}{off}"


atoms = st.builds(
    Atom,
    left=st.sampled_from(TERMS_1),
    op=st.sampled_from(OPS),
    right=st.sampled_from([*TERMS_1, "0"]),
    offset=st.integers(-2, 2),
).filter(lambda a: a.left != a.right)  # `f(i) < f(i) + 1` simplifies the call away
conjunctions = st.lists(atoms, min_size=1, max_size=4)

DECLARATIONS: dict[str, dict[str, UF] | None] = {
    "none": None,
    "nondecreasing": {"f": UF("f", monotonic="nondecreasing"), "g": UF("g", arity=2)},
    "increasing": {"f": UF("f", monotonic="increasing"), "g": UF("g", arity=2)},
    "range": {
        "f": UF("f", range="{[v]: 0 <= v <= 3}"),
        "g": UF("g", arity=2, range="{[v]: 0 <= v <= 3}"),
    },
    "domain": {
        "f": UF("f", domain="{[x]: 0 <= x <= 5}"),
        "g": UF("g", arity=2, domain="{[x,y]: 0 <= x <= 4 && 0 <= y <= 4}"),
    },
}


@st.composite
def interpretations(draw: st.DrawFn, decl: str) -> dict[str, np.ndarray]:
    """Random f (length 6) and g (5x5) consistent with the declaration ``decl``."""
    lo, hi = (0, 3) if decl == "range" else (-2, 6)
    f = draw(st.lists(st.integers(lo, hi), min_size=F_LEN, max_size=F_LEN))
    if decl == "nondecreasing":
        f = sorted(f)
    elif decl == "increasing":
        start = draw(st.integers(-2, 2))
        steps = draw(st.lists(st.integers(1, 2), min_size=F_LEN - 1, max_size=F_LEN - 1))
        f = [start, *(start + s for s in itertools.accumulate(steps))]
    g = draw(st.lists(st.integers(lo, hi), min_size=25, max_size=25))
    return {
        "f": np.array(f, dtype=np.int64),
        "g": np.array(g, dtype=np.int64).reshape(5, 5),
    }


def evaluate_term(term: str, i: int, j: int, ufs: Mapping[str, np.ndarray]) -> int | None:
    f, g = ufs["f"], ufs["g"]
    if term == "i":
        return i
    if term == "j":
        return j
    if term == "0":
        return 0
    if term == "f(i)":
        return at(f, i)
    if term == "f(j)":
        return at(f, j)
    if term == "f(i + 1)":
        return at(f, i + 1)
    if term == "f(f(i))":
        inner = at(f, i)
        return None if inner is None else at(f, inner)
    if term == "g(i, j)":
        return at(g, i, j)
    if term == "g(j, i)":
        return at(g, j, i)
    raise AssertionError(term)


def compare(a: int, op: str, b: int) -> bool:
    return {
        "<": a < b,
        "<=": a <= b,
        "=": a == b,
        "!=": a != b,
        ">=": a >= b,
        ">": a > b,
    }[op]


def brute_points(conj: list[Atom], ufs: Mapping[str, np.ndarray]) -> set[Point]:
    """Points of ``{[i,j]: BOX && conj}``; a call out of bounds anywhere: not a member."""
    out: set[Point] = set()
    for i, j in itertools.product(range(5), repeat=2):
        ok = True
        for atom in conj:
            a = evaluate_term(atom.left, i, j, ufs)
            b = evaluate_term(atom.right, i, j, ufs)
            if a is None or b is None or not compare(a, atom.op, b + atom.offset):
                ok = False  # keep looking at the other atoms: all calls must be defined
        if ok:
            out.add((i, j))
    return out


def defined_points(conj: list[Atom], ufs: Mapping[str, np.ndarray]) -> set[Point]:
    """Points of the box where every call of ``conj`` has a value."""
    return {
        (i, j)
        for i, j in itertools.product(range(5), repeat=2)
        if all(
            evaluate_term(side, i, j, ufs) is not None
            for atom in conj
            for side in (atom.left, atom.right)
        )
    }


def set_text(conj: list[Atom]) -> str:
    return "{[i,j]: " + BOX + " && " + " && ".join(a.text() for a in conj) + "}"


@st.composite
def random_cases(draw: st.DrawFn) -> tuple[str, list[Atom], list[dict[str, np.ndarray]]]:
    decl = draw(st.sampled_from(sorted(DECLARATIONS)))
    conj = draw(conjunctions)
    interps = draw(st.lists(interpretations(decl), min_size=3, max_size=3))
    return decl, conj, interps


def _random_set(decl: str, conj: list[Atom]) -> Set:
    return Set(set_text(conj), DECLARATIONS[decl])


@PROPERTY
@given(case=random_cases())
def test_random_sets_emptiness_is_sound(
    case: tuple[str, list[Atom], list[dict[str, np.ndarray]]],
) -> None:
    decl, conj, interps = case
    s = _random_set(decl, conj)
    empty = s.is_empty()
    for ufs in interps:
        expected = brute_points(conj, ufs)
        if empty:
            assert not expected, f"{s} is_empty() but {sorted(expected)[0]} is a member of {ufs}"
        assert set(enumerate_set(s, ufs=ufs)) == expected


@PROPERTY
@given(
    a=random_cases(),
    b=conjunctions,
)
def test_random_subset_is_sound(
    a: tuple[str, list[Atom], list[dict[str, np.ndarray]]], b: list[Atom]
) -> None:
    decl, conj_a, interps = a
    conj_b = b
    decls = DECLARATIONS[decl]
    sa = Set(set_text(conj_a), decls)
    sb = Set(set_text(conj_b), decls)
    sub = sa.is_subset(sb)
    meet = sa.intersect(sb)
    join = sa.union(sb)
    for ufs in interps:
        pa, pb = brute_points(conj_a, ufs), brute_points(conj_b, ufs)
        if sub:
            assert pa <= pb, f"{sa} is_subset {sb} but {sorted(pa - pb)[0]} for {ufs}"
        assert set(enumerate_set(meet, ufs=ufs)) == pa & pb
        # A union may simplify calls away (``f(f(i)) <= i || i < f(f(i))`` is true), and with
        # them the points where a call has no value (out of the array, no declared domain):
        # membership there is unspecified, so compare where every call is defined.
        joined = set(enumerate_set(join, ufs=ufs))
        assert pa | pb <= joined
        defined = defined_points(conj_a + conj_b, ufs)
        assert joined & defined == (pa | pb) & defined


@FEW
@given(a=random_cases(), b=conjunctions)
def test_trivial_subsets_are_proved(
    a: tuple[str, list[Atom], list[dict[str, np.ndarray]]], b: list[Atom]
) -> None:
    decl, conj_a, _ = a
    decls = DECLARATIONS[decl]
    sa = Set(set_text(conj_a), decls)
    sb = Set(set_text(b), decls)
    assert sa.is_subset(sa)
    assert sa.intersect(sb).is_subset(sa)
    assert sa.is_subset(sa.union(sb))


@PROPERTY
@given(case=random_cases())
def test_random_sets_round_trip(case: tuple[str, list[Atom], list[dict[str, np.ndarray]]]) -> None:
    decl, conj, _ = case
    s = _random_set(decl, conj)
    assert Set(str(s)) == s, f"{set_text(conj)} prints as {s}"
    assert str(Set(str(s))) == str(s)


# ========================================================================== round trips
def _all_results() -> list[tuple[str, Callable[[], Set | Relation]]]:
    out: list[tuple[str, Callable[[], Set | Relation]]] = []
    for dom, rel in APPLY_CASES:
        out.append(
            (f"apply:{rel}({dom})", functools.partial(lambda d, r: applied(d, r)[0], dom, rel))
        )
        out.append(
            (f"restrict:{rel}|{dom}", functools.partial(lambda d, r: applied(d, r)[1], dom, rel))
        )
        out.append((f"inverse:{rel}|{dom}", functools.partial(_inverse, dom, rel)))
        out.append(
            (
                f"domain:{rel}|{dom}",
                functools.partial(lambda d, r: _domain_range(d, r)[0], dom, rel),
            )
        )
        out.append(
            (f"range:{rel}|{dom}", functools.partial(lambda d, r: _domain_range(d, r)[1], dom, rel))
        )
    for k in range(len(INTERSECT_CASES)):
        out.append((f"intersect:{k}", functools.partial(intersected, k)))
    for k in range(len(UNION_CASES)):
        out.append((f"union:{k}", functools.partial(united, k)))
    for name in RELATIONS:
        out.append((f"inverse:{name}", functools.partial(lambda n: relation(n).inverse(), name)))
    return out


RESULTS = _all_results()


@pytest.mark.parametrize("build", [b for _, b in RESULTS], ids=[n for n, _ in RESULTS])
def test_results_round_trip(build: Callable[[], Set | Relation]) -> None:
    x = build()
    again = type(x)(str(x))
    assert again == x, f"{x} reparses to an unequal object"
    assert str(again) == str(x)


@PROPERTY
@given(case=st.sampled_from(COMPOSE_CASES))
def test_compose_results_round_trip(case: tuple[str, str, str]) -> None:
    for x in composed(*case):
        again = type(x)(str(x))
        assert again == x, f"{x} reparses to an unequal object"
        # the text is canonical for isl's representation: reparsing may pick other floor
        # divisions once, after which printing is a fixpoint
        assert str(type(x)(str(again))) == str(again)

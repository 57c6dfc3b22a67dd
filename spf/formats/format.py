"""A sparse format as a relation: coordinates ``[i, j]`` to storage positions, with UFs.

A :class:`Format` names its coordinate tuple, the storage relation from coordinates to
storage positions (uninterpreted functions allowed: the format's index arrays), the UFs with
their properties, the facts it assumes (ordering), its value array and its size parameters::

    CSR = Format("CSR", coords="[i, j]",
                 storage="{[i, j] -> [k]: rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
                 ufs={"rowptr": UF(...), "col": UF(...)}, ...)

From the relation alone spf derives how to *scan* the format (:attr:`Format.loops`,
:meth:`Format.scan`): every variable fixed by an equality ``v = expr`` is computed from the
others (``j = col(k)``), every other variable is a loop, ordered so that a loop comes after
the variables its bounds read (``k`` after ``i`` in ``rowptr(i) <= k``), storage variables
in their order first. ``spf.kernels.spmv(fmt)`` and ``spf.formats.convert`` are built on it.

The relation must be a function of the coordinates onto storage: every storage variable (and
every ``exists`` variable) must be tied to a coordinate through equalities (``j = col(k)``
ties ``k`` to ``j``), and every coordinate must be fixed by the storage position (by an
equality, or, like CSR's row ``i``, by the UF bounds ``rowptr(i) <= k < rowptr(i+1)`` that
scan it). A relation that is not is refused with :class:`~spf.errors.SpfError`; UF-valued
ties such as ``j = col(k)`` are trusted to be one-to-one within a row, which is what the
format's data must satisfy (``assume`` states the ordering that makes it checkable).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError, FormatError, SpfError
from spf.sets import UF, Relation
from spf.sets.expr import compile_expr
from spf.sparse import prefix_args

if TYPE_CHECKING:
    from spf.computation import Computation

__all__ = ["Format", "Packer"]

Packer = Callable[[Any, Any], dict[str, Any]]
"""``packer(matrix, index_dtype) -> dict``: a format's arrays and sizes for a
``scipy.sparse`` matrix, under the format's names, the value array first."""

_RELATION = re.compile(
    r"^\s*\{\s*\[(?P<ins>[^\]]*)\]\s*->\s*\[(?P<outs>[^\]]*)\]\s*"
    r"(?::\s*(?:exists\s+(?P<exists>[A-Za-z_][\w\s,]*?)\s*:)?(?P<body>.*))?\}\s*$",
    re.DOTALL,
)
_CMP = re.compile(r"(<=|>=|==|=|<|>)")
_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class _Atom:
    """One comparison ``lhs op rhs`` of the storage relation's body."""

    lhs: str
    op: str
    rhs: str


def _split_names(text: str, what: str, fmt: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for n in names:
        if not n.isidentifier():
            raise FormatError(f"Format {fmt!r}: {what} must be variable names, got {n!r}")
    return names


def _names_in(expr: str) -> tuple[set[str], set[str]]:
    """``(top, inner)``: names outside any UF call and names inside UF call arguments
    (UF names themselves are in neither)."""
    top: set[str] = set()
    inner: set[str] = set()
    depth = 0
    i = 0
    while i < len(expr):
        ch = expr[i]
        m = _NAME.match(expr, i)
        if m and (i == 0 or not (expr[i - 1].isalnum() or expr[i - 1] == "_")):
            j = m.end()
            k = j
            while k < len(expr) and expr[k].isspace():
                k += 1
            is_call = k < len(expr) and expr[k] == "("
            if not is_call:
                (inner if depth else top).add(m.group())
            else:
                depth += 1
                k += 1
            i = k if is_call else j
            continue
        if ch == "(" and depth:
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        i += 1
    return top, inner


def _atoms(body: str, fmt: str) -> list[_Atom]:
    """The comparisons of a conjunction ``a <= b < c && d = e`` (chains split)."""
    if "||" in body or " or " in body:
        raise FormatError(
            f"Format {fmt!r}: the storage relation must be one conjunction (&&), not a union"
        )
    atoms: list[_Atom] = []
    for conj in re.split(r"&&|\band\b", body):
        if not conj.strip():
            continue
        parts = _CMP.split(conj)
        if len(parts) < 3:
            raise FormatError(f"Format {fmt!r}: cannot read constraint {conj.strip()!r}")
        for a in range(0, len(parts) - 2, 2):
            atoms.append(_Atom(parts[a].strip(), parts[a + 1], parts[a + 2].strip()))
    return atoms


class Format:
    """A sparse matrix format: coordinates, storage relation, UFs, assumptions, values.

    ``coords`` is the coordinate tuple (``"[i, j]"``); ``storage`` the relation from it to
    storage positions (``"{[i, j] -> [k]: ...}"``, ``exists`` allowed); ``ufs`` the index
    arrays it calls (a mapping or sequence of :class:`spf.UF`); ``assume`` facts
    (``"forall ..."``, see docs/assumptions.md); ``value`` the value array, indexed by the
    storage tuple, of shape ``value_shape``; ``shape`` the extents of the coordinates
    (default ``("N", "M")``); ``sizes`` the size parameters (default: those the relation,
    the UFs and the shapes name); ``window``, for a format that reads its rows through a
    permutation UF (SELL's ``perm``), the number of rows within which a conversion into it
    sorts rows by decreasing length (``None``: rows keep their order); ``packer``, a
    function ``(matrix, index_dtype) -> dict`` that turns a ``scipy.sparse`` matrix into the
    format's arrays and sizes (value array first): :meth:`args` calls it (the built-ins
    pack with the ``spf.sparse`` helper of their layout).

    >>> from spf import UF
    >>> coo = Format("MYCOO", coords="[i, j]",
    ...              storage="{[i, j] -> [k]: 0 <= k < NNZ && i = row(k) && j = col(k)}",
    ...              ufs=[UF("row"), UF("col")])
    >>> coo.loops
    ('k', 'i', 'j')
    """

    def __init__(
        self,
        name: str,
        coords: str,
        storage: str,
        ufs: Mapping[str, UF] | Sequence[UF] = (),
        assume: Sequence[str] = (),
        value: str = "A",
        value_shape: Sequence[object] | None = None,
        shape: Sequence[object] = ("N", "M"),
        sizes: Sequence[str] | None = None,
        window: int | None = None,
        packer: Packer | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise FormatError(f"Format: name must be an identifier, got {name!r}")
        self.name = name
        self._read_coords(coords)
        self.ufs = self._uf_map(ufs)
        self._read_storage(storage)
        self._read_values(value, value_shape, shape, assume)
        self._defined, self._deps = self._analyse()
        self.loops = self._order()
        self._check_function()
        if len(self.value_shape) != len(self.positions):
            raise FormatError(
                f"Format {name!r}: value {value!r} has {len(self.value_shape)} extents but the "
                f"storage position [{', '.join(self.positions)}] has {len(self.positions)}"
            )
        self.sizes = tuple(sizes) if sizes is not None else self._sizes()
        if window is not None and (
            isinstance(window, bool) or not isinstance(window, int) or window < 1
        ):
            raise FormatError(f"Format {name!r}: window must be a positive int, got {window!r}")
        self.window = window
        if packer is not None and not callable(packer):
            raise FormatError(
                f"Format {name!r}: packer must be a function (matrix, index_dtype) -> dict, "
                f"got {packer!r}"
            )
        self.packer = packer

    @property
    def ordered(self) -> tuple[str, ...]:
        """The ``assume`` facts that state an order (CSR's sorted rows): all but those
        that only say a UF takes no value twice (SELL's ``perm(t1) != perm(t2)``,
        :mod:`spf.analysis.injective`). A conversion into a format with such facts sorts
        its entries, and one from it relies on them (no duplicate entry)."""
        found = self.__dict__.get("_ordered")
        if found is None:
            found = self.__dict__["_ordered"] = tuple(
                f for f in self.assume if not self._one_to_one(f)
            )
        return found

    def _one_to_one(self, text: str) -> bool:
        """Whether fact ``text`` says that a UF is one-to-one over an interval."""
        from spf.analysis.injective import injective_form
        from spf.errors import SpfError
        from spf.sets.facts import Fact

        try:
            fact = Fact.parse(text, self.ufs, frozenset(self.sizes))
        except SpfError:
            return False
        return injective_form(fact, self.ufs) is not None

    # ---------------------------------------------------------------------------- parsing
    def _read_coords(self, coords: str) -> None:
        name = self.name
        if not isinstance(coords, str) or not re.fullmatch(r"\s*\[[^\]]*\]\s*", coords):
            raise FormatError(
                f"Format {name!r}: coords must be a tuple like '[i, j]', got {coords!r}"
            )
        self.coords = _split_names(coords.strip()[1:-1], "coords", name)
        if not self.coords:
            raise FormatError(f"Format {name!r}: coords is empty")

    def _read_storage(self, storage: str) -> None:
        name = self.name
        if not isinstance(storage, str):
            raise FormatError(
                f"Format {name!r}: storage must be a relation string, got {storage!r}"
            )
        self.storage = storage.strip()
        m = _RELATION.match(self.storage)
        if m is None:
            raise FormatError(
                f"Format {name!r}: storage must read '{{[coords] -> [positions]: constraints}}', "
                f"got {storage!r}"
            )
        self.relation = self._parse(self.storage)
        ins = _split_names(m.group("ins"), "the relation's inputs", name)
        if ins != self.coords:
            raise FormatError(
                f"Format {name!r}: the storage relation's inputs [{', '.join(ins)}] differ from "
                f"coords [{', '.join(self.coords)}]; write the relation from the coordinates"
            )
        self.positions = _split_names(m.group("outs"), "the relation's outputs", name)
        self.exists = _split_names(m.group("exists") or "", "exists variables", name)
        clash = set(self.positions) & set(self.coords)
        if clash:
            raise FormatError(
                f"Format {name!r}: storage variable(s) {sorted(clash)} reuse coordinate names; "
                "name the positions differently (i = p ties them)"
            )
        self._atoms = _atoms(m.group("body") or "", name)

    def _read_values(
        self,
        value: str,
        value_shape: Sequence[object] | None,
        shape: Sequence[object],
        assume: Sequence[str],
    ) -> None:
        name = self.name
        if not isinstance(value, str) or not value.isidentifier() or value in self.ufs:
            raise FormatError(f"Format {name!r}: value must be an array name distinct from the UFs")
        self.value = value
        self.value_shape = tuple(
            str(s) for s in (value_shape if value_shape is not None else ("NNZ",))
        )
        self.shape = tuple(str(s) for s in shape)
        if len(self.shape) != len(self.coords):
            raise FormatError(f"Format {name!r}: shape needs one extent per coordinate")
        self.assume = tuple(assume)
        for fact in self.assume:
            if not isinstance(fact, str):
                raise FormatError(f"Format {name!r}: assume entries must be strings, got {fact!r}")

    def _uf_map(self, ufs: Mapping[str, UF] | Sequence[UF]) -> dict[str, UF]:
        items = list(ufs.items()) if isinstance(ufs, Mapping) else [(None, u) for u in ufs]
        out: dict[str, UF] = {}
        for key, uf in items:
            if not isinstance(uf, UF):
                raise FormatError(f"Format {self.name!r}: ufs must be spf.UF objects, got {uf!r}")
            if key is not None and key != uf.name:
                raise FormatError(
                    f"Format {self.name!r}: ufs key {key!r} names UF {uf.name!r}; use the same name"
                )
            out[uf.name] = uf
        return out

    def _parse(self, text: str) -> Relation:
        try:
            rel = Relation(text, self.ufs or None)
        except SpfError as err:
            raise FormatError(
                f"Format {self.name!r}: cannot read the storage relation: {err}"
            ) from err
        missing = sorted({c.split("(")[0].strip() for c in rel.uf_calls} - set(self.ufs))
        if missing:
            raise FormatError(
                f"Format {self.name!r}: the storage relation calls {missing} which ufs= does not "
                "declare; declare every index array with spf.UF"
            )
        return rel

    def _analyse(self) -> tuple[dict[str, str], dict[str, set[str]]]:
        """Variables fixed by equalities (name -> expression) and each variable's reads."""
        tuple_vars = set(self.coords) | set(self.positions) | set(self.exists)
        defined: dict[str, str] = {}
        deps: dict[str, set[str]] = {v: set() for v in tuple_vars}
        for atom in self._atoms:
            if atom.op in ("=", "==") and atom.lhs in tuple_vars and atom.lhs not in defined:
                top, inner = _names_in(atom.rhs)
                used = (top | inner) & tuple_vars
                if atom.lhs not in used:
                    defined[atom.lhs] = atom.rhs
                    deps[atom.lhs] |= used
                    continue
            ltop, linner = _names_in(atom.lhs)
            rtop, rinner = _names_in(atom.rhs)
            top = (ltop | rtop) & tuple_vars
            used = (ltop | rtop | linner | rinner) & tuple_vars
            for v in top:
                deps[v] |= {u for u in used if u not in top}
        return defined, deps

    def _order(self) -> tuple[str, ...]:
        """Scan order: positions, then exists variables, then coordinates, each after the
        variables it reads; variables fixed by equalities right after what they read."""
        placed: list[str] = []
        visiting: set[str] = set()

        def place(v: str) -> None:
            if v in placed:
                return
            if v in visiting:
                raise FormatError(
                    f"Format {self.name!r}: the storage relation's variables depend on each "
                    f"other in a cycle through {v!r}; it cannot be scanned"
                )
            visiting.add(v)
            for u in sorted(self._deps[v], key=self._rank):
                place(u)
            visiting.discard(v)
            placed.append(v)

        free = [v for v in (*self.positions, *self.exists, *self.coords) if v not in self._defined]
        for v in free:
            place(v)
        for v in (*self.positions, *self.exists, *self.coords):
            place(v)
        return tuple(placed)

    def _rank(self, v: str) -> int:
        order = (*self.exists, *self.positions, *self.coords)
        return order.index(v)

    def _bounded(self, v: str) -> tuple[bool, bool]:
        lower = upper = False
        for atom in self._atoms:
            if atom.op in ("=", "=="):
                continue
            lt, _ = _names_in(atom.lhs)
            rt, _ = _names_in(atom.rhs)
            small_side = atom.op in ("<", "<=")
            if v in rt:
                lower, upper = (True, upper) if small_side else (lower, True)
            if v in lt:
                lower, upper = (lower, True) if small_side else (True, upper)
        return lower, upper

    def _check_function(self) -> None:
        for v in (*self.positions, *self.exists):
            if v in self._defined:
                continue
            lower, upper = self._bounded(v)
            if not (lower and upper):
                raise FormatError(
                    f"Format {self.name!r}: storage variable {v!r} has no "
                    f"{'lower' if not lower else 'upper'} bound in {self.storage}; bound it "
                    f"(0 <= {v} < NNZ) or fix it by an equality"
                )
        self._check_coords_fixed()
        self._check_positions_tied()

    def _check_coords_fixed(self) -> None:
        """Every coordinate is fixed by the storage position (equality or UF bounds)."""
        scanned: set[str] = set()
        for v in (*self.positions, *self.exists):
            if v not in self._defined:
                scanned |= self._deps[v]
        for c in self.coords:
            if c not in self._defined and c not in scanned:
                raise FormatError(
                    f"Format {self.name!r}: the storage relation is not a function of the "
                    f"coordinates onto storage: coordinate {c!r} is not fixed by the storage "
                    f"position; fix it by an equality ({c} = row(k)) or scan it through UF "
                    f"bounds (rowptr({c}) <= k < rowptr({c}+1))"
                )

    def _check_positions_tied(self) -> None:
        """Every storage / exists variable is tied to the coordinates by equalities."""
        tied = set(self.coords)
        changed = True
        while changed:
            changed = False
            for atom in self._atoms:
                if atom.op not in ("=", "=="):
                    continue
                lt, li = _names_in(atom.lhs)
                rt, ri = _names_in(atom.rhs)
                names = (lt | li | rt | ri) & (set(self.positions) | set(self.exists) | tied)
                if names & tied and not names <= tied:
                    tied |= names
                    changed = True
            for v, deps in self._deps.items():
                if v in tied and v in self._defined and not deps <= tied:
                    tied |= deps
                    changed = True
        loose = [v for v in (*self.positions, *self.exists) if v not in tied]
        if loose:
            raise FormatError(
                f"Format {self.name!r}: the storage relation is not a function of the "
                f"coordinates: storage variable(s) {loose} are not tied to "
                f"[{', '.join(self.coords)}] by any equality, so one coordinate maps to many "
                "positions"
            )

    def _sizes(self) -> tuple[str, ...]:
        names: set[str] = set(self.relation.params)
        for uf in self.ufs.values():
            for s in (uf.domain, uf.range):
                if s is not None:
                    names |= set(s.params)
        for e in (*self.shape, *self.value_shape):
            names |= set(_NAME.findall(e))
        return tuple(sorted(names - set(self.ufs)))

    # ----------------------------------------------------------------------------- scanning
    def row_order(self) -> tuple[str, ...]:
        """:attr:`loops` reordered so that the variables the first coordinate (the row) is
        computed from come first, each still after the variables its bounds read: a scan in
        this order visits rows in increasing order where the row grows with them (BCSR's
        ``(ib, ri, kb, ci)``, DIA's ``(p, d)``), as a conversion into CSR wants."""
        placed: list[str] = []

        def place(v: str) -> None:
            if v not in placed:
                for u in sorted(self._deps[v], key=self.loops.index):
                    place(u)
                placed.append(v)

        for v in sorted(self._deps[self.coords[0]], key=self.loops.index):
            place(v)
        for v in self.loops:
            place(v)
        return tuple(placed)

    def scan(self, order: Sequence[str] | None = None) -> str:
        """The set the format's entries are scanned over, as text: every variable of the
        relation in :attr:`loops` order (or ``order``, e.g. :meth:`row_order`), the
        coordinates not fixed by equalities bounded by :attr:`shape`."""
        body = (
            self.storage[self.storage.index(":") + 1 : self.storage.rindex("}")]
            if ":" in self.storage
            else ""
        )
        if self.exists:
            body = body.split(":", 1)[1]
        extra = [
            f"0 <= {c} < {n}"
            for c, n in zip(self.coords, self.shape, strict=True)
            if c not in self._defined
        ]
        conj = " && ".join(p for p in (body.strip(), *extra) if p)
        names = tuple(order) if order is not None else self.loops
        if sorted(names) != sorted(self.loops):
            raise FormatError(f"Format {self.name!r}: scan order {names} is not a permutation of "
                           f"its loops {self.loops}")  # fmt: skip
        return f"{{[{', '.join(names)}]: {conj}}}"

    def declare(self, comp: object, index_dtype: str | None = None, *, facts: bool = True) -> None:
        """Declare the format's UFs (with ``index_dtype`` if given) and, unless ``facts`` is
        False, its facts on ``comp``."""
        from spf.computation import Computation

        assert isinstance(comp, Computation)
        for uf in self.ufs.values():
            comp.declare_uf(
                uf.name,
                arity=uf.arity,
                domain=uf.domain if uf.domain is not None else self._implied_domain(uf),
                range=uf.range if uf.range is not None else self._implied_range(uf),
                monotonic=uf.monotonic,
                dtype=index_dtype or uf.dtype,
            )
        for fact in self.assume if facts else ():
            comp.assume(fact)

    def _implied_domain(self, uf: UF) -> str | None:
        """The domain of an undeclared-domain UF: a pointer's (:meth:`_pointer_domain`), or
        ``0 <= t < E`` for a UF read as ``uf(p)`` with ``p`` a storage position whose values
        extend ``E`` (``col(k)`` of a CSR-like format: ``0 <= t < NNZ``). Without it a
        checked call could not compare the array's length with anything, and its loops and
        fact checks would read past the end of a short array (docs/formats.md)."""
        pointer = self._pointer_domain(uf.name)
        if pointer is not None or uf.arity != 1:
            return pointer
        # every call reads the same position as it is (a read at k + 1 would fall outside)
        calls = {a.strip() for a in re.findall(rf"\b{uf.name}\s*\(([^()]*)\)", self.storage)}
        for p, extent in zip(self.positions, self.value_shape, strict=True):
            if calls == {p}:
                return f"{{[t]: 0 <= t < {extent}}}"
        return None

    def _implied_range(self, uf: UF) -> str | None:
        """The range of an undeclared-range UF: a pointer's (:meth:`_pointer_range`), or
        ``0 <= v < E`` for a UF that is a coordinate of extent ``E`` (``i = row(k)``,
        ``j = col(p, w)``): its values are that coordinate's. Without it a conversion from
        a format of one's own had no bound on the counts and cursors indexed by the
        coordinate, nor the sizes ``N``, ``M`` that bound it (an error naming the
        conversion's scratch, or its sizes as unknown arguments)."""
        pointer = self._pointer_range(uf)
        if pointer is not None:
            return pointer
        for c, extent in zip(self.coords, self.shape, strict=True):
            defined = self._defined.get(c, "")
            if re.fullmatch(rf"\s*{uf.name}\s*\([^()]*\)\s*", defined):
                return f"{{[v]: 0 <= v < {extent}}}"
        return None

    def _pointer_range(self, uf: UF) -> str | None:
        """The range of an undeclared-range pointer UF read as ``uf(c) <= p < uf(c+1)``
        with ``p`` a storage position whose values extend ``E``: ``0 <= v <= E`` (the
        positions it bounds index the value array)."""
        for p, extent in zip(self.positions, self.value_shape, strict=True):
            call = rf"\b{uf.name}\s*\(\s*"
            bounds = rf"{call}(\w+)\s*\)\s*<=\s*{p}\s*<\s*{call}\1\s*\+\s*1\s*\)"
            if uf.arity == 1 and re.search(bounds, self.storage):
                return f"{{[v]: 0 <= v <= {extent}}}"
        return None

    def _pointer_domain(self, uf: str) -> str | None:
        """A domain for an undeclared-domain pointer array ``uf`` read as ``uf(c)`` and
        ``uf(c+1)`` with ``c`` a scanned coordinate: ``0 <= t <= extent of c``."""
        for c, extent in zip(self.coords, self.shape, strict=True):
            if c in self._defined:
                continue
            if re.search(rf"\b{uf}\s*\(\s*{c}\s*\)", self.storage):
                return f"{{[t]: 0 <= t <= {extent}}}"
        return None

    # ------------------------------------------------------------------- arguments, SpMV
    def args(
        self, matrix: object, index_dtype: object = None, prefix: str | None = None
    ) -> dict[str, Any]:
        """The keyword arguments of :meth:`spmv`'s kernel for ``matrix`` (a
        ``scipy.sparse`` matrix or a 2-D array), all but ``x`` and ``y``: the format's
        index arrays (``int32``, or ``int64`` when asked for or when a size needs it), its
        value array and its sizes; ``prefix="A_"`` names them for operand ``A`` of
        ``spf.einsum`` (``A``, ``A_rowptr``, ``A_NNZ``). ``spf.sparse.format_args`` is this.

        >>> import numpy as np, scipy.sparse as sp
        >>> from spf.formats import CSR
        >>> CSR.args(sp.csr_array(np.array([[1.0, 0.0], [2.0, 3.0]])))["rowptr"]
        array([0, 1, 3], dtype=int32)
        """
        if self.packer is None:
            raise ArgumentError(
                f"{self.name}.args: {self!r} is not a built-in format (COO, CSR, CSC, DIA, "
                "ELL, BCSR(r, c), SELL(C, sigma), BDIA(R)) and has no packer; build the "
                "arguments of your own format by hand, or give spf.Format a "
                "packer=(matrix, index_dtype) -> dict"
            )
        return prefix_args(
            self.packer(matrix, index_dtype), prefix, f"{self.name}.args", value=self.value
        )

    def extents(self, args: Mapping[str, object]) -> tuple[int, ...]:
        """The extents of the coordinates (:attr:`shape`) for arguments ``args`` (what
        :meth:`args` gave): the lengths of SpMV's ``y`` and ``x``.

        >>> import scipy.sparse as sp
        >>> from spf.formats import BCSR
        >>> BCSR(2, 2).extents(BCSR(2, 2).args(sp.eye_array(3)))
        (4, 4)
        """
        sizes = {  # a packer of your own may give numpy ints (np.int64(n))
            k: int(v)
            for k, v in args.items()
            if isinstance(v, int | np.integer) and not isinstance(v, bool)
        }
        out: list[int] = []
        for extent in self.shape:
            fn, names = compile_expr(extent)
            missing = sorted(names - set(sizes))
            if missing:
                raise ArgumentError(
                    f"{self.name}.extents: extent {extent!r} needs {', '.join(missing)}, "
                    f"which the arguments do not give; pass the sizes {self.name}.args gives"
                )
            out.append(int(fn(sizes)))
        return tuple(out)

    def spmv(self, index_dtype: str | None = None) -> Computation:
        """SpMV ``y += A·x`` over this format, generated from its storage relation
        (``spf.kernels.spmv(fmt)`` is this): one statement ``y(i) += A(position) * x(j)``
        over :meth:`scan`, loops in :attr:`loops` order; the UFs declared ``index_dtype``
        when given. :meth:`args` gives the arguments of its kernel."""
        from spf.formats.spmv import spmv_computation

        return spmv_computation(self, index_dtype)

    def __repr__(self) -> str:
        return (
            f"Format({self.name!r}, coords='[{', '.join(self.coords)}]', storage={self.storage!r})"
        )

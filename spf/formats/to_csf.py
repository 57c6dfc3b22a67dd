"""Conversions of tensors (:mod:`spf.formats.tensor`): into ``COO(order)`` and into
``CSF(order)``, from any format storing each entry once at one position (``COO``,
``CSF``, ``CSR``, ``CSC`` and formats like them) with as many coordinates.

* Into COO: one pass over the source's scan writes each entry's coordinates and value at
  its source position.
* Into CSF: the source's entries are copied out as coordinate lists (``cv_c<d>``), sorted
  lexicographically by one stable counting sort per dimension, last dimension first
  (``cv_o<d>``: the order after sorting by dimensions ``d ..``; O(NNZ + extent) each), then
  read in that order: ``cv_dl(t)`` is the first level at which entry ``t`` differs from the
  entry before it (``order + 1`` for a duplicate), which numbers the nodes of every level
  (``cv_id<l>``), places their coordinates, counts each node's children into the next
  level's ``pos`` (prefix sums turn them into pointers) and sums duplicates into one value.
  The level sizes come out in ``cv_cur``; the kernel returns the arrays trimmed to them.

Both are one spf Computation (``Conversion``), printable and schedulable like any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf.errors import FormatError
from spf.formats.convert import Conversion, ConversionKernel, _Builder, _uf_of_k
from spf.formats.tensor import csf_order, tensor_coo_order

if TYPE_CHECKING:
    from spf.formats.format import Format

__all__ = ["TensorConversion", "tensor_conversion"]


def _coordinate_ufs(fmt: Format) -> list[str] | None:
    """The UF of each coordinate of a coordinate format (``i1 = crd1(p)``), else None."""
    if len(fmt.positions) != 1:
        return None
    names = [_uf_of_k(fmt._defined.get(c, ""), fmt.positions[0]) for c in fmt.coords]
    return [n for n in names if n] if all(names) else None


def tensor_conversion(src: Format, dst: Format, index_dtype: str) -> Conversion | None:
    """The conversion ``src -> dst`` when either is a tensor format (CSF of any order, COO
    of order other than 2), else None."""
    tensor = csf_order(dst) is not None or csf_order(src) is not None
    tensor |= (tensor_coo_order(dst) or 2) != 2 or (tensor_coo_order(src) or 2) != 2
    if not tensor:
        return None
    where = f"convert({src.name} -> {dst.name})"
    if len(src.coords) != len(dst.coords):
        raise FormatError(
            f"{where}: {src.name} has {len(src.coords)} coordinates and {dst.name} "
            f"{len(dst.coords)}; a conversion keeps the order of the tensor"
        )
    if len(src.positions) != 1 or src.value_shape != ("NNZ",):
        raise FormatError(
            f"{where}: the source stores entries at [{', '.join(src.positions)}] with values "
            f"of shape {src.value_shape}; tensor conversions read formats that store each "
            "entry once at one position 0 <= p < NNZ (COO, CSF, CSR, CSC)"
        )
    conv = TensorConversion(f"convert_{src.name.lower()}_{dst.name.lower()}")
    conv.src, conv.dst, conv.index_dtype, conv.trim = src, dst, index_dtype, None
    b = _Builder(conv, src, index_dtype, joined=True)
    b.data(src.value, ("NNZ",), "value")
    if csf_order(dst) is not None:
        _to_csf(b, conv)
    elif (ufs := _coordinate_ufs(dst)) is not None:
        _to_coo(b, conv, ufs)
    else:
        raise FormatError(
            f"{where}: tensors convert into COO(order) and CSF(order); convert into one of "
            "them first"
        )
    conv.allocate = {
        name: tuple(str(e) for e in ds.shape or ())
        for name, ds in conv.data_spaces.items()
        if name.startswith("cv_") and ds.shape and ds.role != "local"
    }
    return conv


def _to_coo(b: _Builder, conv: TensorConversion, ufs: list[str]) -> None:
    src = b.src
    p = src.positions[0]
    copies = []
    for d, c in enumerate(src.coords):
        b.data(f"cv_c{d}", ("NNZ",))
        copies.append(f"$cv_c{d}$({p}) = {c};")
    b.data("cv_val", ("NNZ",), "value")
    b.scan([*copies, f"$cv_val$({p}) = ${src.value}$({p});"])
    conv.outputs = {uf: f"cv_c{d}" for d, uf in enumerate(ufs)}
    conv.outputs[conv.dst.value] = "cv_val"


def _sort_passes(b: _Builder) -> None:
    """Stable counting sorts by dimension, last first: ``cv_o0`` orders the entries
    lexicographically."""
    src, n = b.src, len(b.src.coords)
    t = "{[t]: 0 <= t < NNZ}"
    for d in reversed(range(n)):
        prev = "t" if d == n - 1 else f"cv_o{d + 1}(t)"
        b.index(f"cv_n{d}", f"{src.shape[d]} + 1", "0 <= v < NNZ")
        b.index(f"cv_o{d}", "NNZ", "0 <= v < NNZ")
        key = f"cv_c{d}({prev})"
        b.loop([f"$cv_n{d}$({key} + 1) += 1;"], t, ("t",))
        b.range([f"$cv_n{d}$(v + 1) += $cv_n{d}$(v);"], "v", "0", src.shape[d])
        b.loop([f"$cv_o{d}$(cv_n{d}({key})) = {prev};", f"$cv_n{d}$({key}) += 1;"], t, ("t",))


def _to_csf(b: _Builder, conv: TensorConversion) -> None:
    src, n = b.src, len(b.src.coords)
    p = src.positions[0]
    copies = []
    for d, c in enumerate(src.coords):
        b.index(f"cv_c{d}", "NNZ", f"0 <= v < {src.shape[d]}")
        copies.append(f"$cv_c{d}$({p}) = {c};")
    b.data("cv_v", ("NNZ",), "value")
    b.scan([*copies, f"$cv_v$({p}) = ${src.value}$({p});"])
    _sort_passes(b)
    b.index("cv_dl", "NNZ", f"1 <= v <= {n + 1}")
    b.loop(["$cv_dl$(t) = 1;"], "{[t]: t = 0 && NNZ >= 1}", ("t",))
    chain = "".join(f"cv_c{d}(cv_o0(t)) != cv_c{d}(cv_o0(t - 1)) ? {d + 1} : " for d in range(n))
    b.loop([f"$cv_dl$(t) = {chain}{n + 1};"], "{[t]: 1 <= t < NNZ}", ("t",))
    b.data("cv_cur", (str(n),))
    t = "{[t]: 0 <= t < NNZ}"
    ids, fill = [], []
    for lv in range(1, n + 1):
        b.index(f"cv_id{lv}", "NNZ", "0 <= v < NNZ")
        ids.append(f"$cv_cur$({lv - 1}) += $cv_dl$(t) <= {lv};")
        ids.append(f"$cv_id{lv}$(t) = $cv_cur$({lv - 1}) - 1;")
        b.data(f"cv_crd{lv}", ("NNZ",))
        b.data(f"cv_pos{lv}", ("2",) if lv == 1 else ("NNZ + 1",))
        count = "$cv_pos1$(1) += 1;" if lv == 1 else f"$cv_pos{lv}$(cv_id{lv - 1}(t) + 1) += 1;"
        fill.append(
            f"if ($cv_dl$(t) <= {lv}) {{ $cv_crd{lv}$(cv_id{lv}(t)) = cv_c{lv - 1}(cv_o0(t)); "
            f"{count} }}"
        )
    b.loop(ids, t, ("t",))
    b.data("cv_val", ("NNZ",), "value")
    b.loop([*fill, f"$cv_val$(cv_id{n}(t)) += $cv_v$(cv_o0(t));"], t, ("t",))
    if n > 1:
        prefix = [f"$cv_pos{lv}$(v + 1) += $cv_pos{lv}$(v);" for lv in range(2, n + 1)]
        b.range(prefix, "v", "0", "NNZ")


class TensorConversion(Conversion):
    """A conversion into ``COO(order)`` or ``CSF(order)``; its kernel returns the
    destination's arrays and sizes."""

    def compile(  # type: ignore[override]
        self, target: str = "c", name: str | None = None, check: bool = True, **options: Any
    ) -> TensorConversionKernel:
        built = super().compile(target, name, check, **options)
        return TensorConversionKernel(self, built.kernel, check)


class TensorConversionKernel(ConversionKernel):
    """``kernel(**source arrays and sizes)`` -> the destination's arrays and sizes."""

    def _convert(self, *, check: bool, **args: Any) -> dict[str, Any]:
        conv = self.conv
        sizes = self._sizes(args)
        env: dict[str, Any] = dict(args)
        self._zeros(env, conv.allocate, sizes)  # checked against this machine's memory
        self._run(check=check, **env)
        src, dst = conv.src, conv.dst
        out: dict[str, Any] = {}
        for extent, size in zip(dst.shape, src.shape, strict=True):
            out[extent] = sizes[size]
        if "cv_cur" not in env:
            out.update({key: env[name] for key, name in conv.outputs.items()})
            out["NNZ"] = sizes["NNZ"]
            return out
        counts = [int(c) for c in env["cv_cur"]]
        for lv in range(1, len(counts) + 1):
            parents = 1 if lv == 1 else counts[lv - 2]
            out[f"pos{lv}"] = env[f"cv_pos{lv}"][: parents + 1].copy()
            out[f"crd{lv}"] = env[f"cv_crd{lv}"][: counts[lv - 1]].copy()
            if lv < len(counts):
                out[f"NNZ{lv}"] = counts[lv - 1]
        out[dst.value] = env["cv_val"][: counts[-1]].copy()
        out["NNZ"] = counts[-1]
        return out

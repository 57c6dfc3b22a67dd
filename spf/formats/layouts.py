"""Which synthesis :func:`spf.formats.convert` hands a pair of formats to when one of them
lays its values out in an array of its own shape (ELL, DIA, SELL as a source): the
conversions of :mod:`spf.formats.from_stored`, :mod:`spf.formats.to_padded` and
:mod:`spf.formats.to_bcsr`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.errors import FormatError

if TYPE_CHECKING:
    from spf.formats.convert import Conversion
    from spf.formats.format import Format

__all__ = ["laid_out"]


def laid_out(src: Format, dst: Format, index_dtype: str) -> Conversion | None:
    """The conversion ``src -> dst`` when ``src`` is laid out (any destination: a clear
    error where none is synthesized) or ``dst`` is ELL-, DIA- or BCSR-like; ``None`` when
    neither is laid out, or ``dst`` is SELL-like (:mod:`spf.formats.to_sell`). Any other
    laid-out destination is refused, naming both formats and what to do instead."""
    from spf.formats.from_stored import from_stored, is_stored
    from spf.formats.to_bcsr import to_bcsr
    from spf.formats.to_padded import to_padded
    from spf.formats.to_sell import sell_layout

    if is_stored(src):
        return from_stored(src, dst, index_dtype)
    conv = to_padded(src, dst, index_dtype) or to_bcsr(src, dst, index_dtype)
    if conv is None and is_stored(dst) and sell_layout(dst) is None:
        raise FormatError(
            f"convert({src.name} -> {dst.name}): no inspector is synthesized into {dst.name}: "
            "its relation is neither ELL-like (i = p && j = col(p, w)), DIA-like (j = p + "
            "offsets(d)), BCSR-like (i = r*ib + ri && j = c*bcol(kb) + ci) nor SELL-like "
            "(k = cs(ch) + C*w + r); build its arrays another way (spf.sparse.format_args "
            "for the built-ins)"
        )
    return conv

"""What the two-phase conversions (:mod:`spf.formats.to_padded`, :mod:`spf.formats.to_bcsr`,
:mod:`spf.formats.from_stored`) share: statements added for one ``PHASE`` at a time (sizing
at ``PHASE = 0``, filling at ``PHASE = 1``, the wrapper allocating in between, as
:mod:`spf.formats.to_sell` does), the kernel calls naming the conversion in their errors,
and the shapes of the arrays the wrapper allocates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Self

from spf.formats.convert import Conversion, ConversionKernel, _Builder
from spf.formats.to_sell import _phase

if TYPE_CHECKING:
    from collections.abc import Callable

    from spf.formats.format import Format

__all__ = ["PhasedConversion", "PhasedKernel"]


class PhasedKernel(ConversionKernel):
    """A conversion kernel called once per phase (see :meth:`_run`)."""


class PhasedConversion(Conversion):
    """A two-phase conversion Computation; :meth:`compile` gives its ``kernel_type``."""

    kernel_type: ClassVar[type[PhasedKernel]] = PhasedKernel

    @classmethod
    def start(cls, src: Format, dst: Format, index_dtype: str) -> Self:
        """An empty conversion ``src -> dst`` named after the two formats."""
        conv = cls(f"convert_{src.name.lower()}_{dst.name.lower()}")
        conv.src, conv.dst, conv.index_dtype, conv.trim = src, dst, index_dtype, None
        conv.outputs = {}
        return conv

    def compile(  # type: ignore[override]
        self, target: str = "c", name: str | None = None, check: bool = True, **options: Any
    ) -> PhasedKernel:
        """Generate, build (cached) and load the conversion kernel (C only)."""
        built = super().compile(target, name, check, **options)
        return self.kernel_type(self, built.kernel, check)

    def shapes(self, keep: Callable[[str], bool]) -> dict[str, tuple[str, ...]]:
        """The extents of the arrays named ``keep`` accepts (scalars and the function's own
        locals left out)."""
        return {
            name: tuple(str(e) for e in ds.shape or ())
            for name, ds in self.data_spaces.items()
            if ds.shape and ds.role != "local" and keep(name)
        }


class PhasedBuilder(_Builder):
    """A :class:`_Builder` whose loops run in one ``PHASE`` at a time (``phase``)."""

    phase = 0

    def restrict(self, domain: str) -> str:
        return _phase(domain, self.phase)

    def scan(self, sources: list[str], where: str = "") -> None:
        """Statements ``sources`` over the source's scan, restricted to ``where`` if given."""
        scan = self.src.scan(self.order)
        loops = self.order or self.src.loops
        self.loop(sources, f"{scan[:-1]} && {where}}}" if where else scan, loops)

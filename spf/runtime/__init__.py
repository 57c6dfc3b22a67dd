"""Running generated C: build a shared library (cached) and call it with numpy arrays.

See docs/backends/c.md. :func:`build_c` compiles one translation unit with flags spf controls
and caches the library by content hash; :class:`Kernel` loads it through cffi's ABI mode and
binds, checks and passes arguments by name. (``spf.runtime.build.build`` returns the path,
the command line and the compiler output; it is not re-exported here so that the submodule
``spf.runtime.build`` is not shadowed by the function.)
"""

from __future__ import annotations

from spf.runtime.build import BuildResult, build_c, compile_flags
from spf.runtime.cache import default_cache_dir
from spf.runtime.kernel import Kernel

__all__ = ["BuildResult", "Kernel", "build_c", "compile_flags", "default_cache_dir"]

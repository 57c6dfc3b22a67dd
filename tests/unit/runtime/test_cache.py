"""Cache trust: a cached library is loaded only when spf's version, its kept source and its
recorded digest all match; anything else is rebuilt (never a crash or a stale kernel)."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.runtime.cache
from spf.runtime.cache import cache_key, file_sha256

if TYPE_CHECKING:
    from pathlib import Path

    from spf.runtime import Kernel


def _compile(cache: Path) -> Kernel:
    kernel = spf.kernels.spmv_csr().compile(openmp=False, cache_dir=cache)
    assert kernel.path.is_relative_to(cache)
    return kernel


def _works(kernel: Kernel) -> None:
    a = sp.random(30, 20, density=0.2, format="csr", random_state=3, dtype=np.float64)
    x = np.linspace(-1.0, 1.0, 20)
    y = np.zeros(30)
    kernel(**spf.sparse.csr_args(a), x=x, y=y)
    np.testing.assert_allclose(y, a @ x)


@pytest.fixture
def cached(tmp_path: Path) -> tuple[Kernel, Path]:
    """A kernel built into one cache, and a copy of that cache (paths never loaded yet)."""
    first = tmp_path / "first"
    kernel = _compile(first)
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    return kernel, copy


def _library_in(cache: Path) -> Path:
    (library,) = cache.rglob("*.so")
    return library


def test_a_trusted_entry_is_reused(cached: tuple[Kernel, Path]) -> None:
    _, copy = cached
    library = _library_in(copy)
    before = library.stat().st_mtime_ns
    kernel = _compile(copy)
    assert kernel.path == library
    assert library.stat().st_mtime_ns == before
    _works(kernel)


def test_a_corrupt_library_is_rebuilt(cached: tuple[Kernel, Path]) -> None:
    _, copy = cached
    library = _library_in(copy)
    library.write_bytes(library.read_bytes()[:200])  # truncated
    kernel = _compile(copy)
    assert kernel.path == library
    assert library.stat().st_size > 200
    assert file_sha256(library) == library.with_suffix(".sha256").read_text().strip()
    _works(kernel)


def test_a_library_that_fails_to_load_is_rebuilt(cached: tuple[Kernel, Path]) -> None:
    """Even with a digest that matches (written by hand), an unloadable library is rebuilt."""
    _, copy = cached
    library = _library_in(copy)
    library.write_bytes(b"not an ELF file")
    library.with_suffix(".sha256").write_text(file_sha256(library) + "\n")
    kernel = _compile(copy)
    assert library.read_bytes() != b"not an ELF file"
    _works(kernel)


def test_a_tampered_source_is_rebuilt(cached: tuple[Kernel, Path]) -> None:
    kernel, copy = cached
    library = _library_in(copy)
    kept = library.with_suffix(".c")
    kept.write_text(kept.read_text().replace("+=", "-="))
    before = library.stat().st_mtime_ns
    again = _compile(copy)
    assert kept.read_text() == kernel.source == again.source
    assert library.stat().st_mtime_ns != before
    _works(again)


def test_an_entry_without_a_digest_is_rebuilt(cached: tuple[Kernel, Path]) -> None:
    _, copy = cached
    library = _library_in(copy)
    library.with_suffix(".sha256").unlink()
    _works(_compile(copy))
    assert library.with_suffix(".sha256").is_file()


def test_the_key_includes_spf_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_key("gcc 13", ["-O3"], "src") == cache_key(
        "gcc 13", ["-O3"], "src", spf_version=spf.__version__
    )
    assert cache_key("gcc 13", ["-O3"], "src", spf_version="0.0.1") != cache_key(
        "gcc 13", ["-O3"], "src", spf_version="0.0.2"
    )
    now = _compile(tmp_path).path
    monkeypatch.setattr(spf.runtime.cache, "__version__", "999.0.0")
    other = _compile(tmp_path).path
    assert other != now
    assert len(list(tmp_path.rglob("*.so"))) == 2


def test_a_tampered_generated_source_is_generated_again(tmp_path: Path) -> None:
    """The generated-source cache (a warm compile skips codegen) is checked the same way."""
    import spf.runtime.compile as compile_module

    compile_module._GENERATED.clear()  # as in a fresh process: codegen writes the disk cache
    kernel = _compile(tmp_path)
    (generated,) = (tmp_path / "generated").rglob("*.json")
    assert json.loads(generated.read_text()) == kernel.unit.to_data()
    tampered = dict(kernel.unit.to_data(), source=kernel.source.replace("+=", "-="))
    generated.write_text(json.dumps(tampered))
    compile_module._GENERATED.clear()  # as in a fresh process
    shutil.rmtree(tmp_path / "warm")  # the remembered compile would skip the generated source
    again = _compile(tmp_path)
    assert again.source == kernel.source
    assert json.loads(generated.read_text()) == kernel.unit.to_data()
    _works(again)


@pytest.mark.parametrize("old", ["source", "record"])
def test_a_generated_entry_of_an_older_spf_is_generated_again(tmp_path: Path, old: str) -> None:
    """An entry without this version's translation-unit record (an older spf wrote the bare
    source; a record of another layout) is a miss: generated again and rewritten, no crash."""
    import spf.runtime.compile as compile_module
    from spf.runtime.cache import atomic_write

    compile_module._GENERATED.clear()
    kernel = _compile(tmp_path)
    (generated,) = (tmp_path / "generated").rglob("*.json")
    text = kernel.source if old == "source" else json.dumps({"format": 0, "source": "x"})
    atomic_write(generated, text)
    atomic_write(generated.with_suffix(".sha256"), compile_module._digest(text) + "\n")
    compile_module._GENERATED.clear()
    shutil.rmtree(tmp_path / "warm")
    again = _compile(tmp_path)
    assert again.unit == kernel.unit
    assert json.loads(generated.read_text()) == kernel.unit.to_data()
    _works(again)


def test_changed_spf_sources_generate_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Generated C is keyed by spf's source files, not only its version: an edited printer
    under the same version never reuses C generated by the old one."""
    import spf.runtime.compile as compile_module
    import spf.runtime.warm as warm

    compile_module._GENERATED.clear()
    _compile(tmp_path)
    before = sorted((tmp_path / "generated").rglob("*.json"))
    monkeypatch.setattr(warm, "_spf_source_digest", lambda: "an edited spf")
    compile_module._GENERATED.clear()
    shutil.rmtree(tmp_path / "warm", ignore_errors=True)
    _works(_compile(tmp_path))
    after = sorted((tmp_path / "generated").rglob("*.json"))
    assert len(after) == len(before) + 1


def test_a_full_cache_directory_is_a_compile_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library built, recording it fails (a full disk: ENOSPC while writing its digest):
    a CompileError naming the cache directory, no raw OSError and no temporary file left;
    the next build, with space again, builds and loads it."""
    from spf.runtime.build import build

    source = "int spf_full_disk(void) { return 7; }\n"

    def full(self: object, built: Path) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(spf.runtime.cache.CacheEntry, "install", full)
        with pytest.raises(spf.CompileError, match=r"cache directory .*No space left"):
            build(source, name="full_disk", openmp=False, cache_dir=tmp_path)
    assert not [p for p in tmp_path.rglob(".*") if p.is_file()]
    again = build(source, name="full_disk", openmp=False, cache_dir=tmp_path)
    assert not again.cached
    assert again.path.exists()


def test_generated_units_kept_in_memory_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process compiling many states keeps the last GENERATED_KEPT units in memory; an
    older one comes back from the disk cache, and its kernel computes the same."""
    import spf.runtime.compile as compile_module

    monkeypatch.setattr(compile_module, "_GENERATED", {})
    monkeypatch.setattr(compile_module, "GENERATED_KEPT", 2)

    def scaled(k: int) -> spf.Computation:
        comp = spf.Computation(f"kept{k}")
        comp.add_data_space("x", "double", shape=("N",))
        comp.add_data_space("y", "double", shape=("N",))
        comp.add_stmt(spf.Stmt(f"$y$(i) = {k} * $x$(i);", "{[i]: 0 <= i < N}"))
        return comp

    for k in (1, 2, 3, 1):
        kernel = scaled(k).compile(openmp=False, cache_dir=tmp_path)
        x, y = np.arange(4.0), np.zeros(4)
        kernel(x=x, y=y)
        np.testing.assert_array_equal(y, k * x)
        assert len(compile_module._GENERATED) <= 2


@pytest.mark.parametrize("bad", [123, b"/tmp/spf", ["cache"], ""], ids=repr)
def test_a_cache_dir_that_is_not_a_directory_path_is_refused(bad: object) -> None:
    """``cache_dir`` must name a directory: another type is an ArgumentError naming it (not
    pathlib's TypeError), and an empty string is refused rather than read as the current
    directory (``$SPF_CACHE_DIR=""`` means the default; pass None for that)."""
    comp = spf.kernels.dense_mv()
    with pytest.raises(spf.ArgumentError, match="cache_dir"):
        comp.compile(openmp=False, cache_dir=bad)  # type: ignore[arg-type]
    with pytest.raises(spf.ArgumentError, match="cache_dir"):
        spf.runtime.build_c("int f(void) { return 1; }\n", name="f", cache_dir=bad)  # type: ignore[arg-type]

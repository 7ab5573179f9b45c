"""The kernel compile cache: in memory, on disk for new processes, keyed by source and settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lazyarr as la
from lazyarr.kernels import compile as kc
from lazyarr.kernels.emit import Arg, Kernel, emit_map

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> str:
    """One cache directory per test session (shared by xdist workers)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    path = root / "lazyarr-numba-cache"
    path.mkdir(exist_ok=True)
    return str(path)


def simple_kernel() -> Kernel:
    x = la.asarray(np.arange(6.0))
    y = x * 2.5
    z = y - 1
    return emit_map([y._expr, z._expr], [x._expr])


def test_a_second_compile_is_a_memory_hit(cache_dir):
    kernel = simple_kernel()
    options = kc.Options(cache_dir)
    fn = kc.compile_kernel(kernel, options)
    before = kc.stats()
    assert kc.compile_kernel(kernel, options) is fn
    after = kc.stats()
    assert after["memory_hits"] == before["memory_hits"] + 1
    assert after["compiled"] == before["compiled"]
    out = np.empty(6)
    meta = np.array([1, 6, 0, 0, 1, 0, 0, 1], dtype=np.int64)  # 1 row of 6; out, input
    buf = np.arange(6.0)
    buf.flags.writeable = False
    assert fn(out, meta, buf) == 0
    np.testing.assert_array_equal(out, np.arange(6.0) * 2.5 - 1)


def test_the_key_covers_source_types_and_settings(cache_dir):
    kernel = simple_kernel()
    base = kc.cache_key(kernel, kc.Options(cache_dir))
    assert kc.cache_key(simple_kernel(), kc.Options(cache_dir)) == base
    assert kc.cache_key(kernel, kc.Options(cache_dir, fastmath=True)) != base
    assert kc.cache_key(kernel, kc.Options(cache_dir, digest="other")) != base
    other = Kernel(kernel.source, (Arg("out", "float32"), *kernel.args[1:]), kernel.n_inputs)
    assert kc.cache_key(other, kc.Options(cache_dir)) != base


def test_without_a_cache_dir_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kernel = simple_kernel()
    kc.clear_memory_cache()
    fn = kc.compile_kernel(kernel, kc.Options(None, digest="memory-only"))
    assert callable(fn)
    assert list(tmp_path.iterdir()) == []


def test_numba_errors_become_compile_errors():
    source = "@njit(nogil=True)\ndef kernel(out, meta):\n    out[0] = 'text'\n    return 0\n"
    kernel = Kernel(source, (Arg("out", "float64"), Arg("meta", "int64", 2)), 0)
    with pytest.raises(kc.CompileError, match="TypingError"):
        kc.compile_kernel(kernel, kc.Options(None))


def test_errors_that_are_not_numbas_refusal_propagate(tmp_path):
    """Only Numba's "not supported" errors become CompileError (and a NumPy fallback): a
    kernel whose text is broken is an emitter bug and raises as itself, disk cache or not."""
    source = "@njit(nogil=True)\ndef kernel(out, meta):\n    out[0] = (\n    return 0\n"
    kernel = Kernel(source, (Arg("out", "float64"), Arg("meta", "int64", 2)), 0)
    for cache_dir in (None, str(tmp_path / "cache")):
        kc.clear_memory_cache()
        with pytest.raises(SyntaxError):
            kc.compile_kernel(kernel, kc.Options(cache_dir))


CHILD = """
import json, sys
import numpy as np
import lazyarr as la
from lazyarr.kernels import compile as kc

x = la.asarray(np.arange(10.0), chunks=5)
y = ((x * 3 - 1) ** 2).sum()
imported_early = "numba" in sys.modules
with la.config.set({"numba.cache-dir": sys.argv[1]}):
    value = float(y.compute(executor="numba"))
print(json.dumps({"stats": kc.stats(), "value": value, "numba_on_import": imported_early}))
"""


def run_child(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZYARR_")}
    env["LAZYARR_CONFIG"] = os.devnull
    env["LAZYARR_NUMBA__COMPILE_THRESHOLD"] = "0"  # tiny arrays: compile anyway
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(cache)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_new_process_loads_kernels_from_disk_without_compiling(tmp_path):
    first = run_child(tmp_path)
    assert first["value"] == float(((np.arange(10.0) * 3 - 1) ** 2).sum())
    assert first["numba_on_import"] is False  # numba is imported on the first compile only
    assert first["stats"]["compiled"] >= 1
    files = sorted(tmp_path.glob("lazyarr_*.py"))
    assert files and list((tmp_path / "__pycache__").glob("*.nbi"))
    stamps = [f.stat().st_mtime_ns for f in files]
    second = run_child(tmp_path)
    assert second["value"] == first["value"]
    assert second["stats"]["compiled"] == 0
    assert second["stats"]["disk_hits"] == first["stats"]["compiled"]
    # generated modules are written once: Numba's index is stamped with their mtime
    assert [f.stat().st_mtime_ns for f in files] == stamps


def test_compile_options_come_from_the_numba_settings(tmp_path):
    import platformdirs

    from lazyarr.executors.numba import options_from_config

    with la.config.set({"numba.cache-dir": None, "numba.cache": True}):
        default = options_from_config()
    assert Path(default.cache_dir) == Path(platformdirs.user_cache_dir("lazyarr")) / "numba"
    with la.config.set({"numba.cache-dir": str(tmp_path), "numba.fastmath": True}):
        custom = options_from_config()
    assert custom.cache_dir == str(tmp_path) and custom.fastmath
    assert custom.digest != default.digest  # fastmath changes generated code: a new key
    with la.config.set({"numba.cache": False}):
        assert options_from_config().cache_dir is None

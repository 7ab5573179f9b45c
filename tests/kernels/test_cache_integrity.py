"""The kernel disk cache never runs what lazyarr did not write: edited modules are replaced,
damaged entries are rebuilt, the directory is private and a shared one is refused."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lazyarr as la
from lazyarr.kernels import compile as kc
from lazyarr.kernels.emit import emit_map

ROOT = Path(__file__).resolve().parents[2]


def kernel_and_check():
    """A kernel computing ``x * 2.5 - 1`` and a function that runs it and returns the values."""
    x = la.asarray(np.arange(6.0))
    y = x * 2.5
    kernel = emit_map([y._expr, (y - 1)._expr], [x._expr])

    def run(fn) -> np.ndarray:
        out = np.empty(6)
        meta = np.array([1, 6, 0, 0, 1, 0, 0, 1], dtype=np.int64)  # 1 row of 6: out, input
        buf = np.arange(6.0)
        buf.flags.writeable = False
        assert fn(out, meta, buf) == 0
        return out

    return kernel, run


WANT = np.arange(6.0) * 2.5 - 1


def test_an_edited_cached_module_is_replaced_not_imported(tmp_path):
    kernel, run = kernel_and_check()
    options = kc.Options(str(tmp_path), digest="edited")
    kc.clear_memory_cache()
    np.testing.assert_array_equal(run(kc.compile_kernel(kernel, options)), WANT)
    (module,) = tmp_path.glob("lazyarr_*.py")
    original = module.read_text()
    marker = tmp_path / "planted"
    module.write_text(f"open({str(marker)!r}, 'w').close()\n" + original.replace("2.5", "3.5"))
    kc.clear_memory_cache()
    with pytest.warns(kc.CacheWarning, match="differed from the kernel"):
        fn = kc.compile_kernel(kernel, options)
    np.testing.assert_array_equal(run(fn), WANT)
    assert not marker.exists()
    assert module.read_text() == original


def test_a_shared_cache_directory_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    kernel, run = kernel_and_check()
    kc.clear_memory_cache()
    with pytest.warns(kc.CacheWarning, match="can be written by others"):
        fn = kc.compile_kernel(kernel, kc.Options(str(shared), digest="shared"))
    np.testing.assert_array_equal(run(fn), WANT)
    assert not list(shared.glob("lazyarr_*.py"))  # nothing written into it


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    kernel, run = kernel_and_check()

    def no_space(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "link", no_space)
    kc.clear_memory_cache()
    with pytest.warns(kc.CacheWarning, match="No space left"):
        fn = kc.compile_kernel(kernel, kc.Options(str(tmp_path), digest="full-disk"))
    np.testing.assert_array_equal(run(fn), WANT)
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == []


CHILD = """
import json, os, stat, sys, warnings
import numpy as np
import lazyarr as la
from lazyarr.kernels import compile as kc

if sys.argv[2] == "umask0":
    os.umask(0)
x = la.asarray(np.arange(10.0), chunks=5)
with warnings.catch_warnings(record=True) as seen, la.config.set(
    {"numba.cache-dir": sys.argv[1], "numba.compile-threshold": 0}
):
    warnings.simplefilter("always")
    value = float(((x * 3 - 1) ** 2).sum().compute(executor="numba"))
print(json.dumps({
    "stats": kc.stats(),
    "value": value,
    "warnings": [f"{type(w.message).__name__}: {w.message}" for w in seen],
}))
"""


def run_child(cache: Path, mode: str = "") -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZYARR_")}
    env["LAZYARR_CONFIG"] = os.devnull
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(cache), mode],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["value"] == float(((np.arange(10.0) * 3 - 1) ** 2).sum())
    return out


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_the_cache_is_private_under_umask_000(tmp_path):
    cache = tmp_path / "new" / "cache"
    run_child(cache, "umask0")
    for d in (cache, cache / "__pycache__"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    files = list(cache.glob("lazyarr_*.py"))
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)


def test_a_damaged_entry_is_deleted_and_built_again(tmp_path):
    first = run_child(tmp_path)
    assert first["stats"]["compiled"] >= 1 and not first["warnings"]
    damaged = list((tmp_path / "__pycache__").glob("*.nb*"))
    assert damaged
    for f in damaged:
        f.write_bytes(b"\\x00garbage" * 3)
    second = run_child(tmp_path)  # rebuilt: no NumPy fallback, the files valid again
    assert not any("Fallback" in w for w in second["warnings"]), second["warnings"]
    assert any("deleted and built again" in w for w in second["warnings"])
    third = run_child(tmp_path)
    assert third["stats"]["compiled"] == 0 and third["stats"]["disk_hits"] >= 1
    assert not third["warnings"]

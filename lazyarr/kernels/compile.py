"""Generated kernel source -> a compiled Numba function, cached in memory and on disk.

This is the only module that imports Numba, and it does so on the first
compile (``import lazyarr`` stays fast). A kernel is keyed by a hash of its
source, its argument types (dtype, ndim, layout) and a digest of the
settings that change generated code (``Options.digest``).

On disk, the source is written once to ``<cache_dir>/lazyarr_<key>.py``
(never rewritten: Numba's cache index is stamped with the file's mtime) and
imported as a module whose functions carry ``@njit(cache=True)``, so
Numba's own cache (``<cache_dir>/__pycache__/*.nbi|nbc``) lets a new
process load the machine code instead of compiling it again. Without a
cache directory the source is ``exec``-ed and compiled in memory only.

A kernel that calls user functions (``Kernel.globals``: a fused
``numba.vectorize``/``@njit`` function) is always compiled in memory:
Numba's disk cache would keep the machine code of a function that the user
may redefine under the same name. Its source names each function by a
token unique to the function object, so the memory key tells them apart.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from lazyarr.kernels.emit import Kernel

__all__ = ["CompileError", "Options", "clear_memory_cache", "compile_kernel", "stats"]


class CompileError(Exception):
    """Numba could not compile a generated kernel (the message says why)."""


@dataclasses.dataclass(frozen=True)
class Options:
    """How kernels are compiled and cached.

    ``cache_dir``: where generated modules and Numba's cache files live
    (None: memory only). ``digest``: a hash of the settings that change the
    generated machine code (part of the cache key).
    """

    cache_dir: str | None = None
    fastmath: bool = False
    digest: str = ""


_LOCK = threading.RLock()
_MEMORY: dict[str, Any] = {}
_STATS = {"compiled": 0, "disk_hits": 0, "memory_hits": 0}
_NUMBA: Any = None


def _numba() -> Any:
    """Numba, imported on first use (it takes about half a second)."""
    global _NUMBA
    if _NUMBA is None:
        import numba

        _NUMBA = numba
    return _NUMBA


def stats() -> dict[str, int]:
    """Counts since start: kernels compiled, loaded from Numba's disk cache, found in memory."""
    with _LOCK:
        return dict(_STATS)


def clear_memory_cache() -> None:
    """Forget compiled kernels held in this process (the disk cache stays)."""
    with _LOCK:
        _MEMORY.clear()


def _signature_text(kernel: Kernel) -> str:
    return ";".join(
        f"{a.name}:{a.dtype}:{a.ndim}:C:{'ro' if a.readonly else 'rw'}" for a in kernel.args
    )


def cache_key(kernel: Kernel, options: Options) -> str:
    """The hash naming ``kernel`` compiled with ``options``."""
    text = "\n".join(
        [
            kernel.source,
            _signature_text(kernel),
            f"fastmath={options.fastmath}",
            options.digest,
            f"numpy={np.__version__}",
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _prelude(cache: bool, fastmath: bool) -> str:
    return (
        "import math  # noqa: F401\n"
        "import numpy as np  # noqa: F401\n"
        "from numba import njit as _numba_njit\n\n\n"
        "def njit(**options):\n"
        f"    return _numba_njit(cache={cache}, fastmath={fastmath}, "
        'error_model="numpy", **options)\n\n\n'
    )


def _write_once(path: Path, text: str) -> None:
    """Create ``path`` with ``text`` atomically; an existing file is left untouched."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text)
    try:
        os.link(tmp, path)  # fails if another process created it first: keep theirs
    except FileExistsError:
        pass
    finally:
        tmp.unlink()


def _load_module(key: str, text: str, cache_dir: str | None) -> Any:
    name = f"lazyarr_kernel_{key}"
    if cache_dir is None:
        namespace: dict[str, Any] = {"__name__": name}
        exec(compile(text, f"<lazyarr kernel {key}>", "exec"), namespace)
        return namespace
    path = Path(cache_dir) / f"lazyarr_{key}.py"
    _write_once(path, text)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CompileError(f"cannot import the generated kernel {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return vars(module)


def _signature(kernel: Kernel) -> tuple:
    types = _numba().types
    from_dtype = _numba().from_dtype
    return tuple(
        types.Array(from_dtype(np.dtype(a.dtype)), a.ndim, "C", readonly=a.readonly)
        for a in kernel.args
    )


def compile_kernel(kernel: Kernel, options: Options) -> Callable[..., Any]:
    """The compiled ``kernel`` (a Numba dispatcher); :class:`CompileError` if Numba fails."""
    key = cache_key(kernel, options)
    with _LOCK:
        fn = _MEMORY.get(key)
        if fn is not None:
            _STATS["memory_hits"] += 1
            return fn
        cache_dir = None if kernel.globals else options.cache_dir
        text = _prelude(cache_dir is not None, options.fastmath) + kernel.source
        try:
            namespace = _load_module(key, text, cache_dir)
            namespace.update(kernel.globals)
            fn = namespace[kernel.name]
            sig = _signature(kernel)
            fn.compile(sig)
        except Exception as e:
            raise CompileError(f"{type(e).__name__}: {e}") from e
        hits = sum(fn.stats.cache_hits.values())
        _STATS["disk_hits" if hits else "compiled"] += 1
        _MEMORY[key] = fn
        return fn

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

The disk cache is trusted only as far as we can check it: the directory is
created 0700, and one that another user owns or that group/others may write
is not used (a :class:`CacheWarning`, then memory only), as ssh treats its
keys; a cached module whose text is not exactly the source we generated is
replaced before it is imported; an entry that fails to load (a damaged
``.nbi``/``.nbc``) is deleted and built again, once, under a lock.

A kernel that calls user functions (``Kernel.globals``: a fused
``numba.vectorize``/``@njit`` function) is always compiled in memory:
Numba's disk cache would keep the machine code of a function that the user
may redefine under the same name. Its source names each function by a
token unique to the function object, so the memory key tells them apart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import os
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from lazyarr.kernels.emit import Kernel

__all__ = [
    "CacheWarning",
    "CompileError",
    "Options",
    "clear_memory_cache",
    "compile_kernel",
    "prepare",
    "stats",
]


class CompileError(Exception):
    """Numba does not support what a generated kernel asks of it (the message says why)."""


class CacheWarning(UserWarning):
    """The kernel disk cache was not used, or an entry of it was repaired (says why)."""


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


def prepare() -> None:
    """Import Numba and fill its CPU target's registries, as the first kernel a process
    compiles or loads from the disk cache would (about 0.3 s): a process that will run
    kernels (a Dask worker) does it ahead, off the first compute's clock."""
    _numba()
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target

    with global_compiler_lock:  # Numba's own compile path refreshes under it
        cpu_target.target_context.refresh()


def _unsupported() -> tuple[type[Exception], ...]:
    """Numba's errors that mean "Numba does not support this", not "the kernel is wrong".

    ``TypingError`` (with its subclasses ``NumbaNotImplementedError``,
    ``NumbaTypeError``, ...): no typing for these types or this call;
    ``UnsupportedError``: a construct Numba refuses; ``LoweringError``: a
    typed operation without machine code (a datetime conversion, a NumPy
    function on a dtype). Anything else raised while building a kernel (a
    ``SyntaxError`` or ``NameError`` in the generated text, Numba's
    ``InternalError``, our own exceptions) is a bug and propagates.
    """
    errors = _numba().core.errors
    return (errors.TypingError, errors.UnsupportedError, errors.LoweringError)


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
    """Create ``path`` (mode 0600) with ``text`` atomically; an existing file is kept."""
    if path.exists():
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.link(tmp, path)  # fails if another process created it first: keep theirs
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


_TRUSTED: dict[str, str | None] = {}  # cache dir -> why it is not used (None: it is)


def _distrust(path: Path) -> str | None:
    """Why ``path`` (a directory) must not hold code we import, or None."""
    st = path.stat()
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{path} is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{path} can be written by others (mode {st.st_mode & 0o777:o})"
    return None


def _usable(cache_dir: str) -> bool:
    """Create ``cache_dir`` (0700) if needed; False, with one warning, if it cannot be trusted."""
    if cache_dir not in _TRUSTED:
        root = Path(cache_dir)
        try:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
            (root / "__pycache__").mkdir(mode=0o700, exist_ok=True)  # Numba's files
            why = _distrust(root) or _distrust(root / "__pycache__")
        except OSError as e:
            why = f"{cache_dir} cannot be used ({e})"
        _TRUSTED[cache_dir] = why
        if why:
            warnings.warn(
                CacheWarning(
                    f"kernel disk cache off: {why}; kernels are compiled in memory only "
                    "(make it private with chmod 700, or set numba.cache-dir)"
                ),
                stacklevel=4,
            )
    return _TRUSTED[cache_dir] is None


def _entry_files(cache_dir: str, key: str) -> list[Path]:
    """The files of one cache entry: our module and Numba's index and code files."""
    root = Path(cache_dir)
    return [root / f"lazyarr_{key}.py", *(root / "__pycache__").glob(f"lazyarr_{key}.*")]


def _discard(cache_dir: str, key: str) -> None:
    for f in _entry_files(cache_dir, key):
        with contextlib.suppress(FileNotFoundError):
            f.unlink()


@contextlib.contextmanager
def _rebuild_lock(cache_dir: str):
    """One process at a time repairs entries of ``cache_dir`` (a no-op where flock is missing)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(Path(cache_dir) / ".rebuild.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _load_module(key: str, text: str, cache_dir: str | None) -> Any:
    name = f"lazyarr_kernel_{key}"
    if cache_dir is None:
        namespace: dict[str, Any] = {"__name__": name}
        exec(compile(text, f"<lazyarr kernel {key}>", "exec"), namespace)
        return namespace
    path = Path(cache_dir) / f"lazyarr_{key}.py"
    try:
        found: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        found = None
    except (OSError, UnicodeDecodeError):
        found = ""
    if found is not None and found != text:  # edited or damaged: never import it
        _discard(cache_dir, key)
        warnings.warn(
            CacheWarning(f"{path} differed from the kernel it names; replaced it"), stacklevel=4
        )
    try:
        _write_once(path, text)
    except OSError as e:  # a full or read-only disk: this kernel is compiled in memory
        warnings.warn(CacheWarning(f"cannot write {path} ({e}); compiled in memory"), stacklevel=4)
        return _load_module(key, text.replace("cache=True", "cache=False", 1), None)
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


def _build(kernel: Kernel, key: str, text: str, cache_dir: str | None) -> Any:
    """Import the kernel's module and compile (or load) its signature."""
    namespace = _load_module(key, text, cache_dir)
    namespace.update(kernel.globals)  # user functions a fused kernel calls
    fn = namespace[kernel.name]
    fn.compile(_signature(kernel))
    return fn


def _reraise(error: Exception) -> NoReturn:
    """``error`` as a :class:`CompileError` where Numba does not support the kernel; else as is."""
    if isinstance(error, _unsupported()):
        raise CompileError(f"{type(error).__name__}: {error}") from error
    raise error


def compile_kernel(kernel: Kernel, options: Options) -> Callable[..., Any]:
    """The compiled ``kernel`` (a Numba dispatcher).

    :class:`CompileError` where Numba does not support it; any other error propagates.
    """
    key = cache_key(kernel, options)
    with _LOCK:
        fn = _MEMORY.get(key)
        if fn is not None:
            _STATS["memory_hits"] += 1
            return fn
        cache_dir = None if kernel.globals else options.cache_dir
        if cache_dir is not None and not _usable(cache_dir):
            cache_dir = None
        text = _prelude(cache_dir is not None, options.fastmath) + kernel.source
        cached = cache_dir is not None and any(f.exists() for f in _entry_files(cache_dir, key))
        try:
            fn = _build(kernel, key, text, cache_dir)
        except Exception as e:
            if not cached:
                _reraise(e)
            # a damaged entry (Numba's index or code file): delete it, build it once more
            assert cache_dir is not None
            with _rebuild_lock(cache_dir):
                _discard(cache_dir, key)
                try:
                    fn = _build(kernel, key, text, cache_dir)
                except Exception as again:
                    _reraise(again)
            warnings.warn(
                CacheWarning(
                    f"cached kernel lazyarr_{key} could not be loaded "
                    f"({type(e).__name__}: {e}); it was deleted and built again"
                ),
                stacklevel=3,
            )
        hits = sum(fn.stats.cache_hits.values())
        _STATS["disk_hits" if hits else "compiled"] += 1
        _MEMORY[key] = fn
        return fn

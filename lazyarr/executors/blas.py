"""BLAS threads while an executor's own threads run kernels: one each, not one per core.

OpenBLAS (NumPy's) starts a thread per core for every call. When the numba
executor's pool already runs a task per core, each BLAS call's threads hand
work back and forth with the pool's: TSQR's 1 MiB panels (many small QR and
matmul calls) ran 1.6x slower on two pool threads than with one BLAS thread
each. Dask workers set the same limit on their own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from .base import available_cores

__all__ = ["blas_threads_for"]

_LOCK = threading.Lock()
_CONTROLLER: list[Any] = []  # the threadpoolctl controller, made once (it scans loaded libraries)


def _controller() -> Any:
    with _LOCK:
        if not _CONTROLLER:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER.append(ThreadpoolController())
        return _CONTROLLER[0]


@contextlib.contextmanager
def blas_threads_for(pool_threads: int) -> Iterator[None]:
    """BLAS limited to ``cores // pool_threads`` threads (at least one) while the block
    runs; nothing changes for a pool of one thread."""
    if pool_threads <= 1:
        yield
        return
    with _controller().limit(limits=max(1, available_cores() // pool_threads), user_api="blas"):
        yield

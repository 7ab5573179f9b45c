"""The speed probe: memory bandwidth, flop rate and matmul rate of one thread, measured.

:func:`probe_speed` takes a few tens of milliseconds: the best of a few
copies of :data:`COPY_BYTES` (bytes read plus bytes written per second), a
multiply-add loop on an array that stays in the cache (cheap flops per
second), and a small matrix product (BLAS flops per second). The numbers
feed :class:`lazyarr.optimize.timing.Costs`. The dask executor runs it once
on every worker of a cluster (:mod:`.dask_calibrate`); the local executors
once per process (:class:`LocalCalibration`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from lazyarr.optimize.timing import Costs, Speed

from .base import available_cores

__all__ = [
    "COPY_BYTES",
    "FMA_ELEMENTS",
    "FMA_ROUNDS",
    "MATMUL_N",
    "REPEATS",
    "LocalCalibration",
    "probe_speed",
    "probe_work",
]

COPY_BYTES = 32 << 20
"""Bytes of the array the bandwidth probe copies (beyond any cache)."""
FMA_ELEMENTS = 2048
"""Elements of the multiply-add probe's array (16 KiB of float64: in the L1 cache)."""
FMA_ROUNDS = 64
"""Multiply-adds per element in one timing of the flop probe."""
MATMUL_N = 192
"""The matmul probe multiplies two ``MATMUL_N`` square float64 matrices."""
REPEATS = 3
"""Each probe is timed this many times; the fastest counts (the others warm up)."""


def probe_work() -> dict[str, float]:
    """What one :func:`probe_speed` does: bytes copied, cheap flops, matmul flops."""
    return {
        "bytes": float(REPEATS * 2 * COPY_BYTES),
        "flops": float(REPEATS * FMA_ROUNDS * 2 * FMA_ELEMENTS),
        "matmul_flops": float(REPEATS * 2 * MATMUL_N**3),
    }


def _best(run: Callable[[], object], repeats: int = REPEATS) -> float:
    """The fastest of ``repeats`` timings of ``run`` (seconds)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return max(best, 1e-9)


def _copy_bandwidth() -> float:
    src = np.ones(COPY_BYTES // 8)
    dst = np.empty_like(src)
    return 2 * COPY_BYTES / _best(lambda: np.copyto(dst, src))


def _flop_rate() -> float:
    x = np.full(FMA_ELEMENTS, 0.5)

    def fma() -> None:
        for _ in range(FMA_ROUNDS):
            np.multiply(x, 0.999, out=x)
            np.add(x, 0.001, out=x)

    return FMA_ROUNDS * 2 * FMA_ELEMENTS / _best(fma)


def _matmul_rate() -> float:
    m = np.full((MATMUL_N, MATMUL_N), 0.5)
    return 2 * MATMUL_N**3 / _best(lambda: m @ m)


def probe_speed() -> tuple[float, float, float, int]:
    """(memory bandwidth, flop rate, matmul rate) of this thread, in bytes or flops per s,
    and the cores this process may run on.

    Plain numbers, so the result travels back from a Dask worker without lazyarr's types.
    """
    return _copy_bandwidth(), _flop_rate(), _matmul_rate(), available_cores()


class LocalCalibration:
    """This process's speeds, probed once (at the first plan that asks) and kept."""

    def __init__(self) -> None:
        self._costs: Costs | None = None
        self._lock = threading.Lock()
        self.probes = 0
        """How many times the probe ran (once per process)."""

    def costs(self) -> Costs:
        """The measured :class:`Costs` of one thread of this process."""
        with self._lock:
            if self._costs is None:
                self.probes += 1
                *rates, cores = probe_speed()
                self._costs = Costs((Speed(*rates),), cores=(cores,), measured=True)
            return self._costs

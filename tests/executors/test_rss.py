"""What a run adds to the resident set, measured while it runs (lazyarr/executors/rss.py)."""

from __future__ import annotations

import time

import numpy as np

import lazyarr as la
from lazyarr.executors.rss import resident_bytes, watched


def test_a_block_made_and_freed_inside_the_watch_is_its_peak():
    """64 MB touched then freed before the watch ends: the peak still counts it (sampled, or
    the kernel's high-water mark), and the watch ends where it began."""
    with watched() as watch:
        block = np.ones(8_000_000)  # 64 MB, every page touched
        time.sleep(0.05)
        del block
    assert watch.growth >= 60_000_000
    assert resident_bytes() < watch.start + 32_000_000


def test_nothing_made_is_nothing_grown():
    with watched() as watch:
        sum(range(1000))
    assert watch.growth < 4 << 20


def test_last_run_shows_the_growth_beside_the_prediction():
    """A 40 MB result gathered into this process: the run grew by at least that, and the
    report reads ``peak RSS +... (predicted ...)``."""
    x = la.random.random((5000, 1000), chunks=(500, 1000), seed=1)
    with la.config.set({"memory-limit": "512MiB"}):
        (x * 2).compute(executor="numba")  # kernels compiled (LLVM's memory) or loaded
        got = (x * 2).compute(executor="numba")
    run = la.last_run()
    assert run.stats.rss_growth >= got.nbytes
    assert run.predicted_peak >= run.stats.rss_growth
    head = repr(run).splitlines()[0]
    assert "peak RSS +" in head and "(predicted " in head and "blocks held" in head

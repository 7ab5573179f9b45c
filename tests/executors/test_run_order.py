"""The order local executors run ready tasks in keeps few blocks waiting (optimize/schedule.py).

Before: the numba executor took the deepest stage's ready task first. For
``(map_blocks(sin, x) + map_blocks(cos, x)).sum(axis=1)`` it ran every block
of the second ``map_blocks`` before the first began, so all of them waited
for their partners: under ``memory-limit: 400MiB`` the process grew by 5 GiB.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lazyarr as la
from lazyarr.optimize.schedule import depth_first_ranks

ROWS, COLS, BLOCK_ROWS = 40 * 16, 4000, 16  # 40 blocks of 0.5 MB


@pytest.fixture(autouse=True)
def _compiled_small_blocks():
    """Numba kernels at these sizes, the blocks as written (not merged by reblock), and a
    limit: under one, the random source is made anew in each reader, so both map_blocks
    stages are ready at once (without one, the source's tasks paced them)."""
    settings = {"numba.compile-threshold": 0, "array.min-chunk-size": 0, "memory-limit": "16MiB"}
    with la.config.set(settings):
        yield


def _sin(block: np.ndarray) -> np.ndarray:
    return np.sin(block)  # a Python function: its own stage (a ufunc would be fused)


def _cos(block: np.ndarray) -> np.ndarray:
    return np.cos(block)


def _two_stored_stages(kind: str):
    x = la.random.random((ROWS, COLS), chunks=(BLOCK_ROWS, -1), seed=5)
    a = la.map_blocks(_sin, x, dtype=x.dtype)
    c = la.map_blocks(_cos, x, dtype=x.dtype)
    y = a + c
    return x, (y.sum(axis=1) if kind == "rows" else y.sum())


@pytest.mark.parametrize("kind", ["rows", "all"])
@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_a_task_reading_two_stored_stages_does_not_wait_for_a_whole_stage(executor, kind):
    x, y = _two_stored_stages(kind)
    xs = x.compute(memory_limit="1GiB")  # the reference, gathered whole
    want = np.sin(xs) + np.cos(xs)
    want = want.sum(axis=1) if kind == "rows" else want.sum()
    np.testing.assert_allclose(y.compute(executor=executor), want, rtol=1e-10)
    block = BLOCK_ROWS * COLS * 8
    held = la.last_run().stats.peak_bytes
    # two threads, each with its pair of blocks and one more made: a few blocks, never the
    # 40 of a whole stage (before: 41 blocks held, 20.5 MB under the 16 MiB limit)
    assert held <= 6 * block, held / block


def test_the_depth_first_order_makes_each_block_pair_before_the_next():
    _, y = _two_stored_stages("rows")
    ready = la.api._prepare([y._expr], "numba", None, None)
    graph = ready.graph
    ranks = depth_first_ranks(graph)
    assert ranks is not None and sorted(ranks) == list(range(len(graph.tasks)))
    for tid, task in enumerate(graph.tasks):
        assert all(ranks[d] < ranks[tid] for d in task.deps)  # inputs before their readers
    # each pair's reader runs before either map_blocks stage makes the next pair
    readers = [
        t
        for t, task in enumerate(graph.tasks)
        if len({graph.tasks[d].stage for d in task.deps} - {task.stage}) == 2
    ]
    assert len(readers) == ROWS // BLOCK_ROWS
    readers.sort(key=lambda t: ranks[t])
    for before, after in itertools.pairwise(readers):
        assert min(ranks[d] for d in graph.tasks[after].deps) > ranks[before]


def test_a_chain_keeps_the_deepest_stage_first_order():
    """A chain of stages (each task reads one stored stage) streams in the old order: no
    walk is made for it (it costs a pass over every task)."""
    x = la.random.random((ROWS, COLS), chunks=(BLOCK_ROWS, -1), seed=5)
    y = la.map_blocks(_sin, x, dtype=x.dtype).sum()
    graph = la.api._prepare([y._expr], "numba", None, None).graph
    assert depth_first_ranks(graph) is None


def test_under_a_limit_the_process_grows_less_than_the_limit():
    """Measured: the resident set the run added (sampled while it ran, with the kernel's
    high-water mark) stays under the limit; before, the whole second stage (20 MB here,
    5 GiB in the report) waited."""
    x = la.random.random((ROWS * 4, COLS), chunks=(BLOCK_ROWS * 4, -1), seed=5)
    y = (la.map_blocks(_sin, x, dtype=x.dtype) + la.map_blocks(_cos, x, dtype=x.dtype)).sum()
    with la.config.set({"memory-limit": "24MiB"}):
        y.compute(executor="numba")  # compiles (or loads) the kernels: not measured
        y.compute(executor="numba")
    run = la.last_run()
    assert run.predicted_peak is not None and run.predicted_peak <= 24 * 2**20
    assert run.stats.rss_growth is not None and run.stats.rss_growth < 24 * 2**20
    assert run.stats.peak_bytes <= run.predicted_peak


@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_a_long_reduction_with_large_partials_combines_them_as_they_are_made(executor):
    """40 partial states of 0.56 MiB per output block: combined 16 at a time as they are made
    (before: one finalize read all 40, kept until the last; the quadratic-means benchmark kept
    44 x 3 of 1 MiB), the mean and the standard deviation computed in one pass."""
    x = la.random.random((80, 192, 192), chunks=(2, 192, 192), seed=6)
    xs = x.compute(memory_limit="1GiB")
    mean, std = la.mean(x, axis=0), la.std(x, axis=0)
    with la.config.set({"memory-limit": "64MiB"}):
        graph = la.api._prepare([mean._expr, std._expr], executor, None, None).graph
        got_mean, got_std = la.compute(mean, std, executor=executor)
    kinds = graph.kinds()
    assert kinds.get("COMBINE", 0) >= 2 * 3  # per statistic: groups of 16, then their fold
    np.testing.assert_allclose(got_mean, xs.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(got_std, xs.std(axis=0), rtol=1e-10)
    # a joint task's value: the mean's state (sum, count) and the variance's (count, mean,
    # squared deviations), 192 x 192 each; before, all 40 were kept for the finalizes
    value = (2 + 3) * 192 * 192 * 8
    # now a group being filled, the combined groups and those in flight (measured: 26)
    assert la.last_run().stats.peak_bytes < 40 * value * 0.8


@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_sixteen_large_partials_fold_four_at_a_time(executor):
    """16 partial states per output block, within the fan-in of 16 but 2.8 MiB together per
    statistic: folded 4 at a time, which keeps about 9 of them (before: one finalize read all
    16; the memory benchmark's mean and std of a zarr store were refused under 64 MiB)."""
    from lazyarr.optimize.memory import kept_parts
    from lazyarr.optimize.placement.planner import fold_width

    x = la.random.random((32, 192, 192), chunks=(2, 192, 192), seed=8)
    xs = x.compute(memory_limit="1GiB")
    mean, std = la.mean(x, axis=0), la.std(x, axis=0)
    with la.config.set({"memory-limit": "64MiB"}):
        ready = la.api._prepare([mean._expr, std._expr], executor, None, None)
        got_mean, got_std = la.compute(mean, std, executor=executor)
    reduces = [s for s in ready.plan.stages.values() if s.kind == "reduce"]
    assert [(fold_width(s, 16), kept_parts(s, 16)) for s in reduces] == [(4, 9)] * 2
    assert ready.graph.kinds().get("COMBINE", 0) == 2 * (4 + 1)  # per statistic
    np.testing.assert_allclose(got_mean, xs.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(got_std, xs.std(axis=0), rtol=1e-10)
    value = (2 + 3) * 192 * 192 * 8  # a joint task's value: both statistics' states
    assert la.last_run().stats.peak_bytes < 16 * value * 0.8


def test_scalar_partials_stay_in_one_finalize():
    """A sum of 1,000 tiny blocks keeps its scalar partials for one finalize: combining them
    16 at a time would cost a task per 16 blocks and save nothing."""
    x = la.random.random(4000, chunks=4, seed=7)
    graph = la.api._prepare([x.sum()._expr], "numba", None, None).graph
    assert "COMBINE" not in graph.kinds() and graph.kinds()["FINALIZE"] == 1

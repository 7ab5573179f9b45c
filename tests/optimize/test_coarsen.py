"""Tiny blocks merged: generated and in-memory sources under ``array.min-chunk-size``.

A block costs tens of microseconds of bookkeeping whatever its size, so the
reblock pass merges runs of whole blocks of sources whose values do not
depend on their blocks. Values never change; boundaries only disappear.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import chunks_for_shape

import lazyarr as la
from lazyarr import api, config
from lazyarr.optimize.lower import lower
from lazyarr.optimize.passes.reblock import coarse_chunks
from lazyarr.optimize.tasks import TaskKind


@pytest.fixture
def merge_under():
    """Switch the merging on (the test suite runs blocks as written)."""

    def setting(size):
        return config.set({"array.min-chunk-size": size})

    return setting


def source_chunks(plan):
    return [s.expr.chunks for s in plan.stages.values() if s.kind == "source"]


def test_coarse_chunks_merges_whole_blocks_last_axis_first():
    assert coarse_chunks(((100,) * 10,), 8, 4000) == ((500, 500),)
    assert coarse_chunks(((100,) * 10,), 8, 1 << 30) == ((1000,),)
    # last axis first, then the one before it
    assert coarse_chunks(((2,) * 6, (3,) * 4), 8, 8 * 2 * 12) == ((2,) * 6, (12,))
    assert coarse_chunks(((2,) * 6, (3,) * 4), 8, 8 * 4 * 12) == ((4, 4, 4), (12,))
    # uneven and empty blocks: sums of runs, boundaries only disappear
    assert coarse_chunks(((3, 0, 5, 1),), 1, 8) == ((3, 6),)
    assert coarse_chunks(((7,),), 8, 10**6) == ((7,),)


def test_tiny_random_blocks_are_merged_and_values_stay(merge_under):
    x = la.random.random(200_000, chunks=100, seed=3)
    want = la.random.random(200_000, chunks=200_000, seed=3).compute()
    y = la.sin(x).sum()
    with merge_under("1MiB"):
        plan = api.make_plan([y._expr], "numba", api.passes_for(None, None))
        ((c,),) = source_chunks(plan)
        assert len(c) == 2 and sum(c) == 200_000  # 2,000 blocks of 800 B -> 2 of ~1 MiB
        assert "merged" in plan.notes["reblock"][next(iter(plan.notes["reblock"]))]
        for ex in ("numpy", "numba"):
            np.testing.assert_allclose(y.compute(executor=ex), np.sin(want).sum(), rtol=1e-10)
            assert la.last_run().stats.blocks <= 3


def test_arrays_that_shared_a_grid_still_line_up(merge_under):
    a = np.arange(60_000.0).reshape(300, 200)
    x = la.asarray(a, chunks=(10, 10))
    y = la.asarray(a * 2, chunks=(10, 10))
    with merge_under("64KiB"):
        plan = api.make_plan([(x + y)._expr], "numpy", api.passes_for(None, None))
        first, second = source_chunks(plan)
        assert first == second and first != x.chunks
        (s,) = [s for s in plan.stages.values() if s.kind != "source"]
        assert s.expr.chunks == first  # no finer grid downstream
        np.testing.assert_array_equal((x + y).compute(executor="numba"), a * 3)


def test_sources_behind_an_op_without_a_chunk_rule_keep_their_blocks(merge_under):
    x = la.asarray(np.arange(10_000.0), chunks=100)
    with merge_under("1MiB"):
        plan = api.make_plan([la.cumsum(x)._expr], "numpy", api.passes_for(None, None))
        assert source_chunks(plan) == [x.chunks]
        np.testing.assert_array_equal(la.cumsum(x).compute(), np.cumsum(np.arange(10_000.0)))


def test_zero_keeps_every_block(merge_under):
    x = la.random.random(1000, chunks=10, seed=1)
    with merge_under(0):
        plan = api.make_plan([x.sum()._expr], "numpy", api.passes_for(None, None))
        assert source_chunks(plan) == [x.chunks]


def test_the_default_merges_below_one_mib(merge_under):
    import importlib.resources

    import yaml

    defaults = yaml.safe_load(
        importlib.resources.files("lazyarr").joinpath("config.yaml").read_text()
    )
    assert defaults["array"]["min-chunk-size"] == "1MiB"
    with merge_under(defaults["array"]["min-chunk-size"]):
        x = la.ones(10**6, chunks=1000)  # 1,000 blocks of 8 kB
        plan = api.make_plan([x.sum()._expr], "numba", api.passes_for(None, None))
        assert lower(plan).kinds()[TaskKind.SOURCE.name] == 8


@given(
    st.lists(st.integers(0, 9), min_size=1, max_size=3).flatmap(
        lambda shape: st.tuples(st.just(tuple(shape)), chunks_for_shape(tuple(shape)))
    ),
    st.integers(1, 400),
)
def test_merged_blocks_give_numpys_values(shape_chunks, min_bytes):
    shape, chunks = shape_chunks
    a = np.arange(int(np.prod(shape)), dtype=float).reshape(shape) - 7
    with config.set({"array.min-chunk-size": min_bytes}):
        x = la.asarray(a, chunks=chunks)
        r = la.random.random(shape, chunks=chunks, seed=5)
        want_r = la.random.random(shape, chunks=-1, seed=5).compute(executor="numpy")
        for ex in ("numpy", "numba"):
            got = la.compute((x * 2 + r).sum(axis=0) if a.ndim else x * 2 + r, executor=ex)[0]
            want = (a * 2 + want_r).sum(axis=0) if a.ndim else a * 2 + want_r
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

"""Chunk normalisation and block-range arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.graph.chunks import (
    auto_chunks,
    block_slices,
    blocks_in_range,
    normalize_chunks,
    offsets,
    regular_chunks,
)


def test_regular_chunks():
    assert regular_chunks(10, 4) == (4, 4, 2)
    assert regular_chunks(8, 4) == (4, 4)
    assert regular_chunks(0, 4) == (0,)


@pytest.mark.parametrize(
    ("spec", "shape", "want"),
    [
        (2, (5, 3), ((2, 2, 1), (2, 1))),
        ((2, -1), (5, 3), ((2, 2, 1), (3,))),
        ((None, 2), (5, 3), ((5,), (2, 1))),
        (((1, 4), (3,)), (5, 3), ((1, 4), (3,))),
        ({0: 2}, (5, 3), ((2, 2, 1), (3,))),
        ((), (), ()),
        ((2,), (0,), ((0,),)),
    ],
)
def test_normalize_chunks(spec, shape, want):
    assert normalize_chunks(spec, shape, 8, 1 << 20) == want


@pytest.mark.parametrize("spec", [((1, 3), (3,)), (2,), "big", ((1, -1, 5), (3,)), (0, 3)])
def test_bad_chunks_raise_value_error(spec):
    with pytest.raises(ValueError):
        normalize_chunks(spec, (5, 3), 8, 1 << 20)


def test_auto_chunks_keep_rows_whole_and_respect_the_limit():
    chunks = auto_chunks((100_000, 1000), 8, 64 << 20)
    assert chunks[1] == (1000,)
    assert max(chunks[0]) * 1000 * 8 <= 64 << 20
    assert sum(chunks[0]) == 100_000
    # balanced: blocks differ by at most the remainder block
    assert len(set(chunks[0][:-1])) == 1


@given(
    st.lists(st.integers(0, 50), min_size=0, max_size=4),
    st.integers(1, 4096),
)
def test_auto_chunks_cover_the_shape(shape, limit):
    chunks = auto_chunks(tuple(shape), 8, limit)
    assert tuple(sum(c) for c in chunks) == tuple(shape)
    for c, n in zip(chunks, shape):
        assert all(b > 0 for b in c) or n == 0


@given(st.lists(st.integers(0, 5), min_size=1, max_size=6), st.data())
def test_blocks_in_range_finds_exactly_the_overlapping_blocks(blocks, data):
    blocks = tuple(blocks)
    n = sum(blocks)
    start = data.draw(st.integers(0, n))
    stop = data.draw(st.integers(start, n))
    o = offsets(blocks)
    got = list(blocks_in_range(blocks, start, stop))
    want = [i for i in range(len(blocks)) if o[i] < stop and o[i + 1] > start]
    if stop > start:
        assert got == want
    else:
        assert len(got) == 1


def test_block_slices():
    assert block_slices(((2, 2, 1), (3,)), (2, 0)) == (slice(4, 5), slice(0, 3))


def test_a_grid_of_too_many_blocks_is_refused_before_it_is_built():
    """``la.ones((10**9,), chunks=1)`` took 2.2 GB and then MemoryError just to be written."""
    import tracemalloc

    import lazyarr as la
    from lazyarr.graph.chunks import MAX_BLOCKS

    tracemalloc.start()
    try:
        for n in (10**8, 10**9):
            with pytest.raises(ValueError, match=f"into {n:,} blocks"):
                la.ones((n,), chunks=1)
        with pytest.raises(ValueError, match="blocks"):
            la.zeros((10**5, 10**5), chunks=(10, 10))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # no grid was built
    assert la.ones((MAX_BLOCKS,), chunks=10).numblocks == (MAX_BLOCKS // 10,)


def test_a_1d_arrays_block_lengths_may_be_given_flat_as_dask_reads_them():
    """flox's tests give ``chunks=(4, 8, 4, 9, 4)`` for a 1-d array of 29 elements."""
    from dask.array.core import normalize_chunks as dask_normalize

    for spec in [(4, 8, 4, 9, 4), (4, 8)]:
        shape = (sum(spec),)
        assert normalize_chunks(spec, shape, 8, 1 << 20) == dask_normalize(spec, shape=shape)
    with pytest.raises(ValueError):
        normalize_chunks((4, 8), (13,), 8, 1 << 20)  # the lengths must add up
    x = la.from_array(np.arange(29.0), chunks=(4, 8, 4, 9, 4))
    assert x.chunks == ((4, 8, 4, 9, 4),)
    np.testing.assert_array_equal(x.compute(executor="numpy"), np.arange(29.0))

"""``assemble``: any region of an array cut from its blocks equals the same slice of the
whole array, whether it lies inside one block (a view), spans blocks along one axis (one
concatenate) or several (``np.block``); chunkings with empty blocks included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lazyarr.graph.chunks import block_index_iter, block_slices
from lazyarr.kernels.blocks import assemble


@st.composite
def chunked(draw: st.DrawFn) -> tuple[tuple[tuple[int, ...], ...], tuple[slice, ...]]:
    ndim = draw(st.integers(1, 3))
    chunks = tuple(
        tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))) for _ in range(ndim)
    )
    region = []
    for c in chunks:
        n = sum(c)
        start = draw(st.integers(0, n))
        region.append(slice(start, draw(st.integers(start, n))))
    return chunks, tuple(region)


@settings(max_examples=300, deadline=None)
@given(case=chunked())
def test_assemble_equals_the_slice_of_the_whole(case):
    chunks, region = case
    shape = tuple(sum(c) for c in chunks)
    whole = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    blocks = {
        idx: whole[block_slices(chunks, idx)]
        for idx in block_index_iter(tuple(len(c) for c in chunks))
    }
    got = assemble(chunks, region, blocks.__getitem__)
    np.testing.assert_array_equal(got, whole[region])
    assert got.shape == whole[region].shape


def test_a_region_inside_one_block_is_a_view_of_it():
    whole = np.arange(40).reshape(8, 5)
    chunks = ((3, 0, 5), (2, 3))
    blocks = {idx: whole[block_slices(chunks, idx)].copy() for idx in block_index_iter((3, 2))}
    got = assemble(chunks, (slice(4, 7), slice(2, 4)), blocks.__getitem__)
    assert np.shares_memory(got, blocks[(2, 1)])
    np.testing.assert_array_equal(got, whole[4:7, 2:4])
    assert assemble(chunks, (slice(3, 8), slice(2, 5)), blocks.__getitem__) is blocks[(2, 1)]

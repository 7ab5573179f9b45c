"""``la.shuffle`` (dask's signature) and xarray's ``GroupBy.shuffle_to_chunks`` on lazyarr.

Values against NumPy's ``take`` of the concatenated groups, block lengths
against dask's packing rule (groups never split), and the all-to-all first
step staged through a scratch store under a small memory limit.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.namespace.shuffle import packed_chunks
from lazyarr.testing import executors_under_test

EXECUTORS = executors_under_test()


def test_dask_docstring_example():
    arr = np.array([[1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15, 16]])
    y = la.shuffle(la.asarray(arr, chunks=(2, 4)), [[6, 5, 2], [4, 1], [3, 0, 7]], axis=1)
    assert y.chunks == ((2,), (5, 3))  # the first two groups share a block, as in dask
    np.testing.assert_array_equal(y.compute(), arr[:, [6, 5, 2, 4, 1, 3, 0, 7]])


@st.composite
def _case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)))
    axis = draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    order = draw(st.permutations(range(n)))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, n - 1)), max_size=4))) if n > 1 else []
    edges = [0, *cuts, n]
    groups = [list(order[a:b]) for a, b in itertools.pairwise(edges) if b > a]
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    return shape, axis, groups, chunks


@pytest.mark.parametrize("executor", EXECUTORS)
@settings(max_examples=25, deadline=None)
@given(case=_case(), dtype=st.sampled_from(["f8", "i4", "?"]))
def test_shuffle_equals_numpy_take(executor, case, dtype):
    shape, axis, groups, chunks = case
    a = (np.arange(np.prod(shape)).reshape(shape) % 7).astype(dtype)
    y = la.shuffle(la.asarray(a, chunks=chunks), groups, axis)
    want = np.take(a, np.concatenate(groups), axis=axis)
    np.testing.assert_array_equal(y.compute(executor=executor), want)
    assert y.dtype == a.dtype
    # every group lies inside one block along the axis
    bounds = np.cumsum((0, *y.chunks[axis]))
    start = 0
    for g in groups:
        first = np.searchsorted(bounds, start, side="right")
        last = np.searchsorted(bounds, start + len(g) - 1, side="right")
        assert first == last
        start += len(g)


def test_packed_chunks_never_split_a_group():
    assert packed_chunks([3, 2, 3], 4) == (5, 3)
    assert packed_chunks([10, 1, 1], 4) == (10, 2)
    assert packed_chunks([], 4) == (0,)


def test_bad_input_raises_when_written():
    x = la.ones((4, 5), chunks=2)
    with pytest.raises(IndexError, match="out of bounds"):
        la.shuffle(x, [[0, 5]], axis=1)
    with pytest.raises(np.exceptions.AxisError):
        la.shuffle(x, [[0]], axis=2)
    with pytest.raises(TypeError, match="axis must be an integer"):
        la.shuffle(x, [[0]], axis=1.0)


def test_xarray_shuffle_to_chunks_on_lazyarr():
    pd = pytest.importorskip("pandas")
    xr = pytest.importorskip("xarray")
    t = pd.date_range("2000-01-01", periods=400)
    a = np.random.default_rng(0).random((400, 6))
    ds = xr.Dataset({"a": (("time", "x"), a)}, coords={"time": t})
    lazy = ds.chunk({"time": 40}, chunked_array_type="lazyarr")
    shuffled = lazy.groupby("time.month").shuffle_to_chunks()
    assert isinstance(shuffled.a.data, la.LazyArray)
    want = ds.groupby("time.month").shuffle_to_chunks()
    np.testing.assert_array_equal(shuffled.a.values, want.a.values)
    months = shuffled.time.dt.month.values
    bounds = np.cumsum((0, *shuffled.a.data.chunks[0]))
    block_of: dict[int, int] = {}
    for i, (lo, hi) in enumerate(itertools.pairwise(bounds)):  # a month never spans two blocks
        for m in set(months[lo:hi].tolist()):
            assert block_of.setdefault(m, i) == i


def test_shuffle_under_a_small_limit_goes_through_a_scratch_store(tmp_path):
    """Whole-axis blocks from maps and back: both rechunks are all-to-all, staged under 6 MiB."""
    rng = np.random.default_rng(1)
    a = rng.random((256, 64, 64))  # 8 MiB in 32 maps of 8 time steps
    groups = [list(range(k, 256, 12)) for k in range(12)]
    scratch = tmp_path / "scratch"
    with la.config.set({"memory-limit": "6MiB", "temporary-directory": str(scratch)}):
        y = la.shuffle(la.asarray(a, chunks=(8, 64, 64)), groups, axis=0)
        got = y.sum(axis=(1, 2)).compute()
    np.testing.assert_allclose(got, a[np.concatenate(groups)].sum(axis=(1, 2)))
    assert scratch.exists() and list(scratch.iterdir()) == []

"""The vectorized tree combine (one ufunc call per level) equals the pairwise one, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lazyarr.kernels import blocks
from lazyarr.kernels.blocks import tree_combine


def _counted(ufunc, calls: list):
    """``ufunc`` as a pairwise combine that notes each of its calls."""

    def combine(a, b):
        calls.append(1)
        return ufunc(a, b)

    return combine


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 300),
    width=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    ufunc=st.sampled_from([np.add, np.multiply, np.minimum, np.fmax]),
)
def test_stacked_levels_equal_the_pairwise_tree(n, width, seed, ufunc):
    rng = np.random.default_rng(seed)
    items = [rng.standard_normal(width) * 10.0 ** rng.integers(-12, 12) for _ in range(n)]
    if seed % 3 == 0:
        items[rng.integers(n)][0] = np.nan
    pairwise_calls: list = []
    want = tree_combine(list(items), _counted(ufunc, pairwise_calls))
    stacked_calls: list = []
    got = tree_combine(list(items), _counted(ufunc, stacked_calls), ufunc)
    assert len(pairwise_calls) == n - 1
    assert len(stacked_calls) == (n - 1 if n <= 2 else 0)  # more than two: stacked
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype and got.shape == want.shape


def test_integer_and_bool_states_keep_their_dtype():
    ints = [np.array([i], dtype=np.int32) for i in range(7)]
    assert tree_combine(ints, np.add, np.add).dtype == np.int32
    flags = [np.array([i % 3 == 0]) for i in range(9)]
    assert tree_combine(flags, np.bitwise_or, np.bitwise_or).tolist() == [True]


def test_mixed_large_or_missing_items_are_combined_pair_by_pair(monkeypatch):
    calls: list = []
    mixed = [np.ones(2), np.ones(2, dtype=np.float32), np.ones(2)]
    assert tree_combine(mixed, _counted(np.add, calls), np.add).tolist() == [3.0, 3.0]
    assert len(calls) == 2
    monkeypatch.setattr(blocks, "STACK_MAX_BYTES", 16)
    calls.clear()
    tree_combine([np.ones(2)] * 3, _counted(np.add, calls), np.add)
    assert len(calls) == 2
    calls.clear()
    tree_combine([np.ones(2), None, np.ones(2)], lambda a, b: calls.append(1) or a, np.add)
    assert len(calls) == 2

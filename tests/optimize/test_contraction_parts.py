"""Partial products of tiny blocks are merged: a contraction over many small contracted
blocks runs one part per ~PART_MIN_BYTES of input, not one per block, with the same
values on every executor (tests elsewhere run parts as written: see conftest)."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest

import lazyarr as la
from lazyarr.graph.blockrules import n_contraction_parts, region_parts

RNG = np.random.default_rng(7)


def test_parts_of_tiny_blocks_are_merged_up_to_the_byte_threshold(parts_merged):
    a = RNG.random((40, 10 * 300))
    x = la.asarray(a, chunks=10)
    mm = (x @ x.T)._expr
    parts_merged(0)
    assert n_contraction_parts(mm) == 300  # one per contracted block
    # a part reads 10 rows of x and 10 columns of x.T per contracted column: 160 bytes
    parts_merged(160 * 10 * 7)
    assert n_contraction_parts(mm) == math.ceil(300 / 7)
    parts = region_parts(mm, (slice(0, 10), slice(10, 20)))
    spans = [(r[0][1].start, r[0][1].stop) for r in parts]
    assert spans[0] == (0, 70) and spans[-1] == (2940, 3000)
    assert all(b == c for (_, b), (c, _) in pairwise(spans))  # no gap, no overlap
    parts_merged(1 << 20)
    assert n_contraction_parts(mm) == 1  # 480 kB of input in all


@pytest.mark.parametrize("executor", ["numpy", "numba"])
@pytest.mark.parametrize("threshold", [0, 500, 4000, 1 << 20])
def test_merged_parts_equal_numpy_on_uneven_chunks(parts_merged, executor, threshold):
    parts_merged(threshold)
    a = RNG.standard_normal((7, 53))
    b = RNG.standard_normal((53, 5))
    c = RNG.standard_normal((53, 4, 3))
    k = (3, 11, 1, 7, 9, 2, 20)
    x = la.asarray(a, chunks=((3, 4), k))
    y = la.asarray(b, chunks=(k[::-1], 5))
    z = la.asarray(c, chunks=((5, 48), 2, 3))
    with la.config.set({"numba.compile-threshold": 0}):
        got = la.compute(
            x @ y,
            la.sin(x) @ y.T.T,
            la.tensordot(x, z, axes=(1, 0)),
            la.einsum("ik,kj->ij", x, y),
            executor=executor,
        )
    want = [a @ b, np.sin(a) @ b, np.tensordot(a, c, axes=(1, 0)), a @ b]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_merged_parts_on_the_dask_executor(parts_merged, dask_ex):
    parts_merged(4000)
    a = RNG.standard_normal((12, 90))
    x = la.asarray(a, chunks=(6, 10))
    got = (x @ x.T).compute(executor="dask")
    assert la.last_run().executor == "dask"
    np.testing.assert_allclose(got, a @ a.T, rtol=1e-12)

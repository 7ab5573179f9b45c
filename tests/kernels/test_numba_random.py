"""The compiled random source (floats, integers) against the reference kernel: bit-identical.

Both draw each element from the Philox words at its own flat index, so every
region of every shape must give exactly the reference's values, whichever
executor path (a source task or a reader cutting it in place) asks.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.graph.ops.creation import Random
from lazyarr.kernels import numba_random
from lazyarr.kernels.compile import Options
from lazyarr.kernels.numba_set import NumbaKernels
from lazyarr.kernels.reference import kernel_for
from lazyarr.kernels.sets import ReferenceKernels


def _expr(shape, dtype=np.float64, seed=7):
    return la.random.random(shape, seed=seed, dtype=dtype)._expr


@st.composite
def shape_and_region(draw):
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=0, max_size=3)))
    region = []
    for n in shape:
        a = draw(st.integers(0, n))
        b = draw(st.integers(a, n))
        region.append(slice(a, b))
    return shape, tuple(region)


@settings(max_examples=60, deadline=None)
@given(shape_and_region(), st.sampled_from([np.float64, np.float32]), st.integers(0, 2**40))
def test_every_region_equals_the_reference_bit_for_bit(case, dtype, seed):
    shape, region = case
    expr = _expr(shape, dtype, seed)
    assert numba_random.supports(expr)
    got = numba_random.random_source(expr, Options())(region)
    want = kernel_for(expr.op)(expr.op, expr, region)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def test_far_positions_and_counter_boundaries():
    # a 1-d array long enough that its words reach counters above 2**32; regions that
    # start and stop inside one counter's four words
    expr = _expr((2**36,))
    draw = numba_random.random_source(expr, Options())
    ref = kernel_for(expr.op)
    for a, b in [(0, 1), (1, 3), (3, 9), (2**34 + 1, 2**34 + 6), (2**36 - 5, 2**36)]:
        r = (slice(a, b),)
        np.testing.assert_array_equal(draw(r), ref(expr.op, expr, r))


def test_other_draws_are_left_to_the_reference_kernel():
    assert not numba_random.supports(la.random.normal(size=(4,), seed=1)._expr)
    assert not numba_random.supports(la.random.poisson(3.0, size=(4,), seed=1)._expr)
    assert not numba_random.supports(la.random.random((4, 5), seed=1).T._expr)
    assert not numba_random.supports(la.ones(3)._expr)
    flipped = la.random.random((10,), seed=1)[::-1]
    plan = la.plan(flipped, executor="numpy")
    windowed = [s.expr for s in plan.stages.values() if isinstance(s.expr.op, Random)]
    assert windowed and not any(numba_random.supports(e) for e in windowed)


def test_numba_kernel_set_compiles_random_sources_only_above_the_threshold():
    expr = _expr((1000,))
    fast = NumbaKernels(Options(), min_bytes=0).generate(expr)
    slow = NumbaKernels(Options(), min_bytes=10**9).generate(expr)
    ref = ReferenceKernels().generate(expr)
    r = (slice(3, 997),)
    np.testing.assert_array_equal(fast(r), ref(r))
    np.testing.assert_array_equal(slow(r), ref(r))
    assert fast.__module__ == numba_random.__name__
    assert slow.__module__ != numba_random.__name__


_DRAWS = {
    "random64": lambda shape, seed: la.random.random(shape, seed=seed),
    "uniform32": lambda shape, seed: la.random.uniform(
        np.float32(-1.5), 3, shape, seed=seed, dtype=np.float32
    ),
    "uniform64": lambda shape, seed: la.random.uniform(-(10**20), 7, shape, seed=seed),
    "int64": lambda shape, seed: la.random.integers(-5, 10**6, shape, seed=seed),
    "int8": lambda shape, seed: la.random.integers(-128, 127, shape, seed=seed, dtype=np.int8),
    "uint16": lambda shape, seed: la.random.integers(3, 9, shape, seed=seed, dtype=np.uint16),
    "full int64": lambda shape, seed: la.random.integers(
        -(2**63), 2**63 - 1, shape, seed=seed, endpoint=True
    ),
    "full uint64": lambda shape, seed: la.random.integers(
        0, 2**64 - 1, shape, seed=seed, dtype=np.uint64, endpoint=True
    ),
}


@settings(max_examples=60, deadline=None)
@given(shape_and_region(), st.sampled_from(sorted(_DRAWS)), st.integers(0, 2**40))
def test_uniform_and_integer_draws_equal_the_reference_bit_for_bit(case, draw, seed):
    shape, region = case
    expr = _DRAWS[draw](shape, seed)._expr
    assert numba_random.supports(expr)
    got = numba_random.random_source(expr, Options())(region)
    want = kernel_for(expr.op)(expr.op, expr, region)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


@settings(max_examples=30, deadline=None)
@given(
    shape=st.sampled_from([(3000,), (40, 90), (7, 13, 30)]),
    data=st.data(),
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_large_regions_equal_the_reference(shape, data, dtype):
    # regions of thousands of elements: runs over many counters, rows that start and
    # stop inside a counter's four words
    expr = _expr(shape, dtype)
    region = tuple(
        slice(lo, data.draw(st.integers(lo, n), label="stop"))
        for n in shape
        for lo in [data.draw(st.integers(0, n), label="start")]
    )
    got = numba_random.random_source(expr, Options())(region)
    assert got.dtype == dtype and got.shape == tuple(s.stop - s.start for s in region)
    np.testing.assert_array_equal(got, ReferenceKernels().generate(expr)(region))


@pytest.mark.parametrize("chunks", [1, 7, 100, (3, 5), -1])
def test_random_values_do_not_depend_on_chunks_or_executor(chunks):
    shape = (37,) if not isinstance(chunks, tuple) else (13, 11)
    want = la.random.random(shape, seed=3, chunks=-1).compute(executor="numpy")
    x = la.random.random(shape, seed=3, chunks=chunks)
    for ex in ("numba", "numpy"):
        np.testing.assert_array_equal(x.compute(executor=ex), want)
        np.testing.assert_allclose((x * 2 + 1).sum().compute(executor=ex), (want * 2 + 1).sum())

"""The sample sort's compiled counts against the NumPy ones: the same rows.

Rows count, per candidate, the elements of a sorted block with smaller keys
(values in NumPy's order: NaN last, equal NaNs and signed zeros ties; equal
values by block). Then the whole sort on the numba executor,
whose counts stage gets the compiled search.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import api
from lazyarr.graph.ops.samplesort import SampleSortStage
from lazyarr.kernels import numba_samplesort
from lazyarr.kernels.compile import Options
from lazyarr.kernels.emit_ops import Unsupported
from lazyarr.kernels.numba_set import NumbaKernels
from lazyarr.kernels.reference.samplesort import line_counts

POOLS = {
    "float64": np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf, -np.inf]),
    "float32": np.array([0.0, -0.0, np.nan, 2.5, -1.0, np.inf], dtype=np.float32),
    "int64": np.arange(-2, 3),
    "uint8": np.arange(4, dtype=np.uint8),
    "bool": np.array([False, True]),
}


@pytest.mark.parametrize("dtype", sorted(POOLS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_compiled_counts_equal_the_reference(dtype, data):
    # blocks of 0, 1 or more elements from a pool of ties (signed zeros, NaNs); every
    # block's row against every candidate, own samples included
    pool = POOLS[dtype]
    seed = data.draw(st.integers(0, 2**32 - 1))
    rows = tuple(data.draw(st.lists(st.integers(0, 40), min_size=1, max_size=6)))
    k = data.draw(st.integers(1, 12))
    rng = np.random.default_rng(seed)
    lines = [np.sort(rng.choice(pool, b), kind="stable") for b in rows]
    samples = np.concatenate([v[:: -(-v.size // k)] if v.size else v for v in lines] + [pool[:0]])
    candidates = np.argsort(samples, kind="stable").astype(np.intp)
    op = SampleSortStage(part="counts", rows=rows, k=k)
    counts = numba_samplesort.line_counts_function(pool.dtype, Options())
    for i, line in enumerate(lines):
        line.setflags(write=False)  # blocks from Dask are read-only
        want = line_counts(op, i, line, samples, candidates)
        np.testing.assert_array_equal(counts(op, i, line, samples, candidates), want)


def test_other_dtypes_keep_the_reference_counts():
    with pytest.raises(Unsupported, match="float16"):
        numba_samplesort.line_counts_function(np.dtype(np.float16), Options())


def test_numba_executor_compiles_the_counts_stage_and_sorts_like_numpy():
    x = np.random.default_rng(3).integers(0, 50, 40_000).astype(np.float64)
    x[::7] = np.nan
    x[1::11] = -0.0
    a = la.asarray(x, chunks=5_000)
    plan = api.make_plan([la.sort(a)._expr], "numba", ())
    counts = [s for s in plan.stages.values() if s.expr.op.label() == "samplesort.counts"]
    assert len(counts) == 1 and numba_samplesort.supports(counts[0])
    kernels = NumbaKernels(Options())
    kernels.map(counts[0])
    assert kernels.compiled == [counts[0].name]
    got = la.sort(a).compute(executor="numba")
    assert got.tobytes() == np.sort(x, kind="stable").tobytes()
    idx = la.argsort(a).compute(executor="numba")
    np.testing.assert_array_equal(idx, np.argsort(x, kind="stable"))


ND_POOLS = {
    "float64": np.array([0.0, -0.0, np.nan, -np.nan, 1.5, -2.0, np.inf]),
    "int32": np.arange(-2, 3, dtype=np.int32),
    "bool": np.array([False, True]),
}


@pytest.mark.parametrize("dtype", sorted(ND_POOLS))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_compiled_stages_sort_any_shape_like_numpy(dtype, data):
    # the numba executor with every stage compiled (no small-plan shortcut): sort and
    # argsort along any axis of 1 to 3 dimensions, blocks of 0, 1 or more, ties of every kind
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1, 9)) for _ in range(ndim))
    chunks = tuple(
        tuple(data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).filter(sum)))
        for _ in range(ndim)
    )
    chunks = tuple((*c, n - sum(c)) if sum(c) < n else (n,) for c, n in zip(chunks, shape))
    axis = data.draw(st.integers(0, ndim - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.choice(ND_POOLS[dtype], size=shape)
    a = la.asarray(x, chunks=chunks)
    with la.config.set({"numba.compile-threshold": 0}):
        got = la.sort(a, axis=axis).compute(executor="numba")
        idx = la.argsort(a, axis=axis).compute(executor="numba")
    assert got.tobytes() == np.sort(x, axis=axis, kind="stable").tobytes()
    np.testing.assert_array_equal(idx, np.argsort(x, axis=axis, kind="stable"))

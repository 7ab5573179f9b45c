"""The sample sort's compiled counts search against the NumPy one: the same rows.

Rows count the elements of a sorted block below each sorted value (at or
below it for a later block's candidate), in NumPy's order: NaN last, equal
NaNs and signed zeros ties. Then the whole sort on the numba executor,
whose counts stage gets the compiled search.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import api
from lazyarr.kernels import numba_samplesort
from lazyarr.kernels.compile import Options
from lazyarr.kernels.emit_ops import Unsupported
from lazyarr.kernels.numba_set import NumbaKernels
from lazyarr.kernels.reference.samplesort import search_rows

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
def test_compiled_search_equals_searchsorted(dtype, data):
    pool = POOLS[dtype]
    seed = data.draw(st.integers(0, 2**32 - 1))
    n, m = data.draw(st.integers(0, 40)), data.draw(st.integers(0, 25))
    rng = np.random.default_rng(seed)
    line, w = np.sort(rng.choice(pool, n)), np.sort(rng.choice(pool, m))
    later = rng.random(m) < 0.5
    line.setflags(write=False)  # blocks from Dask are read-only
    search = numba_samplesort.search_function(pool.dtype, Options())
    np.testing.assert_array_equal(search(line, w, later), search_rows(line, w, later))


def test_other_dtypes_keep_the_reference_search():
    with pytest.raises(Unsupported, match="float16"):
        numba_samplesort.search_function(np.dtype(np.float16), Options())


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

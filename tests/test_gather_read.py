"""A sparse gather reads only the rows it takes (``kernels/gather_read.py``): NumPy's
values on every executor, and the rows each block reads."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.kernels.gather_read import gather_map, taken_runs
from lazyarr.kernels.reference import kernel_for
from lazyarr.testing import assert_eq

CLIM = np.random.default_rng(0).standard_normal((366, 4, 5))
WRAP = np.r_[np.arange(355, 366), np.arange(0, 9)]  # days of a block across a new year


def _read_rows(expr, out):
    """Rows along axis 0 that block ``out`` of the gather ``expr`` asks its input for."""
    asked = []

    def get(pos, region):
        asked.append(region)
        return CLIM[region]

    got = gather_map(expr, kernel_for(expr.op))(out, get)
    return got, sum(r[0].stop - r[0].start for r in asked), len(asked)


def test_a_block_across_the_wrap_reads_its_rows_only():
    x = la.asarray(CLIM, chunks=(20, 4, 5))
    g = x[np.tile(WRAP, 2)]._expr
    out = (slice(0, 20), slice(0, 4), slice(0, 5))
    got, rows, reads = _read_rows(g, out)
    np.testing.assert_array_equal(got, CLIM[WRAP])
    assert (rows, reads) == (20, 2)  # two runs of rows, not the 366 between them
    (region,) = g.op.regions(g, out)
    assert region[0] == slice(0, 366)  # what the op's rule says the block depends on
    assert taken_runs(g, out, region) == (0, [(0, 9), (355, 366)])


def test_dense_gathers_read_their_span():
    x = la.asarray(CLIM, chunks=(20, 4, 5))
    g = x[np.arange(30, 50)[::-1]]._expr
    out = (slice(0, 20), slice(0, 4), slice(0, 5))
    (region,) = g.op.regions(g, out)
    assert taken_runs(g, out, region) is None
    got, rows, reads = _read_rows(g, out)
    np.testing.assert_array_equal(got, CLIM[30:50][::-1])
    assert (rows, reads) == (20, 1)


@pytest.mark.parametrize(
    "index",
    [
        lambda a: a[np.tile(WRAP, 3)],
        lambda a: a[:, [3, 0]][np.r_[300:310, 2:5, 120]],
        lambda a: a[np.r_[365, 0, 365, 0], 1:3],
        lambda a: a[np.r_[5, 360], 2],  # an integer beside the array: both advanced
        lambda a: a.transpose(1, 0, 2)[:, np.r_[0, 100, 200, 365]],
    ],
)
def test_sparse_gathers_equal_numpy(index):
    assert_eq(index(la.asarray(CLIM, chunks=(20, 2, 5))), index(CLIM))


def test_anomalies_by_day_of_year_on_the_dask_executor(dask_ex):
    days = np.tile(np.arange(366), 3)[:1000]
    data = np.random.default_rng(1).standard_normal((1000, 4, 5))
    lazy = la.asarray(data, chunks=(20, 4, 5)) - la.asarray(CLIM, chunks=(20, 4, 5))[days]
    with config.set({"executor": "dask"}):
        np.testing.assert_allclose(lazy.compute(), data - CLIM[days])

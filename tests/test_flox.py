"""flox over lazy arrays: its groupby reductions, and the CI-sized part of its own suite.

flox claims every Dask collection, and lazy arrays are Dask collections: its Dask
path takes them as they are. Results are compared with flox over the same NumPy
data. xarray's groupby over lazy arrays stays lazy (xarray's own groupby, not flox's
Dask path, which would return a Dask array). A sample of flox's own
Dask-parametrized tests runs with lazy arrays too (from ``FLOX_TESTS``, a checkout's
``tests`` folder, else fetched from flox's source distribution;
``bench/flox_suite.py`` runs all of them).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from dask import config as dask_config

import lazyarr as la

flox = pytest.importorskip("flox", reason="flox is not installed (pip install flox)")
xr = pytest.importorskip("xarray")

from flox.core import groupby_reduce  # noqa: E402
from flox.xarray import xarray_reduce  # noqa: E402

FUNCS = ["sum", "nansum", "mean", "nanmean", "max", "nanmin", "count", "var", "nanstd", "argmax"]
METHODS = ["map-reduce", "cohorts", "blockwise"]


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((3, 48))
    a[0, ::7] = np.nan
    return a, np.tile(np.arange(4), 12)  # labels repeat along the last axis


def _lazy(da: xr.DataArray, by: np.ndarray) -> xr.DataArray:
    """``da``'s data as a lazy array; its labels stay NumPy (flox needs them known)."""
    lazy = da.drop_vars("lab").chunk({"t": 12}, chunked_array_type="lazyarr")
    return lazy.assign_coords(lab=("t", by))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("func", FUNCS)
def test_groupby_reduce_over_a_lazy_array_matches_numpy(func, method):
    a, by = _data()
    if method == "blockwise":  # each group within one block: labels sorted
        by = np.repeat(np.arange(4), 12)
        if func == "argmax":
            pytest.skip("flox: arg-reductions are not supported with method='blockwise'")
    want, groups = groupby_reduce(a, by, func=func)
    x = la.from_array(a, chunks=(2, 12))
    got, got_groups = groupby_reduce(x, by, func=func, method=method)
    np.testing.assert_array_equal(got_groups, groups)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got.compute()), want, equal_nan=True, rtol=1e-12)


def test_xarray_reduce_through_the_chunk_manager():
    a, by = _data(1)
    da = xr.DataArray(a, dims=("y", "t"), coords={"lab": ("t", by)})
    want = xarray_reduce(da, "lab", func="mean")
    lazy = _lazy(da, by)
    assert isinstance(lazy.data, la.LazyArray)
    got = xarray_reduce(lazy, "lab", func="mean", method="cohorts")
    xr.testing.assert_allclose(got.compute(), want)


def test_xarray_groupby_over_lazy_arrays_stays_lazy_with_flox_installed():
    """Before: installing flox turned ``groupby(...).mean()`` over lazy arrays into a
    Dask array (flox's Dask path claims every Dask collection)."""
    a, by = _data(2)
    da = xr.DataArray(a, dims=("y", "t"), coords={"lab": ("t", by)})
    lazy = _lazy(da, by)
    for reduce in (lambda d: d.groupby("lab").mean(), lambda d: d.groupby("lab").max()):
        got = reduce(lazy)
        assert isinstance(got.data, la.LazyArray)
        xr.testing.assert_allclose(got.compute(), reduce(da))


def test_a_sample_of_floxs_own_suite_passes_with_lazy_arrays():
    """Every 200th Dask-parametrized test of flox's test_core.py and test_xarray.py (about
    75; FLOX_TESTS names them, else they are fetched from flox's source distribution):
    each that passes on Dask passes with lazy arrays."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    try:
        from flox_suite import flox_tests, run
    finally:
        sys.path.pop(0)
    try:
        folder = flox_tests()
    except OSError as e:  # no checkout named and no package index to fetch them from
        pytest.skip(f"flox's tests: {e}")
    options, scheduler = dict(xr.core.options.OPTIONS), dask_config.get("scheduler", None)
    _, lazy = run(folder, [], every=200)
    _, dask = run(folder, [], every=200, lazy=False)
    # flox's test_xarray.py sets use_flox=False and a sync scheduler when imported: the
    # later tests in this process must not see them
    assert dict(xr.core.options.OPTIONS) == options
    assert dask_config.get("scheduler", None) == scheduler
    failed_on_dask = {i for ids in dask.failures.values() for i in ids}
    only_lazy = {m: [i for i in ids if i not in failed_on_dask] for m, ids in lazy.failures.items()}
    assert lazy.outcomes["passed"] >= 20 and not any(only_lazy.values()), only_lazy

"""Rolling reductions of lazy arrays against xarray on NumPy data.

Trailing windows along one dimension (``sum``, ``mean``, ``max``, ``min``,
``prod``) are reduced by ``namespace/moving.py`` in one stage; centred
windows, several dimensions and other reductions take xarray's own path.
Values and dtypes are compared with the same call on NumPy-backed data (NaN
inside the data, ``min_periods``, integers), on each local executor.
"""

from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import lazyarr as la  # noqa: E402
from lazyarr import config  # noqa: E402
from lazyarr.namespace.moving import MOVING_FUNCS, moving_reduce  # noqa: E402


def _data(dtype: str = "float32", nan: bool = True) -> xr.DataArray:
    rng = np.random.default_rng(5)
    values = (rng.random((41, 3, 5)) * 10).astype(dtype)
    if nan:
        values[7, 1, 2] = np.nan
        values[20:23, 0, 0] = np.nan
    return xr.DataArray(values, dims=("time", "y", "x"), name="v", attrs={"units": "K"})


def _assert_like(got: xr.DataArray, want: xr.DataArray) -> None:
    assert isinstance(got.data, la.LazyArray), type(got.data)
    out = got.compute()
    assert out.dtype == want.dtype, (out.dtype, want.dtype)
    xr.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert out.attrs == want.attrs


@pytest.mark.parametrize("func", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("min_periods", [None, 1, 4])
def test_trailing_windows_match_xarray(executor, func, min_periods):
    da = _data() / (10 if func == "prod" else 1)
    lz = da.chunk({"time": 6}, chunked_array_type="lazyarr")
    got = getattr(lz.rolling(time=7, min_periods=min_periods), func)()
    _assert_like(got, getattr(da.rolling(time=7, min_periods=min_periods), func)())


def test_integers_windows_longer_than_blocks_and_other_axes(executor):
    da = _data("int16", nan=False)
    lz = da.chunk({"time": 4, "x": 2}, chunked_array_type="lazyarr")
    for f in [
        lambda d: d.rolling(time=9).sum(),  # a window wider than two blocks
        lambda d: d.rolling(time=3).max(),
        lambda d: d.rolling(x=2).mean(keep_attrs=True),
        lambda d: d.rolling(time=1).min(),
    ]:
        _assert_like(f(lz), f(da))


def test_other_rollings_keep_xarrays_path(executor):
    da = _data()
    lz = da.chunk({"time": 6}, chunked_array_type="lazyarr")
    for f in [
        lambda d: d.rolling(time=5, center=True).mean(),
        lambda d: d.rolling(time=3, x=2).sum(),
        lambda d: d.rolling(time=4).std(),
        lambda d: d.rolling(time=4).count(),
        lambda d: d.to_dataset().rolling(time=3).mean(),
    ]:
        got, want = f(lz), f(da)
        xr.testing.assert_allclose(got.compute(), want, rtol=1e-5)


def test_a_rolling_mean_is_one_stage_over_the_blocks():
    lz = _data().chunk({"time": 6}, chunked_array_type="lazyarr")
    got = lz.rolling(time=7).mean().data
    plan = la.plan(got)
    names = [s.name.split("-")[0] for s in plan.stages.values()]
    assert names.count("map_overlap") == 1 and len(names) <= 3, names
    assert got.chunks == lz.data.chunks  # no block larger than the input's


@pytest.mark.parametrize("func", MOVING_FUNCS)
def test_moving_reduce_against_numpy_windows(func):
    rng = np.random.default_rng(2)
    x = rng.random((4, 25)) + 0.5
    x[1, 5] = np.nan
    with config.set({"executor": "numba", "numba.compile-threshold": 0}):
        got = moving_reduce(la.from_array(x, chunks=(2, 4)), 5, 1, func, 2).compute()
    want = np.full(x.shape, np.nan)
    for t in range(25):
        win = x[:, max(0, t - 4) : t + 1]
        n = (~np.isnan(win)).sum(axis=1)
        if func == "count":
            value = n
        else:
            with np.errstate(invalid="ignore"):
                value = getattr(np, f"nan{func}")(win, axis=1)
        want[:, t] = np.where(n >= 2, value, np.nan)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_moving_reduce_refuses_what_it_does_not_compute():
    x = la.ones((10,), chunks=5)
    with pytest.raises(NotImplementedError, match="median"):
        moving_reduce(x, 3, 0, "median")
    with pytest.raises(ValueError, match="window"):
        moving_reduce(x, 0, 0, "sum")
    with pytest.raises(ValueError, match="min_periods"):
        moving_reduce(x, 3, 0, "sum", 4)
    with pytest.raises(NotImplementedError, match="bool"):
        moving_reduce(la.ones((10,), dtype=bool), 3, 0, "sum")


# ------------------------------------------------------------------- coarsen
@pytest.mark.parametrize("func", ["mean", "sum", "max", "min"])
@pytest.mark.parametrize("boundary", ["trim", "pad"])
def test_coarsen_matches_xarray(executor, func, boundary):
    da = _data()
    lz = da.chunk({"time": 6}, chunked_array_type="lazyarr")
    coarse = lz.coarsen(y=2, x=2, boundary=boundary)  # xarray passes no skipna to coarsen
    _assert_like(getattr(coarse, func)(), getattr(da.coarsen(y=2, x=2, boundary=boundary), func)())


def test_coarsen_of_integers_uneven_blocks_and_other_reductions(executor):
    da = _data("int32", nan=False)
    lz = da.chunk({"time": 7, "x": 3}, chunked_array_type="lazyarr")
    for f in [
        lambda d: d.coarsen(time=4, boundary="trim").mean(),  # blocks of 7 realigned to 4s
        lambda d: d.coarsen(x=5).sum(),
        lambda d: d.coarsen(time=3, boundary="pad", side="right").max(),
    ]:
        _assert_like(f(lz), f(da))
    for f in [  # xarray's own path
        lambda d: d.coarsen(x=5).median(),
        lambda d: d.coarsen(x=5).std(),
    ]:
        xr.testing.assert_allclose(f(lz).compute(), f(da))
    with pytest.raises(ValueError, match="exact"):
        lz.coarsen(time=4).mean()


def test_a_coarsen_is_one_stage_after_the_read():
    lz = _data().chunk({"time": 6}, chunked_array_type="lazyarr")
    got = lz.coarsen(y=2, x=2, boundary="trim").mean().data
    names = [s.name.split("-")[0] for s in la.plan(got).stages.values()]
    assert names.count("map_blocks") == 1 and "reshape" not in names, names
    assert got.chunks[0] == lz.data.chunks[0]


def test_coarsen_function_against_numpy():
    from lazyarr.namespace.coarsening import coarsen

    a = np.arange(6 * 10, dtype=np.float64).reshape(6, 10)
    a[1, 3] = np.nan
    x = la.from_array(a, chunks=(4, 3))
    want = a.reshape(3, 2, 5, 2)
    np.testing.assert_allclose(
        coarsen(np.nanmean, x, {0: 2, 1: 2}).compute(), np.nanmean(want, axis=(1, 3))
    )
    np.testing.assert_allclose(coarsen(np.sum, x, {0: 2, 1: 2}).compute(), want.sum(axis=(1, 3)))
    np.testing.assert_allclose(
        coarsen(np.median, x, {1: 5}).compute(), np.median(a.reshape(6, 2, 5), axis=2)
    )
    np.testing.assert_allclose(
        coarsen(np.max, x, {0: 4}, trim_excess=True).compute(), a[:4].max(axis=0, keepdims=True)
    )
    with pytest.raises(ValueError, match="align"):
        coarsen(np.sum, x, {0: 4})


def test_grouped_moving_and_coarsened_kernels_run_on_dask_workers(dask_ex):
    """The block functions travel to the workers (pickled) and give xarray's values."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(8)
    time = pd.date_range("2001-01-01", periods=400, freq="D")
    da = xr.DataArray(
        rng.random((400, 4, 6)).astype("f4"), dims=("time", "y", "x"), coords={"time": time}
    )
    lz = da.chunk({"time": 20}, chunked_array_type="lazyarr")
    with config.set({"executor": "dask"}):
        for f in [
            lambda d: d.groupby("time.dayofyear") - d.groupby("time.dayofyear").mean(),
            lambda d: d.resample(time="MS").max(),
            lambda d: d.rolling(time=7).mean(),
            lambda d: d.coarsen(y=2, x=3).sum(),
        ]:
            got = f(lz).compute()
            assert la.last_run().executor == "dask"
            xr.testing.assert_allclose(got, f(da), rtol=1e-5, atol=1e-5)

"""xarray's time coordinates on lazy arrays, against xarray on NumPy-backed data: ``idxmax``/
``idxmin`` along time (NaT for all-NaN lines), datetime arithmetic, ``resample``, datetime
variables chunked with ``chunked_array_type="lazyarr"`` (min/max/mean, ``.dt``, ``diff``)."""

from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")


import lazyarr as la  # noqa: E402


def daily(n: int = 75, freq: str = "D") -> xr.DataArray:
    """A (time, x) field on a daily time coordinate; one all-NaN line along time."""
    x = np.random.default_rng(3).random((n, 4))
    x[:, 2] = np.nan
    x[5, 1] = np.nan
    time = pd.date_range("2001-01-30", periods=n, freq=freq)
    return xr.DataArray(x, dims=("time", "x"), coords={"time": time, "x": [10, 20, 30, 40]})


@pytest.mark.parametrize("how", ["idxmax", "idxmin"])
@pytest.mark.parametrize("freq", ["D", "6h", "17min"])
def test_idxmax_idxmin_along_time_are_lazy_datetimes(executor, how, freq):
    da = daily(freq=freq)
    lazy = da.chunk({"time": 20, "x": 3}, chunked_array_type="lazyarr")
    got = getattr(lazy, how)("time")
    assert isinstance(got.data, la.LazyArray) and got.dtype.kind == "M"
    want = getattr(da, how)("time")
    assert np.isnat(want.values[2])  # the all-NaN line
    xr.testing.assert_identical(got.compute(), want)


def test_time_arithmetic_on_the_found_times(executor):
    da = daily()
    lazy = da.chunk({"time": 16}, chunked_array_type="lazyarr")

    def elapsed(d: xr.DataArray) -> xr.DataArray:
        first = d.idxmin("time")
        span = d.idxmax("time") - first  # datetime - datetime: timedelta
        days = span / np.timedelta64(1, "D")
        return xr.Dataset({"span": span, "days": days, "later": first + span * 2})

    got = elapsed(lazy)
    assert all(isinstance(v.data, la.LazyArray) for v in got.data_vars.values())
    xr.testing.assert_identical(got.compute(), elapsed(da))


def test_datetime_variables_chunked_on_lazyarr(executor):
    t = pd.date_range("1999-12-25", periods=40, freq="13h").values.copy()
    t[[3, 30]] = np.datetime64("NaT")
    tv = xr.DataArray(t, dims="i")
    lazy = tv.chunk({"i": 7}, chunked_array_type="lazyarr")
    for f in [
        lambda d: d.min(),
        lambda d: d.max(skipna=False),
        lambda d: d.mean(),
        lambda d: d.diff("i"),
        lambda d: (d - d[0]).astype("m8[m]"),
        lambda d: d.astype("M8[s]"),
        lambda d: d.where(d > np.datetime64("2000-01-05")),
    ]:
        got = f(lazy)
        assert isinstance(got.data, la.LazyArray)
        xr.testing.assert_identical(got.compute(), f(tv))
    # ``.dt`` declares int64 fields: with NaT, pandas gives float64 blocks, which lazyarr's
    # block checks refuse (dask lets the dtype differ from the one declared)
    clean = tv[4:24].chunk({"i": 6}, chunked_array_type="lazyarr")
    xr.testing.assert_identical(clean.dt.dayofyear.compute(), tv[4:24].dt.dayofyear)


def test_resample_on_a_time_coordinate(executor):
    da = daily(n=100)
    da[:, 2] = 0.5  # no all-NaN month: NumPy's nanmean warns there, as lazyarr's does
    lazy = da.chunk({"time": 30}, chunked_array_type="lazyarr")
    with xr.set_options(use_flox=False):  # xarray's own path: stays a lazy array
        got = lazy.resample(time="MS").mean()
        assert isinstance(got.data, la.LazyArray)
        xr.testing.assert_allclose(got.compute(), da.resample(time="MS").mean())
    got = lazy.resample(time="7D").max()  # flox's path when flox is installed
    xr.testing.assert_allclose(got.compute(), da.resample(time="7D").max())


def test_datetime_variables_read_from_and_written_to_zarr(tmp_path):
    """Time bounds and lags stored in zarr are decoded lazily into lazy datetime arrays."""
    pytest.importorskip("zarr")
    t = pd.date_range("2000-01-01", periods=30, freq="D")
    bounds = np.stack([t.values, (t + pd.Timedelta("1D")).values], axis=1)
    ds = xr.Dataset(
        {
            "tas": (("time", "x"), np.random.default_rng(0).random((30, 3))),
            "time_bnds": (("time", "nv"), bounds),
            "lag": (("time",), (t - t[0]).values),
        },
        coords={"time": t},
    )
    ds.to_zarr(tmp_path / "in.zarr", consolidated=False)
    opened = xr.open_zarr(
        tmp_path / "in.zarr", chunks={}, chunked_array_type="lazyarr", consolidated=False
    )
    assert isinstance(opened.time_bnds.data, la.LazyArray) and opened.time_bnds.dtype.kind == "M"
    width = opened.time_bnds[:, 1] - opened.time_bnds[:, 0]
    assert isinstance(width.data, la.LazyArray)
    xr.testing.assert_identical(width.compute(), ds.time_bnds[:, 1] - ds.time_bnds[:, 0])
    xr.testing.assert_identical(opened.lag.max().compute(), ds.lag.max())
    rechunked = opened.chunk({"time": 7}, chunked_array_type="lazyarr")
    for v in rechunked.variables.values():
        v.encoding.pop("chunks", None)
        v.encoding.pop("preferred_chunks", None)
    rechunked.to_zarr(tmp_path / "out.zarr", consolidated=False)
    back = xr.open_zarr(tmp_path / "out.zarr", consolidated=False).load()
    xr.testing.assert_identical(back, ds)

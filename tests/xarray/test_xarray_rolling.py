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

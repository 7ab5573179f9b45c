"""Groupby and resample reductions of lazy arrays against xarray on NumPy data.

With flox installed, xarray hands these to flox's adapter, which lazyarr
answers with its two-stage grouped reduction (``namespace/groupreduce.py``);
reductions it does not compute take xarray's own per-group path. Results are
compared with the same call on NumPy-backed data (which goes through flox's
NumPy code), on each local executor; the plan is checked to stay two stages
whatever the number of groups.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")

import lazyarr as la  # noqa: E402
from lazyarr import config  # noqa: E402
from lazyarr.namespace.groupreduce import GROUP_FUNCS, group_reduce  # noqa: E402

FLOX = pytest.importorskip("flox") is not None


def _series(nan: bool = True, dtype: str = "float32") -> xr.DataArray:
    """Daily values over 3 years on a small grid: every day of year is a group."""
    rng = np.random.default_rng(3)
    time = pd.date_range("2001-03-01", periods=3 * 365 + 10, freq="D")
    data = (rng.standard_normal((time.size, 3, 4)) * 10).astype(dtype)
    if nan:
        data[5:9, 0, 0] = np.nan  # a few missing values
        data[:, 2, 3] = np.nan  # a land pixel: NaN at every time
    return xr.DataArray(data, dims=("time", "y", "x"), coords={"time": time}, name="v")


def _lazy(da: xr.DataArray, chunks: int = 20) -> xr.DataArray:
    return da.chunk({"time": chunks}, chunked_array_type="lazyarr")


def _assert_like(got: xr.DataArray, want: xr.DataArray) -> None:
    assert isinstance(got.data, la.LazyArray), type(got.data)
    out = got.compute()
    assert out.dtype == want.dtype, (out.dtype, want.dtype)
    xr.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("func", ["mean", "sum", "count", "max", "min", "prod"])
def test_day_of_year_groupbys_match_xarray(executor, func):
    da = _series()
    if func == "prod":
        da = da / 10 + 1  # products of 3 or 4 values stay finite
    for skipna in (None, False):
        kwargs = {} if func == "count" else {"skipna": skipna}
        got = getattr(_lazy(da).groupby("time.dayofyear"), func)(**kwargs)
        want = getattr(da.groupby("time.dayofyear"), func)(**kwargs)
        _assert_like(got, want)


def test_anomalies_against_a_climatology_match_xarray(executor):
    da = _series()
    days = _lazy(da).groupby("time.dayofyear")
    got = days - days.mean()
    want = da.groupby("time.dayofyear") - da.groupby("time.dayofyear").mean()
    _assert_like(got, want)


@pytest.mark.parametrize("freq", ["MS", "7D", "YS"])
def test_resample_means_match_xarray(executor, freq):
    da = _series()
    _assert_like(_lazy(da).resample(time=freq).mean(), da.resample(time=freq).mean())
    _assert_like(_lazy(da).resample(time=freq).max(), da.resample(time=freq).max())


def test_integer_data_and_missing_groups_follow_xarray(executor):
    """Integer sums widen as NumPy's; groups with no member are NaN (xarray's choice)."""
    da = _series(nan=False, dtype="int16")
    n = da.sizes["time"]
    label = ("time", np.where(np.arange(n) % 7 == 3, 4, np.arange(n) % 3))
    lz = _lazy(da).assign_coords(label=label)  # the labels stay in memory
    da = da.assign_coords(label=label)
    for method in ("sum", "mean", "max"):
        got = getattr(lz.groupby("label"), method)()
        _assert_like(got, getattr(da.groupby("label"), method)())
    bins = [0, 1, 2, 3, 4]
    _assert_like(lz.groupby_bins("label", bins).sum(), da.groupby_bins("label", bins).sum())


def test_datasets_and_other_reductions_stay_lazy(executor):
    """A Dataset's variables, and median/std (xarray's own path), give xarray's values."""
    da = _series()
    ds = da.to_dataset().assign(w=da * 2)
    lz = ds.chunk({"time": 30}, chunked_array_type="lazyarr")
    for f in [
        lambda d: d.groupby("time.month").mean(),
        lambda d: d.groupby("time.month").median(),
        lambda d: d.groupby("time.month").std(),
        lambda d: d.groupby("time.month").mean(...),
    ]:
        got, want = f(lz), f(ds)
        assert all(isinstance(v.data, la.LazyArray) for v in got.data_vars.values())
        xr.testing.assert_allclose(got.compute(), want, rtol=1e-5, atol=1e-5)


def test_a_climatology_is_two_stages_whatever_the_number_of_groups():
    """A rechunk to whole-time blocks and one reduction per block (then the result back in
    the input's blocks): no stage per group."""
    got = _lazy(_series()).groupby("time.dayofyear").mean()
    plan = la.plan(got.data)
    names = sorted(s.name.split("-")[0] for s in plan.stages.values())
    assert names.count("map_blocks") == 1 and len(names) <= 5, names
    assert names.count("rechunk") <= 2, names


def test_no_block_of_the_result_is_larger_than_the_input_blocks():
    lz = _lazy(_series(), chunks=10)
    got = lz.groupby("time.dayofyear").mean().data
    biggest_in = max(lz.data.chunks[0]) * 3 * 4 * 4
    assert max(got.chunks[0]) * max(got.chunks[1]) * max(got.chunks[2]) * 4 <= biggest_in
    anomalies = (lz.groupby("time.dayofyear") - lz.groupby("time.dayofyear").mean()).data
    assert anomalies.chunks == lz.data.chunks  # lines up with the input's blocks


@pytest.mark.parametrize("func", GROUP_FUNCS)
def test_group_reduce_against_numpy_with_empty_and_dropped_groups(func):
    rng = np.random.default_rng(0)
    x = rng.random((5, 40)).astype(np.float32) + 0.5
    x[0, 3] = np.nan
    x[1, :] = np.nan
    codes = rng.integers(0, 6, 40)
    codes[5] = -1  # in no group
    with config.set({"executor": "numba", "numba.compile-threshold": 0}):
        got = group_reduce(la.from_array(x, chunks=(2, 7)), codes, 7, func).compute()
    base = func.removeprefix("nan")
    empty = {"sum": 0, "prod": 1, "count": 0}.get(base, np.nan)
    want = np.full((5, 7), empty, dtype=np.float64)
    for g in range(6):
        sel = x[:, codes == g]
        if base == "count":
            want[:, g] = (~np.isnan(sel)).sum(axis=1)
        elif sel.shape[1]:
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows
                want[:, g] = getattr(np, func)(sel, axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
    with pytest.raises(NotImplementedError, match="median"):
        group_reduce(la.from_array(x), codes, 7, "median")
    with pytest.raises(ValueError, match="codes"):
        group_reduce(la.from_array(x), codes[:-1], 7, func)


def test_min_count_and_fill_value(executor):
    x = np.array([[1.0, np.nan, np.nan, 4.0, 5.0]])
    codes = np.array([0, 1, 1, 2, 2])
    got = group_reduce(la.asarray(x), codes, 4, "nansum", min_count=1, fill_value=np.nan)
    np.testing.assert_array_equal(got.compute(), [[1.0, np.nan, 9.0, np.nan]])
    got = group_reduce(la.asarray(x), codes, 4, "nansum")
    np.testing.assert_array_equal(got.compute(), [[1.0, 0.0, 9.0, 0.0]])


def test_resample_reduces_runs_where_they_are_gaps_included(executor):
    """Codes in order: no block holds the whole time axis; a month with no day (a gap in the
    series) is NaN, as xarray's."""
    da = _series()
    da = da.isel(time=np.r_[0:100, 140 : da.sizes["time"]])  # no day in part of July
    lz = _lazy(da, chunks=15)
    got = lz.resample(time="MS").mean()
    _assert_like(got, da.resample(time="MS").mean())
    _assert_like(lz.resample(time="MS").count(), da.resample(time="MS").count())
    _assert_like(lz.resample(time="10D").sum(), da.resample(time="10D").sum())
    with config.set({"array.chunk-size": "4KiB"}):  # blocks of about 21 days here
        plan = la.plan(lz.resample(time="MS").mean().data)
    biggest = max(
        max(s.expr.chunks[0]) for s in plan.stages.values() if s.expr.shape[0] == da.sizes["time"]
    )
    assert biggest < da.sizes["time"]  # runs reduced in place, no whole-axis gathering


def test_positions_in_no_group_are_left_out(executor):
    x = np.arange(12.0).reshape(2, 6)
    none = group_reduce(la.asarray(x), np.full(6, -1), 3, "sum")  # every position dropped
    np.testing.assert_array_equal(none.compute(), np.zeros((2, 3)))
    some = group_reduce(la.asarray(x), np.array([1, -1, 0, 1, -1, 0]), 2, "max")
    np.testing.assert_array_equal(some.compute(), [[5.0, 3.0], [11.0, 9.0]])


@pytest.mark.parametrize("func", ["sum", "nansum", "mean", "nanmean", "count"])
@pytest.mark.parametrize("min_count", [0, 12])
@pytest.mark.parametrize("nan", [True, False])
def test_groups_longer_than_blocks_reduce_where_the_data_lies(executor, func, min_count, nan):
    """Codes in order, groups longer than a block (months over 15-day blocks): each block's
    partial sums and counts, combined by group; the data itself is never rechunked."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 95)).astype(np.float32)
    if nan:
        x[0, 3:40] = np.nan  # a group with fewer than min_count valid values
        x[1, :] = np.nan
        x[2, 50] = np.nan
    codes = np.repeat([0, 1, 3, 4], [31, 28, 26, 10])  # group 2 and 5 have no position
    lazy = la.from_array(x, chunks=(2, 15))
    got = group_reduce(lazy, codes, 6, func, min_count=min_count)
    plan = la.plan(got)
    parts = [s for s in plan.stages.values() if s.expr.op.label() == "_BlockPartsKernel"]
    assert len(parts) == 1  # one map over the data's own blocks
    assert not any(
        s.expr.op.name == "rechunk" and s.expr.inputs[0].shape == x.shape[::-1]
        for s in plan.stages.values()
    )
    want = group_reduce(x, codes, 6, func, min_count=min_count)  # NumPy data: checked below
    base = func.removeprefix("nan")
    fill = {"sum": 0, "count": 0}.get(base, np.nan)
    expect = np.full((3, 6), fill, np.float64)
    for g in range(6):
        sel = x[:, codes == g]
        if not sel.shape[1]:
            continue
        valid = (~np.isnan(sel)).sum(axis=1) if func.startswith("nan") or base == "count" else None
        n = valid if valid is not None else np.full(3, sel.shape[1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows
            value = n if base == "count" else getattr(np, func)(sel, axis=1)
        expect[:, g] = np.where(n < min_count, fill, value) if min_count else value
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.compute(), expect, rtol=1e-5, equal_nan=True)


def test_short_groups_are_cut_between_runs_instead():
    """Partials of groups shorter than a block would outweigh the data: the data is cut
    between runs as before."""
    x = np.arange(80, dtype=np.float64).reshape(2, 40)
    got = group_reduce(la.from_array(x, chunks=(2, 10)), np.repeat(np.arange(20), 2), 20, "nanmean")
    assert not any(s.expr.op.label() == "_BlockPartsKernel" for s in la.plan(got).stages.values())
    np.testing.assert_allclose(got.compute(), x.reshape(2, 20, 2).mean(axis=2))


def test_monthly_means_on_the_dask_executor(dask_ex):
    da = _series()
    lz = _lazy(da, chunks=10)
    with config.set({"executor": "dask"}):
        _assert_like(lz.resample(time="MS").mean(), da.resample(time="MS").mean())
        _assert_like(lz.resample(time="MS").count(), da.resample(time="MS").count())

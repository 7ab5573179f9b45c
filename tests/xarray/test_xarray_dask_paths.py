"""xarray's code paths written for dask arrays, run on lazy arrays and compared with NumPy-backed
xarray: ``ffill``/``bfill`` (the manager's ``scan``), ``cumsum``/``cumprod``, vectorized and
orthogonal ``isel`` (``vindex``, the Dask adapter), ``interp`` (Dask coordinates read lazily),
``polyfit`` (least squares via ``reshape_blockwise``, ``linalg.lstsq``, ``apply_along_axis``)."""

from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import xarray.core.duck_array_ops as duck  # noqa: E402
from fallbacks import numpy_kernels  # noqa: E402

import lazyarr as la  # noqa: E402
from lazyarr import config  # noqa: E402


def _numpy_push(a: np.ndarray, n: int | None = None, axis: int = -1) -> np.ndarray:
    """bottleneck's ``push`` in NumPy: NaNs filled from the last value, at most ``n`` in a row."""
    b = np.moveaxis(np.array(a, copy=True), axis, -1)
    n = b.shape[-1] if n is None else n
    age = np.zeros(b.shape[:-1], dtype=int)
    for i in range(1, b.shape[-1]):
        gap = np.isnan(b[..., i])
        age = np.where(gap, age + 1, 0)
        take = gap & (age <= n)
        b[..., i][take] = b[..., i - 1][take]
    return np.moveaxis(b, -1, axis)


@pytest.fixture
def push(monkeypatch):
    """xarray's fill needs bottleneck or numbagg; without them, a NumPy ``push`` stands in."""
    try:
        import bottleneck  # noqa: F401
    except ImportError:
        monkeypatch.setattr(duck, "_push", _numpy_push)
    with xr.set_options(use_bottleneck=True, use_numbagg=False):
        yield


def _gappy(shape=(12, 3, 4), seed=3) -> xr.DataArray:
    v = np.random.default_rng(seed).standard_normal(shape)
    v[v > 0.1] = np.nan
    return xr.DataArray(v, dims=("time", "y", "x"), coords={"time": np.arange(shape[0])})


@numpy_kernels("'nan_to_num'", "a limited fill counts gaps with nan_to_num, which has no emitter")
@pytest.mark.parametrize("limit", [None, 2, 7])
@pytest.mark.parametrize("how", ["ffill", "bfill"])
def test_fill_is_lazy_and_equals_numpy_xarray(executor, push, how, limit):
    da = _gappy()
    lazy = da.chunk({"time": (5, 1, 6), "y": 2}, chunked_array_type="lazyarr")
    got = getattr(lazy, how)("time", limit=limit)
    assert isinstance(got.data, la.LazyArray)
    xr.testing.assert_allclose(got.compute(), getattr(da, how)("time", limit=limit))


def test_fill_along_other_axes_and_size_one(push):
    da = _gappy((4, 1, 9))
    lazy = da.chunk({"x": 2}, chunked_array_type="lazyarr")
    xr.testing.assert_allclose(lazy.ffill("x").compute(), da.ffill("x"))
    xr.testing.assert_allclose(lazy.bfill("y").compute(), da.bfill("y"))
    ints = xr.DataArray(np.arange(12, dtype=np.int16).reshape(6, 2), dims=("t", "x"))
    got = ints.chunk({"t": 2}, chunked_array_type="lazyarr").ffill("t")  # NaN identity on ints
    xr.testing.assert_identical(got.compute(), ints.ffill("t"))


@pytest.mark.parametrize("how", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_cumulative_ops_equal_numpy_xarray(executor, how, dtype):
    da = _gappy()
    if dtype == "int32":
        da = (da.fillna(2) * 3).astype(dtype) % 4
    lazy = da.chunk({"time": 5}, chunked_array_type="lazyarr")
    for skipna in (None, False):
        got = getattr(lazy, how)("time", skipna=skipna)
        assert isinstance(got.data, la.LazyArray)
        xr.testing.assert_allclose(got.compute(), getattr(da, how)("time", skipna=skipna))
    xr.testing.assert_allclose(lazy.cumulative("time").sum().compute(), da.cumulative("time").sum())


def test_array_api_casts_ufunc_results_as_dask_does(manager):
    x = la.from_array(np.array([1.0, np.nan]), chunks=1)
    got = manager.array_api.isnan(x, dtype=int)
    assert got.dtype == np.dtype(int)
    assert manager.array_api.where is la.where
    with pytest.raises(TypeError):
        la.isnan(x, dtype=int)  # lazyarr's own namespace keeps NumPy's rule


def _grid() -> xr.DataArray:
    x = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    return xr.DataArray(x, dims=("t", "y", "x"), coords={"t": [10, 20, 30], "x": np.arange(5.0)})


def _points(*dims: str, values=((0, 2, 1), (4, 0, 1))) -> dict[str, xr.DataArray]:
    return {d: xr.DataArray(list(v), dims="p") for d, v in zip(dims, values)}


@pytest.mark.parametrize(
    "sel",
    [
        _points("t", "x"),
        _points("y", "x", values=((0, 3, 3), (4, 0, 1))),
        {
            "t": xr.DataArray([[0, 2], [1, 1]], dims=("p", "q")),
            "y": 1,
            "x": xr.DataArray([4, 0], dims="q"),
        },
        {"y": [0, 1], "x": [1, 2, 3]},  # orthogonal: two lists
        {"y": [3, 1], "x": [4, 0]},  # orthogonal, lists of one length (pointwise would fit too)
        {"t": 0, "y": slice(1, 3), "x": [4]},
    ],
)
def test_isel_equals_numpy_xarray(executor, sel):
    da = _grid()
    lazy = da.chunk({"t": 2, "x": 3}, chunked_array_type="lazyarr")
    got = lazy.isel(sel)
    assert isinstance(got.data, la.LazyArray)
    xr.testing.assert_identical(got.compute(), da.isel(sel))


@pytest.mark.parametrize(
    "kw",
    [
        {"lat": [-50.0, 0.5, 33.0]},
        {"lat": [-50.0, 0.5], "lon": [0.5, 3.2]},
        {"lat": [10.0], "method": "nearest"},
        {"lat": xr.DataArray([-10.0, 20.0], dims="p"), "lon": xr.DataArray([0.5, 1.5], dims="p")},
    ],
)
def test_interp_is_lazy_and_equals_numpy_xarray(kw):
    rng = np.random.default_rng(0)
    coords = {"time": np.arange(6), "lat": np.linspace(-60, 60, 8), "lon": np.arange(5.0)}
    da = xr.DataArray(rng.random((6, 8, 5)), dims=("time", "lat", "lon"), coords=coords)
    lazy = da.chunk({"time": 4, "lat": 3}, chunked_array_type="lazyarr")
    with config.set(executor="raise"):  # xarray chunks the coordinates with Dask: read lazily
        got = lazy.interp(**kw)
    assert isinstance(got.data, la.LazyArray)
    xr.testing.assert_allclose(got.compute(), da.interp(**kw))


def test_apply_ufunc_on_lazy_and_dask_arrays_runs_on_lazyarr():
    x = xr.DataArray(np.arange(12.0).reshape(3, 4), dims=("a", "b"))
    lazy = x.chunk({"a": 2}, chunked_array_type="lazyarr")
    dask = x.chunk({"b": 3})  # xarray's default manager: Dask
    got = xr.apply_ufunc(np.subtract, lazy, dask * 2, dask="parallelized", output_dtypes=[float])
    assert isinstance(got.data, la.LazyArray)
    xr.testing.assert_equal(got.compute(), x - x * 2)
    with config.set(executor="raise"):
        mixed = [lazy + dask, dask * lazy, np.maximum(dask, lazy), xr.where(lazy > 3, dask, -lazy)]
    assert all(isinstance(m.data, la.LazyArray) for m in mixed)
    for m, want in zip(mixed, [x + x, x * x, x, xr.where(x > 3, x, -x)]):
        xr.testing.assert_equal(m.compute(), want)


def _trend(nan: bool = True) -> xr.DataArray:
    t = np.arange(20.0)
    v = 3 + 0.5 * t[:, None, None] + np.random.default_rng(0).standard_normal((20, 3, 4))
    if nan:
        v[3, 1, 2] = np.nan
    return xr.DataArray(v, dims=("time", "lat", "lon"), coords={"time": t})


@pytest.mark.parametrize(
    ("select", "chunks", "deg", "kw"),
    [
        ({}, {"time": 6, "lat": 2}, 1, {}),
        ({}, {"time": (7, 13), "lon": 3}, 1, {"skipna": True}),
        ({}, {"time": 6}, 1, {"skipna": False}),
        ({"lat": 0, "lon": 0}, {"time": 5}, 2, {}),
        ({"lat": 0}, {"time": 5}, 1, {"full": True}),
    ],
)
def test_polyfit_is_lazy_and_equals_numpy_xarray(select, chunks, deg, kw):
    da = _trend().isel(select)
    lazy = da.chunk(chunks, chunked_array_type="lazyarr")
    with config.set(executor="raise"):
        got = lazy.polyfit("time", deg, **kw)
    assert isinstance(got.polyfit_coefficients.data, la.LazyArray)
    xr.testing.assert_allclose(got.compute(), da.polyfit("time", deg, **kw))


def test_polyfit_of_ints_with_covariance_on_numba():
    da = (_trend(nan=False) * 4).astype("int32")
    lazy = da.chunk({"time": 4, "lat": 1}, chunked_array_type="lazyarr")
    with config.set(executor="numba"):
        got = lazy.polyfit("time", 1, cov=True).compute()
    xr.testing.assert_allclose(got, da.polyfit("time", 1, cov=True))


def test_unify_chunks_reads_dask_arrays_as_lazy_sources(manager):
    import dask.array as dsk

    x = np.arange(12.0).reshape(3, 4)
    lazy = la.from_array(x, chunks=(2, 4))
    d = dsk.from_array(x * 2, chunks=(3, 2))
    chunkss, (a, b) = manager.unify_chunks(lazy, "ij", d, "ij")
    assert chunkss == {"i": (2, 1), "j": (4,)}
    assert isinstance(b, la.LazyArray) and b.chunks == a.chunks == ((2, 1), (4,))
    np.testing.assert_array_equal(b.compute(), x * 2)


@pytest.mark.parametrize(("how", "dim"), [("idxmax", "t"), ("idxmin", "y")])
def test_idxmax_and_idxmin_are_lazy(how, dim):
    x = np.random.default_rng(1).random((6, 4, 3))
    x[:, 0, 0] = np.nan  # all-NaN along t: NaN, as in xarray
    x[2, 1, 1] = np.nan
    coords = {"t": np.arange(6) * 2.0, "y": [1, 5, 2, 7]}
    da = xr.DataArray(x, dims=("t", "y", "z"), coords=coords)
    lazy = da.chunk({"t": 4, "y": 3}, chunked_array_type="lazyarr")
    with config.set(executor="raise"):  # the coordinate is gathered at the lazy argmax
        got = getattr(lazy, how)(dim)
    assert isinstance(got.data, la.LazyArray)
    xr.testing.assert_equal(got.compute(), getattr(da, how)(dim))


def test_manager_scan_is_cumreduction_with_xarrays_keywords(manager):
    x = np.arange(10.0)
    a = la.from_array(x, chunks=3)
    got = manager.scan(
        func=np.cumsum,
        binop=np.add,
        ident=0,
        arr=a,
        axis=0,
        dtype=a.dtype,
        method="blelloch",
        preop=np.sum,
    )
    assert isinstance(got, la.LazyArray)
    np.testing.assert_array_equal(got.compute(), np.cumsum(x))

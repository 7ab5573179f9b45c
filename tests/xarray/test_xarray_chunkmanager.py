"""xarray with lazy arrays inside: the ``lazyarr`` chunk manager against NumPy-backed xarray.

Every result is compared with the same xarray operation on NumPy data
(``xr.testing.assert_allclose``: values, dims, coordinates). The manager
is registered through the entry point in ``pyproject.toml`` once lazyarr
is installed; for a checkout that is not installed (a shared virtual
environment), the ``manager`` fixture adds it to xarray's cached list of
chunk managers for the test and takes it out afterwards.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

from xarray.namedarray.parallelcompat import (  # noqa: E402
    get_chunked_array_type,
    guess_chunkmanager,
)

import lazyarr as la  # noqa: E402
from lazyarr import config  # noqa: E402
from lazyarr.executors import registry  # noqa: E402
from lazyarr.xarray_chunkmanager import LazyarrManager  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def runs():
    """How many plans the executor ran (computed or persisted), with how many outputs each."""
    calls: list[int] = []
    ex = registry.get(config.get("executor"))

    def counted(real):
        def run(plan, outputs, progress=None, **options):
            calls.append(len(outputs))
            return real(plan, outputs, progress, **options)

        return run

    ex.execute, ex.persist = counted(ex.execute), counted(ex.persist)
    yield calls
    del ex.execute, ex.persist


def _dataset() -> xr.Dataset:
    rng = np.random.default_rng(12)
    t, y, x = 24, 5, 6
    return xr.Dataset(
        {
            "temp": (("time", "y", "x"), 15 + 8 * rng.standard_normal((t, y, x))),
            "rain": (("time", "y", "x"), rng.gamma(2.0, 1.5, (t, y, x))),
            "elev": (("y", "x"), rng.random((y, x)) * 1000),
        },
        coords={"time": np.arange(t), "y": np.arange(y) * 10.0, "x": np.arange(x) * 10.0},
        attrs={"title": "test"},
    )


def _lazy(ds: xr.Dataset, chunks=None) -> xr.Dataset:
    return ds.chunk(chunks or {"time": 7, "x": 4}, chunked_array_type="lazyarr")


def _is_lazy(obj) -> bool:
    variables = obj.data_vars.values() if isinstance(obj, xr.Dataset) else [obj]
    return all(isinstance(v.data, la.LazyArray) for v in variables)


# ---------------------------------------------------------------- registration
def test_the_entry_point_names_this_manager():
    text = (ROOT / "pyproject.toml").read_text()
    section = re.search(r'\[project\.entry-points\."xarray\.chunkmanagers"\]\n([^\[]*)', text)
    assert section is not None
    (target,) = re.findall(r'^lazyarr = "([^"]+)"$', section.group(1), re.M)
    module, _, name = target.partition(":")
    assert getattr(importlib.import_module(module), name) is LazyarrManager


def test_xarray_finds_the_manager(manager):
    assert guess_chunkmanager("lazyarr") is manager
    x = la.ones((4, 3), chunks=2)
    assert get_chunked_array_type(x) is manager  # and not the Dask manager
    assert manager.array_api.sum is la.sum  # lazyarr, with dask's ufunc dtype= (see below)


# ---------------------------------------------------------------- chunk, compute
def test_chunk_keeps_dims_and_chunks(executor):
    ds = _dataset()
    lz = _lazy(ds)
    assert _is_lazy(lz)
    assert lz.temp.dims == ds.temp.dims
    assert lz.temp.chunks == ((7, 7, 7, 3), (5,), (4, 2))
    assert dict(lz.chunksizes) == {"time": (7, 7, 7, 3), "y": (5,), "x": (4, 2)}
    xr.testing.assert_identical(lz.compute(), ds)


def test_rechunk_options_and_numpy_views():
    ds = _dataset()
    with xr.set_options(chunk_manager="lazyarr"):
        lz = ds.chunk({"time": 5})
    assert _is_lazy(lz)
    again = lz.chunk({"time": 12, "x": 3}, chunked_array_type="lazyarr")  # a lazy rechunk
    assert _is_lazy(again) and again.temp.chunks == ((12, 12), (5,), (3, 3))
    np.testing.assert_allclose(again.temp.to_numpy(), ds.temp.to_numpy())
    np.testing.assert_allclose(np.asarray(again.rain), ds.rain.values)


def test_arithmetic_and_reductions_stay_lazy(executor):
    ds = _dataset()
    lz = _lazy(ds)
    cases = [
        lambda d: d.temp * 1.8 + 32,
        lambda d: d.temp - d.temp.mean("time"),
        lambda d: d.rain.sum(("y", "x")),
        lambda d: d.temp.max("time") - d.elev / 100,
        lambda d: d.mean(),
        lambda d: xr.where(d.rain > 2, d.temp, np.nan).mean("time", skipna=True),
        lambda d: d.temp.isel(time=slice(3, 11)).sel(x=20.0),
        lambda d: np.sqrt(d.rain).cumsum("time"),
    ]
    for f in cases:
        got = f(lz)
        assert _is_lazy(got)
        xr.testing.assert_allclose(got.compute(), f(ds))


def test_standardized_anomaly(executor):
    """xarray's NaN-skipping mean and std: sibling reductions the numba executor computes
    jointly (this stopped with IndexError before lowering waited for every member's input;
    tests/optimize/test_lower_joint_order.py)."""
    ds = _dataset()
    lz = _lazy(ds)
    (lz.temp * 1.8 + 32).compute()
    got = (lz.temp - lz.temp.mean("time")) / lz.temp.std("time")
    want = (ds.temp - ds.temp.mean("time")) / ds.temp.std("time")
    xr.testing.assert_allclose(got.compute(), want)


def test_a_dataset_computes_in_one_plan(executor, runs):
    ds = _dataset()
    lz = _lazy(ds)
    derived = xr.Dataset(
        {"anom": lz.temp - lz.temp.mean("time"), "wet": (lz.rain > 2).sum("time"), "e": lz.elev}
    )
    got = derived.compute()
    assert runs == [3]  # the three variables, one plan
    want = xr.Dataset(
        {"anom": ds.temp - ds.temp.mean("time"), "wet": (ds.rain > 2).sum("time"), "e": ds.elev}
    )
    xr.testing.assert_allclose(got, want)


def test_load_and_persist(executor, runs):
    ds = _dataset()
    lz = _lazy(ds)
    kept = (lz * 2).persist()
    assert runs == [3]
    assert _is_lazy(kept)
    assert kept.temp.chunks == lz.temp.chunks
    xr.testing.assert_allclose(kept.compute(), ds * 2)
    loaded = lz.load()  # in place, like xarray's
    assert loaded is lz and isinstance(lz.temp.data, np.ndarray)
    xr.testing.assert_identical(lz, ds)


def test_groupby_concat_and_friends(executor):
    season = ("time", np.arange(24) % 4)  # a NumPy coordinate (a chunked one needs labels=)
    ds = _dataset().assign_coords(season=season)
    lz = _lazy(_dataset()).assign_coords(season=season)
    for f in [
        lambda d: d.temp.groupby("season").mean(),
        lambda d: xr.concat([d.temp, d.temp * 2], dim="time"),
        lambda d: d.temp.where(d.temp > 15).fillna(0),
        lambda d: d.temp.diff("time") + d.temp.shift(time=2),
        lambda d: d.temp.stack(s=("y", "x")).median("time"),
        lambda d: xr.dot(d.temp, d.elev, dim=("y", "x")),
        lambda d: d.temp.pad(time=2, mode="constant").count("time"),
        lambda d: d.temp.argmax("time"),
    ]:
        got = f(lz)
        assert _is_lazy(got)
        xr.testing.assert_allclose(got.compute(), f(ds))


def test_xarray_objects_over_lazy_arrays_are_dask_collections():
    """xarray hands Dask's protocol to its data: ``dask.compute`` of a DataArray works."""
    import dask

    ds = _dataset()
    lz = _lazy(ds)
    (got,) = dask.compute(lz.temp.mean("time"))
    xr.testing.assert_allclose(got, ds.temp.mean("time"))


def test_a_lazy_array_in_a_dataarray():
    a = np.arange(24.0).reshape(4, 6)
    da_ = xr.DataArray(la.asarray(a, chunks=(2, 3)), dims=("r", "c"))
    assert da_.chunks == ((2, 2), (3, 3))
    xr.testing.assert_allclose(
        (da_ * 2).sum("c").compute(), xr.DataArray(a * 2, dims=da_.dims).sum("c")
    )
    np.testing.assert_allclose(da_.values, a)


# --------------------------------------------------------------- rolling, coarsen
def test_rolling(executor):
    ds = _dataset()
    lz = _lazy(ds)
    for f in [
        lambda d: d.temp.rolling(time=3).mean(),
        lambda d: d.temp.rolling(time=4, center=True).sum(),
        lambda d: d.rain.rolling(time=5, min_periods=2).max(),
        lambda d: d.temp.rolling(x=2, y=3).mean(),
        lambda d: d.temp.rolling(time=3).construct("window"),
    ]:
        got = f(lz)
        assert _is_lazy(got)
        xr.testing.assert_allclose(got.compute(), f(ds))


def test_coarsen(executor):
    ds = _dataset()
    lz = _lazy(ds, {"time": 8})
    for f in [
        lambda d: d.coarsen(time=4).mean(),
        lambda d: d.temp.coarsen(time=3, x=2).max(),
        lambda d: d.temp.coarsen(time=5, boundary="trim").sum(),
    ]:
        got = f(lz)
        assert _is_lazy(got)
        xr.testing.assert_allclose(got.compute(), f(ds))


def test_sliding_window_view_matches_numpy():
    from numpy.lib.stride_tricks import sliding_window_view

    a = np.arange(60.0).reshape(6, 10)
    x = la.asarray(a, chunks=(4, 3))
    for w, ax in [(3, 1), ((2, 3), (0, 1)), ((2, 2), None), (1, 0), (10, -1), (0, 1)]:
        got = la.sliding_window_view(x, w, ax)
        np.testing.assert_array_equal(got.compute(), sliding_window_view(a, w, ax))
    np.testing.assert_array_equal(
        np.lib.stride_tricks.sliding_window_view(x, 3, 1).compute()[0, 0], a[0, :3]
    )
    with pytest.raises(ValueError, match="larger than input"):
        la.sliding_window_view(x, 11, 1)


# --------------------------------------------------------------------- files
def test_zarr_round_trip(executor, runs, tmp_path):
    ds = _dataset()
    lz = _lazy(ds, {"time": 6})
    (lz * 2).to_zarr(tmp_path / "a.zarr", consolidated=False)
    assert runs == [3]  # every variable written in one plan
    plain = xr.open_zarr(tmp_path / "a.zarr", consolidated=False).load()
    xr.testing.assert_allclose(plain, ds * 2)
    back = xr.open_zarr(
        tmp_path / "a.zarr", chunked_array_type="lazyarr", chunks={}, consolidated=False
    )
    assert _is_lazy(back)
    assert back.temp.chunks == ((6, 6, 6, 6), (5,), (6,))  # the zarr chunks
    got = back.temp.mean("time")
    xr.testing.assert_allclose(got.compute(), (ds.temp * 2).mean("time"))


def test_to_zarr_later(executor, tmp_path):
    """``compute=False``: xarray wraps the lazy writes (Dask collections) in a Delayed."""
    import dask

    ds = _dataset()
    delayed = _lazy(ds, {"time": 6}).to_zarr(tmp_path / "c.zarr", compute=False, consolidated=False)
    assert xr.open_zarr(tmp_path / "c.zarr", consolidated=False).temp.isnull().all()
    dask.compute(delayed)
    xr.testing.assert_allclose(xr.open_zarr(tmp_path / "c.zarr", consolidated=False).load(), ds)


def test_to_netcdf(executor, tmp_path):
    pytest.importorskip("h5netcdf")
    ds = _dataset()
    (_lazy(ds) + 1).to_netcdf(tmp_path / "b.nc", engine="h5netcdf")
    with xr.open_dataset(tmp_path / "b.nc", engine="h5netcdf") as back:
        xr.testing.assert_allclose(back.load(), ds + 1)


def test_open_dataset_netcdf(executor, tmp_path):
    pytest.importorskip("h5netcdf")
    ds = _dataset()
    path = tmp_path / "a.nc"
    ds.to_netcdf(path, engine="h5netcdf", encoding={"temp": {"chunksizes": (8, 5, 3)}})
    with xr.open_dataset(
        path, engine="h5netcdf", chunked_array_type="lazyarr", chunks={}
    ) as opened:
        assert _is_lazy(opened)
        assert opened.temp.chunks == ((8, 8, 8), (5,), (3, 3))
        got = (opened.temp - opened.temp.mean("time")).compute()
    xr.testing.assert_allclose(got, ds.temp - ds.temp.mean("time"))


# ------------------------------------------------------------- manager methods
def test_normalize_chunks_and_unify(manager):
    assert manager.normalize_chunks((3, -1), shape=(7, 5), dtype=np.float64) == (
        (3, 3, 1),
        (5,),
    )
    auto = manager.normalize_chunks("auto", shape=(100, 10), dtype=np.float64)
    assert auto == ((100,), (10,))
    a = la.ones((6, 4), chunks=(3, 2))
    b = la.ones((6, 4), chunks=(2, 4))
    chunkss, (a2, b2) = manager.unify_chunks(a, "ij", b, "ij")
    assert chunkss == {"i": (3, 3), "j": (2, 2)}
    assert a2.chunks == b2.chunks == ((3, 3), (2, 2))
    np.testing.assert_array_equal((a2 + b2).compute(), np.full((6, 4), 2.0))


@pytest.mark.parametrize("name", ["map_blocks", "blockwise", "apply_gufunc"])
def test_block_functions_delegate_or_say_why(manager, name):
    if hasattr(la, name):
        pytest.skip(f"lazyarr.{name} exists: covered by the tests below")
    x = la.ones((4,), chunks=2)
    args = {
        "map_blocks": (np.negative, x),
        "blockwise": (np.negative, "i", x, "i"),
        "apply_gufunc": (np.negative, "()->()", x),
    }[name]
    with pytest.raises(NotImplementedError, match=f"lazyarr.{name} is not available"):
        getattr(manager, name)(*args)


@pytest.mark.skipif(not hasattr(la, "map_blocks"), reason="lazyarr.map_blocks not merged yet")
def test_map_blocks_delegates(manager):
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a, chunks=(2, 2))
    got = manager.map_blocks(np.add, x, 1, dtype=x.dtype)
    np.testing.assert_allclose(np.asarray(got), a + 1)


@pytest.mark.skipif(not hasattr(la, "blockwise"), reason="lazyarr.blockwise not merged yet")
def test_blockwise_delegates(manager):
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a, chunks=(2, 2))
    got = manager.blockwise(np.multiply, "ij", x, "ij", 3, None, dtype=x.dtype)
    np.testing.assert_allclose(np.asarray(got), a * 3)


@pytest.mark.skipif(not hasattr(la, "apply_gufunc"), reason="lazyarr.apply_gufunc not merged yet")
def test_apply_ufunc_parallelized(executor):
    ds = _dataset()
    lz = _lazy(ds, {"time": 6})
    got = xr.apply_ufunc(np.tanh, lz.temp, dask="parallelized", output_dtypes=[float])
    assert _is_lazy(got)
    xr.testing.assert_allclose(got.compute(), np.tanh(ds.temp))


# ------------------------------------------------------------- dask executor
def test_zarr_in_and_out_on_the_dask_executor(dask_ex, tmp_path):
    """Workers read the zarr variables xarray opened and write the new store themselves."""
    ds = _dataset()
    ds.to_zarr(tmp_path / "in.zarr", consolidated=False)
    with config.set({"executor": "dask"}):
        opened = xr.open_zarr(
            tmp_path / "in.zarr", chunked_array_type="lazyarr", chunks={}, consolidated=False
        )
        got = (opened.temp - opened.temp.mean("time")).compute()
        assert la.last_run().executor == "dask"
        xr.testing.assert_allclose(got, ds.temp - ds.temp.mean("time"))
        (opened * 2).to_zarr(tmp_path / "out.zarr", consolidated=False)
    written = xr.open_zarr(tmp_path / "out.zarr", consolidated=False).load()
    xr.testing.assert_allclose(written, ds * 2)


def test_plot_draws_the_computed_values():
    """``.plot()`` of a lazyarr-backed DataArray (xarray computes it through the manager)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a = np.random.default_rng(0).random((20, 30))
    da = xr.DataArray(a, dims=("y", "x")).chunk({"y": 10}, chunked_array_type="lazyarr")
    assert isinstance(da.data, la.LazyArray)
    (line,) = da.mean("y").plot()
    np.testing.assert_allclose(line.get_ydata(), a.mean(axis=0))
    mesh = da.plot()
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(a.shape), a)
    plt.close("all")

"""A zarr variable opened with ``chunked_array_type="lazyarr"`` is read from its chunk files.

xarray wraps every stored variable in lazily indexed adapters that read
through zarr's own event loop, one chunk at a time; the chunk manager hands
lazyarr the zarr array under them when they select, decode and convert
nothing, so blocks are decoded straight from the files on every thread
(``io/zarr_chunks.py``). Variables that xarray decodes (a scale factor, a
fill value of an integer variable) keep xarray's wrappers. Values are compared
with xarray's own reading.
"""

from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

import lazyarr as la  # noqa: E402
from lazyarr.graph.ops.creation import FromReader  # noqa: E402
from lazyarr.io.readers import ZarrReader  # noqa: E402


def _readers(arr: la.LazyArray) -> list:
    seen, stack, out = set(), [arr._expr], []
    while stack:
        e = stack.pop()
        if e.key in seen:
            continue
        seen.add(e.key)
        if isinstance(e.op, FromReader):
            out.append(e.op.reader)
        stack.extend(e.inputs)
    return out


def _store(path) -> xr.Dataset:
    rng = np.random.default_rng(1)
    ds = xr.Dataset(
        {
            "sst": (("time", "y"), rng.random((12, 5)).astype("float32")),
            "scaled": (("time", "y"), rng.random((12, 5))),
            "ints": (("time", "y"), rng.integers(0, 9, (12, 5)).astype("int16")),
        }
    )
    encoding = {
        "sst": {"chunks": (4, 5)},
        "scaled": {"chunks": (4, 5), "dtype": "int16", "scale_factor": 0.01, "_FillValue": -1},
        "ints": {"chunks": (4, 5), "_FillValue": 3},
    }
    ds.to_zarr(path, encoding=encoding, consolidated=False)
    return xr.open_zarr(path, consolidated=False).load()


def test_plain_variables_read_their_chunk_files_and_decoded_ones_keep_xarray(executor, tmp_path):
    want = _store(tmp_path / "a.zarr")
    lz = xr.open_zarr(
        tmp_path / "a.zarr", chunks={}, chunked_array_type="lazyarr", consolidated=False
    )
    (plain,) = _readers(lz.sst.data)
    assert isinstance(plain, ZarrReader)
    for name in ("scaled", "ints"):  # xarray decodes these: its wrappers read them
        (reader,) = _readers(lz[name].data)
        assert not isinstance(reader, ZarrReader), name
    xr.testing.assert_identical(lz.compute(), want)
    sub = lz.sst.isel(time=slice(2, 9)).mean("y")
    xr.testing.assert_allclose(sub.compute(), want.sst.isel(time=slice(2, 9)).mean("y"))


def test_a_selection_made_before_chunking_is_read_through_xarray(executor, tmp_path):
    want = _store(tmp_path / "b.zarr")
    ds = xr.open_zarr(tmp_path / "b.zarr", chunks=None, consolidated=False)
    part = ds.sst.isel(time=slice(1, 7)).chunk(chunked_array_type="lazyarr")
    (reader,) = _readers(part.data)
    assert not isinstance(reader, ZarrReader)
    xr.testing.assert_identical(part.compute(), want.sst.isel(time=slice(1, 7)))

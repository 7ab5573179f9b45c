"""Fixtures the xarray tests share: the ``lazyarr`` chunk manager as xarray finds it, and
the local executors each test runs on."""

from __future__ import annotations

import pytest

from lazyarr import config

xr = pytest.importorskip("xarray")

from xarray.namedarray.parallelcompat import list_chunkmanagers  # noqa: E402

from lazyarr.xarray_chunkmanager import LazyarrManager  # noqa: E402


@pytest.fixture(autouse=True)
def manager(monkeypatch):
    """The ``lazyarr`` chunk manager as xarray finds it (added for the test if the entry
    point is not installed in this environment)."""
    managers = list_chunkmanagers()
    if "lazyarr" not in managers:
        monkeypatch.setitem(managers, "lazyarr", LazyarrManager())
    return managers["lazyarr"]


@pytest.fixture(params=["numpy", "numba"])
def executor(request):
    """Each local executor in turn, as the ``executor`` setting."""
    with config.set({"executor": request.param}):
        yield request.param

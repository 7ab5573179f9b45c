"""Shared fixtures of the executor tests."""

from __future__ import annotations

import pytest

from lazyarr import config
from lazyarr.executors import registry


@pytest.fixture(scope="module")
def dask_ex():
    """The ``dask`` executor on a LocalCluster (2 processes x 1 thread), one per module, closed."""
    ex = registry.get("dask")
    settings = {"dask.n-workers": 2, "dask.threads-per-worker": 1, "dask.address": None}
    with config.set(settings):
        ex.client()  # start the cluster once for the module
        try:
            yield ex
        finally:
            ex.close()

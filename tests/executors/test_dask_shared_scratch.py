"""A rechunk that would not fit memory-limit on an external scheduler's workers: staged
through the scratch store only where the user says every worker shares it
(``dask.shared-scratch``), else refused before anything runs (issue 23)."""

from __future__ import annotations

import numpy as np
import pytest
import zarr
from distributed import LocalCluster

import lazyarr as la
from lazyarr import config
from lazyarr.executors import registry


@pytest.fixture
def external():
    """A scheduler lazyarr did not start (2 workers x 1 thread on loopback), closed after."""
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,  # and the scheduler's HTTP routes on a free port, not 8787
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
    ) as cluster:
        try:
            yield cluster.scheduler_address
        finally:
            registry.get("dask").close()  # the client lazyarr connected


def test_an_external_cluster_stages_a_rechunk_only_through_a_shared_scratch(external, tmp_path):
    a = np.random.default_rng(2).standard_normal((2048, 256))
    x = la.asarray(a, chunks=(64, 256))
    y = la.map_blocks(lambda b: b + 1, x, dtype=x.dtype).rechunk((2048, 8))
    scratch = tmp_path / "scratch"
    settings = {
        "dask.address": external,
        "memory-limit": "3MiB",
        "temporary-directory": str(scratch),
    }
    with config.set(settings), pytest.raises(la.MemoryLimitError, match=r"dask\.shared-scratch"):
        la.to_zarr(y, str(tmp_path / "refused.zarr"), executor="dask")
    assert not (tmp_path / "refused.zarr").exists() and not scratch.exists()
    with config.set({**settings, "dask.shared-scratch": True}):
        la.to_zarr(y, str(tmp_path / "out.zarr"), executor="dask")
        assert la.last_run().predicted_peak <= 3 * 2**20
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "out.zarr"))[:], a + 1)
    assert scratch.exists() and list(scratch.iterdir()) == []  # made, used, removed

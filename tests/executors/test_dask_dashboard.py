"""The cluster lazyarr starts can be watched: Dask's dashboard on loopback, its link
printed once, and ``la.dask_client()`` to reach the client (issue 25)."""

from __future__ import annotations

import urllib.error
import urllib.request

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.executors.dask_cluster import ClusterManager

pytest.importorskip("bokeh", reason="Dask's dashboard needs bokeh")

THREADS = {"dask.n-workers": 1, "dask.processes": False, "dask.address": None}


def test_dask_client_is_the_executors_client_and_its_dashboard_answers(dask_ex):
    client = la.dask_client()
    assert client is dask_ex.client() and la.cluster() is client
    link = client.dashboard_link
    assert link.startswith("http://127.0.0.1:") and link.endswith("/status")
    with urllib.request.urlopen(link, timeout=30) as page:  # served by bokeh on loopback
        assert page.status == 200
    x = la.asarray(np.arange(12.0), chunks=4)
    np.testing.assert_array_equal((x * 2).compute(executor="dask"), np.arange(12.0) * 2)


def test_the_link_is_printed_once_per_cluster_started(capsys):
    manager = ClusterManager()
    try:
        with config.set(THREADS):
            first = manager.client()
            assert manager.client() is first  # reused: nothing printed again
        printed = capsys.readouterr().err
        assert printed.count("lazyarr: Dask dashboard at http://127.0.0.1:") == 1
        port = first.scheduler_info()["services"]["dashboard"]
        assert f"http://127.0.0.1:{port}/status\n" in printed
    finally:
        manager.close()


def test_no_dashboard_when_the_setting_is_null(capsys):
    manager = ClusterManager()
    try:
        with config.set({**THREADS, "dask.dashboard": None}):
            client = manager.client()
            port = client.scheduler_info()["services"]["dashboard"]  # its HTTP routes only
            with pytest.raises(urllib.error.HTTPError, match="404"):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=30)
        assert "dashboard" not in capsys.readouterr().err
    finally:
        manager.close()

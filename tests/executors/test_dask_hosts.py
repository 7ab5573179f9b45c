"""Host groups on the ``dask`` executor: ``dask.host-groups`` and bytes between hosts.

A real LocalCluster of 4 workers x 1 thread (processes, loopback; one for the
module, always closed) modelled as 2 hosts x 2 workers through the setting.
Results equal NumPy's; the bytes the workers fetched from peers on the other
host group (lazyarr's per-worker counters, ``last_stats.extra["transfers"]``)
are fewer than with a plan made blind to the groups. Plus the setting's checks
and the pure functions of ``executors/dask_hosts.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.executors import registry
from lazyarr.executors.dask_hosts import (
    Relays,
    bytes_between_hosts,
    check_host_groups,
    group_hosts,
    transfers,
)

GROUPS = {"0": "hostA", "1": "hostA", "2": "hostB", "3": "hostB"}
SETTINGS = {
    "executor": "dask",
    "progress": False,
    "dask.address": None,
    "dask.n-workers": 4,
    "dask.threads-per-worker": 1,
    "dask.active-memory-manager": False,  # replicas stay: bytes follow the plan
    "dask.kernels": "numpy",
}


@pytest.fixture(scope="module")
def four_workers():
    """The dask executor on 4 worker processes x 1 thread; yields ``address -> group``."""
    ex = registry.get("dask")
    with config.set(SETTINGS):
        client = ex.client()
        try:
            info = client.scheduler_info(n_workers=-1)["workers"]
            addrs = sorted(info)
            names = [info[a]["name"] for a in addrs]
            yield dict(zip(addrs, group_hosts(addrs, names, ["?"] * 4, GROUPS)))
        finally:
            ex.close()


def _run(expr, groups):
    """Compute ``expr`` under ``groups``; its value and the run's statistics and plan."""
    with config.set({**SETTINGS, "dask.host-groups": groups}):
        got = expr.compute()
        run = la.last_run()
    return got, run.stats, run.plan


def _cases():
    rng = np.random.default_rng(11)
    xn, an, bn = rng.random((4000, 40)), rng.random((400, 400)), rng.random((400, 400))
    wn, yn = rng.random(40), rng.random(4000)
    x = la.asarray(xn, chunks=(500, 40))
    a, b = la.asarray(an, chunks=100), la.asarray(bn, chunks=100)
    w, y = la.asarray(wn), la.asarray(yn, chunks=500)
    p = 1.0 / (1.0 + la.exp(-(x @ w)))
    pn = 1.0 / (1.0 + np.exp(-(xn @ wn)))
    return {
        "rechunk": (x.rechunk((4000, 10)), xn),
        "matmul": (a @ b, an @ bn),
        "logreg-gradient": (x.T @ (p - y), xn.T @ (pn - yn)),
        "logreg-hessian": (
            x.T @ (x * (p * (1.0 - p))[:, None]),
            xn.T @ (xn * (pn * (1.0 - pn))[:, None]),
        ),
    }


CASES = _cases()


def test_the_setting_names_each_workers_host(four_workers):
    ex = registry.get("dask")
    with config.set({**SETTINGS, "dask.host-groups": GROUPS}):
        info = ex.plan_context()
    assert info["hosts"] == tuple(four_workers[a] for a in info["workers"])
    assert sorted(info["hosts"]) == ["hostA", "hostA", "hostB", "hostB"]
    with config.set(SETTINGS):
        assert ex.plan_context()["hosts"] == ("127.0.0.1",) * 4  # the scheduler's hosts


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_equal_numpy_and_bytes_between_hosts_are_counted(four_workers, name):
    expr, want = CASES[name]
    got, stats, plan = _run(expr, GROUPS)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert plan.notes["place"]["hosts_first"] is True
    assert [four_workers[w] for w in plan.workers] == list(plan.hosts)
    moved = stats.extra["transfers"]
    assert sum(n for by in moved.values() for n in by.values()) == stats.extra["measured_bytes"]
    assert stats.extra["bytes_between_hosts"] == bytes_between_hosts(moved, four_workers)


def test_knowing_the_groups_moves_fewer_bytes_between_them(four_workers):
    """A rechunk from row to column blocks: every output reads every input, so a plan blind
    to the groups fetches both hosts' halves everywhere; whatever worker order the ports
    give (the matmul and logistic regression gain only in some orders: see
    ``tests/optimize/test_placement_hosts.py``)."""
    expr, want = CASES["rechunk"]
    between = {}
    for label, groups in (("blind", None), ("groups", GROUPS)):
        got, stats, _ = _run(expr, groups)
        np.testing.assert_allclose(got, want, rtol=1e-10)
        between[label] = bytes_between_hosts(stats.extra["transfers"], four_workers)
    assert between["groups"] < between["blind"]


def test_values_several_workers_of_another_host_read_are_relayed(four_workers):
    """Matmul of row blocks: every worker reads every block of B; each block crosses to
    the other host once, to a relay there (Dask's peers on one IP do not prefer a
    same-group holder, so measured bytes may still exceed the plan's; never fewer)."""
    an, bn = np.random.default_rng(5).random((2, 400, 400))
    a, b = la.asarray(an, chunks=(100, 400)), la.asarray(bn, chunks=(100, 400))
    expr, want = a @ b, an @ bn
    got, stats, plan = _run(expr, GROUPS)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert stats.extra["relays"] > 0
    assert stats.extra["bytes_between_hosts"] >= plan.notes["place"]["bytes_between_hosts"]
    _, blind, _ = _run(expr, None)
    assert blind.extra["relays"] == 0


def test_relays_closed_form():
    hosts = (0, 0, 1, 1)
    reads = [(7, 0, 2), (7, 0, 3), (7, 0, 2), (8, 0, 2), (9, 0, 1), (10, -1, 2), (11, 3, 0)]
    relays = Relays(hosts, [*reads, (11, 3, 1), (12, 2, -1)])
    assert len(relays) == 2
    assert relays.via(7, 2) == relays.via(7, 3) == 2  # the first reader on host 1
    assert relays.via(7, 0) is None  # the producer's host reads it directly
    assert relays.via(8, 2) is None  # one reader there: no relay
    assert relays.via(9, 1) is None and relays.via(10, 2) is None
    assert relays.via(11, 1) == relays.via(11, 0) == 0
    assert relays.via(12, -1) is None


# ----------------------------------------------------------------- the setting


def test_bad_values_raise_when_set():
    with pytest.raises(ValueError, match="host-groups"):
        config.set({"dask.host-groups": ["hostA"]})
    with pytest.raises(ValueError, match="not a non-empty string"):
        config.set({"dask.host-groups": {"0": 3}})
    with pytest.raises(ValueError, match="not a worker name"):
        check_host_groups({None: "a"})
    with pytest.raises(ValueError, match="mapping"):
        check_host_groups("hostA")


def test_keys_become_strings_and_text_is_read_as_yaml():
    with config.set({"dask.host-groups": {0: "a", 1: "b"}}):
        assert config.get("dask.host-groups") == {"0": "a", "1": "b"}
    with config.set({"dask.host-groups": "{0: a, 'tcp://h:1': b}"}):
        assert config.get("dask.host-groups") == {"0": "a", "tcp://h:1": "b"}
    assert config.get("dask.host-groups") is None


def test_group_hosts_by_name_address_then_pattern():
    addrs = ["tcp://10.0.1.5:1", "tcp://10.0.1.6:1", "tcp://10.0.2.7:1", "tcp://10.0.3.8:1"]
    names = [0, "w1", "w2", None]
    hosts = ["10.0.1.5", "10.0.1.6", "10.0.2.7", "10.0.3.8"]
    groups = {"tcp://10.0.*": "rack", "0": "first", "tcp://10.0.2.7:1": "third"}
    assert group_hosts(addrs, names, hosts, groups) == ("first", "rack", "third", "rack")
    assert group_hosts(addrs, names, hosts, {"w?": "g"}) == ("10.0.1.5", "g", "g", "10.0.3.8")
    assert group_hosts(addrs, names, hosts, None) == tuple(hosts)
    with pytest.raises(ValueError):
        group_hosts(addrs, names[:2], hosts, groups)


def test_bytes_between_hosts_of_a_transfer_table():
    moved = transfers(
        {"a": {"bytes_from": {"b": 10, "c": 100}}, "c": {"bytes_from": {"d": 7, "a": 0}}}
    )
    assert moved == {"a": {"b": 10, "c": 100}, "c": {"d": 7}}
    hosts = {"a": "h0", "b": "h0", "c": "h1", "d": "h1"}
    assert bytes_between_hosts(moved, hosts) == 100
    assert bytes_between_hosts(moved, {}) == 117  # each worker its own host

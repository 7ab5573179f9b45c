"""The cost model's speeds on a real cluster (2 workers x 1 thread) and in this process.

Counts, not times: the probe runs once per cluster (and once per process for
the numba executor), its numbers are positive and kept per cluster, a run
that moves bytes between workers teaches the network bandwidth, and
``explain`` / ``last_run()`` show predicted seconds per stage.
"""

from __future__ import annotations

import distributed
import numpy as np
import pytest

import lazyarr as la
from lazyarr import api, config
from lazyarr.executors import calibrate, dask_calibrate, registry
from lazyarr.executors.numba import NumbaExecutor
from lazyarr.optimize.timing import Costs


def test_the_probe_is_small():
    """Well under a second at slow speeds for any machine that runs lazyarr (1 GB/s of
    memory, 100 M flops/s, 1 G matmul flops/s: about a quarter of a second)."""
    work = calibrate.probe_work()
    assert work["bytes"] / 1e9 + work["flops"] / 1e8 + work["matmul_flops"] / 1e9 < 0.3


def test_the_probe_measures_positive_speeds():
    bandwidth, flops, matmul, cores = calibrate.probe_speed()
    assert bandwidth > 0 and flops > 0 and matmul > 0 and cores >= 1


def test_the_cluster_is_probed_once(dask_ex):
    client = dask_ex.client()
    record = dask_ex.calibrations.of(client)
    x = la.asarray(np.arange(40.0), chunks=10)
    with config.set({"executor": "dask"}):
        np.testing.assert_allclose((x * 2).compute(), np.arange(40.0) * 2)
        np.testing.assert_allclose((x + 3).sum().compute(), (np.arange(40.0) + 3).sum())
    ctx = dask_ex.plan_context()
    assert record.probes == 1
    assert set(record.speeds) == set(ctx["workers"])
    for speed in record.speeds.values():
        assert speed.memory_bandwidth > 0 and speed.flop_rate > 0 and speed.matmul_rate > 0
    assert record.task_seconds >= 0 and record.hop_seconds > 0
    costs = ctx["costs"]
    assert isinstance(costs, Costs) and costs.measured
    assert costs.speeds == tuple(record.speeds[w] for w in ctx["workers"])
    assert all(c >= 1 for c in costs.cores) and len(costs.cores) == 2


def test_speeds_are_kept_per_cluster(dask_ex):
    first = dask_ex.calibrations.of(dask_ex.client())
    dask_ex.plan_context()
    probes = first.probes
    with (
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,  # the scheduler's HTTP routes too: not 8787
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as other,
    ):
        workers = tuple(other.scheduler_info()["workers"])
        costs = dask_ex.calibrations.costs(other, workers)
        dask_ex.calibrations.costs(other, workers)  # known: not probed again
        second = dask_ex.calibrations.of(other)
        assert second is not first
        assert second.probes == 1 and set(second.speeds) == set(workers)
        assert len(costs.speeds) == 1 and costs.speeds[0].flop_rate > 0
        assert dask_calibrate.cluster_key(other) != dask_calibrate.cluster_key(dask_ex.client())
    assert first.probes == probes  # the first cluster's record is untouched


def test_transfers_teach_the_network_bandwidth(dask_ex):
    # 3 blocks of 160 kB on worker 0, added to on worker 1 (hard placement): 480 kB move
    a = np.random.default_rng(4).random((6, 10_000))
    y = la.asarray(a, chunks=(2, 10_000)) + 1
    plan = api.make_plan([y._expr], "dask", ("cse", "simplify"))
    src = next(n for n, s in plan.stages.items() if s.kind == "source")
    stages = {
        n: s.replace(worker=np.full(s.numblocks, 0 if n == src else 1, dtype=np.int32))
        for n, s in plan.stages.items()
    }
    plan = plan.with_stages(stages)
    record = dask_ex.calibrations.of(dask_ex.client())
    dask_ex.plan_context()  # probed: the run's residuals need the speeds
    runs = record.runs
    with config.set({"dask.placement": "hard"}):
        (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, a + 1)
    moved = dask_ex.last_stats.extra["network"]
    assert moved["bytes"] >= 3 * 160_000 and moved["seconds"] > 0
    assert record.runs == runs + 1
    assert record.network_bandwidth is not None and record.network_bandwidth > 0
    assert dask_ex.plan_context()["costs"].network_bandwidth == record.network_bandwidth


def test_a_run_that_moves_nothing_leaves_the_bandwidth():
    record = dask_calibrate.ClusterCalibration()
    assert not record.add_transfers(100, 0.01)  # latency, not bandwidth
    assert record.network_bandwidth is None
    assert record.add_transfers(1e6, 0.01)
    assert record.network_bandwidth == pytest.approx(1e8)
    assert record.add_transfers(1e6, 0.03)  # earlier runs weigh half
    assert record.network_bandwidth == pytest.approx(1.5e6 / 0.035)


def test_small_tasks_teach_the_seconds_per_task():
    record = dask_calibrate.ClusterCalibration()
    record.add_residuals({"a": 1e-3, "b": 3e-3, "c": -1.0})
    assert record.call_seconds == pytest.approx(1e-3)  # the median
    record.add_residuals({"a": 3e-3})
    assert record.call_seconds == pytest.approx(2e-3)
    assert record.costs(()).call_seconds == pytest.approx(2e-3)


def test_tree_spans_teach_the_round_trip():
    record = dask_calibrate.ClusterCalibration(hop_seconds=0.004)
    record.add_hops([])  # a run without combine trees leaves it
    assert record.hop_seconds == 0.004
    record.add_hops([0.001, 0.002, 0.030])
    assert record.hop_seconds == pytest.approx((0.004 + 0.002) / 2)


def test_explain_and_last_run_show_predicted_seconds_on_dask(dask_ex):
    a = la.random.random((400, 300), chunks=(100, 300), seed=3)
    y = (a * 2).sum(axis=0)
    with config.set({"executor": "dask"}):
        text = la.explain(y)
        assert text.count("predicted ") >= 2  # the summary's peak line and the stages
        np.testing.assert_allclose(y.compute(), (a.compute() * 2).sum(axis=0))
    run = la.last_run()
    predicted = run.predicted()
    assert predicted and all(v > 0 for v in predicted.values())
    assert set(run.stats.stage_seconds) <= set(predicted) | set(run.plan.stages)
    shown = repr(run)
    assert "predicted" in shown.splitlines()[2]  # the stage table's header
    assert "predicted" in run._repr_html_()
    measured = la.explain(measured=True)
    assert "predicted / measured" in measured


def test_numba_probes_once_per_process_and_predicts():
    ex = registry.get("numba")
    assert isinstance(ex, NumbaExecutor)
    first = ex.plan_context()["costs"]
    probes = ex.calibration.probes
    assert probes == 1 and first.measured and first.speeds[0].memory_bandwidth > 0
    assert ex.plan_context()["costs"] is first  # kept, not probed again
    assert ex.calibration.probes == 1
    x = la.asarray(np.arange(4000.0), chunks=1000)
    y = la.sqrt(x) + 1
    with config.set({"numba.compile-threshold": 0}):
        assert "predicted " in la.explain(y, executor="numba")
        np.testing.assert_allclose(y.compute(executor="numba"), np.sqrt(np.arange(4000.0)) + 1)
    run = la.last_run()
    stage = next(iter(run.stats.stage_seconds))
    assert run.predicted()[stage] > 0
    assert "predicted" in repr(run)


def test_numpy_predicts_nothing():
    x = la.asarray(np.arange(40.0), chunks=10)
    (x + 1).compute(executor="numpy")
    run = la.last_run()
    assert run.predicted() is None and "predicted" not in repr(run)
    assert "predicted " not in la.explain(x + 1, executor="numpy").split("Stages")[1]

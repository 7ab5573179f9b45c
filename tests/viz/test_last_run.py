"""``la.last_run()`` reads as a report: text repr and notebook HTML (``viz/runsummary.py``)."""

from __future__ import annotations

import pytest

import lazyarr as la
from lazyarr.optimize.plan import Plan
from lazyarr.viz.runsummary import run_summary


def test_last_run_repr_names_the_executor_stages_and_totals():
    x = la.random.random((400, 8), chunks=(100, 8), seed=0, name="x")
    z = la.sqrt((x**2).sum(axis=1)).rename("z")
    z.compute(executor="numpy")
    run = la.last_run()
    text = repr(run)
    assert text.startswith("lazyarr last run on numpy: ")
    assert "blocks" in text and "peak" in text
    assert f"plan: {len(run.plan.stages)} stages" in text
    for name in run.plan.stages:
        assert name in text  # one row per stage
    assert "z (" in text  # the user's name beside the stage name
    assert "task time" in text and "bytes" in text


def test_last_run_html_is_a_table_with_escaped_values():
    x = la.ones((10,), chunks=5).rename("<b>x</b>")
    (x + 1).compute(executor="numpy")
    out = la.last_run()._repr_html_()
    assert out.startswith('<div class="lazyarr-last-run">') and "<table " in out
    assert "numpy" in out and "&lt;b&gt;x&lt;/b&gt;" in out and "<b>x</b>" not in out
    assert out.count("<tr>") == 1 + len(la.last_run().plan.stages)
    # Jupyter's table style right-aligns cells and centres tables: each cell says its own
    assert "<th>" not in out and "<td>" not in out and "margin-left:0" in out


def test_summary_of_a_run_that_measured_nothing(plan: Plan):
    s = run_summary(plan, "raise", None)
    assert s.seconds is None and s.blocks == plan.total_blocks
    assert "lazyarr last run on raise: -" in s.text()
    assert s.stages == len(plan.stages) and s.fused == sum(x.fused for x in plan.stages.values())


def test_summary_reads_the_executors_stats(plan: Plan):
    name = next(iter(plan.stages))
    stats = {"seconds": 1.5, "stage_seconds": {name: 0.25}, "blocks": 7, "peak_bytes": 2_000_000}
    s = run_summary(plan, "numba", stats)
    text = s.text()
    assert "1.50 s" in text and "7 blocks" in text and "blocks held 1.91 MiB" in text
    assert "250.0 ms" in text


def test_last_run_splits_planning_compiling_and_running_and_they_add_up():
    """Before: the header showed the executor's time (427 ms, compiling included) beside
    stages that summed to 34 ms, with planning left out and nothing labelled."""
    x = la.random.random((64, 8), chunks=(16, 8), seed=3)
    with la.config.set({"numba.compile-threshold": 0}):
        (x * 3.25 - 1).sum(axis=1).compute(executor="numba")
    run = la.last_run()
    s = run.summary()
    assert s.planning is not None and s.planning > 0
    assert s.compiling is not None and s.compiling > 0  # the kernels
    assert s.seconds == run.total >= run.stats.seconds  # the whole compute, planning too
    assert s.planning + s.compiling + s.running == pytest.approx(s.seconds)
    tasks = sum(r.seconds or 0.0 for r in s.rows)
    assert tasks <= s.running + 1e-3  # one thread (tiny blocks): task times fit in running
    head = repr(run).splitlines()[0]
    assert " = planning " in head and " + compiling " in head and " + running " in head
    assert "task time" in repr(run) and "task time" in run._repr_html_()


def test_an_executor_without_compiling_shows_planning_and_running():
    (la.ones((10,), chunks=5) + 1).compute(executor="numpy")
    head = repr(la.last_run()).splitlines()[0]
    assert " = planning " in head and " + running " in head and "compiling" not in head


def test_the_predicted_peak_is_shown_beside_the_measured_one_under_a_limit():
    """Under ``memory-limit`` the check's predicted peak is kept with the run: the report
    reads ``peak <measured> (predicted <predicted>)``, and the prediction is not below the
    measured peak; without a limit nothing was predicted and nothing is shown."""
    import numpy as np

    a = np.random.default_rng(0).random((4000, 50))
    x = la.asarray(a, chunks=(500, 50))
    with la.config.set({"memory-limit": "64MiB", "numba.compile-threshold": 0}):
        (la.sin(x) * 2).compute(executor="numba")
    run = la.last_run()
    assert run.predicted_peak is not None and run.stats.peak_bytes
    assert run.predicted_peak >= run.stats.peak_bytes
    assert " (predicted " in repr(run) and "(predicted " in run._repr_html_()
    (la.sin(x) * 2).compute(executor="numba")
    head = repr(la.last_run()).splitlines()[0]  # (the stage table predicts seconds)
    assert la.last_run().predicted_peak is None and "predicted" not in head

"""The explain text, checked by content: order, fused ops, bytes, reasons, measurements."""

from __future__ import annotations

import re

import numpy as np
import pytest
from sample_plans import sample_plan, sample_stats

import lazyarr as la
from lazyarr import api
from lazyarr.graph import build
from lazyarr.planview import Explanation, explain, plan_of
from lazyarr.viz import explain_text, measured_from


def section(text: str, stage: str) -> str:
    """The lines of one stage's entry."""
    m = re.search(rf"^\[\d+\] {re.escape(stage)} .*?(?=^\[\d+\] |^\S|\Z)", text, re.M | re.S)
    assert m, f"no entry for {stage}:\n{text}"
    return m.group(0)


def test_stages_in_run_order_with_fused_ops_and_bytes(plan):
    text = explain_text(plan, executor="numpy")
    assert text.startswith("lazyarr plan: 3 stages (1 fused), 9 blocks, outputs total")
    assert "executor: numpy; memory limit: none" in text
    order = [m.group(1) for m in re.finditer(r"^\[\d+\] (\S+)", text, re.M)]
    assert order == ["src", "fmap", "total"]
    fmap = section(text, "fmap")
    assert "(map, fused 3 ops)" in fmap
    assert "ops       add -> multiply -> sqrt" in fmap
    assert "grid      4 (4x1) blocks of (250, 200), shape (1000, 200) float64" in fmap
    assert "reads     src (1.53 MiB)" in fmap
    assert "in 1.53 MiB, out 1.53 MiB, est peak/block 1.53 MiB" in fmap
    total = section(text, "total")
    assert "[output]" in total and "out 1.56 kiB" in total


def test_history_says_which_passes_changed_what(plan):
    text = explain_text(plan)
    assert re.search(r"^  cse .*5 -> 5 stages$", text, re.M)
    assert re.search(r"^  fuse .*5 -> 3 stages$", text, re.M)


def test_why_each_node_was_or_was_not_fused(plan):
    text = explain_text(plan)
    fmap = section(text, "fmap")
    for m in plan.stages["fmap"].members:
        assert f"{m.name}: {plan.notes['fuse'][m.name]}" in fmap
    assert "not fused: a requested output is stored" in section(text, "total")
    assert "not fused: full is not elementwise" in section(text, "src")


def test_memory_limit_flags_the_stage(plan):
    text = explain_text(plan, memory_limit=1_000_000)
    assert "memory limit: 0.95 MiB" in text
    assert "! 1 stage(s) may exceed the memory limit: fmap" in text
    assert "OVER memory limit" in section(text, "fmap")
    assert "OVER" not in section(text, "src")


def test_placement_summary_reasons_and_worker_loads(placed_plan):
    text = explain_text(placed_plan, executor="dask")
    fmap, total = section(text, "fmap"), section(text, "total")
    half = "2 blocks, 781.25 kiB (+0 B in)"
    assert f"placed    w0: {half}; w1: {half}" in fmap
    assert "strategy  owner" in fmap
    assert "placed    w1: 1 blocks, 1.56 kiB (+800 B in)" in total and "strategy  tree" in total
    assert "why place partials paired on their holders" in total
    assert "predicted 800 B moved between workers" in text
    assert "total_bytes: 800 B" in text and "total_moves: 1" in text
    assert "hosts" not in text.split("Placement")[1].split("Workers")[0]  # lists are not dumped
    workers = text.split("Workers (planned)")[1]
    assert re.search(r"w0 127\.0\.0\.1:4001 .*memory 3\.05 MiB; network in 0 B", workers)
    assert re.search(r"w1 127\.0\.0\.1:4002 .*memory 1\.62 MiB; network in 800 B", workers)


def test_measured_numbers_beside_predictions(placed_plan):
    text = explain_text(placed_plan, "dask", measured=measured_from(sample_stats()))
    assert "measured: 250.0 ms in total on dask" in text
    assert "measured  123.0 ms" in section(text, "fmap")
    workers = text.split("Workers (planned | measured)")[1]
    # planned | measured, per worker
    assert re.search(r"4001 .*memory 3\.05 MiB \| 3\.91 MiB; network in 0 B \| 0 B", workers)
    assert re.search(r"4002 .*network in 800 B \| 1\.56 kiB.*5 tasks run", workers)


def test_unplanned_workers_still_show_measurements(plan):
    text = explain_text(plan, "dask", measured=measured_from(sample_stats()))
    assert "127.0.0.1:4001" in text and "| 3.91 MiB" in text


def test_explain_of_arrays_uses_the_pipeline():
    x = la.arange(240, chunks=60).reshape(24, 10)
    z = la.sqrt((x * 2.0 + 1.0) ** 2).sum(axis=0)
    out = explain(z)
    assert isinstance(out, Explanation) and isinstance(out, str)
    assert repr(out) == str(out)
    assert "<pre" in out._repr_html_()
    plan, ex, _ = plan_of(z)
    assert ex == la.config.get("executor")
    for name in plan.stages:
        assert f"] {name}  (" in out
    for node, why in plan.notes.get("fuse", {}).items():
        assert f"{node}: {why}" in out


def test_stage_raw_and_after_a_pass():
    x = la.ones((8, 8), chunks=4)
    y = (x + x) * 3
    raw, _, _ = plan_of(y, stage="raw")
    assert len(raw.stages) == build([y._expr]).number_of_nodes()
    assert raw.history == ()
    assert "Passes: none run (the raw graph)" in explain(y, stage="raw")
    after, _, _ = plan_of(y, stage="cse")
    assert [h.name for h in after.history] == ["pushdown", "reblock", "cse"]
    with pytest.raises(ValueError, match=r"unknown stage 'nope'.*raw"):
        explain(y, stage="nope")
    with pytest.raises(ValueError, match="cannot be combined"):
        explain(y, stage="raw", measured=True)


def test_measured_after_a_compute(monkeypatch):
    monkeypatch.setattr(api, "_LAST_RUN", {})
    x = la.arange(100, chunks=30)
    y = (x * 3) % 7
    with pytest.raises(RuntimeError, match="nothing was computed yet"):
        explain(y, measured=True)
    np.testing.assert_array_equal(y.compute(executor="numpy"), (np.arange(100) * 3) % 7)
    text = explain(y, measured=True)
    assert "measured:" in text and "on numpy" in text
    run = la.last_run()
    for name, secs in run.stats.stage_seconds.items():
        assert name in text
        assert secs >= 0
    assert text.count("measured  ") == len(run.plan.stages)
    assert explain(measured=True) == text  # no arrays: the last run
    with pytest.raises(ValueError, match="did not compute"):
        explain(x + 1000, measured=True)


def test_explain_needs_an_array():
    with pytest.raises(TypeError, match="at least one array"):
        explain()


def test_a_plan_object_is_accepted():
    p = sample_plan()
    assert explain(p).startswith("lazyarr plan: 3 stages")

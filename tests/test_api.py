"""compute/persist/plan through the top level: executor choice, caching, progress."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api
from lazyarr.executors.testing import ComputeRefused


def test_keyword_beats_config():
    x = la.ones(3)
    with la.config.set(executor="raise"):
        with pytest.raises(ComputeRefused):
            x.compute()
        np.testing.assert_array_equal(x.compute(executor="numpy"), np.ones(3))


def test_compute_several_outputs_share_one_plan():
    x = la.random.random((50, 4), chunks=(20, 4), seed=0)
    a, b = la.compute(x.sum(axis=0), x.mean())
    xn = x.compute()
    np.testing.assert_allclose(a, xn.sum(axis=0))
    np.testing.assert_allclose(b, xn.mean())
    plan = la.plan(x.sum(axis=0), x.mean())
    # the random source appears once
    assert sum(1 for s in plan.stages.values() if s.expr.op.name == "random") == 1


def test_plans_are_cached_by_key():
    api.clear_plan_cache()
    x = la.ones(4) + 1
    p1 = la.plan(x)
    p2 = la.plan(la.ones(4) + 1)
    assert p1 is p2


def test_plans_made_under_other_block_settings_are_not_reused(reblock_any_size):
    x = la.random.random((64, 64), seed=1)
    workers = {"n_workers": 4, "workers": tuple(f"w{i}" for i in range(4))}
    passes = api.passes_for(None, None)
    one = api.make_plan([x._expr], "dask", passes, extra=workers)
    assert api.make_plan([x._expr], "dask", passes, extra=workers) is one
    with la.config.set({"placement.blocks-per-worker": 4}):
        four = api.make_plan([x._expr], "dask", passes, extra=workers)
    (src,) = four.outputs
    assert four is not one
    assert np.prod(four.stages[src].numblocks) == 16 != np.prod(one.stages[src].numblocks)


def test_plans_holding_big_arrays_are_not_cached():
    api.clear_plan_cache()
    big = la.asarray(np.zeros(1 << 18))
    assert la.plan(big) is not la.plan(big)


def test_optimize_false_runs_no_pass():
    plan = api.make_plan([(la.ones(3) + 1)._expr], "numpy", api.passes_for(False, None))
    assert plan.history == ()


def test_progress_bar_is_written(capsys):
    x = la.ones((4, 4), chunks=2)
    (x + 1).compute(progress=True)
    err = capsys.readouterr().err
    assert "block" in err


def test_persist_many():
    x = la.arange(10, chunks=3)
    a, b = la.persist(x * 2, x + 1)
    np.testing.assert_array_equal(a.compute(), np.arange(10) * 2)
    np.testing.assert_array_equal(b.compute(), np.arange(10) + 1)
    assert a.chunks == ((3, 3, 3, 1),)


def test_repr_and_html_repr_describe_without_computing():
    x = la.ones((1000, 10), chunks=(250, 10))
    y = (x + 1).sum(axis=0)
    with la.config.set(executor="raise"):
        text = repr(y)
        html = y._repr_html_()
    assert "shape=(10,)" in text and "blocks=1" in text and "ops=3" in text
    assert "<table" in html and "80 B" in html and "(10,)" in html


def test_last_run_keeps_no_persisted_blocks():
    x = (la.asarray(np.arange(12.0), chunks=4) * 2).persist(executor="numpy")
    store = x._expr.op.store
    assert len(store.blocks) == 3
    y = x + 1
    np.testing.assert_array_equal(y.compute(executor="numpy"), np.arange(12.0) * 2 + 1)
    plan = la.last_run().plan
    kept = [s.expr.op.store for s in plan.stages.values() if s.expr.op.name == "persisted"]
    assert kept and all(not st.blocks for st in kept)
    assert kept[0].token == store.token
    readers = [e for s in plan.stages.values() for e in s.input_exprs]
    assert all(not e.op.store.blocks for e in readers if e.op.name == "persisted")
    assert api.make_plan([y._expr], "numpy").outputs == plan.outputs  # keys unchanged


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda x: la.compute(x, executer="numba"), "compute()"),
        (lambda x: la.persist(x, executer="numba"), "persist()"),
        (lambda x: x.compute(executer="numba"), "LazyArray.compute()"),
        (lambda x: x.persist(executer="numba"), "LazyArray.persist()"),
    ],
)
def test_a_misspelt_keyword_is_named_by_the_function_the_user_called(call, name):
    with pytest.raises(TypeError) as info:
        call(la.ones(3))
    assert str(info.value) == f"{name} got an unexpected keyword argument 'executer'"


def test_compute_keywords_still_reach_the_plan():
    x = la.ones(3) + 1
    (got,) = la.compute(x, executor="numpy", optimize=False, passes=None, progress=False)
    np.testing.assert_array_equal(got, np.full(3, 2.0))
    assert api.last_run().plan.history == ()
    np.testing.assert_array_equal(x.compute("numpy", optimize=False), np.full(3, 2.0))

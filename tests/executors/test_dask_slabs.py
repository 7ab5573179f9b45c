"""A user's tiny blocks scattered in slabs: stacked per worker and block shape, one scatter
call per worker, tasks picking their block's row; values as NumPy's.

The grouping and the gather need no cluster; the runs use the shared LocalCluster
(``dask_ex``: 2 worker processes x 1 thread).
"""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api
from lazyarr.executors import dask_slabs
from lazyarr.graph.chunks import block_slices
from lazyarr.optimize.lower import lower


def _source_tasks(arr, workers):
    """The plan's source stage and its SOURCE tasks, block ``k`` planned on ``k % workers``."""
    plan = api.make_plan([arr._expr], "dask", ())
    (stage,) = plan.stages.values()
    owners = (np.arange(stage.nblocks).reshape(stage.numblocks) % workers).astype(np.int32)
    plan = plan.with_stages({stage.name: stage.replace(worker=owners)})
    graph = lower(plan)
    return graph.stages[0], graph.tasks


def test_blocks_group_by_worker_and_shape_in_block_order():
    data = np.arange(95.0 * 37).reshape(95, 37)
    stage, tasks = _source_tasks(la.asarray(data, chunks=(10, 4)), workers=2)  # 10 x 10 blocks
    groups = dask_slabs.slab_groups(stage, tasks)
    assert sorted(k for g in groups for k in g) == list(range(len(tasks)))
    kinds = set()
    for g in groups:
        assert g == sorted(g)
        (kind,) = {(tasks[k].worker, stage.expr.chunks[0][tasks[k].index[0]],
                    stage.expr.chunks[1][tasks[k].index[1]]) for k in g}  # fmt: skip
        kinds.add(kind)
    # shapes (10, 4), (10, 1), (5, 4), (5, 1) on both workers, but the last column's
    # blocks (k % 10 == 9: odd k) all on worker 1
    assert len(groups) == len(kinds) == 6


def test_stacked_blocks_are_the_blocks():
    data = np.random.default_rng(0).random((95, 37))
    stage, tasks = _source_tasks(la.asarray(data, chunks=(10, 4)), workers=2)
    for g in dask_slabs.slab_groups(stage, tasks):
        indices = [tasks[k].index for k in g]
        slab = dask_slabs.stacked_blocks(stage, indices)
        assert slab.shape[0] == len(indices)
        for row, index in enumerate(indices):
            np.testing.assert_array_equal(slab[row], data[block_slices(stage.expr.chunks, index)])


def test_blocks_over_the_slab_size_are_not_grouped():
    stage, tasks = _source_tasks(la.asarray(np.zeros(40_000), chunks=20_000), workers=2)
    assert dask_slabs.slab_groups(stage, tasks) == []


@pytest.mark.parametrize(
    ("shape", "chunks"), [((40_000,), 10), ((95, 37), (10, 4)), ((6, 5, 4), (4, 2, 3))]
)
def test_one_scatter_call_per_worker_and_values_as_numpys(dask_ex, monkeypatch, shape, chunks):
    data = np.random.default_rng(1).random(shape)
    x = la.asarray(data, chunks=chunks)
    client = dask_ex.client()
    calls = []
    scatter = client.scatter

    def counting(values, **kwargs):
        calls.append(len(values))
        return scatter(values, **kwargs)

    monkeypatch.setattr(client, "scatter", counting)
    with la.config.set({"array.min-chunk-size": 0}):
        got = (la.sin(x) * 2 + x).sum(axis=0).compute(executor="dask")
    np.testing.assert_allclose(got, (np.sin(data) * 2 + data).sum(axis=0), rtol=1e-12)
    # one call per worker; each sends a few slabs (and lone blocks), not one value per block
    assert len(calls) == 2
    assert sum(calls) < int(np.prod(x.numblocks))

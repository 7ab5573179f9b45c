"""topk/argtopk (dask's API) against a NumPy-sort reference, and their tree reduction.

Reference: ``k > 0`` is the first ``k`` of a descending stable sort (the
reversed-line recipe: NaN first, ties by increasing index), ``k < 0`` the
first ``|k|`` of an ascending stable sort (NaN last).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import arrays, chunks_for_shape

import lazyarr as la
from lazyarr import api
from lazyarr.optimize.lower import lower
from lazyarr.optimize.tasks import TaskKind
from lazyarr.testing import assert_eq

DTYPES = ["int8", "uint16", "int64", "bool", "float32", "float64"]


def ref_argtopk(x: np.ndarray, k: int, axis: int) -> np.ndarray:
    m = abs(k)
    if k < 0:
        order = np.argsort(x, axis=axis, kind="stable")
    else:
        n = x.shape[axis]
        order = n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return np.take(order, np.arange(m), axis=axis)


def ref_topk(x: np.ndarray, k: int, axis: int) -> np.ndarray:
    return np.take_along_axis(x, ref_argtopk(x, k, axis), axis=axis)


def data(shape: tuple[int, ...], dtype: str, seed: int = 0, distinct: int = 1000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    x = rng.integers(0, distinct, size=shape)
    if np.dtype(dtype).kind == "f":
        return (x / 7).astype(dtype)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [3, -3, 1, -1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_topk_and_argtopk_match_a_sort(dtype, k, axis):
    x = data((9, 11), dtype, seed=abs(k))
    a = la.asarray(x, chunks=((2, 4, 3), (5, 1, 5)))
    t = la.topk(a, k, axis=axis)
    assert t.shape[axis] == abs(k) and t.chunks[axis] == (abs(k),)
    assert_eq(t, ref_topk(x, k, axis))
    assert_eq(la.argtopk(a, k, axis=axis), ref_argtopk(x, k, axis))


@pytest.mark.parametrize("k", [4, -4, 12, -12])
def test_ties_resolve_by_increasing_index(k):
    x = np.array([3, 1, 3, 1, 2, 3, 1, 2, 3, 3, 1, 2] * 3)
    a = la.asarray(x, chunks=((5, 7, 2, 9, 13),))
    idx = la.argtopk(a, k).compute()
    np.testing.assert_array_equal(idx, ref_argtopk(x, k, 0))
    np.testing.assert_array_equal(x[idx], la.topk(a, k).compute())


@pytest.mark.parametrize("k", [5, -5, 2, -2])
def test_nan_ranks_above_every_number(k):
    x = np.array([1.0, np.nan, -0.0, np.inf, 0.0, np.nan, -np.inf, 2.0, np.nan, 0.0])
    a = la.asarray(x, chunks=3)
    assert_eq(la.topk(a, k), ref_topk(x, k, 0))
    assert_eq(la.argtopk(a, k), ref_argtopk(x, k, 0))


def test_dask_examples_and_whole_axis():
    x = np.array([5, 1, 3, 6])
    d = la.asarray(x, chunks=2)
    assert_eq(la.topk(d, 2), np.array([6, 5]))
    assert_eq(la.topk(d, -2), np.array([1, 3]))
    assert_eq(la.argtopk(d, 2), np.array([3, 0]))
    assert_eq(la.topk(d, 4), np.array([6, 5, 3, 1]))
    assert_eq(la.argtopk(d, -4), np.argsort(x, kind="stable"))


def test_errors():
    a = la.asarray(np.arange(6.0), chunks=2)
    for k in (0, 7, -7):
        with pytest.raises(ValueError, match="k must be non-zero"):
            la.topk(a, k)
    with pytest.raises(TypeError, match="integer"):
        la.topk(a, 1.5)
    with pytest.raises(ValueError, match="0-d"):
        la.argtopk(la.asarray(np.float64(1.0)), 1)
    with pytest.raises(TypeError, match="complex128"):
        la.topk(la.asarray(np.ones(3, complex)), 1)
    with pytest.raises(np.exceptions.AxisError):
        la.topk(a, 1, axis=1)


def test_only_k_entries_per_block_travel():
    """A tree reduction: one partial per block, each state |k| long, combined to one block."""
    x = np.random.default_rng(0).random((4, 1000))
    a = la.asarray(x, chunks=(2, 100))
    t = la.topk(a, 5)
    plan = api.make_plan([t._expr], "numpy", ())
    assert [s.kind for s in plan.stages.values()] == ["source", "reduce"]
    graph = lower(plan)
    partials = [task for task in graph.tasks if task.kind == TaskKind.PARTIAL]
    assert len(partials) == 20  # 2 x 10 body blocks
    finals = [task for task in graph.tasks if task.kind == TaskKind.FINALIZE]
    assert len(finals) == 2
    assert all(task.nbytes == 2 * 5 * 8 for task in partials)  # |k| values per line


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_hypothesis_shapes_chunks_and_k(data_):
    ndim = data_.draw(st.integers(1, 2))
    shape = tuple(data_.draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    dtype = data_.draw(st.sampled_from(["int16", "float64", "float32", "bool"]))
    x = data_.draw(arrays(dtype, shape))
    chunks = data_.draw(chunks_for_shape(shape))
    axis = data_.draw(st.integers(-ndim, ndim - 1))
    n = shape[axis]
    k = data_.draw(st.integers(1, n)) * data_.draw(st.sampled_from([1, -1]))
    a = la.asarray(x, chunks=chunks)
    assert_eq(la.topk(a, k, axis=axis), ref_topk(x, k, axis), executors=["numpy", "numba"])
    assert_eq(la.argtopk(a, k, axis=axis), ref_argtopk(x, k, axis), executors=["numpy"])


def test_middle_axis_of_a_computed_3d_array():
    y = np.random.default_rng(1).random((3, 50, 4))
    a = la.asarray(y, chunks=(2, 7, 3))
    assert_eq(la.topk(a * 2, -5, axis=1), ref_topk(y * 2, -5, 1))
    assert_eq(la.argtopk(a * 2, 6, axis=1), ref_argtopk(y * 2, 6, 1))


def test_plan_json_round_trip_keeps_keys():
    from lazyarr.graph.serialize import exprs_from_json, exprs_to_json

    a = la.asarray(data((4, 9), "float64"), chunks=2)
    exprs = [la.topk(a, -3)._expr, la.argtopk(a, 2, axis=0)._expr]
    table, roots = exprs_to_json(exprs)
    back = exprs_from_json(table)
    assert [back[r].key for r in roots] == [e.key for e in exprs]


def test_placed_tree_partials_on_block_owners():
    """On 4 workers: each partial runs where its block is made, states of |k| combine in a tree."""
    from lazyarr.graph import build
    from lazyarr.optimize.pipeline import PASSES, PassContext, optimize
    from lazyarr.optimize.plan import Plan

    workers = tuple(f"w{i}" for i in range(4))
    ctx = PassContext(n_workers=4, workers=workers, hosts=("h0",) * 4, check=True)
    x = la.random.random(800_000, chunks=50_000, seed=1)
    plan = optimize(Plan.from_graph(build([la.topk(x, 100)._expr])), tuple(PASSES), ctx)
    source, red = plan.stages.values()
    assert red.placement is not None and red.placement.tree
    np.testing.assert_array_equal(red.placement.parts.ravel(), source.worker.ravel())
    tasks = [t for t in lower(plan).tasks if t.kind != TaskKind.SOURCE]
    assert {t.nbytes for t in tasks} == {100 * 8}
    assert sum(t.kind == TaskKind.COMBINE for t in tasks) < 16

"""Slice pushdown: basic indices move through elementwise ops into sources.

Results are compared with NumPy on every executor, passes on and off
(``assert_eq``); counts of tasks and planned bytes show that a peek makes
only the peeked elements.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies_indexing import chunked_arrays

import lazyarr as la
from lazyarr import api
from lazyarr.graph.ops import Elementwise, FromArray
from lazyarr.graph.ops.creation import Generated
from lazyarr.graph.ops.indexing import GetItem
from lazyarr.graph.window import Window
from lazyarr.optimize.passes.pushdown import push
from lazyarr.testing import assert_eq, executors_under_test


def _basic(shape, newaxis=False):
    return hnp.basic_indices(shape, min_dims=0, allow_newaxis=newaxis, allow_ellipsis=True)


def _ops(e):
    """Every op type under ``e``."""
    seen, stack, out = set(), [e], []
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        out.append(x.op)
        stack.extend(x.inputs)
    return out


# -- windows ---------------------------------------------------------------------------


def test_window_composes_like_numpy():
    a = np.arange(24).reshape(4, 6)
    w = Window.whole(a.shape).then((range(3, -1, -2), range(1, 6, 2))).then((1, range(2, -1, -1)))
    assert w.shape == (3,)
    assert w.axes[0] == 1  # row 3 - 2
    want = a[3::-2, 1::2][1, ::-1]
    start, step, count = w.axes[1]
    assert list(a[1, start + step * np.arange(count)]) == list(want)


# -- values: every source, through elementwise chains, on every executor -----------------


SOURCES = {
    "random": lambda shape, chunks: la.random.random(shape, chunks=chunks, seed=3),
    "normal": lambda shape, chunks: la.random.standard_normal(shape, chunks=chunks, seed=4),
    "ones": lambda shape, chunks: la.ones(shape, chunks=chunks, dtype="int32"),
    "array": lambda shape, chunks: la.asarray(
        np.arange(int(np.prod(shape)), dtype=float).reshape(shape), chunks=chunks
    ),
}


@given(data=st.data(), source=st.sampled_from(sorted(SOURCES)))
def test_index_of_a_chain_equals_numpy(data, source):
    a, chunks = data.draw(chunked_arrays(min_dims=1, max_dims=3, max_side=6))
    x = SOURCES[source](a.shape, chunks)
    whole = np.asarray(x.compute(optimize=False))  # the whole array's values
    row = la.asarray(np.arange(a.shape[-1], dtype=np.int64) - 2, chunks=(chunks[-1],))
    y = la.where(x * 2 > 1, (x + row).astype("float32"), -x)
    want = np.where(whole * 2 > 1, (whole + (np.arange(a.shape[-1]) - 2)).astype("float32"), -whole)
    first = data.draw(_basic(a.shape))
    second = data.draw(_basic(want[first].shape, newaxis=True))
    assert_eq(y[first][second], want[first][second])
    assert_eq(x[first], whole[first])


@pytest.mark.parametrize(
    "index",
    [np.s_[3:], np.s_[::-3], np.s_[-1], np.s_[5:40:7], np.s_[40:5:-6], np.s_[7:7]],
)
def test_arange_and_linspace_windows(index):
    assert_eq(la.arange(3, 50, 2, chunks=6)[index], np.arange(3, 50, 2)[index])
    assert_eq(la.linspace(-1, 4, 47, chunks=5)[index], np.linspace(-1, 4, 47)[index])
    assert_eq(
        la.linspace(0, 10, 41, endpoint=False, chunks=9)[index],
        np.linspace(0, 10, 41, endpoint=False)[index],
    )


@pytest.mark.parametrize("index", [np.s_[3:, ::-3], np.s_[4], np.s_[:, 5], np.s_[::-2, 1:9:4]])
def test_eye_windows(index):
    assert_eq(la.eye(12, 11, k=2, chunks=5)[index], np.eye(12, 11, k=2)[index])


def test_random_windows_match_the_whole_draw_in_every_chunking():
    x = la.random.random((30, 8, 5), seed=11, chunks=(7, 3, 2))
    whole = x.compute(optimize=False)
    for index in [
        np.s_[::4, 1, ::-2],
        np.s_[-1],
        np.s_[3:20:5, ::3],
        np.s_[..., 4],
        np.s_[29:0:-9],
    ]:
        for chunks in [(7, 3, 2), (30, 8, 5), (1, 1, 1)]:
            got = la.random.random((30, 8, 5), seed=11, chunks=chunks)[index]
            assert_eq(got, whole[index])


# -- the rewrite itself ----------------------------------------------------------------


def test_the_index_reaches_the_sources():
    x = la.random.random((100, 50), chunks=(10, 50))
    a = la.asarray(np.ones(50), chunks=25)
    (root,), notes = push([((x * 2 + a)[5, 3:9])._expr])
    ops = _ops(root)
    assert not any(isinstance(op, GetItem) for op in ops)
    (src,) = [op for op in ops if isinstance(op, Generated)]
    assert src.window.shape == (6,) and src.window.axes == (5, (3, 1, 6))
    (arr,) = [op for op in ops if isinstance(op, FromArray)]
    assert arr.data.array.shape == (6,)
    assert sum(isinstance(op, Elementwise) for op in ops) == 2
    assert len(notes) == 2


def test_the_index_goes_through_transposes():
    x = la.random.random((6, 7, 8), chunks=(4, 3, 5), seed=2)
    whole = x.compute(optimize=False)
    for index in [np.s_[3, ::-2], np.s_[:, 1:6:2, 5], np.s_[..., 2], np.s_[7, 5, 6]]:
        y = la.permute_dims(x, (2, 0, 1)) * 2
        (root,), _ = push([y[index]._expr])
        assert not any(isinstance(op, GetItem) for op in _ops(root)), index
        assert_eq(y[index], np.transpose(whole, (2, 0, 1))[index] * 2)


def test_array_indices_and_newaxis_stay_put():
    x = la.random.random((10, 6), chunks=5)
    for y in [(x * 2)[[1, 3]], (x * 2)[None, 2]]:
        (root,), _ = push([y._expr])
        assert isinstance(root.op, GetItem)


def test_without_the_pass_results_are_the_same_and_only_culling_acts():
    x = la.random.random((400, 30), chunks=(10, 30))
    y = (x * 2)[15]
    with la.config.set({"optimize.passes": ["cse", "fuse"]}):
        off = y.compute()
        kinds = la.last_run().stats.extra["task_kinds"]
    on = y.compute()
    np.testing.assert_array_equal(on, off)
    assert sum(kinds.values()) <= 3  # one source block, its product, the index: not 40 blocks


# -- a peek costs its own elements -----------------------------------------------------


@pytest.mark.parametrize("executor", executors_under_test())
def test_peeks_run_only_the_blocks_the_slice_needs(executor):
    x = la.random.random((40_000, 500), chunks=(1_000, 500))  # 160 MB, 40 blocks
    for y, tasks in [(x[:10], 1), ((x * 2)[5], 2), ((x * 2 + 1)[5, :3], 2)]:
        y.compute(executor=executor)
        stats = la.last_run().stats
        assert sum(stats.extra["task_kinds"].values()) <= tasks, (executor, stats.extra)
    y = x[::1000].sum()  # one row from each block
    got = y.compute(executor=executor)
    plan = la.last_run().plan
    np.testing.assert_allclose(got, x.compute()[::1000].sum())
    (src,) = [s for s in plan.stages.values() if isinstance(s.expr.op, Generated)]
    assert src.expr.shape == (40, 500) and src.expr.chunks == ((1,) * 40, (500,))


def test_a_peek_at_a_virtual_100_gb_array_plans_a_few_bytes():
    x = la.random.random((1_000_000, 12_500), chunks=(10_000, 12_500))  # 100 GB
    y = (x * 2 + 1)[-1, :5]
    plan = api.make_plan([y._expr], "numpy", list(la.config.get("optimize.passes")))
    assert sum(s.expr.nbytes for s in plan.stages.values()) <= 5 * 8 * 3
    np.testing.assert_array_equal(y.compute(), x[-1, :5].compute() * 2 + 1)

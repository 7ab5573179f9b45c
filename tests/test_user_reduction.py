"""``la.reduction`` (dask's user-defined tree reduction) against ``dask.array.reduction`` and
NumPy, on every executor; NumPy's monoids given as functions become the built-in reduction;
the xarray chunk manager's ``reduction`` is this function."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api, config
from lazyarr.graph.ops import Reduce
from lazyarr.graph.ops.userreduce import UserReduce
from lazyarr.kernels import numba_set
from lazyarr.kernels.numba_set import FallbackWarning
from lazyarr.testing import assert_eq, assert_same_error

da = pytest.importorskip("dask.array")


def sum_of_squares(b, axis, keepdims):
    return np.sum(b * b, axis=axis, keepdims=keepdims)


def min_and_max(b, axis, keepdims):
    """A state of two values along the (one) reduced axis: its minimum, then its maximum."""
    lo = np.min(b, axis=axis, keepdims=True)
    hi = np.max(b, axis=axis, keepdims=True)
    return np.concatenate([lo, hi], axis=axis[0])


def count_and_total(b, axis, keepdims):
    """A mean's state as a dict (``concatenate=False``): NaN-skipping count and total."""
    ok = ~np.isnan(b)
    return {"n": ok.sum(axis=axis, keepdims=True), "t": np.nansum(b, axis=axis, keepdims=True)}


def _flatten(states):
    return [s for sub in states for s in _flatten(sub)] if isinstance(states, list) else [states]


def join_counts(states, axis, keepdims):
    flat = _flatten(states)
    return {"n": sum(s["n"] for s in flat), "t": sum(s["t"] for s in flat)}


def mean_of_counts(states, axis, keepdims):
    s = join_counts(states, axis, True)
    out = s["t"] / s["n"]
    return out if keepdims else out.squeeze(axis)


def first_valid(b, axis, keepdims):
    """xarray's ``nanfirst`` along one axis: order matters, so the tree must keep it."""
    (ax,) = axis
    idx = np.argmax(~np.isnan(b), axis=ax, keepdims=True)
    out = np.take_along_axis(b, idx, axis=ax)
    return out if keepdims else out.squeeze(ax)


def with_dtype(b, axis, keepdims, dtype=None):
    return np.sum(b, axis=axis, keepdims=keepdims, dtype=dtype)


def data(shape=(7, 10), seed=0):
    x = np.random.default_rng(seed).standard_normal(shape)
    x[x > 1.2] = np.nan
    return x


CASES = [
    ("sum_all", dict(chunk=np.sum, aggregate=np.sum, dtype="f8")),
    ("nanmax_axis0", dict(chunk=np.nanmax, aggregate=np.nanmax, axis=0, dtype="f8")),
    ("squares", dict(chunk=sum_of_squares, aggregate=np.sum, axis=1, keepdims=True, dtype="f8")),
    ("squares_2axes", dict(chunk=sum_of_squares, aggregate=np.sum, axis=(0, 1), dtype="f8")),
    (
        "min_and_max",
        dict(
            chunk=min_and_max,
            combine=min_and_max,
            aggregate=min_and_max,
            axis=0,
            keepdims=True,
            output_size=2,
            dtype="f8",
        ),
    ),
    ("first_valid", dict(chunk=first_valid, aggregate=first_valid, axis=0, dtype="f8")),
    ("dtype_kw", dict(chunk=with_dtype, aggregate=with_dtype, axis=1, dtype="f4")),
]


@pytest.mark.parametrize(("name", "kw"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("chunks", [(3, 4), (7, 10), ((1, 6), (2, 2, 2, 4))])
def test_matches_dask_reduction(name, kw, chunks):
    x = data()
    if name == "first_valid":
        x[:, 3] = np.nan  # a line it finds nothing in
    if name == "min_and_max":
        x = np.nan_to_num(x)
    with warnings.catch_warnings():  # dask's nanmax of an all-NaN block warns
        warnings.simplefilter("ignore", RuntimeWarning)
        want = da.reduction(da.from_array(x, chunks=chunks), **kw).compute()
    got = la.reduction(la.from_array(x, chunks=chunks), **kw)
    if name == "min_and_max":
        assert got.shape == (2, 10) and got.chunks[0] == (2,)
    assert_eq(got, want)


def test_empty_blocks_reach_chunk_as_in_dask():
    x = data()
    chunks = ((1, 0, 6), (2, 0, 8))
    kw = dict(chunk=sum_of_squares, aggregate=np.sum, axis=0, keepdims=True, dtype="f8")
    want = da.reduction(da.from_array(x, chunks=chunks), **kw).compute()
    assert_eq(la.reduction(la.from_array(x, chunks=chunks), **kw), want)


def weighted_sum(b, w=None, axis=None, keepdims=False):
    return np.sum(b * (1 if w is None else w), axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("wshape", [(7, 10), (10,), (7, 1), ()])
def test_weights_reach_chunk_after_each_block(wshape):
    x = np.nan_to_num(data())
    w = np.random.default_rng(9).random(wshape)
    kw = dict(chunk=weighted_sum, aggregate=np.sum, axis=1, dtype="f8")
    want = da.reduction(da.from_array(x, chunks=(3, 4)), weights=w, **kw).compute()
    lazy_w = la.from_array(w, chunks=2) if w.ndim else w
    got = la.reduction(la.from_array(x, chunks=(3, 4)), weights=lazy_w, **kw)
    assert got._expr.op.weighted and len(got._expr.inputs) == 2
    assert_eq(got, want)
    np.testing.assert_allclose(want, np.sum(x * w, axis=1))


def test_states_that_are_not_arrays():
    x = data((9, 5), seed=2)
    kw = dict(chunk=count_and_total, aggregate=mean_of_counts, combine=join_counts)
    got = la.reduction(la.from_array(x, chunks=(2, 3)), axis=0, dtype="f8", concatenate=False, **kw)
    assert_eq(got, np.nanmean(x, axis=0))
    got = la.reduction(
        la.from_array(x, chunks=(4, 2)), axis=None, dtype="f8", concatenate=False, **kw
    )
    assert_eq(got, np.nanmean(x))


def test_numpy_monoids_become_the_builtin_reduction_and_fuse():
    x = data()
    lx = la.from_array(x, chunks=(3, 4))
    body = la.abs(lx) * 2 + 1
    got = la.reduction(body, np.nansum, np.nansum, axis=1, dtype="f8")
    assert isinstance(got._expr.op, Reduce) and got._expr.op.func == "nansum"
    stages = api.make_plan([got._expr], "numba", api.passes_for(True, None)).stages
    compute = [s for s in stages.values() if s.kind != "source"]
    assert len(compute) == 1 and len(compute[0].members) == 4  # abs, multiply, add, nansum
    assert_eq(got, np.nansum(np.abs(x) * 2 + 1, axis=1))
    as_int = la.reduction(lx > 0, np.sum, np.sum, axis=0, dtype="i8")
    assert_eq(as_int, np.sum(x > 0, axis=0))
    cast = la.reduction(lx, np.max, np.max, dtype="f4")  # dask's declared dtype is kept
    assert_eq(cast, np.max(x).astype("f4"))
    own = la.reduction(lx, sum_of_squares, np.sum, dtype="f8")
    assert isinstance(own._expr.op, UserReduce)


def test_the_users_reduction_computes_its_elementwise_body_in_its_partials(monkeypatch):
    """The body fuses into the partials (compiled on numba); the user's chunk runs on the
    block the body makes, so the body is never stored."""
    compiled = []
    make = numba_set._user_partial
    monkeypatch.setattr(
        numba_set, "_user_partial", lambda stage, fn: compiled.append(stage) or make(stage, fn)
    )
    x = data((9, 12), seed=3)
    lx = la.from_array(x, chunks=(4, 5))
    got = la.reduction(la.sqrt(la.abs(lx)) * 3 - 1, first_valid, first_valid, axis=0, dtype="f8")
    stages = api.make_plan([got._expr], "numba", api.passes_for(True, None)).stages
    compute = [s for s in stages.values() if s.kind != "source"]
    assert len(compute) == 1 and [m.op.name for m in compute[0].members][-1] == "user_reduction"
    assert len(compute[0].members) == 5  # abs, sqrt, multiply, subtract, the reduction
    with config.set({"numba.compile-threshold": 0}), warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        assert_eq(got, first_valid(np.sqrt(np.abs(x)) * 3 - 1, (0,), False))
    assert compiled  # the numba executor's partials ran the compiled body


def test_bad_arguments_raise_daskes_errors():
    x = data()
    d, lx = da.from_array(x, chunks=3), la.from_array(x, chunks=3)
    assert_same_error(
        lambda: da.reduction(d, np.sum, np.sum), lambda: la.reduction(lx, np.sum, np.sum)
    )
    assert_same_error(
        lambda: da.reduction(d, np.sum, np.sum, dtype="f8", split_every="x").compute(),
        lambda: la.reduction(lx, np.sum, np.sum, dtype="f8", split_every="x"),
    )
    with pytest.raises(np.exceptions.AxisError):
        la.reduction(lx, np.sum, np.sum, axis=2, dtype="f8")
    with pytest.raises(TypeError, match="out="):
        la.reduction(lx, np.sum, np.sum, dtype="f8", out=lx)
    assert_same_error(
        lambda: da.reduction(d, np.sum, np.sum, dtype="f8", weights=np.ones(4)),
        lambda: la.reduction(lx, np.sum, np.sum, dtype="f8", weights=np.ones(4)),
    )
    with pytest.raises(ValueError, match="output_size"):
        la.reduction(lx, np.sum, np.sum, dtype="f8", output_size=0)


def test_an_aggregate_of_the_wrong_shape_is_named():
    lx = la.from_array(data(), chunks=3)
    keeps = la.reduction(lx, sum_of_squares, lambda s, axis, keepdims: s, axis=0, dtype="f8")
    with pytest.raises(ValueError, match=r"aggregate <lambda>.*dimensions"):
        keeps.compute(executor="numpy")


def test_errors_inside_user_functions_name_the_block():
    def boom(b, axis, keepdims):
        raise ZeroDivisionError("no")

    lx = la.from_array(data(), chunks=3)
    with pytest.raises(ZeroDivisionError) as info:
        la.reduction(lx, boom, np.sum, dtype="f8").compute(executor="numpy")
    assert "block (0, 0)" in "".join(getattr(info.value, "__notes__", []))


def test_on_the_dask_executor(dask_ex):
    x = data((12, 6), seed=5)
    lx = la.from_array(x, chunks=(5, 4))
    kw = dict(chunk=first_valid, aggregate=first_valid, axis=0, dtype="f8")
    want = da.reduction(da.from_array(x, chunks=(5, 4)), **kw).compute()
    assert_eq(la.reduction(lx, **kw), want, executors=["dask"], passes=(True, False))
    kw = dict(combine=join_counts, dtype="f8", concatenate=False)
    got = la.reduction(lx, count_and_total, mean_of_counts, **kw)
    assert_eq(got, np.nanmean(x), executors=["dask"], passes=(True,))
    w = np.arange(6.0)
    weighted = la.reduction(np.nan_to_num(lx), weighted_sum, np.sum, axis=1, dtype="f8", weights=w)
    assert_eq(weighted, np.sum(np.nan_to_num(x) * w, axis=1), executors=["dask"], passes=(True,))


def _combine_steps(y, workers: int = 2) -> int:
    """COMBINE tasks of ``y``'s plan placed for ``workers`` workers (no cluster needed)."""
    from lazyarr.executors.dask import LOWERING

    ctx = {"n_workers": workers, "workers": tuple(f"tcp://w:{i}" for i in range(workers))}
    plan = api.make_plan([y._expr], "numpy", api.passes_for(None, None), extra=ctx)
    return LOWERING.lower(plan, plan.outputs, 1).kinds().get("COMBINE", 0)


@pytest.mark.parametrize("chunk", [first_valid, np.sum], ids=["user", "builtin"])
def test_split_every_shapes_the_cluster_tree(chunk):
    """``split_every=2`` joins two states per step (a binary tree: one step fewer than the
    states of each worker, then across), 8 joins eight: fewer steps; an int or a dict per
    axis, as in dask; the values do not change."""
    x = np.nan_to_num(data((64, 6), seed=6))
    lx = la.from_array(x, chunks=(4, 6))  # 16 states per output block
    kw = dict(axis=0, dtype="f8")
    steps = {n: _combine_steps(la.reduction(lx, chunk, chunk, split_every=n, **kw)) for n in (2, 8)}
    assert steps[2] >= 14  # 16 states, two at a time: 15 joins, less a final one
    assert steps[8] < steps[2]
    per_axis = la.reduction(lx, chunk, chunk, split_every={0: 2}, **kw)
    assert _combine_steps(per_axis) == steps[2]
    want = first_valid(x, (0,), False) if chunk is first_valid else x.sum(axis=0)
    np.testing.assert_allclose(la.reduction(lx, chunk, chunk, split_every=2, **kw), want)


xr = pytest.importorskip("xarray")


def test_chunk_manager_reduction_is_la_reduction_and_xarrays_first_last():
    import pandas as pd
    from xarray.namedarray.parallelcompat import list_chunkmanagers

    from lazyarr.xarray_chunkmanager import LazyarrManager

    manager = list_chunkmanagers().get("lazyarr") or LazyarrManager()
    x = data((40, 3), seed=7)
    lx = la.from_array(x, chunks=(9, 2))
    got = manager.reduction(lx, first_valid, aggregate_func=first_valid, axis=0, dtype=x.dtype)
    assert isinstance(got, la.LazyArray)
    assert_eq(got, first_valid(x, (0,), False))
    time = pd.date_range("2003-01-20", periods=40, freq="D")
    arr = xr.DataArray(x, dims=("time", "y"), coords={"time": time})
    lazy = arr.chunk({"time": 9}, chunked_array_type="lazyarr")
    with xr.set_options(use_flox=False):
        for how in ("first", "last"):
            out = getattr(lazy.resample(time="MS"), how)()
            assert isinstance(out.data, la.LazyArray)
            xr.testing.assert_identical(out.compute(), getattr(arr.resample(time="MS"), how)())

"""User functions per block (map_blocks, blockwise, apply_gufunc, apply_along_axis) and
Numba functions fused into generated kernels, against NumPy on every executor."""

from __future__ import annotations

import math
import warnings

import numba
import numpy as np
import pytest

import lazyarr as la
from lazyarr import api, config
from lazyarr.executors.testing import ComputeRefused
from lazyarr.graph import build
from lazyarr.testing import assert_eq


def data(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 9, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def op_names(arr):
    g = build([arr._expr])
    return sorted(d["expr"].op.name for _, d in g.nodes(data=True))


def stages(arr):
    return api.make_plan([arr._expr], "numba", api.passes_for(True, None)).stages


@numba.vectorize
def triple_plus_one(v):
    return v * 3 + 1


@numba.vectorize(["float64(float64, float64)", "int64(int64, int64)"])
def hypot_ish(a, b):
    return a * a + b


@numba.njit
def ramp(v):
    return math.exp(-v) if v > 0 else v * 0.5


def double(block):
    return block * 2


# -- map_blocks ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_map_blocks_uneven_chunks_dtypes(dtype):
    x = data((7, 5), dtype)
    a = la.asarray(x, chunks=((3, 4), (2, 2, 1)))
    assert_eq(la.map_blocks(lambda b: b * 2, a), x * 2)
    assert_eq(a.map_blocks(lambda b: b == b.max()), np.ones_like(x, bool) & False | _block_max(x))


def _block_max(x):
    out = np.zeros(x.shape, bool)
    for rs in ((0, 3), (3, 7)):
        for cs in ((0, 2), (2, 4), (4, 5)):
            b = x[rs[0] : rs[1], cs[0] : cs[1]]
            out[rs[0] : rs[1], cs[0] : cs[1]] = b == b.max()
    return out


def test_map_blocks_constants_kwargs_and_broadcasting():
    x, y = data((6, 4)), data((4,), seed=1)
    a = la.asarray(x, chunks=(4, 3))
    b = la.asarray(y, chunks=2)  # other chunks: aligned by rechunking
    got = la.map_blocks(lambda p, q, k, scale=1.0: (p + q + k) * scale, a, b, 2, scale=3.0)
    assert got.dtype == np.float64
    assert_eq(got, (x + y + 2) * 3.0)
    c = la.asarray(x[:1], chunks=1)  # a length-1 axis broadcasts against many blocks
    assert_eq(la.map_blocks(np.add, a, c), x + x[:1])


def test_map_blocks_size_one_and_empty_dims():
    x = data((1, 5))
    assert_eq(la.map_blocks(double, la.asarray(x, chunks=(1, 2))), x * 2)
    e = np.zeros((0, 3))
    assert_eq(la.map_blocks(double, la.asarray(e, chunks=(1, 2))), e * 2)


def test_map_blocks_dtype_inferred_and_given():
    x = data((5,), "int32")
    a = la.asarray(x, chunks=2)
    assert la.map_blocks(lambda b: b / 2, a).dtype == np.float64
    got = la.map_blocks(lambda b: b / 2, a, dtype=np.float32)
    assert got.dtype == np.float32
    assert_eq(got, (x / 2).astype(np.float32))
    assert la.map_blocks(double, a, meta=np.array((), dtype="int8")).dtype == np.int8


def test_map_blocks_chunks_drop_and_new_axis():
    x = data((6, 5))
    a = la.asarray(x, chunks=(2, 5))
    halves = la.map_blocks(lambda b: b[::2], a, chunks=((1, 1, 1), (5,)))
    assert_eq(halves, x[::2])
    sums = la.map_blocks(lambda b: b.sum(axis=1), a, drop_axis=1)
    assert sums.shape == (6,) and sums.chunks == ((2, 2, 2),)
    assert_eq(sums, x.sum(axis=1))
    # a dropped axis split in blocks is read whole
    b = la.asarray(x, chunks=(3, 2))
    assert_eq(la.map_blocks(lambda blk: blk.sum(axis=1), b, drop_axis=1), x.sum(axis=1))
    grown = la.map_blocks(
        lambda b: b[:, None, :] * np.ones((1, 3, 1)), a, new_axis=1, chunks=(2, 3, 5)
    )
    assert grown.shape == (6, 3, 5)
    assert_eq(grown, np.broadcast_to(x[:, None, :], (6, 3, 5)))
    first = la.map_blocks(lambda b: b[None], a, new_axis=0)
    assert first.shape == (1, 6, 5) and first.chunks == ((1,), (2, 2, 2), (5,))
    assert_eq(first, x[None])


def test_map_blocks_block_id_and_block_info():
    x = data((5, 4))
    a = la.asarray(x, chunks=(2, 3))

    def where(block, block_id=None):
        return np.full(block.shape, block_id[0] * 10 + block_id[1])

    want = np.array([[0] * 3 + [1]] * 2 + [[10] * 3 + [11]] * 2 + [[20] * 3 + [21]])
    assert_eq(la.map_blocks(where, a, dtype=np.int64), want)

    def offset(block, block_info=None):
        (r0, _), (c0, _) = block_info[None]["array-location"]
        assert block_info[0]["shape"] == (5, 4)
        assert block_info[None]["chunk-shape"] == block.shape
        return block + r0 * 100 + c0

    rows, cols = np.indices((5, 4))
    assert_eq(la.map_blocks(offset, a, dtype=float), x + (rows // 2 * 2) * 100 + cols // 3 * 3)


def test_map_blocks_is_lazy_and_errors_when_written():
    a = la.asarray(data((4,)), chunks=2)
    with config.set(executor="raise"):
        y = la.map_blocks(double, a) + 1
        with pytest.raises(ComputeRefused):
            y.compute()
        with pytest.raises(TypeError, match="callable"):
            la.map_blocks(3, a)
        with pytest.raises(ValueError, match="chunks have 1 dims; expected 2"):
            la.map_blocks(double, a, new_axis=0, chunks=((2, 2),))
        with pytest.raises(ValueError, match="drop_axis out of range"):
            la.map_blocks(double, a, drop_axis=3)
        with pytest.raises(ValueError, match="dtype` inference failed"):
            la.map_blocks(lambda b: b.no_such_method(), a)


def test_map_blocks_wrong_block_shape_is_a_clear_error():
    a = la.asarray(data((4,)), chunks=2)
    with pytest.raises(ValueError, match="returned a block of shape"):
        la.map_blocks(lambda b: b[:1], a).compute(executor="numpy")


# -- fusion of numba functions ------------------------------------------------------


def test_numba_vectorize_called_on_a_lazy_array_fuses_into_one_kernel():
    x = data((9, 7))
    a = la.asarray(x, chunks=(4, 3))
    y = triple_plus_one(a) * 2 + 1
    assert_eq(y, (x * 3 + 1) * 2 + 1)
    fused = [s for s in stages(y).values() if s.kind == "map"]
    assert len(fused) == 1
    assert [m.op.label() for m in fused[0].members] == ["triple_plus_one", "multiply", "add"]
    text = y.explain()
    assert "triple_plus_one -> multiply -> add" in text


def test_fused_user_function_runs_in_the_generated_kernel():
    from lazyarr.executors import registry

    x = data((50,))
    y = triple_plus_one(la.asarray(x, chunks=20)) + ramp(0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to NumPy
        np.testing.assert_allclose(y.compute(executor="numba"), x * 3 + 1 + ramp(0.5))
    kernels = registry.get("numba").last_kernels
    assert len(kernels.compiled) == 1 and not kernels.fallbacks


def test_numba_functions_in_map_blocks_fuse_others_do_not():
    x = data((10,))
    a = la.asarray(x, chunks=4)
    y = la.map_blocks(ramp, a) * 2 + la.map_blocks(hypot_ish, a, 1.0)
    want = np.where(x > 0, np.exp(-x), x * 0.5) * 2 + (x * x + 1.0)
    assert_eq(y, want)
    maps = [s for s in stages(y).values() if s.kind == "map"]
    assert len(maps) == 1 and len(maps[0].members) == 4
    z = la.map_blocks(double, a) + 1  # a Python function: its own stage
    assert len([s for s in stages(z).values() if s.kind == "map"]) == 2
    assert_eq(z, x * 2 + 1)


def test_user_ufunc_int_and_mixed_dtypes():
    x = data((8,), "int64")
    a = la.asarray(x, chunks=3)
    assert_eq(hypot_ish(a, a), hypot_ish(x, x))  # NumPy picks the first safe loop
    assert_eq(triple_plus_one(a) - 1, triple_plus_one(x) - 1)  # the loops it has compiled
    f32 = data((8,), "float32")
    got = triple_plus_one(la.asarray(f32, chunks=3))
    assert_eq(got, triple_plus_one(f32))


def test_njit_reductions_are_not_taken_for_elementwise():
    @numba.njit
    def total(b):
        return np.sum(b)

    x = data((6,))
    a = la.asarray(x, chunks=3)
    got = la.map_blocks(lambda b: np.full(b.shape, total(b)), a)
    assert_eq(got, np.repeat([x[:3].sum(), x[3:].sum()], 3))
    assert "user_elementwise" not in op_names(la.map_blocks(total, a, chunks=((1, 1),)))


def test_numpy_ufunc_in_map_blocks_is_the_builtin_op():
    a = la.asarray(data((6,)), chunks=3)
    assert op_names(la.map_blocks(np.sin, a)) == ["array", "elementwise"]


# -- blockwise ----------------------------------------------------------------------


def test_blockwise_outer_and_contraction():
    x, y = data((5,)), data((4,), seed=1)
    a, b = la.asarray(x, chunks=2), la.asarray(y, chunks=3)
    outer = la.blockwise(np.multiply.outer, "ij", a, "i", b, "j")
    assert outer.chunks == ((2, 2, 1), (3, 1))
    assert_eq(outer, np.multiply.outer(x, y))
    m, n = data((6, 5)), data((5, 3), seed=2)
    am, bn = la.asarray(m, chunks=(2, 2)), la.asarray(n, chunks=(3, 2))
    dot = la.blockwise(np.dot, "ik", am, "ij", bn, "jk", concatenate=True)
    assert_eq(dot, m @ n)

    def summed(p, q):  # concatenate=False: lists of blocks along the contracted index
        return sum(pi @ qi for pi, qi in zip(p, q))

    bm = la.asarray(n, chunks=(2, 2))
    assert_eq(la.blockwise(summed, "ik", am, "ij", bm, "jk", dtype=float), m @ n)


def test_blockwise_new_axes_adjust_chunks_and_constants():
    x = data((6,))
    a = la.asarray(x, chunks=4)
    got = la.blockwise(
        lambda b, k: np.repeat(b[:, None], k, axis=1), "ij", a, "i", 3, None, new_axes={"j": 3}
    )
    assert_eq(got, np.repeat(x[:, None], 3, axis=1))
    halves = la.blockwise(lambda b: b[::2], "i", a, "i", adjust_chunks={"i": lambda c: c // 2})
    assert_eq(halves, np.concatenate([x[:4:2], x[4::2]]))


def test_blockwise_errors():
    a = la.asarray(data((4, 3)), chunks=2)
    with pytest.raises(ValueError, match="does not match array dimension"):
        la.blockwise(double, "i", a, "i")
    with pytest.raises(ValueError, match="do not align"):
        la.blockwise(np.add, "ij", a, "ij", la.asarray(data((5, 3))), "ij")


# -- apply_gufunc and apply_along_axis -------------------------------------------------


def test_apply_gufunc_reductions_and_broadcasting():
    x, y = data((6, 4)), data((4,), seed=1)
    a = la.asarray(x, chunks=(2, 4))
    b = la.asarray(y, chunks=4)
    assert_eq(la.apply_gufunc(lambda v: v.mean(-1), "(i)->()", a), x.mean(axis=-1))
    dot = la.apply_gufunc(lambda p, q: (p * q).sum(-1), "(i),(i)->()", a, b)
    assert_eq(dot, x @ y)
    both = la.apply_gufunc(lambda p: (p.min(-1), p.max(-1)), "(i)->(),()", a)
    assert isinstance(both, tuple) and len(both) == 2
    assert_eq(both[0], x.min(-1))
    assert_eq(both[1], x.max(-1))


def test_apply_gufunc_vectorize_output_sizes_and_core_chunks():
    x = data((5, 3))
    a = la.asarray(x, chunks=(2, 3))
    got = la.apply_gufunc(
        lambda v: np.array([v.sum(), v.prod()]),
        "(i)->(k)",
        a,
        vectorize=True,
        output_dtypes=float,
        output_sizes={"k": 2},
    )
    assert_eq(got, np.stack([x.sum(-1), x.prod(-1)], axis=-1))
    split = la.asarray(x, chunks=(2, 2))
    with pytest.raises(ValueError, match="consists of multiple chunks"):
        la.apply_gufunc(np.sum, "(i)->()", split, output_dtypes=float, axis=None)
    assert_eq(la.apply_gufunc(lambda v: v.sum(-1), "(i)->()", split, allow_rechunk=True), x.sum(-1))
    with pytest.raises(ValueError, match="output_sizes"):
        la.apply_gufunc(lambda v: v, "(i)->(k)", a, output_dtypes=float)
    with pytest.raises(ValueError, match="valid gufunc signature"):
        la.apply_gufunc(np.sum, "(i->)", a)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_apply_along_axis(axis):
    x = data((5, 4))
    a = la.asarray(x, chunks=(2, 3))
    assert_eq(la.apply_along_axis(np.cumsum, axis, a), np.apply_along_axis(np.cumsum, axis, x))
    assert_eq(la.apply_along_axis(np.max, axis, a), np.apply_along_axis(np.max, axis, x))

    def ends(v, scale):
        return np.array([v[0], v[-1]]) * scale

    assert_eq(la.apply_along_axis(ends, axis, a, 2.0), np.apply_along_axis(ends, axis, x, 2.0))


def test_apply_gufunc_axes_axis_keepdims():
    x = data((4, 6, 3))
    a = la.asarray(x, chunks=(2, 6, 3))
    mean = lambda v: v.mean(-1)  # noqa: E731
    assert_eq(la.apply_gufunc(mean, "(i)->()", a, axis=1), x.mean(axis=1))
    assert_eq(la.apply_gufunc(mean, "(i)->()", a, axes=[(1,)]), x.mean(axis=1))
    kept = la.apply_gufunc(mean, "(i)->()", a, axis=1, keepdims=True)
    assert_eq(kept, x.mean(axis=1, keepdims=True))
    moved = la.apply_gufunc(lambda v: v * 2, "(i)->(i)", a, axes=[(1,), (0,)])
    assert_eq(moved, np.moveaxis(x * 2, 1, 0))
    with pytest.raises(ValueError, match="Only one of"):
        la.apply_gufunc(mean, "(i)->()", a, axis=1, axes=[(1,)])
    with pytest.raises(ValueError, match="scalar outputs"):
        la.apply_gufunc(lambda v: v, "(i)->(i)", a, axis=1, keepdims=True)


def test_a_user_ufunc_named_like_numpys_is_not_numpys():
    @numba.vectorize
    def add(v, w):
        return v - w

    x = data((5,))
    a = la.asarray(x, chunks=2)
    assert_eq(add(a, 1.0), x - 1.0)


def test_redefined_functions_never_share_a_compiled_kernel():
    def make(k):
        @numba.vectorize
        def shift(v):
            return v + k

        return shift

    x = data((30,))
    a = la.asarray(x, chunks=10)
    for k in (1.0, 5.0):
        np.testing.assert_allclose((make(k)(a) * 2).compute(executor="numba"), (x + k) * 2)


def test_njit_functions_acting_on_whole_blocks_are_not_taken_for_elementwise():
    @numba.njit
    def running(b):
        return np.cumsum(b)

    x = data((6,))
    a = la.asarray(x, chunks=3)
    y = la.map_blocks(running, a)
    assert "user_elementwise" not in op_names(y)
    assert_eq(y, np.concatenate([np.cumsum(x[:3]), np.cumsum(x[3:])]))


def test_user_functions_inside_fused_reductions_and_joint_kernels():
    x = data((40, 6))
    a = la.asarray(x, chunks=(15, 6))
    body = triple_plus_one(a) * la.map_blocks(ramp, a)
    want = (x * 3 + 1) * np.where(x > 0, np.exp(-x), x * 0.5)
    from lazyarr.executors import registry

    assert_eq(body.sum(axis=0), want.sum(axis=0))
    np.testing.assert_allclose(body.sum(axis=0).compute(executor="numba"), want.sum(axis=0))
    kernels = registry.get("numba").last_kernels
    assert kernels.compiled and not kernels.fallbacks
    assert_eq(body.max(), want.max())
    s, m = la.compute(body.sum(axis=0), body.mean(axis=0))
    np.testing.assert_allclose(s, want.sum(axis=0))
    np.testing.assert_allclose(m, want.mean(axis=0))


def test_numba_guvectorize_runs_per_block_not_fused():
    @numba.guvectorize(["void(float64[:], float64[:])"], "(n)->()")
    def total(v, out):
        out[0] = v.sum()

    x = data((4, 5))
    a = la.asarray(x, chunks=(2, 5))
    got = la.apply_gufunc(total, "(n)->()", a, output_dtypes=float)
    assert "user_elementwise" not in op_names(got)
    assert_eq(got, x.sum(-1))


def test_blockwise_passes_a_lazy_array_with_no_index_whole():
    x, w = data((6, 3)), data((3,), seed=1)
    a = la.asarray(x, chunks=(2, 3))
    b = la.asarray(w, chunks=1)
    got = la.blockwise(
        lambda blk, weights: blk @ weights, "i", a, "ij", b, None, dtype=float, concatenate=True
    )
    assert_eq(got, x @ w)
    split = la.asarray(x, chunks=(2, 2))  # lists of blocks along j; the weights stay whole
    lists = la.blockwise(
        lambda blks, weights: np.concatenate(blks, axis=1) @ weights,
        "i",
        split,
        "ij",
        b,
        None,
        dtype=float,
    )
    assert_eq(lists, x @ w)
    with pytest.raises(TypeError, match="keyword argument weights= is a lazy array"):
        la.map_blocks(lambda blk, weights: blk, a, weights=b)


def test_plans_with_user_functions_are_described_and_drawn(tmp_path):
    x = data((8, 6))
    a = la.asarray(x, chunks=(3, 4))
    y = la.map_overlap(lambda b: b * 2, triple_plus_one(a), depth=1, boundary="periodic")
    z = la.blockwise(np.dot, "ik", y, "ij", a.T, "jk", concatenate=True)
    plan = api.make_plan([z._expr], "numba", api.passes_for(True, None))
    assert "map_overlap" in plan.to_json()
    z.visualize(str(tmp_path / "plan.html"))
    assert "triple_plus_one" in z.explain()


def test_every_user_function_api_is_lazy():
    x = data((6, 4))
    a = la.asarray(x, chunks=(3, 2))
    with config.set(executor="raise"):
        built = [
            la.map_blocks(double, a),
            a.map_blocks(triple_plus_one),
            la.blockwise(np.add, "ij", a, "ij", a, "ij"),
            la.map_overlap(double, a, depth=1, boundary="periodic"),
            a.map_overlap(double, depth=1, boundary=0),
            la.apply_gufunc(lambda v: v.sum(-1), "(i)->()", a.rechunk((3, 4))),
            la.apply_along_axis(np.sort, 0, a),
        ]
        for y in built:
            with pytest.raises(ComputeRefused):
                y.compute()
    assert_eq(built[-1], np.sort(x, axis=0))


def test_numpy_apply_along_axis_on_a_lazy_array_stays_lazy():
    x = data((4, 5))
    a = la.asarray(x, chunks=2)
    got = np.apply_along_axis(np.cumsum, 1, a)
    assert isinstance(got, la.LazyArray)
    assert_eq(got, np.apply_along_axis(np.cumsum, 1, x))

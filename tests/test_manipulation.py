"""Shape manipulation against NumPy: values, dtypes, chunk layouts, regions, errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import chunks_for_shape, dtypes, lazy_arrays, shapes

import lazyarr as la
from lazyarr._array import wrap
from lazyarr.graph.chunks import block_index_iter, block_slices
from lazyarr.graph.ops._reshape import flat_box, reshape_chunks, reshape_groups, reshape_region
from lazyarr.graph.serialize import exprs_from_json, exprs_to_json
from lazyarr.kernels.blocks import blocks_for_region
from lazyarr.kernels.reference import kernel_for
from lazyarr.testing import assert_eq, assert_same_error

# -- helpers ----------------------------------------------------------------------------


def lazy(a, chunks="auto"):
    return la.asarray(np.asarray(a), chunks=chunks)


def region_size(region):
    return math.prod(s.stop - s.start for s in region)


def box_of(shape, data, nonempty=False):
    """A random box (step-1 slices, empty only if allowed or ``shape`` is) inside ``shape``."""
    out = []
    for n in shape:
        k = int(nonempty and n > 0)
        a = data.draw(st.integers(0, n - k))
        b = data.draw(st.integers(a + k, n))
        out.append(slice(a, b))
    return tuple(out)


def check_box(x, inputs, expected, box):
    """``regions`` + kernel give ``expected[box]`` for an arbitrary output box.

    Fused stages may ask an op for any box, not only its blocks; the regions
    must also lie inside each input.
    """
    expr = x._expr
    regions = expr.op.regions(expr, box)
    assert len(regions) == len(expr.inputs) == len(inputs)
    pieces = []
    for inp, region, a in zip(expr.inputs, regions, inputs, strict=True):
        assert len(region) == inp.ndim
        for s, n in zip(region, inp.shape, strict=True):
            assert 0 <= s.start <= s.stop <= n, (region, inp.shape)
        pieces.append(a[region])
    got = kernel_for(expr.op)(expr.op, expr, box, *pieces)
    want = expected[box]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def check_blocks_exact(x):
    """Every output block reads exactly as many input elements as it holds."""
    expr = x._expr
    (inp,) = expr.inputs
    for index in block_index_iter(expr.numblocks):
        out = block_slices(expr.chunks, index)
        (region,) = expr.op.regions(expr, out)
        assert region_size(region) == region_size(out), (index, out, region)
    return inp


def blocks_read(x, index):
    """Number of input blocks each input contributes to output block ``index``."""
    expr = x._expr
    out = block_slices(expr.chunks, index)
    return [
        len(blocks_for_region(inp.chunks, r)) if region_size(r) else 0
        for inp, r in zip(expr.inputs, expr.op.regions(expr, out), strict=True)
    ]


def nonempty_blocks(x):
    """Indices of the blocks of ``x`` that hold at least one element."""
    return [
        i for i in block_index_iter(x.numblocks) if region_size(block_slices(x._expr.chunks, i))
    ]


@st.composite
def reshape_targets(draw, shape):
    """A shape with the same size as ``shape`` (maybe with one -1)."""
    size = math.prod(shape)
    k = draw(st.integers(0, 4))
    if size == 0:
        new = [draw(st.integers(0, 4)) for _ in range(max(k, 1))]
        new[draw(st.integers(0, len(new) - 1))] = 0
        return tuple(new)
    if k == 0:
        if size != 1:
            k = 1
        else:
            return ()
    factors, n, p = [], size, 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    new = [1] * k
    for f in factors:
        new[draw(st.integers(0, k - 1))] *= f
    if draw(st.booleans()):
        new[draw(st.integers(0, k - 1))] = -1
    return tuple(new)


# -- reshape ------------------------------------------------------------------------------


def test_reshape_arithmetic():
    assert reshape_groups((6, 4), (2, 3, 4)) == (((0,), (0, 1)), ((1,), (2,)))
    assert reshape_groups((1, 6, 1), (3, 1, 2)) == (((1,), (0, 2)),)
    assert reshape_groups((6, 4), (4, 6)) == (((0, 1), (0, 1)),)
    # flat range [5, 12) of a (3, 4) array: rows 1..2, all columns
    assert flat_box(5, 12, (3, 4)) == (slice(1, 3), slice(0, 4))
    assert flat_box(4, 8, (3, 4)) == (slice(1, 2), slice(0, 4))
    assert flat_box(6, 7, (3, 4)) == (slice(1, 2), slice(2, 3))
    assert reshape_region((3, 4), (12,), (slice(4, 8),)) == (slice(1, 2), slice(0, 4))
    assert reshape_region((3, 4), (12,), (slice(4, 4),)) == (slice(0, 0), slice(0, 0))
    # rows of 4 on a (2, 2)-chunked grid: one row (two input blocks) per output block
    assert reshape_chunks((4, 4), ((2, 2), (2, 2)), (16,)) == ((4, 4, 4, 4),)
    assert reshape_chunks((12,), ((6, 6),), (3, 4)) == ((1, 1, 1), (4,))
    assert reshape_chunks((12,), ((4, 4, 4),), (3, 4)) == ((1, 1, 1), (4,))


@given(data=st.data())
def test_reshape_matches_numpy(data):
    x, a = data.draw(lazy_arrays(shape=shapes(0, 4, 5), special=False))
    new = data.draw(reshape_targets(a.shape))
    y = la.reshape(x, new)
    assert_eq(y, np.reshape(a, new))
    if y._expr is not x._expr:
        check_box(y, [a], np.reshape(a, new), box_of(y.shape, data))


@given(data=st.data())
def test_reshape_regions_for_any_box(data):
    # non-empty arrays and boxes that are rarely one contiguous run: the kernel's general paths
    x, a = data.draw(lazy_arrays(dtype="float32", shape=shapes(1, 4, 5, min_side=1)))
    new = data.draw(reshape_targets(a.shape))
    y = la.reshape(x, new)
    if y._expr is not x._expr:
        for _ in range(5):
            check_box(y, [a], np.reshape(a, new), box_of(y.shape, data, nonempty=True))


@pytest.mark.parametrize(
    ("shape", "new"),
    [((12,), (3, 4)), ((2, 3, 4), (4, 6)), ((6, 4), (4, 1, 6)), ((1, 2, 3, 1, 2), (3, 1, 4))],
)
def test_reshape_every_box(shape, new):
    # every non-empty box of the output, as fused stages might ask for them
    a = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    y = lazy(a, 2).reshape(new)
    want = a.reshape(new)
    ranges = [[slice(i, j) for i in range(n) for j in range(i + 1, n + 1)] for n in new]
    for box in itertools.product(*ranges):
        check_box(y, [a], want, box)


@given(data=st.data())
@settings(max_examples=25)
def test_ravel_and_splitting_one_axis_read_exact_regions(data):
    x, a = data.draw(lazy_arrays(dtype="int16", shape=shapes(1, 4, 6, min_side=1)))
    flat = x.ravel()
    assert_eq(flat, a.ravel())
    if flat._expr is not x._expr:
        check_blocks_exact(flat)
    # splitting a 1-d array: every block is a contiguous run of the input
    v = la.asarray(a.ravel(), chunks=data.draw(chunks_for_shape((a.size,))))
    split = v.reshape(a.shape)
    assert_eq(split, a)
    if split._expr is not v._expr:
        check_blocks_exact(split)


def test_reshape_chunk_layouts():
    a = np.arange(4 * 6 * 10).reshape(4, 6, 10)
    # trailing axes whole in one block: merging them keeps blocks 1:1
    x = lazy(a, (2, 6, 10))
    y = x.reshape(4, 60)
    assert y.chunks == ((2, 2), (60,))
    assert y.reshape(240).chunks == ((120, 120),)
    assert x.reshape(240).chunks == ((120, 120),)
    # splitting the last axis keeps the leading chunks
    assert x.reshape(4, 6, 2, 5).chunks == ((2, 2), (6,), (2,), (5,))
    # a chunked trailing axis: blocks are runs of whole rows read from several blocks
    z = lazy(np.arange(100 * 100).reshape(100, 100), (10, 10))
    flat = z.reshape(-1)
    assert flat.numblocks == (100,) and set(flat.chunks[0]) == {100}
    assert check_blocks_exact(flat) is z._expr
    assert_eq(flat, np.arange(100 * 100))
    # expand_dims / squeeze keep chunks and add (1,)
    e = la.expand_dims(x, (0, 2))
    assert e.chunks == ((1,), (2, 2), (1,), (6,), (10,))
    assert la.squeeze(e).chunks == x.chunks
    assert la.reshape(x, x.shape)._expr is x._expr


def test_reshape_general_groups():
    a = np.arange(7 * 9 * 4, dtype=np.float32).reshape(7, 9, 4)
    for chunks in [(3, 4, 3), (7, 9, 4), (1, 2, 1)]:
        x = lazy(a, chunks)
        for shape in [(9, 7, 4), (3, 21, 4), (63, 2, 2), (4, 63), (2, 126), (252,), (3, 3, 28)]:
            assert_eq(x.reshape(shape), a.reshape(shape))


def test_reshape_fortran_order_and_ravel():
    a = np.arange(24).reshape(2, 3, 4)
    x = lazy(a, 2)
    assert_eq(la.reshape(x, (4, 6), order="F"), np.reshape(a, (4, 6), order="F"))
    assert_eq(la.ravel(x, order="F"), np.ravel(a, order="F"))
    assert_eq(np.ravel(x), np.ravel(a))
    assert_eq(np.reshape(x, (6, -1)), np.reshape(a, (6, -1)))
    assert_eq(x.flatten(), a.flatten())
    assert_eq(x.reshape(3, 8), a.reshape(3, 8))
    assert_eq(x.reshape((3, 8)), a.reshape((3, 8)))
    assert_same_error(lambda: np.reshape(a, 6, order="K"), lambda: la.reshape(x, 6, order="K"))


@pytest.mark.parametrize(
    ("shape", "new"),
    [((2, 3), (7,)), ((2, 3), (4, -1)), ((2, 3), (-1, -1)), ((0, 3), (-1, 0)), ((6,), 2.0)],
)
def test_reshape_errors(shape, new):
    a = np.zeros(shape)
    assert_same_error(lambda: a.reshape(new), lambda: lazy(a).reshape(new))
    assert_same_error(lambda: np.reshape(a, new), lambda: la.reshape(lazy(a), new))


def test_reshape_error_message_names_shapes():
    with pytest.raises(ValueError, match=r"cannot reshape array of size 6 into shape \(7,\)"):
        la.reshape(la.zeros((2, 3)), (7,))


# -- transpose and friends ------------------------------------------------------------------


@given(data=st.data())
def test_permute_dims_matches_numpy(data):
    x, a = data.draw(lazy_arrays(shape=shapes(0, 4, 4)))
    perm = tuple(data.draw(st.permutations(range(a.ndim))))
    y = la.permute_dims(x, perm)
    assert_eq(y, np.transpose(a, perm))
    assert y.chunks == tuple(x.chunks[p] for p in perm)
    if y._expr is not x._expr:
        check_box(y, [a], np.transpose(a, perm), box_of(y.shape, data))
        # each block is exactly one input block
        assert all(blocks_read(y, i) == [1] for i in nonempty_blocks(y))
    assert_eq(np.transpose(x), np.transpose(a))


def test_transpose_methods():
    a = np.arange(24, dtype=np.complex64).reshape(2, 3, 4) * (1 + 2j)
    x = lazy(a, (1, 2, 3))
    assert_eq(x.transpose(), a.transpose())
    assert_eq(x.transpose(1, 0, 2), a.transpose(1, 0, 2))
    assert_eq(x.transpose((2, 0, 1)), a.transpose((2, 0, 1)))
    assert_eq(x.mT, a.mT)
    assert_eq(x[0].T, a[0].T)
    assert_eq(x.swapaxes(0, -1), a.swapaxes(0, -1))
    assert_eq(la.swapaxes(x, 1, 1), np.swapaxes(a, 1, 1))
    assert_eq(np.moveaxis(x, [0, 1], [-1, -2]), np.moveaxis(a, [0, 1], [-1, -2]))
    assert_eq(la.moveaxis(x, 2, 0), np.moveaxis(a, 2, 0))
    s = lazy(np.float32(3))
    assert_eq(s.T, np.float32(3).T)


def test_a_transpose_of_a_transpose_is_one_transpose():
    """As NumPy's views compose: no stage copies the blocks twice (flox moves the grouped axis
    last, lazyarr's grouped reduction moves it back)."""
    a = np.arange(24.0).reshape(2, 3, 4)
    x = lazy(a, (1, 2, 3))
    back = x.transpose(1, 2, 0).transpose(2, 0, 1)
    assert back._expr is x._expr
    twice = x.transpose(1, 2, 0).transpose(1, 0, 2)
    assert twice._expr.op.axes == (2, 1, 0) and twice._expr.inputs[0] is x._expr
    assert_eq(twice, a.transpose(1, 2, 0).transpose(1, 0, 2))
    named = x.transpose(1, 2, 0).rename("t").transpose(2, 0, 1)  # the user's name is kept
    assert named._expr is not x._expr
    assert_eq(named, a)


@pytest.mark.parametrize(
    "call",
    [
        lambda np_, a: np_.transpose(a, (0,)),
        lambda np_, a: np_.transpose(a, (0, 0, 1)),
        lambda np_, a: np_.transpose(a, (0, 1, 5)),
        lambda np_, a: np_.swapaxes(a, 0, 3),
        lambda np_, a: np_.moveaxis(a, (0, 1), 0),
        lambda np_, a: np_.moveaxis(a, (0, 0), (0, 1)),
        lambda np_, a: np_.moveaxis(a, 4, 0),
    ],
)
def test_transpose_errors(call):
    a = np.zeros((2, 3, 4))
    assert_same_error(lambda: call(np, a), lambda: call(la, lazy(a)))


def test_mT_of_1d_raises():
    with pytest.raises(ValueError):
        lazy(np.zeros(3)).mT  # noqa: B018


def test_T_of_3d_reverses_axes():
    a = np.arange(24).reshape(2, 3, 4)
    assert_eq(lazy(a, 2).T, a.T)


# -- expand_dims / squeeze ------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, -1, 1, (0, 1), (0, -1), (3, 1)])
def test_expand_dims(axis):
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    x = lazy(a, (1, 2))
    y = la.expand_dims(x, axis)
    assert_eq(y, np.expand_dims(a, axis))
    assert all(c == (1,) for c, n in zip(y.chunks, y.shape, strict=True) if n == 1)


def test_squeeze():
    a = np.arange(6.0).reshape(1, 2, 1, 3, 1)
    x = lazy(a, (1, 1, 1, 2, 1))
    for axis in [None, 0, (0, 2), -1, (0, 2, 4)]:
        assert_eq(la.squeeze(x, axis), np.squeeze(a, axis))
        assert_eq(x.squeeze(axis), a.squeeze(axis))
    assert_eq(la.squeeze(lazy(np.ones((1, 1)))), np.squeeze(np.ones((1, 1))))
    assert_eq(la.squeeze(lazy(np.zeros((0, 1)))), np.zeros((0,)))
    assert_eq(la.expand_dims(lazy(np.float64(2.5)), 0), np.array([2.5]))


@pytest.mark.parametrize(
    "call",
    [
        lambda np_, a: np_.squeeze(a, 1),
        lambda np_, a: np_.squeeze(a, 5),
        lambda np_, a: np_.squeeze(a, (0, 0)),
        lambda np_, a: np_.expand_dims(a, 4),
        lambda np_, a: np_.expand_dims(a, (0, 0)),
    ],
)
def test_squeeze_expand_errors(call):
    a = np.zeros((1, 3, 1))
    assert_same_error(lambda: call(np, a), lambda: call(la, lazy(a)))


# -- broadcast_to -------------------------------------------------------------------------------


@st.composite
def broadcast_cases(draw):
    target = draw(shapes(0, 4, 4))
    nd = draw(st.integers(0, len(target)))
    src = tuple(n if draw(st.booleans()) else 1 for n in target[len(target) - nd :])
    return src, target


@given(case=broadcast_cases(), data=st.data())
def test_broadcast_to_matches_numpy(case, data):
    src, target = case
    x, a = data.draw(lazy_arrays(shape=src))
    y = la.broadcast_to(x, target)
    want = np.broadcast_to(a, target)
    assert_eq(y, want)
    lead = len(target) - len(src)
    for j, n in enumerate(src):
        if n == target[lead + j]:
            assert y.chunks[lead + j] == x.chunks[j]
    if y._expr is not x._expr:
        check_box(y, [a], want, box_of(target, data))


def test_broadcast_to_chunks_new_axes_by_limit():
    x = lazy(np.arange(1000.0), 100)
    with la.config.set({"array.chunk-size": "80kB"}):
        y = la.broadcast_to(x, (500, 1000))
    assert y.chunks[1] == x.chunks[0]
    assert 1 < y.numblocks[0] < 500 and max(y.chunks[0]) * 100 * 8 <= 80_000
    assert_eq(y[:3], np.broadcast_to(np.arange(1000.0), (3, 1000)))


def test_broadcast_arrays_and_shapes():
    a, b = np.arange(3), np.arange(4.0).reshape(4, 1)
    out = la.broadcast_arrays(lazy(a), b)
    want = np.broadcast_arrays(a, b)
    assert isinstance(out, list) and len(out) == 2  # the Array API's list (NumPy: a tuple)
    for o, w in zip(out, want, strict=True):
        assert_eq(o, w)
    out = np.broadcast_arrays(lazy(a), lazy(b))
    assert isinstance(out, list)
    assert_eq(out[1], want[1])
    assert la.broadcast_shapes((3,), (4, 1)) == (4, 3)
    assert_same_error(
        lambda: np.broadcast_arrays(np.ones(3), np.ones(4)),
        lambda: la.broadcast_arrays(lazy(np.ones(3)), lazy(np.ones(4))),
    )


@pytest.mark.parametrize("shape", [(4,), (-1, 3), (3, 2), 3.0, (2, 0)])
def test_broadcast_to_errors(shape):
    a = np.ones(3)
    assert_same_error(lambda: np.broadcast_to(a, shape), lambda: la.broadcast_to(lazy(a), shape))


# -- flip and roll ------------------------------------------------------------------------------


@given(data=st.data())
@settings(max_examples=25)
def test_flip_matches_numpy(data):
    x, a = data.draw(lazy_arrays(shape=shapes(0, 3, 5)))
    axis = data.draw(
        st.none()
        | (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none())
        | st.lists(st.integers(0, max(a.ndim - 1, 0)), unique=True, max_size=a.ndim).map(tuple)
    )
    y = la.flip(x, axis=axis)
    want = np.flip(a, axis)
    assert_eq(y, want)
    if y._expr is not x._expr:
        check_box(y, [a], want, box_of(a.shape, data))
        assert all(blocks_read(y, i) == [1] for i in nonempty_blocks(y))


def test_fliplr_flipud():
    a = np.arange(12).reshape(3, 4)
    x = lazy(a, (2, 3))
    assert x.chunks == ((2, 1), (3, 1))
    assert la.flip(x, 0).chunks == ((1, 2), (3, 1))
    assert_eq(np.fliplr(x), np.fliplr(a))
    assert_eq(la.flipud(x), np.flipud(a))
    assert_eq(la.flipud(lazy(np.arange(3))), np.arange(3)[::-1])
    assert_same_error(lambda: np.fliplr(np.ones(3)), lambda: la.fliplr(lazy(np.ones(3))))
    assert_same_error(lambda: np.flipud(np.ones(())), lambda: la.flipud(lazy(np.ones(()))))
    assert_same_error(lambda: np.flip(a, (0, 0)), lambda: la.flip(x, (0, 0)))
    assert_same_error(lambda: np.flip(a, 2), lambda: la.flip(x, 2))


@given(data=st.data())
@settings(max_examples=30)
def test_roll_matches_numpy(data):
    x, a = data.draw(lazy_arrays(shape=shapes(0, 3, 6)))
    shift_int = st.integers(-15, 15)
    if a.ndim and data.draw(st.booleans()):
        axis = data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1, max_size=3))
        shift = data.draw(st.lists(shift_int, min_size=len(axis), max_size=len(axis)))
        axis, shift = tuple(axis), tuple(shift)
    else:
        axis, shift = None, data.draw(shift_int)
    y = la.roll(x, shift, axis=axis)
    want = np.roll(a, shift, axis=axis)
    assert_eq(y, want)
    if axis is not None and y._expr is not x._expr:
        check_box(y, [a], want, box_of(a.shape, data))
        # blocks are cut where the input wraps: each reads one input block
        assert all(blocks_read(y, i) == [1] for i in nonempty_blocks(y))


def test_roll_special_cases():
    a = np.arange(20).reshape(4, 5)
    x = lazy(a, (3, 2))
    assert_eq(la.roll(x, 3, axis=(0, 0)), np.roll(a, 3, axis=(0, 0)))
    assert_eq(la.roll(x, (1, 2), axis=1), np.roll(a, (1, 2), axis=1))
    assert_eq(la.roll(x, 2.7, axis=1), np.roll(a, 2.7, axis=1))
    assert la.roll(x, 5, axis=1)._expr is x._expr
    assert_eq(la.roll(lazy(np.zeros((0, 3))), 2), np.zeros((0, 3)))
    assert_eq(la.roll(lazy(np.float64(1.5)), 1), np.roll(np.float64(1.5), 1))
    assert_same_error(lambda: np.roll(a, (1, 2), (0, 1, 0)), lambda: la.roll(x, (1, 2), (0, 1, 0)))
    assert_same_error(lambda: np.roll(a, 1, 2), lambda: la.roll(x, 1, 2))


# -- concat and stack -------------------------------------------------------------------------


@st.composite
def concat_cases(draw):
    base = draw(shapes(1, 3, 4))
    axis = draw(st.integers(-len(base), len(base) - 1))
    k = draw(st.integers(1, 4))
    ax = axis % len(base)
    pairs = []
    for _ in range(k):
        shape = list(base)
        shape[ax] = draw(st.integers(0, 4))
        dtype = draw(dtypes("bifc"))
        pairs.append(draw(lazy_arrays(dtype=dtype, shape=tuple(shape), special=False)))
    return pairs, axis


@given(case=concat_cases(), data=st.data())
def test_concat_matches_numpy(case, data):
    pairs, axis = case
    xs, arrs = [p[0] for p in pairs], [p[1] for p in pairs]
    y = la.concat(xs, axis=axis)
    want = np.concatenate(arrs, axis=axis)
    assert_eq(y, want)
    if len(xs) > 1:
        ax = axis % want.ndim
        assert y.chunks[ax] == (tuple(c for x in xs for c in x.chunks[ax] if c) or (0,))
        check_box(y, arrs, want, box_of(want.shape, data))
        for i in nonempty_blocks(y):
            assert sum(1 for n in blocks_read(y, i) if n) == 1
    assert_eq(np.concatenate(xs, axis=None), np.concatenate(arrs, axis=None))


def test_concat_dtype_and_casting():
    a = np.arange(4, dtype=np.int32)
    b = np.linspace(0, 1, 3, dtype=np.float32)
    x, y = lazy(a, 3), lazy(b, 2)
    assert_eq(la.concat([x, y]), np.concatenate([a, b]))
    assert_eq(np.concatenate([x, b], dtype=np.float64), np.concatenate([a, b], dtype=np.float64))
    assert_eq(la.concat([x, lazy([True, False])]), np.concatenate([a, [True, False]]))
    assert_same_error(
        lambda: np.concatenate([a, b], dtype=np.int64),
        lambda: la.concatenate([x, y], dtype=np.int64),
    )
    assert_eq(
        la.concatenate([x, y], dtype=np.int64, casting="unsafe"),
        np.concatenate([a, b], dtype=np.int64, casting="unsafe"),
    )
    with pytest.raises(TypeError):
        la.concatenate([x, y], out=np.empty(7))


def test_concat_mixed_chunks_and_nan():
    a = np.full((3, 5), np.nan)
    b = np.arange(10.0).reshape(2, 5)
    x, y = lazy(a, (2, 2)), lazy(b, (1, 3))
    out = la.concat([x, y, x], axis=0)
    assert out.chunks == ((2, 1, 1, 1, 2, 1), (2, 2, 1))
    assert_eq(out, np.concatenate([a, b, a]))


@pytest.mark.parametrize(
    "arrays_",
    [
        [],
        [np.ones(()), np.ones(())],
        [np.ones(2), np.ones((2, 2))],
        [np.ones((2, 3)), np.ones((2, 2))],
    ],
)
def test_concat_errors(arrays_):
    assert_same_error(
        lambda: np.concatenate(arrays_), lambda: la.concat([lazy(a) for a in arrays_])
    )


def test_concat_error_names_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(2, 2\)"):
        la.concat([la.zeros((2, 3)), la.zeros((2, 2))])
    assert_same_error(
        lambda: np.concatenate([np.ones(2)], axis=1), lambda: la.concat([lazy(np.ones(2))], axis=1)
    )


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack(axis):
    arrs = [np.arange(6, dtype=np.uint8).reshape(2, 3) + i for i in range(3)]
    xs = [lazy(a, (1, 2)) for a in arrs]
    y = la.stack(xs, axis=axis)
    assert_eq(y, np.stack(arrs, axis=axis))
    assert y.chunks[axis] == (1, 1, 1)
    assert_eq(np.stack(xs, axis=axis, dtype=np.int16), np.stack(arrs, axis=axis, dtype=np.int16))


def test_stack_errors():
    a = lazy(np.ones(2))
    assert_same_error(
        lambda: np.stack([np.ones(2), np.ones(3)]), lambda: la.stack([a, lazy(np.ones(3))])
    )
    assert_same_error(lambda: np.stack([]), lambda: la.stack([]))
    assert_same_error(lambda: np.stack([np.ones(2)], axis=2), lambda: la.stack([a], axis=2))


def test_stack_helpers():
    v, w = np.arange(3), np.arange(3, 6)
    M = np.arange(6.0).reshape(2, 3)
    lv, lw, lM = lazy(v, 2), lazy(w), lazy(M, 1)
    assert_eq(la.vstack([lv, lw]), np.vstack([v, w]))
    assert_eq(np.vstack([lM, lv]), np.vstack([M, v]))
    assert_eq(la.hstack([lv, lw]), np.hstack([v, w]))
    assert_eq(np.hstack([lM, lM]), np.hstack([M, M]))
    assert_eq(la.hstack([lv, lw], dtype=np.float32), np.hstack([v, w], dtype=np.float32))
    assert_eq(la.dstack([lv, lw]), np.dstack([v, w]))
    assert_eq(np.dstack([lM, lM]), np.dstack([M, M]))
    assert_eq(la.column_stack([lv, lw]), np.column_stack([v, w]))
    assert_eq(np.column_stack([lM.T, lv]), np.column_stack([M.T, v]))
    assert_eq(la.concatenate(lM), np.concatenate(M))
    assert_same_error(lambda: np.hstack([]), lambda: la.hstack([]))


def test_atleast():
    s, v, M = np.float32(2), np.arange(3), np.ones((2, 3))
    for fn, lfn in [
        (np.atleast_1d, la.atleast_1d),
        (np.atleast_2d, la.atleast_2d),
        (np.atleast_3d, la.atleast_3d),
    ]:
        for a in (s, v, M):
            assert_eq(lfn(lazy(a)), fn(a))
        out = lfn(lazy(s), lazy(v))
        assert isinstance(out, tuple) and len(out) == 2
        assert_eq(out[1], fn(v))
    assert_eq(np.atleast_2d(lazy(v)), np.atleast_2d(v))


def test_unstack():
    a = np.arange(24).reshape(2, 3, 4)
    x = lazy(a, (1, 2, 3))
    for axis in (0, 1, -1):
        got = la.unstack(x, axis=axis)
        want = np.unstack(a, axis=axis)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_eq(g, w)
    assert_same_error(lambda: np.unstack(np.ones(())), lambda: la.unstack(lazy(np.ones(()))))
    assert_same_error(lambda: np.unstack(a, axis=3), lambda: la.unstack(x, axis=3))


# -- tile and repeat --------------------------------------------------------------------------


@given(data=st.data())
@settings(max_examples=30)
def test_tile_matches_numpy(data):
    x, a = data.draw(lazy_arrays(shape=shapes(0, 3, 4)))
    reps = data.draw(st.integers(0, 3) | st.lists(st.integers(0, 3), max_size=4).map(tuple))
    y = la.tile(x, reps)
    want = np.tile(a, reps)
    assert_eq(y, want)
    if y._expr.op.name == "tile":
        # the Tile op reads ``x`` with leading length-one axes added when reps is longer
        check_box(y, [a.reshape(y._expr.inputs[0].shape)], want, box_of(want.shape, data))


def test_tile_groups_small_copies_into_blocks():
    a = np.arange(3)
    y = la.tile(lazy(a), 1000)
    assert y.numblocks == (1,)
    with la.config.set({"array.chunk-size": "2400B"}):  # 100 copies of 24 bytes
        z = la.tile(lazy(a), 1000)
    assert z.chunks[0][0] == 300 and z.numblocks == (10,)
    assert_eq(z, np.tile(a, 1000))
    w = la.tile(lazy(np.arange(10), 4), 3)
    assert w.chunks == ((4, 4, 2) * 3,)
    assert all(blocks_read(w, i) == [1] for i in nonempty_blocks(w))
    assert_eq(la.tile(lazy(a), (1.0, 1)), np.tile(a, (1.0, 1)))


@pytest.mark.parametrize("reps", [-1, (2, -1), 1.5, (2.0,), (2, 1.5)])
def test_tile_errors(reps):
    a = np.ones(3)
    assert_same_error(lambda: np.tile(a, reps), lambda: la.tile(lazy(a), reps))


@given(data=st.data())
@settings(max_examples=30)
def test_repeat_matches_numpy(data):
    x, a = data.draw(lazy_arrays(shape=shapes(0, 3, 5)))
    axis = data.draw(st.none() | (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none()))
    n = a.size if axis is None else a.shape[axis]
    repeats = data.draw(
        st.integers(0, 3)
        | st.lists(st.integers(0, 3), min_size=n, max_size=n)
        | st.lists(st.integers(0, 3), min_size=1, max_size=1)
    )
    y = la.repeat(x, repeats, axis=axis)
    want = np.repeat(a, repeats, axis=axis)
    assert_eq(y, want)
    if axis is not None and y._expr is not x._expr:
        check_box(y, [a], want, box_of(want.shape, data))


def test_repeat_special_cases():
    a = np.array([[1.5, np.nan], [3.0, -0.0]])
    x = lazy(a, 1)
    assert_eq(np.repeat(x, 2, axis=1), np.repeat(a, 2, axis=1))
    y = la.repeat(x, 3, axis=0)
    assert y.chunks[0] == (3, 3)
    assert_eq(la.repeat(x, np.array([2, 0]), axis=0), np.repeat(a, [2, 0], axis=0))
    assert_eq(la.repeat(x, la.asarray([1, 3]), axis=1), np.repeat(a, [1, 3], axis=1))
    assert_eq(la.repeat(x, True), np.repeat(a, True))
    with la.config.set({"array.chunk-size": "1KiB"}):  # 128 int64 elements
        big = la.repeat(lazy(np.arange(400), 200), 10)
    assert max(big.chunks[0]) <= 128
    assert_eq(big, np.repeat(np.arange(400), 10))


@pytest.mark.parametrize(
    ("repeats", "axis"), [([1, 2], 0), (-1, 0), ([[1, 2, 3]], 0), (1, 1), ([1, -1, 1], 0)]
)
def test_repeat_errors(repeats, axis):
    a = np.ones(3)
    assert_same_error(
        lambda: np.repeat(a, repeats, axis=axis), lambda: la.repeat(lazy(a), repeats, axis=axis)
    )


# -- tril / triu ----------------------------------------------------------------------------


@given(data=st.data(), k=st.integers(-6, 6))
@settings(max_examples=25)
def test_tril_triu_match_numpy(data, k):
    x, a = data.draw(lazy_arrays(shape=shapes(1, 3, 5)))
    for fn, lfn in [(np.tril, la.tril), (np.triu, la.triu)]:
        want = fn(a, k)
        y = lfn(x, k=k)
        assert_eq(y, want)
        if a.ndim >= 2:
            assert y.chunks == x.chunks
            check_box(y, [a], want, box_of(a.shape, data))


def test_tri_errors_and_labels():
    s = np.float64(1.0)
    assert_same_error(lambda: np.tril(s), lambda: la.tril(lazy(s)))
    assert_same_error(lambda: np.triu(s), lambda: la.triu(lazy(s)))
    x = lazy(np.ones((3, 3)))
    assert la.tril(x)._expr.op.label() == "tril"
    assert la.triu(x)._expr.op.label() == "triu"


# -- meshgrid -----------------------------------------------------------------------------------


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    xs = [np.arange(3), np.linspace(0, 1, 4, dtype=np.float32), np.array([True, False])]
    for k in range(4):
        got = la.meshgrid(*(lazy(v, 2) for v in xs[:k]), indexing=indexing, sparse=sparse)
        want = np.meshgrid(*xs[:k], indexing=indexing, sparse=sparse)
        assert isinstance(got, list) and len(got) == len(want)  # the Array API's list
        for g, w in zip(got, want, strict=True):
            assert_eq(g, w)
    got = np.meshgrid(lazy(xs[0]), xs[1], indexing=indexing)
    assert_eq(got[1], np.meshgrid(xs[0], xs[1], indexing=indexing)[1])
    assert_same_error(
        lambda: np.meshgrid(xs[0], indexing="zz"), lambda: la.meshgrid(lazy(xs[0]), indexing="zz")
    )


# -- dtypes, empties and plans --------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float32", "complex128"])
def test_every_op_keeps_dtype(dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    x = lazy(a, (1, 2, 3))
    cases = [
        (la.permute_dims(x, (2, 0, 1)), np.permute_dims(a, (2, 0, 1))),
        (x.reshape(4, 6), a.reshape(4, 6)),
        (la.broadcast_to(x, (2, 2, 3, 4)), np.broadcast_to(a, (2, 2, 3, 4))),
        (la.flip(x), np.flip(a)),
        (la.roll(x, 5), np.roll(a, 5)),
        (la.concat([x, x], axis=2), np.concatenate([a, a], axis=2)),
        (la.tile(x, 2), np.tile(a, 2)),
        (la.repeat(x, 2, axis=1), np.repeat(a, 2, axis=1)),
        (la.tril(x), np.tril(a)),
        (la.triu(x, 1), np.triu(a, 1)),
    ]
    for got, want in cases:
        assert_eq(got, want)


def test_empty_arrays():
    a = np.zeros((0, 3), dtype=np.float32)
    x = lazy(a)
    assert_eq(x.reshape(3, 0), a.reshape(3, 0))
    assert_eq(x.T, a.T)
    assert_eq(la.flip(x), np.flip(a))
    assert_eq(la.tile(x, (2, 2)), np.tile(a, (2, 2)))
    assert_eq(la.repeat(x, 2, axis=1), np.repeat(a, 2, axis=1))
    assert_eq(la.concat([x, x]), np.concatenate([a, a]))
    assert_eq(la.broadcast_to(x, (2, 0, 3)), np.broadcast_to(a, (2, 0, 3)))
    assert_eq(la.tile(lazy(np.arange(3)), 0), np.tile(np.arange(3), 0))


def test_ops_survive_json_round_trip():
    x = lazy(np.arange(12.0).reshape(3, 4), 2)
    exprs = [
        la.permute_dims(x, (1, 0)),
        x.reshape(2, 6),
        la.broadcast_to(x, (2, 3, 4)),
        la.flip(x, 1),
        la.roll(x, 1, 0),
        la.concat([x, x]),
        la.tile(x, 2),
        la.repeat(x, [1, 2, 0], axis=0),
        la.repeat(x, 2),
        la.tril(x, 1),
    ]
    table, roots = exprs_to_json([e._expr for e in exprs])
    back = exprs_from_json(table)
    for e, key in zip(exprs, roots, strict=True):
        assert back[key].key == e.key
        assert type(back[key].op) is type(e._expr.op)


def test_building_is_lazy_and_structural():
    x = lazy(np.arange(12).reshape(3, 4), 2)
    with la.config.set(executor="raise"):
        y = la.concat([la.flip(x.T, 0), la.roll(x, 2).T], axis=1)
        z = la.concat([la.flip(x.T, 0), la.roll(x, 2).T], axis=1)
    assert y.key == z.key
    assert_eq(
        y,
        np.concatenate(
            [
                np.flip(np.transpose(np.arange(12).reshape(3, 4)), 0),
                np.roll(np.arange(12).reshape(3, 4), 2).T,
            ],
            axis=1,
        ),
    )


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("expand_dims", (1,), {}),
        ("squeeze", (), {}),
        ("flip", (), {"axis": 1}),
        ("flipud", (), {}),
        ("roll", (2,), {"axis": 0}),
        ("broadcast_to", ((2, 1, 3, 4),), {}),
        ("tile", ((2, 1),), {}),
        ("tril", (), {"k": -1}),
        ("triu", (), {}),
        ("swapaxes", (0, 2), {}),
        ("atleast_1d", (), {}),
        ("atleast_3d", (), {}),
        ("transpose", ((1, 2, 0),), {}),
        ("permute_dims", ((1, 2, 0),), {}),
    ],
)
def test_numpy_functions_dispatch_to_lazyarr(name, args, kwargs):
    a = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    got = getattr(np, name)(lazy(a, 2), *args, **kwargs)
    assert isinstance(got, la.LazyArray)
    assert_eq(got, getattr(np, name)(a, *args, **kwargs))


def test_unstack_dispatch():
    a = np.arange(6).reshape(2, 3)
    got = np.unstack(lazy(a), axis=1)
    assert isinstance(got, tuple) and all(isinstance(g, la.LazyArray) for g in got)
    assert_eq(got[2], a[:, 2])


_A34 = np.arange(12, dtype=np.int16).reshape(3, 4)


@pytest.mark.parametrize(
    ("build", "inputs", "want"),
    [
        (lambda x: la.roll(x, (2, 3), axis=(0, 1)), [_A34], np.roll(_A34, (2, 3), axis=(0, 1))),
        (lambda x: la.tile(x, (2, 3)), [_A34], np.tile(_A34, (2, 3))),
        (lambda x: la.repeat(x, [2, 0, 3, 1], axis=1), [_A34], np.repeat(_A34, [2, 0, 3, 1], 1)),
        (lambda x: la.repeat(x, 2, axis=0), [_A34], np.repeat(_A34, 2, axis=0)),
        (lambda x: la.flip(x), [_A34], np.flip(_A34)),
        (lambda x: x.T, [_A34], _A34.T),
        (
            lambda x: la.broadcast_to(x[:, :1], (2, 3, 4)),
            None,
            np.broadcast_to(_A34[:, :1], (2, 3, 4)),
        ),
        (lambda x: la.tril(x, 1), [_A34], np.tril(_A34, 1)),
        (lambda x: la.concat([x, x[:1], x], axis=0), None, np.concatenate([_A34, _A34[:1], _A34])),
    ],
)
def test_every_box(build, inputs, want):
    # every non-empty box of the output: regions stay in bounds and kernels handle wrap-arounds
    y = build(lazy(_A34, 2))
    if inputs is None:  # the op reads intermediate arrays: compute them
        inputs = [wrap(e).compute() for e in y._expr.inputs]
    ranges = [[slice(i, j) for i in range(n) for j in range(i + 1, n + 1)] for n in want.shape]
    for box in itertools.product(*ranges):
        check_box(y, inputs, want, box)

"""map_overlap against whole-array scipy.ndimage references, every boundary mode, uneven chunks.

dask's boundary modes are scipy.ndimage's: ``reflect`` mirrors with the edge
repeated (scipy ``reflect``, NumPy ``symmetric``), ``periodic`` wraps (scipy
``grid-wrap``), ``nearest`` repeats the edge, a number is a constant. With
``"none"`` a block at the array's edge has no halo there, so a function that
handles its own edges like scipy's ``nearest`` gives scipy's ``nearest``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.ndimage as ndi
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import api, config
from lazyarr.optimize.blockreads import StageReads
from lazyarr.testing import assert_eq

SCIPY_MODE = {"reflect": "reflect", "periodic": "grid-wrap", "nearest": "nearest"}
MODES = ["reflect", "periodic", "nearest", "none", 0.5]


def scipy_mode(boundary):
    if boundary == "none":
        return "nearest"
    if isinstance(boundary, str):
        return SCIPY_MODE[boundary]
    return "constant"


def mean_filter(depths, inner_modes):
    """A (2d+1)-point mean per axis; ``inner_modes``: how the function itself treats edges."""

    def fn(block):
        return ndi.uniform_filter(block, [2 * d + 1 for d in depths], mode=inner_modes)

    return fn


def reference(x, depths, modes):
    cval = next((m for m in modes if not isinstance(m, str)), 0.0)
    return ndi.uniform_filter(
        x, [2 * d + 1 for d in depths], mode=[scipy_mode(m) for m in modes], cval=cval
    )


def inner(modes):
    return ["nearest" if m == "none" else "constant" for m in modes]


def partition(n, cuts):
    edges = sorted({0, n, *(c for c in cuts if 0 < c < n)})
    return tuple(b - a for a, b in itertools.pairwise(edges)) or (n,)


@pytest.mark.parametrize("boundary", MODES)
def test_1d_uneven_chunks_every_mode(boundary):
    x = np.random.default_rng(0).random(13)
    a = la.asarray(x, chunks=((3, 1, 5, 4),))
    got = la.map_overlap(mean_filter([1], inner([boundary])), a, depth=1, boundary=boundary)
    assert got.chunks == a.chunks
    assert_eq(got, reference(x, [1], [boundary]))


@pytest.mark.parametrize("boundary", MODES)
def test_2d_uneven_chunks_every_mode(boundary):
    x = np.random.default_rng(1).random((9, 11))
    a = la.asarray(x, chunks=((4, 2, 3), (3, 5, 3)))
    got = a.map_overlap(mean_filter([2, 1], inner([boundary] * 2)), depth=(2, 1), boundary=boundary)
    assert_eq(got, reference(x, [2, 1], [boundary] * 2))


def test_per_axis_dicts_mix_modes():
    x = np.random.default_rng(2).random((8, 7))
    a = la.asarray(x, chunks=(3, 4))
    modes = {0: "periodic", 1: "reflect"}
    got = la.map_overlap(
        mean_filter([1, 2], inner(["periodic", "reflect"])), a, depth={0: 1, 1: 2}, boundary=modes
    )
    assert_eq(got, reference(x, [1, 2], ["periodic", "reflect"]))
    nearest_none = la.map_overlap(
        mean_filter([2, 1], inner(["nearest", "none"])),
        a,
        depth={0: 2, 1: 1},
        boundary={0: "nearest"},  # unnamed axes: "none"
    )
    assert_eq(nearest_none, reference(x, [2, 1], ["nearest", "none"]))


def test_depth_larger_than_chunks_reads_further_neighbours():
    x = np.random.default_rng(3).random(12)
    a = la.asarray(x, chunks=((1, 2, 1, 3, 5),))
    for mode in ("periodic", "reflect", "none"):
        got = la.map_overlap(mean_filter([3], inner([mode])), a, depth=3, boundary=mode)
        assert_eq(got, reference(x, [3], [mode]))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool"])
def test_integer_and_bool_dtypes(dtype):
    rng = np.random.default_rng(4)
    x = (rng.integers(0, 3, (7, 6)) > 0) if dtype == "bool" else rng.integers(0, 9, (7, 6))
    x = x.astype(dtype)
    a = la.asarray(x, chunks=((2, 5), (4, 2)))
    w = np.ones((3, 3), dtype=x.dtype)
    for mode in ("reflect", "periodic", "nearest", 1):
        got = la.map_overlap(
            lambda b: ndi.correlate(b, w, mode="constant"), a, depth=1, boundary=mode
        )
        want = ndi.correlate(x, w, mode=scipy_mode(mode), cval=mode if mode == 1 else 0)
        assert_eq(got, want)


def test_size_one_dims_and_one_block():
    x = np.random.default_rng(5).random((1, 6))
    a = la.asarray(x, chunks=(1, 2))
    got = la.map_overlap(
        mean_filter([0, 1], inner(["none", "reflect"])), a, depth=(0, 1), boundary="reflect"
    )
    assert_eq(got, reference(x, [0, 1], ["none", "reflect"]))
    whole = la.asarray(x[0], chunks=6)
    got = la.map_overlap(mean_filter([2], inner(["periodic"])), whole, depth=2, boundary="periodic")
    assert_eq(got, reference(x[0], [2], ["periodic"]))


def test_trim_false_leaves_trimming_to_the_function():
    x = np.random.default_rng(9).random(10)
    a = la.asarray(x, chunks=((3, 3, 4),))

    def mean3(b):  # trims its own halo
        return (b[:-2] + b[1:-1] + b[2:]) / 3

    for mode in ("reflect", "periodic", "nearest", 0.5):
        got = la.map_overlap(mean3, a, depth=1, boundary=mode, trim=False)
        assert got.chunks == a.chunks
        assert_eq(got, reference(x, [1], [mode]))


def test_trim_false_with_chunks_returns_the_overlapped_blocks():
    x = np.arange(10.0)
    a = la.asarray(x, chunks=((3, 3, 4),))
    for mode, pad in (("reflect", "symmetric"), ("periodic", "wrap"), ("nearest", "edge")):
        got = la.map_overlap(
            lambda b: b, a, depth=1, boundary=mode, trim=False, chunks=((5, 5, 6),)
        )
        p = np.pad(x, 1, mode=pad)
        assert_eq(got, np.concatenate([p[0:5], p[3:8], p[6:12]]))
    none = la.map_overlap(lambda b: b, a, depth=1, trim=False, chunks=((4, 5, 5),))
    assert_eq(none, np.concatenate([x[0:4], x[2:7], x[5:10]]))
    with pytest.raises(ValueError, match="returned a block of shape"):
        la.map_overlap(lambda b: b, a, depth=1, trim=False).compute(executor="numpy")


def test_several_arrays_each_with_its_own_halo():
    rng = np.random.default_rng(10)
    x, y = rng.random((6, 8)), rng.random(8)
    a = la.asarray(x, chunks=(3, 4))
    b = la.asarray(y, chunks=2)  # other chunks: aligned to a's

    def combine(p, q):
        return ndi.uniform_filter(p, 3, mode="constant") + ndi.uniform_filter(q, 3, mode="constant")

    got = la.map_overlap(combine, a, b, depth=[1, {0: 1}], boundary=["reflect", "periodic"])
    want = ndi.uniform_filter(x, 3, mode="reflect") + ndi.uniform_filter(y, 3, mode="grid-wrap")
    assert got.chunks == ((3, 3), (2, 2, 2, 2))  # the common refinement, as dask unifies
    assert_eq(got, want)
    with pytest.raises(ValueError, match="2 arrays, 1 depths"):
        la.map_overlap(combine, a, b, depth=[1], boundary="reflect")


def test_depth_zero_is_map_blocks_and_kwargs_reach_the_function():
    x = np.random.default_rng(6).random(7)
    a = la.asarray(x, chunks=3)
    assert_eq(la.map_overlap(lambda b, k: b * k, a, depth=0, k=2.0), x * 2.0)
    got = la.map_overlap(lambda b, k: b * k, a, depth=1, boundary="nearest", k=3.0)
    assert_eq(got, x * 3.0)


def test_halo_is_a_block_rule_not_a_copy():
    x = np.random.default_rng(7).random(12)
    a = la.asarray(x, chunks=3)
    y = la.map_overlap(mean_filter([1], inner(["periodic"])), a, depth=1, boundary="periodic")
    plan = api.make_plan([y._expr], "numpy", api.passes_for(True, None))
    kinds = sorted(s.expr.op.name for s in plan.stages.values())
    assert kinds == ["array", "map_overlap"]
    (stage,) = [s for s in plan.stages.values() if s.expr.op.name == "map_overlap"]
    reads = StageReads(stage)
    _, middle = reads.block((1,))
    assert sorted({b for _, b in middle}) == [(0,), (1,), (2,)]
    _, first = reads.block((0,))
    assert sorted({b for _, b in first}) == [(0,), (1,), (3,)]  # the wrapped piece: the last block


def test_errors_are_raised_when_written():
    a = la.asarray(np.arange(6.0), chunks=2)
    with config.set(executor="raise"):
        with pytest.raises(ValueError, match="larger than your array"):
            la.map_overlap(lambda b: b, a, depth=7, boundary="reflect")
        with pytest.raises(ValueError, match="smallest chunksize"):
            la.map_overlap(lambda b: b, a, depth=3, boundary="reflect", allow_rechunk=False)
        with pytest.raises(NotImplementedError, match="Asymmetric"):
            la.map_overlap(lambda b: b, a, depth={0: (1, 2)}, boundary="reflect")
        with pytest.raises(ValueError, match="unknown boundary"):
            la.map_overlap(lambda b: b, a, depth=1, boundary="mirror")
        with pytest.raises(TypeError, match="callable"):
            la.map_overlap(a, lambda b: b, depth=1)
        with pytest.raises(TypeError, match="must be arrays"):
            la.map_overlap(lambda b: b, np.arange(3), depth=1)
        asym = la.map_overlap(lambda b: b, a, depth={0: (1, 2)}, boundary="none")
    assert_eq(asym, np.arange(6.0))


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(ndim))
    chunks = tuple(
        partition(n, draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=3))) for n in shape
    )
    depths = [draw(st.integers(0, min(n, 3))) for n in shape]
    modes = [draw(st.sampled_from(MODES)) for _ in shape]
    # one constant for every axis (scipy takes one cval)
    if any(not isinstance(m, str) for m in modes):
        modes = [0.5 if not isinstance(m, str) else m for m in modes]
    return shape, chunks, depths, modes


@given(cases())
def test_matches_scipy_for_any_chunks_depths_modes(case):
    shape, chunks, depths, modes = case
    x = np.random.default_rng(8).random(shape)
    a = la.asarray(x, chunks=chunks)
    got = la.map_overlap(
        mean_filter(depths, inner(modes)),
        a,
        depth=tuple(depths),
        boundary={ax: m for ax, m in enumerate(modes)},
    )
    assert_eq(got, reference(x, depths, modes))


@pytest.mark.parametrize("boundary", MODES)
def test_empty_arrays(boundary):
    x = np.zeros((0, 5))
    a = la.asarray(x, chunks=(1, 2))
    assert_eq(la.map_overlap(lambda b: b + 1, a, depth={1: 1}, boundary=boundary), x + 1)


def _cumsum_rows(b):
    return np.cumsum(b, axis=0)


def test_a_trimmed_block_holds_only_its_own_bytes_and_its_task_counts_the_padded_result():
    """The function returns the padded block; the stored block is a copy of its cut (a view
    would keep the padded result alive as long as the block is stored), and the memory
    model counts that padded result in the task's working set."""
    from lazyarr.kernels.reference.registry import kernel_for
    from lazyarr.optimize.memory import block_peak_bytes

    x = la.asarray(np.arange(60.0).reshape(20, 3), chunks=(5, 3))
    y = la.map_overlap(_cumsum_rows, x, depth={0: 2}, boundary="none")
    plan = api.make_plan([y._expr], "numpy", ())
    (stage,) = [s for s in plan.stages.values() if s.expr.op.name == "map_overlap"]
    padded = np.arange(60.0).reshape(20, 3)[3:12]  # block 1, rows 5-10, with 2 rows each side
    op = stage.expr.op
    block = kernel_for(op)(op, stage.expr, (slice(5, 10), slice(0, 3)), padded)
    np.testing.assert_array_equal(block, np.cumsum(padded, axis=0)[2:7])
    assert block.base is None or block.base.nbytes == block.nbytes
    # the first block of the largest size (rows 0-5: 7 rows read, "none" at the edge); its
    # padded result counted at most (9 rows); the block itself
    assert block_peak_bytes(stage) == 7 * 3 * 8 + 9 * 3 * 8 + 5 * 3 * 8
    a = np.arange(60.0).reshape(20, 3)
    want = [np.cumsum(a[max(0, i - 2) : i + 7], axis=0)[min(i, 2) :][:5] for i in range(0, 20, 5)]
    assert_eq(y, np.concatenate(want))

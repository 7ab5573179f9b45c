"""``la.cumreduction`` (dask's scan with the user's functions) against NumPy's own scans (and,
on the dask executor, the other new op kinds of dask's API: ``reshape_blockwise``, ``blocks``)."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr.graph import build
from lazyarr.testing import assert_eq, assert_same_error


def ffill(block: np.ndarray, axis: int, dtype=None) -> np.ndarray:
    """NaNs replaced by the last value before them along ``axis`` (NumPy only)."""
    b = np.moveaxis(np.array(block, dtype=dtype, copy=True), axis, -1)
    for i in range(1, b.shape[-1]):
        gap = np.isnan(b[..., i])
        b[..., i][gap] = b[..., i - 1][gap]
    return np.moveaxis(b, -1, axis)


def keep_last(carry: np.ndarray, block: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(block), carry, block)


def gappy(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape)
    x[x > 0.2] = np.nan
    return x


def op_names(arr: la.LazyArray) -> list[str]:
    return sorted(d["expr"].op.name for _, d in build([arr._expr]).nodes(data=True))


@pytest.mark.parametrize(
    ("chunks", "axis"),
    [((3, (2, 3, 0, 5)), 1), ((3, 4), 0), ((7, 10), 1), ((1, 1), -2), (((1, 6), 4), 0)],
)
def test_forward_fill_matches_numpy(chunks, axis):
    x = gappy((7, 10))
    a = la.from_array(x, chunks=chunks)
    got = la.cumreduction(ffill, keep_last, np.nan, a, axis=axis, dtype=a.dtype)
    assert_eq(got, ffill(x, axis))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "bool"])
def test_cumsum_by_parts_matches_numpy(dtype):
    x = (np.arange(1, 25).reshape(4, 6) % 5).astype(dtype)
    a = la.from_array(x, chunks=(3, (1, 0, 2, 3)))
    assert_eq(la.cumreduction(np.cumsum, np.add, 0, a, axis=1), np.cumsum(x, axis=1))
    assert_eq(la.cumreduction(np.cumsum, np.add, 0, a), np.cumsum(x))
    # ufunc accumulate takes dtype= (dask's special case), the carry keeps it
    got = la.cumreduction(np.multiply.accumulate, np.multiply, 1, a, axis=0, dtype="int64")
    assert_eq(got, np.multiply.accumulate(x, axis=0, dtype="int64"))


def test_an_identity_the_dtype_cannot_hold_widens_only_the_carries():
    x = np.arange(10, dtype=np.int32) * 3
    a = la.from_array(x, chunks=4)
    got = la.cumreduction(ffill, keep_last, np.nan, a, axis=0, dtype=a.dtype)
    assert got.dtype == np.int32
    assert_eq(got, x)
    with pytest.raises(TypeError, match="number"):
        la.cumreduction(ffill, keep_last, "nan", a, axis=0, dtype=a.dtype)


def test_carry_order_is_carry_then_block():
    # a non-commutative binop: dask calls binop(carry, block)
    x = np.arange(6.0)
    a = la.from_array(x, chunks=2)
    got = la.cumreduction(lambda b, axis: b, lambda c, b: b - c, 0.0, a, axis=0, dtype=float)
    # block 0 as is; carry1 = last0 - 0 = 1; block1 - 1; carry2 = last1 - carry1 = 2
    assert_eq(got, np.array([0.0, 1.0, 1.0, 2.0, 2.0, 3.0]))


def test_is_lazy_and_a_plain_scan_with_one_block():
    a = la.from_array(np.arange(8.0), chunks=8)
    one = la.cumreduction(np.cumsum, np.add, 0, a)
    assert op_names(one) == ["array", "map_blocks"]
    many = la.cumreduction(np.cumsum, np.add, 0, a.rechunk(3), method="blelloch", preop=np.sum)
    assert {"user_scan_carry", "user_scan_combine", "user_scan_totals"} <= set(op_names(many))
    with la.config.set(executor="raise"):
        la.cumreduction(ffill, keep_last, np.nan, a.rechunk(3), axis=0, dtype=float)


def test_bad_arguments_raise_when_written():
    a = la.from_array(np.arange(6.0), chunks=2)
    assert_same_error(
        lambda: np.cumsum(np.arange(6.0), axis=1),
        lambda: la.cumreduction(np.cumsum, np.add, 0, a, axis=1),
    )
    with pytest.raises(TypeError, match="preop"):
        la.cumreduction(np.cumsum, np.add, 0, a, method="blelloch")
    with pytest.raises(ValueError, match="Invalid method"):
        la.cumreduction(np.cumsum, np.add, 0, a, method="tree")
    with pytest.raises(TypeError, match="not callable"):
        la.cumreduction(np.cumsum, 3, 0, a)
    with pytest.raises(TypeError, match="out="):
        la.cumreduction(np.cumsum, np.add, 0, a, out=a)


def test_array_cumsum_takes_dasks_keywords():
    x = np.arange(10) % 3
    a = la.from_array(x, chunks=4)
    assert_eq(a.cumsum(axis=0, method="blelloch"), np.cumsum(x))
    assert_eq(a.cumprod(axis=0, method="sequential"), np.cumprod(x))
    with pytest.raises(ValueError, match="Invalid method"):
        a.cumsum(axis=0, method="tree")
    assert_eq(la.cumsum(a, method="blelloch"), np.cumsum(x), executors=["numpy"])
    assert_eq(la.cumprod(a, 0, None, None, method="sequential"), np.cumprod(x), executors=["numpy"])
    with pytest.raises(TypeError, match="out="):
        la.cumsum(a, out=a)


def test_on_the_dask_executor(dask_ex):
    x = gappy((6, 9), seed=4)
    a = la.from_array(x, chunks=(4, (2, 4, 3)))
    got = la.cumreduction(ffill, keep_last, np.nan, a, axis=1, dtype=a.dtype)
    assert_eq(got, ffill(x, 1), executors=["dask"], passes=(True,))
    # the other new op kinds of this change, on one cluster: blockwise reshape, block picks
    flat = la.reshape_blockwise(a, (54,))
    back = la.reshape_blockwise(flat, x.shape, chunks=a.chunks)
    assert_eq(
        back.blocks[1, ::-1],
        np.concatenate([x[4:, 6:], x[4:, 2:6], x[4:, :2]], axis=1),
        executors=["dask"],
        passes=(True,),
    )


def test_empty_blocks_first_and_empty_arrays():
    x = np.arange(14.0).reshape(2, 7)
    a = la.from_array(x, chunks=(1, (0, 3, 0, 4, 0)))
    assert_eq(la.cumreduction(np.cumsum, np.add, 0, a, axis=1), np.cumsum(x, 1))
    empty = la.from_array(np.zeros((3, 0)), chunks=(2, 1))
    assert_eq(la.cumreduction(np.cumsum, np.add, 0, empty, axis=0), np.zeros((3, 0)))

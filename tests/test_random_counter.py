"""Random arrays drawn by position: values are functions of (seed, flat index) only.

Each distribution's values are checked against its formula applied to the
Philox words of each element (``kernels/reference/distributions.py``), across
chunkings of 1, 7, 100 and the whole array on every local executor, for 0-d,
empty, 1-d, 2-d and 3-d shapes; then their statistics, and the words a block
draws.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazyarr as la
from lazyarr.kernels.reference import creation, philox
from lazyarr.testing import assert_same_error, executors_under_test

SHAPES = [(), (0,), (3, 0), (301,), (23, 17), (5, 6, 7)]

MAKERS = {
    "random": lambda shape, **kw: la.random.random(shape, **kw),
    "random32": lambda shape, **kw: la.random.random(shape, dtype=np.float32, **kw),
    "uniform": lambda shape, **kw: la.random.uniform(-3.0, 5.0, shape, **kw),
    "standard_normal": lambda shape, **kw: la.random.standard_normal(shape, **kw),
    "normal32": lambda shape, **kw: la.random.normal(1.0, 2.0, shape, dtype=np.float32, **kw),
    "integers": lambda shape, **kw: la.random.integers(-7, 10**15, shape, **kw),
    "int8": lambda shape, **kw: la.random.integers(-3, 4, shape, dtype=np.int8, **kw),
    "uint64": lambda shape, **kw: la.random.integers(
        0, 2**64 - 1, shape, dtype=np.uint64, endpoint=True, **kw
    ),
}


def words(seed: int, n: int, per: int = 1) -> np.ndarray:
    """The words of elements ``[0, n)``, drawn straight from NumPy's Philox."""
    k = np.random.SeedSequence(seed).generate_state(2, np.uint64)
    return np.random.Philox(key=k).random_raw(n * per).reshape(n, per)


def unit(w: np.ndarray) -> np.ndarray:
    return (w >> np.uint64(11)).astype(np.float64) * 2.0**-53


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_values_do_not_depend_on_chunks_or_executor(name, shape):
    assert_chunk_independent(MAKERS[name], shape, (1, 7, 100))


def assert_chunk_independent(make, shape, chunkings) -> None:
    """``make(shape, chunks=..., seed=...)`` gives the one-block values, bit for bit and in
    the same dtype, for each of ``chunkings`` on every executor under test."""
    ref = make(shape, chunks=shape or (), seed=41).compute(executor="numpy")
    assert ref.shape == shape
    for chunks in chunkings:
        for executor in executors_under_test():
            got = make(shape, chunks=chunks, seed=41).compute(executor=executor)
            assert got.dtype == ref.dtype
            np.testing.assert_array_equal(got, ref, err_msg=f"{chunks=} {executor=}")


def test_values_are_the_formulas_of_each_elements_words():
    shape = (40, 25)
    n = math.prod(shape)
    w1, w2 = words(3, n)[:, 0], words(3, n, 2)
    got = la.random.random(shape, chunks=(7, 6), seed=3).compute()
    np.testing.assert_array_equal(got.ravel(), (w1 >> np.uint64(11)) * 2.0**-53)
    got = la.random.random(shape, chunks=(7, 6), seed=3, dtype=np.float32).compute()
    want = (w1 >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
    np.testing.assert_array_equal(got.ravel(), want)
    got = la.random.uniform(2.0, 3.5, shape, chunks=9, seed=3).compute()
    np.testing.assert_array_equal(got.ravel(), 2.0 + 1.5 * unit(w1))
    got = la.random.standard_normal(shape, chunks=(40, 1), seed=3).compute()
    u1 = ((w2[:, 0] >> np.uint64(11)) + np.uint64(1)).astype(np.float64) * 2.0**-53
    want = np.sqrt(-2 * np.log(u1)) * np.sin((unit(w2[:, 1]) - 0.5) * np.pi)
    np.testing.assert_allclose(got.ravel(), want, rtol=1e-14, atol=1e-15)
    got = la.random.integers(-5, 1000, shape, chunks=11, seed=3).compute()
    np.testing.assert_array_equal(got.ravel(), [-5 + (int(u) * 1005 >> 64) for u in w1])


def test_a_region_of_a_large_array_is_the_same_as_from_the_whole():
    # 3 * 10**5 elements: the whole array is drawn in pieces of creation.PIECE_WORDS
    n = 3 * 10**5
    whole = la.random.random(n, chunks=n, seed=8).compute()
    np.testing.assert_array_equal(whole, unit(words(8, n)[:, 0]))
    part = la.random.random(n, chunks=99_999, seed=8).compute()
    np.testing.assert_array_equal(part, whole)
    z = la.random.normal(1.0, 2.0, (600, 500), chunks=(600, 500), seed=8).compute()
    z2 = la.random.normal(1.0, 2.0, (600, 500), chunks=(77, 130), seed=8).compute()
    np.testing.assert_array_equal(z, z2)


def count_words(monkeypatch) -> list[int]:
    drawn: list[int] = []
    draw = philox._draw
    monkeypatch.setattr(philox, "_draw", lambda bg, n: drawn.append(n) or draw(bg, n))
    return drawn


@pytest.mark.parametrize("name, per", [("random", 1), ("standard_normal", 2), ("int8", 1)])
def test_a_100_element_block_of_a_huge_array_draws_about_100_elements(name, per, monkeypatch):
    """The kernel of one block draws that block's words, not a tile around it."""
    x = MAKERS[name]((10**7,), chunks=100, seed=1)._expr
    drawn = count_words(monkeypatch)
    block = creation.random(x.op, x, (slice(4_567_800, 4_567_900),))
    assert block.shape == (100,)
    assert 100 * per <= sum(drawn) <= 100 * per + 3
    drawn.clear()
    y = MAKERS[name]((10**4, 10**3), chunks=100, seed=1)._expr
    block = creation.random(y.op, y, (slice(5000, 5010), slice(300, 310)))
    assert block.shape == (10, 10)
    assert 100 * per <= sum(drawn) <= 10 * (10 * per + 3)  # one jump per row


# -- statistics ---------------------------------------------------------------------------


def test_floats_are_uniform_in_zero_one():
    n = 200_000
    for dtype in (np.float64, np.float32):
        u = la.random.random(n, dtype=dtype, chunks=30_001, seed=11).compute()
        assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
        assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
        counts = np.bincount((u * 10).astype(int), minlength=10)
        assert np.all(np.abs(counts - n / 10) < 5 * (n / 10) ** 0.5)
    v = la.random.uniform(-2.0, 6.0, n, chunks=7777, seed=4).compute()
    assert v.min() >= -2 and v.max() < 6
    assert abs(v.mean() - 2) < 0.04 and abs(v.var() - 64 / 12) < 0.1


@pytest.mark.parametrize("size", [3, 0])
@pytest.mark.parametrize("low, high", [(5.0, 1.0), (-1e308, 1e308), (0.0, np.nan), (0, np.inf)])
def test_uniform_bounds_raise_numpys_errors_when_written(low, high, size):
    rng = np.random.default_rng(0)
    assert_same_error(
        lambda: rng.uniform(low, high, size), lambda: la.random.uniform(low, high, size)
    )
    assert la.random.uniform(2.0, 2.0, 3, seed=1).compute().tolist() == [2.0] * 3


def test_normal_moments_and_tails():
    n = 400_000
    z = la.random.standard_normal(n, chunks=65_537, seed=12).compute()
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs(np.mean(z**3)) < 0.03 and abs(np.mean(z**4) - 3) < 0.06  # skew 0, kurtosis 3
    assert abs(np.mean(np.abs(z) > 2) - 0.0455) < 0.002
    assert abs(np.mean(np.abs(z) > 3) - 0.0027) < 0.0005
    assert abs(np.mean(z > 0) - 0.5) < 0.005
    assert np.abs(z).max() < 8.6  # the 53-bit grid of u1 bounds |z| by sqrt(106 ln 2)
    g = la.random.normal(2.0, 3.0, (400, 500), chunks=(33, 70), seed=3).compute()
    assert abs(g.mean() - 2) < 0.03 and abs(g.std() - 3) < 0.03
    h = la.random.normal(-1.0, 0.5, n, dtype=np.float32, seed=5).compute()
    assert h.dtype == np.float32 and abs(h.mean() + 1) < 0.005 and abs(h.std() - 0.5) < 0.005


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
)
def test_integers_cover_their_range_and_never_leave_it(dtype):
    info = np.iinfo(dtype)
    lo, hi = (-5, 6) if info.min < 0 else (3, 14)
    n = 50_000
    x = la.random.integers(lo, hi, n, dtype=dtype, chunks=999, seed=6).compute()
    assert x.dtype == dtype
    counts = np.bincount((x.astype(np.int64) - lo), minlength=hi - lo)
    assert len(counts) == hi - lo and counts.min() > 0  # covers [lo, hi), never hi
    assert np.all(np.abs(counts - n / (hi - lo)) < 5 * (n / (hi - lo)) ** 0.5)
    y = la.random.integers(lo, hi, n, dtype=dtype, endpoint=True, chunks=999, seed=6).compute()
    assert set(np.unique(y).tolist()) == set(range(lo, hi + 1))
    # the dtype's whole span, both with endpoint and as [min, max + 1)
    for kw in ({"endpoint": True}, {}):
        top = info.max if kw else info.max + 1
        z = la.random.integers(info.min, top, 20_000, dtype=dtype, seed=7, **kw).compute()
        assert z.dtype == dtype
        zf = z.astype(np.float64)
        mid, half = (float(info.min) + float(info.max)) / 2, (float(info.max) - info.min) / 2
        assert abs(zf.mean() - mid) < 0.03 * half  # spread over the whole span
        assert zf.min() < info.min + 0.01 * 2 * half and zf.max() > info.max - 0.01 * 2 * half


def test_integers_with_ranges_beyond_32_bits():
    n = 100_000
    for lo, hi in ((0, 3 * 2**62), (-(2**62), 2**62 + 12345), (10**12, 10**12 + 3 * 2**33)):
        x = la.random.integers(lo, hi, n, dtype=np.uint64 if lo >= 0 else np.int64, seed=9)
        v = x.compute().astype(object)
        assert min(v) >= lo and max(v) < hi
        width = hi - lo
        assert abs(float(sum(v) / n - lo) / width - 0.5) < 0.01
    b = la.random.integers(0, 2, 1000, dtype=bool, seed=3).compute()
    assert b.dtype == bool and 400 < b.sum() < 600
    c = la.random.integers(7, 7, 50, endpoint=True, seed=3).compute()
    assert c.tolist() == [7] * 50


def test_seeds_give_unrelated_streams():
    a = la.random.random(1000, seed=1).compute()
    b = la.random.random(1000, seed=2).compute()
    assert not np.any(a == b) and abs(np.corrcoef(a, b)[0, 1]) < 0.1
    c, d = la.random.random(1000).compute(), la.random.random(1000).compute()
    assert not np.any(c == d)  # seed=None: a fresh seed each time
    # the same seed in another shape: the same values at the same flat index
    e = la.random.random((25, 40), seed=1, chunks=(3, 7)).compute()
    np.testing.assert_array_equal(e.ravel(), a)

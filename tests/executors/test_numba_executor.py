"""The numba executor: NumPy semantics of compiled kernels, fallback, scheduling, cancellation.

The conformance suite and the whole differential suite also run on it;
these tests cover what they do not: dtype corner cases of generated code,
the fallback warning, bounded memory, Ctrl-C and the run statistics.
"""

from __future__ import annotations

import math
import threading
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api
from lazyarr.executors import numba as nx
from lazyarr.executors import registry
from lazyarr.kernels import numba_set
from lazyarr.kernels.compile import CompileError
from lazyarr.testing import assert_eq

EX = ["numba"]


def check(lazy, want, **kw):
    """``lazy`` equals NumPy's ``want`` on the numba executor (fused plan only: fewer compiles)."""
    assert_eq(lazy, want, executors=EX, passes=(True,), **kw)


def numba_run(*arrays, passes=None):
    ex = registry.get("numba")
    plan = api.make_plan([a._expr for a in arrays], "numba", api.passes_for(None, passes))
    return ex.execute(plan, plan.outputs), plan, ex


def no_pool_threads() -> bool:
    return not [t for t in threading.enumerate() if t.name.startswith("lazyarr-numba")]


# -- NumPy semantics of generated code -------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "float64"])
def test_floor_division_and_remainder_signs_and_zero(dtype):
    if dtype == "uint8":
        a = np.array([7, 250, 7, 9, 0, 5, 255], dtype=dtype)
        b = np.array([2, 3, 1, 2, 3, 0, 5], dtype=dtype)
    else:
        a = np.array([7, -7, 7, -7, 0, 5, -128 if dtype == "int8" else -9, 7.5], dtype=dtype)
        b = np.array([2, 2, -2, -2, 3, 0, -1, -0.0 if dtype == "float64" else 0], dtype=dtype)
    x, y = la.asarray(a, chunks=3), la.asarray(b, chunks=3)
    with np.errstate(all="ignore"):
        check(x // y, a // b)
        check(x % y, a % b)
        check(la.fmod(x, y), np.fmod(a, b))
        check(x // 2 + x % 3, a // 2 + a % 3)


def test_integer_division_by_zero_follows_errstate():
    x = la.asarray(np.array([1, 2, 3]), chunks=2)
    y = la.asarray(np.array([1, 0, 1]), chunks=2)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError, match="floor_divide"):
        (x // y).compute(executor="numba")
    with np.errstate(divide="warn"), pytest.warns(RuntimeWarning, match="remainder"):
        (x % y).compute(executor="numba")
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal((x // y).compute(executor="numba"), [1, 0, 3])


def test_integer_overflow_wraps_in_the_loop_dtype():
    i8 = np.array([100, -100, 127, -128], dtype=np.int8)
    u8 = np.array([3, 0, 255, 1], dtype=np.uint8)
    i64 = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min], dtype=np.int64)
    x, u, w = la.asarray(i8, chunks=3), la.asarray(u8, chunks=3), la.asarray(i64)
    check(x + x, i8 + i8)
    check(x * 3, i8 * 3)
    check(-x, -i8)
    check(la.abs(x), np.abs(i8))
    check(u - 5, u8 - 5)
    check(w + 1, i64 + 1)
    check(x**3, i8**3)
    with np.errstate(over="ignore"):  # NumPy warns for -128 // -1 (compiled code does not)
        check((x // -1), i8 // -1)


def test_float32_stays_float32_bit_for_bit():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1000).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    x, y = la.asarray(a, chunks=300), la.asarray(b, chunks=300)
    (got,), _, _ = numba_run((x * 0.1 + y) / (y - 3.5) * 2)
    want = (a * 0.1 + b) / (b - 3.5) * 2
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_nan_propagation():
    a = np.array([1.0, np.nan, 3.0, np.nan, -0.0, 2.0])
    b = np.array([np.nan, 2.0, 1.0, np.nan, 0.0, 5.0])
    x, y = la.asarray(a, chunks=4), la.asarray(b, chunks=4)
    for f in ("maximum", "minimum", "fmax", "fmin"):
        check(getattr(la, f)(x, y), getattr(np, f)(a, b))
    check(la.clip(x, 0.5, y), np.clip(a, 0.5, b))
    check(la.where(x > y, x, 2), np.where(a > b, a, 2))
    for f in ("min", "max", "argmin", "argmax", "nanmin", "nanmax", "sum", "nansum"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # All-NaN slice
            check(getattr(la, f)(x), getattr(np, f)(a))


def test_power_shifts_and_casts():
    a = np.array([-3, -1, 0, 2, 5], dtype=np.int32)
    x = la.asarray(a, chunks=2)
    with pytest.raises(ValueError, match="negative integer powers"):
        (x ** la.asarray(np.array([1, 1, 1, -1, 1], np.int32))).compute(executor="numba")
    s = np.array([0, 1, 31, 32, 40], dtype=np.int32)
    z = la.asarray(s, chunks=2)
    check(x << z, a << s)
    check(x >> z, a >> s)
    check((x * 0.5).astype(np.int16), (a * 0.5).astype(np.int16))
    check((x > 0).astype(np.float32) + x, (a > 0).astype(np.float32) + a)
    check(la.round(x * 1.2345, 2), np.round(a * 1.2345, 2))


def test_broadcast_strided_reversed_and_byteswapped_inputs():
    a = np.arange(60.0).reshape(6, 10)
    b = np.arange(6.0)
    c = np.arange(10.0).astype(">f8")  # big-endian
    x, y, z = la.asarray(a, chunks=(4, 3)), la.asarray(b, chunks=4), la.asarray(c, chunks=3)
    check(x[::-1, 1::3] * y[:, None], a[::-1, 1::3] * b[:, None])
    check(x.T - y + 1, a.T - b + 1)
    check(x * z, a * c)
    check(la.sum(x[:, ::-2] * 2, axis=0), np.sum(a[:, ::-2] * 2, axis=0))
    check(la.asarray(np.float64(2.0)) * 3, np.float64(6.0))


def _fsum_var(values: np.ndarray) -> float:
    mean = math.fsum(values.ravel()) / values.size
    return math.fsum((values.ravel() - mean) ** 2) / values.size


@pytest.mark.parametrize("chunks", [(7, 9), (120, 63), (1, 63)])
def test_variance_in_one_pass_is_accurate_with_a_large_mean(chunks):
    rng = np.random.default_rng(7)
    a = 1e6 + rng.random((120, 63))
    x = la.asarray(a, chunks=chunks)
    (v, s, v0), _, _ = numba_run(la.var(x * 1), la.std(x), la.var(x, axis=0))
    want = _fsum_var(a)
    assert abs(float(v) - want) <= 1e-12 * want
    assert abs(float(s) - math.sqrt(want)) <= 1e-12 * math.sqrt(want)
    want0 = np.array([_fsum_var(a[:, j]) for j in range(a.shape[1])])
    np.testing.assert_allclose(v0, want0, rtol=1e-12, atol=0)


def test_reductions_match_numpy_on_uneven_chunks():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 7, 4))
    x = la.asarray(a, chunks=(2, 3, 3))
    # lone reductions (their kernels are shared with the rest of the suite), every layout:
    # inner axis reduced (registers), kept (state arrays), strided, all axes
    for axis in (None, 0, (0, 2), 1):
        for keep in (False, True):
            for f in ("sum", "mean", "std", "max", "any", "count_nonzero"):
                kw = {} if f == "count_nonzero" else {"keepdims": keep}
                check(getattr(la, f)(x, axis=axis, **kw), getattr(np, f)(a, axis=axis, **kw))
        if axis is None or isinstance(axis, int):
            check(la.argmin(x, axis=axis), np.argmin(a, axis=axis))
    # a fused body over transposed (strided) blocks
    check(la.std(x.T * 2 + 1, axis=1), np.std(a.T * 2 + 1, axis=1))
    i8 = (a * 50).astype(np.int8)
    check(la.sum(la.asarray(i8, chunks=2), axis=1), np.sum(i8, axis=1))
    c = a[..., 0] + 1j * a[..., 1]
    z = la.asarray(c, chunks=(2, 3))
    for f in ("min", "max", "argmin", "argmax", "var", "sum", "prod"):
        check(getattr(la, f)(z, axis=0), getattr(np, f)(c, axis=0))


# -- fallback --------------------------------------------------------------------------


def test_stages_without_an_emitter_fall_back_with_one_warning():
    numba_set._WARNED.clear()
    a = np.linspace(-2, 2, 9)
    x = la.asarray(a, chunks=4)
    with pytest.warns(nx.FallbackWarning, match="sinc") as record:
        got = (la.sinc(x) * 2).compute(executor="numba")
    np.testing.assert_allclose(got, np.sinc(a) * 2)
    assert len([w for w in record if issubclass(w.category, nx.FallbackWarning)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(la.sinc(x + 1).compute(executor="numba"), np.sinc(a + 1))
    kernels = registry.get("numba").last_kernels
    assert kernels.fallbacks and "sinc" in next(iter(kernels.fallbacks.values()))


def test_numpy_only_ops_run_with_numpy_without_a_warning():
    """``raise_where`` (a check lazyarr runs with NumPy by design) has no emitter: its stage
    runs NumPy's kernel, recorded but not warned about; its error still comes."""
    from lazyarr.namespace.composing import raise_where

    a = np.arange(10.0)
    x = la.asarray(a, chunks=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = raise_where(x * 2, x > 100, ValueError, "too big").compute(executor="numba")
        np.testing.assert_array_equal(got, a * 2)
        with pytest.raises(ValueError, match="too big"):
            raise_where(x, x > 5, ValueError, "too big").compute(executor="numba")
    kernels = registry.get("numba").last_kernels
    assert any("raise_where" in why for why in kernels.fallbacks.values())


def test_an_emitter_bug_is_not_a_fallback(monkeypatch):
    """An error that is not Numba's refusal propagates instead of running NumPy kernels."""

    def broken(*args, **kwargs):
        raise KeyError("an emitter bug")

    monkeypatch.setattr(numba_set, "map_function", broken)
    with pytest.raises(KeyError, match="an emitter bug"):
        (la.asarray(np.arange(10.0), chunks=3) * 3 + 1).compute(executor="numba")


def test_a_numba_error_falls_back_to_numpy(monkeypatch):
    numba_set._WARNED.clear()

    def broken(*args, **kwargs):
        raise CompileError("LoweringError: simulated")

    monkeypatch.setattr(numba_set, "map_function", broken)
    a = np.arange(10.0)
    with pytest.warns(nx.FallbackWarning, match="simulated"):
        got = (la.asarray(a, chunks=3) * 3 + 1).compute(executor="numba")
    np.testing.assert_array_equal(got, a * 3 + 1)


# -- scheduling, memory, statistics ----------------------------------------------------


def long_chain(n_blocks: int, block: int, depth: int) -> tuple[la.LazyArray, np.ndarray]:
    x = la.ones(n_blocks * block, chunks=block)
    y, want = x, np.ones(n_blocks * block)
    for _ in range(depth):  # the same two kernels at every step
        y, want = y * 1.5 - 1.0, want * 1.5 - 1.0
    return y, want


@pytest.mark.parametrize("passes", [(), None])
def test_a_long_chain_streams_block_by_block(passes):
    block, n_blocks = 1000, 64
    y, want = long_chain(n_blocks, block, 12)
    (got,), plan, ex = numba_run(y.sum(), passes=passes)
    np.testing.assert_allclose(got, want.sum())
    stats = ex.last_stats
    # every block but the source's: ``ones`` is made inside the tasks that read it
    assert stats.blocks == sum(s.nblocks for s in plan.stages.values() if s.kind != "source")
    # stage by stage would hold a whole array (64 blocks); streaming holds a few blocks
    assert 0 < stats.peak_bytes <= 12 * block * 8, stats.peak_bytes
    assert set(stats.stage_seconds) <= set(plan.stages)
    assert stats.seconds > 0 and stats.extra["threads"] >= 1


def test_streaming_on_two_threads_holds_a_few_blocks(two_threads):
    # 1.6 MB per stage: the thread pool runs it, with tasks queued ahead per thread
    block, n_blocks = 5000, 40
    y, want = long_chain(n_blocks, block, 12)
    (got,), _, ex = numba_run(y.sum(), passes=())
    np.testing.assert_allclose(got, want.sum())
    assert ex.last_stats.extra["threads"] == 2
    # stage by stage would hold a whole stage (40 blocks); streaming holds a few
    assert 0 < ex.last_stats.peak_bytes <= 12 * block * 8, ex.last_stats.peak_bytes


def test_threads_setting_and_persist():
    a = np.arange(40.0).reshape(8, 5)
    x = la.asarray(a, chunks=(3, 5))
    with la.config.set({"numba.threads": 1}):
        (got,), _, ex = numba_run(x * 2)
        assert ex.last_stats.extra["threads"] == 1
    np.testing.assert_array_equal(got, a * 2)
    p = (x * 2).persist(executor="numba")
    np.testing.assert_array_equal(p.compute(executor="numba"), a * 2)


class InterruptingProgress:
    def __init__(self, after: int) -> None:
        self.after = after
        self.done = 0
        self.finished = False

    def start(self, total_blocks):
        pass

    def advance(self, blocks=1):
        self.done += blocks
        if self.done >= self.after:
            raise KeyboardInterrupt

    def finish(self):
        self.finished = True


@pytest.fixture
def two_threads():
    with la.config.set({"numba.threads": 2}):
        yield


def test_ctrl_c_from_progress_cancels_cleanly(two_threads):
    y, want = long_chain(40, 5000, 3)  # 1.6 MB per stage: runs on the thread pool
    plan = api.make_plan([y._expr], "numba", ())
    ex = registry.get("numba")
    progress = InterruptingProgress(after=5)
    with pytest.raises(KeyboardInterrupt):
        ex.execute(plan, plan.outputs, progress)
    assert progress.finished and no_pool_threads()
    # the executor stays usable
    np.testing.assert_allclose(ex.execute(plan, plan.outputs)[0], want)
    assert ex.last_stats.extra["threads"] == 2


def test_ctrl_c_inside_a_kernel_drops_pending_blocks(monkeypatch, two_threads):
    real = numba_set.map_function
    calls = []
    lock = threading.Lock()

    def hooked(members, inputs, options):
        fn = real(members, inputs, options)

        def run(out, get):
            with lock:
                calls.append(out)
                if len(calls) == 3:
                    raise KeyboardInterrupt
            return fn(out, get)

        return run

    monkeypatch.setattr(numba_set, "map_function", hooked)
    a = np.arange(400_000.0)
    x = la.asarray(a, chunks=10_000)
    with pytest.raises(KeyboardInterrupt):
        (x * 2 + 1).compute(executor="numba")
    assert len(calls) < 10 and no_pool_threads()
    monkeypatch.setattr(numba_set, "map_function", real)
    np.testing.assert_array_equal((x * 2 + 1).compute(executor="numba"), a * 2 + 1)


def test_errors_keep_their_type_and_the_executor_stays_usable(two_threads):
    n = 200_000
    x = la.asarray(np.full(n, 2), chunks=n // 8)
    e = la.asarray(np.where(np.arange(n) == n - 5, -1, 1), chunks=n // 8)
    with pytest.raises(ValueError, match="negative integer powers"):
        (x**e).compute(executor="numba")
    assert no_pool_threads()
    np.testing.assert_array_equal((x + 1).compute(executor="numba"), np.full(n, 3))


@pytest.mark.parametrize("layout", ["c", "transposed", "float32"])
def test_kernels_address_user_arrays_in_place_with_numpys_values(layout):
    """Regions of a C-contiguous user array are read inside it (no view per block); other
    layouts and dtypes go through views; either way the values are NumPy's."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((9, 7)).T if layout == "transposed" else rng.standard_normal((7, 9))
    a = a.astype(np.float32) if layout == "float32" else a
    row = rng.standard_normal((1, 9))
    col = rng.standard_normal((7, 1))
    x = la.asarray(a, chunks=(3, 4))
    y, z = la.asarray(row, chunks=(1, 5)), la.asarray(col, chunks=(2, 1))
    with la.config.set({"numba.compile-threshold": 0}):
        got = la.compute(x * y + z, (la.sin(x) * y).sum(axis=0), (x - z).max(axis=1))
        assert not la.last_run().stats.extra["fallback_stages"]
    want = [a * row + col, (np.sin(a) * row).sum(axis=0), (a - col).max(axis=1)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6 if layout == "float32" else 1e-12)

"""datetime64 and timedelta64 lazy arrays against NumPy: arithmetic, comparison, reductions,
casts and NaT, on every executor; their stages run NumPy's kernels by declaration."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.kernels.numba_set import FallbackWarning
from lazyarr.testing import assert_eq, assert_same_error

UNITS = ["s", "ms", "us", "ns", "D"]


def stamps(unit: str, n: int = 11, seed: int = 0, nat: tuple[int, ...] = (3, 9)) -> np.ndarray:
    """``n`` datetimes around 2020 in ``unit``, NaT at ``nat``."""
    days = np.random.default_rng(seed).integers(18000, 19000, n)
    out = (days.astype("M8[D]") + np.arange(n).astype("m8[h]")).astype(f"M8[{unit}]")
    out[list(nat)] = np.datetime64("NaT")
    return out


def spans(unit: str, n: int = 11, seed: int = 1, nat: tuple[int, ...] = (6,)) -> np.ndarray:
    """``n`` timedeltas (some negative) in ``unit``, NaT at ``nat``."""
    out = np.random.default_rng(seed).integers(-500, 500, n).astype(f"m8[{unit}]")
    out[list(nat)] = np.timedelta64("NaT")
    return out


@pytest.mark.parametrize("unit", UNITS)
def test_arithmetic_follows_numpy(unit):
    t, d = stamps(unit), spans(unit)
    lt, ld = la.from_array(t, chunks=4), la.from_array(d, chunks=((5, 6),))
    assert_eq(lt - lt[::-1], t - t[::-1])  # datetime - datetime -> timedelta
    assert_eq(lt + ld, t + d)
    assert_eq(lt - ld, t - d)
    assert_eq(ld * 3, d * 3)
    assert_eq(2 * ld, 2 * d)
    assert_eq(ld // 4, d // 4)
    one = np.timedelta64(1, unit)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert_eq(ld / (abs(ld[::-1]) + one), d / (abs(d[::-1]) + one))
    assert_eq(-ld, -d)
    assert_eq(abs(ld), abs(d))
    assert_eq(lt + np.timedelta64(90, "m"), t + np.timedelta64(90, "m"))  # units promote
    assert_eq(lt - np.datetime64("2020-01-01"), t - np.datetime64("2020-01-01"))


@pytest.mark.parametrize("unit", ["s", "ns", "D"])
def test_comparison_and_nat(unit):
    t = stamps(unit)
    lt = la.from_array(t, chunks=3)
    ref = t[0]
    for got, want in [
        (lt < ref, t < ref),
        (lt >= lt[::-1], t >= t[::-1]),
        (lt == lt, t == t),  # NaT != NaT
        (lt != lt, t != t),
        (la.isnat(lt), np.isnat(t)),
        (la.isnan(lt), np.isnan(t)),
        (la.where(la.isnat(lt), ref, lt), np.where(np.isnat(t), ref, t)),
        (la.maximum(lt, lt[::-1]), np.maximum(t, t[::-1])),  # NaT propagates
        (la.fmax(lt, lt[::-1]), np.fmax(t, t[::-1])),  # NaT ignored
    ]:
        assert_eq(got, want)


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("nat", [(), (3, 9), (0,), (10,)])
def test_reductions_match_numpy_with_and_without_nat(unit, nat):
    t, d = stamps(unit, nat=nat), spans(unit, nat=nat)
    lt, ld = la.from_array(t, chunks=4), la.from_array(d, chunks=((2, 5, 4),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "All-NaN" on NaT lines
        for f in ["min", "max", "argmin", "argmax", "nanmin", "nanmax", "nanargmin"]:
            if f.startswith("nanarg") and nat:
                continue  # NumPy's nanargmin of NaT: compared below without NaT
            assert_eq(getattr(la, f)(lt), getattr(np, f)(t))
            assert_eq(getattr(la, f)(ld), getattr(np, f)(d))
    for f in ["sum", "mean", "nansum", "nanmean", "median", "cumsum", "ptp"]:
        assert_eq(getattr(la, f)(ld), getattr(np, f)(d))
    assert_eq(la.ptp(lt), np.ptp(t))
    assert_eq(la.diff(lt), np.diff(t))
    assert_eq(la.sort(lt), np.sort(t))  # NaT sorts last


def test_reductions_along_an_axis_of_a_2d_array():
    t = stamps("s", n=24, nat=(1, 5, 17)).reshape(4, 6)
    lt = la.from_array(t, chunks=(3, 4))
    for axis in (0, 1):
        assert_eq(la.min(lt, axis=axis), np.min(t, axis=axis))
        assert_eq(la.argmax(lt, axis=axis), np.argmax(t, axis=axis))
        assert_eq(la.max(lt, axis=axis, keepdims=True), np.max(t, axis=axis, keepdims=True))
    clean = stamps("ms", n=24, nat=()).reshape(4, 6)
    lc = la.from_array(clean, chunks=(1, 5))
    assert_eq(la.argmin(lc, axis=1), np.argmin(clean, axis=1))
    assert_eq(la.nanargmax(lc, axis=0), np.nanargmax(clean, axis=0))


@pytest.mark.parametrize(("src", "dst"), [("s", "ms"), ("ns", "s"), ("D", "us"), ("ms", "D")])
def test_astype_between_units_and_int64(src, dst):
    t, d = stamps(src), spans(src)
    lt, ld = la.from_array(t, chunks=5), la.from_array(d, chunks=5)
    assert_eq(lt.astype(f"M8[{dst}]"), t.astype(f"M8[{dst}]"))
    assert_eq(ld.astype(f"m8[{dst}]"), d.astype(f"m8[{dst}]"))
    assert_eq(lt.astype(np.int64), t.astype(np.int64))  # NaT is int64's minimum
    i = t.astype(np.int64)
    assert_eq(la.from_array(i, chunks=4).astype(f"M8[{src}]"), i.astype(f"M8[{src}]"))
    assert_eq(ld.astype(np.float64), d.astype(np.float64))


def test_creation_holds_datetimes():
    t = stamps("us")
    assert_eq(la.asarray(t, chunks=4), t)
    day = np.datetime64("2021-03-04")
    assert_eq(la.full((5,), day), np.full((5,), day))
    assert_eq(la.zeros(4, dtype="m8[s]"), np.zeros(4, dtype="m8[s]"))
    assert_eq(la.full((3,), np.timedelta64("NaT", "s")), np.full((3,), np.timedelta64("NaT", "s")))


def test_bad_datetime_expressions_raise_numpys_error_when_written():
    t, d = stamps("s"), spans("s")
    lt, ld = la.from_array(t, chunks=4), la.from_array(d, chunks=4)
    assert_same_error(lambda: t + t, lambda: lt + lt)
    assert_same_error(lambda: t * 2, lambda: lt * 2)
    assert_same_error(lambda: d * d, lambda: ld * ld)
    assert_same_error(lambda: np.sum(t), lambda: la.sum(lt))
    assert_same_error(lambda: np.mean(t), lambda: la.mean(lt))
    assert_same_error(lambda: np.var(d), lambda: la.var(ld))
    assert_same_error(lambda: np.prod(d), lambda: la.prod(ld))
    assert_same_error(lambda: t < d, lambda: lt < ld)


def test_numba_runs_datetime_stages_with_numpy_kernels_without_a_warning():
    """Datetime stages are NumPy's by declaration: no FallbackWarning, nothing fused with them."""
    t, d = stamps("ns", n=40), spans("ns", n=40)
    lt, ld = la.from_array(t, chunks=16), la.from_array(d, chunks=16)
    expr = la.max((lt + ld) - np.datetime64("2020-01-01", "ns"))
    f = la.from_array(np.arange(40.0), chunks=16)
    mixed = (f * 2 + 1).sum() + (lt - lt).astype(np.int64).sum()
    with config.set({"numba.compile-threshold": 0}), warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        got = expr.compute(executor="numba")
        got_mixed = mixed.compute(executor="numba")
    want = np.max((t + d) - np.datetime64("2020-01-01", "ns"))
    assert got == want or (np.isnat(got) and np.isnat(want))
    assert got_mixed == (np.arange(40.0) * 2 + 1).sum()


def test_on_the_dask_executor(dask_ex):
    t, d = stamps("ms", n=30, nat=(4, 20)), spans("ms", n=30)
    lt, ld = la.from_array(t, chunks=7), la.from_array(d, chunks=7)
    for got, want in [
        (lt + ld, t + d),
        (la.argmin(lt), np.argmin(t)),
        (la.nanmax(lt), np.nanmax(t)),
        (la.sum(ld), np.sum(d)),
        (lt.astype("M8[s]"), t.astype("M8[s]")),
    ]:
        assert_eq(got, want, executors=["dask"], passes=(True, False))


def test_sibling_datetime_outputs_on_numba_land_in_their_arrays():
    """Two outputs over one grid are siblings; run with NumPy's kernels, each block still lands
    in its output array (the joint task's siblings one by one)."""
    t, d = stamps("us", n=30), spans("us", n=30)
    lt, ld = la.from_array(t, chunks=8), la.from_array(d, chunks=8)
    span = lt - lt[0]
    days, later = span / np.timedelta64(1, "D"), lt + ld * 2
    with config.set({"numba.compile-threshold": 0}):
        got_days, got_later = la.compute(days, later, executor="numba")
    want = t - t[0]
    np.testing.assert_array_equal(got_days, want / np.timedelta64(1, "D"))
    np.testing.assert_array_equal(got_later, t + d * 2)

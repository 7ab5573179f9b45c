"""Where lazyarr answers as NumPy does rather than as the Array API's text says
(docs/standard.md): each case pinned to NumPy's exact value, on every executor."""

from __future__ import annotations

import array_api_strict as xp
import numpy as np
import pytest

import lazyarr as la
from lazyarr.testing import executors_under_test

INF, NAN = np.inf, np.nan


def _computed(x: la.LazyArray) -> dict[str, np.ndarray]:
    with np.errstate(all="ignore"):  # inf - inf, as NumPy's own call
        return {name: x.compute(executor=name) for name in executors_under_test()}


def _same_bits(got: np.ndarray, want: np.ndarray, where: str) -> None:
    """Equal values, NaN where NumPy has NaN, and the signs of infinities and zeros."""
    for part in ("real", "imag") if want.dtype.kind == "c" else ("real",):
        g, w = getattr(got, part), getattr(want, part)
        np.testing.assert_array_equal(g, w, err_msg=f"{where} ({part})")
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=f"{where} signs")


def test_can_cast_across_kinds_is_false_as_in_numpy():
    """complex -> real loses the imaginary part: NumPy says False, and so does the
    standard's reference (array-api-tests' test_can_cast expects False across kinds)."""
    for src, dst in [("complex64", "float64"), ("complex128", "float32"), ("float64", "int64")]:
        assert la.can_cast(getattr(la, src), getattr(la, dst)) is False
        assert np.can_cast(np.dtype(src), np.dtype(dst)) is False
        assert xp.can_cast(getattr(xp, src), getattr(xp, dst)) is False
    assert la.can_cast(la.float32, la.complex64) is True  # within the float kinds: safe
    assert la.can_cast(la.complex64, la.float64, casting="unsafe") is True


def test_floor_divide_with_infinities_follows_numpy():
    """The standard: +inf // 2 is +inf and 1 // -inf is -0; NumPy (and lazyarr): NaN and -1."""
    a = np.array([INF, -INF, 1.0, -1.0, 1.0, -1.0, INF, 0.0, -0.0])
    b = np.array([2.0, 2.0, INF, INF, -INF, -INF, INF, INF, INF])
    with np.errstate(all="ignore"):
        want = np.floor_divide(a, b)
    assert np.isnan(want[0]) and want[4] == -1.0  # the cases where the standard differs
    x = la.asarray(a, chunks=4) // la.asarray(b, chunks=4)
    for name, got in _computed(x).items():
        _same_bits(got, want, f"floor_divide on {name}")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_expm1_edge_values_follow_numpy(dtype):
    """The standard: expm1(+inf+0j) is +inf+0j; NumPy (and lazyarr): +inf+nanj."""
    z = np.array(
        [
            complex(INF, 0),
            complex(-INF, 0),
            complex(INF, INF),
            complex(-INF, INF),
            complex(INF, NAN),
            complex(0, INF),
            complex(NAN, 0),
            complex(0, 0),
            complex(-0.0, 1),
        ],
        dtype=dtype,
    )
    with np.errstate(all="ignore"):
        want = np.expm1(z)
    assert np.isnan(want[0].imag)  # where the standard says +0
    for name, got in _computed(la.expm1(la.asarray(z, chunks=4))).items():
        _same_bits(got, want, f"expm1 on {name}")

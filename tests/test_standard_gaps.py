"""Where lazyarr answers as NumPy does rather than as the Array API's text says
(docs/standard.md): each case pinned to NumPy's exact value, on every executor."""

from __future__ import annotations

import array_api_strict as xp
import numpy as np
import pytest
from fallbacks import numpy_kernels

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


@numpy_kernels("no Numba emitter for expm1 on complex", "complex expm1 has no emitter")
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


# ---------------------------------------------------------- issue 24: Array API suite gaps


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("lazy_tol", [False, True])
def test_matrix_rank_takes_a_tolerance_per_matrix(hermitian: bool, lazy_tol: bool) -> None:
    rng = np.random.default_rng(3)
    a = rng.random((4, 5, 5))
    a[1, :, 4] = a[1, :, 3]  # rank 4
    a[2] = 0
    if hermitian:
        a = a @ a.transpose(0, 2, 1)
    rtol = np.array([1e-12, 0.3, 0.5, 0.9])
    tol = np.array([1e-6, 1.0, 0.1, 2.0])
    x = la.asarray(a, chunks=(2, 5, 5))
    for kw in ({"rtol": rtol}, {"tol": tol}, {"rtol": np.float64(0.2)}):
        if lazy_tol:
            kw = {k: la.asarray(v) for k, v in kw.items()}
        want = np.linalg.matrix_rank(
            a, hermitian=hermitian, **{k: np.asarray(v) for k, v in kw.items()}
        )
        got = la.linalg.matrix_rank(x, hermitian=hermitian, **kw)
        for name, value in _computed(got).items():
            np.testing.assert_array_equal(value, want, err_msg=f"{name} {kw}")
            assert value.dtype == want.dtype


@pytest.mark.parametrize(
    ("shape", "mask_shape"), [((1,), (0,)), ((3,), (0,)), ((2, 3), (2, 0)), ((1, 3), (0, 3))]
)
def test_an_empty_mask_selects_nothing_whatever_the_axis_length(shape, mask_shape) -> None:
    a = np.arange(np.prod(shape), dtype=float).reshape(shape)
    m = np.zeros(mask_shape, bool)
    want = a[m]
    for mask in (m, la.asarray(m)):
        got = la.asarray(a)[mask]
        assert got.shape == want.shape
        for name, value in _computed(got).items():
            np.testing.assert_array_equal(value, want, err_msg=name)
    with pytest.raises(IndexError, match="boolean index did not match"):
        la.asarray(a)[np.zeros((5,), bool)]


@pytest.mark.parametrize("chunk", [1, 2, 5])
@pytest.mark.parametrize("which", [0, 3, 4])
def test_solve_of_a_batch_with_a_singular_matrix_always_raises(chunk: int, which: int) -> None:
    rng = np.random.default_rng(which)
    a = rng.random((5, 3, 3))
    a[which, 1] = 0  # a zero row: LU meets an exactly zero pivot
    b = rng.random((5, 3, 2))
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.solve(a, b)
    x = la.linalg.solve(la.asarray(a, chunks=(chunk, 3, 3)), la.asarray(b, chunks=(chunk, 3, 2)))
    for name in executors_under_test():
        for part in (x, x[0], x[which], x[-1, :, 1]):
            with pytest.raises(np.linalg.LinAlgError):
                part.compute(executor=name)

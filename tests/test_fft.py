"""``la.fft`` against ``numpy.fft``: every transform, ``n``/``s``/``axes``/``norm``, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import config
from lazyarr.executors.testing import ComputeRefused
from lazyarr.testing import assert_eq, assert_same_error

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]
REAL_INPUT = {"rfft", "ihfft", "rfftn", "rfft2"}


def signal(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind in "iub":
        x = rng.integers(0, 5, shape)
    return x.astype(dtype)


def dtypes_for(name: str) -> list[str]:
    real = ["float64", "float32", "int16", "bool"]
    return real if name in REAL_INPUT else [*real, "complex128", "complex64"]


CASES_1D = [
    ((8,), {}),
    ((5,), {"n": 8}),
    ((9,), {"n": 4}),
    ((4, 7), {"axis": 0}),
    ((4, 7), {"axis": -1, "norm": "ortho"}),
    ((3, 4, 6), {"axis": 1, "norm": "forward", "n": 5}),
    ((3, 4, 6), {"axis": 2, "norm": "backward"}),
    ((0, 6), {"axis": 1}),
]


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize(("shape", "kwargs"), CASES_1D)
def test_one_dimensional_transforms(name, shape, kwargs):
    for dtype in dtypes_for(name):
        a = signal(shape, dtype)
        x = la.asarray(a, chunks=(2,) * len(shape))
        want = getattr(np.fft, name)(a, **kwargs)
        assert_eq(getattr(la.fft, name)(x, **kwargs), want)


CASES_ND = [
    ((4, 6), {}),
    ((3, 4, 6), {"axes": (0, 2)}),
    ((3, 4, 6), {"axes": (2, 0), "s": (5, 4)}),
    ((3, 4, 6), {"axes": (-1, 1), "norm": "ortho"}),
    ((3, 4, 6), {"axes": (1,), "s": (7,), "norm": "forward"}),
    ((5, 6), {"axes": (0, 1), "s": (-1, 4)}),
    ((3, 4, 6), {"axes": (1, 1)}),  # a repeated axis transforms twice, as NumPy
    ((3, 4), {"axes": ()}),
    ((), {}),
]


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize(("shape", "kwargs"), CASES_ND)
def test_n_dimensional_transforms(name, shape, kwargs):
    f, g = getattr(np.fft, name), getattr(la.fft, name)
    for dtype in dtypes_for(name)[::2]:
        a = signal(shape, dtype)
        x = la.asarray(a, chunks=(2,) * len(shape))
        try:
            want = f(a, **kwargs)
        except IndexError:  # real transforms need a last axis: same error, raised early
            assert_same_error(lambda a=a: f(a, **kwargs), lambda x=x: g(x, **kwargs))
            assert name in ("rfftn", "irfftn") and not kwargs.get("axes", shape)
            continue
        assert_eq(g(x, **kwargs), want)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
def test_two_dimensional_transforms(name):
    a = signal((3, 4, 6), "float64")
    x = la.asarray(a, chunks=(1, 3, 4))
    assert_eq(getattr(la.fft, name)(x), getattr(np.fft, name)(a))
    kwargs = {"s": (5, 4), "axes": (0, 1), "norm": "ortho"}
    assert_eq(getattr(la.fft, name)(x, **kwargs), getattr(np.fft, name)(a, **kwargs))


def test_axes_none_with_s_warns_like_numpy():
    a = signal((3, 4), "float64")
    with pytest.warns(DeprecationWarning):
        want = np.fft.fftn(a, s=(4,))
    with pytest.warns(DeprecationWarning):
        got = la.fft.fftn(la.asarray(a, chunks=2), s=(4,))
    assert_eq(got, want)


@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=3).flatmap(
        lambda shape: st.tuples(
            st.just(tuple(shape)),
            st.tuples(*(st.integers(1, n) for n in shape)),
            st.integers(0, len(shape) - 1),
        )
    )
)
def test_fft_uneven_chunks(case):
    shape, chunks, axis = case
    a = signal(shape, "complex128")
    x = la.asarray(a, chunks=chunks)
    got = la.fft.fft(x, axis=axis)
    assert got.chunks[axis] == (shape[axis],)  # the transformed axis is one block
    assert all(got.chunks[i] == x.chunks[i] for i in range(len(shape)) if i != axis)
    assert_eq(got, np.fft.fft(a, axis=axis))
    assert_eq(la.fft.ifft(got, axis=axis), np.fft.ifft(np.fft.fft(a, axis=axis), axis=axis))


def test_round_trips():
    a = signal((4, 6), "float64")
    x = la.asarray(a, chunks=(3, 4))
    assert_eq(la.fft.irfft(la.fft.rfft(x), n=6), a)
    assert_eq(la.fft.irfftn(la.fft.rfftn(x), s=a.shape, axes=(0, 1)), a)
    assert_eq(la.fft.ifftn(la.fft.fftn(x)).real, a)


@pytest.mark.parametrize(
    ("name", "shape", "kwargs"),
    [
        ("fft", (3, 4), {"axis": 2}),
        ("fft", (3, 4), {"axis": -3}),
        ("fft", (), {}),
        ("fft", (3, 4), {"n": 0}),
        ("fft", (3, 4), {"n": 2.5}),
        ("fft", (3, 0), {}),
        ("fft", (3, 4), {"norm": "bogus"}),
        ("irfft", (3, 1), {}),
        ("fftn", (3, 4), {"axes": (2,)}),
        ("fftn", (3, 4), {"axes": (0, 1), "s": (2,)}),
        ("rfft", (3, 4), {"dtype": "complex128"}),
        ("irfftn", (3, 1), {}),
    ],
)
def test_errors_at_expression_time(name, shape, kwargs):
    dtype = kwargs.pop("dtype", "float64")
    a = np.ones(shape, dtype)
    assert_same_error(
        lambda: getattr(np.fft, name)(a, **kwargs),
        lambda: getattr(la.fft, name)(la.asarray(a), **kwargs),
    )


@pytest.mark.parametrize("axes", [None, 0, -1, (0, 1), (1, 0, 1), (2,)])
@pytest.mark.parametrize("func", ["fftshift", "ifftshift"])
def test_shifts(func, axes):
    a = signal((5, 4, 3), "int16")
    x = la.asarray(a, chunks=(2, 3, 2))
    assert_eq(getattr(la.fft, func)(x, axes=axes), getattr(np.fft, func)(a, axes=axes))


def test_shift_errors_and_0d():
    a = np.ones((3, 4))
    assert_same_error(
        lambda: np.fft.fftshift(a, axes=2), lambda: la.fft.fftshift(la.asarray(a), axes=2)
    )
    s = np.array(2.0)
    assert_same_error(lambda: np.fft.fftshift(s), lambda: la.fft.fftshift(la.asarray(s)))
    v = np.arange(5.0)
    assert_eq(la.fft.ifftshift(la.asarray(v, chunks=2), axes=()), np.fft.ifftshift(v, axes=()))


@pytest.mark.parametrize("n", [1, 2, 7, 8])
@pytest.mark.parametrize("d", [1.0, 0.25, 3])
def test_frequencies(n, d):
    assert_eq(la.fft.fftfreq(n, d), np.fft.fftfreq(n, d))
    assert_eq(la.fft.rfftfreq(n, d=d), np.fft.rfftfreq(n, d=d))
    assert_eq(la.fft.fftfreq(n, d, dtype=np.float32), np.fft.fftfreq(n, d).astype(np.float32))


def test_frequency_errors():
    assert_same_error(lambda: np.fft.fftfreq(2.5), lambda: la.fft.fftfreq(2.5))
    assert_same_error(lambda: np.fft.rfftfreq(0), lambda: la.fft.rfftfreq(0))


def test_building_computes_nothing_and_numpy_dispatches():
    a = signal((4, 6), "float64")
    with config.set(executor="raise"):
        x = la.asarray(a, chunks=2)
        exprs = [la.fft.fft(x), la.fft.rfftn(x), la.fft.fftshift(x), la.fft.hfft(x, n=7)]
        with pytest.raises(ComputeRefused):
            exprs[0].compute()
    got = np.fft.fft(x, axis=0)  # __array_function__
    assert isinstance(got, la.LazyArray)
    assert_eq(got, np.fft.fft(a, axis=0))
    assert_eq(np.fft.irfft2(x), np.fft.irfft2(a))
    assert_eq(np.fft.ifftshift(x), np.fft.ifftshift(a))

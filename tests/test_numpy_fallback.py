"""NumPy functions lazyarr does not implement: computed arguments, NumPy's result, one warning.

Each case compares with the same call on NumPy input, on the ``numpy`` and
``numba`` executors (and one cheap case on a thread-based dask cluster).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr._fallback import numpy_fallback

A = np.random.default_rng(0).standard_normal((40, 6)) * np.arange(1, 7) + np.arange(6)
B = np.random.default_rng(1).standard_normal(40)


@pytest.fixture(autouse=True)
def _fresh_warnings():
    """Every test sees each function's first fallback (the warning is once per process)."""
    numpy_fallback.reset()
    yield
    numpy_fallback.reset()


@pytest.fixture(params=["numpy", "numba"])
def executor(request):
    with config.set(executor=request.param):
        yield request.param


def lazy(a: np.ndarray, chunks: int | tuple = 7) -> la.LazyArray:
    return la.asarray(a, chunks=chunks)


def test_save_round_trips_through_np_load(tmp_path, executor):
    x = lazy(A)
    path = tmp_path / "x.npy"
    with pytest.warns(la.NumPyFallbackWarning, match=r"numpy\.save\b.*la\.map_blocks"):
        np.save(path, x * 2 + 1)
    got = np.load(path)
    np.testing.assert_array_equal(got, A * 2 + 1)
    assert got.dtype == A.dtype


def test_may_share_memory_answers_as_numpy_does(executor):
    x, y = lazy(A), lazy(B)
    with pytest.warns(la.NumPyFallbackWarning, match=r"numpy\.may_share_memory"):
        same = np.may_share_memory(x, x)
    assert same is np.may_share_memory(A, A) is True
    assert bool(np.may_share_memory(x, y)) is bool(np.may_share_memory(A, B)) is False


def test_lstsq_computes_and_matches_numpy(executor):
    with pytest.warns(la.NumPyFallbackWarning, match=r"numpy\.linalg\.lstsq"):
        got = np.linalg.lstsq(lazy(A), lazy(B), rcond=None)
    want = np.linalg.lstsq(A, B, rcond=None)
    assert len(got) == len(want) == 4
    for g, w in zip(got, want):
        assert isinstance(g, (np.ndarray, np.integer, int))
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_lazy_arguments_nested_in_lists_and_keywords(tmp_path, executor):
    x, y = lazy(A[:, :2]), lazy(A[:, 2:])
    with pytest.warns(la.NumPyFallbackWarning, match=r"numpy\.block"):
        got = np.block([[x, y], [y[:, :2], x * 0 + 3, y[:, 2:]]])
    want = np.block([[A[:, :2], A[:, 2:]], [A[:, 2:4], A[:, :2] * 0 + 3, A[:, 4:]]])
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, want)

    path = tmp_path / "xy.npz"
    with pytest.warns(la.NumPyFallbackWarning, match=r"numpy\.savez"):
        np.savez(path, first=x, second=y - 1)
    with np.load(path) as stored:
        np.testing.assert_array_equal(stored["first"], A[:, :2])
        np.testing.assert_array_equal(stored["second"], A[:, 2:] - 1)


def test_one_warning_per_function(executor):
    x = lazy(A)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")  # Python's own once-per-place filter must not hide any
        for _ in range(3):
            assert np.may_share_memory(x, x)
        assert not np.shares_memory(x, lazy(B))
        np.may_share_memory(x, lazy(B))
    messages = [str(w.message) for w in record if w.category is la.NumPyFallbackWarning]
    assert len(messages) == 2
    assert "numpy.may_share_memory" in messages[0]
    assert "numpy.shares_memory" in messages[1]
    assert all("la.map_blocks" in m for m in messages)


def test_the_warning_points_at_the_caller(executor):
    with pytest.warns(la.NumPyFallbackWarning) as record:
        np.may_share_memory(lazy(A), lazy(A))
    assert record[0].filename == __file__


def test_implemented_functions_stay_lazy_without_warning(executor):
    x = lazy(A)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = [np.sum(x, axis=0), np.exp(x), np.concatenate([x, x]), np.mean(x), np.dot(x.T, x)]
    assert all(isinstance(r, la.LazyArray) for r in results)
    np.testing.assert_allclose(results[0].compute(), A.sum(axis=0))
    np.testing.assert_allclose(results[4].compute(), A.T @ A)


def test_writing_into_a_lazy_array_is_refused(executor):
    x = lazy(A)
    with pytest.raises(TypeError, match=r"numpy\.copyto writes into a lazy array"):
        np.copyto(x, A)
    with pytest.raises(TypeError, match=r"numpy\.fill_diagonal writes into a lazy array"):
        np.fill_diagonal(a=x, val=0)
    target = np.zeros_like(A)
    with pytest.warns(la.NumPyFallbackWarning, match=r"numpy\.copyto"):
        np.copyto(target, x * 3)  # a NumPy destination is fine
    np.testing.assert_array_equal(target, A * 3)


# -- scikit-learn on lazy input ---------------------------------------------------------------


def test_standard_scaler_matches_numpy_input(executor):
    pytest.importorskip("sklearn")
    from sklearn.preprocessing import StandardScaler

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", la.NumPyFallbackWarning)
        got = StandardScaler().fit_transform(lazy(A))
    want = StandardScaler().fit_transform(A)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_pca_matches_numpy_input(executor):
    pytest.importorskip("sklearn")
    from sklearn.decomposition import PCA

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", la.NumPyFallbackWarning)
        got = PCA(n_components=3, random_state=0).fit_transform(lazy(A))
    want = PCA(n_components=3, random_state=0).fit_transform(A)
    assert got.shape == (40, 3)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


# -- the dask executor: one cheap case on a cluster of threads --------------------------------


def test_save_on_the_dask_executor(tmp_path):
    from lazyarr.executors import registry

    settings = {
        "executor": "dask",
        "dask.processes": False,
        "dask.n-workers": 1,
        "dask.threads-per-worker": 1,
        "dask.address": None,
    }
    ex = registry.get("dask")
    with config.set(settings):
        try:
            path = tmp_path / "x.npy"
            with pytest.warns(la.NumPyFallbackWarning, match=r"numpy\.save\b"):
                np.save(path, lazy(A) - 1)
            np.testing.assert_array_equal(np.load(path), A - 1)
        finally:
            ex.close()


# -- facts of shape and dtype need no values ----------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int8])
def test_shape_and_dtype_questions_are_answered_without_computing(dtype):
    a = np.ones((5, 3), dtype=dtype)
    x = la.asarray(a, chunks=2)
    with config.set(executor="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [
            np.shape(x),
            np.ndim(x),
            np.size(x),
            np.size(x, 1),
            np.iscomplexobj(x),
            np.isrealobj(x),
            np.result_type(x, 1.0),
            np.result_type(x, np.float64, 3),
            np.can_cast(x, np.float64),
            np.can_cast(x, np.int8, casting="unsafe"),
        ]
    want = [
        np.shape(a),
        np.ndim(a),
        np.size(a),
        np.size(a, 1),
        np.iscomplexobj(a),
        np.isrealobj(a),
        np.result_type(a, 1.0),
        np.result_type(a, np.float64, 3),
        np.can_cast(a, np.float64),
        np.can_cast(a, np.int8, casting="unsafe"),
    ]
    assert got == want

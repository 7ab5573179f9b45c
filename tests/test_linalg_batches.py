"""Batches of matrices where one call of NumPy decides for all of them (issue 14):
``pinv`` with one cutoff per matrix."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr.testing import assert_eq, assert_same_error


def _matrices(shape: tuple[int, ...], seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# -- pinv(x, rtol=array) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "chunks", "rtol"),
    [
        ((6, 4, 3), (4, 2, 2), [0.05, 0.3, 0.6, 0.9, 0.2, 0.99]),  # one cutoff per matrix
        ((6, 4, 3), (1, 4, 3), [0.5]),  # broadcast from length 1
        ((2, 3, 3, 5), (1, 2, 3, 2), [[0.1], [0.7]]),  # per row of a 2-d batch
        ((2, 3, 3, 5), (2, 1, 3, 5), [0.1, 0.5, 0.95]),  # along the last batch axis
    ],
)
def test_pinv_takes_one_cutoff_per_matrix(shape, chunks, rtol):
    """Before: NotImplementedError. The cutoffs discard different singular values per
    matrix, so a wrong pairing of matrix and cutoff changes the result."""
    g, r = _matrices(shape), np.array(rtol)
    want = np.linalg.pinv(g, rtol=r)
    x = la.asarray(g, chunks=chunks)
    assert_eq(la.linalg.pinv(x, rtol=r), want)
    assert_eq(la.linalg.pinv(x, rtol=la.asarray(r, chunks=1)), want)  # lazy cutoffs
    assert_eq(la.linalg.pinv(x, r), np.linalg.pinv(g, r))  # rcond, NumPy's older name


def test_pinv_cutoffs_change_the_result_per_matrix():
    g = _matrices((3, 4, 3))
    r = np.array([0.0, 0.5, 0.99])
    got = la.linalg.pinv(la.asarray(g, chunks=(2, 4, 3)), rtol=r).compute()
    for i in range(3):
        np.testing.assert_allclose(got[i], np.linalg.pinv(g[i], rtol=r[i]), atol=1e-12)
    assert not np.allclose(got[0], np.linalg.pinv(g[0], rtol=0.99))  # the cutoffs matter


def test_pinv_cutoffs_that_do_not_fit_the_batch_are_refused_like_numpy():
    g = _matrices((3, 4, 4))
    x = la.asarray(g, chunks=2)
    for bad in (np.ones((2, 3)), np.ones(2)):
        with pytest.raises(ValueError):
            np.linalg.pinv(g, rtol=bad)
        with pytest.raises(ValueError, match="does not broadcast"):
            la.linalg.pinv(x, rtol=bad)  # at expression time
    assert_same_error(
        lambda: np.linalg.pinv(g, 0.1, rtol=np.ones(3)),
        lambda: la.linalg.pinv(x, 0.1, rtol=np.ones(3)),
    )

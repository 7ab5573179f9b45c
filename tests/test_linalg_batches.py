"""Batches of matrices where one call of NumPy decides for all of them (issue 14):
``pinv`` with one cutoff per matrix, ``solve`` with a singular matrix in the batch."""

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


# -- solve with a singular matrix in the batch ---------------------------------------------


def _singular_in_batch() -> tuple[np.ndarray, np.ndarray]:
    """Six regular matrices but the fifth (rows 1 and 2 proportional: an exact zero pivot)."""
    a = _matrices((6, 3, 3), seed=1) + 3 * np.eye(3)
    a[4] = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]
    return a, _matrices((6, 3, 2), seed=2)


def _reads(x: la.LazyArray) -> dict[str, la.LazyArray]:
    """The whole result and parts of it that do not contain the singular matrix's solution."""
    return {"all": x, "first": x[0], "last": x[5], "sum": x.sum(), "column": x[:3, 0, 0]}


@pytest.mark.parametrize("chunks", [1, 2, 3, 6, (4, 3, 1)])
@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_solve_raises_for_a_singular_matrix_whatever_is_read(chunks, executor):
    """Before: a part of the result raised or not depending on whether its block shared a
    block with the singular matrix (x[5] raised with chunks 2, not with chunks 1)."""
    a, b = _singular_in_batch()
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.solve(a, b)[5]
    for _ in range(2):  # the same input computed again raises again
        x = la.linalg.solve(la.asarray(a, chunks=chunks), la.asarray(b, chunks=2))
        for name, part in _reads(x).items():
            with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
                part.compute(executor=executor)
                pytest.fail(f"{name} computed")


def test_solve_raises_for_a_singular_matrix_on_the_dask_executor(dask_ex):
    a, b = _singular_in_batch()
    for chunks in (1, 3):
        x = la.linalg.solve(la.asarray(a, chunks=chunks), la.asarray(b, chunks=2))
        for part in (x, x[0], x[5]):
            for _ in range(2):
                with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
                    part.compute(executor="dask")


def test_solve_of_a_regular_batch_and_its_parts_match_numpy():
    a, b = _singular_in_batch()
    a[4] += 5 * np.eye(3)  # regular now
    x = la.linalg.solve(la.asarray(a, chunks=2), la.asarray(b, chunks=(1, 3, 2)))
    want = np.linalg.solve(a, b)
    assert_eq(x, want)
    assert_eq(x[5], want[5])
    assert_eq(la.linalg.solve(la.asarray(a[1], chunks=2), la.asarray(b[1, :, 0])), want[1, :, 0])


@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_solve_with_one_matrix_needs_no_batch_check(executor):
    """One matrix (no batch axes): every block of the result solves with it, so each
    raises alike when it is singular and no check stage is planned (3 tasks fewer on
    each Newton step of the logistic-regression benchmark)."""
    rng = np.random.default_rng(3)
    a = rng.random((4, 4)) + 4 * np.eye(4)
    b = rng.random((6, 4, 2))
    x = la.linalg.solve(la.asarray(a, chunks=2), la.asarray(b, chunks=(2, 4, 2)))
    names = {m.op.name for s in la.plan(x).stages.values() for m in s.members}
    assert "reduce" not in names
    assert_eq(x.compute(executor=executor), np.linalg.solve(a, b))
    singular = la.linalg.solve(la.asarray(np.zeros((4, 4)), chunks=2), la.asarray(b, chunks=2))
    for part in (singular, singular[5], singular[0, :, 1]):
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            part.compute(executor=executor)

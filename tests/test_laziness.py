"""Writing expressions computes nothing; only the materialization points do.

Everything here runs under the ``raise`` executor, which refuses any
compute with :class:`ComputeRefused`. Building elementwise, reduction,
creation and random expressions (and printing them) must succeed; asking
for values (``.compute()``, ``np.asarray``, ``float()``, ``bool()`` ...) must
reach the executor and be refused, which proves those are the only points
where work happens.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from fallbacks import numpy_kernels

import lazyarr as la
from lazyarr.executors.testing import ComputeRefused


@pytest.fixture
def refuse():
    with la.config.set(executor="raise"):
        yield


def build_everything() -> list[la.LazyArray]:
    """One expression of every kind this family offers."""
    a = np.arange(35.0).reshape(5, 7) - 10
    x = la.asarray(a, chunks=(2, 3))
    i = la.asarray(np.arange(12).reshape(3, 4), chunks=2)
    b = x > 0
    out = [
        x + 1,
        1 - x,
        x * x / (x + 0.5),
        x // 3,
        x % 3,
        x**2,
        2**i,
        -x,
        +x,
        abs(x),
        ~b,
        ~i,
        i << 1,
        i >> 1,
        i & 3,
        i | 4,
        i ^ 5,
        x < 1,
        x <= 1,
        x == 1,
        x != 1,
        x >= 1,
        b & (x < 3),
        la.sin(x),
        la.hypot(x, x),
        la.where(b, x, 0),
        la.clip(x, -1, 1),
        la.round(x, 2),
        la.isclose(x, x),
        la.allclose(x, x),
        la.nan_to_num(x),
        la.real(x),
        la.astype(x, la.int8),
        x.astype(np.float32),
        x.conj(),
        np.sin(x),
        np.add(x, a),
        a + x,
        np.add.reduce(x, axis=0),
        x.sum(),
        x.mean(axis=0),
        la.var(x, axis=1, correction=1),
        la.std(x, axis=(0, 1)),
        la.argmin(x),
        la.argmax(x, axis=1, keepdims=True),
        la.min(x, axis=0),
        np.max(x),
        la.any(b),
        la.all(b, axis=1),
        la.count_nonzero(b),
        la.nansum(x),
        la.nanmean(x, axis=0),
        la.nanmax(x),
        la.prod(i, axis=0),
        np.sum(x, axis=1),
        np.mean(x),
        la.zeros((3, 4)),
        la.ones(5, dtype=la.int8),
        la.empty((2, 2)),
        la.full((2, 3), 7),
        la.zeros_like(x),
        la.ones_like(x),
        la.full_like(x, 2.5),
        la.arange(10, chunks=3),
        la.arange(0.5, 3.0, 0.25),
        la.linspace(0, 1, 11),
        la.eye(4, k=1),
        la.identity(3),
        la.random.random((4, 5), seed=1),
        la.random.standard_normal(10),
        la.random.normal(1, 2, 5, seed=2),
        la.random.uniform(0, 1, 5, seed=3),
        la.random.integers(0, 10, 5, seed=4),
        la.random.default_rng(0).random(3),
    ]
    y = la.asarray(a, chunks=(2, 3))
    for op in (operator.iadd, operator.isub, operator.imul, operator.itruediv):
        y = op(y, 2)
    out.append(y)
    j = la.asarray(np.arange(6), chunks=2)
    for op in (operator.ifloordiv, operator.imod, operator.iand, operator.ior, operator.ipow):
        j = op(j, 3)
    out.append(j)
    return out


def test_building_expressions_computes_nothing(refuse):
    exprs = build_everything()
    assert len(exprs) > 70
    for e in exprs:
        assert isinstance(e, la.LazyArray)
        # facts and pictures need no values
        assert isinstance(e.shape, tuple) and isinstance(e.dtype, np.dtype)
        assert e.chunks is not None and e.key
        assert "lazyarr.array" in repr(e)
        assert "<table" in e._repr_html_()


@numpy_kernels("no Numba emitter", "one of every op: several (isclose, nan_to_num...) have none")
def test_the_refusal_is_real():
    # the same build runs without the raise executor and computes fine
    for e in build_everything():
        with np.errstate(all="ignore"):
            assert isinstance(e.compute(), np.ndarray)


@pytest.mark.parametrize(
    "materialize",
    [
        lambda s: s.compute(),
        lambda s: np.asarray(s),
        lambda s: np.array(s),
        float,
        int,
        complex,
        bool,
        lambda s: s.item(),
        lambda s: s.tolist(),
        operator.index,
        lambda s: la.compute(s, s + 1),
        lambda s: s.persist(),
        lambda s: [1, 2, 3, 4][s],
        lambda s: s.__dlpack__(),
        lambda s: la.from_dlpack(s),
    ],
)
def test_materialization_points_reach_the_executor(refuse, materialize):
    s = la.asarray(np.arange(6), chunks=2).sum() % 4  # a 0-d integer expression
    with pytest.raises(ComputeRefused):
        materialize(s)


def test_value_dependent_conversions_refuse_too(refuse):
    x = la.asarray(np.arange(6.0), chunks=4)
    with pytest.raises(ComputeRefused):
        bool(la.allclose(x, x))
    with pytest.raises(ComputeRefused):
        float(la.var(x))
    with pytest.raises(ComputeRefused):
        np.asarray(la.random.random(3, seed=1))
    with pytest.raises(ComputeRefused):
        np.testing.assert_array_equal(x, np.arange(6.0))


def test_shape_errors_need_no_compute(refuse):
    # conversions that fail on the shape alone raise NumPy's error, not ComputeRefused
    x = la.asarray(np.arange(6.0), chunks=4)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)
    with pytest.raises(TypeError):
        float(x)
    with pytest.raises(TypeError):
        operator.index(x)
    assert len(x) == 6
    with pytest.raises(TypeError):
        len(x.sum())

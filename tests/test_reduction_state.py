"""One description of each reduction's state (``graph/ops/reduction_state.py``): the NumPy
partials, the Numba registers and the planners' sizes all follow it, and a new monoid
reduction needs only its entries (here added for the test: ``logaddexp``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr._array import wrap
from lazyarr.graph.ops import reduction as reduction_ops
from lazyarr.graph.ops import reduction_state
from lazyarr.graph.ops.reduction import REDUCTIONS, Reduce, reduce
from lazyarr.graph.ops.reduction_state import MONOIDS, Monoid, layout
from lazyarr.kernels.emit_fold import reduce_spec, update_lines
from lazyarr.kernels.numba_set import FallbackWarning, NumbaKernels
from lazyarr.kernels.reference import kernel_for
from lazyarr.testing import assert_eq

DTYPES = ["float32", "float64", "int8", "int64", "bool", "complex128"]


def _fields_of(state_value, n_fields):
    return state_value if n_fields > 1 else (state_value,)


@pytest.mark.parametrize("func", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_reference_partials_have_the_described_layout(func, dtype):
    x = la.from_array((np.arange(24) % 7).astype(dtype).reshape(4, 6), chunks=(2, 3))
    try:
        expr = getattr(la, func)(x, axis=0)._expr
    except TypeError:
        return  # NumPy refuses this dtype: nothing to describe
    if not isinstance(expr.op, Reduce):
        return
    state = expr.op.state(x.dtype, expr.dtype)
    block = np.asarray(x.compute())[:2, :3]
    part = kernel_for(expr.op).partial(expr.op, expr, block, (slice(0, 2), slice(0, 3)), (4, 6))
    values = _fields_of(part, len(state.fields))
    assert len(values) == len(state.fields)
    for field, value in zip(state.fields, values):
        if field.per_block:
            assert np.ndim(value) == 0
        else:
            assert value.shape == (1, 3) and value.dtype == field.dtype, (field, value.dtype)
    kept = sum(f.dtype.itemsize for f in state.fields if not f.per_block)
    assert expr.op.state_itemsize(expr.inputs[0], expr) == kept


@pytest.mark.parametrize("func", sorted(REDUCTIONS))
def test_numba_registers_are_the_array_fields(func):
    x = la.from_array(np.arange(12.0).reshape(3, 4), chunks=2)
    expr = getattr(la, func)(x, axis=1)._expr
    if not isinstance(expr.op, Reduce):
        return
    spec = reduce_spec(expr, x.dtype)
    state = expr.op.state(x.dtype, expr.dtype)
    arrays = [(f.dtype, f.identity) for f in state.fields if not f.per_block]
    assert [dt for dt, _ in spec.states] == [dt for dt, _ in arrays]
    for (_, got), (_, want) in zip(spec.states, arrays):
        assert got == want or (np.isnan(got) and np.isnan(want))


def test_joins_do_not_depend_on_dtypes():
    for func in REDUCTIONS:
        joins = {
            tuple(f.join for f in reduction_state.reduction_state(func, dt, dt).fields)
            for dt in map(np.dtype, ["f4", "i2", "c16"])
        }
        assert joins == {tuple(f.join for f in layout(func).fields)}


@pytest.fixture
def logaddexp_reduction(monkeypatch):
    """A monoid reduction added the way a new one is: its state entry and its NumPy function."""
    monkeypatch.setitem(MONOIDS, "logaddexp", Monoid("logaddexp", -np.inf, "value"))
    monkeypatch.setitem(REDUCTIONS, "logaddexp", np.logaddexp.reduce)
    monkeypatch.setattr(reduction_ops, "REDUCTIONS", REDUCTIONS)

    def build(x, axis=None):
        return wrap(reduce("logaddexp", x._expr, axis))

    return build


def test_a_new_monoid_reduction_runs_and_compiles_from_its_entries(logaddexp_reduction):
    a = np.random.default_rng(4).standard_normal((9, 14))
    x = la.from_array(a, chunks=(4, 5))
    out = logaddexp_reduction(x * 2 + 1, axis=1)
    root = out._expr
    assert NumbaKernels.supports(root)
    assert any("logaddexp" in line for line in update_lines(reduce_spec(root, a.dtype), "v"))
    with config.set({"numba.compile-threshold": 0}), warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        assert_eq(out, np.logaddexp.reduce(a * 2 + 1, axis=1), rtol=1e-12, atol=1e-12)
        assert_eq(logaddexp_reduction(x), np.logaddexp.reduce(a, axis=None), rtol=1e-12)

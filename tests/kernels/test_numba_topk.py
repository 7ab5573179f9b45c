"""The compiled top-k filter against a stable sort: its buffer refills, ties, NaN, dtypes.

``tests/test_topk.py`` checks topk on every executor with small blocks, whose
lines never fill the filter's buffer; here blocks are long (and the buffer
small), so the quickselect and the threshold run many times per line, on the
inputs that stress them: sorted and reversed lines, all-equal lines, NaNs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.graph.ops.topk import TopK
from lazyarr.kernels import numba_topk
from lazyarr.kernels.compile import Options
from lazyarr.kernels.numba_set import NumbaKernels
from lazyarr.kernels.reference.topk import select


def _ref(x: np.ndarray, k: int, arg: bool) -> np.ndarray:
    """The first |k| of a stable sort in k's direction (NaN beyond every number)."""
    n = x.shape[-1]
    if k < 0:
        order = np.argsort(x, axis=-1, kind="stable")
    else:
        order = n - 1 - np.flip(np.argsort(np.flip(x, -1), axis=-1, kind="stable"), -1)
    order = order[..., : abs(k)]
    return order if arg else np.take_along_axis(x, order, -1)


def _line(kind: str, n: int, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = {
        "random": rng.integers(0, 50, n),
        "ascending": np.arange(n) // 3,
        "descending": (n - np.arange(n)) // 3,
        "equal": np.zeros(n, np.int64),
    }[kind]
    if dtype == "bool":
        return base % 2 == 1
    x = base.astype(dtype)
    if dtype.startswith("float"):
        x[rng.integers(0, n, n // 50)] = np.nan
        x[rng.integers(0, n, n // 50)] = -0.0
    return x


@pytest.fixture
def small_buffer(monkeypatch):
    monkeypatch.setattr(numba_topk, "CAPACITY", 64)


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(["random", "ascending", "descending", "equal"]),
    dtype=st.sampled_from(["float64", "float32", "int64", "uint8", "bool"]),
    k=st.sampled_from([1, 2, 15, -1, -15]),
    n=st.integers(16, 3000),
    chunk=st.integers(16, 3000),
    arg=st.booleans(),
    seed=st.integers(0, 3),
)
def test_long_lines_match_a_stable_sort(kind, dtype, k, n, chunk, arg, seed):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(numba_topk, "CAPACITY", 64)  # buffers refill every ~50 entries
        x = _line(kind, n, dtype, seed)
        f = la.argtopk if arg else la.topk
        got = f(la.asarray(x, chunks=chunk), k).compute(executor="numba")
    want = _ref(x, k, arg)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_the_numba_executor_uses_the_filter_and_keeps_the_reference_state(small_buffer):
    x = _line("random", 5000, "float64", 1).reshape(2, 2500)
    plan = la.plan(la.argtopk(la.asarray(x, chunks=(2, 1000)), -7, axis=1), executor="numba")
    (stage,) = [s for s in plan.stages.values() if isinstance(s.expr.op, TopK)]
    assert numba_topk.supports(stage)
    kernels = NumbaKernels(Options(), min_bytes=0)
    region = (slice(0, 2), slice(1000, 2000))
    got = kernels.partial(stage)(region, lambda i, r: x[r])
    assert kernels.compiled == [stage.name]
    idx = np.broadcast_to(np.arange(1000, 2000), (2, 1000))
    want = select(x[region], idx, -7)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_strided_middle_axis_lines():
    x = _line("random", 3 * 4000 * 2, "int64", 2).reshape(3, 4000, 2)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(numba_topk, "CAPACITY", 64)
        got = la.topk(la.asarray(x, chunks=(2, 1500, 1)), 9, axis=1).compute(executor="numba")
    np.testing.assert_array_equal(got, np.moveaxis(_ref(np.moveaxis(x, 1, -1), 9, False), -1, 1))

"""Elementwise epilogues folded into a contraction's stage: structure, reasons, results.

``sigmoid(X @ w)`` over row blocks of ``X`` is one stage when each block of
the product is one call (its summed axis is not split into blocks): the
block is mapped through the elementwise ops before it is stored. Results
are checked against NumPy on every executor with passes on and off.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuse import expected, plan_of, same, shape_of

import lazyarr as la
from lazyarr.graph.ops import elementwise, from_array, reduce
from lazyarr.graph.ops.linalg import matmul
from lazyarr.optimize.fusion import can_join, is_epilogue_producer
from lazyarr.testing import assert_eq

RNG = np.random.default_rng(11)
X = RNG.standard_normal((13, 4))
W = RNG.standard_normal(4) * 0.5


def labels(plan) -> list[str]:
    return ["+".join(m.op.label() for m in s.members) for s in plan.stages.values()]


def test_sigmoid_of_matvec_is_one_stage():
    #   x     w                  x     w
    #    \   /                    \   /
    #    matmul        ==>   [matmul+negative+exp+add+true_divide]
    #      |
    #   1/(1+exp(-.))
    x = la.asarray(X, chunks=(4, 4), copy=True)
    w = la.asarray(W, copy=True)
    p = 1.0 / (1.0 + la.exp(-(x @ w)))
    plan = plan_of(p)
    want = expected(
        {"x": "array", "w": "array", "p": "matmul+negative+exp+add+true_divide"},
        [("x", "p"), ("w", "p")],
    )
    assert same(plan, want), shape_of(plan).nodes(data=True)
    root = plan.stages[plan.outputs[0]]
    assert root.kind == "map" and root.nblocks == 4
    notes = plan.notes["fuse"]
    assert sum(v == f"fused into {root.name}" for v in notes.values()) == 4
    assert_eq(p, 1.0 / (1.0 + np.exp(-(X @ W))))


def test_logistic_regression_step_stages():
    # p = sigmoid(X @ w) is one stage (8 blocks); the gradient and the Hessian
    # each fold p's cheap tail and their own operands; nothing of X's size is stored
    x = la.asarray(X, chunks=(4, 4), copy=True)
    y = la.asarray((RNG.random(13) < 0.5).astype(np.float64), chunks=4, copy=True)
    w = la.asarray(W, copy=True)
    e = la.exp(-(x @ w))
    p = 1.0 / (1.0 + e)
    g = x.T @ (p - y)
    h = x.T @ (x * (p * (1.0 - p))[:, None])
    step = w - la.linalg.solve(h, g)
    plan = plan_of(step)
    assert "matmul+negative+exp" in labels(plan)
    assert not any(lab == "matmul" for lab in labels(plan))  # no bare X @ w stage
    assert all(s.expr.shape != X.shape for s in plan.stages.values() if s.kind != "source")
    pn = 1.0 / (1.0 + np.exp(-(X @ W)))
    yn = y.compute()
    hn = X.T @ (X * (pn * (1 - pn))[:, None])
    assert_eq(step, W - np.linalg.solve(hn, X.T @ (pn - yn)))


def test_split_contraction_keeps_its_tree():
    # the summed axis has two blocks: each output block is a sum of partial
    # products (a tree), so the epilogue stays a stage of its own
    x = la.asarray(X, chunks=(5, 2), copy=True)
    w = la.asarray(W, chunks=2, copy=True)
    p = la.exp(x @ w)
    plan = plan_of(p)
    assert "matmul" in labels(plan) and "exp" in labels(plan)
    assert any("split axes" in v for v in plan.notes["fuse"].values())
    assert_eq(p, np.exp(X @ W))


def test_contraction_with_folded_operands_keeps_them():
    # x.T is folded into the product (never stored); an epilogue would undo that
    x = la.asarray(X, chunks=(13, 2), copy=True)
    v = la.asarray(RNG.standard_normal(13), copy=True)
    g = la.tanh(x.T @ v)
    plan = plan_of(g)
    assert labels(plan) == ["array", "array", "transpose+matmul", "tanh"]
    assert_eq(g, np.tanh(X.T @ v.compute()))


def test_product_read_twice_or_reduced_is_stored():
    x = la.asarray(X, chunks=(4, 4), copy=True)
    w = la.asarray(W, copy=True)
    z = x @ w
    both = plan_of(la.exp(z) + la.sin(z) * 0, la.cos(z))
    assert "matmul" in labels(both)  # two groups read it: computed once, stored
    total = plan_of(la.exp(z).sum())
    assert "matmul" in labels(total)  # a reduction's body stays elementwise
    assert_eq(la.exp(z).sum(), np.exp(X @ W).sum())


def test_epilogue_rules():
    a = from_array(np.ones((6, 4)), ((3, 3), (4,)))
    v = from_array(np.ones(4), ((4,),))
    m = matmul(a, v)
    e = elementwise("exp", m)
    assert is_epilogue_producer(m)
    assert can_join(m, e) == (True, "")
    ok, why = can_join(m, e, root=reduce("sum", e))
    assert not ok and "not elementwise" in why
    assert not can_join(m, reduce("sum", m))[0]
    split = matmul(from_array(np.ones((6, 4)), ((3, 3), (2, 2))), from_array(np.ones(4), ((2, 2),)))
    assert not is_epilogue_producer(split)
    assert "split" in can_join(split, elementwise("exp", split))[1]
    row = elementwise("add", from_array(np.ones((2, 6)), ((2,), (3, 3))), m)
    assert not can_join(m, row)[0]  # broadcast into a bigger reader


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(0, 9),
    k=st.integers(1, 5),
    cn=st.integers(1, 4),
    dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int32, np.bool_]),
)
def test_epilogues_match_numpy(n, k, cn, dtype):
    a_np = (np.arange(n * k).reshape(n, k) % 5 - 2).astype(dtype)
    b_np = (np.arange(k * 3).reshape(k, 3) % 3 - 1).astype(dtype)
    a = la.asarray(a_np, chunks=(cn, k), copy=True)
    b = la.asarray(b_np, copy=True)
    assert_eq(la.abs(a @ b) + 1, np.abs(a_np @ b_np) + 1)
    assert_eq((a @ b) > 0, (a_np @ b_np) > 0)


@pytest.mark.parametrize("chunks", [(2, 3, 4), (5, 3, 4), (1, 3, 4)])
def test_batched_and_tensordot_epilogues(chunks):
    t_np = RNG.standard_normal((5, 3, 4))
    m_np = RNG.standard_normal((4, 2))
    t = la.asarray(t_np, chunks=chunks, copy=True)
    m = la.asarray(m_np, copy=True)
    y = la.sqrt(la.abs(t @ m)) * 2
    assert "matmul+absolute+sqrt+multiply" in labels(plan_of(y))
    assert_eq(y, np.sqrt(np.abs(t_np @ m_np)) * 2)
    z = la.exp(la.tensordot(t, m, axes=1) / 3)
    assert_eq(z, np.exp(np.tensordot(t_np, m_np, axes=1) / 3))
    u = la.tensordot(t, m, axes=1).astype(np.float32)
    assert_eq(u, np.tensordot(t_np, m_np, axes=1).astype(np.float32))

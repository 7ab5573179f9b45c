"""Operands folded into contractions: expected stage graphs, costs, reasons, results.

A contraction computes its cheap operands (views, elementwise expressions)
per block or partial product, so they are never stored whole. Results are
checked against NumPy on every executor with passes on and off.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuse import expected, plan_of, same, shape_of

import lazyarr as la
from lazyarr.graph.ops import elementwise, from_array
from lazyarr.graph.ops.indexing import getitem
from lazyarr.graph.ops.linalg import matmul
from lazyarr.graph.ops.manipulation import permute_dims
from lazyarr.optimize.cost import read_amplification, recompute_or_store
from lazyarr.optimize.fusion import can_join, is_operand_op
from lazyarr.testing import assert_eq

RNG = np.random.default_rng(7)
X = RNG.standard_normal((12, 5))
D = RNG.random(12)


def test_scaled_gram_matrix_folds_transpose_slice_and_scaling():
    #   X        d                      X        d
    #   |\       |                       \      /
    #   | T   d[:, None]        ==>   [getitem+multiply+transpose+matmul]
    #   |  \    /
    #   |  X * d[:, None]      (nothing of X's size is stored)
    #    \   /
    #    matmul
    x = la.asarray(X, chunks=(5, 5), copy=True)
    d = la.asarray(D, chunks=5, copy=True)
    h = x.T @ (x * d[:, None])
    p = plan_of(h)
    want = expected(
        {"x": "array", "d": "array", "h": "getitem+multiply+transpose+matmul"},
        [("x", "h"), ("d", "h")],
    )
    assert same(p, want), shape_of(p).nodes(data=True)
    root = p.stages[p.outputs[0]]
    assert sum(e.nbytes for e in root.input_exprs) == X.nbytes + D.nbytes
    assert all(s.expr.shape != X.shape for s in p.stages.values() if s.kind != "source")
    assert_eq(h, X.T @ (X * D[:, None]))


def test_gradient_folds_elementwise_vector_operand():
    x = la.asarray(X, chunks=(4, 5), copy=True)
    p_ = la.asarray(D, chunks=4, copy=True)
    y = la.asarray(D[::-1].copy(), chunks=4, copy=True)
    g = x.T @ (1.0 / (1.0 + la.exp(-p_)) - y)
    p = plan_of(g)
    assert len(p.stages) == 4  # x, p, y and the contraction
    assert_eq(g, X.T @ (1.0 / (1.0 + np.exp(-D)) - D[::-1]))


def test_operand_read_by_every_column_block_is_costed():
    # exp(a) feeds a matmul whose output has 4 column blocks: each row panel
    # of exp(a) would be computed 4 times, which costs more than storing it
    a = la.asarray(RNG.random((6, 8)), chunks=(3, 4), copy=True)
    b = la.asarray(RNG.random((8, 8)), chunks=(4, 2), copy=True)
    pricey = plan_of(la.exp(a) @ b)
    assert "exp" in {"+".join(m.op.label() for m in s.members) for s in pricey.stages.values()}
    assert any("computed 4x" in v for v in pricey.notes["fuse"].values())
    cheap = plan_of((a * 2) @ b)
    labels = {"+".join(m.op.label() for m in s.members) for s in cheap.stages.values()}
    assert "multiply+matmul" in labels
    assert_eq(la.exp(a) @ b, np.exp(a.compute()) @ b.compute())
    assert_eq((a * 2) @ b, (a.compute() * 2) @ b.compute())


def test_array_indexing_is_not_folded():
    x = la.asarray(X, chunks=(5, 5), copy=True)
    y = x[[3, 1, 2]] @ x.T[:, :4]
    p = plan_of(y)
    notes = p.notes["fuse"]
    assert any("getitem is neither elementwise nor a view" in v for v in notes.values())
    assert_eq(y, X[[3, 1, 2]] @ X.T[:, :4])


def test_operand_rules():
    a = from_array(np.ones((4, 6)), ((2, 2), (3, 3)))
    t = permute_dims(a, None)
    m = matmul(t, a)
    assert is_operand_op(t)
    assert is_operand_op(getitem(a, (slice(1, 3), None)))
    assert not is_operand_op(getitem(a, ([0, 2],)))
    assert can_join(t, m, operand_group=True) == (True, "")
    assert not can_join(t, m)[0]  # not in an elementwise group
    e = elementwise("exp", a)
    assert can_join(e, m, operand_group=True)[0]


def test_read_amplification_counts_panels():
    a = from_array(np.ones((6, 8)), ((3, 3), (4, 4)))
    b = from_array(np.ones((8, 8)), ((4, 4), (2, 2, 2, 2)))
    e = elementwise("exp", a)
    m = matmul(e, b)
    assert read_amplification([e, m], e.key) == 4  # one row panel per column block
    bt = elementwise("negative", b)
    m2 = matmul(a, bt)
    assert read_amplification([bt, m2], bt.key) == 2  # one column panel per row block
    recompute, ratio = recompute_or_store(e, math.inf)
    assert not recompute and ratio == math.inf


@settings(max_examples=25, deadline=None)
@given(
    m=st.integers(0, 9),
    k=st.integers(1, 9),
    n=st.integers(1, 6),
    cm=st.integers(1, 5),
    ck=st.integers(1, 5),
    cn=st.integers(1, 4),
    dtype=st.sampled_from([np.float64, np.float32, np.int64]),
)
def test_folded_operands_match_numpy(m, k, n, cm, ck, cn, dtype):
    a_np = (np.arange(k * m).reshape(k, m) % 7 - 3).astype(dtype)
    b_np = (np.arange(k * n).reshape(k, n) % 5 - 2).astype(dtype)
    v_np = (np.arange(k) % 3 + 1).astype(dtype)
    a = la.asarray(a_np, chunks=(ck, cm), copy=True)
    b = la.asarray(b_np, chunks=(ck, cn), copy=True)
    v = la.asarray(v_np, chunks=ck, copy=True)
    y = (a * 2).T @ (b - v[:, None])
    assert_eq(y, (a_np * 2).T @ (b_np - v_np[:, None]))


@pytest.mark.parametrize("chunks", [(4, 5), (12, 5), (5, 2)])
def test_tensordot_and_einsum_with_folded_operands(chunks):
    x = la.asarray(X, chunks=chunks, copy=True)
    d = la.asarray(D, chunks=chunks[0], copy=True)
    assert_eq(
        la.tensordot(x * 2, x + d[:, None], axes=([0], [0])),
        np.tensordot(X * 2, X + D[:, None], axes=([0], [0])),
    )
    assert_eq(la.einsum("ij,ik->jk", abs(x), x.T.T), np.einsum("ij,ik->jk", abs(X), X))

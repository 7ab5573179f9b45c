"""Tall-skinny QR and what is built on it (qr, svd, lstsq, svd_compressed) against NumPy.

Factors are unique only up to signs: ``Q``'s columns (and ``R``'s rows), or
a pair of singular vectors, may be flipped relative to NumPy's, so the tests
check the defining properties (``Q @ R == x``, ``Q`` orthonormal, ``R``
upper triangular) and compare with NumPy after aligning signs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import api
from lazyarr._array import wrap
from lazyarr.graph import build
from lazyarr.graph.ops.tsqr import panel_bounds, panel_count
from lazyarr.graph.ops.tsqr import tsqr as graph_tsqr
from lazyarr.optimize.pipeline import PASSES, PassContext, optimize
from lazyarr.optimize.plan import Plan

EXECUTORS = ["numpy", "numba"]


def compute(*arrays, executor="numpy"):
    return la.compute(*arrays, executor=executor)


def tall(m: int, n: int, seed: int = 0, dtype=np.float64) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, n))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal((m, n))
    return x.astype(dtype)


def signs_like(got: np.ndarray, want: np.ndarray, axis: int) -> np.ndarray:
    """Per column (axis=0) or row (axis=1) phase that turns ``got`` into ``want``."""
    dot = np.sum(np.conj(got) * want, axis=axis, keepdims=True)
    return np.where(np.abs(dot) > 0, dot / np.where(dot == 0, 1, np.abs(dot)), 1)


def check_qr(x: np.ndarray, q: np.ndarray, r: np.ndarray, rtol: float = 1e-10) -> None:
    n = x.shape[1]
    assert q.shape == x.shape and r.shape == (n, n)
    scale = max(np.abs(x).max(), 1.0)
    np.testing.assert_allclose(q @ r, x, atol=rtol * scale * 10)
    np.testing.assert_allclose(np.conj(q).T @ q, np.eye(n), atol=rtol * 10)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    # against NumPy up to the sign of each column of Q / row of R
    nq, nr = np.linalg.qr(x)
    d = signs_like(q, nq, 0)
    np.testing.assert_allclose(q * d, nq, atol=rtol * 100)
    np.testing.assert_allclose(r * np.conj(d).T, nr, atol=rtol * 100 * scale)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize(
    "rows", [(10, 10, 10), (7, 13, 5, 20), (40,) * 20 + (13,)]
)  # the last: a tree (more than FAN_IN blocks)
def test_tsqr_reconstructs_and_keeps_row_blocks(rows, executor):
    x = tall(sum(rows), 5, seed=len(rows))
    a = la.asarray(x, chunks=(rows, 5))
    q, r = la.linalg.tsqr(a)
    assert q.chunks == (rows, (5,))
    got_q, got_r = compute(q, r, executor=executor)
    check_qr(x, got_q, got_r)


def test_panels_split_blocks_evenly_and_only_large_ones():
    assert panel_count(62_500, 50, 8) == 23  # panels of about 1 MiB (2,717 rows)
    assert panel_count(5_000, 50, 8) == 1  # under two panels: one QR
    assert panel_count(20_000, 200, 8) == 12  # at least PANEL_MIN * n rows each
    assert panel_count(10, 10, 8, panel_bytes=1) == 1
    assert panel_bounds(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert panel_bounds(5, 1) == [(0, 5)]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
@pytest.mark.parametrize(
    "rows", [(100, 64, 16), (40,) * 18 + (97,)]
)  # panels of 16 rows (8 * n): 6, 4, 1 panels; the second also a tree
def test_tsqr_over_row_panels_of_each_block(rows, dtype, executor):
    x = tall(sum(rows), 2, seed=len(rows), dtype=dtype)
    a = la.asarray(x, chunks=(rows, 2))
    q, r = (wrap(e) for e in graph_tsqr(a._expr, panel_bytes=1))
    assert q.chunks == (rows, (2,))
    got_q, got_r = compute(q, r, executor=executor)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    assert got_q.dtype == dtype and got_r.dtype == dtype
    check_qr(x.astype(np.complex128 if dtype == np.complex128 else np.float64), got_q, got_r, rtol)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_qr_of_tall_array_keeps_the_row_chunks(executor):
    x = tall(400, 20, seed=1)
    a = la.asarray(x, chunks=(50, 20))
    q, r = la.linalg.qr(a)
    assert q.chunks == ((50,) * 8, (20,)), "Q must keep the input's row blocks (not one block)"
    got_q, got_r = compute(q, r, executor=executor)
    check_qr(x, got_q, got_r)
    (r_only,) = compute(la.linalg.qr(a, mode="r"), executor=executor)
    np.testing.assert_allclose(np.abs(r_only), np.abs(got_r), rtol=1e-12, atol=1e-12)


def test_qr_merges_column_blocks_and_handles_complex_and_float32():
    x = tall(60, 6, seed=2, dtype=np.complex128)
    q, r = la.linalg.qr(la.asarray(x, chunks=(15, 3)))
    assert q.chunks == ((15,) * 4, (6,))
    check_qr(x, *compute(q, r))
    y = tall(60, 4, seed=3, dtype=np.float32)
    q, r = la.linalg.qr(la.asarray(y, chunks=(20, 4)))
    assert q.dtype == np.float32 and r.dtype == np.float32
    check_qr(y.astype(np.float64), *(v.astype(np.float64) for v in compute(q, r)), rtol=1e-5)


def test_short_blocks_raise_in_tsqr_and_fall_back_in_qr():
    x = tall(20, 6)
    a = la.asarray(x, chunks=((8, 4, 8), 6))
    with pytest.raises(ValueError, match="row block 1 has 4"):
        la.linalg.tsqr(a)
    with pytest.raises(ValueError, match="one block of columns"):
        la.linalg.tsqr(la.asarray(x, chunks=(10, 3)))
    q, r = la.linalg.qr(a)  # the whole-matrix path
    check_qr(x, *compute(q, r))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_hypothesis_uneven_row_blocks(data):
    n = data.draw(st.integers(1, 6))
    nb = data.draw(st.integers(1, 6))
    rows = tuple(data.draw(st.lists(st.integers(n, 20 * n + 7), min_size=nb, max_size=nb)))
    x = tall(sum(rows), n, seed=data.draw(st.integers(0, 100)))
    panel_bytes = data.draw(st.sampled_from([1, 100, 10**6]))  # many, a few or one panel
    q, r = (wrap(e) for e in graph_tsqr(la.asarray(x, chunks=(rows, n))._expr, 16, panel_bytes))
    assert q.chunks[0] == rows
    check_qr(x, *compute(q, r, executor=data.draw(st.sampled_from(EXECUTORS))))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_svd_tall_and_short_fat(executor):
    x = tall(120, 8, seed=4)
    a = la.asarray(x, chunks=(30, 8))
    u, s, vh = la.linalg.svd(a, full_matrices=False)
    assert u.chunks == ((30,) * 4, (8,))
    gu, gs, gv = compute(u, s, vh, executor=executor)
    nu, ns, nv = np.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(gs, ns, rtol=1e-12)
    np.testing.assert_allclose((gu * gs) @ gv, x, atol=1e-10)
    d = signs_like(gu, nu, 0)
    np.testing.assert_allclose(gu * d, nu, atol=1e-9)
    np.testing.assert_allclose(gv * np.conj(d).T, nv, atol=1e-9)
    (vals,) = compute(la.linalg.svd(a, compute_uv=False), executor=executor)
    np.testing.assert_allclose(vals, ns, rtol=1e-12)
    (vals,) = compute(la.linalg.svdvals(a), executor=executor)
    np.testing.assert_allclose(vals, ns, rtol=1e-12)
    # short-fat in column blocks: via the transpose, Vh keeps the column blocks
    w = la.asarray(x.T.copy(), chunks=(8, 30))
    u, s, vh = la.linalg.svd(w, full_matrices=False)
    assert vh.chunks == ((8,), (30,) * 4)
    gu, gs, gv = compute(u, s, vh, executor=executor)
    np.testing.assert_allclose(gs, ns, rtol=1e-12)
    np.testing.assert_allclose((gu * gs) @ gv, x.T, atol=1e-10)


def test_tsqr_compute_svd():
    x = tall(90, 5, seed=5)
    u, s, vh = la.linalg.tsqr(la.asarray(x, chunks=(30, 5)), compute_svd=True)
    gu, gs, gv = compute(u, s, vh)
    np.testing.assert_allclose((gu * gs) @ gv, x, atol=1e-10)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("bshape", [(1,), (3,)])
def test_lstsq_matches_numpy(bshape, executor):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((100, 7))
    b = rng.standard_normal((100,) if bshape == (1,) else (100, 3))
    la_a = la.asarray(a, chunks=(25, 7))
    la_b = la.asarray(b, chunks=(40, *b.shape[1:]))
    got = compute(*la.linalg.lstsq(la_a, la_b), executor=executor)
    want = np.linalg.lstsq(a, b)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        assert np.asarray(g).dtype == np.asarray(w).dtype or np.ndim(w) == 0
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def test_lstsq_square_and_short_blocks_and_errors():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((6, 6))
    b = rng.standard_normal(6)
    got = compute(*la.linalg.lstsq(la.asarray(a, chunks=(3, 6)), la.asarray(b, chunks=2)))
    want = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-9)
    assert got[1].shape == want[1].shape == (0,)
    assert int(got[2]) == want[2]
    with pytest.raises(NotImplementedError, match="underdetermined"):
        la.linalg.lstsq(la.asarray(a[:3]), la.asarray(b[:3]))
    with pytest.raises(np.linalg.LinAlgError):
        la.linalg.lstsq(la.asarray(a), la.asarray(b[:4]))


@pytest.mark.parametrize("n_power_iter", [0, 2])
def test_svd_compressed_recovers_a_low_rank_matrix(n_power_iter):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((200, 4)) @ rng.standard_normal((4, 30))
    a = la.asarray(x, chunks=(50, 30))
    u, s, vh = la.linalg.svd_compressed(a, 4, n_power_iter=n_power_iter, seed=1)
    assert u.chunks[0] == (50,) * 4
    gu, gs, gv = compute(u, s, vh)
    np.testing.assert_allclose(gs, np.linalg.svd(x, compute_uv=False)[:4], rtol=1e-9)
    np.testing.assert_allclose((gu * gs) @ gv, x, atol=1e-9)
    assert (gv.sum(axis=1) >= 0).all()  # dask's coerce_signs
    nu, _, nv = np.linalg.svd(x, full_matrices=False)
    flip = np.where(nv[:4].sum(axis=1) >= 0, 1.0, -1.0)
    np.testing.assert_allclose(gv, nv[:4] * flip[:, None], atol=1e-9)
    np.testing.assert_allclose(gu, nu[:, :4] * flip, atol=1e-9)


def test_row_blocks_are_separate_tasks_in_the_plan():
    """Per-block stages are maps over the row blocks; only the R stack is one block."""
    a = la.asarray(tall(80, 4), chunks=(10, 4))
    q, r = la.linalg.qr(a)
    plan = api.make_plan([q._expr, r._expr], "numpy", ())
    labels = {s.expr.op.label(): s.numblocks for s in plan.stages.values()}
    assert labels["tsqr.factor"] == (8, 1)
    assert labels["tsqr.r"] == (8, 1)
    assert labels["tsqr.q"] == (8, 1)
    assert labels["linalg.qr[1]"] == (1, 1)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_generated_input_in_many_small_blocks(executor):
    """40 row blocks of 10: a two-level tree of R factors; the reblock pass leaves it alone."""
    r = la.random.random((400, 4), chunks=(10, 4), seed=3)
    x = r.compute()
    q, rr = la.linalg.qr(r * 2 + 1)
    assert q.chunks[0] == (10,) * 40
    check_qr(x * 2 + 1, *compute(q, rr, executor=executor))


def test_numpy_functions_dispatch():
    x = tall(50, 3, seed=9)
    a = la.asarray(x, chunks=(25, 3))
    q, _ = np.linalg.qr(a)
    assert q.chunks[0] == (25, 25)
    sol = la.linalg.lstsq(a, la.asarray(x[:, 1]))
    np.testing.assert_allclose(sol[0].compute(), [0, 1, 0], atol=1e-10)


def test_placement_keeps_each_row_block_on_its_worker():
    """On 4 workers, block i of every per-block stage runs where row block i is made."""
    workers = tuple(f"w{i}" for i in range(4))
    ctx = PassContext(n_workers=4, workers=workers, hosts=("h0",) * 4, check=True)
    x = la.random.random((4000, 5), chunks=(500, 5), seed=1)
    q, r = la.linalg.qr(x)
    plan = optimize(Plan.from_graph(build([q._expr, r._expr])), tuple(PASSES), ctx)
    by_label = {s.expr.op.label(): s for s in plan.stages.values()}
    source = by_label["random.random"].worker
    assert len(set(source.ravel().tolist())) == 4
    for label in ("tsqr.factor", "tsqr.r", "tsqr.q"):
        np.testing.assert_array_equal(by_label[label].worker, source)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_hypothesis_short_row_blocks_raise_in_tsqr_and_qr_still_works(data):
    n = data.draw(st.integers(2, 6))
    rows = tuple(data.draw(st.lists(st.integers(1, n + 4), min_size=2, max_size=5)))
    m = sum(rows)
    x = tall(m, n, seed=data.draw(st.integers(0, 100)))
    a = la.asarray(x, chunks=(rows, n))
    if min(rows) < n:
        with pytest.raises(ValueError, match="at least as many rows as there are columns"):
            la.linalg.tsqr(a)
    if m >= n:
        check_qr(x, *compute(*la.linalg.qr(a)))


@pytest.mark.parametrize(
    ("adt", "bdt"),
    [("float32", "float32"), ("complex128", "complex128"), ("float32", "float64"), ("int64", "f8")],
)
def test_lstsq_dtypes_follow_numpy(adt, bdt):
    rng = np.random.default_rng(10)
    a = (rng.standard_normal((60, 4)) * 10).astype(adt)
    if np.dtype(adt).kind == "c":
        a = a + 1j * rng.standard_normal((60, 4))
    b = rng.standard_normal((60, 2)).astype(bdt)
    got = compute(*la.linalg.lstsq(la.asarray(a, chunks=(15, 4)), la.asarray(b, chunks=(20, 2))))
    want = np.linalg.lstsq(a, b)
    rtol = 1e-4 if np.result_type(a, b) == np.float32 else 1e-9
    for g, w in zip(got[:2] + got[3:], want[:2] + want[3:]):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    assert int(got[2]) == want[2]


def test_svd_compressed_of_a_wide_matrix_in_column_blocks():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((30, 3)) @ rng.standard_normal((3, 200))
    u, s, vh = la.linalg.svd_compressed(la.asarray(x, chunks=(30, 50)), 3, seed=2)
    gu, gs, gv = compute(u, s, vh, executor="numba")
    np.testing.assert_allclose(gs, np.linalg.svd(x, compute_uv=False)[:3], rtol=1e-9)
    np.testing.assert_allclose((gu * gs) @ gv, x, atol=1e-9)
    with pytest.raises(ValueError, match="k must be in"):
        la.linalg.svd_compressed(la.asarray(x), 31)


def test_plan_json_round_trip_keeps_keys():
    from lazyarr.graph.serialize import exprs_from_json, exprs_to_json

    a = la.asarray(tall(40, 3), chunks=(10, 3))
    u, s, vh = la.linalg.svd(a, full_matrices=False)
    exprs = [u._expr, s._expr, vh._expr, *(p._expr for p in la.linalg.lstsq(a, a[:, 0]))]
    table, roots = exprs_to_json(exprs)
    back = exprs_from_json(table)
    assert [back[r].key for r in roots] == [e.key for e in exprs]
    text = str(la.linalg.qr(a).Q.explain())
    assert "tsqr.factor" in text and "tsqr.q" in text


def test_building_computes_nothing():
    from lazyarr.executors.testing import ComputeRefused

    a = la.asarray(tall(40, 3), chunks=(10, 3))
    with la.config.set(executor="raise"):
        la.linalg.qr(a)
        la.linalg.svd(a, full_matrices=False)
        parts = la.linalg.lstsq(a, a[:, 0])
        la.linalg.svd_compressed(a, 2, seed=0)
        la.topk(a, 2, axis=0)
        with pytest.raises(ComputeRefused):
            parts[2].compute()

"""The reblock pass: auto-chunked generated sources get cluster block shapes, values unchanged."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import api, config
from lazyarr.executors import registry
from lazyarr.graph import build
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Elementwise, Random
from lazyarr.graph.rewrite import follows_inputs, rederive
from lazyarr.optimize.pipeline import PASSES, PassContext, optimize
from lazyarr.optimize.placement.layout import suggest_chunks
from lazyarr.optimize.plan import Plan

ALL = tuple(PASSES)
NO_REBLOCK = tuple(p for p in PASSES if p != "reblock")
FOUR = {"n_workers": 4, "workers": tuple(f"w{i}" for i in range(4))}


pytestmark = pytest.mark.usefixtures("reblock_any_size")


def plan_of(*arrays, passes=ALL, ctx=None) -> Plan:
    """The optimized plan for 4 workers, under the settings now in effect."""
    ctx = ctx or api.pass_context("numpy", True, FOUR)
    return optimize(Plan.from_graph(build([a._expr for a in arrays])), passes, ctx)


def sources(plan: Plan) -> dict[str, Expr]:
    return {n: s.expr for n, s in plan.stages.items() if s.kind == "source"}


def run(arrays, executor: str, n_workers: int, passes=ALL) -> list[np.ndarray]:
    """Compute on a local executor with a plan made as if for ``n_workers`` workers."""
    plan = api.make_plan(
        [a._expr for a in arrays], executor, passes, check=True, extra={"n_workers": n_workers}
    )
    return registry.get(executor).execute(plan, plan.outputs)


# ----------------------------------------------------------------- auto_chunks on sources


def test_auto_chunks_recorded_on_generated_sources():
    made = [
        la.zeros((5, 7)),
        la.ones(4),
        la.full(3, 2.5),
        la.empty(3),
        la.arange(10),
        la.linspace(0, 1, 5),
        la.eye(4),
        la.random.random(6, seed=1),
        la.random.default_rng(3).normal(size=4),
        la.zeros(4, chunks=None),
    ]
    assert all(x._expr.op.auto_chunks for x in made)
    explicit = [
        la.zeros((5, 7), chunks=(2, 3)),
        la.ones(4, chunks=2),
        la.arange(10, chunks=-1),
        la.eye(4, chunks=((4,), (4,))),
        la.random.random(6, seed=1, chunks=3),
        la.zeros((5, 7), chunks=("auto", 3)),  # partly given: the user's choice
    ]
    assert not any(x._expr.op.auto_chunks for x in explicit)


def test_auto_and_explicit_have_different_keys():
    a = la.zeros((5, 7))
    b = la.zeros((5, 7), chunks=a.chunks)
    assert a.chunks == b.chunks and a._expr.key != b._expr.key


def test_like_follows_its_argument():
    assert la.zeros_like(la.random.random((4, 4), seed=1))._expr.op.auto_chunks
    assert not la.zeros_like(la.random.random((4, 4), seed=1, chunks=2))._expr.op.auto_chunks
    assert not la.ones_like(np.ones((4, 4)))._expr.op.auto_chunks
    assert la.ones_like(np.ones((4, 4)), chunks="auto")._expr.op.auto_chunks
    assert la.full_like(la.arange(6) + 1, 3)._expr.op.auto_chunks


# ----------------------------------------------------------------- random: chunk independent


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple),
    data=st.data(),
    dist=st.sampled_from(["random", "standard_normal", "integers"]),
)
def test_random_values_do_not_depend_on_chunks(shape, data, dist):
    chunks = tuple(data.draw(st.integers(1, max(n, 1))) for n in shape)
    seed = data.draw(st.integers(0, 2**40))
    if dist == "integers":
        auto = la.random.integers(0, 100, shape, seed=seed)
        given_ = la.random.integers(0, 100, shape, seed=seed, chunks=chunks)
    else:
        auto = getattr(la.random, dist)(shape, seed=seed)
        given_ = getattr(la.random, dist)(shape, seed=seed, chunks=chunks)
    a, b = la.compute(auto, given_, executor="numpy")
    np.testing.assert_array_equal(a, b)


def test_random_values_do_not_depend_on_the_blocks_reblock_chooses():
    # 600 x 300 float64: large enough to be drawn in pieces whole, block edges anywhere
    a = la.random.standard_normal((600, 300), seed=11)
    b = la.random.standard_normal((600, 300), seed=11, chunks=(77, 130))
    x, y = la.compute(a, b, executor="numpy")
    np.testing.assert_array_equal(x, y)
    (z,) = run([a], "numpy", 4)
    np.testing.assert_array_equal(x, z)


@pytest.mark.parametrize(
    "shape, chunks",
    [
        ((64, 256, 256), (64, 128, 128)),  # the cluster layout of a tensordot operand
        ((2000, 1000), (500, 1000)),  # row bands
        ((2000, 1000), (1000, 500)),  # square blocks
        ((3_000_000,), (750_000,)),
        ((100_000,), (100,)),  # many small blocks
    ],
)
def test_a_random_block_draws_little_more_than_its_own_elements(shape, chunks, monkeypatch):
    """Each block draws its own elements' words (two per normal value), whatever its shape.

    Runs of a block closer than ``philox.WORD_GAP`` words are drawn through
    (cheaper than a jump): the 128-element runs 128 elements apart of the
    first case draw twice their words; the other cases draw a few words more.
    """
    from lazyarr.kernels.reference import philox

    drawn = []
    draw = philox._draw
    monkeypatch.setattr(philox, "_draw", lambda bg, n: drawn.append(n) or draw(bg, n))
    a = la.random.standard_normal(shape, seed=5, chunks=chunks)
    (x,) = la.compute(a, executor="numpy")
    nblocks = math.prod(-(-n // c) for n, c in zip(shape, chunks, strict=True))
    assert 2 * x.size <= sum(drawn) <= 2 * (2 * x.size) + 3 * nblocks
    if shape[-1] == chunks[-1] or shape[-1] - chunks[-1] > philox.WORD_GAP:
        assert sum(drawn) <= 2 * x.size * 1.02
    assert x.std() == pytest.approx(1, abs=0.01)


# ----------------------------------------------------------------- the pass on plans


def test_sources_get_cluster_blocks_and_matmul_operands_align():
    a = la.random.standard_normal((400, 300), seed=1)
    b = la.ones((300, 200))
    c = a @ b
    p = plan_of(c)
    src = sources(p)
    (ea,) = [e for e in src.values() if isinstance(e.op, Random)]
    (eb,) = [e for e in src.values() if not isinstance(e.op, Random)]
    assert ea.numblocks == (2, 2) and eb.numblocks == (2, 2)
    assert ea.chunks[1] == eb.chunks[0]  # the contracted axis has one block size
    out = p.stages[p.outputs[0]].expr
    assert out.chunks == (ea.chunks[0], eb.chunks[1])
    notes = p.notes["reblock"]
    assert set(notes) == set(src)
    assert all(v.startswith("rechunked (") and v.endswith("for 4 workers") for v in notes.values())
    assert "-> (2x200, 2x150)" in notes[next(n for n, e in src.items() if e is ea)]


def test_equal_axis_lengths_get_equal_blocks_across_sources():
    x = la.random.random((800, 100), seed=2)
    y = la.zeros((100, 800))
    p = plan_of((x @ y) + la.arange(800))
    src = sources(p)
    sizes: dict[int, set[int]] = {}
    for e in src.values():
        for n, c in zip(e.shape, e.chunks):
            sizes.setdefault(n, set()).add(c[0])
    assert all(len(v) == 1 for v in sizes.values()), sizes


def test_explicit_chunks_untouched():
    a = la.random.random((400, 300), seed=1, chunks=(100, 300))
    b = la.ones((300, 200), chunks=50)
    p = plan_of(a @ b)
    assert {e.chunks for e in sources(p).values()} == {a.chunks, b.chunks}
    assert "reblock" not in p.notes


def test_small_arrays_untouched():
    a = la.random.random((400, 300), seed=1)
    with config.set({"placement.reblock-min-bytes": "1MiB"}):  # 960 kB: under it
        p = plan_of(a + 1)
    assert sources(p)[next(iter(sources(p)))].chunks == a.chunks
    with config.set({"placement.reblock-min-bytes": "900kB"}):
        p = plan_of(a + 1)
    assert sources(p)[next(iter(sources(p)))].numblocks == (2, 2)


def test_user_arrays_untouched():
    a = la.asarray(np.ones((400, 300)))
    p = plan_of(a * 2 + la.zeros((400, 300)))
    src = sources(p)
    assert any(e.chunks == a.chunks for e in src.values())
    assert len(p.notes["reblock"]) == 1


def test_one_worker_changes_nothing():
    a = la.random.random((400, 300), seed=1) + la.ones(300)
    one = PassContext(n_workers=1, check=True)
    with_pass = plan_of(a, ctx=one)
    without = plan_of(a, passes=NO_REBLOCK, ctx=one)
    assert [s.expr.key for s in with_pass.stages.values()] == [
        s.expr.key for s in without.stages.values()
    ]
    assert "reblock" not in with_pass.notes


def test_default_numba_plan_unchanged():
    a = la.random.random((400, 300), seed=1).sum(axis=0)
    p = la.plan(a)  # the default executor (numba) reports no workers
    assert "reblock" in [h.name for h in p.history] and "reblock" not in p.notes
    with config.set({"optimize.passes": list(NO_REBLOCK)}):
        without = la.plan(a)
    assert [s.expr.key for s in p.stages.values()] == [s.expr.key for s in without.stages.values()]


def test_switched_off_by_leaving_it_out_of_the_passes():
    a = la.random.random((400, 300), seed=1)
    p = plan_of(a * 2, passes=NO_REBLOCK)
    assert sources(p)[next(iter(sources(p)))].chunks == a.chunks
    with config.set({"optimize.passes": list(NO_REBLOCK)}):
        assert "reblock" not in api.passes_for(None, None)


def test_blocks_per_worker():
    a = la.random.random((400, 300), seed=1)
    with config.set({"placement.blocks-per-worker": 4}):
        p = plan_of(a * 2)
    assert np.prod(sources(p)[next(iter(sources(p)))].numblocks) == 16


def test_blocks_never_exceed_the_chunk_size():
    a = la.random.random((400, 300), seed=1)  # 960 kB
    with config.set({"array.chunk-size": "100kB"}):
        b = la.random.random((400, 300), seed=1)
        p = plan_of(a + 1)
    e = sources(p)[next(iter(sources(p)))]
    assert max(np.prod([c[0] for c in e.chunks]) * 8, 0) <= 100_000
    assert np.prod(e.numblocks) % 4 == 0
    assert b.chunks != a.chunks  # the setting also shaped the auto chunks


def test_op_without_a_chunk_rule_keeps_its_sources():
    a = la.random.random((400, 300), seed=1)
    b = la.zeros((400, 300))
    p = plan_of(la.cumsum(a, axis=0) + b)
    src = sources(p)
    ea = next(e for e in src.values() if isinstance(e.op, Random))
    eb = next(e for e in src.values() if not isinstance(e.op, Random))
    assert ea.chunks == a.chunks  # feeds a scan built for its grid
    assert eb.numblocks == (2, 2)
    notes = p.notes["reblock"]
    assert any("feeds" in v and "kept" in v for v in notes.values())


def test_rechunk_keeps_its_chunks_and_what_follows():
    a = la.random.random((400, 300), seed=1)
    y = la.cumsum(a.rechunk((100, 300)), axis=0)
    p = plan_of(y)
    assert sources(p)[next(iter(sources(p)))].numblocks == (2, 2)
    assert p.stages[p.outputs[0]].expr.chunks == y.chunks
    (got,) = run([y], "numpy", 4)
    np.testing.assert_allclose(got, np.cumsum(np.asarray(a.compute(executor="numpy")), axis=0))


def test_rederive_refuses_ops_without_a_rule():
    a = la.random.random((6, 4), seed=1, chunks=3)
    s = la.sort(a, axis=0)._expr
    assert not follows_inputs(s)
    with pytest.raises(TypeError, match="no rule"):
        rederive(s, (la.random.random((6, 4), seed=1, chunks=2)._expr,))
    e = (a + 1)._expr
    assert isinstance(e.op, Elementwise) and follows_inputs(e)
    with pytest.raises(ValueError, match="replaced by"):
        rederive(e, (la.random.random((6, 5), seed=1)._expr,))


def test_explain_shows_the_reason():
    a = la.random.random((400, 300), seed=1)
    p = plan_of(a.sum())
    from lazyarr.viz.text import explain_text

    assert "blocks    rechunked (400, 300) -> (2x200, 2x150) for 4 workers" in explain_text(p)


def test_plan_round_trips_json():
    p = plan_of(la.random.random((400, 300), seed=1) @ la.ones((300, 5)))
    back = Plan.from_json(p.to_json())
    assert back.notes["reblock"] == p.notes["reblock"]
    assert [s.expr.key for s in back.stages.values()] == [s.expr.key for s in p.stages.values()]


# ----------------------------------------------------------------- same results, on and off


def _workload(seed: int, m: int, k: int, n: int):
    a = la.random.standard_normal((m, k), seed=seed)
    b = la.random.uniform(-1, 1, (k, n), seed=seed + 1)
    c = la.arange(n) * 0.5 + la.ones((m, n))
    prod = a @ b + c
    return [
        prod,
        prod.sum(axis=0),
        (a.T * 2).mean(axis=1, keepdims=True),
        la.tensordot(a, a, axes=([1], [1])),
        la.einsum("ij,jk->ik", a, b),
        (la.eye(m, k) + a).reshape(k, m),
        la.cumsum(a, axis=1),  # keeps its source's blocks
        la.linspace(0, 1, m * k).reshape(m, k)[::2],
    ]


@settings(max_examples=8, deadline=None)
@example(m=1, k=4, n=5, workers=2)  # one row: nothing to keep for cumsum
@given(
    m=st.integers(1, 60),
    k=st.integers(1, 60),
    n=st.integers(1, 40),
    workers=st.sampled_from([2, 3, 4, 7]),
)
def test_same_results_with_the_pass_on_and_off(m, k, n, workers):
    outs = _workload(5, m, k, n)
    plan = api.make_plan([o._expr for o in outs], "numpy", ALL, extra={"n_workers": workers})
    notes = plan.notes["reblock"]
    if max(m, k) >= 2 * workers:
        assert any(v.startswith("rechunked") for v in notes.values())
    if m >= 2 * workers and k > 1:  # a would be split: cumsum and indexing keep its blocks
        assert any("feeds" in v for v in notes.values())
    want = run(outs, "numpy", workers, NO_REBLOCK)
    for executor in ("numpy", "numba"):
        got = run(outs, executor, workers)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    shape=st.lists(st.integers(0, 3000), min_size=0, max_size=4).map(tuple),
    workers=st.integers(2, 16),
    per=st.integers(1, 3),
)
def test_suggest_chunks_properties(shape, workers, per):
    memo: dict[int, int] = {}
    c = suggest_chunks(shape, 8, workers, per, None, 0, memo, 1 << 20)
    assert tuple(sum(x) for x in c) == shape
    if 0 in shape or not shape:
        return
    # one block size per axis length, and the memo agrees
    for n, x in zip(shape, c):
        assert n == 1 or x[0] == memo[n]
        assert all(b == x[0] for b in x[:-1]) and x[-1] <= x[0]
    nblocks = int(np.prod([len(x) for x in c]))
    splittable = int(np.prod([min(n, workers * per) for n in shape]))
    if splittable >= 2 * workers * per and nblocks < 1024:
        assert nblocks >= workers * per
    again = suggest_chunks(shape, 8, workers, per, None, 0, dict(memo), 1 << 20)
    assert again == c


def test_suggest_chunks_examples():
    memo: dict[int, int] = {}
    t = suggest_chunks((64, 256, 256), 8, 4, memo=memo, min_bytes=0)
    w = suggest_chunks((256, 256, 32), 8, 4, memo=memo, min_bytes=0)
    assert [len(x) for x in t] == [1, 2, 2] and [len(x) for x in w] == [2, 2, 1]
    rows = suggest_chunks((10**7, 64), 8, 4, min_bytes=0, max_block_bytes=64 << 20)
    assert len(rows[1]) == 1 and len(rows[0]) % 4 == 0 and rows[0][0] * 64 * 8 <= 64 << 20
    memo = {}
    assert suggest_chunks((10, 10), 8, 4, memo=memo) == ((10,), (10,))
    assert memo == {}  # a small array leaves the memo alone


# ----------------------------------------------------------------- stored sources


@pytest.fixture
def stored(tmp_path):
    """A float64 zarr store of (96, 40, 30) in chunks of (6, 40, 30): 16 stored chunks."""
    a = np.random.default_rng(4).standard_normal((96, 40, 30))
    path = str(tmp_path / "s.zarr")
    la.to_zarr(la.asarray(a, chunks=(6, 40, 30)), path)
    return a, path


def test_an_auto_chunked_store_is_read_in_more_blocks_for_the_workers(stored):
    """lazyarr's own blocks (here one, under array.chunk-size) become smaller whole multiples
    of the stored chunks: at least READ_BLOCKS_PER_WORKER per worker where the chunks allow;
    explicit chunks and one worker keep theirs; the values are unchanged."""
    from lazyarr.optimize.passes.reblock import READ_BLOCKS_PER_WORKER

    a, path = stored
    x = la.from_zarr(path)
    assert x.numblocks == (1, 1, 1)
    ctx = api.pass_context("numpy", True, {"n_workers": 2, "workers": ("w0", "w1")})
    (src,) = sources(plan_of(x.mean(axis=0), ctx=ctx)).values()
    assert len(src.chunks[0]) >= READ_BLOCKS_PER_WORKER * 2
    assert all(c % 6 == 0 for c in src.chunks[0]) and src.chunks[1:] == ((40,), (30,))
    fixed = la.from_zarr(path, chunks=(96, 40, 30))
    (kept,) = sources(plan_of(fixed.mean(axis=0), ctx=ctx)).values()
    assert kept.chunks == fixed.chunks
    one = api.pass_context("numpy", True, {"n_workers": 1})
    (alone,) = sources(plan_of(x.mean(axis=0), ctx=one)).values()
    assert alone.chunks == x.chunks
    (got,) = run([x.mean(axis=0)], "numpy", n_workers=2)
    np.testing.assert_allclose(got, a.mean(axis=0))


def test_auto_and_explicit_store_chunks_have_different_keys(stored):
    _, path = stored
    auto = la.from_zarr(path)
    explicit = la.from_zarr(path, chunks=auto.chunks)
    assert auto._expr.op.auto_chunks and not explicit._expr.op.auto_chunks
    assert auto._expr.key != explicit._expr.key


def test_under_a_memory_limit_blocks_fit_a_worker_threads_share():
    """Before: a 190 MB random chain was made in 4 blocks of 48 MB for 2 workers under a
    limit of 64 MiB each (``array.chunk-size`` bounded them alone), and refused as too big."""
    x = la.random.random(25_000_000, seed=1)
    y = (la.sin(x) * 2 + la.cos(x)).sum()
    free = plan_of(y)
    assert max(max(e.chunks[0]) for e in sources(free).values()) * 8 > 32 * 2**20
    with config.set({"memory-limit": "64MiB"}):
        limited = plan_of(y)
    (src,) = sources(limited).values()
    assert max(src.chunks[0]) * 8 <= 64 * 2**20 // 6
    assert len(src.chunks[0]) % 4 == 0  # still a multiple of the workers
